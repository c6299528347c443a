/* Sampling at run-time positions: GridSample (opset 16's mode names
 * bilinear, nearest, bicubic and opset 20's linear, nearest, cubic), on
 * 4-D inputs and, nearest and linear, 5-D ones; RoiAlign and MaxRoiPool
 * (below).
 *
 * The grid is a run-time tensor, so unlike Resize every position and weight
 * is worked out on the device. Per output position and axis: the grid value
 * unnormalised to a pixel coordinate, the padding rule applied to it, then
 * its taps (1 for nearest, 2 for linear, 4 for cubic), each with a weight
 * (zero where the tap falls outside the image) and an index clamped into
 * it. Each combination of an x, a y (and a z) tap is one gather of whole
 * channel rows from the image held as [N * (D *) H * W, C], times the
 * product of the taps' weights; the sum over combinations is the output. Positions and weights are
 * float32 in every dtype mode, so row numbers stay exact (below 2^24). The rules follow PyTorch's
 * grid_sample, which ONNX's definition matches: the padding rule moves the coordinate before linear
 * and nearest interpolation, and each tap of cubic. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/fe_ops.h"
#include "frontend/fe_passes.h"

typedef enum { GS_NEAREST, GS_LINEAR, GS_CUBIC } gs_mode;
typedef enum { GS_ZEROS, GS_BORDER, GS_REFLECTION } gs_padding;

enum { GS_TAPS_MAX = 4 };

typedef struct gs_params {
    gs_mode mode;
    gs_padding padding;
    bool align;
    int32_t sp;                    /* spatial dims: 2 or 3 */
    int64_t n, ch, in[3], out[3];  /* in and out: (D,) H, W */
    int64_t in_volume, out_volume; /* positions per image */
} gs_params;

static lm_status gs_params_of(fe_ctx *c, const fe_node *n, gs_params *p) {
    memset(p, 0, sizeof *p);
    /* Opset 20 renamed the modes after the axis count they generalise to. */
    static const char *const modes16[] = {"nearest", "bilinear", "bicubic", NULL};
    static const char *const modes20[] = {"nearest", "linear", "cubic", NULL};
    static const char *const paddings[] = {"zeros", "border", "reflection", NULL};
    bool v20 = n->opset >= 20;
    int m = 0, pad = 0;
    int64_t align;
    lm_status st = fe_check_inputs(c, n, 2, 2);
    if (!st)
        st = fe_check_attrs(c, n,
                            (const char *const[]){"align_corners", "mode", "padding_mode", NULL});
    if (!st)
        st = fe_attr_choice(c, n, "mode", v20 ? "linear" : "bilinear", v20 ? modes20 : modes16, &m);
    if (!st) st = fe_attr_choice(c, n, "padding_mode", "zeros", paddings, &pad);
    if (!st) st = fe_attr_int(c, n, "align_corners", 0, &align);
    if (st) return st;
    p->mode = (gs_mode)m;
    p->padding = (gs_padding)pad;
    p->align = align != 0;
    const fe_type *x = fe_in_type(c, n, 0), *g = fe_in_type(c, n, 1);
    if (!fe_elem_is_float(x->elem) || !fe_elem_is_float(g->elem))
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "X and grid must be float tensors");
    if (x->rank != 4 && x->rank != 5)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "X has %d dims: only 4-D (N, C, H, W) and 5-D (N, C, D, H, W) inputs are "
                       "supported",
                       x->rank);
    p->sp = x->rank - 2;
    if (p->sp == 3 && p->mode == GS_CUBIC)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "cubic sampling of a 5-D input is not supported");
    if (g->rank != x->rank || g->dims[0] != x->dims[0] || g->dims[x->rank - 1] != p->sp)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "grid must be [N, %s, %d] with N = %lld",
                       p->sp == 2 ? "H_out, W_out" : "D_out, H_out, W_out", (int)p->sp,
                       (long long)x->dims[0]);
    p->n = x->dims[0];
    p->ch = x->dims[1];
    p->in_volume = p->out_volume = 1;
    for (int32_t i = 0; i < p->sp; i++) {
        p->in[i] = x->dims[2 + i];
        p->out[i] = g->dims[1 + i];
        p->in_volume *= p->in[i];
        p->out_volume *= p->out[i];
    }
    /* Row numbers are computed in float32: exact below 2^24. */
    if (p->n * p->in_volume > ((int64_t)1 << 24) || p->n * p->out_volume > ((int64_t)1 << 24))
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "%lld input and %lld output positions (at most 2^24 each)",
                       (long long)(p->n * p->in_volume), (long long)(p->n * p->out_volume));
    return LM_OK;
}

static lm_status infer_gridsample(fe_ctx *c, const fe_node *n) {
    gs_params p;
    lm_status st = gs_params_of(c, n, &p);
    if (st) return st;
    int64_t dims[5] = {p.n, p.ch, p.out[0], p.out[1], p.out[2]};
    return fe_set_out_type(c, n, 0, fe_in_type(c, n, 0)->elem, 2 + p.sp, dims);
}

/* ---- lowering (with a work list, fe_work: many small element-wise ops) ---- */

static lmnn_tensor gs_clamp(fe_work *k, lmnn_tensor a, double lo, double hi) {
    lmnn_tensor t = {0};
    return k->st ? t : fe_work_keep(k, lmnn_clamp(a, lo, hi, &t), &t);
}

static lm_status gs_round_even(lmnn_tensor a, lmnn_tensor *out) {
    return lmnn_round(a, 0, out);
}

/* Coordinate x reflected into the image as PyTorch's grid_sample does:
 * about the corner pixels' centres (align_corners) or their outer edges,
 * as many times as it takes, then clamped to [0, size - 1]. */
static lmnn_tensor gs_reflect(fe_work *k, lmnn_tensor x, int64_t size, bool align) {
    double lo = align ? 0 : -0.5, span = align ? (double)(size - 1) : (double)size;
    if (span <= 0) return fe_work_scalar(k, LMNN_BINARY_MUL, x, 0.0);
    /* d = |x - lo|; q = floor(d / span); e = d - q span; odd q runs back. */
    lmnn_tensor d = fe_work_unary(k, lmnn_abs, fe_work_scalar(k, LMNN_BINARY_SUB, x, lo));
    lmnn_tensor q = fe_work_unary(k, lmnn_floor, fe_work_scalar(k, LMNN_BINARY_DIV, d, span));
    lmnn_tensor e =
        fe_work_binary(k, LMNN_BINARY_SUB, d, fe_work_scalar(k, LMNN_BINARY_MUL, q, span));
    lmnn_tensor half = fe_work_unary(k, lmnn_floor, fe_work_scalar(k, LMNN_BINARY_MUL, q, 0.5));
    lmnn_tensor odd =
        fe_work_binary(k, LMNN_BINARY_SUB, q, fe_work_scalar(k, LMNN_BINARY_MUL, half, 2.0));
    /* lo + e + odd (span - 2 e) */
    lmnn_tensor back =
        fe_work_scalar(k, LMNN_BINARY_RSUB, fe_work_scalar(k, LMNN_BINARY_MUL, e, 2.0), span);
    lmnn_tensor r =
        fe_work_binary(k, LMNN_BINARY_ADD, e, fe_work_binary(k, LMNN_BINARY_MUL, odd, back));
    return gs_clamp(k, fe_work_scalar(k, LMNN_BINARY_ADD, r, lo), 0, (double)(size - 1));
}

/* The padding rule applied to coordinate x on an axis of `size` pixels. */
static lmnn_tensor gs_pad(fe_work *k, const gs_params *p, lmnn_tensor x, int64_t size) {
    switch (p->padding) {
    case GS_BORDER:
        return gs_clamp(k, x, 0, (double)(size - 1));
    case GS_REFLECTION:
        return gs_reflect(k, x, size, p->align);
    case GS_ZEROS:
        break;
    }
    return x;
}

/* One axis's taps: weight[t] (zero outside the image) and the clamped
 * index[t], each [G, 1]. */
typedef struct gs_axis {
    uint32_t taps;
    lmnn_tensor weight[GS_TAPS_MAX], index[GS_TAPS_MAX];
} gs_axis;

/* Cubic convolution weights (A = -0.75) of the taps at -1, 0, 1, 2 from
 * floor(x), for t = x - floor(x). */
static void gs_cubic_weights(fe_work *k, lmnn_tensor t, lmnn_tensor *w) {
    const double a = -0.75;
    for (int i = 0; i < 4; i++) {
        /* Distance from the tap: 1 + t, t, 1 - t, 2 - t. */
        lmnn_tensor d = i == 0   ? fe_work_scalar(k, LMNN_BINARY_ADD, t, 1.0)
                        : i == 1 ? t
                        : i == 2 ? fe_work_scalar(k, LMNN_BINARY_RSUB, t, 1.0)
                                 : fe_work_scalar(k, LMNN_BINARY_RSUB, t, 2.0);
        lmnn_tensor d2 = fe_work_binary(k, LMNN_BINARY_MUL, d, d);
        if (i == 1 || i == 2) {
            /* |d| <= 1: ((a + 2) d - (a + 3)) d^2 + 1 */
            lmnn_tensor u = fe_work_scalar(k, LMNN_BINARY_SUB,
                                           fe_work_scalar(k, LMNN_BINARY_MUL, d, a + 2), a + 3);
            w[i] =
                fe_work_scalar(k, LMNN_BINARY_ADD, fe_work_binary(k, LMNN_BINARY_MUL, u, d2), 1.0);
        } else {
            /* 1 < |d| < 2: ((a d - 5 a) d + 8 a) d - 4 a */
            lmnn_tensor u =
                fe_work_scalar(k, LMNN_BINARY_SUB, fe_work_scalar(k, LMNN_BINARY_MUL, d, a), 5 * a);
            lmnn_tensor v =
                fe_work_scalar(k, LMNN_BINARY_ADD, fe_work_binary(k, LMNN_BINARY_MUL, u, d), 8 * a);
            w[i] =
                fe_work_scalar(k, LMNN_BINARY_SUB, fe_work_binary(k, LMNN_BINARY_MUL, v, d), 4 * a);
        }
    }
}

