/* Non-maximum suppression (lmnn_nms) against a greedy host reference: random
 * boxes' overlap tables with real suppression and score ties, float32,
 * bfloat16 and bfloat8_b inputs in both layouts (mixed too), DRAM and L1,
 * thresholds that no dtype represents, NaN, infinite and signed-zero scores
 * and overlap entries, max_per_class from 1 to past the box count, classes
 * that keep nothing, more output rows than the packing ring holds, the
 * program cache, no leftover buffers, and every error message. */
#include <stdio.h>

#include "nn_test.h"

/* ---- host data ---- */

/* Which dtypes, layouts and memory the inputs take (in_mem 0: DRAM). */
typedef struct io {
    lmnn_dtype sd;
    lmnn_layout sl;
    lmnn_dtype od;
    lmnn_layout ol;
    lm_buffer_type in_mem;
} io;

static const io f32_tile = {LMNN_FLOAT32, LMNN_TILE, LMNN_FLOAT32, LMNN_TILE, 0};
static const io f32_rm = {LMNN_FLOAT32, LMNN_ROW_MAJOR, LMNN_FLOAT32, LMNN_ROW_MAJOR, 0};

static const char *io_name(io c, char *buf, size_t size) {
    snprintf(buf, size, "scores %s %s, overlaps %s %s%s", lmnn_dtype_name(c.sd),
             lmnn_layout_name(c.sl), lmnn_dtype_name(c.od), lmnn_layout_name(c.ol),
             c.in_mem == LM_BUFFER_L1 ? ", in L1" : "");
    return buf;
}

static lm_status upload(const lmnn_shape *s, const float *data, lmnn_dtype dt, lmnn_layout lay,
                        lm_buffer_type mem, lmnn_tensor *out) {
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = dt;
    o.layout = lay;
    if (mem) o.memory = (lmnn_memory_config){.type = mem, .layout = LM_BUFFER_INTERLEAVED};
    return lmnn_from_host(nn_dev(), s, data, lmnn_shape_volume(s) * sizeof(float), &o, out);
}

/* n scores of `levels` evenly spaced values in [0, 1): many ties, every
 * value exact in bfloat16 and bfloat8_b (levels a power of 2 up to 64). */
static float *make_scores(size_t n, uint32_t levels, uint64_t seed) {
    float *v = malloc(n * sizeof *v);
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 3;
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(nn_rand_u32(&s) % levels) / (float)levels;
    return v;
}

/* overlaps [B, N, N] from N random boxes per batch entry: 1 where two boxes'
 * IoU is above iou (a box overlaps itself), else 0; symmetric. With
 * `decorate`, the nonzero entries become 1, 0.5, -2, inf or NaN and some
 * zeros -0 (all count as what they are: nonzero, or zero). */
static float *make_overlaps(uint32_t B, uint32_t N, double extent, double min_side, double max_side,
                            double iou, int decorate, uint64_t seed) {
    float *o = malloc((size_t)B * N * N * sizeof *o);
    double *bx = malloc((size_t)N * 4 * sizeof *bx);
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 11;
    static const float nonzero[] = {1.0f, 0.5f, -2.0f, INFINITY, NAN};
    for (uint32_t b = 0; b < B; b++) {
        for (uint32_t i = 0; i < N; i++) {
            double x = extent * (nn_rand_u32(&s) % 10000) / 10000.0;
            double y = extent * (nn_rand_u32(&s) % 10000) / 10000.0;
            double w = min_side + (max_side - min_side) * (nn_rand_u32(&s) % 10000) / 10000.0;
            double h = min_side + (max_side - min_side) * (nn_rand_u32(&s) % 10000) / 10000.0;
            bx[i * 4] = x, bx[i * 4 + 1] = y, bx[i * 4 + 2] = x + w, bx[i * 4 + 3] = y + h;
        }
        for (uint32_t i = 0; i < N; i++)
            for (uint32_t j = 0; j < N; j++) {
                const double *p = bx + i * 4, *q = bx + j * 4;
                double iw = fmin(p[2], q[2]) - fmax(p[0], q[0]);
                double ih = fmin(p[3], q[3]) - fmax(p[1], q[1]);
                double inter = iw > 0 && ih > 0 ? iw * ih : 0;
                double uni = (p[2] - p[0]) * (p[3] - p[1]) + (q[2] - q[0]) * (q[3] - q[1]) - inter;
                int hit = inter / uni > iou;
                uint32_t r = nn_rand_u32(&s);
                float v = hit ? 1.0f : 0.0f;
                if (decorate) v = hit ? nonzero[r % 5] : (r & 1 ? -0.0f : 0.0f);
                o[((size_t)b * N + i) * N + j] = v;
            }
    }
    free(bx);
    return o;
}

/* ---- the reference ---- */

typedef struct ref_stats {
    uint32_t picks;        /* rows kept in all */
    uint32_t max_group;    /* the most rows one group kept */
    uint32_t empty_groups; /* groups that kept nothing */
    uint32_t suppressed;   /* candidates an overlap removed */
    uint32_t tied;         /* picks with an equal-scored candidate at a higher index */
    uint32_t short_groups; /* groups that kept fewer than their candidates */
} ref_stats;

/* Greedy NMS on the host, comparing the exact dtype values as doubles: rows
 * (b, c, i) of [B * C * K, 3], (-1, -1, -1) after the last. */
