/* Gradient (ai.onnx.preview.training): reverse-mode differentiation of the
 * graph, done at compile time.
 *
 * Gradient(xs, zs, y) outputs dy/dx for each tensor named in xs, at the
 * values its inputs give for xs and then zs. The node is rewritten into
 * ordinary ops: the forward ops from xs and zs to y (reused where the
 * inputs are the named tensors themselves and those ops were inferred
 * already, cloned on the given values otherwise), then each op's
 * vector-Jacobian product in reverse order, accumulated per tensor. A y of
 * several elements is differentiated as the sum of its elements (the
 * backward pass starts from ones), so each output has the shape of its x.
 *
 * The loader makes y an implicit input of the node, so the ops computing y
 * come before it and are inferred first: every shape the backward pass
 * needs (to sum broadcast gradients back to their operand's shape) is known
 * when the node is rewritten. An op on the path without a gradient rule is
 * an error naming it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/fe_ops.h"
#include "frontend/fe_passes.h"

/* The rewrite under way. Errors are sticky: once st is set every emitter
 * returns FE_NONE and does nothing, so a rule reads as straight-line math
 * and its caller checks st once. */
typedef struct gr {
    fe_build b;       /* b.elem: y's element type, that of every gradient */
    uint32_t values;  /* the graph's value count before the rewrite */
    uint32_t *map;    /* per original value: what it is in the rewrite */
    uint32_t *grad;   /* per original value: its gradient so far, or FE_NONE */
    uint8_t *role;    /* per original value: GR_* */
    uint8_t *dep;     /* per original value: depends on a tensor in xs */
    uint8_t *on_path; /* per node (original index): on the way to y */
    uint32_t *order;  /* those nodes, in graph order */
    uint32_t order_count;
    const fe_node *at; /* the node whose rule runs, for errors */
} gr;

enum { GR_OTHER = 0, GR_X = 1, GR_Z = 2 };

/* The most outputs of a Split whose gradients are put back together. */
enum { GR_MAX_SPLIT = 256 };

/* The most entries of a placement matrix (gr_along: a constant stored in
 * the binary) and the most kernel taps a rule takes one at a time. */
enum { GR_MAX_PLACE = 1 << 22, GR_MAX_TAPS = 4096 };

/* ---- emitters ---- */

static bool gr_ok(gr *G) {
    return G->b.st == LM_OK;
}

static uint32_t gr_reshape(gr *G, uint32_t v, const fe_type *to) {
    return fe_b_op(&G->b, "Reshape", v, fe_b_ints(&G->b, to->dims, (uint32_t)to->rank));
}

/* a transposed by `perm` (rank entries). */
static uint32_t gr_transpose(gr *G, uint32_t a, const int64_t *perm, int32_t rank) {
    fe_node *n = NULL;
    uint32_t v = fe_b_node(&G->b, "Transpose", 13, &a, 1, &n);
    fe_b_ints_attr(&G->b, n, "perm", true, perm, rank);
    return v;
}

/* a with dims i and j swapped. */
static uint32_t gr_swap(gr *G, uint32_t a, int32_t rank, int32_t i, int32_t j) {
    int64_t perm[FE_MAX_RANK];
    for (int32_t d = 0; d < rank; d++)
        perm[d] = d == i ? j : d == j ? i : d;
    return gr_transpose(G, a, perm, rank);
}

/* a with its last two dims swapped. */
static uint32_t gr_swap_last(gr *G, uint32_t a, int32_t rank) {
    return gr_swap(G, a, rank, rank - 2, rank - 1);
}

/* a with its first two dims swapped. */
static uint32_t gr_swap_first(gr *G, uint32_t a, int32_t rank) {
    return gr_swap(G, a, rank, 0, 1);
}

/* g, of type `from` (an op's output), summed back to `to` (an operand that
 * was broadcast to it). */
static uint32_t gr_unbroadcast(gr *G, uint32_t g, const fe_type *from, const fe_type *to) {
    int64_t axes[FE_MAX_RANK];
    uint32_t count = 0;
    int32_t lead = from->rank - to->rank;
    for (int32_t d = 0; d < from->rank; d++)
        if (d < lead || (to->dims[d - lead] == 1 && from->dims[d] != 1)) axes[count++] = d;
    if (!count) return g;
    uint32_t s = fe_b_sum(&G->b, g, axes, count);
    return lead ? gr_reshape(G, s, to) : s;
}

/* v (rank `rank`) padded with `value`: begin[d] before and end[d] after
 * each dim d. */
static uint32_t gr_pad(gr *G, uint32_t v, int32_t rank, const int64_t *begin, const int64_t *end,
                       double value) {
    int64_t pads[2 * FE_MAX_RANK];
    bool any = false;
    for (int32_t d = 0; d < rank; d++) {
        pads[d] = begin[d];
        pads[rank + d] = end[d];
        any |= begin[d] || end[d];
    }
    if (!any) return v;
    uint32_t in[3] = {v, fe_b_ints(&G->b, pads, (uint32_t)(2 * rank)), fe_b_scalar(&G->b, value)};
    return fe_b_node(&G->b, "Pad", 13, in, 3, NULL);
}

/* v (type t) sliced per dim d from begin[d] towards end[d] by step[d]
 * (ONNX's Slice rules: a negative step walks down). */
static uint32_t gr_slice(gr *G, uint32_t v, const fe_type *t, const int64_t *begin,
                         const int64_t *end, const int64_t *step) {
    int64_t b[FE_MAX_RANK], e[FE_MAX_RANK], a[FE_MAX_RANK], s[FE_MAX_RANK];
    uint32_t k = 0;
    for (int32_t d = 0; d < t->rank; d++)
        if (begin[d] != 0 || end[d] != t->dims[d] || step[d] != 1) {
            b[k] = begin[d];
            e[k] = end[d];
            a[k] = d;
            s[k++] = step[d];
        }
    if (!k) return v;
    uint32_t in[5] = {v, fe_b_ints(&G->b, b, k), fe_b_ints(&G->b, e, k), fe_b_ints(&G->b, a, k),
                      fe_b_ints(&G->b, s, k)};
    return fe_b_node(&G->b, "Slice", 13, in, 5, NULL);
}

/* v (type t) reversed along dim `axis`. */
static uint32_t gr_reverse(gr *G, uint32_t v, const fe_type *t, int32_t axis) {
    int64_t b[FE_MAX_RANK] = {0}, e[FE_MAX_RANK], s[FE_MAX_RANK];
    for (int32_t d = 0; d < t->rank; d++) {
        e[d] = t->dims[d];
        s[d] = 1;
    }
    b[axis] = -1;
    e[axis] = INT64_MIN;
    s[axis] = -1;
    return gr_slice(G, v, t, b, e, s);
}

/* Whether a placement matrix of rows x cols is within GR_MAX_PLACE (if
 * not, the error naming the node whose rule wants it). */
static bool gr_room(gr *G, int64_t rows, int64_t cols) {
    if (rows <= GR_MAX_PLACE / (cols ? cols : 1)) return true;
    G->b.st = fe_fail(G->b.x.c, G->at, LM_ERR_UNSUPPORTED,
                      "Gradient: putting this node's gradient back takes a [%lld, %lld] matrix "
                      "(at most %d entries)",
                      (long long)rows, (long long)cols, GR_MAX_PLACE);
    return false;
}

/* v (type *t, updated) with dim `axis` taken through a constant matrix:
 * element i of the dim adds, times w[i * cols + j], into element j of the
 * dim's new length `cols`. A matrix product whatever the dims (other than
 * the last, the dim is multiplied from the left, the dims after it
 * merged), so data moves at the device's matmul speed; exact in float32
 * for the 0/1 placements most rules put in `w`. */
static uint32_t gr_along(gr *G, uint32_t v, fe_type *t, int32_t axis, const double *w,
                         int64_t cols) {
    if (!gr_ok(G)) return FE_NONE;
    int64_t rows = t->dims[axis];
    bool last = axis == t->rank - 1;
    if (!gr_room(G, rows, cols)) return FE_NONE;
    fe_tensor *m;
    uint32_t mv;
    int64_t md[2] = {last ? rows : cols, last ? cols : rows};
    if ((G->b.st = fe_const_new(G->b.x.c, G->b.elem, 2, md, &m))) return FE_NONE;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            fe_tensor_set_f64(m, (uint64_t)(last ? i * cols + j : j * rows + i), w[i * cols + j]);
    if ((G->b.st = fe_x_const(&G->b.x, m, "place", &mv))) return FE_NONE;
    fe_type out = *t;
    out.dims[axis] = cols;
    if (last) {
        *t = out;
        return fe_b_op(&G->b, "MatMul", v, mv);
    }
    fe_type flat = *t;
    flat.rank = axis + 2;
    for (int32_t d = axis + 2; d < t->rank; d++)
        flat.dims[axis + 1] *= t->dims[d];
    bool merge = t->rank > axis + 2;
    uint32_t r = fe_b_op(&G->b, "MatMul", mv, merge ? gr_reshape(G, v, &flat) : v);
    *t = out;
    return merge ? gr_reshape(G, r, &out) : r;
}

/* v (type *t, updated) with step - 1 zeros after each element along dim
 * d: a new dim of 1 after d, padded to step, merged into d. */
static uint32_t gr_spread(gr *G, uint32_t v, fe_type *t, int32_t d, int64_t step) {
    if (t->rank == FE_MAX_RANK) {
        G->b.st = fe_fail(G->b.x.c, G->at, LM_ERR_UNSUPPORTED,
                          "Gradient: a strided dim of a rank-%d tensor", FE_MAX_RANK);
        return FE_NONE;
    }
    fe_type wide = *t;
    int64_t none[FE_MAX_RANK] = {0}, zeros[FE_MAX_RANK] = {0};
    for (int32_t i = t->rank; i > d + 1; i--)
        wide.dims[i] = t->dims[i - 1];
    wide.dims[d + 1] = 1;
    wide.rank = t->rank + 1;
    zeros[d + 1] = step - 1;
    t->dims[d] *= step;
    return gr_reshape(G, gr_pad(G, gr_reshape(G, v, &wide), wide.rank, none, zeros, 0.0), t);
}

/* v (type t) spread into zeros: its element i along dim d lands at
 * start[d] + i * step[d] of a dim of len[d] (the last one inside it):
 * the inverse of a slice. A stepped dim goes through a placement matrix,
 * or when that would be too large, gets zeros between its elements; then
 * the dims are cut or padded to their length. */
static uint32_t gr_place(gr *G, uint32_t v, const fe_type *t, const int64_t *start,
                         const int64_t *step, const int64_t *len) {
    fe_type cur = *t;
    int64_t at[FE_MAX_RANK];
    for (int32_t d = 0; d < t->rank && gr_ok(G); d++) {
        at[d] = start[d];
        if (step[d] <= 1 || t->dims[d] <= 1) continue;
        if (t->dims[d] > GR_MAX_PLACE / len[d]) {
            v = gr_spread(G, v, &cur, d, step[d]);
            continue;
        }
        double *hits = calloc((size_t)(t->dims[d] * len[d]), sizeof *hits);
        if (!hits) {
            G->b.st = fe_x_oom();
            return FE_NONE;
        }
        for (int64_t i = 0; i < t->dims[d]; i++)
            hits[i * len[d] + start[d] + i * step[d]] = 1;
        v = gr_along(G, v, &cur, d, hits, len[d]);
        free(hits);
        at[d] = 0;
    }
    /* Spread zeros past the last element may reach past the dim. */
    int64_t b[FE_MAX_RANK] = {0}, e[FE_MAX_RANK], one[FE_MAX_RANK], after[FE_MAX_RANK];
    for (int32_t d = 0; d < t->rank; d++) {
        int64_t room = len[d] - at[d];
        e[d] = cur.dims[d] < room ? cur.dims[d] : room;
        one[d] = 1;
        after[d] = room - e[d];
    }
    return gr_pad(G, gr_slice(G, v, &cur, b, e, one), t->rank, at, after, 0.0);
}

/* Normalisation over `axes` (m elements each): x less its mean, times rs,
 * its (biased) variance plus eps to the power -1/2, both kept in *xhat and
 * *rs (rs with the axes as 1s). */
static void gr_norm_stats(gr *G, uint32_t x, const int64_t *axes, uint32_t count, double m,
                          float eps, uint32_t *xhat, uint32_t *rs) {
    uint32_t inv_m = fe_b_scalar(&G->b, 1.0 / m);
    uint32_t xc =
        fe_b_op(&G->b, "Sub", x, fe_b_op(&G->b, "Mul", fe_b_sum(&G->b, x, axes, count), inv_m));
    uint32_t var =
        fe_b_op(&G->b, "Mul", fe_b_sum(&G->b, fe_b_op(&G->b, "Mul", xc, xc), axes, count), inv_m);
    uint32_t sd =
        fe_b_op(&G->b, "Sqrt", fe_b_op(&G->b, "Add", var, fe_b_scalar(&G->b, eps)), FE_NONE);
    *rs = fe_b_op(&G->b, "Reciprocal", sd, FE_NONE);
    *xhat = fe_b_op(&G->b, "Mul", xc, *rs);
}

/* The gradient of x from gs, that of xhat (gr_norm_stats): the statistics
 * depend on x too, so gs loses its mean and its projection on xhat. */
static uint32_t gr_norm_backward(gr *G, uint32_t gs, uint32_t xhat, uint32_t rs,
                                 const int64_t *axes, uint32_t count, double m) {
    uint32_t inv_m = fe_b_scalar(&G->b, 1.0 / m);
    uint32_t mg = fe_b_op(&G->b, "Mul", fe_b_sum(&G->b, gs, axes, count), inv_m);
    uint32_t mgx =
        fe_b_op(&G->b, "Mul", fe_b_sum(&G->b, fe_b_op(&G->b, "Mul", gs, xhat), axes, count), inv_m);
    return fe_b_op(
        &G->b, "Mul", rs,
        fe_b_op(&G->b, "Sub", fe_b_op(&G->b, "Sub", gs, mg), fe_b_op(&G->b, "Mul", xhat, mgx)));
}

/* ---- the rules ---- */

/* Adds `contribution` to the gradient of original value v. */
static void gr_accumulate(gr *G, uint32_t v, uint32_t contribution) {
    if (!gr_ok(G) || contribution == FE_NONE) return;
    G->grad[v] =
        G->grad[v] == FE_NONE ? contribution : fe_b_op(&G->b, "Add", G->grad[v], contribution);
}

/* Whether original value v needs a gradient: a float tensor in xs, or one
 * computed from them on the way to y (zs and constants need none; a value
 * folded at compile time still does when it came from xs). */
static bool gr_wants(const gr *G, uint32_t v) {
    return v != FE_NONE && G->dep[v] && fe_elem_is_float(G->b.x.c->g->values[v].type.elem);
}

static const fe_type *gr_type(const gr *G, uint32_t v) {
    return &G->b.x.c->g->values[v].type;
}

/* The axes a Reduce* node reduces (all when none are given and
 * noop_with_empty_axes is 0), as a mask over a's dims. */
static lm_status gr_reduce_axes(gr *G, const fe_node *n, int32_t rank, bool *mask) {
    fe_ctx *c = G->b.x.c;
    const int64_t *axes = NULL;
    size_t count = 0;
    lm_status st;
    const fe_tensor *k = NULL;
    if (fe_has_in(n, 1)) {
        if (!(k = fe_in_const(c, n, 1)))
            return fe_fail(c, n, LM_ERR_UNSUPPORTED, "its axes are computed at run time");
        count = (size_t)k->count;
    } else if ((st = fe_attr_ints(c, n, "axes", &axes, &count))) {
        return st;
    }
    int64_t noop = 0;
    if ((st = fe_attr_int(c, n, "noop_with_empty_axes", 0, &noop))) return st;
    for (int32_t d = 0; d < rank; d++)
        mask[d] = count == 0 && !noop;
    for (size_t i = 0; i < count; i++) {
        int64_t a = k ? fe_tensor_get_i64(k, i) : axes[i];
        if (a < 0) a += rank;
        if (a < 0 || a >= rank) return fe_fail(c, n, LM_ERR_INVALID_FILE, "axis out of range");
        mask[a] = true;
    }
    return LM_OK;
}

