/* Reductions: sum, mean, max, min, var, std and norms against float64 host
 * references, over every dim set of a rank-4 tensor, with and without
 * keepdim, shapes that are not multiples of 32, one element, rank 0, large
 * multi-core cases (including the two-launch partial path), all-negative
 * inputs (max must not see the padding), bfloat16 and bfloat8_b inputs, zero
 * padding of the results, and argument errors. */
#include "nn_test.h"

enum { K_SUM, K_MEAN, K_MAX, K_MIN, K_VAR, K_STD, K_N1, K_N2, K_NINF, K_COUNT };
static const char *const kind_name[K_COUNT] = {"sum", "mean",  "max",   "min",    "var",
                                               "std", "norm1", "norm2", "norminf"};

/* The worst error of each kind and dtype seen, printed at the end (the
 * figures of the op's documentation). */
static double worst[K_COUNT][2], worst_pcc[K_COUNT][2] = {{2, 2}, {2, 2}, {2, 2}, {2, 2}, {2, 2},
                                                          {2, 2}, {2, 2}, {2, 2}, {2, 2}};

static lm_status run(int kind, lmnn_tensor a, const lmnn_reduce_options *o, lmnn_tensor *out) {
    switch (kind) {
    case K_SUM:
        return lmnn_sum(a, o, out);
    case K_MEAN:
        return lmnn_mean(a, o, out);
    case K_MAX:
        return lmnn_max(a, o, out);
    case K_MIN:
        return lmnn_min(a, o, out);
    case K_VAR:
        return lmnn_var(a, o, out);
    case K_STD:
        return lmnn_std(a, o, out);
    case K_N1:
        return lmnn_norm(a, 1, o, out);
    case K_N2:
        return lmnn_norm(a, 2, o, out);
    default:
        return lmnn_norm(a, INFINITY, o, out);
    }
}

/* The reference: out[j] for each output element (row-major over the kept
 * dims), and scale[j], the magnitude an error is measured against (sum of
 * |x| over the reduced elements, divided by N for means; |result| for the
 * others). */
static size_t reference(const float *x, const lmnn_shape *s, const bool *red, int kind, double corr,
                        double **out, double **scale) {
    uint32_t r = s->rank;
    size_t n = lmnn_shape_volume(s), m = 1;
    for (uint32_t d = 0; d < r; d++)
        if (!red[d]) m *= s->dims[d];
    double *sum = calloc(m, 8), *sabs = calloc(m, 8), *sq = calloc(m, 8), *cnt = calloc(m, 8);
    double *mx = malloc(m * 8), *mn = malloc(m * 8);
    size_t *map = malloc(n * sizeof *map);
    for (size_t j = 0; j < m; j++)
        mx[j] = -INFINITY, mn[j] = INFINITY;
    uint32_t c[LMNN_MAX_DIMS] = {0};
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        for (uint32_t d = 0; d < r; d++)
            if (!red[d]) j = j * s->dims[d] + c[d];
        map[i] = j;
        double v = x[i];
        sum[j] += v, sabs[j] += fabs(v), sq[j] += v * v, cnt[j] += 1;
        if (v > mx[j]) mx[j] = v;
        if (v < mn[j]) mn[j] = v;
        for (uint32_t d = r; d-- > 0;) {
            if (++c[d] < s->dims[d]) break;
            c[d] = 0;
        }
    }
    double *dev = calloc(m, 8);
    for (size_t i = 0; i < n; i++) {
        double dv = x[i] - sum[map[i]] / cnt[map[i]];
        dev[map[i]] += dv * dv;
    }
    double *o = malloc(m * 8), *sc = malloc(m * 8);
    for (size_t j = 0; j < m; j++) {
        double v = 0, k = sabs[j];
        switch (kind) {
        case K_SUM:
            v = sum[j];
            break;
        case K_MEAN:
            v = sum[j] / cnt[j], k /= cnt[j];
            break;
        case K_MAX:
            v = mx[j], k = fabs(v);
            break;
        case K_MIN:
            v = mn[j], k = fabs(v);
            break;
        case K_VAR:
            v = dev[j] / (cnt[j] - corr), k = fabs(v);
            break;
        case K_STD:
            v = sqrt(dev[j] / (cnt[j] - corr)), k = fabs(v);
            break;
        case K_N1:
            v = sabs[j];
            break;
        case K_N2:
            v = sqrt(sq[j]), k = v;
            break;
        default:
            v = fmax(fabs(mx[j]), fabs(mn[j])), k = v;
        }
        o[j] = v;
        sc[j] = k;
    }
    free(sum), free(sabs), free(sq), free(cnt), free(mx), free(mn), free(map), free(dev);
    *out = o;
    *scale = sc;
    return m;
}

