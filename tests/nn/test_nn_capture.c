/* Ops under Light Metal capture and metal traces: a small model captured
 * from the op library replays bit-identically with no compiler, with its
 * input replaced too; the same model as one metal trace over cached programs
 * gives the eager results. */
#include "lm_test_replay.h"
#include "nn_test.h"

#define ROWS 37
#define COLS 50

/* y = relu6(exp(x) * 0.5 clamp) ..., here: to_layout -> exp -> clamp ->
 * silu -> to_layout; returns the row-major output tensor. */
static lm_status model(lmnn_tensor x_rm, lmnn_tensor *out) {
    lmnn_tensor t[4] = {{0}};
    lm_status st = lmnn_to_layout(x_rm, LMNN_TILE, &t[0]);
    if (!st) st = lmnn_exp(t[0], &t[1]);
    if (!st) st = lmnn_clamp(t[1], 0.25, 3.0, &t[2]);
    if (!st) st = lmnn_silu(t[2], &t[3]);
    if (!st) st = lmnn_to_layout(t[3], LMNN_ROW_MAJOR, out);
    for (int i = 0; i < 4; i++)
        lmnn_tensor_free(t[i]);
    return st;
}

static void test_capture_replay(void) {
    lm_device *dev;
    CHECK_OK(lm_device_open(NULL, &dev));
    float *x = nn_rand_floats(ROWS * COLS, -2, 2, 1), *x2 = nn_rand_floats(ROWS * COLS, -2, 2, 2);
    float live[ROWS * COLS], live2[ROWS * COLS], got[ROWS * COLS];
    lmnn_shape s = LMNN_SHAPE(ROWS, COLS);
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = LMNN_FLOAT32;
    o.layout = LMNN_ROW_MAJOR;
    /* The results with the second input, computed live, to compare with. */
    lmnn_tensor xin, y;
    CHECK_OK(lmnn_from_host(dev, &s, x2, sizeof live, &o, &xin));
    CHECK_OK(model(xin, &y));
    CHECK_OK(lmnn_to_host(y, live2, sizeof live2));
    lmnn_tensor_free(xin);
    lmnn_tensor_free(y);

    lm_capture_options co;
    lm_capture_options_init(&co);
    CHECK_OK(lm_light_metal_begin_capture(dev, &co));
    CHECK_OK(lmnn_from_host(dev, &s, x, sizeof live, &o, &xin));
    CHECK_OK(lmnn_capture_name(xin, "x"));
    CHECK_OK(model(xin, &y));
    CHECK_OK(lmnn_capture_name(y, "y"));
    CHECK_OK(lmnn_to_host(y, live, sizeof live));
    lm_binary *bin;
    CHECK_OK(lm_light_metal_end_capture(dev, &bin));
    lmnn_tensor_free(xin);
    lmnn_tensor_free(y);
    CHECK_OK(lm_device_close(dev));

    lm_replay *r;
    REPLAY_RUN(bin, r);
    lm_replay_buffer_info info;
    CHECK_OK(lm_replay_buffer_info_at(r, 0, &info));
    CHECK(info.rank == 2 && info.shape[0] == ROWS && info.shape[1] == COLS);
    CHECK(info.format == LM_DATA_FORMAT_FLOAT32);
    CHECK_OK(lm_replay_get_output(r, "y", got, sizeof got));
    CHECK(!memcmp(got, live, sizeof got));
    CHECK_OK(lm_replay_set_input(r, "x", x2, sizeof live));
    CHECK_OK(lm_replay_run(r, NULL, NULL, NULL));
    CHECK_OK(lm_replay_get_output(r, "y", got, sizeof got));
    CHECK(!memcmp(got, live2, sizeof got));
    lm_replay_close(r);
    lm_binary_free(bin);
    free(x);
    free(x2);
}

/* Views under capture: the input x is read through a view (the handle x
 * freed first: the buffer goes with the view), the result is a view of a
 * tile tensor; naming a view of a named buffer is refused with the cause,
 * naming a clone of it works. Replays with a new input as computed live. */