/* The taps of grid coordinate g ([G, 1], in [-1, 1] for the image) on an
 * axis of `size` pixels. */
static void gs_axis_taps(fe_work *k, const gs_params *p, lmnn_tensor g, int64_t size,
                         gs_axis *out) {
    double s = (double)size;
    lmnn_tensor x = fe_work_scalar(
        k, LMNN_BINARY_ADD, fe_work_scalar(k, LMNN_BINARY_MUL, g, p->align ? (s - 1) / 2 : s / 2),
        (s - 1) / 2);
    lmnn_tensor pos[GS_TAPS_MAX], w[GS_TAPS_MAX];
    if (p->mode != GS_CUBIC) x = gs_pad(k, p, x, size);
    if (p->mode == GS_NEAREST) {
        out->taps = 1;
        pos[0] = fe_work_unary(k, gs_round_even, x);
        w[0] = fe_work_scalar(k, LMNN_BINARY_ADD, fe_work_scalar(k, LMNN_BINARY_MUL, x, 0.0), 1.0);
    } else {
        lmnn_tensor f = fe_work_unary(k, lmnn_floor, x),
                    t = fe_work_binary(k, LMNN_BINARY_SUB, x, f);
        if (p->mode == GS_LINEAR) {
            out->taps = 2;
            pos[0] = f;
            pos[1] = fe_work_scalar(k, LMNN_BINARY_ADD, f, 1.0);
            w[0] = fe_work_scalar(k, LMNN_BINARY_RSUB, t, 1.0);
            w[1] = t;
        } else {
            out->taps = 4;
            for (int i = 0; i < 4; i++)
                pos[i] = fe_work_scalar(k, LMNN_BINARY_ADD, f, (double)(i - 1));
            gs_cubic_weights(k, t, w);
            for (int i = 0; i < 4; i++)
                pos[i] = gs_pad(k, p, pos[i], size);
        }
    }
    for (uint32_t i = 0; i < out->taps; i++) {
        /* inside = (pos >= 0) (pos <= size - 1) */
        lmnn_tensor inside =
            fe_work_binary(k, LMNN_BINARY_MUL, fe_work_scalar(k, LMNN_BINARY_GE, pos[i], 0.0),
                           fe_work_scalar(k, LMNN_BINARY_LE, pos[i], s - 1));
        out->weight[i] = fe_work_binary(k, LMNN_BINARY_MUL, w[i], inside);
        out->index[i] = gs_clamp(k, pos[i], 0, s - 1);
    }
}

/* The image X ([N, C, spatial...], rank 4 or 5; `volume` positions an
 * image) as channel rows [N * volume, C], row-major: every tap gathers rows
 * from it, and a gather from tiles would untilize the whole image each
 * time. */
static lmnn_tensor gs_image_rows(fe_work *k, lmnn_tensor x, int64_t n, int64_t volume, int64_t ch) {
    lmnn_tensor t = {0}, rows = x;
    lmnn_shape img_rows = LMNN_SHAPE((uint32_t)(n * volume), (uint32_t)ch);
    /* One channel: NCHW order is already the rows' order. Else [N, C,
     * volume] with its last two dims swapped: tiles transposed in place,
     * where moving C last among four or five dims goes element by element. */
    if (ch != 1) {
        lmnn_shape planes = LMNN_SHAPE((uint32_t)n, (uint32_t)ch, (uint32_t)volume);
        lmnn_tensor p = fe_work_keep(k, lmnn_reshape(x, &planes, NULL, &t), &t);
        rows = k->st
                   ? t
                   : fe_work_keep(k, lmnn_permute(p, (const int32_t[]){0, 2, 1}, 3, NULL, &t), &t);
    }
    lmnn_tensor tiles = k->st ? t : fe_work_keep(k, lmnn_reshape(rows, &img_rows, NULL, &t), &t);
    return k->st ? t : fe_work_keep(k, lmnn_to_layout(tiles, LMNN_ROW_MAJOR, &t), &t);
}

/* A float input in float32 whatever the dtype mode (positions stay exact). */
static lmnn_tensor gs_float32(fe_work *k, lmnn_tensor a) {
    lmnn_tensor_info info;
    lmnn_tensor t = {0};
    if (k->st || (k->st = lmnn_tensor_get_info(a, &info))) return t;
    return info.dtype == LMNN_FLOAT32 ? a : fe_work_keep(k, lmnn_typecast(a, LMNN_FLOAT32, &t), &t);
}

/* Taps gathered by one lmnn_gather_rows_weighted (gs_gather): each one's
 * rows and weights [1, G], row-major (int32 and float32), owned here. */
typedef struct gs_taps {
    uint32_t count;
    lmnn_tensor rows[LMNN_GATHER_TAPS_MAX], weights[LMNN_GATHER_TAPS_MAX];
} gs_taps;

static void gs_taps_free(gs_taps *list) {
    for (uint32_t i = 0; i < list->count; i++) {
        fe_free(list->rows[i]);
        fe_free(list->weights[i]);
    }
    list->count = 0;
}

/* The number of combinations of one tap of each of the `count` axes. */
static uint32_t gs_combinations(const gs_axis *const *axes, uint32_t count) {
    uint32_t n = 1;
    for (uint32_t a = 0; a < count; a++)
        n *= axes[a]->taps;
    return n;
}

/* The rows (base + sum of index * stride) and the weight (the product of
 * the taps' weights) of the combination `pick` of one tap of each of the
 * `count` axes, kept on the work list. */
static void gs_tap(fe_work *k, lmnn_tensor base, const gs_axis *const *axes, const int64_t *strides,
                   uint32_t count, const uint32_t *pick, lmnn_tensor *out_at, lmnn_tensor *out_wt) {
    lmnn_tensor at = base, wt = {0};
    for (uint32_t a = 0; a < count; a++) {
        lmnn_tensor idx = axes[a]->index[pick[a]], w = axes[a]->weight[pick[a]];
        at = fe_work_binary(
            k, LMNN_BINARY_ADD, at,
            strides[a] == 1 ? idx : fe_work_scalar(k, LMNN_BINARY_MUL, idx, (double)strides[a]));
        wt = a ? fe_work_binary(k, LMNN_BINARY_MUL, wt, w) : w;
    }
    *out_at = at;
    *out_wt = wt;
}

/* Steps `pick` to the next combination, the last axis fastest; false
 * after the last. */
static bool gs_next(uint32_t *pick, const gs_axis *const *axes, uint32_t count) {
    for (uint32_t a = count; a-- > 0;) {
        if (++pick[a] < axes[a]->taps) return true;
        pick[a] = 0;
    }
    return false;
}

/* Appends to `list` every combination of one tap of each of the `count`
 * axes (the caller makes room for them: more is an internal error): rows
 * base + sum of index * stride, weight the product of the taps' weights, G
 * of each. */
static void gs_taps_add(fe_work *k, gs_taps *list, lmnn_tensor base, const gs_axis *const *axes,
                        const int64_t *strides, uint32_t count, int64_t G) {
    lmnn_tensor t = {0};
    lmnn_shape row = LMNN_SHAPE(1, (uint32_t)G);
    uint32_t pick[3] = {0, 0, 0};
    for (bool more = true; more && !k->st; more = gs_next(pick, axes, count)) {
        if (list->count == LMNN_GATHER_TAPS_MAX) {
            k->st = err_set(LM_ERR_INTERNAL, "a weighted gather of more than %u taps",
                            LMNN_GATHER_TAPS_MAX);
            break;
        }
        uint32_t mark = k->count;
        lmnn_tensor at, wt;
        gs_tap(k, base, axes, strides, count, pick, &at, &wt);
        lmnn_tensor ri = k->st ? t : fe_work_keep(k, fe_rows_index(at, G, &t), &t);
        lmnn_tensor w32 = gs_float32(k, wt);
        lmnn_tensor wr = k->st ? t : fe_work_keep(k, lmnn_to_layout(w32, LMNN_ROW_MAJOR, &t), &t);
        lmnn_tensor r = {0}, w = {0};
        if (!k->st && !(k->st = lmnn_reshape(ri, &row, NULL, &r)) &&
            (k->st = lmnn_reshape(wr, &row, NULL, &w)))
            fe_free(r);
        if (!k->st) {
            list->rows[list->count] = r;
            list->weights[list->count++] = w;
        }
        fe_work_release(k, mark);
    }
}

/* The sum over the list's taps of weight times row of image rows `img`
 * (row-major float32 or bfloat16), [G, C] in float32 in the list's order,
 * in one weighted gather (no tap's rows made on their own). A new tensor,
 * or zero on failure (k->st). */
