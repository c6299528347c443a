/* softmax, log_softmax, layer_norm, rms_norm, group_norm and batch_norm
 * against float64 host references: every dim of a rank-4 tensor, shapes that
 * are not multiples of 32, one element, large multi-core cases, inputs of
 * large magnitude and far from zero, float32, bfloat16 and bfloat8_b, zero
 * padding of the outputs, and argument errors. */
#include "nn_test.h"

enum { O_SOFTMAX, O_LOG_SOFTMAX, O_LAYER, O_RMS, O_GROUP, O_BATCH, O_BIG, O_COUNT };
static const char *const op_name[O_COUNT] = {"softmax",
                                             "log_softmax",
                                             "layer_norm",
                                             "rms_norm",
                                             "group_norm",
                                             "batch_norm",
                                             "(log_)softmax |x| < 3000"};
/* Worst absolute error and lowest PCC per op and dtype (float32, bfloat16). */
static double worst_abs[O_COUNT][2],
    worst_pcc[O_COUNT][2] = {{2, 2}, {2, 2}, {2, 2}, {2, 2}, {2, 2}, {2, 2}, {2, 2}};

static void note(int op, lmnn_dtype dtype, nn_err e, size_t n) {
    int d = dtype == LMNN_FLOAT32 ? 0 : 1;
    if (e.max_abs > worst_abs[op][d]) worst_abs[op][d] = e.max_abs;
    if (n > 1 && e.pcc < worst_pcc[op][d]) worst_pcc[op][d] = e.pcc;
}

/* Elements before, along and after `dim`. */
static void split_at(const lmnn_shape *s, uint32_t dim, size_t *outer, size_t *len, size_t *inner) {
    *outer = 1, *inner = 1, *len = s->rank ? s->dims[dim] : 1;
    for (uint32_t i = 0; i < dim; i++)
        *outer *= s->dims[i];
    for (uint32_t i = dim + 1; i < s->rank; i++)
        *inner *= s->dims[i];
}

static double *ref_softmax(const float *x, const lmnn_shape *s, uint32_t dim, bool lg) {
    size_t outer, len, inner, n = lmnn_shape_volume(s);
    split_at(s, dim, &outer, &len, &inner);
    double *y = malloc(n * 8);
    for (size_t o = 0; o < outer; o++)
        for (size_t i = 0; i < inner; i++) {
            const float *p = x + o * len * inner + i;
            double m = -INFINITY, sum = 0;
            for (size_t k = 0; k < len; k++)
                m = fmax(m, p[k * inner]);
            for (size_t k = 0; k < len; k++)
                sum += exp(p[k * inner] - m);
            for (size_t k = 0; k < len; k++) {
                double d = p[k * inner] - m;
                y[o * len * inner + i + k * inner] = lg ? d - log(sum) : exp(d) / sum;
            }
        }
    return y;
}

/* layer_norm (rms: rms_norm) over the last nd dims; w, b over those dims or
 * NULL. */
static double *ref_layer(const float *x, const lmnn_shape *s, uint32_t nd, const float *w,
                         const float *b, double eps, bool rms) {
    size_t n = lmnn_shape_volume(s), len = 1;
    for (uint32_t i = s->rank - nd; i < s->rank; i++)
        len *= s->dims[i];
    double *y = malloc(n * 8);
    for (size_t o = 0; o < n / len; o++) {
        const float *p = x + o * len;
        double mean = 0, var = 0;
        if (!rms) {
            for (size_t k = 0; k < len; k++)
                mean += p[k];
            mean /= (double)len;
        }
        for (size_t k = 0; k < len; k++)
            var += (p[k] - mean) * (p[k] - mean);
        var /= (double)len;
        double r = 1 / sqrt(var + eps);
        for (size_t k = 0; k < len; k++)
            y[o * len + k] = (p[k] - mean) * r * (w ? w[k] : 1) + (b ? b[k] : 0);
    }
    return y;
}

/* group_norm of [N, C, *] in g groups; w, b per channel or NULL. */
static double *ref_group(const float *x, const lmnn_shape *s, uint32_t g, const float *w,
                         const float *b, double eps) {
    size_t n = lmnn_shape_volume(s), c = s->dims[1], sp = n / s->dims[0] / c;
    size_t len = c / g * sp;
    double *y = malloc(n * 8);
    for (size_t o = 0; o < n / len; o++) {
        const float *p = x + o * len;
        double mean = 0, var = 0;
        for (size_t k = 0; k < len; k++)
            mean += p[k];
        mean /= (double)len;
        for (size_t k = 0; k < len; k++)
            var += (p[k] - mean) * (p[k] - mean);
        var /= (double)len;
        for (size_t k = 0; k < len; k++) {
            size_t ch = (o % g) * (c / g) + k / sp;
            y[o * len + k] = (p[k] - mean) / sqrt(var + eps) * (w ? w[ch] : 1) + (b ? b[ch] : 0);
        }
    }
    return y;
}

static double *ref_batch(const float *x, const lmnn_shape *s, const float *rm, const float *rv,
                         const float *w, const float *b, double eps) {
    size_t n = lmnn_shape_volume(s), c = s->dims[1], sp = n / s->dims[0] / c;
    double *y = malloc(n * 8);
    for (size_t i = 0; i < n; i++) {
        size_t ch = i / sp % c;
        y[i] = (x[i] - rm[ch]) / sqrt(rv[ch] + eps) * (w ? w[ch] : 1) + (b ? b[ch] : 0);
    }
    return y;
}

/* Compares an op's result with its reference: float32 within abs_tol,
 * bfloat16 within 2^-8 relative plus abs_tol; the result's padding zero. */
