/* The k best along a dim (lmnn_topk) against a host reference with
 * torch.topk's order (best first, ties in index order, -0 equal to +0, NaN
 * above every number): float32 in both layouts along every dim (positive
 * and negative), shapes of no multiple of 32, k from 1 to the dim's size,
 * the largest and the smallest; ties, NaNs and infinities; bfloat16,
 * bfloat8_b, int32 (beyond 2^24) and uint32 (beyond 2^31); rows longer than
 * the kernel's chunk; L1 tensors; the program cache; no leftover buffers;
 * and every error message. */
#include <stdio.h>

#include "nn_test.h"

/* ---- host data ---- */

/* A tensor of `shape` from doubles converted to the dtype's host element
 * type (mem 0: DRAM). */
static lm_status upload(const lmnn_shape *s, const double *data, lmnn_dtype dt, lmnn_layout lay,
                        lm_buffer_type mem, lmnn_tensor *out) {
    size_t n = lmnn_shape_volume(s), es = lmnn_dtype_host_size(dt);
    unsigned char *h = malloc(n * es + 1);
    for (size_t i = 0; i < n; i++) {
        if (dt == LMNN_INT32) {
            int32_t v = (int32_t)data[i];
            memcpy(h + i * es, &v, es);
        } else if (dt == LMNN_UINT32) {
            uint32_t v = (uint32_t)data[i];
            memcpy(h + i * es, &v, es);
        } else {
            float v = (float)data[i];
            memcpy(h + i * es, &v, es);
        }
    }
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = dt;
    o.layout = lay;
    if (mem) o.memory = (lmnn_memory_config){.type = mem, .layout = LM_BUFFER_INTERLEAVED};
    lm_status st = lmnn_from_host(nn_dev(), s, h, n * es, &o, out);
    free(h);
    return st;
}

/* The tensor's `n` elements as doubles (malloc'ed), or NULL on error. */
static double *download(lmnn_tensor t, lmnn_dtype dt, size_t n) {
    size_t size = 0, es = lmnn_dtype_host_size(dt);
    if (lmnn_tensor_host_size(t, &size) || size != n * es) {
        printf("    host size %zu, want %zu\n", size, n * es);
        return NULL;
    }
    unsigned char *h = malloc(size + 1);
    double *v = malloc(n * sizeof *v + 1);
    if (lmnn_to_host(t, h, size)) {
        printf("    to_host: %s\n", lm_last_error());
        free(h);
        free(v);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (dt == LMNN_INT32) {
            int32_t x;
            memcpy(&x, h + i * es, es);
            v[i] = x;
        } else if (dt == LMNN_UINT32) {
            uint32_t x;
            memcpy(&x, h + i * es, es);
            v[i] = x;
        } else {
            float x;
            memcpy(&x, h + i * es, es);
            v[i] = x;
        }
    }
    free(h);
    return v;
}

/* n values drawn from `levels` evenly spaced ones in [lo, hi) (many ties
 * when levels is small; exact in bfloat16 when the spacing is a power of 2
 * and the values few bits wide). */
static double *levels_data(size_t n, uint32_t levels, double lo, double hi, uint64_t seed) {
    double *v = malloc(n * sizeof *v);
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 5;
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(lo + (hi - lo) * (double)(nn_rand_u32(&s) % levels) / levels);
    return v;
}

/* n float32 values, uniform in [lo, hi) (few ties). */
static double *float_data(size_t n, float lo, float hi, uint64_t seed) {
    float *f = nn_rand_floats(n, lo, hi, seed);
    double *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = f[i];
    free(f);
    return v;
}

/* ---- the reference ---- */

/* Whether x ranks above y: NaN above every number, -0 equal to +0. */
static int ranks_above(double x, double y, int smallest) {
    if (isnan(x) || isnan(y)) return smallest ? !isnan(x) : !isnan(y);
    return smallest ? x < y : x > y;
}

static const double *sort_row_;
static int sort_smallest_;

static int by_rank(const void *pa, const void *pb) {
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    if (ranks_above(sort_row_[a], sort_row_[b], sort_smallest_)) return -1;
    if (ranks_above(sort_row_[b], sort_row_[a], sort_smallest_)) return 1;
    return a < b ? -1 : a > b; /* ties in index order */
}

typedef struct ref_stats {
    uint64_t ties;             /* kept neighbours of equal value (NaNs included) */
    uint64_t nans;             /* NaNs kept */
    uint64_t signed_zero_ties; /* kept -0 next to a kept +0 */
} ref_stats;

static int same_value(double x, double y) {
    return (isnan(x) && isnan(y)) || (x == y && signbit(x) == signbit(y));
}

/* torch.topk(a, k, d, largest = !smallest): values and indices of shape s
 * with dims[d] = k. */
static void reference(const double *a, const lmnn_shape *s, uint32_t d, uint32_t k, int smallest,
                      double *vals, int32_t *idx, ref_stats *st) {
    size_t outer = 1, inner = 1, n = s->dims[d];
    for (uint32_t i = 0; i < d; i++)
        outer *= s->dims[i];
    for (uint32_t i = d + 1; i < s->rank; i++)
        inner *= s->dims[i];
    double *row = malloc(n * sizeof *row);
    uint32_t *ord = malloc(n * sizeof *ord);
    *st = (ref_stats){0};
    for (size_t o = 0; o < outer; o++)
        for (size_t in = 0; in < inner; in++) {
            for (size_t j = 0; j < n; j++) {
                row[j] = a[(o * n + j) * inner + in];
                ord[j] = (uint32_t)j;
            }
            sort_row_ = row;
            sort_smallest_ = smallest;
            qsort(ord, n, sizeof *ord, by_rank);
            for (size_t r = 0; r < k; r++) {
                size_t at = (o * k + r) * inner + in;
                vals[at] = row[ord[r]];
                idx[at] = (int32_t)ord[r];
                st->nans += isnan(row[ord[r]]) != 0;
                if (r > 0) {
                    double p = row[ord[r - 1]], c = row[ord[r]];
                    if (same_value(p, c) || p == c) st->ties++;
                    if (p == 0 && c == 0 && signbit(p) != signbit(c)) st->signed_zero_ties++;
                }
            }
        }
    free(row);
    free(ord);
}