static lmnn_tensor gs_gather(fe_work *k, lmnn_tensor img, const gs_taps *list) {
    lmnn_tensor rows = {0}, weights = {0}, out = {0};
    if (k->st) return out;
    k->st = lmnn_concat(list->rows, list->count, 0, NULL, &rows);
    if (!k->st) k->st = lmnn_concat(list->weights, list->count, 0, NULL, &weights);
    if (!k->st) k->st = lmnn_gather_rows_weighted(img, rows, weights, NULL, &out);
    fe_free(rows);
    fe_free(weights);
    return k->st ? (lmnn_tensor){0} : out;
}

/* Whether image rows `img` can be gathered by gs_gather. */
static bool gs_gatherable(fe_work *k, lmnn_tensor img) {
    lmnn_tensor_info info;
    return !k->st && !lmnn_tensor_get_info(img, &info) &&
           (info.dtype == LMNN_FLOAT32 || info.dtype == LMNN_BFLOAT16);
}

/* The G samples [G, C] of image rows `img` (row-major) at every combination
 * of one tap of each of the `count` axes: rows base + sum of index * stride
 * over the axes, each times the product of the taps' weights, combined by
 * sum (or max, `take_max`). The taps' tensors broadcast together to G
 * elements. With `dense` (one channel, the taps' tensors of that shape),
 * the samples take that shape instead of [G, 1]. A new tensor in *out. */
static void gs_sample(fe_work *k, lmnn_tensor img, lmnn_tensor base, const gs_axis *const *axes,
                      const int64_t *strides, uint32_t count, int64_t G, bool take_max,
                      const lmnn_shape *dense, lmnn_tensor *out) {
    lmnn_tensor t = {0}, acc = {0};
    if (!take_max && !dense && gs_combinations(axes, count) <= LMNN_GATHER_TAPS_MAX &&
        gs_gatherable(k, img)) {
        gs_taps list = {0};
        gs_taps_add(k, &list, base, axes, strides, count, G);
        *out = gs_gather(k, img, &list);
        gs_taps_free(&list);
        return;
    }
    lmnn_shape column = LMNN_SHAPE((uint32_t)G, 1);
    uint32_t pick[3] = {0, 0, 0};
    for (bool more = true; more && !k->st; more = gs_next(pick, axes, count)) {
        uint32_t mark = k->count;
        lmnn_tensor at, wt;
        gs_tap(k, base, axes, strides, count, pick, &at, &wt);
        lmnn_tensor_info wi;
        if (!dense && !k->st && !(k->st = lmnn_tensor_get_info(wt, &wi)) &&
            (wi.shape.rank != 2 || wi.shape.dims[1] != 1))
            wt = fe_work_keep(k, lmnn_reshape(wt, &column, NULL, &t), &t);
        lmnn_tensor idx = k->st ? t : fe_work_keep(k, fe_rows_index(at, G, &t), &t);
        lmnn_tensor rows =
            k->st ? t : fe_work_keep(k, lmnn_index_select(img, 0, idx, NULL, &t), &t);
        if (dense && !k->st) rows = fe_work_keep(k, lmnn_reshape(rows, dense, NULL, &t), &t);
        lmnn_tensor got = k->st ? t : fe_work_keep(k, lmnn_to_layout(rows, LMNN_TILE, &t), &t);
        lmnn_tensor part = fe_work_binary(k, LMNN_BINARY_MUL, got, wt);
        if (!k->st && !acc.id) {
            /* The first part becomes the result: out of the work list. */
            acc = part;
            k->count--;
        } else if (!k->st) {
            lmnn_tensor sum;
            lmnn_binary_op op = take_max ? LMNN_BINARY_MAXIMUM : LMNN_BINARY_ADD;
            if ((k->st = lmnn_binary(op, acc, part, NULL, &sum)) == LM_OK) {
                fe_free(acc);
                acc = sum;
            }
        }
        fe_work_release(k, mark);
    }
    if (k->st) {
        fe_free(acc);
        acc = (lmnn_tensor){0};
    }
    *out = acc;
}

/* The G grid positions' coordinate math runs on [Gp / 32, 32] tensors
 * (Gp: G rounded up to a tile row, the extra positions at the grid's
 * centre and dropped at the end), dense tiles where [G, 1] columns would
 * use one element of each tile row; with one channel the samples stay so
 * too (a correlation volume's lookups: RAFT's). */
