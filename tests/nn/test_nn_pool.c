/* max_pool2d, avg_pool2d and global_avg_pool2d against a float64 host
 * reference with PyTorch's rules (output size with ceil_mode, -inf padding
 * for max, count_include_pad and divisor_override for average): 1x1 kernels,
 * one-pixel images, odd sizes, strides, dilation, asymmetric padding,
 * batches, NCHW / NHWC in both layouts, float32 and bfloat16, a large
 * multi-core case, the program cache and the errors.
 *
 * Bounds, with S = sum over the window of |x| / divisor for average pooling:
 *   max, float32 and bfloat16   exact (the input as stored)
 *   average, float32            |err| <= 1e-6 * S
 *   average, bfloat16           |err| <= 2^-8 * S (one output rounding)
 *   global average              as average with the window H x W */
#include <string.h>

#include "nn_test.h"

typedef struct pool_case {
    uint32_t n, c, h, w, kh, kw;
    int32_t stride[2], pad[4], dil[2], divisor;
    bool avg, ceil_mode, exclude_pad, nhwc, row_major, global;
    bool flat, flat_in; /* flat_output; NHWC given as [1, 1, N * H * W, C] */
    bool rows_in;       /* flat_in as [N * H, W * C]: a page per image row */
    bool rm_out;        /* output_layout ROW_MAJOR (flat implied) */
    bool rows_out;      /* and as [N * OH, OW * C] (output_image_rows) */
    lmnn_dtype dtype;
} pool_case;

static int64_t out_size(int64_t in, int64_t k, int64_t pl, int64_t pr, int64_t s, int64_t d,
                        bool ceil_mode) {
    int64_t num = in + pl + pr - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
    int64_t o = num / s + 1;
    if (ceil_mode && (o - 1) * s >= in + pl) o--;
    return o;
}

static double worst_avg_ = 0;

