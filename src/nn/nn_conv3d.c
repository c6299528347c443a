/* 3-D convolutions (lmnn_conv3d, lmnn_conv_transpose3d; see lmnn_conv.h):
 * their options checked and split into the 2-D options of their (h, w)
 * parts and the depth (nn_conv_depth), then run by nn_conv.c's convolution,
 * whose patch reader walks a kernel's depth taps as more kernel rows. A
 * 3-D weight is a 2-D one whose KD and KH are one dim, so the 2-D
 * preparation serves both. */
#include <math.h>

#include "nn/nn_conv.h"

void lmnn_conv3d_options_init(lmnn_conv3d_options *opts) {
    if (!opts) return;
    *opts = (lmnn_conv3d_options){0};
    for (int i = 0; i < 3; i++)
        opts->stride[i] = opts->dilation[i] = 1;
    opts->groups = 1;
    opts->activation_alpha = NAN;
    opts->activation_beta = NAN;
}

static lm_status check_triple(const char *op, const char *arg, const int32_t *v, int32_t min) {
    for (int i = 0; i < 3; i++)
        if (v[i] < min)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "%s: expected (d, h, w) >= %d, given (%d, %d, %d)", arg, min, v[0], v[1],
                           v[2]);
    return LM_OK;
}

/* `opts` (NULL: the defaults), checked, as the 2-D options of its (h, w)
 * parts (*o2) and the depth (*dp). */
static lm_status split(const char *op, bool transpose, const lmnn_conv3d_options *opts,
                       lmnn_conv2d_options *o2, nn_conv_depth *dp) {
    lmnn_conv3d_options defaults;
    if (!opts) {
        lmnn_conv3d_options_init(&defaults);
        opts = &defaults;
    }
    lm_status st = check_triple(op, "stride", opts->stride, 1);
    if (!st) st = check_triple(op, "dilation", opts->dilation, 1);
    if (!st) st = check_triple(op, "output_padding", opts->output_padding, 0);
    if (!st) st = check_triple(op, "kernel_size", opts->kernel_size, 0);
    if (st) return st;
    const int32_t *p = opts->padding, *opd = opts->output_padding;
    for (int i = 0; i < 6; i++)
        if (p[i] < 0)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "padding: expected [front, back, top, bottom, left, right] >= 0, given "
                           "[%d, %d, %d, %d, %d, %d]",
                           p[0], p[1], p[2], p[3], p[4], p[5]);
    if (!transpose && (opd[0] || opd[1] || opd[2]))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "output_padding: expected (0, 0, 0) (conv_transpose3d only), given (%d, "
                       "%d, %d)",
                       opd[0], opd[1], opd[2]);
    for (int i = 0; transpose && i < 3; i++) {
        int32_t lim = opts->stride[i] > opts->dilation[i] ? opts->stride[i] : opts->dilation[i];
        if (opd[i] >= lim)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "output_padding: expected below max(stride, dilation) = %d along %c, "
                           "given %d",
                           lim, "dhw"[i], opd[i]);
    }
    lmnn_conv2d_options_init(o2);
    o2->input_layout = opts->input_layout;
    o2->groups = opts->groups;
    for (int i = 0; i < 2; i++) {
        o2->stride[i] = opts->stride[i + 1];
        o2->dilation[i] = opts->dilation[i + 1];
        o2->output_padding[i] = opd[i + 1];
        o2->kernel_size[i] = opts->kernel_size[i + 1];
    }
    for (int i = 0; i < 4; i++)
        o2->padding[i] = p[i + 2];
    const int32_t flat[4] = {opts->batch_size, opts->input_depth, opts->input_height,
                             opts->input_width};
    if ((st = nn_conv_flat_3d(op, opts->input_layout, flat, &o2->batch_size, &o2->input_height,
                              &o2->input_width)))
        return st;
    o2->flat_output = opts->flat_output;
    o2->output_layout = opts->output_layout;
    o2->output_image_rows = opts->output_image_rows;
    o2->fp32_accumulate = opts->fp32_accumulate;
    o2->activation = opts->activation;
    o2->activation_alpha = opts->activation_alpha;
    o2->activation_beta = opts->activation_beta;
    o2->output = opts->output;
    *dp = (nn_conv_depth){.kd = (uint32_t)opts->kernel_size[0],
                          .stride = opts->stride[0],
                          .dilation = opts->dilation[0],
                          .pad_front = p[0],
                          .pad_back = p[1],
                          .output_padding = opd[0],
                          .depth = (uint32_t)(o2->batch_size ? opts->input_depth : 0)};
    return LM_OK;
}