static lm_status lower_gridsample(fe_ctx *c, const fe_node *n) {
    gs_params p;
    lm_status st = gs_params_of(c, n, &p);
    if (st) return st;
    int64_t G = p.n * p.out_volume, Gp = (G + 31) / 32 * 32;
    lmnn_shape dense = LMNN_SHAPE((uint32_t)(Gp / 32), 32);
    /* base[g] = the first row of output position g's image. */
    int64_t bd[2] = {Gp / 32, 32};
    fe_tensor *base_t;
    if ((st = fe_const_new(c, FE_FLOAT, 2, bd, &base_t))) return fe_nn_fail(c, n, st);
    for (int64_t g = 0; g < G; g++)
        fe_tensor_set_f64(base_t, (uint64_t)g, (double)(g / p.out_volume * p.in_volume));
    lmnn_tensor x, grid, base;
    if ((st = fe_aux_f32(c, n, 0, base_t, &base)) || (st = fe_in_dev(c, n, 0, &x)) ||
        (st = fe_in_dev(c, n, 1, &grid)))
        return st;

    fe_work *k = calloc(1, sizeof *k);
    if (!k) return fe_fail(c, n, LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    lmnn_tensor t = {0}, acc = {0}, y = {0};
    int32_t sp = p.sp;
    lmnn_tensor img = gs_image_rows(k, x, p.n, p.in_volume, p.ch);
    /* The grid as [Gp, sp]: x, y (, z), so column j is spatial dim sp - 1 - j. */
    lmnn_shape grid_rows = LMNN_SHAPE((uint32_t)G, (uint32_t)sp);
    lmnn_tensor g32 = gs_float32(k, grid);
    lmnn_tensor gr = k->st ? t : fe_work_keep(k, lmnn_reshape(g32, &grid_rows, NULL, &t), &t);
    if (Gp != G && !k->st)
        gr = fe_work_keep(
            k, lmnn_pad(gr, (const uint32_t[]){0, (uint32_t)(Gp - G), 0, 0}, 2, NULL, &t), &t);
    gs_axis axis[3];
    const gs_axis *axes[3] = {NULL, NULL, NULL};
    int64_t strides[3] = {1, 1, 1};
    for (int32_t d = 0; d < sp; d++) {
        int32_t j = sp - 1 - d, b[2] = {0, j}, e[2] = {(int32_t)Gp, j + 1};
        lmnn_tensor col = k->st ? t : fe_work_keep(k, lmnn_slice(gr, b, e, NULL, 2, NULL, &t), &t);
        col = k->st ? t : fe_work_keep(k, lmnn_reshape(col, &dense, NULL, &t), &t);
        gs_axis_taps(k, &p, col, p.in[d], &axis[d]);
        axes[d] = &axis[d];
        strides[d] = 1;
        for (int32_t i = d + 1; i < sp; i++)
            strides[d] *= p.in[i];
    }
    gs_sample(k, img, base, axes, strides, (uint32_t)sp, Gp, false, p.ch == 1 ? &dense : NULL,
              &acc);
    /* [G, C] (the first G rows, or elements with one channel), then NCHW. */
    const fe_type *ot = &c->g->values[n->outputs[0]].type;
    lmnn_shape so = fe_shape(ot->rank, ot->dims);
    lmnn_tensor r = acc;
    if (p.ch == 1 && Gp != G && !k->st) {
        lmnn_shape flat = LMNN_SHAPE(1, (uint32_t)Gp);
        r = fe_work_keep(k, lmnn_reshape(acc, &flat, NULL, &t), &t);
        r = k->st ? t
                  : fe_work_keep(k,
                                 lmnn_slice(r, (const int32_t[]){0, 0},
                                            (const int32_t[]){1, (int32_t)G}, NULL, 2, NULL, &t),
                                 &t);
    } else if (Gp != G && !k->st) {
        r = fe_work_keep(k,
                         lmnn_slice(acc, (const int32_t[]){0, 0},
                                    (const int32_t[]){(int32_t)G, (int32_t)p.ch}, NULL, 2, NULL,
                                    &t),
                         &t);
    }
    if (p.ch == 1) {
        /* One channel: the samples' order is already NCHW's. */
        if (!k->st) k->st = lmnn_reshape(r, &so, NULL, &y);
    } else {
        /* [N, positions, C] with its last two dims swapped (tiles
         * transposed), then the spatial dims. */
        lmnn_shape each = LMNN_SHAPE((uint32_t)p.n, (uint32_t)p.out_volume, (uint32_t)p.ch);
        r = k->st ? t : fe_work_keep(k, lmnn_reshape(r, &each, NULL, &t), &t);
        r = k->st ? t
                  : fe_work_keep(k, lmnn_permute(r, (const int32_t[]){0, 2, 1}, 3, NULL, &t), &t);
        if (!k->st) k->st = lmnn_reshape(r, &so, NULL, &y);
    }
    st = k->st;
    fe_work_release(k, 0);
    free(k);
    fe_free(acc);
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_dev(c, n, 0, y);
}

/* ---- RoiAlign (opsets 10 and 16) ----
 * Each RoI's output bin averages (or takes the max of) a grid of bilinear
 * samples, worked out on the device from the run's RoIs, under the Mask
 * R-CNN rules (ONNX's reference): a sample more than one pixel outside the
 * image is zero, one below 0 reads 0, one at or past the last pixel reads
 * the last.
 *
 * With sampling_ratio > 0 the grid is ratio x ratio: per axis, the sample
 * coordinates [R, K] from the RoI's start and bin size and a host table of
 * the samples' fractions, one gather per tap pair.
 *
 * With sampling_ratio 0 a bin takes ceil(bin size) samples per axis, a
 * number only the run knows. Bilinear taps are separable, and so is the
 * rule for samples outside the image, so the sum over a bin's samples is
 * Ay[r, ph, :] . X[b] . Ax[r, pw, :]^T, where Ay[r, ph, t] is the weight all
 * of the bin's samples put on row t (Ax: on column t): two matrix products
 * over the whole image, exact whatever the grid. A sample y weighs
 * hat(clamp(y, 0, size - 1) - t) on tap t (hat(d) = max(0, 1 - |d|)) and
 * nothing when more than a pixel outside. A bin's samples are bin /
 * ceil(bin) apart: one sample, two, or three and more over 2/3 of a pixel
 * apart, so at most 3 weigh on one tap (they lie within 2 pixels of each
 * other). Each tap sums RA_CANDIDATES samples from the one its position
 * gives as the last before the first that can reach it: that one, the 3,
 * and a spare for rounding either way. The max of samples does not
 * separate: mode max needs sampling_ratio > 0. */

enum { RA_CANDIDATES = 5 };
/* Elements of the adaptive grid's first product, [R, N * C * H, output_width
 * rounded up to 32]. */
#define RA_ADAPTIVE_MAX ((int64_t)1 << 26)

typedef struct ra_params {
    bool take_max, half_pixel;
    int64_t oh, ow, ratio, n, ch, h, w, rois;
    double scale;
} ra_params;

static lm_status ra_params_of(fe_ctx *c, const fe_node *n, ra_params *p) {
    memset(p, 0, sizeof *p);
    int mode = 0, coord = 0;
    float scale;
    lm_status st = fe_check_inputs(c, n, 3, 3);
    if (!st)
        st = fe_check_attrs(c, n,
                            (const char *const[]){"coordinate_transformation_mode", "mode",
                                                  "output_height", "output_width", "sampling_ratio",
                                                  "spatial_scale", NULL});
    if (!st)
        st = fe_attr_choice(c, n, "mode", "avg", (const char *const[]){"avg", "max", NULL}, &mode);
    /* Opset 10 had no such attribute and behaved as output_half_pixel. */
    if (!st)
        st = fe_attr_choice(c, n, "coordinate_transformation_mode",
                            n->opset >= 16 ? "half_pixel" : "output_half_pixel",
                            (const char *const[]){"half_pixel", "output_half_pixel", NULL}, &coord);
    if (!st) st = fe_attr_int(c, n, "output_height", 1, &p->oh);
    if (!st) st = fe_attr_int(c, n, "output_width", 1, &p->ow);
    if (!st) st = fe_attr_int(c, n, "sampling_ratio", 0, &p->ratio);
    if (!st) st = fe_attr_float(c, n, "spatial_scale", 1.0f, &scale);
    if (st) return st;
    p->take_max = mode == 1;
    p->half_pixel = coord == 0;
    p->scale = scale;
    if (p->oh < 1 || p->ow < 1 || p->oh > 4096 || p->ow > 4096)
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "output_height %lld and output_width %lld (from 1 to 4096)",
                       (long long)p->oh, (long long)p->ow);
    if (p->ratio == 0 && p->take_max)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "mode=max with sampling_ratio=0 (a sample grid that depends on each RoI's "
                       "size at run time) is not supported: give sampling_ratio > 0, or mode=avg");
    if (p->ratio < 0 || p->ratio > 64)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "sampling_ratio=%lld (from 1 to 64)",
                       (long long)p->ratio);
    const fe_type *x = fe_in_type(c, n, 0), *r = fe_in_type(c, n, 1), *b = fe_in_type(c, n, 2);
    if (!fe_elem_is_float(x->elem) || !fe_elem_is_float(r->elem))
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "X and rois must be float tensors");
    if (x->rank != 4) return fe_fail(c, n, LM_ERR_INVALID_FILE, "X must be (N, C, H, W)");
    if (r->rank != 2 || r->dims[1] != 4)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "rois must be (num_rois, 4)");
    if (b->rank != 1 || b->dims[0] != r->dims[0] || !fe_elem_is_int(b->elem))
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "batch_indices must be %lld integers (one per RoI)", (long long)r->dims[0]);
    p->n = x->dims[0];
    p->ch = x->dims[1];
    p->h = x->dims[2];
    p->w = x->dims[3];
    p->rois = r->dims[0];
    /* X's volume fits int64 (types are checked), so n * ch * h does; the
     * RoI count need not fit any product: bound it first. */
    if (p->ratio == 0) {
        /* The first product's columns are output_width in whole tiles. */
        int64_t image = p->n * p->ch * p->h, cols = (p->ow + 31) / 32 * 32;
        if (image > RA_ADAPTIVE_MAX || p->rois > RA_ADAPTIVE_MAX ||
            (image && p->rois * cols > RA_ADAPTIVE_MAX / image))
            return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                           "sampling_ratio=0 makes a product of %lld RoIs x [%lld, %lld] (the "
                           "image's N * C * H rows by output_width in whole tiles): more than "
                           "2^26 elements; give sampling_ratio > 0",
                           (long long)p->rois, (long long)image, (long long)cols);
        return LM_OK;
    }
    int64_t limit = (int64_t)1 << 24, samples = p->oh * p->ow * p->ratio * p->ratio;
    if (p->n * p->h * p->w > limit || p->rois > limit || p->rois * samples > limit)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "%lld input positions and %lld RoIs x %lld samples (at most 2^24 each)",
                       (long long)(p->n * p->h * p->w), (long long)p->rois, (long long)samples);
    return LM_OK;
}

static lm_status infer_roialign(fe_ctx *c, const fe_node *n) {
    ra_params p;
    lm_status st = ra_params_of(c, n, &p);
    if (st) return st;
    int64_t dims[4] = {p.rois, p.ch, p.oh, p.ow};
    return fe_set_out_type(c, n, 0, fe_in_type(c, n, 0)->elem, 4, dims);
}

/* One axis's two taps for sample coordinates `at` on an axis of `size`
 * pixels (the Mask R-CNN bilinear rules). */
static void ra_axis_taps(fe_work *k, lmnn_tensor at, int64_t size, gs_axis *out) {
    double last = (double)(size - 1);
    /* inside = (at >= -1) (at <= size) */
    lmnn_tensor inside =
        fe_work_binary(k, LMNN_BINARY_MUL, fe_work_scalar(k, LMNN_BINARY_GE, at, -1.0),
                       fe_work_scalar(k, LMNN_BINARY_LE, at, (double)size));
    lmnn_tensor v = fe_work_scalar(k, LMNN_BINARY_MAXIMUM, at, 0.0);
    lmnn_tensor low = fe_work_unary(k, lmnn_floor, v);
    /* At or past the last pixel: both taps on it, the coordinate too. */
    lmnn_tensor end = fe_work_scalar(k, LMNN_BINARY_GE, low, last);
    low = fe_work_scalar(k, LMNN_BINARY_MINIMUM, low, last);
    v = fe_work_binary(
        k, LMNN_BINARY_ADD, v,
        fe_work_binary(k, LMNN_BINARY_MUL, end, fe_work_binary(k, LMNN_BINARY_SUB, low, v)));
    lmnn_tensor l = fe_work_binary(k, LMNN_BINARY_SUB, v, low);
    out->taps = 2;
    out->index[0] = low;
    out->index[1] =
        fe_work_scalar(k, LMNN_BINARY_MINIMUM, fe_work_scalar(k, LMNN_BINARY_ADD, low, 1.0), last);
    out->weight[0] =
        fe_work_binary(k, LMNN_BINARY_MUL, fe_work_scalar(k, LMNN_BINARY_RSUB, l, 1.0), inside);
    out->weight[1] = fe_work_binary(k, LMNN_BINARY_MUL, l, inside);
}

/* The start and the bin size ([R, 1]) along one axis of the RoIs whose
 * start and end columns are `lo` and `hi` ([R, 1]), in ONNX's order of
 * float32 operations. */
static void ra_axis_bins(fe_work *k, const ra_params *p, lmnn_tensor lo, lmnn_tensor hi,
                         int64_t bins, lmnn_tensor *out_start, lmnn_tensor *out_bin) {
    double off = p->half_pixel ? 0.5 : 0.0;
    lmnn_tensor start =
        fe_work_scalar(k, LMNN_BINARY_SUB, fe_work_scalar(k, LMNN_BINARY_MUL, lo, p->scale), off);
    lmnn_tensor end =
        fe_work_scalar(k, LMNN_BINARY_SUB, fe_work_scalar(k, LMNN_BINARY_MUL, hi, p->scale), off);
    lmnn_tensor len = fe_work_binary(k, LMNN_BINARY_SUB, end, start);
    /* The older rule keeps every RoI at least a pixel long. */
    if (!p->half_pixel) len = fe_work_scalar(k, LMNN_BINARY_MAXIMUM, len, 1.0);
    *out_start = start;
    *out_bin = fe_work_scalar(k, LMNN_BINARY_DIV, len, (double)bins);
}

/* Sample coordinates [R, bins * ratio] along one axis: start + fraction *
 * bin, fraction bin + (i + 0.5) / ratio from a host table. */
