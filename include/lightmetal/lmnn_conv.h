/* lightmetal op library — convolution and pooling (ttnn.conv2d,
 * ttnn.conv_transpose2d, ttnn.max_pool2d, ttnn.avg_pool2d,
 * ttnn.global_avg_pool2d), with PyTorch's semantics.
 *
 * Images are rank-4 float tensors (float32, bfloat16; bfloat8_b is read as
 * bfloat16), either layout, in NCHW ([N, C, H, W], PyTorch's and the
 * default) or NHWC ([N, H, W, C], ttnn's) order, as options.input_layout
 * says. The result is a tile tensor in the same order.
 *
 * How it runs (as ttnn does): the image is brought to row-major NHWC on the
 * device (for NCHW a reshape, a tile transpose and an untilize; a flat
 * NHWC tile image one untilize, into a page per image row; an NHWC
 * row-major input is used as it is, so that is the fast path); a data
 * movement kernel then gathers each output pixel's receptive field into
 * one row of a patch matrix
 * ("im2col": [N * OH * OW, KH * KW * C], zeros where the window leaves the
 * image) and tilizes it on the fly (an NCHW image of 2 to 16 channels, a
 * network's RGB input, is read as it is instead, row-major, each input
 * line's channels interleaved as the kernel stages the line, when its lines
 * can be staged whole: no dilation along W, not a strided transposed
 * convolution; its transpose would be mostly padding; a 1x1 convolution of
 * stride 1 without padding over a float32 or bfloat16 NHWC tile image whose
 * rows are its pixels in order, [N, H, W, C] with W a multiple of 32 or
 * [1, 1, N * H * W, C], takes the image as its patch matrix: nothing is
 * untilized or gathered); the existing multi-core lmnn_linear
 * multiplies it by the prepared weight matrix [KH * KW * C, OC] and adds the
 * bias and the fused activation; the [N * OH * OW, OC] result is the NHWC
 * output (for NCHW it is transposed tile by tile and reshaped). When the
 * prepared weight and a tile row of patches fit in the L1 left below the
 * tensors L1 holds at the call (with room to spare) and the output channels
 * fit the destination registers (256 with float32 accumulation, 512
 * without), the gather and the product are one program instead: each core
 * tilizes the rows it gathers and multiplies them by the weight it keeps,
 * and the patch matrix is never stored (the same result, bit for bit).
 * Pooling
 * gathers each window's taps the same way (padding -inf for max) and reduces
 * them as they arrive (max, or a float32 sum then multiplied by 1 / divisor),
 * on the device.
 *
 * Costs (simulated, 2 host threads, programs cached): a 3x3, 64 -> 64
 * convolution of a 56 x 56 bfloat16 image takes about 6 ms from row-major
 * NHWC with flat_output (its gather and product one program), 11 ms from
 * and to NCHW tile tensors; a 3x3 stride-2 max pooling of
 * 112 x 112 x 64 about 15 ms (NHWC) or 40 ms (NCHW). Each new geometry
 * compiles its kernels once (three, about 0.1-0.2 s each).
 *
 * Weights. lmnn_conv2d takes the weight in PyTorch's layout [OC, C / groups,
 * KH, KW] or as the matrix lmnn_conv2d_prepare_weights made of it. Preparing
 * reads the weight to the host, rearranges it and uploads the matrix (as
 * ttnn.prepare_conv_weights prepares host weights): it waits for the device
 * and costs a host round trip, so a model prepares each weight once and
 * passes the prepared tensor (with options.kernel_size set) to every call; a
 * PyTorch-layout weight given to lmnn_conv2d is prepared again on each call.
 * The prepared matrix holds every group: groups > 1 become a block-diagonal
 * matrix, zeros outside the groups, so one matmul serves all groups; the
 * product neither reads nor multiplies the matrix's tiles that lie outside
 * every group (a tile row holding the end of one tap's channels and the
 * start of the next's included), so it costs about the multiply-adds of
 * separate per-group products rounded up to whole tiles. Nor is such a
 * tile stored: the prepared weight is the matrix's compact form, a tile
 * tensor [T, 32, 32] holding of each tile row of 32 its tiles from the
 * first to the last that meets a group, row after row (T of them in all),
 * whenever that leaves tiles out; lmnn_conv2d then takes it with
 * options.kernel_size and options.out_channels set. A ResNeXt's 32 groups
 * of 4 channels keep a quarter of the tiles or fewer.
 * A depthwise convolution (groups = C = OC) of more than 32 channels is
 * prepared instead as [1, KH * KW, C], a row of every channel's weights per
 * tap, and runs as each tap's patch matrix times its row of weights,
 * summed over the taps (float32 products and sums, rounded once) as the
 * patches are gathered, neither stored, the bias and the activation applied
 * to the sums before they are rounded: one launch and KH * KW multiply-adds
 * per output element whatever C is (a second launch for an activation with
 * f(0) != 0, such as sigmoid, or a bfloat8_b bias).
 * Inside a Light Metal capture the prepared matrix is recorded as an
 * upload: prepare before capturing, or inside it.
 *
 * Accuracy (float64 reference on the operands as stored): float32
 * convolutions within 1e-5 of S = sum |w * x| over a window plus |bias|
 * (as matmul; measured at most 2.3e-7 S); bfloat16 within 2^-8 S (the output's rounding;
 * float32 accumulation is the default here). Max pooling is exact (NaN in a
 * window gives NaN, as PyTorch); average pooling sums in float32 and
 * multiplies by the reciprocal of the divisor: within 1e-6 of the mean of |x|
 * (measured 1.7e-7) in float32, 2^-8 in bfloat16.
 *
 * Errors (lmnn_tensor.h), each naming the op and the argument: dead tensors;
 * a rank other than 4; non-float dtypes; channels that do not divide by
 * groups or do not match the weight; strides, dilations, kernel sizes or
 * groups below 1; negative padding; a (dilated) kernel larger than the
 * padded image; an empty output. A failed op creates nothing.
 */
