/* Body of a tile kernel set (see tile_kern.h). Included by exactly one .c file
 * per target, which defines TILE_KERN_TABLE (the table's name), TILE_KERN_NAME
 * and, when it brings its own matmul, TILE_KERN_OWN_MATMUL.
 *
 * Everything here is written so that a vectorizing compiler can keep the exact
 * per-element operation sequence: straight-line element functions, selects
 * instead of branches, no reassociation. Transcendentals are our own fixed
 * approximations; libm is never called (its results differ between versions
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

static inline uint32_t tk_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float tk_float(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

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

/* exp(x) = 2^n * exp(r), n = round(x / ln 2), |r| <= ln2 / 2, all in float64:
 * exp(r) by its degree-8 Taylor polynomial (truncation < 2^-32 relative) and
 * 2^n applied in two exact steps. The float32 ops round the float64 result once
 * (subnormal results included), so exp is within 0.5 ulp + 2^-30 relative; the
 * ops built on exp keep float64 until their own final rounding. */
#define TK_LOG2E 1.4426950408889634
#define TK_LN2 0.6931471805599453
/* 1.5 * 2^52: adding and subtracting it rounds a double to an integer. */
#define TK_ROUND_MAGIC 6755399441055744.0

static inline double tk_double(uint64_t u) {
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static inline double tk_exp_dd(double x) {
    double xc = x != x ? 0.0 : x;
    xc = xc < -745.0 ? -745.0 : xc; /* below: 0 in float64 already */
    xc = xc > 89.0 ? 89.0 : xc;     /* above: Inf in float32 already */
    double n = (xc * TK_LOG2E + TK_ROUND_MAGIC) - TK_ROUND_MAGIC;
    double r = xc - n * TK_LN2;
    double p = 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    int32_t k = (int32_t)n;
    int32_t k1 = k / 2;
    int32_t k2 = k - k1;
    double s1 = tk_double((uint64_t)(int64_t)(k1 + 1023) << 52);
    double s2 = tk_double((uint64_t)(int64_t)(k2 + 1023) << 52);
    double y = (p * s1) * s2;
    return x != x ? x : y;
}

static inline float tk_exp(float x) {
    return (float)tk_exp_dd(x);
}

/* log(x) = e ln2 + log(m), m in [sqrt(1/2), sqrt(2)], log(m) = 2 atanh(s) with
 * s = (m - 1) / (m + 1), |s| <= 0.1716, by its odd series to s^9. s, the
 * leading term and the final sum are formed in float64 so that only the last
 * conversion rounds noticeably; the series tail (< 1% of the result) is float. */
static inline float tk_log(float x) {
    uint32_t u = tk_bits(x);
    int sub = u != 0 && u < 0x00800000u; /* positive subnormal */
    float xs = sub ? x * 8388608.0f : x;
    uint32_t us = tk_bits(xs);
    int32_t e = (int32_t)((us >> 23) & 0xffu) - 127 - (sub ? 23 : 0);
    float m = tk_float((us & 0x007fffffu) | 0x3f800000u);
    int big = m > 1.41421356f;
    m = big ? m * 0.5f : m;
    e = big ? e + 1 : e;
    double sd = (double)(m - 1.0f) / ((double)m + 1.0);
    float s = (float)sd;
    float s2 = s * s;
    float q = 2.0f / 9.0f;
    q = q * s2 + 2.0f / 7.0f;
    q = q * s2 + 2.0f / 5.0f;
    q = q * s2 + 2.0f / 3.0f;
    double logm = 2.0 * sd + (double)(s * (s2 * q));
    float y = (float)((double)e * TK_LN2 + logm);
    y = x == 0.0f ? -INFINITY : y;
    y = x < 0.0f ? NAN : y;
    y = u == 0x7f800000u ? x : y;
    return x != x ? x : y;
}

static inline float tk_sqrt(float x) {
    return sqrtf(x);
}

/* x * sigmoid(v) = x / (1 + exp(-v)) formed from t = exp(-|v|) <= 1 so nothing
 * overflows: x / (1 + t) for v >= 0, x * t / (1 + t) for v < 0. */
static inline double tk_times_sigmoid(double x, double v) {
    double av = v < 0.0 ? -v : v;
    double t = tk_exp_dd(-av);
    return v < 0.0 ? x * t / (1.0 + t) : x / (1.0 + t);
}

static inline float tk_sigmoid(float x) {
    return (float)tk_times_sigmoid(1.0, x);
}

/* tanh: odd Taylor series to x^19 below 0.55 (truncation < 2^-28 relative),
 * 1 - 2 / (exp(2|x|) + 1) above, in float64; the sign is restored last. */
static inline float tk_tanh(float x) {
    double ax = x < 0.0f ? -(double)x : (double)x;
    double x2 = ax * ax;
    double q = -443861162.0 / 1856156927625.0;
    q = q * x2 + 6404582.0 / 10854718875.0;
    q = q * x2 + -929569.0 / 638512875.0;
    q = q * x2 + 21844.0 / 6081075.0;
    q = q * x2 + -1382.0 / 155925.0;
    q = q * x2 + 62.0 / 2835.0;
    q = q * x2 + -17.0 / 315.0;
    q = q * x2 + 2.0 / 15.0;
    q = q * x2 + -1.0 / 3.0;
    double small = ax + ax * (x2 * q);
    double large = 1.0 - 2.0 / (tk_exp_dd(2.0 * ax) + 1.0);
    float y = (float)(ax < 0.55 ? small : large);
    return tk_float(tk_bits(y) | (tk_bits(x) & 0x80000000u));
}

/* gelu, tanh form: 0.5 x (1 + tanh(u)) = x * sigmoid(2u) with
 * u = sqrt(2/pi) (x + 0.044715 x^3); no cancellation for negative x, and 2u
 * carries no float32 rounding error into exp (which would amplify it by |2u|). */
static inline float tk_gelu(float x) {
    double xd = x;
    double v = 1.5957691216057308 * (xd + 0.044715 * ((xd * xd) * xd));
    float y = (float)tk_times_sigmoid(xd, v);
    /* +-Inf: the formula gives Inf * 0 for -Inf */
    return x == -INFINITY ? -0.0f : y;
}

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
