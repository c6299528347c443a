/* Unary ops against double-precision host references, fp32 and bf16, over
 * shapes with padding and a multi-core case; padding stays zero. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nn_test.h"

typedef struct unary_case {
    lmnn_unary_op op;
    double (*ref)(double x, double a, double b);
    float lo, hi;
    double alpha, beta; /* NAN: the op's defaults */
    double fp32_rel;    /* bound on |err| / max(|ref|, 1e-3) for fp32 */
    double fp32_abs;    /* or on |err| (0: none) */
} unary_case;

static double r_exp(double x, double a, double b) {
    (void)a, (void)b;
    return exp(x);
}
static double r_log(double x, double a, double b) {
    (void)a, (void)b;
    return log(x);
}
static double r_sqrt(double x, double a, double b) {
    (void)a, (void)b;
    return sqrt(x);
}
static double r_rsqrt(double x, double a, double b) {
    (void)a, (void)b;
    return 1 / sqrt(x);
}
static double r_recip(double x, double a, double b) {
    (void)a, (void)b;
    return 1 / x;
}
static double r_abs(double x, double a, double b) {
    (void)a, (void)b;
    return fabs(x);
}
static double r_neg(double x, double a, double b) {
    (void)a, (void)b;
    return -x;
}
static double r_square(double x, double a, double b) {
    (void)a, (void)b;
    return x * x;
}
static double r_relu(double x, double a, double b) {
    (void)a, (void)b;
    return x > 0 ? x : 0;
}
static double r_relu6(double x, double a, double b) {
    (void)a, (void)b;
    return fmin(fmax(x, 0), 6);
}
static double r_gelu_tanh(double x, double a, double b) {
    (void)a, (void)b;
    if (isinf(x)) return x > 0 ? x : -0.0; /* the limits (the formula gives NaN at -Inf) */
    return 0.5 * x * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
}
static double r_silu(double x, double a, double b) {
    (void)a, (void)b;
    return x / (1 + exp(-x));
}
static double r_sigmoid(double x, double a, double b) {
    (void)a, (void)b;
    return 1 / (1 + exp(-x));
}
static double r_tanh(double x, double a, double b) {
    (void)a, (void)b;
    return tanh(x);
}
static double r_clamp(double x, double a, double b) {
    return fmin(fmax(x, a), b);
}
/* One-argument libm references. */
#define R1(name, expr)                                                                             \
    static double r_##name(double x, double a, double b) {                                         \
        (void)a, (void)b;                                                                          \
        return (expr);                                                                             \
    }
R1(log1p, log1p(x))
R1(expm1, expm1(x))
R1(sign, x > 0 ? 1 : x < 0 ? -1 : isnan(x) ? x : 0)
R1(gelu, isinf(x) ? (x > 0 ? x : -0.0) : 0.5 * x * (1 + erf(x / sqrt(2))))
R1(selu, 1.0507009873554805 * (x > 0 ? x : 1.6732632423543772 * expm1(x)))
R1(mish, x == -INFINITY ? -0.0 : (x * tanh(x > 20 ? x : log1p(exp(x)))))
R1(hardsigmoid, fmin(fmax(x + 3, 0), 6) / 6)
R1(hardswish, x == -INFINITY ? -0.0 : (x * fmin(fmax(x + 3, 0), 6)) / 6)
R1(softsign, isinf(x) ? (x > 0 ? 1 : -1) : x / (1 + fabs(x)))
R1(erf, erf(x))
R1(erfc, erfc(x))
R1(sin, sin(x))
R1(cos, cos(x))
R1(tan, tan(x))
R1(asin, asin(x))
R1(acos, acos(x))
R1(atan, atan(x))
R1(sinh, sinh(x))
R1(cosh, cosh(x))
R1(asinh, asinh(x))
R1(acosh, acosh(x))
R1(atanh, atanh(x))
R1(floor, floor(x))
R1(ceil, ceil(x))
R1(trunc, trunc(x))
R1(frac, x - trunc(x))
R1(logical_not, x == 0)
R1(isnan, isnan(x) != 0)
R1(isinf, isinf(x) != 0)
R1(isfinite, isfinite(x) != 0)
R1(isposinf, x == INFINITY)
R1(isneginf, x == -INFINITY)
R1(exp2, exp2(x))
R1(log2, log2(x))
R1(log10, log10(x))
R1(cbrt, cbrt(x))
R1(eqz, x == 0)
R1(nez, x != 0)
R1(ltz, x < 0)
R1(gtz, x > 0)
R1(lez, x <= 0)
R1(gez, x >= 0)
#undef R1
/* torch.heaviside(x, values = a); NaN stays NaN. */
static double r_heaviside(double x, double a, double b) {
    (void)b;
    return isnan(x) ? x : x > 0 ? 1 : x < 0 ? 0 : a;
}
static double r_relu_max(double x, double a, double b) {
    (void)b;
    return isnan(x) ? x : fmin(fmax(x, 0), a);
}
static double r_relu_min(double x, double a, double b) {
    (void)b;
    return isnan(x) ? x : fmax(x, a);
}
/* In float32, as the engine computes them (alpha rounded to float32). */
static double r_mul_unary(double x, double a, double b) {
    (void)b;
    return (float)x * (float)a;
}
static double r_div_unary(double x, double a, double b) {
    (void)b;
    return (float)x / (float)a;
}
static double r_leaky_relu(double x, double a, double b) {
    (void)b;
    return x >= 0 ? x : a * x;
}
static double r_elu(double x, double a, double b) {
    (void)b;
    return x > 0 ? x : a * expm1(x);
}
static double r_celu(double x, double a, double b) {
    (void)b;
    return x > 0 ? x : a * expm1(x / a);
}
/* torch.nn.functional.softplus(x, beta, threshold). */
static double r_softplus(double x, double beta, double threshold) {
    return beta * x > threshold ? x : log1p(exp(beta * x)) / beta;
}
/* torch.round(x, decimals): ties to even (the default rounding mode). */
static double r_round(double x, double d, double b) {
    (void)b;
    double p = pow(10, d);
    return d == 0 ? nearbyint(x) : nearbyint(x * p) / p;
}

