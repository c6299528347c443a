/* Convolution benchmark.
 *
 * nn_conv2d_vs_openblas: lmnn_conv2d of a 3x3, 64 -> 64 channel convolution
 *   (padding 1, stride 1) on a 1 x 56 x 56 x 64 image: bfloat16 input
 *   (row-major NHWC, the op's fast path, as ttnn takes it) and a prepared
 *   bfloat16 weight, float32 accumulation, bfloat16 result in ttnn's flat
 *   form [1, 1, 3136, 64] (flat_output), in DRAM, on the whole grid; against the same convolution
 * on the host in float32: an im2col loop (one thread) and OpenBLAS sgemm (3136 x 576 by 576 x 64)
 * on as many threads as the simulator runs cores on. Each side's time is the median of several runs
 * (interleaved, so load from elsewhere hits both alike) after a warm-up that compiles the kernels
 * and fills the program cache; ours is the op call up to lm_finish (its outputs' allocation
 *   included, the free not). The figure is host time / our time: higher is
 *   better. nn_conv2d_nhwc4d_vs_openblas is the same with the result
 *   reshaped to [1, 56, 56, 64] on the device (56 is not a multiple of 32,
 *   so that is a copy). nn_conv2d_nchw_ms is the op on the same image as
 *   an NCHW tile tensor (PyTorch's order; the image is transposed to NHWC
 *   rows on the device and the result back, a few passes more).
 *   nn_conv2d_matmul_ms is the op's matmul alone (lmnn_linear of the
 *   3136 x 576 bfloat16 patch matrix by the prepared weight, same options);
 *   nn_conv2d_im2col_ms the rest (the patch gather on the device and the
 *   output's reshape). nn_conv2d_openblas_ms is the host side's median.
 */
#include <cblas.h>
#include <string.h>

#include "bench.h"
#include "lightmetal/nn.h"

#define REPS 7
#define H 56
#define W 56
#define C 64
#define OC 64
#define K 3

static lmnn_tensor upload(lm_device *dev, const lmnn_shape *shape, const float *x,
                          lmnn_layout layout) {
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = LMNN_BFLOAT16;
    o.layout = layout;
    lmnn_tensor t;
    if (lmnn_from_host(dev, shape, x, lmnn_shape_volume(shape) * sizeof *x, &o, &t))
        bench_die("from_host");
    return t;
}

/* The host convolution: im2col of the NHWC image into cols [H * W, K * K * C]
 * (zero padding 1), then cols @ wm [K * K * C, OC]. */
static void host_conv(const float *img, float *cols, const float *wm, float *out) {
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            float *row = cols + ((size_t)y * W + x) * K * K * C;
            for (int ky = 0; ky < K; ky++)
                for (int kx = 0; kx < K; kx++) {
                    int iy = y - 1 + ky, ix = x - 1 + kx;
                    float *dst = row + (ky * K + kx) * C;
                    if (iy < 0 || iy >= H || ix < 0 || ix >= W)
                        memset(dst, 0, C * sizeof *dst);
                    else
                        memcpy(dst, img + ((size_t)iy * W + ix) * C, C * sizeof *dst);
                }
        }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, H * W, OC, K * K * C, 1.0f, cols,
                K * K * C, wm, OC, 0.0f, out, OC);
}

