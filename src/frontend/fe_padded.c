/* Reading padded values (lmfe_compile_options.pad_dynamic).
 *
 * A padded value holds its results first along one dim, then padding
 * (fe_pad_value's: NaN, -1 or false by type). Which entries along that dim
 * are results is a bool vector as long as the dim (fe_value.pad_valid), made
 * by the op that padded the value (fe_ops_select.c, fe_expand.c's scans
 * aside) and shared by every value made from it. Only ops that keep padding
 * apart may read a padded value, in one of four ways:
 *
 * - moving entries whole (Identity, Transpose; Squeeze, Unsqueeze and Split
 *   leaving the padded dim whole; Reshape and Flatten keeping it, or
 *   merging it with the dims after it, its record repeated; Expand of other
 *   dims; Slice counting from the front of it, its record of results sliced
 *   alike; Gather of padded data along another dim; Concat along another
 *   dim of values padded alike): the result is padded along wherever the op
 *   puts that dim, and its padding is the input's; Concat along the padded
 *   dim gathers the parts' results first, its result padded by its own
 *   record; an If of a run-time condition picks it, or an empty branch
 *   output as all padding;
 * - computing each result from entries at the same place along the padded
 *   dim (element-wise ops; reductions, ArgMax, ArgMin, Softmax-like ops,
 *   CumSum and TopK along other dims; MatMul and Gemm of padded rows; Gather
 *   and GatherND of padded indices; RoiAlign of padded regions, read as
 *   box 0 in the padding): the op runs as it is, and what it
 *   makes of padding (anything) stays there, the value dirty
 *   (fe_value.pad_dirty), until a graph output needs padding: a Where then
 *   puts the type's padding back (fe_padded_written). Every reader either
 *   computes in place, masks the padding out first, moves it whole (its
 *   result dirty alike), or gathers with it (out-of-range indices give
 *   zero on the device), so none needs it back before;
 * - working along the padded dim (Reduce*, ArgMax, ArgMin, Softmax,
 *   LogSoftmax, Hardmax, CumSum, TopK): the padding is first replaced by
 *   what cannot change the op's result (0 for a sum, 1 for a product, the
 *   lowest value for a max, ...), and a mean divides by the number of
 *   results;
 * - selecting (NonZero, Compress, NonMaxSuppression): what decides the
 *   selection has its padding replaced by what is never selected, and the
 *   op pads its own output (fe_ops_select.c); scattering (ScatterND,
 *   ScatterElements): padded indices are replaced by ones out of range,
 *   which write nothing, into data padded or not (padded: along the dim
 *   the indices pick, the result padded alike);
 * - sizing (Shape, Size): the padded size where the result decides shapes
 *   (a ConstantOfShape or Expand to it is padded alike: full_like), the
 *   run's count where it is data.
 *
 * Any other reader is an error naming it, the value and the padded dim. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/fe_ops.h"
#include "frontend/fe_passes.h"

void fe_mark_padded(fe_ctx *c, uint32_t v, int32_t dim, uint32_t valid) {
    if (v == FE_NONE) return;
    c->g->values[v].padded = (uint8_t)(dim + 1);
    c->g->values[v].pad_valid = valid + 1;
    c->g->values[v].pad_dirty = false;
}

lm_status fe_padding_of(fe_ctx *c, const fe_node *n, fe_elem e, const char *what, const char *whose,
                        double *out) {
    if (fe_pad_value(e, out)) return LM_OK;
    return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                   "%s padded, which needs the %s element type to be a float, a signed integer "
                   "or bool (given %s)",
                   what, whose, fe_elem_name(e));
}

/* Value v's padded dim, or -1. */
static int32_t padded_dim(const fe_ctx *c, uint32_t v) {
    return v == FE_NONE ? -1 : (int32_t)c->g->values[v].padded - 1;
}

/* The vector of which entries of padded value v are results. */
static uint32_t valid_of(const fe_ctx *c, uint32_t v) {
    return c->g->values[v].pad_valid - 1;
}

/* Marks every output of n padded along `dim`, as input i is (its padding
 * moved whole: dirty if input i's is). */
static void mark_outputs(fe_ctx *c, const fe_node *n, uint32_t i, int32_t dim) {
    uint32_t valid = valid_of(c, n->inputs[i]);
    bool dirty = c->g->values[n->inputs[i]].pad_dirty;
    for (uint32_t o = 0; o < n->output_count; o++) {
        fe_mark_padded(c, n->outputs[o], dim, valid);
        if (n->outputs[o] != FE_NONE) c->g->values[n->outputs[o]].pad_dirty = dirty;
    }
}

/* `valid` ([len]) shaped to broadcast over a rank-`rank` value padded along
 * `dim`. */
static uint32_t valid_along(fe_build *b, uint32_t valid, int64_t len, int32_t rank, int32_t dim) {
    int64_t shape[FE_MAX_RANK];
    for (int32_t a = 0; a < rank; a++)
        shape[a] = a == dim ? len : 1;
    return rank == 1 ? valid : fe_b_reshape(b, valid, shape, (uint32_t)rank);
}

/* The op's name in the lists below. */
static bool is_op(const fe_node *n, const char *const *names) {
    for (; *names; names++)
        if (!strcmp(n->op_type, *names)) return true;
    return false;
}

static bool is_eltwise(const fe_node *n) {
    for (size_t i = 0; i < fe_ops_eltwise_count; i++)
        if (!strcmp(fe_ops_eltwise[i].op_type, n->op_type))
            return strcmp(n->op_type, "Identity") != 0;
    return false;
}

/* Ops that make each entry along dim 0 of their result (an image of a
 * batch, a region's features) from input 0's entry there alone, their
 * other inputs weights or parameters: a padded batch goes through them
 * entry by entry (per_entry_read says when the attributes allow it). */
static bool per_entry(const fe_node *n) {
    static const char *const ops[] = {"Conv",
                                      "ConvTranspose",
                                      "MaxPool",
                                      "AveragePool",
                                      "LpPool",
                                      "GlobalAveragePool",
                                      "GlobalMaxPool",
                                      "GlobalLpPool",
                                      "BatchNormalization",
                                      "InstanceNormalization",
                                      "GroupNormalization",
                                      "LayerNormalization",
                                      "MeanVarianceNormalization",
                                      "LpNormalization",
                                      "LRN",
                                      "DepthToSpace",
                                      "SpaceToDepth",
                                      "Resize",
                                      "Upsample",
                                      "Pad",
                                      NULL};
    return is_op(n, ops);
}

/* Whether n computes its results from the entries at their place along a
 * padded input's padded dim (the second way above), so that its padded
 * outputs hold whatever it made of padding (dirty). */
static bool computes(fe_ctx *c, const fe_node *n) {
    static const char *const others[] = {"MatMul", "Gemm", "CumSum", "TopK", NULL};
    if (is_eltwise(n) || is_op(n, others)) return true;
    if (per_entry(n)) return n->input_count && padded_dim(c, n->inputs[0]) == 0;
    if (!strcmp(n->op_type, "Gather") || !strcmp(n->op_type, "GatherND"))
        return n->input_count > 1 && padded_dim(c, n->inputs[1]) >= 0;
    uint32_t mask;
    bool keep;
    lm_status st;
    bool is = fe_reduce_dims(c, n, &mask, &keep, &st);
    if (st) err_clear(); /* the node's own error, which its inference gave first */
    return is;
}

/* ---- moving entries ---- */

/* The int list of input i (a constant: else an error), or of attribute
 * `name` when the node has no such input; *out_count 0 when neither. At
 * most FE_MAX_RANK entries are kept. */
static lm_status ints_of(fe_ctx *c, const fe_node *n, uint32_t i, const char *name, int64_t *out,
                         uint32_t *out_count) {
    *out_count = 0;
    if (fe_has_in(n, i)) {
        const fe_tensor *t;
        lm_status st = fe_in_const_required(c, n, i, &t);
        for (uint64_t k = 0; !st && k < t->count && k < FE_MAX_RANK; k++)
            out[(*out_count)++] = fe_tensor_get_i64(t, k);
        return st;
    }
    const int64_t *v;
    size_t count;
    lm_status st = fe_attr_ints(c, n, name, &v, &count);
    for (size_t k = 0; !st && k < count && k < FE_MAX_RANK; k++)
        out[(*out_count)++] = v[k];
    return st;
}

/* Where padded dim d of a rank-r input goes through Squeeze, Unsqueeze,
 * Slice or Split (*out_dim), or an error when the op cuts into it in a way
 * that would not keep the results first. A Slice that cuts it keeps them
 * first when it counts from the front: its start, end and step there in
 * cut[] (cut[2] 0 when it keeps the dim whole). */