#ifndef LIGHTMETAL_LMNN_CONV_H
#define LIGHTMETAL_LMNN_CONV_H

#include "lightmetal/lmnn_matmul.h"
#include "lightmetal/lmnn_tensor.h"
#include "lightmetal/lmnn_unary.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The order of an image's dims. */
typedef enum lmnn_image_layout {
    LMNN_NCHW = 0, /* the default, as PyTorch */
    LMNN_NHWC = 1,
} lmnn_image_layout;

typedef struct lmnn_conv2d_options {
    lmnn_image_layout input_layout; /* the output follows it */
    int32_t stride[2];              /* (h, w), >= 1 (init: 1, 1) */
    /* Zeros added around the image: top, bottom, left, right (ONNX's pads
     * are [top, left, bottom, right]; PyTorch's padding (ph, pw) is
     * {ph, ph, pw, pw}). >= 0. For conv_transpose2d, PyTorch's padding:
     * rows and columns removed from the full output. */
    int32_t padding[4];
    int32_t dilation[2];       /* (h, w), >= 1 (init: 1, 1) */
    int32_t groups;            /* >= 1, divides C and OC (init: 1) */
    int32_t output_padding[2]; /* conv_transpose2d only: added at the bottom / right */
    /* (KH, KW): required with a prepared weight; else 0 or the weight's. */
    int32_t kernel_size[2];
    /* OC: required with a compact grouped weight (whose shape does not say
     * it); else 0 or the weight's. */
    int32_t out_channels;
    /* DEFAULT here means ON: the patch rows are long (KH * KW * C). */
    lmnn_fp32_accumulate fp32_accumulate;
    /* Fused after the bias (lmnn_matmul_options' activation). */
    lmnn_unary_op activation;
    double activation_alpha, activation_beta;
    /* Give the output as ttnn does, [1, 1, N * OH * OW, OC] in NHWC order
     * whatever input_layout says (the matmul's result as it is; the 4-D
     * NHWC shape costs a copy unless OW is a multiple of 32). */
    bool flat_output;
    /* The flat output's layout (ttnn's Conv2dConfig.output_layout): TILE
     * (init; 0 means TILE) or ROW_MAJOR, a page per output pixel, which is
     * what a following convolution or pooling reads (they untilize a tile
     * image first). ROW_MAJOR needs flat_output and a float32 or bfloat16
     * output, and lets a convolution of stride 1 along W compute several
     * output pixels per patch row (fewer, fuller tiles when OC or KH * KW * C
     * is far from a multiple of 32). */
    lmnn_layout output_layout;
    /* With a ROW_MAJOR output: give it as [N * OH, OW * OC], a page per image
     * row, instead of [1, 1, N * OH * OW, OC]. The same elements in the same
     * order; a convolution or pooling reading it (batch_size, input_height
     * and input_width set) moves a row of pixels per transfer instead of a
     * pixel. */
    bool output_image_rows;
    /* NHWC only: the image's N, H and W when the input holds it flat, as
     * ttnn's conv2d takes it: any shape whose last dim is C and whose other
     * dims multiply to N * H * W ([1, 1, N * H * W, C], a flat_output
     * result), or whose last dim is W * C and whose other dims multiply to
     * N * H (an output_image_rows result). All 0 (init): the input is
     * [N, H, W, C]. */
    int32_t batch_size, input_height, input_width;
    lmnn_output output; /* dtype: a float dtype; zero: the input's */
    /* lmnn_conv2d only: a max pooling of the result (after the bias and
     * the activation), fused into the convolution where it can be:
     * pool_kernel (KH, KW) >= 1, (0, 0) (init): none; pool_stride >= 1, 0:
     * the kernel's. No padding, dilation 1, floor mode: the windows that
     * lie wholly inside the convolution's OH x OW, so the output is
     * (OH - KH) / sh + 1 by (OW - KW) / sw + 1, in the form the options ask
     * for. With groups 1, stride and dilation 1 along W, an activation
     * that keeps order (none, relu, relu6, relu_max, relu_min, leaky_relu
     * of slope >= 0, elu of alpha >= 0, selu, sigmoid, tanh, hardtanh,
     * clamp, hardsigmoid, softplus, softsign), at most 8 float32 tiles of
     * (KW + 1) * OC columns in dst and a product that fits L1 (as
     * lmnn_conv2d's own), each pooled output row is the max of its
     * window's products as they are made, and nothing of the convolution's
     * own result is stored (a row-major flat output also packs several
     * pooled pixels a patch row); otherwise the convolution runs and
     * lmnn_max_pool2d follows. */
    int32_t pool_kernel[2];
    int32_t pool_stride[2];
    /* The dtype the input's values are taken in: 0 (init), the input's
     * own; or FLOAT32 or BFLOAT16, the values being what lmnn_typecast of
     * the input would give (and the output's dtype by default). Where the
     * convolution gathers its patches from the image's rows (most do),
     * they are rounded as they are tilized, with no copy of the input; a
     * 1x1 convolution reading tiles as they are, or a depthwise one, makes
     * the typecast first. (A bfloat16 model fed float32 images.) */
    lmnn_dtype input_dtype;
} lmnn_conv2d_options;

