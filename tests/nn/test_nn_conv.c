/* conv2d and conv_transpose2d against a float64 host reference: 1x1 kernels,
 * one-pixel images, odd sizes, strides, dilations, asymmetric padding, groups
 * (depthwise included, and its per-tap form [1, KH * KW, C]), batches,
 * NCHW / NHWC in both layouts, prepared weights, bias and a fused
 * activation, float32 and bfloat16, a large multi-core case, the program
 * cache and the errors; NCHW images of few channels read as they are (the
 * launches' programs checked).
 *
 * Bound asserted, per element, with S = sum over the window of |w * x| plus
 * |bias| (the operands as stored on the device, i.e. rounded to bfloat16 for
 * bfloat16 tensors):
 *   float32   |err| <= 1e-5 * S
 *   bfloat16  |err| <= 2^-8 * S (one output rounding, at most 2^-9 |y|, and
 *             float32 accumulation, the default for convolutions)
 * Each case prints its PCC, largest absolute and relative errors (relative to
 * max(|y|, 1e-3)) and largest |err| / S. */
#include <string.h>

#include "lm_test_replay.h"
#include "nn_test.h"

typedef struct conv_case {
    uint32_t n, c, h, w, oc, kh, kw;
    int32_t stride[2], pad[4], dil[2], groups, outpad[2];
    bool transpose, bias, relu, nhwc, row_major, prepared, flat, l1;
    bool flat_in;  /* NHWC given as [1, 1, N * H * W, C] with batch_size etc. */
    bool rm_out;   /* a row-major flat output (output_layout), flat implied */
    bool rows_in;  /* flat_in as [N * H, W * C]: a page per image row */
    bool rows_out; /* rm_out as [N * OH, OW * OC] (output_image_rows) */
    lmnn_dtype dtype;
    /* An activation: relu, clamp (min alpha, max beta) or silu. */
    lmnn_unary_op act;
    double alpha, beta;
    /* The weight prepared by lmnn_conv2d_prepare_weights_host from the host
     * data, or uploaded as the depthwise form [1, KH * KW, C] by the test
     * (with the bias as given, [OC]); both with kernel_size, as prepared. */
    bool host_prep, dw_upload;
    /* The weight's dtype, given (PyTorch's layout, uploaded) or asked of the
     * preparation (zero: the case's). */
    lmnn_dtype wdtype;
    /* A max pooling after it (pool_kernel; 0: none) and its strides. */
    int32_t pool[2], pool_stride[2];
} conv_case;

/* The reference, NCHW: out [n, oc, oh, ow] and the scale S per element. */
static void reference(const conv_case *k, const float *x, const float *w, const float *b,
                      uint32_t oh, uint32_t ow, double *y, double *s) {
    uint32_t g = (uint32_t)k->groups, cg = k->c / g, ocg = k->oc / g;
    size_t no = (size_t)k->n * k->oc * oh * ow;
    for (size_t i = 0; i < no; i++)
        y[i] = s[i] = 0;
    for (uint32_t n = 0; n < k->n; n++)
        for (uint32_t o = 0; o < k->oc; o++) {
            uint32_t gi = o / ocg;
            if (!k->transpose) {
                for (uint32_t oy = 0; oy < oh; oy++)
                    for (uint32_t ox = 0; ox < ow; ox++) {
                        double acc = 0, sc = 0;
                        for (uint32_t cl = 0; cl < cg; cl++)
                            for (uint32_t ky = 0; ky < k->kh; ky++)
                                for (uint32_t kx = 0; kx < k->kw; kx++) {
                                    int64_t iy = (int64_t)oy * k->stride[0] - k->pad[0] +
                                                 (int64_t)ky * k->dil[0];
                                    int64_t ix = (int64_t)ox * k->stride[1] - k->pad[2] +
                                                 (int64_t)kx * k->dil[1];
                                    if (iy < 0 || iy >= k->h || ix < 0 || ix >= k->w) continue;
                                    uint32_t c = gi * cg + cl;
                                    double p =
                                        (double)w[((o * cg + cl) * k->kh + ky) * k->kw + kx] *
                                        x[((n * k->c + c) * k->h + iy) * k->w + ix];
                                    acc += p;
                                    sc += fabs(p);
                                }
                        size_t i = ((size_t)(n * k->oc + o) * oh + oy) * ow + ox;
                        y[i] = acc;
                        s[i] = sc;
                    }
            }
        }
    if (k->transpose) {
        /* Scatter: input pixel (iy, ix) of channel c adds w[c, ol] at
         * (iy * s - pt + ky * d, ix * s - pl + kx * d). */
        for (uint32_t n = 0; n < k->n; n++)
            for (uint32_t c = 0; c < k->c; c++) {
                uint32_t gi = c / cg;
                for (uint32_t ol = 0; ol < ocg; ol++) {
                    uint32_t o = gi * ocg + ol;
                    for (uint32_t iy = 0; iy < k->h; iy++)
                        for (uint32_t ix = 0; ix < k->w; ix++)
                            for (uint32_t ky = 0; ky < k->kh; ky++)
                                for (uint32_t kx = 0; kx < k->kw; kx++) {
                                    int64_t oy = (int64_t)iy * k->stride[0] - k->pad[0] +
                                                 (int64_t)ky * k->dil[0];
                                    int64_t ox = (int64_t)ix * k->stride[1] - k->pad[2] +
                                                 (int64_t)kx * k->dil[1];
                                    if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
                                    double p =
                                        (double)w[((c * ocg + ol) * k->kh + ky) * k->kw + kx] *
                                        x[((n * k->c + c) * k->h + iy) * k->w + ix];
                                    size_t i = ((size_t)(n * k->oc + o) * oh + oy) * ow + ox;
                                    y[i] += p;
                                    s[i] += fabs(p);
                                }
                }
            }
    }
    for (uint32_t n = 0; n < k->n; n++)
        for (uint32_t o = 0; o < k->oc; o++)
            for (uint32_t p = 0; p < oh * ow; p++) {
                size_t i = (size_t)(n * k->oc + o) * oh * ow + p;
                if (b) {
                    y[i] += b[o];
                    s[i] += fabs(b[o]);
                }
                if ((k->relu || k->act == LMNN_RELU) && y[i] < 0) y[i] = 0;
                if (k->act == LMNN_CLAMP) y[i] = fmin(fmax(y[i], k->alpha), k->beta);
                if (k->act == LMNN_SILU) y[i] /= 1 + exp(-y[i]);
                if (k->act == LMNN_LEAKY_RELU && y[i] < 0) y[i] *= k->alpha;
                if (k->act == LMNN_GELU) y[i] *= 0.5 * (1 + erf(y[i] / sqrt(2.0)));
            }
}

static void out_dims(const conv_case *k, uint32_t *oh, uint32_t *ow) {
    int64_t eh = (int64_t)k->dil[0] * (k->kh - 1) + 1, ew = (int64_t)k->dil[1] * (k->kw - 1) + 1;
    if (!k->transpose) {
        *oh = (uint32_t)(((int64_t)k->h + k->pad[0] + k->pad[1] - eh) / k->stride[0] + 1);
        *ow = (uint32_t)(((int64_t)k->w + k->pad[2] + k->pad[3] - ew) / k->stride[1] + 1);
    } else {
        *oh = (uint32_t)(((int64_t)k->h - 1) * k->stride[0] - k->pad[0] - k->pad[1] + eh +
                         k->outpad[0]);
        *ow = (uint32_t)(((int64_t)k->w - 1) * k->stride[1] - k->pad[2] - k->pad[3] + ew +
                         k->outpad[1]);
    }
}

/* The max pooling of case k over reference y (NCHW, oh x ow), its scale
 * the largest of the window's; *oh and *ow become the pooling's. */
static void pool_reference(const conv_case *k, double **y, double **s, uint32_t *oh, uint32_t *ow) {
    uint32_t kh = (uint32_t)k->pool[0], kw = (uint32_t)k->pool[1];
    uint32_t sh = k->pool_stride[0] ? (uint32_t)k->pool_stride[0] : kh;
    uint32_t sw = k->pool_stride[1] ? (uint32_t)k->pool_stride[1] : kw;
    uint32_t ph = (*oh - kh) / sh + 1, pw = (*ow - kw) / sw + 1;
    size_t np = (size_t)k->n * k->oc * ph * pw;
    double *py = malloc(np * sizeof *py), *ps = malloc(np * sizeof *ps);
    for (uint32_t m = 0; m < k->n * k->oc; m++)
        for (uint32_t oy = 0; oy < ph; oy++)
            for (uint32_t ox = 0; ox < pw; ox++) {
                size_t o = ((size_t)m * ph + oy) * pw + ox;
                py[o] = -INFINITY;
                ps[o] = 0;
                for (uint32_t dy = 0; dy < kh; dy++)
                    for (uint32_t dx = 0; dx < kw; dx++) {
                        size_t i = ((size_t)m * *oh + oy * sh + dy) * *ow + ox * sw + dx;
                        py[o] = fmax(py[o], (*y)[i]);
                        ps[o] = fmax(ps[o], (*s)[i]);
                    }
            }
    free(*y);
    free(*s);
    *y = py;
    *s = ps;
    *oh = ph;
    *ow = pw;
}

static double worst_ratio_ = 0;

/* Tiles of the compact form of case k's block-diagonal weight [KH * KW *
 * C, OC]: per tile row (its 32 rows, channel r % C each, the rows past the
 * matrix's too), the tile columns from the first to the last output of
 * the rows' groups, counted element by element. */
static uint64_t compact_tiles(const conv_case *k) {
    uint32_t g = (uint32_t)k->groups, cg = k->c / g, ocg = k->oc / g;
    uint32_t rows = k->kh * k->kw * k->c, nt = (k->oc + 31) / 32;
    uint64_t t = 0;
    for (uint32_t kt = 0; kt < (rows + 31) / 32; kt++) {
        uint32_t lo = nt, hi = 0;
        for (uint32_t r = kt * 32; r < kt * 32 + 32; r++) {
            uint32_t grp = r % k->c / cg, first = grp * ocg / 32, last = (grp * ocg + ocg - 1) / 32;
            lo = first < lo ? first : lo;
            hi = last > hi ? last : hi;
        }
        t += hi - lo + 1;
    }
    return t;
}

/* Runs one case (twice when `cache` is set, checking the second call hits
 * the program cache) and checks it against the reference. */
static void run_case(const char *name, conv_case k, bool cache) {
    if (!k.groups) k.groups = 1;
    for (int i = 0; i < 2; i++) {
        if (!k.stride[i]) k.stride[i] = 1;
        if (!k.dil[i]) k.dil[i] = 1;
    }
    if (!k.dtype) k.dtype = LMNN_FLOAT32;
    uint32_t g = (uint32_t)k.groups;
    uint32_t oh, ow;
    out_dims(&k, &oh, &ow);
    size_t nx = (size_t)k.n * k.c * k.h * k.w;
    size_t nw = k.transpose ? (size_t)k.c * (k.oc / g) * k.kh * k.kw
                            : (size_t)k.oc * (k.c / g) * k.kh * k.kw;
    size_t ny = (size_t)k.n * k.oc * oh * ow;
    float *x0 = nn_rand_floats(nx, -1, 1, 11 + nx), *w0 = nn_rand_floats(nw, -1, 1, 7 + nw);
    float *b0 = nn_rand_floats(k.oc, -1, 1, 3);
    float *x = nn_rounded(x0, nx, k.dtype), *w = nn_rounded(w0, nw, k.dtype),
          *b = nn_rounded(b0, k.oc, k.dtype);
    double *want = malloc(ny * sizeof *want), *scale = malloc(ny * sizeof *scale);
    reference(&k, x, w, k.bias ? b : NULL, oh, ow, want, scale);

    lmnn_shape xs = k.rows_in   ? LMNN_SHAPE(k.n * k.h, k.w * k.c)
                    : k.flat_in ? LMNN_SHAPE(1, 1, k.n * k.h * k.w, k.c)
                    : k.nhwc    ? LMNN_SHAPE(k.n, k.h, k.w, k.c)
                                : LMNN_SHAPE(k.n, k.c, k.h, k.w);
    lmnn_shape ws =
        k.transpose ? LMNN_SHAPE(k.c, k.oc / g, k.kh, k.kw) : LMNN_SHAPE(k.oc, k.c / g, k.kh, k.kw);
    lmnn_shape bs = LMNN_SHAPE(k.oc);
    float *xin = k.nhwc ? nn_channels_last(x0, k.n, k.c, k.h * k.w) : x0;
    lmnn_tensor xt, wt, bt = {0}, out;
    CHECK_OK(nn_upload(&xs, xin, k.dtype, k.row_major ? LMNN_ROW_MAJOR : LMNN_TILE, &xt));
    CHECK_OK(nn_upload(&ws, w0, k.dtype, LMNN_TILE, &wt));
    if (k.bias) CHECK_OK(nn_upload(&bs, b0, k.dtype, LMNN_TILE, &bt));
    lmnn_conv2d_options o;
    lmnn_conv2d_options_init(&o);
    memcpy(o.stride, k.stride, sizeof o.stride);
    memcpy(o.padding, k.pad, sizeof o.padding);
    memcpy(o.dilation, k.dil, sizeof o.dilation);
    memcpy(o.output_padding, k.outpad, sizeof o.output_padding);
    o.groups = k.groups;
    o.input_layout = k.nhwc ? LMNN_NHWC : LMNN_NCHW;
    if (k.relu) o.activation = LMNN_RELU;
    if (k.act) o.activation = k.act;
    if (k.act == LMNN_CLAMP || k.act == LMNN_LEAKY_RELU) {
        o.activation_alpha = k.alpha;
        o.activation_beta = k.beta;
    }
    memcpy(o.pool_kernel, k.pool, sizeof o.pool_kernel);
    memcpy(o.pool_stride, k.pool_stride, sizeof o.pool_stride);
    o.flat_output = k.flat;
    if (k.rm_out) o.output_layout = LMNN_ROW_MAJOR;
    o.output_image_rows = k.rows_out;
    if (k.flat_in) {
        o.batch_size = (int32_t)k.n;
        o.input_height = (int32_t)k.h;
        o.input_width = (int32_t)k.w;
    }
    if (k.l1)
        o.output.memory =
            (lmnn_memory_config){.type = LM_BUFFER_L1, .layout = LM_BUFFER_INTERLEAVED};
    lmnn_tensor wuse = wt, wp = {0};
    uint32_t taps = k.kh * k.kw;
    bool dw_case = !k.transpose && g == k.c && k.oc == k.c;
    if (k.wdtype && !k.prepared && !k.host_prep && !k.dw_upload) {
        /* The PyTorch-layout weight in wdtype: the reference takes it as
         * stored. */
        lmnn_tensor_free(wt);
        CHECK_OK(nn_upload(&ws, w0, k.wdtype, LMNN_TILE, &wt));
        wuse = wt;
        float *sv = nn_download(wt);
        CHECK(sv);
        memcpy(w, sv, nw * sizeof *w);
        free(sv);
        reference(&k, x, w, k.bias ? b : NULL, oh, ow, want, scale);
    }
    /* The prepared weight's dtype: the case's or wdtype; a depthwise form
     * prepared from bfloat8_b is bfloat16. */
    lmnn_dtype wd = k.wdtype ? k.wdtype : k.dtype;
    if (wd == LMNN_BFLOAT8_B && dw_case && k.c > 32 && !k.dw_upload) wd = LMNN_BFLOAT16;
    if (k.dw_upload) {
        float *m = malloc(nw * sizeof *m);
        for (uint32_t c = 0; c < k.c; c++)
            for (uint32_t t = 0; t < taps; t++)
                m[t * k.c + c] = w0[c * taps + t];
        lmnn_shape ms = LMNN_SHAPE(1, taps, k.c);
        lm_status ust = nn_upload(&ms, m, wd, LMNN_TILE, &wp);
        free(m);
        CHECK_OK(ust);
    } else if (k.host_prep) {
        o.output.dtype = k.wdtype ? k.wdtype : k.dtype;
        CHECK_OK(k.transpose ? lmnn_conv_transpose2d_prepare_weights_host(nn_dev(), &ws, w0,
                                                                          nw * sizeof *w0, &o, &wp)
                             : lmnn_conv2d_prepare_weights_host(nn_dev(), &ws, w0, nw * sizeof *w0,
                                                                &o, &wp));
    } else if (k.prepared) {
        o.output.dtype = k.wdtype;
        CHECK_OK(k.transpose ? lmnn_conv_transpose2d_prepare_weights(wt, &o, &wp)
                             : lmnn_conv2d_prepare_weights(wt, &o, &wp));
    }
    o.output.dtype = 0;
    if (k.prepared || k.host_prep || k.dw_upload) {
        o.kernel_size[0] = (int32_t)k.kh;
        o.kernel_size[1] = (int32_t)k.kw;
        o.out_channels = (int32_t)k.oc;
        wuse = wp;
        if (k.groups > 1 && !dw_case && !k.transpose) {
            /* Groups: the block-diagonal matrix's compact form, when it
             * leaves tiles out. */
            lmnn_tensor_info wi;
            CHECK_OK(lmnn_tensor_get_info(wp, &wi));
            uint64_t t = compact_tiles(&k), full = (taps * k.c + 31) / 32 * ((k.oc + 31) / 32);
            if (t < full)
                CHECK(wi.shape.rank == 3 && wi.shape.dims[0] == t && wi.shape.dims[1] == 32 &&
                      wi.shape.dims[2] == 32);
            else
                CHECK(wi.shape.rank == 2 && wi.shape.dims[0] == taps * k.c &&
                      wi.shape.dims[1] == k.oc);
        }
        if (dw_case) {
            /* Depthwise: more than 32 channels (or uploaded so) give
             * [1, KH * KW, C], element (0, t, c) = weight (c, 0, t); fewer
             * the block-diagonal [KH * KW * C, C]. */
            lmnn_tensor_info wi;
            CHECK_OK(lmnn_tensor_get_info(wp, &wi));
            CHECK(wi.layout == LMNN_TILE && wi.dtype == wd);
            if (k.c > 32 || k.dw_upload) {
                lmnn_shape es = LMNN_SHAPE(1, taps, k.c);
                CHECK(wi.shape.rank == 3 && !memcmp(wi.shape.dims, es.dims, sizeof(uint32_t) * 3));
                float *pv = nn_download(wp);
                CHECK(pv);
                size_t bad_w = nw;
                for (uint32_t c = 0; c < k.c; c++)
                    for (uint32_t t = 0; t < taps; t++) {
                        float *r = &w[c * taps + t], v = pv[t * k.c + c], e = w0[c * taps + t];
                        /* bfloat8_b shares exponents: within 2^-6 of |w| < 1. */
                        bool ok = wd == LMNN_BFLOAT8_B  ? fabsf(v - e) <= 1.0f / 64
                                  : wd == LMNN_BFLOAT16 ? v == nn_bf16(e)
                                                        : v == e;
                        if (!ok && bad_w == nw) bad_w = c * taps + t;
                        *r = v; /* the reference takes the weight as stored */
                    }
                free(pv);
                CHECK_EQ_U64(bad_w, nw);
                if (wd != k.dtype) reference(&k, x, w, k.bias ? b : NULL, oh, ow, want, scale);
            } else {
                CHECK(wi.shape.rank == 2 && wi.shape.dims[0] == taps * k.c &&
                      wi.shape.dims[1] == k.c);
            }
        }
        if (k.bias && k.host_prep && !k.transpose) {
            /* From the host, for the options the weight was made with. */
            lmnn_conv2d_options bo = o;
            bo.output.dtype = k.dtype;
            bo.kernel_size[0] = bo.kernel_size[1] = 0;
            lmnn_tensor pb;
            CHECK_OK(lmnn_conv2d_prepare_bias_host(wp, &ws, b0, k.oc * sizeof *b0, &bo, &pb));
            lmnn_tensor_free(bt);
            bt = pb;
        } else if (k.bias && !k.dw_upload) { /* the bias prepared for it, as ttnn's */
            lmnn_tensor pb;
            CHECK_OK(lmnn_conv2d_prepare_bias(bt, wp, &pb));
            lmnn_tensor_free(bt);
            bt = pb;
        }
    }
    lm_status st = k.transpose ? lmnn_conv_transpose2d(xt, wuse, bt, &o, &out)
                               : lmnn_conv2d(xt, wuse, bt, &o, &out);
    CHECK_OK(st);
    if (cache) {
        lmnn_program_cache_stats before, after;
        lmnn_tensor out2;
        CHECK_OK(lmnn_program_cache_get_stats(nn_dev(), &before));
        CHECK_OK(k.transpose ? lmnn_conv_transpose2d(xt, wuse, bt, &o, &out2)
                             : lmnn_conv2d(xt, wuse, bt, &o, &out2));
        CHECK_OK(lmnn_program_cache_get_stats(nn_dev(), &after));
        CHECK_EQ_U64(after.misses, before.misses);
        CHECK(after.hits > before.hits);
        lmnn_tensor_free(out2);
    }
    if (k.pool[0]) {
        pool_reference(&k, &want, &scale, &oh, &ow);
        ny = (size_t)k.n * k.oc * oh * ow;
    }
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(out, &info));
    lmnn_shape es = k.rows_out ? LMNN_SHAPE(k.n * oh, ow * k.oc)
                    : k.flat   ? LMNN_SHAPE(1, 1, k.n * oh * ow, k.oc)
                    : k.nhwc   ? LMNN_SHAPE(k.n, oh, ow, k.oc)
                               : LMNN_SHAPE(k.n, k.oc, oh, ow);
    CHECK(info.memory.type == (k.l1 ? LM_BUFFER_L1 : LM_BUFFER_DRAM));
    CHECK(info.shape.rank == es.rank &&
          !memcmp(info.shape.dims, es.dims, sizeof(uint32_t) * es.rank));
    CHECK(info.layout == (k.rm_out ? LMNN_ROW_MAJOR : LMNN_TILE) && info.dtype == k.dtype);
    float *got = nn_download(out);
    CHECK(got);
    if (k.nhwc || k.flat) { /* back to NCHW */
        float *t = malloc(ny * sizeof *t);
        for (uint32_t i = 0; i < k.n; i++)
            for (uint32_t p = 0; p < oh * ow; p++)
                for (uint32_t j = 0; j < k.oc; j++)
                    t[((size_t)i * k.oc + j) * oh * ow + p] =
                        got[((size_t)i * oh * ow + p) * k.oc + j];
        free(got);
        got = t;
    }
    double tol = k.dtype == LMNN_FLOAT32 ? 1e-5 : 1.0 / 256, ratio = 0;
    size_t bad = ny;
    for (size_t i = 0; i < ny; i++) {
        double e = fabs(got[i] - want[i]), r = e / fmax(scale[i], 1e-30);
        if (e > 0 && r > ratio) ratio = r;
        if (e > tol * scale[i] + 1e-30 && bad == ny) bad = i;
    }
    nn_err e = nn_compare(got, want, ny, 1e-3);
    printf("  %-34s %-8s pcc %.7f max_abs %.3g max_rel %.3g err/S %.3g\n", name,
           lmnn_dtype_name(k.dtype), e.pcc, e.max_abs, e.max_rel, ratio);
    if (bad != ny) {
        char m[256];
        snprintf(m, sizeof m, "%s: element %zu: got %.9g, want %.9g (S %.3g)", name, bad, got[bad],
                 want[bad], scale[bad]);
        test_fail_(__FILE__, __LINE__, m);
    }
    if (k.dtype == LMNN_FLOAT32 && !k.rm_out) CHECK(nn_padding_is_zero(out));
    if (ratio > worst_ratio_) worst_ratio_ = ratio;
    lmnn_tensor_free(out);
    lmnn_tensor_free(xt);
    lmnn_tensor_free(wt);
    lmnn_tensor_free(bt);
    lmnn_tensor_free(wp);
    if (xin != x0) free(xin);
    free(got);
    free(x0);
    free(w0);
    free(b0);
    free(x);
    free(w);
    free(b);
    free(want);
    free(scale);
}