/* ---- the device ---- */

/* How values are compared: exactly (the kept elements' own values), or,
 * for bfloat8_b along the last dim, packed again in blocks of 16: within
 * the block's step (2^-6 of its largest magnitude). */
enum { EXACT = 0, BF8_REPACKED = 1 };

/* The output's shape, dtype, layout and memory are the expected ones. */
static int output_ok(lmnn_tensor t, const lmnn_shape *s, lmnn_dtype dt, lmnn_layout lay,
                     lm_buffer_type mem, const char *what, const char *which) {
    lmnn_tensor_info info;
    if (lmnn_tensor_get_info(t, &info)) {
        printf("    %s: %s: info: %s\n", what, which, lm_last_error());
        return 0;
    }
    int ok = info.shape.rank == s->rank && info.dtype == dt && info.layout == lay &&
             info.memory.type == mem && info.memory.layout == LM_BUFFER_INTERLEAVED;
    for (uint32_t i = 0; ok && i < s->rank; i++)
        ok = info.shape.dims[i] == s->dims[i];
    if (!ok) {
        char got[96] = "", want[96] = "";
        for (uint32_t i = 0; i < info.shape.rank && i < LMNN_MAX_DIMS; i++)
            snprintf(got + strlen(got), sizeof got - strlen(got), " %u", info.shape.dims[i]);
        for (uint32_t i = 0; i < s->rank; i++)
            snprintf(want + strlen(want), sizeof want - strlen(want), " %u", s->dims[i]);
        printf("    %s: %s: [%s ] %s %s memory %d/%d, want [%s ] %s %s memory %d/%d\n", what, which,
               got, lmnn_dtype_name(info.dtype), lmnn_layout_name(info.layout),
               (int)info.memory.type, (int)info.memory.layout, want, lmnn_dtype_name(dt),
               lmnn_layout_name(lay), (int)mem, (int)LM_BUFFER_INTERLEAVED);
    }
    return ok;
}

/* The padding of a tile tensor of 32-bit elements, read raw from its
 * buffer, is all zero (-0 too for float32). */
static int padding_is_zero(lmnn_tensor t) {
    lmnn_tensor_info info;
    if (lmnn_tensor_get_info(t, &info) || info.layout != LMNN_TILE) return 0;
    uint64_t size;
    lm_buffer_size(info.buffer, &size);
    uint32_t *raw = malloc(size), *rm = malloc(size);
    lm_enqueue_read_buffer(lm_device_command_queue(info.device, 0), info.buffer, raw, true);
    uint32_t r = info.shape.rank;
    uint32_t w = info.shape.dims[r - 1], h = r > 1 ? info.shape.dims[r - 2] : 1;
    uint32_t wp = (w + 31) / 32 * 32, hp = (h + 31) / 32 * 32;
    uint64_t mats = size / 4 / ((uint64_t)wp * hp);
    uint32_t neg_zero = info.dtype == LMNN_FLOAT32 ? 0x80000000u : 0;
    int ok = 1;
    for (uint64_t m = 0; m < mats && ok; m++) {
        lm_untilize(raw + m * wp * hp, (size_t)wp * hp * 4, LM_DATA_FORMAT_FLOAT32, hp, wp, rm,
                    (size_t)wp * hp * 4);
        for (uint32_t i = 0; i < hp && ok; i++)
            for (uint32_t j = 0; j < wp && ok; j++)
                if ((i >= h || j >= w) && rm[i * wp + j] != 0 && rm[i * wp + j] != neg_zero) {
                    printf("    padding (%u, %u) of matrix %" PRIu64 " is 0x%08x\n", i, j, m,
                           rm[i * wp + j]);
                    ok = 0;
                }
    }
    free(raw);
    free(rm);
    return ok;
}

typedef struct topk_case {
    lmnn_dtype dt;
    lmnn_layout lay;
    lm_buffer_type mem; /* 0: DRAM */
} topk_case;

static const topk_case f32_tile = {LMNN_FLOAT32, LMNN_TILE, 0};
static const topk_case f32_rm = {LMNN_FLOAT32, LMNN_ROW_MAJOR, 0};

/* Runs lmnn_topk(a, k, dim) (smallest < 0: NULL options, the largest) on
 * data `a` of shape s uploaded as c says, and compares both outputs with
 * the reference computed on the values as uploaded (which must be `a`
 * exactly unless `cmp` is BF8_REPACKED). *st (if given): what the kept
 * elements were. */
