/* GridSample (opset 16's mode names bilinear, nearest, bicubic and opset
 * 20's linear, nearest, cubic), on 4-D inputs.
 *
 * The grid is a run-time tensor, so unlike Resize every position and weight
 * is worked out on the device. Per output position and axis: the grid value
 * unnormalised to a pixel coordinate, the padding rule applied to it, then
 * its taps (1 for nearest, 2 for linear, 4 for cubic), each with a weight
 * (zero where the tap falls outside the image) and an index clamped into
 * it. Each pair of an x tap and a y tap is one gather of whole channel rows
 * from the image held as [N * H * W, C], times the pair's weight; the sum
 * over pairs is the output. Positions and weights are float32 in every
 * dtype mode, so row numbers stay exact (below 2^24). The rules follow PyTorch's grid_sample, which
 * ONNX's definition matches: the padding rule moves the coordinate before
 * linear and nearest interpolation, and each tap of cubic. */
#include <stdlib.h>
#include <string.h>

#include "frontend/fe_ops.h"

typedef enum { GS_NEAREST, GS_LINEAR, GS_CUBIC } gs_mode;
typedef enum { GS_ZEROS, GS_BORDER, GS_REFLECTION } gs_padding;

enum { GS_TAPS_MAX = 4 };

typedef struct gs_params {
    gs_mode mode;
    gs_padding padding;
    bool align;
    int64_t n, ch, h, w, oh, ow;
} gs_params;

/* Index of `s` in the NULL-terminated `names`, or -1. */
static int name_index(const char *s, const char *const *names) {
    for (int i = 0; names[i]; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

static lm_status gs_params_of(fe_ctx *c, const fe_node *n, gs_params *p) {
    /* Opset 20 renamed the modes after the axis count they generalise to. */
    static const char *const modes16[] = {"nearest", "bilinear", "bicubic", NULL};
    static const char *const modes20[] = {"nearest", "linear", "cubic", NULL};
    static const char *const paddings[] = {"zeros", "border", "reflection", NULL};
    bool v20 = n->opset >= 20;
    const char *mode, *padding;
    int64_t align;
    lm_status st = fe_check_inputs(c, n, 2, 2);
    if (!st)
        st = fe_check_attrs(c, n,
                            (const char *const[]){"align_corners", "mode", "padding_mode", NULL});
    if (!st) st = fe_attr_string(c, n, "mode", v20 ? "linear" : "bilinear", &mode);
    if (!st) st = fe_attr_string(c, n, "padding_mode", "zeros", &padding);
    if (!st) st = fe_attr_int(c, n, "align_corners", 0, &align);
    if (st) return st;
    int m = name_index(mode, v20 ? modes20 : modes16), pad = name_index(padding, paddings);
    if (m < 0) return fe_fail(c, n, LM_ERR_INVALID_FILE, "attribute mode=%s is not valid", mode);
    if (pad < 0)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "attribute padding_mode=%s is not valid",
                       padding);
    p->mode = (gs_mode)m;
    p->padding = (gs_padding)pad;
    p->align = align != 0;
    const fe_type *x = fe_in_type(c, n, 0), *g = fe_in_type(c, n, 1);
    if (!fe_elem_is_float(x->elem) || !fe_elem_is_float(g->elem))
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "X and grid must be float tensors");
    if (x->rank != 4)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "X has %d dims: only 4-D inputs (N, C, H, W) are supported", x->rank);
    if (g->rank != 4 || g->dims[0] != x->dims[0] || g->dims[3] != 2)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "grid must be [N, H_out, W_out, 2] with N = %lld",
                       (long long)x->dims[0]);
    p->n = x->dims[0];
    p->ch = x->dims[1];
    p->h = x->dims[2];
    p->w = x->dims[3];
    p->oh = g->dims[1];
    p->ow = g->dims[2];
    /* Row numbers are computed in float32: exact below 2^24. */
    if (p->n * p->h * p->w > ((int64_t)1 << 24) || p->n * p->oh * p->ow > ((int64_t)1 << 24))
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "%lld input and %lld output positions (at most 2^24 each)",
                       (long long)(p->n * p->h * p->w), (long long)(p->n * p->oh * p->ow));
    return LM_OK;
}

static lm_status infer_gridsample(fe_ctx *c, const fe_node *n) {
    gs_params p;
    lm_status st = gs_params_of(c, n, &p);
    if (st) return st;
    int64_t dims[4] = {p.n, p.ch, p.oh, p.ow};
    return fe_set_out_type(c, n, 0, fe_in_type(c, n, 0)->elem, 4, dims);
}

