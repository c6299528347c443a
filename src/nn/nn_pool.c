/* Pooling: the windows gathered on the device tap by tap and reduced as they
 * come (nn_conv_im2col's MAX and SUM modes: a core tilizes each tap's block
 * of [N * OH * OW, C] and takes the max or the sum in dst), then for the
 * average a multiplication by the divisors' reciprocals (see lmnn_conv.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn/nn_conv.h"

#define FLOAT_NEG_INF 0xFF800000u

void lmnn_pool2d_options_init(lmnn_pool2d_options *opts) {
    if (!opts) return;
    *opts = (lmnn_pool2d_options){0};
    opts->dilation[0] = opts->dilation[1] = 1;
    opts->count_include_pad = true;
}

/* PyTorch's pooling_output_shape_pad_lr. */
static int64_t out_size(int64_t in, int64_t k, int64_t pad_l, int64_t pad_r, int64_t s, int64_t d,
                        bool ceil_mode) {
    int64_t num = in + pad_l + pad_r - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
    int64_t o = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
    if (ceil_mode && (o - 1) * s >= in + pad_l) o--;
    return o;
}

/* The depth of a 3-D pooling (lmnn_max_pool3d, lmnn_avg_pool3d), beside
 * the lmnn_pool2d_options of its (h, w) parts. */
typedef struct pool_depth {
    int32_t kernel, stride, dilation, pad_front, pad_back;
    int32_t depth; /* the input's D when it is flat (batch_size is N * D), else 0 */
} pool_depth;

typedef struct pool_plan {
    nn_tensor *x;
    nn_conv_geom g;
    lmnn_dtype dtype;
    lmnn_memory_config memory;
    bool rm_out; /* a row-major flat output (output_layout) */
} pool_plan;

