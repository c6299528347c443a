/* Resampling: Resize (opsets 10 and up) and Upsample (opsets 7 to 9).
 *
 * Every mode ONNX defines is separable, so each resized axis is done on its
 * own: the output along it is a sum over a few taps (2 for nearest and
 * linear, 4 for cubic) of the input gathered along the axis
 * (lmnn_index_select) times one weight per output position. The taps'
 * indices and weights follow ONNX's reference rules exactly and are worked
 * out on the host at compile time, in double precision, from the constant
 * scales, sizes and roi; the device only gathers, multiplies and adds. An
 * axis whose every output position takes one input position with weight 1
 * is a single gather (nearest, and integer tensors); one that maps onto
 * itself costs nothing. With antialias, a linear or cubic axis that shrinks
 * has a filter stretched by 1 / scale (as many taps as that takes), so the
 * axis is instead a product with a constant [in, out] matrix of the same
 * reference weights. So is an axis of two or four taps along the input's
 * last dim, where a gather would move the elements one at a time (a
 * segmentation model's final upsampling of NCHW logits). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/fe_ops.h"

enum { TAPS_MAX = 4 };

typedef enum { MODE_NEAREST, MODE_LINEAR, MODE_CUBIC } interp_mode;

typedef enum {
    COORD_HALF_PIXEL,
    COORD_HALF_PIXEL_SYMMETRIC,
    COORD_PYTORCH_HALF_PIXEL,
    COORD_ALIGN_CORNERS,
    COORD_ASYMMETRIC,
    COORD_TF_HALF_PIXEL_FOR_NN,
    COORD_TF_CROP_AND_RESIZE,
} coord_mode;

typedef enum { NEAR_ROUND_PREFER_FLOOR, NEAR_ROUND_PREFER_CEIL, NEAR_FLOOR, NEAR_CEIL } near_mode;

/* What a node asks for, read the same way by inference and lowering. */
typedef struct resize_params {
    interp_mode mode;
    coord_mode coord;
    near_mode nearest;
    double cubic_a, extrapolation;
    bool exclude_outside, antialias;
    int32_t rank;
    int64_t in[FE_MAX_RANK], out[FE_MAX_RANK];
    double scale[FE_MAX_RANK];                       /* output / input length, as ONNX counts it */
    double roi_lo[FE_MAX_RANK], roi_hi[FE_MAX_RANK]; /* tf_crop_and_resize */
} resize_params;

static bool is_upsample(const fe_node *n) {
    return strcmp(n->op_type, "Upsample") == 0;
}

static lm_status read_modes(fe_ctx *c, const fe_node *n, resize_params *p) {
    static const char *const modes[] = {"nearest", "linear", "cubic", NULL};
    static const char *const coords[] = {
        "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
        "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize", NULL};
    static const char *const nears[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil",
                                        NULL};
    /* Upsample's linear was also spelt bilinear by some exporters; it has
     * no cubic. */
    static const char *const up_modes[] = {"nearest", "linear", "bilinear", NULL};
    int m = 0, ci = 0, ni = 0;
    lm_status st = fe_attr_choice(c, n, "mode", "nearest", is_upsample(n) ? up_modes : modes, &m);
    if (st) return st;
    if (m == 2 && is_upsample(n)) m = MODE_LINEAR;
    p->mode = (interp_mode)m;
    p->cubic_a = -0.75;
    p->extrapolation = 0;
    p->exclude_outside = false;
    if (is_upsample(n) || n->opset < 11) {
        /* Before opset 11 there was one rule: x_original = x_resized /
         * scale, and nearest took the floor. */
        p->coord = COORD_ASYMMETRIC;
        p->nearest = NEAR_FLOOR;
        return LM_OK;
    }
    float a, e;
    int64_t excl, antialias;
    if ((st = fe_attr_choice(c, n, "coordinate_transformation_mode", "half_pixel", coords, &ci)) ||
        (st = fe_attr_choice(c, n, "nearest_mode", "round_prefer_floor", nears, &ni)) ||
        (st = fe_attr_float(c, n, "cubic_coeff_a", -0.75f, &a)) ||
        (st = fe_attr_float(c, n, "extrapolation_value", 0.0f, &e)) ||
        (st = fe_attr_int(c, n, "exclude_outside", 0, &excl)) ||
        (st = fe_attr_int(c, n, "antialias", 0, &antialias)))
        return st;
    if (antialias != 0 && antialias != 1)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "attribute antialias=%lld (0 or 1)",
                       (long long)antialias);
    p->antialias = antialias == 1;
    p->coord = (coord_mode)ci;
    p->nearest = (near_mode)ni;
    p->cubic_a = a;
    p->extrapolation = e;
    p->exclude_outside = excl != 0;
    return LM_OK;
}