static void test_capture_views(void) {
    lm_device *dev;
    CHECK_OK(lm_device_open(NULL, &dev));
    float *x = nn_rand_floats(ROWS * COLS, -2, 2, 5), *x2 = nn_rand_floats(ROWS * COLS, -2, 2, 6);
    float want[ROWS * COLS], got[ROWS * COLS];
    for (int i = 0; i < ROWS * COLS; i++)
        want[i] = x2[i] * x2[i];
    lmnn_shape s = LMNN_SHAPE(ROWS, COLS), s3 = LMNN_SHAPE(1, ROWS, COLS);
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = LMNN_FLOAT32;
    o.layout = LMNN_ROW_MAJOR;
    lm_capture_options co;
    lm_capture_options_init(&co);
    CHECK_OK(lm_light_metal_begin_capture(dev, &co));
    lmnn_tensor xin, xv, xt, sq, sqv, y, yc;
    CHECK_OK(lmnn_from_host(dev, &s, x, sizeof got, &o, &xin));
    CHECK_OK(lmnn_capture_name(xin, "x"));
    CHECK_OK(lmnn_view(xin, &s3, &xv));
    CHECK_OK(lmnn_tensor_free(xin));
    CHECK_OK(lmnn_to_layout(xv, LMNN_TILE, &xt));
    CHECK_OK(lmnn_tensor_free(xv));
    CHECK_OK(lmnn_mul(xt, xt, &sq));
    CHECK_OK(lmnn_reshape(sq, &s, NULL, &sqv)); /* [1, R, C] -> [R, C]: a view */
    CHECK_OK(lmnn_tensor_free(sq));
    CHECK_OK(lmnn_to_layout(sqv, LMNN_ROW_MAJOR, &y));
    CHECK_OK(lmnn_capture_name(y, "y"));
    CHECK_OK(lmnn_view(y, &s3, &yc));
    CHECK_FAILS(lmnn_capture_name(yc, "y3"), LM_ERR_INVALID_ARGUMENT,
                "is already named 'y' (asked for 'y3') (the tensor shares its buffer with "
                "another, a view made by lmnn_view or lmnn_reshape: name an lmnn_clone of it)");
    lmnn_tensor y3;
    CHECK_OK(lmnn_clone(yc, NULL, &y3));
    CHECK_OK(lmnn_capture_name(y3, "y3"));
    lm_binary *bin;
    CHECK_OK(lm_light_metal_end_capture(dev, &bin));
    lmnn_tensor all[] = {xt, sqv, y, yc, y3};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        CHECK_OK(lmnn_tensor_free(all[i]));
    CHECK_OK(lm_device_close(dev));

    lm_replay *r;
    REPLAY_RUN(bin, r);
    CHECK_OK(lm_replay_set_input(r, "x", x2, sizeof got));
    CHECK_OK(lm_replay_run(r, NULL, NULL, NULL));
    CHECK_OK(lm_replay_get_output(r, "y", got, sizeof got));
    for (int i = 0; i < ROWS * COLS; i++)
        CHECK(got[i] == want[i]);
    memset(got, 0, sizeof got);
    CHECK_OK(lm_replay_get_output(r, "y3", got, sizeof got));
    for (int i = 0; i < ROWS * COLS; i++)
        CHECK(got[i] == want[i]);
    lm_replay_close(r);
    lm_binary_free(bin);
    free(x);
    free(x2);
}

/* The model as one metal trace: warmed up eagerly (programs compiled and
 * cached), captured once, replayed with new input data. */
static void test_metal_trace(void) {
    lm_device *dev = nn_dev();
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    float *x = nn_rand_floats(ROWS * COLS, -2, 2, 3), *x2 = nn_rand_floats(ROWS * COLS, -2, 2, 4);
    float eager[ROWS * COLS], eager2[ROWS * COLS], got[ROWS * COLS];
    lmnn_shape s = LMNN_SHAPE(ROWS, COLS);
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = LMNN_BFLOAT16;
    o.layout = LMNN_ROW_MAJOR;
    lmnn_tensor xin, y, y2;
    CHECK_OK(lmnn_from_host(dev, &s, x2, sizeof got, &o, &xin));
    CHECK_OK(model(xin, &y));
    CHECK_OK(lmnn_to_host(y, eager2, sizeof eager2));
    lmnn_tensor_free(xin);
    lmnn_tensor_free(y);
    CHECK_OK(lmnn_from_host(dev, &s, x, sizeof got, &o, &xin));
    CHECK_OK(model(xin, &y));
    CHECK_OK(lmnn_to_host(y, eager, sizeof eager));
    lmnn_program_cache_stats before, after;
    CHECK_OK(lmnn_program_cache_get_stats(dev, &before));

    uint32_t tid;
    CHECK_OK(lm_begin_trace_capture(cq, &tid));
    CHECK_OK(model(xin, &y2));
    CHECK_OK(lm_end_trace_capture(cq, tid));
    CHECK_OK(lmnn_program_cache_get_stats(dev, &after));
    CHECK_EQ_U64(after.misses, before.misses); /* every op a cache hit */
    CHECK_OK(lm_replay_trace(cq, tid, true));
    CHECK_OK(lmnn_to_host(y2, got, sizeof got));
    CHECK(!memcmp(got, eager, sizeof got));
    /* New input data, the same trace. */
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(xin, &info));
    uint16_t half[ROWS * COLS];
    CHECK_OK(lm_float_to_bfloat16(x2, half, ROWS * COLS));
    CHECK_OK(lm_enqueue_write_buffer(cq, info.buffer, half, true));
    CHECK_OK(lm_replay_trace(cq, tid, true));
    CHECK_OK(lmnn_to_host(y2, got, sizeof got));
    CHECK(!memcmp(got, eager2, sizeof got));
    CHECK_OK(lm_release_trace(dev, tid));
    lmnn_tensor_free(xin);
    lmnn_tensor_free(y);
    lmnn_tensor_free(y2);
    free(x);
    free(x2);
}