/* The Reduce* ops: g spread back over the reduced dims, times each
 * element's part in the reduction (Max and Min: the elements equal to y,
 * sharing a tie evenly, as PyTorch's amax and amin do). gr_rules lists the
 * reductions this knows. */
static void gr_rule_reduce(gr *G, const fe_node *n, uint32_t g) {
    const char *kind = n->op_type + 6;
    static const char *const kinds[] = {"Sum",    "Mean",      "SumSquare", "L1",  "L2",
                                        "LogSum", "LogSumExp", "Max",       "Min", NULL};
    size_t k = 0;
    while (kinds[k] && strcmp(kinds[k], kind) != 0)
        k++;
    fe_type a = *gr_type(G, n->inputs[0]);
    bool mask[FE_MAX_RANK];
    if ((G->b.st = gr_reduce_axes(G, n, a.rank, mask))) return;
    fe_type kept = a;
    int64_t axes[FE_MAX_RANK];
    uint32_t count = 0;
    double m = 1;
    for (int32_t d = 0; d < a.rank; d++)
        if (mask[d]) {
            m *= (double)a.dims[d];
            kept.dims[d] = 1;
            axes[count++] = d;
        }
    uint32_t shape = fe_b_ints(&G->b, a.dims, (uint32_t)a.rank), x = G->map[n->inputs[0]];
    uint32_t spread = fe_b_op(&G->b, "Expand", gr_reshape(G, g, &kept), shape), share = spread;
    /* y with the reduced dims kept as 1s (to broadcast over x). */
    uint32_t y = k >= 4 ? gr_reshape(G, G->map[n->outputs[0]], &kept) : FE_NONE;
    switch (k) {
    case 1:
        share = fe_b_op(&G->b, "Div", spread, fe_b_scalar(&G->b, m));
        break;
    case 2:
        share = fe_b_op(&G->b, "Mul", spread, fe_b_op(&G->b, "Mul", x, fe_b_scalar(&G->b, 2.0)));
        break;
    case 3:
        share = fe_b_op(&G->b, "Mul", spread, fe_b_op(&G->b, "Sign", x, FE_NONE));
        break;
    case 4: /* x / y, 0 where y is */
        share = fe_b_where(&G->b, fe_b_op(&G->b, "Equal", y, fe_b_scalar(&G->b, 0.0)),
                           fe_b_scalar(&G->b, 0.0),
                           fe_b_op(&G->b, "Mul", spread, fe_b_op(&G->b, "Div", x, y)));
        break;
    case 5: /* 1 / sum = e^-y */
        share = fe_b_op(&G->b, "Div", spread, fe_b_op(&G->b, "Exp", y, FE_NONE));
        break;
    case 6:
        share = fe_b_op(&G->b, "Mul", spread,
                        fe_b_op(&G->b, "Exp", fe_b_op(&G->b, "Sub", x, y), FE_NONE));
        break;
    case 7:
    case 8: {
        /* (With no axis reduced, each element is its own extremum.) */
        uint32_t eq = fe_b_op(&G->b, "Equal", x, y);
        if (count)
            share = fe_b_op(&G->b, "Div", spread,
                            fe_b_sum(&G->b, fe_b_cast(&G->b, eq, G->b.elem), axes, count));
        share = fe_b_where(&G->b, eq, share, fe_b_scalar(&G->b, 0.0));
        break;
    }
    default:
        break;
    }
    gr_accumulate(G, n->inputs[0], share);
}

/* GlobalMaxPool: g to each image's first element holding its maximum (the
 * running count of those along the flattened image is 1 there), as
 * MaxPool's rule picks. */
static void gr_rule_global_max(gr *G, const fe_node *n, uint32_t g) {
    fe_type tx = *gr_type(G, n->inputs[0]), flat = tx;
    flat.rank = 3;
    for (int32_t d = 3; d < tx.rank; d++)
        flat.dims[2] *= tx.dims[d];
    uint32_t eq = fe_b_op(&G->b, "Equal", G->map[n->inputs[0]], G->map[n->outputs[0]]);
    uint32_t run = fe_b_op(&G->b, "CumSum", gr_reshape(G, fe_b_cast(&G->b, eq, G->b.elem), &flat),
                           fe_b_const(&G->b, FE_INT64, 0, NULL, 2.0));
    uint32_t first =
        fe_b_op(&G->b, "And", eq,
                fe_b_op(&G->b, "Equal", gr_reshape(G, run, &tx), fe_b_scalar(&G->b, 1.0)));
    gr_accumulate(G, n->inputs[0], fe_b_where(&G->b, first, g, fe_b_scalar(&G->b, 0.0)));
}

/* Softmax and LogSoftmax: over one axis, or before opset 13 over the
 * input coerced to 2-D at axis (so over every dim from axis on). */
static void gr_rule_softmax(gr *G, const fe_node *n, uint32_t g) {
    bool log = n->op_type[0] == 'L';
    int64_t axis;
    if ((G->b.st = fe_attr_int(G->b.x.c, n, "axis", n->opset < 13 ? 1 : -1, &axis))) return;
    int32_t rank = gr_type(G, n->outputs[0])->rank;
    if (axis < 0) axis += rank;
    int64_t axes[FE_MAX_RANK];
    uint32_t count = 0;
    for (int64_t d = axis; d < rank && (n->opset < 13 || d == axis); d++)
        axes[count++] = d;
    uint32_t y = G->map[n->outputs[0]];
    if (log) {
        /* g - exp(y) * sum(g) */
        uint32_t s = fe_b_sum(&G->b, g, axes, count);
        gr_accumulate(
            G, n->inputs[0],
            fe_b_op(&G->b, "Sub", g, fe_b_op(&G->b, "Mul", fe_b_op(&G->b, "Exp", y, FE_NONE), s)));
    } else {
        /* y * (g - sum(g * y)) */
        uint32_t s = fe_b_sum(&G->b, fe_b_op(&G->b, "Mul", g, y), axes, count);
        gr_accumulate(G, n->inputs[0], fe_b_op(&G->b, "Mul", y, fe_b_op(&G->b, "Sub", g, s)));
    }
}

/* MatMul of operands of rank >= 2 (batch dims broadcast). */
static void gr_rule_matmul(gr *G, const fe_node *n, uint32_t g) {
    fe_type ta = *gr_type(G, n->inputs[0]), tb = *gr_type(G, n->inputs[1]),
            ty = *gr_type(G, n->outputs[0]);
    if (ta.rank < 2 || tb.rank < 2) {
        G->b.st = fe_fail(G->b.x.c, n, LM_ERR_UNSUPPORTED,
                          "the gradient of MatMul with a 1-D operand is not supported");
        return;
    }
    uint32_t a = G->map[n->inputs[0]], b = G->map[n->inputs[1]];
    /* The operands' shapes with y's batch dims, for summing them back. */
    fe_type ga_t = ty, gb_t = ty;
    ga_t.dims[ty.rank - 1] = ta.dims[ta.rank - 1];
    gb_t.dims[ty.rank - 2] = tb.dims[tb.rank - 2];
    if (gr_wants(G, n->inputs[0]))
        gr_accumulate(G, n->inputs[0],
                      gr_unbroadcast(G, fe_b_op(&G->b, "MatMul", g, gr_swap_last(G, b, tb.rank)),
                                     &ga_t, &ta));
    if (gr_wants(G, n->inputs[1]))
        gr_accumulate(G, n->inputs[1],
                      gr_unbroadcast(G, fe_b_op(&G->b, "MatMul", gr_swap_last(G, a, ta.rank), g),
                                     &gb_t, &tb));
}

/* Gemm: y = alpha * A' B' + beta * C, A' = A or its transpose (transA). */
static void gr_rule_gemm(gr *G, const fe_node *n, uint32_t g) {
    fe_ctx *c = G->b.x.c;
    int64_t ta, tb;
    float alpha, beta;
    if ((G->b.st = fe_attr_int(c, n, "transA", 0, &ta)) ||
        (G->b.st = fe_attr_int(c, n, "transB", 0, &tb)) ||
        (G->b.st = fe_attr_float(c, n, "alpha", 1.0f, &alpha)) ||
        (G->b.st = fe_attr_float(c, n, "beta", 1.0f, &beta)))
        return;
    uint32_t a = G->map[n->inputs[0]], b = G->map[n->inputs[1]];
    uint32_t ga = alpha == 1.0f ? g : fe_b_op(&G->b, "Mul", g, fe_b_scalar(&G->b, alpha));
    if (gr_wants(G, n->inputs[0])) {
        /* dA' = alpha g B'^T, and B'^T is B itself when B was transposed. */
        uint32_t bt = tb ? b : gr_swap_last(G, b, 2);
        uint32_t d = fe_b_op(&G->b, "MatMul", ga, bt);
        gr_accumulate(G, n->inputs[0], ta ? gr_swap_last(G, d, 2) : d);
    }
    if (gr_wants(G, n->inputs[1])) {
        uint32_t at = ta ? a : gr_swap_last(G, a, 2);
        uint32_t d = fe_b_op(&G->b, "MatMul", at, ga);
        gr_accumulate(G, n->inputs[1], tb ? gr_swap_last(G, d, 2) : d);
    }
    if (fe_has_in(n, 2) && gr_wants(G, n->inputs[2])) {
        uint32_t gc = beta == 1.0f ? g : fe_b_op(&G->b, "Mul", g, fe_b_scalar(&G->b, beta));
        gr_accumulate(G, n->inputs[2],
                      gr_unbroadcast(G, gc, gr_type(G, n->outputs[0]), gr_type(G, n->inputs[2])));
    }
}

/* Transpose: g under the inverse permutation. */
static void gr_rule_transpose(gr *G, const fe_node *n, uint32_t g) {
    int32_t rank = gr_type(G, n->inputs[0])->rank;
    const int64_t *perm = NULL;
    size_t count = 0;
    if ((G->b.st = fe_attr_ints(G->b.x.c, n, "perm", &perm, &count))) return;
    int64_t inv[FE_MAX_RANK];
    for (int32_t d = 0; d < rank; d++) {
        int64_t p = perm && count == (size_t)rank ? perm[d] : rank - 1 - d;
        if (p < 0 || p >= rank) {
            G->b.st = fe_fail(G->b.x.c, n, LM_ERR_INVALID_FILE, "perm is not a permutation");
            return;
        }
        inv[p] = d;
    }
    gr_accumulate(G, n->inputs[0], gr_transpose(G, g, inv, rank));
}

/* Clip: g where min <= a <= max (both ends included, as PyTorch's clamp),
 * the bounds attributes before opset 11 and optional inputs after. */
static uint32_t gr_rule_clip(gr *G, const fe_node *n, uint32_t a, uint32_t g) {
    uint32_t bound[2] = {FE_NONE, FE_NONE};
    for (uint32_t b = 0; b < 2 && gr_ok(G); b++) {
        if (n->opset < 11) {
            float v;
            G->b.st = fe_attr_float(G->b.x.c, n, b ? "max" : "min", b ? INFINITY : -INFINITY, &v);
            bound[b] = fe_b_scalar(&G->b, v);
        } else if (fe_has_in(n, 1 + b)) {
            bound[b] = G->map[n->inputs[1 + b]];
        }
    }
    uint32_t keep = FE_NONE;
    for (uint32_t b = 0; b < 2; b++) {
        if (bound[b] == FE_NONE) continue;
        uint32_t in = fe_b_op(&G->b, b ? "LessOrEqual" : "GreaterOrEqual", a, bound[b]);
        keep = keep == FE_NONE ? in : fe_b_op(&G->b, "And", keep, in);
    }
    if (keep == FE_NONE) return g;
    return fe_b_where(&G->b, keep, g, fe_b_scalar(&G->b, 0.0));
}

/* The element-wise ops of one or two operands: each operand's share of g
 * (before summing broadcast dims back), FE_NONE where it has none. */