/* Stride 1, no padding, dilation 1, groups 1, NCHW, no activation. */
void lmnn_conv2d_options_init(lmnn_conv2d_options *opts);

/* The weight matrix lmnn_conv2d multiplies by: weight [OC, C / groups, KH,
 * KW] (PyTorch's Conv2d layout) becomes a tile tensor [KH * KW * C, OC]
 * (C = (C / groups) * opts->groups), row (kh * KW + kw) * C + c, of the
 * weight's dtype (opts->output.dtype if set) and memory (opts->output.memory
 * if set); with groups > 1 its compact form [T, 32, 32] (see Weights above)
 * when that leaves tiles out; a depthwise weight of more than 32 channels
 * (groups = C = OC) becomes [1, KH * KW, C], element (0, kh * KW + kw, c), in
 * bfloat16 when bfloat8_b is asked for (whose 16-element blocks would share
 * one exponent across channels). lmnn_conv2d takes
 * either form of any size (with opts->kernel_size; a compact one with
 * opts->out_channels too), a [1, KH * KW, C] one when groups = C. Reads the
 * weight to the host (waits for its pending work).
 *
 * When opts ask for a row-major flat output (output_layout) and give the
 * input's batch_size, input_height and input_width (whatever input_layout
 * says), with groups 1, stride and dilation 1 along W, the matrix may be
 * packed for the P output pixels lmnn_conv2d then computes per patch row:
 * [KH * (KW + P - 1) * C, P * OC]. Not a bfloat8_b result of a bfloat8_b
 * weight, which stays plain: its 16-value blocks sharing an exponent would
 * be regrouped and its values rounded again (a bfloat8_b result of exact
 * values, the host's float32 or a float32 or bfloat16 weight, is packed,
 * its blocks made of the packed rows).
 * Such a weight works only with options that give the same P (else
 * LM_ERR_INVALID_ARGUMENT naming both), as ttnn's prepared weights. When
 * the options fuse a max pooling (pool_kernel, KPH x KPW, strides SPH x
 * SPW) into the product, the matrix holds KPW column groups, one per window
 * column: group dx computes P pooled output pixels a patch row, pixel q from
 * the patch row's input pixels q * SPW + dx on, so it is [KH * ((P - 1) *
 * SPW + KPW - 1 + KW) * C, (KPW - 1) * G + P * OC], G being P * OC rounded
 * up to a multiple of 32 (lmnn_conv2d_prepare_bias_host makes its bias). A
 * prepared [KH * KW * C, OC] matrix (opts->kernel_size set) is packed the
 * same way (or copied when P is 1). Otherwise only opts->groups and
 * opts->output are used. */