static const unary_case cases[] = {
    {LMNN_EXP, r_exp, -20, 20, NAN, NAN, 1e-6, 0},
    {LMNN_LOG, r_log, 0.001f, 1000, NAN, NAN, 1e-6, 0},
    {LMNN_SQRT, r_sqrt, 0, 1000, NAN, NAN, 1e-7, 0},
    {LMNN_RSQRT, r_rsqrt, 0.01f, 1000, NAN, NAN, 1e-6, 0},
    {LMNN_RECIPROCAL, r_recip, 0.01f, 100, NAN, NAN, 1e-7, 0},
    {LMNN_ABS, r_abs, -10, 10, NAN, NAN, 0, 0},
    {LMNN_NEG, r_neg, -10, 10, NAN, NAN, 0, 0},
    {LMNN_SQUARE, r_square, -100, 100, NAN, NAN, 1e-7, 0},
    {LMNN_RELU, r_relu, -10, 10, NAN, NAN, 0, 0},
    {LMNN_RELU6, r_relu6, -10, 10, NAN, NAN, 0, 0},
    {LMNN_GELU_TANH, r_gelu_tanh, -8, 8, NAN, NAN, 2e-6, 0},
    {LMNN_SILU, r_silu, -20, 20, NAN, NAN, 1e-6, 0},
    {LMNN_SIGMOID, r_sigmoid, -20, 20, NAN, NAN, 1e-6, 0},
    {LMNN_TANH, r_tanh, -8, 8, NAN, NAN, 1e-6, 0},
    {LMNN_CLAMP, r_clamp, -10, 10, -2.5, 3.25, 0, 0},
    {LMNN_HARDTANH, r_clamp, -3, 3, NAN, NAN, 0, 0},
    {LMNN_GELU, r_gelu, -8, 8, NAN, NAN, 1e-7, 0},
    {LMNN_LOG1P, r_log1p, -0.999f, 100, NAN, NAN, 1e-7, 0},
    {LMNN_EXPM1, r_expm1, -20, 20, NAN, NAN, 1e-7, 0},
    {LMNN_SIGN, r_sign, -5, 5, NAN, NAN, 0, 0},
    {LMNN_LEAKY_RELU, r_leaky_relu, -10, 10, NAN, NAN, 1e-7, 0},
    {LMNN_LEAKY_RELU, r_leaky_relu, -10, 10, 0.2, 0, 1e-7, 0},
    {LMNN_ELU, r_elu, -10, 10, NAN, NAN, 1e-7, 0},
    {LMNN_ELU, r_elu, -10, 10, 0.5, 0, 1e-7, 0},
    {LMNN_SELU, r_selu, -10, 10, NAN, NAN, 1e-7, 0},
    {LMNN_CELU, r_celu, -10, 10, NAN, NAN, 1e-7, 0},
    {LMNN_CELU, r_celu, -10, 10, 2.5, 0, 1e-7, 0},
    {LMNN_MISH, r_mish, -20, 20, NAN, NAN, 1e-7, 0},
    {LMNN_HARDSIGMOID, r_hardsigmoid, -5, 5, NAN, NAN, 1e-7, 0},
    {LMNN_HARDSWISH, r_hardswish, -5, 5, NAN, NAN, 1e-7, 0},
    {LMNN_SOFTPLUS, r_softplus, -30, 30, NAN, NAN, 1e-7, 0},
    {LMNN_SOFTPLUS, r_softplus, -10, 10, 2, 5, 1e-7, 0},
    {LMNN_SOFTSIGN, r_softsign, -10, 10, NAN, NAN, 1e-7, 0},
    {LMNN_ERF, r_erf, -4, 4, NAN, NAN, 1e-7, 0},
    {LMNN_ERFC, r_erfc, -4, 9, NAN, NAN, 1e-7, 0},
    {LMNN_SIN, r_sin, -10, 10, NAN, NAN, 1e-7, 2e-7},
    {LMNN_COS, r_cos, -10, 10, NAN, NAN, 1e-7, 2e-7},
    {LMNN_TAN, r_tan, -1.5f, 1.5f, NAN, NAN, 1e-7, 0},
    {LMNN_ASIN, r_asin, -1, 1, NAN, NAN, 1e-7, 0},
    {LMNN_ACOS, r_acos, -1, 1, NAN, NAN, 1e-7, 0},
    {LMNN_ATAN, r_atan, -20, 20, NAN, NAN, 1e-7, 0},
    {LMNN_SINH, r_sinh, -10, 10, NAN, NAN, 1e-7, 0},
    {LMNN_COSH, r_cosh, -10, 10, NAN, NAN, 1e-7, 0},
    {LMNN_ASINH, r_asinh, -100, 100, NAN, NAN, 1e-7, 0},
    {LMNN_ACOSH, r_acosh, 1, 100, NAN, NAN, 1e-7, 0},
    {LMNN_ATANH, r_atanh, -0.999f, 0.999f, NAN, NAN, 1e-7, 0},
    {LMNN_FLOOR, r_floor, -10, 10, NAN, NAN, 0, 0},
    {LMNN_CEIL, r_ceil, -10, 10, NAN, NAN, 0, 0},
    {LMNN_ROUND, r_round, -10, 10, NAN, NAN, 0, 0},
    {LMNN_ROUND, r_round, -10, 10, 2, 0, 1e-7, 0},
    {LMNN_TRUNC, r_trunc, -10, 10, NAN, NAN, 0, 0},
    {LMNN_FRAC, r_frac, -10, 10, NAN, NAN, 0, 0},
    {LMNN_LOGICAL_NOT, r_logical_not, -1, 1, NAN, NAN, 0, 0},
    {LMNN_ISNAN, r_isnan, -1, 1, NAN, NAN, 0, 0},
    {LMNN_ISINF, r_isinf, -1, 1, NAN, NAN, 0, 0},
    {LMNN_ISFINITE, r_isfinite, -1, 1, NAN, NAN, 0, 0},
    {LMNN_ISPOSINF, r_isposinf, -1, 1, NAN, NAN, 0, 0},
    {LMNN_ISNEGINF, r_isneginf, -1, 1, NAN, NAN, 0, 0},
    {LMNN_EXP2, r_exp2, -30, 30, NAN, NAN, 1e-7, 0},
    {LMNN_LOG2, r_log2, 0.001f, 1000, NAN, NAN, 1e-7, 0},
    {LMNN_LOG10, r_log10, 0.001f, 1000, NAN, NAN, 1e-7, 0},
    {LMNN_CBRT, r_cbrt, -1000, 1000, NAN, NAN, 1e-7, 0},
    {LMNN_EQZ, r_eqz, -2, 2, NAN, NAN, 0, 0},
    {LMNN_NEZ, r_nez, -2, 2, NAN, NAN, 0, 0},
    {LMNN_LTZ, r_ltz, -2, 2, NAN, NAN, 0, 0},
    {LMNN_GTZ, r_gtz, -2, 2, NAN, NAN, 0, 0},
    {LMNN_LEZ, r_lez, -2, 2, NAN, NAN, 0, 0},
    {LMNN_GEZ, r_gez, -2, 2, NAN, NAN, 0, 0},
    {LMNN_HEAVISIDE, r_heaviside, -2, 2, NAN, NAN, 0, 0},
    {LMNN_HEAVISIDE, r_heaviside, -2, 2, 0.5, 0, 0, 0},
    {LMNN_RELU_MAX, r_relu_max, -10, 10, NAN, NAN, 0, 0},
    {LMNN_RELU_MAX, r_relu_max, -10, 10, 2.5, 0, 0, 0},
    {LMNN_RELU_MIN, r_relu_min, -10, 10, 1.5, 0, 0, 0},
    {LMNN_MUL_UNARY, r_mul_unary, -10, 10, NAN, NAN, 0, 0},
    {LMNN_MUL_UNARY, r_mul_unary, -10, 10, -0.35355339059327373, 0, 0, 0},
    {LMNN_DIV_UNARY, r_div_unary, -10, 10, 2.8284271247461903, 0, 0, 0},
    {LMNN_DIV_UNARY, r_div_unary, -10, 10, -3, 0, 0, 0},
};