static void test_shapes(void) {
    /* One channel: the image's rows are its pages (one read per run). */
    run_case("one channel 13x11 3x3 pad 1",
             (conv_case){.n = 2,
                         .c = 1,
                         .h = 13,
                         .w = 11,
                         .oc = 4,
                         .kh = 3,
                         .kw = 3,
                         .pad = {1, 1, 1, 1},
                         .bias = true},
             false);
    run_case("one channel row-major dilation 2 stride 2",
             (conv_case){.n = 2,
                         .c = 1,
                         .h = 12,
                         .w = 9,
                         .oc = 3,
                         .kh = 3,
                         .kw = 2,
                         .stride = {2, 2},
                         .dil = {2, 2},
                         .pad = {1, 0, 2, 1},
                         .row_major = true},
             false);
    run_case("one channel transposed stride 2",
             (conv_case){.n = 1,
                         .c = 1,
                         .h = 5,
                         .w = 6,
                         .oc = 2,
                         .kh = 3,
                         .kw = 3,
                         .stride = {2, 2},
                         .pad = {1, 1, 1, 1},
                         .transpose = true},
             false);
    /* Padding wider than the kernel: the first windows lie wholly in the
     * top padding, the last wholly in the bottom padding, and the next
     * image's lines must still be read (a page per image row: the reader
     * stages whole lines). */
    run_case("padding wider than the kernel",
             (conv_case){.n = 2,
                         .c = 3,
                         .h = 6,
                         .w = 7,
                         .oc = 4,
                         .kh = 3,
                         .kw = 3,
                         .pad = {5, 6, 0, 1},
                         .bias = true,
                         .nhwc = true,
                         .flat_in = true,
                         .rows_in = true},
             false);
    run_case("padding wider than the kernel, stride 2",
             (conv_case){.n = 2,
                         .c = 3,
                         .h = 6,
                         .w = 7,
                         .oc = 4,
                         .kh = 2,
                         .kw = 3,
                         .stride = {2, 1},
                         .pad = {4, 7, 1, 0},
                         .nhwc = true,
                         .flat_in = true,
                         .rows_in = true},
             false);
    run_case("1x1 kernel 5x5",
             (conv_case){.n = 1, .c = 3, .h = 5, .w = 5, .oc = 4, .kh = 1, .kw = 1}, false);
    run_case("one pixel, 1x1",
             (conv_case){.n = 1, .c = 2, .h = 1, .w = 1, .oc = 3, .kh = 1, .kw = 1, .bias = true},
             false);
    run_case(
        "one pixel, 3x3 pad 1",
        (conv_case){.n = 1, .c = 2, .h = 1, .w = 1, .oc = 3, .kh = 3, .kw = 3, .pad = {1, 1, 1, 1}},
        false);
    run_case("28x28 3x3 pad 1 bias relu",
             (conv_case){.n = 1,
                         .c = 3,
                         .h = 28,
                         .w = 28,
                         .oc = 8,
                         .kh = 3,
                         .kw = 3,
                         .pad = {1, 1, 1, 1},
                         .bias = true,
                         .relu = true},
             true);
    run_case("13x17 stride 2 asym pad",
             (conv_case){.n = 1,
                         .c = 5,
                         .h = 13,
                         .w = 17,
                         .oc = 6,
                         .kh = 3,
                         .kw = 2,
                         .stride = {2, 2},
                         .pad = {0, 1, 2, 1}},
             false);
    run_case("7x7 dilation 2",
             (conv_case){.n = 1,
                         .c = 4,
                         .h = 7,
                         .w = 7,
                         .oc = 5,
                         .kh = 3,
                         .kw = 3,
                         .dil = {2, 2},
                         .pad = {2, 2, 2, 2}},
             false);
    /* Stride 1 along W: the reader stages input pixels (runs of output
     * pixels that end with the output row, cross images, start left and end
     * right of the image). */
    run_case("stride (2, 1) dilation (3, 1) batch 2",
             (conv_case){.n = 2,
                         .c = 5,
                         .h = 11,
                         .w = 37,
                         .oc = 4,
                         .kh = 3,
                         .kw = 4,
                         .stride = {2, 1},
                         .dil = {3, 1},
                         .pad = {2, 1, 3, 2},
                         .nhwc = true,
                         .row_major = true,
                         .dtype = LMNN_BFLOAT16},
             false);
    run_case("stride (1, 3) dilation (2, 1)",
             (conv_case){.n = 2,
                         .c = 3,
                         .h = 11,
                         .w = 10,
                         .oc = 4,
                         .kh = 2,
                         .kw = 3,
                         .stride = {1, 3},
                         .dil = {2, 1}},
             false);
    run_case("groups 2",
             (conv_case){.n = 1,
                         .c = 4,
                         .h = 9,
                         .w = 9,
                         .oc = 6,
                         .kh = 3,
                         .kw = 3,
                         .groups = 2,
                         .pad = {1, 1, 1, 1},
                         .bias = true},
             false);
    /* The product skips the weight's tiles outside the groups: channels a
     * multiple of 32 (one to four groups a tile, output groups that start
     * inside a tile). */
    run_case("groups 8 of 8 -> 16, 64 channels",
             (conv_case){.n = 2,
                         .c = 64,
                         .h = 9,
                         .w = 9,
                         .oc = 128,
                         .kh = 3,
                         .kw = 3,
                         .groups = 8,
                         .pad = {1, 1, 1, 1},
                         .bias = true},
             false);
    run_case("groups 2 of 32 -> 32",
             (conv_case){.n = 1, .c = 64, .h = 7, .w = 6, .oc = 64, .kh = 3, .kw = 3, .groups = 2},
             false);
    run_case("groups 16 of 4 -> 5 (groups across tiles)",
             (conv_case){.n = 1,
                         .c = 64,
                         .h = 8,
                         .w = 9,
                         .oc = 80,
                         .kh = 3,
                         .kw = 2,
                         .groups = 16,
                         .stride = {2, 1},
                         .pad = {1, 0, 1, 1},
                         .bias = true},
             false);
    run_case("groups 32 of 1 -> 3",
             (conv_case){.n = 1, .c = 32, .h = 6, .w = 6, .oc = 96, .kh = 3, .kw = 3, .groups = 32},
             false);
    /* Channels not a multiple of 32: a tile row of the weight holds the end
     * of one tap's channels and the start of the next's, so its groups'
     * output columns may be two runs (RegNet's 104 channels in groups of 8;
     * 40 in groups of 5 into groups of 10 outputs, which straddle output
     * tiles; 12 channels, three taps a tile row, into 4 output tiles). */
    run_case("groups 13 of 8 -> 8, 104 channels, stride 2",
             (conv_case){.n = 1,
                         .c = 104,
                         .h = 9,
                         .w = 8,
                         .oc = 104,
                         .kh = 3,
                         .kw = 3,
                         .groups = 13,
                         .stride = {2, 2},
                         .pad = {1, 1, 1, 1},
                         .bias = true},
             false);
    run_case("groups 8 of 5 -> 10, 40 channels",
             (conv_case){.n = 2, .c = 40, .h = 6, .w = 7, .oc = 80, .kh = 3, .kw = 3, .groups = 8},
             false);
    run_case("groups 3 of 4 -> 32, 12 channels",
             (conv_case){.n = 1,
                         .c = 12,
                         .h = 7,
                         .w = 7,
                         .oc = 96,
                         .kh = 3,
                         .kw = 3,
                         .groups = 3,
                         .pad = {1, 1, 1, 1}},
             false);
    run_case("depthwise 8",
             (conv_case){.n = 1,
                         .c = 8,
                         .h = 10,
                         .w = 12,
                         .oc = 8,
                         .kh = 3,
                         .kw = 3,
                         .groups = 8,
                         .pad = {1, 1, 1, 1}},
             false);
    run_case("depthwise x2 stride 2",
             (conv_case){.n = 1,
                         .c = 6,
                         .h = 9,
                         .w = 9,
                         .oc = 12,
                         .kh = 3,
                         .kw = 3,
                         .groups = 6,
                         .stride = {2, 2}},
             false);
    run_case("batch 3 stride 2",
             (conv_case){.n = 3,
                         .c = 3,
                         .h = 9,
                         .w = 8,
                         .oc = 7,
                         .kh = 3,
                         .kw = 3,
                         .stride = {2, 2},
                         .bias = true},
             false);
    /* Patch rows of more than 32 tiles: cut into column blocks. */
    run_case("130 channels 3x3 (K = 1170)",
             (conv_case){.n = 1,
                         .c = 130,
                         .h = 5,
                         .w = 6,
                         .oc = 3,
                         .kh = 3,
                         .kw = 3,
                         .pad = {1, 1, 1, 1},
                         .bias = true},
             false);
    run_case(
        "kernel = padded input",
        (conv_case){.n = 1, .c = 2, .h = 3, .w = 4, .oc = 2, .kh = 5, .kw = 4, .pad = {1, 1, 0, 0}},
        false);
}

static void test_layouts(void) {
    conv_case k = {.n = 2,
                   .c = 5,
                   .h = 6,
                   .w = 7,
                   .oc = 3,
                   .kh = 3,
                   .kw = 3,
                   .pad = {1, 0, 0, 1},
                   .bias = true};
    run_case("NCHW tile", k, false);
    k.row_major = true;
    run_case("NCHW row-major", k, false);
    k.nhwc = true;
    run_case("NHWC row-major", k, true);
    k.row_major = false;
    run_case("NHWC tile", k, false);
    k.prepared = true;
    run_case("NHWC tile prepared", k, true);
    k.flat = true;
    run_case("NHWC flat output", k, true);
    k.l1 = true;
    run_case("NHWC flat output in L1", k, false);
    k.flat = false;
    run_case("NHWC output in L1", k, false);
    k.nhwc = false;
    run_case("NCHW output in L1", k, false);
    k.l1 = false;
    k.dtype = LMNN_BFLOAT16;
    run_case("NCHW bf16 prepared", k, false);
    /* The flat NHWC form in and out (ttnn's), whatever the input's order. */
    k.dtype = 0;
    k.flat = true;
    run_case("NCHW in, flat output", k, false);
    k.nhwc = k.flat_in = true;
    run_case("flat in, flat output", k, true);
    k.flat = false;
    k.row_major = true;
    run_case("flat row-major in, 4-D output", k, false);
    /* Output rows a multiple of 32 wide: the result keeps its tiles. */
    run_case("NHWC 64 wide, stride 2",
             (conv_case){.n = 2,
                         .c = 3,
                         .h = 5,
                         .w = 128,
                         .oc = 4,
                         .kh = 1,
                         .kw = 3,
                         .stride = {1, 2},
                         .pad = {0, 0, 1, 0},
                         .nhwc = true,
                         .row_major = true},
             false);
}

/* Runs a case with the device profiling its launches: nn_ran_since. */
static void run_profiled(const char *name, conv_case k, const char *const *kernels, bool *out,
                         size_t count) {
    CHECK_OK(lm_device_set_profiling(nn_dev(), true));
    run_case(name, k, false);
    nn_ran_since(kernels, out, count);
}

/* Runs a case (its output flat: no transpose of its own) with the device
 * profiling its launches, and checks whether the image was transposed. */
static void run_planes_case(const char *name, conv_case k, bool transposes) {
    k.flat = true;
    bool ran[2];
    run_profiled(name, k, (const char *const[]){"transpose_compute.c", "conv_im2col_reader.c"}, ran,
                 2);
    bool transposed = ran[0], im2col = ran[1];
    if (transposed != transposes || !im2col) {
        char m[256];
        snprintf(m, sizeof m, "%s: the image was %stransposed (expected %s)", name,
                 transposed ? "" : "not ", transposes ? "a transpose" : "none");
        test_fail_(__FILE__, __LINE__, m);
    }
}

/* NCHW images of 2 to 16 channels: the patch reader stages each input line
 * from the channels' rows, interleaving them, with no transpose to NHWC
 * tiles. Stems (7x7 stride 2 pad 3; 4x4 stride 4 patches), row-major and
 * tile inputs, batches, bfloat16 and bfloat8_b, asymmetric padding, stride
 * 1 with a row-major output (several output pixels a patch row), groups;
 * transposed convolutions of stride 1 (a convolution) and 2 (zeros between
 * the pixels, staged with them); 17 channels and dilation along W take the
 * transpose as before. */
static void test_nchw_planes(void) {
    conv_case k = {.n = 1,
                   .c = 3,
                   .h = 37,
                   .w = 41,
                   .oc = 8,
                   .kh = 7,
                   .kw = 7,
                   .stride = {2, 2},
                   .pad = {3, 3, 3, 3},
                   .bias = true,
                   .row_major = true};
    run_planes_case("NCHW 3 ch 7x7 stride 2 stem", k, false);
    k.n = 2, k.row_major = false, k.relu = true;
    run_planes_case("NCHW 3 ch tile input, 2 images, relu", k, false);
    k = (conv_case){.n = 2, .c = 3, .h = 32, .w = 40, .oc = 16, .kh = 4, .kw = 4};
    k.stride[0] = k.stride[1] = 4;
    k.row_major = true;
    run_planes_case("NCHW 3 ch 4x4 stride 4 patches", k, false);
    k.dtype = LMNN_BFLOAT16;
    run_planes_case("NCHW 3 ch patches bf16", k, false);
    /* 16x16 patches of 224-pixel lines: 48 lines staged, beyond the NHWC
     * staging budget. */
    k = (conv_case){.n = 1, .c = 3, .h = 48, .w = 224, .oc = 8, .kh = 16, .kw = 16, .bias = true};
    k.stride[0] = k.stride[1] = 16;
    run_planes_case("NCHW 3 ch 16x16 stride 16 patches, wide", k, false);
    k = (conv_case){.n = 1, .c = 5, .h = 9, .w = 11, .oc = 6, .kh = 3, .kw = 2};
    k.pad[0] = 2, k.pad[3] = 1;
    k.stride[0] = 2;
    k.rm_out = true;
    run_planes_case("NCHW 5 ch stride (2, 1) asymmetric pad, row-major out", k, false);
    k.groups = 5, k.oc = 10;
    run_planes_case("NCHW 5 ch groups 5", k, false);
    k = (conv_case){.n = 1, .c = 16, .h = 12, .w = 13, .oc = 4, .kh = 3, .kw = 3, .bias = true};
    k.pad[0] = k.pad[1] = k.pad[2] = k.pad[3] = 1;
    run_planes_case("NCHW 16 ch", k, false);
    /* 9x9 of 16 channels: patch rows of 41 tiles, two column blocks. */
    k.kh = k.kw = 9, k.pad[0] = k.pad[1] = k.pad[2] = k.pad[3] = 4;
    run_planes_case("NCHW 16 ch 9x9, patch rows wider than a block", k, false);
    k.kh = k.kw = 3, k.pad[0] = k.pad[1] = k.pad[2] = k.pad[3] = 1;
    k.c = 17;
    run_planes_case("NCHW 17 ch: transposed", k, true);
    k.c = 2, k.dil[1] = 2;
    run_planes_case("NCHW 2 ch dilation 2 along W: transposed", k, true);
    k.dil[1] = 1, k.transpose = true;
    run_planes_case("NCHW 2 ch conv_transpose2d stride 1", k, false);
    k.stride[0] = k.stride[1] = 2;
    run_planes_case("NCHW 2 ch conv_transpose2d stride 2", k, false);
}

/* Runs a case with the device profiling its launches, and checks whether
 * the patches were gathered (conv_im2col_reader.c) or the image read as
 * its own patch matrix. */
static void run_pointwise_case(const char *name, conv_case k, bool direct) {
    bool im2col;
    run_profiled(name, k, (const char *const[]){"conv_im2col_reader.c"}, &im2col, 1);
    if (im2col == direct) {
        char m[256];
        snprintf(m, sizeof m, "%s: the patches were %sgathered (expected %s)", name,
                 im2col ? "" : "not ", direct ? "the image as they are" : "gathered ones");
        test_fail_(__FILE__, __LINE__, m);
    }
}

/* 1x1 convolutions of stride 1 without padding over an image in NHWC tiles
 * whose rows are its pixels in order ([N, H, W, C] with W a multiple of 32,
 * or [1, 1, M, C]): the image is the patch matrix, with bias, activation,
 * bfloat16, groups and a row-major output. Images whose tiles are not in
 * pixel order, row-major or NCHW ones, strides, padding and transposed
 * convolutions gather their patches as before. */
static void test_pointwise(void) {
    conv_case k = {.n = 2,
                   .c = 40,
                   .h = 3,
                   .w = 32,
                   .oc = 24,
                   .kh = 1,
                   .kw = 1,
                   .bias = true,
                   .relu = true,
                   .nhwc = true};
    run_pointwise_case("1x1 NHWC tiles, W 32", k, true);
    k.w = 7;
    run_pointwise_case("1x1 NHWC tiles, W 7: tiles not in pixel order", k, false);
    k.flat_in = true;
    run_pointwise_case("1x1 flat tiles", k, true);
    k.dtype = LMNN_BFLOAT16, k.relu = false, k.act = LMNN_SILU;
    run_pointwise_case("1x1 flat tiles bf16 silu", k, true);
    k.dtype = 0, k.act = LMNN_UNARY_INVALID;
    k.c = 64, k.oc = 32, k.groups = 4;
    run_pointwise_case("1x1 flat tiles, 4 groups", k, true);
    k.groups = 1, k.oc = 96, k.rm_out = k.flat = true;
    run_pointwise_case("1x1 flat tiles, row-major out", k, true);
    k.rm_out = false, k.prepared = true;
    run_pointwise_case("1x1 flat tiles, flat out, prepared", k, true);
    k.prepared = false;
    k.row_major = true;
    run_pointwise_case("1x1 flat row-major", k, false);
    k.row_major = k.flat_in = k.flat = false, k.nhwc = false, k.w = 32;
    run_pointwise_case("1x1 NCHW", k, false);
    k.nhwc = true;
    k.stride[0] = k.stride[1] = 2;
    run_pointwise_case("1x1 stride 2", k, false);
    k.stride[0] = k.stride[1] = 1;
    k.pad[2] = 1;
    run_pointwise_case("1x1 left padding", k, false);
    k.pad[2] = 0;
    k.transpose = true;
    run_pointwise_case("1x1 conv_transpose2d", k, false);
}