static bool gr_rule_eltwise(gr *G, const fe_node *n, uint32_t g, uint32_t share[2]) {
    const char *op = n->op_type;
    uint32_t a = G->map[n->inputs[0]];
    uint32_t b = n->input_count > 1 && n->inputs[1] != FE_NONE ? G->map[n->inputs[1]] : FE_NONE;
    uint32_t y = G->map[n->outputs[0]];
    share[0] = share[1] = FE_NONE;
    if (!strcmp(op, "Identity")) {
        share[0] = g;
    } else if (!strcmp(op, "Add")) {
        share[0] = share[1] = g;
    } else if (!strcmp(op, "Sub")) {
        share[0] = g;
        if (gr_wants(G, n->inputs[1])) share[1] = fe_b_op(&G->b, "Neg", g, FE_NONE);
    } else if (!strcmp(op, "Mul")) {
        if (gr_wants(G, n->inputs[0])) share[0] = fe_b_op(&G->b, "Mul", g, b);
        if (gr_wants(G, n->inputs[1])) share[1] = fe_b_op(&G->b, "Mul", g, a);
    } else if (!strcmp(op, "Div")) {
        /* d(a/b)/db = -y / b */
        if (gr_wants(G, n->inputs[0])) share[0] = fe_b_op(&G->b, "Div", g, b);
        if (gr_wants(G, n->inputs[1]))
            share[1] = fe_b_op(&G->b, "Neg", fe_b_op(&G->b, "Div", fe_b_op(&G->b, "Mul", g, y), b),
                               FE_NONE);
    } else if (!strcmp(op, "Pow")) {
        /* b a^(b-1), and y ln a */
        if (gr_wants(G, n->inputs[0]))
            share[0] = fe_b_op(&G->b, "Mul", g,
                               fe_b_op(&G->b, "Mul", b,
                                       fe_b_op(&G->b, "Pow", a,
                                               fe_b_op(&G->b, "Sub", b, fe_b_scalar(&G->b, 1.0)))));
        if (gr_wants(G, n->inputs[1]))
            share[1] = fe_b_op(&G->b, "Mul", g,
                               fe_b_op(&G->b, "Mul", y, fe_b_op(&G->b, "Log", a, FE_NONE)));
    } else if (!strcmp(op, "Neg")) {
        share[0] = fe_b_op(&G->b, "Neg", g, FE_NONE);
    } else if (!strcmp(op, "Relu")) {
        share[0] = fe_b_where(&G->b, fe_b_op(&G->b, "Greater", a, fe_b_scalar(&G->b, 0.0)), g,
                              fe_b_scalar(&G->b, 0.0));
    } else if (!strcmp(op, "Sigmoid")) {
        share[0] =
            fe_b_op(&G->b, "Mul", g,
                    fe_b_op(&G->b, "Mul", y, fe_b_op(&G->b, "Sub", fe_b_scalar(&G->b, 1.0), y)));
    } else if (!strcmp(op, "Tanh")) {
        share[0] =
            fe_b_op(&G->b, "Mul", g,
                    fe_b_op(&G->b, "Sub", fe_b_scalar(&G->b, 1.0), fe_b_op(&G->b, "Mul", y, y)));
    } else if (!strcmp(op, "Exp")) {
        share[0] = fe_b_op(&G->b, "Mul", g, y);
    } else if (!strcmp(op, "Log")) {
        share[0] = fe_b_op(&G->b, "Div", g, a);
    } else if (!strcmp(op, "Sqrt")) {
        share[0] = fe_b_op(&G->b, "Div", fe_b_op(&G->b, "Mul", g, fe_b_scalar(&G->b, 0.5)), y);
    } else if (!strcmp(op, "Abs")) {
        share[0] = fe_b_op(&G->b, "Mul", g, fe_b_op(&G->b, "Sign", a, FE_NONE));
    } else if (!strcmp(op, "Erf")) {
        /* 2 / sqrt(pi) exp(-a^2) */
        uint32_t e = fe_b_op(&G->b, "Exp",
                             fe_b_op(&G->b, "Neg", fe_b_op(&G->b, "Mul", a, a), FE_NONE), FE_NONE);
        share[0] = fe_b_op(&G->b, "Mul", g,
                           fe_b_op(&G->b, "Mul", e, fe_b_scalar(&G->b, 1.1283791670955126)));
    } else if (!strcmp(op, "LeakyRelu")) {
        float alpha;
        if ((G->b.st = fe_attr_float(G->b.x.c, n, "alpha", 0.01f, &alpha))) return true;
        share[0] = fe_b_where(&G->b, fe_b_op(&G->b, "Greater", a, fe_b_scalar(&G->b, 0.0)), g,
                              fe_b_op(&G->b, "Mul", g, fe_b_scalar(&G->b, alpha)));
    } else if (!strcmp(op, "Clip")) {
        share[0] = gr_rule_clip(G, n, a, g);
    } else if (!strcmp(op, "Expand")) {
        share[0] = g;
    } else if (!strcmp(op, "Reciprocal")) {
        share[0] =
            fe_b_op(&G->b, "Neg", fe_b_op(&G->b, "Mul", g, fe_b_op(&G->b, "Mul", y, y)), FE_NONE);
    } else if (!strcmp(op, "Softplus")) {
        share[0] = fe_b_op(&G->b, "Mul", g, fe_b_op(&G->b, "Sigmoid", a, FE_NONE));
    } else if (!strcmp(op, "Softsign")) {
        uint32_t d =
            fe_b_op(&G->b, "Add", fe_b_scalar(&G->b, 1.0), fe_b_op(&G->b, "Abs", a, FE_NONE));
        share[0] = fe_b_op(&G->b, "Div", g, fe_b_op(&G->b, "Mul", d, d));
    } else if (!strcmp(op, "Sin")) {
        share[0] = fe_b_op(&G->b, "Mul", g, fe_b_op(&G->b, "Cos", a, FE_NONE));
    } else if (!strcmp(op, "Cos")) {
        share[0] = fe_b_op(&G->b, "Neg",
                           fe_b_op(&G->b, "Mul", g, fe_b_op(&G->b, "Sin", a, FE_NONE)), FE_NONE);
    } else if (!strcmp(op, "Elu")) {
        /* alpha e^a = y + alpha below 0 */
        float alpha;
        if ((G->b.st = fe_attr_float(G->b.x.c, n, "alpha", 1.0f, &alpha))) return true;
        share[0] = fe_b_where(
            &G->b, fe_b_op(&G->b, "Greater", a, fe_b_scalar(&G->b, 0.0)), g,
            fe_b_op(&G->b, "Mul", g, fe_b_op(&G->b, "Add", y, fe_b_scalar(&G->b, alpha))));
    } else if (!strcmp(op, "HardSigmoid")) {
        /* alpha where 0 < alpha a + beta < 1 */
        float alpha, beta;
        if ((G->b.st = fe_attr_float(G->b.x.c, n, "alpha", 0.2f, &alpha)) ||
            (G->b.st = fe_attr_float(G->b.x.c, n, "beta", 0.5f, &beta)))
            return true;
        uint32_t t = fe_b_op(&G->b, "Add", fe_b_op(&G->b, "Mul", a, fe_b_scalar(&G->b, alpha)),
                             fe_b_scalar(&G->b, beta));
        uint32_t in = fe_b_op(&G->b, "And", fe_b_op(&G->b, "Greater", t, fe_b_scalar(&G->b, 0.0)),
                              fe_b_op(&G->b, "Less", t, fe_b_scalar(&G->b, 1.0)));
        share[0] = fe_b_where(&G->b, in, fe_b_op(&G->b, "Mul", g, fe_b_scalar(&G->b, alpha)),
                              fe_b_scalar(&G->b, 0.0));
    } else if (!strcmp(op, "Dropout")) {
        /* In training mode, the kept elements' scale where the mask (given
         * to every such node, gr_dropout_masks) kept them. */
        double ratio;
        if (fe_dropout_drops(G->b.x.c, n, &ratio))
            share[0] = fe_b_where(&G->b, G->map[n->outputs[1]],
                                  fe_b_op(&G->b, "Mul", g, fe_b_scalar(&G->b, 1.0 / (1.0 - ratio))),
                                  fe_b_scalar(&G->b, 0.0));
        else
            share[0] = g;
    } else if (!strcmp(op, "PRelu")) {
        uint32_t pos = fe_b_op(&G->b, "Greater", a, fe_b_scalar(&G->b, 0.0)),
                 zero = fe_b_scalar(&G->b, 0.0);
        if (gr_wants(G, n->inputs[0]))
            share[0] = fe_b_where(&G->b, pos, g, fe_b_op(&G->b, "Mul", g, b));
        if (gr_wants(G, n->inputs[1]))
            share[1] = fe_b_where(&G->b, pos, zero, fe_b_op(&G->b, "Mul", g, a));
    } else if (!strcmp(op, "HardSwish")) {
        /* 0 below -3, a / 3 + 1/2 from -3 to below 3, then 1 (PyTorch's ends) */
        uint32_t mid = fe_b_op(&G->b, "Add", fe_b_op(&G->b, "Div", a, fe_b_scalar(&G->b, 3.0)),
                               fe_b_scalar(&G->b, 0.5));
        share[0] = fe_b_where(&G->b, fe_b_op(&G->b, "Less", a, fe_b_scalar(&G->b, -3.0)),
                              fe_b_scalar(&G->b, 0.0),
                              fe_b_where(&G->b, fe_b_op(&G->b, "Less", a, fe_b_scalar(&G->b, 3.0)),
                                         fe_b_op(&G->b, "Mul", g, mid), g));
    } else if (!strcmp(op, "Selu") || !strcmp(op, "Celu")) {
        /* Selu: gamma above 0, y + alpha gamma below; Celu: 1, e^(a / alpha) */
        bool selu = op[0] == 'S';
        float alpha, gamma = 1.0f;
        if ((G->b.st = fe_attr_float(G->b.x.c, n, "alpha", selu ? 1.67326319f : 1.0f, &alpha)) ||
            (selu && (G->b.st = fe_attr_float(G->b.x.c, n, "gamma", 1.05070102f, &gamma))))
            return true;
        uint32_t below =
            selu ? fe_b_op(&G->b, "Add", y, fe_b_scalar(&G->b, (double)alpha * gamma))
                 : fe_b_op(&G->b, "Exp", fe_b_op(&G->b, "Div", a, fe_b_scalar(&G->b, alpha)),
                           FE_NONE);
        share[0] = fe_b_op(&G->b, "Mul", g,
                           fe_b_where(&G->b, fe_b_op(&G->b, "Greater", a, fe_b_scalar(&G->b, 0.0)),
                                      fe_b_scalar(&G->b, gamma), below));
    } else if (!strcmp(op, "Mish")) {
        /* tanh(sp) + a (1 - tanh(sp)^2) sigmoid(a), sp = softplus(a) */
        uint32_t t = fe_b_op(&G->b, "Tanh", fe_b_op(&G->b, "Softplus", a, FE_NONE), FE_NONE);
        uint32_t d = fe_b_op(
            &G->b, "Add", t,
            fe_b_op(&G->b, "Mul", fe_b_op(&G->b, "Mul", a, fe_b_op(&G->b, "Sigmoid", a, FE_NONE)),
                    fe_b_op(&G->b, "Sub", fe_b_scalar(&G->b, 1.0), fe_b_op(&G->b, "Mul", t, t))));
        share[0] = fe_b_op(&G->b, "Mul", g, d);
    } else if (!strcmp(op, "ThresholdedRelu")) {
        float alpha;
        if ((G->b.st = fe_attr_float(G->b.x.c, n, "alpha", 1.0f, &alpha))) return true;
        share[0] = fe_b_where(&G->b, fe_b_op(&G->b, "Greater", a, fe_b_scalar(&G->b, alpha)), g,
                              fe_b_scalar(&G->b, 0.0));
    } else if (!strcmp(op, "Tan")) {
        share[0] =
            fe_b_op(&G->b, "Mul", g,
                    fe_b_op(&G->b, "Add", fe_b_scalar(&G->b, 1.0), fe_b_op(&G->b, "Mul", y, y)));
    } else if (!strcmp(op, "Sinh") || !strcmp(op, "Cosh")) {
        share[0] =
            fe_b_op(&G->b, "Mul", g, fe_b_op(&G->b, op[0] == 'S' ? "Cosh" : "Sinh", a, FE_NONE));
    } else if (!strcmp(op, "Atan") || !strcmp(op, "Atanh")) {
        /* 1 / (1 + a^2), 1 / (1 - a^2) */
        uint32_t a2 = fe_b_op(&G->b, "Mul", a, a);
        share[0] = fe_b_op(&G->b, "Div", g,
                           fe_b_op(&G->b, op[4] ? "Sub" : "Add", fe_b_scalar(&G->b, 1.0), a2));
    } else if (!strcmp(op, "Asin") || !strcmp(op, "Acos") || !strcmp(op, "Asinh") ||
               !strcmp(op, "Acosh")) {
        /* 1 / sqrt(1 - a^2) (Acos: negated), 1 / sqrt(a^2 + 1), 1 / sqrt(a^2 - 1) */
        uint32_t a2 = fe_b_op(&G->b, "Mul", a, a);
        uint32_t r = op[4] == 'h'
                         ? fe_b_op(&G->b, "Add", a2, fe_b_scalar(&G->b, op[2] == 'i' ? 1.0 : -1.0))
                         : fe_b_op(&G->b, "Sub", fe_b_scalar(&G->b, 1.0), a2);
        uint32_t d = fe_b_op(&G->b, "Div", g, fe_b_op(&G->b, "Sqrt", r, FE_NONE));
        share[0] = !strcmp(op, "Acos") ? fe_b_op(&G->b, "Neg", d, FE_NONE) : d;
    } else if (!strcmp(op, "Floor") || !strcmp(op, "Ceil") || !strcmp(op, "Round") ||
               !strcmp(op, "Sign")) {
        /* Flat almost everywhere: no gradient. */
    } else {
        return false;
    }
    return true;
}

/* Split: the outputs' gradients (zeros where one has none) put back
 * together along the axis. */
static void gr_rule_split(gr *G, const fe_node *n) {
    int64_t axis;
    if ((G->b.st = fe_attr_int(G->b.x.c, n, "axis", 0, &axis))) return;
    int32_t rank = gr_type(G, n->inputs[0])->rank;
    if (axis < 0) axis += rank;
    G->b.elem = gr_type(G, n->inputs[0])->elem;
    if (n->output_count > GR_MAX_SPLIT) {
        G->b.st = fe_fail(G->b.x.c, n, LM_ERR_UNSUPPORTED,
                          "the gradient of a Split into more than %d parts is not supported",
                          GR_MAX_SPLIT);
        return;
    }
    uint32_t parts[GR_MAX_SPLIT];
    for (uint32_t j = 0; j < n->output_count && gr_ok(G); j++) {
        uint32_t o = n->outputs[j];
        if (o == FE_NONE) {
            G->b.st = fe_fail(G->b.x.c, n, LM_ERR_UNSUPPORTED,
                              "the gradient of a Split with an omitted output is not supported");
            return;
        }
        fe_type t = *gr_type(G, o);
        parts[j] = G->grad[o] != FE_NONE ? G->grad[o]
                                         : fe_b_const(&G->b, t.elem, (uint32_t)t.rank, t.dims, 0.0);
    }
    fe_node *cat = NULL;
    uint32_t v = fe_b_node(&G->b, "Concat", 13, parts, n->output_count, &cat);
    if (cat) G->b.st = fe_x_int_attr(&G->b.x, cat, "axis", false, axis);
    gr_accumulate(G, n->inputs[0], v);
}

/* Concat: each wanted input's slice of g along the axis. */
static void gr_rule_concat(gr *G, const fe_node *n, uint32_t g) {
    int64_t axis;
    if ((G->b.st = fe_attr_int(G->b.x.c, n, "axis", 0, &axis))) return;
    int32_t rank = gr_type(G, n->outputs[0])->rank;
    if (axis < 0) axis += rank;
    int64_t at = 0;
    for (uint32_t i = 0; i < n->input_count && gr_ok(G); i++) {
        int64_t len = gr_type(G, n->inputs[i])->dims[axis];
        if (gr_wants(G, n->inputs[i])) {
            int64_t end = at + len;
            uint32_t in[4] = {g, fe_b_ints(&G->b, &at, 1), fe_b_ints(&G->b, &end, 1),
                              fe_b_ints(&G->b, &axis, 1)};
            gr_accumulate(G, n->inputs[i], fe_b_node(&G->b, "Slice", 13, in, 4, NULL));
        }
        at += len;
    }
}

/* What kernel tap k (row-major over the kernel's dims) of a window
 * geometry reads of padded image v (type *tp): from the tap's offset, with
 * the strides, `out[i]` positions along spatial dim i. */
static uint32_t gr_tap(gr *G, uint32_t v, const fe_type *tp, const fe_geom *geo, int64_t k,
                       const int64_t *out) {
    int64_t from[FE_MAX_RANK] = {0}, to[FE_MAX_RANK], step[FE_MAX_RANK];
    for (int32_t d = 0; d < tp->rank; d++) {
        to[d] = tp->dims[d];
        step[d] = 1;
    }
    for (int32_t i = geo->sp - 1; i >= 0; i--) {
        int32_t d = 2 + i;
        from[d] = k % geo->kernel[i] * geo->dil[i];
        k /= geo->kernel[i];
        step[d] = geo->stride[i];
        to[d] = from[d] + (out[i] - 1) * geo->stride[i] + 1;
    }
    return gr_slice(G, v, tp, from, to, step);
}

/* A convolution seen from its weight: `big` (type *tb) is the side the
 * kernel slides over, padded, and `small` (type *ts) the side with one
 * element per kernel position: a Conv's input and output gradient, a
 * ConvTranspose's output gradient and input (it is the adjoint of the Conv
 * with its weight). The weight [small's channels, big's / group, kernel]. */
typedef struct gr_conv_view {
    uint32_t big, small;
    fe_type tb, ts, tw;
    const fe_geom *geo;
    int64_t group;
} gr_conv_view;

/* The weight's gradient with groups, one kernel tap at a time: the tap's
 * elements of big (sliced from the tap's offset with the strides) against
 * small, per group a product over the batch and the positions:
 * [small / G, N * P] x [N * P, big / G]. The taps are then put side by
 * side. */