static lmnn_tensor ra_coords(fe_work *k, const ra_params *p, lmnn_tensor lo, lmnn_tensor hi,
                             int64_t bins, lmnn_tensor fractions) {
    lmnn_tensor start, bin;
    ra_axis_bins(k, p, lo, hi, bins, &start, &bin);
    return fe_work_binary(k, LMNN_BINARY_ADD, start,
                          fe_work_binary(k, LMNN_BINARY_MUL, fractions, bin));
}

/* The adaptive grid's weights along one axis of `size` pixels cut into
 * `bins`: [R, bins * size], the weight bin j's samples put on tap t in the
 * column where the host tables `bin_of` and `tap_of` ([1, bins * size],
 * ra_table) hold j and t; `cand` [RA_CANDIDATES, 1, 1] holds 0, 1, 2 and on.
 * The bins' sample counts ceil(bin size) ([R, 1], 0 or less: no samples)
 * go to *out_grid, kept on the work list. */
static lmnn_tensor ra_axis_weights(fe_work *k, const ra_params *p, lmnn_tensor lo, lmnn_tensor hi,
                                   int64_t bins, int64_t size, lmnn_tensor bin_of,
                                   lmnn_tensor tap_of, lmnn_tensor cand, lmnn_tensor *out_grid) {
    lmnn_tensor start, bin;
    ra_axis_bins(k, p, lo, hi, bins, &start, &bin);
    lmnn_tensor grid = fe_work_unary(k, lmnn_ceil, bin);
    lmnn_tensor count = fe_work_scalar(k, LMNN_BINARY_MAXIMUM, grid, 1.0);
    /* Bin j's first edge, as ONNX adds it: start + j * bin. */
    lmnn_tensor base =
        fe_work_binary(k, LMNN_BINARY_ADD, start, fe_work_binary(k, LMNN_BINARY_MUL, bin_of, bin));
    /* The first sample that can reach tap t lies past t - 1: index
     * (t - 1 - base) / spacing - 0.5, rounded down, kept in [0, count]
     * (so every index stays finite). The spacing is floored at 2^-20
     * only here: a bin that small has one sample, which this keeps. */
    lmnn_tensor spacing = fe_work_scalar(k, LMNN_BINARY_MAXIMUM,
                                         fe_work_binary(k, LMNN_BINARY_DIV, bin, count), 0x1p-20);
    lmnn_tensor first = fe_work_binary(
        k, LMNN_BINARY_DIV,
        fe_work_binary(k, LMNN_BINARY_SUB, fe_work_scalar(k, LMNN_BINARY_SUB, tap_of, 1.0), base),
        spacing);
    first = fe_work_unary(k, lmnn_floor, fe_work_scalar(k, LMNN_BINARY_SUB, first, 0.5));
    first = fe_work_binary(k, LMNN_BINARY_MINIMUM,
                           fe_work_scalar(k, LMNN_BINARY_MAXIMUM, first, 0.0), count);
    /* [RA_CANDIDATES, R, bins * size]: sample i at base + (i + 0.5) bin /
     * count, weighing hat(clamp(y) - t) if it exists (i < grid) and lies
     * within a pixel of the image. */
    lmnn_tensor i = fe_work_binary(k, LMNN_BINARY_ADD, first, cand);
    lmnn_tensor y = fe_work_binary(
        k, LMNN_BINARY_ADD, base,
        fe_work_binary(
            k, LMNN_BINARY_DIV,
            fe_work_binary(k, LMNN_BINARY_MUL, fe_work_scalar(k, LMNN_BINARY_ADD, i, 0.5), bin),
            count));
    lmnn_tensor gap = fe_work_unary(
        k, lmnn_abs,
        fe_work_binary(k, LMNN_BINARY_SUB, gs_clamp(k, y, 0.0, (double)(size - 1)), tap_of));
    lmnn_tensor w =
        fe_work_scalar(k, LMNN_BINARY_MAXIMUM, fe_work_scalar(k, LMNN_BINARY_RSUB, gap, 1.0), 0.0);
    lmnn_tensor inside =
        fe_work_binary(k, LMNN_BINARY_MUL, fe_work_scalar(k, LMNN_BINARY_GE, y, -1.0),
                       fe_work_scalar(k, LMNN_BINARY_LE, y, (double)size));
    w = fe_work_binary(
        k, LMNN_BINARY_MUL, w,
        fe_work_binary(k, LMNN_BINARY_MUL, inside, fe_work_binary(k, LMNN_BINARY_LT, i, grid)));
    lmnn_reduce_options ro;
    lmnn_reduce_options_init(&ro);
    ro.dims[0] = 0;
    ro.dim_count = 1;
    lmnn_tensor t = {0};
    *out_grid = grid;
    return k->st ? t : fe_work_keep(k, lmnn_sum(w, &ro, &t), &t);
}

/* Host tables [1, bins * size] of each column's bin (want_tap false) or
 * tap (true), the taps varying slowest when `taps_major` (a [R, size,
 * bins] matrix per RoI) and fastest otherwise ([R, bins, size]); into aux
 * slot `slot`. */
static lm_status ra_table(fe_ctx *c, const fe_node *n, uint32_t slot, int64_t bins, int64_t size,
                          bool taps_major, bool want_tap, lmnn_tensor *out) {
    fe_tensor *t;
    lm_status st = fe_const_new(c, FE_FLOAT, 2, (int64_t[]){1, bins * size}, &t);
    if (st) return fe_nn_fail(c, n, st);
    for (int64_t j = 0; j < bins * size; j++) {
        int64_t tap = taps_major ? j / bins : j % size, bin = taps_major ? j % bins : j / size;
        fe_tensor_set_f64(t, (uint64_t)j, (double)(want_tap ? tap : bin));
    }
    return fe_aux_f32(c, n, slot, t, out);
}

/* RoiAlign with sampling_ratio 0 (see above): the weights Ay [R, OH, H] and
 * Ax [R, W, OW], then T = X [N * C * H, W] @ Ax (every image row against
 * each RoI's columns: [R, N * C * H, OW]) and Ay @ T as [R, N * C, H, OW]
 * (each channel's rows: [R, N * C, OH, OW]), no element moved between the
 * products; then each RoI's image picked (one-hot over N) and the sums
 * divided by the sample count. A batch index outside [-N, N) selects
 * zeros; a negative one counts from the end (Gather's rule, as with
 * sampling_ratio > 0). */