static lm_status run(const char *op, bool transpose, lmnn_tensor input, lmnn_tensor weight,
                     lmnn_tensor bias, const lmnn_conv3d_options *opts, lmnn_tensor *out) {
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out is NULL");
    lmnn_conv2d_options o2;
    nn_conv_depth dp;
    lm_status st = split(op, transpose, opts, &o2, &dp);
    if (st) return st;
    return nn_conv_run(op, transpose, input, weight, bias, &o2, &dp, out);
}

lm_status lmnn_conv3d(lmnn_tensor input, lmnn_tensor weight, lmnn_tensor bias,
                      const lmnn_conv3d_options *opts, lmnn_tensor *out) {
    return run("lmnn_conv3d", false, input, weight, bias, opts, out);
}

lm_status lmnn_conv_transpose3d(lmnn_tensor input, lmnn_tensor weight, lmnn_tensor bias,
                                const lmnn_conv3d_options *opts, lmnn_tensor *out) {
    return run("lmnn_conv_transpose3d", true, input, weight, bias, opts, out);
}

/* The two _host preparations: the weight checked with its own shape, then
 * prepared as the 2-D weight whose KD and KH are one dim. */
static lm_status prepare_host(const char *op, bool transpose, lm_device *device,
                              const lmnn_shape *shape, const float *data, size_t size,
                              const lmnn_conv3d_options *opts, lmnn_tensor *out) {
    char s[128];
    lm_status st = nn_conv_check_host_weight(op, device, shape, data, size, out, 5, false,
                                             transpose ? "[C, OC / groups, KD, KH, KW]"
                                                       : "[OC, C / groups, KD, KH, KW]");
    if (st) return st;
    int32_t groups = opts ? opts->groups : 1;
    if (groups < 1)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "groups: expected >= 1, given %d", groups);
    const uint32_t *d = shape->dims;
    if (d[0] % (uint32_t)groups)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "weight: %s channels %u (dim 0 of shape %s) are not a multiple of groups "
                       "%d",
                       transpose ? "input" : "output", d[0], nn_shape_str(shape, s, sizeof s),
                       groups);
    lmnn_dtype dtype = opts && opts->output.dtype ? opts->output.dtype : LMNN_FLOAT32;
    lmnn_memory_config memory = nn_memory_over(
        opts ? &opts->output.memory : NULL,
        (lmnn_memory_config){.type = LM_BUFFER_DRAM, .layout = LM_BUFFER_INTERLEAVED});
    if ((uint64_t)d[2] * d[3] > UINT32_MAX)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "shape: %s is too large",
                       nn_shape_str(shape, s, sizeof s));
    lmnn_shape ws4 = LMNN_SHAPE(d[0], d[1], d[2] * d[3], d[4]);
    return nn_conv_prepare_host(op, device, transpose, &ws4, data, groups, dtype, &memory, out);
}

lm_status lmnn_conv3d_prepare_weights_host(lm_device *device, const lmnn_shape *shape,
                                           const float *data, size_t size,
                                           const lmnn_conv3d_options *opts, lmnn_tensor *out) {
    return prepare_host("lmnn_conv3d_prepare_weights_host", false, device, shape, data, size, opts,
                        out);
}

lm_status lmnn_conv_transpose3d_prepare_weights_host(lm_device *device, const lmnn_shape *shape,
                                                     const float *data, size_t size,
                                                     const lmnn_conv3d_options *opts,
                                                     lmnn_tensor *out) {
    return prepare_host("lmnn_conv_transpose3d_prepare_weights_host", true, device, shape, data,
                        size, opts, out);
}