static uint32_t gr_grouped_conv_weight(gr *G, const fe_node *n, const gr_conv_view *v) {
    const fe_geom *geo = v->geo;
    int32_t sp = geo->sp, rank = v->tb.rank;
    int64_t group = v->group, rows = v->tw.dims[0], per = v->tw.dims[1], rpg = rows / group;
    int64_t taps = 1, positions = 1, n_ = v->tb.dims[0];
    fe_type tp = v->tb;
    int64_t pb[FE_MAX_RANK] = {0}, pe[FE_MAX_RANK] = {0};
    for (int32_t i = 0; i < sp; i++) {
        pb[2 + i] = geo->pad_b[i];
        pe[2 + i] = geo->pad_e[i];
        tp.dims[2 + i] += geo->pad_b[i] + geo->pad_e[i];
        taps *= geo->kernel[i];
        positions *= v->ts.dims[2 + i];
    }
    if (taps > GR_MAX_TAPS) {
        G->b.st = fe_fail(G->b.x.c, n, LM_ERR_UNSUPPORTED,
                          "Gradient: a grouped %s's weight gradient takes a product per kernel "
                          "tap: %lld taps (at most %d)",
                          n->op_type, (long long)taps, GR_MAX_TAPS);
        return FE_NONE;
    }
    uint32_t *cols = malloc((size_t)taps * sizeof *cols);
    if (!cols) {
        G->b.st = fe_x_oom();
        return FE_NONE;
    }
    /* small as [G, small / G, N * P]. */
    fe_type s4 = {.elem = v->ts.elem, .rank = 4, .dims = {n_, group, rpg, positions}};
    fe_type sm = {.elem = v->ts.elem, .rank = 3, .dims = {group, rpg, n_ * positions}};
    uint32_t sg = gr_reshape(
        G, gr_transpose(G, gr_reshape(G, v->small, &s4), (const int64_t[]){1, 2, 0, 3}, 4), &sm);
    uint32_t bp = gr_pad(G, v->big, rank, pb, pe, 0.0);
    fe_type b4 = {.elem = v->tb.elem, .rank = 4, .dims = {n_, group, per, positions}};
    fe_type bm = {.elem = v->tb.elem, .rank = 3, .dims = {group, n_ * positions, per}};
    fe_type col = {.elem = v->tw.elem, .rank = 3, .dims = {rows, per, 1}};
    for (int64_t k = 0; k < taps && gr_ok(G); k++) {
        uint32_t bt = gr_reshape(G, gr_tap(G, bp, &tp, geo, k, v->ts.dims + 2), &b4);
        bt = gr_reshape(G, gr_transpose(G, bt, (const int64_t[]){1, 0, 3, 2}, 4), &bm);
        cols[k] = gr_reshape(G, fe_b_op(&G->b, "MatMul", sg, bt), &col);
    }
    fe_node *cat = NULL;
    uint32_t w = taps > 1 ? fe_b_node(&G->b, "Concat", 13, cols, (uint32_t)taps, &cat) : cols[0];
    if (cat) G->b.st = fe_x_int_attr(&G->b.x, cat, "axis", false, 2);
    free(cols);
    return gr_reshape(G, w, &v->tw);
}

/* The weight's gradient with one group: a convolution of big and small
 * with the batch as channels, stride and dilation exchanged, cut to the
 * kernel. */
static uint32_t gr_conv_weight(gr *G, const gr_conv_view *v, const int64_t *pads) {
    int32_t sp = v->geo->sp;
    fe_node *t = NULL;
    uint32_t r = fe_b_node(&G->b, "Conv", 11,
                           (const uint32_t[]){gr_swap_first(G, v->big, v->tb.rank),
                                              gr_swap_first(G, v->small, v->ts.rank)},
                           2, &t);
    fe_b_ints_attr(&G->b, t, "strides", true, v->geo->dil, sp);
    fe_b_ints_attr(&G->b, t, "dilations", true, v->geo->stride, sp);
    fe_b_ints_attr(&G->b, t, "pads", true, pads, 2 * sp);
    int64_t zeros[3] = {0, 0, 0}, ends[3], axes[3];
    for (int32_t i = 0; i < sp; i++) {
        ends[i] = v->tw.dims[2 + i];
        axes[i] = 2 + i;
    }
    uint32_t in[4] = {r, fe_b_ints(&G->b, zeros, (uint32_t)sp),
                      fe_b_ints(&G->b, ends, (uint32_t)sp), fe_b_ints(&G->b, axes, (uint32_t)sp)};
    return gr_swap_first(G, fe_b_node(&G->b, "Slice", 13, in, 4, NULL), v->tw.rank);
}

/* The dims of rank `rank` but `keep`, as a list of axes; their element
 * count in *out_m. */
static uint32_t gr_axes_but(const fe_type *t, int32_t keep, int64_t *axes, double *out_m) {
    uint32_t k = 0;
    *out_m = 1;
    for (int32_t d = 0; d < t->rank; d++)
        if (d != keep) {
            axes[k++] = d;
            *out_m *= (double)t->dims[d];
        }
    return k;
}

/* v summed over `axes` into the shape of the per-channel parameter p. */
static void gr_to_param(gr *G, uint32_t p, uint32_t v, const int64_t *axes, uint32_t count) {
    if (gr_wants(G, p))
        gr_accumulate(G, p, gr_reshape(G, fe_b_sum(&G->b, v, axes, count), gr_type(G, p)));
}

/* Conv and ConvTranspose. A Conv's input gradient is the transposed
 * convolution of g with the same weights (its output padding giving back
 * the input's size), a ConvTranspose's the convolution of g with them; the
 * weight's is worked out from the weight's view (gr_conv_view); the bias's
 * is the sum of g over all but the channels. */
static void gr_rule_conv(gr *G, const fe_node *n, uint32_t g) {
    fe_ctx *c = G->b.x.c;
    bool transpose = !strcmp(n->op_type, "ConvTranspose");
    fe_type tx = *gr_type(G, n->inputs[0]), tw = *gr_type(G, n->inputs[1]),
            ty = *gr_type(G, n->outputs[0]);
    fe_geom geo;
    int64_t group, pads[6], outpad[3];
    if ((G->b.st = fe_geom_read(c, n, &tx, tw.dims + 2, &geo)) ||
        (G->b.st = fe_attr_int(c, n, "group", 1, &group)))
        return;
    int32_t sp = geo.sp;
    int64_t *stride = geo.stride, *dil = geo.dil;
    for (int32_t i = 0; i < sp; i++) {
        int64_t dk = (geo.kernel[i] - 1) * dil[i] + 1;
        pads[i] = geo.pad_b[i];
        pads[sp + i] = geo.pad_e[i];
        outpad[i] = geo.in[i] - (stride[i] * (geo.out[i] - 1) + dk - pads[i] - pads[sp + i]);
    }
    uint32_t x = G->map[n->inputs[0]], w = G->map[n->inputs[1]];
    if (gr_wants(G, n->inputs[0])) {
        fe_node *t = NULL;
        uint32_t dx = fe_b_node(&G->b, transpose ? "Conv" : "ConvTranspose", 11,
                                (const uint32_t[]){g, w}, 2, &t);
        fe_b_ints_attr(&G->b, t, "strides", true, stride, sp);
        fe_b_ints_attr(&G->b, t, "dilations", true, dil, sp);
        fe_b_ints_attr(&G->b, t, "pads", true, pads, 2 * sp);
        if (!transpose) fe_b_ints_attr(&G->b, t, "output_padding", true, outpad, sp);
        fe_b_ints_attr(&G->b, t, "group", false, &group, 1);
        if (transpose) {
            /* An output padding of a stride or more gives the convolution
             * more positions than x has. */
            int64_t from[FE_MAX_RANK] = {0}, step[FE_MAX_RANK];
            for (int32_t d = 0; d < tx.rank; d++)
                step[d] = 1;
            fe_type conv = tx;
            for (int32_t i = 0; i < sp; i++)
                conv.dims[2 + i] =
                    (ty.dims[2 + i] + pads[i] + pads[sp + i] - (geo.kernel[i] - 1) * dil[i] - 1) /
                        stride[i] +
                    1;
            dx = gr_slice(G, dx, &conv, from, tx.dims, step);
        }
        gr_accumulate(G, n->inputs[0], dx);
    }
    if (gr_wants(G, n->inputs[1])) {
        gr_conv_view v = {.big = transpose ? g : x,
                          .small = transpose ? x : g,
                          .tb = transpose ? ty : tx,
                          .ts = transpose ? tx : ty,
                          .tw = tw,
                          .geo = &geo,
                          .group = group};
        gr_accumulate(G, n->inputs[1],
                      group != 1 ? gr_grouped_conv_weight(G, n, &v) : gr_conv_weight(G, &v, pads));
    }
    if (fe_has_in(n, 2)) {
        int64_t axes[FE_MAX_RANK];
        double unused;
        gr_to_param(G, n->inputs[2], g, axes, gr_axes_but(&ty, 1, axes, &unused));
    }
}

/* MaxPool and AveragePool: each kernel tap's share of g put back where the
 * tap read. A tap reads x padded, sliced from the tap's offset with the
 * strides. MaxPool's share goes to the first tap in row-major order that
 * holds the window's maximum (PyTorch's pick among equal elements);
 * AveragePool's is g over the window's divisor, the same for every tap.
 * The shares go back one spatial dim at a time, last first: the taps that
 * differ only in that dim are put side by side and taken through one
 * matrix to x's positions (padding dropped). */
static void gr_rule_pool(gr *G, const fe_node *n, uint32_t g) {
    fe_ctx *c = G->b.x.c;
    bool is_max = !strcmp(n->op_type, "MaxPool");
    fe_type tx = *gr_type(G, n->inputs[0]), ty = *gr_type(G, n->outputs[0]);
    fe_geom geo;
    int64_t cip = 0;
    if ((G->b.st = fe_geom_read(c, n, &tx, NULL, &geo)) ||
        (!is_max && (G->b.st = fe_attr_int(c, n, "count_include_pad", 0, &cip))))
        return;
    int32_t sp = geo.sp, rank = tx.rank;
    int64_t taps = 1;
    for (int32_t i = 0; i < sp; i++)
        taps *= geo.kernel[i];
    if (is_max && taps > GR_MAX_TAPS) {
        G->b.st = fe_fail(c, n, LM_ERR_UNSUPPORTED,
                          "Gradient: MaxPool's gradient takes each kernel tap apart: %lld taps (at "
                          "most %d)",
                          (long long)taps, GR_MAX_TAPS);
        return;
    }
    /* MaxPool keeps each tap's share apart; AveragePool's are one. */
    uint32_t count = is_max ? (uint32_t)taps : 1;
    uint32_t *parts = malloc(count * sizeof *parts);
    if (!parts) {
        G->b.st = fe_x_oom();
        return;
    }
    if (is_max) {
        /* x padded far enough for every window (ceil_mode's last may
         * reach past the padding). */
        fe_type tp = tx;
        int64_t pb[FE_MAX_RANK] = {0}, pe[FE_MAX_RANK] = {0};
        for (int32_t i = 0; i < sp; i++) {
            int32_t d = 2 + i;
            int64_t span = (geo.out[i] - 1) * geo.stride[i] + (geo.kernel[i] - 1) * geo.dil[i] + 1;
            int64_t have = tx.dims[d] + geo.pad_b[i] + geo.pad_e[i];
            pb[d] = geo.pad_b[i];
            pe[d] = geo.pad_e[i] + (span > have ? span - have : 0);
            tp.dims[d] = tx.dims[d] + pb[d] + pe[d];
        }
        uint32_t xp = gr_pad(G, G->map[n->inputs[0]], rank, pb, pe, -INFINITY);
        uint32_t y = G->map[n->outputs[0]], taken = FE_NONE;
        for (int64_t k = 0; k < taps && gr_ok(G); k++) {
            uint32_t eq = fe_b_op(&G->b, "Equal", gr_tap(G, xp, &tp, &geo, k, geo.out), y);
            uint32_t first = taken == FE_NONE
                                 ? eq
                                 : fe_b_op(&G->b, "And", eq, fe_b_op(&G->b, "Not", taken, FE_NONE));
            if (k + 1 < taps) taken = taken == FE_NONE ? eq : fe_b_op(&G->b, "Or", taken, eq);
            parts[k] = fe_b_where(&G->b, first, g, fe_b_scalar(&G->b, 0.0));
        }
    } else {
        /* The divisor of each window: its elements inside the padded input
         * (count_include_pad) or inside the input, as the op divides. */
        fe_tensor *t;
        uint32_t div;
        if ((G->b.st = fe_const_new(c, ty.elem, (uint32_t)sp, ty.dims + 2, &t))) {
            free(parts);
            return;
        }
        for (uint64_t j = 0; j < t->count; j++) {
            uint64_t rem = j;
            double size = 1;
            for (int32_t i = sp - 1; i >= 0; i--) {
                int64_t o = (int64_t)(rem % (uint64_t)geo.out[i]);
                rem /= (uint64_t)geo.out[i];
                int64_t lo = o * geo.stride[i] - geo.pad_b[i], hi = lo + geo.kernel[i];
                int64_t end = tx.dims[2 + i] + (cip ? geo.pad_e[i] : 0);
                int64_t from = cip ? lo : lo > 0 ? lo : 0, to = hi < end ? hi : end;
                size *= (double)(to > from ? to - from : 1);
            }
            fe_tensor_set_f64(t, j, size);
        }
        if (!(G->b.st = fe_x_const(&G->b.x, t, "divisor", &div)))
            parts[0] = fe_b_op(&G->b, "Div", g, div);
    }
    /* Dim by dim, last first: the taps of that dim (consecutive among the
     * parts, MaxPool) side by side, then through hits[t * out + o, pos]:
     * tap t of window o reads x's position pos. */
    fe_type cur = ty;
    for (int32_t i = sp - 1; i >= 0 && gr_ok(G); i--) {
        int32_t d = 2 + i;
        int64_t k = is_max ? geo.kernel[i] : 1, L = geo.out[i], in = tx.dims[d];
        if (!gr_room(G, k * L, in)) break;
        double *hits = calloc((size_t)(k * L * in), sizeof *hits);
        if (!hits) {
            G->b.st = fe_x_oom();
            break;
        }
        for (int64_t t = 0; t < geo.kernel[i]; t++)
            for (int64_t o = 0; o < L; o++) {
                int64_t pos = t * geo.dil[i] + o * geo.stride[i] - geo.pad_b[i];
                if (pos >= 0 && pos < in) hits[((is_max ? t : 0) * L + o) * in + pos]++;
            }
        uint32_t groups = count / (uint32_t)k;
        for (uint32_t gi = 0; gi < groups && gr_ok(G); gi++) {
            fe_type side = cur;
            side.dims[d] = k * L;
            uint32_t v = parts[gi * k];
            if (k > 1) {
                fe_node *cat = NULL;
                v = fe_b_node(&G->b, "Concat", 13, parts + gi * k, (uint32_t)k, &cat);
                if (cat) G->b.st = fe_x_int_attr(&G->b.x, cat, "axis", false, d);
            }
            parts[gi] = gr_along(G, v, &side, d, hits, in);
        }
        free(hits);
        cur.dims[d] = in;
        count = groups;
    }
    if (gr_ok(G)) gr_accumulate(G, n->inputs[0], parts[0]);
    free(parts);
}

/* A per-channel parameter [C] of an N x C x ... input of rank `rank`, as
 * [1, C, 1, ...] to broadcast over it. */
static uint32_t gr_channels(gr *G, uint32_t v, const fe_type *tx) {
    fe_type t = *tx;
    for (int32_t d = 0; d < t.rank; d++)
        t.dims[d] = d == 1 ? tx->dims[1] : 1;
    return gr_reshape(G, v, &t);
}

/* BatchNormalization: y = (x - mean) rs scale + B, rs = (var + eps)^-1/2.
 * With training_mode the mean and variance are the batch's own (and depend
 * on x); otherwise they are inputs. */
