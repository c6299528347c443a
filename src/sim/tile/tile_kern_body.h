/* Body of a tile kernel set (see tile_kern.h). Included by exactly one .c file
 * per target, which defines TILE_KERN_TABLE (the table's name), TILE_KERN_NAME
 * and, when it brings its own matmul, TILE_KERN_OWN_MATMUL.
 *
 * Everything here is written so that a vectorizing compiler can keep the exact
 * per-element operation sequence: mostly straight-line element functions,
 * selects instead of branches, no reassociation (the few element functions
 * with loops or branches -- erf, fmod, the trigonometric reduction -- are
 * simply not vectorized, with the same result). The element functions are in
 * tile_kern_math.h: transcendentals are our own fixed approximations; libm is
 * never called (its results differ between versions and platforms). fmaf is
 * used only where a fused multiply-add is intended; it is correctly rounded by
 * definition (C11 7.12.13.1), in hardware or libm.
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

/* The finish (tk_finish below) of one value: bf16 rounding when keep is
 * 0xffff0000 (half 0x7fff, odd 1; else keep all ones, half and odd 0), then
 * the canonical NaN. */
static inline float tk_fin1(float v, uint32_t keep, uint32_t half, uint32_t odd) {
    uint32_t u = tk_bits(v);
    uint32_t r = (u + half + ((u >> 16) & odd)) & keep;
    return tk_float((u & 0x7fffffffu) > 0x7f800000u ? TILE_CANONICAL_NAN_BITS : r);
}

/* One loop of a binary kernel: element i is a[i] (op) B(i), added to out[i]
 * first when ACC, then finished -- the same IEEE operations, in the same
 * order, as computing, accumulating and finishing in separate passes. */
#define TK_BINARY_LOOPS(OPER, ACC)                                                                 \
    switch (bcast) {                                                                               \
    case TILE_BCAST_ROW:                                                                           \
        for (int r = 0; r < TILE_DIM; r++)                                                         \
            for (int c = 0; c < TILE_DIM; c++) {                                                   \
                int i = r * TILE_DIM + c;                                                          \
                float v = a[i] OPER b[c];                                                          \
                out[i] = tk_fin1(ACC ? out[i] + v : v, keep, half, odd);                           \
            }                                                                                      \
        break;                                                                                     \
    case TILE_BCAST_COL:                                                                           \
        for (int r = 0; r < TILE_DIM; r++) {                                                       \
            float bv = b[r * TILE_DIM];                                                            \
            for (int c = 0; c < TILE_DIM; c++) {                                                   \
                int i = r * TILE_DIM + c;                                                          \
                float v = a[i] OPER bv;                                                            \
                out[i] = tk_fin1(ACC ? out[i] + v : v, keep, half, odd);                           \
            }                                                                                      \
        }                                                                                          \
        break;                                                                                     \
    case TILE_BCAST_SCALAR: {                                                                      \
        float bv = b[0];                                                                           \
        for (int i = 0; i < TILE_ELEMS; i++) {                                                     \
            float v = a[i] OPER bv;                                                                \
            out[i] = tk_fin1(ACC ? out[i] + v : v, keep, half, odd);                               \
        }                                                                                          \
        break;                                                                                     \
    }                                                                                              \
    default:                                                                                       \
        for (int i = 0; i < TILE_ELEMS; i++) {                                                     \
            float v = a[i] OPER b[i];                                                              \
            out[i] = tk_fin1(ACC ? out[i] + v : v, keep, half, odd);                               \
        }                                                                                          \
        break;                                                                                     \
    }

#define TK_DEFINE_BINARY(name, OPER)                                                               \
    static void name(tile_bcast bcast, const float *restrict a, const float *restrict b,           \
                     float *restrict out, bool acc, uint32_t keep, uint32_t half, uint32_t odd) {  \
        if (acc) {                                                                                 \
            TK_BINARY_LOOPS(OPER, 1)                                                               \
        } else {                                                                                   \
            TK_BINARY_LOOPS(OPER, 0)                                                               \
        }                                                                                          \
    }

TK_DEFINE_BINARY(tk_add, +)
TK_DEFINE_BINARY(tk_sub, -)
TK_DEFINE_BINARY(tk_mul, *)