lm_status lmnn_conv2d_prepare_weights(lmnn_tensor weight, const lmnn_conv2d_options *opts,
                                      lmnn_tensor *out);

/* lmnn_conv2d_prepare_weights of a weight held on the host: `data`, `size`
 * bytes of float32 values of `shape` ([OC, C / groups, KH, KW], or a prepared
 * [KH * KW * C, OC] with opts->kernel_size set). The result is the same
 * (float32 unless opts->output.dtype says otherwise, in DRAM unless
 * opts->output.memory does), with no read from the device: inside a Light
 * Metal capture it records only the upload. Errors: a NULL device
 * (LM_ERR_INVALID_HANDLE), a NULL pointer, another rank or a size that does
 * not match the shape (LM_ERR_INVALID_ARGUMENT), else as
 * lmnn_conv2d_prepare_weights. */
lm_status lmnn_conv2d_prepare_weights_host(lm_device *device, const lmnn_shape *shape,
                                           const float *data, size_t size,
                                           const lmnn_conv2d_options *opts, lmnn_tensor *out);

/* The bias lmnn_conv2d adds with `prepared_weight` (from
 * lmnn_conv2d_prepare_weights): bias [OC] or [1, OC] repeated once per
 * output pixel the weight computes per patch row, [1, P * OC] (P = its
 * columns / OC; 1 for an unpacked or PyTorch-layout weight), a new tile
 * tensor in the bias's dtype and memory. lmnn_conv2d takes it with that
 * weight (or one packed alike) instead of repeating the bias on the device
 * at every call, as ttnn's prepare_conv_bias. Reads the bias to the host
 * (waits for its pending work). Errors: a bias that does not fit the weight
 * (LM_ERR_INVALID_ARGUMENT naming both shapes). A weight prepared for a
 * fused pooling (pool_kernel) does not tell P by its columns: give it
 * lmnn_conv2d_prepare_bias_host's bias, or the bias as it is ([OC], which
 * lmnn_conv2d repeats on the device). */
lm_status lmnn_conv2d_prepare_bias(lmnn_tensor bias, lmnn_tensor prepared_weight, lmnn_tensor *out);

/* The bias lmnn_conv2d adds with `prepared_weight`, which
 * lmnn_conv2d_prepare_weights_host made of a weight of shape `weight_shape`
 * ([OC, C / groups, KH, KW]) with options `opts`: `data`, `size` bytes of
 * OC float32 values, repeated once per output pixel the weight computes
 * per patch row, [1, P * OC], in opts->output (zero: float32 in DRAM; the
 * weight's own dtype plays no part). Unlike lmnn_conv2d_prepare_bias it
 * needs no device read (a capture records one upload) and knows a weight
 * prepared for a fused pooling (pool_kernel), whose columns alone do not
 * tell P. Errors: a NULL pointer, a shape that is not rank 4, a size that
 * is not OC float32 values, or a prepared_weight of another shape than
 * these options make (LM_ERR_INVALID_ARGUMENT naming it). */
