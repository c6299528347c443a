/* max_pool3d and avg_pool3d against a float64 host reference of PyTorch's
 * torch.nn.functional.max_pool3d / avg_pool3d on [N, C, D, H, W]: the 3-D
 * U-Net's 2x2x2 stride-2 max pooling in NCDHW and NDHWC (tile and
 * row-major), the result in the input's order; 3x3x3 stride 2 padding 1,
 * with dilation (2, 1, 1); kernels (1, 3, 3) and (3, 1, 1), stride (1, 2, 2),
 * asymmetric padding, odd sizes, one voxel, 1, 3, 5 and 40 channels, batches;
 * ceil_mode with a last window starting inside the input and with PyTorch's
 * correction dropping the one that would start in the padding (the output
 * sizes also checked against hand-computed ones); average pooling with
 * count_include_pad true and false (divisors that differ at the borders
 * along d, h and w) and divisor_override; NaN and -inf in max windows;
 * bfloat16; the program cache; a Light Metal capture of a max pooling and
 * its replay, with the input replaced; the errors, each with its status and
 * message.
 *
 * Bounds, with S = sum over the window of |x| / divisor for average pooling
 * (x as stored: rounded to bfloat16 for bfloat16 tensors):
 *   max, float32 and bfloat16   exact (bit-equal; NaN in a window gives NaN)
 *   average, float32            |err| <= 1e-6 * S
 *   average, bfloat16           |err| <= 2^-8 * S (one output rounding)
 * Each case prints its PCC, largest absolute and relative errors (relative to
 * max(|y|, 1e-3)) and largest |err| / S. */
#include <string.h>

#include "lm_test_replay.h"
#include "nn_test.h"

typedef struct p3_case {
    uint32_t n, c, d, h, w, kd, kh, kw;
    /* (d, h, w), passed as they are (a zero stride: the kernel size); padding
     * [front, back, top, bottom, left, right]; zero dilations mean 1. */
    int32_t stride[3], pad[6], dil[3], divisor;
    bool avg, ceil_mode, exclude_pad;
    bool nhwc;          /* the volume as [N, D, H, W, C] (LMNN_NHWC), the result too */
    bool row_major;     /* the input row-major (else tile) */
    bool cache;         /* a second call must hit the program cache and agree */
    bool specials;      /* NaNs and a block of -inf in the input (max only) */
    uint32_t expect[3]; /* nonzero: the output's (d, h, w) as PyTorch gives it */
    lmnn_dtype dtype;
} p3_case;

/* PyTorch's pooling_output_shape: floor or ceil, and in ceil mode one less
 * when the last window would start in the end padding. */
static int64_t out_size(int64_t in, int64_t k, int64_t pl, int64_t pr, int64_t s, int64_t d,
                        bool ceil_mode) {
    int64_t num = in + pl + pr - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
    int64_t o = num / s + 1;
    if (ceil_mode && (o - 1) * s >= in + pl) o--;
    return o;
}

/* The case with its strides and dilations resolved (zero: kernel, 1). */
static void resolved(const p3_case *k, int32_t *s, int32_t *dl) {
    const uint32_t ks[3] = {k->kd, k->kh, k->kw};
    for (int i = 0; i < 3; i++) {
        s[i] = k->stride[i] ? k->stride[i] : (int32_t)ks[i];
        dl[i] = k->dil[i] ? k->dil[i] : 1;
    }
}

static void out_dims(const p3_case *k, uint32_t *o) {
    const uint32_t in[3] = {k->d, k->h, k->w}, ks[3] = {k->kd, k->kh, k->kw};
    int32_t s[3], dl[3];
    resolved(k, s, dl);
    for (int i = 0; i < 3; i++)
        o[i] = (uint32_t)out_size(in[i], ks[i], k->pad[2 * i], k->pad[2 * i + 1], s[i], dl[i],
                                  k->ceil_mode);
}

/* PyTorch's avg_pool3d divisor factor along one dim for a window starting
 * at `start` (padding counted in): the window clipped to the padded input,
 * and without count_include_pad to the input. */
static int64_t extent(int64_t start, int64_t k, int64_t in, int64_t pad_end, bool exclude) {
    int64_t end = start + k < in + pad_end ? start + k : in + pad_end;
    if (exclude) {
        start = start < 0 ? 0 : start;
        end = end > in ? in : end;
    }
    return end - start;
}

/* The reference, NCDHW: y [n, c, od, oh, ow] and the scale S per element
 * (|max| for max pooling). The max takes NaN as PyTorch does. */
