/* What convolution (nn_conv.c) and pooling (nn_pool.c) share: the image
 * brought to row-major NHWC, the patch matrices built from it on the device,
 * and the [N * OH * OW, C] result put back in the caller's order. */
#ifndef LM_NN_CONV_H
#define LM_NN_CONV_H

#include "nn/nn_internal.h"

/* A window over an image: an image of n x h x w pixels of c channels
 * (virtually strided by uh, uw: the pixels sit uh rows apart), padded by pt
 * rows on top and pl columns on the left (negative: cropped), read by a
 * kh x kw kernel with strides sh, sw and dilations dh, dw into oh x ow
 * output pixels.
 *
 * A 3-D window (sp = 3) reads n / od batch entries of d images each (input
 * line (entry * d + z) * h + y) by a kernel of kd depth taps, with stride
 * sd, dilation dd, pd images of padding in front and a virtual stride ud,
 * into od output images an entry: n counts the output images, and the
 * kernel's rows are kd * kh, depth tap after depth tap. A 2-D window is
 * sp = 2 with d = od = kd = sd = dd = ud = 1 and pd = 0. */
typedef struct nn_conv_geom {
    uint32_t n, h, w, c, oh, ow, kh, kw;
    int32_t sh, sw, dh, dw, pt, pl, uh, uw;
    uint32_t sp, d, od, kd;
    int32_t sd, dd, pd, ud;
    /* How the image nn_conv_im2col reads holds its channels: 0 or 1, NHWC
     * (a page per pixel or per image row); C, an NCHW row-major image (a
     * page per row of one channel: nn_conv_planes_fit says when). */
    uint32_t planes;
    /* A max pooling fused after a convolution's product (see
     * nn_mm_gather's pool_*): each unit of patch rows is gathered prow
     * times, the top padding less by pstep more each time (0: none). */
    uint32_t prow;
    int32_t pstep;
} nn_conv_geom;

/* The dims of image `x` in `layout` order: rank 4, or (NHWC, `flat` = the
 * options' batch_size, input_height, input_width, not all 0) any shape
 * whose last dim is C and whose other dims multiply to N * H * W, or whose
 * last dim is W * C and whose other dims multiply to N * H (a page per image
 * row). With `d` (not NULL), also rank 5, [N, C, D, H, W] (NCHW) or [N, D,
 * H, W, C] (NHWC), *d = D (1 for the others). "<op>: input: ..." errors. */
lm_status nn_conv_image_dims(const char *op, const nn_tensor *x, lmnn_image_layout layout,
                             const int32_t *flat, uint32_t *n, uint32_t *c, uint32_t *d,
                             uint32_t *h, uint32_t *w);

/* The 2-D window of geometry g's fields (depth 1, sp = 2). */
void nn_conv_geom_2d(nn_conv_geom *g);

/* A 3-D op's flat input dims (batch_size, input_depth, input_height,
 * input_width: all 0, or all >= 1 with `layout` NHWC) as the 2-D options'
 * (*out_n = N * D, *out_h, *out_w; zeros for none). "<op>: ..." errors. */
lm_status nn_conv_flat_3d(const char *op, lmnn_image_layout layout, const int32_t *dims,
                          int32_t *out_n, int32_t *out_h, int32_t *out_w);

/* The depth of a 3-D convolution, beside the lmnn_conv2d_options that hold
 * its (h, w) parts (lmnn_conv3d turns its options into both). */
typedef struct nn_conv_depth {
    uint32_t kd;    /* the kernel's depth: with a prepared weight */
    uint32_t depth; /* the input's D when it is flat (the 2-D options' batch_size is N * D) */
    int32_t stride, dilation, pad_front, pad_back, output_padding;
} nn_conv_depth;

/* lmnn_conv2d (lmnn_conv_transpose2d with `transpose`), or with `depth` the
 * 3-D convolution of a rank-5 input by a rank-5 weight ([OC, C / groups,
 * KD, KH, KW]; transposed [C, OC / groups, KD, KH, KW]) or one prepared
 * for it, errors named after `op`. */
lm_status nn_conv_run(const char *op, bool transpose, lmnn_tensor input, lmnn_tensor weight,
                      lmnn_tensor bias, const lmnn_conv2d_options *opts, const nn_conv_depth *depth,
                      lmnn_tensor *out);

/* The arguments of the _host weight preparations: a device
 * (LM_ERR_INVALID_HANDLE), non-NULL pointers, a weight of `rank` (or,
 * `matrix`, a prepared rank 2) that `size` bytes of float32 fill
 * (LM_ERR_INVALID_ARGUMENT); `expected` names the shapes taken. */
lm_status nn_conv_check_host_weight(const char *op, lm_device *device, const lmnn_shape *shape,
                                    const float *data, size_t size, const lmnn_tensor *out,
                                    uint32_t rank, bool matrix, const char *expected);

/* The prepared matrix of a weight whose float32 values are `src`, shaped
 * `ws` ([OC, C / groups, KH, KW]; transposed [C, OC / groups, KH, KW]; a
 * 3-D weight with its KD and KH as one dim), as
 * lmnn_conv2d_prepare_weights_host makes it unpacked and not by phases. */
