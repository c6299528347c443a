/* A small CNN for 28x28 images built from the op library, with fixed random
 * weights: two blocks of conv 3x3 (padding 1, bias) -> batch_norm (inference)
 * -> relu -> max_pool 2x2, then flatten and a linear layer to 10 classes:
 *
 *   [N, 1, 28, 28] -> [N, 8, 14, 14] -> [N, 16, 7, 7] -> [N, 784] -> [N, 10]
 *
 * End to end against a float64 host reference; then captured with Light
 * Metal and replayed bit-identically, also with another image batch given to
 * the replay as its input; then as one metal trace over cached programs.
 *
 * Bound (float32): convolutions are within about 1e-6 of sum |w x| per output
 * (lmnn_conv.h), batch norm a few ulps, relu and max pooling exact, the linear
 * layer's sums of 784 products within about 1e-6 of sum |w x|. On logits of
 * order 1 that is well under 1e-4 absolute. Measured: max abs 1.5e-6;
 * asserted 1e-4 and PCC >= 0.99999. */
#include "lm_test_replay.h"
#include "nn_test.h"

#define BATCH 2
#define C1 8
#define C2 16
#define CLASSES 10
#define FLAT (C2 * 7 * 7)
#define NIN (BATCH * 28 * 28)
#define NOUT (BATCH * CLASSES)

typedef struct cnn_host {
    float *w1, b1[C1], g1[C1], be1[C1], m1[C1], v1[C1];
    float *w2, b2[C2], g2[C2], be2[C2], m2[C2], v2[C2];
    float *wl, bl[CLASSES]; /* wl [FLAT, CLASSES] */
} cnn_host;

typedef struct cnn_device {
    lmnn_tensor w1, b1, g1, be1, m1, v1;
    lmnn_tensor w2, b2, g2, be2, m2, v2;
    lmnn_tensor wl, bl;
} cnn_device;

#define EPS 1e-5

static void rand_fill(float *x, size_t n, float lo, float hi, uint64_t *s) {
    for (size_t i = 0; i < n; i++)
        x[i] = lo + (hi - lo) * (float)(nn_rand_u32(s) >> 8) / 16777216.0f;
}

static void cnn_host_init(cnn_host *h, uint64_t seed) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 7;
    h->w1 = malloc(C1 * 1 * 9 * sizeof(float));
    h->w2 = malloc(C2 * C1 * 9 * sizeof(float));
    h->wl = malloc(FLAT * CLASSES * sizeof(float));
    rand_fill(h->w1, C1 * 9, -0.5f, 0.5f, &s);
    rand_fill(h->w2, C2 * C1 * 9, -0.2f, 0.2f, &s);
    rand_fill(h->wl, FLAT * CLASSES, -0.05f, 0.05f, &s);
    rand_fill(h->b1, C1, -0.1f, 0.1f, &s);
    rand_fill(h->g1, C1, 0.5f, 1.5f, &s);
    rand_fill(h->be1, C1, -0.2f, 0.2f, &s);
    rand_fill(h->m1, C1, -0.1f, 0.1f, &s);
    rand_fill(h->v1, C1, 0.2f, 1.0f, &s);
    rand_fill(h->b2, C2, -0.1f, 0.1f, &s);
    rand_fill(h->g2, C2, 0.5f, 1.5f, &s);
    rand_fill(h->be2, C2, -0.2f, 0.2f, &s);
    rand_fill(h->m2, C2, -0.1f, 0.1f, &s);
    rand_fill(h->v2, C2, 0.5f, 2.0f, &s);
    rand_fill(h->bl, CLASSES, -0.1f, 0.1f, &s);
}

static void cnn_host_free(cnn_host *h) {
    free(h->w1);
    free(h->w2);
    free(h->wl);
}

/* ---- float64 reference ---- */