static void reference(const p3_case *k, const float *x, const uint32_t *od, double *y, double *sc) {
    int32_t s[3], dl[3];
    resolved(k, s, dl);
    const uint32_t in[3] = {k->d, k->h, k->w}, ks[3] = {k->kd, k->kh, k->kw};
    size_t isp = (size_t)k->d * k->h * k->w, osp = (size_t)od[0] * od[1] * od[2];
    for (size_t nc = 0; nc < (size_t)k->n * k->c; nc++)
        for (size_t p = 0; p < osp; p++) {
            uint32_t o[3] = {(uint32_t)(p / ((size_t)od[1] * od[2])), (uint32_t)(p / od[2] % od[1]),
                             (uint32_t)(p % od[2])};
            int64_t st[3];
            for (int i = 0; i < 3; i++)
                st[i] = (int64_t)o[i] * s[i] - k->pad[2 * i];
            double mx = -INFINITY, sum = 0, sabs = 0;
            for (uint32_t a = 0; a < ks[0]; a++)
                for (uint32_t b = 0; b < ks[1]; b++)
                    for (uint32_t c = 0; c < ks[2]; c++) {
                        int64_t z = st[0] + (int64_t)a * dl[0], yy = st[1] + (int64_t)b * dl[1],
                                xx = st[2] + (int64_t)c * dl[2];
                        if (z < 0 || z >= in[0] || yy < 0 || yy >= in[1] || xx < 0 || xx >= in[2])
                            continue;
                        double v =
                            x[nc * isp + ((size_t)z * k->h + (size_t)yy) * k->w + (size_t)xx];
                        if (isnan(v) || isnan(mx))
                            mx = NAN;
                        else if (v > mx)
                            mx = v;
                        sum += v;
                        sabs += fabs(v);
                    }
            int64_t div = 1;
            for (int i = 0; i < 3; i++)
                div *= extent(st[i], ks[i], in[i], k->pad[2 * i + 1], k->exclude_pad);
            if (k->divisor) div = k->divisor;
            y[nc * osp + p] = k->avg ? sum / (double)div : mx;
            sc[nc * osp + p] = k->avg ? sabs / (double)div : fabs(mx);
        }
}

/* v as `dtype` stores it (malloc'ed). */
static float *rounded(const float *v, size_t n, lmnn_dtype dtype) {
    float *r = calloc(n ? n : 1, sizeof *r);
    for (size_t i = 0; i < n; i++)
        r[i] = dtype == LMNN_BFLOAT16 ? nn_bf16(v[i]) : v[i];
    return r;
}

/* [n, c, sp] -> [n, sp, c] (NCDHW -> NDHWC with sp = D * H * W; the
 * reverse with c and sp swapped). */
static float *channels_last(const float *v, uint32_t n, uint32_t c, size_t sp) {
    float *r = malloc((size_t)n * c * sp * sizeof *r);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < c; j++)
            for (size_t p = 0; p < sp; p++)
                r[((size_t)i * sp + p) * c + j] = v[((size_t)i * c + j) * sp + p];
    return r;
}

static void options_of(const p3_case *k, lmnn_pool3d_options *o) {
    lmnn_pool3d_options_init(o);
    o->input_layout = k->nhwc ? LMNN_NHWC : LMNN_NCHW;
    o->kernel_size[0] = (int32_t)k->kd;
    o->kernel_size[1] = (int32_t)k->kh;
    o->kernel_size[2] = (int32_t)k->kw;
    memcpy(o->stride, k->stride, sizeof o->stride);
    memcpy(o->padding, k->pad, sizeof o->padding);
    for (int i = 0; i < 3; i++)
        o->dilation[i] = k->dil[i] ? k->dil[i] : 1;
    o->ceil_mode = k->ceil_mode;
    o->count_include_pad = !k->exclude_pad;
    o->divisor_override = k->divisor;
}

static double worst_avg_ = 0;