static lm_status plan(const char *op, bool avg, lmnn_tensor input, const lmnn_pool2d_options *o,
                      const pool_depth *dp, pool_plan *p) {
    char s[128];
    lm_status st = nn_get_tensor(op, "input", input, &p->x);
    if (!st) st = nn_check_float(op, "input", p->x);
    if (st) return st;
    if (dp && !dp->depth && p->x->shape.rank != 5)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "input: expected rank 5 (%s), given shape %s",
                       o->input_layout == LMNN_NHWC ? "N, D, H, W, C" : "N, C, D, H, W",
                       nn_shape_str(&p->x->shape, s, sizeof s));
    uint32_t n = 0, c = 0, d = 1, h = 0, w = 0;
    const int32_t flat[3] = {o->batch_size, o->input_height, o->input_width};
    if ((st = nn_conv_image_dims(op, p->x, o->input_layout, flat, &n, &c, dp ? &d : NULL, &h, &w)))
        return st;
    if (dp && dp->depth) {
        d = (uint32_t)dp->depth;
        n /= d;
    }
    if (o->kernel_size[0] < 1 || o->kernel_size[1] < 1)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "kernel_size: expected (h, w) >= 1, given (%d, %d)", o->kernel_size[0],
                       o->kernel_size[1]);
    if (o->stride[0] < 0 || o->stride[1] < 0 || (!o->stride[0] != !o->stride[1]))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "stride: expected (h, w) >= 1, or (0, 0) for the kernel size, given (%d, "
                       "%d)",
                       o->stride[0], o->stride[1]);
    if (o->dilation[0] < 1 || o->dilation[1] < 1)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "dilation: expected (h, w) >= 1, given (%d, %d)", o->dilation[0],
                       o->dilation[1]);
    if (avg && (o->dilation[0] != 1 || o->dilation[1] != 1))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "dilation: expected (1, 1) for average pooling, given (%d, %d)",
                       o->dilation[0], o->dilation[1]);
    if (avg && o->divisor_override < 0)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "divisor_override: expected >= 1 or 0 (none), given %d",
                       o->divisor_override);
    int32_t sh = o->stride[0] ? o->stride[0] : o->kernel_size[0];
    int32_t sw = o->stride[1] ? o->stride[1] : o->kernel_size[1];
    for (int i = 0; i < 4; i++) {
        int32_t k = o->kernel_size[i / 2], dil = o->dilation[i / 2];
        int64_t half = ((int64_t)dil * (k - 1) + 1) / 2;
        if (o->padding[i] < 0 || o->padding[i] > half)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "padding: expected [top, bottom, left, right] between 0 and half the "
                           "(dilated) kernel (%lld along %s), given [%d, %d, %d, %d]",
                           (long long)half, i < 2 ? "h" : "w", o->padding[0], o->padding[1],
                           o->padding[2], o->padding[3]);
    }
    int64_t oh = out_size(h, o->kernel_size[0], o->padding[0], o->padding[1], sh, o->dilation[0],
                          o->ceil_mode);
    int64_t ow = out_size(w, o->kernel_size[1], o->padding[2], o->padding[3], sw, o->dilation[1],
                          o->ceil_mode);
    if (oh < 1 || ow < 1)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "kernel_size: the (dilated) kernel does not fit the padded input %u x %u: "
                       "the output would be %lld x %lld",
                       h + o->padding[0] + o->padding[1], w + o->padding[2] + o->padding[3],
                       (long long)oh, (long long)ow);
    p->g = (nn_conv_geom){.n = n,
                          .h = h,
                          .w = w,
                          .c = c,
                          .oh = (uint32_t)oh,
                          .ow = (uint32_t)ow,
                          .kh = (uint32_t)o->kernel_size[0],
                          .kw = (uint32_t)o->kernel_size[1],
                          .sh = sh,
                          .sw = sw,
                          .dh = o->dilation[0],
                          .dw = o->dilation[1],
                          .pt = o->padding[0],
                          .pl = o->padding[2],
                          .uh = 1,
                          .uw = 1};
    nn_conv_geom_2d(&p->g);
    if (dp) {
        int64_t od = out_size(d, dp->kernel, dp->pad_front, dp->pad_back, dp->stride, dp->dilation,
                              o->ceil_mode);
        if (od < 1)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "kernel_size: the (dilated) kernel does not fit the padded input's "
                           "depth %u: the output's would be %lld",
                           d + dp->pad_front + dp->pad_back, (long long)od);
        if ((uint64_t)od * n > (1u << 30))
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "input: the output (%u batch entries of depth %lld) is too large", n,
                           (long long)od);
        p->g.sp = 3;
        p->g.d = d;
        p->g.od = (uint32_t)od;
        p->g.kd = (uint32_t)dp->kernel;
        p->g.sd = dp->stride;
        p->g.dd = dp->dilation;
        p->g.pd = dp->pad_front;
        p->g.n = n * (uint32_t)od;
    }
    p->dtype = o->output.dtype ? o->output.dtype : p->x->dtype;
    if (!nn_dtype_is_float(p->dtype))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "output.dtype: expected a float dtype, given %s", lmnn_dtype_name(p->dtype));
    p->memory = nn_output_memory(&o->output.memory, p->x);
    if ((st = nn_conv_output_layout(op, o->flat_output, o->output_layout, o->output_image_rows,
                                    p->dtype, &p->rm_out)))
        return st;
    return nn_check_memory(op, &p->memory);
}

/* The elements along one dim of a window starting at `start` (its padding
 * before it counted in) of k taps, over an input of `len` with `pad_end`
 * after it: clipped to the padded input, and with `real` to the input. */
static int64_t window_extent(int64_t start, int64_t k, int64_t len, int64_t pad_end, bool real) {
    int64_t end = start + k < len + pad_end ? start + k : len + pad_end;
    if (real) {
        start = start > 0 ? start : 0;
        end = end < len ? end : len;
    }
    return end - start;
}

/* PyTorch's avg_pool2d (avg_pool3d) divisor of output pixel (oz, oy, ox)
 * (depth dp; NULL for 2-D). */