int main(void) {
    lm_device *dev;
    lm_device_info info;
    if (lm_device_open(NULL, &dev) || lm_device_get_info(dev, &info)) bench_die("open");
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    openblas_set_num_threads((int)info.num_threads);

    size_t nimg = (size_t)H * W * C, nw = (size_t)OC * C * K * K, ncols = (size_t)H * W * K * K * C;
    float *img = malloc(nimg * sizeof *img), *w = malloc(nw * sizeof *w);
    float *wm = malloc(nw * sizeof *wm), *cols = malloc(ncols * sizeof *cols);
    float *hout = malloc((size_t)H * W * OC * sizeof *hout);
    if (!img || !w || !wm || !cols || !hout) bench_die("out of memory");
    for (size_t i = 0; i < nimg; i++)
        img[i] = (float)(i % 253) / 126.0f - 1.0f;
    for (size_t i = 0; i < nw; i++)
        w[i] = (float)(i % 239) / 119.0f - 1.0f;
    /* wm[(ky * K + kx) * C + c][oc] = w[oc][c][ky][kx] */
    for (int o = 0; o < OC; o++)
        for (int c = 0; c < C; c++)
            for (int t = 0; t < K * K; t++)
                wm[((size_t)t * C + c) * OC + o] = w[((size_t)o * C + c) * K * K + t];

    lmnn_shape xs = LMNN_SHAPE(1, H, W, C), ws = LMNN_SHAPE(OC, C, K, K);
    lmnn_tensor x = upload(dev, &xs, img, LMNN_ROW_MAJOR), wt = upload(dev, &ws, w, LMNN_TILE);
    lmnn_conv2d_options o;
    lmnn_conv2d_options_init(&o);
    o.input_layout = LMNN_NHWC;
    o.padding[0] = o.padding[1] = o.padding[2] = o.padding[3] = 1;
    o.fp32_accumulate = LMNN_FP32_ACC_ON;
    o.flat_output = true;
    lmnn_tensor wp, y;
    if (lmnn_conv2d_prepare_weights(wt, &o, &wp)) bench_die("prepare");
    o.kernel_size[0] = o.kernel_size[1] = K;
    lmnn_conv2d_options o4 = o;
    o4.flat_output = false;
    lmnn_conv2d_options oc = o4;
    oc.input_layout = LMNN_NCHW;
    lmnn_shape cs = LMNN_SHAPE(1, C, H, W);
    lmnn_tensor xc = upload(dev, &cs, img, LMNN_TILE); /* the values do not matter here */
    /* The matmul alone, on the patch matrix. */
    host_conv(img, cols, wm, hout);
    lmnn_shape ps = LMNN_SHAPE(H * W, K * K * C);
    lmnn_tensor patches = upload(dev, &ps, cols, LMNN_TILE);
    lmnn_matmul_options mo;
    lmnn_matmul_options_init(&mo);
    mo.fp32_accumulate = LMNN_FP32_ACC_ON;
    if (lmnn_conv2d(x, wp, (lmnn_tensor){0}, &o, &y) || lm_finish(cq) || lmnn_tensor_free(y) ||
        lmnn_conv2d(x, wp, (lmnn_tensor){0}, &o4, &y) || lm_finish(cq) || lmnn_tensor_free(y) ||
        lmnn_conv2d(xc, wp, (lmnn_tensor){0}, &oc, &y) || lm_finish(cq) || lmnn_tensor_free(y) ||
        lmnn_linear(patches, wp, (lmnn_tensor){0}, &mo, &y) || lm_finish(cq) || lmnn_tensor_free(y))
        bench_die("warm-up");
    double t_blas[REPS], t_nn[REPS], t_mm[REPS], t_4d[REPS], t_c[REPS];
    for (int r = 0; r < REPS; r++) {
        double t0 = bench_now();
        host_conv(img, cols, wm, hout);
        double t1 = bench_now();
        if (lmnn_conv2d(x, wp, (lmnn_tensor){0}, &o, &y) || lm_finish(cq)) bench_die("conv2d");
        double t2 = bench_now();
        if (lmnn_tensor_free(y)) bench_die("free");
        double t3 = bench_now();
        if (lmnn_linear(patches, wp, (lmnn_tensor){0}, &mo, &y) || lm_finish(cq))
            bench_die("linear");
        double t4 = bench_now();
        if (lmnn_tensor_free(y)) bench_die("free");
        double t5 = bench_now();
        if (lmnn_conv2d(x, wp, (lmnn_tensor){0}, &o4, &y) || lm_finish(cq)) bench_die("conv2d");
        double t6 = bench_now();
        if (lmnn_tensor_free(y)) bench_die("free");
        t_4d[r] = t6 - t5;
        double t7 = bench_now();
        if (lmnn_conv2d(xc, wp, (lmnn_tensor){0}, &oc, &y) || lm_finish(cq)) bench_die("conv2d");
        t_c[r] = bench_now() - t7;
        if (lmnn_tensor_free(y)) bench_die("free");
        t_blas[r] = t1 - t0;
        t_nn[r] = t2 - t1;
        t_mm[r] = t4 - t3;
    }
    double blas = bench_median(t_blas, REPS), nn = bench_median(t_nn, REPS),
           mm = bench_median(t_mm, REPS);
    bench_report("nn_conv2d_ms", nn * 1e3);
    bench_report("nn_conv2d_matmul_ms", mm * 1e3);
    bench_report("nn_conv2d_im2col_ms", (nn - mm) * 1e3);
    bench_report("nn_conv2d_openblas_ms", blas * 1e3);
    bench_report("nn_conv2d_nchw_ms", bench_median(t_c, REPS) * 1e3);
    bench_report("nn_conv2d_gflops", 2.0 * H * W * OC * K * K * C / nn * 1e-9);
    bench_report("nn_conv2d_vs_openblas", blas / nn);
    bench_report("nn_conv2d_nhwc4d_vs_openblas", blas / bench_median(t_4d, REPS));

    lmnn_tensor_free(x);
    lmnn_tensor_free(xc);
    lmnn_tensor_free(wt);
    lmnn_tensor_free(wp);
    lmnn_tensor_free(patches);
    free(img), free(w), free(wm), free(cols), free(hout);
    lm_device_close(dev);
    return 0;
}