static void run_case(const char *name, p3_case k) {
    if (!k.dtype) k.dtype = LMNN_FLOAT32;
    uint32_t od[3];
    out_dims(&k, od);
    if (k.expect[0] && memcmp(od, k.expect, sizeof od)) {
        char m[200];
        snprintf(m, sizeof m, "%s: reference output (%u, %u, %u), PyTorch's (%u, %u, %u)", name,
                 od[0], od[1], od[2], k.expect[0], k.expect[1], k.expect[2]);
        test_fail_(__FILE__, __LINE__, m);
        return;
    }
    size_t isp = (size_t)k.d * k.h * k.w, osp = (size_t)od[0] * od[1] * od[2];
    size_t nx = (size_t)k.n * k.c * isp, ny = (size_t)k.n * k.c * osp;
    float *x0 = nn_rand_floats(nx, -2, 2, 9 + nx);
    if (k.specials) {
        /* NaNs spread over the volume, and the first 2x2x2 corner of
         * channel 0 all -inf (a window of -inf only). */
        for (size_t i = 13; i < nx; i += 97)
            x0[i] = NAN;
        for (uint32_t z = 0; z < 2 && z < k.d; z++)
            for (uint32_t y = 0; y < 2 && y < k.h; y++)
                for (uint32_t xx = 0; xx < 2 && xx < k.w; xx++)
                    x0[((size_t)z * k.h + y) * k.w + xx] = -INFINITY;
    }
    float *x = rounded(x0, nx, k.dtype);
    double *want = malloc(ny * sizeof *want), *scale = malloc(ny * sizeof *scale);
    reference(&k, x, od, want, scale);
    if (k.specials) { /* the case holds what it means to test */
        size_t nans = 0, ninf = 0;
        for (size_t i = 0; i < ny; i++) {
            nans += isnan(want[i]) != 0;
            ninf += want[i] == -INFINITY;
        }
        CHECK(nans > 0 && ninf > 0 && nans < ny);
    }

    float *xin = k.nhwc ? channels_last(x0, k.n, k.c, isp) : x0;
    lmnn_shape xs =
        k.nhwc ? LMNN_SHAPE(k.n, k.d, k.h, k.w, k.c) : LMNN_SHAPE(k.n, k.c, k.d, k.h, k.w);
    lmnn_tensor xt, out = {0}, out2 = {0};
    CHECK_OK(nn_upload(&xs, xin, k.dtype, k.row_major ? LMNN_ROW_MAJOR : LMNN_TILE, &xt));
    lmnn_pool3d_options o;
    options_of(&k, &o);
    CHECK_OK(k.avg ? lmnn_avg_pool3d(xt, &o, &out) : lmnn_max_pool3d(xt, &o, &out));
    if (test_current_failed_) return;
    if (k.cache) {
        lmnn_program_cache_stats before, after;
        CHECK_OK(lmnn_program_cache_get_stats(nn_dev(), &before));
        CHECK_OK(k.avg ? lmnn_avg_pool3d(xt, &o, &out2) : lmnn_max_pool3d(xt, &o, &out2));
        CHECK_OK(lmnn_program_cache_get_stats(nn_dev(), &after));
        CHECK_EQ_U64(after.misses, before.misses);
        CHECK(after.hits > before.hits);
    }
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(out, &info));
    lmnn_shape es = k.nhwc ? LMNN_SHAPE(k.n, od[0], od[1], od[2], k.c)
                           : LMNN_SHAPE(k.n, k.c, od[0], od[1], od[2]);
    if (info.shape.rank != es.rank ||
        memcmp(info.shape.dims, es.dims, sizeof(uint32_t) * es.rank)) {
        char m[256], *p = m, *end = m + sizeof m;
        p += snprintf(p, (size_t)(end - p), "%s: output shape [", name);
        for (uint32_t i = 0; i < info.shape.rank && p < end; i++)
            p += snprintf(p, (size_t)(end - p), i ? ", %u" : "%u", info.shape.dims[i]);
        if (p < end) p += snprintf(p, (size_t)(end - p), "], expected [");
        for (uint32_t i = 0; i < es.rank && p < end; i++)
            p += snprintf(p, (size_t)(end - p), i ? ", %u" : "%u", es.dims[i]);
        if (p < end) snprintf(p, (size_t)(end - p), "]");
        test_fail_(__FILE__, __LINE__, m);
        return;
    }
    CHECK(info.layout == LMNN_TILE && info.dtype == k.dtype);
    float *got = nn_download(out);
    CHECK(got);
    if (!got) return;
    if (k.cache) { /* the second call gives the same, bit for bit */
        float *got2 = nn_download(out2);
        CHECK(got2);
        bool same = got2 && !memcmp(got, got2, ny * sizeof *got);
        free(got2);
        CHECK(same);
    }
    if (k.nhwc) { /* back to NCDHW */
        float *t = channels_last(got, k.n, (uint32_t)osp, k.c);
        free(got);
        got = t;
    }
    double tol = !k.avg ? 0 : k.dtype == LMNN_FLOAT32 ? 1e-6 : 1.0 / 256, ratio = 0;
    size_t bad = ny, nbad = 0;
    for (size_t i = 0; i < ny; i++) {
        bool ok;
        double e = 0;
        if (k.avg) {
            e = fabs(got[i] - want[i]);
            ok = e <= tol * scale[i]; /* NaN fails */
            if (e > 0) ratio = fmax(ratio, isnan(e) ? INFINITY : e / fmax(scale[i], 1e-30));
        } else {
            ok = got[i] == want[i] || (isnan(got[i]) && isnan(want[i]));
        }
        if (!ok && nbad++ == 0) bad = i;
    }
    nn_err e = nn_compare(got, want, ny, 1e-3);
    printf("  %-46s %-8s pcc %.7f max_abs %.3g max_rel %.3g err/S %.3g\n", name,
           lmnn_dtype_name(k.dtype), e.pcc, e.max_abs, e.max_rel, ratio);
    if (nbad) {
        /* The first bad element's NCDHW coordinates. */
        size_t r = bad;
        uint32_t ox = (uint32_t)(r % od[2]);
        r /= od[2];
        uint32_t oy = (uint32_t)(r % od[1]);
        r /= od[1];
        uint32_t oz = (uint32_t)(r % od[0]);
        r /= od[0];
        uint32_t c = (uint32_t)(r % k.c), n = (uint32_t)(r / k.c);
        char m[400];
        snprintf(m, sizeof m,
                 "%s: %zu of %zu elements wrong; first (n %u, c %u, d %u, h %u, w %u): got %.9g, "
                 "want %.9g (S %.3g)",
                 name, nbad, ny, n, c, oz, oy, ox, got[bad], want[bad], scale[bad]);
        test_fail_(__FILE__, __LINE__, m);
    }
    if (k.dtype == LMNN_FLOAT32 && !k.specials) CHECK(nn_padding_is_zero(out));
    if (k.avg && ratio > worst_avg_) worst_avg_ = ratio;
    lmnn_tensor ts[] = {out, out2, xt};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        if (ts[i].id) lmnn_tensor_free(ts[i]);
    if (xin != x0) free(xin);
    free(got), free(x0), free(x), free(want), free(scale);
}