#define CHECK_RESULT(OPI, DT, Y, REF, N, TOL)                                                      \
    do {                                                                                           \
        float *got_ = nn_download(Y);                                                              \
        CHECK(got_);                                                                               \
        nn_err cr_ = nn_compare(got_, REF, N, 1.0);                                                \
        note(OPI, DT, cr_, N);                                                                     \
        free(got_);                                                                                \
        if ((DT) == LMNN_FLOAT32) {                                                                \
            CHECK_ERR(cr_, (N) > 1 ? 0.99999 : -1, TOL, 0);                                        \
            lmnn_tensor_info i_;                                                                   \
            lmnn_tensor_get_info(Y, &i_);                                                          \
            if (i_.dtype == LMNN_FLOAT32) CHECK(nn_padding_is_zero(Y));                            \
        } else {                                                                                   \
            CHECK_ERR(cr_, (N) > 1 ? 0.999 : -1, 0, 1.0 / 128 + (TOL));                            \
        }                                                                                          \
    } while (0)

static lmnn_tensor up(const lmnn_shape *s, const float *x, lmnn_dtype dtype) {
    lmnn_tensor t = {0};
    if (nn_upload(s, x, dtype, LMNN_TILE, &t)) fprintf(stderr, "upload: %s\n", lm_last_error());
    return t;
}

/* softmax and log_softmax over every dim (negative and positive) of rank 1..4
 * tensors, float32 and bfloat16. */
static void test_softmax_dims(void) {
    lmnn_shape shapes[] = {LMNN_SHAPE(1), LMNN_SHAPE(45), LMNN_SHAPE(3, 5), LMNN_SHAPE(40, 70),
                           LMNN_SHAPE(2, 3, 37, 45)};
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
        lmnn_shape *s = &shapes[si];
        size_t n = lmnn_shape_volume(s);
        float *x = nn_rand_floats(n, -8, 4, 100 + si);
        for (int di = 0; di < 2; di++) {
            lmnn_dtype dtype = di ? LMNN_BFLOAT16 : LMNN_FLOAT32;
            float *xr = nn_rounded(x, n, dtype);
            lmnn_tensor a = up(s, x, dtype);
            for (uint32_t d = 0; d < s->rank; d++)
                for (int lg = 0; lg < 2; lg++) {
                    int32_t dim = (d + lg) % 2 ? (int32_t)d - (int32_t)s->rank : (int32_t)d;
                    lmnn_tensor y;
                    CHECK_OK((lg ? lmnn_log_softmax : lmnn_softmax)(a, dim, NULL, &y));
                    double *ref = ref_softmax(xr, s, d, lg);
                    CHECK_RESULT(lg ? O_LOG_SOFTMAX : O_SOFTMAX, dtype, y, ref, n, 1e-5);
                    free(ref);
                    lmnn_tensor_free(y);
                }
            lmnn_tensor_free(a);
            free(xr);
        }
        free(x);
    }
}

/* Inputs of large magnitude (exp would overflow without the max), an all
 * -Inf row (NaN, as PyTorch), a rank-0 tensor, bfloat8_b input. */
static void test_softmax_special(void) {
    lmnn_shape s = LMNN_SHAPE(5, 70);
    size_t n = lmnn_shape_volume(&s);
    float *x = nn_rand_floats(n, -3000, 3000, 7);
    lmnn_tensor a = up(&s, x, LMNN_FLOAT32), y;
    for (int lg = 0; lg < 2; lg++) {
        CHECK_OK((lg ? lmnn_log_softmax : lmnn_softmax)(a, -1, NULL, &y));
        double *ref = ref_softmax(x, &s, 1, lg);
        CHECK_RESULT(O_BIG, LMNN_FLOAT32, y, ref, n, lg ? 1e-3 : 1e-6);
        free(ref);
        lmnn_tensor_free(y);
    }
    lmnn_tensor_free(a);
    for (size_t j = 0; j < 70; j++)
        x[70 + j] = -INFINITY;
    a = up(&s, x, LMNN_FLOAT32);
    CHECK_OK(lmnn_softmax(a, 1, NULL, &y));
    float *got = nn_download(y);
    CHECK(got && isnan(got[70]) && isnan(got[139]) && !isnan(got[0]) && !isnan(got[140]));
    free(got);
    lmnn_tensor_free(y);
    lmnn_tensor_free(a);
    free(x);

    lmnn_shape s0 = lmnn_shape_of(0, NULL);
    float v = 3.5f, r = 0;
    a = up(&s0, &v, LMNN_FLOAT32);
    CHECK_OK(lmnn_softmax(a, 0, NULL, &y));
    CHECK_OK(lmnn_to_host(y, &r, sizeof r));
    CHECK(r == 1.0f);
    lmnn_tensor_free(y);
    CHECK_OK(lmnn_log_softmax(a, -1, NULL, &y));
    CHECK_OK(lmnn_to_host(y, &r, sizeof r));
    CHECK(r == 0.0f);
    lmnn_tensor_free(y);
    lmnn_tensor_free(a);

    /* bfloat8_b: against the values it holds, output float32. */
    lmnn_shape s8 = LMNN_SHAPE(3, 40, 50);
    n = lmnn_shape_volume(&s8);
    x = nn_rand_floats(n, -4, 4, 8);
    a = up(&s8, x, LMNN_BFLOAT8_B);
    float *held = nn_download(a);
    lmnn_softmax_options o;
    lmnn_softmax_options_init(&o);
    o.output.dtype = LMNN_FLOAT32;
    for (uint32_t d = 0; d < 3; d++) {
        CHECK_OK(lmnn_softmax(a, (int32_t)d, &o, &y));
        double *ref = ref_softmax(held, &s8, d, false);
        CHECK_RESULT(O_SOFTMAX, LMNN_FLOAT32, y, ref, n, 1e-5);
        free(ref);
        lmnn_tensor_free(y);
    }
    free(held);
    free(x);
    lmnn_tensor_free(a);
}