/* The axes the scales and sizes name (Resize-18's `axes`), all by default. */
static lm_status read_axes(fe_ctx *c, const fe_node *n, int32_t rank, int32_t *axes,
                           uint32_t *out_count) {
    const int64_t *a;
    size_t count;
    lm_status st = fe_attr_ints(c, n, "axes", &a, &count);
    if (st) return st;
    if (!a) {
        for (int32_t d = 0; d < rank; d++)
            axes[d] = d;
        *out_count = (uint32_t)rank;
        return LM_OK;
    }
    if (count > (size_t)rank)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "axes has %zu entries for rank %d", count, rank);
    for (size_t i = 0; i < count; i++) {
        if ((st = fe_axis(c, n, a[i], rank, &axes[i]))) return st;
        for (size_t j = 0; j < i; j++)
            if (axes[j] == axes[i])
                return fe_fail(c, n, LM_ERR_INVALID_FILE, "axis %d is named twice", axes[i]);
    }
    *out_count = (uint32_t)count;
    return LM_OK;
}

/* Output lengths and scales from sizes (with Resize-18's aspect ratio
 * policy) or from scales. */
static lm_status read_sizes(fe_ctx *c, const fe_node *n, const fe_tensor *sizes,
                            const int32_t *axes, uint32_t na, resize_params *p) {
    if (sizes->count != na)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "sizes has %llu entries for %u axes",
                       (unsigned long long)sizes->count, na);
    int pol = 0;
    lm_status st =
        fe_attr_choice(c, n, "keep_aspect_ratio_policy", "stretch",
                       (const char *const[]){"stretch", "not_larger", "not_smaller", NULL}, &pol);
    if (st) return st;
    double keep = pol == 1 ? INFINITY : 0;
    for (uint32_t i = 0; i < na; i++) {
        int64_t s = fe_tensor_get_i64(sizes, i);
        if (s < 1 || s > ((int64_t)1 << 31))
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "sizes[%u] = %lld is not a length", i,
                           (long long)s);
        double r = (double)s / (double)p->in[axes[i]];
        if (pol == 1 && r < keep) keep = r;
        if (pol == 2 && r > keep) keep = r;
        p->out[axes[i]] = s;
        p->scale[axes[i]] = r;
    }
    for (uint32_t i = 0; pol && i < na; i++) {
        int32_t d = axes[i];
        p->scale[d] = keep;
        p->out[d] = (int64_t)floor(keep * (double)p->in[d] + 0.5);
    }
    return LM_OK;
}

static lm_status read_scales(fe_ctx *c, const fe_node *n, uint64_t count, const float *attr,
                             const fe_tensor *t, const int32_t *axes, uint32_t na,
                             resize_params *p) {
    if (count != na)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "scales has %llu entries for %u axes",
                       (unsigned long long)count, na);
    for (uint32_t i = 0; i < na; i++) {
        int32_t d = axes[i];
        double s = t ? fe_tensor_get_f64(t, i) : (double)attr[i];
        if (!(s > 0) || !isfinite(s))
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "scales[%u] = %g is not positive", i, s);
        double span = p->coord == COORD_TF_CROP_AND_RESIZE ? p->roi_hi[d] - p->roi_lo[d] : 1.0;
        double len = floor((double)p->in[d] * span * s);
        if (len < 1 || len > (double)((int64_t)1 << 31))
            return fe_fail(c, n, LM_ERR_INVALID_FILE,
                           "scales[%u] = %g makes dim %d of length %lld %.0f long", i, s, d,
                           (long long)p->in[d], len);
        p->out[d] = (int64_t)len;
        p->scale[d] = s;
    }
    return LM_OK;
}