/* Max pooling: the U-Net's 2x2x2 stride 2 in the layouts, 3x3x3 stride 2
 * padding 1 (with dilation), kernels and strides that differ per dim. */
static void test_max(void) {
    p3_case k = {.n = 2, .c = 3, .d = 6, .h = 8, .w = 10, .kd = 2, .kh = 2, .kw = 2, .cache = true};
    run_case("max 2x2x2 s2 NCDHW", k);
    k.cache = false;
    k.nhwc = true;
    run_case("max 2x2x2 s2 NDHWC", k);
    run_case("max 2x2x2 s2 NDHWC row-major [1, 8, 8, 8, 8]", (p3_case){.n = 1,
                                                                       .c = 8,
                                                                       .d = 8,
                                                                       .h = 8,
                                                                       .w = 8,
                                                                       .kd = 2,
                                                                       .kh = 2,
                                                                       .kw = 2,
                                                                       .stride = {2, 2, 2},
                                                                       .nhwc = true,
                                                                       .row_major = true});
    k = (p3_case){.n = 1,
                  .c = 5,
                  .d = 7,
                  .h = 9,
                  .w = 8,
                  .kd = 3,
                  .kh = 3,
                  .kw = 3,
                  .stride = {2, 2, 2},
                  .pad = {1, 1, 1, 1, 1, 1},
                  .expect = {4, 5, 4}};
    run_case("max 3x3x3 s2 p1", k);
    k.nhwc = true;
    run_case("max 3x3x3 s2 p1 NDHWC", k);
    k.nhwc = false;
    k.dil[0] = 2;
    k.pad[0] = k.pad[1] = 2; /* half the dilated depth 5 */
    k.expect[0] = 4;
    run_case("max 3x3x3 s2 dilation (2, 1, 1) pad (2, 1, 1)", k);
    k.pad[0] = k.pad[1] = 1;
    k.expect[0] = 3;
    run_case("max 3x3x3 s2 dilation (2, 1, 1) pad 1", k);
    run_case("max (1, 3, 3) s(1, 2, 2) p(0, 1, 1) C 1 N 2", (p3_case){.n = 2,
                                                                      .c = 1,
                                                                      .d = 5,
                                                                      .h = 9,
                                                                      .w = 11,
                                                                      .kd = 1,
                                                                      .kh = 3,
                                                                      .kw = 3,
                                                                      .stride = {1, 2, 2},
                                                                      .pad = {0, 0, 1, 1, 1, 1},
                                                                      .expect = {5, 5, 6}});
    run_case("max (3, 1, 1) s(2, 1, 1) p(1, 0, 0) C 40", (p3_case){.n = 1,
                                                                   .c = 40,
                                                                   .d = 7,
                                                                   .h = 5,
                                                                   .w = 3,
                                                                   .kd = 3,
                                                                   .kh = 1,
                                                                   .kw = 1,
                                                                   .stride = {2, 1, 1},
                                                                   .pad = {1, 1, 0, 0, 0, 0},
                                                                   .expect = {4, 5, 3}});
    run_case("max (3, 1, 1) stride 0 C 40 NDHWC", (p3_case){.n = 2,
                                                            .c = 40,
                                                            .d = 7,
                                                            .h = 3,
                                                            .w = 5,
                                                            .kd = 3,
                                                            .kh = 1,
                                                            .kw = 1,
                                                            .nhwc = true,
                                                            .expect = {2, 3, 5}});
    run_case("max (2, 3, 2) s(1, 2, 1) asym pad", (p3_case){.n = 2,
                                                            .c = 3,
                                                            .d = 5,
                                                            .h = 7,
                                                            .w = 6,
                                                            .kd = 2,
                                                            .kh = 3,
                                                            .kw = 2,
                                                            .stride = {1, 2, 1},
                                                            .pad = {1, 0, 0, 1, 1, 0},
                                                            .expect = {5, 3, 6}});
    run_case("max one voxel, 3x3x3 pad 1", (p3_case){.n = 1,
                                                     .c = 3,
                                                     .d = 1,
                                                     .h = 1,
                                                     .w = 1,
                                                     .kd = 3,
                                                     .kh = 3,
                                                     .kw = 3,
                                                     .stride = {1, 1, 1},
                                                     .pad = {1, 1, 1, 1, 1, 1},
                                                     .expect = {1, 1, 1}});
    run_case(
        "max 2x2x2 NaN and -inf",
        (p3_case){
            .n = 1, .c = 3, .d = 4, .h = 6, .w = 6, .kd = 2, .kh = 2, .kw = 2, .specials = true});
    run_case("max 2x2x2 NaN and -inf NDHWC", (p3_case){.n = 1,
                                                       .c = 3,
                                                       .d = 4,
                                                       .h = 6,
                                                       .w = 6,
                                                       .kd = 2,
                                                       .kh = 2,
                                                       .kw = 2,
                                                       .specials = true,
                                                       .nhwc = true});
}

/* ceil_mode: a last window that starts inside the input (kept), and one
 * that would start in the end padding (dropped, PyTorch's correction), along
 * each dim; the output sizes as PyTorch gives them. */