static void run_case(const char *name, pool_case k, bool cache) {
    for (int i = 0; i < 2; i++)
        if (!k.dil[i]) k.dil[i] = 1;
    if (!k.dtype) k.dtype = LMNN_FLOAT32;
    if (k.global) {
        k.kh = k.h;
        k.kw = k.w;
        k.avg = true;
    }
    int32_t sh = k.stride[0] ? k.stride[0] : (int32_t)k.kh;
    int32_t sw = k.stride[1] ? k.stride[1] : (int32_t)k.kw;
    uint32_t oh = (uint32_t)out_size(k.h, k.kh, k.pad[0], k.pad[1], sh, k.dil[0], k.ceil_mode);
    uint32_t ow = (uint32_t)out_size(k.w, k.kw, k.pad[2], k.pad[3], sw, k.dil[1], k.ceil_mode);
    size_t nx = (size_t)k.n * k.c * k.h * k.w, ny = (size_t)k.n * k.c * oh * ow;
    float *x0 = nn_rand_floats(nx, -2, 2, 5 + nx), *x = malloc(nx * sizeof *x);
    for (size_t i = 0; i < nx; i++)
        x[i] = k.dtype == LMNN_BFLOAT16 ? nn_bf16(x0[i]) : x0[i];
    double *want = malloc(ny * sizeof *want), *scale = malloc(ny * sizeof *scale);
    for (uint32_t n = 0; n < k.n; n++)
        for (uint32_t c = 0; c < k.c; c++)
            for (uint32_t oy = 0; oy < oh; oy++)
                for (uint32_t ox = 0; ox < ow; ox++) {
                    int64_t y0 = (int64_t)oy * sh - k.pad[0], x0_ = (int64_t)ox * sw - k.pad[2];
                    double mx = -INFINITY, sum = 0, sabs = 0;
                    for (uint32_t ky = 0; ky < k.kh; ky++)
                        for (uint32_t kx = 0; kx < k.kw; kx++) {
                            int64_t iy = y0 + (int64_t)ky * k.dil[0],
                                    ix = x0_ + (int64_t)kx * k.dil[1];
                            if (iy < 0 || iy >= k.h || ix < 0 || ix >= k.w) continue;
                            double v = x[((size_t)(n * k.c + c) * k.h + iy) * k.w + ix];
                            mx = v > mx ? v : mx;
                            sum += v;
                            sabs += fabs(v);
                        }
                    /* PyTorch's avg_pool2d divisor. */
                    int64_t y1 = y0 + k.kh, x1 = x0_ + k.kw;
                    if (y1 > (int64_t)k.h + k.pad[1]) y1 = (int64_t)k.h + k.pad[1];
                    if (x1 > (int64_t)k.w + k.pad[3]) x1 = (int64_t)k.w + k.pad[3];
                    int64_t d = (y1 - y0) * (x1 - x0_);
                    if (k.exclude_pad) {
                        int64_t a = y0 < 0 ? 0 : y0, b = x0_ < 0 ? 0 : x0_;
                        int64_t e = y1 > k.h ? k.h : y1, f = x1 > k.w ? k.w : x1;
                        d = (e - a) * (f - b);
                    }
                    if (k.divisor) d = k.divisor;
                    size_t i = ((size_t)(n * k.c + c) * oh + oy) * ow + ox;
                    want[i] = k.avg ? sum / (double)d : mx;
                    scale[i] = k.avg ? sabs / (double)d : fabs(mx);
                }
    float *xin = x0;
    if (k.nhwc) {
        xin = malloc(nx * sizeof *xin);
        for (uint32_t n = 0; n < k.n; n++)
            for (uint32_t c = 0; c < k.c; c++)
                for (uint32_t p = 0; p < k.h * k.w; p++)
                    xin[((size_t)n * k.h * k.w + p) * k.c + c] =
                        x0[((size_t)n * k.c + c) * k.h * k.w + p];
    }
    lmnn_shape xs = k.rows_in   ? LMNN_SHAPE(k.n * k.h, k.w * k.c)
                    : k.flat_in ? LMNN_SHAPE(1, 1, k.n * k.h * k.w, k.c)
                    : k.nhwc    ? LMNN_SHAPE(k.n, k.h, k.w, k.c)
                                : LMNN_SHAPE(k.n, k.c, k.h, k.w);
    lmnn_tensor xt, out;
    CHECK_OK(nn_upload(&xs, xin, k.dtype, k.row_major ? LMNN_ROW_MAJOR : LMNN_TILE, &xt));
    lmnn_pool2d_options o;
    lmnn_pool2d_options_init(&o);
    o.input_layout = k.nhwc ? LMNN_NHWC : LMNN_NCHW;
    o.kernel_size[0] = (int32_t)k.kh;
    o.kernel_size[1] = (int32_t)k.kw;
    memcpy(o.stride, k.stride, sizeof o.stride);
    memcpy(o.padding, k.pad, sizeof o.padding);
    memcpy(o.dilation, k.dil, sizeof o.dilation);
    o.ceil_mode = k.ceil_mode;
    o.count_include_pad = !k.exclude_pad;
    o.divisor_override = k.divisor;
    o.flat_output = k.flat;
    if (k.rm_out) o.output_layout = LMNN_ROW_MAJOR;
    o.output_image_rows = k.rows_out;
    if (k.flat_in) {
        o.batch_size = (int32_t)k.n;
        o.input_height = (int32_t)k.h;
        o.input_width = (int32_t)k.w;
    }
#define RUN(o_)                                                                                    \
    (k.global ? lmnn_global_avg_pool2d(xt, &o, o_)                                                 \
     : k.avg  ? lmnn_avg_pool2d(xt, &o, o_)                                                        \
              : lmnn_max_pool2d(xt, &o, o_))
    CHECK_OK(RUN(&out));
    if (cache) {
        lmnn_program_cache_stats before, after;
        lmnn_tensor out2;
        CHECK_OK(lmnn_program_cache_get_stats(nn_dev(), &before));
        CHECK_OK(RUN(&out2));
        CHECK_OK(lmnn_program_cache_get_stats(nn_dev(), &after));
        CHECK_EQ_U64(after.misses, before.misses);
        CHECK(after.hits > before.hits);
        lmnn_tensor_free(out2);
    }
#undef RUN
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(out, &info));
    lmnn_shape es = k.rows_out ? LMNN_SHAPE(k.n * oh, ow * k.c)
                    : k.flat   ? LMNN_SHAPE(1, 1, k.n * oh * ow, k.c)
                    : k.nhwc   ? LMNN_SHAPE(k.n, oh, ow, k.c)
                               : LMNN_SHAPE(k.n, k.c, oh, ow);
    CHECK(info.shape.rank == es.rank &&
          !memcmp(info.shape.dims, es.dims, sizeof(uint32_t) * es.rank));
    CHECK(info.layout == (k.rm_out ? LMNN_ROW_MAJOR : LMNN_TILE) && info.dtype == k.dtype);
    float *got = nn_download(out);
    CHECK(got);
    if (k.nhwc || k.flat) {
        float *t = malloc(ny * sizeof *t);
        for (uint32_t n = 0; n < k.n; n++)
            for (uint32_t p = 0; p < oh * ow; p++)
                for (uint32_t c = 0; c < k.c; c++)
                    t[((size_t)n * k.c + c) * oh * ow + p] =
                        got[((size_t)n * oh * ow + p) * k.c + c];
        free(got);
        got = t;
    }
    double tol = !k.avg ? 0 : k.dtype == LMNN_FLOAT32 ? 1e-6 : 1.0 / 256, ratio = 0;
    size_t bad = ny;
    for (size_t i = 0; i < ny; i++) {
        double e = fabs(got[i] - want[i]);
        if (isinf(want[i]) && got[i] == want[i]) e = 0;
        double r = e / fmax(scale[i], 1e-30);
        if (e > 0 && r > ratio) ratio = r;
        if (!(e <= tol * scale[i]) && bad == ny) bad = i;
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
    if (k.avg && ratio > worst_avg_) worst_avg_ = ratio;
    lmnn_tensor_free(out);
    lmnn_tensor_free(xt);
    if (xin != x0) free(xin);
    free(got);
    free(x0);
    free(x);
    free(want);
    free(scale);
}