static lm_status reshaped_dim(fe_ctx *c, const fe_node *n, const fe_value *v, int32_t d,
                              int32_t *out_dim, int64_t cut[3]) {
    const fe_type *t = &v->type;
    cut[2] = 0;
    int64_t axes[FE_MAX_RANK];
    uint32_t count;
    lm_status st;
    const char *op = n->op_type;
    *out_dim = d;
    if (!strcmp(op, "Squeeze")) {
        if ((st = ints_of(c, n, 1, "axes", axes, &count))) return st;
        bool gone[FE_MAX_RANK] = {false};
        for (int32_t a = 0; a < t->rank; a++)
            gone[a] = !count && t->dims[a] == 1;
        for (uint32_t k = 0; k < count; k++) {
            int32_t a;
            if ((st = fe_axis(c, n, axes[k], t->rank, &a))) return st;
            gone[a] = true;
        }
        if (gone[d])
            return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                           "input 0 ('%s') is padded along dim %d, which it squeezes", v->name, d);
        for (int32_t a = 0; a < d; a++)
            *out_dim -= gone[a];
        return LM_OK;
    }
    if (!strcmp(op, "Unsqueeze")) {
        if ((st = ints_of(c, n, 1, "axes", axes, &count))) return st;
        int32_t out_rank = t->rank + (int32_t)count;
        if (out_rank > FE_MAX_RANK)
            return fe_fail(c, n, LM_ERR_UNSUPPORTED, "the result would have rank %d; at most %d",
                           out_rank, FE_MAX_RANK);
        bool added[FE_MAX_RANK] = {false};
        for (uint32_t k = 0; k < count; k++) {
            int32_t a;
            if ((st = fe_axis(c, n, axes[k], out_rank, &a))) return st;
            added[a] = true;
        }
        for (int32_t j = 0, i = 0; j < out_rank; j++)
            if (!added[j] && i++ == d) *out_dim = j;
        return LM_OK;
    }
    if (!strcmp(op, "Split")) {
        int64_t axis;
        int32_t a;
        if ((st = fe_attr_int(c, n, "axis", 0, &axis)) || (st = fe_axis(c, n, axis, t->rank, &a)))
            return st;
        if (a == d)
            return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                           "input 0 ('%s') is padded along dim %d, which it splits", v->name, d);
        return LM_OK;
    }
    /* Slice: along the padded dim, from a start >= 0 by a step >= 1 to an
     * end >= 0 (a count from the front, not from the results' end). */
    bool attrs = n->opset < 10;
    int64_t starts[FE_MAX_RANK], ends[FE_MAX_RANK], steps[FE_MAX_RANK];
    uint32_t ns, ne, nsteps;
    if ((st = ints_of(c, n, attrs ? 99 : 1, "starts", starts, &ns)) ||
        (st = ints_of(c, n, attrs ? 99 : 2, "ends", ends, &ne)) ||
        (st = ints_of(c, n, attrs ? 99 : 3, "axes", axes, &count)) ||
        (st = ints_of(c, n, attrs ? 99 : 4, "steps", steps, &nsteps)))
        return st;
    for (uint32_t k = 0; k < ns && k < ne; k++) {
        int32_t a = (int32_t)k;
        if (count && (st = fe_axis(c, n, axes[k], t->rank, &a))) return st;
        int64_t step = k < nsteps ? steps[k] : 1, len = t->dims[d];
        int64_t start = starts[k] <= -len ? 0 : starts[k];
        bool whole = step == 1 && start == 0 && ends[k] >= len;
        if (a != d || whole) continue;
        if (step < 1 || start < 0 || ends[k] < 0)
            return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                           "input 0 ('%s') is padded along dim %d, which it slices %s (only the "
                           "run knows where the results end: a slice of that dim must count "
                           "from its front, with a start and an end >= 0 and a step >= 1)",
                           v->name, d, step < 1 ? "backwards" : "from the end");
        cut[0] = start;
        cut[1] = ends[k] < len ? ends[k] : len;
        cut[2] = step;
    }
    return LM_OK;
}

/* A Reshape or Flatten of a value padded along dim d that merges d with
 * the dims after it into the result's dim `a` (boxes [N, C, 4] as [N * C,
 * 4]): the result is padded along `a`, each of d's entries there `inner`
 * times in a row, so its record is the input's so repeated (its results
 * still first). The op's copy and the record's nodes replace it. Anything
 * else (a < 0: no dim of the result starts where d does) is refused. */

static lm_status merge_reshaped(fe_ctx *c, const fe_node *n, int32_t d, int32_t a) {
    const fe_value *v = fe_in(c, n, 0);
    const fe_type *t = &v->type, *o = &c->g->values[n->outputs[0]].type;
    int64_t inner = 1, len = t->dims[d];
    for (int32_t e = d + 1; a >= 0 && e < t->rank && len * inner < o->dims[a]; e++)
        inner *= t->dims[e];
    if (a < 0 || len * inner != o->dims[a] || inner == 0)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "input 0 ('%s') is padded along dim %d, which it merges with dims before "
                       "it or splits (a reshape must keep that dim whole, or merge it with the "
                       "dims after it)",
                       v->name, d);
    uint32_t out = n->outputs[0], valid = valid_of(c, n->inputs[0]);
    bool dirty = v->pad_dirty;
    fe_build bb = {.elem = FE_FLOAT}, *b = &bb;
    fe_x_begin(c, n, &b->x);
    /* (The record first: a Where putting the copy's padding back reads it.) */
    uint32_t all = fe_b_const(b, FE_BOOL, 2, (const int64_t[]){1, inner}, 1);
    uint32_t rec = fe_b_op(b, "And", fe_b_unsqueeze(b, valid, 1), all);
    rec = fe_b_reshape(b, rec, (const int64_t[]){len * inner}, 1);
    fe_b_copy_node(b);
    for (uint32_t i = 0; !b->st && i < b->x.count; i++)
        b->x.nodes[i].pad_masked = true;
    lm_status st = fe_x_end(c, &b->x, b->st);
    if (!st) {
        fe_mark_padded(c, out, a, rec);
        c->g->values[out].pad_dirty = dirty;
    }
    return st;
}

/* After a Reshape or Flatten of a value padded along dim d: the result is
 * padded along the dim that holds the same entries (as many before it, as
 * many in it), or along the dim it merges d into with the dims after it
 * (merge_reshaped); an error when the op splits that dim or merges it with
 * dims before it. */
static lm_status mark_reshaped(fe_ctx *c, const fe_node *n, int32_t d) {
    const fe_value *v = fe_in(c, n, 0);
    const fe_type *t = &v->type, *o = &c->g->values[n->outputs[0]].type;
    int64_t before = 1, out_before = 1;
    for (int32_t a = 0; a < d; a++)
        before *= t->dims[a];
    for (int32_t a = 0; a < o->rank; a++) {
        if (out_before == before && o->dims[a] == t->dims[d]) {
            fe_mark_padded(c, n->outputs[0], a, valid_of(c, n->inputs[0]));
            c->g->values[n->outputs[0]].pad_dirty = v->pad_dirty;
            return LM_OK;
        }
        if (out_before == before) return merge_reshaped(c, n, d, a);
        out_before *= o->dims[a];
    }
    return merge_reshaped(c, n, d, -1);
}

/* ---- computing from entries in place ---- */

/* An element-wise op (NumPy broadcasting) reading padded input k (padded
 * along d): every other input has one entry along that dim of the result,
 * or is padded along it by the same op. */
static lm_status eltwise_read(fe_ctx *c, const fe_node *n, uint32_t k, int32_t d) {
    /* CastLike's second input gives only a type. */
    uint32_t inputs = strcmp(n->op_type, "CastLike") ? n->input_count : 1;
    int32_t rank = 0;
    for (uint32_t i = 0; i < inputs; i++)
        if (fe_has_in(n, i) && fe_in_type(c, n, i)->rank > rank) rank = fe_in_type(c, n, i)->rank;
    const fe_value *pv = fe_in(c, n, k);
    int32_t dim = d + rank - pv->type.rank;
    for (uint32_t i = 0; i < inputs; i++) {
        if (i == k || !fe_has_in(n, i)) continue;
        const fe_value *v = fe_in(c, n, i);
        int32_t a = dim - (rank - v->type.rank), pd = padded_dim(c, n->inputs[i]);
        if (pd >= 0 && (pd != a || valid_of(c, n->inputs[i]) != valid_of(c, n->inputs[k])))
            return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                           "inputs %u ('%s') and %u ('%s') are padded %s (their results may not "
                           "line up)",
                           k, pv->name, i, v->name,
                           pd != a ? "along different dims of the result" : "by different ops");
        if (pd < 0 && a >= 0 && v->type.dims[a] != 1)
            return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                           "input %u ('%s') is padded along dim %d, and input %u ('%s') has %lld "
                           "entries along it (only a value of one entry there, or one padded by "
                           "the same op, may meet padding)",
                           k, pv->name, d, i, v->name, (long long)v->type.dims[a]);
    }
    mark_outputs(c, n, k, dim);
    return LM_OK;
}

/* MatMul or Gemm of input 0 padded along its rows (or, for MatMul, a batch
 * dim that input 1 does not have): the result is padded along them. */
static lm_status matmul_read(fe_ctx *c, const fe_node *n, uint32_t k, int32_t d) {
    if (!fe_has_in(n, 1)) return LM_OK; /* its inference names what is missing */
    const fe_value *a = fe_in(c, n, 0);
    const fe_type *tb = fe_in_type(c, n, 1);
    int32_t ra = a->type.rank, rb = tb ? tb->rank : 0;
    bool gemm = !strcmp(n->op_type, "Gemm");
    int64_t trans_a = 0;
    lm_status st = gemm ? fe_attr_int(c, n, "transA", 0, &trans_a) : LM_OK;
    if (st) return st;
    int32_t rows = gemm ? (trans_a ? 1 : 0) : ra - 2;
    bool ok = k == 0 && ra >= 2 && (d == rows || (!gemm && d < rows && rb <= 2));
    if (ok && gemm && fe_has_in(n, 2)) { /* C broadcasts over the rows */
        const fe_type *tc = fe_in_type(c, n, 2);
        ok = padded_dim(c, n->inputs[2]) < 0 && (tc->rank < 2 || tc->dims[0] == 1);
    }
    if (!ok || padded_dim(c, n->inputs[1]) >= 0)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "input %u ('%s') is padded along dim %d: a matrix product keeps padding "
                       "apart only in the rows (or batch dims) of its first input, with no other "
                       "input padded or having rows",
                       k, fe_in(c, n, k)->name, d);
    int32_t dim = gemm ? 0 : rb == 1 ? d : d + (rb > ra ? rb - ra : 0);
    mark_outputs(c, n, 0, dim);
    return LM_OK;
}

/* What Pad n adds before dim 0 of its rank-`rank` input (its pads, an
 * attribute before opset 11, then a constant input over all dims or over
 * its axes); an error when they are computed at run time. */