static int shape_eq(const lmnn_shape *a, const lmnn_shape *b) {
    if (a->rank != b->rank) return 0;
    for (uint32_t i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return 0;
    return 1;
}

/* The tile tensor's padding is zero (read raw; float32 tensors). */
static int padding_is_zero(lmnn_tensor t) {
    lmnn_tensor_info info;
    if (lmnn_tensor_get_info(t, &info) || info.layout != LMNN_TILE || info.dtype != LMNN_FLOAT32)
        return 0;
    uint64_t size;
    lm_buffer_size(info.buffer, &size);
    float *raw = malloc(size), *rm = malloc(size);
    lm_enqueue_read_buffer(lm_device_command_queue(info.device, 0), info.buffer, raw, true);
    uint32_t r = info.shape.rank;
    uint32_t w = r ? info.shape.dims[r - 1] : 1, h = r > 1 ? info.shape.dims[r - 2] : 1;
    uint32_t wp = (w + 31) / 32 * 32, hp = (h + 31) / 32 * 32;
    uint64_t mats = size / 4 / ((uint64_t)wp * hp);
    int ok = 1;
    for (uint64_t m = 0; m < mats && ok; m++) {
        lm_untilize(raw + m * wp * hp, (size_t)wp * hp * 4, LM_DATA_FORMAT_FLOAT32, hp, wp, rm,
                    (size_t)wp * hp * 4);
        for (uint32_t i = 0; i < hp && ok; i++)
            for (uint32_t j = 0; j < wp; j++) {
                uint32_t bits;
                memcpy(&bits, &rm[i * wp + j], 4);
                if ((i >= h || j >= w) && bits != 0) ok = 0;
            }
    }
    free(raw);
    free(rm);
    return ok;
}

/* Runs `kind` over `red` of a tensor of shape s from x in `dtype` and checks
 * the result's shape, values and padding. Returns 0 on failure (after
 * reporting it). */
static int check_one(const float *x, const lmnn_shape *s, lmnn_dtype dtype, const bool *red,
                     bool keepdim, int kind) {
    lmnn_reduce_options o;
    lmnn_reduce_options_init(&o);
    o.keepdim = keepdim;
    uint32_t mask = 0;
    for (uint32_t d = 0; d < s->rank; d++)
        if (red[d]) mask |= 1u << d;
    /* Alternate the two ways of naming dims (negative dims in the list). */
    if (mask && mask % 3) {
        for (uint32_t d = 0; d < s->rank; d++)
            if (red[d]) o.dims[o.dim_count++] = (int32_t)d - (int32_t)(d % 2 ? s->rank : 0);
    } else {
        o.dim_mask = mask;
    }
    size_t n = lmnn_shape_volume(s);
    float *xr = malloc(n * sizeof *xr);
    for (size_t i = 0; i < n; i++)
        xr[i] = dtype == LMNN_BFLOAT16 ? nn_bf16(x[i]) : x[i];
    lmnn_tensor a, y;
    int ok = 1;
    char what[160];
    snprintf(what, sizeof what, "%s %s mask 0x%x keepdim %d rank %u", kind_name[kind],
             lmnn_dtype_name(dtype), mask, keepdim, s->rank);
    if (nn_upload(s, x, dtype, LMNN_TILE, &a) || run(kind, a, &o, &y)) {
        test_fail_(__FILE__, __LINE__, lm_last_error());
        free(xr);
        return 0;
    }
    lmnn_tensor_info info;
    lmnn_tensor_get_info(y, &info);
    lmnn_shape want = {0};
    for (uint32_t d = 0; d < s->rank; d++)
        if (!red[d] || keepdim) want.dims[want.rank++] = red[d] ? 1 : s->dims[d];
    if (!shape_eq(&info.shape, &want)) {
        test_fail_(__FILE__, __LINE__, what);
        ok = 0;
    }
    double *ref, *scale;
    size_t m = reference(xr, s, red, kind, 1.0, &ref, &scale);
    float *got = nn_download(y);
    double bound = dtype == LMNN_FLOAT32 ? 1e-5 : 1.0 / 128;
    double err = 0;
    for (size_t j = 0; got && j < m && ok; j++) {
        double e = fabs(got[j] - ref[j]);
        double k = scale[j] > 0 ? scale[j] : 1e-30;
        if (isnan(ref[j]) != isnan(got[j]) || (!isnan(ref[j]) && e > bound * k)) {
            char msg[300];
            snprintf(msg, sizeof msg, "%s: element %zu: got %.9g want %.9g", what, j, got[j],
                     ref[j]);
            test_fail_(__FILE__, __LINE__, msg);
            ok = 0;
        }
        if (!isnan(ref[j]) && e / k > err) err = e / k;
    }
    if (!got) ok = 0, test_fail_(__FILE__, __LINE__, lm_last_error());
    if (dtype == LMNN_FLOAT32 && info.dtype == LMNN_FLOAT32 && !padding_is_zero(y)) {
        char msg[200];
        snprintf(msg, sizeof msg, "%s: padding not zero", what);
        test_fail_(__FILE__, __LINE__, msg);
        ok = 0;
    }
    int di = dtype == LMNN_FLOAT32 ? 0 : 1;
    if (err > worst[kind][di]) worst[kind][di] = err;
    if (got && m > 1) {
        nn_err e = nn_compare(got, ref, m, 1.0);
        if (e.pcc < worst_pcc[kind][di]) worst_pcc[kind][di] = e.pcc;
    }
    free(got), free(ref), free(scale), free(xr);
    lmnn_tensor_free(a);
    lmnn_tensor_free(y);
    return ok;
}

/* Every op over the last dim, the last two and all dims, on small shapes. */
static void test_ops_small(void) {
    lmnn_shape shapes[] = {LMNN_SHAPE(1),      LMNN_SHAPE(7),         LMNN_SHAPE(3, 5),
                           LMNN_SHAPE(33, 65), LMNN_SHAPE(2, 40, 70), LMNN_SHAPE(1, 1, 1)};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        size_t n = lmnn_shape_volume(&shapes[i]);
        float *x = nn_rand_floats(n, -3, 5, 11 + i);
        uint32_t r = shapes[i].rank;
        for (int sel = 0; sel < 3; sel++) {
            bool red[LMNN_MAX_DIMS] = {0};
            for (uint32_t d = 0; d < r; d++)
                red[d] = sel == 2 || d == r - 1 || (sel == 1 && d + 2 == r);
            for (int k = 0; k < K_COUNT; k++)
                if (!check_one(x, &shapes[i], LMNN_FLOAT32, red, sel == 1, k)) break;
        }
        free(x);
    }
}

