/* conv3d and conv_transpose3d against a float64 host reference of PyTorch's
 * torch.nn.functional.conv3d / conv_transpose3d: 3x3x3 kernels with padding,
 * bias and a fused relu; NCDHW and NDHWC volumes (tile and row-major), the
 * result in the input's order; strides, asymmetric padding, dilation and
 * kernels that differ per dim; groups and depthwise (40 channels: the
 * per-tap form [1, KD * KH * KW, C] and its compute kernel); one and three
 * input channels; patch rows wider than 1024 columns (48 channels, 3x3x3);
 * a 1x1x1 convolution over an NDHWC tile volume whose W is 32 (the volume
 * is its own patch matrix: no gather); bfloat16; weights prepared from host
 * data by lmnn_conv3d_prepare_weights_host and
 * lmnn_conv_transpose3d_prepare_weights_host (their matrices checked element
 * by element against the header's layout); transposed convolutions of
 * stride 2 kernel 2 (a decoder's upsampling), stride 2 kernel 3 with
 * output_padding, stride (1, 2, 1), groups and dilation; the program cache;
 * the flat forms (flat_output as tiles, row-major and image rows; flat
 * inputs [1, 1, N * D * H * W, C] and [N * D * H, W * C], tile and
 * row-major, with batch_size, input_depth, input_height, input_width),
 * plain, depthwise, 1x1x1, prepared and transposed, and chains of two
 * convolutions, the first's flat output read as it is by the second,
 * checked against the float64 reference of both (the first's bound carried
 * through the second's |weights|); the errors, each with its status and
 * message; a Light Metal capture and its replay, with the input replaced.
 *
 * Bound asserted, per element, with S = sum over the window of |w * x| plus
 * |bias| (the operands as stored on the device, i.e. rounded to bfloat16 for
 * bfloat16 tensors):
 *   float32   |err| <= 1e-5 * S
 *   bfloat16  |err| <= 2^-8 * S (one output rounding and float32
 *             accumulation, the default for convolutions)
 * Each case prints its PCC, largest absolute and relative errors (relative to
 * max(|y|, 1e-3)) and largest |err| / S. */
#include <string.h>

#include "lm_test_replay.h"
#include "nn_test.h"

typedef struct c3_case {
    uint32_t n, c, d, h, w, oc, kd, kh, kw;
    /* (d, h, w); padding [front, back, top, bottom, left, right]. Zero
     * strides, dilations and groups mean 1. */
    int32_t stride[3], pad[6], dil[3], groups, outpad[3];
    bool transpose, bias, relu;
    bool nhwc;      /* the volume as [N, D, H, W, C] (LMNN_NHWC), the result too */
    bool row_major; /* the input row-major (else tile) */
    /* The weight prepared by lmnn_conv3d_prepare_weights_host (or the
     * transposed one) from the host data, in the case's dtype, passed with
     * kernel_size; else the PyTorch-layout weight uploaded as it is. */
    bool host_prep;
    bool cache; /* a second call must hit the program cache */
    /* The flat forms (lmnn_conv3d_options' flat_output, output_layout,
     * output_image_rows, batch_size, input_depth, input_height,
     * input_width); each implies those after it on its line. */
    bool flat;     /* the output [1, 1, N * OD * OH * OW, OC], NDHWC order */
    bool rm_out;   /* that output row-major: flat */
    bool rows_out; /* that as [N * OD * OH, OW * OC]: rm_out */
    bool flat_in;  /* the NDHWC volume as [1, 1, N * D * H * W, C], its dims given: nhwc */
    bool rows_in;  /* that as [N * D * H, W * C], a page per image row: flat_in */
    lmnn_dtype dtype;
    /* Kernels (file names) whose programs must, or must not, have run. */
    const char *must_run, *must_not_run;
} c3_case;

/* The output's (d, h, w). */
static void out_dims(const c3_case *k, uint32_t *o) {
    const uint32_t in[3] = {k->d, k->h, k->w}, ks[3] = {k->kd, k->kh, k->kw};
    for (int i = 0; i < 3; i++) {
        int64_t reach = (int64_t)k->dil[i] * (ks[i] - 1) + 1,
                pads = k->pad[2 * i] + k->pad[2 * i + 1];
        o[i] = k->transpose
                   ? (uint32_t)(((int64_t)in[i] - 1) * k->stride[i] - pads + reach + k->outpad[i])
                   : (uint32_t)(((int64_t)in[i] + pads - reach) / k->stride[i] + 1);
    }
}

/* Where input position `i` under kernel tap `t` lands along one dim (-1:
 * nowhere). A convolution's output o reads i = o * s - pad + t * dil; a
 * transposed one's input i adds to o = i * s - pad + t * dil. */
static int64_t land(bool transpose, int64_t i, int64_t t, int32_t s, int32_t pad, int32_t dil,
                    uint32_t out) {
    int64_t o;
    if (transpose) {
        o = i * s - pad + t * dil;
    } else {
        int64_t num = i + pad - t * dil;
        if (num < 0 || num % s) return -1;
        o = num / s;
    }
    return o >= 0 && o < out ? o : -1;
}

/* The reference, NCDHW: y [n, oc, od, oh, ow] and the scale S per element.
 * Every product w * x is added where it lands: input voxel (c, z, y, x) and
 * kernel tap (kz, ky, kx) with each output channel of c's group. */
static void reference(const c3_case *k, const float *x, const float *w, const float *b,
                      const uint32_t *od, double *y, double *s) {
    uint32_t g = (uint32_t)k->groups, cg = k->c / g, ocg = k->oc / g;
    size_t osp = (size_t)od[0] * od[1] * od[2], ny = (size_t)k->n * k->oc * osp;
    size_t taps = (size_t)k->kd * k->kh * k->kw;
    for (size_t i = 0; i < ny; i++)
        y[i] = s[i] = 0;
    for (uint32_t n = 0; n < k->n; n++)
        for (uint32_t c = 0; c < k->c; c++) {
            uint32_t gi = c / cg, cl = c % cg;
            for (uint32_t iz = 0; iz < k->d; iz++)
                for (uint32_t iy = 0; iy < k->h; iy++)
                    for (uint32_t ix = 0; ix < k->w; ix++) {
                        double xv = x[(((size_t)n * k->c + c) * k->d + iz) * k->h * k->w +
                                      (size_t)iy * k->w + ix];
                        for (uint32_t kz = 0; kz < k->kd; kz++) {
                            int64_t oz = land(k->transpose, iz, kz, k->stride[0], k->pad[0],
                                              k->dil[0], od[0]);
                            if (oz < 0) continue;
                            for (uint32_t ky = 0; ky < k->kh; ky++) {
                                int64_t oy = land(k->transpose, iy, ky, k->stride[1], k->pad[2],
                                                  k->dil[1], od[1]);
                                if (oy < 0) continue;
                                for (uint32_t kx = 0; kx < k->kw; kx++) {
                                    int64_t ox = land(k->transpose, ix, kx, k->stride[2], k->pad[4],
                                                      k->dil[2], od[2]);
                                    if (ox < 0) continue;
                                    size_t t = ((size_t)kz * k->kh + ky) * k->kw + kx;
                                    for (uint32_t ol = 0; ol < ocg; ol++) {
                                        uint32_t o = gi * ocg + ol;
                                        /* conv [OC, C / g, ...]; transposed [C, OC / g, ...] */
                                        size_t wi = k->transpose ? ((size_t)c * ocg + ol) * taps + t
                                                                 : ((size_t)o * cg + cl) * taps + t;
                                        double p = (double)w[wi] * xv;
                                        size_t yi = ((size_t)n * k->oc + o) * osp +
                                                    ((size_t)oz * od[1] + (size_t)oy) * od[2] +
                                                    (size_t)ox;
                                        y[yi] += p;
                                        s[yi] += fabs(p);
                                    }
                                }
                            }
                        }
                    }
        }
    for (uint32_t n = 0; n < k->n; n++)
        for (uint32_t o = 0; o < k->oc; o++)
            for (size_t p = 0; p < osp; p++) {
                size_t i = ((size_t)n * k->oc + o) * osp + p;
                if (b) {
                    y[i] += b[o];
                    s[i] += fabs(b[o]);
                }
                if (k->relu && y[i] < 0) y[i] = 0;
            }
}