/* The largest errors measured per case and dtype, printed as a table. */
static nn_err measured[sizeof cases / sizeof *cases][2];

static void note(nn_err *m, nn_err e) {
    if (e.max_abs > m->max_abs) m->max_abs = e.max_abs;
    if (e.max_rel > m->max_rel) m->max_rel = e.max_rel;
    if (m->pcc == 0 || e.pcc < m->pcc) m->pcc = e.pcc;
}

static void run_case(const unary_case *c, const lmnn_shape *s, lmnn_dtype dtype, uint64_t seed,
                     nn_err *m) {
    size_t n = lmnn_shape_volume(s);
    float *x = nn_rand_floats(n, c->lo, c->hi, seed);
    /* Rounding ops and predicates also meet integers, halves and zeros. */
    if (c->op == LMNN_ROUND || c->op == LMNN_LOGICAL_NOT || c->op == LMNN_SIGN ||
        (c->op >= LMNN_EQZ && c->op <= LMNN_HEAVISIDE) ||
        (c->op >= LMNN_FLOOR && c->op <= LMNN_FRAC))
        for (size_t i = 0; i < n; i += 3)
            x[i] = (float)((int)(x[i] * 4)) / 4;
    double *want = malloc(n * sizeof *want);
    lmnn_unary_options o;
    lmnn_unary_options_init(&o, c->op);
    if (!isnan(c->alpha)) o.alpha = c->alpha, o.beta = c->beta;
    for (size_t i = 0; i < n; i++) {
        double xi = dtype == LMNN_BFLOAT16 ? nn_bf16(x[i]) : x[i];
        want[i] = c->ref(xi, o.alpha, o.beta);
    }
    lmnn_tensor a, y;
    CHECK_OK(nn_upload(s, x, dtype, LMNN_TILE, &a));
    CHECK_OK(lmnn_unary(c->op, a, &o, &y));
    float *got = nn_download(y);
    CHECK(got);
    nn_err e = nn_compare(got, want, n, 1e-3);
    note(m, e);
    if (dtype == LMNN_FLOAT32) {
        /* fp32: the float32 rounding of the result and of each step. */
        CHECK_ERR(e, 0.999999, c->fp32_abs ? c->fp32_abs : 1e-30, c->fp32_rel + 1.2e-7);
        CHECK(nn_padding_is_zero(y));
    } else {
        CHECK_ERR(e, 0.9999, 1e-30, 8e-3);
    }
    free(x);
    free(want);
    free(got);
    lmnn_tensor_free(a);
    lmnn_tensor_free(y);
}