static void gr_rule_batchnorm(gr *G, const fe_node *n, uint32_t g) {
    fe_ctx *c = G->b.x.c;
    float eps;
    int64_t training;
    if ((G->b.st = fe_attr_float(c, n, "epsilon", 1e-5f, &eps)) ||
        (G->b.st = fe_attr_int(c, n, "training_mode", 0, &training)))
        return;
    fe_type tx = *gr_type(G, n->inputs[0]);
    int64_t axes[FE_MAX_RANK];
    double m;
    uint32_t count = gr_axes_but(&tx, 1, axes, &m);
    uint32_t x = G->map[n->inputs[0]], scale = gr_channels(G, G->map[n->inputs[1]], &tx);
    gr_to_param(G, n->inputs[2], g, axes, count);
    if (training) {
        uint32_t xhat, rs;
        gr_norm_stats(G, x, axes, count, m, eps, &xhat, &rs);
        gr_to_param(G, n->inputs[1], fe_b_op(&G->b, "Mul", g, xhat), axes, count);
        if (gr_wants(G, n->inputs[0]))
            gr_accumulate(
                G, n->inputs[0],
                gr_norm_backward(G, fe_b_op(&G->b, "Mul", g, scale), xhat, rs, axes, count, m));
        return;
    }
    uint32_t mean = gr_channels(G, G->map[n->inputs[3]], &tx);
    uint32_t var = gr_channels(G, G->map[n->inputs[4]], &tx);
    uint32_t rs = fe_b_op(
        &G->b, "Reciprocal",
        fe_b_op(&G->b, "Sqrt", fe_b_op(&G->b, "Add", var, fe_b_scalar(&G->b, eps)), FE_NONE),
        FE_NONE);
    uint32_t xc = fe_b_op(&G->b, "Sub", x, mean), srs = fe_b_op(&G->b, "Mul", scale, rs);
    if (gr_wants(G, n->inputs[0])) gr_accumulate(G, n->inputs[0], fe_b_op(&G->b, "Mul", g, srs));
    gr_to_param(G, n->inputs[1], fe_b_op(&G->b, "Mul", fe_b_op(&G->b, "Mul", g, xc), rs), axes,
                count);
    /* d/dmean = -g scale rs; d/dvar = -g (x - mean) scale rs^3 / 2 */
    gr_to_param(G, n->inputs[3], fe_b_op(&G->b, "Neg", fe_b_op(&G->b, "Mul", g, srs), FE_NONE),
                axes, count);
    if (gr_wants(G, n->inputs[4])) {
        uint32_t k = fe_b_op(&G->b, "Mul", srs, fe_b_op(&G->b, "Mul", rs, rs));
        gr_to_param(G, n->inputs[4],
                    fe_b_op(&G->b, "Mul", fe_b_op(&G->b, "Mul", g, xc),
                            fe_b_op(&G->b, "Mul", k, fe_b_scalar(&G->b, -0.5))),
                    axes, count);
    }
}

/* LayerNormalization (over the dims from axis on) and InstanceNormalization
 * (over each image's own spatial dims): the statistics are x's own. */
static void gr_rule_norm(gr *G, const fe_node *n, uint32_t g) {
    fe_ctx *c = G->b.x.c;
    bool layer = n->op_type[0] == 'L';
    float eps;
    int64_t axis = 2;
    if ((G->b.st = fe_attr_float(c, n, "epsilon", 1e-5f, &eps)) ||
        (layer && (G->b.st = fe_attr_int(c, n, "axis", -1, &axis))))
        return;
    fe_type tx = *gr_type(G, n->inputs[0]), ty = *gr_type(G, n->outputs[0]);
    if (axis < 0) axis += tx.rank;
    int64_t axes[FE_MAX_RANK];
    uint32_t count = 0;
    double m = 1;
    for (int32_t d = (int32_t)axis; d < tx.rank; d++) {
        axes[count++] = d;
        m *= (double)tx.dims[d];
    }
    uint32_t xhat, rs;
    gr_norm_stats(G, G->map[n->inputs[0]], axes, count, m, eps, &xhat, &rs);
    uint32_t scale = G->map[n->inputs[1]];
    if (!layer) scale = gr_channels(G, scale, &tx);
    /* LayerNormalization's Mean and InvStdDev outputs may be on the path
     * too; g, Y's gradient, may then be missing. */
    uint32_t gm = FE_NONE, gi = FE_NONE;
    if (layer && n->output_count > 1 && n->outputs[1] != FE_NONE) gm = G->grad[n->outputs[1]];
    if (layer && n->output_count > 2 && n->outputs[2] != FE_NONE) gi = G->grad[n->outputs[2]];
    uint32_t gx = g == FE_NONE ? FE_NONE : fe_b_op(&G->b, "Mul", g, xhat);
    for (uint32_t i = 1; i < 3 && g != FE_NONE; i++) {
        if (!fe_has_in(n, i) || !gr_wants(G, n->inputs[i])) continue;
        uint32_t v = i == 1 ? gx : g;
        if (layer) {
            gr_accumulate(G, n->inputs[i], gr_unbroadcast(G, v, &ty, gr_type(G, n->inputs[i])));
        } else {
            /* Over the batch and the spatial dims. */
            int64_t all[FE_MAX_RANK];
            double unused;
            uint32_t k = gr_axes_but(&tx, 1, all, &unused);
            gr_to_param(G, n->inputs[i], v, all, k);
        }
    }
    if (!gr_wants(G, n->inputs[0])) return;
    if (g != FE_NONE)
        gr_accumulate(
            G, n->inputs[0],
            gr_norm_backward(G, fe_b_op(&G->b, "Mul", g, scale), xhat, rs, axes, count, m));
    /* Mean is x's mean over the axes; InvStdDev is rs, whose derivative
     * is -rs^2 xhat / m. */
    uint32_t inv_m = fe_b_scalar(&G->b, 1.0 / m);
    if (gm != FE_NONE)
        gr_accumulate(G, n->inputs[0],
                      fe_b_op(&G->b, "Expand", fe_b_op(&G->b, "Mul", gm, inv_m),
                              fe_b_ints(&G->b, tx.dims, (uint32_t)tx.rank)));
    if (gi != FE_NONE)
        gr_accumulate(
            G, n->inputs[0],
            fe_b_op(&G->b, "Mul",
                    fe_b_op(&G->b, "Neg", fe_b_op(&G->b, "Mul", gi, fe_b_op(&G->b, "Mul", rs, rs)),
                            FE_NONE),
                    fe_b_op(&G->b, "Mul", xhat, inv_m)));
}

/* LpNormalization, y = x / |x|_p along the axis (p 1 or 2):
 * dx = (g - t sum(g y)) / |x|_p, t = sign(x) for p = 1 and y for p = 2. */
static void gr_rule_lpnorm(gr *G, const fe_node *n, uint32_t g) {
    fe_ctx *c = G->b.x.c;
    int64_t axis, p;
    int32_t ax;
    if ((G->b.st = fe_attr_int(c, n, "axis", -1, &axis)) ||
        (G->b.st = fe_attr_int(c, n, "p", 2, &p)) ||
        (G->b.st = fe_axis(c, n, axis, gr_type(G, n->inputs[0])->rank, &ax)))
        return;
    int64_t a = ax;
    uint32_t x = G->map[n->inputs[0]];
    uint32_t nrm = p == 1 ? fe_b_sum(&G->b, fe_b_op(&G->b, "Abs", x, FE_NONE), &a, 1)
                          : fe_b_op(&G->b, "Sqrt",
                                    fe_b_sum(&G->b, fe_b_op(&G->b, "Mul", x, x), &a, 1), FE_NONE);
    uint32_t y = fe_b_op(&G->b, "Div", x, nrm);
    uint32_t t = p == 1 ? fe_b_op(&G->b, "Sign", x, FE_NONE) : y;
    uint32_t dot = fe_b_sum(&G->b, fe_b_op(&G->b, "Mul", g, y), &a, 1);
    gr_accumulate(
        G, n->inputs[0],
        fe_b_op(&G->b, "Div", fe_b_op(&G->b, "Sub", g, fe_b_op(&G->b, "Mul", t, dot)), nrm));
}

/* MeanVarianceNormalization: x's own statistics over its axes (the
 * forward's epsilon, 1e-9), as LayerNormalization's without a scale. */
static void gr_rule_mvn(gr *G, const fe_node *n, uint32_t g) {
    uint32_t mask;
    if ((G->b.st = fe_mvn_axes(G->b.x.c, n, &mask))) return;
    const fe_type *tx = gr_type(G, n->inputs[0]);
    int64_t axes[FE_MAX_RANK];
    uint32_t count = 0;
    double m = 1;
    for (int32_t d = 0; d < tx->rank; d++)
        if (mask >> d & 1) {
            axes[count++] = d;
            m *= (double)tx->dims[d];
        }
    uint32_t xhat, rs;
    gr_norm_stats(G, G->map[n->inputs[0]], axes, count, m, 1e-9f, &xhat, &rs);
    gr_accumulate(G, n->inputs[0], gr_norm_backward(G, g, xhat, rs, axes, count, m));
}

/* LRN: y = x d^-beta, d = bias + alpha / size * S(x^2), S the sum over the
 * channel window [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)]: a
 * product with a constant C x C band along the channels (moved last), so
 * S's adjoint is the band's transpose, and
 * dx = g d^-beta - 2 alpha beta / size * x * S^T(g x d^(-beta - 1)). */
static void gr_rule_lrn(gr *G, const fe_node *n, uint32_t g) {
    float alpha, beta, bias;
    int64_t size;
    if ((G->b.st = fe_lrn_read(G->b.x.c, n, &alpha, &beta, &bias, &size))) return;
    fe_type tx = *gr_type(G, n->inputs[0]);
    int64_t C = tx.dims[1], lo = (size - 1) / 2, hi = size - 1 - lo;
    if (!gr_room(G, C, C)) return;
    uint32_t band[2];
    for (int t = 0; t < 2 && gr_ok(G); t++) {
        fe_tensor *m;
        if ((G->b.st = fe_const_new(G->b.x.c, G->b.elem, 2, (const int64_t[]){C, C}, &m))) return;
        /* band[0][c'][c]: c' in c's window; band[1] its transpose. */
        for (int64_t i = 0; i < C; i++)
            for (int64_t j = 0; j < C; j++) {
                int64_t from = t ? j : i, to = t ? i : j;
                fe_tensor_set_f64(m, (uint64_t)(i * C + j), from >= to - lo && from <= to + hi);
            }
        if ((G->b.st = fe_x_const(&G->b.x, m, "band", &band[t]))) return;
    }
    int64_t perm[FE_MAX_RANK], back[FE_MAX_RANK];
    for (int32_t d = 0; d < tx.rank; d++) {
        perm[d] = d == tx.rank - 1 ? 1 : d < 1 ? d : d + 1;
        back[d] = d == 1 ? tx.rank - 1 : d < 1 ? d : d - 1;
    }
    uint32_t x = G->map[n->inputs[0]];
    uint32_t s =
        gr_transpose(G,
                     fe_b_op(&G->b, "MatMul",
                             gr_transpose(G, fe_b_op(&G->b, "Mul", x, x), perm, tx.rank), band[0]),
                     back, tx.rank);
    uint32_t d =
        fe_b_op(&G->b, "Add", fe_b_op(&G->b, "Mul", s, fe_b_scalar(&G->b, alpha / (double)size)),
                fe_b_scalar(&G->b, bias));
    uint32_t dpow = fe_b_op(&G->b, "Pow", d, fe_b_scalar(&G->b, -beta));
    uint32_t u = fe_b_op(&G->b, "Div", fe_b_op(&G->b, "Mul", fe_b_op(&G->b, "Mul", g, x), dpow), d);
    uint32_t su = gr_transpose(
        G, fe_b_op(&G->b, "MatMul", gr_transpose(G, u, perm, tx.rank), band[1]), back, tx.rank);
    uint32_t k = fe_b_scalar(&G->b, 2.0 * alpha * beta / (double)size);
    gr_accumulate(G, n->inputs[0],
                  fe_b_op(&G->b, "Sub", fe_b_op(&G->b, "Mul", g, dpow),
                          fe_b_op(&G->b, "Mul", k, fe_b_op(&G->b, "Mul", x, su))));
}

/* Indices with the negative ones counted from the end of a dim of `dim`. */
static uint32_t gr_indices(gr *G, const fe_node *n, int64_t dim) {
    uint32_t idx = G->map[n->inputs[1]];
    fe_elem e = gr_type(G, n->inputs[1])->elem;
    uint32_t zero = fe_b_const(&G->b, e, 0, NULL, 0.0),
             size = fe_b_const(&G->b, e, 0, NULL, (double)dim);
    return fe_b_where(&G->b, fe_b_op(&G->b, "Less", idx, zero), fe_b_op(&G->b, "Add", idx, size),
                      idx);
}

/* Gather: g added into zeros at the rows the indices took (ScatterND with
 * add, so an index taken twice gets both), the axis moved to the front and
 * back. GatherElements: ScatterElements with add. */
static void gr_rule_gather(gr *G, const fe_node *n, uint32_t g) {
    fe_ctx *c = G->b.x.c;
    int64_t axis;
    if ((G->b.st = fe_attr_int(c, n, "axis", 0, &axis))) return;
    fe_type td = *gr_type(G, n->inputs[0]), ti = *gr_type(G, n->inputs[1]),
            ty = *gr_type(G, n->outputs[0]);
    if (axis < 0) axis += td.rank;
    uint32_t idx = gr_indices(G, n, td.dims[axis]);
    const fe_attr add = {.name = "reduction", .type = FE_ATTR_STRING, .s = "add", .s_len = 3};
    fe_node *s = NULL;
    uint32_t d;
    if (!strcmp(n->op_type, "GatherElements")) {
        uint32_t z = fe_b_const(&G->b, G->b.elem, (uint32_t)td.rank, td.dims, 0.0);
        d = fe_b_node(&G->b, "ScatterElements", 16, (const uint32_t[]){z, idx, g}, 3, &s);
        fe_b_ints_attr(&G->b, s, "axis", false, &axis, 1);
        fe_b_attr(&G->b, s, add);
    } else {
        int32_t q = ti.rank, r = td.rank;
        int64_t perm[FE_MAX_RANK], back[FE_MAX_RANK], zd[FE_MAX_RANK];
        int32_t k = 0;
        for (int32_t j = 0; j < q; j++)
            perm[k++] = axis + j;
        for (int32_t j = 0; j < ty.rank; j++)
            if (j < axis || j >= axis + q) perm[k++] = j;
        bool moved = false;
        for (int32_t j = 0; j < ty.rank; j++)
            moved |= perm[j] != j;
        uint32_t gt = moved ? gr_transpose(G, g, perm, ty.rank) : g;
        zd[0] = td.dims[axis];
        for (int32_t j = 0, at = 1; j < r; j++)
            if (j != axis) zd[at++] = td.dims[j];
        for (int32_t j = 0; j < r; j++)
            back[j] = j < axis ? j + 1 : j == axis ? 0 : j;
        uint32_t z = fe_b_const(&G->b, G->b.elem, (uint32_t)r, zd, 0.0), at = FE_NONE;
        if (gr_ok(G)) G->b.st = fe_x_unsqueeze(&G->b.x, idx, q, &at);
        d = fe_b_node(&G->b, "ScatterND", 16, (const uint32_t[]){z, at, gt}, 3, &s);
        fe_b_attr(&G->b, s, add); /* before another node moves s */
        if (axis) d = gr_transpose(G, d, back, r);
    }
    gr_accumulate(G, n->inputs[0], d);
}

/* Slice: g spread back to where the slice took it (reversed first along a
 * dim the slice walked down). */
static void gr_rule_slice(gr *G, const fe_node *n, uint32_t g) {
    fe_slice_plan p;
    if ((G->b.st = fe_slice_read(G->b.x.c, n, &p))) return;
    fe_type tx = *gr_type(G, n->inputs[0]), ty = *gr_type(G, n->outputs[0]);
    int64_t start[FE_MAX_RANK], step[FE_MAX_RANK];
    for (int32_t d = 0; d < ty.rank; d++) {
        if (ty.dims[d] == 0) return; /* nothing taken: no gradient */
        if (p.flip[d] && ty.dims[d] > 1) g = gr_reverse(G, g, &ty, d);
        start[d] = p.begin[d];
        step[d] = p.step[d];
    }
    gr_accumulate(G, n->inputs[0], gr_place(G, g, &ty, start, step, tx.dims));
}