/* Large tensors on all cores. */
static void test_softmax_large(void) {
    lmnn_shape s = LMNN_SHAPE(8, 512, 1024);
    size_t n = lmnn_shape_volume(&s);
    float *x = nn_rand_floats(n, -5, 5, 9);
    lmnn_tensor a = up(&s, x, LMNN_FLOAT32), y;
    CHECK_OK(lmnn_softmax(a, -1, NULL, &y));
    double *ref = ref_softmax(x, &s, 2, false);
    CHECK_RESULT(O_SOFTMAX, LMNN_FLOAT32, y, ref, n, 1e-5);
    free(ref);
    lmnn_tensor_free(y);
    CHECK_OK(lmnn_softmax(a, 1, NULL, &y));
    ref = ref_softmax(x, &s, 1, false);
    CHECK_RESULT(O_SOFTMAX, LMNN_FLOAT32, y, ref, n, 1e-5);
    free(ref);
    lmnn_tensor_free(y);
    lmnn_tensor_free(a);
    free(x);
}

/* layer_norm and rms_norm over the last 1..3 dims, with and without weight
 * and bias, float32 and bfloat16; data far from zero for layer_norm. */
static void test_layer_norm(void) {
    lmnn_shape shapes[] = {LMNN_SHAPE(1), LMNN_SHAPE(7), LMNN_SHAPE(3, 5), LMNN_SHAPE(33, 65),
                           LMNN_SHAPE(2, 3, 40, 70)};
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
        lmnn_shape *s = &shapes[si];
        size_t n = lmnn_shape_volume(s);
        float *x = nn_rand_floats(n, -2, 3, 200 + si);
        for (size_t i = 0; i < n; i++)
            x[i] += si == 3 ? 100.0f : 0.0f;
        for (uint32_t nd = 1; nd <= s->rank && nd <= 3; nd++) {
            lmnn_shape ns = lmnn_shape_of(nd, s->dims + s->rank - nd);
            size_t len = lmnn_shape_volume(&ns);
            float *w = nn_rand_floats(len, -2, 2, 300 + nd), *b = nn_rand_floats(len, -1, 1, 400);
            for (int di = 0; di < 2; di++) {
                lmnn_dtype dtype = di ? LMNN_BFLOAT16 : LMNN_FLOAT32;
                float *xr = nn_rounded(x, n, dtype), *wr = nn_rounded(w, len, dtype);
                float *br = nn_rounded(b, len, dtype);
                lmnn_tensor a = up(s, x, dtype), wt = up(&ns, w, dtype), bt = up(&ns, b, dtype);
                lmnn_norm_options o;
                lmnn_norm_options_init(&o);
                o.normalized_dims = nd;
                for (int variant = 0; variant < 4; variant++) {
                    bool rms = variant == 3, with_w = variant >= 1, with_b = variant == 2;
                    lmnn_tensor y;
                    if (rms)
                        CHECK_OK(lmnn_rms_norm(a, wt, &o, &y));
                    else
                        CHECK_OK(lmnn_layer_norm(a, with_w ? wt : (lmnn_tensor){0},
                                                 with_b ? bt : (lmnn_tensor){0}, &o, &y));
                    double *ref =
                        ref_layer(xr, s, nd, with_w ? wr : NULL, with_b ? br : NULL, 1e-5, rms);
                    CHECK_RESULT(rms ? O_RMS : O_LAYER, dtype, y, ref, n, 2e-5);
                    free(ref);
                    lmnn_tensor_free(y);
                }
                lmnn_tensor_free(a), lmnn_tensor_free(wt), lmnn_tensor_free(bt);
                free(xr), free(wr), free(br);
            }
            free(w), free(b);
        }
        free(x);
    }
}

/* Weight given as [1, W] for a [.., W] normalisation; bfloat8_b input;
 * a large multi-core case. */
static void test_layer_norm_more(void) {
    lmnn_shape s = LMNN_SHAPE(4, 256, 1024), ws = LMNN_SHAPE(1, 1024);
    size_t n = lmnn_shape_volume(&s);
    float *x = nn_rand_floats(n, -3, 3, 17), *w = nn_rand_floats(1024, 0.5f, 1.5f, 18);
    lmnn_tensor a = up(&s, x, LMNN_FLOAT32), wt = up(&ws, w, LMNN_FLOAT32), y;
    CHECK_OK(lmnn_layer_norm(a, wt, (lmnn_tensor){0}, NULL, &y));
    double *ref = ref_layer(x, &s, 1, w, NULL, 1e-5, false);
    CHECK_RESULT(O_LAYER, LMNN_FLOAT32, y, ref, n, 2e-5);
    free(ref);
    lmnn_tensor_free(y);
    lmnn_tensor_free(a);
    free(x);

    lmnn_shape s8 = LMNN_SHAPE(3, 50, 1024);
    n = lmnn_shape_volume(&s8);
    x = nn_rand_floats(n, -3, 3, 19);
    a = up(&s8, x, LMNN_BFLOAT8_B);
    float *held = nn_download(a);
    lmnn_norm_options o;
    lmnn_norm_options_init(&o);
    o.output.dtype = LMNN_FLOAT32;
    CHECK_OK(lmnn_layer_norm(a, wt, (lmnn_tensor){0}, &o, &y));
    ref = ref_layer(held, &s8, 1, w, NULL, 1e-5, false);
    CHECK_RESULT(O_LAYER, LMNN_FLOAT32, y, ref, n, 2e-5);
    free(ref);
    free(held);
    lmnn_tensor_free(y);
    lmnn_tensor_free(a);
    lmnn_tensor_free(wt);
    free(x), free(w);
}