static void test_ops(void) {
    /* One element, padded edges on a few cores, and more tiles than cores. */
    lmnn_shape shapes[] = {LMNN_SHAPE(1, 1), LMNN_SHAPE(2, 45, 70), LMNN_SHAPE(300),
                           LMNN_SHAPE(2, 1, 100, 333)};
    size_t ncases = sizeof cases / sizeof *cases;
    for (size_t i = 0; i < ncases; i++)
        for (size_t k = 0; k < 4; k++)
            for (int d = 0; d < 2; d++) {
                run_case(&cases[i], &shapes[k], d ? LMNN_BFLOAT16 : LMNN_FLOAT32, i * 7 + k,
                         &measured[i][d]);
                if (test_current_failed_) {
                    printf("  op %s, shape %zu, %s\n", lmnn_unary_op_name(cases[i].op), k,
                           d ? "bf16" : "fp32");
                    return;
                }
            }
    printf("  %-12s %-5s %10s %10s %10s\n", "op", "dtype", "max_abs", "max_rel", "pcc");
    for (size_t i = 0; i < ncases; i++)
        for (int d = 0; d < 2; d++)
            printf("  %-12s %-5s %10.3g %10.3g %10.7f\n", lmnn_unary_op_name(cases[i].op),
                   d ? "bf16" : "fp32", measured[i][d].max_abs, measured[i][d].max_rel,
                   measured[i][d].pcc);
}