/* Every subset of dims of a rank-4 tensor, keepdim on and off, for sum, max
 * (all-negative data: padding must not win) and var. */
static void test_every_dim_set(void) {
    lmnn_shape s = LMNN_SHAPE(3, 2, 37, 45);
    size_t n = lmnn_shape_volume(&s);
    float *x = nn_rand_floats(n, -9, -1, 5);
    for (uint32_t mask = 0; mask < 16; mask++) {
        bool red[LMNN_MAX_DIMS] = {0};
        for (uint32_t d = 0; d < 4; d++)
            red[d] = mask >> d & 1;
        if (!mask) continue; /* mask 0 means every dim: covered elsewhere */
        for (int keep = 0; keep < 2; keep++) {
            if (!check_one(x, &s, LMNN_FLOAT32, red, keep, K_SUM)) goto out;
            if (!check_one(x, &s, LMNN_FLOAT32, red, keep, K_MAX)) goto out;
            if (!check_one(x, &s, LMNN_FLOAT32, red, keep, K_MIN)) goto out;
            if (!check_one(x, &s, LMNN_FLOAT32, red, keep, K_VAR)) goto out;
            if (!keep && !check_one(x, &s, LMNN_FLOAT32, red, keep, K_MEAN)) goto out;
        }
    }
out:
    free(x);
}

/* Rank 0 and a single element. */
static void test_scalar(void) {
    lmnn_shape s0 = lmnn_shape_of(0, NULL);
    float v = -2.5f;
    lmnn_tensor a, y;
    CHECK_OK(nn_upload(&s0, &v, LMNN_FLOAT32, LMNN_TILE, &a));
    CHECK_OK(lmnn_sum(a, NULL, &y));
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(y, &info));
    CHECK(info.shape.rank == 0);
    float got = 0;
    CHECK_OK(lmnn_to_host(y, &got, sizeof got));
    CHECK(got == -2.5f);
    lmnn_tensor_free(y);
    lmnn_reduce_options o;
    lmnn_reduce_options_init(&o);
    o.dims[0] = -1;
    o.dim_count = 1;
    CHECK_OK(lmnn_max(a, &o, &y));
    CHECK_OK(lmnn_to_host(y, &got, sizeof got));
    CHECK(got == -2.5f);
    lmnn_tensor_free(y);
    lmnn_tensor_free(a);
    lmnn_shape s1 = LMNN_SHAPE(1, 1);
    bool red[LMNN_MAX_DIMS] = {true, true};
    for (int k = 0; k < K_COUNT; k++)
        if (k != K_VAR && k != K_STD) check_one(&v, &s1, LMNN_FLOAT32, red, false, k);
    /* var of one element with correction 1 is NaN (0 / 0), as in PyTorch. */
    CHECK_OK(nn_upload(&s1, &v, LMNN_FLOAT32, LMNN_TILE, &a));
    CHECK_OK(lmnn_var(a, NULL, &y));
    CHECK_OK(lmnn_to_host(y, &got, sizeof got));
    CHECK(isnan(got));
    lmnn_tensor_free(y);
    o.dim_count = 0;
    o.correction = 0;
    CHECK_OK(lmnn_var(a, &o, &y));
    CHECK_OK(lmnn_to_host(y, &got, sizeof got));
    CHECK(got == 0);
    lmnn_tensor_free(y);
    lmnn_tensor_free(a);
}