static lm_status resize_params_of(fe_ctx *c, const fe_node *n, resize_params *p) {
    memset(p, 0, sizeof *p);
    lm_status st = read_modes(c, n, p);
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0);
    p->rank = x->rank;
    for (int32_t d = 0; d < x->rank; d++) {
        p->in[d] = p->out[d] = x->dims[d];
        p->scale[d] = 1;
        p->roi_lo[d] = 0;
        p->roi_hi[d] = 1;
        if (x->dims[d] < 1) return fe_fail(c, n, LM_ERR_UNSUPPORTED, "input dim %d is empty", d);
    }
    int32_t axes[FE_MAX_RANK];
    uint32_t na = 0;
    if ((st = read_axes(c, n, x->rank, axes, &na))) return st;

    /* Where the scales and sizes come from: Upsample-7's attribute,
     * input 1 of Upsample-9 and Resize-10, inputs 1 (roi), 2 and 3 after. */
    const fe_tensor *roi = NULL, *scales = NULL, *sizes = NULL;
    const float *attr = NULL;
    size_t attr_count = 0;
    bool late = !is_upsample(n) && n->opset >= 11;
    if (is_upsample(n) && n->opset < 9) {
        if ((st = fe_attr_floats(c, n, "scales", &attr, &attr_count))) return st;
        if (!attr) return fe_fail(c, n, LM_ERR_INVALID_FILE, "attribute scales is missing");
    } else if (!late) {
        if (!fe_has_in(n, 1)) return fe_fail(c, n, LM_ERR_INVALID_FILE, "input scales is missing");
        if ((st = fe_in_const_required(c, n, 1, &scales))) return st;
    } else {
        if (fe_has_in(n, 1) && (st = fe_in_const_required(c, n, 1, &roi))) return st;
        if (fe_has_in(n, 2) && (st = fe_in_const_required(c, n, 2, &scales))) return st;
        if (fe_has_in(n, 3) && (st = fe_in_const_required(c, n, 3, &sizes))) return st;
        if (scales && scales->count == 0) scales = NULL; /* an empty tensor: not given */
        if (sizes && sizes->count == 0) sizes = NULL;
        if (!scales == !sizes)
            return fe_fail(c, n, LM_ERR_INVALID_FILE,
                           "exactly one of scales and sizes must be given (%s given)",
                           scales ? "both" : "neither");
    }
    if (roi && p->coord == COORD_TF_CROP_AND_RESIZE) {
        if (roi->count != 2 * (uint64_t)na)
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "roi has %llu entries for %u axes",
                           (unsigned long long)roi->count, na);
        for (uint32_t i = 0; i < na; i++) {
            p->roi_lo[axes[i]] = fe_tensor_get_f64(roi, i);
            p->roi_hi[axes[i]] = fe_tensor_get_f64(roi, na + i);
        }
    }
    if (sizes) return read_sizes(c, n, sizes, axes, na, p);
    return read_scales(c, n, scales ? scales->count : attr_count, attr, scales, axes, na, p);
}

/* ---- taps ---- */

/* One output position's taps along an axis: input indices (clamped into
 * the axis, which is ONNX's edge padding) and weights; `extrapolate` when
 * it takes the extrapolation value instead. */
typedef struct taps {
    int64_t index[TAPS_MAX];
    double weight[TAPS_MAX];
    bool extrapolate;
} taps;

/* The input coordinate output position `o` of axis d stands for. */
static double source_coord(const resize_params *p, int32_t d, int64_t o) {
    double in = (double)p->in[d], s = p->scale[d], x = (double)o;
    double len = s * in; /* the output's length as ONNX counts it: not rounded */
    switch (p->coord) {
    case COORD_HALF_PIXEL:
        return (x + 0.5) / s - 0.5;
    case COORD_HALF_PIXEL_SYMMETRIC: {
        double adjust = (double)p->out[d] / len, center = in / 2;
        return center * (1 - adjust) + (x + 0.5) / s - 0.5;
    }
    case COORD_PYTORCH_HALF_PIXEL:
        return len > 1 ? (x + 0.5) / s - 0.5 : 0;
    case COORD_ALIGN_CORNERS:
        return len == 1 ? 0 : x * (in - 1) / (len - 1);
    case COORD_ASYMMETRIC:
        return x / s;
    case COORD_TF_HALF_PIXEL_FOR_NN:
        return (x + 0.5) / s;
    case COORD_TF_CROP_AND_RESIZE: {
        double lo = p->roi_lo[d], hi = p->roi_hi[d];
        double at = len == 1 ? (hi - lo) * (in - 1) / 2 : x * (hi - lo) * (in - 1) / (len - 1);
        return at + lo * (in - 1);
    }
    }
    return 0;
}