static void test_ceil(void) {
    /* d 6, h 7, w 8, k 3, s 2: floor 2, 3, 3; ceil 3, 3, 4 (windows at 4 in
     * d, 6 in w start inside the input). */
    p3_case k = {.n = 1,
                 .c = 3,
                 .d = 6,
                 .h = 7,
                 .w = 8,
                 .kd = 3,
                 .kh = 3,
                 .kw = 3,
                 .stride = {2, 2, 2},
                 .ceil_mode = true,
                 .expect = {3, 3, 4}};
    run_case("max ceil, last windows inside the input", k);
    k.avg = true;
    run_case("avg ceil, last windows inside the input", k);
    k.exclude_pad = true;
    run_case("avg ceil exclude pad, windows inside", k);
    /* k 2, pad 1: d 5 s 2 and w 7 s 2 would start a last window at 5 and 7
     * (in the back padding), h 4 s 3 one at 5 (past it): each dropped, the
     * output as floor mode's. */
    k = (p3_case){.n = 2,
                  .c = 3,
                  .d = 5,
                  .h = 4,
                  .w = 7,
                  .kd = 2,
                  .kh = 2,
                  .kw = 2,
                  .stride = {2, 3, 2},
                  .pad = {1, 1, 1, 1, 1, 1},
                  .ceil_mode = true,
                  .expect = {3, 2, 4}};
    run_case("max ceil, window in the padding dropped", k);
    k.nhwc = true;
    run_case("max ceil, window dropped NDHWC", k);
    k.nhwc = false;
    k.avg = true;
    run_case("avg ceil, window dropped, include pad", k);
    k.exclude_pad = true;
    run_case("avg ceil, window dropped, exclude pad", k);
    /* 3x3x3 s2 p1 ceil over odd and even sizes: d 7 -> 4 (as floor), h 8 -> 5
     * and w 6 -> 4 (floor 4 and 3: the last windows start at 7 and 5, inside
     * the input, and end in the padding and past it). */
    k = (p3_case){.n = 1,
                  .c = 4,
                  .d = 7,
                  .h = 8,
                  .w = 6,
                  .kd = 3,
                  .kh = 3,
                  .kw = 3,
                  .stride = {2, 2, 2},
                  .pad = {1, 1, 1, 1, 1, 1},
                  .ceil_mode = true,
                  .expect = {4, 5, 4},
                  .avg = true,
                  .exclude_pad = true};
    run_case("avg 3x3x3 s2 p1 ceil exclude pad", k);
}

/* Average pooling: per-voxel divisors with and without the padding,
 * divisor_override. */
static void test_avg(void) {
    p3_case k = {.avg = true,
                 .n = 1,
                 .c = 4,
                 .d = 5,
                 .h = 6,
                 .w = 7,
                 .kd = 3,
                 .kh = 3,
                 .kw = 3,
                 .stride = {1, 1, 1},
                 .pad = {1, 1, 1, 1, 1, 1},
                 .cache = true};
    run_case("avg 3x3x3 s1 p1 include pad", k);
    k.cache = false;
    k.exclude_pad = true;
    run_case("avg 3x3x3 s1 p1 exclude pad", k);
    k.divisor = 7;
    run_case("avg 3x3x3 s1 p1 divisor_override 7", k);
    k = (p3_case){.avg = true,
                  .n = 2,
                  .c = 3,
                  .d = 7,
                  .h = 7,
                  .w = 9,
                  .kd = 3,
                  .kh = 3,
                  .kw = 3,
                  .stride = {2, 2, 2},
                  .pad = {1, 1, 1, 1, 1, 1},
                  .nhwc = true,
                  .exclude_pad = true};
    run_case("avg 3x3x3 s2 p1 exclude pad NDHWC", k);
    k.exclude_pad = false;
    run_case("avg 3x3x3 s2 p1 include pad NDHWC", k);
    run_case(
        "avg 2x2x2 s2 (uniform divisor)",
        (p3_case){.avg = true, .n = 2, .c = 3, .d = 6, .h = 8, .w = 10, .kd = 2, .kh = 2, .kw = 2});
    /* Divisors that differ along d only. */
    k = (p3_case){.avg = true,
                  .n = 1,
                  .c = 40,
                  .d = 6,
                  .h = 3,
                  .w = 4,
                  .kd = 3,
                  .kh = 1,
                  .kw = 1,
                  .stride = {1, 1, 1},
                  .pad = {1, 1, 0, 0, 0, 0},
                  .exclude_pad = true};
    run_case("avg (3, 1, 1) p(1, 0, 0) exclude pad C 40", k);
    k.exclude_pad = false;
    run_case("avg (3, 1, 1) p(1, 0, 0) include pad C 40", k);
    run_case("avg (1, 3, 3) s(1, 2, 2) asym pad exclude", (p3_case){.avg = true,
                                                                    .n = 2,
                                                                    .c = 1,
                                                                    .d = 3,
                                                                    .h = 9,
                                                                    .w = 8,
                                                                    .kd = 1,
                                                                    .kh = 3,
                                                                    .kw = 3,
                                                                    .stride = {1, 2, 2},
                                                                    .pad = {0, 0, 1, 0, 0, 1},
                                                                    .exclude_pad = true});
    run_case("avg (2, 2, 3) asym pad divisor_override 5", (p3_case){.avg = true,
                                                                    .n = 1,
                                                                    .c = 3,
                                                                    .d = 5,
                                                                    .h = 5,
                                                                    .w = 7,
                                                                    .kd = 2,
                                                                    .kh = 2,
                                                                    .kw = 3,
                                                                    .stride = {1, 2, 2},
                                                                    .pad = {0, 1, 1, 0, 1, 1},
                                                                    .divisor = 5});
}