static int32_t *reference(const float *scores, const float *over, uint32_t B, uint32_t C,
                          uint32_t N, uint32_t max_per_class, double threshold, ref_stats *st) {
    uint32_t K = max_per_class < N ? max_per_class : N;
    size_t rows = (size_t)B * C * K, r = 0;
    int32_t *out = malloc(rows * 3 * sizeof *out + 1);
    char *alive = malloc(N);
    *st = (ref_stats){0};
    for (uint32_t b = 0; b < B; b++)
        for (uint32_t c = 0; c < C; c++) {
            const float *s = scores + ((size_t)b * C + c) * N;
            uint32_t candidates = 0, taken = 0;
            for (uint32_t i = 0; i < N; i++) {
                alive[i] = (double)s[i] > threshold; /* NaN: false */
                candidates += (uint32_t)alive[i];
            }
            while (taken < K) {
                int64_t best = -1;
                for (uint32_t i = 0; i < N; i++)
                    if (alive[i] && (best < 0 || s[i] > s[best])) best = i;
                if (best < 0) break;
                for (uint32_t i = (uint32_t)best + 1; i < N; i++)
                    if (alive[i] && s[i] == s[best]) {
                        st->tied++;
                        break;
                    }
                out[r * 3] = (int32_t)b;
                out[r * 3 + 1] = (int32_t)c;
                out[r * 3 + 2] = (int32_t)best;
                r++;
                taken++;
                alive[best] = 0;
                const float *row = over + ((size_t)b * N + (size_t)best) * N;
                for (uint32_t j = 0; j < N; j++)
                    if (alive[j] && row[j] != 0.0f) {
                        alive[j] = 0;
                        st->suppressed++;
                    }
            }
            st->picks += taken;
            if (taken > st->max_group) st->max_group = taken;
            if (!taken) st->empty_groups++;
            if (taken < candidates) st->short_groups++;
        }
    for (; r < rows; r++)
        out[r * 3] = out[r * 3 + 1] = out[r * 3 + 2] = -1;
    free(alive);
    return out;
}

/* ---- the device ---- */

/* The output's rows (malloc'ed), after checking its shape, dtype, layout
 * and memory; NULL (reported) when any is wrong. */
static int32_t *read_rows(lmnn_tensor out, size_t rows, lm_buffer_type mem, const char *what) {
    lmnn_tensor_info info;
    if (lmnn_tensor_get_info(out, &info)) {
        printf("    %s: info: %s\n", what, lm_last_error());
        return NULL;
    }
    if (info.shape.rank != 2 || info.shape.dims[0] != rows || info.shape.dims[1] != 3 ||
        info.dtype != LMNN_INT32 || info.layout != LMNN_ROW_MAJOR || info.memory.type != mem ||
        info.memory.layout != LM_BUFFER_INTERLEAVED) {
        printf("    %s: output rank %u [%u, %u] %s %s memory %d/%d, want [%zu, 3] int32 "
               "row_major memory %d/1\n",
               what, info.shape.rank, info.shape.dims[0], info.shape.dims[1],
               lmnn_dtype_name(info.dtype), lmnn_layout_name(info.layout), (int)info.memory.type,
               (int)info.memory.layout, rows, (int)mem);
        return NULL;
    }
    size_t size = 0;
    if (lmnn_tensor_host_size(out, &size) || size != rows * 3 * sizeof(int32_t)) {
        printf("    %s: host size %zu, want %zu\n", what, size, rows * 3 * sizeof(int32_t));
        return NULL;
    }
    int32_t *v = malloc(size);
    if (lmnn_to_host(out, v, size)) {
        printf("    %s: to_host: %s\n", what, lm_last_error());
        free(v);
        return NULL;
    }
    return v;
}

static int same_rows(const int32_t *got, const int32_t *want, size_t rows, const char *what) {
    for (size_t r = 0; r < rows; r++)
        if (memcmp(got + r * 3, want + r * 3, 3 * sizeof *got)) {
            printf("    %s: row %zu of %zu: got (%d, %d, %d), want (%d, %d, %d)\n", what, r, rows,
                   got[r * 3], got[r * 3 + 1], got[r * 3 + 2], want[r * 3], want[r * 3 + 1],
                   want[r * 3 + 2]);
            return 0;
        }
    return 1;
}

/* Runs lmnn_nms (opts NULL: the defaults) and compares every output row
 * with the reference; *st (if given) tells what the reference did. */
static int check_nms(const char *name, const float *scores, const float *over, uint32_t B,
                     uint32_t C, uint32_t N, io cfg, const lmnn_nms_options *opts, ref_stats *st) {
    char what[320], cb[128];
    snprintf(what, sizeof what, "%s (%s)", name, io_name(cfg, cb, sizeof cb));
    lmnn_nms_options d;
    lmnn_nms_options_init(&d);
    const lmnn_nms_options *o = opts ? opts : &d;
    uint32_t K = o->max_per_class < N ? o->max_per_class : N;
    size_t rows = (size_t)B * C * K;
    ref_stats local;
    int32_t *want =
        reference(scores, over, B, C, N, o->max_per_class, o->score_threshold, st ? st : &local);
    lmnn_shape ss = LMNN_SHAPE(B, C, N), os = LMNN_SHAPE(B, N, N);
    lmnn_tensor ts = {0}, to = {0}, out = {0};
    int32_t *got = NULL;
    int ok = 0;
    if (upload(&ss, scores, cfg.sd, cfg.sl, cfg.in_mem, &ts) ||
        upload(&os, over, cfg.od, cfg.ol, cfg.in_mem, &to)) {
        printf("    %s: upload: %s\n", what, lm_last_error());
    } else if (lmnn_nms(ts, to, opts, &out)) {
        printf("    %s: %s\n", what, lm_last_error());
    } else {
        got = read_rows(out, rows, o->memory.type ? o->memory.type : LM_BUFFER_DRAM, what);
        ok = got && same_rows(got, want, rows, what);
    }
    free(got);
    free(want);
    lmnn_tensor_free(out);
    lmnn_tensor_free(ts);
    lmnn_tensor_free(to);
    return ok;
}

static lmnn_nms_options nms_opts(uint32_t max_per_class, double threshold) {
    lmnn_nms_options o;
    lmnn_nms_options_init(&o);
    o.max_per_class = max_per_class;
    o.score_threshold = threshold;
    return o;
}

/* ---- tests ---- */

/* The defaults, and a few hand-worked groups the reference must agree with:
 * NaN never taken, -inf not above the default -inf threshold, -0 and +0
 * tie (the lower index first), a NaN overlap entry suppresses and a -0 one
 * does not, and row i of overlaps names what box i removes (not column i). */