static void tk_binary(tile_binary_op op, tile_bcast bcast, const float *a, const float *b,
                      float *out, bool acc, bool round_bf16) {
    uint32_t keep = round_bf16 ? 0xffff0000u : 0xffffffffu;
    uint32_t half = round_bf16 ? 0x7fffu : 0u;
    uint32_t odd = round_bf16 ? 1u : 0u;
    switch (op) {
    case TILE_BINARY_SUB:
        tk_sub(bcast, a, b, out, acc, keep, half, odd);
        break;
    case TILE_BINARY_MUL:
        tk_mul(bcast, a, b, out, acc, keep, half, odd);
        break;
    default:
        tk_add(bcast, a, b, out, acc, keep, half, odd);
        break;
    }
}

/* ---- matmul ---------------------------------------------------------------- */

#ifndef TILE_KERN_OWN_MATMUL
/* Where the baseline target has fused multiply-add (aarch64) this vectorizes;
 * on baseline x86-64 every fmaf is a library call: correct, but about 50x
 * slower than the AVX2 kernel, which every x86-64 CPU with FMA uses instead. */
static void tk_finish(float *restrict t, bool round_bf16);

static void tk_matmul(const float *restrict a, const float *restrict b, float *restrict acc,
                      bool round_bf16) {
    for (int i = 0; i < TILE_DIM; i++)
        for (int k = 0; k < TILE_DIM; k++) {
            float aik = a[i * TILE_DIM + k];
            for (int j = 0; j < TILE_DIM; j++)
                acc[i * TILE_DIM + j] = fmaf(aik, b[k * TILE_DIM + j], acc[i * TILE_DIM + j]);
        }
    tk_finish(acc, round_bf16);
}
#endif

/* ---- SFPU ------------------------------------------------------------------ */

#define TK_SFPU_LOOP(t, EXPR)                                                                      \
    for (int i = 0; i < TILE_ELEMS; i++) {                                                         \
        float x = t[i];                                                                            \
        t[i] = (EXPR);                                                                             \
    }

/* 1.0 or 0.0: the result of the comparison and predicate ops. */
#define TK_BOOL(c) ((c) ? 1.0f : 0.0f)

/* max and min that return NaN when either operand is NaN (torch.maximum). */
static inline float tk_max_nan(float x, float y) {
    return x != x || y != y ? NAN : x > y ? x : y;
}

static inline float tk_min_nan(float x, float y) {
    return x != x || y != y ? NAN : x < y ? x : y;
}

/* t = f(t); p0 and p1 are the op's parameters (tile_engine.h), exact. */
/* GELU (erf form), erf and erfc of a tile: the arguments first, then
 * tk_erf_tile_d over all of them (the series vectorizes only so). */
static void tk_sfpu_erf(tile_sfpu_op op, float *restrict t) {
    double arg[TILE_ELEMS], e[TILE_ELEMS];
    bool gelu = op == TILE_SFPU_GELU_ERF;
    for (int i = 0; i < TILE_ELEMS; i++)
        arg[i] = gelu ? tk_gelu_erf_arg(t[i]) : (double)t[i];
    tk_erf_tile_d(arg, op != TILE_SFPU_ERF, e);
    for (int i = 0; i < TILE_ELEMS; i++)
        t[i] = gelu ? tk_gelu_erf(t[i], e[i]) : (float)e[i];
}