lm_status nn_conv_prepare_host(const char *op, lm_device *device, bool transpose,
                               const lmnn_shape *ws, const float *src, int32_t groups,
                               lmnn_dtype dtype, const lmnn_memory_config *memory,
                               lmnn_tensor *out);

/* Image `x` as a row-major NHWC tensor of float32 or bfloat16 (one page per
 * pixel, or per image row when x has such pages or one channel); with
 * `planes` (an NCHW x, see nn_conv_planes_fit) as a row-major NCHW tensor
 * instead. *out is xh itself when x is that already, else a new tensor the
 * caller frees (free it only when out->id != xh.id). */
lm_status nn_conv_rows(const char *op, lmnn_tensor xh, nn_tensor *x, lmnn_image_layout layout,
                       const int32_t *flat, bool planes, lmnn_tensor *out, nn_tensor **out_t);

/* Whether nn_conv_im2col can read the patches of convolution `g`
 * (NN_PATCH_CONV) straight from an NCHW row-major image of elements of
 * `esize` bytes (g->planes = C), interleaving the channels of each input line
 * as it stages it: whole lines staged (stride and dilation along W only),
 * and few channels (more fill a tile's rows, and the transpose to NHWC
 * wastes nothing). */
bool nn_conv_planes_fit(const nn_conv_geom *g, uint32_t esize);

/* What nn_conv_im2col makes of the image's windows. */
typedef enum nn_patch_mode {
    NN_PATCH_CONV, /* [n * oh * ow, kh * kw * c]: a row per output pixel */
    NN_PATCH_MAX,  /* [n * oh * ow, c]: the max over the taps */
    NN_PATCH_SUM,  /* [n * oh * ow, c]: the sum over the taps */
    /* [n * oh * ow, c]: the sum over the taps of each tap's matrix times its
     * row of `weights` ([kh * kw, 1, c] tiles), in float32: a depthwise
     * convolution, its products never stored */
    NN_PATCH_DEPTHWISE,
} nn_patch_mode;

/* A depthwise convolution's operands (NN_PATCH_DEPTHWISE): the prepared
 * weights [1, KH * KW, C] in tiles, and optionally (NULL, LMNN_UNARY_INVALID:
 * none) a float32 or bfloat16 tile bias of C values and an activation with
 * f(0) = 0 (its nn_unary_chain parameters), applied to the float32 sums in
 * that order before they are rounded and stored; the padding stays zero. */
typedef struct nn_conv_depthwise {
    nn_tensor *weights, *bias;
    lmnn_unary_op activation;
    uint32_t params[NN_UNARY_PARAMS];
} nn_conv_depthwise;

/* The patch matrix of `img` (from nn_conv_rows) on the device, as a new tile
 * tensor in DRAM of `dtype` (required for MAX, SUM and DEPTHWISE; for CONV
 * 0 is img's, and another float dtype rounds the image's values to it as
 * they are tilized), `dw` for DEPTHWISE, else NULL. Positions
 * outside the image read `fill` (float32 bits). MAX and SUM may put
 * `pixels_per_row` (q) consecutive output pixels in each row: [n * oh * ow /
 * q, q * c], the same elements in the same order, q times fewer tiles when c
 * is small (q * c <= 32, q dividing n * oh * ow); 1 (or 0) otherwise. */
lm_status nn_conv_im2col(const char *op, nn_tensor *img, const nn_conv_geom *g, nn_patch_mode mode,
                         uint32_t fill, lmnn_dtype dtype, uint32_t pixels_per_row,
                         const nn_conv_depthwise *dw, lmnn_tensor *out);

/* The result `y` ([n * oh * ow, c] tile, made by the op; consumed: it
 * becomes *out or is freed) as the op's output in `layout` order, in
 * `memory`; NHWC with `flat`: [1, 1, n * oh * ow, c] (ttnn's form). When the
 * tiles stay in place (flat, or ow a multiple of 32) and y is in `memory`
 * already, y itself takes the new shape: no copy. */
lm_status nn_conv_finish(const char *op, lmnn_tensor y, const nn_conv_geom *g, uint32_t c,
                         lmnn_image_layout layout, bool flat, const lmnn_memory_config *memory,
                         lmnn_tensor *out);

/* Checks the options' output_layout and output_image_rows (flat: their
 * flat_output; dtype: the output's); *out_rm: a row-major output. */
lm_status nn_conv_output_layout(const char *op, bool flat, lmnn_layout layout, bool image_rows,
                                lmnn_dtype dtype, bool *out_rm);

/* The result `y` ([n * oh * ow, c] tile, or a packed convolution's
 * [n * oh * ow / p, p * c]; consumed) as the row-major flat image in
 * `memory`: [1, 1, n * oh * ow, c], or with `image_rows` [n * oh, ow * c]. */
lm_status nn_conv_flat_rm(const char *op, lmnn_tensor y, const nn_conv_geom *g, uint32_t c,
                          bool image_rows, const lmnn_memory_config *memory, lmnn_tensor *out);

#endif