/* v (type *t, updated) cut to [from, to) along dim d. */
static uint32_t gr_cut(gr *G, uint32_t v, fe_type *t, int32_t d, int64_t from, int64_t to) {
    int64_t b[FE_MAX_RANK] = {0}, e[FE_MAX_RANK], s[FE_MAX_RANK];
    for (int32_t i = 0; i < t->rank; i++) {
        e[i] = t->dims[i];
        s[i] = 1;
    }
    b[d] = from;
    e[d] = to;
    uint32_t r = gr_slice(G, v, t, b, e, s);
    t->dims[d] = to - from;
    return r;
}

/* v (type t) with zeros: `before` and `after` along dim d. */
static uint32_t gr_pad_dim(gr *G, uint32_t v, const fe_type *t, int32_t d, int64_t before,
                           int64_t after) {
    int64_t b[FE_MAX_RANK] = {0}, e[FE_MAX_RANK] = {0};
    b[d] = before;
    e[d] = after;
    return gr_pad(G, v, t->rank, b, e, 0.0);
}

/* Pad: the part of g over x, plus, outside constant mode, each padded
 * element's g added to the element of x it copies: the edge one (edge),
 * its mirror image (reflect) or the one a dim away (wrap). One dim at a
 * time: these pads are the same done dim by dim. */
static void gr_rule_pad(gr *G, const fe_node *n, uint32_t g) {
    uint32_t pads[2 * FE_MAX_RANK], crops[2 * FE_MAX_RANK];
    lmnn_pad_options o;
    if ((G->b.st = fe_pad_read(G->b.x.c, n, pads, crops, &o))) return;
    for (int32_t i = 0; i < 2 * gr_type(G, n->inputs[0])->rank; i++)
        if (crops[i]) {
            G->b.st = fe_fail(G->b.x.c, n, LM_ERR_UNSUPPORTED,
                              "Gradient: the gradient of a Pad with negative pads is not "
                              "supported");
            return;
        }
    if (fe_has_in(n, 2) && gr_wants(G, n->inputs[2])) {
        G->b.st = fe_fail(G->b.x.c, n, LM_ERR_UNSUPPORTED,
                          "Gradient: the gradient of Pad's constant_value is not supported");
        return;
    }
    fe_type tx = *gr_type(G, n->inputs[0]), cur = *gr_type(G, n->outputs[0]);
    for (int32_t d = 0; d < tx.rank && gr_ok(G); d++) {
        int64_t b = pads[2 * d], e = pads[2 * d + 1], dim = tx.dims[d];
        if (!b && !e) continue;
        /* (The op itself refuses these when it runs; the gradient's
         * placement would need negative pads before that.) */
        int64_t most = o.mode == LMNN_PAD_REFLECT    ? dim - 1
                       : o.mode == LMNN_PAD_CIRCULAR ? dim
                                                     : -1;
        if (most >= 0 && (b > most || e > most)) {
            G->b.st = fe_fail(G->b.x.c, n, LM_ERR_UNSUPPORTED,
                              "%s padding of (%lld, %lld) is wider than dim %d of size %lld allows "
                              "(at most %lld)",
                              o.mode == LMNN_PAD_REFLECT ? "reflect" : "wrap", (long long)b,
                              (long long)e, d, (long long)dim, (long long)most);
            return;
        }
        fe_type whole = cur, part;
        uint32_t sum = gr_cut(G, g, &cur, d, b, b + dim);
        for (int side = 0; side < 2 && o.mode != LMNN_PAD_CONSTANT; side++) {
            int64_t k = side ? e : b;
            if (!k) continue;
            part = whole;
            uint32_t v =
                side ? gr_cut(G, g, &part, d, b + dim, b + dim + e) : gr_cut(G, g, &part, d, 0, b);
            int64_t at; /* where the part's first element lands in x */
            if (o.mode == LMNN_PAD_REPLICATE) {
                v = fe_b_sum(&G->b, v, (const int64_t[]){d}, 1);
                part.dims[d] = k = 1;
                at = side ? dim - 1 : 0;
            } else if (o.mode == LMNN_PAD_REFLECT) {
                v = gr_reverse(G, v, &part, d);
                at = side ? dim - 1 - k : 1;
            } else {
                at = side ? 0 : dim - k;
            }
            sum = fe_b_op(&G->b, "Add", sum, gr_pad_dim(G, v, &part, d, at, dim - at - k));
        }
        g = sum;
    }
    gr_accumulate(G, n->inputs[0], g);
}

/* Tile: g's copies summed (g seen with a dim of repeats before each
 * repeated dim). */
static void gr_rule_tile(gr *G, const fe_node *n, uint32_t g) {
    const fe_tensor *k = fe_in_const(G->b.x.c, n, 1);
    fe_type tx = *gr_type(G, n->inputs[0]), split = tx;
    if (!k) {
        G->b.st = fe_fail(G->b.x.c, n, LM_ERR_UNSUPPORTED,
                          "Gradient: Tile's repeats are computed at run time");
        return;
    }
    int64_t axes[FE_MAX_RANK];
    uint32_t count = 0;
    split.rank = 0;
    for (int32_t d = 0; d < tx.rank; d++) {
        int64_t r = fe_tensor_get_i64(k, (uint64_t)d);
        if (r > 1) {
            if (split.rank + 2 > FE_MAX_RANK) {
                G->b.st =
                    fe_fail(G->b.x.c, n, LM_ERR_UNSUPPORTED,
                            "Gradient: Tile repeats more dims than rank %d takes", FE_MAX_RANK);
                return;
            }
            axes[count++] = split.rank;
            split.dims[split.rank++] = r;
        }
        split.dims[split.rank++] = tx.dims[d];
    }
    if (!count) {
        gr_accumulate(G, n->inputs[0], g);
        return;
    }
    gr_accumulate(G, n->inputs[0],
                  gr_reshape(G, fe_b_sum(&G->b, gr_reshape(G, g, &split), axes, count), &tx));
}

/* Max and Min: g to the inputs equal to y, split evenly among them (as
 * PyTorch's maximum and minimum share a tie). */
static void gr_rule_extremum(gr *G, const fe_node *n, uint32_t g) {
    const fe_type *ty = gr_type(G, n->outputs[0]);
    uint32_t y = G->map[n->outputs[0]], ties = FE_NONE;
    for (uint32_t i = 0; i < n->input_count; i++) {
        uint32_t eq = fe_b_cast(&G->b, fe_b_op(&G->b, "Equal", G->map[n->inputs[i]], y), G->b.elem);
        ties = ties == FE_NONE ? eq : fe_b_op(&G->b, "Add", ties, eq);
    }
    uint32_t share = n->input_count > 1 ? fe_b_op(&G->b, "Div", g, ties) : g;
    for (uint32_t i = 0; i < n->input_count; i++)
        if (gr_wants(G, n->inputs[i])) {
            uint32_t eq = fe_b_op(&G->b, "Equal", G->map[n->inputs[i]], y);
            gr_accumulate(G, n->inputs[i],
                          gr_unbroadcast(G, fe_b_where(&G->b, eq, share, fe_b_scalar(&G->b, 0.0)),
                                         ty, gr_type(G, n->inputs[i])));
        }
}

/* Resize (and Upsample): each resampled dim is a constant matrix (the
 * op's taps and weights), so g goes back through its transpose. */
static void gr_rule_resize(gr *G, const fe_node *n, uint32_t g) {
    fe_type tx = *gr_type(G, n->inputs[0]), cur = *gr_type(G, n->outputs[0]);
    for (uint32_t i = 1; i < n->input_count; i++)
        if (fe_has_in(n, i) && gr_wants(G, n->inputs[i])) {
            G->b.st = fe_fail(G->b.x.c, n, LM_ERR_UNSUPPORTED,
                              "Gradient: only the gradient of a Resize's X is supported (input %u "
                              "depends on xs)",
                              i);
            return;
        }
    for (int32_t d = 0; d < tx.rank && gr_ok(G); d++) {
        fe_tensor *m;
        if ((G->b.st = fe_resize_matrix(G->b.x.c, n, d, &m))) return;
        int64_t in = tx.dims[d], out = cur.dims[d];
        bool same = in == out;
        for (int64_t i = 0; same && i < in; i++)
            for (int64_t o = 0; same && o < out; o++)
                same = fe_tensor_get_f64(m, (uint64_t)(i * out + o)) == (i == o ? 1.0 : 0.0);
        if (same) continue;
        if (!gr_room(G, out, in)) return;
        double *w = malloc((size_t)(in * out) * sizeof *w);
        if (!w) {
            G->b.st = fe_x_oom();
            return;
        }
        for (int64_t i = 0; i < in; i++)
            for (int64_t o = 0; o < out; o++)
                w[o * in + i] = fe_tensor_get_f64(m, (uint64_t)(i * out + o));
        g = gr_along(G, g, &cur, d, w, in);
        free(w);
    }
    gr_accumulate(G, n->inputs[0], g);
}

/* DepthToSpace and SpaceToDepth move elements only: the op is x seen with
 * six dims, transposed and reshaped, so g goes back through the inverse
 * transpose. */
static void gr_rule_depth_space(gr *G, const fe_node *n, uint32_t g) {
    int64_t b;
    const char *mode = "DCR";
    bool to_space = !strcmp(n->op_type, "DepthToSpace");
    if ((G->b.st = fe_attr_int(G->b.x.c, n, "blocksize", 0, &b)) ||
        (to_space && (G->b.st = fe_attr_string(G->b.x.c, n, "mode", "DCR", &mode))))
        return;
    fe_type tx = *gr_type(G, n->inputs[0]);
    int64_t N = tx.dims[0], C = tx.dims[1], H = tx.dims[2], W = tx.dims[3];
    fe_type six = {.elem = tx.elem, .rank = 6};
    int64_t perm[6];
    if (!to_space) {
        memcpy(six.dims, (const int64_t[]){N, C, H / b, b, W / b, b}, sizeof perm);
        memcpy(perm, (const int64_t[]){0, 3, 5, 1, 2, 4}, sizeof perm);
    } else if (!strcmp(mode, "CRD")) {
        memcpy(six.dims, (const int64_t[]){N, C / (b * b), b, b, H, W}, sizeof perm);
        memcpy(perm, (const int64_t[]){0, 1, 4, 2, 5, 3}, sizeof perm);
    } else {
        memcpy(six.dims, (const int64_t[]){N, b, b, C / (b * b), H, W}, sizeof perm);
        memcpy(perm, (const int64_t[]){0, 3, 4, 1, 5, 2}, sizeof perm);
    }
    fe_type moved = six;
    int64_t inv[6];
    for (int32_t d = 0; d < 6; d++) {
        moved.dims[d] = six.dims[perm[d]];
        inv[perm[d]] = d;
    }
    gr_accumulate(G, n->inputs[0],
                  gr_reshape(G, gr_transpose(G, gr_reshape(G, g, &moved), inv, 6), &tx));
}

/* Einsum: an operand's gradient is the Einsum of g with the other operand
 * onto the operand's own subscripts. A label only that operand has (summed
 * within it) cannot be an output of that Einsum: it is left out, and the
 * result spread back over it. */
/* A constant of type t's shape, 1 where every dim labelled alike (labels
 * `own`, one per dim) has the same index: an Einsum operand's diagonal. */
static uint32_t gr_diagonal_mask(gr *G, const fe_type *t, const char *own) {
    uint64_t count = 1;
    for (int32_t d = 0; d < t->rank; d++)
        count *= (uint64_t)t->dims[d];
    if (!gr_room(G, (int64_t)count, 1)) return FE_NONE;
    fe_tensor *m;
    uint32_t v;
    if ((G->b.st = fe_const_new(G->b.x.c, G->b.elem, (uint32_t)t->rank, t->dims, &m)))
        return FE_NONE;
    for (uint64_t i = 0; i < count; i++) {
        int64_t idx[FE_MAX_RANK];
        uint64_t rest = i;
        for (int32_t d = t->rank; d-- > 0;) {
            idx[d] = (int64_t)(rest % (uint64_t)t->dims[d]);
            rest /= (uint64_t)t->dims[d];
        }
        bool on = true;
        for (int32_t d = 0; d < t->rank && on; d++) {
            const char *first = memchr(own, own[d], (size_t)d + 1);
            on = idx[first - own] == idx[d];
        }
        fe_tensor_set_f64(m, i, on);
    }
    if ((G->b.st = fe_x_const(&G->b.x, m, "diagonal", &v))) return FE_NONE;
    return v;
}

static void gr_rule_einsum(gr *G, const fe_node *n, uint32_t g) {
    fe_einsum e;
    if ((G->b.st = fe_einsum_read(G->b.x.c, n, &e))) return;
    /* Letters for the labels: a letter stays itself, an ellipsis dim's
     * digit takes a letter no term uses. */
    char letter[128] = {0};
    const char *terms[FE_EINSUM_MAX_OPERANDS + 1];
    for (uint32_t t = 0; t < e.count; t++)
        terms[t] = e.in[t];
    terms[e.count] = e.out;
    for (uint32_t t = 0; t <= e.count; t++)
        for (const char *q = terms[t]; *q; q++)
            if (*q >= 'A') letter[(int)*q] = *q;
    int free_ch = 'a';
    for (uint32_t t = 0; t <= e.count; t++)
        for (const char *q = terms[t]; *q; q++) {
            if (letter[(int)*q]) continue;
            while (free_ch <= 'z' && letter[free_ch])
                free_ch++;
            letter[(int)*q] = (char)free_ch;
            letter[free_ch] = (char)free_ch;
        }
    for (uint32_t k = 0; k < e.count && gr_ok(G); k++) {
        if (!gr_wants(G, n->inputs[k])) continue;
        /* The gradient of operand k is the Einsum of g and the other
         * operands, to k's distinct labels. */
        const char *own = e.in[k];
        char other[FE_EINSUM_MAX_OPERANDS * FE_MAX_RANK + 1] = "";
        uint32_t ins[FE_EINSUM_MAX_OPERANDS], nins = 0;
        ins[nins++] = g;
        for (uint32_t o = 0; o < e.count; o++)
            if (o != k) {
                strcat(other, e.in[o]);
                ins[nins++] = G->map[n->inputs[o]];
            }
        fe_type tk = *gr_type(G, n->inputs[k]);
        char keep[FE_MAX_RANK + 1] = "", eq[(FE_EINSUM_MAX_OPERANDS + 2) * (FE_MAX_RANK + 1) + 4];
        /* Per dim: its label appears only here; it repeats one before it
         * (a diagonal: the gradient is computed over the distinct labels,
         * then put on the diagonal). */
        bool lonely[FE_MAX_RANK] = {false}, repeat[FE_MAX_RANK] = {false}, diagonal = false;
        size_t kc = 0;
        for (int32_t d = 0; d < tk.rank; d++) {
            repeat[d] = memchr(own, own[d], (size_t)d) != NULL;
            diagonal |= repeat[d];
            /* (A dim of 1 another operand broadcasts: its gradient is
             * summed over the label, as a lonely one's.) */
            lonely[d] = (!strchr(e.out, own[d]) && !strchr(other, own[d])) ||
                        (tk.dims[d] == 1 && e.size[(int)own[d]] > 1);
            if (!lonely[d] && !repeat[d]) keep[kc++] = letter[(int)own[d]];
        }
        keep[kc] = 0;
        size_t at = 0;
        for (const char *q = e.out; *q; q++)
            eq[at++] = letter[(int)*q];
        for (uint32_t o = 0; o < e.count; o++) {
            if (o == k) continue;
            eq[at++] = ',';
            for (const char *q = e.in[o]; *q; q++)
                eq[at++] = letter[(int)*q];
        }
        snprintf(eq + at, sizeof eq - at, "->%s", keep);
        uint32_t v = g;
        /* (One operand whose gradient is g itself, a permutation aside, is
         * still an Einsum: only the identity is skipped.) */
        bool identity = e.count == 1 && at == kc && !strncmp(eq, keep, kc);
        if (!identity) {
            char *copy = fe_arena_alloc(&G->b.x.c->g->arena, strlen(eq) + 1);
            if (!copy) {
                G->b.st = fe_x_oom();
                return;
            }
            strcpy(copy, eq);
            fe_node *m = NULL;
            v = fe_b_node(&G->b, "Einsum", 12, ins, nins, &m);
            fe_b_attr(
                &G->b, m,
                (fe_attr){
                    .name = "equation", .type = FE_ATTR_STRING, .s = copy, .s_len = strlen(copy)});
        }
        bool spread = false;
        for (int32_t d = 0; d < tk.rank && gr_ok(G); d++)
            if (lonely[d] || repeat[d]) {
                G->b.st = fe_x_unsqueeze(&G->b.x, v, d, &v);
                spread = true;
            }
        if (diagonal)
            v = fe_b_op(&G->b, "Mul", v, gr_diagonal_mask(G, &tk, own));
        else if (spread)
            v = fe_b_op(&G->b, "Expand", v, fe_b_ints(&G->b, tk.dims, (uint32_t)tk.rank));
        gr_accumulate(G, n->inputs[k], v);
    }
}