/* bfloat16 and bfloat8_b inputs. */
static void test_low_precision(void) {
    lmnn_shape s = LMNN_SHAPE(2, 50, 70);
    size_t n = lmnn_shape_volume(&s);
    float *x = nn_rand_floats(n, -4, 2, 21);
    bool rw[LMNN_MAX_DIMS] = {false, false, true}, rh[LMNN_MAX_DIMS] = {false, true, false};
    bool r0[LMNN_MAX_DIMS] = {true, false, false};
    for (int k = 0; k < K_COUNT; k++) {
        if (!check_one(x, &s, LMNN_BFLOAT16, rw, false, k)) break;
        if (!check_one(x, &s, LMNN_BFLOAT16, rh, true, k)) break;
        if (!check_one(x, &s, LMNN_BFLOAT16, r0, false, k)) break;
    }
    /* bfloat8_b: max and min (padding filled in a bfloat16 copy) and sum,
     * against the values the tensor holds. */
    lmnn_tensor a, y;
    CHECK_OK(nn_upload(&s, x, LMNN_BFLOAT8_B, LMNN_TILE, &a));
    float *held = nn_download(a);
    CHECK(held);
    lmnn_reduce_options o;
    lmnn_reduce_options_init(&o);
    o.dims[0] = -1;
    o.dim_count = 1;
    o.output.dtype = LMNN_FLOAT32;
    for (int k = 0; k < 3; k++) {
        int kind = k == 0 ? K_MAX : k == 1 ? K_MIN : K_SUM;
        CHECK_OK(run(kind, a, &o, &y));
        float *got = nn_download(y);
        double *ref, *scale;
        size_t m = reference(held, &s, rw, kind, 1, &ref, &scale);
        for (size_t j = 0; j < m; j++)
            CHECK(fabs(got[j] - ref[j]) <= 1e-5 * scale[j]);
        free(got), free(ref), free(scale);
        lmnn_tensor_free(y);
    }
    /* A bfloat8_b result through the relayout (bfloat16 first). */
    o.output.dtype = LMNN_BFLOAT8_B;
    CHECK_OK(lmnn_max(a, &o, &y));
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(y, &info));
    CHECK(info.dtype == LMNN_BFLOAT8_B && info.shape.rank == 2 && info.shape.dims[1] == 50);
    lmnn_tensor_free(y);
    free(held);
    lmnn_tensor_free(a);
    free(x);
}

/* Large tensors on all cores: rows, columns, outer dims and everything (the
 * last two through partial results). */
static void test_large(void) {
    lmnn_shape s = LMNN_SHAPE(8, 512, 1024);
    size_t n = lmnn_shape_volume(&s);
    float *x = nn_rand_floats(n, -1, 1, 3);
    bool sets[4][LMNN_MAX_DIMS] = {
        {false, false, true}, {true, false, false}, {false, true, true}, {true, true, true}};
    for (int i = 0; i < 4; i++) {
        if (!check_one(x, &s, LMNN_FLOAT32, sets[i], false, K_SUM)) break;
        if (!check_one(x, &s, LMNN_FLOAT32, sets[i], false, i == 3 ? K_MIN : K_MAX)) break;
        if (i >= 2 && !check_one(x, &s, LMNN_FLOAT32, sets[i], false, K_STD)) break;
    }
    free(x);
}