/* Row-major flat outputs (output_layout), where a convolution of stride 1
 * along W computes several output pixels per patch row: a first layer
 * (1 -> 8 channels, 4 pixels a row), a second (8 -> 16, 2 a row), widths
 * that allow fewer, padding, bias and relu, prepared (packed) weights, a
 * stride along H, bfloat16, and convolutions that cannot pack. */
static void test_row_major_out(void) {
    conv_case k = {.n = 3,
                   .c = 1,
                   .h = 12,
                   .w = 12,
                   .oc = 8,
                   .kh = 3,
                   .kw = 3,
                   .pad = {1, 1, 1, 1},
                   .bias = true,
                   .relu = true,
                   .flat = true,
                   .rm_out = true};
    run_case("1 -> 8, 4 pixels a row", k, true);
    k.prepared = true;
    k.nhwc = k.flat_in = true;
    run_case("1 -> 8 flat in, prepared", k, true);
    k = (conv_case){.n = 2,
                    .c = 8,
                    .h = 9,
                    .w = 10,
                    .oc = 16,
                    .kh = 3,
                    .kw = 3,
                    .pad = {0, 1, 0, 0},
                    .bias = true,
                    .flat = true,
                    .rm_out = true,
                    .nhwc = true,
                    .row_major = true};
    run_case("8 -> 16, 2 pixels a row", k, true);
    k.prepared = k.flat_in = true;
    k.stride[0] = 2;
    run_case("8 -> 16 prepared, stride 2 along H", k, true);
    k.dtype = LMNN_BFLOAT16;
    run_case("8 -> 16 bf16", k, false);
    k = (conv_case){.n = 1,
                    .c = 3,
                    .h = 7,
                    .w = 6,
                    .oc = 5,
                    .kh = 2,
                    .kw = 3,
                    .pad = {1, 0, 2, 0},
                    .dil = {2, 1},
                    .flat = true,
                    .rm_out = true};
    run_case("3 -> 5, OW 6 (2 pixels a row)", k, true);
    k.stride[1] = 2;
    run_case("stride 2 along W (no packing)", k, false);
    k.stride[1] = 1;
    k.oc = 40;
    run_case("3 -> 40 (no packing)", k, false);
    /* A page per image row, out and in (output_image_rows): rows written a
     * page at a time, packed or not, rows narrower than a tile compacted;
     * and read back by the next convolution a row at a time. */
    k = (conv_case){.n = 2,
                    .c = 1,
                    .h = 12,
                    .w = 12,
                    .oc = 8,
                    .kh = 3,
                    .kw = 3,
                    .pad = {1, 1, 1, 1},
                    .bias = true,
                    .flat = true,
                    .rm_out = true,
                    .rows_out = true};
    run_case("1 -> 8, image rows out", k, true);
    k = (conv_case){.n = 2,
                    .c = 8,
                    .h = 9,
                    .w = 10,
                    .oc = 16,
                    .kh = 3,
                    .kw = 3,
                    .pad = {0, 1, 0, 0},
                    .flat = true,
                    .rm_out = true,
                    .rows_out = true,
                    .nhwc = true,
                    .row_major = true,
                    .flat_in = true,
                    .rows_in = true};
    run_case("8 -> 16, image rows in and out", k, true);
    k.stride[0] = k.stride[1] = 2;
    run_case("8 -> 16 stride 2, image rows", k, false);
    k.stride[0] = k.stride[1] = 1;
    k.oc = 5;
    k.dtype = LMNN_BFLOAT16;
    run_case("8 -> 5 bf16, image rows (odd pages)", k, false);
    k.dtype = 0;
    k.row_major = false;
    run_case("8 -> 5, image rows in as tiles", k, false);
    /* More than a block of channels (8 tiles): a unit of the untilize holds
     * part of each pixel's channels, written into its image row (ResNet's
     * last stage, 512 channels at 7x7). */
    k = (conv_case){.n = 1,
                    .c = 8,
                    .h = 7,
                    .w = 7,
                    .oc = 300,
                    .kh = 3,
                    .kw = 3,
                    .pad = {1, 1, 1, 1},
                    .flat = true,
                    .rm_out = true,
                    .rows_out = true};
    run_case("8 -> 300, image rows wider than a block", k, false);
    /* Image rows in, whole rows of patches: the reader keeps whole input
     * lines in a ring, read once for the units that share them. Units
     * crossing images, kernel rows above and below the image, dilation and
     * stride down H, padding left and right. */
    k = (conv_case){.n = 3,
                    .c = 3,
                    .h = 17,
                    .w = 13,
                    .oc = 6,
                    .kh = 3,
                    .kw = 4,
                    .stride = {2, 1},
                    .dil = {2, 1},
                    .pad = {2, 3, 1, 2},
                    .bias = true,
                    .flat = true,
                    .rm_out = true,
                    .nhwc = true,
                    .row_major = true,
                    .flat_in = true,
                    .rows_in = true};
    run_case("3 -> 6 stride (2, 1) dilation (2, 1), image rows in", k, false);
    /* Narrow output rows (many to a unit), stride 3 along W, bfloat16. */
    k.n = 2, k.h = 30, k.w = 7, k.stride[0] = 1, k.stride[1] = 3, k.dil[0] = 1;
    k.pad[0] = k.pad[1] = 1, k.pad[2] = 0, k.pad[3] = 1, k.dtype = LMNN_BFLOAT16;
    run_case("3 -> 6 stride (1, 3) bf16, image rows in", k, false);
    /* Patch rows wider than a column block (32 tiles) staged from the
     * ring too, each block's units copying their window of the kernel rows:
     * 9x9 of 32 channels, 8 output pixels a patch row (144 tiles, blocks
     * cutting kernel rows and pixels apart, the last block part empty),
     * units crossing images, kernel rows above and below the image. */
    k = (conv_case){.n = 3,
                    .c = 32,
                    .h = 11,
                    .w = 16,
                    .oc = 3,
                    .kh = 9,
                    .kw = 9,
                    .pad = {4, 4, 4, 4},
                    .bias = true,
                    .flat = true,
                    .rm_out = true,
                    .nhwc = true,
                    .row_major = true,
                    .flat_in = true,
                    .rows_in = true};
    run_case("32 -> 3 9x9, image rows in, patch rows of 144 tiles", k, false);
    k.dtype = LMNN_BFLOAT16;
    run_case("32 -> 3 9x9 bf16, image rows in", k, false);
    /* Stride 2 down H, one pixel a patch row: blocks of 40 channels. */
    k.dtype = 0, k.c = 40, k.kh = 5, k.kw = 7, k.stride[0] = 2, k.oc = 9;
    k.pad[0] = 3, k.pad[1] = 1, k.pad[2] = 2, k.pad[3] = 5;
    run_case("40 -> 9 5x7 stride (2, 1), image rows in, 44 tiles", k, false);
    /* Lines too wide for the ring (16 channels of 1400 pixels): runs of
     * lines staged per output row instead. */
    k = (conv_case){.n = 1,
                    .c = 16,
                    .h = 4,
                    .w = 1400,
                    .oc = 4,
                    .kh = 3,
                    .kw = 3,
                    .pad = {1, 1, 1, 1},
                    .flat = true,
                    .rm_out = true,
                    .nhwc = true,
                    .row_major = true,
                    .flat_in = true,
                    .rows_in = true};
    run_case("16 -> 4 1400 wide, image rows in", k, false);

    /* The prepared forms, and what refuses them. */
    lmnn_shape xs = LMNN_SHAPE(1, 1, 2 * 28 * 28, 1), ws = LMNN_SHAPE(8, 1, 3, 3);
    float *v = nn_rand_floats(2 * 28 * 28, -1, 1, 9);
    lmnn_tensor x, w, wp, wq, out;
    CHECK_OK(nn_upload(&xs, v, LMNN_FLOAT32, LMNN_ROW_MAJOR, &x));
    CHECK_OK(nn_upload(&ws, v, LMNN_FLOAT32, LMNN_TILE, &w));
    lmnn_conv2d_options o;
    lmnn_conv2d_options_init(&o);
    o.input_layout = LMNN_NHWC;
    o.batch_size = 2;
    o.input_height = o.input_width = 28;
    o.padding[0] = o.padding[1] = o.padding[2] = o.padding[3] = 1;
    o.flat_output = true;
    o.output_layout = LMNN_ROW_MAJOR;
    lmnn_tensor_info info;
    CHECK_OK(lmnn_conv2d_prepare_weights(w, &o, &wp));
    CHECK_OK(lmnn_tensor_get_info(wp, &info));
    /* 7 pixels a row (28 = 4 x 7): 3 x (3 + 6) taps x 1 channel, 7 x 8
     * columns. */
    CHECK(info.shape.rank == 2 && info.shape.dims[0] == 27 && info.shape.dims[1] == 56);
    o.kernel_size[0] = o.kernel_size[1] = 3;
    o.output_layout = LMNN_TILE;
    CHECK_OK(lmnn_conv2d_prepare_weights(w, &o, &wq)); /* not packed */
    CHECK_OK(lmnn_tensor_get_info(wq, &info));
    CHECK(info.shape.dims[0] == 9 && info.shape.dims[1] == 8);
    /* A prepared [KH * KW * C, OC] matrix is packed the same way. */
    o.output_layout = LMNN_ROW_MAJOR;
    lmnn_tensor wr;
    CHECK_OK(lmnn_conv2d_prepare_weights(wq, &o, &wr));
    CHECK_OK(lmnn_tensor_get_info(wr, &info));
    CHECK(info.shape.dims[0] == 27 && info.shape.dims[1] == 56);
    float *a = nn_download(wp), *b = nn_download(wr);
    CHECK(a && b && !memcmp(a, b, 27 * 56 * sizeof *a));
    free(b);
    /* From host data, both forms: the same matrix, no device read. */
    lmnn_tensor wh;
    float *m = nn_download(wq);
    lmnn_shape ms = LMNN_SHAPE(9, 8);
    CHECK_OK(lmnn_conv2d_prepare_weights_host(nn_dev(), &ms, m, 9 * 8 * sizeof *m, &o, &wh));
    b = nn_download(wh);
    CHECK(b && !memcmp(a, b, 27 * 56 * sizeof *a));
    free(b);
    lmnn_tensor_free(wh);
    o.kernel_size[0] = o.kernel_size[1] = 0;
    CHECK_OK(lmnn_conv2d_prepare_weights_host(nn_dev(), &ws, v, 72 * sizeof *v, &o, &wh));
    b = nn_download(wh);
    CHECK(b && !memcmp(a, b, 27 * 56 * sizeof *a));
    free(b);
    lmnn_tensor_free(wh);
    CHECK_FAILS(lmnn_conv2d_prepare_weights_host(NULL, &ws, v, 72 * sizeof *v, &o, &wh),
                LM_ERR_INVALID_HANDLE, "lmnn_conv2d_prepare_weights_host: device is NULL");
    CHECK_FAILS(lmnn_conv2d_prepare_weights_host(nn_dev(), &ws, NULL, 72 * sizeof *v, &o, &wh),
                LM_ERR_INVALID_ARGUMENT, "lmnn_conv2d_prepare_weights_host: data is NULL");
    CHECK_FAILS(lmnn_conv2d_prepare_weights_host(nn_dev(), &ws, v, 72 * sizeof *v, &o, NULL),
                LM_ERR_INVALID_ARGUMENT, "lmnn_conv2d_prepare_weights_host: out is NULL");
    CHECK_FAILS(lmnn_conv2d_prepare_weights_host(nn_dev(), &ws, v, 71 * sizeof *v, &o, &wh),
                LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d_prepare_weights_host: size: shape [8, 1, 3, 3] of float32 needs 288 "
                "bytes, given 284");
    lmnn_shape s3 = LMNN_SHAPE(2, 4, 9);
    CHECK_FAILS(lmnn_conv2d_prepare_weights_host(nn_dev(), &s3, v, 72 * sizeof *v, &o, &wh),
                LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d_prepare_weights_host: shape: expected [OC, C / groups, KH, KW] or a "
                "prepared [KH * KW * C, OC], given [2, 4, 9]");
    CHECK_FAILS(lmnn_conv2d_prepare_weights_host(nn_dev(), &ms, m, 9 * 8 * sizeof *m, &o, &wh),
                LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d_prepare_weights_host: kernel_size: expected (KH, KW) >= 1 with a "
                "prepared weight (shape [9, 8]), given (0, 0)");
    o.kernel_size[0] = o.kernel_size[1] = 3;
    free(m);
    free(a);
    lmnn_tensor_free(wq);
    lmnn_tensor_free(wr);
    CHECK_OK(lmnn_conv2d(x, wp, (lmnn_tensor){0}, &o, &out));
    lmnn_tensor_free(out);
    o.output_layout = LMNN_TILE;
    CHECK_FAILS(lmnn_conv2d(x, wp, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: weight: shape [27, 56] is prepared for 7 output pixels per patch "
                "row, and these options take 1 (prepare it with the options of this call)");
    o.output_layout = LMNN_ROW_MAJOR;
    o.padding[2] = 0; /* OW 27: 3 pixels a row */
    CHECK_FAILS(lmnn_conv2d(x, wp, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "these options take 3");
    o.padding[2] = 1;
    /* A bias prepared for the packed weight: [1, 7 * 8]; refused with
     * options that take one pixel a row, and when it fits no weight. */
    lmnn_shape bs = LMNN_SHAPE(8), bs5 = LMNN_SHAPE(5);
    lmnn_tensor b8, b5, bp;
    CHECK_OK(nn_upload(&bs, v, LMNN_FLOAT32, LMNN_TILE, &b8));
    CHECK_OK(nn_upload(&bs5, v, LMNN_FLOAT32, LMNN_TILE, &b5));
    CHECK_OK(lmnn_conv2d_prepare_bias(b8, wp, &bp));
    CHECK_OK(lmnn_tensor_get_info(bp, &info));
    CHECK(info.shape.rank == 2 && info.shape.dims[0] == 1 && info.shape.dims[1] == 56);
    float *pv = nn_download(bp);
    CHECK(pv && pv[0] == v[0] && pv[8] == v[0] && pv[55] == v[7]);
    free(pv);
    CHECK_OK(lmnn_conv2d(x, wp, bp, &o, &out));
    lmnn_tensor_free(out);
    CHECK_OK(lmnn_conv2d(x, w, bp, &o, &out)); /* a weight these options pack alike */
    lmnn_tensor_free(out);
    o.kernel_size[0] = o.kernel_size[1] = 0;
    o.output_layout = LMNN_TILE;
    CHECK_FAILS(lmnn_conv2d(x, w, bp, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: bias: shape [1, 56] is prepared for 7 output pixels per patch row, "
                "and these options take 1 (expected [8] or [1, 8]; prepare it with the options "
                "of this call)");
    o.kernel_size[0] = o.kernel_size[1] = 3;
    o.output_layout = LMNN_ROW_MAJOR;
    CHECK_FAILS(lmnn_conv2d_prepare_bias(b8, wp, NULL), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d_prepare_bias: out is NULL");
    CHECK_FAILS(lmnn_conv2d_prepare_bias(b8, (lmnn_tensor){0}, &bp), LM_ERR_INVALID_HANDLE,
                "lmnn_conv2d_prepare_bias: prepared_weight");
    CHECK_FAILS(lmnn_conv2d_prepare_bias(b5, wp, &bp), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d_prepare_bias: bias: shape [5] does not fit prepared_weight of shape "
                "[27, 56] (expected [OC] or [1, OC]: its output channels, or for a packed matrix "
                "a divisor of its columns)");
    lmnn_tensor_free(b8);
    lmnn_tensor_free(b5);
    lmnn_tensor_free(bp);
    o.output_layout = (lmnn_layout)9;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: output_layout: unknown layout 9");
    o.output_layout = LMNN_ROW_MAJOR;
    o.flat_output = false;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: output_layout: row_major needs flat_output (a flat NHWC image)");
    o.flat_output = true;
    o.output.dtype = LMNN_BFLOAT8_B;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: output_layout: row_major needs a float32 or bfloat16 output, given "
                "bfloat8_b");
    o.output.dtype = 0;
    o.output_layout = LMNN_TILE;
    o.output_image_rows = true;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: output_image_rows: needs output_layout row_major (pages of a tile "
                "image are tiles)");
    lmnn_tensor_free(x);
    lmnn_tensor_free(w);
    lmnn_tensor_free(wp);
    free(v);
}

static void test_bf16(void) {
    run_case("bf16 28x28 3x3",
             (conv_case){.n = 1,
                         .c = 16,
                         .h = 28,
                         .w = 28,
                         .oc = 16,
                         .kh = 3,
                         .kw = 3,
                         .pad = {1, 1, 1, 1},
                         .bias = true,
                         .dtype = LMNN_BFLOAT16},
             false);
    run_case("bf16 depthwise",
             (conv_case){.n = 2,
                         .c = 4,
                         .h = 7,
                         .w = 7,
                         .oc = 4,
                         .kh = 3,
                         .kw = 3,
                         .groups = 4,
                         .dtype = LMNN_BFLOAT16},
             false);
}

/* A bfloat8_b image (read as bfloat16), bfloat16 weight and output: the
 * reference takes the image as stored. */
/* A bfloat8_b NCHW image of c channels, typecast to bfloat16 first; the
 * output flat (NHWC order, no transpose of its own), so that the profile
 * tells whether the image was transposed: only with more than 16
 * channels. */
static void bfp8_image(uint32_t C, const char *name) {
    enum { H = 6, W = 7, OC = 5 };
    uint32_t nx = C * H * W, nw = OC * C * 9;
    float *x = nn_rand_floats(nx, -1, 1, 21), *w = nn_rand_floats(nw, -1, 1, 22);
    for (uint32_t i = 0; i < nw; i++)
        w[i] = nn_bf16(w[i]);
    lmnn_shape xs = LMNN_SHAPE(1, C, H, W), ws = LMNN_SHAPE(OC, C, 3, 3);
    lmnn_tensor xt, wt, out;
    CHECK_OK(nn_upload(&xs, x, LMNN_BFLOAT8_B, LMNN_TILE, &xt));
    CHECK_OK(nn_upload(&ws, w, LMNN_BFLOAT16, LMNN_TILE, &wt));
    float *xs_ = nn_download(xt);
    CHECK(xs_);
    lmnn_conv2d_options o;
    lmnn_conv2d_options_init(&o);
    o.padding[0] = o.padding[1] = o.padding[2] = o.padding[3] = 1;
    o.output.dtype = LMNN_BFLOAT16;
    o.flat_output = true;
    CHECK_OK(lm_device_set_profiling(nn_dev(), true));
    CHECK_OK(lmnn_conv2d(xt, wt, (lmnn_tensor){0}, &o, &out));
    bool ran[2];
    nn_ran_since((const char *const[]){"transpose_compute.c", "conv_im2col_reader.c"}, ran, 2);
    CHECK(ran[1] && ran[0] == (C > 16));
    float *got = nn_download(out);
    CHECK(got);
    conv_case k = {.n = 1,
                   .c = C,
                   .h = H,
                   .w = W,
                   .oc = OC,
                   .kh = 3,
                   .kw = 3,
                   .stride = {1, 1},
                   .dil = {1, 1},
                   .groups = 1,
                   .pad = {1, 1, 1, 1}};
    double *want = malloc(OC * H * W * sizeof *want), *sc = malloc(OC * H * W * sizeof *sc);
    reference(&k, xs_, w, NULL, H, W, want, sc);
    /* The flat output is [1, 1, H * W, OC]: back to NCHW order. */
    float *nchw = malloc(OC * H * W * sizeof *nchw);
    for (int oc = 0; oc < OC; oc++)
        for (int px = 0; px < H * W; px++)
            nchw[oc * H * W + px] = got[px * OC + oc];
    double ratio = 0;
    for (int i = 0; i < OC * H * W; i++) {
        double r = fabs(nchw[i] - want[i]) / fmax(sc[i], 1e-30);
        ratio = r > ratio ? r : ratio;
    }
    nn_err e = nn_compare(nchw, want, OC * H * W, 1e-3);
    printf("  %-34s %-8s pcc %.7f max_abs %.3g max_rel %.3g err/S %.3g\n", name, "bfloat16", e.pcc,
           e.max_abs, e.max_rel, ratio);
    CHECK(ratio <= 1.0 / 256);
    lmnn_tensor_free(xt);
    lmnn_tensor_free(wt);
    lmnn_tensor_free(out);
    free(x), free(w), free(xs_), free(got), free(nchw), free(want), free(sc);
}

static void test_bfp8(void) {
    bfp8_image(32, "bfloat8_b image");
    bfp8_image(3, "bfloat8_b image, 3 channels");
}

static void test_large(void) {
    run_case("56x56x64 3x3 -> 64 bf16 NHWC",
             (conv_case){.n = 1,
                         .c = 64,
                         .h = 56,
                         .w = 56,
                         .oc = 64,
                         .kh = 3,
                         .kw = 3,
                         .pad = {1, 1, 1, 1},
                         .bias = true,
                         .relu = true,
                         .nhwc = true,
                         .row_major = true,
                         .prepared = true,
                         .dtype = LMNN_BFLOAT16},
             true);
    run_case("56x56x64 3x3 -> 64 fp32 NCHW",
             (conv_case){.n = 1,
                         .c = 64,
                         .h = 56,
                         .w = 56,
                         .oc = 64,
                         .kh = 3,
                         .kw = 3,
                         .pad = {1, 1, 1, 1},
                         .bias = true},
             false);
}

/* Runs a case profiled and checks how its product ran: gathered (the patch
 * matrix never stored: conv_im2col_reader.c feeding matmul_compute.c) or
 * stored and read back by matmul_reader.c. */
static void run_gathered_case(const char *name, conv_case k, bool gathered) {
    bool ran[2];
    run_profiled(
        name, k,
        (const char *const[]){"conv_im2col_reader.c + matmul_compute.c", "matmul_reader.c"}, ran,
        2);
    if (ran[0] != gathered || ran[1] == gathered) {
        char m[256];
        snprintf(m, sizeof m, "%s: the product ran %s (expected %s)", name,
                 ran[0]   ? "gathered"
                 : ran[1] ? "from a stored patch matrix"
                          : "neither way",
                 gathered ? "gathered" : "from a stored patch matrix");
        test_fail_(__FILE__, __LINE__, m);
    }
}

/* Convolutions whose patch matrix is gathered as the product goes (all of
 * the weight and a tile row of patches fit in L1, the output channels in
 * dst): bias, in-place and other activations, groups, bfloat16 with
 * bfloat8_b weights, a transposed convolution by phases, packed output
 * pixels, patch rows wider than 32 tiles, 256 output channels, many tile
 * rows over the cores, an L1 output; and those that do not fit (more
 * output channels than dst holds, a weight too large for L1), which store
 * it. */
static void test_gathered(void) {
    conv_case k = {.n = 2,
                   .c = 12,
                   .h = 17,
                   .w = 19,
                   .oc = 24,
                   .kh = 3,
                   .kw = 3,
                   .pad = {1, 1, 1, 1},
                   .bias = true,
                   .relu = true};
    run_gathered_case("G 3x3 bias relu", k, true);
    k.relu = false;
    k.act = LMNN_SILU;
    run_gathered_case("G 3x3 bias silu", k, true);
    k.act = LMNN_UNARY_INVALID;
    k.groups = 2;
    k.c = 16;
    k.oc = 32;
    run_gathered_case("G groups 2", k, true);
    run_gathered_case("G bf16, bfloat8_b weights",
                      (conv_case){.n = 1,
                                  .c = 20,
                                  .h = 23,
                                  .w = 21,
                                  .oc = 40,
                                  .kh = 3,
                                  .kw = 3,
                                  .pad = {1, 1, 1, 1},
                                  .bias = true,
                                  .nhwc = true,
                                  .row_major = true,
                                  .dtype = LMNN_BFLOAT16,
                                  .wdtype = LMNN_BFLOAT8_B},
                      true);
    run_gathered_case("G transposed stride 2 (phases)",
                      (conv_case){.n = 1,
                                  .c = 8,
                                  .h = 9,
                                  .w = 11,
                                  .oc = 6,
                                  .kh = 4,
                                  .kw = 4,
                                  .stride = {2, 2},
                                  .pad = {1, 1, 1, 1},
                                  .transpose = true,
                                  .bias = true},
                      true);
    run_gathered_case("G packed pixels (1 -> 8, row-major flat out, no bias)",
                      (conv_case){.n = 1,
                                  .c = 1,
                                  .h = 30,
                                  .w = 28,
                                  .oc = 8,
                                  .kh = 5,
                                  .kw = 5,
                                  .pad = {2, 2, 2, 2},
                                  .relu = true,
                                  .flat = true,
                                  .row_major = true,
                                  .rm_out = true,
                                  .host_prep = true},
                      true);
    run_gathered_case("G image rows out, 3 -> 40, bf16",
                      (conv_case){.n = 2,
                                  .c = 3,
                                  .h = 11,
                                  .w = 13,
                                  .oc = 40,
                                  .kh = 3,
                                  .kw = 3,
                                  .pad = {1, 1, 1, 1},
                                  .bias = true,
                                  .relu = true,
                                  .nhwc = true,
                                  .row_major = true,
                                  .flat = true,
                                  .rm_out = true,
                                  .rows_out = true,
                                  .host_prep = true,
                                  .dtype = LMNN_BFLOAT16},
                      true);
    run_gathered_case("G patch rows of 36 tiles",
                      (conv_case){.n = 1,
                                  .c = 128,
                                  .h = 7,
                                  .w = 9,
                                  .oc = 16,
                                  .kh = 3,
                                  .kw = 3,
                                  .pad = {1, 1, 1, 1},
                                  .bias = true,
                                  .nhwc = true},
                      true);
    run_gathered_case(
        "G 256 output channels",
        (conv_case){.n = 1, .c = 8, .h = 6, .w = 7, .oc = 256, .kh = 3, .kw = 3, .bias = true},
        true);
    run_gathered_case("G 59 tile rows, L1 output",
                      (conv_case){.n = 3,
                                  .c = 4,
                                  .h = 25,
                                  .w = 25,
                                  .oc = 20,
                                  .kh = 3,
                                  .kw = 3,
                                  .stride = {1, 1},
                                  .pad = {1, 0, 1, 0},
                                  .bias = true,
                                  .nhwc = true,
                                  .l1 = true},
                      true);
    run_gathered_case(
        "G 264 output channels: stored",
        (conv_case){.n = 1, .c = 8, .h = 6, .w = 7, .oc = 264, .kh = 3, .kw = 3, .bias = true},
        false);
    run_gathered_case("G 2304 x 64 weight: stored",
                      (conv_case){.n = 1,
                                  .c = 256,
                                  .h = 5,
                                  .w = 6,
                                  .oc = 64,
                                  .kh = 3,
                                  .kw = 3,
                                  .pad = {1, 1, 1, 1},
                                  .bias = true,
                                  .nhwc = true},
                      false);
}

/* A convolution of a fixed NHWC row-major image by a weight and bias
 * prepared first (from the host's data) into a flat output in
 * `layout` (image rows with `rows`): the output (*out, malloc'd; NULL on a
 * failure) and the programs the call ran (*out_programs, each followed by
 * "; "). */
static void conv_flat(uint32_t c, uint32_t oc, uint32_t k, lmnn_layout layout, bool rows,
                      float **out, char *out_programs, size_t size) {
    *out = NULL;
    out_programs[0] = '\0';
    lmnn_shape xs = LMNN_SHAPE(2, 11, 28, c), ws = LMNN_SHAPE(oc, c, k, k), bs = LMNN_SHAPE(oc);
    float *xv = nn_rand_floats(lmnn_shape_volume(&xs), -1, 1, 81);
    float *wv = nn_rand_floats(lmnn_shape_volume(&ws), -0.5f, 0.5f, 82);
    float *bv = nn_rand_floats(oc, -1, 1, 83);
    lmnn_tensor x, w, b, bp, y;
    lmnn_conv2d_options o;
    lmnn_conv2d_options_init(&o);
    o.input_layout = LMNN_NHWC;
    o.padding[0] = o.padding[1] = o.padding[2] = o.padding[3] = (int32_t)k / 2;
    o.activation = LMNN_RELU;
    o.flat_output = true;
    o.output_layout = layout;
    o.output_image_rows = rows;
    CHECK_OK(nn_upload(&xs, xv, LMNN_FLOAT32, LMNN_ROW_MAJOR, &x));
    CHECK_OK(
        lmnn_conv2d_prepare_weights_host(nn_dev(), &ws, wv, lmnn_shape_volume(&ws) * 4, &o, &w));
    CHECK_OK(nn_upload(&bs, bv, LMNN_FLOAT32, LMNN_ROW_MAJOR, &b));
    CHECK_OK(lmnn_conv2d_prepare_bias(b, w, &bp));
    lmnn_tensor_free(b);
    b = bp;
    free(xv), free(wv), free(bv);
    o.kernel_size[0] = o.kernel_size[1] = (int32_t)k;
    CHECK_OK(lm_finish(lm_device_command_queue(nn_dev(), 0)));
    CHECK_OK(lm_device_set_profiling(nn_dev(), true));
    CHECK_OK(lmnn_conv2d(x, w, b, &o, &y));
    CHECK_OK(lm_finish(lm_device_command_queue(nn_dev(), 0)));
    lm_profile_program_entry *e;
    size_t n;
    CHECK_OK(lm_device_get_program_profile(nn_dev(), &e, &n));
    CHECK_OK(lm_device_set_profiling(nn_dev(), false));
    for (size_t i = 0, at = 0; i < n && at < size; i++)
        at += (size_t)snprintf(out_programs + at, size - at, "%s; ", e[i].program);
    lm_profile_program_free(e);
    *out = nn_download(y);
    CHECK(*out != NULL);
    lmnn_tensor_free(x), lmnn_tensor_free(w), lmnn_tensor_free(b), lmnn_tensor_free(y);
}

/* A gathered product with a row-major flat output untilizes it itself, in
 * the one program, with a page per image row or per pixel, output pixels
 * packed or not: the same values as the tile output. */
static void test_gathered_row_major(void) {
    static const struct {
        uint32_t c, oc, k;
        bool rows;
    } cases[] = {
        {3, 40, 3, true}, {3, 40, 3, false}, {1, 8, 5, false}, {1, 8, 5, true}, {16, 24, 3, true}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        float *tile = NULL, *rm = NULL;
        char tile_ran[512], rm_ran[512];
        conv_flat(cases[i].c, cases[i].oc, cases[i].k, LMNN_TILE, false, &tile, tile_ran,
                  sizeof tile_ran);
        conv_flat(cases[i].c, cases[i].oc, cases[i].k, LMNN_ROW_MAJOR, cases[i].rows, &rm, rm_ran,
                  sizeof rm_ran);
        printf("  rm case %zu: %s\n", i, rm_ran);
        CHECK(!strcmp(rm_ran, "conv_im2col_reader.c + matmul_compute.c + matmul_writer.c; "));
        size_t nv = (size_t)2 * 11 * 28 * cases[i].oc;
        if (tile && rm) CHECK(!memcmp(tile, rm, nv * sizeof *rm));
        free(tile), free(rm);
    }
}

/* One 3x3 convolution (64 -> 256 channels: its gathered product keeps a
 * weight of 576 KiB in L1) with bias and relu of a fixed NHWC image: whether
 * its product ran gathered (*out_gathered), and its output (*out, malloc'd;
 * NULL on a failure). */
static void conv_once(bool *out_gathered, float **out) {
    *out = NULL;
    lmnn_shape xs = LMNN_SHAPE(1, 9, 10, 64), ws = LMNN_SHAPE(256, 64, 3, 3), bs = LMNN_SHAPE(256);
    float *xv = nn_rand_floats(lmnn_shape_volume(&xs), -1, 1, 71);
    float *wv = nn_rand_floats(lmnn_shape_volume(&ws), -0.5f, 0.5f, 72);
    float *bv = nn_rand_floats(256, -1, 1, 73);
    lmnn_tensor x, w, b, y;
    CHECK_OK(nn_upload(&xs, xv, LMNN_FLOAT32, LMNN_ROW_MAJOR, &x));
    CHECK_OK(nn_upload(&ws, wv, LMNN_FLOAT32, LMNN_ROW_MAJOR, &w));
    CHECK_OK(nn_upload(&bs, bv, LMNN_FLOAT32, LMNN_ROW_MAJOR, &b));
    lmnn_conv2d_options o;
    lmnn_conv2d_options_init(&o);
    o.input_layout = LMNN_NHWC;
    o.padding[0] = o.padding[1] = o.padding[2] = o.padding[3] = 1;
    o.activation = LMNN_RELU;
    CHECK_OK(lm_device_set_profiling(nn_dev(), true));
    CHECK_OK(lmnn_conv2d(x, w, b, &o, &y));
    bool ran[1];
    nn_ran_since((const char *const[]){"conv_im2col_reader.c + matmul_compute.c"}, ran, 1);
    *out_gathered = ran[0];
    *out = nn_download(y);
    CHECK(*out != NULL);
    lmnn_tensor_free(x), lmnn_tensor_free(w), lmnn_tensor_free(b), lmnn_tensor_free(y);
    free(xv), free(wv), free(bv);
}

/* A buffer taking all but 700 KiB of each core's free L1, in 4 KiB pages:
 * too little left for a gathered product's circular buffers. */
static lm_status fill_l1(lm_buffer *out) {
    lm_memory_stats st;
    lm_status s = lm_device_get_memory_stats(nn_dev(), LM_BUFFER_L1, &st);
    if (s) return s;
    lm_buffer_config cfg;
    lm_buffer_config_init(&cfg);
    cfg.type = LM_BUFFER_L1;
    cfg.page_size = 4096;
    cfg.size = (st.largest_free_block_bytes - (700u << 10)) / 4096 * 4096 * st.banks;
    return lm_create_buffer(nn_dev(), &cfg, out);
}

/* A product that would be gathered with L1 free is stored when L1 holds a
 * tensor that leaves its circular buffers no room, but the stored form's
 * (smaller) enough (and the program gathering it is cached: the choice is
 * made before the cache), and both give the same bits: the patch rows are
 * tilized alike, the products sum in the same order. */
static void test_gathered_l1_full(void) {
    bool gathered = false, gathered_full = true;
    float *free_l1, *full;
    conv_once(&gathered, &free_l1);
    CHECK(gathered);
    lm_buffer big;
    CHECK_OK(fill_l1(&big));
    conv_once(&gathered_full, &full);
    CHECK_OK(lm_deallocate_buffer(big));
    CHECK(!gathered_full);
    if (free_l1 && full) CHECK(!memcmp(free_l1, full, 9 * 10 * 256 * sizeof(float)));
    free(free_l1);
    free(full);
}

/* One convolution on a device simulated by `threads` host threads: the
 * output (NHWC, float32 on the host), or NULL. */
static float *conv_on(uint32_t threads, const lmnn_shape *xs, const float *x, const lmnn_shape *ws,
                      const float *w, lmnn_dtype dtype, const lmnn_conv2d_options *o, size_t *n) {
    lm_device_options dopts;
    lm_device_options_init(&dopts);
    dopts.num_threads = threads;
    lm_device *dev;
    if (lm_device_open(&dopts, &dev)) return NULL;
    lmnn_tensor_options to;
    lmnn_tensor_options_init(&to);
    to.dtype = dtype;
    lmnn_tensor xt = {0}, wt = {0}, out = {0};
    float *got = NULL;
    bool ok = !lmnn_from_host(dev, xs, x, lmnn_shape_volume(xs) * sizeof(float), &to, &xt);
    to.layout = LMNN_TILE;
    ok = ok && !lmnn_from_host(dev, ws, w, lmnn_shape_volume(ws) * sizeof(float), &to, &wt);
    ok = ok && !lmnn_conv2d(xt, wt, (lmnn_tensor){0}, o, &out);
    lmnn_tensor_info info;
    ok = ok && !lmnn_tensor_get_info(out, &info);
    if (ok) {
        *n = (size_t)lmnn_shape_volume(&info.shape);
        got = malloc(*n * sizeof *got);
        if (got && lmnn_to_host(out, got, *n * sizeof *got)) {
            free(got);
            got = NULL;
        }
    }
    lm_device_close(dev);
    return got;
}

/* The im2col program takes at most two cores per host thread and the
 * matmul's folded block height depends on the threads too: the results are
 * the same bits whatever the thread count (odd sizes, stride, dilation,
 * groups, padding; bfloat16 and float32). */
static void test_threads(void) {
    struct {
        uint32_t h, w, c, oc, k;
        int32_t stride, dil, groups, pad;
        lmnn_dtype dtype;
    } cases[] = {
        {37, 45, 16, 24, 3, 1, 1, 1, 1, LMNN_BFLOAT16},
        {29, 33, 12, 10, 3, 2, 2, 2, 2, LMNN_FLOAT32},
        {17, 19, 64, 96, 3, 1, 1, 8, 1, LMNN_FLOAT32},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        lmnn_shape xs = LMNN_SHAPE(1, cases[i].h, cases[i].w, cases[i].c);
        lmnn_shape ws =
            LMNN_SHAPE(cases[i].oc, cases[i].c / (uint32_t)cases[i].groups, cases[i].k, cases[i].k);
        float *x = nn_rand_floats(lmnn_shape_volume(&xs), -1, 1, 5 + i);
        float *w = nn_rand_floats(lmnn_shape_volume(&ws), -1, 1, 9 + i);
        lmnn_conv2d_options o;
        lmnn_conv2d_options_init(&o);
        o.input_layout = LMNN_NHWC;
        o.stride[0] = o.stride[1] = cases[i].stride;
        o.dilation[0] = o.dilation[1] = cases[i].dil;
        o.groups = cases[i].groups;
        for (int j = 0; j < 4; j++)
            o.padding[j] = cases[i].pad;
        size_t n1 = 0, n32 = 0;
        float *a = conv_on(1, &xs, x, &ws, w, cases[i].dtype, &o, &n1);
        float *b = conv_on(32, &xs, x, &ws, w, cases[i].dtype, &o, &n32);
        CHECK(a && b && n1 == n32 && n1 > 0);
        if (a && b && n1 == n32) CHECK(memcmp(a, b, n1 * sizeof *a) == 0);
        free(a), free(b), free(x), free(w);
    }
}

static void test_transpose(void) {
    run_case("T stride 2 pad 1 outpad 1",
             (conv_case){.transpose = true,
                         .n = 1,
                         .c = 4,
                         .h = 5,
                         .w = 6,
                         .oc = 6,
                         .kh = 3,
                         .kw = 3,
                         .stride = {2, 2},
                         .pad = {1, 1, 1, 1},
                         .outpad = {1, 1},
                         .bias = true},
             true);
    run_case(
        "T 1x1 input 4x4 kernel",
        (conv_case){.transpose = true, .n = 1, .c = 3, .h = 1, .w = 1, .oc = 2, .kh = 4, .kw = 4},
        false);
    run_case("T groups 2 dilation 2",
             (conv_case){.transpose = true,
                         .n = 2,
                         .c = 4,
                         .h = 5,
                         .w = 4,
                         .oc = 6,
                         .kh = 3,
                         .kw = 2,
                         .groups = 2,
                         .dil = {2, 2},
                         .stride = {1, 2},
                         .pad = {1, 1, 0, 0}},
             false);
    run_case("T groups 4, 64 channels",
             (conv_case){.transpose = true,
                         .n = 1,
                         .c = 64,
                         .h = 5,
                         .w = 4,
                         .oc = 32,
                         .kh = 3,
                         .kw = 3,
                         .groups = 4,
                         .stride = {2, 2},
                         .pad = {1, 1, 1, 1}},
             false);
    run_case("T stride 3 big pad (crop)",
             (conv_case){.transpose = true,
                         .n = 1,
                         .c = 2,
                         .h = 4,
                         .w = 4,
                         .oc = 3,
                         .kh = 2,
                         .kw = 2,
                         .stride = {3, 3},
                         .pad = {2, 2, 2, 2},
                         .outpad = {2, 1}},
             false);
    /* Image rows in: the reader stages each input line with the stride's
     * zeros between its pixels, and reads the rows between lines as
     * padding. A decoder's 4x4 stride 2 up-sampling; patch rows wider than a
     * block (96 channels); strides (3, 2) with output padding; images
     * shared by units; bfloat16. */
    conv_case k = {.transpose = true,
                   .n = 2,
                   .c = 64,
                   .h = 6,
                   .w = 5,
                   .oc = 24,
                   .kh = 4,
                   .kw = 4,
                   .stride = {2, 2},
                   .pad = {1, 1, 1, 1},
                   .bias = true,
                   .flat = true,
                   .rm_out = true,
                   .nhwc = true,
                   .row_major = true,
                   .flat_in = true,
                   .rows_in = true};
    run_case("T 4x4 stride 2, image rows in", k, false);
    k.c = 96, k.n = 3, k.h = 4;
    run_case("T 4x4 stride 2, 96 channels (K = 1536), image rows in", k, false);
    k.c = 5, k.kh = 3, k.kw = 5, k.stride[0] = 3, k.stride[1] = 2, k.outpad[0] = 2, k.outpad[1] = 1,
    k.pad[0] = 0, k.pad[3] = 2;
    run_case("T 3x5 stride (3, 2) outpad (2, 1), image rows in", k, false);
    k.dtype = LMNN_BFLOAT16;
    run_case("T 3x5 stride (3, 2) bf16, image rows in", k, false);
    run_case("T prepared NHWC bf16",
             (conv_case){.transpose = true,
                         .n = 1,
                         .c = 8,
                         .h = 7,
                         .w = 7,
                         .oc = 4,
                         .kh = 3,
                         .kw = 3,
                         .stride = {2, 2},
                         .pad = {1, 1, 1, 1},
                         .prepared = true,
                         .nhwc = true,
                         .dtype = LMNN_BFLOAT16},
             false);
}

/* Runs a transposed case with the device profiling its launches, and checks
 * whether it ran by phases (its output interleaved by
 * phase_tile_reader.c). */
static void run_phase_case(const char *name, conv_case k, bool phased) {
    bool ran;
    run_profiled(name, k, (const char *const[]){"phase_tile_reader.c"}, &ran, 1);
    if (ran != phased) {
        char m[256];
        snprintf(m, sizeof m, "%s: ran %sby phases (expected %s)", name, ran ? "" : "not ",
                 phased ? "phases" : "no phases");
        test_fail_(__FILE__, __LINE__, m);
    }
}

/* Transposed convolutions of a stride above 1 (dilation 1, one group, a
 * kernel larger than the stride along a dim) run by phases: one convolution
 * of the input as it is with a phase's taps per output channel block, its
 * product interleaved into the output. Every output form, prepared weights
 * and biases (on the device and from the host), activation, bfloat16, odd
 * channel counts and more than a block of them, strides along one dim
 * only, a kernel no longer than the stride along one dim, paddings that
 * crop whole phase rows (a negative padding of the phase convolution), and
 * a 2x2 kernel of stride 2 (a 1x1 phase convolution, an NHWC tile image
 * its own patch matrix); the forms that cannot run by phases do not. */
static void test_transpose_phases(void) {
    conv_case k = {.transpose = true,
                   .n = 2,
                   .c = 5,
                   .h = 6,
                   .w = 7,
                   .oc = 6,
                   .kh = 4,
                   .kw = 4,
                   .stride = {2, 2},
                   .pad = {1, 1, 1, 1},
                   .bias = true};
    run_phase_case("P 4x4 stride 2 pad 1, NCHW", k, true);
    k.nhwc = true;
    run_phase_case("P NHWC", k, true);
    k.flat = true;
    run_phase_case("P flat NHWC", k, true);
    k.rm_out = true;
    run_phase_case("P flat row-major", k, true);
    k.rows_out = true;
    run_phase_case("P image rows", k, true);
    k.rm_out = k.rows_out = false, k.l1 = true;
    run_phase_case("P flat in L1", k, true);
    k.l1 = k.flat = k.nhwc = false, k.prepared = true;
    run_phase_case("P prepared, prepared bias", k, true);
    k.prepared = false, k.host_prep = true;
    run_phase_case("P prepared from the host", k, true);
    k.host_prep = false, k.relu = true, k.dtype = LMNN_BFLOAT16;
    run_phase_case("P bf16 relu", k, true);
    k = (conv_case){.transpose = true,
                    .n = 1,
                    .c = 40,
                    .h = 5,
                    .w = 4,
                    .oc = 300,
                    .kh = 5,
                    .kw = 3,
                    .stride = {3, 2},
                    .pad = {0, 1, 2, 3},
                    .outpad = {2, 1},
                    .bias = true,
                    .nhwc = true};
    run_phase_case("P 5x3 stride (3, 2) outpad (2, 1), 300 channels", k, true);
    k.oc = 7, k.stride[1] = 1, k.outpad[1] = 0;
    run_phase_case("P stride (3, 1)", k, true);
    k.stride[0] = 1, k.stride[1] = 2, k.outpad[0] = 0, k.outpad[1] = 1;
    run_phase_case("P stride (1, 2)", k, true);
    k.kh = 1, k.stride[0] = 2, k.pad[0] = k.pad[1] = 0;
    run_phase_case("P 1x3 stride 2 (one phase row empty)", k, true);
    k = (conv_case){.transpose = true,
                    .n = 2,
                    .c = 3,
                    .h = 6,
                    .w = 5,
                    .oc = 4,
                    .kh = 3,
                    .kw = 3,
                    .stride = {2, 2},
                    .pad = {4, 4, 3, 3},
                    .outpad = {1, 1}};
    run_phase_case("P pad 4 > kernel (phase rows cropped)", k, true);
    k = (conv_case){.transpose = true,
                    .n = 2,
                    .c = 64,
                    .h = 4,
                    .w = 6,
                    .oc = 32,
                    .kh = 2,
                    .kw = 2,
                    .stride = {2, 2},
                    .bias = true,
                    .nhwc = true,
                    .flat = true,
                    .flat_in = true};
    bool ran[2];
    run_profiled("P 2x2 stride 2, NHWC tiles (1x1 phases)", k,
                 (const char *const[]){"phase_tile_reader.c", "conv_im2col_reader.c"}, ran, 2);
    CHECK(ran[0] && !ran[1]); /* the image is its own patch matrix */
    /* Not by phases. */
    k.kh = k.kw = 1;
    run_phase_case("1x1 stride 2: no phases", k, false);
    k.kh = k.kw = 3, k.dil[0] = k.dil[1] = 2;
    run_phase_case("dilation 2: no phases", k, false);
    k.dil[0] = k.dil[1] = 1, k.groups = 2;
    run_phase_case("groups 2: no phases", k, false);
    k.groups = 1, k.stride[0] = k.stride[1] = 1, k.pad[0] = k.pad[1] = k.pad[2] = k.pad[3] = 1;
    run_phase_case("stride 1: no phases", k, false);
    k.stride[0] = 2, k.stride[1] = 65, k.w = 2;
    run_phase_case("stride (2, 65): no phases (beyond 64)", k, false);
}

/* A bfloat8_b output by phases (tilized straight into bfloat8_b), against
 * the float32 one. */
static void test_transpose_phases_bfp8(void) {
    lmnn_shape xs = LMNN_SHAPE(2, 8, 5, 6), ws = LMNN_SHAPE(8, 40, 4, 4);
    float *v = nn_rand_floats(8 * 40 * 16, -1, 1, 31);
    lmnn_tensor x, w, a, b;
    CHECK_OK(nn_upload(&xs, v, LMNN_FLOAT32, LMNN_TILE, &x));
    CHECK_OK(nn_upload(&ws, v, LMNN_FLOAT32, LMNN_TILE, &w));
    lmnn_conv2d_options o;
    lmnn_conv2d_options_init(&o);
    o.stride[0] = o.stride[1] = 2;
    o.padding[0] = o.padding[1] = o.padding[2] = o.padding[3] = 1;
    CHECK_OK(lmnn_conv_transpose2d(x, w, (lmnn_tensor){0}, &o, &a));
    o.output.dtype = LMNN_BFLOAT8_B;
    CHECK_OK(lmnn_conv_transpose2d(x, w, (lmnn_tensor){0}, &o, &b));
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(b, &info));
    CHECK(info.dtype == LMNN_BFLOAT8_B && info.shape.dims[1] == 40 && info.shape.dims[2] == 10 &&
          info.shape.dims[3] == 12);
    enum { NY = 2 * 40 * 10 * 12 };
    float *fa = nn_download(a), *fb = nn_download(b);
    double *want = malloc(NY * sizeof *want);
    CHECK(fa && fb && want);
    for (size_t i = 0; fa && want && i < NY; i++)
        want[i] = fa[i];
    nn_err e = nn_compare(fb, want, NY, 1e-3);
    printf("  P bfloat8_b output: pcc %.7f max_abs %.3g\n", e.pcc, e.max_abs);
    CHECK(e.pcc > 0.9999);
    free(fa), free(fb), free(want);
    /* A phase matrix is for the options it was prepared with; the host
     * form's arguments. */
    lmnn_tensor wp, wh, out;
    o.output.dtype = 0;
    CHECK_OK(lmnn_conv_transpose2d_prepare_weights(w, &o, &wp));
    CHECK_OK(lmnn_tensor_get_info(wp, &info));
    CHECK(info.shape.rank == 2 && info.shape.dims[0] == 2 * 2 * 8 &&
          info.shape.dims[1] == 2 * 2 * 40);
    o.kernel_size[0] = o.kernel_size[1] = 4;
    CHECK_OK(lmnn_conv_transpose2d(x, wp, (lmnn_tensor){0}, &o, &out));
    lmnn_tensor_free(out);
    o.stride[0] = o.stride[1] = 3;
    CHECK_FAILS(
        lmnn_conv_transpose2d(x, wp, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
        "lmnn_conv_transpose2d: weight: expected a prepared weight of 128 rows (KH 4 * KW 4 "
        "* C 8), or by phases at stride (3, 3) 32 rows (TH 2 * TW 2 * C 8) and 9 columns per "
        "output channel, given shape [32, 160]");
    o.stride[0] = o.stride[1] = 2;
    size_t bytes = 8 * 40 * 16 * sizeof *v;
    CHECK_FAILS(lmnn_conv_transpose2d_prepare_weights_host(NULL, &ws, v, bytes, &o, &wh),
                LM_ERR_INVALID_HANDLE,
                "lmnn_conv_transpose2d_prepare_weights_host: device is NULL");
    CHECK_FAILS(lmnn_conv_transpose2d_prepare_weights_host(nn_dev(), &ws, NULL, bytes, &o, &wh),
                LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv_transpose2d_prepare_weights_host: data is NULL");
    CHECK_FAILS(lmnn_conv_transpose2d_prepare_weights_host(nn_dev(), NULL, v, bytes, &o, &wh),
                LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv_transpose2d_prepare_weights_host: shape is NULL");
    CHECK_FAILS(lmnn_conv_transpose2d_prepare_weights_host(nn_dev(), &ws, v, bytes, &o, NULL),
                LM_ERR_INVALID_ARGUMENT, "lmnn_conv_transpose2d_prepare_weights_host: out is NULL");
    CHECK_FAILS(lmnn_conv_transpose2d_prepare_weights_host(nn_dev(), &ws, v, bytes - 4, &o, &wh),
                LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv_transpose2d_prepare_weights_host: size: shape [8, 40, 4, 4] of float32 "
                "needs 20480 bytes, given 20476");
    lmnn_shape m2 = LMNN_SHAPE(128, 40);
    CHECK_FAILS(lmnn_conv_transpose2d_prepare_weights_host(nn_dev(), &m2, v, 128 * 40 * 4, &o, &wh),
                LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv_transpose2d_prepare_weights_host: shape: expected [C, OC / groups, KH, "
                "KW], given [128, 40]");
    /* A phase matrix of 2^33 elements: 1024 -> 2048 channels, 2x2 at stride
     * 64 (its flipped form has 2^23). */
    lmnn_shape big = LMNN_SHAPE(1024, 2048, 2, 2);
    float *zeros = calloc((size_t)1 << 23, sizeof *zeros);
    o.stride[0] = o.stride[1] = 64;
    CHECK_FAILS(lmnn_conv_transpose2d_prepare_weights_host(
                    nn_dev(), &big, zeros, ((size_t)1 << 23) * sizeof *zeros, &o, &wh),
                LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv_transpose2d_prepare_weights_host: weight: shape [1024, 2048, 2, 2] is "
                "too large for its phase matrix at stride (64, 64)");
    free(zeros);
    o.stride[0] = o.stride[1] = 2;
    o.groups = 3;
    CHECK_FAILS(lmnn_conv_transpose2d_prepare_weights_host(nn_dev(), &ws, v, bytes, &o, &wh),
                LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv_transpose2d_prepare_weights_host: weight: input channels 8 (dim 0 of "
                "shape [8, 40, 4, 4]) are not a multiple of groups 3");
    free(v);
    lmnn_tensor_free(wp);
    lmnn_tensor_free(x), lmnn_tensor_free(w), lmnn_tensor_free(a), lmnn_tensor_free(b);
}

/* Runs a pooled case profiled and checks whether the pooling ran in the
 * product (one program: the patch reader feeding matmul_compute.c, which
 * maxes each window's products) or after the convolution (pool_compute.c). */
static void run_pooled_case(const char *name, conv_case k, bool fused) {
    bool ran[2];
    run_profiled(name, k,
                 (const char *const[]){"conv_im2col_reader.c + matmul_compute.c", "pool_compute.c"},
                 ran, 2);
    if (!ran[0] || ran[1] == fused) {
        char m[256];
        snprintf(m, sizeof m, "%s: the pooling ran %s (expected %s)", name,
                 ran[1] ? "after the convolution" : "in the product",
                 fused ? "in the product" : "after the convolution");
        test_fail_(__FILE__, __LINE__, m);
    }
}

/* A max pooling fused into the convolution (pool_kernel): the Fashion-MNIST
 * CNN's two layers (an NCHW image of one channel; image rows of 8
 * channels), overlapping windows on odd sizes (the last row and column of
 * the convolution's output left out), windows of one row or one column,
 * strides 1 and 3, dilation along H, a strided convolution, leaky relu and clamp,
 * bfloat16, 64 output channels, a weight and bias prepared on the host;
 * tile, NHWC and NCHW outputs (one pooled pixel a patch row); and the
 * cases that pool after the convolution instead, with the same values: an
 * activation that does not keep order (GELU, leaky relu of a negative
 * slope), too many output channels for dst (bfloat8_b weights:
 * test_pool_errors). */
static void test_pool_fused(void) {
    conv_case cnn1 = {.n = 4,
                      .c = 1,
                      .h = 28,
                      .w = 28,
                      .oc = 8,
                      .kh = 3,
                      .kw = 3,
                      .pad = {1, 1, 1, 1},
                      .bias = true,
                      .relu = true,
                      .flat = true,
                      .rm_out = true,
                      .rows_out = true,
                      .pool = {2, 2}};
    run_pooled_case("cnn conv1 + pool", cnn1, true);
    conv_case cnn2 = {.n = 4,
                      .c = 8,
                      .h = 14,
                      .w = 14,
                      .oc = 16,
                      .kh = 3,
                      .kw = 3,
                      .nhwc = true,
                      .row_major = true,
                      .flat_in = true,
                      .rows_in = true,
                      .bias = true,
                      .relu = true,
                      .flat = true,
                      .rm_out = true,
                      .rows_out = true,
                      .pool = {2, 2}};
    run_pooled_case("cnn conv2 + pool", cnn2, true);
    conv_case k = {.n = 2,
                   .c = 3,
                   .h = 17,
                   .w = 19,
                   .oc = 24,
                   .kh = 3,
                   .kw = 3,
                   .stride = {2, 1},
                   .pad = {1, 0, 2, 1},
                   .nhwc = true,
                   .bias = true,
                   .act = LMNN_LEAKY_RELU,
                   .alpha = 0.1,
                   .flat = true,
                   .rm_out = true,
                   .pool = {3, 3},
                   .pool_stride = {2, 2}};
    run_pooled_case("3x3/2 windows, odd sizes", k, true);
    k.rows_out = true;
    k.act = LMNN_CLAMP, k.alpha = -0.3, k.beta = 0.4;
    k.pool_stride[1] = 3;
    run_pooled_case("3x3/(2,3) windows, clamp", k, true);
    conv_case row = {.n = 3,
                     .c = 5,
                     .h = 9,
                     .w = 12,
                     .oc = 7,
                     .kh = 2,
                     .kw = 3,
                     .dil = {2, 1},
                     .nhwc = true,
                     .flat = true,
                     .rm_out = true,
                     .pool = {1, 2}};
    run_pooled_case("1x2 windows, dilation along H", row, true);
    row.pool[0] = 2, row.pool[1] = 1, row.bias = true;
    run_pooled_case("2x1 windows", row, true);
    row.pool[1] = 2, row.pool_stride[0] = row.pool_stride[1] = 1;
    run_pooled_case("2x2 windows, stride 1", row, true);
    row.pool_stride[0] = 3, row.pool_stride[1] = 3;
    run_pooled_case("2x2 windows, stride 3 (pixels left out)", row, true);
    conv_case wide = cnn2;
    wide.oc = 64;
    wide.dtype = LMNN_BFLOAT16;
    run_pooled_case("64 channels, bfloat16", wide, true);
    conv_case prep = k;
    prep.host_prep = true;
    prep.flat_in = true; /* the dims the weight is packed for */
    run_pooled_case("prepared on the host", prep, true);
    prep.act = LMNN_RELU;
    prep.pool[0] = prep.pool[1] = 2, prep.pool_stride[0] = prep.pool_stride[1] = 0;
    run_pooled_case("prepared on the host, 2x2", prep, true);

    conv_case after = k;
    after.act = LMNN_GELU;
    run_pooled_case("gelu: pooled after", after, false);
    after.act = LMNN_LEAKY_RELU, after.alpha = -0.5;
    run_pooled_case("negative slope: pooled after", after, false);
    after = wide;
    after.oc = 96;
    after.dtype = LMNN_FLOAT32;
    run_pooled_case("96 channels: pooled after", after, false);
    conv_case tiles = k;
    tiles.rm_out = tiles.rows_out = false;
    run_pooled_case("tile output", tiles, true);
    tiles.flat = tiles.nhwc = false;
    run_pooled_case("NCHW output", tiles, true);
    tiles.host_prep = true;
    tiles.dtype = LMNN_BFLOAT16;
    run_pooled_case("NCHW output, prepared, bfloat16", tiles, true);
    tiles.nhwc = true;
    tiles.oc = 70; /* 3 tiles: 3 * (1 + 3) do not fit dst */
    run_pooled_case("NHWC tiles, 70 channels: pooled after", tiles, false);
}

/* The fused pooling's bad options and mismatched prepared operands. */
static void test_pool_errors(void) {
    lmnn_shape xs = LMNN_SHAPE(1, 4, 6, 6), ws = LMNN_SHAPE(8, 4, 3, 3);
    float *v = nn_rand_floats(1000, -1, 1, 9);
    lmnn_tensor x, w, out, wp, bp;
    CHECK_OK(nn_upload(&xs, v, LMNN_FLOAT32, LMNN_TILE, &x));
    CHECK_OK(nn_upload(&ws, v, LMNN_FLOAT32, LMNN_TILE, &w));
    lmnn_conv2d_options o;
    lmnn_conv2d_options_init(&o);
    o.pool_kernel[0] = -1, o.pool_kernel[1] = 2;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: pool_kernel: expected (KH, KW) >= 1, or (0, 0) for no pooling, "
                "given (-1, 2)");
    o.pool_kernel[0] = 2, o.pool_kernel[1] = 0;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: pool_kernel: expected (KH, KW) >= 1, or (0, 0) for no pooling, "
                "given (2, 0)");
    o.pool_kernel[1] = 2, o.pool_stride[1] = -2;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: pool_stride: expected >= 1, or 0 for the kernel's, given (0, -2)");
    o.pool_stride[1] = 0, o.pool_kernel[0] = 5;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: pool_kernel: (5, 2) is larger than the convolution's output (4 x "
                "4)");
    o.pool_kernel[0] = 2;
    lmnn_shape wts = LMNN_SHAPE(4, 8, 3, 3);
    CHECK_FAILS(lmnn_conv_transpose2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv_transpose2d: pool_kernel: only lmnn_conv2d fuses a pooling, given (2, "
                "2)");
    (void)wts;
    /* A weight prepared for the fused pooling, then used with options that
     * do not fuse it. */
    o.flat_output = true;
    o.output_layout = LMNN_ROW_MAJOR;
    o.batch_size = 1, o.input_height = 6, o.input_width = 6;
    o.input_layout = LMNN_NCHW;
    CHECK_OK(lmnn_conv2d_prepare_weights_host(nn_dev(), &ws, v, 288 * sizeof *v, &o, &wp));
    lmnn_tensor_info wi;
    CHECK_OK(lmnn_tensor_get_info(wp, &wi));
    /* Groups of P * 8 columns, rounded to 32 but the last: P 1 (pooled
     * width 2; P 2's wider patch rows cost more) gives 32 + 8 columns and
     * taps 0 + 1 + 3 = 4 a kernel row. */
    CHECK(wi.shape.rank == 2 && wi.shape.dims[0] == 3 * 4 * 4 && wi.shape.dims[1] == 40);
    lmnn_conv2d_options u = o;
    u.kernel_size[0] = u.kernel_size[1] = 3;
    u.activation = LMNN_GELU;
    lmnn_conv2d_options u4 = u; /* the input as it is, [N, C, H, W] */
    u4.batch_size = u4.input_height = u4.input_width = 0;
    CHECK_FAILS(lmnn_conv2d(x, wp, (lmnn_tensor){0}, &u4, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: weight: shape [48, 40] is prepared for a pooling fused into the "
                "product, 1 output pixels per patch row, and these options do not fuse it "
                "(prepare it with the options of this call)");
    /* Its bias from the host; errors. */
    CHECK_OK(lmnn_conv2d_prepare_bias_host(wp, &ws, v, 8 * sizeof *v, &o, &bp));
    CHECK_OK(lmnn_tensor_get_info(bp, &wi));
    CHECK(wi.shape.rank == 2 && wi.shape.dims[0] == 1 && wi.shape.dims[1] == 8);
    lmnn_tensor_free(bp);
    CHECK_FAILS(lmnn_conv2d_prepare_bias_host(wp, NULL, v, 32, &o, &bp), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d_prepare_bias_host: weight_shape is NULL");
    CHECK_FAILS(lmnn_conv2d_prepare_bias_host(wp, &ws, v, 32, &o, NULL), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d_prepare_bias_host: out is NULL");
    lmnn_shape w3 = LMNN_SHAPE(8, 4, 9);
    CHECK_FAILS(lmnn_conv2d_prepare_bias_host(wp, &w3, v, 32, &o, &bp), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d_prepare_bias_host: weight_shape: expected [OC, C / groups, KH, KW], "
                "given [8, 4, 9]");
    CHECK_FAILS(lmnn_conv2d_prepare_bias_host(wp, &ws, v, 28, &o, &bp), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d_prepare_bias_host: size: 8 output channels (shape [8, 4, 3, 3]) "
                "need 32 bytes, given 28");
    CHECK_FAILS(lmnn_conv2d_prepare_bias_host(wp, &ws, v, 32, &u, &bp), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d_prepare_bias_host: prepared_weight: shape [48, 40] is not what "
                "these options make of a weight of shape [8, 4, 3, 3] ([48, 16])");
    lmnn_tensor_free(wp);
    CHECK_FAILS(lmnn_conv2d_prepare_bias_host(wp, &ws, v, 32, &o, &bp), LM_ERR_INVALID_HANDLE,
                "lmnn_conv2d_prepare_bias_host: prepared_weight");
    /* A bfloat8_b weight prepared from float32 values is packed as the
     * others are (its blocks made of the packed rows) and its pooling
     * fuses: the float32 weight's results within bfloat8_b's rounding of
     * each of the 36 taps (2^-7 of |x| <= 1, the weights in [-1, 1]). */
    lmnn_conv2d_options r4 = o; /* run as the input is, [N, C, H, W] */
    r4.kernel_size[0] = r4.kernel_size[1] = 3;
    r4.batch_size = r4.input_height = r4.input_width = 0;
    lmnn_tensor wf, y32, y8;
    CHECK_OK(lmnn_conv2d_prepare_weights_host(nn_dev(), &ws, v, 288 * sizeof *v, &o, &wf));
    o.output.dtype = LMNN_BFLOAT8_B;
    CHECK_OK(lmnn_conv2d_prepare_weights_host(nn_dev(), &ws, v, 288 * sizeof *v, &o, &wp));
    CHECK_OK(lmnn_tensor_get_info(wp, &wi));
    CHECK(wi.shape.rank == 2 && wi.shape.dims[0] == 48 && wi.shape.dims[1] == 40 &&
          wi.dtype == LMNN_BFLOAT8_B);
    CHECK_OK(lm_device_set_profiling(nn_dev(), true));
    CHECK_OK(lmnn_conv2d(x, wp, (lmnn_tensor){0}, &r4, &y8));
    bool pooled_after[1];
    nn_ran_since((const char *const[]){"pool_compute.c"}, pooled_after, 1);
    CHECK(!pooled_after[0]);
    CHECK_OK(lmnn_conv2d(x, wf, (lmnn_tensor){0}, &r4, &y32));
    float *g8 = nn_download(y8), *g32 = nn_download(y32);
    double worst = 0;
    for (int i = 0; g8 && g32 && i < 2 * 2 * 8; i++)
        worst = fmax(worst, fabs((double)g8[i] - g32[i]));
    free(g8), free(g32);
    lmnn_tensor_free(y8), lmnn_tensor_free(y32), lmnn_tensor_free(wf), lmnn_tensor_free(wp);
    printf("  bfloat8_b pooled weight: largest difference from float32's %.3g\n", worst);
    CHECK(worst > 0 && worst <= 36.0 / 128);
    /* One prepared from bfloat8_b values stays plain (packing would round
     * them again), its bias from the host too; a PyTorch-layout one pools
     * after the convolution. */
    lmnn_tensor w8;
    CHECK_OK(nn_upload(&ws, v, LMNN_BFLOAT8_B, LMNN_TILE, &w8));
    CHECK_OK(lmnn_conv2d_prepare_weights(w8, &o, &wp));
    CHECK_OK(lmnn_tensor_get_info(wp, &wi));
    CHECK(wi.shape.rank == 2 && wi.shape.dims[0] == 36 && wi.shape.dims[1] == 8);
    CHECK_OK(lmnn_conv2d_prepare_bias_host(wp, &ws, v, 8 * sizeof *v, &o, &bp));
    CHECK_OK(lmnn_tensor_get_info(bp, &wi));
    CHECK(wi.shape.rank == 2 && wi.shape.dims[0] == 1 && wi.shape.dims[1] == 8);
    lmnn_tensor_free(bp), lmnn_tensor_free(wp);
    lmnn_conv2d_options o4 = o;
    o4.output.dtype = 0;
    o4.batch_size = o4.input_height = o4.input_width = 0;
    o4.input_layout = LMNN_NCHW;
    CHECK_OK(lm_device_set_profiling(nn_dev(), true));
    CHECK_OK(lmnn_conv2d(x, w8, (lmnn_tensor){0}, &o4, &out));
    bool ran[1];
    nn_ran_since((const char *const[]){"pool_compute.c"}, ran, 1);
    CHECK(ran[0]);
    CHECK_OK(lmnn_tensor_get_info(out, &wi));
    CHECK(wi.shape.rank == 4 && wi.shape.dims[0] == 1 && wi.shape.dims[1] == 1 &&
          wi.shape.dims[2] == 4 && wi.shape.dims[3] == 8 && wi.layout == LMNN_ROW_MAJOR);
    lmnn_tensor_free(out);
    lmnn_tensor_free(w8);
    lmnn_tensor_free(x);
    lmnn_tensor_free(w);
    free(v);
}

/* lmnn_conv2d (or conv_transpose2d) of x (`xs`, `from` in `layout`, NCHW
 * unless o says otherwise) and a float32 weight `ws` with o's input_dtype
 * `to`, against x typecast to `to` first and the same options without it:
 * the same dtype and bits. `casts`: whether the first made a typecast (a
 * unary program) rather than rounding the values as it tilized them;
 * `gathers` (unless -1): whether it gathered the patches into the product. */
static void run_input_dtype_case(const char *name, const lmnn_shape *xs, lmnn_dtype from,
                                 lmnn_layout layout, lmnn_dtype to, const lmnn_shape *ws,
                                 bool transpose, const lmnn_conv2d_options *o, bool casts,
                                 int gathers) {
    size_t nx = lmnn_shape_volume(xs), nw = lmnn_shape_volume(ws);
    /* Values with bits below bfloat16's, whose rounding shows. */
    float *xv = nn_rand_floats(nx, -1, 1, 31 + nx), *wv = nn_rand_floats(nw, -1, 1, 37 + nw);
    lmnn_tensor x, w, xc, y_fused, y_first;
    CHECK_OK(nn_upload(xs, xv, from, layout, &x));
    CHECK_OK(nn_upload(ws, wv, LMNN_FLOAT32, LMNN_TILE, &w));
    lmnn_conv2d_options of = *o, op = *o;
    of.input_dtype = to;
    op.input_dtype = 0;
    CHECK_OK(lm_device_set_profiling(nn_dev(), true));
    CHECK_OK(transpose ? lmnn_conv_transpose2d(x, w, (lmnn_tensor){0}, &of, &y_fused)
                       : lmnn_conv2d(x, w, (lmnn_tensor){0}, &of, &y_fused));
    bool ran[2];
    nn_ran_since((const char *const[]){"unary_compute.c", "conv_im2col_reader.c + matmul"}, ran, 2);
    bool cast = ran[0];
    CHECK_OK(lmnn_typecast(x, to, &xc));
    CHECK_OK(transpose ? lmnn_conv_transpose2d(xc, w, (lmnn_tensor){0}, &op, &y_first)
                       : lmnn_conv2d(xc, w, (lmnn_tensor){0}, &op, &y_first));
    lmnn_tensor_info fi, pi;
    CHECK_OK(lmnn_tensor_get_info(y_fused, &fi));
    CHECK_OK(lmnn_tensor_get_info(y_first, &pi));
    float *a = nn_download(y_fused), *b = nn_download(y_first);
    size_t na = 0, nb = 0;
    CHECK_OK(lmnn_tensor_host_size(y_fused, &na));
    CHECK_OK(lmnn_tensor_host_size(y_first, &nb));
    char m[256];
    if (fi.dtype != pi.dtype || fi.dtype != (o->output.dtype ? o->output.dtype : to)) {
        snprintf(m, sizeof m, "%s: output %s, typecast first %s", name, lmnn_dtype_name(fi.dtype),
                 lmnn_dtype_name(pi.dtype));
        test_fail_(__FILE__, __LINE__, m);
    } else if (!a || !b || na != nb || memcmp(a, b, na)) {
        snprintf(m, sizeof m, "%s: the output differs from the typecast input's", name);
        test_fail_(__FILE__, __LINE__, m);
    } else if (cast != casts) {
        snprintf(m, sizeof m, "%s: %s typecast (expected %s)", name, cast ? "a" : "no",
                 casts ? "one" : "the patches rounded as tilized");
        test_fail_(__FILE__, __LINE__, m);
    } else if (gathers >= 0 && ran[1] != (gathers == 1)) {
        snprintf(m, sizeof m, "%s: the patches were %sgathered into the product", name,
                 ran[1] ? "" : "not ");
        test_fail_(__FILE__, __LINE__, m);
    }
    printf("  %-44s %s -> %s, %s\n", name, lmnn_dtype_name(from), lmnn_dtype_name(to),
           cast ? "typecast first" : "rounded as tilized");
    free(a), free(b), free(xv), free(wv);
    lmnn_tensor_free(x), lmnn_tensor_free(w), lmnn_tensor_free(xc);
    lmnn_tensor_free(y_fused), lmnn_tensor_free(y_first);
}

/* input_dtype: the input's values as lmnn_typecast gives them, rounded as
 * the patches are tilized where the convolution gathers them (no copy of
 * the input: the gathered product, its stored form, by phases, a fused
 * pooling), a typecast first where it does not (a 1x1 convolution reading
 * NHWC tiles as they are, depthwise); and its errors. */
static void test_input_dtype(void) {
    lmnn_conv2d_options o;
    lmnn_conv2d_options_init(&o);
    lmnn_shape xs = LMNN_SHAPE(4, 1, 28, 28), ws = LMNN_SHAPE(8, 1, 3, 3);
    /* The Fashion-MNIST CNN's first layer as a bfloat16 model runs it. */
    o.padding[0] = o.padding[1] = o.padding[2] = o.padding[3] = 1;
    o.activation = LMNN_RELU;
    o.pool_kernel[0] = o.pool_kernel[1] = 2;
    o.flat_output = true;
    o.output_layout = LMNN_ROW_MAJOR;
    o.output_image_rows = true;
    run_input_dtype_case("row-major NCHW, pooled, image rows out", &xs, LMNN_FLOAT32,
                         LMNN_ROW_MAJOR, LMNN_BFLOAT16, &ws, false, &o, false, 1);
    lmnn_conv2d_options_init(&o);
    o.input_layout = LMNN_NHWC;
    o.stride[0] = o.stride[1] = 2;
    xs = LMNN_SHAPE(2, 9, 11, 8), ws = LMNN_SHAPE(16, 8, 3, 3);
    run_input_dtype_case("NHWC tiles, stride 2", &xs, LMNN_FLOAT32, LMNN_TILE, LMNN_BFLOAT16, &ws,
                         false, &o, false, 1);
    o.output.dtype = LMNN_FLOAT32;
    run_input_dtype_case("NHWC tiles, a float32 output", &xs, LMNN_FLOAT32, LMNN_TILE,
                         LMNN_BFLOAT16, &ws, false, &o, false, -1);
    lmnn_conv2d_options_init(&o);
    xs = LMNN_SHAPE(1, 3, 10, 12), ws = LMNN_SHAPE(5, 3, 3, 3);
    run_input_dtype_case("bfloat16 taken as float32", &xs, LMNN_BFLOAT16, LMNN_ROW_MAJOR,
                         LMNN_FLOAT32, &ws, false, &o, false, -1);
    xs = LMNN_SHAPE(1, 4, 5, 5), ws = LMNN_SHAPE(4, 6, 3, 3);
    o.stride[0] = o.stride[1] = 2;
    run_input_dtype_case("transposed, stride 2", &xs, LMNN_FLOAT32, LMNN_TILE, LMNN_BFLOAT16, &ws,
                         true, &o, false, -1);
    lmnn_conv2d_options_init(&o);
    o.input_layout = LMNN_NHWC;
    xs = LMNN_SHAPE(2, 4, 32, 40), ws = LMNN_SHAPE(24, 40, 1, 1);
    run_input_dtype_case("1x1 over NHWC tiles as they are", &xs, LMNN_FLOAT32, LMNN_TILE,
                         LMNN_BFLOAT16, &ws, false, &o, true, -1);
    lmnn_conv2d_options_init(&o);
    o.groups = 16;
    o.padding[0] = o.padding[1] = o.padding[2] = o.padding[3] = 1;
    xs = LMNN_SHAPE(1, 16, 9, 9), ws = LMNN_SHAPE(16, 1, 3, 3);
    run_input_dtype_case("16 groups of one channel (one product)", &xs, LMNN_FLOAT32, LMNN_TILE,
                         LMNN_BFLOAT16, &ws, false, &o, false, -1);
    o.groups = 48;
    xs = LMNN_SHAPE(1, 48, 9, 9), ws = LMNN_SHAPE(48, 1, 3, 3);
    run_input_dtype_case("depthwise", &xs, LMNN_FLOAT32, LMNN_TILE, LMNN_BFLOAT16, &ws, false, &o,
                         true, -1);
    /* The patch matrix stored (L1 left too small for the gathered
     * product, as test_gathered_l1_full). */
    lmnn_conv2d_options_init(&o);
    o.input_layout = LMNN_NHWC;
    o.padding[0] = o.padding[1] = o.padding[2] = o.padding[3] = 1;
    xs = LMNN_SHAPE(1, 9, 10, 64), ws = LMNN_SHAPE(256, 64, 3, 3);
    lm_buffer big;
    CHECK_OK(fill_l1(&big));
    run_input_dtype_case("the patch matrix stored", &xs, LMNN_FLOAT32, LMNN_ROW_MAJOR,
                         LMNN_BFLOAT16, &ws, false, &o, false, 0);
    CHECK_OK(lm_deallocate_buffer(big));
    run_input_dtype_case("the same gathered", &xs, LMNN_FLOAT32, LMNN_ROW_MAJOR, LMNN_BFLOAT16, &ws,
                         false, &o, false, 1);

    /* Errors. */
    xs = LMNN_SHAPE(1, 2, 4, 4), ws = LMNN_SHAPE(3, 2, 3, 3);
    float *v = nn_rand_floats(64, -1, 1, 5);
    lmnn_tensor x, w, out;
    CHECK_OK(nn_upload(&xs, v, LMNN_FLOAT32, LMNN_ROW_MAJOR, &x));
    CHECK_OK(nn_upload(&ws, v, LMNN_FLOAT32, LMNN_TILE, &w));
    lmnn_conv2d_options_init(&o);
    o.input_dtype = LMNN_INT32;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: input_dtype: expected 0 (the input's), float32 or bfloat16, given "
                "int32");
    o.input_dtype = LMNN_BFLOAT8_B;
    CHECK_FAILS(lmnn_conv_transpose2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv_transpose2d: input_dtype: expected 0 (the input's), float32 or "
                "bfloat16, given bfloat8_b");
    o.input_dtype = (lmnn_dtype)99;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: input_dtype: expected 0 (the input's), float32 or bfloat16, given "
                "invalid");
    /* Its own dtype: nothing to round. */
    o.input_dtype = LMNN_FLOAT32;
    CHECK_OK(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out));
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(out, &info));
    CHECK(info.dtype == LMNN_FLOAT32);
    lmnn_tensor_free(out), lmnn_tensor_free(x), lmnn_tensor_free(w);
    free(v);
}

static void test_errors(void) {
    lmnn_shape xs = LMNN_SHAPE(1, 4, 5, 5), ws = LMNN_SHAPE(6, 2, 3, 3), s3 = LMNN_SHAPE(4, 5, 5);
    float *v = nn_rand_floats(1000, -1, 1, 5);
    lmnn_tensor x, w, x3, bad_b, xi, out, freed;
    CHECK_OK(nn_upload(&xs, v, LMNN_FLOAT32, LMNN_TILE, &x));
    CHECK_OK(nn_upload(&ws, v, LMNN_FLOAT32, LMNN_TILE, &w));
    CHECK_OK(nn_upload(&s3, v, LMNN_FLOAT32, LMNN_TILE, &x3));
    lmnn_shape bs = LMNN_SHAPE(5);
    CHECK_OK(nn_upload(&bs, v, LMNN_FLOAT32, LMNN_TILE, &bad_b));
    CHECK_OK(nn_upload(&bs, v, LMNN_FLOAT32, LMNN_TILE, &freed));
    lmnn_tensor_free(freed);
    lmnn_tensor_options io;
    lmnn_tensor_options_init(&io);
    io.dtype = LMNN_INT32;
    int32_t iv[100] = {0};
    CHECK_OK(lmnn_from_host(nn_dev(), &xs, iv, sizeof iv, &io, &xi));
    lmnn_conv2d_options o;
    lmnn_conv2d_options_init(&o);
    o.groups = 2;
    lmnn_program_cache_stats before, after;
    CHECK_OK(lmnn_program_cache_get_stats(nn_dev(), &before));
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, NULL), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: out is NULL");
    CHECK_FAILS(lmnn_conv2d(freed, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_HANDLE,
                "lmnn_conv2d: input");
    CHECK_FAILS(lmnn_conv2d(x3, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: input: expected rank 4 (N, C, H, W), given shape [4, 5, 5]");
    CHECK_FAILS(lmnn_conv2d(xi, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: input");
    CHECK_FAILS(lmnn_conv2d(x, w, bad_b, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: bias: expected shape [6] or [1, 6], given [5]");
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: weight: shape [6, 2, 3, 3] expects 2 input channels (dim 1 * "
                "groups), given input shape [1, 4, 5, 5]");
    o.groups = 3;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: groups: input channels 4 (shape [1, 4, 5, 5]) are not a multiple "
                "of groups 3");
    o.groups = 0;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: groups: expected >= 1, given 0");
    o.groups = 2;
    o.stride[1] = 0;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: stride: expected (h, w) >= 1, given (1, 0)");
    o.stride[1] = -2;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: stride: expected (h, w) >= 1, given (1, -2)");
    o.stride[1] = 1;
    o.dilation[0] = 0;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: dilation: expected (h, w) >= 1, given (0, 1)");
    o.dilation[0] = 3;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: kernel_size: the dilated kernel (7 x 3) is larger than the padded "
                "input (5 x 5)");
    o.dilation[0] = 1;
    o.padding[2] = -1;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: padding: expected [top, bottom, left, right] >= 0, given [0, 0, "
                "-1, 0]");
    o.padding[2] = 0;
    /* Paddings whose sum overflows int32 (and whose output no device holds). */
    o.padding[0] = INT32_MAX;
    o.padding[1] = 1;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: input: the output (2147483651 x 3) is too large");
    o.padding[0] = o.padding[1] = 0;
    o.output_padding[0] = 1;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: output_padding: expected (0, 0)");
    o.output_padding[0] = 0;
    o.kernel_size[0] = 2;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: kernel_size: (2, 0) does not match the weight's shape [6, 2, 3, 3]");
    o.kernel_size[0] = 0;
    o.input_layout = (lmnn_image_layout)7;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: input_layout: unknown layout 7");
    o.input_layout = LMNN_NCHW;
    o.output.dtype = LMNN_UINT32;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: output.dtype: expected a float dtype, given uint32");
    o.output.dtype = 0;
    o.activation = (lmnn_unary_op)9999;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: activation");
    o.activation = 0;
    o.batch_size = o.input_height = o.input_width = 1;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: batch_size, input_height, input_width: expected input_layout NHWC "
                "(a flat image), given NCHW");
    o.input_layout = LMNN_NHWC;
    o.input_height = 0;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: batch_size, input_height, input_width: expected all >= 1, given "
                "(1, 0, 1)");
    o.input_height = 2;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: input: shape [1, 4, 5, 5] does not hold a flat image of 1 x 2 x 1 "
                "pixels (expected [..., C] with N * H * W = 2 rows, or [..., W * C] with N * H = "
                "2)");
    o.input_layout = LMNN_NCHW;
    o.batch_size = o.input_height = o.input_width = 0;
    /* A prepared weight needs the kernel size and the right row count. */
    lmnn_tensor wp;
    CHECK_OK(lmnn_conv2d_prepare_weights(w, &o, &wp));
    CHECK_FAILS(lmnn_conv2d(x, wp, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: kernel_size: expected (KH, KW) >= 1 with a prepared weight (shape "
                "[36, 6]), given (0, 0)");
    o.kernel_size[0] = o.kernel_size[1] = 2;
    CHECK_FAILS(lmnn_conv2d(x, wp, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: weight: expected a prepared weight of 16 rows (KH 2 * KW 2 * C 4), "
                "given shape [36, 6]");
    o.kernel_size[0] = o.kernel_size[1] = 0;
    CHECK_FAILS(lmnn_conv2d(x, x3, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: weight: expected rank 4 (OC, C / groups, KH, KW), a prepared [KH * "
                "KW * C, OC], a prepared depthwise [1, KH * KW, C] or a compact grouped [T, 32, "
                "32], given shape");
    o.groups = 4;
    CHECK_FAILS(lmnn_conv2d_prepare_weights(w, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d_prepare_weights: weight: output channels 6 (dim 0 of shape [6, 2, 3, "
                "3]) are not a multiple of groups 4");
    /* Transposed: output_padding below max(stride, dilation). */
    lmnn_conv2d_options_init(&o);
    o.stride[0] = 2;
    o.output_padding[0] = 2;
    lmnn_shape wts = LMNN_SHAPE(4, 3, 3, 3);
    lmnn_tensor wt;
    CHECK_OK(nn_upload(&wts, v, LMNN_FLOAT32, LMNN_TILE, &wt));
    CHECK_FAILS(lmnn_conv_transpose2d(x, wt, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv_transpose2d: output_padding: expected below max(stride, dilation) = 2 "
                "along h, given 2");
    o.output_padding[0] = 0;
    o.padding[0] = o.padding[1] = 6;
    CHECK_FAILS(lmnn_conv_transpose2d(x, wt, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv_transpose2d: padding: the output would be empty");
    /* Tensors on another device. */
    lm_device *dev2;
    CHECK_OK(lm_device_open(NULL, &dev2));
    lmnn_tensor_options fo;
    lmnn_tensor_options_init(&fo);
    fo.dtype = LMNN_FLOAT32;
    lmnn_tensor w2, b2;
    lmnn_shape b6 = LMNN_SHAPE(6);
    CHECK_OK(lmnn_from_host(dev2, &ws, v, 6 * 2 * 9 * sizeof(float), &fo, &w2));
    CHECK_OK(lmnn_from_host(dev2, &b6, v, 6 * sizeof(float), &fo, &b2));
    lmnn_conv2d_options_init(&o);
    o.groups = 2;
    CHECK_FAILS(lmnn_conv2d(x, w2, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: weight: the tensor is on another device than the op's first input");
    CHECK_FAILS(lmnn_conv2d(x, w, b2, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: bias: the tensor is on another device than the op's first input");
    CHECK_OK(lm_device_close(dev2));
    CHECK_FAILS(lmnn_conv2d(x, w, b2, &o, &out), LM_ERR_INVALID_HANDLE, "lmnn_conv2d: bias");
    /* The device still works. */
    lmnn_conv2d_options_init(&o);
    o.groups = 2;
    CHECK_OK(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out));
    CHECK_OK(lmnn_program_cache_get_stats(nn_dev(), &after));
    lmnn_tensor_free(out);
    lmnn_tensor ts[] = {x, w, x3, bad_b, xi, wp, wt};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        lmnn_tensor_free(ts[i]);
    free(v);
}

/* Depthwise convolutions (groups = C = OC): more than 32 channels run as
 * each tap's patch matrix times its row of weights, summed over the taps.
 * Kernels 3x3, 5x5 and 1x7, strides, symmetric and asymmetric padding,
 * dilation, batches; NCHW and NHWC images in both layouts, flat and
 * row-major outputs, L1; bias as given ([OC]) or prepared for the weight;
 * relu, clamp (0, 6) and silu fused into the bias add or alone; the weight
 * in PyTorch's layout, prepared on the device or from the host (checked to
 * be [1, KH * KW, C], element (0, t, c) = weight (c, 0, t)) or uploaded as
 * that form by hand, for C <= 32 too; float32, bfloat16 and a bfloat8_b
 * weight. 32 channels or fewer keep the block-diagonal matrix. */
static void test_depthwise(void) {
    conv_case k = {.n = 2,
                   .c = 33,
                   .h = 9,
                   .w = 10,
                   .oc = 33,
                   .kh = 3,
                   .kw = 3,
                   .groups = 33,
                   .pad = {1, 1, 1, 1},
                   .bias = true};
    run_case("dw 33 3x3 pad 1 bias", k, true);
    k.bias = false;
    k.stride[0] = 2;
    k.pad[0] = 0, k.pad[3] = 0;
    run_case("dw 33 stride (2, 1) asym pad", k, false); /* the sum is the output */
    k.dtype = LMNN_BFLOAT16;
    k.bias = k.relu = true;
    run_case("dw 33 bf16 stride (2, 1) bias relu", k, false);
    k = (conv_case){.n = 2,
                    .c = 48,
                    .h = 11,
                    .w = 9,
                    .oc = 48,
                    .kh = 5,
                    .kw = 5,
                    .groups = 48,
                    .stride = {2, 2},
                    .pad = {2, 1, 1, 2},
                    .act = LMNN_RELU,
                    .nhwc = true,
                    .row_major = true};
    run_case("dw 48 5x5 stride 2 NHWC relu", k, true); /* lmnn_unary after the sum */
    k.bias = k.prepared = true;
    k.act = LMNN_CLAMP, k.alpha = 0, k.beta = 6;
    k.dtype = LMNN_BFLOAT16;
    run_case("dw 48 5x5 bf16 prepared bias clamp", k, false);
    /* bfloat8_b weights: prepared as bfloat16 (from the device or the
     * host), or given as they are (PyTorch's layout, or the depthwise form
     * uploaded in bfloat8_b). */
    k.dtype = 0;
    k.wdtype = LMNN_BFLOAT8_B;
    k.act = LMNN_SILU;
    run_case("dw 48 5x5 prepared as bfloat8_b, silu", k, false);
    k.host_prep = true, k.prepared = false;
    k.dtype = LMNN_BFLOAT16;
    run_case("dw 48 5x5 bf16, host as bfloat8_b", k, false);
    k.host_prep = false;
    k.dtype = 0;
    run_case("dw 48 5x5 bfloat8_b PyTorch weight", k, false);
    k.dw_upload = true;
    run_case("dw 48 5x5 bfloat8_b [1, 25, 48]", k, false);
    k = (conv_case){.n = 1,
                    .c = 96,
                    .h = 6,
                    .w = 13,
                    .oc = 96,
                    .kh = 1,
                    .kw = 7,
                    .groups = 96,
                    .pad = {0, 0, 3, 3},
                    .bias = true,
                    .act = LMNN_CLAMP,
                    .alpha = 0,
                    .beta = 6,
                    .nhwc = true,
                    .flat = true,
                    .prepared = true};
    run_case("dw 96 1x7 flat out prepared clamp", k, true);
    k.bias = k.flat = false;
    k.l1 = true;
    run_case("dw 96 1x7 clamp alone, out in L1", k, false);
    k.act = LMNN_SILU;
    k.nhwc = k.prepared = k.l1 = false;
    k.dtype = LMNN_BFLOAT16;
    run_case("dw 96 1x7 bf16 silu alone", k, false);
    /* 81 taps: their tiles and weights stream through L1 (more than it
     * would hold at once). */
    k = (conv_case){.n = 1,
                    .c = 40,
                    .h = 12,
                    .w = 11,
                    .oc = 40,
                    .kh = 9,
                    .kw = 9,
                    .groups = 40,
                    .pad = {4, 4, 4, 4},
                    .bias = true,
                    .relu = true};
    run_case("dw 40 9x9 bias relu", k, false);
    k = (conv_case){.n = 2,
                    .c = 48,
                    .h = 10,
                    .w = 10,
                    .oc = 48,
                    .kh = 3,
                    .kw = 3,
                    .groups = 48,
                    .dil = {2, 2},
                    .pad = {2, 2, 2, 2},
                    .bias = true,
                    .act = LMNN_SILU,
                    .nhwc = true,
                    .row_major = true,
                    .flat_in = true,
                    .flat = true,
                    .rm_out = true,
                    .host_prep = true};
    run_case("dw 48 dilation 2 row-major out silu", k, true);
    k.rows_in = k.rows_out = true;
    k.host_prep = false, k.dw_upload = true;
    run_case("dw 48 image rows, uploaded weight", k, false);
    k.rows_in = k.rows_out = k.rm_out = k.flat = k.row_major = k.flat_in = false;
    k.stride[1] = 2;
    run_case("dw 48 uploaded, bias [48], stride (1, 2)", k, false);
    /* 32 channels and fewer: the block-diagonal matrix, and the depthwise
     * form when given it. */
    k = (conv_case){.n = 2,
                    .c = 32,
                    .h = 7,
                    .w = 8,
                    .oc = 32,
                    .kh = 3,
                    .kw = 3,
                    .groups = 32,
                    .pad = {1, 1, 1, 1},
                    .bias = true,
                    .act = LMNN_SILU,
                    .prepared = true};
    run_case("dw 32 block-diagonal prepared", k, false);
    k.prepared = false, k.dw_upload = true;
    run_case("dw 32 uploaded [1, 9, 32]", k, false);
    k = (conv_case){.n = 1,
                    .c = 5,
                    .h = 4,
                    .w = 11,
                    .oc = 5,
                    .kh = 1,
                    .kw = 7,
                    .groups = 5,
                    .pad = {0, 0, 2, 3},
                    .nhwc = true,
                    .dw_upload = true,
                    .dtype = LMNN_BFLOAT16};
    run_case("dw 5 1x7 uploaded bf16 NHWC", k, false);
    /* Many output pixels (the ops' work split over the cores). */
    k = (conv_case){.n = 1,
                    .c = 64,
                    .h = 56,
                    .w = 56,
                    .oc = 64,
                    .kh = 3,
                    .kw = 3,
                    .groups = 64,
                    .pad = {1, 1, 1, 1},
                    .bias = true,
                    .relu = true,
                    .nhwc = true,
                    .row_major = true,
                    .prepared = true,
                    .dtype = LMNN_BFLOAT16};
    run_case("dw 64 56x56 bf16 NHWC prepared", k, true);
    k = (conv_case){.n = 1,
                    .c = 144,
                    .h = 28,
                    .w = 28,
                    .oc = 144,
                    .kh = 3,
                    .kw = 3,
                    .groups = 144,
                    .stride = {2, 2},
                    .pad = {0, 1, 0, 1},
                    .bias = true,
                    .l1 = true};
    run_case("dw 144 28x28 stride 2, out in L1", k, false);
    /* conv_transpose2d keeps the block-diagonal matrix. */
    run_case("T depthwise 40 stride 2",
             (conv_case){.transpose = true,
                         .n = 1,
                         .c = 40,
                         .h = 5,
                         .w = 6,
                         .oc = 40,
                         .kh = 3,
                         .kw = 3,
                         .groups = 40,
                         .stride = {2, 2},
                         .pad = {1, 1, 1, 1},
                         .bias = true,
                         .prepared = true},
             false);
    /* The same bits whatever the host threads. */
    lmnn_shape xs = LMNN_SHAPE(1, 13, 15, 48), ws = LMNN_SHAPE(48, 1, 3, 3);
    float *x = nn_rand_floats(13 * 15 * 48, -1, 1, 61), *w = nn_rand_floats(48 * 9, -1, 1, 62);
    lmnn_conv2d_options o;
    lmnn_conv2d_options_init(&o);
    o.input_layout = LMNN_NHWC;
    o.groups = 48;
    o.stride[1] = 2;
    o.padding[0] = o.padding[3] = 1;
    o.activation = LMNN_SILU;
    size_t n1 = 0, n32 = 0;
    float *a = conv_on(1, &xs, x, &ws, w, LMNN_FLOAT32, &o, &n1);
    float *b = conv_on(32, &xs, x, &ws, w, LMNN_FLOAT32, &o, &n32);
    CHECK(a && b && n1 == n32 && n1 == (size_t)12 * 7 * 48);
    CHECK(memcmp(a, b, n1 * sizeof *a) == 0);
    free(a), free(b), free(x), free(w);
}

/* Runs a depthwise case with the device profiling its launches, and checks
 * whether the bias and activation took a launch of their own. */
static void run_fused_case(const char *name, conv_case k, bool fused) {
    bool ran[3];
    run_profiled(
        name, k,
        (const char *const[]){"depthwise_compute.c", "binary_compute.c", "unary_compute.c"}, ran,
        3);
    bool depthwise = ran[0], apart = ran[1] || ran[2];
    if (!depthwise || apart == fused) {
        char m[256];
        snprintf(m, sizeof m, "%s: the bias and activation ran %s (expected %s)", name,
                 apart ? "apart" : "with the sums", fused ? "with the sums" : "apart");
        test_fail_(__FILE__, __LINE__, m);
    }
}

/* The bias and the activation join a depthwise convolution's sums in its
 * one launch when the padding stays zero through them: relu (on each tile
 * where it is), silu (through dst 0, tile by tile), a clamp whose range holds
 * 0, with and without a bias, float32 and bfloat16, with the rows ending
 * inside the last tile row and taps in several batches; a clamp from 0.5
 * (f(0) != 0) runs apart. Values against float64, and the padding of the
 * flat output, as the op leaves it, zero (run_case). */
static void test_depthwise_fused(void) {
    conv_case k = {.n = 1,
                   .c = 40,
                   .h = 7,
                   .w = 9,
                   .oc = 40,
                   .kh = 3,
                   .kw = 3,
                   .groups = 40,
                   .pad = {1, 1, 1, 1},
                   .bias = true,
                   .relu = true,
                   .nhwc = true,
                   .flat = true};
    run_fused_case("dw fused bias relu", k, true);
    k.relu = false, k.act = LMNN_SILU;
    run_fused_case("dw fused bias silu", k, true);
    k.bias = false;
    run_fused_case("dw fused silu alone", k, true);
    k.act = LMNN_CLAMP, k.alpha = 0, k.beta = 6, k.bias = true, k.dtype = LMNN_BFLOAT16;
    run_fused_case("dw fused bf16 bias clamp(0, 6)", k, true);
    k.alpha = 0.5, k.dtype = 0;
    run_fused_case("dw bias clamp(0.5, 6) apart", k, false);
    k.act = LMNN_UNARY_INVALID;
    k.kh = k.kw = 9, k.pad[0] = k.pad[1] = k.pad[2] = k.pad[3] = 4, k.c = k.oc = k.groups = 520;
    run_fused_case("dw fused bias, 520 channels, 81 taps in batches", k, true);
}

/* One depthwise convolution from the PyTorch-layout weight, the depthwise
 * form [1, KH * KW, C] and the block-diagonal [KH * KW * C, C] (both
 * uploaded by hand; the latter runs as one product whatever C): for 32
 * channels (the PyTorch weight takes the block-diagonal form) and 48 (the
 * depthwise one), the three agree with each other and the reference. */
static void test_depthwise_forms(void) {
    for (uint32_t c = 32; c <= 48; c += 16) {
        conv_case k = {.n = 2,
                       .c = c,
                       .h = 6,
                       .w = 7,
                       .oc = c,
                       .kh = 3,
                       .kw = 3,
                       .stride = {1, 1},
                       .dil = {1, 1},
                       .groups = (int32_t)c,
                       .pad = {1, 0, 1, 1},
                       .bias = true};
        uint32_t oh, ow;
        out_dims(&k, &oh, &ow);
        size_t nx = (size_t)2 * c * 6 * 7, nw = (size_t)c * 9, ny = (size_t)2 * c * oh * ow;
        float *x = nn_rand_floats(nx, -1, 1, 31), *w = nn_rand_floats(nw, -1, 1, 32);
        float *b = nn_rand_floats(c, -1, 1, 33), *m3 = malloc(nw * sizeof *m3);
        float *m2 = calloc(nw * c, sizeof *m2);
        for (uint32_t ci = 0; ci < c; ci++)
            for (uint32_t t = 0; t < 9; t++) {
                m3[t * c + ci] = w[ci * 9 + t];
                m2[((size_t)t * c + ci) * c + ci] = w[ci * 9 + t];
            }
        double *want = malloc(ny * sizeof *want), *scale = malloc(ny * sizeof *scale);
        reference(&k, x, w, b, oh, ow, want, scale);
        lmnn_shape xs = LMNN_SHAPE(2, c, 6, 7), ws = LMNN_SHAPE(c, 1, 3, 3),
                   s3 = LMNN_SHAPE(1, 9, c), s2 = LMNN_SHAPE(9 * c, c), bs = LMNN_SHAPE(c);
        lmnn_tensor xt, wt[3], bt, out;
        CHECK_OK(nn_upload(&xs, x, LMNN_FLOAT32, LMNN_TILE, &xt));
        CHECK_OK(nn_upload(&ws, w, LMNN_FLOAT32, LMNN_TILE, &wt[0]));
        CHECK_OK(nn_upload(&s3, m3, LMNN_FLOAT32, LMNN_TILE, &wt[1]));
        CHECK_OK(nn_upload(&s2, m2, LMNN_FLOAT32, LMNN_TILE, &wt[2]));
        CHECK_OK(nn_upload(&bs, b, LMNN_FLOAT32, LMNN_TILE, &bt));
        lmnn_conv2d_options o;
        lmnn_conv2d_options_init(&o);
        o.groups = (int32_t)c;
        memcpy(o.padding, k.pad, sizeof o.padding);
        float *got[3];
        for (int f = 0; f < 3; f++) {
            o.kernel_size[0] = o.kernel_size[1] = f ? 3 : 0;
            CHECK_OK(lmnn_conv2d(xt, wt[f], bt, &o, &out));
            got[f] = nn_download(out);
            lmnn_tensor_free(out);
            CHECK(got[f]);
        }
        /* Each against the reference, and the two forms against each other. */
        double ratio[4] = {0, 0, 0, 0};
        for (size_t i = 0; i < ny; i++) {
            double s = fmax(scale[i], 1e-30);
            for (int f = 0; f < 3; f++)
                ratio[f] = fmax(ratio[f], fabs(got[f][i] - want[i]) / s);
            ratio[3] = fmax(ratio[3], fabs(got[1][i] - got[2][i]) / s);
        }
        printf("  dw %u err/S: PyTorch weight %.3g, [1, 9, %u] %.3g, [%u, %u] %.3g, "
               "between the two %.3g\n",
               c, ratio[0], c, ratio[1], 9 * c, c, ratio[2], ratio[3]);
        for (int f = 0; f < 4; f++)
            CHECK(ratio[f] <= 1e-5);
        for (int f = 0; f < 3; f++) {
            lmnn_tensor_free(wt[f]);
            free(got[f]);
        }
        lmnn_tensor_free(xt);
        lmnn_tensor_free(bt);
        free(x), free(w), free(b), free(m3), free(m2), free(want), free(scale);
    }
}

/* Grouped convolutions by prepared weights, from the device and from the
 * host: the compact form (compact_tiles' count of tiles, checked in
 * run_case) wherever it leaves tiles out, with ResNeXt's and RegNet's
 * channel counts, bias, activation, bfloat16; the results as the
 * reference's. A compact weight the call does not fit is an
 * error naming what is wrong. */
static void test_grouped_compact(void) {
    static const conv_case cases[] = {
        {.n = 1, .c = 128, .h = 6, .w = 7, .oc = 128, .kh = 3, .kw = 3, .groups = 32},
        {.n = 2, .c = 64, .h = 9, .w = 9, .oc = 128, .kh = 3, .kw = 3, .groups = 8, .bias = true},
        {.n = 1,
         .c = 104,
         .h = 9,
         .w = 8,
         .oc = 104,
         .kh = 3,
         .kw = 3,
         .groups = 13,
         .stride = {2, 2},
         .pad = {1, 1, 1, 1},
         .bias = true,
         .relu = true},
        {.n = 1,
         .c = 64,
         .h = 8,
         .w = 9,
         .oc = 80,
         .kh = 3,
         .kw = 2,
         .groups = 16,
         .stride = {2, 1},
         .pad = {1, 0, 1, 1},
         .bias = true},
        {.n = 2, .c = 40, .h = 6, .w = 7, .oc = 80, .kh = 3, .kw = 3, .groups = 8},
        {.n = 1, .c = 256, .h = 5, .w = 5, .oc = 256, .kh = 1, .kw = 1, .groups = 4, .bias = true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        conv_case k = cases[i];
        char name[96];
        snprintf(name, sizeof name, "groups %d, %u -> %u, %ux%u, prepared", k.groups, k.c, k.oc,
                 k.kh, k.kw);
        k.prepared = true;
        run_case(name, k, i == 0);
        k.prepared = false, k.host_prep = true;
        snprintf(name, sizeof name, "groups %d, %u -> %u, %ux%u, host", k.groups, k.c, k.oc, k.kh,
                 k.kw);
        run_case(name, k, false);
    }
    conv_case k = cases[1];
    k.prepared = true;
    k.dtype = LMNN_BFLOAT16;
    run_case("groups 8, bf16, prepared", k, false);

    /* The compact form of [288 * 4, 128] by groups of 32 x 4: T tiles. */
    lmnn_shape xs = LMNN_SHAPE(1, 128, 5, 5), ws = LMNN_SHAPE(128, 4, 3, 3);
    float *v = nn_rand_floats(128 * 4 * 9, -1, 1, 51);
    lmnn_tensor x, w, out = {0};
    CHECK_OK(nn_upload(&xs, v, LMNN_FLOAT32, LMNN_TILE, &x));
    lmnn_conv2d_options o;
    lmnn_conv2d_options_init(&o);
    o.groups = 32;
    CHECK_OK(lmnn_conv2d_prepare_weights_host(nn_dev(), &ws, v, 128 * 4 * 9 * sizeof *v, &o, &w));
    lmnn_tensor_info wi;
    CHECK_OK(lmnn_tensor_get_info(w, &wi));
    uint64_t t = compact_tiles(&(conv_case){.c = 128, .oc = 128, .kh = 3, .kw = 3, .groups = 32});
    CHECK(wi.shape.rank == 3 && wi.shape.dims[0] == t && t == 36);
    o.kernel_size[0] = o.kernel_size[1] = 3;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: out_channels: expected a multiple of groups 32 with a compact "
                "grouped weight (shape [36, 32, 32]), given 0");
    o.out_channels = 96;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: weight: shape [36, 32, 32] is not the compact form of a 3 x 3 "
                "kernel over 128 channels in 32 groups to 96 outputs (which has 54 tiles)");
    o.out_channels = 128;
    o.kernel_size[0] = o.kernel_size[1] = 1;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: weight: shape [36, 32, 32] is not the compact form of a 1 x 1 "
                "kernel over 128 channels in 32 groups to 128 outputs (which has 4 tiles)");
    o.kernel_size[0] = o.kernel_size[1] = 3;
    o.groups = 1;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: weight: shape [36, 32, 32] is a compact grouped weight, which only "
                "a convolution of groups > 1 takes (given groups 1)");
    o.groups = 32;
    CHECK_FAILS(lmnn_conv_transpose2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv_transpose2d: weight: shape [36, 32, 32] is a compact grouped weight, "
                "which only a convolution of groups > 1 takes (given groups 32, transposed)");
    CHECK(out.id == 0);
    CHECK_OK(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out));
    lmnn_tensor_free(out);
    out = (lmnn_tensor){0};
    /* Any other weight: out_channels 0 or the weight's own. */
    lmnn_tensor w4;
    CHECK_OK(nn_upload(&ws, v, LMNN_FLOAT32, LMNN_TILE, &w4));
    o.out_channels = 64;
    CHECK_FAILS(lmnn_conv2d(x, w4, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: out_channels: given 64, but the weight (shape [128, 4, 3, 3]) has "
                "128 output channels");
    o.out_channels = -128;
    CHECK_FAILS(lmnn_conv2d(x, w4, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: out_channels: given -128, but the weight (shape [128, 4, 3, 3]) has "
                "128 output channels");
    CHECK(out.id == 0);
    o.out_channels = 128;
    CHECK_OK(lmnn_conv2d(x, w4, (lmnn_tensor){0}, &o, &out));
    lmnn_tensor_free(out);
    lmnn_tensor_free(w4);
    lmnn_tensor_free(w);
    lmnn_tensor_free(x);
    free(v);
}

/* A prepared depthwise weight that does not fit the call. */
static void test_depthwise_errors(void) {
    lmnn_shape xs = LMNN_SHAPE(1, 48, 5, 5), s3 = LMNN_SHAPE(1, 9, 48), s25 = LMNN_SHAPE(1, 25, 48),
               s40 = LMNN_SHAPE(1, 9, 40), s2 = LMNN_SHAPE(9, 2, 48), bs = LMNN_SHAPE(16);
    float *v = nn_rand_floats(9 * 2 * 48 * 25, -1, 1, 41);
    lmnn_tensor x, w, w25, w40, wrm, w2, b16, out = {0};
    CHECK_OK(nn_upload(&xs, v, LMNN_FLOAT32, LMNN_TILE, &x));
    CHECK_OK(nn_upload(&s3, v, LMNN_FLOAT32, LMNN_TILE, &w));
    CHECK_OK(nn_upload(&s25, v, LMNN_FLOAT32, LMNN_TILE, &w25));
    CHECK_OK(nn_upload(&s40, v, LMNN_FLOAT32, LMNN_TILE, &w40));
    CHECK_OK(nn_upload(&s3, v, LMNN_FLOAT32, LMNN_ROW_MAJOR, &wrm));
    CHECK_OK(nn_upload(&s2, v, LMNN_FLOAT32, LMNN_TILE, &w2));
    CHECK_OK(nn_upload(&bs, v, LMNN_FLOAT32, LMNN_TILE, &b16));
    lm_memory_stats dram0, l10, dram1, l11;
    CHECK_OK(lm_device_get_memory_stats(nn_dev(), LM_BUFFER_DRAM, &dram0));
    CHECK_OK(lm_device_get_memory_stats(nn_dev(), LM_BUFFER_L1, &l10));
    lmnn_conv2d_options o;
    lmnn_conv2d_options_init(&o);
    o.groups = 48;
    o.padding[0] = o.padding[1] = o.padding[2] = o.padding[3] = 1;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: kernel_size: expected (KH, KW) >= 1 with a prepared weight (shape "
                "[1, 9, 48]), given (0, 0)");
    o.kernel_size[0] = o.kernel_size[1] = 3;
    CHECK_FAILS(lmnn_conv2d(x, w25, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: weight: shape [1, 25, 48] is not a prepared depthwise weight for "
                "these options (expected [1, KH * KW, C] = [1, 9, 48], groups = C, not "
                "transposed)");
    CHECK_FAILS(lmnn_conv2d(x, w40, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: weight: shape [1, 9, 40] is not a prepared depthwise weight for "
                "these options (expected [1, KH * KW, C] = [1, 9, 48], groups = C, not "
                "transposed)");
    o.groups = 16;
    CHECK_FAILS(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: weight: shape [1, 9, 48] is not a prepared depthwise weight for "
                "these options (expected [1, KH * KW, C] = [1, 9, 48], groups = C, not "
                "transposed)");
    o.groups = 48;
    CHECK_FAILS(lmnn_conv2d(x, wrm, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: weight: expected layout tile, given row_major");
    CHECK_FAILS(lmnn_conv2d(x, w2, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: weight: expected rank 4 (OC, C / groups, KH, KW), a prepared [KH * "
                "KW * C, OC], a prepared depthwise [1, KH * KW, C] or a compact grouped [T, 32, "
                "32], given shape [9, 2, 48]");
    CHECK_FAILS(lmnn_conv2d(x, w, b16, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d: bias: expected shape [48] or [1, 48], given [16]");
    lmnn_tensor pb = {0};
    CHECK_FAILS(lmnn_conv2d_prepare_bias(b16, w, &pb), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv2d_prepare_bias: bias: shape [16] does not fit prepared_weight of shape "
                "[1, 9, 48] (expected [OC] or [1, OC]: its output channels, or for a packed "
                "matrix a divisor of its columns)");
    CHECK(pb.id == 0);
    CHECK_FAILS(lmnn_conv_transpose2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv_transpose2d: weight: shape [1, 9, 48] is not a prepared depthwise "
                "weight for these options (expected [1, KH * KW, C] = [1, 9, 48], groups = C, "
                "not transposed)");
    o.kernel_size[0] = o.kernel_size[1] = 0;
    CHECK_FAILS(lmnn_conv_transpose2d(x, w, (lmnn_tensor){0}, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_conv_transpose2d: kernel_size: expected (KH, KW) >= 1 with a prepared "
                "weight (shape [1, 9, 48]), given (0, 0)");
    CHECK(out.id == 0);
    CHECK_OK(lm_device_get_memory_stats(nn_dev(), LM_BUFFER_DRAM, &dram1));
    CHECK_OK(lm_device_get_memory_stats(nn_dev(), LM_BUFFER_L1, &l11));
    CHECK_EQ_U64(dram1.total_allocated_bytes, dram0.total_allocated_bytes);
    CHECK_EQ_U64(l11.total_allocated_bytes, l10.total_allocated_bytes);
    /* The weight fits with the right options. */
    o.kernel_size[0] = o.kernel_size[1] = 3;
    CHECK_OK(lmnn_conv2d(x, w, (lmnn_tensor){0}, &o, &out));
    lmnn_tensor ts[] = {x, w, w25, w40, wrm, w2, b16, out};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        lmnn_tensor_free(ts[i]);
    free(v);
}

/* The depthwise path's temporaries (taps, products, sums) are freed: once
 * the output is freed, DRAM and L1 are as before the call, first and
 * cached, with bias and activation (PyTorch and prepared weights, NCHW and
 * NHWC, the output in L1), an activation alone and neither. */
static void test_depthwise_memory(void) {
    enum { C = 40, H = 9, W = 8 };
    lmnn_shape xs = LMNN_SHAPE(2, C, H, W), hs = LMNN_SHAPE(2, H, W, C),
               ws = LMNN_SHAPE(C, 1, 3, 3), bs = LMNN_SHAPE(C);
    float *v = nn_rand_floats(2 * C * H * W, -1, 1, 51);
    lmnn_tensor x, xh, w, wp, b, bp;
    CHECK_OK(nn_upload(&xs, v, LMNN_FLOAT32, LMNN_TILE, &x));
    CHECK_OK(nn_upload(&hs, v, LMNN_FLOAT32, LMNN_ROW_MAJOR, &xh));
    CHECK_OK(nn_upload(&ws, v, LMNN_FLOAT32, LMNN_TILE, &w));
    CHECK_OK(nn_upload(&bs, v, LMNN_FLOAT32, LMNN_TILE, &b));
    lmnn_conv2d_options o;
    lmnn_conv2d_options_init(&o);
    o.groups = C;
    o.padding[0] = o.padding[1] = o.padding[2] = o.padding[3] = 1;
    CHECK_OK(lmnn_conv2d_prepare_weights(w, &o, &wp));
    CHECK_OK(lmnn_conv2d_prepare_bias(b, wp, &bp));
    lmnn_memory_config l1 = {.type = LM_BUFFER_L1, .layout = LM_BUFFER_INTERLEAVED};
    struct {
        bool prepared, bias, nhwc, l1;
        lmnn_unary_op act;
    } cases[] = {
        {false, true, false, false, LMNN_RELU}, {true, true, false, false, LMNN_CLAMP},
        {true, true, true, true, LMNN_SILU},    {false, false, false, false, LMNN_SILU},
        {true, false, true, false, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        o.kernel_size[0] = o.kernel_size[1] = cases[i].prepared ? 3 : 0;
        o.activation = cases[i].act;
        o.activation_alpha = cases[i].act == LMNN_CLAMP ? 0 : NAN;
        o.activation_beta = cases[i].act == LMNN_CLAMP ? 6 : NAN;
        o.input_layout = cases[i].nhwc ? LMNN_NHWC : LMNN_NCHW;
        o.output.memory = cases[i].l1 ? l1 : (lmnn_memory_config){0};
        lmnn_tensor wu = cases[i].prepared ? wp : w, bu = {0}, xu = cases[i].nhwc ? xh : x, out;
        if (cases[i].bias) bu = cases[i].prepared ? bp : b;
        for (int call = 0; call < 2; call++) { /* compiling the programs, then cached */
            lm_memory_stats dram0, l10, dram1, l11, mid;
            CHECK_OK(lm_device_get_memory_stats(nn_dev(), LM_BUFFER_DRAM, &dram0));
            CHECK_OK(lm_device_get_memory_stats(nn_dev(), LM_BUFFER_L1, &l10));
            CHECK_OK(lm_device_reset_memory_peak(nn_dev(), LM_BUFFER_DRAM));
            CHECK_OK(lmnn_conv2d(xu, wu, bu, &o, &out));
            /* Temporaries came and went. */
            CHECK_OK(lm_device_get_memory_stats(nn_dev(), LM_BUFFER_DRAM, &mid));
            CHECK(mid.peak_allocated_bytes > mid.total_allocated_bytes);
            lmnn_tensor_free(out);
            CHECK_OK(lm_device_get_memory_stats(nn_dev(), LM_BUFFER_DRAM, &dram1));
            CHECK_OK(lm_device_get_memory_stats(nn_dev(), LM_BUFFER_L1, &l11));
            CHECK_EQ_U64(dram1.total_allocated_bytes, dram0.total_allocated_bytes);
            CHECK_EQ_U64(l11.total_allocated_bytes, l10.total_allocated_bytes);
        }
    }
    lmnn_tensor ts[] = {x, xh, w, wp, b, bp};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        lmnn_tensor_free(ts[i]);
    free(v);
}

/* A small model: conv2d (prepared weight, bias, relu) -> max_pool2d -> a
 * row-major result. The input is a row-major NHWC image. */
static lm_status model(lmnn_tensor x, lmnn_tensor wp, lmnn_tensor b, lmnn_tensor *out) {
    lmnn_conv2d_options o;
    lmnn_conv2d_options_init(&o);
    o.input_layout = LMNN_NHWC;
    o.padding[0] = o.padding[1] = o.padding[2] = o.padding[3] = 1;
    o.kernel_size[0] = o.kernel_size[1] = 3;
    o.activation = LMNN_RELU;
    lmnn_pool2d_options po;
    lmnn_pool2d_options_init(&po);
    po.input_layout = LMNN_NHWC;
    po.kernel_size[0] = po.kernel_size[1] = 2;
    lmnn_tensor y = {0}, z = {0};
    lm_status st = lmnn_conv2d(x, wp, b, &o, &y);
    if (!st) st = lmnn_max_pool2d(y, &po, &z);
    if (!st) st = lmnn_to_layout(z, LMNN_ROW_MAJOR, out);
    lmnn_tensor_free(y);
    lmnn_tensor_free(z);
    return st;
}

/* The model under Light Metal capture replays bit for bit, with its input
 * replaced too; as a metal trace over cached programs it gives the eager
 * results. */
static void test_capture(void) {
    lm_device *dev;
    CHECK_OK(lm_device_open(NULL, &dev));
    enum { N = 1, H = 9, W = 10, C = 5, OC = 6, NX = N * H * W * C, NY = N * 4 * 5 * OC };
    float *x = nn_rand_floats(NX, -1, 1, 1), *x2 = nn_rand_floats(NX, -1, 1, 2);
    float *w = nn_rand_floats(OC * C * 9, -1, 1, 3), *b = nn_rand_floats(OC, -1, 1, 4);
    float live[NY], live2[NY], got[NY];
    lmnn_shape xs = LMNN_SHAPE(N, H, W, C), ws = LMNN_SHAPE(OC, C, 3, 3), bs = LMNN_SHAPE(OC);
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = LMNN_FLOAT32;
    lmnn_tensor wt, wp, bt, xin, y;
    CHECK_OK(lmnn_from_host(dev, &ws, w, OC * C * 9 * sizeof(float), &o, &wt));
    CHECK_OK(lmnn_from_host(dev, &bs, b, OC * sizeof(float), &o, &bt));
    CHECK_OK(lmnn_conv2d_prepare_weights(wt, NULL, &wp));
    o.layout = LMNN_ROW_MAJOR;
    CHECK_OK(lmnn_from_host(dev, &xs, x2, sizeof(float) * NX, &o, &xin));
    CHECK_OK(model(xin, wp, bt, &y));
    CHECK_OK(lmnn_to_host(y, live2, sizeof live2));
    lmnn_tensor_free(xin);
    lmnn_tensor_free(y);

    lm_capture_options co;
    lm_capture_options_init(&co);
    CHECK_OK(lm_light_metal_begin_capture(dev, &co));
    CHECK_OK(lmnn_from_host(dev, &xs, x, sizeof(float) * NX, &o, &xin));
    CHECK_OK(lmnn_capture_name(xin, "x"));
    CHECK_OK(model(xin, wp, bt, &y));
    CHECK_OK(lmnn_capture_name(y, "y"));
    CHECK_OK(lmnn_to_host(y, live, sizeof live));
    lm_binary *bin;
    CHECK_OK(lm_light_metal_end_capture(dev, &bin));
    lmnn_tensor_free(y);

    /* The same model as a metal trace (every op a cache hit). */
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lmnn_program_cache_stats before, after;
    CHECK_OK(lmnn_program_cache_get_stats(dev, &before));
    uint32_t tid;
    CHECK_OK(lm_begin_trace_capture(cq, &tid));
    CHECK_OK(model(xin, wp, bt, &y));
    CHECK_OK(lm_end_trace_capture(cq, tid));
    CHECK_OK(lmnn_program_cache_get_stats(dev, &after));
    CHECK_EQ_U64(after.misses, before.misses);
    CHECK_OK(lm_replay_trace(cq, tid, true));
    CHECK_OK(lmnn_to_host(y, got, sizeof got));
    CHECK(!memcmp(got, live, sizeof got));
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(xin, &info));
    CHECK_OK(lm_enqueue_write_buffer(cq, info.buffer, x2, true));
    CHECK_OK(lm_replay_trace(cq, tid, true));
    CHECK_OK(lmnn_to_host(y, got, sizeof got));
    CHECK(!memcmp(got, live2, sizeof got));
    CHECK_OK(lm_release_trace(dev, tid));
    lmnn_tensor ts[] = {wt, wp, bt, xin, y};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        lmnn_tensor_free(ts[i]);
    CHECK_OK(lm_device_close(dev));

    lm_replay *r;
    REPLAY_RUN(bin, r);
    CHECK_OK(lm_replay_get_output(r, "y", got, sizeof got));
    CHECK(!memcmp(got, live, sizeof got));
    CHECK_OK(lm_replay_set_input(r, "x", x2, sizeof(float) * NX));
    CHECK_OK(lm_replay_run(r, NULL, NULL, NULL));
    CHECK_OK(lm_replay_get_output(r, "y", got, sizeof got));
    CHECK(!memcmp(got, live2, sizeof got));
    lm_replay_close(r);
    lm_binary_free(bin);
    free(x);
    free(x2);
    free(w);
    free(b);
}

int main(void) {
    TEST_RUN(test_shapes);
    TEST_RUN(test_layouts);
    TEST_RUN(test_nchw_planes);
    TEST_RUN(test_pointwise);
    TEST_RUN(test_row_major_out);
    TEST_RUN(test_bf16);
    TEST_RUN(test_bfp8);
    TEST_RUN(test_transpose);
    TEST_RUN(test_transpose_phases);
    TEST_RUN(test_transpose_phases_bfp8);
    TEST_RUN(test_large);
    TEST_RUN(test_gathered);
    TEST_RUN(test_gathered_l1_full);
    TEST_RUN(test_pool_fused);
    TEST_RUN(test_pool_errors);
    TEST_RUN(test_input_dtype);
    TEST_RUN(test_gathered_row_major);
    TEST_RUN(test_threads);
    TEST_RUN(test_errors);
    TEST_RUN(test_depthwise);
    TEST_RUN(test_depthwise_fused);
    TEST_RUN(test_depthwise_forms);
    TEST_RUN(test_depthwise_errors);
    TEST_RUN(test_grouped_compact);
    TEST_RUN(test_depthwise_memory);
    TEST_RUN(test_capture);
    printf("largest |err| / S: %.3g\n", worst_ratio_);
    nn_dev_close();
    return test_summary();
}
