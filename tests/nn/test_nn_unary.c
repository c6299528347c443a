/* Unary ops against double-precision host references, fp32 and bf16, over
 * shapes with padding and a multi-core case; padding stays zero. */
#include "nn_test.h"

typedef struct unary_case {
    lmnn_unary_op op;
    double (*ref)(double x, double a, double b);
    float lo, hi;
    double alpha, beta; /* NAN: the op's defaults */
    double fp32_rel;    /* bound on |err| / max(|ref|, 1e-3) for fp32 */
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

static const unary_case cases[] = {
    {LMNN_EXP, r_exp, -20, 20, NAN, NAN, 1e-6},
    {LMNN_LOG, r_log, 0.001f, 1000, NAN, NAN, 1e-6},
    {LMNN_SQRT, r_sqrt, 0, 1000, NAN, NAN, 1e-7},
    {LMNN_RSQRT, r_rsqrt, 0.01f, 1000, NAN, NAN, 1e-6},
    {LMNN_RECIPROCAL, r_recip, 0.01f, 100, NAN, NAN, 1e-7},
    {LMNN_ABS, r_abs, -10, 10, NAN, NAN, 0},
    {LMNN_NEG, r_neg, -10, 10, NAN, NAN, 0},
    {LMNN_SQUARE, r_square, -100, 100, NAN, NAN, 1e-7},
    {LMNN_RELU, r_relu, -10, 10, NAN, NAN, 0},
    {LMNN_RELU6, r_relu6, -10, 10, NAN, NAN, 0},
    {LMNN_GELU_TANH, r_gelu_tanh, -8, 8, NAN, NAN, 2e-6},
    {LMNN_SILU, r_silu, -20, 20, NAN, NAN, 1e-6},
    {LMNN_SIGMOID, r_sigmoid, -20, 20, NAN, NAN, 1e-6},
    {LMNN_TANH, r_tanh, -8, 8, NAN, NAN, 1e-6},
    {LMNN_CLAMP, r_clamp, -10, 10, -2.5, 3.25, 0},
    {LMNN_HARDTANH, r_clamp, -3, 3, NAN, NAN, 0},
};

static void run_case(const unary_case *c, const lmnn_shape *s, lmnn_dtype dtype, uint64_t seed) {
    size_t n = lmnn_shape_volume(s);
    float *x = nn_rand_floats(n, c->lo, c->hi, seed);
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
    if (dtype == LMNN_FLOAT32) {
        /* fp32: the float32 rounding of the result and of each step. */
        CHECK_ERR(e, 0.999999, 1e-30, c->fp32_rel + 1.2e-7);
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
    lmnn_shape shapes[] = {LMNN_SHAPE(1, 1), LMNN_SHAPE(2, 45, 70), LMNN_SHAPE(300)};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (size_t k = 0; k < 3; k++)
            for (int d = 0; d < 2; d++) {
                run_case(&cases[i], &shapes[k], d ? LMNN_BFLOAT16 : LMNN_FLOAT32, i * 7 + k);
                if (test_current_failed_) {
                    printf("  op %s, shape %zu, %s\n", lmnn_unary_op_name(cases[i].op), k,
                           d ? "bf16" : "fp32");
                    return;
                }
            }
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

int main(void) {
    TEST_RUN(test_ops);
    TEST_RUN(test_large_and_output_dtype);
    TEST_RUN(test_errors);
    nn_dev_close();
    return test_summary();
}