/* ---- lowering ----
 * The steps are many small element-wise ops: a work list keeps every
 * tensor made so that one release frees them, on success or failure, and
 * each step is a no-op once one has failed. */

/* Cubic with reflection, the most: about 120 tensors an axis. */
enum { GS_WORK_MAX = 512 };

typedef struct gs_work {
    lm_status st;
    uint32_t count;
    lmnn_tensor made[GS_WORK_MAX];
} gs_work;

/* Records *t, which the call that returned `st` made (a pointer: the
 * call's arguments are all evaluated before it runs). */
static lmnn_tensor gs_keep(gs_work *k, lm_status st, const lmnn_tensor *made) {
    lmnn_tensor t = *made;
    if (st) {
        k->st = st;
        return (lmnn_tensor){0};
    }
    if (k->count == GS_WORK_MAX) {
        fe_free(t);
        k->st = err_set(LM_ERR_INTERNAL, "GridSample: work list full");
        return (lmnn_tensor){0};
    }
    k->made[k->count++] = t;
    return t;
}

/* Frees what was made since `mark`. */
static void gs_release(gs_work *k, uint32_t mark) {
    while (k->count > mark)
        fe_free(k->made[--k->count]);
}

static lmnn_tensor gs_scalar(gs_work *k, lmnn_binary_op op, lmnn_tensor a, double s) {
    lmnn_tensor t = {0};
    return k->st ? t : gs_keep(k, lmnn_binary_scalar(op, a, s, NULL, &t), &t);
}

static lmnn_tensor gs_binary(gs_work *k, lmnn_binary_op op, lmnn_tensor a, lmnn_tensor b) {
    lmnn_tensor t = {0};
    return k->st ? t : gs_keep(k, lmnn_binary(op, a, b, NULL, &t), &t);
}

static lmnn_tensor gs_unary(gs_work *k, lm_status (*f)(lmnn_tensor, lmnn_tensor *), lmnn_tensor a) {
    lmnn_tensor t = {0};
    return k->st ? t : gs_keep(k, f(a, &t), &t);
}

static lmnn_tensor gs_clamp(gs_work *k, lmnn_tensor a, double lo, double hi) {
    lmnn_tensor t = {0};
    return k->st ? t : gs_keep(k, lmnn_clamp(a, lo, hi, &t), &t);
}

static lm_status gs_round_even(lmnn_tensor a, lmnn_tensor *out) {
    return lmnn_round(a, 0, out);
}

/* Coordinate x reflected into the image as PyTorch's grid_sample does:
 * about the corner pixels' centres (align_corners) or their outer edges,
 * as many times as it takes, then clamped to [0, size - 1]. */
static lmnn_tensor gs_reflect(gs_work *k, lmnn_tensor x, int64_t size, bool align) {
    double lo = align ? 0 : -0.5, span = align ? (double)(size - 1) : (double)size;
    if (span <= 0) return gs_scalar(k, LMNN_BINARY_MUL, x, 0.0);
    /* d = |x - lo|; q = floor(d / span); e = d - q span; odd q runs back. */
    lmnn_tensor d = gs_unary(k, lmnn_abs, gs_scalar(k, LMNN_BINARY_SUB, x, lo));
    lmnn_tensor q = gs_unary(k, lmnn_floor, gs_scalar(k, LMNN_BINARY_DIV, d, span));
    lmnn_tensor e = gs_binary(k, LMNN_BINARY_SUB, d, gs_scalar(k, LMNN_BINARY_MUL, q, span));
    lmnn_tensor half = gs_unary(k, lmnn_floor, gs_scalar(k, LMNN_BINARY_MUL, q, 0.5));
    lmnn_tensor odd = gs_binary(k, LMNN_BINARY_SUB, q, gs_scalar(k, LMNN_BINARY_MUL, half, 2.0));
    /* lo + e + odd (span - 2 e) */
    lmnn_tensor back = gs_scalar(k, LMNN_BINARY_RSUB, gs_scalar(k, LMNN_BINARY_MUL, e, 2.0), span);
    lmnn_tensor r = gs_binary(k, LMNN_BINARY_ADD, e, gs_binary(k, LMNN_BINARY_MUL, odd, back));
    return gs_clamp(k, gs_scalar(k, LMNN_BINARY_ADD, r, lo), 0, (double)(size - 1));
}