static void test_errors(void) {
    lmnn_shape s = LMNN_SHAPE(2, 3, 4, 5);
    float x[120] = {0};
    lmnn_tensor a, y = {0}, rm;
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_TILE, &a));
    lmnn_reduce_options o;
    lmnn_reduce_options_init(&o);
    o.dims[0] = 4;
    o.dim_count = 1;
    CHECK_FAILS(lmnn_sum(a, &o, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_sum: dims: dim 4 is out of range for a tensor of rank 4 (expected -4..3)");
    o.dims[0] = -5;
    CHECK_FAILS(lmnn_max(a, &o, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max: dims: dim -5 is out of range for a tensor of rank 4");
    o.dims[0] = 1;
    o.dims[1] = -3;
    o.dim_count = 2;
    CHECK_FAILS(lmnn_mean(a, &o, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_mean: dims: dim -3 appears more than once");
    o.dim_count = 9;
    CHECK_FAILS(lmnn_var(a, &o, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_var: dim_count: expected at most 8, given 9");
    o.dim_count = 1;
    o.dim_mask = 1;
    CHECK_FAILS(lmnn_std(a, &o, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_std: dims and dim_mask: give the dims one way, not both");
    o.dim_count = 0;
    o.dim_mask = 0x10;
    CHECK_FAILS(lmnn_min(a, &o, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_min: dim_mask: 0x10 names dims beyond the tensor's rank 4");
    o.dim_mask = 0;
    o.output.dtype = LMNN_UINT32;
    CHECK_FAILS(lmnn_sum(a, &o, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_sum: output.dtype: expected a float dtype, given uint32");
    CHECK_FAILS(lmnn_norm(a, 3, NULL, &y), LM_ERR_UNSUPPORTED,
                "lmnn_norm: p: expected 1, 2 or INFINITY, given 3");
    CHECK_FAILS(lmnn_sum(a, NULL, NULL), LM_ERR_INVALID_ARGUMENT, "lmnn_sum: out is NULL");
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_ROW_MAJOR, &rm));
    CHECK_FAILS(lmnn_sum(rm, NULL, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_sum: a: expected layout tile, given row_major");
    lmnn_tensor_free(rm);
    lmnn_tensor_options to;
    lmnn_tensor_options_init(&to);
    to.dtype = LMNN_INT32;
    int32_t ix[120] = {0};
    CHECK_OK(lmnn_from_host(nn_dev(), &s, ix, sizeof ix, &to, &rm));
    CHECK_FAILS(lmnn_max(rm, NULL, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max: a: expected a float dtype (bfloat16, float32, bfloat8_b), given int32");
    lmnn_tensor_free(rm);
    CHECK_OK(lmnn_tensor_free(a));
    CHECK_FAILS(lmnn_sum(a, NULL, &y), LM_ERR_INVALID_HANDLE, "lmnn_sum: a: tensor handle");
    CHECK_FAILS(lmnn_sum((lmnn_tensor){0}, NULL, &y), LM_ERR_INVALID_HANDLE,
                "lmnn_sum: a: tensor handle is zero");
    CHECK(y.id == 0);
    /* The device still works. */
    float v[3] = {1, 2, 3}, got = 0;
    lmnn_shape s3 = LMNN_SHAPE(3);
    CHECK_OK(nn_upload(&s3, v, LMNN_FLOAT32, LMNN_TILE, &a));
    CHECK_OK(lmnn_sum(a, NULL, &y));
    CHECK_OK(lmnn_to_host(y, &got, sizeof got));
    CHECK(got == 6);
    lmnn_tensor_free(a);
    lmnn_tensor_free(y);
}

/* var and std are two-pass: data far from zero (mean 1000, spread 1) keeps
 * its variance, which sum(x^2) - N mean^2 in float32 would lose. Several
 * tile counts per output (an input tile and the mean tile once met in the
 * engine's operand cache). */
static void test_var_offset(void) {
    uint32_t rows[] = {256, 512, 6400, 256};
    for (int i = 0; i < 4; i++) {
        /* [256, 32]: the eighth tile of the second pass and the mean tile
         * shared an operand cache slot. */
        lmnn_shape s = LMNN_SHAPE(rows[i], i == 3 ? 32 : 33);
        size_t n = lmnn_shape_volume(&s);
        float *x = nn_rand_floats(n, 999, 1001, 40 + i);
        bool all[LMNN_MAX_DIMS] = {true, true}, cols[LMNN_MAX_DIMS] = {true, false};
        CHECK(check_one(x, &s, LMNN_FLOAT32, all, false, K_VAR));
        CHECK(check_one(x, &s, LMNN_FLOAT32, cols, true, K_STD));
        free(x);
    }
}

/* A second call with the same shapes reuses the cached programs. */
static void test_cache(void) {
    lmnn_shape s = LMNN_SHAPE(4, 40, 50);
    float *x = nn_rand_floats(lmnn_shape_volume(&s), -1, 1, 9);
    lmnn_tensor a, y;
    CHECK_OK(nn_upload(&s, x, LMNN_FLOAT32, LMNN_TILE, &a));
    lmnn_reduce_options o;
    lmnn_reduce_options_init(&o);
    o.dims[0] = -1;
    o.dim_count = 1;
    CHECK_OK(lmnn_std(a, &o, &y));
    lmnn_tensor_free(y);
    lmnn_program_cache_stats before, after;
    CHECK_OK(lmnn_program_cache_get_stats(nn_dev(), &before));
    CHECK_OK(lmnn_std(a, &o, &y));
    CHECK_OK(lmnn_program_cache_get_stats(nn_dev(), &after));
    CHECK(after.misses == before.misses && after.hits > before.hits);
    lmnn_tensor_free(y);
    lmnn_tensor_free(a);
    free(x);
}

/* ---- argmax, argmin, prod ---- */

/* Host reference of an index reduction along `dim` (-1: flattened): the
 * first index of the extreme, a NaN counting as the extreme. out[j] over the
 * kept dims in row-major order. */
static size_t ref_arg(const float *x, const lmnn_shape *s, int dim, bool is_max, uint32_t *out) {
    size_t n = lmnn_shape_volume(s);
    if (dim < 0) {
        size_t best = 0;
        for (size_t i = 1; i < n; i++) {
            if (isnan(x[best])) break;
            if (isnan(x[i]) || (is_max ? x[i] > x[best] : x[i] < x[best])) best = i;
        }
        out[0] = (uint32_t)best;
        return 1;
    }
    size_t inner = 1, outer = 1, len = s->dims[dim];
    for (uint32_t d = (uint32_t)dim + 1; d < s->rank; d++)
        inner *= s->dims[d];
    for (int d = 0; d < dim; d++)
        outer *= s->dims[d];
    for (size_t o = 0; o < outer; o++)
        for (size_t i = 0; i < inner; i++) {
            size_t best = 0;
            for (size_t k = 1; k < len; k++) {
                float b = x[(o * len + best) * inner + i], v = x[(o * len + k) * inner + i];
                if (isnan(b)) break;
                if (isnan(v) || (is_max ? v > b : v < b)) best = k;
            }
            out[o * inner + i] = (uint32_t)best;
        }
    return outer * inner;
}

/* Runs argmax or argmin of x (shape s, dtype) along dim (-1: all) and
 * compares with the reference; returns the number of wrong indices. */
static size_t arg_case(const float *x, const lmnn_shape *s, lmnn_dtype dtype, int dim, bool is_max,
                       bool keepdim) {
    size_t n = lmnn_shape_volume(s);
    float *xr = malloc(n * sizeof *xr);
    for (size_t i = 0; i < n; i++)
        xr[i] = dtype == LMNN_BFLOAT16 ? nn_bf16(x[i]) : x[i];
    uint32_t *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
    size_t m = ref_arg(xr, s, dim, is_max, want);
    lmnn_tensor a, y;
    lmnn_reduce_options o;
    lmnn_reduce_options_init(&o);
    if (dim >= 0) o.dims[0] = dim, o.dim_count = 1;
    o.keepdim = keepdim;
    size_t bad = n + 1;
    if (!nn_upload(s, x, dtype, LMNN_TILE, &a)) {
        if (!(is_max ? lmnn_argmax(a, &o, &y) : lmnn_argmin(a, &o, &y))) {
            lmnn_tensor_info info;
            lmnn_tensor_get_info(y, &info);
            lmnn_shape ws = {0};
            for (uint32_t d = 0; d < s->rank; d++)
                if (keepdim || (dim >= 0 && (int)d != dim))
                    ws.dims[ws.rank++] = (dim < 0 || (int)d == dim) ? 1 : s->dims[d];
            bool shape_ok = info.shape.rank == ws.rank && info.dtype == LMNN_UINT32;
            for (uint32_t d = 0; d < ws.rank && shape_ok; d++)
                shape_ok = info.shape.dims[d] == ws.dims[d];
            if (shape_ok && !lmnn_to_host(y, got, m * 4)) {
                bad = 0;
                for (size_t j = 0; j < m; j++)
                    bad += got[j] != want[j];
            }
            lmnn_tensor_free(y);
        } else {
            printf("  %s\n", lm_last_error());
        }
        lmnn_tensor_free(a);
    }
    free(xr);
    free(want);
    free(got);
    return bad;
}

/* Ties (few distinct values: the first occurrence must win), all-negative
 * data (the zero padding must not win), every dim and all dims, keepdim,
 * float32 and bfloat16, and a multi-core case. */
static void test_argmax(void) {
    lmnn_shape s = LMNN_SHAPE(2, 3, 45, 70);
    size_t n = lmnn_shape_volume(&s);
    float *x = nn_rand_floats(n, -9, -1, 60);
    for (size_t i = 0; i < n; i++)
        x[i] = floorf(x[i]); /* -9 .. -2: many ties */
    for (int d = 0; d < 2; d++) {
        lmnn_dtype dtype = d ? LMNN_BFLOAT16 : LMNN_FLOAT32;
        for (int dim = -1; dim < 4; dim++)
            for (int mx = 0; mx < 2; mx++) {
                size_t bad = arg_case(x, &s, dtype, dim, mx, dim == 2);
                if (bad)
                    printf("  arg%s dim %d %s: %zu wrong\n", mx ? "max" : "min", dim,
                           d ? "bf16" : "fp32", bad);
                CHECK(bad == 0);
            }
    }
    free(x);
    /* Distinct values (all-dims argmax with keepdim), one element, rank 1,
     * and long rows (their indices written by many cores). */
    lmnn_shape shapes[] = {LMNN_SHAPE(1), LMNN_SHAPE(1, 1), LMNN_SHAPE(1000),
                           LMNN_SHAPE(4, 100, 333), LMNN_SHAPE(2, 5000)};
    for (size_t k = 0; k < 5; k++) {
        size_t m = lmnn_shape_volume(&shapes[k]);
        float *v = nn_rand_floats(m, -100, 100, 61 + k);
        int rank = (int)shapes[k].rank;
        for (int dim = -1; dim < rank; dim++)
            for (int mx = 0; mx < 2; mx++) {
                size_t bad = arg_case(v, &shapes[k], LMNN_FLOAT32, dim, mx, dim < 0 && mx);
                if (bad) printf("  shape %zu dim %d: %zu wrong\n", k, dim, bad);
                CHECK(bad == 0);
            }
        free(v);
    }
}

/* NaN is the extreme (its first occurrence), infinities are ordinary, and
 * int32 output on request. */
static void test_argmax_special(void) {
    float x[3][8] = {{1, NAN, 5, NAN, -1, 2, 3, 4},
                     {-INFINITY, -INFINITY, 0, 0, INFINITY, INFINITY, 1, -2},
                     {-0.0f, 0.0f, -3, 7, 7, -3, 1, 1}};
    lmnn_shape s = LMNN_SHAPE(3, 8);
    for (int mx = 0; mx < 2; mx++)
        for (int dim = -1; dim < 2; dim++) {
            size_t bad = arg_case(&x[0][0], &s, LMNN_FLOAT32, dim, mx, false);
            if (bad) printf("  arg%s dim %d: %zu wrong\n", mx ? "max" : "min", dim, bad);
            CHECK(bad == 0);
        }
    lmnn_tensor a, y;
    CHECK_OK(nn_upload(&s, &x[0][0], LMNN_FLOAT32, LMNN_TILE, &a));
    lmnn_reduce_options o;
    lmnn_reduce_options_init(&o);
    o.dims[0] = 1;
    o.dim_count = 1;
    o.output.dtype = LMNN_INT32;
    CHECK_OK(lmnn_argmax(a, &o, &y));
    int32_t got[3];
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(y, &info));
    CHECK(info.dtype == LMNN_INT32);
    CHECK_OK(lmnn_to_host(y, got, sizeof got));
    CHECK(got[0] == 1 && got[1] == 4 && got[2] == 3);
    lmnn_tensor_free(y);
    /* Errors. */
    o.output.dtype = LMNN_FLOAT32;
    CHECK_FAILS(lmnn_argmax(a, &o, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_argmax: output.dtype: expected uint32 or int32, given float32");
    o.output.dtype = 0;
    o.dims[1] = 0;
    o.dim_count = 2;
    CHECK_FAILS(lmnn_argmin(a, &o, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_argmin: dims: expected one dim (or none for all of them), given 2");
    o.dim_count = 0;
    o.dim_mask = 3;
    CHECK_FAILS(lmnn_argmin(a, &o, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_argmin: dims: expected one dim (or none for all of them), given 2");
    o.dim_mask = 0;
    o.dims[0] = 2;
    o.dim_count = 1;
    CHECK_FAILS(lmnn_argmax(a, &o, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_argmax: dims: dim 2 is out of range for a tensor of rank 2");
    CHECK_FAILS(lmnn_argmax(a, NULL, NULL), LM_ERR_INVALID_ARGUMENT, "lmnn_argmax: out is NULL");
    lmnn_tensor rm;
    CHECK_OK(nn_upload(&s, &x[0][0], LMNN_FLOAT32, LMNN_ROW_MAJOR, &rm));
    CHECK_FAILS(lmnn_argmax(rm, NULL, &y), LM_ERR_INVALID_ARGUMENT,
                "lmnn_argmax: a: expected layout tile, given row_major");
    lmnn_tensor_free(rm);
    lmnn_tensor_free(a);
    CHECK_FAILS(lmnn_argmax(a, NULL, &y), LM_ERR_INVALID_HANDLE, "lmnn_argmax: a: tensor handle");
}

/* prod against a float64 reference: signs, zeros, every dim, dim pairs,
 * all dims, keepdim, float32 and bfloat16; measured error printed. */
static double prod_worst[2];

static void prod_case(const float *x, const lmnn_shape *s, lmnn_dtype dtype, const bool *red,
                      bool keepdim) {
    size_t n = lmnn_shape_volume(s);
    uint32_t r = s->rank;
    size_t m = 1;
    for (uint32_t d = 0; d < r; d++)
        if (!red[d]) m *= s->dims[d];
    double *want = malloc(m * sizeof *want);
    for (size_t j = 0; j < m; j++)
        want[j] = 1;
    uint32_t c[LMNN_MAX_DIMS] = {0};
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        for (uint32_t d = 0; d < r; d++)
            if (!red[d]) j = j * s->dims[d] + c[d];
        want[j] *= dtype == LMNN_BFLOAT16 ? nn_bf16(x[i]) : x[i];
        for (uint32_t d = r; d-- > 0;) {
            if (++c[d] < s->dims[d]) break;
            c[d] = 0;
        }
    }
    lmnn_tensor a, y;
    lmnn_reduce_options o;
    lmnn_reduce_options_init(&o);
    for (uint32_t d = 0; d < r; d++)
        if (red[d]) o.dim_mask |= 1u << d;
    o.keepdim = keepdim;
    CHECK_OK(nn_upload(s, x, dtype, LMNN_TILE, &a));
    CHECK_OK(lmnn_prod(a, &o, &y));
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(y, &info));
    CHECK(lmnn_shape_volume(&info.shape) == m && info.dtype == dtype);
    CHECK(info.shape.rank == (keepdim ? r : r - (uint32_t)__builtin_popcount(o.dim_mask)));
    float *got = nn_download(y);
    CHECK(got);
    nn_err e = nn_compare(got, want, m, 1e-30);
    int di = dtype == LMNN_BFLOAT16;
    if (e.max_rel > prod_worst[di]) prod_worst[di] = e.max_rel;
    if (dtype == LMNN_FLOAT32) {
        /* One rounding per product, up to ~1000 of them in a row. */
        CHECK_ERR(e, 0.99999, 0, 1e-5);
        CHECK(nn_padding_is_zero(y));
    } else {
        CHECK_ERR(e, 0.999, 0, 6e-3);
    }
    free(got);
    free(want);
    lmnn_tensor_free(a);
    lmnn_tensor_free(y);
}

static void test_prod(void) {
    lmnn_shape s = LMNN_SHAPE(2, 3, 45, 70);
    size_t n = lmnn_shape_volume(&s);
    float *x = nn_rand_floats(n, 0.5f, 1.5f, 70);
    for (size_t i = 0; i < n; i += 3)
        x[i] = -x[i];
    x[5] = 0; /* one zero product */
    for (int d = 0; d < 2; d++) {
        lmnn_dtype dtype = d ? LMNN_BFLOAT16 : LMNN_FLOAT32;
        for (uint32_t mask = 1; mask < 16; mask++) {
            if (mask == 15) continue; /* all dims: below, on values nearer 1 */
            bool red[LMNN_MAX_DIMS] = {0};
            for (int k = 0; k < 4; k++)
                red[k] = mask >> k & 1;
            prod_case(x, &s, dtype, red, mask & 1);
            if (test_current_failed_) {
                printf("  prod mask 0x%x %s\n", mask, d ? "bf16" : "fp32");
                goto out;
            }
        }
    }
    /* Every dim (default options), 1 element, rank 1 with padding. */
    {
        lmnn_shape shapes[] = {LMNN_SHAPE(3, 40, 50), LMNN_SHAPE(1), LMNN_SHAPE(333)};
        for (int k = 0; k < 3; k++) {
            size_t m = lmnn_shape_volume(&shapes[k]);
            float *v = nn_rand_floats(m, 0.97f, 1.03f, 71 + k);
            bool all[LMNN_MAX_DIMS] = {true, true, true};
            prod_case(v, &shapes[k], LMNN_FLOAT32, all, k == 0);
            prod_case(v, &shapes[k], LMNN_BFLOAT16, all, false);
            free(v);
        }
    }
    /* bfloat8_b in (reduced as a bfloat16 copy: the padding's ones would
     * cost a face row's small values their precision), float32 out. */
    {
        lmnn_shape sb = LMNN_SHAPE(3, 40, 50);
        size_t m = lmnn_shape_volume(&sb);
        float *v = nn_rand_floats(m, 0.5f, 1.5f, 75);
        lmnn_tensor a, y;
        CHECK_OK(nn_upload(&sb, v, LMNN_BFLOAT8_B, LMNN_TILE, &a));
        float *q = nn_download(a); /* the quantized values */
        CHECK(q);
        lmnn_reduce_options o;
        lmnn_reduce_options_init(&o);
        o.dims[0] = -1;
        o.dim_count = 1;
        o.output.dtype = LMNN_FLOAT32;
        CHECK_OK(lmnn_prod(a, &o, &y));
        float *got = nn_download(y);
        CHECK(got);
        double want[120];
        for (size_t r = 0; r < 120; r++) {
            want[r] = 1;
            for (size_t c = 0; c < 50; c++)
                want[r] *= q[r * 50 + c];
        }
        CHECK_ERR(nn_compare(got, want, 120, 1e-30), 0.99999, 0, 1e-5);
        CHECK(nn_padding_is_zero(y));
        free(v), free(q), free(got);
        lmnn_tensor_free(a);
        lmnn_tensor_free(y);
    }
    printf("  prod worst rel: fp32 %.3g, bf16 %.3g\n", prod_worst[0], prod_worst[1]);
out:
    free(x);
}

static void print_worst(void) {
    printf("worst error / scale, lowest pcc (float32 | bfloat16):\n");
    for (int k = 0; k < K_COUNT; k++)
        printf("  %-8s %.3g %.8f | %.3g %.6f\n", kind_name[k], worst[k][0], worst_pcc[k][0],
               worst[k][1], worst_pcc[k][1]);
}

int main(void) {
    TEST_RUN(test_ops_small);
    TEST_RUN(test_every_dim_set);
    TEST_RUN(test_scalar);
    TEST_RUN(test_low_precision);
    TEST_RUN(test_var_offset);
    TEST_RUN(test_large);
    TEST_RUN(test_errors);
    TEST_RUN(test_cache);
    TEST_RUN(test_argmax);
    TEST_RUN(test_argmax_special);
    TEST_RUN(test_prod);
    print_worst();
    nn_dev_close();
    return test_summary();
}