static lm_status lower_roialign_adaptive(fe_ctx *c, const fe_node *n, const ra_params *p) {
    int64_t R = p->rois, N = p->n;
    lmnn_tensor ybin, ytap, xbin, xtap, cand, nth, x, rois, bidx;
    lm_status st;
    if ((st = ra_table(c, n, 0, p->oh, p->h, false, false, &ybin)) ||
        (st = ra_table(c, n, 1, p->oh, p->h, false, true, &ytap)) ||
        (st = ra_table(c, n, 2, p->ow, p->w, true, false, &xbin)) ||
        (st = ra_table(c, n, 3, p->ow, p->w, true, true, &xtap)))
        return st;
    fe_tensor *cand_t, *nth_t;
    if ((st = fe_const_new(c, FE_FLOAT, 3, (int64_t[]){RA_CANDIDATES, 1, 1}, &cand_t)) ||
        (st = fe_const_new(c, FE_FLOAT, 5, (int64_t[]){1, N, 1, 1, 1}, &nth_t)))
        return fe_nn_fail(c, n, st);
    for (int64_t i = 0; i < RA_CANDIDATES; i++)
        fe_tensor_set_f64(cand_t, (uint64_t)i, (double)i);
    for (int64_t i = 0; i < N; i++)
        fe_tensor_set_f64(nth_t, (uint64_t)i, (double)i);
    if ((st = fe_aux_f32(c, n, 4, cand_t, &cand)) || (st = fe_aux_f32(c, n, 5, nth_t, &nth)) ||
        (st = fe_in_dev(c, n, 0, &x)) || (st = fe_in_dev(c, n, 1, &rois)))
        return st;
    if ((st = fe_in_float_as(c, n, 2, 5, (int64_t[]){R, 1, 1, 1, 1}, &bidx))) return st;
    lmnn_tensor_info xi;
    if ((st = lmnn_tensor_get_info(x, &xi))) {
        fe_free(bidx);
        return fe_nn_fail(c, n, st);
    }

    fe_work *k = calloc(1, sizeof *k);
    if (!k) {
        fe_free(bidx);
        return fe_fail(c, n, LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    }
    fe_work_keep(k, LM_OK, &bidx);
    lmnn_tensor t = {0}, y = {0};
    lmnn_tensor r32 = gs_float32(k, rois), col[4];
    for (int i = 0; i < 4; i++)
        col[i] =
            fe_work_slice(k, r32, (const int32_t[]){0, i}, (const int32_t[]){(int32_t)R, i + 1}, 2);
    lmnn_tensor gy, gx;
    lmnn_tensor ay = ra_axis_weights(k, p, col[1], col[3], p->oh, p->h, ybin, ytap, cand, &gy);
    lmnn_tensor ax = ra_axis_weights(k, p, col[0], col[2], p->ow, p->w, xbin, xtap, cand, &gx);

    lmnn_matmul_options mo;
    lmnn_matmul_options_init(&mo);
    mo.output.dtype = xi.dtype;
    lmnn_shape rows = LMNN_SHAPE((uint32_t)(N * p->ch * p->h), (uint32_t)p->w);
    lmnn_shape ax3 = LMNN_SHAPE((uint32_t)R, (uint32_t)p->w, (uint32_t)p->ow);
    lmnn_tensor prod = k->st ? t
                             : fe_work_keep(k,
                                            lmnn_matmul(fe_work_reshape(k, x, &rows),
                                                        fe_work_reshape(k, ax, &ax3), &mo, &t),
                                            &t);
    lmnn_shape ay4 = LMNN_SHAPE((uint32_t)R, 1, (uint32_t)p->oh, (uint32_t)p->h);
    lmnn_shape per_row =
        LMNN_SHAPE((uint32_t)R, (uint32_t)(N * p->ch), (uint32_t)p->h, (uint32_t)p->ow);
    lmnn_tensor sums = k->st
                           ? t
                           : fe_work_keep(k,
                                          lmnn_matmul(fe_work_reshape(k, ay, &ay4),
                                                      fe_work_reshape(k, prod, &per_row), &mo, &t),
                                          &t);
    /* Per RoI and image: one-hot of the RoI's image (b, or b + N when
     * negative) over ONNX's divisor max(grid_h * grid_w, 1). */
    lmnn_tensor b =
        fe_work_binary(k, LMNN_BINARY_ADD, bidx,
                       fe_work_scalar(k, LMNN_BINARY_MUL,
                                      fe_work_scalar(k, LMNN_BINARY_LT, bidx, 0.0), (double)N));
    lmnn_shape r5 = {5, {(uint32_t)R, 1, 1, 1, 1}};
    lmnn_tensor divisor = fe_work_reshape(
        k, fe_work_scalar(k, LMNN_BINARY_MAXIMUM, fe_work_binary(k, LMNN_BINARY_MUL, gy, gx), 1.0),
        &r5);
    lmnn_tensor scale =
        fe_work_binary(k, LMNN_BINARY_DIV, fe_work_binary(k, LMNN_BINARY_EQ, b, nth), divisor);
    lmnn_shape per_image = {
        5, {(uint32_t)R, (uint32_t)N, (uint32_t)p->ch, (uint32_t)p->oh, (uint32_t)p->ow}};
    lmnn_tensor picked =
        fe_work_binary(k, LMNN_BINARY_MUL, fe_work_reshape(k, sums, &per_image), scale);
    lmnn_shape out4 = LMNN_SHAPE((uint32_t)R, (uint32_t)p->ch, (uint32_t)p->oh, (uint32_t)p->ow);
    if (!k->st && N == 1) {
        k->st = lmnn_reshape(picked, &out4, NULL, &y);
    } else if (!k->st) {
        lmnn_reduce_options ro;
        lmnn_reduce_options_init(&ro);
        ro.dims[0] = 1;
        ro.dim_count = 1;
        k->st = lmnn_sum(picked, &ro, &y);
    }
    st = k->st;
    fe_work_release(k, 0);
    free(k);
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_dev(c, n, 0, y);
}

/* Sample `i` of `ratio` per bin, as fractions of a bin from the RoI's start
 * [1, bins]: bin + (i + 0.5) / ratio, a host table (aux slot `slot`). */
static lmnn_tensor ra_fractions(fe_ctx *c, const fe_node *n, fe_work *k, uint32_t slot,
                                int64_t bins, int64_t i, int64_t ratio) {
    lmnn_tensor t = {0};
    fe_tensor *f;
    if (k->st) return t;
    if ((k->st = fe_const_new(c, FE_FLOAT, 2, (int64_t[]){1, bins}, &f))) return t;
    for (int64_t j = 0; j < bins; j++)
        fe_tensor_set_f64(f, (uint64_t)j, (double)j + ((double)i + 0.5) / (double)ratio);
    k->st = fe_aux_f32(c, n, slot, f, &t);
    return t;
}

/* The 0/1 table [bins, OH * OW] spreading a [R, bins] tensor along y
 * (`along_y`: bins OH) or x (OW) over the [R, OH * OW] samples of every
 * bin: entry [i, j] is 1 where sample j lies in bin i (aux slot `slot`). */
static lmnn_tensor ra_spread_table(fe_ctx *c, const fe_node *n, fe_work *k, uint32_t slot,
                                   const ra_params *p, bool along_y) {
    lmnn_tensor t = {0};
    fe_tensor *f;
    int64_t bins = along_y ? p->oh : p->ow, cols = p->oh * p->ow;
    if (k->st || (k->st = fe_const_new(c, FE_FLOAT, 2, (int64_t[]){bins, cols}, &f))) return t;
    for (int64_t j = 0; j < cols; j++)
        fe_tensor_set_f64(f, (uint64_t)((along_y ? j / p->ow : j % p->ow) * cols + j), 1.0);
    k->st = fe_aux_f32(c, n, slot, f, &t);
    return t;
}

/* v [R, bins] (times `scale`) spread to [R, OH * OW] by `table`: a product
 * with one term a column, so exact. */
static lmnn_tensor ra_spread(fe_work *k, lmnn_tensor v, lmnn_tensor table, double scale) {
    lmnn_tensor t = {0};
    if (scale != 1.0) v = fe_work_scalar(k, LMNN_BINARY_MUL, v, scale);
    return k->st ? t : fe_work_keep(k, lmnn_matmul(v, table, NULL, &t), &t);
}

/* One sample of every bin ([R, OH] coordinates yc, [R, OW] xc) as taps of
 * the [R, OH * OW] samples, appended to `list`: the taps are worked out on
 * [R, OH] and [R, OW] and only then spread over the bins (broadcasting [R,
 * OH, 1] with [R, 1, OW] would make every op's operands R tiles). */
static void ra_sample_taps(fe_work *k, const ra_params *p, lmnn_tensor yc, lmnn_tensor xc,
                           lmnn_tensor base, const lmnn_tensor spread[2], int64_t G,
                           gs_taps *list) {
    gs_axis ay, ax, sy = {.taps = 2}, sx = {.taps = 2};
    ra_axis_taps(k, yc, p->h, &ay);
    ra_axis_taps(k, xc, p->w, &ax);
    for (uint32_t i = 0; i < 2; i++) {
        sy.index[i] = ra_spread(k, ay.index[i], spread[0], (double)p->w);
        sy.weight[i] = ra_spread(k, ay.weight[i], spread[0], 1.0);
        sx.index[i] = ra_spread(k, ax.index[i], spread[1], 1.0);
        sx.weight[i] = ra_spread(k, ax.weight[i], spread[1], 1.0);
    }
    gs_taps_add(k, list, base, (const gs_axis *const[]){&sy, &sx}, (const int64_t[]){1, 1}, 2, G);
}

static lm_status lower_roialign(fe_ctx *c, const fe_node *n) {
    ra_params p;
    lm_status st = ra_params_of(c, n, &p);
    if (st) return st;
    if (p.ratio == 0) return lower_roialign_adaptive(c, n, &p);
    int64_t R = p.rois, G = R * p.oh * p.ow;
    lmnn_tensor x, rois, bidx;
    if ((st = fe_in_dev(c, n, 0, &x)) || (st = fe_in_dev(c, n, 1, &rois))) return st;
    if ((st = fe_in_float_as(c, n, 2, 3, (int64_t[]){R, 1, 1}, &bidx))) return st;

    fe_work *k = calloc(1, sizeof *k);
    if (!k) {
        fe_free(bidx);
        return fe_fail(c, n, LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    }
    fe_work_keep(k, LM_OK, &bidx);
    lmnn_tensor t = {0}, acc = {0}, y = {0};
    lmnn_tensor img = gs_image_rows(k, x, p.n, p.h * p.w, p.ch);
    lmnn_tensor r32 = gs_float32(k, rois), col[4];
    for (int i = 0; i < 4; i++) {
        int32_t b[2] = {0, i}, e[2] = {(int32_t)R, i + 1};
        col[i] = k->st ? t : fe_work_keep(k, lmnn_slice(r32, b, e, NULL, 2, NULL, &t), &t);
    }
    lmnn_tensor base = fe_work_scalar(k, LMNN_BINARY_MUL, bidx, (double)(p.h * p.w));
    /* One sample of every bin at a time: its y [R, OH] as [R, OH, 1] and x
     * [R, OW] as [R, 1, OW] broadcast to the G = R * OH * OW samples, [G, C]
     * in the output's order, pooled into the sum (or max) of the ones
     * before. (All samples at once would need a pooling over a dim of
     * `ratio` entries, which tiles pad to 32.) */
    lmnn_shape ys = LMNN_SHAPE((uint32_t)R, (uint32_t)p.oh, 1),
               xs = LMNN_SHAPE((uint32_t)R, 1, (uint32_t)p.ow);
    /* Averaged, every sample's taps go into one weighted gather when they
     * are few enough (sampling_ratio up to 4). */
    gs_taps all = {0};
    bool one_gather = !p.take_max && p.ratio * p.ratio * 4 <= (int64_t)LMNN_GATHER_TAPS_MAX &&
                      gs_gatherable(k, img);
    lmnn_tensor spread[2] = {{0}, {0}}, base2 = {0};
    if (one_gather) {
        lmnn_shape r2 = LMNN_SHAPE((uint32_t)R, 1);
        spread[0] = ra_spread_table(c, n, k, 1000, &p, true);
        spread[1] = ra_spread_table(c, n, k, 1001, &p, false);
        base2 = k->st ? t : fe_work_keep(k, lmnn_reshape(base, &r2, NULL, &t), &t);
    }
    for (int64_t sy = 0; sy < p.ratio && !k->st; sy++) {
        for (int64_t sx = 0; sx < p.ratio && !k->st; sx++) {
            uint32_t mark = k->count;
            lmnn_tensor fy = ra_fractions(c, n, k, 2 * (uint32_t)sy, p.oh, sy, p.ratio);
            lmnn_tensor fx = ra_fractions(c, n, k, 2 * (uint32_t)sx + 1, p.ow, sx, p.ratio);
            lmnn_tensor yc = ra_coords(k, &p, col[1], col[3], p.oh, fy);
            lmnn_tensor xc = ra_coords(k, &p, col[0], col[2], p.ow, fx);
            if (one_gather) {
                ra_sample_taps(k, &p, yc, xc, base2, spread, G, &all);
                fe_work_release(k, mark);
                continue;
            }
            lmnn_tensor y3 = k->st ? t : fe_work_keep(k, lmnn_reshape(yc, &ys, NULL, &t), &t);
            lmnn_tensor x3 = k->st ? t : fe_work_keep(k, lmnn_reshape(xc, &xs, NULL, &t), &t);
            gs_axis ay, ax;
            ra_axis_taps(k, y3, p.h, &ay);
            ra_axis_taps(k, x3, p.w, &ax);
            lmnn_tensor part = {0};
            gs_sample(k, img, base, (const gs_axis *const[]){&ay, &ax}, (const int64_t[]){p.w, 1},
                      2, G, p.take_max, NULL, &part);
            fe_work_release(k, mark);
            if (k->st) break;
            if (!acc.id) {
                acc = part;
                continue;
            }
            lmnn_tensor sum;
            k->st = lmnn_binary(p.take_max ? LMNN_BINARY_MAXIMUM : LMNN_BINARY_ADD, acc, part, NULL,
                                &sum);
            fe_free(part);
            if (!k->st) {
                fe_free(acc);
                acc = sum;
            }
        }
    }
    if (one_gather) acc = gs_gather(k, img, &all);
    gs_taps_free(&all);
    /* [R, OH * OW, C], the mean of each bin's samples, to [R, C, OH * OW]:
     * the last two dims swapped, tile by tile (moving C ahead of OH and OW
     * in [R, OH, OW, C] would go element by element), then held as rows
     * [R, C * OH * OW] (fe_out_rows): a box head's scatter and Flatten take
     * them so, where [R, C, OH, OW] would pad each 7x7 plane to a tile. */
    lmnn_shape bins = LMNN_SHAPE((uint32_t)R, (uint32_t)(p.oh * p.ow), (uint32_t)p.ch);
    lmnn_shape out4 = LMNN_SHAPE((uint32_t)R, (uint32_t)(p.ch * p.oh * p.ow));
    lmnn_tensor pooled = k->st ? t : fe_work_keep(k, lmnn_reshape(acc, &bins, NULL, &t), &t);
    if (!p.take_max && p.ratio > 1)
        pooled = fe_work_scalar(k, LMNN_BINARY_MUL, pooled, 1.0 / (double)(p.ratio * p.ratio));
    lmnn_tensor planes =
        k->st ? t
              : fe_work_keep(k, lmnn_permute(pooled, (const int32_t[]){0, 2, 1}, 3, NULL, &t), &t);
    if (!k->st) k->st = lmnn_reshape(planes, &out4, NULL, &y);
    st = k->st;
    fe_work_release(k, 0);
    free(k);
    fe_free(acc);
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_rows(c, n, 0, y);
}

/* ---- MaxRoiPool (opset 1) ----
 * Fast R-CNN's RoI pooling: each RoI [batch, x1, y1, x2, y2] is scaled and
 * rounded (half away from zero) to whole pixels, cut into pooled_shape bins
 * (start floor(i * len / bins), end ceil((i + 1) * len / bins), in float32
 * as the reference implementations compute them, clipped to the image), and
 * each bin takes the max of its pixels; an empty bin is 0. The RoIs are
 * run-time data, so the node is rewritten into ops that work the bins out
 * on the device: the RoI's image by Gather, then a max over each bin's
 * columns and one over its rows, each a Where between the pixels and -inf
 * under a mask [RoI, bin, pixel] from the bins' bounds. The batch index
 * follows Gather's rule on the device: negative ones count from the end,
 * and one out of range selects zeros (a file cannot make it fail). */

enum { RP_MAX_ELEMENTS = 1 << 26 };

typedef struct rp_params {
    int64_t ph, pw, n, ch, h, w, rois;
    float scale;
    fe_elem elem;
} rp_params;

static lm_status rp_params_of(fe_ctx *c, const fe_node *n, rp_params *p) {
    memset(p, 0, sizeof *p);
    lm_status st = fe_check_inputs(c, n, 2, 2);
    if (!st)
        st = fe_check_attrs(c, n, (const char *const[]){"pooled_shape", "spatial_scale", NULL});
    if (!st) st = fe_attr_float(c, n, "spatial_scale", 1.0f, &p->scale);
    const int64_t *ps = NULL;
    size_t pn = 0;
    if (!st) st = fe_attr_ints(c, n, "pooled_shape", &ps, &pn);
    if (st) return st;
    if (!ps) return fe_fail(c, n, LM_ERR_INVALID_FILE, "attribute pooled_shape is missing");
    if (pn != 2 || ps[0] < 1 || ps[1] < 1 || ps[0] > 4096 || ps[1] > 4096)
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "pooled_shape must be (height, width), each from 1 to 4096");
    if (!(p->scale > 0) || !isfinite(p->scale))
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "spatial_scale %g (a finite value above 0)",
                       (double)p->scale);
    const fe_type *x = fe_in_type(c, n, 0), *r = fe_in_type(c, n, 1);
    if (!fe_elem_is_float(x->elem) || r->elem != x->elem)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "X and rois must be float tensors of one type");
    if (x->rank != 4) return fe_fail(c, n, LM_ERR_INVALID_FILE, "X must be (N, C, H, W)");
    if (r->rank != 2 || r->dims[1] != 5)
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "rois must be (num_rois, 5): [batch_id, x1, y1, x2, y2] each");
    p->ph = ps[0];
    p->pw = ps[1];
    p->n = x->dims[0];
    p->ch = x->dims[1];
    p->h = x->dims[2];
    p->w = x->dims[3];
    p->rois = r->dims[0];
    p->elem = x->elem;
    /* The two masked maxima's inputs are materialised. */
    double cols = (double)p->rois * (double)p->ch * (double)p->h * (double)p->pw * (double)p->w;
    double rows = (double)p->rois * (double)p->ch * (double)p->ph * (double)p->h * (double)p->pw;
    if (cols > RP_MAX_ELEMENTS || rows > RP_MAX_ELEMENTS)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "%lld RoIs of %lld channels of %lldx%lld pooled to %lldx%lld need %.0f "
                       "masked elements (at most %d)",
                       (long long)p->rois, (long long)p->ch, (long long)p->h, (long long)p->w,
                       (long long)p->ph, (long long)p->pw, cols > rows ? cols : rows,
                       RP_MAX_ELEMENTS);
    return LM_OK;
}