/* conv 3x3 padding 1 + bias -> batch norm -> relu -> max pool 2x2, NCHW. */
static void ref_block(const double *x, int c, int hw, const float *w, const float *b,
                      const float *g, const float *be, const float *m, const float *v, int oc,
                      double *out) {
    int ohw = hw / 2;
    double *y = malloc((size_t)oc * hw * hw * sizeof *y);
    for (int n = 0; n < BATCH; n++) {
        for (int o = 0; o < oc; o++)
            for (int i = 0; i < hw; i++)
                for (int j = 0; j < hw; j++) {
                    double acc = b[o];
                    for (int ci = 0; ci < c; ci++)
                        for (int ki = 0; ki < 3; ki++)
                            for (int kj = 0; kj < 3; kj++) {
                                int ii = i + ki - 1, jj = j + kj - 1;
                                if (ii < 0 || jj < 0 || ii >= hw || jj >= hw) continue;
                                acc += (double)w[((o * c + ci) * 3 + ki) * 3 + kj] *
                                       x[((size_t)(n * c + ci) * hw + ii) * hw + jj];
                            }
                    double t = (acc - m[o]) / sqrt((double)v[o] + EPS) * g[o] + be[o];
                    y[((size_t)o * hw + i) * hw + j] = t > 0 ? t : 0;
                }
        for (int o = 0; o < oc; o++)
            for (int i = 0; i < ohw; i++)
                for (int j = 0; j < ohw; j++) {
                    double mx = -INFINITY;
                    for (int a = 0; a < 2; a++)
                        for (int bb = 0; bb < 2; bb++) {
                            double t = y[((size_t)o * hw + 2 * i + a) * hw + 2 * j + bb];
                            if (t > mx) mx = t;
                        }
                    out[((size_t)(n * oc + o) * ohw + i) * ohw + j] = mx;
                }
    }
    free(y);
}

static void cnn_reference(const cnn_host *h, const float *img, double *logits) {
    double *x = malloc(NIN * sizeof *x), *a1 = malloc(BATCH * C1 * 14 * 14 * sizeof *a1);
    double *a2 = malloc(BATCH * FLAT * sizeof *a2);
    for (int i = 0; i < NIN; i++)
        x[i] = img[i];
    ref_block(x, 1, 28, h->w1, h->b1, h->g1, h->be1, h->m1, h->v1, C1, a1);
    ref_block(a1, C1, 14, h->w2, h->b2, h->g2, h->be2, h->m2, h->v2, C2, a2);
    for (int n = 0; n < BATCH; n++)
        for (int k = 0; k < CLASSES; k++) {
            double acc = h->bl[k];
            for (int f = 0; f < FLAT; f++)
                acc += a2[(size_t)n * FLAT + f] * h->wl[(size_t)f * CLASSES + k];
            logits[n * CLASSES + k] = acc;
        }
    free(x), free(a1), free(a2);
}

/* ---- the model on the device ---- */

static lm_status upload(lm_device *dev, const lmnn_shape *shape, const float *data,
                        lmnn_layout layout, lmnn_tensor *out) {
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = LMNN_FLOAT32;
    o.layout = layout;
    return lmnn_from_host(dev, shape, data, lmnn_shape_volume(shape) * sizeof(float), &o, out);
}

static lm_status upload_vec(lm_device *dev, const float *data, uint32_t n, lmnn_tensor *out) {
    lmnn_shape s = LMNN_SHAPE(n);
    return upload(dev, &s, data, LMNN_TILE, out);
}

/* A conv weight [oc, c, 3, 3] uploaded and prepared (the matrix conv2d
 * multiplies by), once, as a model does. */
static lm_status conv_weight(lm_device *dev, const float *w, uint32_t oc, uint32_t c,
                             lmnn_tensor *out) {
    lmnn_shape s = LMNN_SHAPE(oc, c, 3, 3);
    lmnn_tensor raw;
    lm_status st = upload(dev, &s, w, LMNN_TILE, &raw);
    if (st) return st;
    lmnn_conv2d_options o;
    lmnn_conv2d_options_init(&o);
    st = lmnn_conv2d_prepare_weights(raw, &o, out);
    lmnn_tensor_free(raw);
    return st;
}

static lm_status cnn_device_init(lm_device *dev, const cnn_host *h, cnn_device *d) {
    memset(d, 0, sizeof *d);
    lm_status st = conv_weight(dev, h->w1, C1, 1, &d->w1);
    if (!st) st = conv_weight(dev, h->w2, C2, C1, &d->w2);
    if (!st) st = upload_vec(dev, h->b1, C1, &d->b1);
    if (!st) st = upload_vec(dev, h->g1, C1, &d->g1);
    if (!st) st = upload_vec(dev, h->be1, C1, &d->be1);
    if (!st) st = upload_vec(dev, h->m1, C1, &d->m1);
    if (!st) st = upload_vec(dev, h->v1, C1, &d->v1);
    if (!st) st = upload_vec(dev, h->b2, C2, &d->b2);
    if (!st) st = upload_vec(dev, h->g2, C2, &d->g2);
    if (!st) st = upload_vec(dev, h->be2, C2, &d->be2);
    if (!st) st = upload_vec(dev, h->m2, C2, &d->m2);
    if (!st) st = upload_vec(dev, h->v2, C2, &d->v2);
    lmnn_shape ws = LMNN_SHAPE(FLAT, CLASSES);
    if (!st) st = upload(dev, &ws, h->wl, LMNN_TILE, &d->wl);
    if (!st) st = upload_vec(dev, h->bl, CLASSES, &d->bl);
    return st;
}