/* TopK's values: g put back at the indices the op took (a TopK on the same
 * input gives them again), as ScatterElements with add. */
static void gr_rule_topk(gr *G, const fe_node *n, uint32_t g) {
    if (!gr_ok(G)) return;
    int64_t axis;
    if ((G->b.st = fe_attr_int(G->b.x.c, n, "axis", -1, &axis))) return;
    fe_type tx = *gr_type(G, n->inputs[0]);
    if (axis < 0) axis += tx.rank;
    uint32_t vals, idx;
    if ((G->b.st = fe_x_value(&G->b.x, "values", &vals)) ||
        (G->b.st = fe_x_value(&G->b.x, "indices", &idx)))
        return;
    fe_node *t = fe_x_node(&G->b.x, "TopK", n->opset, n->input_count, 2);
    if (!t) {
        G->b.st = fe_x_oom();
        return;
    }
    for (uint32_t i = 0; i < n->input_count; i++)
        t->inputs[i] = n->inputs[i] == FE_NONE ? FE_NONE : G->map[n->inputs[i]];
    t->outputs[0] = vals;
    t->outputs[1] = idx;
    t->attrs = n->attrs;
    t->attr_count = n->attr_count;
    fe_node *s = NULL;
    uint32_t z = fe_b_const(&G->b, G->b.elem, (uint32_t)tx.rank, tx.dims, 0.0);
    uint32_t d = fe_b_node(&G->b, "ScatterElements", 16, (const uint32_t[]){z, idx, g}, 3, &s);
    fe_b_ints_attr(&G->b, s, "axis", false, &axis, 1);
    fe_b_attr(&G->b, s,
              (fe_attr){.name = "reduction", .type = FE_ATTR_STRING, .s = "add", .s_len = 3});
    gr_accumulate(G, n->inputs[0], d);
}

/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: each position's
 * share of g, times its target's weight (0 where the target is
 * ignore_index; the mean divides by the weights' sum), goes to the target
 * class's score, negated (NLL), or to every class as its softmax less the
 * target's one-hot (SCE). */
/* The loss's class weights w: position p (target t_p, not ignored)
 * contributes -w[t_p] s_p, s_p its target's log-probability (SCE: of the
 * log-softmax; NLL: the input itself). With `share` the loss's gradient
 * per position (none) or over the reduction's denominator D (mean: the
 * weights of the positions counted), dw[c] sums -s_p share over the
 * positions of target c; a mean also divides by D, which depends on w, so
 * it loses L share for each of them (L the loss). */
static void gr_loss_weights(gr *G, const fe_node *n, uint32_t share, uint32_t onehot,
                            uint32_t ignored, bool mean, bool none) {
    const fe_type *tx = gr_type(G, n->inputs[0]);
    uint32_t x = G->map[n->inputs[0]], lp = x;
    if (n->op_type[0] == 'S') {
        fe_node *ls = NULL;
        lp = fe_b_node(&G->b, "LogSoftmax", 13, &x, 1, &ls);
        fe_b_ints_attr(&G->b, ls, "axis", false, (const int64_t[]){1}, 1);
    }
    const int64_t one = 1;
    uint32_t hit = onehot; /* [N, C, ...]: target c at a position counted */
    if (ignored != FE_NONE)
        hit = fe_b_op(
            &G->b, "Mul", hit,
            fe_b_unsqueeze(
                &G->b, fe_b_cast(&G->b, fe_b_op(&G->b, "Not", ignored, FE_NONE), G->b.elem), 1));
    uint32_t picked = fe_b_sum(&G->b, fe_b_op(&G->b, "Mul", lp, onehot), &one, 1);
    uint32_t coef = none ? fe_b_unsqueeze(&G->b, share, 1) : share;
    uint32_t term = fe_b_op(&G->b, "Mul", hit,
                            fe_b_op(&G->b, "Mul", fe_b_op(&G->b, "Neg", picked, FE_NONE), coef));
    if (mean)
        term = fe_b_op(
            &G->b, "Sub", term,
            fe_b_op(&G->b, "Mul", hit, fe_b_op(&G->b, "Mul", G->map[n->outputs[0]], share)));
    int64_t axes[FE_MAX_RANK];
    double unused;
    gr_to_param(G, n->inputs[2], term, axes, gr_axes_but(tx, 1, axes, &unused));
}

static void gr_rule_loss(gr *G, const fe_node *n, uint32_t g) {
    fe_ctx *c = G->b.x.c;
    bool sce = n->op_type[0] == 'S', has_ii = fe_node_attr(n, "ignore_index") != NULL;
    const char *red;
    int64_t ii;
    if ((G->b.st = fe_attr_string(c, n, "reduction", "mean", &red)) ||
        (G->b.st = fe_attr_int(c, n, "ignore_index", 0, &ii)))
        return;
    fe_type tx = *gr_type(G, n->inputs[0]), tt = *gr_type(G, n->inputs[1]);
    uint32_t t = G->map[n->inputs[1]], tu = FE_NONE;
    /* The classes as [1, C, 1, ...], against the targets as [N, 1, ...]. */
    fe_tensor *k;
    uint32_t classes = FE_NONE;
    int64_t kd[FE_MAX_RANK];
    for (int32_t d = 0; d < tx.rank; d++)
        kd[d] = d == 1 ? tx.dims[1] : 1;
    if ((G->b.st = fe_const_new(c, tt.elem, (uint32_t)tx.rank, kd, &k))) return;
    for (int64_t i = 0; i < tx.dims[1]; i++)
        fe_tensor_set_i64(k, (uint64_t)i, i);
    if ((G->b.st = fe_x_const(&G->b.x, k, "classes", &classes)) ||
        (G->b.st = fe_x_unsqueeze(&G->b.x, t, 1, &tu)))
        return;
    uint32_t onehot = fe_b_cast(&G->b, fe_b_op(&G->b, "Equal", tu, classes), G->b.elem);
    /* Each position's weight: its target's, 0 when ignored. */
    uint32_t per = FE_NONE, ignored = FE_NONE;
    if (has_ii) {
        ignored = fe_b_op(&G->b, "Equal", t, fe_b_const(&G->b, tt.elem, 0, NULL, (double)ii));
        per = fe_b_cast(&G->b, fe_b_op(&G->b, "Not", ignored, FE_NONE), G->b.elem);
    }
    if (fe_has_in(n, 2)) {
        uint32_t safe =
            has_ii ? fe_b_where(&G->b, ignored, fe_b_const(&G->b, tt.elem, 0, NULL, 0.0), t) : t;
        uint32_t wt = fe_b_op(&G->b, "Gather", G->map[n->inputs[2]], safe);
        per = per == FE_NONE ? wt : fe_b_op(&G->b, "Mul", per, wt);
    }
    uint32_t share = g;
    if (!strcmp(red, "mean")) {
        double count = 1;
        for (int32_t d = 0; d < tt.rank; d++)
            count *= (double)tt.dims[d];
        uint32_t denom =
            per == FE_NONE ? fe_b_scalar(&G->b, count) : fe_b_op(&G->b, "ReduceSum", per, FE_NONE);
        share = fe_b_op(&G->b, "Div", share, denom);
    }
    if (fe_has_in(n, 2) && gr_wants(G, n->inputs[2]))
        gr_loss_weights(G, n, share, onehot, ignored, !strcmp(red, "mean"), !strcmp(red, "none"));
    if (per != FE_NONE) share = fe_b_op(&G->b, "Mul", per, share);
    /* Per position ([N, 1, ...] against the classes), or one scalar. */
    uint32_t coef = share;
    if (gr_ok(G) && (per != FE_NONE || !strcmp(red, "none")))
        G->b.st = fe_x_unsqueeze(&G->b.x, share, 1, &coef);
    uint32_t base;
    if (sce) {
        fe_node *sm = NULL;
        base = fe_b_node(&G->b, "Softmax", 13, &G->map[n->inputs[0]], 1, &sm);
        fe_b_ints_attr(&G->b, sm, "axis", false, (const int64_t[]){1}, 1);
        base = fe_b_op(&G->b, "Sub", base, onehot);
    } else {
        base = fe_b_op(&G->b, "Neg", onehot, FE_NONE);
    }
    gr_accumulate(G, n->inputs[0], fe_b_op(&G->b, "Mul", base, coef));
}

static const char gr_supported[] =
    "Identity, Add, Sub, Mul, Div, Pow, Neg, Abs, Relu, LeakyRelu, PRelu, ThresholdedRelu, "
    "Sigmoid, Tanh, Exp, Log, Sqrt, Erf, Reciprocal, Softplus, Softsign, Elu, Selu, Celu, Mish, "
    "HardSigmoid, HardSwish, Sin, Cos, Tan, Sinh, Cosh, Asin, Acos, Atan, Asinh, Acosh, Atanh, "
    "Floor, Ceil, Round, Sign, Clip, Where, Sum, Mean, Max, Min, Expand, Cast, "
    "Dropout, CumSum, Trilu, MatMul, Gemm, Einsum, ReduceSum, ReduceMean, "
    "ReduceSumSquare, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceMax, ReduceMin, "
    "Softmax, LogSoftmax, NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss, Reshape, Flatten, "
    "Squeeze, Unsqueeze, Transpose, Concat, Split, Slice, Pad, Tile, DepthToSpace, SpaceToDepth, "
    "TopK, Gather, GatherElements, Resize, Upsample, Conv, ConvTranspose, MaxPool, AveragePool, "
    "GlobalAveragePool, GlobalMaxPool, BatchNormalization, InstanceNormalization, "
    "LayerNormalization, LRN, LpNormalization, MeanVarianceNormalization; RNN, GRU and LSTM run as "
    "their equations in a model with Gradient";

/* ---- the rules without a function of their own above ---- */

/* Sum and Mean: g to every operand (over the count for Mean). */
static void gr_rule_sum(gr *G, const fe_node *n, uint32_t g) {
    if (n->op_type[0] == 'M')
        g = fe_b_op(&G->b, "Div", g, fe_b_scalar(&G->b, (double)n->input_count));
    for (uint32_t i = 0; i < n->input_count; i++)
        if (gr_wants(G, n->inputs[i]))
            gr_accumulate(
                G, n->inputs[i],
                gr_unbroadcast(G, g, gr_type(G, n->outputs[0]), gr_type(G, n->inputs[i])));
}

/* Where: g where the condition picks the operand, 0 elsewhere. */
static void gr_rule_where(gr *G, const fe_node *n, uint32_t g) {
    uint32_t cond = G->map[n->inputs[0]], zero = fe_b_scalar(&G->b, 0.0);
    for (uint32_t i = 1; i < 3; i++)
        if (gr_wants(G, n->inputs[i]))
            gr_accumulate(
                G, n->inputs[i],
                gr_unbroadcast(G, fe_b_where(&G->b, cond, i == 1 ? g : zero, i == 1 ? zero : g),
                               gr_type(G, n->outputs[0]), gr_type(G, n->inputs[i])));
}

/* GlobalAveragePool: g spread evenly over each image. */
static void gr_rule_global_avg(gr *G, const fe_node *n, uint32_t g) {
    fe_type tx = *gr_type(G, n->inputs[0]);
    double size = 1;
    for (int32_t d = 2; d < tx.rank; d++)
        size *= (double)tx.dims[d];
    uint32_t shape = fe_b_ints(&G->b, tx.dims, (uint32_t)tx.rank);
    gr_accumulate(
        G, n->inputs[0],
        fe_b_op(&G->b, "Expand", fe_b_op(&G->b, "Div", g, fe_b_scalar(&G->b, size)), shape));
}

/* Reshape, Flatten, Squeeze, Unsqueeze: g in the input's shape. */
static void gr_rule_reshape(gr *G, const fe_node *n, uint32_t g) {
    gr_accumulate(G, n->inputs[0], gr_reshape(G, g, gr_type(G, n->inputs[0])));
}

/* Cast between float types: g cast back. */
static void gr_rule_cast(gr *G, const fe_node *n, uint32_t g) {
    gr_accumulate(G, n->inputs[0], fe_b_cast(&G->b, g, gr_type(G, n->inputs[0])->elem));
}

/* CumSum's adjoint sums the other way; Trilu keeps the same elements. */
static void gr_rule_cumsum_trilu(gr *G, const fe_node *n, uint32_t g) {
    bool cumsum = n->op_type[0] == 'C';
    fe_node *m = NULL;
    uint32_t in[2] = {g, fe_has_in(n, 1) ? G->map[n->inputs[1]] : FE_NONE};
    uint32_t v = fe_b_node(&G->b, n->op_type, n->opset, in, in[1] == FE_NONE ? 1 : 2, &m);
    int64_t reverse = 0;
    if (cumsum && (G->b.st = fe_attr_int(G->b.x.c, n, "reverse", 0, &reverse))) return;
    for (uint32_t i = 0; m && i < n->attr_count; i++)
        if (strcmp(n->attrs[i].name, "reverse") != 0) fe_b_attr(&G->b, m, n->attrs[i]);
    if (cumsum) fe_b_ints_attr(&G->b, m, "reverse", false, (const int64_t[]){!reverse}, 1);
    gr_accumulate(G, n->inputs[0], v);
}

/* The ops whose rule is a function (the element-wise ones are in
 * gr_rule_eltwise, Split's in gr_rule_split). */