/* Keys' cubic convolution kernel with parameter a, at the four taps around
 * a point `r` past the second one. */
static void cubic_weights(double a, double r, double *w) {
    double t0 = r + 1, t3 = 2 - r, s = 1 - r;
    w[0] = ((a * t0 - 5 * a) * t0 + 8 * a) * t0 - 4 * a;
    w[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
    w[2] = ((a + 2) * s - (a + 3)) * s * s + 1;
    w[3] = ((a * t3 - 5 * a) * t3 + 8 * a) * t3 - 4 * a;
}

/* Taps per output position: 2 for nearest (one of them weighted 1) and
 * linear, 4 for cubic. */
static uint32_t tap_count(const resize_params *p) {
    return p->mode == MODE_CUBIC ? 4 : 2;
}

static void taps_of(const resize_params *p, int32_t d, int64_t o, taps *t) {
    memset(t, 0, sizeof *t);
    int64_t len = p->in[d];
    double x = source_coord(p, d, o);
    if (p->coord == COORD_TF_CROP_AND_RESIZE && (x < 0 || x > (double)(len - 1))) {
        t->extrapolate = true;
        return;
    }
    /* The taps are the points nearest x, a tie going to the lower one: from
     * floor(x) on, or around x itself when it is whole (its weight 1). */
    double base = floor(x), r = x - base;
    if (r == 0) {
        base -= 1;
        r = 1;
    }
    uint32_t n = tap_count(p);
    int64_t first = (int64_t)base - (int64_t)n / 2 + 1;
    switch (p->mode) {
    case MODE_NEAREST: {
        bool up = r == 1;
        if (!up) {
            switch (p->nearest) {
            case NEAR_ROUND_PREFER_FLOOR:
                up = r > 0.5;
                break;
            case NEAR_ROUND_PREFER_CEIL:
                up = r >= 0.5;
                break;
            case NEAR_FLOOR:
                up = false;
                break;
            case NEAR_CEIL:
                up = true;
                break;
            }
        }
        t->weight[up ? 1 : 0] = 1;
        break;
    }
    case MODE_LINEAR:
        t->weight[0] = 1 - r;
        t->weight[1] = r;
        break;
    case MODE_CUBIC:
        cubic_weights(p->cubic_a, r, t->weight);
        break;
    }
    double sum = 0;
    for (uint32_t k = 0; k < n; k++) {
        int64_t i = first + (int64_t)k;
        if (p->exclude_outside && (i < 0 || i >= len)) t->weight[k] = 0;
        sum += t->weight[k];
        t->index[k] = i < 0 ? 0 : i >= len ? len - 1 : i;
    }
    if (p->exclude_outside && sum != 0)
        for (uint32_t k = 0; k < n; k++)
            t->weight[k] /= sum;
}

/* Whether axis d is filtered with antialias: a linear or cubic axis that
 * shrinks (growing, the filter is the plain one). */
static bool axis_dense(const resize_params *p, int32_t d) {
    return p->antialias && p->mode != MODE_NEAREST && p->scale[d] < 1;
}

/* The antialiasing filter at distance `x` (in output pixels): a triangle
 * for linear, Keys' kernel with parameter a for cubic. */
static double filter_at(const resize_params *p, double x) {
    x = fabs(x);
    if (p->mode == MODE_LINEAR) return x < 1 ? 1 - x : 0;
    double a = p->cubic_a, x2 = x * x, x3 = x2 * x;
    if (x <= 1) return (a + 2) * x3 - (a + 3) * x2 + 1;
    if (x < 2) return a * x3 - 5 * a * x2 + 8 * a * x - 4 * a;
    return 0;
}

/* Column `o` of a dense axis's matrix [in, out] (row-major): the stretched
 * filter's taps around the source coordinate, each weight at its input
 * index (clamped into the axis: edge padding), normalised to sum to 1;
 * none where the position extrapolates (*out_extrapolate). */
static void dense_column(const resize_params *p, int32_t d, int64_t o, fe_tensor *m,
                         bool *out_extrapolate) {
    int64_t len = p->in[d], out = p->out[d];
    double s = p->scale[d], x = source_coord(p, d, o);
    *out_extrapolate = p->coord == COORD_TF_CROP_AND_RESIZE && (x < 0 || x > (double)(len - 1));
    if (*out_extrapolate) return;
    double base = floor(x), r = x - base;
    if (r == 0) {
        base -= 1;
        r = 1;
    }
    /* Taps base + first .. base + 1 - first: the filter's support (1 for
     * linear, 2 for cubic) stretched by 1 / s. */
    double support = p->mode == MODE_LINEAR ? 1 : 2;
    int64_t first = (int64_t)floor(-support / s) + 1, last = 1 - first;
    double sum = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int64_t k = first; k <= last; k++) {
            int64_t i = (int64_t)base + k;
            if (p->exclude_outside && (i < 0 || i >= len)) continue;
            double w = filter_at(p, s * ((double)k - r));
            if (!pass) {
                sum += w;
                continue;
            }
            uint64_t at = (uint64_t)(i < 0      ? 0
                                     : i >= len ? len - 1
                                                : i) *
                              (uint64_t)out +
                          (uint64_t)o;
            fe_tensor_set_f64(m, at, fe_tensor_get_f64(m, at) + (sum != 0 ? w / sum : 0));
        }
    }
}

