/* Element functions of the tile kernels: the scalar math behind every SFPU
 * operation. Included by tile_kern_body.h, so it is compiled once per kernel
 * set (portable, AVX2); everything is static inline.
 *
 * Rules (they are what makes results identical on every host and kernel set):
 * only IEEE operations that are correctly rounded (+, -, *, /, sqrt and
 * conversions), integer arithmetic, and no libm call; no contraction (the
 * module is built with -ffp-contract=off); no conversion of an out-of-range
 * value to an integer type (undefined in C). The transcendental functions are
 * our own: range reductions and series evaluated in float64 (the "_d"
 * functions, relative error a few 2^-52 unless said otherwise), rounded to
 * float32 once at the end by the caller. Callers get the float32 specials
 * right (Inf, NaN, signed zeros); the "_d" helpers say what they accept.
 */
#ifndef LM_SIM_TILE_KERN_MATH_H
#define LM_SIM_TILE_KERN_MATH_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "sim/tile/tile_format.h"

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

static inline uint64_t tk_bits_d(double d) {
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static inline double tk_double(uint64_t u) {
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* |x| and x with the sign of s, by bits (also for zeros and NaNs). */
static inline double tk_fabs_d(double x) {
    return tk_double(tk_bits_d(x) & 0x7fffffffffffffffull);
}

static inline double tk_copysign_d(double x, double s) {
    return tk_double((tk_bits_d(x) & 0x7fffffffffffffffull) |
                     (tk_bits_d(s) & 0x8000000000000000ull));
}

/* Constants, correctly rounded from their decimal expansions by the compiler. */
#define TK_LOG2E 1.4426950408889634
#define TK_LN2 0.6931471805599453
#define TK_PI 3.1415926535897932384626
#define TK_PIO2 1.5707963267948966192313
#define TK_PIO6 0.5235987755982988730771
#define TK_SQRT3 1.7320508075688772935274
#define TK_TAN_PI_12 0.2679491924311227064726 /* 2 - sqrt(3) */
#define TK_SQRT1_2 0.7071067811865475244008
#define TK_LOG10_2 0.3010299956639811952137
#define TK_LOG10_E 0.4342944819032518276511
/* 1.5 * 2^52: adding and subtracting it rounds a double to an integer. */
#define TK_ROUND_MAGIC 6755399441055744.0

/* For the element functions the hot loops call: inlined, the loop vectorizes
 * (a call in its body keeps it scalar). */
#if defined(__GNUC__)
#define TK_INLINE static inline __attribute__((always_inline))
#else
#define TK_INLINE static inline
#endif

/* ---- exp ------------------------------------------------------------------- */

/* exp(x) = 2^n * exp(r), n = round(x / ln 2), |r| <= ln2 / 2, all in float64:
 * exp(r) by its degree-8 Taylor polynomial (truncation < 2^-32 relative) and
 * 2^n applied in two exact steps. The float32 ops round the float64 result once
 * (subnormal results included), so exp is within 0.5 ulp + 2^-30 relative; the
 * ops built on exp keep float64 until their own final rounding. Arguments
 * above 89 give e^89 (already beyond float32), below -745 give 0. */
TK_INLINE double tk_exp_dd(double x) {
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
    /* 2^n = 2^k1 2^k2 with k1 about n / 2, so that both factors and p 2^k1
     * are normal and only the last product rounds (whichever way the half
     * is split). Each factor's bits are its biased exponent, added to the
     * rounding constant (whose low bits it then is) and shifted into place:
     * a double add and a 64-bit shift a lane, where going through an
     * integer takes a conversion to int32 and a widening to 64 bits (x86
     * has no conversion of a double to int64 before AVX-512). */
    double k1 = (n * 0.5 + TK_ROUND_MAGIC) - TK_ROUND_MAGIC, k2 = n - k1;
    double s1 = tk_double(tk_bits_d(k1 + (1023.0 + TK_ROUND_MAGIC)) << 52);
    double s2 = tk_double(tk_bits_d(k2 + (1023.0 + TK_ROUND_MAGIC)) << 52);
    double y = (p * s1) * s2;
    return x != x ? x : y;
}

TK_INLINE float tk_exp(float x) {
    return (float)tk_exp_dd(x);
}

/* exp(x) - 1: the Taylor series to x^13 for |x| < 0.35 (truncation < 2^-55
 * relative), exp(x) - 1 above, where the result is at least 0.29 |exp(x)| so
 * exp's error stays relative. */
static inline double tk_expm1_d(double x) {
    double q = 1.0 / 6227020800.0;
    q = q * x + 1.0 / 479001600.0;
    q = q * x + 1.0 / 39916800.0;
    q = q * x + 1.0 / 3628800.0;
    q = q * x + 1.0 / 362880.0;
    q = q * x + 1.0 / 40320.0;
    q = q * x + 1.0 / 5040.0;
    q = q * x + 1.0 / 720.0;
    q = q * x + 1.0 / 120.0;
    q = q * x + 1.0 / 24.0;
    q = q * x + 1.0 / 6.0;
    q = q * x + 0.5;
    q = q * x + 1.0;
    double small = x * q; /* keeps the sign of a zero */
    double big = tk_exp_dd(x) - 1.0;
    return x < 0.35 && x > -0.35 ? small : big;
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

/* ---- log ------------------------------------------------------------------- */

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

/* log(m) for x = 2^e m, m in [sqrt(1/2), sqrt(2)), with *e set; x positive,
 * finite and normal. log(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.1716,
 * by the odd series to s^23 (truncation < 2^-56 relative). */
static inline double tk_log_m(double x, double *e) {
    uint64_t u = tk_bits_d(x);
    int64_t ex = (int64_t)((u >> 52) & 0x7ffu) - 1023;
    double m = tk_double((u & 0x000fffffffffffffull) | 0x3ff0000000000000ull);
    int big = m > 1.4142135623730951;
    m = big ? m * 0.5 : m;
    *e = (double)(ex + big);
    double s = (m - 1.0) / (m + 1.0);
    double z = s * s;
    double q = 1.0 / 23.0;
    q = q * z + 1.0 / 21.0;
    q = q * z + 1.0 / 19.0;
    q = q * z + 1.0 / 17.0;
    q = q * z + 1.0 / 15.0;
    q = q * z + 1.0 / 13.0;
    q = q * z + 1.0 / 11.0;
    q = q * z + 1.0 / 9.0;
    q = q * z + 1.0 / 7.0;
    q = q * z + 1.0 / 5.0;
    q = q * z + 1.0 / 3.0;
    return 2.0 * s + (2.0 * s) * (z * q);
}

/* c_e e + c_m log(m) (see tk_log_m), so ln, log2 and log10 keep exact
 * results exact (log2(2^k) = k); log's specials: +-0 -> -Inf, x < 0 -> NaN,
 * +Inf -> +Inf, NaN -> NaN. x must not be a nonzero subnormal double (no
 * float32 value is one). */
static inline double tk_log_scaled_d(double x, double c_e, double c_m) {
    double xc = x > 0.0 && x < INFINITY ? x : 1.0;
    double e;
    double lm = tk_log_m(xc, &e);
    double y = e * c_e + lm * c_m;
    y = x == 0.0 ? -INFINITY : y;
    y = x < 0.0 ? NAN : y;
    y = x == INFINITY ? INFINITY : y;
    return x != x ? x : y;
}

static inline double tk_log_d(double x) {
    return tk_log_scaled_d(x, TK_LN2, 1.0);
}

/* log(1 + x): u = 1 + x rounded, log(u) corrected by the rounding error of u
 * (exact when |x| <= 1), divided by u; x itself when 1 + x rounds to 1. */
static inline double tk_log1p_d(double x) {
    double u = 1.0 + x;
    double c = x - (u - 1.0);
    double l = tk_log_d(u);
    double corr = u > 0.0 && u < INFINITY ? c / u : 0.0;
    return u == 1.0 ? x : l + corr;
}

/* log(1 + exp(v)) without overflow: max(v, 0) + log1p(exp(-|v|)). */
static inline double tk_softplus_d(double v) {
    double av = v < 0.0 ? -v : v;
    return (v > 0.0 ? v : 0.0) + tk_log1p_d(tk_exp_dd(-av));
}

/* ---- pow, cbrt ------------------------------------------------------------- */

/* x^y with C's (and torch.pow's) rules: y = 0 or x = 1 give 1 (even with a
 * NaN), a negative x needs an integer y (else NaN) and an odd one keeps the
 * sign, zeros and infinities as C99 F.10.4.4. |x|^y = exp(y log|x|): log's
 * error (~2^-52 relative) times |y log|x|| <= 104 where the result is a
 * nonzero float32 stays below 2^-45, so exp's 2^-32 dominates. Integers y up
 * to 2^52 are exact in a double (float32 and uint32 exponents are). */
static inline double tk_pow_d(double x, double y) {
    double ax = tk_fabs_d(x), ay = tk_fabs_d(y);
    int big = !(ay < 4503599627370496.0); /* 2^52: integer and even; Inf; NaN */
    double yr = big ? 0.0 : (ay + TK_ROUND_MAGIC) - TK_ROUND_MAGIC;
    int yint = big || yr == ay;
    int odd = !big && yint && ((int64_t)yr & 1);
    double r = tk_exp_dd(y * tk_log_d(ax));
    r = odd && (tk_bits_d(x) >> 63) ? -r : r;
    r = x < 0.0 && x > -INFINITY && !yint && y == y ? NAN : r;
    r = ax == 1.0 && ay == INFINITY ? 1.0 : r;
    r = y == 0.0 || x == 1.0 ? 1.0 : r;
    return r;
}

/* cbrt(a) for a > 0, finite and normal: a = 2^(3k + j) m, v = m 2^j in
 * [1, 8), four Halley steps from a linear first guess (error < 0.16, cubed at
 * each step), then 2^k exactly. */
static inline double tk_cbrt_pos_d(double a) {
    uint64_t u = tk_bits_d(a);
    int64_t e = (int64_t)((u >> 52) & 0x7ffu) - 1023;
    int64_t k = (e + 3000) / 3 - 1000; /* floor(e / 3) */
    int64_t j = e - 3 * k;
    double v = tk_double((u & 0x000fffffffffffffull) | (uint64_t)(1023 + j) << 52);
    double g = 0.75 + 0.15 * v;
    for (int i = 0; i < 4; i++) {
        double g3 = g * g * g;
        g = g * (g3 + 2.0 * v) / (2.0 * g3 + v);
    }
    return g * tk_double((uint64_t)(1023 + k) << 52);
}

/* ---- trigonometric --------------------------------------------------------- */

/* Bits of 2/pi, most significant first, after one word of zeros: bit i of the
 * fraction (weight 2^-i) is bit 31 - (i + 31) % 32 of word (i + 31) / 32. */
static const uint32_t tk_two_over_pi[] = {
    0x00000000u, 0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u, 0xF534DDC0u, 0xDB629599u,
    0x3C439041u, 0xFE5163ABu, 0xDEBBC561u, 0xB7246E3Au, 0x424DD2E0u,
};

/* Reduction of a finite float32 a >= 0: a = (n + f) pi/2 with n an integer and
 * |f| <= 1/2; returns r = f pi/2 in [-pi/4, pi/4] and n mod 4 in *quadrant.
 * Below pi/4, r = a. Above, exactly (Payne-Hanek): a = m 2^E with a 24-bit
 * integer m; the bits of 2/pi worth less than 4 after the multiplication by
 * m 2^E, a 128-bit window of them, times m, give a 2/pi mod 4 to 2^-100, so
 * even the float32 closest to a multiple of pi/2 (|f| near 2^-30) keeps a
 * float64-accurate r. */
static inline double tk_rem_pio2(float a, uint32_t *quadrant) {
    uint32_t ua = tk_bits(a);
    if (ua < 0x3f490fdbu) { /* below pi/4 */
        *quadrant = 0;
        return a;
    }
    uint64_t m = (ua & 0x007fffffu) | 0x00800000u;
    /* The window starts at bit i = E - 1 of 2/pi, E = exponent - 150: table
     * bit exponent - 120 (>= 6, at most 134, so five words from word <= 4). */
    uint32_t p = (ua >> 23) - 120u;
    uint32_t w = p >> 5, sh = p & 31u;
    const uint32_t *t = tk_two_over_pi + w;
    uint64_t a0 = (uint64_t)t[0] << 32 | t[1], a1 = (uint64_t)t[2] << 32 | t[3];
    uint64_t a2 = (uint64_t)t[4] << 32;
    uint64_t whi = sh ? a0 << sh | a1 >> (64u - sh) : a0;
    uint64_t wlo = sh ? a1 << sh | a2 >> (64u - sh) : a1;
    /* (m x window) mod 2^128 = a 2/pi mod 4, scaled by 2^126 */
    uint64_t t0 = m * (wlo & 0xffffffffu);
    uint64_t t1 = m * (wlo >> 32) + (t0 >> 32);
    uint64_t lo = t1 << 32 | (t0 & 0xffffffffu);
    uint64_t hi = m * whi + (t1 >> 32);
    uint64_t frac = hi & 0x3fffffffffffffffull;
    uint64_t up = (frac >> 61) & 1u; /* fraction >= 1/2: n + 1, f - 1 */
    int64_t sf = (int64_t)frac - (int64_t)(up << 62);
    *quadrant = (uint32_t)((hi >> 62) + up) & 3u;
    double f = (double)sf * 0x1p-62 + (double)lo * 0x1p-126;
    return f * TK_PIO2;
}

/* sin and cos of |r| <= pi/4 by their Taylor series to r^17 and r^18
 * (truncation < 2^-62 relative). */
static inline double tk_sin_poly(double r) {
    double z = r * r;
    double p = 1.0 / 355687428096000.0;
    p = p * z - 1.0 / 1307674368000.0;
    p = p * z + 1.0 / 6227020800.0;
    p = p * z - 1.0 / 39916800.0;
    p = p * z + 1.0 / 362880.0;
    p = p * z - 1.0 / 5040.0;
    p = p * z + 1.0 / 120.0;
    p = p * z - 1.0 / 6.0;
    return r + r * (z * p);
}

static inline double tk_cos_poly(double r) {
    double z = r * r;
    double p = 1.0 / 6402373705728000.0;
    p = p * z - 1.0 / 20922789888000.0;
    p = p * z + 1.0 / 87178291200.0;
    p = p * z - 1.0 / 479001600.0;
    p = p * z + 1.0 / 3628800.0;
    p = p * z - 1.0 / 40320.0;
    p = p * z + 1.0 / 720.0;
    p = p * z - 1.0 / 24.0;
    p = p * z + 0.5;
    return 1.0 - z * p;
}

/* sin (which 0), cos (1) or tan (2) of a float32, NaN for Inf and NaN. */
static inline float tk_trig(float x, int which) {
    float ax = tk_float(tk_bits(x) & 0x7fffffffu);
    int finite = ax < INFINITY;
    uint32_t q;
    double r = tk_rem_pio2(finite ? ax : 0.0f, &q);
    double s = tk_sin_poly(r), c = tk_cos_poly(r);
    double y;
    if (which == 0)
        y = (q & 1u ? c : s) * (q & 2u ? -1.0 : 1.0);
    else if (which == 1)
        y = (q & 1u ? s : c) * ((q + 1u) & 2u ? -1.0 : 1.0);
    else
        y = q & 1u ? -c / s : s / c;
    y = which != 1 && tk_bits(x) >> 31 ? -y : y; /* sin and tan are odd */
    return finite ? (float)y : NAN;
}

/* atan(a) for a >= 0 (Inf included): above 1 through pi/2 - atan(1/a), above
 * tan(pi/12) through pi/6 + atan((a sqrt3 - 1) / (a + sqrt3)), then the odd
 * series on |t| <= tan(pi/12) to t^31 (truncation < 2^-60 relative). */
static inline double tk_atan_pos_d(double a) {
    int inv = a > 1.0;
    double b = inv ? 1.0 / a : a;
    int red = b > TK_TAN_PI_12;
    double t = red ? (b * TK_SQRT3 - 1.0) / (b + TK_SQRT3) : b;
    double z = t * t;
    double p = -1.0 / 31.0;
    p = p * z + 1.0 / 29.0;
    p = p * z - 1.0 / 27.0;
    p = p * z + 1.0 / 25.0;
    p = p * z - 1.0 / 23.0;
    p = p * z + 1.0 / 21.0;
    p = p * z - 1.0 / 19.0;
    p = p * z + 1.0 / 17.0;
    p = p * z - 1.0 / 15.0;
    p = p * z + 1.0 / 13.0;
    p = p * z - 1.0 / 11.0;
    p = p * z + 1.0 / 9.0;
    p = p * z - 1.0 / 7.0;
    p = p * z + 1.0 / 5.0;
    p = p * z - 1.0 / 3.0;
    double r = t + t * (z * p);
    r = red ? TK_PIO6 + r : r;
    return inv ? TK_PIO2 - r : r;
}

/* atan2(y, x) as C (and torch.atan2) define it, signed zeros and infinities
 * included. */
static inline double tk_atan2_d(double y, double x) {
    double ay = tk_fabs_d(y), ax = tk_fabs_d(x);
    int both_inf = ay == INFINITY && ax == INFINITY;
    ay = both_inf ? 1.0 : ay;
    ax = both_inf ? 1.0 : ax;
    double r = ay <= ax ? tk_atan_pos_d(ay / ax) : TK_PIO2 - tk_atan_pos_d(ax / ay);
    r = ay == 0.0 && ax == 0.0 ? 0.0 : r;
    r = tk_bits_d(x) >> 63 ? TK_PI - r : r;
    r = tk_copysign_d(r, y);
    return x != x || y != y ? NAN : r;
}

/* asin(x) = atan(x / sqrt((1 - x)(1 + x))), acos(x) = 2 atan(sqrt((1 - x) /
 * (1 + x))): both factors are exact for a float32 x, so neither cancels;
 * NaN outside [-1, 1]. */
static inline double tk_asin_d(double x) {
    double a = tk_fabs_d(x);
    double r = tk_atan_pos_d(a / sqrt((1.0 - a) * (1.0 + a)));
    return a > 1.0 || x != x ? NAN : tk_copysign_d(r, x);
}

static inline double tk_acos_d(double x) {
    double r = 2.0 * tk_atan_pos_d(sqrt((1.0 - x) / (1.0 + x)));
    return x > 1.0 || x < -1.0 || x != x ? NAN : r;
}

static inline double tk_atan_d(double x) {
    double r = tk_atan_pos_d(tk_fabs_d(x));
    return x != x ? x : tk_copysign_d(r, x);
}

/* ---- hyperbolic ------------------------------------------------------------ */

/* sinh and cosh of a float32: from expm1 (sinh, no cancellation: (e + e /
 * (e + 1)) / 2 with e = expm1|x|) and exp below 20; exp(|x| - ln2) above,
 * where exp(-|x|) is below 2^-57 of the result and the halving cannot
 * overflow early. */
static inline double tk_sinh_d(double x) {
    double a = tk_fabs_d(x);
    double e = tk_expm1_d(a);
    double r = a < 20.0 ? 0.5 * (e + e / (e + 1.0)) : tk_exp_dd(a - TK_LN2);
    return tk_copysign_d(r, x);
}

static inline double tk_cosh_d(double x) {
    double a = tk_fabs_d(x);
    double e = tk_exp_dd(a);
    return a < 20.0 ? 0.5 * (e + 1.0 / e) : tk_exp_dd(a - TK_LN2);
}

/* asinh(x) = log1p(a + a^2 / (1 + sqrt(1 + a^2))), a = |x| (a^2 is exact for
 * a float32 and cannot overflow a double). */
static inline double tk_asinh_d(double x) {
    double a = tk_fabs_d(x);
    double a2 = a * a;
    double r = tk_log1p_d(a + a2 / (1.0 + sqrt(1.0 + a2)));
    r = a == INFINITY ? a : r;
    return x != x ? x : tk_copysign_d(r, x);
}

/* acosh(x) = log1p(t + sqrt(t (t + 2))), t = x - 1 (exact); NaN below 1. */
static inline double tk_acosh_d(double x) {
    double t = x - 1.0;
    double r = tk_log1p_d(t + sqrt(t * (t + 2.0)));
    r = x == INFINITY ? x : r;
    return x < 1.0 || x != x ? NAN : r;
}

/* atanh(x) = log1p(2a / (1 - a)) / 2, a = |x|; +-Inf at +-1, NaN beyond. */
static inline double tk_atanh_d(double x) {
    double a = tk_fabs_d(x);
    double r = 0.5 * tk_log1p_d(2.0 * a / (1.0 - a));
    r = a == 1.0 ? INFINITY : r;
    r = a > 1.0 || x != x ? NAN : r;
    return tk_copysign_d(r, x);
}

/* ---- erf, erfc ------------------------------------------------------------- */

/* erf and erfc in two pieces, each a polynomial of degree 14 in a variable
 * that spans [-1, 1] over its piece (the Chebyshev interpolant of the
 * function there, its coefficients rounded to double):
 *   near, 0 <= a < 2: erf(a) = a P(s), s = a^2 / 2 - 1;
 *   far, 2 <= a <= 21: erfc(a) = e^(-a^2) Q(s), s = 2 (a - 3) / (a + 3) - 1/2,
 *   a map under which e^(a^2) erfc(a) is nearly a polynomial (above 21,
 *   e^(-a^2) is 0 to float32 and Q(21) stands in).
 * P and Q are within 2^-45 relative (measured against 60-digit values);
 * in the far piece exp's 2^-32 dominates. No division beyond the far
 * piece's one, and no loop: a tile's elements vectorize, which a series or
 * continued fraction of the same accuracy (35 terms, 40 divisions) did
 * three times slower. */
static const double TK_ERF_NEAR[15] = {
    0x1.5990d95f8c2b3p-1,  -0x1.0b60e85d31212p-2,  0x1.e962f50e235b2p-4,  -0x1.8ea53db4f6188p-5,
    0x1.18a17bf127fffp-6,  -0x1.5712a4bf81a93p-8,  0x1.705616f542956p-10, -0x1.5f6c5684b10bep-12,
    0x1.2d27b6b006be8p-14, -0x1.d3fafc27416a1p-17, 0x1.4c4e6b4be4ac4p-19, -0x1.b1754d703ea02p-22,
    0x1.066cb5d03bbf8p-24, -0x1.3ab4ef5a4be0ap-27, 0x1.493ae32dd7c97p-30,
};

static const double TK_ERFC_FAR[15] = {
    0x1.c57239e943d1ap-4,   -0x1.d2059b751c256p-4,  0x1.402fac298cda1p-5,   -0x1.7a0b3319c2395p-7,
    0x1.73ff600b2ba83p-9,   -0x1.1f797d2e269e7p-11, 0x1.2b5511395af46p-14,  -0x1.2bfa17c8aec28p-19,
    -0x1.79bc284e71ac8p-20, 0x1.28f52511dcb80p-22,  0x1.2acf2fd909646p-27,  -0x1.69fbdaff90e33p-27,
    0x1.5be613bbb9603p-31,  0x1.6bf8a858aac8dp-32,  -0x1.64b91bf37d3bbp-35,
};

/* c[0] + c[1] s + ... + c[14] s^14 as two Horner chains in s^2 (even and
 * odd powers), so an element is not one long chain of dependent steps. */
TK_INLINE double tk_poly14_d(const double *c, double s) {
    double s2 = s * s;
    double even = c[14], odd = c[13];
    even = even * s2 + c[12], odd = odd * s2 + c[11];
    even = even * s2 + c[10], odd = odd * s2 + c[9];
    even = even * s2 + c[8], odd = odd * s2 + c[7];
    even = even * s2 + c[6], odd = odd * s2 + c[5];
    even = even * s2 + c[4], odd = odd * s2 + c[3];
    even = even * s2 + c[2], odd = odd * s2 + c[1];
    even = even * s2 + c[0];
    return even + s * odd;
}

/* erf(a) for 0 <= a < 2 (relative error below 2^-45). */
TK_INLINE double tk_erf_near_d(double a) {
    return a * tk_poly14_d(TK_ERF_NEAR, (a * a) * 0.5 - 1.0);
}

/* erfc(a) for a >= 2, Inf included. */
TK_INLINE double tk_erfc_far_d(double a) {
    double c = a < 21.0 ? a : 21.0;
    double s = (c - 3.0) / (c + 3.0) * 2.0 - 0.5;
    return tk_exp_dd(-(a * a)) * tk_poly14_d(TK_ERFC_FAR, s);
}

static inline double tk_erfc_d(double x) {
    double a = tk_fabs_d(x);
    double t = a < 2.0 ? 1.0 - tk_erf_near_d(a) : tk_erfc_far_d(a);
    return x < 0.0 ? 2.0 - t : t;
}

static inline double tk_erf_d(double x) {
    double a = tk_fabs_d(x);
    double t = a < 2.0 ? tk_erf_near_d(a) : 1.0 - tk_erfc_far_d(a);
    return tk_copysign_d(t, x);
}

/* erf (erfc when `complement`) of each of a tile's arguments `x`, into out:
 * tk_erf_d's (tk_erfc_d's) values bit for bit. The near piece runs over the
 * whole tile without a branch (arguments from 2 up take it at 0 and are
 * redone); only those are gathered for the far piece, which then also
 * vectorizes. |v| and the sign are taken by comparisons, not tk_fabs_d's
 * bits, which keep gcc from vectorizing the loop (-0 and NaN come out the
 * same). */
TK_INLINE void tk_erf_tile_d(const double *restrict x, bool complement, double *restrict out) {
    int64_t far = 0, nan = 0;
    for (int i = 0; i < TILE_ELEMS; i++) {
        double v = x[i], a = v < 0.0 ? -v : v;
        double t = tk_erf_near_d(a < 2.0 ? a : 0.0);
        double c = 1.0 - t;
        out[i] = complement ? (v < 0.0 ? 2.0 - c : c) : (v < 0.0 ? -t : t);
        far += a >= 2.0;
        nan += v != v;
    }
    if (far) {
        /* Gathered without a branch (each element written, kept or not),
         * as a branch per element mispredicts on mixed tiles. */
        int idx[TILE_ELEMS], m = 0;
        double a[TILE_ELEMS], f[TILE_ELEMS];
        for (int i = 0; i < TILE_ELEMS; i++) {
            double v = x[i], av = v < 0.0 ? -v : v;
            idx[m] = i;
            a[m] = av;
            m += av >= 2.0;
        }
        for (int j = 0; j < m; j++)
            f[j] = tk_erfc_far_d(a[j]);
        for (int j = 0; j < m; j++) {
            double v = x[idx[j]];
            out[idx[j]] =
                complement ? (v < 0.0 ? 2.0 - f[j] : f[j]) : (v < 0.0 ? -(1.0 - f[j]) : 1.0 - f[j]);
        }
    }
    /* A NaN takes the scalar function, for its sign. */
    for (int i = 0; nan && i < TILE_ELEMS; i++)
        if (x[i] != x[i]) out[i] = complement ? tk_erfc_d(x[i]) : tk_erf_d(x[i]);
}

/* ---- float32 element functions --------------------------------------------- */

static inline float tk_sqrt(float x) {
    return sqrtf(x);
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

/* gelu, erf form: 0.5 x (1 + erf(x / sqrt2)) = 0.5 x erfc(-x / sqrt2), given
 * e = erfc(-x / sqrt2) (tk_erf_tile_d of the argument tk_gelu_erf_arg). */
static inline double tk_gelu_erf_arg(float x) {
    return -(double)x * TK_SQRT1_2;
}

static inline float tk_gelu_erf(float x, double e) {
    float y = (float)(0.5 * (double)x * e);
    return x == -INFINITY ? -0.0f : y;
}

/* silu(x) = x sigmoid(x); the limit -0 at -Inf (the formula's -Inf * 0). */
static inline float tk_silu(float x) {
    float y = (float)tk_times_sigmoid(x, x);
    return x == -INFINITY ? -0.0f : y;
}

/* mish(x) = x tanh(softplus(x)); with t = exp(x), tanh(log(1 + t)) =
 * t (t + 2) / (t (t + 2) + 2), written with u = exp(-x) for x >= 0 as
 * (1 + 2u) / (1 + 2u + 2u^2): neither form cancels or overflows. */
static inline float tk_mish(float x) {
    double xd = x;
    double e = tk_exp_dd(-tk_fabs_d(xd));
    double th = xd >= 0.0 ? (1.0 + 2.0 * e) / (1.0 + 2.0 * e + 2.0 * (e * e))
                          : e * (e + 2.0) / (e * (e + 2.0) + 2.0);
    float y = (float)(xd * th);
    return x == -INFINITY ? -0.0f : y;
}

/* Truncation toward zero, exactly, by clearing the fraction bits. */
static inline float tk_trunc(float x) {
    uint32_t u = tk_bits(x);
    int32_t e = (int32_t)((u >> 23) & 0xffu) - 127;
    uint32_t sh = e < 0 ? 0u : e > 22 ? 22u : (uint32_t)e;
    uint32_t mask = e < 0 ? 0x7fffffffu : e >= 23 ? 0u : 0x007fffffu >> sh;
    return tk_float(u & ~mask);
}

static inline float tk_floor(float x) {
    float t = tk_trunc(x);
    return t > x ? t - 1.0f : t;
}

static inline float tk_ceil(float x) {
    float t = tk_trunc(x);
    return t < x ? t + 1.0f : t;
}

/* Nearest integer, ties to even (C's nearbyint): |x| + 2^23 rounds in the
 * float32 addition; the sign comes back last (-0.4 -> -0). */
static inline float tk_rint(float x) {
    float ax = tk_float(tk_bits(x) & 0x7fffffffu);
    float r = (ax + 8388608.0f) - 8388608.0f;
    r = tk_float(tk_bits(r) | (tk_bits(x) & 0x80000000u));
    return ax < 8388608.0f ? r : x;
}

/* 10^d as torch.round(x, decimals=d) forms it: float(pow(10.0, d)). */
static const float tk_pow10f[39] = {
    (float)1e0,  (float)1e1,  (float)1e2,  (float)1e3,  (float)1e4,  (float)1e5,  (float)1e6,
    (float)1e7,  (float)1e8,  (float)1e9,  (float)1e10, (float)1e11, (float)1e12, (float)1e13,
    (float)1e14, (float)1e15, (float)1e16, (float)1e17, (float)1e18, (float)1e19, (float)1e20,
    (float)1e21, (float)1e22, (float)1e23, (float)1e24, (float)1e25, (float)1e26, (float)1e27,
    (float)1e28, (float)1e29, (float)1e30, (float)1e31, (float)1e32, (float)1e33, (float)1e34,
    (float)1e35, (float)1e36, (float)1e37, (float)1e38,
};

/* torch.round(x, decimals=d), |d| <= 38, with torch's float32 steps:
 * nearbyint(x * 10^d) / 10^d, or nearbyint(x / 10^-d) * 10^-d for d < 0. */
static inline float tk_round_decimals(float x, int32_t d) {
    float p = tk_pow10f[d < 0 ? -d : d];
    return d == 0 ? tk_rint(x) : d > 0 ? tk_rint(x * p) / p : tk_rint(x / p) * p;
}

/* v (exact, finite) rounded to bfloat16's precision, ties to even: adding
 * 1.5 * 2^(e + 45), whose ulp is 2^(e - 7), rounds at bit 8 below v's leading
 * bit (at bfloat16's subnormal spacing 2^-133 below 2^-126). */
static inline double tk_round_bf16_d(double v) {
    uint64_t u = tk_bits_d(v);
    int64_t e = (int64_t)((u >> 52) & 0x7ffu) - 1023;
    e = e < -126 ? -126 : e > 200 ? 200 : e;
    double magic = tk_double((uint64_t)(e + 45 + 1023) << 52) * 1.5;
    double r = (v + magic) - magic;
    return v == 0.0 || !(tk_fabs_d(v) < INFINITY) ? v : r;
}

/* One element of typecast_tile, its bits in and out: float formats hold
 * floats, Int32/UInt32 raw integers (tile_format.h). Float to integer
 * truncates toward zero and saturates, NaN giving 0 (torch's .to() leaves
 * those undefined); integer to float rounds to nearest even once, to the
 * precision of `out` (bfloat16 for Float16_b and Bfp8_b); Int32 <-> UInt32
 * keeps the bits (torch's wrap-around). */
static inline uint32_t tk_typecast(uint32_t bits, uint32_t in, uint32_t out) {
    int in_int = in == LM_DATA_FORMAT_INT32 || in == LM_DATA_FORMAT_UINT32;
    int out_int = out == LM_DATA_FORMAT_INT32 || out == LM_DATA_FORMAT_UINT32;
    if (in_int && out_int) return bits;
    double v = in == LM_DATA_FORMAT_INT32    ? (double)(int32_t)bits
               : in == LM_DATA_FORMAT_UINT32 ? (double)bits
                                             : (double)tk_float(bits);
    if (out == LM_DATA_FORMAT_INT32) {
        if (v != v) return 0;
        if (v >= 2147483648.0) return 0x7fffffffu;
        if (v <= -2147483648.0) return 0x80000000u;
        return (uint32_t)(int32_t)v;
    }
    if (out == LM_DATA_FORMAT_UINT32) {
        if (v != v || v < 0.0) return 0;
        if (v >= 4294967296.0) return 0xffffffffu;
        return (uint32_t)v;
    }
    if (out != LM_DATA_FORMAT_FLOAT32) v = tk_round_bf16_d(v);
    return tk_bits((float)v);
}

/* fmod(x, y) exactly, as C (and torch.fmod): the sign of x, NaN for an
 * infinite x or a zero y. The integer significands are divided bit by bit
 * (at most 254 steps), so no rounding happens anywhere. */
static inline float tk_fmod(float x, float y) {
    uint32_t ux = tk_bits(x) & 0x7fffffffu, uy = tk_bits(y) & 0x7fffffffu;
    uint32_t sign = tk_bits(x) & 0x80000000u;
    if (ux >= 0x7f800000u || uy > 0x7f800000u || uy == 0) return NAN;
    if (ux < uy) return x;
    if (ux == uy) return tk_float(sign);
    /* value = m 2^(e - 150) with m in [2^23, 2^24) (subnormals normalized,
     * e <= 0), so that one subtraction per step keeps m below my */
    int32_t ex = (int32_t)(ux >> 23), ey = (int32_t)(uy >> 23);
    uint32_t mx = ex ? (ux & 0x007fffffu) | 0x00800000u : ux;
    uint32_t my = ey ? (uy & 0x007fffffu) | 0x00800000u : uy;
    ex = ex ? ex : 1;
    ey = ey ? ey : 1;
    for (; mx < 0x00800000u; ex--)
        mx <<= 1;
    for (; my < 0x00800000u; ey--)
        my <<= 1;
    for (; ex > ey; ex--) {
        mx = mx >= my ? mx - my : mx;
        mx <<= 1;
    }
    mx = mx >= my ? mx - my : mx;
    /* mx 2^(ey - 150) is exact in float32 (a multiple of 2^-149 below |y|) */
    double r = (double)mx * tk_double((uint64_t)(ey - 150 + 1023) << 52);
    return tk_float(tk_bits((float)r) | sign);
}

#endif