static void cnn_device_free(cnn_device *d) {
    lmnn_tensor *all[] = {&d->w1, &d->b1, &d->g1,  &d->be1, &d->m1, &d->v1, &d->w2,
                          &d->b2, &d->g2, &d->be2, &d->m2,  &d->v2, &d->wl, &d->bl};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        lmnn_tensor_free(*all[i]);
}

/* One block on x (consumed: freed here; out may be where x came from). */
static lm_status block(lmnn_tensor x, lmnn_tensor w, lmnn_tensor b, lmnn_tensor g, lmnn_tensor be,
                       lmnn_tensor m, lmnn_tensor v, lmnn_tensor *out) {
    *out = (lmnn_tensor){0};
    lmnn_conv2d_options co;
    lmnn_conv2d_options_init(&co);
    co.padding[0] = co.padding[1] = co.padding[2] = co.padding[3] = 1;
    co.kernel_size[0] = co.kernel_size[1] = 3;
    lmnn_norm_options no;
    lmnn_norm_options_init(&no);
    no.eps = EPS;
    lmnn_pool2d_options po;
    lmnn_pool2d_options_init(&po);
    po.kernel_size[0] = po.kernel_size[1] = 2;
    lmnn_tensor c = {0}, n = {0}, r = {0};
    lm_status st = lmnn_conv2d(x, w, b, &co, &c);
    lmnn_tensor_free(x);
    if (!st) st = lmnn_batch_norm(c, m, v, g, be, &no, &n);
    lmnn_tensor_free(c);
    if (!st) st = lmnn_relu(n, &r);
    lmnn_tensor_free(n);
    if (!st) st = lmnn_max_pool2d(r, &po, out);
    lmnn_tensor_free(r);
    return st;
}

/* logits (row-major [BATCH, 10]) = the model on the row-major image tensor
 * img [BATCH, 1, 28, 28]. */
static lm_status cnn_forward(const cnn_device *d, lmnn_tensor img, lmnn_tensor *out) {
    lmnn_tensor x = {0}, f = {0};
    lm_status st = lmnn_to_layout(img, LMNN_TILE, &x);
    if (!st) st = block(x, d->w1, d->b1, d->g1, d->be1, d->m1, d->v1, &x);
    if (!st) st = block(x, d->w2, d->b2, d->g2, d->be2, d->m2, d->v2, &x);
    lmnn_shape flat = LMNN_SHAPE(BATCH, FLAT);
    if (!st) st = lmnn_reshape(x, &flat, NULL, &f);
    lmnn_tensor_free(x);
    lmnn_tensor l = {0};
    if (!st) st = lmnn_linear(f, d->wl, d->bl, NULL, &l);
    lmnn_tensor_free(f);
    /* Row-major, so that a capture names it with its shape and format. */
    if (!st) st = lmnn_to_layout(l, LMNN_ROW_MAJOR, out);
    lmnn_tensor_free(l);
    return st;
}

static void images(float *img, uint64_t seed) {
    uint64_t s = seed * 0x2545F4914F6CDD1Dull + 1;
    rand_fill(img, NIN, 0.0f, 1.0f, &s);
}

static lm_status upload_images(lm_device *dev, const float *img, lmnn_tensor *out) {
    lmnn_shape s = LMNN_SHAPE(BATCH, 1, 28, 28);
    return upload(dev, &s, img, LMNN_ROW_MAJOR, out);
}

static lm_status run_eager(lm_device *dev, const cnn_device *d, const float *img, float *got) {
    lmnn_tensor t, y = {0};
    lm_status st = upload_images(dev, img, &t);
    if (!st) st = cnn_forward(d, t, &y);
    if (!st) st = lmnn_to_host(y, got, NOUT * sizeof *got);
    lmnn_tensor_free(t);
    lmnn_tensor_free(y);
    return st;
}

/* ---- tests ---- */

static void test_against_reference(void) {
    cnn_host h;
    cnn_device d;
    cnn_host_init(&h, 1);
    CHECK_OK(cnn_device_init(nn_dev(), &h, &d));
    static float img[NIN];
    float got[NOUT];
    double want[NOUT];
    for (uint64_t seed = 1; seed <= 2; seed++) {
        images(img, seed);
        CHECK_OK(run_eager(nn_dev(), &d, img, got));
        cnn_reference(&h, img, want);
        nn_err e = nn_compare(got, want, NOUT, 1e-2);
        printf("  cnn float32 (images seed %llu): pcc %.8f max_abs %.3g max_rel %.3g\n",
               (unsigned long long)seed, e.pcc, e.max_abs, e.max_rel);
        CHECK_ERR(e, 0.99999, 1e-4, 0);
    }
    cnn_device_free(&d);
    cnn_host_free(&h);
}