static void test_max(void) {
    /* One channel: the image's rows are its pages (nn_conv_rows). */
    run_case("max one channel 3x3 s2 p1",
             (pool_case){.n = 2,
                         .c = 1,
                         .h = 11,
                         .w = 13,
                         .kh = 3,
                         .kw = 3,
                         .stride = {2, 2},
                         .pad = {1, 1, 1, 1}},
             false);
    run_case("avg one channel row-major 2x2",
             (pool_case){.avg = true,
                         .n = 1,
                         .c = 1,
                         .h = 8,
                         .w = 7,
                         .kh = 2,
                         .kw = 2,
                         .stride = {2, 2},
                         .row_major = true},
             false);
    run_case("max 2x2 28x28", (pool_case){.n = 1, .c = 3, .h = 28, .w = 28, .kh = 2, .kw = 2},
             true);
    run_case("max 3x3 s2 p1 13x17 ceil",
             (pool_case){.n = 2,
                         .c = 3,
                         .h = 13,
                         .w = 17,
                         .kh = 3,
                         .kw = 3,
                         .stride = {2, 2},
                         .pad = {1, 1, 1, 1},
                         .ceil_mode = true},
             false);
    run_case("max 3x3 dilation 2 pad 2",
             (pool_case){.n = 1,
                         .c = 4,
                         .h = 7,
                         .w = 7,
                         .kh = 3,
                         .kw = 3,
                         .stride = {1, 1},
                         .dil = {2, 2},
                         .pad = {2, 2, 2, 2}},
             false);
    run_case("max 1x1", (pool_case){.n = 1, .c = 5, .h = 6, .w = 5, .kh = 1, .kw = 1}, false);
    run_case("max one pixel, 3x3 pad 1",
             (pool_case){.n = 1,
                         .c = 2,
                         .h = 1,
                         .w = 1,
                         .kh = 3,
                         .kw = 3,
                         .stride = {1, 1},
                         .pad = {1, 1, 1, 1}},
             false);
    run_case("max asym pad, (2, 3) kernel",
             (pool_case){.n = 1,
                         .c = 3,
                         .h = 9,
                         .w = 10,
                         .kh = 2,
                         .kw = 3,
                         .stride = {2, 1},
                         .pad = {0, 1, 1, 0}},
             false);
    run_case("max NHWC row-major",
             (pool_case){.n = 2,
                         .c = 6,
                         .h = 8,
                         .w = 9,
                         .kh = 3,
                         .kw = 3,
                         .stride = {2, 2},
                         .nhwc = true,
                         .row_major = true},
             true);
    run_case("max NCHW row-major bf16",
             (pool_case){.n = 1,
                         .c = 6,
                         .h = 8,
                         .w = 9,
                         .kh = 2,
                         .kw = 2,
                         .row_major = true,
                         .dtype = LMNN_BFLOAT16},
             false);
}