static int64_t divisor(const nn_conv_geom *g, const lmnn_pool2d_options *o, const pool_depth *dp,
                       int64_t oz, int64_t oy, int64_t ox) {
    if (o->divisor_override) return o->divisor_override;
    bool real = !o->count_include_pad;
    int64_t size = window_extent(oy * g->sh - o->padding[0], g->kh, g->h, o->padding[1], real) *
                   window_extent(ox * g->sw - o->padding[2], g->kw, g->w, o->padding[3], real);
    if (dp) size *= window_extent(oz * g->sd - dp->pad_front, g->kd, g->d, dp->pad_back, real);
    return size;
}

/* The output rows of plan g (N * OD * OH * OW). */
static uint64_t out_rows(const nn_conv_geom *g) {
    return (uint64_t)g->n * g->oh * g->ow;
}

/* An average pooling's divisors: *out_d0 when every window takes the same,
 * else the reciprocal of each output row's (*out_recip, malloc'd). */
static lm_status divisors(const char *op, const nn_conv_geom *g, const lmnn_pool2d_options *opts,
                          const pool_depth *dp, int64_t *out_d0, float **out_recip) {
    uint64_t m = out_rows(g), per_image = (uint64_t)g->oh * g->ow;
    int64_t d0 = divisor(g, opts, dp, 0, 0, 0);
    bool uniform = true;
    for (uint64_t px = 0; px < per_image * g->od && uniform; px++)
        uniform = divisor(g, opts, dp, (int64_t)(px / per_image), (int64_t)(px % per_image / g->ow),
                          (int64_t)(px % g->ow)) == d0;
    *out_d0 = d0;
    *out_recip = NULL;
    if (uniform) return LM_OK;
    float *recip = malloc(m * sizeof *recip);
    if (!recip) return nn_fail(LM_ERR_OUT_OF_HOST_MEMORY, op, "no host memory for divisors");
    for (uint64_t r = 0; r < m; r++) {
        uint64_t px = r % (per_image * g->od);
        recip[r] = (float)(1.0 / (double)divisor(g, opts, dp, (int64_t)(px / per_image),
                                                 (int64_t)(px % per_image / g->ow),
                                                 (int64_t)(px % g->ow)));
    }
    *out_recip = recip;
    return LM_OK;
}

/* The divisors as the [m, 1] float32 tile tensor the window sums are
 * multiplied by. */
static lm_status upload_divisors(const char *op, lm_device *device, const float *recip, uint64_t m,
                                 lmnn_tensor *out) {
    lmnn_tensor_options to;
    lmnn_tensor_options_init(&to);
    to.dtype = LMNN_FLOAT32;
    lmnn_shape rs = LMNN_SHAPE((uint32_t)m, 1);
    lm_status st = lmnn_from_host(device, &rs, recip, m * sizeof *recip, &to, out);
    return st ? nn_fail_call(st, op) : LM_OK;
}

/* opts->divisors, given for a pooling of plan p: what
 * lmnn_avg_pool2d_divisors made for it. `needed`: its windows take
 * different divisors (else d0 serves them all). */
static lm_status check_given_divisors(const char *op, bool avg, const pool_plan *p, lmnn_tensor t,
                                      bool needed, int64_t d0) {
    if (!avg) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "divisors: given to a max pooling");
    if (!needed)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "divisors: given, but every window of this pooling divides by %lld "
                       "(%s_divisors gives none)",
                       (long long)d0, op);
    nn_tensor *d;
    char s[128];
    lm_status st = nn_get_tensor(op, "divisors", t, &d);
    if (st) return st;
    uint64_t m = out_rows(&p->g);
    if (d->device != p->x->device || d->dtype != LMNN_FLOAT32 || d->layout != LMNN_TILE ||
        d->shape.rank != 2 || d->shape.dims[0] != m || d->shape.dims[1] != 1)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "divisors: expected the float32 tile tensor [%llu, 1] on the input's "
                       "device that %s_divisors gives, given %s %s %s",
                       (unsigned long long)m, op, lmnn_dtype_name(d->dtype),
                       d->layout == LMNN_TILE ? "tile" : "row-major",
                       nn_shape_str(&d->shape, s, sizeof s));
    return LM_OK;
}

