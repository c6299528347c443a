/* Recurrent cells (lmnn_rnn.h) against float64 references: LSTM and GRU,
 * hidden sizes on and off a tile (the columns between gates holding
 * garbage that must not leak), x_gates holding several steps, h' also
 * written into a sequence's output, float32 and bfloat16, one program for
 * every step; and each argument's refusal, which leaves the device as it
 * was. */
#include <string.h>

#include "nn_test.h"

static double sigm(double x) {
    return 1 / (1 + exp(-x));
}

typedef struct cell_case {
    uint32_t b, h, steps; /* batch, hidden, x_gates' steps (0: rank 2) */
    uint32_t step;
    lmnn_dtype dtype;
} cell_case;

/* Gates [rows, gates * hg] with gate k's first h columns from `v` (row-major
 * [rows, gates * h]) and 7.5 between them, where a cell must not look. */
static float *gate_layout(const float *v, uint32_t rows, uint32_t gates, uint32_t h, uint32_t hg) {
    float *g = malloc((size_t)rows * gates * hg * sizeof *g);
    for (uint32_t r = 0; r < rows; r++)
        for (uint32_t k = 0; k < gates; k++)
            for (uint32_t j = 0; j < hg; j++)
                g[((size_t)r * gates + k) * hg + j] =
                    j < h ? v[((size_t)r * gates + k) * h + j] : 7.5f;
    return g;
}

static void run_case(bool lstm, const cell_case *cc) {
    uint32_t G = lstm ? 4 : 3, B = cc->b, H = cc->h, Hg = (H + 31) / 32 * 32;
    uint32_t S = cc->steps ? cc->steps : 1;
    float *xv = nn_rand_floats((size_t)S * B * G * H, -2.5f, 2.5f, 11 + H);
    float *hv = nn_rand_floats((size_t)B * G * H, -2.0f, 2.0f, 12 + H);
    float *sv = nn_rand_floats((size_t)B * H, -1.5f, 1.5f, 13 + H);
    if (cc->dtype == LMNN_BFLOAT16) {
        for (size_t i = 0; i < (size_t)S * B * G * H; i++)
            xv[i] = nn_bf16(xv[i]);
        for (size_t i = 0; i < (size_t)B * G * H; i++)
            hv[i] = nn_bf16(hv[i]);
        for (size_t i = 0; i < (size_t)B * H; i++)
            sv[i] = nn_bf16(sv[i]);
    }
    float *xg = gate_layout(xv, S * B, G, H, Hg), *hg = gate_layout(hv, B, G, H, Hg);
    lmnn_shape xs = cc->steps ? (lmnn_shape){3, {S, B, G * Hg}} : (lmnn_shape){2, {B, G * Hg}};
    lmnn_shape hs = {2, {B, G * Hg}}, ss = {2, {B, H}}, ys = {3, {4, B, H}};
    float *zeros = calloc((size_t)4 * B * H, sizeof *zeros);
    lmnn_tensor x, hgt, st, y, oh, oc = {0};
    CHECK_OK(nn_upload(&xs, xg, cc->dtype, LMNN_TILE, &x));
    CHECK_OK(nn_upload(&hs, hg, cc->dtype, LMNN_TILE, &hgt));
    CHECK_OK(nn_upload(&ss, sv, cc->dtype, LMNN_TILE, &st));
    CHECK_OK(nn_upload(&ys, zeros, cc->dtype, LMNN_TILE, &y));
    lmnn_rnn_cell_options o;
    lmnn_rnn_cell_options_init(&o);
    o.step = cc->step;
    o.steps_out = y;
    if (lstm)
        CHECK_OK(lmnn_lstm_cell(x, hgt, st, &o, &oh, &oc));
    else
        CHECK_OK(lmnn_gru_cell(x, hgt, st, &o, &oh));
    double *wh = malloc((size_t)B * H * sizeof *wh), *wc = malloc((size_t)B * H * sizeof *wc);
    uint32_t xstep = cc->steps ? cc->step : 0;
    for (uint32_t r = 0; r < B; r++)
        for (uint32_t j = 0; j < H; j++) {
            double a[4], hh[4], s = sv[r * H + j];
            for (uint32_t k = 0; k < G; k++) {
                a[k] = xv[(((size_t)xstep * B + r) * G + k) * H + j];
                hh[k] = hv[((size_t)r * G + k) * H + j];
            }
            if (lstm) {
                double i = sigm(a[0] + hh[0]), og = sigm(a[1] + hh[1]), f = sigm(a[2] + hh[2]);
                double g = tanh(a[3] + hh[3]), c = f * s + i * g;
                wc[r * H + j] = c;
                wh[r * H + j] = og * tanh(c);
            } else {
                double z = sigm(a[0] + hh[0]), rr = sigm(a[1] + hh[1]);
                double n = tanh(a[2] + rr * hh[2]);
                wh[r * H + j] = n + z * (s - n);
            }
        }
    bool bf = cc->dtype == LMNN_BFLOAT16;
    double abs_tol = bf ? 1.6e-2 : 2e-6;
    float *got = nn_download(oh);
    CHECK(got != NULL);
    CHECK_ERR(nn_compare(got, wh, (size_t)B * H, 1), 0.9999, abs_tol, 0);
    if (!bf) CHECK(nn_padding_is_zero(oh));
    if (lstm) {
        float *gc = nn_download(oc);
        CHECK_ERR(nn_compare(gc, wc, (size_t)B * H, 1), 0.9999, abs_tol, 0);
        if (!bf) CHECK(nn_padding_is_zero(oc));
        free(gc);
    }
    /* h' went into matrix `step` of y too, bit for bit; the rest is untouched. */
    float *gy = nn_download(y);
    for (uint32_t m = 0; m < 4; m++)
        for (size_t i = 0; i < (size_t)B * H; i++) {
            float want = m == cc->step ? got[i] : 0.0f;
            if (memcmp(&gy[m * B * H + i], &want, sizeof want)) {
                CHECK(!"steps_out differs from h'");
                m = 4;
                break;
            }
        }
    free(gy);
    free(got);
    lmnn_tensor_free(oh);
    if (lstm) lmnn_tensor_free(oc);
    lmnn_tensor_free(x);
    lmnn_tensor_free(hgt);
    lmnn_tensor_free(st);
    lmnn_tensor_free(y);
    free(wh);
    free(wc);
    free(zeros);
    free(xg);
    free(hg);
    free(xv);
    free(hv);
    free(sv);
}