static void test_avg(void) {
    run_case("avg 2x2 28x28",
             (pool_case){.avg = true, .n = 1, .c = 3, .h = 28, .w = 28, .kh = 2, .kw = 2}, true);
    run_case("avg 3x3 s2 p1 ceil 13x17",
             (pool_case){.avg = true,
                         .n = 2,
                         .c = 3,
                         .h = 13,
                         .w = 17,
                         .kh = 3,
                         .kw = 3,
                         .stride = {2, 2},
                         .pad = {1, 1, 1, 1},
                         .ceil_mode = true},
             true);
    run_case("avg exclude pad",
             (pool_case){.avg = true,
                         .n = 1,
                         .c = 4,
                         .h = 7,
                         .w = 7,
                         .kh = 3,
                         .kw = 3,
                         .stride = {1, 1},
                         .pad = {1, 1, 1, 1},
                         .exclude_pad = true},
             false);
    run_case("avg exclude pad ceil asym",
             (pool_case){.avg = true,
                         .n = 1,
                         .c = 2,
                         .h = 8,
                         .w = 11,
                         .kh = 3,
                         .kw = 2,
                         .stride = {2, 3},
                         .pad = {1, 0, 1, 1},
                         .exclude_pad = true,
                         .ceil_mode = true},
             false);
    run_case("avg divisor_override 5",
             (pool_case){.avg = true,
                         .n = 1,
                         .c = 3,
                         .h = 6,
                         .w = 6,
                         .kh = 3,
                         .kw = 3,
                         .stride = {1, 1},
                         .pad = {1, 1, 1, 1},
                         .divisor = 5},
             false);
    run_case("avg one pixel",
             (pool_case){.avg = true, .n = 1, .c = 3, .h = 1, .w = 1, .kh = 1, .kw = 1}, false);
    run_case("avg NHWC tile bf16",
             (pool_case){.avg = true,
                         .n = 2,
                         .c = 5,
                         .h = 9,
                         .w = 9,
                         .kh = 3,
                         .kw = 3,
                         .stride = {2, 2},
                         .nhwc = true,
                         .dtype = LMNN_BFLOAT16},
             false);
}

/* The flat NHWC form (ttnn's): in, out, or both, whatever the input's order. */
static void test_flat(void) {
    pool_case k = {
        .n = 3, .c = 5, .h = 7, .w = 9, .kh = 3, .kw = 2, .stride = {2, 2}, .pad = {1, 1, 1, 0}};
    k.flat = true;
    run_case("max NCHW in, flat output", k, false);
    k.nhwc = k.flat_in = true;
    run_case("max flat in, flat output", k, true);
    k.flat = false;
    k.row_major = true;
    run_case("max flat row-major in, 4-D output", k, false);
    k.avg = k.flat = true;
    k.row_major = false;
    run_case("avg flat in, flat output", k, false);
    /* Row-major results, a page per pixel or per image row, and images
     * read a row per page (output_image_rows). */
    k.avg = false;
    k.rm_out = true;
    run_case("max flat in, row-major output", k, true);
    k.rows_out = true;
    run_case("max flat in, image rows output", k, false);
    k.rows_in = k.row_major = true;
    run_case("max image rows in and out", k, true);
    k.avg = true;
    k.exclude_pad = true;
    run_case("avg image rows in and out", k, false);
    k = (pool_case){.n = 2,
                    .c = 8,
                    .h = 28,
                    .w = 28,
                    .kh = 2,
                    .kw = 2,
                    .stride = {2, 2},
                    .nhwc = true,
                    .flat_in = true,
                    .rows_in = true,
                    .row_major = true,
                    .flat = true,
                    .rm_out = true,
                    .rows_out = true,
                    .dtype = LMNN_BFLOAT16};
    run_case("max 2x2 28x28x8 bf16, image rows", k, false);
    /* Several output pixels a row of the reduction (C well below a tile):
     * uniform average divisors, all four pixels in one row, and C = 3 with
     * 180 pixels (4 a row: 8 do not divide them). */
    k.avg = true;
    k.dtype = 0;
    run_case("avg 2x2 28x28x8, image rows", k, false);
    k.h = k.w = 6;
    k.n = 1;
    k.kh = k.kw = k.stride[0] = k.stride[1] = 3;
    run_case("avg 3x3 6x6x8, 4 pixels in one row", k, false);
    k.avg = false;
    k.c = 3;
    k.n = 5;
    k.h = k.w = 12;
    k.kh = k.kw = k.stride[0] = k.stride[1] = 2;
    run_case("max 2x2 12x12x3 x5, image rows", k, false);
}