static void test_hand_worked(void) {
    lmnn_nms_options d;
    lmnn_nms_options_init(&d);
    CHECK(d.max_per_class == UINT32_MAX);
    CHECK(isinf(d.score_threshold) && d.score_threshold < 0);
    CHECK(d.memory.type == 0 && d.memory.layout == 0);
    lmnn_nms_options_init(NULL);

    enum { N = 8 };
    const float scores[2 * N] = {
        0.5f,  NAN,  -0.0f, 0.5f,  0.0f,  INFINITY, -INFINITY, 0.25f, /* class 0 */
        -0.0f, 0.0f, NAN,   -1.0f, -0.0f, NAN,      1024.0f,   0.0f,  /* class 1 */
    };
    float over[N * N];
    for (int i = 0; i < N * N; i++)
        over[i] = i % 3 ? -0.0f : 0.0f;
    over[5 * N + 7] = 1.0f; /* keeping 5 removes 7 */
    over[0 * N + 3] = NAN;  /* keeping 0 removes 3 */
    over[4 * N + 2] = 1.0f; /* keeping 4 would remove 2: 2 comes first */
    over[1 * N + 6] = 1.0f; /* class 1: 1 comes after 6, too late to remove it */
    /* Class 0: inf (removes 7), the first 0.5 (removes 3), -0 before +0.
     * Class 1: 1024, then the zeros in box order (box 0 removes the -1 at 3:
     * the table is the batch entry's, shared by its classes). */
    const int32_t want[2 * N * 3] = {
        0, 0, 5, 0,  0,  0,  0,  0,  2,  0,  0,  4,  0,  1,  6,  0,  1,  0,  0,  1,  1,  0,  1,  4,
        0, 1, 7, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    };
    const io cfgs[] = {f32_rm, f32_tile, {LMNN_BFLOAT16, LMNN_TILE, LMNN_BFLOAT16, LMNN_TILE, 0}};
    for (size_t k = 0; k < sizeof cfgs / sizeof *cfgs; k++) {
        ref_stats st;
        int32_t *ref = reference(scores, over, 1, 2, N, UINT32_MAX, -INFINITY, &st);
        CHECK(same_rows(ref, want, 2 * N, "reference"));
        free(ref);
        CHECK(
            check_nms("hand-worked, default options", scores, over, 1, 2, N, cfgs[k], NULL, NULL));
        lmnn_nms_options o = nms_opts(2, 0.0);
        CHECK(check_nms("hand-worked, 2 above 0", scores, over, 1, 2, N, cfgs[k], &o, &st));
        CHECK_EQ_U64(st.picks, 3); /* 5, 0; 6 */
        o = nms_opts(N + 100, -0.0);
        CHECK(check_nms("hand-worked, above -0", scores, over, 1, 2, N, cfgs[k], &o, &st));
        CHECK_EQ_U64(st.picks, 3);
    }

    /* Orientation: row 0 names box 1, so box 1 goes; column 0 names nothing. */
    const float s3[3] = {0.9f, 0.8f, 0.7f};
    float rowwise[9] = {0, 1, 0, 0, 0, 0, 0, 0, 0}, colwise[9] = {0, 0, 0, 1, 0, 0, 0, 0, 0};
    const int32_t want_row[9] = {0, 0, 0, 0, 0, 2, -1, -1, -1};
    const int32_t want_col[9] = {0, 0, 0, 0, 0, 1, 0, 0, 2};
    for (int pass = 0; pass < 2; pass++) {
        lmnn_shape ss = LMNN_SHAPE(1, 1, 3), os = LMNN_SHAPE(1, 3, 3);
        lmnn_tensor ts, to, out;
        CHECK_OK(nn_upload(&ss, s3, LMNN_FLOAT32, LMNN_ROW_MAJOR, &ts));
        CHECK_OK(nn_upload(&os, pass ? colwise : rowwise, LMNN_FLOAT32, LMNN_ROW_MAJOR, &to));
        CHECK_OK(lmnn_nms(ts, to, NULL, &out));
        int32_t *got = read_rows(out, 3, LM_BUFFER_DRAM, "orientation");
        CHECK(got);
        CHECK(same_rows(got, pass ? want_col : want_row, 3, "orientation"));
        free(got);
        lmnn_tensor_free(out), lmnn_tensor_free(ts), lmnn_tensor_free(to);
    }
}

/* Random boxes, [2, 3, 40]: float32 in both layouts, DRAM and L1, with
 * max_per_class from 1 to past N, and the default options. */
static void test_float32(void) {
    enum { B = 2, C = 3, N = 40 };
    float *scores = make_scores((size_t)B * C * N, 16, 1);
    float *over = make_overlaps(B, N, 60, 8, 28, 0.3, 1, 2);
    /* A few specials among the scores. */
    scores[3] = NAN, scores[N + 5] = -0.0f, scores[N + 6] = 0.0f, scores[2 * N + 1] = INFINITY;
    scores[3 * N + 7] = -INFINITY, scores[4 * N + 9] = -0.5f, scores[5 * N] = NAN;
    const io cfgs[] = {f32_tile,
                       f32_rm,
                       {LMNN_FLOAT32, LMNN_TILE, LMNN_FLOAT32, LMNN_ROW_MAJOR, LM_BUFFER_L1},
                       {LMNN_FLOAT32, LMNN_ROW_MAJOR, LMNN_FLOAT32, LMNN_TILE, 0}};
    const uint32_t maxes[] = {UINT32_MAX, 1, 3, N - 1, N, N + 5};
    for (size_t k = 0; k < sizeof cfgs / sizeof *cfgs; k++) {
        ref_stats st;
        CHECK(check_nms("default options", scores, over, B, C, N, cfgs[k], NULL, &st));
        /* The data is not trivial: overlaps remove candidates, and ties
         * decide picks. */
        CHECK(st.suppressed > 0 && st.short_groups == B * C && st.tied > 0);
        CHECK(st.picks < B * C * N - 3);
        for (size_t m = 0; m < sizeof maxes / sizeof *maxes; m++) {
            lmnn_nms_options o = nms_opts(maxes[m], 0.25);
            CHECK(check_nms("max_per_class, above 0.25", scores, over, B, C, N, cfgs[k], &o, &st));
            if (maxes[m] == 1) CHECK_EQ_U64(st.picks, B * C);
            if (maxes[m] >= N) CHECK(st.suppressed > 0 && st.tied > 0);
        }
    }
    /* The output in L1. */
    lmnn_nms_options o = nms_opts(7, 0.5);
    o.memory = (lmnn_memory_config){.type = LM_BUFFER_L1, .layout = LM_BUFFER_INTERLEAVED};
    CHECK(check_nms("L1 output", scores, over, B, C, N, f32_rm, &o, NULL));
    o.memory.type = LM_BUFFER_DRAM;
    CHECK(check_nms("DRAM output", scores, over, B, C, N, f32_tile, &o, NULL));
    /* Fields left zero are DRAM interleaved's: L1 with no layout is L1
     * interleaved. */
    o.memory = (lmnn_memory_config){.type = LM_BUFFER_L1};
    CHECK(check_nms("L1 output, layout unset", scores, over, B, C, N, f32_tile, &o, NULL));
    free(scores);
    free(over);
}