/* A new constant of 5 dims, all 1 but dim `at` (`len` long), holding
 * first, first + 1, ...; int64 or float. */
static lm_status rp_ramp(fe_expansion *x, fe_elem elem, int at, int64_t len, int64_t first,
                         uint32_t *out) {
    int64_t dims[5] = {1, 1, 1, 1, 1};
    dims[at] = len;
    fe_tensor *t;
    lm_status st = fe_const_new(x->c, elem, 5, dims, &t);
    if (st) return st;
    for (int64_t i = 0; i < len; i++)
        if (elem == FE_INT64)
            fe_tensor_set_i64(t, (uint64_t)i, first + i);
        else
            fe_tensor_set_f64(t, (uint64_t)i, (double)(first + i));
    return fe_x_const(x, t, "ramp", out);
}

/* A new int64 vector constant (a shape or indices). */
static lm_status rp_ints(fe_expansion *x, uint32_t count, const int64_t *v, uint32_t *out) {
    fe_tensor *t;
    lm_status st = fe_const_new(x->c, FE_INT64, 1, (int64_t[]){count}, &t);
    if (st) return st;
    for (uint32_t i = 0; i < count; i++)
        fe_tensor_set_i64(t, i, v[i]);
    return fe_x_const(x, t, "ints", out);
}

/* op(a, b) into a new value, with one INT attribute (INTS when `list`). */
static lm_status rp_op(fe_expansion *x, const char *op, uint32_t a, uint32_t b, const char *attr,
                       bool list, int64_t v, uint32_t *out) {
    lm_status st = fe_x_emit(x, op, a, b, out);
    if (!st && attr) st = fe_x_int_attr(x, &x->nodes[x->count - 1], attr, list, v);
    return st;
}

/* op(a, k) for a new scalar constant k of the pooled type. */
static lm_status rp_op_k(fe_expansion *x, const rp_params *p, const char *op, uint32_t a, double k,
                         uint32_t *out) {
    uint32_t kv;
    lm_status st = fe_x_float(x, p->elem, k, &kv);
    return st ? st : rp_op(x, op, a, kv, NULL, false, 0, out);
}