/* Adds axis d's taps to the [in, out] matrix m (zeros where a position
 * extrapolates). */
static void add_taps(const resize_params *p, int32_t d, fe_tensor *m) {
    int64_t len = p->out[d];
    for (int64_t o = 0; o < len; o++) {
        taps t;
        taps_of(p, d, o, &t);
        for (uint32_t k = 0; k < tap_count(p) && !t.extrapolate; k++) {
            uint64_t at = (uint64_t)(t.index[k] * len + o);
            fe_tensor_set_f64(m, at, fe_tensor_get_f64(m, at) + t.weight[k]);
        }
    }
}

lm_status fe_resize_matrix(fe_ctx *c, const fe_node *n, int32_t d, fe_tensor **out) {
    resize_params p;
    lm_status st = resize_params_of(c, n, &p);
    if (st) return st;
    int64_t in = p.in[d], len = p.out[d];
    fe_tensor *m;
    if ((st = fe_const_new(c, FE_DOUBLE, 2, (const int64_t[]){in, len}, &m)))
        return fe_nn_fail(c, n, st);
    for (uint64_t i = 0; i < m->count; i++)
        fe_tensor_set_f64(m, i, 0.0);
    bool extrapolate;
    for (int64_t o = 0; o < len && axis_dense(&p, d); o++)
        dense_column(&p, d, o, m, &extrapolate);
    if (!axis_dense(&p, d)) add_taps(&p, d, m);
    *out = m;
    return LM_OK;
}

/* ---- inference ---- */

static lm_status infer_resize(fe_ctx *c, const fe_node *n) {
    bool up = is_upsample(n);
    lm_status st = fe_check_inputs(c, n, 1, up ? 2 : 4);
    if (!st)
        st = fe_check_attrs(
            c, n,
            up ? (const char *const[]){"mode", "scales", NULL}
               : (const char *const[]){"mode", "coordinate_transformation_mode", "nearest_mode",
                                       "cubic_coeff_a", "exclude_outside", "extrapolation_value",
                                       "antialias", "axes", "keep_aspect_ratio_policy", NULL});
    resize_params p;
    if (!st) st = resize_params_of(c, n, &p);
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0);
    if (p.mode != MODE_NEAREST && !fe_elem_is_float(x->elem))
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "%s interpolation needs a float input (only nearest moves integers)",
                       p.mode == MODE_LINEAR ? "linear" : "cubic");
    if (!fe_elem_is_numeric(x->elem))
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "input must be a number tensor");
    for (int32_t d = 0; d < p.rank; d++)
        if (axis_dense(&p, d) && (double)p.in[d] * (double)p.out[d] > (double)(1 << 26))
            return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                           "antialias on dim %d, %lld to %lld long: its filter matrix would have "
                           "more than 2^26 entries",
                           d, (long long)p.in[d], (long long)p.out[d]);
    return fe_set_out_type(c, n, 0, x->elem, x->rank, p.out);
}