static const cell_case cases[] = {
    {3, 64, 0, 1, LMNN_FLOAT32},  {2, 20, 3, 2, LMNN_FLOAT32},  {33, 40, 2, 0, LMNN_FLOAT32},
    {1, 256, 5, 3, LMNN_FLOAT32}, {4, 48, 2, 1, LMNN_BFLOAT16},
};

static void test_lstm_cell(void) {
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(true, &cases[i]);
}

static void test_gru_cell(void) {
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(false, &cases[i]);
}

/* Every step of a layer launches the one cached program: the step is a
 * launch-time argument, not part of the program. */
static void test_one_program_per_layer(void) {
    lmnn_shape xs = {3, {6, 2, 96}}, hs = {2, {2, 96}}, ss = {2, {2, 32}};
    float *v = nn_rand_floats(6 * 2 * 96, -1, 1, 5);
    lmnn_tensor x, hg, h;
    CHECK_OK(nn_upload(&xs, v, LMNN_FLOAT32, LMNN_TILE, &x));
    CHECK_OK(nn_upload(&hs, v, LMNN_FLOAT32, LMNN_TILE, &hg));
    CHECK_OK(nn_upload(&ss, v, LMNN_FLOAT32, LMNN_TILE, &h));
    lmnn_rnn_cell_options o;
    lmnn_rnn_cell_options_init(&o);
    lmnn_program_cache_stats before, after;
    for (uint32_t t = 0; t < 6; t++) {
        lmnn_tensor nh;
        o.step = t;
        CHECK_OK(lmnn_gru_cell(x, hg, h, &o, &nh));
        if (t == 0) CHECK_OK(lmnn_program_cache_get_stats(nn_dev(), &before));
        lmnn_tensor_free(h);
        h = nh;
    }
    CHECK_OK(lmnn_program_cache_get_stats(nn_dev(), &after));
    CHECK_EQ_U64(after.entries, before.entries);
    CHECK_EQ_U64(after.hits - before.hits, 5);
    lmnn_tensor_free(x);
    lmnn_tensor_free(hg);
    lmnn_tensor_free(h);
    free(v);
}