/* Tiles that would be mostly padding (a column, a row vector of many
 * elements) are written as rows and tilized on the device, so a capture
 * stores the data, not 32 times it: four such tensors of 20,000 elements
 * (float32, bfloat16 and bfloat8_b columns, an int32 row) make a binary far
 * smaller than their tiles (2.5 MB each), with the values as uploaded, and
 * the column replays as it was captured. */
static void test_capture_sparse_tiles(void) {
    enum { N = 20000 };
    lm_device *dev;
    CHECK_OK(lm_device_open(NULL, &dev));
    float *x = nn_rand_floats(N, -3, 3, 11), got[N];
    int32_t ints[N], got_i[N];
    for (int i = 0; i < N; i++)
        ints[i] = i * 37 - 5000;
    lmnn_shape col = LMNN_SHAPE(N, 1), row = LMNN_SHAPE(1, N), dense = LMNN_SHAPE(N / 32, 32);
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    lm_capture_options co;
    lm_capture_options_init(&co);
    CHECK_OK(lm_light_metal_begin_capture(dev, &co));
    lmnn_tensor t32, t16, t8, ti, d16, y;
    o.dtype = LMNN_FLOAT32;
    CHECK_OK(lmnn_from_host(dev, &col, x, sizeof got, &o, &t32));
    o.dtype = LMNN_INT32;
    CHECK_OK(lmnn_from_host(dev, &row, ints, sizeof ints, &o, &ti));
    o.dtype = LMNN_BFLOAT16;
    CHECK_OK(lmnn_from_host(dev, &col, x, sizeof got, &o, &t16));
    CHECK_OK(lmnn_from_host(dev, &dense, x, sizeof got, &o, &d16)); /* tiled on the host */
    o.dtype = LMNN_BFLOAT8_B;
    CHECK_OK(lmnn_from_host(dev, &col, x, sizeof got, &o, &t8));
    CHECK_OK(lmnn_to_layout(t32, LMNN_ROW_MAJOR, &y));
    CHECK_OK(lmnn_capture_name(y, "y"));
    CHECK_OK(lmnn_to_host(y, got, sizeof got));
    CHECK(!memcmp(got, x, sizeof got));
    CHECK_OK(lmnn_to_host(ti, got_i, sizeof got_i));
    CHECK(!memcmp(got_i, ints, sizeof ints));
    float *g16 = nn_download(t16), *h16 = nn_download(d16), *g8 = nn_download(t8);
    CHECK(g16 && h16 && g8 && !memcmp(g16, h16, sizeof got)); /* the host's bfloat16 */
    for (int i = 0; g8 && i < N; i++) /* a column's shared exponent is its own */
        CHECK(fabsf(g8[i] - x[i]) <= fabsf(x[i]) / 64);
    CHECK(nn_padding_is_zero(t32));
    lm_binary *bin;
    CHECK_OK(lm_light_metal_end_capture(dev, &bin));
    uint64_t size = 0;
    CHECK_OK(lm_binary_size(bin, &size));
    CHECK(size < 1024 * 1024);
    lmnn_tensor all[] = {t32, t16, t8, ti, d16, y};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        CHECK_OK(lmnn_tensor_free(all[i]));
    CHECK_OK(lm_device_close(dev));

    lm_replay *r;
    REPLAY_RUN(bin, r);
    memset(got, 0, sizeof got);
    CHECK_OK(lm_replay_get_output(r, "y", got, sizeof got));
    CHECK(!memcmp(got, x, sizeof got));
    lm_replay_close(r);
    lm_binary_free(bin);
    free(x);
    free(g16);
    free(h16);
    free(g8);
}

int main(void) {
    TEST_RUN(test_capture_replay);
    TEST_RUN(test_capture_sparse_tiles);
    TEST_RUN(test_capture_views);
    TEST_RUN(test_metal_trace);
    nn_dev_close();
    return test_summary();
}