/* bfloat16 and bfloat8_b inputs (exact values), alone and mixed with
 * float32, in both layouts. */
static void test_low_precision(void) {
    enum { B = 2, C = 3, N = 40 };
    float *scores = make_scores((size_t)B * C * N, 32, 5);
    float *over = make_overlaps(B, N, 60, 8, 28, 0.3, 1, 6);
    float *plain = make_overlaps(B, N, 60, 8, 28, 0.3, 0, 6);
    scores[7] = NAN, scores[N + 2] = -0.0f, scores[N + 3] = 0.0f, scores[3 * N + 4] = -0.25f;
    const io cfgs[] = {
        {LMNN_BFLOAT16, LMNN_TILE, LMNN_BFLOAT16, LMNN_TILE, 0},
        {LMNN_BFLOAT16, LMNN_ROW_MAJOR, LMNN_BFLOAT16, LMNN_ROW_MAJOR, 0},
        {LMNN_BFLOAT16, LMNN_ROW_MAJOR, LMNN_FLOAT32, LMNN_TILE, 0},
        {LMNN_FLOAT32, LMNN_ROW_MAJOR, LMNN_BFLOAT16, LMNN_ROW_MAJOR, LM_BUFFER_L1},
        {LMNN_BFLOAT16, LMNN_TILE, LMNN_FLOAT32, LMNN_ROW_MAJOR, LM_BUFFER_L1},
    };
    for (size_t k = 0; k < sizeof cfgs / sizeof *cfgs; k++) {
        ref_stats st;
        lmnn_nms_options o = nms_opts(UINT32_MAX, 0.125);
        CHECK(check_nms("above 0.125", scores, over, B, C, N, cfgs[k], &o, &st));
        CHECK(st.suppressed > 0 && st.short_groups > 0 && st.tied > 0);
        o = nms_opts(4, -1);
        CHECK(check_nms("4 above -1", scores, over, B, C, N, cfgs[k], &o, NULL));
    }
    /* bfloat8_b: scores and a 0/1 table, tile layout. */
    float *s8 = make_scores((size_t)B * C * N, 16, 7);
    const io bf8[] = {{LMNN_BFLOAT8_B, LMNN_TILE, LMNN_BFLOAT8_B, LMNN_TILE, 0},
                      {LMNN_BFLOAT8_B, LMNN_TILE, LMNN_FLOAT32, LMNN_ROW_MAJOR, 0}};
    for (size_t k = 0; k < 2; k++) {
        ref_stats st;
        lmnn_nms_options o = nms_opts(UINT32_MAX, 0.0625);
        CHECK(check_nms("bfloat8_b above 0.0625", s8, plain, B, C, N, bf8[k], &o, &st));
        CHECK(st.suppressed > 0 && st.tied > 0);
    }
    free(s8);
    free(scores);
    free(over);
    free(plain);
}

/* "Above the threshold" is exact in the scores' dtype, for thresholds no
 * dtype represents, either sign, zeros, tiny and huge ones. */