static void tk_sfpu(tile_sfpu_op op, double p0, double p1, float *restrict t) {
    const float f0 = (float)p0, f1 = (float)p1;
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
    case TILE_SFPU_LOG1P:
        TK_SFPU_LOOP(t, (float)tk_log1p_d(x));
        break;
    case TILE_SFPU_EXPM1:
        TK_SFPU_LOOP(t, (float)tk_expm1_d(x));
        break;
    case TILE_SFPU_SIGN:
        TK_SFPU_LOOP(t, x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x == 0.0f ? 0.0f : x);
        break;
    case TILE_SFPU_RELU_MAX: { /* the chip's order: clip at the limit, then at 0 */
        TK_SFPU_LOOP(t, x > f0 ? f0 : x);
        TK_SFPU_LOOP(t, x < 0.0f ? 0.0f : x);
        break;
    }
    case TILE_SFPU_RELU_MIN:
        TK_SFPU_LOOP(t, x < f0 ? f0 : x);
        break;
    case TILE_SFPU_LEAKY_RELU:
        TK_SFPU_LOOP(t, x < 0.0f ? x * f0 : x);
        break;
    case TILE_SFPU_ELU:
        TK_SFPU_LOOP(t, x > 0.0f ? x : (float)(p0 * tk_expm1_d(x)));
        break;
    case TILE_SFPU_SELU:
        TK_SFPU_LOOP(t, (float)(p0 * (x > 0.0f ? (double)x : p1 * tk_expm1_d(x))));
        break;
    case TILE_SFPU_CELU:
        TK_SFPU_LOOP(t, x > 0.0f ? x : (float)(p0 * tk_expm1_d(x / p0)));
        break;
    case TILE_SFPU_GELU_ERF:
    case TILE_SFPU_ERF:
    case TILE_SFPU_ERFC:
        tk_sfpu_erf(op, t);
        break;
    case TILE_SFPU_SILU:
        TK_SFPU_LOOP(t, tk_silu(x));
        break;
    case TILE_SFPU_MISH:
        TK_SFPU_LOOP(t, tk_mish(x));
        break;
    case TILE_SFPU_HARDSIGMOID: /* min(max(x + 3, 0), 6) / 6; x + 3 is exact */
        TK_SFPU_LOOP(t, x <= -3.0f ? 0.0f : x >= 3.0f ? 1.0f : (float)((x + 3.0) / 6.0));
        break;
    case TILE_SFPU_HARDSWISH: /* x min(max(x + 3, 0), 6) / 6, x (x + 3) exact; -0 below -3 */
        TK_SFPU_LOOP(t, x <= -3.0f  ? tk_float(tk_bits(x) & 0x80000000u)
                        : x >= 3.0f ? x
                                    : (float)(x * (x + 3.0) / 6.0));
        break;
    case TILE_SFPU_HARDTANH:
    case TILE_SFPU_CLAMP:
        TK_SFPU_LOOP(t, tk_min_nan(tk_max_nan(x, f0), f1));
        break;
    case TILE_SFPU_SOFTPLUS: /* torch: x where x beta > threshold (in float32) */
        TK_SFPU_LOOP(t, (float)(x * p0) > f1 ? x : (float)(tk_softplus_d(x * p0) / p0));
        break;
    case TILE_SFPU_SOFTSIGN:
        TK_SFPU_LOOP(t, x == INFINITY    ? 1.0f
                        : x == -INFINITY ? -1.0f
                                         : (float)(x / (1.0 + tk_fabs_d(x))));
        break;
    case TILE_SFPU_SIN:
        TK_SFPU_LOOP(t, tk_trig(x, 0));
        break;
    case TILE_SFPU_COS:
        TK_SFPU_LOOP(t, tk_trig(x, 1));
        break;
    case TILE_SFPU_TAN:
        TK_SFPU_LOOP(t, tk_trig(x, 2));
        break;
    case TILE_SFPU_ASIN:
        TK_SFPU_LOOP(t, (float)tk_asin_d(x));
        break;
    case TILE_SFPU_ACOS:
        TK_SFPU_LOOP(t, (float)tk_acos_d(x));
        break;
    case TILE_SFPU_ATAN:
        TK_SFPU_LOOP(t, (float)tk_atan_d(x));
        break;
    case TILE_SFPU_SINH:
        TK_SFPU_LOOP(t, (float)tk_sinh_d(x));
        break;
    case TILE_SFPU_COSH:
        TK_SFPU_LOOP(t, (float)tk_cosh_d(x));
        break;
    case TILE_SFPU_ASINH:
        TK_SFPU_LOOP(t, (float)tk_asinh_d(x));
        break;
    case TILE_SFPU_ACOSH:
        TK_SFPU_LOOP(t, (float)tk_acosh_d(x));
        break;
    case TILE_SFPU_ATANH:
        TK_SFPU_LOOP(t, (float)tk_atanh_d(x));
        break;
    case TILE_SFPU_FLOOR:
        TK_SFPU_LOOP(t, tk_floor(x));
        break;
    case TILE_SFPU_CEIL:
        TK_SFPU_LOOP(t, tk_ceil(x));
        break;
    case TILE_SFPU_ROUND: {
        const int32_t d = (int32_t)p0;
        TK_SFPU_LOOP(t, tk_round_decimals(x, d));
        break;
    }
    case TILE_SFPU_TRUNC:
        TK_SFPU_LOOP(t, tk_trunc(x));
        break;
    case TILE_SFPU_FRAC: /* torch.frac: x - trunc(x), exact */
        TK_SFPU_LOOP(t, x - tk_trunc(x));
        break;
    case TILE_SFPU_LOGICAL_NOT:
        TK_SFPU_LOOP(t, TK_BOOL(x == 0.0f));
        break;
    case TILE_SFPU_ISNAN:
        TK_SFPU_LOOP(t, TK_BOOL(x != x));
        break;
    case TILE_SFPU_ISINF:
        TK_SFPU_LOOP(t, TK_BOOL(x == INFINITY || x == -INFINITY));
        break;
    case TILE_SFPU_ISPOSINF:
        TK_SFPU_LOOP(t, TK_BOOL(x == INFINITY));
        break;
    case TILE_SFPU_ISNEGINF:
        TK_SFPU_LOOP(t, TK_BOOL(x == -INFINITY));
        break;
    case TILE_SFPU_ISFINITE:
        TK_SFPU_LOOP(t, TK_BOOL(x - x == 0.0f));
        break;
    case TILE_SFPU_EQZ:
        TK_SFPU_LOOP(t, TK_BOOL(x == 0.0f));
        break;
    case TILE_SFPU_NEZ:
        TK_SFPU_LOOP(t, TK_BOOL(x != 0.0f));
        break;
    case TILE_SFPU_LTZ:
        TK_SFPU_LOOP(t, TK_BOOL(x < 0.0f));
        break;
    case TILE_SFPU_GTZ:
        TK_SFPU_LOOP(t, TK_BOOL(x > 0.0f));
        break;
    case TILE_SFPU_LEZ:
        TK_SFPU_LOOP(t, TK_BOOL(x <= 0.0f));
        break;
    case TILE_SFPU_GEZ:
        TK_SFPU_LOOP(t, TK_BOOL(x >= 0.0f));
        break;
    case TILE_SFPU_EXP2: /* exp(x ln2): the product's error is < 2^-45 relative after exp */
        TK_SFPU_LOOP(t, (float)tk_exp_dd((double)x * TK_LN2));
        break;
    case TILE_SFPU_LOG2:
        TK_SFPU_LOOP(t, (float)tk_log_scaled_d(x, 1.0, TK_LOG2E));
        break;
    case TILE_SFPU_LOG10:
        TK_SFPU_LOOP(t, (float)tk_log_scaled_d(x, TK_LOG10_2, TK_LOG10_E));
        break;
    case TILE_SFPU_CBRT:
        TK_SFPU_LOOP(t, x == 0.0f || !(x - x == 0.0f)
                            ? x
                            : (float)tk_copysign_d(tk_cbrt_pos_d(tk_fabs_d(x)), x));
        break;
    case TILE_SFPU_POWER:
    case TILE_SFPU_POWER_ITERATIVE:
        TK_SFPU_LOOP(t, (float)tk_pow_d(x, p0));
        break;
    case TILE_SFPU_HEAVISIDE:
        TK_SFPU_LOOP(t, x > 0.0f ? 1.0f : x < 0.0f ? 0.0f : x == 0.0f ? f0 : x);
        break;
    case TILE_SFPU_ADD_UNARY:
        TK_SFPU_LOOP(t, x + f0);
        break;
    case TILE_SFPU_SUB_UNARY:
        TK_SFPU_LOOP(t, x - f0);
        break;
    case TILE_SFPU_MUL_UNARY:
        TK_SFPU_LOOP(t, x * f0);
        break;
    case TILE_SFPU_DIV_UNARY:
        TK_SFPU_LOOP(t, x / f0);
        break;
    case TILE_SFPU_RSUB_UNARY:
        TK_SFPU_LOOP(t, f0 - x);
        break;
    case TILE_SFPU_UNARY_MAX:
        TK_SFPU_LOOP(t, tk_max_nan(x, f0));
        break;
    case TILE_SFPU_UNARY_MIN:
        TK_SFPU_LOOP(t, tk_min_nan(x, f0));
        break;
    case TILE_SFPU_UNARY_EQ:
        TK_SFPU_LOOP(t, TK_BOOL(x == f0));
        break;
    case TILE_SFPU_UNARY_NE:
        TK_SFPU_LOOP(t, TK_BOOL(x != f0));
        break;
    case TILE_SFPU_UNARY_LT:
        TK_SFPU_LOOP(t, TK_BOOL(x < f0));
        break;
    case TILE_SFPU_UNARY_LE:
        TK_SFPU_LOOP(t, TK_BOOL(x <= f0));
        break;
    case TILE_SFPU_UNARY_GT:
        TK_SFPU_LOOP(t, TK_BOOL(x > f0));
        break;
    case TILE_SFPU_UNARY_GE:
        TK_SFPU_LOOP(t, TK_BOOL(x >= f0));
        break;
    case TILE_SFPU_TYPECAST: {
        const uint32_t in = (uint32_t)p0, out = (uint32_t)p1;
        TK_SFPU_LOOP(t, tk_float(tk_typecast(tk_bits(x), in, out)));
        break;
    }
    default:
        break;
    }
}