static int check_topk(const char *name, const double *a, const lmnn_shape *s, topk_case c,
                      uint32_t k, int32_t dim, int smallest, int cmp, ref_stats *st) {
    char what[256];
    snprintf(what, sizeof what, "%s (%s %s%s, k %u, dim %d, %s)", name, lmnn_dtype_name(c.dt),
             lmnn_layout_name(c.lay), c.mem == LM_BUFFER_L1 ? " L1" : "", k, dim,
             smallest > 0 ? "smallest" : "largest");
    uint32_t d = (uint32_t)(dim < 0 ? dim + (int32_t)s->rank : dim);
    lmnn_shape os = *s;
    os.dims[d] = k;
    size_t n = lmnn_shape_volume(s), m = lmnn_shape_volume(&os);
    lm_buffer_type mem = c.mem ? c.mem : LM_BUFFER_DRAM;
    double *want = malloc(m * sizeof *want + 1), *stored = NULL, *got = NULL;
    int32_t *want_i = malloc(m * sizeof *want_i + 1);
    double *got_i = NULL;
    lmnn_tensor t = {0}, v = {0}, ix = {0};
    int ok = 0;
    ref_stats local;
    if (upload(s, a, c.dt, c.lay, c.mem, &t)) {
        printf("    %s: upload: %s\n", what, lm_last_error());
        goto done;
    }
    if (!(stored = download(t, c.dt, n))) goto done;
    for (size_t i = 0; i < n && cmp == EXACT; i++)
        if (!same_value(stored[i], a[i])) {
            printf("    %s: element %zu is stored as %.9g, not %.9g\n", what, i, stored[i], a[i]);
            goto done;
        }
    reference(stored, s, d, k, smallest > 0, want, want_i, st ? st : &local);
    lmnn_topk_options o;
    lmnn_topk_options_init(&o);
    o.smallest = smallest > 0;
    if (lmnn_topk(t, k, dim, smallest < 0 ? NULL : &o, &v, &ix)) {
        printf("    %s: %s\n", what, lm_last_error());
        goto done;
    }
    if (!output_ok(v, &os, c.dt, c.lay, mem, what, "values") ||
        !output_ok(ix, &os, LMNN_INT32, c.lay, mem, what, "indices"))
        goto done;
    if (c.lay == LMNN_TILE && (c.dt == LMNN_FLOAT32 || c.dt == LMNN_INT32 || c.dt == LMNN_UINT32) &&
        !padding_is_zero(v)) {
        printf("    %s: the values' padding is not zero\n", what);
        goto done;
    }
    if (c.lay == LMNN_TILE && !padding_is_zero(ix)) {
        printf("    %s: the indices' padding is not zero\n", what);
        goto done;
    }
    if (!(got = download(v, c.dt, m)) || !(got_i = download(ix, LMNN_INT32, m))) goto done;
    uint32_t last = os.dims[os.rank - 1];
    for (size_t i = 0; i < m; i++) {
        int good = got_i[i] == want_i[i];
        if (good && cmp == BF8_REPACKED) {
            /* The block: columns 16c .. 16c + 15 of the element's row. */
            size_t start = i - i % last % 16, end = start + 16;
            double big = 0;
            for (size_t j = start; j < end && j < m && j / last == i / last; j++)
                big = fmax(big, fabs(want[j]));
            good = fabs(got[i] - want[i]) <= big / 64 || same_value(got[i], want[i]);
        } else if (good) {
            good = same_value(got[i], want[i]);
        }
        if (!good) {
            printf("    %s: output %zu of %zu: got %.9g at %.0f, want %.9g at %d\n", what, i, m,
                   got[i], got_i[i], want[i], want_i[i]);
            goto done;
        }
    }
    ok = 1;
done:
    free(want), free(want_i), free(stored), free(got), free(got_i);
    lmnn_tensor_free(v), lmnn_tensor_free(ix), lmnn_tensor_free(t);
    return ok;
}

/* ---- tests ---- */

/* The options' defaults, and a hand-worked row the reference must agree
 * with: NaNs (either sign) first for the largest and last for the
 * smallest, in index order; -0 and +0 tie in index order; +-inf. */