/* NaN, infinities, signed zeros, halves and values outside the domains:
 * every case's op against its reference (NaN where PyTorch gives NaN). */
static void test_special_values(void) {
    static const float v[] = {NAN,   INFINITY, -INFINITY, 0.0f,  -0.0f, 0.5f,  -0.5f, 1.5f,
                              2.5f,  -2.5f,    1.0f,      -1.0f, 2.0f,  -2.0f, 1e30f, -1e30f,
                              100.f, -100.f,   1e-30f,    0.25f, 3.75f, -3.0f, 7.5f,  -0.75f};
    size_t n = sizeof v / sizeof *v;
    lmnn_shape s = LMNN_SHAPE(3, 8);
    lmnn_tensor a, y;
    CHECK_OK(nn_upload(&s, v, LMNN_FLOAT32, LMNN_TILE, &a));
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const unary_case *c = &cases[i];
        lmnn_unary_options o;
        lmnn_unary_options_init(&o, c->op);
        if (!isnan(c->alpha)) o.alpha = c->alpha, o.beta = c->beta;
        double want[24];
        /* NaN propagates (fmin/fmax-based references would drop it) except
         * through the predicates. */
        bool pred = (c->op >= LMNN_LOGICAL_NOT && c->op <= LMNN_ISNEGINF) ||
                    (c->op >= LMNN_EQZ && c->op <= LMNN_GEZ);
        for (size_t k = 0; k < n; k++)
            want[k] = isnan(v[k]) && !pred ? NAN : (float)c->ref(v[k], o.alpha, o.beta);
        CHECK_OK(lmnn_unary(c->op, a, &o, &y));
        float *got = nn_download(y);
        CHECK(got);
        nn_err e = nn_compare(got, want, n, 1e-3);
        for (size_t k = 0; k < n; k++)
            if (isnan(want[k]) != isnan(got[k]) ||
                (!isnan(want[k]) && fabs(got[k] - want[k]) > fmax(2e-6 * fabs(want[k]), 1e-37)))
                printf("  %s: x = %g gives %g, expected %g\n", lmnn_unary_op_name(c->op),
                       (double)v[k], (double)got[k], want[k]);
        CHECK(e.pcc >= 0.99999 && e.max_rel <= 2e-6);
        CHECK(nn_padding_is_zero(y));
        free(got);
        lmnn_tensor_free(y);
    }
    lmnn_tensor_free(a);
}

/* New ops as activations fused after lmnn_add (no reload of the input):
 * the sum's float32 value through the op, padding zeroed where f(0) != 0. */