lm_status lmnn_conv2d_prepare_bias_host(lmnn_tensor prepared_weight, const lmnn_shape *weight_shape,
                                        const float *data, size_t size,
                                        const lmnn_conv2d_options *opts, lmnn_tensor *out);

/* The same for lmnn_conv_transpose2d: weight [C, OC / groups, KH, KW]
 * (PyTorch's ConvTranspose2d layout) becomes the matrix of the equivalent
 * convolution (kernel flipped, channels swapped), [KH * KW * C, OC]; or,
 * when `opts` run it by phases (see lmnn_conv_transpose2d: a stride above
 * 1, dilation 1, one group and a kernel larger than the stride along one
 * dim), the phase matrix [TH * TW * C, SH * SW * OC], TH = ceil(KH / SH)
 * and TW = ceil(KW / SW), columns phase after phase. lmnn_conv_transpose2d
 * takes either with the options it was prepared with (the phase matrix
 * only with those); lmnn_conv2d_prepare_bias repeats a bias for it. */
lm_status lmnn_conv_transpose2d_prepare_weights(lmnn_tensor weight, const lmnn_conv2d_options *opts,
                                                lmnn_tensor *out);

/* lmnn_conv_transpose2d_prepare_weights from float32 host data: `size`
 * bytes at `data`, a weight of `shape` [C, OC / groups, KH, KW], as
 * lmnn_conv2d_prepare_weights_host (no device read: a capture records one
 * upload; float32 in DRAM unless opts->output says otherwise). Errors: a
 * NULL device (LM_ERR_INVALID_HANDLE), a NULL pointer, another rank or a
 * size that does not match the shape (LM_ERR_INVALID_ARGUMENT), else as
 * lmnn_conv_transpose2d_prepare_weights. */
lm_status lmnn_conv_transpose2d_prepare_weights_host(lm_device *device, const lmnn_shape *shape,
                                                     const float *data, size_t size,
                                                     const lmnn_conv2d_options *opts,
                                                     lmnn_tensor *out);

/* out = conv2d(input, weight) + bias, then the activation (torch.nn.functional
 * .conv2d): input [N, C, H, W] (or NHWC), weight as above, bias [OC] or
 * [1, OC] (zero handle: none; any layout) or as lmnn_conv2d_prepare_bias
 * gives it for the weight, out [N, OC, OH, OW] (or NHWC) with
 * OH = (H + pt + pb - dh * (KH - 1) - 1) / sh + 1 and likewise OW. NULL opts:
 * the defaults. */
lm_status lmnn_conv2d(lmnn_tensor input, lmnn_tensor weight, lmnn_tensor bias,
                      const lmnn_conv2d_options *opts, lmnn_tensor *out);

/* torch.nn.functional.conv_transpose2d: input [N, C, H, W], weight
 * [C, OC / groups, KH, KW] (or prepared), out [N, OC, OH, OW] with
 * OH = (H - 1) * sh - pt - pb + dh * (KH - 1) + oph + 1, output_padding below
 * max(stride, dilation) per dim. With a stride above 1, dilation 1, one
 * group and a kernel larger than the stride along a dim, runs by phases:
 * the output rows (and columns) of one residue modulo the stride take only
 * every stride-th tap of the kernel, so all of them are one convolution of
 * the input as it is, of ceil(KH / sh) x ceil(KW / sw) taps and sh * sw *
 * OC channels, whose results are interleaved into the output (two
 * data-movement passes) -- sh * sw times fewer patches and products than
 * the zeros between the pixels would take. Otherwise runs as a convolution
 * of the input with sh - 1 zeros between its rows (the kernel skips them:
 * no zero-inserted image is stored) by the flipped kernel. */
lm_status lmnn_conv_transpose2d(lmnn_tensor input, lmnn_tensor weight, lmnn_tensor bias,
                                const lmnn_conv2d_options *opts, lmnn_tensor *out);