static void test_hand_worked(void) {
    lmnn_topk_options o;
    o.smallest = true;
    lmnn_topk_options_init(&o);
    CHECK(!o.smallest);
    lmnn_topk_options_init(NULL);

    enum { N = 13 };
    const double row[N] = {1, NAN, -0.0, 0.0, 2, NAN, INFINITY, -INFINITY, 2, -0.0, 0.0, 1, -NAN};
    const int32_t largest[N] = {1, 5, 12, 6, 4, 8, 0, 11, 2, 3, 9, 10, 7};
    const int32_t smallest[N] = {7, 2, 3, 9, 10, 0, 11, 4, 8, 6, 1, 5, 12};
    lmnn_shape s = LMNN_SHAPE(N);
    double vals[N];
    int32_t idx[N];
    ref_stats st;
    reference(row, &s, 0, N, 0, vals, idx, &st);
    CHECK(!memcmp(idx, largest, sizeof idx));
    CHECK_EQ_U64(st.nans, 3);
    CHECK_EQ_U64(st.signed_zero_ties, 3);
    reference(row, &s, 0, N, 1, vals, idx, &st);
    CHECK(!memcmp(idx, smallest, sizeof idx));

    const topk_case cases[] = {f32_rm, f32_tile, {LMNN_BFLOAT16, LMNN_ROW_MAJOR, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        for (int sm = -1; sm <= 1; sm++) {
            CHECK(check_topk("hand-worked", row, &s, cases[c], N, 0, sm, EXACT, NULL));
            CHECK(check_topk("hand-worked", row, &s, cases[c], 4, -1, sm, EXACT, NULL));
            CHECK(check_topk("hand-worked", row, &s, cases[c], 1, 0, sm, EXACT, NULL));
        }

    /* The outputs read back directly. */
    lmnn_tensor t, v, ix;
    CHECK_OK(upload(&s, row, LMNN_FLOAT32, LMNN_TILE, 0, &t));
    o.smallest = true;
    CHECK_OK(lmnn_topk(t, 6, 0, &o, &v, &ix));
    float gv[6];
    int32_t gi[6];
    CHECK_OK(lmnn_to_host(v, gv, sizeof gv));
    CHECK_OK(lmnn_to_host(ix, gi, sizeof gi));
    CHECK(gv[0] == -INFINITY && gv[1] == 0 && signbit(gv[1]) && gv[2] == 0 && !signbit(gv[2]));
    CHECK(gv[3] == 0 && signbit(gv[3]) && gv[4] == 0 && !signbit(gv[4]) && gv[5] == 1);
    CHECK(gi[0] == 7 && gi[1] == 2 && gi[2] == 3 && gi[3] == 9 && gi[4] == 10 && gi[5] == 0);
    lmnn_tensor_free(v), lmnn_tensor_free(ix);
    CHECK_OK(lmnn_topk(t, 4, -1, NULL, &v, &ix));
    CHECK_OK(lmnn_to_host(v, gv, 4 * sizeof *gv));
    CHECK_OK(lmnn_to_host(ix, gi, 4 * sizeof *gi));
    CHECK(isnan(gv[0]) && isnan(gv[1]) && isnan(gv[2]) && gv[3] == INFINITY);
    CHECK(gi[0] == 1 && gi[1] == 5 && gi[2] == 12 && gi[3] == 6);
    lmnn_tensor_free(v), lmnn_tensor_free(ix), lmnn_tensor_free(t);
}

/* float32 along every dim, named positive and negative, of shapes with no
 * size a multiple of 32; k = 1, a middle value and the dim's size. */
static void test_float32_dims(void) {
    const lmnn_shape shapes[] = {LMNN_SHAPE(3, 37, 45), LMNN_SHAPE(2, 5, 7, 33), LMNN_SHAPE(45),
                                 LMNN_SHAPE(33, 1), LMNN_SHAPE(2, 3, 2, 5, 3, 7)};
    const topk_case cases[] = {f32_tile, f32_rm};
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
        const lmnn_shape *s = &shapes[si];
        double *a = float_data(lmnn_shape_volume(s), -8, 8, 100 + si);
        /* A few equal values, so that the selection meets ties. */
        for (size_t i = 7; i < lmnn_shape_volume(s); i += 5)
            a[i] = a[i - 7];
        int32_t r = (int32_t)s->rank;
        for (int32_t d = 0; d < r; d++) {
            uint32_t n = s->dims[d];
            const uint32_t ks[] = {1, (n + 1) / 2, n};
            for (size_t c = 0; c < 2; c++)
                for (size_t ki = 0; ki < 3; ki++) {
                    if (ki && ks[ki] == ks[ki - 1]) continue;
                    /* Each dim named both ways, alternating per k. */
                    int32_t dim = (ki + c) % 2 ? d - r : d;
                    int sm = (int)((ki + si) % 2);
                    CHECK(check_topk("float32", a, s, cases[c], ks[ki], dim, sm, EXACT, NULL));
                    if (ki == 1)
                        CHECK(check_topk("float32", a, s, cases[c], ks[ki], dim, !sm, EXACT, NULL));
                }
        }
        free(a);
    }
    /* Many more rows than cores. */
    const lmnn_shape many = LMNN_SHAPE(4000, 3);
    double *a = float_data(12000, -8, 8, 109);
    CHECK(check_topk("many rows", a, &many, f32_rm, 2, 1, 0, EXACT, NULL));
    CHECK(check_topk("many rows", a, &many, f32_tile, 3, -1, 1, EXACT, NULL));
    free(a);
}

/* Many equal values (-0 and +0 among them), NaNs of either sign and +-inf:
 * the index order among ties and NaNs, along the last dim and another. */
static void test_ties_and_nans(void) {
    const lmnn_shape s = LMNN_SHAPE(6, 35, 40);
    size_t n = lmnn_shape_volume(&s);
    double *a = malloc(n * sizeof *a);
    uint64_t seed = 77;
    static const double pool[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 1.5, -1.5, 3.0};
    for (size_t i = 0; i < n; i++)
        a[i] = pool[nn_rand_u32(&seed) % (sizeof pool / sizeof *pool)];
    const topk_case cases[] = {f32_tile, f32_rm, {LMNN_BFLOAT16, LMNN_TILE, 0}};
    const int32_t dims[] = {-1, 1, 0};
    const uint32_t ks[] = {3, 20, 35};
    for (size_t c = 0; c < 3; c++)
        for (size_t di = 0; di < 3; di++) {
            uint32_t size = s.dims[dims[di] < 0 ? 2 : dims[di]];
            for (size_t ki = 0; ki < 3; ki++)
                for (int sm = 0; sm < 2; sm++) {
                    uint32_t k = ks[ki] < size ? ks[ki] : size;
                    if (c == 2 && ki == 1) continue;
                    ref_stats st;
                    CHECK(check_topk("ties", a, &s, cases[c], k, dims[di], sm, EXACT, &st));
                    CHECK(st.ties > 0);
                    if (k >= 20) CHECK(st.signed_zero_ties > 0);
                    if (!sm || k == size) CHECK(st.nans > 0);
                }
        }
    free(a);

    /* One row of all-equal zeros of both signs: index order throughout. */
    const lmnn_shape z = LMNN_SHAPE(2, 50);
    double zeros[100];
    for (int i = 0; i < 100; i++)
        zeros[i] = i % 3 ? 0.0 : -0.0;
    for (int sm = 0; sm < 2; sm++) {
        CHECK(check_topk("zeros", zeros, &z, f32_tile, 50, 1, sm, EXACT, NULL));
        CHECK(check_topk("zeros", zeros, &z, f32_rm, 17, -1, sm, EXACT, NULL));
        CHECK(check_topk("zeros", zeros, &z, f32_rm, 2, 0, sm, EXACT, NULL));
    }
}

/* bfloat16 (exact values), bfloat8_b (exact small integers in any
 * packing, and values as stored), int32 and uint32 (compared as integers,
 * beyond what float32 represents). */
static void test_dtypes(void) {
    const lmnn_shape s = LMNN_SHAPE(3, 37, 45);
    size_t n = lmnn_shape_volume(&s);
    /* bfloat16: values of every mantissa bit over several binades, exact;
     * some specials. */
    double *b = float_data(n, -4, 4, 11);
    for (size_t i = 0; i < n; i++)
        b[i] = nn_bf16((float)b[i]);
    b[5] = NAN, b[50] = -0.0, b[51] = 0.0, b[100] = INFINITY, b[101] = -INFINITY;
    const topk_case bcases[] = {{LMNN_BFLOAT16, LMNN_TILE, 0}, {LMNN_BFLOAT16, LMNN_ROW_MAJOR, 0}};
    for (size_t c = 0; c < 2; c++) {
        ref_stats st;
        CHECK(check_topk("bfloat16", b, &s, bcases[c], 9, -1, 0, EXACT, &st));
        CHECK(st.ties > 0 && st.nans > 0);
        CHECK(check_topk("bfloat16", b, &s, bcases[c], 37, 1, 1, EXACT, NULL));
        CHECK(check_topk("bfloat16", b, &s, bcases[c], 2, -3, 0, EXACT, NULL));
        CHECK(check_topk("bfloat16", b, &s, bcases[c], 1, 2, 1, EXACT, NULL));
        CHECK(check_topk("bfloat16", b, &s, bcases[c], 45, 2, 0, EXACT, NULL));
    }
    /* Odd row lengths in bytes: k and N odd, bfloat16 row-major. */
    const lmnn_shape odd = LMNN_SHAPE(5, 3);
    CHECK(check_topk("bfloat16 odd", b, &odd, bcases[1], 3, 1, 0, EXACT, NULL));
    CHECK(check_topk("bfloat16 odd", b, &odd, bcases[1], 1, 0, 1, EXACT, NULL));
    free(b);

    /* bfloat8_b: integers in [-127, 127] are exact in any block. */
    const topk_case b8 = {LMNN_BFLOAT8_B, LMNN_TILE, 0};
    double *i8 = levels_data(n, 255, -127, 128, 12);
    for (size_t i = 0; i < n; i++)
        i8[i] = round(i8[i]);
    for (int sm = 0; sm < 2; sm++) {
        ref_stats st;
        CHECK(check_topk("bfloat8_b integers", i8, &s, b8, 10, -1, sm, EXACT, &st));
        CHECK(st.ties > 0);
        CHECK(check_topk("bfloat8_b integers", i8, &s, b8, 37, 1, sm, EXACT, NULL));
        CHECK(check_topk("bfloat8_b integers", i8, &s, b8, 2, 0, sm, EXACT, NULL));
    }
    free(i8);
    /* bfloat8_b of values of many magnitudes: the reference takes them as
     * stored; values are packed again in their new blocks. */
    double *f8 = float_data(n, -100, 100, 13);
    for (size_t i = 0; i < n; i += 3)
        f8[i] /= 64;
    for (int sm = 0; sm < 2; sm++) {
        CHECK(check_topk("bfloat8_b as stored", f8, &s, b8, 16, -1, sm, BF8_REPACKED, NULL));
        CHECK(check_topk("bfloat8_b as stored", f8, &s, b8, 45, 2, sm, BF8_REPACKED, NULL));
    }
    free(f8);

    /* int32: negatives, the extremes, neighbours above 2^24 that float32
     * rounds together, ties. */
    double *iv = malloc(n * sizeof *iv);
    uint64_t seed = 21;
    static const double ipool[] = {
        16777216,   16777217,          16777218,    16777219, -16777217, -16777218, 2147483647,
        2147483646, -2147483647 - 1.0, -2147483647, -1,       0,         1,         5};
    for (size_t i = 0; i < n; i++)
        iv[i] = ipool[nn_rand_u32(&seed) % (sizeof ipool / sizeof *ipool)];
    const topk_case icases[] = {{LMNN_INT32, LMNN_ROW_MAJOR, 0}, {LMNN_INT32, LMNN_TILE, 0}};
    for (size_t c = 0; c < 2; c++)
        for (int sm = 0; sm < 2; sm++) {
            ref_stats st;
            CHECK(check_topk("int32", iv, &s, icases[c], 20, -1, sm, EXACT, &st));
            CHECK(st.ties > 0);
            CHECK(check_topk("int32", iv, &s, icases[c], 37, -2, sm, EXACT, NULL));
            CHECK(check_topk("int32", iv, &s, icases[c], 3, 0, sm, EXACT, NULL));
        }
    /* A row whose order float32 would lose: 2^24 + 1 above 2^24. */
    const lmnn_shape r4 = LMNN_SHAPE(1, 4);
    const double near[4] = {16777216, 16777217, 16777216, 16777218};
    for (size_t c = 0; c < 2; c++) {
        lmnn_tensor t, v, ix;
        CHECK_OK(upload(&r4, near, LMNN_INT32, icases[c].lay, 0, &t));
        CHECK_OK(lmnn_topk(t, 4, 1, NULL, &v, &ix));
        int32_t gv[4], gi[4];
        CHECK_OK(lmnn_to_host(v, gv, sizeof gv));
        CHECK_OK(lmnn_to_host(ix, gi, sizeof gi));
        CHECK(gv[0] == 16777218 && gv[1] == 16777217 && gv[2] == 16777216 && gv[3] == 16777216);
        CHECK(gi[0] == 3 && gi[1] == 1 && gi[2] == 0 && gi[3] == 2);
        lmnn_tensor_free(v), lmnn_tensor_free(ix), lmnn_tensor_free(t);
    }
    free(iv);

    /* uint32: values above 2^31 (negative as int32) above the small ones. */
    double *uv = malloc(n * sizeof *uv);
    static const double upool[] = {0,          1,          2147483647, 2147483648, 2147483649,
                                   4294967295, 4294967294, 16777217,   16777216,   7};
    for (size_t i = 0; i < n; i++)
        uv[i] = upool[nn_rand_u32(&seed) % (sizeof upool / sizeof *upool)];
    const topk_case ucases[] = {{LMNN_UINT32, LMNN_ROW_MAJOR, 0}, {LMNN_UINT32, LMNN_TILE, 0}};
    for (size_t c = 0; c < 2; c++)
        for (int sm = 0; sm < 2; sm++) {
            ref_stats st;
            CHECK(check_topk("uint32", uv, &s, ucases[c], 20, -1, sm, EXACT, &st));
            CHECK(st.ties > 0);
            CHECK(check_topk("uint32", uv, &s, ucases[c], 37, 1, sm, EXACT, NULL));
            CHECK(check_topk("uint32", uv, &s, ucases[c], 3, -3, sm, EXACT, NULL));
        }
    free(uv);
}

/* Rows longer than the kernel's 16 KiB chunk (float32 10000, bfloat16
 * 20000), with ties and NaNs in every chunk; k = 50 and k = N. */
static void test_long_rows(void) {
    enum { F = 10000, B = 20000 };
    const lmnn_shape fs = LMNN_SHAPE(2, F);
    double *f = levels_data(2 * F, 3000, -1500, 1500, 31);
    /* The largest values late in the row, and NaNs in every chunk. */
    f[F - 3] = 5000, f[F - 1] = 5000, f[2 * F - 2] = 6000;
    for (size_t i = 1000; i < 2 * F; i += 2999)
        f[i] = NAN;
    for (int sm = 0; sm < 2; sm++) {
        ref_stats st;
        CHECK(check_topk("long float32", f, &fs, f32_rm, 50, -1, sm, EXACT, &st));
        if (!sm) CHECK(st.nans > 0);
        CHECK(st.ties > 0);
        CHECK(check_topk("long float32", f, &fs, f32_tile, F, 1, sm, EXACT, NULL));
    }
    free(f);

    const lmnn_shape bs = LMNN_SHAPE(B);
    double *b = levels_data(B, 512, -64, 64, 32);
    b[B - 1] = 100, b[9000] = 100, b[B / 2] = NAN, b[B - 5] = -NAN;
    for (int sm = 0; sm < 2; sm++) {
        ref_stats st;
        CHECK(check_topk("long bfloat16", b, &bs, (topk_case){LMNN_BFLOAT16, LMNN_ROW_MAJOR, 0}, 50,
                         0, sm, EXACT, &st));
        CHECK(st.ties > 0);
        CHECK(check_topk("long bfloat16", b, &bs, (topk_case){LMNN_BFLOAT16, LMNN_TILE, 0}, B, -1,
                         sm, EXACT, NULL));
    }
    free(b);

    /* k at its limit, 32768, of longer rows, along the last dim and the
     * first. */
    const lmnn_shape ls = LMNN_SHAPE(1, 40000), lt = LMNN_SHAPE(40000, 2);
    double *l = levels_data(80000, 512, -16, 16, 33);
    CHECK(check_topk("k 32768", l, &ls, (topk_case){LMNN_BFLOAT16, LMNN_ROW_MAJOR, 0}, 32768, 1, 0,
                     EXACT, NULL));
    CHECK(check_topk("k 32768", l, &lt, f32_tile, 32768, 0, 1, EXACT, NULL));
    free(l);
}

/* Tensors in L1: the outputs are in L1 too. */
static void test_l1(void) {
    const lmnn_shape s = LMNN_SHAPE(4, 300);
    double *a = levels_data(4 * 300, 400, -100, 100, 41);
    const topk_case rm = {LMNN_FLOAT32, LMNN_ROW_MAJOR, LM_BUFFER_L1};
    const topk_case tile = {LMNN_BFLOAT16, LMNN_TILE, LM_BUFFER_L1};
    for (int sm = 0; sm < 2; sm++) {
        CHECK(check_topk("L1", a, &s, rm, 50, -1, sm, EXACT, NULL));
        CHECK(check_topk("L1", a, &s, rm, 3, 0, sm, EXACT, NULL));
        CHECK(check_topk("L1", a, &s, tile, 300, 1, sm, EXACT, NULL));
        CHECK(check_topk("L1", a, &s, tile, 2, -2, sm, EXACT, NULL));
    }
    const lmnn_shape s3 = LMNN_SHAPE(3, 37, 45);
    double *b = float_data(3 * 37 * 45, -1, 1, 42);
    for (size_t i = 0; i < 3 * 37 * 45; i++)
        b[i] = round(b[i] * 1000) + 0.0;
    CHECK(check_topk("L1", b, &s3, (topk_case){LMNN_INT32, LMNN_ROW_MAJOR, LM_BUFFER_L1}, 5, 1, 0,
                     EXACT, NULL));
    free(a);
    free(b);
}

/* A second call of the same shape builds nothing and reads the new data. */
static void test_cache(void) {
    const lmnn_shape s = LMNN_SHAPE(3, 37, 45);
    size_t n = lmnn_shape_volume(&s);
    double *a1 = float_data(n, -1, 1, 51), *a2 = float_data(n, -1, 1, 52);
    const topk_case cases[] = {f32_tile, f32_rm};
    for (size_t c = 0; c < 2; c++) {
        CHECK(check_topk("first", a1, &s, cases[c], 5, 1, 0, EXACT, NULL));
        CHECK(check_topk("first", a1, &s, cases[c], 7, -1, 1, EXACT, NULL));
        lmnn_program_cache_stats before, after;
        CHECK_OK(lmnn_program_cache_get_stats(nn_dev(), &before));
        CHECK(check_topk("again", a2, &s, cases[c], 5, 1, 0, EXACT, NULL));
        CHECK(check_topk("again", a2, &s, cases[c], 7, -1, 1, EXACT, NULL));
        CHECK_OK(lmnn_program_cache_get_stats(nn_dev(), &after));
        CHECK_EQ_U64(after.misses, before.misses);
        CHECK_EQ_U64(after.entries, before.entries);
        CHECK(after.hits > before.hits);
        /* Rows of the same length, fewer of them. */
        const lmnn_shape fewer = LMNN_SHAPE(2, 37, 45);
        CHECK(check_topk("fewer rows", a2, &fewer, cases[c], 7, -1, 1, EXACT, NULL));
        /* Another k and the other direction: their own results. */
        CHECK(check_topk("another k", a2, &s, cases[c], 6, 1, 0, EXACT, NULL));
        CHECK(check_topk("smallest", a2, &s, cases[c], 5, 1, 1, EXACT, NULL));
    }
    free(a1);
    free(a2);
}

/* A call leaves nothing behind but its outputs (another dim than the last,
 * tile layout and bfloat8_b take temporaries). */
static void test_no_leftovers(void) {
    const lmnn_shape s = LMNN_SHAPE(3, 37, 45);
    double *a = levels_data(3 * 37 * 45, 64, 0, 64, 61);
    const struct {
        topk_case c;
        int32_t dim;
        uint32_t k;
    } runs[] = {
        {f32_tile, 0, 2},
        {f32_tile, -2, 37},
        {f32_tile, 2, 4},
        {f32_rm, 1, 3},
        {f32_rm, -1, 45},
        {{LMNN_BFLOAT8_B, LMNN_TILE, 0}, 1, 5},
        {{LMNN_BFLOAT8_B, LMNN_TILE, 0}, -1, 6},
        {{LMNN_UINT32, LMNN_ROW_MAJOR, 0}, 0, 1},
        {{LMNN_BFLOAT16, LMNN_TILE, LM_BUFFER_L1}, 0, 3},
        {{LMNN_FLOAT32, LMNN_ROW_MAJOR, LM_BUFFER_L1}, 2, 10},
        {{LMNN_INT32, LMNN_TILE, 0}, 1, 8},
    };
    for (size_t r = 0; r < sizeof runs / sizeof *runs; r++) {
        lmnn_tensor t, v, ix;
        CHECK_OK(upload(&s, a, runs[r].c.dt, runs[r].c.lay, runs[r].c.mem, &t));
        uint64_t d0, l0, d1, l1, d2, l2;
        CHECK(nn_memory_now(&d0, &l0));
        CHECK_OK(lmnn_topk(t, runs[r].k, runs[r].dim, NULL, &v, &ix));
        CHECK(nn_memory_now(&d1, &l1));
        /* Something was created, where a's memory is. */
        CHECK(runs[r].c.mem == LM_BUFFER_L1 ? l1 > l0 && d1 == d0 : d1 > d0 && l1 == l0);
        CHECK_OK(lmnn_tensor_free(v));
        CHECK_OK(lmnn_tensor_free(ix));
        CHECK(nn_memory_now(&d2, &l2));
        CHECK_EQ_U64(d2, d0);
        CHECK_EQ_U64(l2, l0);
        lmnn_tensor_free(t);
    }
    free(a);
}

/* A call that runs out of L1 (its k best do not fit beside an L1 tensor)
 * fails after making temporaries: it frees them and leaves the outputs
 * alone; with the room back, the same call works. */
static void test_out_of_l1(void) {
    enum { N = 20000, K = 20000 }; /* k: 5 * 4 * K bytes of circular buffers per core */
    lm_memory_stats m;
    CHECK_OK(lm_device_get_memory_stats(nn_dev(), LM_BUFFER_L1, &m));
    CHECK(m.total_free_bytes > 400000);
    /* A row-major filler leaving about 300 KB of each bank free. */
    uint32_t rows = (uint32_t)((m.total_free_bytes - 300000) / 4096 * m.banks);
    lmnn_shape fs = LMNN_SHAPE(rows, 1024), s = LMNN_SHAPE(N, 3);
    double *a = float_data(3 * N, -4, 4, 71);
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = LMNN_FLOAT32;
    o.layout = LMNN_ROW_MAJOR;
    o.memory = (lmnn_memory_config){.type = LM_BUFFER_L1, .layout = LM_BUFFER_INTERLEAVED};
    lmnn_tensor filler, t;
    CHECK_OK(upload(&s, a, LMNN_FLOAT32, LMNN_TILE, 0, &t));
    CHECK_OK(lmnn_full(nn_dev(), &fs, 1.0, &o, &filler));
    uint64_t d0, l0, d1, l1;
    CHECK(nn_memory_now(&d0, &l0));
    lmnn_tensor v = {0x5eed}, ix = {0x5eef};
    lm_status st = lmnn_topk(t, K, 0, NULL, &v, &ix);
    CHECK(nn_memory_now(&d1, &l1));
    lmnn_tensor_free(filler);
    lmnn_tensor_free(t);
    CHECK_STATUS(st, LM_ERR_OUT_OF_DEVICE_MEMORY);
    CHECK_ERROR_HAS("lmnn_topk: ");
    CHECK_ERROR_HAS("circular buffers");
    CHECK(v.id == 0x5eed && ix.id == 0x5eef);
    CHECK_EQ_U64(d1, d0);
    CHECK_EQ_U64(l1, l0);
    CHECK(check_topk("with room", a, &s, f32_tile, K, 0, 0, EXACT, NULL));
    free(a);
}

/* The call fails with `want` and a message containing `needle`, leaves the
 * outputs alone and allocates and builds nothing. null_mask 1: out_values
 * NULL, 2: out_indices NULL. */
static int fails_cleanly(lmnn_tensor a, uint32_t k, int32_t dim, const lmnn_topk_options *opts,
                         int null_mask, lm_status want, const char *needle, int line) {
    uint64_t d0 = 0, l0 = 0, d1 = 0, l1 = 0;
    lmnn_program_cache_stats c0, c1;
    nn_memory_now(&d0, &l0);
    lmnn_program_cache_get_stats(nn_dev(), &c0);
    lmnn_tensor v = {0x5eed}, ix = {0x5eef};
    lm_status st =
        lmnn_topk(a, k, dim, opts, null_mask & 1 ? NULL : &v, null_mask & 2 ? NULL : &ix);
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", lm_last_error());
    nn_memory_now(&d1, &l1);
    lmnn_program_cache_get_stats(nn_dev(), &c1);
    if (st != want || !strstr(msg, needle)) {
        printf("    line %d: gave %s \"%s\", expected %s \"%s\"\n", line, lm_status_string(st), msg,
               lm_status_string(want), needle);
        return 0;
    }
    if (v.id != 0x5eed || ix.id != 0x5eef || d1 != d0 || l1 != l0 || c1.misses != c0.misses ||
        c1.entries != c0.entries) {
        printf("    line %d: the failed call changed an output or allocated or built something\n",
               line);
        return 0;
    }
    return 1;
}

#define CHECK_TOPK_FAILS(a, k, dim, opts, null_mask, want, needle)                                 \
    CHECK(fails_cleanly(a, k, dim, opts, null_mask, want, needle, __LINE__))

static void test_errors(void) {
    lm_device *dev = nn_dev();
    static float zeros[40000];
    static uint16_t zeros16[40000];
    lmnn_shape s3 = LMNN_SHAPE(3, 37, 45), s2 = LMNN_SHAPE(2, 3, 40), big = LMNN_SHAPE(1, 40000);
    lmnn_shape scalar = {0};
    lmnn_tensor a, u16, u8, sc, wide, freed, sharded;
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = LMNN_FLOAT32;
    CHECK_OK(lmnn_from_host(dev, &s3, zeros, 3 * 37 * 45 * 4, &o, &a));
    CHECK_OK(lmnn_from_host(dev, &scalar, zeros, 4, &o, &sc));
    CHECK_OK(lmnn_from_host(dev, &s3, zeros, 3 * 37 * 45 * 4, &o, &freed));
    CHECK_OK(lmnn_tensor_free(freed));
    o.dtype = LMNN_BFLOAT16;
    o.layout = LMNN_ROW_MAJOR;
    CHECK_OK(lmnn_from_host(dev, &big, zeros, 40000 * 4, &o, &wide));
    o.dtype = LMNN_UINT16;
    CHECK_OK(lmnn_from_host(dev, &s3, zeros16, 3 * 37 * 45 * 2, &o, &u16));
    o.dtype = LMNN_UINT8;
    CHECK_OK(lmnn_from_host(dev, &s3, zeros16, 3 * 37 * 45, &o, &u8));
    /* [2, 3, 40] tile: a 64 x 64 matrix, 32-row shards on two cores. */
    CHECK_OK(nn_upload_sharded(&s2, zeros, 64, &sharded));

    lmnn_topk_options opts;
    lmnn_topk_options_init(&opts);
    const char *null_msg = "lmnn_topk: out_values or out_indices is NULL";
    CHECK_TOPK_FAILS(a, 1, 0, &opts, 1, LM_ERR_INVALID_ARGUMENT, null_msg);
    CHECK_TOPK_FAILS(a, 1, 0, NULL, 2, LM_ERR_INVALID_ARGUMENT, null_msg);
    CHECK_FAILS(lmnn_topk(a, 1, 0, NULL, NULL, NULL), LM_ERR_INVALID_ARGUMENT, null_msg);
    /* Before the other checks. */
    CHECK_TOPK_FAILS(freed, 0, 9, NULL, 2, LM_ERR_INVALID_ARGUMENT, null_msg);

    CHECK_TOPK_FAILS(u16, 1, -1, NULL, 0, LM_ERR_INVALID_ARGUMENT,
                     "lmnn_topk: a: expected bfloat16, float32, bfloat8_b, int32 or uint32, given "
                     "uint16");
    CHECK_TOPK_FAILS(u8, 1, 0, &opts, 0, LM_ERR_INVALID_ARGUMENT,
                     "lmnn_topk: a: expected bfloat16, float32, bfloat8_b, int32 or uint32, given "
                     "uint8");
    CHECK_TOPK_FAILS(sc, 1, 0, NULL, 0, LM_ERR_INVALID_ARGUMENT,
                     "lmnn_topk: a: expected at least 1 dim, given a scalar");
    CHECK_TOPK_FAILS(sc, 1, -1, NULL, 0, LM_ERR_INVALID_ARGUMENT,
                     "lmnn_topk: a: expected at least 1 dim, given a scalar");
    CHECK_TOPK_FAILS(a, 1, 3, NULL, 0, LM_ERR_INVALID_ARGUMENT,
                     "lmnn_topk: dim: expected a dim in [-3, 2], given 3");
    CHECK_TOPK_FAILS(a, 1, -4, NULL, 0, LM_ERR_INVALID_ARGUMENT,
                     "lmnn_topk: dim: expected a dim in [-3, 2], given -4");
    CHECK_TOPK_FAILS(a, 1, INT32_MIN, NULL, 0, LM_ERR_INVALID_ARGUMENT,
                     "lmnn_topk: dim: expected a dim in [-3, 2], given -2147483648");
    CHECK_TOPK_FAILS(a, 0, 1, NULL, 0, LM_ERR_INVALID_ARGUMENT,
                     "lmnn_topk: k: expected 1 .. 37 (the size of dim 1), given 0");
    CHECK_TOPK_FAILS(a, 46, -1, NULL, 0, LM_ERR_INVALID_ARGUMENT,
                     "lmnn_topk: k: expected 1 .. 45 (the size of dim 2), given 46");
    CHECK_TOPK_FAILS(a, 4, -3, &opts, 0, LM_ERR_INVALID_ARGUMENT,
                     "lmnn_topk: k: expected 1 .. 3 (the size of dim 0), given 4");
    CHECK_TOPK_FAILS(a, UINT32_MAX, 0, NULL, 0, LM_ERR_INVALID_ARGUMENT,
                     "lmnn_topk: k: expected 1 .. 3 (the size of dim 0), given 4294967295");
    char msg[256];
    const uint32_t ks[] = {32769, 40000, 40001};
    for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) {
        snprintf(msg, sizeof msg,
                 "lmnn_topk: k: expected 1 .. 32768 (the k best of a row stay in one core's L1; "
                 "dim 1 has 40000), given %u",
                 ks[i]);
        CHECK_TOPK_FAILS(wide, ks[i], i ? -1 : 1, NULL, 0, LM_ERR_INVALID_ARGUMENT, msg);
    }
    CHECK_TOPK_FAILS(freed, 1, 0, NULL, 0, LM_ERR_INVALID_HANDLE,
                     "lmnn_topk: a: tensor handle is stale");
    CHECK_TOPK_FAILS((lmnn_tensor){0}, 1, 0, NULL, 0, LM_ERR_INVALID_HANDLE,
                     "lmnn_topk: a: tensor handle is zero (no tensor)");
    CHECK_TOPK_FAILS(sharded, 1, -1, NULL, 0, LM_ERR_UNSUPPORTED,
                     "lmnn_topk: a: expected an interleaved tensor, given a height sharded one");
    /* The handle checks come before the others. */
    CHECK_TOPK_FAILS(freed, 0, 9, NULL, 0, LM_ERR_INVALID_HANDLE, "lmnn_topk: a: tensor handle");

    /* The device still works. */
    lmnn_tensor v, ix;
    CHECK_OK(lmnn_topk(a, 2, 1, NULL, &v, &ix));
    float gv[3 * 2 * 45];
    int32_t gi[3 * 2 * 45];
    CHECK_OK(lmnn_to_host(v, gv, sizeof gv));
    CHECK_OK(lmnn_to_host(ix, gi, sizeof gi));
    for (int i = 0; i < 3 * 2 * 45; i++)
        CHECK(gv[i] == 0 && gi[i] == i / 45 % 2);
    lmnn_tensor ts[] = {v, ix, a, u16, u8, sc, wide, sharded};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++)
        lmnn_tensor_free(ts[i]);
}

int main(void) {
    TEST_RUN(test_hand_worked);
    TEST_RUN(test_float32_dims);
    TEST_RUN(test_ties_and_nans);
    TEST_RUN(test_dtypes);
    TEST_RUN(test_long_rows);
    TEST_RUN(test_l1);
    TEST_RUN(test_cache);
    TEST_RUN(test_no_leftovers);
    TEST_RUN(test_out_of_l1);
    TEST_RUN(test_errors);
    nn_dev_close();
    return test_summary();
}