static void test_global(void) {
    run_case("global 7x7x40", (pool_case){.global = true, .n = 2, .c = 40, .h = 7, .w = 7}, true);
    run_case("global NHWC rm 13x17",
             (pool_case){
                 .global = true, .n = 1, .c = 3, .h = 13, .w = 17, .nhwc = true, .row_major = true},
             false);
    run_case("global one pixel bf16",
             (pool_case){.global = true, .n = 1, .c = 5, .h = 1, .w = 1, .dtype = LMNN_BFLOAT16},
             false);
}

/* Many taps and channels: a unit's taps fill the L1 budget, so the channel
 * tiles are cut into narrow blocks. */
static void test_many_taps(void) {
    run_case("max 7x7 over 1100 channels",
             (pool_case){.n = 1,
                         .c = 1100,
                         .h = 9,
                         .w = 10,
                         .kh = 7,
                         .kw = 7,
                         .stride = {2, 3},
                         .pad = {3, 3, 3, 3}},
             false);
    run_case("avg 7x7 over 1100 channels",
             (pool_case){.avg = true,
                         .n = 1,
                         .c = 1100,
                         .h = 9,
                         .w = 10,
                         .kh = 7,
                         .kw = 7,
                         .stride = {2, 3},
                         .pad = {3, 0, 1, 3},
                         .exclude_pad = true,
                         .nhwc = true,
                         .row_major = true},
             false);
}

static void test_large(void) {
    run_case("max 3x3 s2 p1 112x112x64 NHWC",
             (pool_case){.n = 1,
                         .c = 64,
                         .h = 112,
                         .w = 112,
                         .kh = 3,
                         .kw = 3,
                         .stride = {2, 2},
                         .pad = {1, 1, 1, 1},
                         .nhwc = true,
                         .row_major = true,
                         .dtype = LMNN_BFLOAT16},
             false);
    run_case("avg 2x2 56x56x64 NCHW",
             (pool_case){.avg = true, .n = 1, .c = 64, .h = 56, .w = 56, .kh = 2, .kw = 2}, false);
}

/* A NaN in a window makes its max NaN (as PyTorch); -inf stays -inf. */
static void test_nan(void) {
    float x[16];
    for (int i = 0; i < 16; i++)
        x[i] = (float)i;
    x[5] = NAN;
    x[10] = -INFINITY;
    x[11] = x[14] = x[15] = -INFINITY;
    lmnn_shape xs = LMNN_SHAPE(1, 1, 4, 4);
    lmnn_tensor xt, out;
    CHECK_OK(nn_upload(&xs, x, LMNN_FLOAT32, LMNN_TILE, &xt));
    lmnn_pool2d_options o;
    lmnn_pool2d_options_init(&o);
    o.kernel_size[0] = o.kernel_size[1] = 2;
    CHECK_OK(lmnn_max_pool2d(xt, &o, &out));
    float *got = nn_download(out);
    CHECK(got);
    CHECK(isnan(got[0]) && got[1] == 7 && got[2] == 13 && got[3] == -INFINITY);
    free(got);
    lmnn_tensor_free(out);
    lmnn_tensor_free(xt);
}