static lm_status pad_begin_of_dim0(fe_ctx *c, const fe_node *n, int32_t rank, int64_t *out) {
    int64_t pads[2 * FE_MAX_RANK], axes[FE_MAX_RANK];
    uint32_t count, axis_count = 0;
    *out = 0;
    lm_status st = ints_of(c, n, n->opset < 11 ? 99 : 1, "pads", pads, &count);
    if (!st && fe_has_in(n, 3)) st = ints_of(c, n, 3, "", axes, &axis_count);
    if (st) return st;
    if (!axis_count) {
        *out = count ? pads[0] : 0;
        return LM_OK;
    }
    for (uint32_t j = 0; j < axis_count && j < count; j++) {
        int32_t a;
        if ((st = fe_axis(c, n, axes[j], rank, &a))) return st;
        if (a == 0) *out = pads[j];
    }
    return LM_OK;
}

/* An op of per_entry reading input k padded along dim d: a batch padded
 * along dim 0 (input 0), no other input padded, and nothing in the op
 * working across dim 0 (a normalization over it, BatchNormalization's
 * training statistics, a resize of it). The result is padded along dim 0
 * as the input is; what the op makes of padding stays there (dirty). */
static lm_status per_entry_read(fe_ctx *c, const fe_node *n, uint32_t k, int32_t d) {
    const char *op = n->op_type;
    const fe_type *t = fe_in_type(c, n, 0);
    const char *across = NULL;
    for (uint32_t i = 1; i < n->input_count; i++)
        if (padded_dim(c, n->inputs[i]) >= 0) across = "it reads another padded input";
    int64_t axis = 0;
    lm_status st = LM_OK;
    if (!strcmp(op, "LayerNormalization") || !strcmp(op, "LpNormalization")) {
        if ((st = fe_attr_int(c, n, "axis", -1, &axis))) return st;
        if ((axis < 0 ? axis + t->rank : axis) == 0) across = "it normalizes along dim 0";
    } else if (!strcmp(op, "MeanVarianceNormalization")) {
        const int64_t *axes, def[] = {0, 2, 3};
        size_t count = 3;
        const fe_attr *a = fe_node_attr(n, "axes");
        axes = def;
        if (a && (st = fe_attr_ints(c, n, "axes", &axes, &count))) return st;
        for (size_t j = 0; j < count; j++)
            if ((axes[j] < 0 ? axes[j] + t->rank : axes[j]) == 0)
                across = "it normalizes along dim 0";
    } else if (!strcmp(op, "BatchNormalization")) {
        if ((st = fe_attr_int(c, n, "training_mode", 0, &axis))) return st;
        for (uint32_t o = 1; o < n->output_count; o++)
            axis |= n->outputs[o] != FE_NONE; /* statistics asked for (before opset 14) */
        if (axis) across = "it computes training statistics over dim 0";
    } else if (!strcmp(op, "Pad") && k == 0 && d == 0) {
        /* (and nothing after: per_entry_written) */
        int64_t begin;
        if ((st = pad_begin_of_dim0(c, n, t->rank, &begin))) return st;
        if (begin) across = "it pads dim 0";
    }
    if (k != 0 || d != 0 || across)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "input %u ('%s') is padded along dim %d: %s keeps padding apart when "
                       "its input 0 is padded along dim 0 (a batch, entry by entry)%s%s",
                       k, fe_in(c, n, k)->name, d, op, across ? ", but " : "",
                       across ? across : "");
    mark_outputs(c, n, 0, 0);
    return LM_OK;
}

/* After an op of per_entry read a padded batch: the result has as many
 * entries along dim 0 as the input, known only once inferred (a Resize's
 * scales, what a Pad adds after the batch). */
static lm_status per_entry_written(fe_ctx *c, const fe_node *n) {
    const fe_value *v = fe_in(c, n, 0), *o = &c->g->values[n->outputs[0]];
    if (o->type.rank >= 1 && o->type.dims[0] == v->type.dims[0]) return LM_OK;
    return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                   "input 0 ('%s') is padded along dim 0, which it %s (from %lld entries to "
                   "%lld): the results would not stay first",
                   v->name, !strcmp(n->op_type, "Pad") ? "pads" : "resizes",
                   (long long)v->type.dims[0], (long long)(o->type.rank ? o->type.dims[0] : 1));
}

/* ---- working along the padded dim ---- */

/* The lowest (or highest) value of element type e on the device. */
static double extreme(fe_elem e, bool lowest) {
    if (fe_elem_is_float(e)) return lowest ? -INFINITY : INFINITY;
    /* Integers are int32 or uint32 on the device (the 8- and 16-bit ones
     * their own range). */
    if (e == FE_UINT8 || e == FE_UINT16 || e == FE_UINT32 || e == FE_UINT64)
        return lowest ? 0 : e == FE_UINT8 ? UINT8_MAX : e == FE_UINT16 ? UINT16_MAX : UINT32_MAX;
    double top = e == FE_INT8 ? INT8_MAX : e == FE_INT16 ? INT16_MAX : INT32_MAX;
    return lowest ? -top - 1 : top;
}

/* The value padding is replaced by before op n works along the padded dim
 * of an `e` input: what leaves its result as the results' alone. */
static double neutral(const fe_node *n, fe_elem e) {
    static const char *const lowest[] = {
        "ReduceMax", "ArgMax", "ReduceLogSumExp", "Softmax", "LogSoftmax", "Hardmax", NULL};
    if (!strcmp(n->op_type, "ReduceProd")) return 1;
    if (is_op(n, lowest)) return extreme(e, true);
    if (!strcmp(n->op_type, "ReduceMin") || !strcmp(n->op_type, "ArgMin")) return extreme(e, false);
    return 0;
}

/* The number of results along the padded dim (the trues of `valid`) times
 * `others`, a scalar of the build's element type. */
static uint32_t result_count(fe_build *b, uint32_t valid, int64_t others) {
    uint32_t n = fe_b_sum(b, fe_b_cast(b, valid, b->elem), (const int64_t[]){0}, 1);
    if (others > 1) n = fe_b_op(b, "Mul", n, fe_b_scalar(b, (double)others));
    return fe_b_reshape(b, n, NULL, 0);
}

/* Input i of the node rewritten (padded along d) with its padding replaced
 * by `fill`: a Where appended to rewrite b, reading the padding knowingly. */
static uint32_t masked_input(fe_build *b, uint32_t i, int32_t d, double fill) {
    uint32_t in = b->x.node.inputs[i];
    fe_value v = b->x.c->g->values[in]; /* a copy: the array grows */
    uint32_t kept = fe_b_where(b, valid_along(b, v.pad_valid - 1, v.type.dims[d], v.type.rank, d),
                               in, fe_b_const(b, v.type.elem, 0, NULL, fill));
    if (!b->st) b->x.nodes[b->x.count - 1].pad_masked = true;
    return kept;
}

/* masked_input, then the node's copy reading it instead of input i; the
 * copy, valid until the next node is added. */
static fe_node *copy_masked(fe_build *b, uint32_t i, int32_t d, double fill) {
    uint32_t kept = masked_input(b, i, d, fill);
    fe_node *op = fe_b_copy_node(b);
    if (op) op->inputs[i] = kept;
    return op;
}

/* Reduce*, ArgMax, ArgMin, a Softmax-like op or CumSum along the padded dim
 * d of input 0 (dims `mask`): the op on the input with padding replaced
 * (neutral), writing n's outputs; a ReduceMean becomes a ReduceSum divided
 * by the number of results summed. A Softmax-like op's and CumSum's results
 * stay padded, dirty as any computed value (fe_padded_written). */
static lm_status along_padded(fe_ctx *c, const fe_node *n, int32_t d, uint32_t mask) {
    const fe_value *pv = fe_in(c, n, 0);
    const fe_type *t = &pv->type;
    int64_t last = 0, keepdims = 1;
    lm_status st = fe_attr_int(c, n, "select_last_index", 0, &last);
    if (!st) st = fe_attr_int(c, n, "keepdims", 1, &keepdims);
    if (st) return st;
    if (last)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "input 0 ('%s') is padded along dim %d, the axis it works along, where "
                       "with select_last_index a result tied with the padding's stand-in would "
                       "lose to it",
                       pv->name, d);
    bool mean = !strcmp(n->op_type, "ReduceMean");
    if (mean && !fe_elem_is_float(t->elem)) return LM_OK; /* its inference refuses it */
    uint32_t valid = valid_of(c, n->inputs[0]);
    static const char *const shaped_ops[] = {"Softmax", "LogSoftmax", "Hardmax", "CumSum", NULL};
    bool shaped = is_op(n, shaped_ops);
    uint32_t out = n->outputs[0];
    fe_build bb = {.elem = t->elem}, *b = &bb;
    fe_x_begin(c, n, &b->x);
    const fe_node *nd = &b->x.node;
    if (!mean) {
        copy_masked(b, 0, d, neutral(nd, t->elem));
    } else {
        uint32_t kept = masked_input(b, 0, d, 0);
        int64_t axes[FE_MAX_RANK], others = 1;
        uint32_t count = 0;
        for (int32_t a = 0; a < t->rank; a++)
            if (mask & (1u << a)) {
                axes[count++] = a;
                others *= a == d ? 1 : t->dims[a];
            }
        fe_node *sum_node = NULL;
        uint32_t sum = fe_b_node(b, "ReduceSum", 13,
                                 (const uint32_t[]){kept, fe_b_ints(b, axes, count)}, 2, &sum_node);
        fe_b_ints_attr(b, sum_node, "keepdims", false, &keepdims, 1);
        uint32_t results = result_count(b, valid, others);
        fe_node *div = b->st ? NULL : fe_x_node(&b->x, "Div", 13, 2, 1);
        if (!b->st && !div) b->st = fe_x_oom();
        if (div) {
            div->inputs[0] = sum;
            div->inputs[1] = results;
            div->outputs[0] = nd->outputs[0];
        }
        for (uint32_t i = 0; i < b->x.count; i++)
            b->x.nodes[i].pad_masked = true;
    }
    /* The copy reads the kept entries, and a shaped result of it is
     * padded, its padding put back after it. */
    if ((st = fe_x_end(c, &b->x, b->st))) return st;
    if (shaped) fe_mark_padded(c, out, d, valid);
    return LM_OK;
}