static void test_cell_errors(void) {
    float *v = nn_rand_floats(3 * 2 * 128, -1, 1, 9);
    lmnn_shape xs = {3, {3, 2, 128}}, hs = {2, {2, 128}}, ss = {2, {2, 20}};
    lmnn_shape bad = {2, {2, 80}}, s3 = {3, {1, 2, 20}}, ys = {3, {2, 2, 20}}, yw = {2, {2, 21}};
    lmnn_tensor x, hg, c, b, c3, y, yb, ywt, rm;
    CHECK_OK(nn_upload(&xs, v, LMNN_FLOAT32, LMNN_TILE, &x));
    CHECK_OK(nn_upload(&hs, v, LMNN_FLOAT32, LMNN_TILE, &hg));
    CHECK_OK(nn_upload(&ss, v, LMNN_FLOAT32, LMNN_TILE, &c));
    CHECK_OK(nn_upload(&bad, v, LMNN_FLOAT32, LMNN_TILE, &b));
    CHECK_OK(nn_upload(&s3, v, LMNN_FLOAT32, LMNN_TILE, &c3));
    CHECK_OK(nn_upload(&ys, v, LMNN_FLOAT32, LMNN_TILE, &y));
    CHECK_OK(nn_upload(&ys, v, LMNN_BFLOAT16, LMNN_TILE, &yb));
    CHECK_OK(nn_upload(&yw, v, LMNN_FLOAT32, LMNN_TILE, &ywt));
    CHECK_OK(nn_upload(&ss, v, LMNN_FLOAT32, LMNN_ROW_MAJOR, &rm));
    uint64_t dram0 = 0, l10 = 0, dram1 = 0, l11 = 0;
    CHECK(nn_memory_now(&dram0, &l10));
    lmnn_tensor oh, oc;
    lmnn_rnn_cell_options o;
    lmnn_rnn_cell_options_init(&o);
    CHECK_FAILS(lmnn_lstm_cell(x, b, c, NULL, &oh, &oc), LM_ERR_INVALID_ARGUMENT,
                "lmnn_lstm_cell: h_gates: shape [2, 80] is not [2, 4 * 32] for c's [2, 20] "
                "(each gate starts on a tile)");
    CHECK_FAILS(lmnn_lstm_cell(b, hg, c, NULL, &oh, &oc), LM_ERR_INVALID_ARGUMENT,
                "lmnn_lstm_cell: x_gates: shape [2, 80] is not [2, 4 * 32] or [S, 2, 4 * 32] for "
                "c's [2, 20]");
    CHECK_FAILS(lmnn_gru_cell(x, hg, c, NULL, &oh), LM_ERR_INVALID_ARGUMENT,
                "lmnn_gru_cell: h_gates: shape [2, 128] is not [2, 3 * 32] for h's [2, 20]");
    CHECK_FAILS(lmnn_gru_cell(x, hg, c3, NULL, &oh), LM_ERR_INVALID_ARGUMENT,
                "lmnn_gru_cell: h: expected [B, H], given shape [1, 2, 20]");
    o.step = 3;
    CHECK_FAILS(lmnn_lstm_cell(x, hg, c, &o, &oh, &oc), LM_ERR_INVALID_ARGUMENT,
                "lmnn_lstm_cell: step: 3 is outside x_gates' 3 steps (shape [3, 2, 128])");
    o.step = 2;
    o.steps_out = y;
    CHECK_FAILS(lmnn_lstm_cell(x, hg, c, &o, &oh, &oc), LM_ERR_INVALID_ARGUMENT,
                "lmnn_lstm_cell: step: 2 is outside steps_out's 2 matrices (shape [2, 2, 20])");
    o.step = 1;
    o.steps_out = ywt;
    CHECK_FAILS(lmnn_lstm_cell(x, hg, c, &o, &oh, &oc), LM_ERR_INVALID_ARGUMENT,
                "lmnn_lstm_cell: steps_out: shape [2, 21] does not end in c's [2, 20]");
    o.steps_out = yb;
    CHECK_FAILS(lmnn_lstm_cell(x, hg, c, &o, &oh, &oc), LM_ERR_INVALID_ARGUMENT,
                "lmnn_lstm_cell: steps_out: dtype bfloat16 differs from the new state's float32");
    o.steps_out = c;
    o.step = 0;
    CHECK_FAILS(lmnn_lstm_cell(x, hg, c, &o, &oh, &oc), LM_ERR_INVALID_ARGUMENT,
                "lmnn_lstm_cell: steps_out: is also an input");
    o.steps_out = (lmnn_tensor){0};
    CHECK_FAILS(lmnn_lstm_cell(x, hg, rm, &o, &oh, &oc), LM_ERR_INVALID_ARGUMENT,
                "lmnn_lstm_cell: c:");
    CHECK_FAILS(lmnn_lstm_cell(x, hg, c, &o, &oh, NULL), LM_ERR_INVALID_ARGUMENT,
                "lmnn_lstm_cell: out_c is NULL");
    CHECK_FAILS(lmnn_gru_cell(x, hg, c, &o, NULL), LM_ERR_INVALID_ARGUMENT,
                "lmnn_gru_cell: out_h is NULL");
    CHECK_FAILS(lmnn_gru_cell(x, (lmnn_tensor){0}, c, &o, &oh), LM_ERR_INVALID_HANDLE,
                "lmnn_gru_cell: h_gates:");
    o.output.dtype = LMNN_UINT32;
    CHECK_FAILS(lmnn_lstm_cell(x, hg, c, &o, &oh, &oc), LM_ERR_INVALID_ARGUMENT,
                "lmnn_lstm_cell: output.dtype: expected a float dtype, given uint32");
    CHECK(nn_memory_now(&dram1, &l11));
    CHECK_EQ_U64(dram1, dram0);
    CHECK_EQ_U64(l11, l10);
    lmnn_tensor all[] = {x, hg, c, b, c3, y, yb, ywt, rm};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        lmnn_tensor_free(all[i]);
    free(v);
}

int main(void) {
    TEST_RUN(test_lstm_cell);
    TEST_RUN(test_gru_cell);
    TEST_RUN(test_one_program_per_layer);
    TEST_RUN(test_cell_errors);
    nn_dev_close();
    return test_summary();
}