/* ---- lowering ---- */

/* Host tables for one axis: per tap, the indices [out] (int32) and the
 * weights (float, shaped to broadcast along the axis); `extra`, the
 * extrapolation value where a position takes it (0 elsewhere). When every
 * position takes one tap with weight 1 and none extrapolates, `single`
 * and `pick` holds those indices: the axis is one gather, and nothing at
 * all when `identity` (each position takes itself). */
typedef struct axis_plan {
    fe_tensor *index[TAPS_MAX], *weight[TAPS_MAX], *pick, *extra;
    /* An antialiased axis, or a last one: [in, out], the product's right side */
    fe_tensor *matrix;
    bool single, identity, has_extra;
} axis_plan;

/* The most entries of the matrix a last axis is resampled with instead of
 * gathered (plan_axis): 4 MiB of float32. */
#define LAST_AXIS_MATRIX_MAX (1 << 20)

/* Axis d's plan; `last`: d is the input's last dim. */
static lm_status plan_axis(fe_ctx *c, const resize_params *p, int32_t d, bool last, axis_plan *a) {
    memset(a, 0, sizeof *a);
    uint32_t n = tap_count(p);
    int64_t out = p->out[d];
    int64_t wdims[FE_MAX_RANK];
    for (int32_t i = 0; i < p->rank; i++)
        wdims[i] = i == d ? out : 1;
    lm_status st = fe_const_new(c, FE_FLOAT, (uint32_t)p->rank, wdims, &a->extra);
    if (!st && axis_dense(p, d)) {
        if ((st = fe_const_new(c, FE_FLOAT, 2, (const int64_t[]){p->in[d], out}, &a->matrix)))
            return st;
        for (int64_t o = 0; o < out; o++) {
            bool extrapolate;
            dense_column(p, d, o, a->matrix, &extrapolate);
            if (extrapolate) {
                fe_tensor_set_f64(a->extra, (uint64_t)o, p->extrapolation);
                a->has_extra = true;
            }
        }
        return LM_OK;
    }
    if (!st) st = fe_const_new(c, FE_INT32, 1, &out, &a->pick);
    for (uint32_t k = 0; k < n && !st; k++) {
        st = fe_const_new(c, FE_INT32, 1, &out, &a->index[k]);
        if (!st) st = fe_const_new(c, FE_FLOAT, (uint32_t)p->rank, wdims, &a->weight[k]);
    }
    if (st) return st;
    a->single = true;
    a->identity = p->in[d] == out;
    for (int64_t o = 0; o < out; o++) {
        taps t;
        taps_of(p, d, o, &t);
        int64_t pick = -1;
        for (uint32_t k = 0; k < n; k++) {
            fe_tensor_set_i64(a->index[k], (uint64_t)o, t.index[k]);
            fe_tensor_set_f64(a->weight[k], (uint64_t)o, t.weight[k]);
            if (t.weight[k] == 1 && pick < 0)
                pick = t.index[k];
            else if (t.weight[k] != 0)
                a->single = false;
        }
        if (t.extrapolate) {
            fe_tensor_set_f64(a->extra, (uint64_t)o, p->extrapolation);
            a->has_extra = true;
            a->single = false;
        }
        if (pick < 0) a->single = false;
        if (pick != o) a->identity = false;
        fe_tensor_set_i64(a->pick, (uint64_t)o, pick < 0 ? 0 : pick);
    }
    a->identity &= a->single;
    /* Along the last dim a gather moves the elements one by one; a product
     * with the [in, out] matrix of the same taps and weights runs on whole
     * tiles (the sums of each output's taps then round once, not once per
     * tap). */
    if (a->single || !last || (double)p->in[d] * (double)out > LAST_AXIS_MATRIX_MAX) return LM_OK;
    if ((st = fe_const_new(c, FE_FLOAT, 2, (const int64_t[]){p->in[d], out}, &a->matrix)))
        return st;
    for (uint64_t i = 0; i < a->matrix->count; i++)
        fe_tensor_set_f64(a->matrix, i, 0.0);
    add_taps(p, d, a->matrix);
    return LM_OK;
}