static void test_bf16(void) {
    p3_case k = {
        .n = 2, .c = 3, .d = 6, .h = 8, .w = 10, .kd = 2, .kh = 2, .kw = 2, .dtype = LMNN_BFLOAT16};
    run_case("max 2x2x2 s2 bf16", k);
    k.nhwc = k.row_major = true;
    run_case("max 2x2x2 s2 NDHWC row-major bf16", k);
    k = (p3_case){.n = 1,
                  .c = 5,
                  .d = 7,
                  .h = 9,
                  .w = 8,
                  .kd = 3,
                  .kh = 3,
                  .kw = 3,
                  .stride = {2, 2, 2},
                  .pad = {1, 1, 1, 1, 1, 1},
                  .dtype = LMNN_BFLOAT16};
    run_case("max 3x3x3 s2 p1 bf16", k);
    k.avg = true;
    run_case("avg 3x3x3 s2 p1 include pad bf16", k);
    k.exclude_pad = k.nhwc = true;
    run_case("avg 3x3x3 s2 p1 exclude pad NDHWC bf16", k);
    run_case("max 2x2x2 NaN and -inf bf16", (p3_case){.n = 1,
                                                      .c = 3,
                                                      .d = 4,
                                                      .h = 6,
                                                      .w = 6,
                                                      .kd = 2,
                                                      .kh = 2,
                                                      .kw = 2,
                                                      .specials = true,
                                                      .dtype = LMNN_BFLOAT16});
}