/* Column `col` of the rounded RoIs [R, 4] as [R, 1, 1, 1, 1]. */
static lm_status rp_column(fe_expansion *x, uint32_t r4, int64_t col, uint32_t *out) {
    fe_tensor *t;
    uint32_t idx;
    lm_status st = fe_const_new(x->c, FE_INT64, 4, (int64_t[]){1, 1, 1, 1}, &t);
    if (st) return st;
    fe_tensor_set_i64(t, 0, col);
    if ((st = fe_x_const(x, t, "col", &idx))) return st;
    return rp_op(x, "Gather", r4, idx, "axis", false, 1, out);
}

/* One axis's bins: from the RoIs' start and end pixels (columns `col` and
 * col + 2 of r4), the mask [R, .., bin, .., pixel] (the bin's dim at `bin_at`,
 * the pixel's at `pix_at` of 5) of the pixels in each bin, and whether each
 * bin is empty. */
static lm_status rp_axis(fe_expansion *x, const rp_params *p, uint32_t r4, int64_t col,
                         int64_t bins, int64_t size, int bin_at, int pix_at, uint32_t *out_mask,
                         uint32_t *out_empty) {
    uint32_t start, end, len, bin, i0, i1, lo, hi, pix, ge, lt;
    lm_status st = rp_column(x, r4, col, &start);
    if (!st) st = rp_column(x, r4, col + 2, &end);
    /* Malformed RoIs count as one pixel long. */
    if (!st) st = rp_op(x, "Sub", end, start, NULL, false, 0, &len);
    if (!st) st = rp_op_k(x, p, "Add", len, 1.0, &len);
    if (!st) st = rp_op_k(x, p, "Max", len, 1.0, &len);
    if (!st) st = rp_op_k(x, p, "Div", len, (double)bins, &bin);
    if (!st) st = rp_ramp(x, p->elem, bin_at, bins, 0, &i0);
    if (!st) st = rp_ramp(x, p->elem, bin_at, bins, 1, &i1);
    if (!st) st = rp_op(x, "Mul", i0, bin, NULL, false, 0, &lo);
    if (!st) st = rp_op(x, "Floor", lo, FE_NONE, NULL, false, 0, &lo);
    if (!st) st = rp_op(x, "Mul", i1, bin, NULL, false, 0, &hi);
    if (!st) st = rp_op(x, "Ceil", hi, FE_NONE, NULL, false, 0, &hi);
    uint32_t *bound[2] = {&lo, &hi};
    for (int b = 0; b < 2 && !st; b++) {
        st = rp_op(x, "Add", *bound[b], start, NULL, false, 0, bound[b]);
        if (!st) st = rp_op_k(x, p, "Max", *bound[b], 0.0, bound[b]);
        if (!st) st = rp_op_k(x, p, "Min", *bound[b], (double)size, bound[b]);
    }
    if (!st) st = rp_ramp(x, p->elem, pix_at, size, 0, &pix);
    if (!st) st = rp_op(x, "GreaterOrEqual", pix, lo, NULL, false, 0, &ge);
    if (!st) st = rp_op(x, "Less", pix, hi, NULL, false, 0, &lt);
    if (!st) st = rp_op(x, "And", ge, lt, NULL, false, 0, out_mask);
    if (!st) st = rp_op(x, "LessOrEqual", hi, lo, NULL, false, 0, out_empty);
    return st;
}

/* The max over the masked dim `axis` of `v` (keeping it), -inf elsewhere. */
static lm_status rp_masked_max(fe_expansion *x, const rp_params *p, uint32_t mask, uint32_t v,
                               int64_t axis, uint32_t *out) {
    uint32_t ninf, w;
    lm_status st = fe_x_float(x, p->elem, -INFINITY, &ninf);
    fe_node *nd = st ? NULL : fe_x_node(x, "Where", 13, 3, 1);
    if (!st && !nd) st = fe_x_oom();
    if (!st) st = fe_x_value(x, "masked", &w);
    if (st) return st;
    nd = &x->nodes[x->count - 1];
    nd->inputs[0] = mask;
    nd->inputs[1] = v;
    nd->inputs[2] = ninf;
    nd->outputs[0] = w;
    return rp_op(x, "ReduceMax", w, FE_NONE, "axes", true, axis, out);
}

/* v reshaped to `rank` dims. */
static lm_status rp_reshape(fe_expansion *x, uint32_t v, uint32_t rank, const int64_t *dims,
                            uint32_t *out) {
    uint32_t shape;
    lm_status st = rp_ints(x, rank, dims, &shape);
    return st ? st : rp_op(x, "Reshape", v, shape, NULL, false, 0, out);
}

static lm_status infer_maxroipool(fe_ctx *c, const fe_node *n) {
    rp_params p;
    lm_status st = rp_params_of(c, n, &p);
    if (st) return st;
    int64_t R = p.rois, C = p.ch, H = p.h, W = p.w, PH = p.ph, PW = p.pw;
    fe_expansion x;
    fe_x_begin(c, n, &x);
    uint32_t X = x.node.inputs[0], rois = x.node.inputs[1];
    /* Each RoI's image [R, C, H, W]; the batch index truncated as the
     * reference's integer conversion does. */
    uint32_t k0, bidf, bid, img, img5;
    st = fe_x_scalar(&x, FE_INT64, 0, "zero", &k0);
    if (!st) st = rp_op(&x, "Gather", rois, k0, "axis", false, 1, &bidf);
    if (!st) st = rp_op(&x, "Cast", bidf, FE_NONE, "to", false, FE_INT64, &bid);
    if (!st) st = rp_op(&x, "Gather", X, bid, "axis", false, 0, &img);
    /* The corners scaled and rounded half away from zero: floor(|v|), plus
     * one where the rest is at least a half, with v's sign. */
    uint32_t cols, c4, mag, fl, frac, up, one, zero, r4;
    if (!st) st = rp_ints(&x, 4, (const int64_t[]){1, 2, 3, 4}, &cols);
    if (!st) st = rp_op(&x, "Gather", rois, cols, "axis", false, 1, &c4);
    if (!st && p.scale != 1.0f) st = rp_op_k(&x, &p, "Mul", c4, p.scale, &c4);
    if (!st) st = rp_op(&x, "Abs", c4, FE_NONE, NULL, false, 0, &mag);
    if (!st) st = rp_op(&x, "Floor", mag, FE_NONE, NULL, false, 0, &fl);
    if (!st) st = rp_op(&x, "Sub", mag, fl, NULL, false, 0, &frac);
    if (!st) st = rp_op_k(&x, &p, "GreaterOrEqual", frac, 0.5, &up);
    if (!st) st = fe_x_float(&x, p.elem, 1.0, &one);
    if (!st) st = fe_x_float(&x, p.elem, 0.0, &zero);
    fe_node *nd = st ? NULL : fe_x_node(&x, "Where", 13, 3, 1);
    if (!st && !nd) st = fe_x_oom();
    uint32_t add = FE_NONE;
    if (!st) st = fe_x_value(&x, "round_up", &add);
    if (!st) {
        nd = &x.nodes[x.count - 1];
        nd->inputs[0] = up;
        nd->inputs[1] = one;
        nd->inputs[2] = zero;
        nd->outputs[0] = add;
    }
    uint32_t sign;
    if (!st) st = rp_op(&x, "Add", fl, add, NULL, false, 0, &mag);
    if (!st) st = rp_op(&x, "Sign", c4, FE_NONE, NULL, false, 0, &sign);
    if (!st) st = rp_op(&x, "Mul", mag, sign, NULL, false, 0, &r4);
    /* Columns first: [R, C, H, 1, W] under the mask [R, 1, 1, PW, W]. */
    uint32_t mask_w, empty_w, mask_h, empty_h, m1, m1r, m2, pooled, empty, empty4;
    if (!st) st = rp_axis(&x, &p, r4, 0, PW, W, 3, 4, &mask_w, &empty_w);
    if (!st) st = rp_axis(&x, &p, r4, 1, PH, H, 2, 3, &mask_h, &empty_h);
    if (!st) st = fe_x_unsqueeze(&x, img, 3, &img5);
    if (!st) st = rp_masked_max(&x, &p, mask_w, img5, 4, &m1);
    /* Then rows: [R, C, 1, H, PW] under the mask [R, 1, PH, H, 1]. */
    if (!st) st = rp_reshape(&x, m1, 5, (const int64_t[]){R, C, 1, H, PW}, &m1r);
    if (!st) st = rp_masked_max(&x, &p, mask_h, m1r, 3, &m2);
    if (!st) st = rp_reshape(&x, m2, 4, (const int64_t[]){R, C, PH, PW}, &pooled);
    /* Empty bins are 0. */
    if (!st) st = rp_op(&x, "Or", empty_h, empty_w, NULL, false, 0, &empty);
    if (!st) st = rp_reshape(&x, empty, 4, (const int64_t[]){R, 1, PH, PW}, &empty4);
    nd = st ? NULL : fe_x_node(&x, "Where", 13, 3, 1);
    if (!st && !nd) st = fe_x_oom();
    if (!st) {
        nd->inputs[0] = empty4;
        nd->inputs[1] = zero;
        nd->inputs[2] = pooled;
        nd->outputs[0] = x.node.outputs[0];
    }
    return fe_x_end(c, &x, st);
}

const fe_op_def fe_ops_grid[] = {
    {"GridSample", infer_gridsample, lower_gridsample, 0, NULL},
    {"RoiAlign", infer_roialign, lower_roialign, 0, NULL},
    {"MaxRoiPool", infer_maxroipool, NULL, 0, NULL},
};
const size_t fe_ops_grid_count = sizeof fe_ops_grid / sizeof fe_ops_grid[0];