/* `x` resampled along axis d by its matrix: moved last, times the
 * plan's matrix, moved back. */
static lm_status resample_dense(fe_ctx *c, const fe_node *n, int32_t d, const axis_plan *a,
                                lmnn_tensor x, lmnn_tensor *out) {
    lmnn_tensor m, moved = x, flat = {0}, y = {0}, shaped = {0};
    lmnn_tensor_info info;
    int32_t rank;
    lm_status st = fe_aux(c, n, (uint32_t)d * 16, a->matrix, LMNN_TILE, &m);
    if (!st) st = lmnn_tensor_get_info(x, &info);
    if (st) return st;
    rank = (int32_t)info.shape.rank;
    if (d != rank - 1) st = lmnn_transpose(x, d, rank - 1, NULL, &moved);
    /* A 1-D axis is a row of a 2-D product. */
    lmnn_shape two = LMNN_SHAPE(1, info.shape.dims[d]);
    if (!st && rank == 1) st = lmnn_reshape(moved, &two, NULL, &flat);
    if (!st) st = lmnn_matmul(rank == 1 ? flat : moved, m, NULL, &y);
    if (!st && rank == 1) {
        lmnn_shape one = LMNN_SHAPE((uint32_t)a->matrix->dims[1]);
        st = lmnn_reshape(y, &one, NULL, &shaped);
        fe_free(y);
        y = shaped;
    }
    if (!st && d != rank - 1) {
        st = lmnn_transpose(y, d, rank - 1, NULL, out);
        fe_free(y);
    } else if (!st) {
        *out = y;
    }
    if (moved.id != x.id) fe_free(moved);
    fe_free(flat);
    return st;
}

/* `x` resampled along axis d by plan a, as a new tensor in *out. The
 * node's tables for axis d are its aux slots 16 d .. 16 d + 15. */
static lm_status resample_axis(fe_ctx *c, const fe_node *n, int32_t d, const axis_plan *a,
                               uint32_t taps_n, lmnn_tensor x, lmnn_tensor *out) {
    uint32_t slot = (uint32_t)d * 16;
    lmnn_tensor idx, acc = {0};
    lm_status st;
    if (a->single) {
        st = fe_aux(c, n, slot + 14, a->pick, LMNN_ROW_MAJOR, &idx);
        if (!st) st = lmnn_index_select(x, d, idx, NULL, out);
        return st;
    }
    st = LM_OK;
    if (a->matrix) {
        st = resample_dense(c, n, d, a, x, &acc);
        taps_n = 0;
    }
    for (uint32_t k = 0; k < taps_n && !st; k++) {
        lmnn_tensor w, g, m, sum;
        if ((st = fe_aux(c, n, slot + 2 * k, a->index[k], LMNN_ROW_MAJOR, &idx)) ||
            (st = fe_aux(c, n, slot + 2 * k + 1, a->weight[k], LMNN_TILE, &w)) ||
            (st = lmnn_index_select(x, d, idx, NULL, &g)))
            break;
        st = lmnn_binary(LMNN_BINARY_MUL, g, w, NULL, &m);
        fe_free(g);
        if (st) break;
        if (!acc.id) {
            acc = m;
            continue;
        }
        st = lmnn_binary(LMNN_BINARY_ADD, acc, m, NULL, &sum);
        fe_free(m);
        fe_free(acc);
        acc = st ? (lmnn_tensor){0} : sum;
    }
    if (!st && a->has_extra) {
        lmnn_tensor e, sum;
        st = fe_aux(c, n, slot + 15, a->extra, LMNN_TILE, &e);
        if (!st) st = lmnn_binary(LMNN_BINARY_ADD, acc, e, NULL, &sum);
        if (!st) {
            fe_free(acc);
            acc = sum;
        }
    }
    if (st) {
        fe_free(acc);
        return st;
    }
    *out = acc;
    return LM_OK;
}

/* p with the axes of an NCHW value in the order of its flat image's
 * [N, H, W, C]. */
