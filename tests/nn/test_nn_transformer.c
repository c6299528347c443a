/* A small transformer encoder (nn_encoder.h: embedding + positions, 2 layers
 * of multi-head self-attention and a GELU MLP, each with a residual and a
 * layer norm) end to end against its float64 host reference; then captured
 * with Light Metal and replayed bit-identically, with another token input
 * too; then run as one metal trace over cached programs with new input data.
 *
 * Bound (float32): each op is within a few float32 ulps of its exact result
 * on data of order 1 (matmul's dot products of at most 128 terms, softmax
 * about 1e-6, layer norm 1e-5 absolute at most: lmnn_matmul.h,
 * lmnn_norm.h); the layer norms divide by the standard deviation of their
 * input (here about 1), so the error does not grow through the layers.
 * Measured: max abs 7.7e-7 on outputs of order 1 (layer-norm outputs, |y| up
 * to about 3); asserted 1e-5 absolute and PCC >= 0.999999. */
#include "lm_test_replay.h"
#include "nn_encoder.h"
#include "nn_test.h"

static const enc_config CFG = {
    .vocab = 100, .seq = 20, .d_model = 64, .heads = 4, .d_ff = 128, .layers = 2, .batch = 2};
#define NTOK (2 * 20)
#define NOUT (NTOK * 64)

static void token_ids(uint32_t *ids, uint64_t seed) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 3;
    for (int i = 0; i < NTOK; i++)
        ids[i] = nn_rand_u32(&s) % CFG.vocab;
}

static lm_status upload_ids(lm_device *dev, const uint32_t *ids, lmnn_tensor *out) {
    lmnn_shape s = LMNN_SHAPE(CFG.batch, CFG.seq);
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = LMNN_UINT32;
    o.layout = LMNN_ROW_MAJOR;
    return lmnn_from_host(dev, &s, ids, NTOK * sizeof *ids, &o, out);
}

/* The model on `ids`, eagerly, into got (NOUT floats). */
static lm_status run_eager(lm_device *dev, const enc_device *d, const uint32_t *ids, float *got) {
    lmnn_tensor t, y = {0};
    lm_status st = upload_ids(dev, ids, &t);
    if (!st) st = enc_forward(d, t, (lmnn_tensor){0}, &y);
    if (!st) st = lmnn_to_host(y, got, NOUT * sizeof *got);
    lmnn_tensor_free(t);
    lmnn_tensor_free(y);
    return st;
}

static void test_against_reference(void) {
    enc_host h;
    enc_device d;
    enc_host_init(&h, &CFG, 1);
    CHECK_OK(enc_device_init(nn_dev(), &h, &d));
    printf("  gelu: %s\n", lmnn_unary_op_name(d.gelu));
    uint32_t ids[NTOK];
    float got[NOUT];
    double want[NOUT];
    for (uint64_t seed = 1; seed <= 2; seed++) {
        token_ids(ids, seed);
        CHECK_OK(run_eager(nn_dev(), &d, ids, got));
        enc_reference(&h, d.gelu, ids, NULL, want);
        nn_err e = nn_compare(got, want, NOUT, 1e-2);
        printf("  encoder float32 (ids seed %llu): pcc %.8f max_abs %.3g max_rel %.3g\n",
               (unsigned long long)seed, e.pcc, e.max_abs, e.max_rel);
        CHECK_ERR(e, 0.999999, 1e-5, 0);
    }
    /* Padded batches: element 1 has 13 real tokens, its other keys masked
     * by an additive [B, 1, 1, S] mask. */
    const uint32_t lengths[2] = {20, 13};
    float mask[2 * 20];
    for (int i = 0; i < 2 * 20; i++)
        mask[i] = (uint32_t)(i % 20) < lengths[i / 20] ? 0.0f : -INFINITY;
    lmnn_shape ms = LMNN_SHAPE(2, 1, 1, 20);
    lmnn_tensor tm, t, y;
    CHECK_OK(nn_upload(&ms, mask, LMNN_FLOAT32, LMNN_TILE, &tm));
    token_ids(ids, 3);
    CHECK_OK(upload_ids(nn_dev(), ids, &t));
    CHECK_OK(enc_forward(&d, t, tm, &y));
    CHECK_OK(lmnn_to_host(y, got, sizeof got));
    enc_reference(&h, d.gelu, ids, lengths, want);
    nn_err e = nn_compare(got, want, NOUT, 1e-2);
    printf("  encoder float32, key mask: pcc %.8f max_abs %.3g max_rel %.3g\n", e.pcc, e.max_abs,
           e.max_rel);
    CHECK_ERR(e, 0.999999, 1e-5, 0);
    lmnn_tensor_free(tm), lmnn_tensor_free(t), lmnn_tensor_free(y);
    enc_device_free(&d);
    enc_host_free(&h);
}