static void test_group_norm(void) {
    struct {
        lmnn_shape s;
        uint32_t groups;
    } cases[] = {{LMNN_SHAPE(2, 6, 10, 12), 3}, {LMNN_SHAPE(2, 4, 33, 40), 2},
                 {LMNN_SHAPE(1, 4, 32, 32), 4}, {LMNN_SHAPE(3, 6), 2},
                 {LMNN_SHAPE(2, 4, 50), 4},     {LMNN_SHAPE(1, 4, 2, 5, 7), 2},
                 {LMNN_SHAPE(2, 8, 5, 5), 1}};
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
        lmnn_shape *s = &cases[ci].s;
        uint32_t c = s->dims[1];
        lmnn_shape cs = LMNN_SHAPE(c);
        size_t n = lmnn_shape_volume(s);
        float *x = nn_rand_floats(n, -2, 4, 500 + ci), *w = nn_rand_floats(c, -2, 2, 600);
        float *b = nn_rand_floats(c, -1, 1, 700);
        for (int di = 0; di < 2; di++) {
            lmnn_dtype dtype = di ? LMNN_BFLOAT16 : LMNN_FLOAT32;
            float *xr = nn_rounded(x, n, dtype), *wr = nn_rounded(w, c, dtype),
                  *br = nn_rounded(b, c, dtype);
            lmnn_tensor a = up(s, x, dtype), wt = up(&cs, w, dtype), bt = up(&cs, b, dtype), y;
            for (int with = 0; with < 2; with++) {
                CHECK_OK(lmnn_group_norm(a, cases[ci].groups, with ? wt : (lmnn_tensor){0},
                                         with ? bt : (lmnn_tensor){0}, NULL, &y));
                lmnn_tensor_info info;
                CHECK_OK(lmnn_tensor_get_info(y, &info));
                CHECK(info.shape.rank == s->rank && info.dtype == dtype);
                double *ref =
                    ref_group(xr, s, cases[ci].groups, with ? wr : NULL, with ? br : NULL, 1e-5);
                CHECK_RESULT(O_GROUP, dtype, y, ref, n, 2e-5);
                free(ref);
                lmnn_tensor_free(y);
            }
            lmnn_tensor_free(a), lmnn_tensor_free(wt), lmnn_tensor_free(bt);
            free(xr), free(wr), free(br);
        }
        free(x), free(w), free(b);
    }
}

/* group_norm of channels-last [*, L, C] (each matrix a sample) in g
 * groups; w, b per channel or NULL. */
static double *ref_group_cl(const float *x, const lmnn_shape *s, uint32_t g, const float *w,
                            const float *b, double eps) {
    size_t n = lmnn_shape_volume(s), c = s->dims[s->rank - 1], l = s->dims[s->rank - 2];
    size_t cg = c / g;
    double *y = malloc(n * 8);
    for (size_t o = 0; o < n / (l * c); o++)
        for (size_t k = 0; k < g; k++) {
            const float *p = x + o * l * c + k * cg;
            double mean = 0, var = 0;
            for (size_t r = 0; r < l; r++)
                for (size_t j = 0; j < cg; j++)
                    mean += p[r * c + j];
            mean /= (double)(l * cg);
            for (size_t r = 0; r < l; r++)
                for (size_t j = 0; j < cg; j++)
                    var += (p[r * c + j] - mean) * (p[r * c + j] - mean);
            var /= (double)(l * cg);
            for (size_t r = 0; r < l; r++)
                for (size_t j = 0; j < cg; j++) {
                    size_t ch = k * cg + j;
                    y[o * l * c + r * c + ch] =
                        (p[r * c + j] - mean) / sqrt(var + eps) * (w ? w[ch] : 1) + (b ? b[ch] : 0);
                }
        }
    return y;
}

/* Channels last: groups within a tile column (8, 2 and 10 channels: spans
 * of 1 and 5 tile columns, one cut short by the matrix), groups of whole
 * tile columns, one group of 130 channels (through channels first), padded
 * rows and columns, several matrices per leading dim, rank 2, inputs far
 * from zero, weight only, bias only. */
static void test_group_norm_channels_last(void) {
    struct {
        lmnn_shape s;
        uint32_t groups;
        float lo, hi;
    } cases[] = {{LMNN_SHAPE(2, 1, 64, 64), 8, -2, 4},
                 {LMNN_SHAPE(1, 50, 320), 32, -2, 4},
                 {LMNN_SHAPE(3, 40, 6), 3, -2, 4},
                 {LMNN_SHAPE(2, 2, 33, 96), 1, -2, 4},
                 {LMNN_SHAPE(1, 1, 20, 130), 1, -2, 4},
                 {LMNN_SHAPE(2, 70, 40), 4, -2, 4},
                 {LMNN_SHAPE(5, 24), 2, -2, 4},
                 {LMNN_SHAPE(1, 1, 224, 64), 32, -2, 4},
                 {LMNN_SHAPE(1, 1, 300, 64), 8, 1000, 1004}};
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
        lmnn_shape *s = &cases[ci].s;
        uint32_t c = s->dims[s->rank - 1], G = cases[ci].groups;
        lmnn_shape cs = LMNN_SHAPE(c);
        size_t n = lmnn_shape_volume(s);
        float *x = nn_rand_floats(n, cases[ci].lo, cases[ci].hi, 900 + ci);
        float *w = nn_rand_floats(c, -2, 2, 610), *b = nn_rand_floats(c, -1, 1, 710);
        lmnn_norm_options o;
        lmnn_norm_options_init(&o);
        o.channels_last = true;
        for (int di = 0; di < 2; di++) {
            lmnn_dtype dtype = di ? LMNN_BFLOAT16 : LMNN_FLOAT32;
            float *xr = nn_rounded(x, n, dtype), *wr = nn_rounded(w, c, dtype),
                  *br = nn_rounded(b, c, dtype);
            lmnn_tensor a = up(s, x, dtype), wt = up(&cs, w, dtype), bt = up(&cs, b, dtype), y;
            /* 0: neither, 1: both, 2: weight, 3: bias */
            for (int with = 0; with < 4; with++) {
                bool hw = with == 1 || with == 2, hb = with == 1 || with == 3;
                CHECK_OK(lmnn_group_norm(a, G, hw ? wt : (lmnn_tensor){0},
                                         hb ? bt : (lmnn_tensor){0}, &o, &y));
                lmnn_tensor_info info;
                CHECK_OK(lmnn_tensor_get_info(y, &info));
                CHECK(info.shape.rank == s->rank && info.dtype == dtype &&
                      !memcmp(info.shape.dims, s->dims, s->rank * sizeof *s->dims));
                double *ref = ref_group_cl(xr, s, G, hw ? wr : NULL, hb ? br : NULL, 1e-5);
                CHECK_RESULT(O_GROUP, dtype, y, ref, n, 2e-5);
                free(ref);
                lmnn_tensor_free(y);
            }
            lmnn_tensor_free(a), lmnn_tensor_free(wt), lmnn_tensor_free(bt);
            free(xr), free(wr), free(br);
        }
        free(x), free(w), free(b);
    }
}