static void test_fused_activation(void) {
    static const struct {
        lmnn_unary_op op;
        double (*ref)(double, double, double);
        double alpha, beta;
    } acts[] = {{LMNN_GELU, r_gelu, NAN, NAN},
                {LMNN_SOFTPLUS, r_softplus, 2, 5},
                {LMNN_HARDSIGMOID, r_hardsigmoid, NAN, NAN},
                {LMNN_COS, r_cos, NAN, NAN},
                {LMNN_LEAKY_RELU, r_leaky_relu, 0.1, NAN}};
    lmnn_shape s = LMNN_SHAPE(2, 40, 70);
    size_t n = lmnn_shape_volume(&s);
    float *x = nn_rand_floats(n, -4, 4, 5), *z = nn_rand_floats(n, -4, 4, 6);
    double *want = malloc(n * sizeof *want);
    lmnn_tensor a, b, y;
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_TILE, &a));
    CHECK_OK(nn_upload(&s, z, LMNN_FLOAT32, LMNN_TILE, &b));
    for (size_t i = 0; i < sizeof acts / sizeof *acts; i++) {
        lmnn_binary_options o;
        lmnn_binary_options_init(&o);
        o.activation = acts[i].op;
        o.activation_alpha = acts[i].alpha;
        o.activation_beta = acts[i].beta;
        lmnn_unary_options u;
        lmnn_unary_options_init(&u, acts[i].op);
        double alpha = isnan(acts[i].alpha) ? u.alpha : acts[i].alpha;
        double beta = isnan(acts[i].beta) ? u.beta : acts[i].beta;
        for (size_t k = 0; k < n; k++)
            want[k] = acts[i].ref((double)(x[k] + z[k]), alpha, beta);
        CHECK_OK(lmnn_binary(LMNN_BINARY_ADD, a, b, &o, &y));
        float *got = nn_download(y);
        CHECK(got);
        CHECK_ERR(nn_compare(got, want, n, 1e-3), 0.999999, 1e-30, 4e-7);
        CHECK(nn_padding_is_zero(y));
        free(got);
        lmnn_tensor_free(y);
    }
    free(x);
    free(z);
    free(want);
    lmnn_tensor_free(a);
    lmnn_tensor_free(b);
}

/* Many tiles over the whole grid, with an output dtype of its own. */
static void test_large_and_output_dtype(void) {
    lmnn_shape s = LMNN_SHAPE(3, 300, 1000);
    size_t n = lmnn_shape_volume(&s);
    float *x = nn_rand_floats(n, -4, 4, 99);
    lmnn_tensor a, y;
    CHECK_OK(nn_upload(&s, x, LMNN_BFLOAT16, LMNN_TILE, &a));
    lmnn_unary_options o;
    lmnn_unary_options_init(&o, LMNN_SIGMOID);
    o.output.dtype = LMNN_FLOAT32;
    CHECK_OK(lmnn_unary(LMNN_SIGMOID, a, &o, &y));
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(y, &info));
    CHECK(info.dtype == LMNN_FLOAT32);
    float *got = nn_download(y);
    CHECK(got);
    double *want = malloc(n * sizeof *want);
    for (size_t i = 0; i < n; i++)
        want[i] = 1 / (1 + exp(-(double)nn_bf16(x[i])));
    CHECK_ERR(nn_compare(got, want, n, 1e-3), 0.999999, 1e-30, 2e-6);
    CHECK(nn_padding_is_zero(y));
    free(x);
    free(got);
    free(want);
    lmnn_tensor_free(a);
    lmnn_tensor_free(y);
}