static void test_capture_replay(void) {
    lm_device *dev;
    CHECK_OK(lm_device_open(NULL, &dev));
    enc_host h;
    enc_device d;
    enc_host_init(&h, &CFG, 2);
    CHECK_OK(enc_device_init(dev, &h, &d));
    uint32_t ids[NTOK], ids2[NTOK];
    token_ids(ids, 11);
    token_ids(ids2, 12);
    static float live[NOUT], live2[NOUT], got[NOUT];
    double want[NOUT];
    /* The second input's results, live, to compare the replay with. */
    lmnn_tensor t, y;
    CHECK_OK(upload_ids(dev, ids2, &t));
    CHECK_OK(enc_forward(&d, t, (lmnn_tensor){0}, &y));
    CHECK_OK(lmnn_to_host(y, live2, sizeof live2));
    lmnn_tensor_free(t);
    lmnn_tensor_free(y);

    /* The weights exist before the capture begins: they are snapshotted. */
    lm_capture_options co;
    lm_capture_options_init(&co);
    CHECK_OK(lm_light_metal_begin_capture(dev, &co));
    CHECK_OK(upload_ids(dev, ids, &t));
    CHECK_OK(lmnn_capture_name(t, "ids"));
    CHECK_OK(enc_forward(&d, t, (lmnn_tensor){0}, &y));
    CHECK_OK(lmnn_capture_name(y, "out"));
    CHECK_OK(lmnn_to_host(y, live, sizeof live));
    lm_binary *bin;
    CHECK_OK(lm_light_metal_end_capture(dev, &bin));
    lmnn_tensor_free(t);
    lmnn_tensor_free(y);
    enc_reference(&h, d.gelu, ids, NULL, want);
    CHECK_ERR(nn_compare(live, want, NOUT, 1e-2), 0.999999, 1e-5, 0);
    enc_device_free(&d);
    enc_host_free(&h);
    CHECK_OK(lm_device_close(dev));

    lm_replay *r;
    REPLAY_RUN(bin, r);
    CHECK_OK(lm_replay_get_output(r, "out", got, sizeof got));
    CHECK(!memcmp(got, live, sizeof got));
    CHECK_OK(lm_replay_set_input(r, "ids", ids2, sizeof ids2));
    CHECK_OK(lm_replay_run(r, NULL, NULL, NULL));
    CHECK_OK(lm_replay_get_output(r, "out", got, sizeof got));
    CHECK(!memcmp(got, live2, sizeof got));
    lm_replay_close(r);
    lm_binary_free(bin);
}

/* The model as one metal trace: warmed up eagerly (every program built),
 * captured with no cache miss, replayed; new tokens written into the input
 * buffer replay to the eager results for them; likewise with a key mask as
 * a second input. */