static void test_threshold(void) {
    /* float32: the neighbours of 0.30000001 (0.3f is above it, the float
     * before it is not), their negatives, zeros, denormals, extremes. */
    const float hi = 0.3f, lo = nextafterf(0.3f, 0.0f);
    CHECK((double)hi > 0.30000001 && (double)lo < 0.30000001);
    const float f32[] = {lo,
                         hi,
                         nextafterf(lo, 0.0f),
                         nextafterf(hi, 1.0f),
                         -lo,
                         -hi,
                         -nextafterf(lo, 0.0f),
                         -nextafterf(hi, 1.0f),
                         0.0f,
                         -0.0f,
                         1e-45f,
                         -1e-45f,
                         3.4028235e38f,
                         -3.4028235e38f,
                         INFINITY,
                         -INFINITY,
                         NAN,
                         -NAN,
                         0.5f,
                         -0.5f,
                         hi,
                         0.25f};
    enum { N = sizeof f32 / sizeof *f32 };
    float scores[2 * N], over[N * N];
    for (int i = 0; i < N; i++)
        scores[i] = f32[i], scores[N + i] = f32[N - 1 - i];
    for (int i = 0; i < N * N; i++)
        over[i] = i & 1 ? -0.0f : 0.0f;
    const double thresholds[] = {0.30000001, -0.30000001,   0.3,   -0.3,   (double)0.3f,
                                 0.0,        -0.0,          1e-50, -1e-50, 1e300,
                                 -1e300,     3.40282350e38, 1e39,  -1e39,  INFINITY};
    for (size_t t = 0; t < sizeof thresholds / sizeof *thresholds; t++) {
        char name[64];
        snprintf(name, sizeof name, "above %.17g", thresholds[t]);
        lmnn_nms_options o = nms_opts(UINT32_MAX, thresholds[t]);
        CHECK(check_nms(name, scores, over, 1, 2, N, f32_rm, &o, NULL));
        CHECK(check_nms(name, scores, over, 1, 2, N, f32_tile, &o, NULL));
    }
    /* Hand-counted: above 0.30000001 are hi (twice), the float after hi,
     * the largest finite, inf and 0.5 in each class. */
    ref_stats st;
    lmnn_nms_options o = nms_opts(UINT32_MAX, 0.30000001);
    CHECK(check_nms("above 0.30000001", scores, over, 1, 2, N, f32_rm, &o, &st));
    CHECK_EQ_U64(st.picks, 2 * 6);
    /* Below -0.30000001 too: lo, the float before lo, their negatives, the
     * zeros, the denormals and 0.25. */
    o.score_threshold = -0.30000001;
    CHECK(check_nms("above -0.30000001", scores, over, 1, 2, N, f32_rm, &o, &st));
    CHECK_EQ_U64(st.picks, 2 * 15);

    /* bfloat16: around 0.3 the values are 0.296875, 0.298828125, 0.30078125,
     * 0.302734375: 0.30000001 and 0.3005 lie between the middle two. */
    const float a = 0.298828125f, b = 0.30078125f;
    CHECK(nn_bf16(a) == a && nn_bf16(b) == b && nn_bf16(nextafterf(b, 1.0f)) == b);
    float bf[] = {0.296875f,
                  a,
                  b,
                  0.302734375f,
                  -0.296875f,
                  -a,
                  -b,
                  -0.302734375f,
                  0.0f,
                  -0.0f,
                  INFINITY,
                  -INFINITY,
                  NAN,
                  -NAN,
                  0.5f,
                  3.3895314e38f,
                  -3.3895314e38f,
                  0, /* the smallest positive bfloat16, below */
                  b,
                  a};
    enum { M = sizeof bf / sizeof *bf };
    const uint32_t denormal = 0x00010000u;
    memcpy(&bf[M - 3], &denormal, sizeof denormal);
    float sb[2 * M], ob[M * M];
    for (int i = 0; i < M; i++) {
        CHECK(isnan(bf[i]) || nn_bf16(bf[i]) == bf[i]);
        sb[i] = bf[i], sb[M + i] = bf[M - 1 - i];
    }
    for (int i = 0; i < M * M; i++)
        ob[i] = i % 3 ? 0.0f : -0.0f;
    const double bthr[] = {0.30000001, -0.30000001, 0.3005,    -0.3005,      0.2995, -0.2995,
                           (double)a,  -(double)a,  (double)b, -(double)b,   0.0,    -1e-50,
                           1e-50,      3.39e38,     -3.39e38,  3.3895314e38, 1e300};
    const io bcfgs[] = {{LMNN_BFLOAT16, LMNN_ROW_MAJOR, LMNN_FLOAT32, LMNN_ROW_MAJOR, 0},
                        {LMNN_BFLOAT16, LMNN_TILE, LMNN_BFLOAT16, LMNN_TILE, 0}};
    for (size_t k = 0; k < 2; k++)
        for (size_t t = 0; t < sizeof bthr / sizeof *bthr; t++) {
            char name[64];
            snprintf(name, sizeof name, "bfloat16 above %.17g", bthr[t]);
            lmnn_nms_options bo = nms_opts(UINT32_MAX, bthr[t]);
            CHECK(check_nms(name, sb, ob, 1, 2, M, bcfgs[k], &bo, NULL));
        }
    /* Hand-counted: above 0.30000001 are b (twice), 0.302734375, inf, 0.5
     * and the largest finite, in each class. */
    o = nms_opts(UINT32_MAX, 0.30000001);
    CHECK(check_nms("bfloat16 above 0.30000001", sb, ob, 1, 2, M, bcfgs[0], &o, &st));
    CHECK_EQ_U64(st.picks, 2 * 6);
    /* Below -0.30000001 too: 0.296875, a (twice), -0.296875, -a, the zeros
     * and the denormal. */
    o.score_threshold = -0.30000001;
    CHECK(check_nms("bfloat16 above -0.30000001", sb, ob, 1, 2, M, bcfgs[0], &o, &st));
    CHECK_EQ_U64(st.picks, 2 * 14);
}

/* Classes that keep nothing, and a NaN threshold (nothing at all). */
static void test_empty(void) {
    enum { B = 2, C = 3, N = 40 };
    float *scores = make_scores((size_t)B * C * N, 16, 9);
    float *over = make_overlaps(B, N, 60, 8, 28, 0.3, 1, 10);
    /* class 1 of batch entry 0 and class 2 of batch entry 1: nothing above 0.5
     * (NaN, -inf, 0.5 itself, lower values). */
    for (uint32_t i = 0; i < N; i++) {
        scores[(0 * C + 1) * N + i] = i % 4 == 0 ? NAN : i % 4 == 1 ? -INFINITY : 0.5f - i / 128.0f;
        scores[(1 * C + 2) * N + i] = 0.5f;
    }
    const io cfgs[] = {f32_rm, f32_tile, {LMNN_BFLOAT16, LMNN_TILE, LMNN_BFLOAT16, LMNN_TILE, 0}};
    for (size_t k = 0; k < 3; k++) {
        ref_stats st;
        lmnn_nms_options o = nms_opts(UINT32_MAX, 0.5);
        CHECK(check_nms("empty classes", scores, over, B, C, N, cfgs[k], &o, &st));
        CHECK_EQ_U64(st.empty_groups, 2);
        CHECK(st.picks > 0);
        o = nms_opts(5, 0.5);
        CHECK(check_nms("empty classes, 5 each", scores, over, B, C, N, cfgs[k], &o, &st));
        CHECK_EQ_U64(st.picks, 4 * 5);
        o = nms_opts(UINT32_MAX, NAN);
        CHECK(check_nms("NaN threshold", scores, over, B, C, N, cfgs[k], &o, &st));
        CHECK_EQ_U64(st.picks, 0);
    }
    /* The rows read back directly: with a NaN threshold every one is -1. */
    lmnn_shape ss = LMNN_SHAPE(B, C, N), os = LMNN_SHAPE(B, N, N);
    lmnn_tensor ts, to, out;
    CHECK_OK(nn_upload(&ss, scores, LMNN_FLOAT32, LMNN_TILE, &ts));
    CHECK_OK(nn_upload(&os, over, LMNN_FLOAT32, LMNN_TILE, &to));
    lmnn_nms_options o = nms_opts(2, NAN);
    CHECK_OK(lmnn_nms(ts, to, &o, &out));
    int32_t *got = read_rows(out, B * C * 2, LM_BUFFER_DRAM, "NaN threshold");
    CHECK(got);
    for (int i = 0; i < B * C * 2 * 3; i++)
        CHECK(got[i] == -1);
    free(got);
    lmnn_tensor_free(out), lmnn_tensor_free(ts), lmnn_tensor_free(to);
    free(scores);
    free(over);
}

/* N = 200 with up to 150 kept per group: far more rows than the packing's
 * ring of 64, groups of more than 64 rows, and suppression. */
