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
 * bfloat16; the program cache; the flat forms (flat_output as tiles,
 * row-major and image rows; flat inputs [1, 1, N * D * H * W, C] and
 * [N * D * H, W * C], tile and row-major, with their dims), and conv3d's
 * flat output pooled as it is (checked against the pooling of what the
 * convolution gave, and against the float64 reference of both, the
 * convolution's bound carried through the pooling); a Light Metal capture
 * of a max pooling and its replay, with the input replaced; the errors,
 * each with its status and message.
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
    /* The flat forms (lmnn_pool3d_options' flat_output, output_layout,
     * output_image_rows, batch_size, input_depth, input_height,
     * input_width); each implies those after it on its line. */
    bool flat;     /* the output [1, 1, N * OD * OH * OW, C], NDHWC order */
    bool rm_out;   /* that output row-major: flat */
    bool rows_out; /* that as [N * OD * OH, OW * C]: rm_out */
    bool flat_in;  /* the NDHWC volume as [1, 1, N * D * H * W, C], its dims given: nhwc */
    bool rows_in;  /* that as [N * D * H, W * C], a page per image row: flat_in */
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
    o->flat_output = k->flat;
    if (k->rm_out) o->output_layout = LMNN_ROW_MAJOR;
    o->output_image_rows = k->rows_out;
    if (k->flat_in) {
        o->batch_size = (int32_t)k->n;
        o->input_depth = (int32_t)k->d;
        o->input_height = (int32_t)k->h;
        o->input_width = (int32_t)k->w;
    }
}

/* The implied flags set (see p3_case), zero dtype float32. */
static void normalized(p3_case *k) {
    if (!k->dtype) k->dtype = LMNN_FLOAT32;
    k->rm_out |= k->rows_out;
    k->flat |= k->rm_out;
    k->flat_in |= k->rows_in;
    k->nhwc |= k->flat_in;
}

/* The input's shape as the case gives it. */
static lmnn_shape input_shape(const p3_case *k) {
    return k->rows_in   ? LMNN_SHAPE(k->n * k->d * k->h, k->w * k->c)
           : k->flat_in ? LMNN_SHAPE(1, 1, k->n * k->d * k->h * k->w, k->c)
           : k->nhwc    ? LMNN_SHAPE(k->n, k->d, k->h, k->w, k->c)
                        : LMNN_SHAPE(k->n, k->c, k->d, k->h, k->w);
}

/* The output's shape and layout as the case asks for them (od: its (d, h,
 * w)). */
static lmnn_shape output_shape(const p3_case *k, const uint32_t *od, lmnn_layout *layout) {
    *layout = k->rm_out ? LMNN_ROW_MAJOR : LMNN_TILE;
    return k->rows_out ? LMNN_SHAPE(k->n * od[0] * od[1], od[2] * k->c)
           : k->flat   ? LMNN_SHAPE(1, 1, k->n * od[0] * od[1] * od[2], k->c)
           : k->nhwc   ? LMNN_SHAPE(k->n, od[0], od[1], od[2], k->c)
                       : LMNN_SHAPE(k->n, k->c, od[0], od[1], od[2]);
}

static double worst_avg_ = 0;

/* Checks `got` (NCDHW: case k's output, of (d, h, w) od) against the
 * reference: max pooling exact (NaN where the reference has NaN), average
 * pooling within tol * S (1e-6 float32, 2^-8 bfloat16); with `carry`
 * (a chain's, else NULL) each element may be off by carry[i] more. Prints
 * the case's line (with carry, the largest |err| / bound too); fails
 * naming the first element wrong and how many are. Returns the largest
 * average |err| / S. */