static lm_status pool(const char *op, bool avg, lmnn_tensor input, const lmnn_pool2d_options *opts,
                      const pool_depth *dp, lmnn_tensor *out) {
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out is NULL");
    if (!opts) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "opts is NULL (kernel_size is needed)");
    pool_plan p = {0};
    lm_status st = plan(op, avg, input, opts, dp, &p);
    if (st) return st;
    const nn_conv_geom *g = &p.g;
    /* The divisors (average pooling): one for all, or one per output row. */
    uint64_t m = out_rows(g);
    float *recip = NULL;
    int64_t d0 = 1;
    if (avg && (st = divisors(op, g, opts, dp, &d0, &recip))) return st;
    bool uniform = !recip;
    if (opts->divisors.id &&
        (st = check_given_divisors(op, avg, &p, opts->divisors, !uniform, d0))) {
        free(recip);
        return st;
    }
    lmnn_tensor rows = {0}, red = {0}, y = {0}, rt = {0};
    nn_tensor *img;
    const int32_t flat[3] = {opts->batch_size, opts->input_height, opts->input_width};
    st = nn_conv_rows(op, input, p.x, opts->input_layout, flat, false, &rows, &img);
    /* The windows reduced as they are gathered (max, or the sum for the
     * average, kept in float32). */
    /* A row-major result is untilized in element order: the reduction's
     * rows may hold several output pixels (fewer, fuller tiles when C is
     * small), unless each row takes its own divisor. */
    uint32_t q = 1;
    while (p.rm_out && uniform && g->c * q * 2 <= 32 && m % (q * 2) == 0)
        q *= 2;
    if (!st)
        st = nn_conv_im2col(op, img, g, avg ? NN_PATCH_SUM : NN_PATCH_MAX, avg ? 0 : FLOAT_NEG_INF,
                            avg ? LMNN_FLOAT32 : p.dtype, q, NULL, &red);
    if (!st && avg) {
        lmnn_binary_options bo;
        lmnn_binary_options_init(&bo);
        bo.output.dtype = p.dtype;
        if (opts->input_layout == LMNN_NHWC || opts->flat_output) bo.output.memory = p.memory;
        if (uniform) {
            st = lmnn_binary_scalar(LMNN_BINARY_MUL, red, 1.0 / (double)d0, &bo, &y);
        } else if (opts->divisors.id) {
            st = lmnn_binary(LMNN_BINARY_MUL, red, opts->divisors, &bo, &y);
        } else {
            st = upload_divisors(op, p.x->device, recip, m, &rt);
            if (!st) st = lmnn_binary(LMNN_BINARY_MUL, red, rt, &bo, &y);
        }
        if (st) st = nn_fail_call(st, op);
    } else if (!st) {
        y = red;
        red = (lmnn_tensor){0};
    }
    free(recip);
    if (rows.id != input.id && rows.id) lmnn_tensor_free(rows);
    if (red.id) lmnn_tensor_free(red);
    if (rt.id) lmnn_tensor_free(rt);
    if (st) {
        if (y.id) lmnn_tensor_free(y);
        return st;
    }
    if (p.rm_out) return nn_conv_flat_rm(op, y, g, g->c, opts->output_image_rows, &p.memory, out);
    return nn_conv_finish(op, y, g, g->c, opts->flat_output ? LMNN_NHWC : opts->input_layout,
                          opts->flat_output, &p.memory, out);
}

lm_status lmnn_max_pool2d(lmnn_tensor input, const lmnn_pool2d_options *opts, lmnn_tensor *out) {
    return pool("lmnn_max_pool2d", false, input, opts, NULL, out);
}

lm_status lmnn_avg_pool2d(lmnn_tensor input, const lmnn_pool2d_options *opts, lmnn_tensor *out) {
    return pool("lmnn_avg_pool2d", true, input, opts, NULL, out);
}