static void params_nhwc(resize_params *p) {
    static const int32_t from[4] = {0, 2, 3, 1};
    resize_params q = *p;
    for (int32_t d = 0; d < 4; d++) {
        q.in[d] = p->in[from[d]];
        q.out[d] = p->out[from[d]];
        q.scale[d] = p->scale[from[d]];
        q.roi_lo[d] = p->roi_lo[from[d]];
        q.roi_hi[d] = p->roi_hi[from[d]];
    }
    *p = q;
}

/* The input as a tile tensor: on images (fe_plan.nhwc_out) the flat image
 * as [N, H, W, C], with p's axes in that order; *out_owned: a new one. */
static lm_status resize_input(fe_ctx *c, const fe_node *n, resize_params *p, lmnn_tensor *out,
                              bool *out_owned) {
    *out_owned = false;
    if (!c->plans[n - c->g->nodes].nhwc_out) return fe_in_dev(c, n, 0, out);
    lmnn_tensor img;
    bool flat;
    lm_status st = fe_in_image(c, n, 0, &img, &flat);
    if (!st && !flat) st = fe_fail(c, n, LM_ERR_INTERNAL, "input 0 is not an image");
    if (st) return st;
    lmnn_shape s =
        LMNN_SHAPE((uint32_t)p->in[0], (uint32_t)p->in[2], (uint32_t)p->in[3], (uint32_t)p->in[1]);
    if ((st = fe_image_tiles(c, n, img, &s, out, out_owned))) return st;
    params_nhwc(p);
    return LM_OK;
}

static lm_status lower_resize(fe_ctx *c, const fe_node *n) {
    resize_params p;
    lm_status st = resize_params_of(c, n, &p);
    if (st) return st;
    lmnn_tensor x;
    /* x is the graph's until an axis makes a new one (unless an image) */
    bool owned, image = c->plans[n - c->g->nodes].nhwc_out;
    if ((st = resize_input(c, n, &p, &x, &owned))) return st;
    for (int32_t d = 0; d < p.rank; d++) {
        axis_plan a;
        if ((st = plan_axis(c, &p, d, d == p.rank - 1, &a))) break;
        if (a.identity) continue;
        lmnn_tensor y;
        if ((st = resample_axis(c, n, d, &a, tap_count(&p), x, &y))) {
            st = fe_nn_fail(c, n, st);
            break;
        }
        if (owned) fe_free(x);
        x = y;
        owned = true;
    }
    if (st) {
        if (owned) fe_free(x);
        return st;
    }
    if (image) {
        /* [N, OH, OW, C] as the flat image. */
        lmnn_shape s =
            LMNN_SHAPE(1, 1, (uint32_t)(p.out[0] * p.out[1] * p.out[2]), (uint32_t)p.out[3]);
        lmnn_tensor flat;
        if (!owned) return fe_out_alias(c, n, 0, 0); /* every axis onto itself */
        return (st = fe_reshape_owned(c, n, x, &s, &flat)) ? st : fe_out_dev(c, n, 0, flat);
    }
    /* Every axis mapping onto itself, the output is the input. */
    return owned ? fe_out_dev(c, n, 0, x) : fe_out_alias(c, n, 0, 0);
}

/* A float rank-4 resize (an upsampling between convolutions: a U-Net's,
 * a feature pyramid's) runs on images: each axis the same way in the flat
 * image's [N, H, W, C] order (FE_IMAGE_ALL; its only run-time input is the
 * image). */
static uint32_t resize_images(fe_ctx *c, const fe_node *n) {
    const fe_type *x = fe_in_type(c, n, 0);
    resize_params p;
    if (x->rank != 4 || !fe_elem_is_float(x->elem) || resize_params_of(c, n, &p)) return 0;
    return FE_IMAGE_ALL;
}

const fe_op_def fe_ops_resize[] = {
    /* Inputs 1..3 (roi, scales, sizes) decide the output's shape. */
    {"Resize", infer_resize, lower_resize, 0xeu, resize_images},
    {"Upsample", infer_resize, lower_resize, 1u << 1, resize_images},
};
const size_t fe_ops_resize_count = sizeof fe_ops_resize / sizeof fe_ops_resize[0];