/* ---- 3-D convolutions (torch.nn.functional.conv3d, conv_transpose3d) ----
 *
 * Volumes are rank-5 float tensors, [N, C, D, H, W] (LMNN_NCHW, PyTorch's
 * and the default) or [N, D, H, W, C] (LMNN_NHWC); the result is in the
 * same order. They run as the 2-D ones do (see above): the volume is brought
 * to row-major NDHWC, each output voxel's window gathered into a row of a
 * patch matrix [N * OD * OH * OW, KD * KH * KW * C] (the kernel's rows are
 * its depth taps' rows in turn) and multiplied by the prepared weight
 * [KD * KH * KW * C, OC] -- one gather and one product for the whole
 * volume. A depthwise one (groups = C = OC, more than 32 channels) sums its
 * taps as they are gathered; a 1x1x1 one of stride 1 over an NDHWC tile
 * volume whose W is a multiple of 32 multiplies the volume itself. A
 * transposed one is the convolution of the input with stride - 1 empty
 * images, rows and pixels between its own (never stored) by the flipped
 * kernel. Accuracy as the 2-D ones. Errors as the 2-D ones, each naming the
 * op and the argument, with (d, h, w) triples. */
typedef struct lmnn_conv3d_options {
    lmnn_image_layout input_layout; /* NCHW: [N, C, D, H, W]; NHWC: [N, D, H, W, C] */
    int32_t stride[3];              /* (d, h, w), >= 1 (init: 1, 1, 1) */
    /* Zeros added around the volume: front, back, top, bottom, left, right
     * (ONNX's pads are [front, top, left, back, bottom, right]; PyTorch's
     * padding (pd, ph, pw) is {pd, pd, ph, ph, pw, pw}). >= 0. For
     * conv_transpose3d, PyTorch's padding: removed from the full output. */
    int32_t padding[6];
    int32_t dilation[3];       /* (d, h, w), >= 1 (init: 1, 1, 1) */
    int32_t groups;            /* >= 1, divides C and OC (init: 1) */
    int32_t output_padding[3]; /* conv_transpose3d only: added at the back / bottom / right */
    /* (KD, KH, KW): required with a prepared weight; else 0 or the weight's. */
    int32_t kernel_size[3];
    lmnn_fp32_accumulate fp32_accumulate; /* DEFAULT means ON */
    /* Fused after the bias (lmnn_matmul_options' activation). */
    lmnn_unary_op activation;
    double activation_alpha, activation_beta;
    /* As lmnn_conv2d_options': the output flat, [1, 1, N * OD * OH * OW, OC]
     * in NDHWC order whatever input_layout says; in ROW_MAJOR layout (a page
     * per output voxel), or with output_image_rows [N * OD * OH, OW * OC]
     * (a page per image row), what a following 3-D convolution or pooling
     * reads fastest. */
    bool flat_output;
    lmnn_layout output_layout;
    bool output_image_rows;
    /* NDHWC only: the volume's N, D, H and W when the input holds it flat:
     * any shape whose last dim is C and whose other dims multiply to N * D *
     * H * W (a flat_output result), or whose last dim is W * C and whose
     * other dims multiply to N * D * H (an output_image_rows one). All 0
     * (init): the input is [N, D, H, W, C]. */
    int32_t batch_size, input_depth, input_height, input_width;
    lmnn_output output; /* dtype: a float dtype; zero: the input's */
} lmnn_conv3d_options;

/* Stride 1, no padding, dilation 1, groups 1, NCDHW, no activation. */
void lmnn_conv3d_options_init(lmnn_conv3d_options *opts);

/* The weight matrix lmnn_conv3d multiplies by, from float32 host data
 * (`size` bytes at `data`) of `shape` [OC, C / groups, KD, KH, KW]: a tile
 * tensor [KD * KH * KW * C, OC], row ((kd * KH + kh) * KW + kw) * C + c,
 * holding every group (block-diagonal); a depthwise weight of more than 32
 * channels becomes [1, KD * KH * KW, C]. float32 in DRAM unless
 * opts->output says otherwise (bfloat16 for a depthwise bfloat8_b). No
 * device read: inside a Light Metal capture it records one upload.
 * lmnn_conv3d then takes it with opts->kernel_size set. Only opts->groups
 * and opts->output are used (NULL opts: one group). Errors: a NULL device
 * (LM_ERR_INVALID_HANDLE); a NULL pointer, a rank other than 5, a size that
 * does not match the shape, groups that do not divide the channels
 * (LM_ERR_INVALID_ARGUMENT). */