static lm_status make_divisors(const char *op, lmnn_tensor input, const lmnn_pool2d_options *opts,
                               const pool_depth *dp, lmnn_tensor *out) {
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out_divisors is NULL");
    *out = (lmnn_tensor){0};
    if (!opts) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "opts is NULL (kernel_size is needed)");
    pool_plan p = {0};
    lm_status st = plan(op, true, input, opts, dp, &p);
    float *recip = NULL;
    int64_t d0;
    if (!st) st = divisors(op, &p.g, opts, dp, &d0, &recip);
    if (!st && recip) st = upload_divisors(op, p.x->device, recip, out_rows(&p.g), out);
    free(recip);
    return st;
}

lm_status lmnn_avg_pool2d_divisors(lmnn_tensor input, const lmnn_pool2d_options *opts,
                                   lmnn_tensor *out_divisors) {
    return make_divisors("lmnn_avg_pool2d_divisors", input, opts, NULL, out_divisors);
}

void lmnn_pool3d_options_init(lmnn_pool3d_options *opts) {
    if (!opts) return;
    *opts = (lmnn_pool3d_options){0};
    opts->dilation[0] = opts->dilation[1] = opts->dilation[2] = 1;
    opts->count_include_pad = true;
}

/* 3-D options `o`, checked, as the 2-D options of their (h, w) parts (*o2)
 * and the depth (*dp). */
static lm_status split3d(const char *op, bool avg, const lmnn_pool3d_options *o,
                         lmnn_pool2d_options *o2, pool_depth *dp) {
    const int32_t *k = o->kernel_size, *s = o->stride, *dl = o->dilation, *p = o->padding;
    if (k[0] < 1 || k[1] < 1 || k[2] < 1)
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "kernel_size: expected (d, h, w) >= 1, given (%d, %d, %d)", k[0], k[1],
                       k[2]);
    if (s[0] < 0 || s[1] < 0 || s[2] < 0 || !s[0] != !s[1] || !s[1] != !s[2])
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "stride: expected (d, h, w) >= 1, or (0, 0, 0) for the kernel size, given "
                       "(%d, %d, %d)",
                       s[0], s[1], s[2]);
    if (dl[0] < 1 || dl[1] < 1 || dl[2] < 1 || (avg && (dl[0] != 1 || dl[1] != 1 || dl[2] != 1)))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "dilation: expected (d, h, w) >= 1 (%s), given (%d, %d, %d)",
                       avg ? "1 for average pooling" : "max pooling", dl[0], dl[1], dl[2]);
    for (int i = 0; i < 6; i++) {
        int64_t half = ((int64_t)dl[i / 2] * (k[i / 2] - 1) + 1) / 2;
        if (p[i] < 0 || p[i] > half)
            return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                           "padding: expected [front, back, top, bottom, left, right] between 0 "
                           "and half the (dilated) kernel (%lld along %c), given [%d, %d, %d, %d, "
                           "%d, %d]",
                           (long long)half, "dhw"[i / 2], p[0], p[1], p[2], p[3], p[4], p[5]);
    }
    lmnn_pool2d_options_init(o2);
    o2->input_layout = o->input_layout;
    for (int i = 0; i < 2; i++) {
        o2->kernel_size[i] = k[i + 1];
        o2->stride[i] = s[i + 1];
        o2->dilation[i] = dl[i + 1];
    }
    for (int i = 0; i < 4; i++)
        o2->padding[i] = p[i + 2];
    const int32_t flat[4] = {o->batch_size, o->input_depth, o->input_height, o->input_width};
    lm_status st = nn_conv_flat_3d(op, o->input_layout, flat, &o2->batch_size, &o2->input_height,
                                   &o2->input_width);
    if (st) return st;
    o2->flat_output = o->flat_output;
    o2->output_layout = o->output_layout;
    o2->output_image_rows = o->output_image_rows;
    o2->ceil_mode = o->ceil_mode;
    o2->count_include_pad = o->count_include_pad;
    o2->divisor_override = o->divisor_override;
    o2->divisors = o->divisors;
    o2->output = o->output;
    *dp = (pool_depth){.kernel = k[0],
                       .stride = s[0] ? s[0] : k[0],
                       .dilation = dl[0],
                       .pad_front = p[0],
                       .pad_back = p[1],
                       .depth = o2->batch_size ? o->input_depth : 0};
    return LM_OK;
}