static void test_many_rows(void) {
    enum { B = 2, C = 3, N = 200 };
    float *scores = make_scores((size_t)B * C * N, 64, 13);
    float *over = make_overlaps(B, N, 400, 4, 24, 0.2, 1, 14);
    const io cfgs[] = {f32_rm, {LMNN_BFLOAT16, LMNN_TILE, LMNN_FLOAT32, LMNN_TILE, 0}};
    for (size_t k = 0; k < 2; k++) {
        ref_stats st;
        lmnn_nms_options o = nms_opts(150, 0.03);
        CHECK(check_nms("N 200, 150 each", scores, over, B, C, N, cfgs[k], &o, &st));
        CHECK(st.picks > 3 * 64 && st.max_group > 64 && st.suppressed > 0 && st.tied > 0);
        CHECK(st.short_groups > 0);
        o = nms_opts(UINT32_MAX, -INFINITY);
        CHECK(check_nms("N 200, all", scores, over, B, C, N, cfgs[k], &o, &st));
        CHECK(st.max_group > 128 && st.max_group < N);
    }
    free(scores);
    free(over);
}

/* More groups than cores (each core takes several), and one tensor as both
 * the scores and the overlaps ([1, N, N]: class c's scores are row c). */
static void test_groups_and_aliasing(void) {
    enum { B = 3, C = 50, N = 24 };
    float *scores = make_scores((size_t)B * C * N, 8, 41);
    float *over = make_overlaps(B, N, 40, 8, 24, 0.25, 1, 42);
    const io cfgs[] = {f32_rm, {LMNN_BFLOAT16, LMNN_TILE, LMNN_BFLOAT16, LMNN_ROW_MAJOR, 0}};
    for (size_t k = 0; k < 2; k++) {
        ref_stats st;
        lmnn_nms_options o = nms_opts(5, 0.3);
        CHECK(check_nms("150 groups", scores, over, B, C, N, cfgs[k], &o, &st));
        CHECK(st.suppressed > 0 && st.tied > 0 && st.picks > B * C);
        o = nms_opts(UINT32_MAX, -INFINITY);
        CHECK(check_nms("150 groups, all", scores, over, B, C, N, cfgs[k], &o, &st));
        CHECK(st.short_groups > 0);
    }
    free(scores);
    free(over);

    /* 0/1 entries: class c's candidates are the boxes box c overlaps (itself
     * included), tied at 1; each removes the boxes its row marks. */
    over = make_overlaps(1, N, 40, 8, 24, 0.25, 0, 43);
    const lmnn_layout lays[] = {LMNN_ROW_MAJOR, LMNN_TILE};
    for (size_t k = 0; k < 2; k++) {
        lmnn_shape sh = LMNN_SHAPE(1, N, N);
        lmnn_tensor t, out;
        CHECK_OK(nn_upload(&sh, over, LMNN_FLOAT32, lays[k], &t));
        lmnn_nms_options o = nms_opts(UINT32_MAX, 0.5);
        CHECK_OK(lmnn_nms(t, t, &o, &out));
        ref_stats st;
        int32_t *want = reference(over, over, 1, N, N, UINT32_MAX, 0.5, &st);
        int32_t *got = read_rows(out, (size_t)N * N, LM_BUFFER_DRAM, "aliased");
        int ok = got && same_rows(got, want, (size_t)N * N, "aliased");
        free(got);
        free(want);
        lmnn_tensor_free(out), lmnn_tensor_free(t);
        CHECK(ok);
        CHECK(st.suppressed > 0 && st.picks >= N && st.tied > 0);
    }
    free(over);
}

/* 1000 boxes, every one kept that no overlap removes: 4000 output rows. */
static void test_large(void) {
    enum { B = 1, C = 4, N = 1000 };
    float *scores = make_scores((size_t)B * C * N, 64, 51);
    float *over = make_overlaps(B, N, 800, 4, 30, 0.3, 1, 52);
    const io cfgs[] = {{LMNN_BFLOAT16, LMNN_TILE, LMNN_BFLOAT16, LMNN_TILE, 0},
                       {LMNN_FLOAT32, LMNN_ROW_MAJOR, LMNN_FLOAT32, LMNN_ROW_MAJOR, LM_BUFFER_L1}};
    for (size_t k = 0; k < 2; k++) {
        ref_stats st;
        CHECK(check_nms("N 1000", scores, over, B, C, N, cfgs[k], NULL, &st));
        CHECK(st.suppressed > 0 && st.short_groups == C && st.picks > 4 * 64);
    }
    free(scores);
    free(over);
}

/* A second call of the same shapes and options builds nothing and reads
 * the new tensors; another threshold gives its own result. */
static void test_cache(void) {
    enum { B = 2, C = 2, N = 48 };
    float *s1 = make_scores((size_t)B * C * N, 16, 21),
          *s2 = make_scores((size_t)B * C * N, 16, 22);
    float *o1 = make_overlaps(B, N, 60, 8, 28, 0.3, 1, 23);
    float *o2 = make_overlaps(B, N, 60, 8, 28, 0.3, 1, 24);
    lmnn_nms_options o = nms_opts(9, 0.2);
    CHECK(check_nms("first", s1, o1, B, C, N, f32_tile, &o, NULL));
    lmnn_program_cache_stats before, after;
    CHECK_OK(lmnn_program_cache_get_stats(nn_dev(), &before));
    CHECK(check_nms("again, other data", s2, o2, B, C, N, f32_tile, &o, NULL));
    CHECK(check_nms("again, mixed data", s1, o2, B, C, N, f32_tile, &o, NULL));
    CHECK_OK(lmnn_program_cache_get_stats(nn_dev(), &after));
    CHECK_EQ_U64(after.misses, before.misses);
    CHECK_EQ_U64(after.entries, before.entries);
    o.score_threshold = 0.6;
    CHECK(check_nms("another threshold", s2, o2, B, C, N, f32_tile, &o, NULL));
    o.score_threshold = 0.2;
    o.max_per_class = 3;
    CHECK(check_nms("another max_per_class", s2, o2, B, C, N, f32_tile, &o, NULL));
    /* Another batch size with the other shapes the same. */
    CHECK(check_nms("one batch entry", s2, o2, 1, C, N, f32_tile, &o, NULL));
    free(s1), free(s2), free(o1), free(o2);
}