lm_status lmnn_conv3d_prepare_weights_host(lm_device *device, const lmnn_shape *shape,
                                           const float *data, size_t size,
                                           const lmnn_conv3d_options *opts, lmnn_tensor *out);

/* The same for lmnn_conv_transpose3d: `shape` [C, OC / groups, KD, KH, KW]
 * (PyTorch's ConvTranspose3d layout) becomes the matrix of the equivalent
 * convolution (kernel flipped along all three dims, channels swapped),
 * [KD * KH * KW * C, OC]. */
lm_status lmnn_conv_transpose3d_prepare_weights_host(lm_device *device, const lmnn_shape *shape,
                                                     const float *data, size_t size,
                                                     const lmnn_conv3d_options *opts,
                                                     lmnn_tensor *out);

/* out = conv3d(input, weight) + bias, then the activation: input [N, C, D,
 * H, W] (or NDHWC), weight [OC, C / groups, KD, KH, KW] or prepared (see
 * lmnn_conv3d_prepare_weights_host), bias [OC] or [1, OC] (zero handle:
 * none), out [N, OC, OD, OH, OW] (or NDHWC) with OD = (D + pf + pb - dd *
 * (KD - 1) - 1) / sd + 1 and likewise OH, OW. A weight in PyTorch's layout
 * is prepared again on each call (a read to the host): prepare it once.
 * NULL opts: the defaults. */
lm_status lmnn_conv3d(lmnn_tensor input, lmnn_tensor weight, lmnn_tensor bias,
                      const lmnn_conv3d_options *opts, lmnn_tensor *out);

/* torch.nn.functional.conv_transpose3d: input [N, C, D, H, W] (or NDHWC),
 * weight [C, OC / groups, KD, KH, KW] or prepared, out [N, OC, OD, OH, OW]
 * with OD = (D - 1) * sd - pf - pb + dd * (KD - 1) + opd + 1 and likewise,
 * output_padding below max(stride, dilation) per dim. */
lm_status lmnn_conv_transpose3d(lmnn_tensor input, lmnn_tensor weight, lmnn_tensor bias,
                                const lmnn_conv3d_options *opts, lmnn_tensor *out);

typedef struct lmnn_pool2d_options {
    lmnn_image_layout input_layout;
    int32_t kernel_size[2]; /* (KH, KW) >= 1: required */
    int32_t stride[2];      /* >= 1; 0 (init): the kernel size, as PyTorch */
    /* top, bottom, left, right; each at most half the (dilated) kernel along
     * its dim, as PyTorch asks. Max pooling pads with -inf. */
    int32_t padding[4];
    int32_t dilation[2]; /* max pooling only; average pooling needs 1 */
    bool ceil_mode;      /* ceil instead of floor for the output size */
    /* Average pooling: count the zeros of the padding in the divisor
     * (PyTorch's default, init: true); divisor_override > 0 replaces the
     * divisor. */
    bool count_include_pad;
    int32_t divisor_override;
    /* Average pooling whose windows take different divisors
     * (count_include_pad false with padding, ceil_mode windows past the
     * padding) multiplies each output row by its reciprocal, a tensor
     * uploaded at each call unless given here: what
     * lmnn_avg_pool2d_divisors made for this pooling and input shape. A
     * metal trace, which may not write buffers, needs it. Zero (init): made
     * as needed. Given elsewhere (a max pooling, one whose windows all take
     * one divisor, another shape or dtype): LM_ERR_INVALID_ARGUMENT. */
    lmnn_tensor divisors;
    /* As lmnn_conv2d_options' (pooling only; not the global pooling). */
    bool flat_output;
    lmnn_layout output_layout;
    bool output_image_rows;
    int32_t batch_size, input_height, input_width;
    lmnn_output output; /* dtype: a float dtype; zero: the input's */
} lmnn_pool2d_options;

/* Kernel 0 (to be set), stride = kernel, no padding, dilation 1, floor mode,
 * count_include_pad, NCHW. */
