/* Element functions of the tile kernels: the scalar math behind the SFPU
 * operations. Included by tile_kern_body.h, so it is compiled once per kernel
 * set (portable, AVX2); everything is static inline.
 *
 * Only IEEE operations that are correctly rounded and no libm call, so the
 * results are the same on every host and kernel set (see tile_kern_body.h).
 */
#ifndef LM_SIM_TILE_KERN_MATH_H
#define LM_SIM_TILE_KERN_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

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

#endif
