/* Body of a tile kernel set (see tile_kern.h). Included by exactly one .c file
 * per target, which defines TILE_KERN_TABLE (the table's name), TILE_KERN_NAME
 * and, when it brings its own matmul, TILE_KERN_OWN_MATMUL.
 *
 * Everything here is written so that a vectorizing compiler can keep the exact
 * per-element operation sequence: straight-line element functions, selects
 * instead of branches, no reassociation. Transcendentals (in tile_kern_math.h)
 * are our own fixed approximations; libm is never called (its results differ between versions
 * and platforms). fmaf is used only where a fused multiply-add is intended; it
 * is correctly rounded by definition (C11 7.12.13.1), in hardware or libm.
 */
#ifndef TILE_KERN_TABLE
#error "define TILE_KERN_TABLE before including tile_kern_body.h"
#endif

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "sim/tile/tile_kern.h"
#include "sim/tile/tile_kern_math.h"

/* ---- FPU element-wise ------------------------------------------------------ */

#define TK_DEFINE_BINARY(name, OPER)                                                               \
    static void name(tile_bcast bcast, const float *restrict a, const float *restrict b,           \
                     float *restrict out) {                                                        \
        switch (bcast) {                                                                           \
        case TILE_BCAST_ROW:                                                                       \
            for (int r = 0; r < TILE_DIM; r++)                                                     \
                for (int c = 0; c < TILE_DIM; c++)                                                 \
                    out[r * TILE_DIM + c] = a[r * TILE_DIM + c] OPER b[c];                         \
            break;                                                                                 \
        case TILE_BCAST_COL:                                                                       \
            for (int r = 0; r < TILE_DIM; r++) {                                                   \
                float v = b[r * TILE_DIM];                                                         \
                for (int c = 0; c < TILE_DIM; c++)                                                 \
                    out[r * TILE_DIM + c] = a[r * TILE_DIM + c] OPER v;                            \
            }                                                                                      \
            break;                                                                                 \
        case TILE_BCAST_SCALAR: {                                                                  \
            float v = b[0];                                                                        \
            for (int i = 0; i < TILE_ELEMS; i++)                                                   \
                out[i] = a[i] OPER v;                                                              \
            break;                                                                                 \
        }                                                                                          \
        default:                                                                                   \
            for (int i = 0; i < TILE_ELEMS; i++)                                                   \
                out[i] = a[i] OPER b[i];                                                           \
            break;                                                                                 \
        }                                                                                          \
    }

TK_DEFINE_BINARY(tk_add, +)
TK_DEFINE_BINARY(tk_sub, -)
TK_DEFINE_BINARY(tk_mul, *)

static void tk_binary(tile_binary_op op, tile_bcast bcast, const float *a, const float *b,
                      float *out) {
    switch (op) {
    case TILE_BINARY_SUB:
        tk_sub(bcast, a, b, out);
        break;
    case TILE_BINARY_MUL:
        tk_mul(bcast, a, b, out);
        break;
    default:
        tk_add(bcast, a, b, out);
        break;
    }
}

/* ---- matmul ---------------------------------------------------------------- */

#ifndef TILE_KERN_OWN_MATMUL
/* Where the baseline target has fused multiply-add (aarch64) this vectorizes;
 * on baseline x86-64 every fmaf is a library call: correct, but about 50x
 * slower than the AVX2 kernel, which every x86-64 CPU with FMA uses instead. */
static void tk_matmul(const float *restrict a, const float *restrict b, float *restrict acc) {
    for (int i = 0; i < TILE_DIM; i++)
        for (int k = 0; k < TILE_DIM; k++) {
            float aik = a[i * TILE_DIM + k];
            for (int j = 0; j < TILE_DIM; j++)
                acc[i * TILE_DIM + j] = fmaf(aik, b[k * TILE_DIM + j], acc[i * TILE_DIM + j]);
        }
}
#endif

/* ---- SFPU ------------------------------------------------------------------ */

#define TK_SFPU_LOOP(t, EXPR)                                                                      \
    for (int i = 0; i < TILE_ELEMS; i++) {                                                         \
        float x = t[i];                                                                            \
        t[i] = (EXPR);                                                                             \
    }

static void tk_sfpu(tile_sfpu_op op, float *restrict t) {
    switch (op) {
    case TILE_SFPU_EXP:
        TK_SFPU_LOOP(t, tk_exp(x));
        break;
    case TILE_SFPU_LOG:
        TK_SFPU_LOOP(t, tk_log(x));
        break;
    case TILE_SFPU_SQRT:
        TK_SFPU_LOOP(t, tk_sqrt(x));
        break;
    case TILE_SFPU_RSQRT:
        TK_SFPU_LOOP(t, (float)(1.0 / sqrt((double)x))); /* one float32 rounding */
        break;
    case TILE_SFPU_RECIP:
        TK_SFPU_LOOP(t, 1.0f / x);
        break;
    case TILE_SFPU_RELU:
        TK_SFPU_LOOP(t, x > 0.0f || x != x ? x : 0.0f);
        break;
    case TILE_SFPU_GELU:
        TK_SFPU_LOOP(t, tk_gelu(x));
        break;
    case TILE_SFPU_SIGMOID:
        TK_SFPU_LOOP(t, tk_sigmoid(x));
        break;
    case TILE_SFPU_TANH:
        TK_SFPU_LOOP(t, tk_tanh(x));
        break;
    case TILE_SFPU_ABS:
        TK_SFPU_LOOP(t, tk_float(tk_bits(x) & 0x7fffffffu));
        break;
    case TILE_SFPU_NEG:
        TK_SFPU_LOOP(t, tk_float(tk_bits(x) ^ 0x80000000u));
        break;
    case TILE_SFPU_SQUARE:
        TK_SFPU_LOOP(t, x * x);
        break;
    default:
        break;
    }
}

/* ---- dst write-back -------------------------------------------------------- */

static void tk_finish(float *restrict t, bool round_bf16) {
    /* Without rounding these make r = u. */
    uint32_t keep = round_bf16 ? 0xffff0000u : 0xffffffffu;
    uint32_t half = round_bf16 ? 0x7fffu : 0u;
    uint32_t odd_mask = round_bf16 ? 1u : 0u;
    for (int i = 0; i < TILE_ELEMS; i++) {
        uint32_t u = tk_bits(t[i]);
        uint32_t r = (u + half + ((u >> 16) & odd_mask)) & keep;
        t[i] = tk_float((u & 0x7fffffffu) > 0x7f800000u ? TILE_CANONICAL_NAN_BITS : r);
    }
}

const tile_kernels TILE_KERN_TABLE = {
    .name = TILE_KERN_NAME,
    .binary = tk_binary,
    .matmul = tk_matmul,
    .sfpu = tk_sfpu,
    .finish = tk_finish,
};