/* ---- the readers ---- */

/* A reader that works along dims `mask` of input 0, padded along d: along
 * it (along_padded), or along others, its result padded where the op
 * leaves that dim. */
static lm_status reduce_read(fe_ctx *c, const fe_node *n, int32_t d, uint32_t mask, bool keep) {
    if (mask & (1u << d)) return along_padded(c, n, d, mask);
    int32_t dim = d;
    for (int32_t a = 0; !keep && a < d; a++)
        dim -= (mask >> a) & 1;
    mark_outputs(c, n, 0, dim);
    return LM_OK;
}

/* CumSum of input 0 padded along d: along d or another dim. */
static lm_status cumsum_read(fe_ctx *c, const fe_node *n, int32_t d) {
    const fe_tensor *axis;
    int32_t a;
    lm_status st = fe_in_const_required(c, n, 1, &axis);
    if (!st && axis->count != 1)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "axis must have one entry, given %llu",
                       (unsigned long long)axis->count);
    if (!st) st = fe_axis(c, n, fe_tensor_get_i64(axis, 0), fe_in_type(c, n, 0)->rank, &a);
    if (st) return st;
    if (a == d) return along_padded(c, n, d, 1u << d);
    mark_outputs(c, n, 0, d);
    return LM_OK;
}

/* Ends rewrite b of node n; then marks n's outputs padded along `dim` by
 * `valid` (FE_NONE: not marked), their padding dirty or not. */
static lm_status end_marked(fe_ctx *c, fe_build *b, const fe_node *n, int32_t dim, uint32_t valid,
                            bool dirty) {
    uint32_t outs[8], count = n->output_count < 8 ? n->output_count : 8;
    memcpy(outs, n->outputs, count * sizeof *outs); /* n moves with the splice */
    lm_status st = fe_x_end(c, &b->x, b->st);
    for (uint32_t o = 0; !st && valid != FE_NONE && o < count; o++) {
        fe_mark_padded(c, outs[o], dim, valid);
        if (outs[o] != FE_NONE) c->g->values[outs[o]].pad_dirty = dirty;
    }
    return st;
}

/* A slice of the padded dim d that keeps a slice's results first: from a
 * start >= 0, by a step >= 1, to an end >= 0 (a count from the front, not
 * from the results' end, which only the run knows). The copy of n, then its
 * outputs padded by the same slice of which entries are results. */
static lm_status slice_padded(fe_ctx *c, const fe_node *n, int32_t to, const int64_t cut[3]) {
    uint32_t valid = valid_of(c, n->inputs[0]);
    fe_build bb = {.elem = FE_FLOAT}, *b = &bb;
    fe_x_begin(c, n, &b->x);
    uint32_t in[5] = {valid, fe_b_ints(b, &cut[0], 1), fe_b_ints(b, &cut[1], 1),
                      fe_b_ints(b, (const int64_t[]){0}, 1), fe_b_ints(b, &cut[2], 1)};
    uint32_t kept = fe_b_node(b, "Slice", 13, in, 5, NULL);
    fe_node *op = fe_b_copy_node(b);
    if (op) op->pad_masked = true;
    return end_marked(c, b, n, to, b->st ? FE_NONE : kept, c->g->values[n->inputs[0]].pad_dirty);
}

/* NonZero, Compress and NonMaxSuppression reading padded values: the
 * input that decides what they select has its padding replaced by what is
 * never selected -- zero for NonZero's input and Compress's condition, NaN
 * for NonMaxSuppression's scores (NaN takes no part) -- and the op, padding
 * its own output (fe_ops_select.c), reads that. */
static lm_status select_read(fe_ctx *c, const fe_node *n, uint32_t k, int32_t d) {
    bool nms = !strcmp(n->op_type, "NonMaxSuppression"), compress = !strcmp(n->op_type, "Compress");
    uint32_t decides = nms || compress ? 1 : 0;
    int32_t want = nms ? 2 : compress ? 0 : d, at = padded_dim(c, n->inputs[decides]);
    const fe_value *v = fe_in(c, n, k);
    if (compress && k == 0 && at < 0) {
        /* A known condition along another dim moves whole slices. */
        int64_t axis = INT64_MIN;
        int32_t a = -1;
        lm_status st = fe_attr_int(c, n, "axis", INT64_MIN, &axis);
        if (!st && axis != INT64_MIN) st = fe_axis(c, n, axis, v->type.rank, &a);
        if (st) return st;
        if (fe_in_const(c, n, 1) && a >= 0 && a != d) {
            mark_outputs(c, n, 0, d);
            return LM_OK;
        }
    }
    bool matched = at == want;
    if (matched && k != decides) { /* the other input padded alike */
        int32_t a = -1;
        int64_t axis = 0;
        lm_status st = compress ? fe_attr_int(c, n, "axis", INT64_MIN, &axis) : LM_OK;
        if (!st && compress && axis != INT64_MIN) st = fe_axis(c, n, axis, v->type.rank, &a);
        if (st) return st;
        matched =
            valid_of(c, n->inputs[k]) == valid_of(c, n->inputs[decides]) && d == (nms ? 1 : a);
    }
    if (!matched)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "input %u ('%s') is padded along dim %d: %s reads padded values only when "
                       "its %s is padded (along dim %d)%s",
                       k, v->name, d, n->op_type,
                       nms        ? "scores input"
                       : compress ? "condition"
                                  : "input",
                       want,
                       nms        ? ", and its boxes, if padded, by the same op along dim 1"
                       : compress ? ", and its data, if padded, by the same op along its axis"
                                  : "");
    fe_build bb = {.elem = FE_FLOAT}, *b = &bb;
    fe_x_begin(c, n, &b->x);
    fe_node *op = copy_masked(b, decides, want, nms ? NAN : 0);
    if (op) op->pad_masked = true; /* its own rewrite reads the rest */
    return fe_x_end(c, &b->x, b->st);
}

/* TopK of input 0 padded along d: along d, the padding replaced by what
 * loses to every result, its first K entries padded as the input's first K
 * are (or, of values a threshold selected, the values masked instead:
 * fe_topk_of_selection); along another dim, each padded row's results are
 * padding. */
static lm_status topk_read(fe_ctx *c, const fe_node *n, int32_t d) {
    const fe_type *t = fe_in_type(c, n, 0);
    int64_t axis, largest, k = 0;
    int32_t a;
    const fe_tensor *kt = NULL;
    lm_status st = fe_attr_int(c, n, "axis", -1, &axis);
    if (!st) st = fe_attr_int(c, n, "largest", 1, &largest);
    if (!st) st = fe_axis(c, n, axis, t->rank, &a);
    if (!st && n->opset >= 10) st = fe_in_const_required(c, n, 1, &kt);
    if (st) return st;
    if (a != d) {
        mark_outputs(c, n, 0, d);
        return LM_OK;
    }
    if (kt && kt->count == 1) k = fe_tensor_get_i64(kt, 0);
    if (!kt) {
        const fe_attr *ka = fe_node_attr(n, "k");
        k = ka && ka->type == FE_ATTR_INT ? ka->i : 0;
    }
    if (k < 0 || k > t->dims[d]) return LM_OK; /* its inference names the error */
    bool done = false;
    if (t->rank == 1 && ((st = fe_topk_of_selection(c, n, k, largest != 0, &done)) || done))
        return st;
    fe_build bb = {.elem = t->elem}, *b = &bb;
    fe_x_begin(c, n, &b->x);
    double fill = extreme(t->elem, largest != 0);
    /* Made before the copy: the padding put back after it reads it. */
    uint32_t first = fe_b_slice(b, valid_of(c, n->inputs[0]), 0, 0, k);
    copy_masked(b, 0, d, fill);
    return end_marked(c, b, n, d, b->st ? FE_NONE : first, false);
}

/* A Concat along a padded dim made so far: each part's record of results
 * (FE_NONE for a part not padded) and length, and the gather's indices and
 * the record of results that the parts made. */
struct fe_pad_concat {
    struct fe_pad_concat *next;
    uint32_t count;
    uint32_t *valids;
    int64_t *lens;
    uint32_t from, kept;
};

/* The Concat made from parts of these records and lengths, or NULL. */
static const fe_pad_concat *pad_concat_find(const fe_ctx *c, const fe_pad_concat *key) {
    for (const fe_pad_concat *p = c->pad_concats; p; p = p->next)
        if (p->count == key->count &&
            !memcmp(p->valids, key->valids, key->count * sizeof *key->valids) &&
            !memcmp(p->lens, key->lens, key->count * sizeof *key->lens))
            return p;
    return NULL;
}

/* Concat along padded dim d of values padded along it (by any ops) or not
 * padded (every entry a result): the result holds each input's results in
 * turn, then every input's padding. The inputs joined as they are, then
 * gathered along d in the order of a stable partition of the joined record
 * of results: an entry goes to the number of results before it (a CumSum)
 * when it is one, else after every result (a detector's per-class or
 * per-level selections joined for one NMS). Concats of parts with the same
 * records share the order and the result's record, so what they make lines
 * up (the boxes, the scores and the labels joined alike). */