/* v after activation `act` (SiLU, or LeakyReLU with slope 0.2). */
static double activated(lmnn_unary_op act, double v) {
    return act == LMNN_SILU ? v / (1 + exp(-v)) : v < 0 ? 0.2 * v : v;
}

/* A fused activation (opts.activation) on every norm and path: layer_norm,
 * group_norm channels first (a group kept in L1, and one streamed: 140
 * tiles) and channels last, batch_norm; SiLU and LeakyReLU (its slope
 * given). Then an activation that does not exist. */
static void test_norm_activation(void) {
    enum { LAYER, GROUP, GROUP_BIG, GROUP_CL, BATCH, KINDS };
    lmnn_shape shapes[KINDS] = {LMNN_SHAPE(3, 40, 70), LMNN_SHAPE(2, 6, 10, 12),
                                LMNN_SHAPE(1, 2, 200, 300), LMNN_SHAPE(2, 1, 64, 64),
                                LMNN_SHAPE(2, 3, 20, 33)};
    uint32_t groups[KINDS] = {0, 3, 1, 8, 0};
    for (int k = 0; k < KINDS; k++) {
        lmnn_shape *s = &shapes[k];
        size_t n = lmnn_shape_volume(s);
        uint32_t c = k == LAYER || k == GROUP_CL ? s->dims[s->rank - 1] : s->dims[1];
        lmnn_shape cs = LMNN_SHAPE(c);
        float *x = nn_rand_floats(n, -2, 4, 800 + k), *w = nn_rand_floats(c, -2, 2, 810);
        float *b = nn_rand_floats(c, -1, 1, 820), *rv = nn_rand_floats(c, 0.5f, 2, 830);
        lmnn_tensor a = up(s, x, LMNN_FLOAT32), wt = up(&cs, w, LMNN_FLOAT32),
                    bt = up(&cs, b, LMNN_FLOAT32), vt = up(&cs, rv, LMNN_FLOAT32), y;
        double *ref = k == LAYER      ? ref_layer(x, s, 1, w, b, 1e-5, false)
                      : k == GROUP_CL ? ref_group_cl(x, s, groups[k], w, b, 1e-5)
                      : k == BATCH    ? ref_batch(x, s, b, rv, w, b, 1e-5)
                                      : ref_group(x, s, groups[k], w, b, 1e-5);
        double *want = malloc(n * sizeof *want);
        for (int ai = 0; ai < 2; ai++) {
            lmnn_unary_op act = ai ? LMNN_LEAKY_RELU : LMNN_SILU;
            lmnn_norm_options o;
            lmnn_norm_options_init(&o);
            o.activation = act;
            if (ai) o.activation_alpha = 0.2;
            o.channels_last = k == GROUP_CL;
            if (k == LAYER)
                CHECK_OK(lmnn_layer_norm(a, wt, bt, &o, &y));
            else if (k == BATCH)
                CHECK_OK(lmnn_batch_norm(a, bt, vt, wt, bt, &o, &y));
            else
                CHECK_OK(lmnn_group_norm(a, groups[k], wt, bt, &o, &y));
            for (size_t i = 0; i < n; i++)
                want[i] = activated(act, ref[i]);
            CHECK_RESULT(k == LAYER   ? O_LAYER
                         : k == BATCH ? O_BATCH
                                      : O_GROUP,
                         LMNN_FLOAT32, y, want, n, 2e-5);
            lmnn_tensor_free(y);
        }
        free(want), free(ref);
        lmnn_tensor_free(a), lmnn_tensor_free(wt), lmnn_tensor_free(bt), lmnn_tensor_free(vt);
        free(x), free(w), free(b), free(rv);
    }
    lmnn_shape s = LMNN_SHAPE(2, 4, 8);
    float *x = nn_rand_floats(64, -1, 1, 840);
    lmnn_tensor a = up(&s, x, LMNN_FLOAT32), y;
    lmnn_norm_options o;
    lmnn_norm_options_init(&o);
    o.activation = (lmnn_unary_op)9999;
    CHECK_FAILS(lmnn_group_norm(a, 2, (lmnn_tensor){0}, (lmnn_tensor){0}, &o, &y),
                LM_ERR_INVALID_ARGUMENT, "lmnn_group_norm: opts.activation: unknown unary op 9999");
    CHECK_FAILS(lmnn_layer_norm(a, (lmnn_tensor){0}, (lmnn_tensor){0}, &o, &y),
                LM_ERR_INVALID_ARGUMENT, "lmnn_layer_norm: opts.activation: unknown unary op 9999");
    lmnn_tensor_free(a);
    free(x);
}