/* A call leaves nothing behind but its output (tile and bfloat8_b inputs
 * take temporary row-major copies). */
static void test_no_leftovers(void) {
    enum { B = 1, C = 2, N = 40 };
    float *scores = make_scores((size_t)B * C * N, 16, 31);
    float *over = make_overlaps(B, N, 60, 8, 28, 0.3, 0, 32);
    lmnn_shape ss = LMNN_SHAPE(B, C, N), os = LMNN_SHAPE(B, N, N);
    const lmnn_dtype dts[] = {LMNN_FLOAT32, LMNN_BFLOAT8_B};
    for (int k = 0; k < 2; k++) {
        lmnn_tensor ts, to, out;
        CHECK_OK(nn_upload(&ss, scores, dts[k], LMNN_TILE, &ts));
        CHECK_OK(nn_upload(&os, over, dts[k], LMNN_TILE, &to));
        uint64_t d0, l0, d1, l1;
        CHECK(nn_memory_now(&d0, &l0));
        CHECK_OK(lmnn_nms(ts, to, NULL, &out));
        CHECK_OK(lmnn_tensor_free(out));
        CHECK(nn_memory_now(&d1, &l1));
        CHECK_EQ_U64(d1, d0);
        CHECK_EQ_U64(l1, l0);
        lmnn_tensor_free(ts), lmnn_tensor_free(to);
    }
    free(scores);
    free(over);
}

/* The call fails with `want` and a message containing `needle`, leaves *out
 * alone and allocates and builds nothing. */
static int fails_cleanly(lmnn_tensor s, lmnn_tensor o, const lmnn_nms_options *opts, lm_status want,
                         const char *needle, int line) {
    uint64_t d0 = 0, l0 = 0, d1 = 0, l1 = 0;
    lmnn_program_cache_stats c0, c1;
    nn_memory_now(&d0, &l0);
    lmnn_program_cache_get_stats(nn_dev(), &c0);
    lmnn_tensor out = {0x5eed};
    lm_status st = lmnn_nms(s, o, opts, &out);
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", lm_last_error());
    nn_memory_now(&d1, &l1);
    lmnn_program_cache_get_stats(nn_dev(), &c1);
    if (st != want || !strstr(msg, needle)) {
        printf("    line %d: gave %s \"%s\", expected %s \"%s\"\n", line, lm_status_string(st), msg,
               lm_status_string(want), needle);
        return 0;
    }
    if (out.id != 0x5eed || d1 != d0 || l1 != l0 || c1.misses != c0.misses ||
        c1.entries != c0.entries) {
        printf("    line %d: the failed call changed out or allocated or built something\n", line);
        return 0;
    }
    return 1;
}

#define CHECK_NMS_FAILS(s, o, opts, want, needle)                                                  \
    CHECK(fails_cleanly(s, o, opts, want, needle, __LINE__))