/* ---- dst-to-dst binary SFPU ------------------------------------------------ */

#define TK_DST_BINARY_LOOP(EXPR)                                                                   \
    for (int i = 0; i < TILE_ELEMS; i++) {                                                         \
        float x = a[i], y = b[i];                                                                  \
        out[i] = (EXPR);                                                                           \
    }

static void tk_dst_binary(tile_dst_binary_op op, const float *restrict a, const float *restrict b,
                          float *restrict out) {
    switch (op) {
    case TILE_DST_BINARY_ADD:
        TK_DST_BINARY_LOOP(x + y);
        break;
    case TILE_DST_BINARY_SUB:
        TK_DST_BINARY_LOOP(x - y);
        break;
    case TILE_DST_BINARY_MUL:
        TK_DST_BINARY_LOOP(x * y);
        break;
    case TILE_DST_BINARY_DIV:
        TK_DST_BINARY_LOOP(x / y);
        break;
    case TILE_DST_BINARY_RSUB:
        TK_DST_BINARY_LOOP(y - x);
        break;
    case TILE_DST_BINARY_MAX:
        TK_DST_BINARY_LOOP(tk_max_nan(x, y));
        break;
    case TILE_DST_BINARY_MIN:
        TK_DST_BINARY_LOOP(tk_min_nan(x, y));
        break;
    case TILE_DST_BINARY_POWER:
        TK_DST_BINARY_LOOP((float)tk_pow_d(x, y));
        break;
    case TILE_DST_BINARY_EQ:
        TK_DST_BINARY_LOOP(TK_BOOL(x == y));
        break;
    case TILE_DST_BINARY_NE:
        TK_DST_BINARY_LOOP(TK_BOOL(x != y));
        break;
    case TILE_DST_BINARY_LT:
        TK_DST_BINARY_LOOP(TK_BOOL(x < y));
        break;
    case TILE_DST_BINARY_LE:
        TK_DST_BINARY_LOOP(TK_BOOL(x <= y));
        break;
    case TILE_DST_BINARY_GT:
        TK_DST_BINARY_LOOP(TK_BOOL(x > y));
        break;
    case TILE_DST_BINARY_GE:
        TK_DST_BINARY_LOOP(TK_BOOL(x >= y));
        break;
    case TILE_DST_BINARY_LOGICAL_AND:
        TK_DST_BINARY_LOOP(TK_BOOL(x != 0.0f && y != 0.0f));
        break;
    case TILE_DST_BINARY_LOGICAL_OR:
        TK_DST_BINARY_LOOP(TK_BOOL(x != 0.0f || y != 0.0f));
        break;
    case TILE_DST_BINARY_LOGICAL_XOR:
        TK_DST_BINARY_LOOP(TK_BOOL((x != 0.0f) != (y != 0.0f)));
        break;
    case TILE_DST_BINARY_ATAN2:
        TK_DST_BINARY_LOOP((float)tk_atan2_d(x, y));
        break;
    case TILE_DST_BINARY_FMOD:
        TK_DST_BINARY_LOOP(tk_fmod(x, y));
        break;
    case TILE_DST_BINARY_REMAINDER: { /* torch: fmod, moved to the divisor's side */
        TK_DST_BINARY_LOOP(tk_fmod(x, y));
        for (int i = 0; i < TILE_ELEMS; i++) {
            float m = out[i], y = b[i];
            out[i] = m != 0.0f && (y < 0.0f) != (m < 0.0f) ? m + y : m;
        }
        break;
    }
    default:
        break;
    }
}