static double compared(const char *name, const p3_case *k, const uint32_t *od, const float *got,
                       const double *want, const double *scale, const double *carry) {
    size_t ny = (size_t)k->n * k->c * od[0] * od[1] * od[2];
    double tol = !k->avg ? 0 : k->dtype == LMNN_FLOAT32 ? 1e-6 : 1.0 / 256, ratio = 0, used = 0;
    size_t bad = ny, nbad = 0;
    for (size_t i = 0; i < ny; i++) {
        double e = fabs(got[i] - want[i]), bound = tol * scale[i] + (carry ? carry[i] : 0);
        bool ok =
            e <= bound || (!k->avg && (got[i] == want[i] || (isnan(got[i]) && isnan(want[i]))));
        if (k->avg && e > 0) ratio = fmax(ratio, isnan(e) ? INFINITY : e / fmax(scale[i], 1e-30));
        if (carry && e > 0) used = fmax(used, isnan(e) ? INFINITY : e / fmax(bound, 1e-30));
        if (!ok && nbad++ == 0) bad = i;
    }
    nn_err e = nn_compare(got, want, ny, 1e-3);
    printf("  %-46s %-8s pcc %.7f max_abs %.3g max_rel %.3g err/S %.3g", name,
           lmnn_dtype_name(k->dtype), e.pcc, e.max_abs, e.max_rel, ratio);
    if (carry) printf(" err/bound %.3g", used);
    printf("\n");
    if (nbad) {
        /* The first bad element's NCDHW coordinates. */
        size_t r = bad;
        uint32_t ox = (uint32_t)(r % od[2]);
        r /= od[2];
        uint32_t oy = (uint32_t)(r % od[1]);
        r /= od[1];
        uint32_t oz = (uint32_t)(r % od[0]);
        r /= od[0];
        uint32_t c = (uint32_t)(r % k->c), n = (uint32_t)(r / k->c);
        char m[400];
        snprintf(m, sizeof m,
                 "%s: %zu of %zu elements wrong; first (n %u, c %u, d %u, h %u, w %u): got %.9g, "
                 "want %.9g (S %.3g, carry %.3g)",
                 name, nbad, ny, n, c, oz, oy, ox, got[bad], want[bad], scale[bad],
                 carry ? carry[bad] : 0.0);
        test_fail_(__FILE__, __LINE__, m);
    }
    return ratio;
}

