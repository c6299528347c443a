/* bfloat8_b accuracy of each op family, for the tolerance table in
 * docs/nn.md: inputs and outputs in bfloat8_b tile tensors, against a float64
 * reference computed on the inputs as stored (read back from the device, so
 * the input's own quantisation is not counted twice).
 *
 * bfloat8_b keeps a shared exponent per 16-element face row and a 7-bit
 * mantissa: storing a value costs up to 2^-7 of its face row's largest
 * magnitude (round to nearest; 2^-6 at a row of mixed binades), so the
 * measure here is |error| / max |reference| over the tensor (the "scale"),
 * bounded by 2^-6 plus the op's own error, and the PCC. */
#include "nn_test.h"

#define ROWS 70
#define COLS 100
#define N (ROWS * COLS)

typedef enum {
    OP_EXP,
    OP_GELU,
    OP_SIGMOID,
    OP_ADD,
    OP_MUL,
    OP_SUM,
    OP_SOFTMAX,
    OP_LAYERNORM,
    OP_MATMUL,
    OP_COUNT
} op_id;

static const char *const names[OP_COUNT] = {"exp", "gelu",    "sigmoid",    "add",   "mul",
                                            "sum", "softmax", "layer_norm", "matmul"};

static lm_status upload_bfp8(const lmnn_shape *s, const float *x, lmnn_tensor *out,
                             float **out_stored) {
    lm_status st = nn_upload(s, x, LMNN_BFLOAT8_B, LMNN_TILE, out);
    if (!st) {
        *out_stored = nn_download(*out);
        if (!*out_stored) st = LM_ERR_INTERNAL;
    }
    return st;
}

/* The reference of op on a, b (as stored) into want; its element count. */
static size_t reference(op_id op, const float *a, const float *b, double *want) {
    switch (op) {
    case OP_EXP:
    case OP_GELU:
    case OP_SIGMOID:
        for (size_t i = 0; i < N; i++) {
            double x = a[i];
            want[i] = op == OP_EXP    ? exp(x)
                      : op == OP_GELU ? 0.5 * x * (1 + erf(x / sqrt(2.0)))
                                      : 1 / (1 + exp(-x));
        }
        return N;
    case OP_ADD:
    case OP_MUL:
        for (size_t i = 0; i < N; i++)
            want[i] = op == OP_ADD ? (double)a[i] + b[i] : (double)a[i] * b[i];
        return N;
    case OP_SUM: /* over the last dim */
        for (size_t r = 0; r < ROWS; r++) {
            double s = 0;
            for (size_t c = 0; c < COLS; c++)
                s += a[r * COLS + c];
            want[r] = s;
        }
        return ROWS;
    case OP_SOFTMAX:
    case OP_LAYERNORM:
        for (size_t r = 0; r < ROWS; r++) {
            const float *x = a + r * COLS;
            double m = -INFINITY, s = 0, mean = 0, var = 0;
            for (size_t c = 0; c < COLS; c++)
                m = x[c] > m ? x[c] : m, mean += x[c];
            mean /= COLS;
            for (size_t c = 0; c < COLS; c++)
                s += exp(x[c] - m), var += (x[c] - mean) * (x[c] - mean);
            var /= COLS;
            for (size_t c = 0; c < COLS; c++)
                want[r * COLS + c] =
                    op == OP_SOFTMAX ? exp(x[c] - m) / s : (x[c] - mean) / sqrt(var + 1e-5);
        }
        return N;
    case OP_MATMUL: /* a [ROWS, COLS] x b [COLS, ROWS] */
        for (size_t i = 0; i < ROWS; i++)
            for (size_t j = 0; j < ROWS; j++) {
                double s = 0;
                for (size_t k = 0; k < COLS; k++)
                    s += (double)a[i * COLS + k] * b[k * ROWS + j];
                want[i * ROWS + j] = s;
            }
        return ROWS * ROWS;
    default:
        return 0;
    }
}

static lm_status run(op_id op, lmnn_tensor a, lmnn_tensor b, lmnn_tensor *y) {
    switch (op) {
    case OP_EXP:
        return lmnn_exp(a, y);
    case OP_GELU:
        return lmnn_gelu(a, y);
    case OP_SIGMOID:
        return lmnn_sigmoid(a, y);
    case OP_ADD:
        return lmnn_add(a, b, y);
    case OP_MUL:
        return lmnn_mul(a, b, y);
    case OP_SUM: {
        lmnn_reduce_options o;
        lmnn_reduce_options_init(&o);
        o.dims[0] = -1;
        o.dim_count = 1;
        return lmnn_sum(a, &o, y);
    }
    case OP_SOFTMAX:
        return lmnn_softmax(a, -1, NULL, y);
    case OP_LAYERNORM:
        return lmnn_layer_norm(a, (lmnn_tensor){0}, (lmnn_tensor){0}, NULL, y);
    case OP_MATMUL:
        return lmnn_matmul(a, b, NULL, y);
    default:
        return LM_ERR_INVALID_ARGUMENT;
    }
}

static void test_families(void) {
    float *x = nn_rand_floats(N, -2, 2, 81), *z = nn_rand_floats(N, -2, 2, 82);
    lmnn_shape s = LMNN_SHAPE(ROWS, COLS), st = LMNN_SHAPE(COLS, ROWS);
    static double want[N];
    printf("  %-11s %-10s %-9s\n", "op", "err/scale", "pcc");
    for (op_id op = 0; op < OP_COUNT; op++) {
        lmnn_tensor a, b = {0}, y;
        float *as = NULL, *bs = NULL;
        CHECK_OK(upload_bfp8(&s, x, &a, &as));
        if (op == OP_ADD || op == OP_MUL) CHECK_OK(upload_bfp8(&s, z, &b, &bs));
        if (op == OP_MATMUL) CHECK_OK(upload_bfp8(&st, z, &b, &bs));
        CHECK_OK(run(op, a, b, &y));
        lmnn_tensor_info info;
        CHECK_OK(lmnn_tensor_get_info(y, &info));
        CHECK(info.dtype == LMNN_BFLOAT8_B);
        float *got = nn_download(y);
        CHECK(got);
        size_t n = reference(op, as, bs, want);
        double scale = 0;
        for (size_t i = 0; i < n; i++)
            scale = fabs(want[i]) > scale ? fabs(want[i]) : scale;
        nn_err e = nn_compare(got, want, n, 1e-3);
        printf("  %-11s %-10.3g %.6f\n", names[op], e.max_abs / scale, e.pcc);
        /* The output's own bfloat8_b rounding and the op's float32 error. */
        CHECK(e.max_abs <= scale / 64);
        CHECK(e.pcc >= 0.999);
        free(got), free(as), free(bs);
        CHECK_OK(lmnn_tensor_free(a));
        CHECK_OK(lmnn_tensor_free(b));
        CHECK_OK(lmnn_tensor_free(y));
    }
    free(x), free(z);
}

int main(void) {
    TEST_RUN(test_families);
    nn_dev_close();
    return test_summary();
}