static lm_status concat_padded(fe_ctx *c, const fe_node *n, uint32_t k, int32_t d) {
    uint32_t count = n->input_count;
    bool dirty = false;
    for (uint32_t i = 0; i < count; i++) {
        int32_t pd = padded_dim(c, n->inputs[i]);
        if (pd >= 0 && pd != d)
            return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                           "input %u ('%s') is padded along dim %d, the axis it joins along, and "
                           "input %u ('%s') along dim %d: the result would be padded along two "
                           "dims",
                           k, fe_in(c, n, k)->name, d, i, fe_in(c, n, i)->name, pd);
        dirty |= c->g->values[n->inputs[i]].pad_dirty;
    }
    fe_arena *arena = &c->g->arena;
    fe_pad_concat *key = fe_arena_alloc(arena, sizeof *key);
    if (key) key->valids = fe_arena_alloc(arena, count * sizeof *key->valids);
    if (key && key->valids) key->lens = fe_arena_alloc(arena, count * sizeof *key->lens);
    if (!key || !key->valids || !key->lens) return fe_x_oom();
    key->count = count;
    int64_t total = 0;
    for (uint32_t i = 0; i < count; i++) {
        key->lens[i] = fe_in_type(c, n, i)->dims[d];
        key->valids[i] = padded_dim(c, n->inputs[i]) == d ? valid_of(c, n->inputs[i]) : FE_NONE;
        total += key->lens[i];
    }
    /* (The CumSum's limit, named here: its node is the rewrite's.) */
    if (total > FE_CUMSUM_MAX)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "joins %lld entries along its padded dim %d, more than the %lld a "
                       "Concat along a padded dim supports",
                       (long long)total, d, (long long)FE_CUMSUM_MAX);
    const fe_pad_concat *made = pad_concat_find(c, key);
    fe_build bb = {.elem = FE_FLOAT}, *b = &bb;
    fe_x_begin(c, n, &b->x);
    uint32_t joined = fe_b_concat(b, b->x.node.inputs, count, d);
    if (!b->st && count > 1) b->x.nodes[b->x.count - 1].pad_masked = true;
    if (made) {
        key->from = made->from;
        key->kept = made->kept;
    } else {
        uint32_t *parts = malloc(count * sizeof *parts);
        if (!parts && !b->st) b->st = fe_x_oom();
        for (uint32_t i = 0; parts && i < count; i++)
            parts[i] = key->valids[i] != FE_NONE ? key->valids[i]
                                                 : fe_b_const(b, FE_BOOL, 1, &key->lens[i], 1);
        uint32_t valid = parts ? fe_b_concat(b, parts, count, 0) : FE_NONE;
        free(parts);
        uint32_t before = fe_b_node(
            b, "CumSum", 14,
            (const uint32_t[]){fe_b_cast(b, valid, FE_INT64), fe_b_const(b, FE_INT64, 0, NULL, 0)},
            2, NULL);
        uint32_t results = fe_b_slice(b, before, 0, total - 1, total);
        uint32_t at = fe_b_iota(b, total);
        /* A result's place: the results up to it, less one; padding's:
         * after every result, by the padding before it (its place less the
         * results). */
        uint32_t to =
            fe_b_where(b, valid, fe_b_op(b, "Sub", before, fe_b_const(b, FE_INT64, 0, NULL, 1)),
                       fe_b_op(b, "Sub", fe_b_op(b, "Add", results, at), before));
        /* The gather's indices: which entry goes to each place. */
        key->from = fe_b_node(b, "ScatterElements", 13, (const uint32_t[]){at, to, at}, 3, NULL);
        /* (Made before the gather: the result's padding, put back after
         * it, reads it.) */
        key->kept = fe_b_node(b, "Gather", 13, (const uint32_t[]){valid, key->from}, 2, NULL);
    }
    fe_node *g = b->st ? NULL : fe_x_node(&b->x, "Gather", 13, 2, 1);
    if (!b->st && !g) b->st = fe_x_oom();
    if (g) {
        g->inputs[0] = joined;
        g->inputs[1] = key->from;
        g->outputs[0] = b->x.node.outputs[0];
        int64_t axis = d;
        fe_b_ints_attr(b, g, "axis", false, &axis, 1);
    }
    lm_status st = end_marked(c, b, n, d, b->st ? FE_NONE : key->kept, dirty);
    if (!st && !made) {
        key->next = c->pad_concats;
        c->pad_concats = key;
    }
    return st;
}

/* Expand of input 0 padded along d that keeps d's length (broadcasting
 * other dims: a detector's indices viewed as [n, 1, 1, 1] and expanded to
 * a scatter's [n, C, H, W]): the result is padded along it, where the
 * result's rank puts it. */
static lm_status refuse(fe_ctx *c, const fe_node *n, uint32_t k, int32_t d);

static lm_status expand_read(fe_ctx *c, const fe_node *n, uint32_t k, int32_t d) {
    const fe_type *t = fe_in_type(c, n, 0);
    const fe_tensor *shape = n->input_count == 2 ? fe_in_const(c, n, 1) : NULL;
    if (k != 0 || !shape || shape->rank != 1) return refuse(c, n, k, d);
    int32_t len = (int32_t)shape->count, rank = len > t->rank ? len : t->rank;
    int32_t to = d + rank - t->rank, at = to - (rank - len);
    int64_t want = at >= 0 ? fe_tensor_get_i64(shape, (uint64_t)at) : 1;
    if (want != 1 && want != t->dims[d])
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "input 0 ('%s') is padded along dim %d, which it would broadcast to %lld "
                       "entries (only other dims may be broadcast)",
                       fe_in(c, n, 0)->name, d, (long long)want);
    mark_outputs(c, n, 0, to);
    return LM_OK;
}

/* RoiAlign of padded regions (rois and batch_indices padded along dim 0,
 * by the same op where both are; a detector's proposals): each region's
 * result is its own, so the result is padded along dim 0 alike. The
 * padding's regions are read as box 0 of image 0 (NaN corners would pick
 * no pixels). */
static lm_status roialign_read(fe_ctx *c, const fe_node *n, uint32_t k, int32_t d) {
    uint32_t valid = valid_of(c, n->inputs[k]);
    bool ok = k > 0 && d == 0 && n->input_count == 3;
    for (uint32_t i = 0; ok && i < 3; i++) {
        int32_t pd = padded_dim(c, n->inputs[i]);
        ok = pd < 0 ? i == 0 : i > 0 && pd == 0 && valid_of(c, n->inputs[i]) == valid;
    }
    if (!ok)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "input %u ('%s') is padded along dim %d: RoiAlign keeps padding apart "
                       "when its regions (rois, batch_indices) are padded along dim 0 by the same "
                       "op, and its image is not",
                       k, fe_in(c, n, k)->name, d);
    fe_build bb = {.elem = FE_FLOAT}, *b = &bb;
    fe_x_begin(c, n, &b->x);
    uint32_t in[2] = {FE_NONE, FE_NONE};
    for (uint32_t i = 1; i < 3; i++)
        if (padded_dim(c, n->inputs[i]) == 0) in[i - 1] = masked_input(b, i, 0, 0);
    fe_node *op = fe_b_copy_node(b);
    for (uint32_t i = 1; op && i < 3; i++)
        if (in[i - 1] != FE_NONE) op->inputs[i] = in[i - 1];
    return end_marked(c, b, n, 0, valid, true);
}

/* Concat along another dim of values all padded by the same op along the
 * same dim (torch.cat([boxes, scores[:, None]], 1) after a selection): the
 * result is padded along it. */
static lm_status concat_read(fe_ctx *c, const fe_node *n, uint32_t k, int32_t d) {
    int64_t axis;
    int32_t a;
    lm_status st = fe_attr_int(c, n, "axis", 0, &axis);
    if (!st) st = fe_axis(c, n, axis, fe_in_type(c, n, k)->rank, &a);
    if (st) return st;
    for (uint32_t i = 0; i < n->input_count && a != d; i++) {
        int32_t pd = padded_dim(c, n->inputs[i]);
        if (pd != d || valid_of(c, n->inputs[i]) != valid_of(c, n->inputs[k]))
            return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                           "input %u ('%s') is padded along dim %d and input %u ('%s') is %s: "
                           "Concat keeps padding apart when every input is padded by the same "
                           "op along the same dim, and it joins along another",
                           k, fe_in(c, n, k)->name, d, i, fe_in(c, n, i)->name,
                           pd < 0 ? "not" : "padded otherwise");
    }
    /* (A Concat of one input is that input, padding and all.) */
    if (a == d && n->input_count > 1) return concat_padded(c, n, k, d);
    mark_outputs(c, n, k, d);
    bool dirty = false;
    for (uint32_t i = 0; i < n->input_count; i++)
        dirty |= c->g->values[n->inputs[i]].pad_dirty;
    c->g->values[n->outputs[0]].pad_dirty = dirty;
    return LM_OK;
}

/* The input of the Expand that wrote value v when that input is padded
 * along dim d as v is (by the same op, of v's rank), else FE_NONE. */
static uint32_t expanded_from(const fe_ctx *c, uint32_t v, int32_t d) {
    uint32_t p = c->g->values[v].producer;
    if (p == FE_NONE) return FE_NONE;
    const fe_node *e = &c->g->nodes[p];
    if (strcmp(e->op_type, "Expand") || (e->domain[0] && strcmp(e->domain, "ai.onnx")) ||
        e->input_count != 2)
        return FE_NONE;
    uint32_t src = e->inputs[0];
    const fe_value *s = &c->g->values[src], *x = &c->g->values[v];
    if (padded_dim(c, src) != d || valid_of(c, src) != valid_of(c, v) ||
        s->type.rank != x->type.rank || s->type.dims[d] != x->type.dims[d])
        return FE_NONE;
    return src;
}

/* ScatterND or ScatterElements of padded indices (and updates padded by the
 * same op along the same dim, or not padded): the padding's indices are
 * replaced by one past every dim, which scatters nothing, so only the
 * results are written. */