static void test_metal_trace(void) {
    lm_device *dev = nn_dev();
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    enc_host h;
    enc_device d;
    enc_host_init(&h, &CFG, 3);
    CHECK_OK(enc_device_init(dev, &h, &d));
    uint32_t ids[NTOK], ids2[NTOK];
    token_ids(ids, 21);
    token_ids(ids2, 22);
    static float eager[NOUT], eager2[NOUT], got[NOUT];
    CHECK_OK(run_eager(dev, &d, ids2, eager2));
    lmnn_tensor t, y;
    CHECK_OK(upload_ids(dev, ids, &t));
    CHECK_OK(enc_forward(&d, t, (lmnn_tensor){0}, &y));
    CHECK_OK(lmnn_to_host(y, eager, sizeof eager));
    lmnn_tensor_free(y);
    lmnn_program_cache_stats before, after;
    CHECK_OK(lmnn_program_cache_get_stats(dev, &before));

    uint32_t tid;
    CHECK_OK(lm_begin_trace_capture(cq, &tid));
    CHECK_OK(enc_forward(&d, t, (lmnn_tensor){0}, &y));
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
    CHECK_OK(lm_enqueue_write_buffer(cq, info.buffer, ids2, true));
    CHECK_OK(lm_replay_trace(cq, tid, true));
    CHECK_OK(lmnn_to_host(y, got, sizeof got));
    CHECK(!memcmp(got, eager2, sizeof got));
    /* And back. */
    CHECK_OK(lm_enqueue_write_buffer(cq, info.buffer, ids, true));
    CHECK_OK(lm_replay_trace(cq, tid, false));
    CHECK_OK(lmnn_to_host(y, got, sizeof got));
    CHECK(!memcmp(got, eager, sizeof got));
    CHECK_OK(lm_release_trace(dev, tid));
    lmnn_tensor_free(y);

    /* With a key mask as a second input (row-major, tilized in the step):
     * new lengths written into it replay to the eager results too. */
    float m1[NTOK], m2[NTOK];
    for (int i = 0; i < NTOK; i++) {
        m1[i] = i % 20 < (i < 20 ? 20 : 13) ? 0.0f : -INFINITY;
        m2[i] = i % 20 < (i < 20 ? 7 : 20) ? 0.0f : -INFINITY;
    }
    lmnn_shape ms = LMNN_SHAPE(2, 1, 1, 20);
    lmnn_tensor tm, tm2;
    CHECK_OK(nn_upload(&ms, m2, LMNN_FLOAT32, LMNN_ROW_MAJOR, &tm2));
    CHECK_OK(enc_forward(&d, t, tm2, &y));
    CHECK_OK(lmnn_to_host(y, eager2, sizeof eager2));
    lmnn_tensor_free(y);
    lmnn_tensor_free(tm2);
    CHECK_OK(nn_upload(&ms, m1, LMNN_FLOAT32, LMNN_ROW_MAJOR, &tm));
    CHECK_OK(enc_forward(&d, t, tm, &y));
    CHECK_OK(lmnn_to_host(y, eager, sizeof eager));
    lmnn_tensor_free(y);
    CHECK_OK(lmnn_program_cache_get_stats(dev, &before));
    CHECK_OK(lm_begin_trace_capture(cq, &tid));
    CHECK_OK(enc_forward(&d, t, tm, &y));
    CHECK_OK(lm_end_trace_capture(cq, tid));
    CHECK_OK(lmnn_program_cache_get_stats(dev, &after));
    CHECK_EQ_U64(after.misses, before.misses);
    CHECK_OK(lm_replay_trace(cq, tid, true));
    CHECK_OK(lmnn_to_host(y, got, sizeof got));
    CHECK(!memcmp(got, eager, sizeof got));
    CHECK_OK(lmnn_tensor_get_info(tm, &info));
    CHECK_OK(lm_enqueue_write_buffer(cq, info.buffer, m2, true));
    CHECK_OK(lm_replay_trace(cq, tid, true));
    CHECK_OK(lmnn_to_host(y, got, sizeof got));
    CHECK(!memcmp(got, eager2, sizeof got));
    CHECK(memcmp(eager, eager2, sizeof got) != 0);
    CHECK_OK(lm_release_trace(dev, tid));
    lmnn_tensor_free(tm);
    lmnn_tensor_free(t);
    lmnn_tensor_free(y);
    enc_device_free(&d);
    enc_host_free(&h);
}

int main(void) {
    TEST_RUN(test_against_reference);
    TEST_RUN(test_capture_replay);
    TEST_RUN(test_metal_trace);
    nn_dev_close();
    return test_summary();
}