/* The padding rule applied to coordinate x on an axis of `size` pixels. */
static lmnn_tensor gs_pad(gs_work *k, const gs_params *p, lmnn_tensor x, int64_t size) {
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
static void gs_cubic_weights(gs_work *k, lmnn_tensor t, lmnn_tensor *w) {
    const double a = -0.75;
    for (int i = 0; i < 4; i++) {
        /* Distance from the tap: 1 + t, t, 1 - t, 2 - t. */
        lmnn_tensor d = i == 0   ? gs_scalar(k, LMNN_BINARY_ADD, t, 1.0)
                        : i == 1 ? t
                        : i == 2 ? gs_scalar(k, LMNN_BINARY_RSUB, t, 1.0)
                                 : gs_scalar(k, LMNN_BINARY_RSUB, t, 2.0);
        lmnn_tensor d2 = gs_binary(k, LMNN_BINARY_MUL, d, d);
        if (i == 1 || i == 2) {
            /* |d| <= 1: ((a + 2) d - (a + 3)) d^2 + 1 */
            lmnn_tensor u =
                gs_scalar(k, LMNN_BINARY_SUB, gs_scalar(k, LMNN_BINARY_MUL, d, a + 2), a + 3);
            w[i] = gs_scalar(k, LMNN_BINARY_ADD, gs_binary(k, LMNN_BINARY_MUL, u, d2), 1.0);
        } else {
            /* 1 < |d| < 2: ((a d - 5 a) d + 8 a) d - 4 a */
            lmnn_tensor u =
                gs_scalar(k, LMNN_BINARY_SUB, gs_scalar(k, LMNN_BINARY_MUL, d, a), 5 * a);
            lmnn_tensor v =
                gs_scalar(k, LMNN_BINARY_ADD, gs_binary(k, LMNN_BINARY_MUL, u, d), 8 * a);
            w[i] = gs_scalar(k, LMNN_BINARY_SUB, gs_binary(k, LMNN_BINARY_MUL, v, d), 4 * a);
        }
    }
}

/* The taps of grid coordinate g ([G, 1], in [-1, 1] for the image) on an
 * axis of `size` pixels. */
static void gs_axis_taps(gs_work *k, const gs_params *p, lmnn_tensor g, int64_t size,
                         gs_axis *out) {
    double s = (double)size;
    lmnn_tensor x =
        gs_scalar(k, LMNN_BINARY_ADD,
                  gs_scalar(k, LMNN_BINARY_MUL, g, p->align ? (s - 1) / 2 : s / 2), (s - 1) / 2);
    lmnn_tensor pos[GS_TAPS_MAX], w[GS_TAPS_MAX];
    if (p->mode != GS_CUBIC) x = gs_pad(k, p, x, size);
    if (p->mode == GS_NEAREST) {
        out->taps = 1;
        pos[0] = gs_unary(k, gs_round_even, x);
        w[0] = gs_scalar(k, LMNN_BINARY_ADD, gs_scalar(k, LMNN_BINARY_MUL, x, 0.0), 1.0);
    } else {
        lmnn_tensor f = gs_unary(k, lmnn_floor, x), t = gs_binary(k, LMNN_BINARY_SUB, x, f);
        if (p->mode == GS_LINEAR) {
            out->taps = 2;
            pos[0] = f;
            pos[1] = gs_scalar(k, LMNN_BINARY_ADD, f, 1.0);
            w[0] = gs_scalar(k, LMNN_BINARY_RSUB, t, 1.0);
            w[1] = t;
        } else {
            out->taps = 4;
            for (int i = 0; i < 4; i++)
                pos[i] = gs_scalar(k, LMNN_BINARY_ADD, f, (double)(i - 1));
            gs_cubic_weights(k, t, w);
            for (int i = 0; i < 4; i++)
                pos[i] = gs_pad(k, p, pos[i], size);
        }
    }
    for (uint32_t i = 0; i < out->taps; i++) {
        /* inside = (pos >= 0) (pos <= size - 1) */
        lmnn_tensor inside =
            gs_binary(k, LMNN_BINARY_MUL, gs_scalar(k, LMNN_BINARY_GE, pos[i], 0.0),
                      gs_scalar(k, LMNN_BINARY_LE, pos[i], s - 1));
        out->weight[i] = gs_binary(k, LMNN_BINARY_MUL, w[i], inside);
        out->index[i] = gs_clamp(k, pos[i], 0, s - 1);
    }
}

static lm_status lower_gridsample(fe_ctx *c, const fe_node *n) {
    gs_params p;
    lm_status st = gs_params_of(c, n, &p);
    if (st) return st;
    int64_t G = p.n * p.oh * p.ow, rows_in = p.n * p.h * p.w;
    /* base[g] = the first row of output position g's image. */
    int64_t bd[2] = {G, 1};
    fe_tensor *base_t;
    if ((st = fe_const_new(c, FE_FLOAT, 2, bd, &base_t))) return fe_nn_fail(c, n, st);
    for (int64_t g = 0; g < G; g++)
        fe_tensor_set_f64(base_t, (uint64_t)g, (double)(g / (p.oh * p.ow) * p.h * p.w));
    lmnn_tensor x, grid, base;
    if ((st = fe_aux_f32(c, n, 0, base_t, &base)) || (st = fe_in_dev(c, n, 0, &x)) ||
        (st = fe_in_dev(c, n, 1, &grid)))
        return st;

    gs_work *k = calloc(1, sizeof *k);
    if (!k) return fe_fail(c, n, LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    lmnn_tensor t = {0}, acc = {0}, y = {0};
    /* The image as channel rows [N * H * W, C]; the grid as [G, 2]. */
    lmnn_shape img_rows = LMNN_SHAPE((uint32_t)rows_in, (uint32_t)p.ch);
    lmnn_shape grid_rows = LMNN_SHAPE((uint32_t)G, 2);
    lmnn_tensor nhwc = gs_keep(k, lmnn_permute(x, (const int32_t[]){0, 2, 3, 1}, 4, NULL, &t), &t);
    lmnn_tensor img = k->st ? t : gs_keep(k, lmnn_reshape(nhwc, &img_rows, NULL, &t), &t);
    /* Positions in float32 whatever the mode: row numbers stay exact. */
    lmnn_tensor_info gi;
    lmnn_tensor g32 = grid;
    if ((k->st = lmnn_tensor_get_info(grid, &gi)) == LM_OK && gi.dtype != LMNN_FLOAT32)
        g32 = gs_keep(k, lmnn_typecast(grid, LMNN_FLOAT32, &t), &t);
    lmnn_tensor gr = k->st ? t : gs_keep(k, lmnn_reshape(g32, &grid_rows, NULL, &t), &t);
    lmnn_tensor gxy[2];
    for (int i = 0; i < 2; i++) {
        int32_t b[2] = {0, i}, e[2] = {(int32_t)G, i + 1};
        gxy[i] = k->st ? t : gs_keep(k, lmnn_slice(gr, b, e, NULL, 2, NULL, &t), &t);
    }
    gs_axis ax, ay;
    gs_axis_taps(k, &p, gxy[0], p.w, &ax);
    gs_axis_taps(k, &p, gxy[1], p.h, &ay);
    for (uint32_t i = 0; i < ay.taps && !k->st; i++) {
        uint32_t mark = k->count;
        lmnn_tensor row = gs_binary(k, LMNN_BINARY_ADD, base,
                                    gs_scalar(k, LMNN_BINARY_MUL, ay.index[i], (double)p.w));
        for (uint32_t j = 0; j < ax.taps && !k->st; j++) {
            uint32_t inner = k->count;
            lmnn_tensor at = gs_binary(k, LMNN_BINARY_ADD, row, ax.index[j]);
            lmnn_tensor wt = gs_binary(k, LMNN_BINARY_MUL, ay.weight[i], ax.weight[j]);
            lmnn_tensor idx = k->st ? t : gs_keep(k, fe_rows_index(at, G, &t), &t);
            lmnn_tensor got = k->st ? t : gs_keep(k, lmnn_index_select(img, 0, idx, NULL, &t), &t);
            lmnn_tensor part = gs_binary(k, LMNN_BINARY_MUL, got, wt);
            if (!k->st && !acc.id) {
                /* The first part becomes the sum: out of the work list. */
                acc = part;
                k->count--;
            } else if (!k->st) {
                lmnn_tensor sum;
                if ((k->st = lmnn_binary(LMNN_BINARY_ADD, acc, part, NULL, &sum)) == LM_OK) {
                    fe_free(acc);
                    acc = sum;
                }
            }
            gs_release(k, inner);
        }
        gs_release(k, mark);
    }
    lmnn_shape spatial = LMNN_SHAPE((uint32_t)p.n, (uint32_t)p.oh, (uint32_t)p.ow, (uint32_t)p.ch);
    lmnn_tensor r = k->st ? t : gs_keep(k, lmnn_reshape(acc, &spatial, NULL, &t), &t);
    if (!k->st) k->st = lmnn_permute(r, (const int32_t[]){0, 3, 1, 2}, 4, NULL, &y);
    st = k->st;
    gs_release(k, 0);
    free(k);
    fe_free(acc);
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_dev(c, n, 0, y);
}

const fe_op_def fe_ops_grid[] = {
    {"GridSample", infer_gridsample, lower_gridsample, 0, NULL},
};
const size_t fe_ops_grid_count = sizeof fe_ops_grid / sizeof fe_ops_grid[0];