typedef void (*gr_rule)(gr *G, const fe_node *n, uint32_t g);
static const struct {
    const char *op;
    gr_rule rule;
} gr_rules[] = {
    {"Sum", gr_rule_sum},
    {"Mean", gr_rule_sum},
    {"Where", gr_rule_where},
    {"Concat", gr_rule_concat},
    {"Conv", gr_rule_conv},
    {"LRN", gr_rule_lrn},
    {"LpNormalization", gr_rule_lpnorm},
    {"MeanVarianceNormalization", gr_rule_mvn},
    {"ConvTranspose", gr_rule_conv},
    {"GlobalAveragePool", gr_rule_global_avg},
    {"GlobalMaxPool", gr_rule_global_max},
    {"MaxPool", gr_rule_pool},
    {"AveragePool", gr_rule_pool},
    {"BatchNormalization", gr_rule_batchnorm},
    {"LayerNormalization", gr_rule_norm},
    {"InstanceNormalization", gr_rule_norm},
    {"Gather", gr_rule_gather},
    {"GatherElements", gr_rule_gather},
    {"Slice", gr_rule_slice},
    {"Pad", gr_rule_pad},
    {"Tile", gr_rule_tile},
    {"CumSum", gr_rule_cumsum_trilu},
    {"Trilu", gr_rule_cumsum_trilu},
    {"DepthToSpace", gr_rule_depth_space},
    {"SpaceToDepth", gr_rule_depth_space},
    {"Resize", gr_rule_resize},
    {"Upsample", gr_rule_resize},
    {"Max", gr_rule_extremum},
    {"Min", gr_rule_extremum},
    {"MatMul", gr_rule_matmul},
    {"Gemm", gr_rule_gemm},
    {"Einsum", gr_rule_einsum},
    {"NegativeLogLikelihoodLoss", gr_rule_loss},
    {"SoftmaxCrossEntropyLoss", gr_rule_loss},
    {"TopK", gr_rule_topk},
    {"ReduceSum", gr_rule_reduce},
    {"ReduceMean", gr_rule_reduce},
    {"ReduceSumSquare", gr_rule_reduce},
    {"ReduceL1", gr_rule_reduce},
    {"ReduceL2", gr_rule_reduce},
    {"ReduceLogSum", gr_rule_reduce},
    {"ReduceLogSumExp", gr_rule_reduce},
    {"ReduceMax", gr_rule_reduce},
    {"ReduceMin", gr_rule_reduce},
    {"Softmax", gr_rule_softmax},
    {"LogSoftmax", gr_rule_softmax},
    {"Reshape", gr_rule_reshape},
    {"Flatten", gr_rule_reshape},
    {"Squeeze", gr_rule_reshape},
    {"Unsqueeze", gr_rule_reshape},
    {"Transpose", gr_rule_transpose},
    {"Cast", gr_rule_cast},
};

/* Node n's operands' gradients from its output's gradient g. */
static void gr_backward(gr *G, const fe_node *n, uint32_t g) {
    uint32_t share[2];
    /* The rules' constants go with the node's output. */
    G->b.elem = gr_type(G, n->outputs[0])->elem;
    G->at = n;
    /* Only the default domain's ops have rules. */
    bool standard = !n->domain[0] || !strcmp(n->domain, "ai.onnx");
    if (standard && gr_rule_eltwise(G, n, g, share)) {
        const fe_type *ty = gr_type(G, n->outputs[0]);
        for (uint32_t i = 0; i < 2 && i < n->input_count; i++)
            if (share[i] != FE_NONE && gr_wants(G, n->inputs[i]))
                gr_accumulate(G, n->inputs[i],
                              gr_unbroadcast(G, share[i], ty, gr_type(G, n->inputs[i])));
        return;
    }
    for (size_t k = 0; standard && k < sizeof gr_rules / sizeof gr_rules[0]; k++)
        if (!strcmp(n->op_type, gr_rules[k].op)) {
            gr_rules[k].rule(G, n, g);
            return;
        }
    G->b.st = fe_fail(G->b.x.c, n, LM_ERR_UNSUPPORTED,
                      "Gradient: y depends on this node, whose gradient is not supported (ops "
                      "with a gradient: %s)",
                      gr_supported);
}

/* ---- the subgraph from xs and zs to y ---- */

/* Marks the nodes y depends on, up to the tensors named in xs and zs and
 * constants; a graph input named in neither is an error. */
static lm_status gr_mark(gr *G, const fe_node *grad_node, uint32_t y) {
    fe_ctx *c = G->b.x.c;
    fe_graph *g = c->g;
    uint32_t *stack = malloc((size_t)G->values * sizeof *stack);
    uint8_t *seen = calloc(G->values, 1);
    if (!stack || !seen) {
        free(stack);
        free(seen);
        return fe_x_oom();
    }
    uint32_t top = 0;
    lm_status st = LM_OK;
    stack[top++] = y;
    seen[y] = 1;
    while (top && !st) {
        uint32_t v = stack[--top];
        const fe_value *val = &g->values[v];
        if (G->role[v] != GR_OTHER || (val->konst && val->producer == FE_NONE)) continue;
        if (val->producer == FE_NONE) {
            st = fe_fail(c, grad_node, LM_ERR_INVALID_FILE,
                         "y ('%s') depends on '%s', which is in neither xs nor zs",
                         g->values[y].name, val->name);
            break;
        }
        G->on_path[val->producer] = 1;
        fe_node_push_operands(&g->nodes[val->producer], seen, stack, &top);
    }
    free(stack);
    free(seen);
    return st;
}

/* The forward ops on the path, cloned onto the given values where an
 * operand differs from the graph's (or the op comes after the node). */
static void gr_forward(gr *G, uint32_t grad_index) {
    fe_graph *g = G->b.x.c->g;
    for (uint32_t k = 0; k < grad_index && gr_ok(G); k++) {
        if (!G->on_path[k]) continue;
        const fe_node *n = &g->nodes[k];
        G->order[G->order_count++] = k;
        bool moved = false, dep = false;
        for (uint32_t i = 0; i < n->input_count; i++)
            if (n->inputs[i] != FE_NONE) {
                moved |= G->map[n->inputs[i]] != n->inputs[i];
                dep |= G->dep[n->inputs[i]] != 0;
            }
        for (uint32_t i = 0; i < n->output_count; i++)
            if (n->outputs[i] != FE_NONE && G->role[n->outputs[i]] == GR_OTHER)
                G->dep[n->outputs[i]] = dep;
        if (!moved) continue;
        if (n->implicit_count) {
            G->b.st = fe_fail(G->b.x.c, n, LM_ERR_UNSUPPORTED,
                              "Gradient at values other than xs's and zs's own: this node's "
                              "subgraph cannot be recomputed");
            return;
        }
        fe_node copy = *n; /* fe_x_node may move g's arrays */
        fe_node *m =
            fe_x_node(&G->b.x, copy.op_type, copy.opset, copy.input_count, copy.output_count);
        if (!m) {
            G->b.st = fe_x_oom();
            return;
        }
        m->domain = copy.domain;
        m->name = copy.name;
        m->attrs = copy.attrs;
        m->attr_count = copy.attr_count;
        for (uint32_t i = 0; i < copy.input_count; i++)
            m->inputs[i] = copy.inputs[i] == FE_NONE ? FE_NONE : G->map[copy.inputs[i]];
        for (uint32_t i = 0; i < copy.output_count && gr_ok(G); i++) {
            uint32_t o = copy.outputs[i];
            m->outputs[i] = FE_NONE;
            if (o == FE_NONE) continue;
            char name[160];
            snprintf(name, sizeof name, "at/%s", g->values[o].name);
            uint32_t nv;
            if ((G->b.st = fe_x_value(&G->b.x, name, &nv))) return;
            m = &G->b.x.nodes[G->b.x.count - 1];
            m->outputs[i] = nv;
            G->map[o] = nv;
        }
    }
}

/* A Dropout in training mode on the path passes the gradient where its
 * mask kept an element, so each such node without a mask output gets one:
 * the same draw as its output, computed alongside it. The per-value arrays
 * grow to take the new values. */
static lm_status gr_dropout_masks(gr *G, uint32_t grad_index) {
    fe_ctx *c = G->b.x.c;
    fe_graph *g = c->g;
    for (uint32_t k = 0; k < grad_index; k++) {
        fe_node *n = &g->nodes[k];
        if (!G->on_path[k] || strcmp(n->op_type, "Dropout") ||
            (n->output_count > 1 && n->outputs[1] != FE_NONE) || !fe_dropout_drops(c, n, NULL))
            continue;
        uint32_t mask, *outs = fe_arena_alloc(&g->arena, 2 * sizeof *outs);
        if (!outs) return fe_x_oom();
        lm_status st = fe_x_value(&G->b.x, "dropout_mask", &mask);
        if (st) return st;
        outs[0] = n->outputs[0];
        outs[1] = mask;
        n->outputs = outs;
        n->output_count = 2;
        g->values[mask].producer = k;
        g->values[mask].type = g->values[outs[0]].type;
        g->values[mask].type.elem = FE_BOOL;
    }
    uint32_t count = g->value_count;
    if (count == G->values) return LM_OK;
    uint32_t *map = realloc(G->map, (size_t)count * sizeof *map);
    if (map) G->map = map;
    uint32_t *grad = realloc(G->grad, (size_t)count * sizeof *grad);
    if (grad) G->grad = grad;
    uint8_t *role = realloc(G->role, count), *dep = role ? realloc(G->dep, count) : NULL;
    if (role) G->role = role;
    if (dep) G->dep = dep;
    if (!map || !grad || !role || !dep) return fe_x_oom();
    for (uint32_t v = G->values; v < count; v++) {
        G->map[v] = v;
        G->grad[v] = FE_NONE;
        G->role[v] = GR_OTHER;
        G->dep[v] = 0;
    }
    G->values = count;
    return LM_OK;
}

/* ---- the op ---- */

static lm_status gr_names(fe_ctx *c, const fe_node *n, const char *attr, bool required,
                          const char *const **out, size_t *out_count) {
    const fe_attr *a = fe_node_attr(n, attr);
    *out = NULL;
    *out_count = 0;
    if (!a) {
        if (required) return fe_fail(c, n, LM_ERR_INVALID_FILE, "attribute %s is missing", attr);
        return LM_OK;
    }
    if (a->type != FE_ATTR_STRINGS && !(a->type == FE_ATTR_STRING && !strcmp(attr, "y")))
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "attribute %s has the wrong type", attr);
    if (a->type == FE_ATTR_STRING) {
        *out = &a->s;
        *out_count = 1;
    } else {
        *out = (const char *const *)a->strings;
        *out_count = a->count;
    }
    return LM_OK;
}

lm_status fe_infer_gradient(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_attrs(c, n, (const char *const[]){"xs", "zs", "y", NULL});
    const char *const *xs = NULL, *const *zs = NULL, *const *ys = NULL;
    size_t nx = 0, nz = 0, ny = 0;
    if (!st) st = gr_names(c, n, "xs", true, &xs, &nx);
    if (!st) st = gr_names(c, n, "zs", false, &zs, &nz);
    if (!st) st = gr_names(c, n, "y", true, &ys, &ny);
    if (st) return st;
    if (!nx) return fe_fail(c, n, LM_ERR_INVALID_FILE, "xs names no tensor");
    if (n->input_count != nx + nz)
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "%u input%s for %zu tensor%s in xs and zs (one input each)", n->input_count,
                       n->input_count == 1 ? "" : "s", nx + nz, nx + nz == 1 ? "" : "s");
    if (n->output_count > nx)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "%u outputs for %zu tensor%s in xs",
                       n->output_count, nx, nx == 1 ? "" : "s");
    fe_graph *g = c->g;
    uint32_t y = fe_graph_find_value(g, ys[0]);
    if (y == FE_NONE)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "y names '%s', which is not in the graph", ys[0]);
    if (!fe_elem_is_float(g->values[y].type.elem))
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "y ('%s') must be a float tensor", ys[0]);

    gr G = {.b.elem = g->values[y].type.elem, .values = g->value_count};
    fe_x_begin(c, n, &G.b.x);
    G.map = malloc((size_t)G.values * sizeof *G.map);
    G.grad = malloc((size_t)G.values * sizeof *G.grad);
    G.role = calloc(G.values, 1);
    G.dep = calloc(G.values, 1);
    G.on_path = calloc(g->node_count, 1);
    G.order = malloc((size_t)g->node_count * sizeof *G.order);
    uint32_t *named = malloc((nx + nz) * sizeof *named);
    if (!G.map || !G.grad || !G.role || !G.dep || !G.on_path || !G.order || !named) st = fe_x_oom();
    for (uint32_t v = 0; !st && v < G.values; v++) {
        G.map[v] = v;
        G.grad[v] = FE_NONE;
    }
    /* The tensors named, each with the value its input gives. */
    for (uint32_t i = 0; !st && i < nx + nz; i++) {
        const char *name = i < nx ? xs[i] : zs[i - nx];
        uint32_t v = fe_graph_find_value(g, name);
        if (v == FE_NONE) {
            st = fe_fail(c, n, LM_ERR_INVALID_FILE, "%s names '%s', which is not in the graph",
                         i < nx ? "xs" : "zs", name);
            break;
        }
        if (G.role[v] != GR_OTHER) {
            st = fe_fail(c, n, LM_ERR_INVALID_FILE, "'%s' is named twice in xs and zs", name);
            break;
        }
        const fe_type *want = &g->values[v].type, *got = fe_in_type(c, n, i);
        char a[128], b[128];
        if (!fe_type_is_known(want) || want->elem != got->elem || want->rank != got->rank ||
            memcmp(want->dims, got->dims, (size_t)want->rank * sizeof *want->dims)) {
            st = fe_fail(c, n, LM_ERR_UNSUPPORTED,
                         "input %u is %s, but '%s' is %s: the gradient is taken at values of "
                         "the tensors' own types",
                         i, fe_type_format(got, a, sizeof a), name,
                         fe_type_format(want, b, sizeof b));
            break;
        }
        if (i < nx && !fe_elem_is_float(want->elem)) {
            st = fe_fail(c, n, LM_ERR_INVALID_FILE, "xs names '%s', which is not a float tensor",
                         name);
            break;
        }
        G.role[v] = i < nx ? GR_X : GR_Z;
        G.dep[v] = i < nx;
        G.map[v] = n->inputs[i];
        named[i] = v;
    }
    uint32_t grad_index = (uint32_t)(n - g->nodes);
    if (!st) st = gr_mark(&G, n, y);
    if (!st) st = gr_dropout_masks(&G, grad_index);
    if (!st) {
        gr_forward(&G, grad_index);
        /* Backward from ones shaped like y. */
        fe_type ty = g->values[y].type;
        G.grad[y] = fe_b_const(&G.b, G.b.elem, (uint32_t)ty.rank, ty.dims, 1.0);
        for (uint32_t i = G.order_count; i-- > 0 && gr_ok(&G);) {
            const fe_node *fn = &c->g->nodes[G.order[i]];
            /* The rules are for output 0, Split's for all; a gradient
             * reaching another op's later output (TopK's) has nowhere to
             * go. */
            bool split = !strcmp(fn->op_type, "Split"), reached = false;
            for (uint32_t j = 0; j < fn->output_count && gr_ok(&G); j++) {
                bool has = fn->outputs[j] != FE_NONE && G.grad[fn->outputs[j]] != FE_NONE;
                reached |= has;
                if (has && j && !split && strcmp(fn->op_type, "LayerNormalization"))
                    G.b.st =
                        fe_fail(c, fn, LM_ERR_UNSUPPORTED,
                                "Gradient: y depends on output %u of this node, whose gradient "
                                "is not supported",
                                j);
            }
            if (!gr_ok(&G) || !reached) continue;
            bool any = false;
            for (uint32_t j = 0; j < fn->input_count; j++)
                any |= gr_wants(&G, fn->inputs[j]);
            if (any && split)
                gr_rule_split(&G, fn);
            else if (any)
                gr_backward(&G, fn, G.grad[fn->outputs[0]]);
        }
        /* The outputs: the gradients, zeros for an x that y does not use. */
        for (uint32_t i = 0; i < G.b.x.node.output_count && gr_ok(&G); i++) {
            uint32_t o = G.b.x.node.outputs[i];
            if (o == FE_NONE) continue;
            uint32_t d = G.grad[named[i]];
            if (d == FE_NONE) {
                fe_type tx = c->g->values[named[i]].type;
                d = fe_b_const(&G.b, tx.elem, (uint32_t)tx.rank, tx.dims, 0.0);
            }
            if (gr_ok(&G)) G.b.st = fe_x_identity(&G.b.x, d, o);
        }
        st = G.b.st;
    }
    free(G.map);
    free(G.grad);
    free(G.role);
    free(G.dep);
    free(G.on_path);
    free(G.order);
    free(named);
    return fe_x_end(c, &G.b.x, st);
}