static void options_of(const c3_case *k, lmnn_conv3d_options *o) {
    lmnn_conv3d_options_init(o);
    o->input_layout = k->nhwc ? LMNN_NHWC : LMNN_NCHW;
    memcpy(o->stride, k->stride, sizeof o->stride);
    memcpy(o->padding, k->pad, sizeof o->padding);
    memcpy(o->dilation, k->dil, sizeof o->dilation);
    memcpy(o->output_padding, k->outpad, sizeof o->output_padding);
    o->groups = k->groups;
    if (k->relu) o->activation = LMNN_RELU;
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

/* The implied flags set (see c3_case), zero strides, dilations and groups
 * made 1, zero dtype float32. */
static void normalized(c3_case *k) {
    if (!k->groups) k->groups = 1;
    for (int i = 0; i < 3; i++) {
        if (!k->stride[i]) k->stride[i] = 1;
        if (!k->dil[i]) k->dil[i] = 1;
    }
    if (!k->dtype) k->dtype = LMNN_FLOAT32;
    k->rm_out |= k->rows_out;
    k->flat |= k->rm_out;
    k->flat_in |= k->rows_in;
    k->nhwc |= k->flat_in;
}

/* The input's shape as the case gives it. */
static lmnn_shape input_shape(const c3_case *k) {
    return k->rows_in   ? LMNN_SHAPE(k->n * k->d * k->h, k->w * k->c)
           : k->flat_in ? LMNN_SHAPE(1, 1, k->n * k->d * k->h * k->w, k->c)
           : k->nhwc    ? LMNN_SHAPE(k->n, k->d, k->h, k->w, k->c)
                        : LMNN_SHAPE(k->n, k->c, k->d, k->h, k->w);
}

/* The output's shape and layout as the case asks for them (od: its (d, h,
 * w)). */
static lmnn_shape output_shape(const c3_case *k, const uint32_t *od, lmnn_layout *layout) {
    *layout = k->rm_out ? LMNN_ROW_MAJOR : LMNN_TILE;
    return k->rows_out ? LMNN_SHAPE(k->n * od[0] * od[1], od[2] * k->oc)
           : k->flat   ? LMNN_SHAPE(1, 1, k->n * od[0] * od[1] * od[2], k->oc)
           : k->nhwc   ? LMNN_SHAPE(k->n, od[0], od[1], od[2], k->oc)
                       : LMNN_SHAPE(k->n, k->oc, od[0], od[1], od[2]);
}

/* The prepared weight `wp` is the header's matrix of the PyTorch weight
 * `w0` (float32 host data): [KD * KH * KW * C, OC], row t * C + c (t the
 * flat tap (kd * KH + kh) * KW + kw), zeros outside the groups, the kernel
 * flipped for a transposed one; or [1, KD * KH * KW, C], element (0, t, c),
 * for a depthwise one of more than 32 channels. Values as `dtype` stores
 * them. */
static void check_prepared(const c3_case *k, lmnn_tensor wp, const float *w0, lmnn_dtype dtype) {
    uint32_t g = (uint32_t)k->groups, cg = k->c / g, ocg = k->oc / g;
    uint32_t taps = k->kd * k->kh * k->kw;
    bool dw = !k->transpose && g == k->c && k->oc == k->c && k->c > 32;
    lmnn_tensor_info wi;
    CHECK_OK(lmnn_tensor_get_info(wp, &wi));
    CHECK(wi.layout == LMNN_TILE && wi.dtype == dtype);
    lmnn_shape es = dw ? LMNN_SHAPE(1, taps, k->c) : LMNN_SHAPE(taps * k->c, k->oc);
    CHECK(wi.shape.rank == es.rank && !memcmp(wi.shape.dims, es.dims, sizeof(uint32_t) * es.rank));
    float *pv = nn_download(wp);
    CHECK(pv);
    size_t nv = (size_t)lmnn_shape_volume(&es), bad = nv;
    double want_bad = 0;
    for (size_t i = 0; i < nv; i++) {
        float e = 0;
        if (dw) {
            uint32_t t = (uint32_t)(i / k->c), c = (uint32_t)(i % k->c);
            e = w0[(size_t)c * taps + t];
        } else {
            uint32_t o = (uint32_t)(i % k->oc), row = (uint32_t)(i / k->oc);
            uint32_t t = row / k->c, c = row % k->c;
            if (c / cg == o / ocg)
                e = k->transpose ? w0[((size_t)c * ocg + o % ocg) * taps + (taps - 1 - t)]
                                 : w0[((size_t)o * cg + c % cg) * taps + t];
        }
        if (dtype == LMNN_BFLOAT16) e = nn_bf16(e);
        if (pv[i] != e && bad == nv) {
            bad = i;
            want_bad = e;
        }
    }
    if (bad != nv) {
        char m[256];
        snprintf(m, sizeof m, "prepared weight element %zu: got %.9g, want %.9g", bad, pv[bad],
                 want_bad);
        free(pv);
        test_fail_(__FILE__, __LINE__, m);
        return;
    }
    free(pv);
}

static double worst_ratio_ = 0;

/* Checks `got` (NCDHW: case k's output, of (d, h, w) od) against the
 * reference, per element |got - want| <= tol * (scale + extra) with tol
 * 1e-5 (float32) or 2^-8 (bfloat16), extra (NULL: 0) what the bound adds
 * (a chain's error carried from its first op); prints the case's line;
 * fails naming the first element out of bound and how many are. Returns the
 * largest |err| / (scale + extra). */
static double compared(const char *name, const c3_case *k, const uint32_t *od, const float *got,
                       const double *want, const double *scale, const double *extra) {
    size_t ny = (size_t)k->n * k->oc * od[0] * od[1] * od[2];
    double tol = k->dtype == LMNN_FLOAT32 ? 1e-5 : 1.0 / 256, ratio = 0;
    size_t bad = ny, nbad = 0;
    for (size_t i = 0; i < ny; i++) {
        double sc = scale[i] + (extra ? extra[i] : 0);
        double e = fabs(got[i] - want[i]), r = e / fmax(sc, 1e-30);
        if (!(e <= tol * sc + 1e-30)) { /* NaN counts */
            if (bad == ny) bad = i;
            nbad++;
            r = isnan(r) ? INFINITY : r;
        }
        if (e > 0 && r > ratio) ratio = r;
    }
    nn_err e = nn_compare(got, want, ny, 1e-3);
    printf("  %-44s %-8s pcc %.7f max_abs %.3g max_rel %.3g err/S %.3g\n", name,
           lmnn_dtype_name(k->dtype), e.pcc, e.max_abs, e.max_rel, ratio);
    if (bad != ny) {
        /* The first bad element's NCDHW coordinates. */
        size_t r = bad;
        uint32_t ox = (uint32_t)(r % od[2]);
        r /= od[2];
        uint32_t oy = (uint32_t)(r % od[1]);
        r /= od[1];
        uint32_t oz = (uint32_t)(r % od[0]);
        r /= od[0];
        uint32_t oc = (uint32_t)(r % k->oc), n = (uint32_t)(r / k->oc);
        char m[400];
        snprintf(m, sizeof m,
                 "%s: %zu of %zu elements out of bound; first (n %u, oc %u, d %u, h %u, w %u): "
                 "got %.9g, want %.9g (S %.3g)",
                 name, nbad, ny, n, oc, oz, oy, ox, got[bad], want[bad],
                 scale[bad] + (extra ? extra[bad] : 0));
        test_fail_(__FILE__, __LINE__, m);
    }
    return ratio;
}

/* Runs one case and checks it against the reference. */
static void run_case(const char *name, c3_case k) {
    normalized(&k);
    uint32_t g = (uint32_t)k.groups, od[3];
    out_dims(&k, od);
    size_t isp = (size_t)k.d * k.h * k.w, osp = (size_t)od[0] * od[1] * od[2];
    size_t taps = (size_t)k.kd * k.kh * k.kw;
    size_t nx = k.n * k.c * isp, ny = k.n * k.oc * osp;
    size_t nw = (k.transpose ? (size_t)k.c * (k.oc / g) : (size_t)k.oc * (k.c / g)) * taps;
    float *x0 = nn_rand_floats(nx, -1, 1, 11 + nx), *w0 = nn_rand_floats(nw, -1, 1, 7 + nw);
    float *b0 = nn_rand_floats(k.oc, -1, 1, 3 + k.oc);
    float *x = nn_rounded(x0, nx, k.dtype), *w = nn_rounded(w0, nw, k.dtype),
          *b = nn_rounded(b0, k.oc, k.dtype);
    double *want = malloc(ny * sizeof *want), *scale = malloc(ny * sizeof *scale);
    reference(&k, x, w, k.bias ? b : NULL, od, want, scale);

    lmnn_shape xs = input_shape(&k);
    lmnn_shape ws = k.transpose ? LMNN_SHAPE(k.c, k.oc / g, k.kd, k.kh, k.kw)
                                : LMNN_SHAPE(k.oc, k.c / g, k.kd, k.kh, k.kw);
    lmnn_shape bs = LMNN_SHAPE(k.oc);
    float *xin = k.nhwc ? nn_channels_last(x0, k.n, k.c, isp) : x0;
    lmnn_tensor xt, wt = {0}, bt = {0}, out = {0}, out2 = {0};
    CHECK_OK(nn_upload(&xs, xin, k.dtype, k.row_major ? LMNN_ROW_MAJOR : LMNN_TILE, &xt));
    if (k.bias) CHECK_OK(nn_upload(&bs, b0, k.dtype, LMNN_TILE, &bt));
    lmnn_conv3d_options o;
    options_of(&k, &o);
    if (k.host_prep) {
        o.output.dtype = k.dtype;
        CHECK_OK(k.transpose ? lmnn_conv_transpose3d_prepare_weights_host(nn_dev(), &ws, w0,
                                                                          nw * sizeof *w0, &o, &wt)
                             : lmnn_conv3d_prepare_weights_host(nn_dev(), &ws, w0, nw * sizeof *w0,
                                                                &o, &wt));
        o.output.dtype = 0;
        check_prepared(&k, wt, w0, k.dtype);
        if (test_current_failed_) return;
        o.kernel_size[0] = (int32_t)k.kd;
        o.kernel_size[1] = (int32_t)k.kh;
        o.kernel_size[2] = (int32_t)k.kw;
    } else {
        CHECK_OK(nn_upload(&ws, w0, k.dtype, LMNN_TILE, &wt));
    }
    if (k.must_run || k.must_not_run) CHECK_OK(lm_device_set_profiling(nn_dev(), true));
    CHECK_OK(k.transpose ? lmnn_conv_transpose3d(xt, wt, bt, &o, &out)
                         : lmnn_conv3d(xt, wt, bt, &o, &out));
    if (k.must_run || k.must_not_run) {
        const char *kn[2] = {k.must_run ? k.must_run : "-", k.must_not_run ? k.must_not_run : "-"};
        bool ran[2];
        nn_ran_since(kn, ran, 2);
        if ((k.must_run && !ran[0]) || (k.must_not_run && ran[1])) {
            char m[256];
            snprintf(m, sizeof m, "%s: %s %s", name, k.must_run && !ran[0] ? kn[0] : kn[1],
                     k.must_run && !ran[0] ? "did not run" : "ran");
            test_fail_(__FILE__, __LINE__, m);
            return;
        }
    }
    if (k.cache) {
        lmnn_program_cache_stats before, after;
        CHECK_OK(lmnn_program_cache_get_stats(nn_dev(), &before));
        CHECK_OK(k.transpose ? lmnn_conv_transpose3d(xt, wt, bt, &o, &out2)
                             : lmnn_conv3d(xt, wt, bt, &o, &out2));
        CHECK_OK(lmnn_program_cache_get_stats(nn_dev(), &after));
        CHECK_EQ_U64(after.misses, before.misses);
        CHECK(after.hits > before.hits);
    }
    lmnn_layout el;
    lmnn_shape es = output_shape(&k, od, &el);
    if (!nn_output_is(name, out, &es, el, k.dtype, true)) return;
    float *got = nn_download(out);
    CHECK(got);
    if (k.cache) { /* the second call gives the same */
        float *got2 = nn_download(out2);
        CHECK(got2);
        bool same = !memcmp(got, got2, ny * sizeof *got);
        free(got2);
        CHECK(same);
    }
    if (k.nhwc || k.flat) { /* back to NCDHW */
        float *t = nn_channels_last(got, k.n, (uint32_t)osp, k.oc);
        free(got);
        got = t;
    }
    double ratio = compared(name, &k, od, got, want, scale, NULL);
    if (k.dtype == LMNN_FLOAT32 && !k.rm_out) CHECK(nn_padding_is_zero(out));
    if (ratio > worst_ratio_) worst_ratio_ = ratio;
    lmnn_tensor ts[] = {out, out2, xt, wt, bt};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        lmnn_tensor_free(ts[i]);
    if (xin != x0) free(xin);
    free(got), free(x0), free(w0), free(b0), free(x), free(w), free(b), free(want), free(scale);
}

/* A 3x3x3 convolution with padding, bias and relu in the layouts; one and
 * three input channels (a network's first layer); bfloat16. */
static void test_basic(void) {
    c3_case k = {.n = 2,
                 .c = 4,
                 .d = 5,
                 .h = 6,
                 .w = 7,
                 .oc = 8,
                 .kd = 3,
                 .kh = 3,
                 .kw = 3,
                 .pad = {1, 1, 1, 1, 1, 1},
                 .bias = true,
                 .relu = true,
                 .cache = true};
    run_case("3x3x3 pad 1 NCDHW tile, bias, relu", k);
    k.cache = false;
    k.nhwc = true;
    run_case("3x3x3 pad 1 NDHWC tile, bias, relu", k);
    k.row_major = true;
    run_case("3x3x3 pad 1 NDHWC row-major, bias, relu", k);
    k.nhwc = false;
    run_case("3x3x3 pad 1 NCDHW row-major, bias, relu", k);
    k.row_major = false;
    k.dtype = LMNN_BFLOAT16;
    run_case("3x3x3 pad 1 NCDHW bf16", k);
    k.nhwc = true;
    run_case("3x3x3 pad 1 NDHWC bf16", k);
    run_case("C 1 first layer [1, 1, 8, 12, 12] -> 8", (c3_case){.n = 1,
                                                                 .c = 1,
                                                                 .d = 8,
                                                                 .h = 12,
                                                                 .w = 12,
                                                                 .oc = 8,
                                                                 .kd = 3,
                                                                 .kh = 3,
                                                                 .kw = 3,
                                                                 .pad = {1, 1, 1, 1, 1, 1},
                                                                 .bias = true,
                                                                 .relu = true});
    run_case("C 3 [2, 3, 5, 8, 9] -> 6, stride (1, 2, 2)", (c3_case){.n = 2,
                                                                     .c = 3,
                                                                     .d = 5,
                                                                     .h = 8,
                                                                     .w = 9,
                                                                     .oc = 6,
                                                                     .kd = 3,
                                                                     .kh = 3,
                                                                     .kw = 3,
                                                                     .stride = {1, 2, 2},
                                                                     .pad = {1, 1, 1, 1, 1, 1},
                                                                     .bias = true});
    /* Output rows of 32 pixels: a unit's lines are 3 rows of each of 3
     * images, H lines apart, in a ring keyed by (image, row). */
    run_case("rows of a unit [1, 4, 5, 8, 32] as image rows", (c3_case){.n = 1,
                                                                        .c = 4,
                                                                        .d = 5,
                                                                        .h = 8,
                                                                        .w = 32,
                                                                        .oc = 8,
                                                                        .kd = 3,
                                                                        .kh = 3,
                                                                        .kw = 3,
                                                                        .pad = {1, 1, 1, 1, 1, 1},
                                                                        .bias = true,
                                                                        .nhwc = true,
                                                                        .row_major = true,
                                                                        .rows_in = true});
    /* Few NCDHW channels are read as planes, their lines kept in the 3-D
     * ring (KD images apart): no transpose; the product gathered. */
    run_case("C 3 NCDHW planes, flat out",
             (c3_case){.n = 2,
                       .c = 3,
                       .d = 5,
                       .h = 8,
                       .w = 9,
                       .oc = 6,
                       .kd = 3,
                       .kh = 3,
                       .kw = 3,
                       .pad = {1, 1, 1, 1, 1, 1},
                       .bias = true,
                       .flat = true,
                       .must_run = "conv_im2col_reader.c + matmul_compute.c",
                       .must_not_run = "transpose_compute.c"});
}

/* Strides, asymmetric padding, dilation and a kernel that differ per dim;
 * groups; depthwise; a 1x1x1 convolution; patch rows over 1024 columns. */
static void test_geometry(void) {
    c3_case k = {.n = 1,
                 .c = 5,
                 .d = 7,
                 .h = 6,
                 .w = 9,
                 .oc = 6,
                 .kd = 2,
                 .kh = 3,
                 .kw = 1,
                 .stride = {2, 1, 2},
                 .pad = {1, 0, 2, 1, 0, 2},
                 .dil = {2, 1, 1},
                 .bias = true};
    run_case("kernel (2, 3, 1) stride (2, 1, 2) dil (2, 1, 1)", k);
    k.nhwc = true;
    run_case("the same, NDHWC", k);
    run_case("groups 2 [1, 6, 4, 5, 6] -> 4", (c3_case){.n = 1,
                                                        .c = 6,
                                                        .d = 4,
                                                        .h = 5,
                                                        .w = 6,
                                                        .oc = 4,
                                                        .kd = 3,
                                                        .kh = 3,
                                                        .kw = 3,
                                                        .groups = 2,
                                                        .pad = {1, 1, 1, 1, 1, 1},
                                                        .bias = true});
    c3_case dw = {.n = 1,
                  .c = 40,
                  .d = 4,
                  .h = 5,
                  .w = 6,
                  .oc = 40,
                  .kd = 3,
                  .kh = 3,
                  .kw = 3,
                  .groups = 40,
                  .pad = {1, 1, 0, 1, 1, 1},
                  .bias = true,
                  .relu = true,
                  .must_run = "depthwise_compute.c"};
    run_case("depthwise 40 channels", dw);
    dw.stride[0] = dw.stride[2] = 2;
    dw.nhwc = true;
    run_case("depthwise 40 channels stride (2, 1, 2) NDHWC", dw);
    run_case("1x1x1 NDHWC tile, W 32: no gather",
             (c3_case){.n = 2,
                       .c = 40,
                       .d = 3,
                       .h = 2,
                       .w = 32,
                       .oc = 24,
                       .kd = 1,
                       .kh = 1,
                       .kw = 1,
                       .nhwc = true,
                       .bias = true,
                       .relu = true,
                       .must_not_run = "conv_im2col_reader.c"});
    run_case("1x1x1 NCDHW: gathered", (c3_case){.n = 1,
                                                .c = 8,
                                                .d = 3,
                                                .h = 2,
                                                .w = 5,
                                                .oc = 5,
                                                .kd = 1,
                                                .kh = 1,
                                                .kw = 1,
                                                .bias = true,
                                                .must_run = "conv_im2col_reader.c"});
    run_case("C 48 -> 40 3x3x3 [1, 48, 6, 10, 10]: 1296-wide patches",
             (c3_case){.n = 1,
                       .c = 48,
                       .d = 6,
                       .h = 10,
                       .w = 10,
                       .oc = 40,
                       .kd = 3,
                       .kh = 3,
                       .kw = 3,
                       .pad = {1, 1, 1, 1, 1, 1},
                       .bias = true});
}

/* Weights prepared from host data (their matrices checked), for the
 * convolution, the transposed one and a depthwise one. */
static void test_prepared(void) {
    c3_case k = {.n = 2,
                 .c = 4,
                 .d = 5,
                 .h = 6,
                 .w = 7,
                 .oc = 8,
                 .kd = 3,
                 .kh = 3,
                 .kw = 3,
                 .pad = {1, 1, 1, 1, 1, 1},
                 .bias = true,
                 .relu = true,
                 .host_prep = true};
    run_case("prepared 3x3x3", k);
    k.dtype = LMNN_BFLOAT16;
    k.nhwc = true;
    run_case("prepared 3x3x3 bf16 NDHWC", k);
    run_case("prepared groups 2, kernel (3, 1, 2)", (c3_case){.n = 1,
                                                              .c = 6,
                                                              .d = 5,
                                                              .h = 4,
                                                              .w = 6,
                                                              .oc = 4,
                                                              .kd = 3,
                                                              .kh = 1,
                                                              .kw = 2,
                                                              .groups = 2,
                                                              .pad = {1, 1, 0, 0, 1, 0},
                                                              .host_prep = true});
    run_case("prepared depthwise 40 channels", (c3_case){.n = 1,
                                                         .c = 40,
                                                         .d = 4,
                                                         .h = 5,
                                                         .w = 6,
                                                         .oc = 40,
                                                         .kd = 3,
                                                         .kh = 3,
                                                         .kw = 3,
                                                         .groups = 40,
                                                         .pad = {1, 1, 1, 1, 1, 1},
                                                         .bias = true,
                                                         .host_prep = true,
                                                         .must_run = "depthwise_compute.c"});
    run_case("prepared depthwise 8 channels (block-diagonal)", (c3_case){.n = 1,
                                                                         .c = 8,
                                                                         .d = 4,
                                                                         .h = 5,
                                                                         .w = 6,
                                                                         .oc = 8,
                                                                         .kd = 3,
                                                                         .kh = 3,
                                                                         .kw = 3,
                                                                         .groups = 8,
                                                                         .pad = {1, 1, 1, 1, 1, 1},
                                                                         .host_prep = true});
    run_case("prepared transposed stride 2 kernel 3 groups 2", (c3_case){.n = 1,
                                                                         .c = 4,
                                                                         .d = 3,
                                                                         .h = 3,
                                                                         .w = 4,
                                                                         .oc = 6,
                                                                         .kd = 3,
                                                                         .kh = 3,
                                                                         .kw = 3,
                                                                         .stride = {2, 2, 2},
                                                                         .pad = {1, 1, 1, 1, 1, 1},
                                                                         .outpad = {1, 0, 1},
                                                                         .groups = 2,
                                                                         .bias = true,
                                                                         .transpose = true,
                                                                         .host_prep = true});
}

/* conv_transpose3d: a decoder's stride-2 kernel-2 upsampling, stride 2
 * kernel 3 pad 1 with output_padding, stride (1, 2, 1), groups, dilation,
 * asymmetric padding, NDHWC and bfloat16. */
static void test_transpose(void) {
    c3_case k = {.n = 1,
                 .c = 8,
                 .d = 3,
                 .h = 4,
                 .w = 5,
                 .oc = 4,
                 .kd = 2,
                 .kh = 2,
                 .kw = 2,
                 .stride = {2, 2, 2},
                 .bias = true,
                 .relu = true,
                 .transpose = true,
                 .cache = true};
    run_case("transposed stride 2 kernel 2", k);
    k.cache = false;
    k.nhwc = true;
    run_case("transposed stride 2 kernel 2 NDHWC", k);
    k.dtype = LMNN_BFLOAT16;
    run_case("transposed stride 2 kernel 2 NDHWC bf16", k);
    run_case("transposed stride 2 kernel 3 pad 1 outpad 1", (c3_case){.n = 2,
                                                                      .c = 4,
                                                                      .d = 3,
                                                                      .h = 3,
                                                                      .w = 4,
                                                                      .oc = 6,
                                                                      .kd = 3,
                                                                      .kh = 3,
                                                                      .kw = 3,
                                                                      .stride = {2, 2, 2},
                                                                      .pad = {1, 1, 1, 1, 1, 1},
                                                                      .outpad = {1, 1, 1},
                                                                      .bias = true,
                                                                      .transpose = true});
    run_case("transposed stride (1, 2, 1) asymmetric pad", (c3_case){.n = 1,
                                                                     .c = 4,
                                                                     .d = 4,
                                                                     .h = 3,
                                                                     .w = 5,
                                                                     .oc = 3,
                                                                     .kd = 3,
                                                                     .kh = 3,
                                                                     .kw = 3,
                                                                     .stride = {1, 2, 1},
                                                                     .pad = {1, 0, 0, 1, 1, 1},
                                                                     .bias = true,
                                                                     .transpose = true});
    run_case("transposed groups 2 stride (2, 1, 1)", (c3_case){.n = 1,
                                                               .c = 6,
                                                               .d = 3,
                                                               .h = 4,
                                                               .w = 4,
                                                               .oc = 4,
                                                               .kd = 3,
                                                               .kh = 3,
                                                               .kw = 3,
                                                               .stride = {2, 1, 1},
                                                               .pad = {1, 1, 1, 1, 1, 1},
                                                               .groups = 2,
                                                               .transpose = true});
    run_case("transposed dilation 2", (c3_case){.n = 1,
                                                .c = 3,
                                                .d = 3,
                                                .h = 4,
                                                .w = 4,
                                                .oc = 5,
                                                .kd = 3,
                                                .kh = 3,
                                                .kw = 3,
                                                .dil = {2, 2, 2},
                                                .bias = true,
                                                .transpose = true});
    run_case("transposed dilation (2, 1, 2) stride 2 outpad (1, 1, 0)",
             (c3_case){.n = 1,
                       .c = 3,
                       .d = 3,
                       .h = 3,
                       .w = 4,
                       .oc = 4,
                       .kd = 2,
                       .kh = 3,
                       .kw = 2,
                       .stride = {2, 2, 2},
                       .dil = {2, 1, 2},
                       .outpad = {1, 1, 0},
                       .transpose = true});
}

/* The number of weight values of case k (PyTorch's layout). */
static size_t weight_count(const c3_case *k) {
    uint32_t g = (uint32_t)k->groups;
    return (k->transpose ? (size_t)k->c * (k->oc / g) : (size_t)k->oc * (k->c / g)) * k->kd *
           k->kh * k->kw;
}

/* Case k's weight on the device from its PyTorch-layout float32 values w0:
 * prepared from them (k->host_prep; o->kernel_size then set) or uploaded as
 * they are, in the case's dtype. */
static lm_status weight_of(const c3_case *k, const float *w0, lmnn_conv3d_options *o,
                           lmnn_tensor *out) {
    uint32_t g = (uint32_t)k->groups;
    size_t nw = weight_count(k);
    lmnn_shape ws = k->transpose ? LMNN_SHAPE(k->c, k->oc / g, k->kd, k->kh, k->kw)
                                 : LMNN_SHAPE(k->oc, k->c / g, k->kd, k->kh, k->kw);
    if (!k->host_prep) return nn_upload(&ws, w0, k->dtype, LMNN_TILE, out);
    o->output.dtype = k->dtype;
    lm_status st =
        k->transpose
            ? lmnn_conv_transpose3d_prepare_weights_host(nn_dev(), &ws, w0, nw * sizeof *w0, o, out)
            : lmnn_conv3d_prepare_weights_host(nn_dev(), &ws, w0, nw * sizeof *w0, o, out);
    o->output.dtype = 0;
    o->kernel_size[0] = (int32_t)k->kd;
    o->kernel_size[1] = (int32_t)k->kh;
    o->kernel_size[2] = (int32_t)k->kw;
    return st;
}

/* Convolution a (or a transposed one), its flat output (a.flat, rm_out or
 * rows_out) passed as it is to convolution b, which reads it as a flat
 * volume (b.flat_in or rows_in; b's N, C, D, H, W and dtype, a's output's,
 * are set here). a's output is checked against ref_a (tol * S_a), b's
 * against the float64 reference of both, ref_b(ref_a(x)): a's error of at
 * most tol * S_a per element moves b's by at most tol * T, T = sum over b's
 * window of |w_b| * S_a (ref_b of S_a by |w_b|, no bias, no relu; relu moves
 * nothing further), so b's output is within tol * (S_b + T). (ref_a is
 * rounded to float32 to be ref_b's input: 2^-24 S_b, far inside it.) */
static void run_chain(const char *name, c3_case a, c3_case b) {
    normalized(&a);
    uint32_t od1[3], od2[3];
    out_dims(&a, od1);
    b.n = a.n, b.c = a.oc, b.d = od1[0], b.h = od1[1], b.w = od1[2], b.dtype = a.dtype;
    normalized(&b);
    out_dims(&b, od2);
    size_t isp = (size_t)a.d * a.h * a.w, sp1 = (size_t)od1[0] * od1[1] * od1[2],
           sp2 = (size_t)od2[0] * od2[1] * od2[2];
    size_t nx = a.n * a.c * isp, ny1 = a.n * a.oc * sp1, ny2 = b.n * b.oc * sp2;
    size_t nwa = weight_count(&a), nwb = weight_count(&b);
    float *x0 = nn_rand_floats(nx, -1, 1, 41 + nx), *wa0 = nn_rand_floats(nwa, -1, 1, 43 + nwa),
          *wb0 = nn_rand_floats(nwb, -1, 1, 47 + nwb), *ba0 = nn_rand_floats(a.oc, -1, 1, 53),
          *bb0 = nn_rand_floats(b.oc, -1, 1, 59);
    float *x = nn_rounded(x0, nx, a.dtype), *wa = nn_rounded(wa0, nwa, a.dtype),
          *wb = nn_rounded(wb0, nwb, a.dtype), *ba = nn_rounded(ba0, a.oc, a.dtype),
          *bb = nn_rounded(bb0, b.oc, a.dtype);
    double *y1 = malloc(ny1 * sizeof *y1), *s1 = malloc(ny1 * sizeof *s1),
           *y2 = malloc(ny2 * sizeof *y2), *s2 = malloc(ny2 * sizeof *s2),
           *t2 = malloc(ny2 * sizeof *t2), *t2s = malloc(ny2 * sizeof *t2s);
    reference(&a, x, wa, a.bias ? ba : NULL, od1, y1, s1);
    float *y1f = malloc(ny1 * sizeof *y1f), *s1f = malloc(ny1 * sizeof *s1f),
          *wbabs = malloc(nwb * sizeof *wbabs);
    for (size_t i = 0; i < ny1; i++) {
        y1f[i] = (float)y1[i];
        s1f[i] = (float)s1[i];
    }
    for (size_t i = 0; i < nwb; i++)
        wbabs[i] = fabsf(wb[i]);
    reference(&b, y1f, wb, b.bias ? bb : NULL, od2, y2, s2);
    c3_case carry = b;
    carry.relu = false;
    reference(&carry, s1f, wbabs, NULL, od2, t2, t2s);

    lmnn_shape xs = input_shape(&a), bas = LMNN_SHAPE(a.oc), bbs = LMNN_SHAPE(b.oc);
    float *xin = a.nhwc ? nn_channels_last(x0, a.n, a.c, isp) : x0;
    lmnn_tensor xt, wat = {0}, wbt = {0}, bat = {0}, bbt = {0}, ya = {0}, yb = {0};
    lmnn_conv3d_options oa, ob;
    options_of(&a, &oa);
    options_of(&b, &ob);
    CHECK_OK(nn_upload(&xs, xin, a.dtype, a.row_major ? LMNN_ROW_MAJOR : LMNN_TILE, &xt));
    CHECK_OK(weight_of(&a, wa0, &oa, &wat));
    CHECK_OK(weight_of(&b, wb0, &ob, &wbt));
    if (a.bias) CHECK_OK(nn_upload(&bas, ba0, a.dtype, LMNN_TILE, &bat));
    if (b.bias) CHECK_OK(nn_upload(&bbs, bb0, a.dtype, LMNN_TILE, &bbt));
    CHECK_OK(a.transpose ? lmnn_conv_transpose3d(xt, wat, bat, &oa, &ya)
                         : lmnn_conv3d(xt, wat, bat, &oa, &ya));
    CHECK_OK(b.transpose ? lmnn_conv_transpose3d(ya, wbt, bbt, &ob, &yb)
                         : lmnn_conv3d(ya, wbt, bbt, &ob, &yb));
    char first[128];
    snprintf(first, sizeof first, "%s: 1st", name);
    lmnn_layout el;
    lmnn_shape es = output_shape(&a, od1, &el);
    if (!nn_output_is(first, ya, &es, el, a.dtype, true)) return;
    es = output_shape(&b, od2, &el);
    if (!nn_output_is(name, yb, &es, el, b.dtype, true)) return;
    float *ga = nn_download(ya), *gb = nn_download(yb);
    CHECK(ga && gb);
    float *gac = nn_channels_last(ga, a.n, (uint32_t)sp1, a.oc); /* a's is flat: NDHWC */
    float *gbc = b.nhwc || b.flat ? nn_channels_last(gb, b.n, (uint32_t)sp2, b.oc) : gb;
    double r1 = compared(first, &a, od1, gac, y1, s1, NULL);
    double r2 = compared(name, &b, od2, gbc, y2, s2, t2);
    if (r1 > worst_ratio_) worst_ratio_ = r1;
    if (r2 > worst_ratio_) worst_ratio_ = r2;
    if (a.dtype == LMNN_FLOAT32 && !a.rm_out) CHECK(nn_padding_is_zero(ya));
    if (b.dtype == LMNN_FLOAT32 && !b.rm_out) CHECK(nn_padding_is_zero(yb));
    lmnn_tensor ts[] = {xt, wat, wbt, bat, bbt, ya, yb};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        if (ts[i].id) lmnn_tensor_free(ts[i]);
    if (gbc != gb) free(gbc);
    if (xin != x0) free(xin);
    free(ga), free(gb), free(gac), free(x0), free(wa0), free(wb0), free(ba0), free(bb0);
    free(x), free(wa), free(wb), free(ba), free(bb), free(y1), free(s1), free(y2), free(s2);
    free(t2), free(t2s), free(y1f), free(s1f), free(wbabs);
}

/* The flat forms: the output [1, 1, N * OD * OH * OW, OC] (tile, from
 * either order), row-major, a page per image row [N * OD * OH, OW * OC];
 * the input given flat, [1, 1, N * D * H * W, C] tile and row-major and
 * [N * D * H, W * C] row-major and tile, with its dims. Batches of 2 with
 * padding along d, so that a window crossing from one volume into the next
 * (N * D images read as one batch) would show; strides, dilation, kernels
 * that differ per dim; groups, depthwise, 1x1x1; bfloat16; prepared
 * weights; conv_transpose3d. */
static void test_flat(void) {
    c3_case k = {.n = 2,
                 .c = 4,
                 .d = 5,
                 .h = 6,
                 .w = 7,
                 .oc = 8,
                 .kd = 3,
                 .kh = 3,
                 .kw = 3,
                 .pad = {1, 1, 1, 1, 1, 1},
                 .bias = true,
                 .relu = true,
                 .flat = true,
                 .cache = true};
    run_case("NCDHW in, flat output tile", k);
    k.cache = false;
    k.nhwc = true;
    run_case("NDHWC in, flat output tile", k);
    k.rm_out = true;
    run_case("NDHWC in, flat output row-major", k);
    k.rows_out = true;
    run_case("NDHWC in, image rows out", k);
    k.nhwc = false;
    run_case("NCDHW in, image rows out", k);
    k.flat = k.rm_out = k.rows_out = false;
    k.flat_in = true;
    run_case("flat in [1, 1, M, C] tile, 5-D output", k);
    k.row_major = true;
    run_case("flat in [1, 1, M, C] row-major, 5-D output", k);
    k.flat = true;
    run_case("flat in row-major, flat output tile", k);
    k.rows_in = k.rows_out = true;
    k.cache = true;
    run_case("image rows in and out", k);
    k.cache = false;
    k.row_major = false;
    run_case("image rows in as tiles, image rows out", k);
    k.flat = k.rm_out = k.rows_out = false;
    run_case("image rows in as tiles, 5-D output", k);
    k.row_major = k.rm_out = true;
    k.dtype = LMNN_BFLOAT16;
    run_case("image rows in, flat row-major out bf16", k);
    k.rows_out = true;
    run_case("image rows in and out bf16", k);
    k.flat_in = k.rows_in = k.flat = k.rm_out = k.rows_out = k.row_major = false;
    k.nhwc = k.flat = true;
    run_case("NDHWC in, flat output tile bf16", k);
    /* Geometry: kernel (2, 3, 1), stride (2, 1, 2), dilation (2, 1, 1),
     * asymmetric padding (a front pad of 1: windows cross the volume's
     * ends), N 2. */
    k = (c3_case){.n = 2,
                  .c = 5,
                  .d = 7,
                  .h = 6,
                  .w = 9,
                  .oc = 6,
                  .kd = 2,
                  .kh = 3,
                  .kw = 1,
                  .stride = {2, 1, 2},
                  .pad = {1, 0, 2, 1, 0, 2},
                  .dil = {2, 1, 1},
                  .bias = true,
                  .rows_in = true,
                  .row_major = true,
                  .rows_out = true};
    run_case("kernel (2, 3, 1) s (2, 1, 2) dil (2, 1, 1), image rows", k);
    k.rows_in = k.row_major = k.rows_out = false;
    k.flat_in = k.flat = true;
    run_case("the same, flat tiles in and out", k);
    /* Stride 2 everywhere, 3 volumes of odd sizes. */
    run_case("3x3x3 s2 p1 N 3, image rows", (c3_case){.n = 3,
                                                      .c = 3,
                                                      .d = 5,
                                                      .h = 7,
                                                      .w = 6,
                                                      .oc = 5,
                                                      .kd = 3,
                                                      .kh = 3,
                                                      .kw = 3,
                                                      .stride = {2, 2, 2},
                                                      .pad = {1, 1, 1, 1, 1, 1},
                                                      .bias = true,
                                                      .rows_in = true,
                                                      .row_major = true,
                                                      .rows_out = true});
    run_case("groups 2, flat in row-major, flat out", (c3_case){.n = 2,
                                                                .c = 6,
                                                                .d = 4,
                                                                .h = 5,
                                                                .w = 6,
                                                                .oc = 4,
                                                                .kd = 3,
                                                                .kh = 3,
                                                                .kw = 3,
                                                                .groups = 2,
                                                                .pad = {1, 1, 1, 1, 1, 1},
                                                                .bias = true,
                                                                .flat_in = true,
                                                                .row_major = true,
                                                                .flat = true});
    c3_case dw = {.n = 2,
                  .c = 40,
                  .d = 4,
                  .h = 5,
                  .w = 6,
                  .oc = 40,
                  .kd = 3,
                  .kh = 3,
                  .kw = 3,
                  .groups = 40,
                  .pad = {1, 1, 0, 1, 1, 1},
                  .bias = true,
                  .relu = true,
                  .rows_in = true,
                  .row_major = true,
                  .rows_out = true,
                  .must_run = "depthwise_compute.c"};
    run_case("depthwise 40 channels, image rows", dw);
    dw.rows_in = dw.rows_out = dw.rm_out = false;
    dw.stride[0] = dw.stride[2] = 2;
    dw.flat_in = dw.flat = true;
    run_case("depthwise 40 s (2, 1, 2), flat in and out", dw);
    /* A 1x1x1 convolution of a flat tile volume: its rows are the pixels
     * in order, the volume is its own patch matrix (as [1, 1, N * H * W, C]
     * for lmnn_conv2d), whatever W is. */
    run_case("1x1x1 flat tiles in and out: no gather",
             (c3_case){.n = 2,
                       .c = 40,
                       .d = 3,
                       .h = 2,
                       .w = 5,
                       .oc = 24,
                       .kd = 1,
                       .kh = 1,
                       .kw = 1,
                       .bias = true,
                       .relu = true,
                       .flat_in = true,
                       .flat = true,
                       .must_not_run = "conv_im2col_reader.c"});
    run_case("1x1x1 image rows in and out", (c3_case){.n = 2,
                                                      .c = 8,
                                                      .d = 3,
                                                      .h = 2,
                                                      .w = 5,
                                                      .oc = 5,
                                                      .kd = 1,
                                                      .kh = 1,
                                                      .kw = 1,
                                                      .bias = true,
                                                      .rows_in = true,
                                                      .row_major = true,
                                                      .rows_out = true});
    /* Prepared weights (their matrices checked). */
    k = (c3_case){.n = 2,
                  .c = 4,
                  .d = 5,
                  .h = 6,
                  .w = 7,
                  .oc = 8,
                  .kd = 3,
                  .kh = 3,
                  .kw = 3,
                  .pad = {1, 1, 1, 1, 1, 1},
                  .bias = true,
                  .relu = true,
                  .host_prep = true,
                  .rows_in = true,
                  .row_major = true,
                  .rows_out = true};
    run_case("prepared, image rows in and out", k);
    k.rows_in = k.row_major = k.rows_out = k.rm_out = false;
    k.flat_in = k.flat = true;
    k.dtype = LMNN_BFLOAT16;
    run_case("prepared, flat tiles in and out bf16", k);
    /* conv_transpose3d. */
    c3_case t = {.n = 2,
                 .c = 8,
                 .d = 3,
                 .h = 4,
                 .w = 5,
                 .oc = 4,
                 .kd = 2,
                 .kh = 2,
                 .kw = 2,
                 .stride = {2, 2, 2},
                 .bias = true,
                 .relu = true,
                 .transpose = true,
                 .rows_in = true,
                 .row_major = true,
                 .rows_out = true};
    run_case("transposed s2 k2, image rows in and out", t);
    run_case("transposed s2 k3 p1 outpad, flat tiles in and out",
             (c3_case){.n = 2,
                       .c = 4,
                       .d = 3,
                       .h = 3,
                       .w = 4,
                       .oc = 6,
                       .kd = 3,
                       .kh = 3,
                       .kw = 3,
                       .stride = {2, 2, 2},
                       .pad = {1, 1, 1, 1, 1, 1},
                       .outpad = {1, 1, 1},
                       .bias = true,
                       .transpose = true,
                       .flat_in = true,
                       .flat = true});
    t.host_prep = true;
    t.groups = 2;
    t.rows_in = t.rows_out = t.rm_out = false;
    t.flat_in = t.rm_out = true;
    run_case("prepared transposed groups 2, flat row-major in and out", t);
}

/* Chains: a convolution's flat output read by the next as it is. */
static void test_flat_chain(void) {
    c3_case a = {.n = 2,
                 .c = 3,
                 .d = 5,
                 .h = 6,
                 .w = 7,
                 .oc = 8,
                 .kd = 3,
                 .kh = 3,
                 .kw = 3,
                 .pad = {1, 1, 1, 1, 1, 1},
                 .bias = true,
                 .relu = true,
                 .rows_out = true};
    c3_case b = {.oc = 6,
                 .kd = 3,
                 .kh = 3,
                 .kw = 3,
                 .pad = {1, 1, 1, 1, 1, 1},
                 .bias = true,
                 .relu = true,
                 .rows_in = true,
                 .rows_out = true};
    run_chain("conv3d image rows -> conv3d image rows", a, b);
    b.stride[0] = b.stride[1] = b.stride[2] = 2;
    b.rows_out = b.rm_out = false;
    b.flat = true;
    run_chain("conv3d image rows -> conv3d s2, flat tiles out", a, b);
    a.rows_out = false;
    a.rm_out = true;
    a.host_prep = true;
    b = (c3_case){.oc = 5,
                  .kd = 2,
                  .kh = 3,
                  .kw = 3,
                  .pad = {1, 0, 1, 1, 1, 1},
                  .bias = true,
                  .host_prep = true,
                  .flat_in = true};
    run_chain("prepared: flat row-major -> 5-D NDHWC", a, b);
    a.dtype = LMNN_BFLOAT16;
    a.host_prep = false;
    a.rows_out = true;
    b.rows_in = b.rows_out = true;
    run_chain("conv3d image rows -> conv3d image rows bf16", a, b);
    /* A decoder's step: conv3d then conv_transpose3d, stride 2. */
    a = (c3_case){.n = 2,
                  .c = 4,
                  .d = 3,
                  .h = 4,
                  .w = 5,
                  .oc = 8,
                  .kd = 3,
                  .kh = 3,
                  .kw = 3,
                  .pad = {1, 1, 1, 1, 1, 1},
                  .bias = true,
                  .relu = true,
                  .rows_out = true};
    b = (c3_case){.oc = 4,
                  .kd = 2,
                  .kh = 2,
                  .kw = 2,
                  .stride = {2, 2, 2},
                  .bias = true,
                  .transpose = true,
                  .rows_in = true,
                  .rows_out = true};
    run_chain("conv3d image rows -> conv_transpose3d s2 image rows", a, b);
    b.host_prep = true;
    b.rows_out = b.rm_out = false;
    b.flat = true;
    run_chain("conv3d -> prepared conv_transpose3d s2, flat tiles out", a, b);
}

static void test_errors(void) {
    lmnn_shape xs = LMNN_SHAPE(1, 4, 5, 5, 5), x4s = LMNN_SHAPE(1, 4, 5, 5),
               x2s = LMNN_SHAPE(1, 4, 2, 5, 5), ws = LMNN_SHAPE(6, 4, 3, 3, 3),
               w4s = LMNN_SHAPE(6, 4, 3, 3), wbs = LMNN_SHAPE(6, 3, 3, 3, 3),
               wts = LMNN_SHAPE(4, 3, 3, 3, 3), xfs = LMNN_SHAPE(1, 1, 125, 4);
    float *v = nn_rand_floats(1000, -1, 1, 5);
    lmnn_tensor x, x4, x2, xf, w, w4, wb, wt, wp = {0}, out = {0};
    CHECK_OK(nn_upload(&xs, v, LMNN_FLOAT32, LMNN_TILE, &x));
    CHECK_OK(nn_upload(&xfs, v, LMNN_FLOAT32, LMNN_ROW_MAJOR, &xf));
    CHECK_OK(nn_upload(&x4s, v, LMNN_FLOAT32, LMNN_TILE, &x4));
    CHECK_OK(nn_upload(&x2s, v, LMNN_FLOAT32, LMNN_TILE, &x2));
    CHECK_OK(nn_upload(&ws, v, LMNN_FLOAT32, LMNN_TILE, &w));
    CHECK_OK(nn_upload(&w4s, v, LMNN_FLOAT32, LMNN_TILE, &w4));
    CHECK_OK(nn_upload(&wbs, v, LMNN_FLOAT32, LMNN_TILE, &wb));
    CHECK_OK(nn_upload(&wts, v, LMNN_FLOAT32, LMNN_TILE, &wt));
    const lmnn_tensor none = {0};
    uint64_t dram0 = 0, l10 = 0, dram1 = 0, l11 = 0;
    int mem = nn_memory_now(&dram0, &l10);
    lmnn_conv3d_options o;
    lmnn_conv3d_options_init(&o);

    CHECK_FAILS(lmnn_conv3d(x, w, none, &o, NULL), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv3d: out is NULL");
    CHECK_FAILS(lmnn_conv_transpose3d(x, wt, none, &o, NULL), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv_transpose3d: out is NULL");
    CHECK_FAILS(lmnn_conv3d(x4, w, none, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv3d: input: expected rank 5 (N, C, D, H, W), given shape [1, 4, 5, 5]");
    /* Rank 3 too (the 2-D ops' check, rank 4, does not speak for it). */
    lmnn_tensor x3;
    lmnn_shape x3s = LMNN_SHAPE(4, 5, 5);
    CHECK_OK(nn_upload(&x3s, v, LMNN_FLOAT32, LMNN_TILE, &x3));
    CHECK_FAILS(lmnn_conv3d(x3, w, none, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv3d: input: expected rank 5 (N, C, D, H, W), given shape [4, 5, 5]");
    lmnn_tensor_free(x3);
    o.input_layout = LMNN_NHWC;
    CHECK_FAILS(lmnn_conv_transpose3d(x4, wt, none, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv_transpose3d: input: expected rank 5 (N, D, H, W, C)");
    o.input_layout = LMNN_NCHW;
    CHECK_FAILS(lmnn_conv3d(x, w4, none, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv3d: weight: expected rank 5 (OC, C / groups, KD, KH, KW)");
    CHECK_FAILS(lmnn_conv3d(x, wb, none, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv3d: weight: shape [6, 3, 3, 3, 3] expects 3 input channels (dim 1 * "
                "groups), given input shape [1, 4, 5, 5, 5]");
    CHECK_FAILS(lmnn_conv_transpose3d(x, wb, none, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv_transpose3d: weight: shape [6, 3, 3, 3, 3] expects 6 input channels "
                "(dim 0)");
    o.stride[1] = 0;
    CHECK_FAILS(lmnn_conv3d(x, w, none, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv3d: stride: expected (d, h, w) >= 1, given (1, 0, 1)");
    o.stride[1] = 1;
    o.dilation[0] = 0;
    CHECK_FAILS(lmnn_conv3d(x, w, none, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv3d: dilation: expected (d, h, w) >= 1, given (0, 1, 1)");
    o.dilation[0] = 1;
    o.padding[1] = -1;
    CHECK_FAILS(lmnn_conv3d(x, w, none, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv3d: padding: expected [front, back, top, bottom, left, right] >= 0, "
                "given [0, -1, 0, 0, 0, 0]");
    o.padding[1] = 0;
    o.output_padding[2] = 1;
    CHECK_FAILS(lmnn_conv3d(x, w, none, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv3d: output_padding: expected (0, 0, 0)");
    o.output_padding[2] = 0;
    /* The transposed op: output_padding below max(stride, dilation). */
    o.stride[0] = 2;
    o.output_padding[0] = 2;
    CHECK_FAILS(lmnn_conv_transpose3d(x, wt, none, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv_transpose3d: output_padding: expected below max(stride, dilation) = 2 "
                "along d, given 2");
    o.stride[0] = 1;
    o.output_padding[0] = 0;
    o.output_padding[2] = 1;
    CHECK_FAILS(lmnn_conv_transpose3d(x, wt, none, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv_transpose3d: output_padding: expected below max(stride, dilation) = 1 "
                "along w, given 1");
    o.output_padding[2] = 0;
    /* A kernel deeper than the padded volume (depth 2 < 3); padding fixes it. */
    CHECK_FAILS(lmnn_conv3d(x2, w, none, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv3d: kernel_size: the dilated kernel's depth (3) is larger than the "
                "padded input's (2)");
    o.dilation[0] = 2;
    o.padding[0] = 1;
    CHECK_FAILS(lmnn_conv3d(x2, w, none, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv3d: kernel_size: the dilated kernel's depth (5) is larger than the "
                "padded input's (3)");
    o.dilation[0] = 1;
    CHECK_OK(lmnn_conv3d(x2, w, none, &o, &out));
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(out, &info));
    CHECK(info.shape.rank == 5 && info.shape.dims[2] == 1);
    lmnn_tensor_free(out);
    o.padding[0] = 0;
    /* A prepared weight needs the kernel size, and the right row count. */
    CHECK_OK(
        lmnn_conv3d_prepare_weights_host(nn_dev(), &ws, v, 6 * 4 * 27 * sizeof(float), &o, &wp));
    if (mem) mem = nn_memory_now(&dram0, &l10);
    CHECK_FAILS(lmnn_conv3d(x, wp, none, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv3d: kernel_size: expected (KD, KH, KW) >= 1 with a prepared weight "
                "(shape [108, 6]), given (0, 0, 0)");
    o.kernel_size[0] = o.kernel_size[1] = 3;
    CHECK_FAILS(lmnn_conv3d(x, wp, none, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv3d: kernel_size: expected (KD, KH, KW) >= 1");
    o.kernel_size[0] = 2, o.kernel_size[2] = 3;
    CHECK_FAILS(lmnn_conv3d(x, wp, none, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv3d: weight: expected a prepared weight of 72 rows (KD 2 * KH 3 * KW 3 * "
                "C 4), given shape [108, 6]");
    /* Groups that divide the input's channels but not the prepared
     * weight's columns. */
    o.kernel_size[0] = 3, o.groups = 4;
    CHECK_FAILS(lmnn_conv3d(x, wp, none, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv3d: groups: the weight's 6 output channels (shape [108, 6]) are not a "
                "multiple of groups 4");
    o.kernel_size[0] = 2, o.groups = 1;
    /* kernel_size that does not match a PyTorch-layout weight. */
    CHECK_FAILS(lmnn_conv3d(x, w, none, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv3d: kernel_size: (2, 3, 3) does not match the weight's shape [6, 4, 3, "
                "3, 3]");
    o.kernel_size[0] = o.kernel_size[1] = o.kernel_size[2] = 0;
    /* The flat forms: the dims of a flat input need NDHWC, all four set,
     * and the input's rows to hold them ([1, 1, 125, 4] holds 1 x 5 x 5 x 5
     * voxels of 4 channels); the row-major output needs flat_output, image
     * rows need it row-major. */
    o.batch_size = 1, o.input_depth = o.input_height = o.input_width = 5;
    CHECK_FAILS(lmnn_conv3d(xf, w, none, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv3d: batch_size, input_depth, input_height, input_width: expected "
                "input_layout NHWC (a flat volume), given NCHW");
    CHECK_FAILS(lmnn_conv_transpose3d(xf, wt, none, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv_transpose3d: batch_size, input_depth, input_height, input_width: "
                "expected input_layout NHWC");
    o.input_layout = LMNN_NHWC;
    o.input_depth = 0;
    CHECK_FAILS(lmnn_conv3d(xf, w, none, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv3d: batch_size, input_depth, input_height, input_width: expected all "
                ">= 1");
    CHECK_ERROR_HAS("given (1, 0, 5, 5)");
    o.input_depth = 5, o.batch_size = 0;
    CHECK_FAILS(lmnn_conv_transpose3d(xf, wt, none, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv_transpose3d: batch_size, input_depth, input_height, input_width: "
                "expected all >= 1");
    CHECK_ERROR_HAS("given (0, 5, 5, 5)");
    o.batch_size = 1, o.input_width = 4;
    CHECK_FAILS(lmnn_conv3d(xf, w, none, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv3d: input: shape [1, 1, 125, 4] does not hold a flat image of 5 x 5 x "
                "4 pixels (expected [..., C] with N * H * W = 100 rows, or [..., W * C] with N * "
                "H = 25)");
    /* A 5-D input is no exception. */
    o.input_depth = 2, o.input_width = 5;
    CHECK_FAILS(lmnn_conv3d(x, w, none, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv3d: input: shape [1, 4, 5, 5, 5] does not hold a flat image");
    o.input_depth = 5; /* the dims right (used below) */
    o.output_image_rows = true;
    CHECK_FAILS(lmnn_conv3d(xf, w, none, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv3d: output_image_rows: needs output_layout row_major (pages of a tile "
                "image are tiles)");
    o.flat_output = true;
    CHECK_FAILS(lmnn_conv_transpose3d(xf, wt, none, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv_transpose3d: output_image_rows: needs output_layout row_major");
    o.flat_output = o.output_image_rows = false;
    o.output_layout = LMNN_ROW_MAJOR;
    CHECK_FAILS(lmnn_conv3d(xf, w, none, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv3d: output_layout: row_major needs flat_output (a flat NHWC image)");
    o.output_image_rows = true;
    CHECK_FAILS(lmnn_conv_transpose3d(xf, wt, none, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv_transpose3d: output_layout: row_major needs flat_output");
    o.output_image_rows = false;
    o.output_layout = LMNN_TILE;
    o.batch_size = o.input_depth = o.input_height = o.input_width = 0;
    o.input_layout = LMNN_NCHW;
    /* The host preparations. */
    const size_t wsize = 6 * 4 * 27 * sizeof(float);
    const char *ops[2] = {"lmnn_conv3d_prepare_weights_host",
                          "lmnn_conv_transpose3d_prepare_weights_host"};
    for (int t = 0; t < 2; t++) {
        lm_status (*prep)(lm_device *, const lmnn_shape *, const float *, size_t,
                          const lmnn_conv3d_options *, lmnn_tensor *) =
            t ? lmnn_conv_transpose3d_prepare_weights_host : lmnn_conv3d_prepare_weights_host;
        char m[200];
        lmnn_conv3d_options_init(&o);
        snprintf(m, sizeof m, "%s: device is NULL", ops[t]);
        CHECK_FAILS(prep(NULL, &ws, v, wsize, &o, &out), LM_ERR_INVALID_HANDLE, m);
        snprintf(m, sizeof m, "%s: data is NULL", ops[t]);
        CHECK_FAILS(prep(nn_dev(), &ws, NULL, wsize, &o, &out), LM_ERR_INVALID_ARGUMENT, m);
        snprintf(m, sizeof m, "%s: out is NULL", ops[t]);
        CHECK_FAILS(prep(nn_dev(), &ws, v, wsize, &o, NULL), LM_ERR_INVALID_ARGUMENT, m);
        snprintf(m, sizeof m, "%s: shape: expected [%s, KD, KH, KW], given [6, 4, 3, 3]", ops[t],
                 t ? "C, OC / groups" : "OC, C / groups");
        CHECK_FAILS(prep(nn_dev(), &w4s, v, 6 * 4 * 9 * sizeof(float), &o, &out),
                    LM_ERR_INVALID_ARGUMENT, m);
        snprintf(m, sizeof m,
                 "%s: size: shape [6, 4, 3, 3, 3] of float32 needs 2592 bytes, given 2588", ops[t]);
        CHECK_FAILS(prep(nn_dev(), &ws, v, wsize - 4, &o, &out), LM_ERR_INVALID_ARGUMENT, m);
        o.groups = 4;
        snprintf(m, sizeof m,
                 "%s: weight: %s channels 6 (dim 0 of shape [6, 4, 3, 3, 3]) are not a multiple "
                 "of groups 4",
                 ops[t], t ? "input" : "output");
        CHECK_FAILS(prep(nn_dev(), &ws, v, wsize, &o, &out), LM_ERR_INVALID_ARGUMENT, m);
        o.groups = 0;
        snprintf(m, sizeof m, "%s: groups: expected >= 1, given 0", ops[t]);
        CHECK_FAILS(prep(nn_dev(), &ws, v, wsize, &o, &out), LM_ERR_INVALID_ARGUMENT, m);
        /* NULL options: one group. */
        CHECK_OK(prep(nn_dev(), &ws, v, wsize, NULL, &out));
        CHECK_OK(lmnn_tensor_get_info(out, &info));
        CHECK(info.shape.rank == 2 && info.shape.dims[0] == 27 * (t ? 6 : 4) &&
              info.shape.dims[1] == (t ? 4 : 6) && info.dtype == LMNN_FLOAT32);
        lmnn_tensor_free(out);
    }
    /* Failed calls allocate nothing. */
    if (mem && nn_memory_now(&dram1, &l11)) {
        CHECK_EQ_U64(dram1, dram0);
        CHECK_EQ_U64(l11, l10);
    }
    /* The device still works. */
    lmnn_conv3d_options_init(&o);
    o.kernel_size[0] = o.kernel_size[1] = o.kernel_size[2] = 3;
    CHECK_OK(lmnn_conv3d(x, wp, none, &o, &out));
    lmnn_tensor_free(out);
    /* ... and takes the flat input with its dims right: [1, 3, 3, 3, 6]. */
    o.input_layout = LMNN_NHWC;
    o.batch_size = 1, o.input_depth = o.input_height = o.input_width = 5;
    CHECK_OK(lmnn_conv3d(xf, wp, none, &o, &out));
    CHECK_OK(lmnn_tensor_get_info(out, &info));
    CHECK(info.shape.rank == 5 && info.shape.dims[0] == 1 && info.shape.dims[1] == 3 &&
          info.shape.dims[4] == 6);
    lmnn_tensor_free(out);
    lmnn_tensor ts[] = {x, x4, x2, xf, w, w4, wb, wt, wp};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        lmnn_tensor_free(ts[i]);
    free(v);
}

/* The captured model: conv3d (weight prepared from the host inside the
 * capture, bias, relu) of a row-major NDHWC input, its result made
 * row-major to be read. */
enum { CN = 1, CD = 4, CH = 5, CW = 6, CC = 3, COC = 4 };

static lm_status capture_model(lm_device *dev, lmnn_tensor xin, const float *w, const float *b,
                               lmnn_tensor *out) {
    lmnn_conv3d_options o;
    lmnn_conv3d_options_init(&o);
    o.input_layout = LMNN_NHWC;
    for (int i = 0; i < 6; i++)
        o.padding[i] = 1;
    o.activation = LMNN_RELU;
    lmnn_shape ws = LMNN_SHAPE(COC, CC, 3, 3, 3), bs = LMNN_SHAPE(COC);
    lmnn_tensor_options to;
    lmnn_tensor_options_init(&to);
    to.dtype = LMNN_FLOAT32;
    lmnn_tensor wp = {0}, bt = {0}, y = {0};
    lm_status st =
        lmnn_conv3d_prepare_weights_host(dev, &ws, w, COC * CC * 27 * sizeof(float), &o, &wp);
    if (!st) st = lmnn_from_host(dev, &bs, b, COC * sizeof(float), &to, &bt);
    o.kernel_size[0] = o.kernel_size[1] = o.kernel_size[2] = 3;
    if (!st) st = lmnn_conv3d(xin, wp, bt, &o, &y);
    if (!st) st = lmnn_to_layout(y, LMNN_ROW_MAJOR, out);
    lmnn_tensor_free(wp);
    lmnn_tensor_free(bt);
    lmnn_tensor_free(y);
    return st;
}

/* Checks `got` (NDHWC) against the reference for input `x` (NDHWC); the
 * largest |err| / S in *ratio. */
static bool capture_matches(const float *got, const float *x, const float *w, const float *b,
                            double *ratio) {
    enum { NY = CN * CD * CH * CW * COC };
    c3_case k = {.n = CN,
                 .c = CC,
                 .d = CD,
                 .h = CH,
                 .w = CW,
                 .oc = COC,
                 .kd = 3,
                 .kh = 3,
                 .kw = 3,
                 .stride = {1, 1, 1},
                 .dil = {1, 1, 1},
                 .groups = 1,
                 .pad = {1, 1, 1, 1, 1, 1},
                 .relu = true};
    uint32_t od[3] = {CD, CH, CW};
    float *xc = nn_channels_last(x, CN, CD * CH * CW, CC); /* NDHWC -> NCDHW */
    float *gc = nn_channels_last(got, CN, CD * CH * CW, COC);
    double want[NY], scale[NY];
    reference(&k, xc, w, b, od, want, scale);
    bool ok = true;
    *ratio = 0;
    for (size_t i = 0; i < NY; i++) {
        double e = fabs(gc[i] - want[i]);
        if (!(e <= 1e-5 * scale[i] + 1e-30)) ok = false;
        if (e > 0) *ratio = fmax(*ratio, e / fmax(scale[i], 1e-30));
    }
    free(xc);
    free(gc);
    return ok;
}

/* The model under Light Metal capture replays bit for bit, and with its
 * input replaced gives the reference's result for the new input. */
static void test_capture(void) {
    enum { NX = CN * CD * CH * CW * CC, NY = CN * CD * CH * CW * COC };
    lm_device *dev;
    CHECK_OK(lm_device_open(NULL, &dev));
    float *x = nn_rand_floats(NX, -1, 1, 21), *x2 = nn_rand_floats(NX, -1, 1, 22);
    float *w = nn_rand_floats(COC * CC * 27, -1, 1, 23), *b = nn_rand_floats(COC, -1, 1, 24);
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
    CHECK_OK(capture_model(dev, xin, w, b, &y));
    CHECK_OK(lmnn_capture_name(y, "y"));
    CHECK_OK(lmnn_to_host(y, live, sizeof live));
    lm_binary *bin;
    CHECK_OK(lm_light_metal_end_capture(dev, &bin));
    lmnn_tensor_free(y);
    lmnn_tensor_free(xin);
    CHECK_OK(lm_device_close(dev));
    double r0, r1, r2;
    CHECK(capture_matches(live, x, w, b, &r0));

    lm_replay *r;
    REPLAY_RUN(bin, r);
    CHECK_OK(lm_replay_get_output(r, "y", got, sizeof got));
    CHECK(!memcmp(got, live, sizeof got));
    CHECK(capture_matches(got, x, w, b, &r1));
    CHECK_OK(lm_replay_set_input(r, "x", x2, sizeof(float) * NX));
    CHECK_OK(lm_replay_run(r, NULL, NULL, NULL));
    CHECK_OK(lm_replay_get_output(r, "y", got, sizeof got));
    CHECK(capture_matches(got, x2, w, b, &r2));
    printf("  capture err/S: live %.3g, replay %.3g, replay with a new input %.3g\n", r0, r1, r2);
    double worst = fmax(r0, fmax(r1, r2));
    if (worst > worst_ratio_) worst_ratio_ = worst;
    lm_replay_close(r);
    lm_binary_free(bin);
    free(x);
    free(x2);
    free(w);
    free(b);
}

int main(void) {
    TEST_RUN(test_basic);
    TEST_RUN(test_geometry);
    TEST_RUN(test_prepared);
    TEST_RUN(test_transpose);
    TEST_RUN(test_flat);
    TEST_RUN(test_flat_chain);
    TEST_RUN(test_errors);
    TEST_RUN(test_capture);
    printf("largest |err| / S: %.3g\n", worst_ratio_);
    nn_dev_close();
    return test_summary();
}