static lm_status scatter_read(fe_ctx *c, const fe_node *n, uint32_t k, int32_t d) {
    bool nd = !strcmp(n->op_type, "ScatterND");
    if (n->input_count < 3) return LM_OK; /* its inference names what is missing */
    int32_t dd = padded_dim(c, n->inputs[0]), di = padded_dim(c, n->inputs[1]),
            du = padded_dim(c, n->inputs[2]);
    const fe_type *td = fe_in_type(c, n, 0), *ti = fe_in_type(c, n, 1);
    int64_t axis = 0;
    int32_t a = 0;
    lm_status st = nd ? LM_OK : fe_attr_int(c, n, "axis", 0, &axis);
    if (!st && !nd) st = fe_axis(c, n, axis, td->rank, &a);
    if (st) return st;
    /* Padded data: along the dim the indices pick (its rows keep their
     * record; the indices' results point at its results). */
    bool ok = (dd < 0 || dd == a) && (di < 0 || !nd || di < ti->rank - 1) &&
              (du < 0 || (du == di && valid_of(c, n->inputs[2]) == valid_of(c, n->inputs[1]))) &&
              (di >= 0 || (dd >= 0 && du < 0));
    if (!ok)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "input %u ('%s') is padded along dim %d: %s keeps padding apart when its "
                       "indices are padded (%s) and its updates, if padded, by the same op along "
                       "the same dim; its data, if padded, along the dim %s",
                       k, fe_in(c, n, k)->name, d, n->op_type,
                       nd ? "before their last dim" : "along any dim",
                       nd ? "the index tuples' first entry picks (0)" : "of its axis");
    fe_build bb = {.elem = FE_FLOAT}, *b = &bb;
    fe_x_begin(c, n, &b->x);
    uint32_t src = di >= 0 ? expanded_from(c, n->inputs[1], di) : FE_NONE;
    fe_node *op;
    if (src != FE_NONE) {
        /* Indices expanded from fewer (torchvision's idx[:, None, None,
         * None].expand(...)): masked before the Expand, which then makes
         * them again. */
        const fe_node *e = &c->g->nodes[c->g->values[n->inputs[1]].producer];
        uint32_t shape = e->inputs[1];
        fe_value v = c->g->values[src]; /* a copy: the array grows */
        uint32_t kept =
            fe_b_where(b, valid_along(b, v.pad_valid - 1, v.type.dims[di], v.type.rank, di), src,
                       fe_b_const(b, v.type.elem, 0, NULL, INT32_MAX));
        if (!b->st) b->x.nodes[b->x.count - 1].pad_masked = true;
        kept = fe_b_node(b, "Expand", 13, (const uint32_t[]){kept, shape}, 2, NULL);
        if (!b->st) b->x.nodes[b->x.count - 1].pad_masked = true;
        if ((op = fe_b_copy_node(b))) op->inputs[1] = kept;
    } else {
        op = di >= 0 ? copy_masked(b, 1, di, INT32_MAX) : fe_b_copy_node(b);
    }
    if (op) op->pad_masked = true; /* it reads the padded updates knowingly */
    if (dd < 0) return fe_x_end(c, &b->x, b->st);
    return end_marked(c, b, n, dd, valid_of(c, n->inputs[0]), true);
}

/* How the readers of value v (written by node `at`) use it, through the
 * results of those that compute from it: as a shape (an input whose value
 * decides a shape: Reshape's shape, Expand's, ...) or as data (anything
 * else that reaches a graph output or leaves the graph's view, as a
 * subgraph's read). */
enum { USE_SHAPE = 1, USE_DATA = 2 };
static unsigned uses_of(const fe_ctx *c, uint32_t at, uint32_t v, int depth) {
    const fe_graph *g = c->g;
    unsigned uses = g->values[v].graph_output || depth > 32 ? USE_DATA : 0;
    for (uint32_t j = at + 1; j < g->node_count && uses != (USE_SHAPE | USE_DATA); j++) {
        const fe_node *r = &g->nodes[j];
        for (uint32_t i = 0; i < r->implicit_count; i++)
            if (r->implicit[i] == v) uses |= USE_DATA;
        for (uint32_t i = 0; i < r->input_count; i++) {
            if (r->inputs[i] != v) continue;
            const fe_op_def *op = fe_op_find(r->op_type);
            if (op && i < 32 && (op->value_inputs >> i & 1)) {
                uses |= USE_SHAPE;
                continue;
            }
            if (i == 0 && !strcmp(r->op_type, "If")) {
                /* A condition picks between branches whose outputs have
                 * one shape (a run-time If's must): it never decides one. */
                uses |= USE_DATA;
                continue;
            }
            for (uint32_t o = 0; o < r->output_count; o++)
                if (r->outputs[o] != FE_NONE) uses |= uses_of(c, j, r->outputs[o], depth + 1);
        }
    }
    return uses;
}

/* Value v when known before the nodes up to it are inferred: an
 * initializer, or a Constant node's tensor. */
static const fe_tensor *known_early(const fe_ctx *c, uint32_t v) {
    const fe_value *x = &c->g->values[v];
    if (x->konst) return x->konst;
    if (x->producer == FE_NONE) return NULL;
    const fe_node *p = &c->g->nodes[x->producer];
    const fe_attr *a = strcmp(p->op_type, "Constant") ? NULL : fe_node_attr(p, "value");
    return a && a->type == FE_ATTR_TENSOR ? a->t : NULL;
}

/* Whether a reader of Shape node n's output (`len` entries) may read its
 * entry `at` (the padded dim's): every reader but a Gather of constant
 * indices that all point elsewhere (x.shape[1] of a padded x, a static
 * dim). */
static bool reads_entry(fe_ctx *c, const fe_node *n, int64_t at, int64_t len) {
    const fe_graph *g = c->g;
    uint32_t v = n->outputs[0];
    if (v == FE_NONE) return false;
    if (g->values[v].graph_output) return true;
    for (uint32_t j = (uint32_t)(n - g->nodes) + 1; j < g->node_count; j++) {
        const fe_node *r = &g->nodes[j];
        for (uint32_t i = 0; i < r->implicit_count; i++)
            if (r->implicit[i] == v) return true;
        for (uint32_t i = 0; i < r->input_count; i++) {
            if (r->inputs[i] != v) continue;
            const fe_tensor *idx = r->input_count == 2 ? known_early(c, r->inputs[1]) : NULL;
            int64_t axis = 0;
            if (i != 0 || strcmp(r->op_type, "Gather") || !idx ||
                fe_attr_int(c, r, "axis", 0, &axis) || (axis != 0 && axis != -1))
                return true;
            for (uint64_t e = 0; e < idx->count; e++) {
                int64_t k = fe_tensor_get_i64(idx, e);
                if ((k < 0 ? k + len : k) == at) return true;
            }
        }
    }
    return false;
}

/* Shape or Size of a value padded along d. Where the result only decides
 * shapes (an exporter's Reshape to [len(x), ...] of x itself), it is the
 * padded size, known when compiling, as the shapes inside the binary are.
 * Where it is data (len(x) in arithmetic: x.var()'s divisor), it is the
 * size the run gives: the number of results along d, computed on the
 * device. Both at once is refused. A Shape whose readers only pick other
 * dims (x.shape[1]) is known. */
static lm_status shape_read(fe_ctx *c, const fe_node *n, int32_t d) {
    unsigned uses = uses_of(c, (uint32_t)(n - c->g->nodes), n->outputs[0], 0);
    const fe_value *v = fe_in(c, n, 0);
    fe_type t = v->type;
    int64_t start = 0, end = t.rank;
    bool size = !strcmp(n->op_type, "Size");
    lm_status st = size ? LM_OK : fe_attr_int(c, n, "start", 0, &start);
    if (!st && !size) st = fe_attr_int(c, n, "end", t.rank, &end);
    if (st) return st;
    start = start < 0 ? start + t.rank : start;
    end = end < 0 ? end + t.rank : end;
    start = start < 0 ? 0 : start > t.rank ? t.rank : start;
    end = end < start ? start : end > t.rank ? t.rank : end;
    if (!size && d >= start && d < end && !reads_entry(c, n, d - start, end - start))
        return LM_OK;        /* the other dims: known */
    if (uses == USE_SHAPE) { /* the padded size: inferred as any other */
        if (!size && d >= start && d < end && n->outputs[0] != FE_NONE) {
            fe_value *o = &c->g->values[n->outputs[0]];
            o->shape_of_padded = n->inputs[0] + 1;
            o->shape_padded_at = (uint8_t)(d - start);
        }
        return LM_OK;
    }
    if (uses & USE_SHAPE)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "input 0 ('%s') is padded along dim %d, and its result is used both as a "
                       "shape (where it is the padded size, fixed when compiling) and as data "
                       "(where it is the run's number of results)",
                       v->name, d);
    fe_build bb = {.elem = FE_INT64}, *b = &bb;
    fe_x_begin(c, n, &b->x);
    uint32_t count = fe_b_sum(b, fe_b_cast(b, valid_of(c, n->inputs[0]), FE_INT64),
                              (const int64_t[]){0}, 1); /* [1] */
    uint32_t out;
    if (size) {
        int64_t others = fe_type_volume(&t) / (t.dims[d] ? t.dims[d] : 1);
        out = fe_b_reshape(b, fe_b_op(b, "Mul", count, fe_b_scalar(b, (double)others)), NULL, 0);
    } else {
        uint32_t parts[FE_MAX_RANK];
        for (int64_t a = start; a < end; a++)
            parts[a - start] = a == d ? count : fe_b_ints(b, &t.dims[a], 1);
        out = end > start ? fe_b_concat(b, parts, (uint32_t)(end - start), 0)
                          : fe_b_const(b, FE_INT64, 1, (const int64_t[]){0}, 0);
    }
    if (!b->st) b->st = fe_x_identity(&b->x, out, b->x.node.outputs[0]);
    return fe_x_end(c, &b->x, b->st);
}