/* ---- reduce ---------------------------------------------------------------- */

/* max that lets a NaN win, so a NaN anywhere in the input shows in the result. */
static inline float tk_reduce_max(float m, float v) {
    return v > m || v != v ? v : m;
}

/* One slot's step: acc combined with v (the element times the scaler). */
#define TK_REDUCE_STEP(func, acc, x, scaler)                                                       \
    ((func) == TILE_REDUCE_MAX    ? tk_reduce_max(acc, (x) * (scaler))                             \
     : (func) == TILE_REDUCE_PROD ? (acc) * ((x) * (scaler))                                       \
                                  : fmaf(x, scaler, acc))

static void tk_reduce(tile_reduce_func func, tile_reduce_dim dim, const float *restrict a,
                      float scaler, float *restrict acc) {
    if (dim == TILE_REDUCE_SCALAR) { /* one chain over all elements */
        float s = acc[0];
        for (int i = 0; i < TILE_ELEMS; i++)
            s = TK_REDUCE_STEP(func, s, a[i], scaler);
        acc[0] = s;
        return;
    }
    /* Slot s reduces column s of m over its rows in order: the 32 chains run
     * side by side in vector lanes. A row reduction transposes first, which
     * keeps each slot's order of operations. */
    float at[TILE_ELEMS];
    const float *m = a;
    if (dim == TILE_REDUCE_ROW) {
        for (int r = 0; r < TILE_DIM; r++)
            for (int c = 0; c < TILE_DIM; c++)
                at[c * TILE_DIM + r] = a[r * TILE_DIM + c];
        m = at;
    }
    /* One loop per function, so that each vectorizes. */
    switch (func) {
    case TILE_REDUCE_MAX:
        for (int i = 0; i < TILE_DIM; i++)
            for (int s = 0; s < TILE_DIM; s++)
                acc[s] = TK_REDUCE_STEP(TILE_REDUCE_MAX, acc[s], m[i * TILE_DIM + s], scaler);
        break;
    case TILE_REDUCE_PROD:
        for (int i = 0; i < TILE_DIM; i++)
            for (int s = 0; s < TILE_DIM; s++)
                acc[s] = TK_REDUCE_STEP(TILE_REDUCE_PROD, acc[s], m[i * TILE_DIM + s], scaler);
        break;
    default:
        for (int i = 0; i < TILE_DIM; i++)
            for (int s = 0; s < TILE_DIM; s++)
                acc[s] = fmaf(m[i * TILE_DIM + s], scaler, acc[s]);
        break;
    }
}

/* ---- dst write-back -------------------------------------------------------- */

static void tk_finish(float *restrict t, bool round_bf16) {
    /* Without rounding these make r = u. */
    uint32_t keep = round_bf16 ? 0xffff0000u : 0xffffffffu;
    uint32_t half = round_bf16 ? 0x7fffu : 0u;
    uint32_t odd_mask = round_bf16 ? 1u : 0u;
    for (int i = 0; i < TILE_ELEMS; i++)
        t[i] = tk_fin1(t[i], keep, half, odd_mask);
}

const tile_kernels TILE_KERN_TABLE = {
    .name = TILE_KERN_NAME,
    .binary = tk_binary,
    .matmul = tk_matmul,
    .sfpu = tk_sfpu,
    .dst_binary = tk_dst_binary,
    .reduce = tk_reduce,
    .finish = tk_finish,
};