static lm_status pool3d(const char *op, bool avg, lmnn_tensor input,
                        const lmnn_pool3d_options *opts, lmnn_tensor *out) {
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out is NULL");
    if (!opts) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "opts is NULL (kernel_size is needed)");
    lmnn_pool2d_options o2;
    pool_depth dp;
    lm_status st = split3d(op, avg, opts, &o2, &dp);
    return st ? st : pool(op, avg, input, &o2, &dp, out);
}

lm_status lmnn_max_pool3d(lmnn_tensor input, const lmnn_pool3d_options *opts, lmnn_tensor *out) {
    return pool3d("lmnn_max_pool3d", false, input, opts, out);
}

lm_status lmnn_avg_pool3d(lmnn_tensor input, const lmnn_pool3d_options *opts, lmnn_tensor *out) {
    return pool3d("lmnn_avg_pool3d", true, input, opts, out);
}

lm_status lmnn_avg_pool3d_divisors(lmnn_tensor input, const lmnn_pool3d_options *opts,
                                   lmnn_tensor *out_divisors) {
    const char *op = "lmnn_avg_pool3d_divisors";
    if (!out_divisors) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out_divisors is NULL");
    *out_divisors = (lmnn_tensor){0};
    if (!opts) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "opts is NULL (kernel_size is needed)");
    lmnn_pool2d_options o2;
    pool_depth dp;
    lm_status st = split3d(op, true, opts, &o2, &dp);
    return st ? st : make_divisors(op, input, &o2, &dp, out_divisors);
}

lm_status lmnn_global_avg_pool2d(lmnn_tensor input, const lmnn_pool2d_options *opts,
                                 lmnn_tensor *out) {
    const char *op = "lmnn_global_avg_pool2d";
    if (!out) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out is NULL");
    lmnn_pool2d_options defaults;
    if (!opts) {
        lmnn_pool2d_options_init(&defaults);
        opts = &defaults;
    }
    nn_tensor *x;
    lm_status st = nn_get_tensor(op, "input", input, &x);
    if (!st) st = nn_check_float(op, "input", x);
    uint32_t n = 0, c = 0, h = 0, w = 0;
    if (!st) st = nn_conv_image_dims(op, x, opts->input_layout, NULL, &n, &c, NULL, &h, &w);
    if (st) return st;
    lmnn_dtype dtype = opts->output.dtype ? opts->output.dtype : x->dtype;
    if (!nn_dtype_is_float(dtype))
        return nn_fail(LM_ERR_INVALID_ARGUMENT, op,
                       "output.dtype: expected a float dtype, given %s", lmnn_dtype_name(dtype));
    lmnn_memory_config memory = nn_output_memory(&opts->output.memory, x);
    if ((st = nn_check_memory(op, &memory))) return st;
    lmnn_tensor t = input;
    if (x->layout != LMNN_TILE && (st = lmnn_to_layout(input, LMNN_TILE, &t)))
        return nn_fail_call(st, op);
    lmnn_reduce_options ro;
    lmnn_reduce_options_init(&ro);
    ro.dims[0] = opts->input_layout == LMNN_NCHW ? 2 : 1;
    ro.dims[1] = ro.dims[0] + 1;
    ro.dim_count = 2;
    ro.keepdim = true;
    ro.output.dtype = dtype;
    ro.output.memory = memory;
    st = lmnn_mean(t, &ro, out);
    if (st) st = nn_fail_call(st, op);
    if (t.id != input.id) lmnn_tensor_free(t);
    return st;
}