static void test_errors(void) {
    lm_device *dev = nn_dev();
    static float zeros[4 * 40 * 40];
    lmnn_shape s3 = LMNN_SHAPE(2, 3, 40), o3 = LMNN_SHAPE(2, 40, 40);
    lmnn_tensor s, o, s2d, s4d, o_wide, o_batch, o2d, si, ou, freed, sharded, other, out = {0};
    CHECK_OK(nn_upload(&s3, zeros, LMNN_FLOAT32, LMNN_TILE, &s));
    CHECK_OK(nn_upload(&o3, zeros, LMNN_BFLOAT16, LMNN_TILE, &o));
    lmnn_shape sh2 = LMNN_SHAPE(6, 40), sh4 = LMNN_SHAPE(1, 2, 3, 40);
    lmnn_shape sw = LMNN_SHAPE(2, 40, 39), sb = LMNN_SHAPE(1, 40, 40), s22 = LMNN_SHAPE(40, 40);
    CHECK_OK(nn_upload(&sh2, zeros, LMNN_FLOAT32, LMNN_ROW_MAJOR, &s2d));
    CHECK_OK(nn_upload(&sh4, zeros, LMNN_FLOAT32, LMNN_ROW_MAJOR, &s4d));
    CHECK_OK(nn_upload(&sw, zeros, LMNN_FLOAT32, LMNN_ROW_MAJOR, &o_wide));
    CHECK_OK(nn_upload(&sb, zeros, LMNN_FLOAT32, LMNN_ROW_MAJOR, &o_batch));
    CHECK_OK(nn_upload(&s22, zeros, LMNN_FLOAT32, LMNN_ROW_MAJOR, &o2d));
    lmnn_tensor_options ti;
    lmnn_tensor_options_init(&ti);
    ti.dtype = LMNN_INT32;
    ti.layout = LMNN_ROW_MAJOR;
    CHECK_OK(lmnn_from_host(dev, &s3, zeros, 2 * 3 * 40 * 4, &ti, &si));
    ti.dtype = LMNN_UINT32;
    ti.layout = LMNN_TILE;
    CHECK_OK(lmnn_from_host(dev, &o3, zeros, 2 * 40 * 40 * 4, &ti, &ou));
    CHECK_OK(nn_upload(&s3, zeros, LMNN_FLOAT32, LMNN_TILE, &freed));
    CHECK_OK(lmnn_tensor_free(freed));
    /* [2, 3, 40] tile: a 64 x 64 matrix, 32-row shards on two cores. */
    CHECK_OK(nn_upload_sharded(&s3, zeros, 64, &sharded));

    lmnn_nms_options opts;
    lmnn_nms_options_init(&opts);
    CHECK_FAILS(lmnn_nms(s, o, &opts, NULL), LM_ERR_INVALID_ARGUMENT, "lmnn_nms: out is NULL");
    CHECK_FAILS(lmnn_nms(s, o, NULL, NULL), LM_ERR_INVALID_ARGUMENT, "lmnn_nms: out is NULL");
    CHECK_NMS_FAILS(s2d, o, NULL, LM_ERR_INVALID_ARGUMENT,
                    "lmnn_nms: scores: expected [batch, classes, boxes], none 0, given [6, 40]");
    CHECK_NMS_FAILS(s4d, o, NULL, LM_ERR_INVALID_ARGUMENT,
                    "lmnn_nms: scores: expected [batch, classes, boxes], none 0, given "
                    "[1, 2, 3, 40]");
    CHECK_NMS_FAILS(s, o_wide, NULL, LM_ERR_INVALID_ARGUMENT,
                    "lmnn_nms: overlaps: expected [batch, boxes, boxes] = [2, 40, 40] (scores "
                    "[2, 3, 40]), given [2, 40, 39]");
    CHECK_NMS_FAILS(s, o_batch, NULL, LM_ERR_INVALID_ARGUMENT,
                    "lmnn_nms: overlaps: expected [batch, boxes, boxes] = [2, 40, 40] (scores "
                    "[2, 3, 40]), given [1, 40, 40]");
    CHECK_NMS_FAILS(s, o2d, NULL, LM_ERR_INVALID_ARGUMENT,
                    "lmnn_nms: overlaps: expected [batch, boxes, boxes] = [2, 40, 40] (scores "
                    "[2, 3, 40]), given [40, 40]");
    /* A bad scores shape is reported before a bad overlaps shape. */
    CHECK_NMS_FAILS(s2d, o2d, NULL, LM_ERR_INVALID_ARGUMENT, "lmnn_nms: scores: expected");
    CHECK_NMS_FAILS(si, o, NULL, LM_ERR_INVALID_ARGUMENT,
                    "lmnn_nms: scores: expected a float dtype (bfloat16, float32, bfloat8_b), "
                    "given int32");
    CHECK_NMS_FAILS(s, ou, NULL, LM_ERR_INVALID_ARGUMENT,
                    "lmnn_nms: overlaps: expected a float dtype (bfloat16, float32, bfloat8_b), "
                    "given uint32");
    opts.max_per_class = 0;
    CHECK_NMS_FAILS(s, o, &opts, LM_ERR_INVALID_ARGUMENT,
                    "lmnn_nms: opts.max_per_class: expected at least 1");
    lmnn_nms_options_init(&opts);
    lmnn_tensor_info sharded_info;
    CHECK_OK(lmnn_tensor_get_info(sharded, &sharded_info));
    opts.memory = sharded_info.memory; /* L1 height sharded */
    CHECK_NMS_FAILS(s, o, &opts, LM_ERR_UNSUPPORTED,
                    "lmnn_nms: memory config: sharded tensors are not supported yet by this op");
    opts.memory.type = LM_BUFFER_DRAM;
    opts.memory.layout = LM_BUFFER_BLOCK_SHARDED;
    CHECK_NMS_FAILS(s, o, &opts, LM_ERR_UNSUPPORTED, "sharded tensors are not supported");
    opts.memory.type = 0; /* a sharded layout with the type unset */
    CHECK_NMS_FAILS(s, o, &opts, LM_ERR_UNSUPPORTED, "sharded tensors are not supported");
    opts.memory = (lmnn_memory_config){.type = (lm_buffer_type)7, .layout = LM_BUFFER_INTERLEAVED};
    CHECK_NMS_FAILS(s, o, &opts, LM_ERR_INVALID_ARGUMENT,
                    "lmnn_nms: memory config: buffer type 7 is neither DRAM (1) nor L1 (2)");
    CHECK_NMS_FAILS(freed, o, NULL, LM_ERR_INVALID_HANDLE,
                    "lmnn_nms: scores: tensor handle is stale");
    CHECK_NMS_FAILS(s, freed, NULL, LM_ERR_INVALID_HANDLE,
                    "lmnn_nms: overlaps: tensor handle is stale");
    CHECK_NMS_FAILS(s, (lmnn_tensor){0}, NULL, LM_ERR_INVALID_HANDLE,
                    "lmnn_nms: overlaps: tensor handle is zero (no tensor)");
    CHECK_NMS_FAILS(sharded, o, NULL, LM_ERR_UNSUPPORTED,
                    "lmnn_nms: scores: expected an interleaved tensor, given a height sharded one");
    /* The handle checks come before the others. */
    opts.max_per_class = 0;
    CHECK_NMS_FAILS(si, freed, &opts, LM_ERR_INVALID_HANDLE, "lmnn_nms: overlaps: tensor handle");

    /* Tensors on two devices. */
    lm_device *dev2;
    CHECK_OK(lm_device_open(NULL, &dev2));
    lmnn_tensor_options fo;
    lmnn_tensor_options_init(&fo);
    fo.dtype = LMNN_FLOAT32;
    CHECK_OK(lmnn_from_host(dev2, &o3, zeros, 2 * 40 * 40 * 4, &fo, &other));
    CHECK_NMS_FAILS(s, other, NULL, LM_ERR_INVALID_ARGUMENT,
                    "lmnn_nms: overlaps: the tensor is on another device than the op's first "
                    "input");
    lm_device_close(dev2);
    CHECK_NMS_FAILS(s, other, NULL, LM_ERR_INVALID_HANDLE,
                    "lmnn_nms: overlaps: the tensor's device was closed");
    lmnn_tensor_free(other);
    CHECK(out.id == 0);

    /* The device still works. */
    lmnn_nms_options_init(&opts);
    opts.max_per_class = 2;
    CHECK_OK(lmnn_nms(s, o, &opts, &out));
    int32_t *got = read_rows(out, 2 * 3 * 2, LM_BUFFER_DRAM, "after the errors");
    CHECK(got);
    /* All scores 0, tied, above the default -inf, and nothing overlaps:
     * boxes 0 and 1 of every group. */
    for (int r = 0; r < 12; r++)
        CHECK(got[r * 3] == r / 6 && got[r * 3 + 1] == r / 2 % 3 && got[r * 3 + 2] == r % 2);
    free(got);
    lmnn_tensor ts[] = {out, s, o, s2d, s4d, o_wide, o_batch, o2d, si, ou, sharded};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++)
        lmnn_tensor_free(ts[i]);
}

int main(void) {
    TEST_RUN(test_hand_worked);
    TEST_RUN(test_float32);
    TEST_RUN(test_low_precision);
    TEST_RUN(test_threshold);
    TEST_RUN(test_empty);
    TEST_RUN(test_many_rows);
    TEST_RUN(test_groups_and_aliasing);
    TEST_RUN(test_large);
    TEST_RUN(test_cache);
    TEST_RUN(test_no_leftovers);
    TEST_RUN(test_errors);
    nn_dev_close();
    return test_summary();
}