static void test_errors(void) {
    lmnn_shape xs = LMNN_SHAPE(1, 3, 5, 5), s3 = LMNN_SHAPE(3, 5, 5);
    float *v = nn_rand_floats(100, -1, 1, 3);
    lmnn_tensor x, x3, xi, out, freed;
    CHECK_OK(nn_upload(&xs, v, LMNN_FLOAT32, LMNN_TILE, &x));
    CHECK_OK(nn_upload(&s3, v, LMNN_FLOAT32, LMNN_TILE, &x3));
    CHECK_OK(nn_upload(&s3, v, LMNN_FLOAT32, LMNN_TILE, &freed));
    lmnn_tensor_free(freed);
    lmnn_tensor_options io;
    lmnn_tensor_options_init(&io);
    io.dtype = LMNN_INT32;
    int32_t iv[75] = {0};
    CHECK_OK(lmnn_from_host(nn_dev(), &xs, iv, sizeof iv, &io, &xi));
    lmnn_pool2d_options o;
    lmnn_pool2d_options_init(&o);
    CHECK_FAILS(lmnn_max_pool2d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool2d: kernel_size: expected (h, w) >= 1, given (0, 0)");
    CHECK_FAILS(lmnn_max_pool2d(x, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool2d: opts is NULL");
    o.kernel_size[0] = o.kernel_size[1] = 3;
    CHECK_FAILS(lmnn_max_pool2d(x, &o, NULL), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool2d: out is NULL");
    CHECK_FAILS(lmnn_max_pool2d(freed, &o, &out), LM_ERR_INVALID_HANDLE, "lmnn_max_pool2d: input");
    CHECK_FAILS(lmnn_max_pool2d(xi, &o, &out), LM_ERR_INVALID_ARGUMENT, "lmnn_max_pool2d: input");
    CHECK_FAILS(lmnn_avg_pool2d(x3, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_avg_pool2d: input: expected rank 4 (N, C, H, W), given shape [3, 5, 5]");
    o.stride[0] = 1;
    CHECK_FAILS(lmnn_max_pool2d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool2d: stride: expected (h, w) >= 1, or (0, 0) for the kernel size, "
                "given (1, 0)");
    o.stride[0] = o.stride[1] = -1;
    CHECK_FAILS(lmnn_max_pool2d(x, &o, &out), LM_ERR_INVALID_ARGUMENT, "lmnn_max_pool2d: stride");
    o.stride[0] = o.stride[1] = 0;
    o.padding[1] = 2;
    CHECK_FAILS(lmnn_max_pool2d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool2d: padding: expected [top, bottom, left, right] between 0 and half "
                "the (dilated) kernel (1 along h), given [0, 2, 0, 0]");
    o.padding[1] = 0;
    o.dilation[1] = 2;
    CHECK_FAILS(lmnn_avg_pool2d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_avg_pool2d: dilation: expected (1, 1) for average pooling, given (1, 2)");
    o.dilation[1] = 3;
    CHECK_FAILS(lmnn_max_pool2d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool2d: kernel_size: the (dilated) kernel does not fit the padded input "
                "5 x 5: the output would be 1 x 0");
    o.dilation[1] = 0;
    CHECK_FAILS(lmnn_max_pool2d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool2d: dilation: expected (h, w) >= 1, given (1, 0)");
    o.dilation[1] = 1;
    o.divisor_override = -1;
    CHECK_FAILS(lmnn_avg_pool2d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_avg_pool2d: divisor_override: expected >= 1 or 0 (none), given -1");
    o.divisor_override = 0;
    o.kernel_size[0] = 6;
    CHECK_FAILS(lmnn_max_pool2d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool2d: kernel_size: the (dilated) kernel does not fit");
    o.kernel_size[0] = 3;
    o.output.dtype = LMNN_INT32;
    CHECK_FAILS(lmnn_max_pool2d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool2d: output.dtype: expected a float dtype, given int32");
    CHECK_FAILS(lmnn_global_avg_pool2d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_global_avg_pool2d: output.dtype: expected a float dtype, given int32");
    o.output.dtype = 0;
    /* Row-major outputs: flat ones only, not bfloat8_b, image rows only
     * row-major. */
    o.output_layout = LMNN_ROW_MAJOR;
    CHECK_FAILS(lmnn_max_pool2d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool2d: output_layout: row_major needs flat_output (a flat NHWC image)");
    o.flat_output = true;
    o.output.dtype = LMNN_BFLOAT8_B;
    CHECK_FAILS(lmnn_avg_pool2d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_avg_pool2d: output_layout: row_major needs a float32 or bfloat16 output, "
                "given bfloat8_b");
    o.output.dtype = 0;
    o.output_layout = (lmnn_layout)7;
    CHECK_FAILS(lmnn_max_pool2d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool2d: output_layout: unknown layout 7");
    o.output_layout = LMNN_TILE;
    o.output_image_rows = true;
    CHECK_FAILS(lmnn_max_pool2d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool2d: output_image_rows: needs output_layout row_major");
    o.output_image_rows = o.flat_output = false;
    o.input_layout = (lmnn_image_layout)3;
    CHECK_FAILS(lmnn_global_avg_pool2d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_global_avg_pool2d: input_layout: unknown layout 3");
    CHECK_FAILS(lmnn_global_avg_pool2d(x3, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_global_avg_pool2d: input: expected rank 4");
    o.input_layout = LMNN_NCHW;
    CHECK_OK(lmnn_max_pool2d(x, &o, &out)); /* the device still works */
    lmnn_tensor_free(out);
    lmnn_tensor_free(x);
    lmnn_tensor_free(x3);
    lmnn_tensor_free(xi);
    free(v);
}

/* lmnn_avg_pool2d_divisors and lmnn_avg_pool3d_divisors: the divisors an
 * average pooling whose windows differ would upload, made once. Given as
 * opts.divisors the pooling gives the same bits without the upload, also
 * inside a metal trace, which may not upload them; bad ones are refused. */
static void test_divisors(void) {
    lm_command_queue *cq = lm_device_command_queue(nn_dev(), 0);
    float *v = nn_rand_floats(2 * 3 * 7 * 9, -2, 2, 11);
    lmnn_shape xs = LMNN_SHAPE(2, 3, 7, 9);
    lmnn_tensor x, d, a, b, t, out;
    CHECK_OK(nn_upload(&xs, v, LMNN_FLOAT32, LMNN_TILE, &x));
    lmnn_pool2d_options o;
    lmnn_pool2d_options_init(&o);
    o.kernel_size[0] = o.kernel_size[1] = 3;
    o.stride[0] = o.stride[1] = 2;
    for (int i = 0; i < 4; i++)
        o.padding[i] = 1;
    o.count_include_pad = false; /* 4 x 5 outputs, corners of 4 elements */
    CHECK_OK(lmnn_avg_pool2d_divisors(x, &o, &d));
    lmnn_tensor_info info;
    CHECK_OK(lmnn_tensor_get_info(d, &info));
    CHECK(info.dtype == LMNN_FLOAT32 && info.layout == LMNN_TILE && info.shape.rank == 2 &&
          info.shape.dims[0] == 2 * 4 * 5 && info.shape.dims[1] == 1);
    float *dv = nn_download(d);
    CHECK(dv && dv[0] == 0.25f && dv[1] == 1.0f / 6 && dv[6] == 1.0f / 9 && dv[20] == 0.25f);
    free(dv);
    CHECK_OK(lmnn_avg_pool2d(x, &o, &a));
    o.divisors = d;
    CHECK_OK(lmnn_avg_pool2d(x, &o, &b));
    CHECK(nn_same_bits(a, b));
    /* In a trace: with the divisors, and without (the upload refused). */
    uint32_t tid;
    CHECK_OK(lm_begin_trace_capture(cq, &tid));
    lm_status st = lmnn_avg_pool2d(x, &o, &t);
    CHECK_OK(lm_end_trace_capture(cq, tid));
    CHECK_OK(st);
    CHECK_OK(lm_replay_trace(cq, tid, true));
    CHECK(nn_same_bits(a, t));
    CHECK_OK(lm_release_trace(nn_dev(), tid));
    lmnn_tensor_free(t);
    o.divisors = (lmnn_tensor){0};
    CHECK_OK(lm_begin_trace_capture(cq, &tid));
    st = lmnn_avg_pool2d(x, &o, &t);
    CHECK_OK(lm_end_trace_capture(cq, tid));
    CHECK(st == LM_ERR_INVALID_STATE && strstr(lm_last_error(), "capturing a trace"));
    CHECK_OK(lm_release_trace(nn_dev(), tid));
    /* One divisor for every window: none to make, and none taken. */
    lmnn_pool2d_options u = o;
    u.count_include_pad = true;
    lmnn_tensor none;
    CHECK_OK(lmnn_avg_pool2d_divisors(x, &u, &none));
    CHECK(none.id == 0);
    u.divisors = d;
    CHECK_FAILS(lmnn_avg_pool2d(x, &u, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_avg_pool2d: divisors: given, but every window of this pooling divides by 9 "
                "(lmnn_avg_pool2d_divisors gives none)");
    o.divisors = d;
    CHECK_FAILS(lmnn_max_pool2d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_max_pool2d: divisors: given to a max pooling");
    o.stride[1] = 1; /* 4 x 9 outputs: another shape */
    CHECK_FAILS(lmnn_avg_pool2d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_avg_pool2d: divisors: expected the float32 tile tensor [72, 1] on the "
                "input's device that lmnn_avg_pool2d_divisors gives, given float32 tile [40, 1]");
    o.divisors = x;
    CHECK_FAILS(lmnn_avg_pool2d(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "given float32 tile [2, 3, 7, 9]");
    o.divisors = (lmnn_tensor){d.id + 1000};
    CHECK_FAILS(lmnn_avg_pool2d(x, &o, &out), LM_ERR_INVALID_HANDLE, "lmnn_avg_pool2d: divisors");
    CHECK_FAILS(lmnn_avg_pool2d_divisors(x, &o, NULL), LM_ERR_INVALID_ARGUMENT,
                "lmnn_avg_pool2d_divisors: out_divisors is NULL");
    CHECK_FAILS(lmnn_avg_pool2d_divisors(x, NULL, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_avg_pool2d_divisors: opts is NULL");
    o.kernel_size[0] = 0;
    CHECK_FAILS(lmnn_avg_pool2d_divisors(x, &o, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_avg_pool2d_divisors: kernel_size: expected (h, w) >= 1, given (0, 3)");
    CHECK(out.id == 0);
    /* 3-D: [1, 2, 5, 6, 7], kernel 3, stride 2, padding 1: 3 x 3 x 4 outputs. */
    float *v3 = nn_rand_floats(2 * 5 * 6 * 7, -2, 2, 13);
    lmnn_shape s3 = LMNN_SHAPE(1, 2, 5, 6, 7);
    lmnn_tensor x3, d3, a3, b3;
    CHECK_OK(nn_upload(&s3, v3, LMNN_FLOAT32, LMNN_TILE, &x3));
    lmnn_pool3d_options p;
    lmnn_pool3d_options_init(&p);
    for (int i = 0; i < 3; i++) {
        p.kernel_size[i] = 3;
        p.stride[i] = 2;
        p.padding[2 * i] = p.padding[2 * i + 1] = 1;
    }
    p.count_include_pad = false;
    CHECK_OK(lmnn_avg_pool3d_divisors(x3, &p, &d3));
    CHECK_OK(lmnn_tensor_get_info(d3, &info));
    CHECK(info.shape.rank == 2 && info.shape.dims[0] == 3 * 3 * 4 && info.shape.dims[1] == 1);
    dv = nn_download(d3);
    CHECK(dv && dv[0] == 0.125f); /* a corner: 2 x 2 x 2 */
    free(dv);
    CHECK_OK(lmnn_avg_pool3d(x3, &p, &a3));
    p.divisors = d3;
    CHECK_OK(lmnn_avg_pool3d(x3, &p, &b3));
    CHECK(nn_same_bits(a3, b3));
    p.stride[0] = 1;
    CHECK_FAILS(lmnn_avg_pool3d(x3, &p, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_avg_pool3d: divisors: expected the float32 tile tensor [60, 1] on the "
                "input's device that lmnn_avg_pool3d_divisors gives");
    CHECK_FAILS(lmnn_avg_pool3d_divisors(x3, &p, NULL), LM_ERR_INVALID_ARGUMENT,
                "lmnn_avg_pool3d_divisors: out_divisors is NULL");
    p.kernel_size[0] = 0;
    CHECK_FAILS(lmnn_avg_pool3d_divisors(x3, &p, &out), LM_ERR_INVALID_ARGUMENT,
                "lmnn_avg_pool3d_divisors: kernel_size: expected (d, h, w) >= 1");
    lmnn_tensor all[] = {x, d, a, b, x3, d3, a3, b3};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        lmnn_tensor_free(all[i]);
    free(v);
    free(v3);
}

int main(void) {
    TEST_RUN(test_max);
    TEST_RUN(test_avg);
    TEST_RUN(test_flat);
    TEST_RUN(test_global);
    TEST_RUN(test_many_taps);
    TEST_RUN(test_nan);
    TEST_RUN(test_large);
    TEST_RUN(test_errors);
    TEST_RUN(test_divisors);
    printf("largest average |err| / S: %.3g\n", worst_avg_);
    nn_dev_close();
    return test_summary();
}