static void test_batch_norm(void) {
    lmnn_shape shapes[] = {LMNN_SHAPE(37, 45), LMNN_SHAPE(3, 40, 50), LMNN_SHAPE(2, 3, 20, 33),
                           LMNN_SHAPE(2, 3, 2, 5, 7), LMNN_SHAPE(4, 70)};
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
        lmnn_shape *s = &shapes[si];
        uint32_t c = s->dims[1];
        lmnn_shape cs = LMNN_SHAPE(c);
        size_t n = lmnn_shape_volume(s);
        float *x = nn_rand_floats(n, -2, 4, 800 + si), *rm = nn_rand_floats(c, -1, 1, 801);
        float *rv = nn_rand_floats(c, 0.2f, 3, 802), *w = nn_rand_floats(c, -2, 2, 803);
        float *b = nn_rand_floats(c, -1, 1, 804);
        for (int di = 0; di < 2; di++) {
            lmnn_dtype dtype = di ? LMNN_BFLOAT16 : LMNN_FLOAT32;
            float *xr = nn_rounded(x, n, dtype), *rmr = nn_rounded(rm, c, dtype);
            float *rvr = nn_rounded(rv, c, dtype), *wr = nn_rounded(w, c, dtype);
            float *br = nn_rounded(b, c, dtype);
            lmnn_tensor a = up(s, x, dtype), tm = up(&cs, rm, dtype), tv = up(&cs, rv, dtype);
            lmnn_tensor tw = up(&cs, w, dtype), tb = up(&cs, b, dtype), y;
            for (int with = 0; with < 2; with++) {
                CHECK_OK(lmnn_batch_norm(a, tm, tv, with ? tw : (lmnn_tensor){0},
                                         with ? tb : (lmnn_tensor){0}, NULL, &y));
                double *ref = ref_batch(xr, s, rmr, rvr, with ? wr : NULL, with ? br : NULL, 1e-5);
                CHECK_RESULT(O_BATCH, dtype, y, ref, n, 1e-5);
                free(ref);
                lmnn_tensor_free(y);
            }
            lmnn_tensor_free(a), lmnn_tensor_free(tm), lmnn_tensor_free(tv);
            lmnn_tensor_free(tw), lmnn_tensor_free(tb);
            free(xr), free(rmr), free(rvr), free(wr), free(br);
        }
        free(x), free(rm), free(rv), free(w), free(b);
    }
}

/* Groups of more than 128 tiles (the ones kept in L1) stream through the
 * core pass by pass: the same results. */
static void test_streaming(void) {
    struct {
        lmnn_shape s;
        int32_t dim;
    } sm[] = {{LMNN_SHAPE(3, 4200), -1}, {LMNN_SHAPE(4200, 3), 0}, {LMNN_SHAPE(130, 2, 3), 0}};
    for (int i = 0; i < 3; i++) {
        size_t n = lmnn_shape_volume(&sm[i].s);
        float *x = nn_rand_floats(n, -6, 6, 900 + i);
        lmnn_tensor a = up(&sm[i].s, x, LMNN_FLOAT32), y;
        for (int lg = 0; lg < 2; lg++) {
            CHECK_OK((lg ? lmnn_log_softmax : lmnn_softmax)(a, sm[i].dim, NULL, &y));
            double *ref = ref_softmax(
                x, &sm[i].s,
                (uint32_t)(sm[i].dim < 0 ? sm[i].dim + (int32_t)sm[i].s.rank : sm[i].dim), lg);
            CHECK_RESULT(lg ? O_LOG_SOFTMAX : O_SOFTMAX, LMNN_FLOAT32, y, ref, n, 1e-5);
            free(ref);
            lmnn_tensor_free(y);
        }
        lmnn_tensor_free(a);
        free(x);
    }
    struct {
        lmnn_shape s;
        uint32_t nd;
    } ln[] = {{LMNN_SHAPE(3, 4200), 1}, {LMNN_SHAPE(2, 400, 400), 2}, {LMNN_SHAPE(3, 4096), 1}};
    /* (The last: kept in L1, but its weight and bias too large to stay.) */
    for (int i = 0; i < 3; i++) {
        lmnn_shape *s = &ln[i].s;
        lmnn_shape ns = lmnn_shape_of(ln[i].nd, s->dims + s->rank - ln[i].nd);
        size_t n = lmnn_shape_volume(s), len = lmnn_shape_volume(&ns);
        float *x = nn_rand_floats(n, 7, 12, 950 + i), *w = nn_rand_floats(len, -2, 2, 960);
        float *b = nn_rand_floats(len, -1, 1, 970);
        lmnn_tensor a = up(s, x, LMNN_FLOAT32), wt = up(&ns, w, LMNN_FLOAT32);
        lmnn_tensor bt = up(&ns, b, LMNN_FLOAT32), y;
        lmnn_norm_options o;
        lmnn_norm_options_init(&o);
        o.normalized_dims = ln[i].nd;
        CHECK_OK(lmnn_layer_norm(a, wt, bt, &o, &y));
        double *ref = ref_layer(x, s, ln[i].nd, w, b, 1e-5, false);
        CHECK_RESULT(O_LAYER, LMNN_FLOAT32, y, ref, n, 2e-5);
        free(ref);
        lmnn_tensor_free(y);
        CHECK_OK(lmnn_rms_norm(a, wt, &o, &y));
        ref = ref_layer(x, s, ln[i].nd, w, NULL, 1e-5, true);
        CHECK_RESULT(O_RMS, LMNN_FLOAT32, y, ref, n, 2e-5);
        free(ref);
        lmnn_tensor_free(y);
        lmnn_tensor_free(a), lmnn_tensor_free(wt), lmnn_tensor_free(bt);
        free(x), free(w), free(b);
    }
    lmnn_shape gs = LMNN_SHAPE(1, 8, 130, 130), cs = LMNN_SHAPE(8);
    size_t n = lmnn_shape_volume(&gs);
    float *x = nn_rand_floats(n, -1, 3, 980), *w = nn_rand_floats(8, -2, 2, 981);
    float *b = nn_rand_floats(8, -1, 1, 982);
    lmnn_tensor a = up(&gs, x, LMNN_FLOAT32), wt = up(&cs, w, LMNN_FLOAT32);
    lmnn_tensor bt = up(&cs, b, LMNN_FLOAT32), y;
    CHECK_OK(lmnn_group_norm(a, 1, wt, bt, NULL, &y));
    double *ref = ref_group(x, &gs, 1, w, b, 1e-5);
    CHECK_RESULT(O_GROUP, LMNN_FLOAT32, y, ref, n, 2e-5);
    free(ref);
    lmnn_tensor_free(y);
    lmnn_tensor_free(a), lmnn_tensor_free(wt), lmnn_tensor_free(bt);
    free(x), free(w), free(b);
}