static void run_case(const char *name, p3_case k) {
    normalized(&k);
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
    float *x = nn_rounded(x0, nx, k.dtype);
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

    float *xin = k.nhwc ? nn_channels_last(x0, k.n, k.c, isp) : x0;
    lmnn_shape xs = input_shape(&k);
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
    lmnn_layout el;
    lmnn_shape es = output_shape(&k, od, &el);
    if (!nn_output_is(name, out, &es, el, k.dtype, false)) return;
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
    if (k.nhwc || k.flat) { /* back to NCDHW */
        float *t = nn_channels_last(got, k.n, (uint32_t)osp, k.c);
        free(got);
        got = t;
    }
    double ratio = compared(name, &k, od, got, want, scale, NULL);
    if (k.dtype == LMNN_FLOAT32 && !k.specials && !k.rm_out) CHECK(nn_padding_is_zero(out));
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

/* The flat forms: the output [1, 1, N * OD * OH * OW, C] (tile, from
 * either order), row-major, a page per image row [N * OD * OH, OW * C];
 * the input given flat, [1, 1, N * D * H * W, C] tile and row-major and
 * [N * D * H, W * C] row-major and tile, with its dims. Batches of 2 and 3
 * with padding along d, so that a window crossing from one volume into the
 * next (N * D images read as one batch) would show; max and average (with
 * and without the padding in the divisor), ceil mode, dilation, kernels
 * that differ per dim, 40 channels, NaN and -inf, bfloat16. */
static void test_flat(void) {
    p3_case k = {.n = 2,
                 .c = 3,
                 .d = 6,
                 .h = 8,
                 .w = 10,
                 .kd = 2,
                 .kh = 2,
                 .kw = 2,
                 .flat = true,
                 .cache = true};
    run_case("max 2x2x2 NCDHW in, flat output tile", k);
    k.cache = false;
    k.nhwc = true;
    run_case("max 2x2x2 NDHWC in, flat output tile", k);
    k.rm_out = true;
    run_case("max 2x2x2 NDHWC in, flat row-major out", k);
    k.rows_out = true;
    run_case("max 2x2x2 NDHWC in, image rows out", k);
    k.nhwc = false;
    run_case("max 2x2x2 NCDHW in, image rows out", k);
    k.flat = k.rm_out = k.rows_out = false;
    k.flat_in = true;
    run_case("max 2x2x2 flat in [1, 1, M, C] tile, 5-D out", k);
    k.row_major = k.flat = true;
    run_case("max 2x2x2 flat in row-major, flat out tile", k);
    k.rows_in = k.rows_out = true;
    k.cache = true;
    run_case("max 2x2x2 image rows in and out", k);
    k.cache = false;
    k.row_major = false;
    run_case("max 2x2x2 image rows in as tiles, rows out", k);
    k.flat = k.rm_out = k.rows_out = false;
    run_case("max 2x2x2 image rows in as tiles, 5-D out", k);
    /* 3x3x3 stride 2 padding 1 over 3 volumes, with dilation along d. */
    k = (p3_case){.n = 3,
                  .c = 5,
                  .d = 7,
                  .h = 9,
                  .w = 8,
                  .kd = 3,
                  .kh = 3,
                  .kw = 3,
                  .stride = {2, 2, 2},
                  .pad = {1, 1, 1, 1, 1, 1},
                  .rows_in = true,
                  .row_major = true,
                  .rows_out = true,
                  .expect = {4, 5, 4}};
    run_case("max 3x3x3 s2 p1 N 3, image rows", k);
    k.dil[0] = 2;
    k.pad[0] = k.pad[1] = 2;
    run_case("max 3x3x3 s2 dil (2, 1, 1) p (2, 1, 1), image rows", k);
    k.dil[0] = 0;
    k.pad[0] = k.pad[1] = 1;
    k.rows_in = k.rows_out = k.rm_out = false;
    k.flat_in = k.flat = true;
    run_case("max 3x3x3 s2 p1 N 3, flat tiles in and out", k);
    run_case("max (3, 1, 1) s(2, 1, 1) p(1, 0, 0) C 40, image rows",
             (p3_case){.n = 2,
                       .c = 40,
                       .d = 7,
                       .h = 5,
                       .w = 3,
                       .kd = 3,
                       .kh = 1,
                       .kw = 1,
                       .stride = {2, 1, 1},
                       .pad = {1, 1, 0, 0, 0, 0},
                       .rows_in = true,
                       .row_major = true,
                       .rows_out = true,
                       .expect = {4, 5, 3}});
    run_case("max ceil, window dropped, image rows", (p3_case){.n = 2,
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
                                                               .rows_in = true,
                                                               .row_major = true,
                                                               .rows_out = true,
                                                               .expect = {3, 2, 4}});
    run_case("max 2x2x2 NaN and -inf, image rows", (p3_case){.n = 2,
                                                             .c = 3,
                                                             .d = 4,
                                                             .h = 6,
                                                             .w = 6,
                                                             .kd = 2,
                                                             .kh = 2,
                                                             .kw = 2,
                                                             .specials = true,
                                                             .rows_in = true,
                                                             .row_major = true,
                                                             .rows_out = true});
    /* Average pooling: divisors that differ at the borders of each volume. */
    k = (p3_case){.avg = true,
                  .n = 2,
                  .c = 4,
                  .d = 5,
                  .h = 6,
                  .w = 7,
                  .kd = 3,
                  .kh = 3,
                  .kw = 3,
                  .stride = {1, 1, 1},
                  .pad = {1, 1, 1, 1, 1, 1},
                  .exclude_pad = true,
                  .flat = true};
    run_case("avg 3x3x3 s1 p1 exclude pad, NCDHW in, flat out", k);
    k.flat_in = true;
    run_case("avg exclude pad, flat tiles in and out", k);
    k.row_major = k.rm_out = true;
    run_case("avg exclude pad, flat row-major in and out", k);
    k.rows_in = k.rows_out = true;
    run_case("avg exclude pad, image rows in and out", k);
    k.exclude_pad = false;
    run_case("avg include pad, image rows in and out", k);
    k.divisor = 7;
    run_case("avg divisor_override 7, image rows", k);
    k.divisor = 0;
    k.row_major = k.rm_out = k.rows_out = k.flat = false;
    run_case("avg include pad, image rows in as tiles, 5-D out", k);
    run_case("avg 3x3x3 s2 p1 ceil exclude pad, image rows", (p3_case){.n = 1,
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
                                                                       .exclude_pad = true,
                                                                       .rows_in = true,
                                                                       .row_major = true,
                                                                       .rows_out = true});
    /* bfloat16. */
    k = (p3_case){.n = 2,
                  .c = 5,
                  .d = 7,
                  .h = 9,
                  .w = 8,
                  .kd = 3,
                  .kh = 3,
                  .kw = 3,
                  .stride = {2, 2, 2},
                  .pad = {1, 1, 1, 1, 1, 1},
                  .rows_in = true,
                  .row_major = true,
                  .rows_out = true,
                  .dtype = LMNN_BFLOAT16};
    run_case("max 3x3x3 s2 p1 image rows bf16", k);
    k.avg = k.exclude_pad = true;
    run_case("avg 3x3x3 s2 p1 exclude pad image rows bf16", k);
    k.rows_in = k.rows_out = k.rm_out = k.row_major = false;
    k.flat_in = k.flat = true;
    run_case("avg 3x3x3 s2 p1 exclude pad flat tiles bf16", k);
}

/* The convolution ahead of a chained pooling: stride 1, dilation 1, one
 * group, bias; its input [N, C, D, H, W] (NCDHW tile). */
typedef struct conv_part {
    uint32_t n, c, d, h, w, oc, kd, kh, kw;
    int32_t pad[6]; /* [front, back, top, bottom, left, right] */
    bool relu;
    bool rows_out; /* the output as image rows, else flat row-major [1, 1, M, OC] */
} conv_part;

static void conv_out_dims(const conv_part *cp, uint32_t *od) {
    od[0] = cp->d + (uint32_t)(cp->pad[0] + cp->pad[1]) - cp->kd + 1;
    od[1] = cp->h + (uint32_t)(cp->pad[2] + cp->pad[3]) - cp->kh + 1;
    od[2] = cp->w + (uint32_t)(cp->pad[4] + cp->pad[5]) - cp->kw + 1;
}

/* PyTorch's conv3d in float64, NCDHW: y [n, oc, od, oh, ow] and S = sum
 * over the window of |w * x| plus |bias| per element; w [OC, C, KD, KH, KW]. */
static void conv_reference(const conv_part *cp, const float *x, const float *w, const float *b,
                           const uint32_t *od, double *y, double *s) {
    size_t osp = (size_t)od[0] * od[1] * od[2], isp = (size_t)cp->d * cp->h * cp->w;
    for (uint32_t n = 0; n < cp->n; n++)
        for (uint32_t o = 0; o < cp->oc; o++)
            for (size_t p = 0; p < osp; p++) {
                int64_t oz = (int64_t)(p / ((size_t)od[1] * od[2])),
                        oy = (int64_t)(p / od[2] % od[1]), ox = (int64_t)(p % od[2]);
                double acc = b[o], sabs = fabs(b[o]);
                for (uint32_t c = 0; c < cp->c; c++)
                    for (uint32_t kz = 0; kz < cp->kd; kz++)
                        for (uint32_t ky = 0; ky < cp->kh; ky++)
                            for (uint32_t kx = 0; kx < cp->kw; kx++) {
                                int64_t z = oz - cp->pad[0] + kz, yy = oy - cp->pad[2] + ky,
                                        xx = ox - cp->pad[4] + kx;
                                if (z < 0 || z >= cp->d || yy < 0 || yy >= cp->h || xx < 0 ||
                                    xx >= cp->w)
                                    continue;
                                double pr =
                                    (double)w[(((size_t)o * cp->c + c) * cp->kd + kz) * cp->kh *
                                                  cp->kw +
                                              (size_t)ky * cp->kw + kx] *
                                    x[((size_t)n * cp->c + c) * isp +
                                      ((size_t)z * cp->h + (size_t)yy) * cp->w + (size_t)xx];
                                acc += pr;
                                sabs += fabs(pr);
                            }
                size_t i = ((size_t)n * cp->oc + o) * osp + p;
                y[i] = cp->relu && acc < 0 ? 0 : acc;
                s[i] = sabs;
            }
}

/* conv3d giving a flat row-major output (cp.rows_out: image rows), passed
 * as it is to the pooling k, which reads it as a flat volume (k.flat_in or
 * rows_in; k's N, C, D, H, W and dtype are the convolution's output's, set
 * here). The convolution's output is checked against its reference
 * (within tol_c * S_c, tol_c 1e-5 float32, 2^-8 bfloat16); the pooling of
 * it as the device gave it against the reference pooling of those values
 * (max exact, average within tol * S); and the pooling against the float64
 * reference of both, pool(conv(x)): an error of at most tol_c * S_c per
 * input element moves a max by at most tol_c * (the window's largest S_c),
 * an average by tol_c * (the window's average S_c): the reference pooling
 * of S_c, added to the bound (with 2^-24 |y| for the convolution's
 * reference rounded to float32 to be the pooling's input). */
static void run_pool_chain(const char *name, conv_part cp, p3_case k, lmnn_dtype dtype) {
    uint32_t cd[3], od[3];
    conv_out_dims(&cp, cd);
    k.n = cp.n, k.c = cp.oc, k.d = cd[0], k.h = cd[1], k.w = cd[2], k.dtype = dtype;
    normalized(&k);
    out_dims(&k, od);
    size_t isp = (size_t)cp.d * cp.h * cp.w, csp = (size_t)cd[0] * cd[1] * cd[2],
           osp = (size_t)od[0] * od[1] * od[2];
    size_t nx = cp.n * cp.c * isp, nw = (size_t)cp.oc * cp.c * cp.kd * cp.kh * cp.kw,
           nc = cp.n * cp.oc * csp, ny = k.n * k.c * osp;
    float *x0 = nn_rand_floats(nx, -1, 1, 61 + nx), *w0 = nn_rand_floats(nw, -1, 1, 67 + nw),
          *b0 = nn_rand_floats(cp.oc, -1, 1, 71);
    float *x = nn_rounded(x0, nx, dtype), *w = nn_rounded(w0, nw, dtype),
          *b = nn_rounded(b0, cp.oc, dtype);
    double *yc = malloc(nc * sizeof *yc), *sc = malloc(nc * sizeof *sc),
           *want = malloc(ny * sizeof *want), *scale = malloc(ny * sizeof *scale),
           *carry = malloc(ny * sizeof *carry), *junk = malloc(ny * sizeof *junk),
           *want_dev = malloc(ny * sizeof *want_dev), *scale_dev = malloc(ny * sizeof *scale_dev);
    conv_reference(&cp, x, w, b, cd, yc, sc);
    float *ycf = malloc(nc * sizeof *ycf), *scf = malloc(nc * sizeof *scf);
    for (size_t i = 0; i < nc; i++) {
        ycf[i] = (float)yc[i];
        scf[i] = (float)sc[i];
    }
    reference(&k, ycf, od, want, scale);
    reference(&k, scf, od, carry, junk);
    double tol_c = dtype == LMNN_FLOAT32 ? 1e-5 : 1.0 / 256;
    for (size_t i = 0; i < ny; i++)
        carry[i] = tol_c * carry[i] + 0x1p-24 * fabs(want[i]);

    lmnn_shape xs = LMNN_SHAPE(cp.n, cp.c, cp.d, cp.h, cp.w),
               ws = LMNN_SHAPE(cp.oc, cp.c, cp.kd, cp.kh, cp.kw), bs = LMNN_SHAPE(cp.oc);
    lmnn_tensor xt, wt, bt, yt = {0}, out = {0};
    CHECK_OK(nn_upload(&xs, x0, dtype, LMNN_TILE, &xt));
    CHECK_OK(nn_upload(&ws, w0, dtype, LMNN_TILE, &wt));
    CHECK_OK(nn_upload(&bs, b0, dtype, LMNN_TILE, &bt));
    lmnn_conv3d_options co;
    lmnn_conv3d_options_init(&co);
    memcpy(co.padding, cp.pad, sizeof co.padding);
    if (cp.relu) co.activation = LMNN_RELU;
    co.flat_output = true;
    co.output_layout = LMNN_ROW_MAJOR;
    co.output_image_rows = cp.rows_out;
    CHECK_OK(lmnn_conv3d(xt, wt, bt, &co, &yt));
    lmnn_pool3d_options o;
    options_of(&k, &o);
    CHECK_OK(k.avg ? lmnn_avg_pool3d(yt, &o, &out) : lmnn_max_pool3d(yt, &o, &out));
    lmnn_shape cs = cp.rows_out ? LMNN_SHAPE(cp.n * cd[0] * cd[1], cd[2] * cp.oc)
                                : LMNN_SHAPE(1, 1, cp.n * csp, cp.oc);
    char first[128];
    snprintf(first, sizeof first, "%s: conv3d", name);
    if (!nn_output_is(first, yt, &cs, LMNN_ROW_MAJOR, dtype, false)) return;
    lmnn_layout el;
    lmnn_shape es = output_shape(&k, od, &el);
    if (!nn_output_is(name, out, &es, el, dtype, false)) return;
    float *gc = nn_download(yt), *got = nn_download(out);
    CHECK(gc && got);
    float *gcc = nn_channels_last(gc, cp.n, (uint32_t)csp, cp.oc); /* NDHWC -> NCDHW */
    float *gotc = k.nhwc || k.flat ? nn_channels_last(got, k.n, (uint32_t)osp, k.c) : got;
    /* The convolution's output. */
    size_t cbad = nc, cnbad = 0;
    double cratio = 0;
    for (size_t i = 0; i < nc; i++) {
        double e = fabs(gcc[i] - yc[i]);
        if (!(e <= tol_c * sc[i] + 1e-30) && cnbad++ == 0) cbad = i;
        if (e > 0) cratio = fmax(cratio, e / fmax(sc[i], 1e-30));
    }
    printf("  %-46s %-8s err/S %.3g\n", first, lmnn_dtype_name(dtype), cratio);
    if (cnbad) {
        char m[300];
        snprintf(m, sizeof m,
                 "%s: %zu of %zu elements out of bound; first %zu (NCDHW): got %.9g, "
                 "want %.9g (S %.3g)",
                 first, cnbad, nc, cbad, gcc[cbad], yc[cbad], sc[cbad]);
        test_fail_(__FILE__, __LINE__, m);
    }
    /* The pooling of the values it was given, then of the reference's. */
    char own[128];
    snprintf(own, sizeof own, "%s: of its input", name);
    reference(&k, gcc, od, want_dev, scale_dev);
    double r = compared(own, &k, od, gotc, want_dev, scale_dev, NULL);
    if (k.avg) worst_avg_ = fmax(worst_avg_, r);
    compared(name, &k, od, gotc, want, scale, carry);
    lmnn_tensor ts[] = {xt, wt, bt, yt, out};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        if (ts[i].id) lmnn_tensor_free(ts[i]);
    if (gotc != got) free(gotc);
    free(gc), free(got), free(gcc), free(x0), free(w0), free(b0), free(x), free(w), free(b);
    free(yc), free(sc), free(want), free(scale), free(carry), free(junk), free(want_dev);
    free(scale_dev), free(ycf), free(scf);
}

/* conv3d -> pooling, the convolution's image rows read as they are. */
static void test_flat_chain(void) {
    conv_part cp = {.n = 2,
                    .c = 3,
                    .d = 6,
                    .h = 8,
                    .w = 10,
                    .oc = 8,
                    .kd = 3,
                    .kh = 3,
                    .kw = 3,
                    .pad = {1, 1, 1, 1, 1, 1},
                    .relu = true,
                    .rows_out = true};
    p3_case k = {.kd = 2, .kh = 2, .kw = 2, .rows_in = true, .rows_out = true};
    run_pool_chain("conv3d rows -> max 2x2x2 rows", cp, k, LMNN_FLOAT32);
    k = (p3_case){.kd = 3,
                  .kh = 3,
                  .kw = 3,
                  .stride = {2, 2, 2},
                  .pad = {1, 1, 1, 1, 1, 1},
                  .rows_in = true,
                  .rows_out = true};
    run_pool_chain("conv3d rows -> max 3x3x3 s2 p1 rows", cp, k, LMNN_FLOAT32);
    run_pool_chain("conv3d rows -> max 3x3x3 s2 p1 rows bf16", cp, k, LMNN_BFLOAT16);
    k.rows_out = k.rm_out = false;
    k.flat = true;
    k.avg = k.exclude_pad = true;
    run_pool_chain("conv3d rows -> avg 3x3x3 s2 p1 excl, flat out", cp, k, LMNN_FLOAT32);
    /* The convolution's flat row-major [1, 1, M, OC] read as it is. */
    cp.rows_out = false;
    cp.pad[0] = cp.pad[1] = 0; /* depth 4 */
    k = (p3_case){.kd = 2, .kh = 2, .kw = 2, .flat_in = true, .rm_out = true};
    run_pool_chain("conv3d flat row-major -> max 2x2x2 flat row-major", cp, k, LMNN_FLOAT32);
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
    /* The flat forms: the dims of a flat input need NDHWC, all four set,
     * and the input's rows to hold them (x, [1, 3, 5, 5, 5] read flat,
     * holds 1 x 3 x 5 x 5 voxels of 5 channels); the row-major output needs
     * flat_output, image rows need it row-major. */
    o.batch_size = 1, o.input_depth = 3, o.input_height = o.input_width = 5;
    CHECK_FAILS(lmnn_max_pool3d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool3d: batch_size, input_depth, input_height, input_width: expected "
                "input_layout NHWC (a flat volume), given NCHW");
    CHECK_FAILS(lmnn_avg_pool3d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_avg_pool3d: batch_size, input_depth, input_height, input_width: expected "
                "input_layout NHWC");
    o.input_layout = LMNN_NHWC;
    o.input_height = 0;
    CHECK_FAILS(lmnn_avg_pool3d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_avg_pool3d: batch_size, input_depth, input_height, input_width: expected "
                "all >= 1");
    CHECK_ERROR_HAS("given (1, 3, 0, 5)");
    o.input_height = 5, o.input_width = 0;
    CHECK_FAILS(lmnn_max_pool3d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool3d: batch_size, input_depth, input_height, input_width: expected "
                "all >= 1");
    CHECK_ERROR_HAS("given (1, 3, 5, 0)");
    o.input_width = 5, o.input_depth = 2;
    CHECK_FAILS(lmnn_max_pool3d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool3d: input: shape [1, 3, 5, 5, 5] does not hold a flat image of 2 x "
                "5 x 5 pixels (expected [..., C] with N * H * W = 50 rows, or [..., W * C] with N "
                "* H = 10)");
    CHECK_FAILS(lmnn_avg_pool3d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_avg_pool3d: input: shape [1, 3, 5, 5, 5] does not hold a flat image");
    o.input_depth = 3; /* the dims right (used below) */
    o.output_image_rows = true;
    CHECK_FAILS(lmnn_max_pool3d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool3d: output_image_rows: needs output_layout row_major (pages of a "
                "tile image are tiles)");
    o.flat_output = true;
    CHECK_FAILS(lmnn_avg_pool3d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_avg_pool3d: output_image_rows: needs output_layout row_major");
    o.flat_output = o.output_image_rows = false;
    o.output_layout = LMNN_ROW_MAJOR;
    CHECK_FAILS(lmnn_max_pool3d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool3d: output_layout: row_major needs flat_output (a flat NHWC image)");
    o.output_image_rows = true;
    CHECK_FAILS(lmnn_avg_pool3d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_avg_pool3d: output_layout: row_major needs flat_output");
    o.output_image_rows = false;
    o.output_layout = LMNN_TILE;
    o.input_layout = LMNN_NCHW;
    o.batch_size = o.input_depth = o.input_height = o.input_width = 0;
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
    /* ... and x read flat with its dims right: 1 x 3 x 5 x 5 voxels of 5
     * channels, kernel (2, 3, 3) stride the kernel: [1, 1, 1, 1, 5]. */
    o.input_layout = LMNN_NHWC;
    o.batch_size = 1, o.input_depth = 3, o.input_height = o.input_width = 5;
    CHECK_OK(lmnn_avg_pool3d(x, &o, &out));
    CHECK_OK(lmnn_tensor_get_info(out, &info));
    CHECK(info.shape.rank == 5 && info.shape.dims[0] == 1 && info.shape.dims[1] == 1 &&
          info.shape.dims[2] == 1 && info.shape.dims[3] == 1 && info.shape.dims[4] == 5);
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
    float *xc = nn_channels_last(x, CN, CD * CH * CW, CC); /* NDHWC -> NCDHW */
    float *gc = nn_channels_last(got, CN, COD * COH * COW, CC);
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
    TEST_RUN(test_flat);
    TEST_RUN(test_flat_chain);
    TEST_RUN(test_errors);
    TEST_RUN(test_capture);
    printf("largest average |err| / S: %.3g\n", worst_avg_);
    nn_dev_close();
    return test_summary();
}