/* The second step of an If whose condition is computed at run time (its
 * inputs the condition, the then branch's outputs and the else branch's:
 * fe_expand.c), some of them padded. Each output is picked as the If
 * would, knowing the padding: between values padded by the same op along
 * the same dim, a Where, padded alike; between a padded value and one
 * empty along that dim (a branch that returns nothing, as torchvision's
 * batched_nms does for no boxes), the padded value, its record of results
 * kept where the condition picks it (all padding where it picks the empty
 * one); between values not padded, a Where. */
static lm_status if_read(fe_ctx *c, const fe_node *n) {
    uint32_t outs = n->output_count;
    if (n->step != 1 || n->input_count != 1 + 2 * outs) return LM_OK; /* the If names it */
    /* Per output: its record of results (FE_NONE: not padded), its padded
     * dim and the value (n moves with the splice). */
    uint32_t *marks = malloc(3 * (outs ? outs : 1) * sizeof *marks);
    if (!marks) return fe_x_oom();
    fe_build bb = {.elem = FE_FLOAT}, *b = &bb;
    fe_x_begin(c, n, &b->x);
    uint32_t cond = n->inputs[0];
    for (uint32_t j = 0; j < outs; j++) {
        uint32_t out = n->outputs[j], a = n->inputs[1 + j], e = n->inputs[1 + outs + j];
        marks[3 * j] = FE_NONE;
        marks[3 * j + 2] = out;
        if (out == FE_NONE || b->st) continue;
        int32_t da = padded_dim(c, a), de = padded_dim(c, e);
        const fe_type ta = c->g->values[a].type, te = c->g->values[e].type;
        bool same = ta.elem == te.elem && ta.rank == te.rank, empty = same && (da < 0 || de < 0);
        int32_t d = da >= 0 ? da : de;
        for (int32_t k = 0; same && k < ta.rank; k++) {
            same &= ta.dims[k] == te.dims[k];
            empty &= k == d ? (da >= 0 ? te.dims[k] : ta.dims[k]) == 0 : ta.dims[k] == te.dims[k];
        }
        bool alike = same && da >= 0 && da == de && valid_of(c, a) == valid_of(c, e);
        if (empty && d >= 0) {
            /* The padded one, its results where the condition picks it. */
            bool then = da >= 0;
            uint32_t picked = then ? cond : fe_b_op(b, "Not", cond, FE_NONE);
            marks[3 * j] = fe_b_op(b, "And", valid_of(c, then ? a : e), picked);
            if (!b->st) b->st = fe_x_identity(&b->x, then ? a : e, out);
        } else if (alike || (same && da < 0 && de < 0)) {
            fe_node *w = fe_x_node(&b->x, "Where", 16, 3, 1);
            if (!w) b->st = fe_x_oom();
            if (w) {
                memcpy(w->inputs, (const uint32_t[]){cond, a, e}, sizeof(uint32_t[3]));
                w->outputs[0] = out;
            }
            if (alike) marks[3 * j] = valid_of(c, a);
        } else {
            char ka[96], ke[96];
            b->st = fe_fail(c, n, LM_ERR_UNSUPPORTED,
                            "the condition ('%s') is computed at run time, so each output is "
                            "picked between the branches, but output %u is %s%s in then_branch "
                            "and %s%s in else_branch (padded values are picked from values "
                            "padded by the same op, or from values empty along the padded dim)",
                            fe_in(c, n, 0)->name, j, fe_type_format(&ta, ka, sizeof ka),
                            da >= 0 ? " padded" : "", fe_type_format(&te, ke, sizeof ke),
                            de >= 0 ? " padded" : "");
        }
        marks[3 * j + 1] = (uint32_t)d;
    }
    for (uint32_t i = 0; !b->st && i < b->x.count; i++)
        b->x.nodes[i].pad_masked = true;
    lm_status st = fe_x_end(c, &b->x, b->st);
    for (uint32_t j = 0; !st && j < outs; j++)
        if (marks[3 * j] != FE_NONE) {
            fe_mark_padded(c, marks[3 * j + 2], (int32_t)marks[3 * j + 1], marks[3 * j]);
            c->g->values[marks[3 * j + 2]].pad_dirty = true;
        }
    free(marks);
    return st;
}

/* The refusal of any other reader. */
static lm_status refuse(fe_ctx *c, const fe_node *n, uint32_t k, int32_t d) {
    return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                   "input %u ('%s') is padded (its entries past the results along dim %d are "
                   "padding: NaN, -1 or false by type), and %s is not among the ops that keep "
                   "padding apart ('lightmetal compile --help' lists them): make it a graph "
                   "output, or read it in the program that reads the binary's outputs",
                   k, fe_in(c, n, k)->name, d, n->op_type);
}

lm_status fe_padded_read(fe_ctx *c, const fe_node *n) {
    uint32_t k = 0;
    int32_t d = -1;
    for (uint32_t i = 0; i < n->input_count && d < 0; i++)
        if ((d = padded_dim(c, n->inputs[i])) >= 0) k = i;
    if (d < 0 || n->pad_masked) return LM_OK;
    const fe_value *v = fe_in(c, n, k);
    const fe_type *t = &v->type;
    lm_status st = LM_OK;
    static const char *const whole[] = {"Squeeze", "Unsqueeze", "Slice", "Split", NULL};
    static const char *const reshapes[] = {"Reshape", "Flatten", NULL};
    static const char *const selects[] = {"NonZero", "Compress", "NonMaxSuppression", NULL};
    static const char *const scatters[] = {"ScatterND", "ScatterElements", NULL};
    if (!strcmp(n->op_type, "Identity")) {
        mark_outputs(c, n, k, d);
        return LM_OK;
    }
    if (!strcmp(n->op_type, "If")) return if_read(c, n);
    if (!strcmp(n->op_type, "Transpose")) {
        const fe_attr *perm = fe_node_attr(n, "perm");
        int32_t to = t->rank - 1 - d; /* no perm: the dims reversed */
        for (uint32_t j = 0; perm && perm->type == FE_ATTR_INTS && j < perm->count; j++)
            if (perm->ints[j] == d) to = (int32_t)j;
        mark_outputs(c, n, k, to);
        return LM_OK;
    }
    if (k == 0 && is_op(n, whole)) {
        int32_t to;
        int64_t cut[3];
        if ((st = reshaped_dim(c, n, v, d, &to, cut))) return st;
        if (cut[2]) return slice_padded(c, n, to, cut);
        mark_outputs(c, n, k, to);
        return LM_OK;
    }
    if (is_op(n, selects)) return select_read(c, n, k, d);
    if (k == 0 && !strcmp(n->op_type, "TopK")) return topk_read(c, n, d);
    if (!strcmp(n->op_type, "Concat")) return concat_read(c, n, k, d);
    if (is_op(n, scatters)) return scatter_read(c, n, k, d);
    if (!strcmp(n->op_type, "RoiAlign")) return roialign_read(c, n, k, d);
    if (!strcmp(n->op_type, "Expand")) return expand_read(c, n, k, d);
    if (!strcmp(n->op_type, "Shape") || !strcmp(n->op_type, "Size")) return shape_read(c, n, d);
    if (k == 0 && is_op(n, reshapes)) return LM_OK; /* marked once inferred */
    bool gather = !strcmp(n->op_type, "Gather"), gather_nd = !strcmp(n->op_type, "GatherND");
    int32_t di = n->input_count > 1 ? padded_dim(c, n->inputs[1]) : -1;
    if (gather) {
        const fe_type *td = fe_in_type(c, n, 0), *ti = fe_in_type(c, n, 1);
        int32_t axis;
        int64_t a;
        if ((st = fe_attr_int(c, n, "axis", 0, &a)) || (st = fe_axis(c, n, a, td->rank, &axis)))
            return st;
        if (k == 0 && di >= 0 && d != axis)
            return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                           "both its inputs are padded, the data along dim %d and not along the "
                           "axis it gathers along (%d), which would leave the result padded "
                           "along two dims",
                           d, axis);
        if (di >= 0) { /* the indices' padding gives padding (fe_padded_written); */
            /* padded data is read only where the indices' results point */
            mark_outputs(c, n, 1, axis + di);
            return LM_OK;
        }
        if (d == axis)
            return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                           "input 0 ('%s') is padded along dim %d, the axis it gathers along: "
                           "gather along another dim, or in the program that reads the output",
                           v->name, d);
        mark_outputs(c, n, 0, d < axis ? d : d + ti->rank - 1);
        return LM_OK;
    }
    if (gather_nd && di >= 0) {
        /* Padded data must be padded along a dim the index tuples pick
         * (not one the result keeps), as Gather's along its axis. */
        const fe_type *ti = fe_in_type(c, n, 1);
        int64_t batch_dims;
        if ((st = fe_attr_int(c, n, "batch_dims", 0, &batch_dims))) return st;
        bool picked = k == 1 || (ti->rank > 0 && d < ti->dims[ti->rank - 1]);
        if (batch_dims == 0 && di < ti->rank - 1 && picked) {
            mark_outputs(c, n, 1, di);
            return LM_OK;
        }
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "input 1 ('%s') is padded along dim %d: GatherND keeps padding apart with "
                       "batch_dims 0, indices padded before their last dim, and data, if padded "
                       "too, padded along a dim the index tuples pick",
                       fe_in(c, n, 1)->name, di);
    }
    if (is_eltwise(n)) return eltwise_read(c, n, k, d);
    if (!strcmp(n->op_type, "MatMul") || !strcmp(n->op_type, "Gemm"))
        return matmul_read(c, n, k, d);
    if (per_entry(n)) return per_entry_read(c, n, k, d);
    if (k == 0 && !strcmp(n->op_type, "CumSum")) return cumsum_read(c, n, d);
    uint32_t mask;
    bool keep;
    if (k == 0 && fe_reduce_dims(c, n, &mask, &keep, &st))
        return st ? st : reduce_read(c, n, d, mask, keep);
    return refuse(c, n, k, d);
}