void lmnn_pool2d_options_init(lmnn_pool2d_options *opts);

/* torch.nn.functional.max_pool2d / avg_pool2d on [N, C, H, W] (or NHWC):
 * out [N, C, OH, OW], OH = floor-or-ceil((H + pt + pb - dh * (KH - 1) - 1) /
 * sh) + 1, minus one when ceil mode would start the last window in the bottom
 * padding (PyTorch's rule), and likewise OW. */
lm_status lmnn_max_pool2d(lmnn_tensor input, const lmnn_pool2d_options *opts, lmnn_tensor *out);
lm_status lmnn_avg_pool2d(lmnn_tensor input, const lmnn_pool2d_options *opts, lmnn_tensor *out);

/* The divisors lmnn_avg_pool2d of `input` with `opts` would upload, made
 * once: the float32 tile tensor [N * OH * OW, 1] of each output pixel's
 * reciprocal divisor, the caller's (free it with lmnn_tensor_free), to give
 * as opts->divisors. A zero tensor (id 0) when every window takes one
 * divisor (none is uploaded then). Errors as lmnn_avg_pool2d's. */
lm_status lmnn_avg_pool2d_divisors(lmnn_tensor input, const lmnn_pool2d_options *opts,
                                   lmnn_tensor *out_divisors);

/* 3-D pooling (torch.nn.functional.max_pool3d / avg_pool3d) on [N, C, D,
 * H, W] (LMNN_NCHW) or [N, D, H, W, C] (LMNN_NHWC), the result in the same
 * order: each window's KD x KH x KW taps gathered and reduced as they come,
 * as the 2-D ones (one gather a volume). */
typedef struct lmnn_pool3d_options {
    lmnn_image_layout input_layout;
    int32_t kernel_size[3]; /* (KD, KH, KW) >= 1: required */
    int32_t stride[3];      /* >= 1; 0 (init): the kernel size, as PyTorch */
    /* front, back, top, bottom, left, right; each at most half the
     * (dilated) kernel along its dim. Max pooling pads with -inf. */
    int32_t padding[6];
    int32_t dilation[3]; /* max pooling only; average pooling needs 1 */
    bool ceil_mode;      /* as lmnn_pool2d_options' */
    bool count_include_pad;
    int32_t divisor_override;
    lmnn_tensor divisors; /* as lmnn_pool2d_options' (lmnn_avg_pool3d_divisors) */
    /* As lmnn_conv3d_options' flat forms. */
    bool flat_output;
    lmnn_layout output_layout;
    bool output_image_rows;
    int32_t batch_size, input_depth, input_height, input_width;
    lmnn_output output; /* dtype: a float dtype; zero: the input's */
} lmnn_pool3d_options;

/* Kernel 0 (to be set), stride = kernel, no padding, dilation 1, floor mode,
 * count_include_pad, NCDHW. */
void lmnn_pool3d_options_init(lmnn_pool3d_options *opts);

/* out [N, C, OD, OH, OW] (or NDHWC), each of OD, OH, OW as lmnn_max_pool2d
 * sizes OH. Errors as the 2-D ones, with (d, h, w) triples; an input of
 * another rank than 5. */
lm_status lmnn_max_pool3d(lmnn_tensor input, const lmnn_pool3d_options *opts, lmnn_tensor *out);
lm_status lmnn_avg_pool3d(lmnn_tensor input, const lmnn_pool3d_options *opts, lmnn_tensor *out);

/* As lmnn_avg_pool2d_divisors, for lmnn_avg_pool3d: [N * OD * OH * OW, 1]. */
lm_status lmnn_avg_pool3d_divisors(lmnn_tensor input, const lmnn_pool3d_options *opts,
                                   lmnn_tensor *out_divisors);

/* The mean over each channel's H x W: [N, C, H, W] -> [N, C, 1, 1] (NHWC:
 * [N, H, W, C] -> [N, 1, 1, C]). Only opts->input_layout and opts->output are
 * used; NULL opts: NCHW, like the input. */
lm_status lmnn_global_avg_pool2d(lmnn_tensor input, const lmnn_pool2d_options *opts,
                                 lmnn_tensor *out);

#ifdef __cplusplus
}
#endif

#endif