static void test_errors(void) {
    lmnn_shape s = LMNN_SHAPE(2, 6, 5, 7), ws = LMNN_SHAPE(6), w7 = LMNN_SHAPE(7);
    float x[420] = {0}, p[7] = {1, 1, 1, 1, 1, 1, 1};
    lmnn_tensor a = up(&s, x, LMNN_FLOAT32), w6 = up(&ws, p, LMNN_FLOAT32);
    lmnn_tensor wl = up(&w7, p, LMNN_FLOAT32), y = {0}, rm;
    CHECK_FAILS(lmnn_softmax(a, 4, NULL, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_softmax: dim: dim 4 is out of range for a tensor of rank 4 (expected -4..3)");
    CHECK_FAILS(lmnn_log_softmax(a, -5, NULL, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_log_softmax: dim: dim -5 is out of range for a tensor of rank 4");
    CHECK_FAILS(lmnn_softmax(a, 0, NULL, NULL), LM_ERR_INVALID_ARGUMENT,
                "lmnn_softmax: out is NULL");
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_ROW_MAJOR, &rm));
    CHECK_FAILS(lmnn_softmax(rm, 0, NULL, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_softmax: a: expected layout tile, given row_major");
    CHECK_FAILS(lmnn_layer_norm(a, rm, (lmnn_tensor){0}, NULL, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_layer_norm: weight: expected layout tile, given row_major");
    lmnn_tensor_free(rm);
    CHECK_FAILS(lmnn_layer_norm(a, w6, (lmnn_tensor){0}, NULL, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_layer_norm: weight: expected shape [7] (the last 1 dims of a's shape [2, 6, "
                "5, 7]), given [6]");
    CHECK_FAILS(lmnn_rms_norm(a, w6, NULL, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_rms_norm: weight: expected shape [7]");
    CHECK_FAILS(lmnn_layer_norm(a, wl, w6, NULL, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_layer_norm: bias: expected shape [7]");
    lmnn_norm_options o;
    lmnn_norm_options_init(&o);
    o.normalized_dims = 5;
    CHECK_FAILS(lmnn_layer_norm(a, (lmnn_tensor){0}, (lmnn_tensor){0}, &o, &y),
                LM_ERR_INVALID_ARGUMENT,
                "lmnn_layer_norm: opts.normalized_dims: expected 1..4 (a has rank 4), given 5");
    o.normalized_dims = 1;
    o.eps = NAN;
    CHECK_FAILS(lmnn_layer_norm(a, (lmnn_tensor){0}, (lmnn_tensor){0}, &o, &y),
                LM_ERR_INVALID_ARGUMENT, "lmnn_layer_norm: opts.eps: expected a finite value >= 0");
    CHECK_FAILS(lmnn_group_norm(a, 4, w6, w6, NULL, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_group_norm: num_groups: expected a divisor of the 6 channels of a [2, 6, 5, "
                "7], given 4");
    CHECK_FAILS(lmnn_group_norm(a, 0, w6, w6, NULL, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_group_norm: num_groups: expected a divisor");
    CHECK_FAILS(lmnn_group_norm(a, 3, wl, w6, NULL, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_group_norm: weight: expected shape [6] (one value per channel), given [7]");
    lmnn_shape s1 = LMNN_SHAPE(7);
    lmnn_tensor v = up(&s1, p, LMNN_FLOAT32);
    CHECK_FAILS(lmnn_group_norm(v, 1, (lmnn_tensor){0}, (lmnn_tensor){0}, NULL, &y),
                LM_ERR_INVALID_ARGUMENT,
                "lmnn_group_norm: a: expected shape [N, C, *] (rank 2 or more), given [7]");
    /* Channels last: the channels are a's last dim. */
    lmnn_norm_options cl;
    lmnn_norm_options_init(&cl);
    cl.channels_last = true;
    CHECK_FAILS(lmnn_group_norm(a, 2, wl, wl, &cl, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_group_norm: num_groups: expected a divisor of the 7 channels of a [2, 6, 5, "
                "7], given 2");
    CHECK_FAILS(lmnn_group_norm(a, 7, w6, wl, &cl, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_group_norm: weight: expected shape [7] (one value per channel), given [6]");
    CHECK_FAILS(lmnn_group_norm(v, 1, (lmnn_tensor){0}, (lmnn_tensor){0}, &cl, &y),
                LM_ERR_INVALID_ARGUMENT,
                "lmnn_group_norm: a: expected shape [*, L, C] (rank 2 or more), given [7]");
    cl.eps = -1;
    CHECK_FAILS(lmnn_group_norm(a, 7, wl, wl, &cl, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_group_norm: opts.eps: expected a finite value >= 0, given -1");
    CHECK_FAILS(lmnn_batch_norm(a, (lmnn_tensor){0}, w6, w6, w6, NULL, &y), LM_ERR_INVALID_HANDLE,
                "lmnn_batch_norm: running_mean: tensor handle is zero");
    CHECK_FAILS(lmnn_batch_norm(a, w6, wl, (lmnn_tensor){0}, (lmnn_tensor){0}, NULL, &y),
                LM_ERR_INVALID_ARGUMENT, "lmnn_batch_norm: running_var: expected shape [6]");
    lmnn_tensor w8 = up(&ws, p, LMNN_BFLOAT8_B);
    CHECK_FAILS(lmnn_batch_norm(a, w6, w6, w8, (lmnn_tensor){0}, NULL, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_batch_norm: weight: expected bfloat16 or float32 (per-channel values), given "
                "bfloat8_b");
    lmnn_tensor_free(w8);
    lmnn_tensor_free(v);
    CHECK_OK(lmnn_tensor_free(wl));
    CHECK_FAILS(lmnn_layer_norm(a, wl, (lmnn_tensor){0}, NULL, &y), LM_ERR_INVALID_HANDLE,
                "lmnn_layer_norm: weight: tensor handle");
    CHECK_OK(lmnn_tensor_free(a));
    CHECK_FAILS(lmnn_softmax(a, 0, NULL, &y), LM_ERR_INVALID_HANDLE,
                "lmnn_softmax: a: tensor handle");
    CHECK_FAILS(lmnn_batch_norm(a, w6, w6, w6, w6, NULL, &y), LM_ERR_INVALID_HANDLE,
                "lmnn_batch_norm: a: tensor handle");
    CHECK(y.id == 0);
    /* A tensor of another device. */
    lm_device *other;
    CHECK_OK(lm_device_open(NULL, &other));
    lmnn_tensor_options to;
    lmnn_tensor_options_init(&to);
    to.dtype = LMNN_FLOAT32;
    lmnn_tensor foreign, b2;
    CHECK_OK(lmnn_from_host(other, &w7, p, sizeof p, &to, &foreign));
    CHECK_OK(nn_upload(&w7, p, LMNN_FLOAT32, LMNN_TILE, &b2));
    CHECK_FAILS(lmnn_layer_norm(b2, foreign, (lmnn_tensor){0}, NULL, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_layer_norm: weight: the tensor is on another device");
    lmnn_tensor_free(foreign);
    lm_device_close(other);
    /* The device still works. */
    CHECK_OK(lmnn_softmax(b2, 0, NULL, &y));
    float got[7];
    CHECK_OK(lmnn_to_host(y, got, sizeof got));
    CHECK(fabsf(got[3] - 1.0f / 7) < 1e-6f);
    lmnn_tensor_free(y);
    lmnn_tensor_free(b2);
    lmnn_tensor_free(w6);
}

/* Inputs and outputs in L1; programs built once per shape. */
static void test_memory_and_cache(void) {
    lmnn_shape s = LMNN_SHAPE(3, 50, 70), ws = LMNN_SHAPE(70);
    size_t n = lmnn_shape_volume(&s);
    float *x = nn_rand_floats(n, -2, 2, 31), *w = nn_rand_floats(70, -1, 1, 32);
    lmnn_tensor_options to;
    lmnn_tensor_options_init(&to);
    to.dtype = LMNN_FLOAT32;
    to.memory.type = LM_BUFFER_L1;
    lmnn_tensor a, wt, y;
    CHECK_OK(lmnn_from_host(nn_dev(), &s, x, n * 4, &to, &a));
    CHECK_OK(lmnn_from_host(nn_dev(), &ws, w, 70 * 4, &to, &wt));
    lmnn_softmax_options so;
    lmnn_softmax_options_init(&so);
    so.output.memory.type = LM_BUFFER_DRAM;
    lmnn_norm_options no;
    lmnn_norm_options_init(&no);
    for (int rep = 0; rep < 2; rep++) {
        lmnn_program_cache_stats before, after;
        CHECK_OK(lmnn_program_cache_get_stats(nn_dev(), &before));
        CHECK_OK(lmnn_softmax(a, 1, &so, &y));
        lmnn_tensor_info info;
        CHECK_OK(lmnn_tensor_get_info(y, &info));
        CHECK(info.memory.type == LM_BUFFER_DRAM);
        double *ref = ref_softmax(x, &s, 1, false);
        CHECK_RESULT(O_SOFTMAX, LMNN_FLOAT32, y, ref, n, 1e-5);
        free(ref);
        lmnn_tensor_free(y);
        CHECK_OK(lmnn_layer_norm(a, wt, (lmnn_tensor){0}, &no, &y));
        CHECK_OK(lmnn_tensor_get_info(y, &info));
        CHECK(info.memory.type == LM_BUFFER_L1);
        ref = ref_layer(x, &s, 1, w, NULL, 1e-5, false);
        CHECK_RESULT(O_LAYER, LMNN_FLOAT32, y, ref, n, 2e-5);
        free(ref);
        lmnn_tensor_free(y);
        CHECK_OK(lmnn_program_cache_get_stats(nn_dev(), &after));
        if (rep) CHECK(after.misses == before.misses && after.hits >= before.hits + 2);
    }
    lmnn_tensor_free(a);
    lmnn_tensor_free(wt);
    free(x), free(w);
}

static void print_worst(void) {
    printf("worst max abs error / lowest pcc (float32 | bfloat16):\n");
    for (int k = 0; k < O_COUNT; k++)
        if (worst_pcc[k][1] > 1) /* no bfloat16 case */
            printf("  %-26s %.3g %.8f\n", op_name[k], worst_abs[k][0], worst_pcc[k][0]);
        else
            printf("  %-26s %.3g %.8f | %.3g %.6f\n", op_name[k], worst_abs[k][0], worst_pcc[k][0],
                   worst_abs[k][1], worst_pcc[k][1]);
}

int main(void) {
    TEST_RUN(test_softmax_dims);
    TEST_RUN(test_softmax_special);
    TEST_RUN(test_softmax_large);
    TEST_RUN(test_layer_norm);
    TEST_RUN(test_layer_norm_more);
    TEST_RUN(test_group_norm);
    TEST_RUN(test_group_norm_channels_last);
    TEST_RUN(test_batch_norm);
    TEST_RUN(test_norm_activation);
    TEST_RUN(test_streaming);
    TEST_RUN(test_memory_and_cache);
    TEST_RUN(test_errors);
    print_worst();
    nn_dev_close();
    return test_summary();
}