static void test_errors(void) {
    lmnn_shape xs = LMNN_SHAPE(1, 3, 5, 5, 5), x4s = LMNN_SHAPE(1, 3, 5, 5),
               x2s = LMNN_SHAPE(1, 3, 2, 5, 5);
    float *v = nn_rand_floats(375, -1, 1, 3);
    lmnn_tensor x, x4, x2, xi, freed, out = {0};
    CHECK_OK(nn_upload(&xs, v, LMNN_FLOAT32, LMNN_TILE, &x));
    CHECK_OK(nn_upload(&x4s, v, LMNN_FLOAT32, LMNN_TILE, &x4));
    CHECK_OK(nn_upload(&x2s, v, LMNN_FLOAT32, LMNN_TILE, &x2));
    CHECK_OK(nn_upload(&xs, v, LMNN_FLOAT32, LMNN_TILE, &freed));
    lmnn_tensor_free(freed);
    lmnn_tensor_options io;
    lmnn_tensor_options_init(&io);
    io.dtype = LMNN_INT32;
    int32_t iv[375] = {0};
    CHECK_OK(lmnn_from_host(nn_dev(), &xs, iv, sizeof iv, &io, &xi));
    uint64_t dram0 = 0, l10 = 0, dram1 = 0, l11 = 0;
    int mem = nn_memory_now(&dram0, &l10);
    lmnn_pool3d_options o;
    lmnn_pool3d_options_init(&o);
    /* The defaults. */
    CHECK(o.input_layout == LMNN_NCHW && o.kernel_size[0] == 0 && o.stride[0] == 0 &&
          o.dilation[0] == 1 && o.dilation[1] == 1 && o.dilation[2] == 1 && !o.ceil_mode &&
          o.count_include_pad && o.divisor_override == 0 && o.output.dtype == 0);

    CHECK_FAILS(lmnn_max_pool3d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool3d: kernel_size: expected (d, h, w) >= 1, given (0, 0, 0)");
    o.kernel_size[0] = o.kernel_size[1] = o.kernel_size[2] = 3;
    CHECK_FAILS(lmnn_max_pool3d(x, &o, NULL), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool3d: out is NULL");
    CHECK_FAILS(lmnn_avg_pool3d(x, &o, NULL), LM_ERR_INVALID_ARGUMENT,
                "lmnn_avg_pool3d: out is NULL");
    CHECK_FAILS(lmnn_max_pool3d(x, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool3d: opts is NULL");
    CHECK_FAILS(lmnn_avg_pool3d(x, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_avg_pool3d: opts is NULL");
    CHECK_FAILS(lmnn_avg_pool3d(x4, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_avg_pool3d: input: expected rank 5 (N, C, D, H, W), given shape [1, 3, 5, "
                "5]");
    o.input_layout = LMNN_NHWC;
    CHECK_FAILS(lmnn_max_pool3d(x4, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool3d: input: expected rank 5 (N, D, H, W, C)");
    o.input_layout = (lmnn_image_layout)3;
    CHECK_FAILS(lmnn_max_pool3d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool3d: input_layout");
    o.input_layout = LMNN_NCHW;
    CHECK_FAILS(lmnn_max_pool3d(freed, &o, &out), LM_ERR_INVALID_HANDLE, "lmnn_max_pool3d: input");
    CHECK_FAILS(lmnn_max_pool3d(xi, &o, &out), LM_ERR_INVALID_ARGUMENT, "lmnn_max_pool3d: input");
    o.kernel_size[1] = 0;
    CHECK_FAILS(lmnn_avg_pool3d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_avg_pool3d: kernel_size: expected (d, h, w) >= 1, given (3, 0, 3)");
    o.kernel_size[1] = 3;
    o.stride[0] = o.stride[1] = o.stride[2] = -1;
    CHECK_FAILS(lmnn_max_pool3d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool3d: stride: expected (d, h, w) >= 1");
    CHECK_ERROR_HAS("given (-1, -1, -1)");
    o.stride[0] = o.stride[2] = 2;
    o.stride[1] = 0;
    CHECK_FAILS(lmnn_max_pool3d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool3d: stride: expected (d, h, w) >= 1, or (0, 0, 0) for the kernel "
                "size, given (2, 0, 2)");
    o.stride[0] = o.stride[2] = 0;
    o.stride[1] = 1;
    CHECK_FAILS(lmnn_avg_pool3d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_avg_pool3d: stride: expected (d, h, w) >= 1");
    CHECK_ERROR_HAS("given (0, 1, 0)");
    o.stride[1] = 0;
    o.dilation[2] = 0;
    CHECK_FAILS(lmnn_max_pool3d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool3d: dilation: expected (d, h, w) >= 1");
    CHECK_ERROR_HAS("given (1, 1, 0)");
    o.dilation[2] = 1;
    o.dilation[0] = 2;
    CHECK_FAILS(lmnn_avg_pool3d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_avg_pool3d: dilation: ");
    CHECK_ERROR_HAS("average pooling");
    CHECK_ERROR_HAS("given (2, 1, 1)");
    o.dilation[0] = 1;
    o.padding[0] = 2;
    CHECK_FAILS(lmnn_max_pool3d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool3d: padding: expected [front, back, top, bottom, left, right] "
                "between 0 and half the (dilated) kernel (1 along d), given [2, 0, 0, 0, 0, 0]");
    o.padding[0] = 0;
    o.padding[5] = 2;
    CHECK_FAILS(lmnn_avg_pool3d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_avg_pool3d: padding: ");
    CHECK_ERROR_HAS("(1 along w), given [0, 0, 0, 0, 0, 2]");
    o.padding[5] = -1;
    CHECK_FAILS(lmnn_max_pool3d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool3d: padding: ");
    o.padding[5] = 0;
    /* Dilation widens the padding's bound: (2 * 2 + 1) / 2 = 2 along d. */
    o.dilation[0] = 2;
    o.padding[0] = o.padding[1] = 3;
    CHECK_FAILS(lmnn_max_pool3d(x, &o, &out), LM_ERR_INVALID_ARGUMENT, "(2 along d)");
    o.padding[0] = o.padding[1] = 0;
    o.dilation[0] = 1;
    o.divisor_override = -1;
    CHECK_FAILS(lmnn_avg_pool3d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_avg_pool3d: divisor_override: expected >= 1 or 0 (none), given -1");
    o.divisor_override = 0;
    /* A kernel deeper than the padded volume (depth 2 < 3), also dilated
     * with padding (5 > 2 + 2); the h, w kernel fits. */
    CHECK_FAILS(lmnn_max_pool3d(x2, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool3d: kernel_size: the (dilated) kernel does not fit the padded "
                "input's depth 2");
    CHECK_FAILS(lmnn_avg_pool3d(x2, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_avg_pool3d: kernel_size: the (dilated) kernel does not fit the padded "
                "input's depth 2");
    o.dilation[0] = 2;
    o.padding[0] = o.padding[1] = 1;
    CHECK_FAILS(lmnn_max_pool3d(x2, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool3d: kernel_size: the (dilated) kernel does not fit the padded "
                "input's depth 4");
    o.dilation[0] = 1;
    o.padding[0] = o.padding[1] = 0;
    /* ... and along h (the 2-D check). */
    o.kernel_size[0] = 2;
    o.kernel_size[1] = 6;
    CHECK_FAILS(lmnn_max_pool3d(x2, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool3d: kernel_size: the (dilated) kernel does not fit");
    o.kernel_size[1] = 3;
    o.output.dtype = LMNN_INT32;
    CHECK_FAILS(lmnn_max_pool3d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool3d: output.dtype: expected a float dtype, given int32");
    CHECK_FAILS(lmnn_avg_pool3d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_avg_pool3d: output.dtype: expected a float dtype, given int32");
    o.output.dtype = 0;
    /* Failed calls allocate nothing. */
    if (mem && nn_memory_now(&dram1, &l11)) {
        CHECK_EQ_U64(dram1, dram0);
        CHECK_EQ_U64(l11, l10);
    }
    /* The device still works: depth 2 with a (2, 3, 3) kernel. */
    CHECK_OK(lmnn_max_pool3d(x2, &o, &out));
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(out, &info));
    CHECK(info.shape.rank == 5 && info.shape.dims[1] == 3 && info.shape.dims[2] == 1 &&
          info.shape.dims[3] == 1 && info.shape.dims[4] == 1);
    lmnn_tensor_free(out);
    lmnn_tensor ts[] = {x, x4, x2, xi};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        lmnn_tensor_free(ts[i]);
    free(v);
}

/* The captured model: a 3x3x3 stride 2 padding 1 max pooling of a
 * row-major NDHWC input, its result made row-major to be read. */
enum { CN = 1, CD = 5, CH = 6, CW = 7, CC = 3, COD = 3, COH = 3, COW = 4 };

static lm_status capture_model(lmnn_tensor xin, lmnn_tensor *out) {
    lmnn_pool3d_options o;
    lmnn_pool3d_options_init(&o);
    o.input_layout = LMNN_NHWC;
    for (int i = 0; i < 3; i++) {
        o.kernel_size[i] = 3;
        o.stride[i] = 2;
    }
    for (int i = 0; i < 6; i++)
        o.padding[i] = 1;
    lmnn_tensor y = {0};
    lm_status st = lmnn_max_pool3d(xin, &o, &y);
    if (!st) st = lmnn_to_layout(y, LMNN_ROW_MAJOR, out);
    if (y.id) lmnn_tensor_free(y);
    return st;
}

/* `got` (NDHWC) is the reference's max pooling of `x` (NDHWC), bit for bit. */
static bool capture_matches(const float *got, const float *x) {
    enum { NY = CN * COD * COH * COW * CC };
    p3_case k = {.n = CN,
                 .c = CC,
                 .d = CD,
                 .h = CH,
                 .w = CW,
                 .kd = 3,
                 .kh = 3,
                 .kw = 3,
                 .stride = {2, 2, 2},
                 .pad = {1, 1, 1, 1, 1, 1}};
    uint32_t od[3];
    out_dims(&k, od);
    if (od[0] != COD || od[1] != COH || od[2] != COW) return false;
    float *xc = channels_last(x, CN, CD * CH * CW, CC); /* NDHWC -> NCDHW */
    float *gc = channels_last(got, CN, COD * COH * COW, CC);
    double want[NY], scale[NY];
    reference(&k, xc, od, want, scale);
    bool ok = true;
    for (size_t i = 0; i < NY; i++)
        ok &= gc[i] == want[i];
    free(xc);
    free(gc);
    return ok;
}

/* The model under Light Metal capture replays bit for bit, and with its
 * input replaced gives the reference's result for the new input. */
static void test_capture(void) {
    enum { NX = CN * CD * CH * CW * CC, NY = CN * COD * COH * COW * CC };
    lm_device *dev;
    CHECK_OK(lm_device_open(NULL, &dev));
    if (test_current_failed_) return;
    float *x = nn_rand_floats(NX, -1, 1, 31), *x2 = nn_rand_floats(NX, -1, 1, 32);
    float live[NY], got[NY];
    lmnn_shape xs = LMNN_SHAPE(CN, CD, CH, CW, CC);
    lmnn_tensor_options to;
    lmnn_tensor_options_init(&to);
    to.dtype = LMNN_FLOAT32;
    to.layout = LMNN_ROW_MAJOR;
    lmnn_tensor xin, y;
    lm_capture_options co;
    lm_capture_options_init(&co);
    CHECK_OK(lm_light_metal_begin_capture(dev, &co));
    CHECK_OK(lmnn_from_host(dev, &xs, x, sizeof(float) * NX, &to, &xin));
    CHECK_OK(lmnn_capture_name(xin, "x"));
    CHECK_OK(capture_model(xin, &y));
    CHECK_OK(lmnn_capture_name(y, "y"));
    CHECK_OK(lmnn_to_host(y, live, sizeof live));
    lm_binary *bin;
    CHECK_OK(lm_light_metal_end_capture(dev, &bin));
    lmnn_tensor_free(y);
    lmnn_tensor_free(xin);
    CHECK_OK(lm_device_close(dev));
    if (test_current_failed_) return;
    bool live_ok = capture_matches(live, x);
    CHECK(live_ok);

    lm_replay *r;
    REPLAY_RUN(bin, r);
    CHECK_OK(lm_replay_get_output(r, "y", got, sizeof got));
    bool same = !memcmp(got, live, sizeof got);
    CHECK(same);
    CHECK_OK(lm_replay_set_input(r, "x", x2, sizeof(float) * NX));
    CHECK_OK(lm_replay_run(r, NULL, NULL, NULL));
    CHECK_OK(lm_replay_get_output(r, "y", got, sizeof got));
    bool new_ok = capture_matches(got, x2);
    CHECK(new_ok);
    printf("  capture: live %s, replay %s, replay with a new input %s\n",
           live_ok ? "exact" : "WRONG", same ? "bit-equal" : "DIFFERS", new_ok ? "exact" : "WRONG");
    lm_replay_close(r);
    lm_binary_free(bin);
    free(x);
    free(x2);
}

int main(void) {
    TEST_RUN(test_max);
    TEST_RUN(test_ceil);
    TEST_RUN(test_avg);
    TEST_RUN(test_bf16);
    TEST_RUN(test_errors);
    TEST_RUN(test_capture);
    printf("largest average |err| / S: %.3g\n", worst_avg_);
    nn_dev_close();
    return test_summary();
}