/* Puts the padding back into n's padded outputs: n as it is into values of
 * its own, then for each padded output a Where giving the padding of its
 * type where the entries were padding and the result elsewhere. */
static lm_status restore_padding(fe_ctx *c, const fe_node *n) {
    enum { MAX_OUTS = 16 };
    fe_value v[MAX_OUTS]; /* copies: the array grows */
    double pad[MAX_OUTS];
    uint32_t count = n->output_count;
    if (count > MAX_OUTS)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "its outputs are padded, and putting their padding back is done for at "
                       "most %d outputs (given %u)",
                       MAX_OUTS, count);
    for (uint32_t o = 0; o < count; o++) {
        v[o] = n->outputs[o] == FE_NONE ? (fe_value){0} : c->g->values[n->outputs[o]];
        lm_status st =
            v[o].padded ? fe_padding_of(c, n, v[o].type.elem, "its output is", "result's", &pad[o])
                        : LM_OK;
        if (st) return st;
    }
    fe_build bb = {.elem = FE_FLOAT}, *b = &bb;
    fe_x_begin(c, n, &b->x);
    uint32_t own[MAX_OUTS];
    for (uint32_t o = 0; o < count; o++) {
        own[o] = n->outputs[o];
        if (v[o].padded && !b->st) b->st = fe_x_value(&b->x, "computed", &own[o]);
    }
    fe_node *op = fe_b_copy_node(b);
    if (op) memcpy(op->outputs, own, count * sizeof *own);
    for (uint32_t o = 0; o < count; o++) {
        if (!v[o].padded) continue;
        uint32_t dim = v[o].padded - 1u;
        uint32_t valid =
            valid_along(b, v[o].pad_valid - 1, v[o].type.dims[dim], v[o].type.rank, (int32_t)dim);
        uint32_t fill = fe_b_const(b, v[o].type.elem, 0, NULL, pad[o]);
        fe_node *w = b->st ? NULL : fe_x_node(&b->x, "Where", 16, 3, 1);
        if (!b->st && !w) b->st = fe_x_oom();
        if (w) {
            memcpy(w->inputs, (const uint32_t[]){valid, own[o], fill}, sizeof(uint32_t[3]));
            w->outputs[0] = b->x.node.outputs[o];
        }
    }
    for (uint32_t i = 0; i < b->x.count; i++)
        b->x.nodes[i].pad_masked = true;
    uint32_t outs[MAX_OUTS];
    memcpy(outs, n->outputs, count * sizeof *outs); /* n moves with the splice */
    lm_status st = fe_x_end(c, &b->x, b->st);
    for (uint32_t o = 0; !st && o < count; o++)
        if (v[o].padded) {
            c->g->values[outs[o]].pad_dirty = false;
            /* computed again by the Where (a folded constant's value had
             * the padding wrong) */
            c->g->values[outs[o]].konst = NULL;
        }
    return st;
}

/* Range(0, len(x), 1) of a value x padded along a dim (shape_read: the
 * padded size): entry i is the place of x's entry i, so the result is
 * padded alike (torch.arange(len(x)) to pair each of x's entries with its
 * place: Mask R-CNN's mask_prob[arange(len(labels)), labels]). Its padding
 * holds places, not yet the type's (dirty). */
static void mark_range_like(fe_ctx *c, const fe_node *n) {
    if (n->input_count != 3 || n->outputs[0] == FE_NONE || !fe_has_in(n, 1)) return;
    const fe_value *limit = fe_in(c, n, 1);
    const fe_tensor *start = fe_in_const(c, n, 0), *delta = fe_in_const(c, n, 2);
    if (!limit->shape_of_padded || limit->shape_padded_at != 0 ||
        fe_type_volume(&limit->type) != 1 || !start || !delta || start->count != 1 ||
        delta->count != 1 || fe_tensor_get_i64(start, 0) != 0 || fe_tensor_get_i64(delta, 0) != 1)
        return;
    uint32_t src = limit->shape_of_padded - 1;
    int32_t from = padded_dim(c, src);
    const fe_type *o = &c->g->values[n->outputs[0]].type;
    if (from < 0 || o->rank != 1 || o->dims[0] != c->g->values[src].type.dims[from]) return;
    fe_mark_padded(c, n->outputs[0], 0, valid_of(c, src));
    c->g->values[n->outputs[0]].pad_dirty = true;
}

/* ConstantOfShape or Expand (of an input not padded) to the shape of a
 * value padded along a dim (shape_read): its result is padded alike where
 * it holds one value along that dim -- torch's full_like(x) holds a value
 * for each of x's results, then for each of x's padding entries, which is
 * then padding. Its padding holds the fill, not yet the type's (dirty). */
static void mark_shaped_like(fe_ctx *c, const fe_node *n) {
    if (!strcmp(n->op_type, "Range")) {
        mark_range_like(c, n);
        return;
    }
    bool expand = !strcmp(n->op_type, "Expand");
    if ((!expand && strcmp(n->op_type, "ConstantOfShape")) || n->input_count < 1u + expand ||
        n->outputs[0] == FE_NONE)
        return;
    const fe_value *s = fe_in(c, n, expand);
    if (!s || !s->shape_of_padded || s->type.rank != 1) return;
    uint32_t src = s->shape_of_padded - 1;
    const fe_type *o = &c->g->values[n->outputs[0]].type;
    int32_t at = (int32_t)(o->rank - s->type.dims[0]) + s->shape_padded_at;
    int32_t from = padded_dim(c, src);
    if (at < 0 || at >= o->rank || from < 0 || o->dims[at] != c->g->values[src].type.dims[from])
        return;
    if (expand) { /* the input broadcast along that dim, and not padded itself */
        const fe_type *x = fe_in_type(c, n, 0);
        int32_t xa = at - (o->rank - x->rank);
        if (padded_dim(c, n->inputs[0]) >= 0 || (xa >= 0 && x->dims[xa] != 1)) return;
    }
    fe_mark_padded(c, n->outputs[0], at, valid_of(c, src));
    c->g->values[n->outputs[0]].pad_dirty = true;
}

/* Carries a shape's record of which entry is a padded value's size
 * (shape_read) through what an exporter makes of it: x.size(0) (a Gather
 * of that entry), a scalar unsqueezed, a Concat with other sizes, casts;
 * a scalar's entry is itself (0). */
static void carry_shape_link(fe_ctx *c, const fe_node *n) {
    static const char *const moves[] = {"Identity", "Cast", "Unsqueeze", "Squeeze", NULL};
    uint32_t out = n->output_count ? n->outputs[0] : FE_NONE;
    if (out == FE_NONE || !n->input_count || !fe_has_in(n, 0)) return;
    if (c->g->values[out].type.rank > 1) return;
    uint32_t link = 0;
    int64_t at = 0;
    const fe_value *x = fe_in(c, n, 0);
    if (is_op(n, moves)) {
        link = x->shape_of_padded;
        at = x->shape_padded_at;
    } else if (!strcmp(n->op_type, "Gather") && n->input_count == 2 && x->shape_of_padded &&
               x->type.rank == 1) {
        const fe_tensor *idx = fe_in_const(c, n, 1);
        int64_t k = idx && idx->count == 1 ? fe_tensor_get_i64(idx, 0) : -1 - x->type.dims[0];
        if ((k < 0 ? k + x->type.dims[0] : k) == x->shape_padded_at) link = x->shape_of_padded;
    } else if (!strcmp(n->op_type, "Concat")) {
        int64_t offset = 0;
        for (uint32_t i = 0; i < n->input_count; i++) {
            const fe_value *p = fe_in(c, n, i);
            if (p->shape_of_padded) {
                if (link) return; /* two sizes of padded values: neither */
                link = p->shape_of_padded;
                at = offset + p->shape_padded_at;
            }
            offset += p->type.rank == 1 ? p->type.dims[0] : 1;
        }
    }
    if (link && at < FE_MAX_RANK) {
        c->g->values[out].shape_of_padded = link;
        c->g->values[out].shape_padded_at = (uint8_t)at;
    }
}

lm_status fe_padded_written(fe_ctx *c, const fe_node *n) {
    if (!n->pad_masked) carry_shape_link(c, n);
    if (!n->pad_masked) mark_shaped_like(c, n);
    if (!n->pad_masked) {
        int32_t d = n->input_count ? padded_dim(c, n->inputs[0]) : -1;
        if (d >= 0 && (!strcmp(n->op_type, "Reshape") || !strcmp(n->op_type, "Flatten"))) {
            lm_status st = mark_reshaped(c, n, d);
            if (st || c->expanded) return st; /* (merged: the copy comes next) */
        } else if (computes(c, n)) {
            if (per_entry(n) && n->outputs[0] != FE_NONE) {
                lm_status st = per_entry_written(c, n);
                if (st) return st;
            }
            /* What the op made of padding stays until a reader needs it
             * back: most compute in place or mask it out themselves. */
            for (uint32_t o = 0; o < n->output_count; o++)
                if (padded_dim(c, n->outputs[o]) >= 0) c->g->values[n->outputs[o]].pad_dirty = true;
        }
    }
    /* The graph's outputs hold fe_pad_value's padding. */
    for (uint32_t o = 0; o < n->output_count; o++) {
        const fe_value *v = n->outputs[o] == FE_NONE ? NULL : &c->g->values[n->outputs[o]];
        if (v && v->padded && v->pad_dirty && v->graph_output) return restore_padding(c, n);
    }
    return LM_OK;
}