static void test_errors(void) {
    lmnn_shape s = LMNN_SHAPE(4, 4);
    float x[16] = {0};
    lmnn_tensor a, rm, y;
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_TILE, &a));
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_ROW_MAJOR, &rm));
    CHECK_FAILS(lmnn_exp(rm, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_exp: a: expected layout tile, given row_major");
    CHECK_FAILS(lmnn_unary((lmnn_unary_op)999, a, NULL, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_unary: op: unknown unary op 999");
    CHECK_FAILS(lmnn_clamp(a, 2, 1, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_clamp: min 2 is greater than max 1");
    CHECK_FAILS(lmnn_celu(a, 0, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_celu: alpha: expected a nonzero number, given 0");
    CHECK_FAILS(lmnn_softplus(a, NAN, 20, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_softplus: beta: expected a nonzero number, given nan");
    CHECK_FAILS(lmnn_round(a, 39, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_round: decimals: expected an integer in -38..38, given 39");
    lmnn_unary_options ro;
    lmnn_unary_options_init(&ro, LMNN_ROUND);
    ro.alpha = 1.5;
    CHECK_FAILS(lmnn_unary(LMNN_ROUND, a, &ro, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_round: decimals: expected an integer in -38..38, given 1.5");
    lmnn_binary_options bo;
    lmnn_binary_options_init(&bo);
    bo.activation = LMNN_ROUND;
    bo.activation_alpha = 50;
    CHECK_FAILS(lmnn_binary(LMNN_BINARY_MUL, a, a, &bo, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_mul: activation: round decimals: expected an integer in -38..38, given 50");
    CHECK(LMNN_UNARY_OP_COUNT_ - 1 >= 35);
    CHECK_FAILS(lmnn_relu(a, NULL), LM_ERR_INVALID_ARGUMENT, "lmnn_relu: out is NULL");
    lmnn_unary_options o;
    lmnn_unary_options_init(&o, LMNN_EXP);
    o.output.dtype = LMNN_INT32;
    CHECK_FAILS(lmnn_unary(LMNN_EXP, a, &o, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_exp: output.dtype: expected a float dtype, given int32");
    uint32_t ints[16] = {0};
    lmnn_tensor_options to;
    lmnn_tensor_options_init(&to);
    to.dtype = LMNN_INT32;
    lmnn_tensor it;
    CHECK_OK(lmnn_from_host(nn_dev(), &s, ints, sizeof ints, &to, &it));
    CHECK_FAILS(lmnn_exp(it, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_exp: a: expected a float dtype (bfloat16, float32, bfloat8_b), given int32");
    lmnn_tensor gone;
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_TILE, &gone));
    CHECK_OK(lmnn_tensor_free(gone));
    CHECK_FAILS(lmnn_erf(gone, &y), LM_ERR_INVALID_HANDLE, "lmnn_erf: a: tensor handle is stale");
    CHECK_FAILS(lmnn_softplus(rm, 1, 20, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_softplus: a: expected layout tile, given row_major");
    /* A tensor of another device. */
    {
        lm_device *other;
        CHECK_OK(lm_device_open(NULL, &other));
        lmnn_tensor_options to2;
        lmnn_tensor_options_init(&to2);
        lmnn_tensor t2;
        CHECK_OK(lmnn_from_host(other, &s, x, sizeof x, &to2, &t2));
        lmnn_tensor z;
        CHECK_OK(lmnn_cos(t2, &z)); /* works on its own device */
        lmnn_binary_options bo2;
        lmnn_binary_options_init(&bo2);
        bo2.activation = LMNN_COS;
        CHECK_FAILS(lmnn_binary(LMNN_BINARY_ADD, a, t2, &bo2, &y), LM_ERR_INVALID_ARGUMENT,
                    "lmnn_add: b:");
        lmnn_tensor_free(z);
        lmnn_tensor_free(t2);
        lm_device_close(other);
    }
    /* The device still works. */
    CHECK_OK(lmnn_exp(a, &y));
    float got[16];
    CHECK_OK(lmnn_to_host(y, got, sizeof got));
    for (int i = 0; i < 16; i++)
        CHECK(got[i] == 1.0f);
    lmnn_tensor ts[] = {a, rm, y, it};
    for (int i = 0; i < 4; i++)
        CHECK_OK(lmnn_tensor_free(ts[i]));
}

/* ---- compiled kernels are shared across shapes and parameter values ----
 * Kernels are compiled on first use and kept on disk in $LM_CACHE_DIR (read
 * at each compile): with a fresh directory, the count of compiled kernels
 * (.elf files) shows whether a call compiled new ones. */

static int elf_count(const char *dir) {
    DIR *d = opendir(dir);
    int n = 0;
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        n += len > 4 && !strcmp(e->d_name + len - 4, ".elf");
    }
    closedir(d);
    return n;
}

static void remove_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    char path[512];
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        remove(path);
    }
    closedir(d);
    rmdir(dir);
}

/* Runs f(x) for a fresh x of `shape`: 1 when it succeeded. */
static int run_on(const lmnn_shape *shape, lm_status (*f)(lmnn_tensor, void *), void *ctx) {
    size_t n = lmnn_shape_volume(shape);
    float *x = nn_rand_floats(n, -4, 4, n);
    lmnn_tensor t;
    int ok = !nn_upload(shape, x, LMNN_BFLOAT16, LMNN_TILE, &t);
    ok = ok && !f(t, ctx);
    if (ok) lmnn_tensor_free(t);
    free(x);
    return ok;
}

typedef struct clamp_args {
    double lo, hi;
} clamp_args;

static lm_status do_clamp(lmnn_tensor t, void *ctx) {
    const clamp_args *c = ctx;
    lmnn_tensor out;
    lm_status st = lmnn_clamp(t, c->lo, c->hi, &out);
    if (!st) {
        float *v = nn_download(out);
        /* The result is right too (bf16 bounds are exact here). */
        size_t n = 0;
        lmnn_tensor_info info;
        if (v && !lmnn_tensor_get_info(out, &info)) n = lmnn_shape_volume(&info.shape);
        for (size_t i = 0; i < n; i++)
            if (v[i] < c->lo || v[i] > c->hi) st = LM_ERR_INTERNAL;
        if (!v) st = LM_ERR_INTERNAL;
        free(v);
        lmnn_tensor_free(out);
    }
    return st;
}

static lm_status do_leaky(lmnn_tensor t, void *ctx) {
    lmnn_tensor out;
    lm_status st = lmnn_leaky_relu(t, *(const double *)ctx, &out);
    if (!st) lmnn_tensor_free(out);
    return st;
}

/* a + b broadcast, b of shape *ctx, with a fused relu. */
static lm_status do_add_bcast(lmnn_tensor t, void *ctx) {
    const lmnn_shape *bs = ctx;
    size_t n = lmnn_shape_volume(bs);
    float *x = nn_rand_floats(n, -1, 1, 7);
    lmnn_tensor b, out;
    lm_status st = nn_upload(bs, x, LMNN_BFLOAT16, LMNN_TILE, &b);
    free(x);
    if (st) return st;
    lmnn_binary_options o;
    lmnn_binary_options_init(&o);
    o.activation = LMNN_LEAKY_RELU;
    o.activation_alpha = n % 2 ? 0.25 : 0.125;
    st = lmnn_binary(LMNN_BINARY_ADD, t, b, &o, &out);
    if (!st) lmnn_tensor_free(out);
    lmnn_tensor_free(b);
    return st;
}

/* The checks, with LM_CACHE_DIR at the fresh directory `dir` (a failed
 * CHECK returns to test_kernel_reuse, which restores it). */
static void kernel_reuse_checks(const char *dir) {
    lmnn_shape s1 = {2, {40, 70}}, s2 = {3, {3, 33, 129}}, s3 = {1, {5}};
    /* clamp: the first call compiles its kernels; other bounds and shapes
     * reuse them. */
    clamp_args c1 = {0, 6}, c2 = {-1, 1}, c3 = {-0.5, 2.5};
    CHECK(run_on(&s1, do_clamp, &c1));
    int first = elf_count(dir);
    CHECK(first > 0);
    CHECK(run_on(&s2, do_clamp, &c2));
    CHECK(run_on(&s3, do_clamp, &c3));
    CHECK_EQ_U64((uint64_t)elf_count(dir), (uint64_t)first);

    /* leaky_relu: the unary ops share their kernels, so nothing new, for
     * any slope or shape. */
    double k1 = 0.01, k2 = 0.2;
    CHECK(run_on(&s1, do_leaky, &k1));
    int second = elf_count(dir);
    CHECK_EQ_U64((uint64_t)second, (uint64_t)first);
    CHECK(run_on(&s2, do_leaky, &k2));
    CHECK_EQ_U64((uint64_t)elf_count(dir), (uint64_t)second);

    /* Broadcasting add with a fused leaky_relu: rows, then columns and a
     * scalar broadcast of other shapes (and other slopes) compile nothing
     * new after the first. */
    lmnn_shape b1 = {1, {70}}, b2 = {2, {33, 1}}, b3 = {1, {1}};
    CHECK(run_on(&s1, do_add_bcast, &b1));
    int third = elf_count(dir);
    CHECK(run_on(&s2, do_add_bcast, &b2));
    CHECK(run_on(&s1, do_add_bcast, &b3));
    CHECK_EQ_U64((uint64_t)elf_count(dir), (uint64_t)third);
}

static void test_kernel_reuse(void) {
    char dir[] = "/tmp/lm_nn_kernel_reuse_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    const char *old = getenv("LM_CACHE_DIR");
    char *saved = old ? strdup(old) : NULL;
    setenv("LM_CACHE_DIR", dir, 1);
    kernel_reuse_checks(dir);
    if (saved)
        setenv("LM_CACHE_DIR", saved, 1);
    else
        unsetenv("LM_CACHE_DIR");
    free(saved);
    remove_dir(dir);
}

int main(void) {
    TEST_RUN(test_ops);
    TEST_RUN(test_special_values);
    TEST_RUN(test_fused_activation);
    TEST_RUN(test_large_and_output_dtype);
    TEST_RUN(test_errors);
    TEST_RUN(test_kernel_reuse);
    nn_dev_close();
    return test_summary();
}