static void test_capture_replay(void) {
    lm_device *dev;
    CHECK_OK(lm_device_open(NULL, &dev));
    cnn_host h;
    cnn_device d;
    cnn_host_init(&h, 2);
    CHECK_OK(cnn_device_init(dev, &h, &d));
    static float img[NIN], img2[NIN];
    images(img, 11);
    images(img2, 12);
    float live[NOUT], live2[NOUT], got[NOUT];
    double want[NOUT];
    CHECK_OK(run_eager(dev, &d, img2, live2));

    /* The prepared weights exist before the capture begins: snapshotted. */
    lm_capture_options co;
    lm_capture_options_init(&co);
    CHECK_OK(lm_light_metal_begin_capture(dev, &co));
    lmnn_tensor t, y;
    CHECK_OK(upload_images(dev, img, &t));
    CHECK_OK(lmnn_capture_name(t, "images"));
    CHECK_OK(cnn_forward(&d, t, &y));
    CHECK_OK(lmnn_capture_name(y, "logits"));
    CHECK_OK(lmnn_to_host(y, live, sizeof live));
    lm_binary *bin;
    CHECK_OK(lm_light_metal_end_capture(dev, &bin));
    lmnn_tensor_free(t);
    lmnn_tensor_free(y);
    cnn_reference(&h, img, want);
    CHECK_ERR(nn_compare(live, want, NOUT, 1e-2), 0.99999, 1e-4, 0);
    cnn_device_free(&d);
    cnn_host_free(&h);
    CHECK_OK(lm_device_close(dev));

    lm_replay *r;
    REPLAY_RUN(bin, r);
    CHECK_OK(lm_replay_get_output(r, "logits", got, sizeof got));
    CHECK(!memcmp(got, live, sizeof got));
    CHECK_OK(lm_replay_set_input(r, "images", img2, sizeof img2));
    CHECK_OK(lm_replay_run(r, NULL, NULL, NULL));
    CHECK_OK(lm_replay_get_output(r, "logits", got, sizeof got));
    CHECK(!memcmp(got, live2, sizeof got));
    lm_replay_close(r);
    lm_binary_free(bin);
}

/* The model as one metal trace over cached programs: no cache miss while
 * capturing; replays equal eager, also after new images are written into
 * the input buffer. */
static void test_metal_trace(void) {
    lm_device *dev = nn_dev();
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    cnn_host h;
    cnn_device d;
    cnn_host_init(&h, 3);
    CHECK_OK(cnn_device_init(dev, &h, &d));
    static float img[NIN], img2[NIN];
    images(img, 21);
    images(img2, 22);
    float eager[NOUT], eager2[NOUT], got[NOUT];
    CHECK_OK(run_eager(dev, &d, img2, eager2));
    lmnn_tensor t, y;
    CHECK_OK(upload_images(dev, img, &t));
    CHECK_OK(cnn_forward(&d, t, &y));
    CHECK_OK(lmnn_to_host(y, eager, sizeof eager));
    lmnn_tensor_free(y);
    lmnn_program_cache_stats before, after;
    CHECK_OK(lmnn_program_cache_get_stats(dev, &before));
    uint32_t tid;
    CHECK_OK(lm_begin_trace_capture(cq, &tid));
    CHECK_OK(cnn_forward(&d, t, &y));
    CHECK_OK(lm_end_trace_capture(cq, tid));
    CHECK_OK(lmnn_program_cache_get_stats(dev, &after));
    CHECK_EQ_U64(after.misses, before.misses);
    printf("  trace: %llu ops (cache hits), no misses\n",
           (unsigned long long)(after.hits - before.hits));
    CHECK_OK(lm_replay_trace(cq, tid, true));
    CHECK_OK(lmnn_to_host(y, got, sizeof got));
    CHECK(!memcmp(got, eager, sizeof got));
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(t, &info));
    CHECK_OK(lm_enqueue_write_buffer(cq, info.buffer, img2, true));
    CHECK_OK(lm_replay_trace(cq, tid, true));
    CHECK_OK(lmnn_to_host(y, got, sizeof got));
    CHECK(!memcmp(got, eager2, sizeof got));
    CHECK_OK(lm_release_trace(dev, tid));
    lmnn_tensor_free(y);
    lmnn_tensor_free(t);
    cnn_device_free(&d);
    cnn_host_free(&h);
}

int main(void) {
    TEST_RUN(test_against_reference);
    TEST_RUN(test_capture_replay);
    TEST_RUN(test_metal_trace);
    nn_dev_close();
    return test_summary();
}
