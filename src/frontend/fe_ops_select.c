/* Ops whose output shape is decided by a tensor's values: NonZero, Unique,
 * Compress and NonMaxSuppression. The binary has fixed shapes, so those
 * values must be known when compiling (constants, or graph inputs given
 * with --const; value_inputs says which). NonZero, Unique and
 * NonMaxSuppression then fold on the host. Compress with a known
 * condition is a gather of fixed rows: it runs on the device when its data
 * is computed at run time, and folds when the data is known too.
 *
 * An empty result is an empty constant (nothing runs for it), except
 * Unique's of an empty input, which is refused.
 *
 * With the options' padded outputs (pad_dynamic), run-time values run on
 * the device instead, into an output of the largest size the op can give:
 * NonMaxSuppression (nms_on_device: a table of overlaps, then lmnn_nms),
 * NonZero and Compress (the kept elements' places counted by a running
 * sum, then one scatter), and Unique of the flattened input (a sort, then
 * the groups numbered by a running sum and scattered). Such outputs are
 * marked padded, with which of their entries are results (fe_mark_padded),
 * and only the ops that keep padding apart may read them (fe_padded.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/fe_ops.h"
#include "frontend/fe_passes.h"

/* ---- NonZero ---- */

/* The most elements whose places a padded NonZero or Compress counts: its
 * running sum is exact on the device up to 2^24. */
#define PADDED_MAX_COUNT (1 << 24)

/* For padded NonZero and Compress, whose condition `cond` ([count]; value
 * `key` of the graph, flattened) is known only at run time: each entry's
 * place in the output, [count, 1] int64 -- the number of nonzero entries up
 * to it, less one, where it is nonzero, and `count` (past the end) where it
 * is zero; and in *out_valid which of `count` output places hold an entry
 * ([count] bool), the same value for every such op on `key`. */
static uint32_t kept_places(fe_build *b, uint32_t cond, fe_elem elem, int64_t count, uint32_t key,
                            uint32_t *out_valid) {
    uint32_t nz = cond;
    if (elem != FE_BOOL)
        nz = fe_b_op(b, "Not", fe_b_op(b, "Equal", cond, fe_b_const(b, elem, 0, NULL, 0)), FE_NONE);
    uint32_t running =
        fe_b_op(b, "CumSum", fe_b_cast(b, nz, FE_INT64), fe_b_const(b, FE_INT64, 0, NULL, 0));
    uint32_t shared = b->x.c->g->values[key].selected_valid;
    *out_valid = shared ? shared - 1
                        : fe_b_op(b, "Less", fe_b_iota(b, count),
                                  fe_b_slice(b, running, 0, count - 1, count));
    if (!b->st) b->x.c->g->values[key].selected_valid = *out_valid + 1;
    uint32_t place = fe_b_op(b, "Sub", running, fe_b_const(b, FE_INT64, 0, NULL, 1));
    return fe_b_unsqueeze(
        b, fe_b_where(b, nz, place, fe_b_const(b, FE_INT64, 0, NULL, (double)count)), 1);
}

/* A padded NonZero's or Compress's limit; `counted` names what has `count`
 * entries. */
static lm_status check_padded(fe_ctx *c, const fe_node *n, int64_t count, const char *counted) {
    if (count > PADDED_MAX_COUNT)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "with %s of %lld entries: padded, at most 2^24 (the device counts their "
                       "places in its exact integer range)",
                       counted, (long long)count);
    return LM_OK;
}

/* Ends a padded output's rewrite: marks node output `out` padded along
 * `dim`, `valid` saying which entries are results (fe_mark_padded), once
 * the rewrite is in place. */
static lm_status end_padded(fe_ctx *c, fe_build *b, uint32_t out, int32_t dim, uint32_t valid) {
    /* The rewrite reads padded inputs knowingly (fe_padded.c masks what
     * decides the selection): its own nodes keep padding out. */
    for (uint32_t i = 0; i < b->x.count; i++)
        b->x.nodes[i].pad_masked = true;
    lm_status st = fe_x_end(c, &b->x, b->st);
    if (!st) fe_mark_padded(c, out, dim, valid);
    return st;
}

/* The refusal of a NonZero or Compress whose input `i` decides the output's
 * size and is known only at run time, without pad_dynamic. */
static lm_status refuse_runtime(fe_ctx *c, const fe_node *n, uint32_t i, const char *what,
                                const char *padded) {
    const fe_value *v = fe_in(c, n, i);
    if (v->graph_input)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "input %u ('%s') is known only at run time, and with it %s: compile with "
                       "--pad-dynamic (options: pad_dynamic) for %s, or give it with --const "
                       "%s=FILE",
                       i, v->name, what, padded, v->name);
    return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                   "input %u ('%s') is known only at run time, and with it %s: compile with "
                   "--pad-dynamic (options: pad_dynamic) for %s, or with --graph-outputs "
                   "(options: outputs) up to values before this node",
                   i, v->name, what, padded);
}

/* NonZero of run-time data (opts->pad_dynamic): a column for every element
 * of x, the coordinates of the nonzero ones first, in row-major order, then
 * columns of -1. Each element's coordinates (a constant table, [count,
 * rank]) are scattered into a table of -1 at the element's place
 * (kept_places), the zero elements' past the end, where a scatter of
 * run-time indices drops them; the table is then transposed. */
static lm_status nonzero_padded(fe_ctx *c, const fe_node *n) {
    const fe_type *t = fe_in_type(c, n, 0);
    int64_t count = fe_type_volume(t), rank = t->rank;
    if (rank == 0 || count == 0) { /* no coordinates, or no elements */
        fe_tensor *e;
        lm_status st = fe_const_new(c, FE_INT64, 2, (const int64_t[]){rank, count}, &e);
        return st ? fe_nn_fail(c, n, st) : fe_set_out_const(c, n, 0, e);
    }
    lm_status st = check_padded(c, n, count, "run-time data");
    if (st) return st;
    fe_tensor *coords;
    if ((st = fe_const_new(c, FE_INT64, 2, (const int64_t[]){count, rank}, &coords)))
        return fe_nn_fail(c, n, st);
    for (int64_t i = 0; i < count; i++) {
        int64_t rest = i;
        for (int64_t d = rank - 1; d >= 0; d--) {
            fe_tensor_set_i64(coords, (uint64_t)(i * rank + d), rest % t->dims[d]);
            rest /= t->dims[d];
        }
    }
    fe_build bb = {.elem = FE_FLOAT}, *b = &bb;
    fe_x_begin(c, n, &b->x);
    const fe_node *nd = &b->x.node;
    uint32_t flat = fe_b_reshape(b, nd->inputs[0], &count, 1), table = FE_NONE;
    uint32_t valid, places = kept_places(b, flat, t->elem, count, nd->inputs[0], &valid);
    if (!b->st) b->st = fe_x_const(&b->x, coords, "coords", &table);
    uint32_t base = fe_b_const(b, FE_INT64, 2, (const int64_t[]){count, rank}, -1);
    uint32_t rows = fe_b_node(b, "ScatterND", 13, (const uint32_t[]){base, places, table}, 3, NULL);
    fe_node *tr = NULL;
    uint32_t out = fe_b_node(b, "Transpose", 13, &rows, 1, &tr);
    fe_b_ints_attr(b, tr, "perm", true, (const int64_t[]){1, 0}, 2);
    if (!b->st) b->st = fe_x_identity(&b->x, out, nd->outputs[0]);
    uint32_t result = nd->outputs[0], cond = nd->inputs[0];
    if ((st = end_padded(c, b, result, 1, valid))) return st;
    if (rank == 1) c->g->values[result].nonzero_of = cond + 1;
    return LM_OK;
}

static lm_status infer_nonzero(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (st) return st;
    if (fe_in_type(c, n, 0)->elem == FE_STRING)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "string tensors are not supported");
    const fe_tensor *x = fe_in_const(c, n, 0);
    if (!x && c->opts->pad_dynamic) return nonzero_padded(c, n);
    if (!x)
        return refuse_runtime(c, n, 0, "how many elements are nonzero",
                              "an output of a column per element, the unused ones -1");
    uint64_t nnz = 0;
    for (uint64_t i = 0; i < x->count; i++)
        nnz += fe_tensor_get_f64(x, i) != 0;
    /* [rank, nnz]: empty for a scalar (no coordinates) or when nothing is
     * nonzero. */
    int64_t dims[2] = {x->rank, (int64_t)nnz};
    fe_tensor *t;
    if ((st = fe_const_new(c, FE_INT64, 2, dims, &t))) return fe_nn_fail(c, n, st);
    /* Row d holds the d-th coordinate of each nonzero element, in row-major
     * order of the elements. */
    uint64_t k = 0;
    for (uint64_t i = 0; i < x->count; i++) {
        if (fe_tensor_get_f64(x, i) == 0) continue;
        uint64_t rest = i;
        for (int32_t d = (int32_t)x->rank - 1; d >= 0; d--) {
            fe_tensor_set_i64(t, (uint64_t)d * nnz + k, (int64_t)(rest % (uint64_t)x->dims[d]));
            rest /= (uint64_t)x->dims[d];
        }
        k++;
    }
    return fe_set_out_const(c, n, 0, t);
}

/* ---- TopK of a selection ----
 *
 * Detectors keep the scores above a threshold, then the best k of those:
 * torchvision's RetinaNet and FCOS, per feature level, keep = scores > t,
 * scores[keep].topk(k), and where(keep)[0] read at the TopK's indices.
 * Padded, the selection is as long as the scores, and a vector is stored
 * as tile rows: a RetinaNet level of 8.2M scores at 800 pixels made a
 * gigabyte for each vector of the selection's places, running sum and
 * scatter. Yet the best k of the selected scores are the best k of all
 * the scores with the others replaced by -inf, which every selected one
 * beats (a score above a threshold is neither -inf nor NaN), ties alike in
 * the scores' order; and the places of the selected scores read at the
 * TopK's indices are that TopK's own indices. So the TopK reads the scores
 * masked, each such read of the places becomes its indices, and the
 * selection is dead. Its results are the first min(k, selected) entries. */

/* The number of dims of t other than 1. */
static int32_t long_dims(const fe_type *t) {
    int32_t n = 0;
    for (int32_t a = 0; a < t->rank; a++)
        n += t->dims[a] != 1;
    return n;
}

/* The 1-D condition whose padded NonZero's places value v holds, moved
 * whole ([1, count], [count, 1], [count]), or FE_NONE. Every value on the
 * way has at most one dim other than 1 and as many elements, so each move
 * keeps the places in order (a Gather picks along a dim of 1, a Slice
 * steps forward). */
static uint32_t places_of(fe_ctx *c, uint32_t v) {
    static const char *const moves[] = {"Identity",  "Squeeze", "Unsqueeze", "Reshape", "Flatten",
                                        "Transpose", "Split",   "Gather",    "Slice",   NULL};
    const fe_graph *g = c->g;
    for (int depth = 0; v != FE_NONE && depth < 32; depth++) {
        const fe_value *val = &g->values[v];
        if (!fe_type_is_known(&val->type) || long_dims(&val->type) > 1) return FE_NONE;
        if (val->nonzero_of) return val->nonzero_of - 1;
        if (val->producer == FE_NONE) return FE_NONE;
        const fe_node *p = &g->nodes[val->producer];
        bool known = false;
        for (size_t k = 0; moves[k]; k++)
            known |= !strcmp(p->op_type, moves[k]);
        if (!known || !p->input_count || p->inputs[0] == FE_NONE) return FE_NONE;
        const fe_type *in = &g->values[p->inputs[0]].type;
        if (!fe_type_is_known(in) || fe_type_volume(in) != fe_type_volume(&val->type))
            return FE_NONE;
        int64_t a = 0;
        if (!strcmp(p->op_type, "Gather")) {
            if (fe_attr_int(c, p, "axis", 0, &a)) return FE_NONE;
            if (a < 0) a += in->rank;
            if (a < 0 || a >= in->rank || in->dims[a] != 1) return FE_NONE;
        }
        if (!strcmp(p->op_type, "Slice") && fe_has_in(p, 4)) {
            const fe_tensor *steps = g->values[p->inputs[4]].konst;
            for (uint64_t k = 0; steps && k < steps->count; k++)
                if (fe_tensor_get_i64(steps, k) < 1) return FE_NONE;
            if (!steps) return FE_NONE;
        }
        v = p->inputs[0];
    }
    return FE_NONE;
}

/* 1 when condition m selects the entries of x above a threshold (x > t,
 * t < x), -1 below (x < t, t > x), else 0; m as long as x. The threshold
 * in *out_t. */
static int selects_beyond(const fe_ctx *c, uint32_t m, uint32_t x, uint32_t *out_t) {
    const fe_value *mv = &c->g->values[m];
    if (mv->producer == FE_NONE || mv->type.rank != 1) return 0;
    const fe_node *p = &c->g->nodes[mv->producer];
    bool gt = !strcmp(p->op_type, "Greater"), lt = !strcmp(p->op_type, "Less");
    if ((!gt && !lt) || p->input_count != 2 || c->g->values[x].type.dims[0] != mv->type.dims[0])
        return 0;
    if (p->inputs[0] == x)
        *out_t = p->inputs[1];
    else if (p->inputs[1] == x)
        *out_t = p->inputs[0];
    else
        return 0;
    return (p->inputs[0] == x) == gt ? 1 : -1;
}

/* Elements of a value of type t as the device stores it in tiles (its
 * last two dims padded to multiples of 32; a vector as rows). */
static double tiled_elements(const fe_type *t) {
    double n = 1;
    for (int32_t a = 0; a + 2 < t->rank; a++)
        n *= (double)t->dims[a];
    int64_t h = t->rank >= 2 ? t->dims[t->rank - 2] : 1, w = t->rank ? t->dims[t->rank - 1] : 1;
    return n * (double)((h + 31) / 32 * 32) * (double)((w + 31) / 32 * 32);
}

/* What 1-D value x was reshaped from, when that is stored in fewer tiles
 * (a detector's scores, [1, anchors, classes], flattened), or FE_NONE. */
static uint32_t flattened_from(const fe_ctx *c, uint32_t x) {
    const fe_value *xv = &c->g->values[x];
    if (xv->producer == FE_NONE || strcmp(c->g->nodes[xv->producer].op_type, "Reshape"))
        return FE_NONE;
    uint32_t y = c->g->nodes[xv->producer].inputs[0];
    const fe_type *yt = &c->g->values[y].type;
    if (!fe_type_is_known(yt) || c->g->values[y].padded ||
        fe_type_volume(yt) != fe_type_volume(&xv->type) ||
        tiled_elements(yt) >= tiled_elements(&xv->type))
        return FE_NONE;
    return y;
}

/* The readers of TopK n's indices (node `self`) when each is a Gather
 * (axis 0) of the places of condition m at them, in out_readers[*out_count]
 * (at most `cap`); false when any other reads them. */
static bool places_readers(fe_ctx *c, const fe_node *n, uint32_t self, uint32_t m,
                           uint32_t *out_readers, uint32_t cap, uint32_t *out_count) {
    const fe_graph *g = c->g;
    uint32_t idx = n->outputs[1], count = 0;
    *out_count = 0;
    if (idx == FE_NONE) return true;
    if (g->values[idx].graph_output) return false;
    for (uint32_t k = 0; k < g->node_count; k++) {
        const fe_node *r = &g->nodes[k];
        for (uint32_t j = 0; j < r->implicit_count; j++)
            if (r->implicit[j] == idx) return false;
        for (uint32_t j = 0; j < r->input_count; j++) {
            if (r->inputs[j] != idx) continue;
            int64_t a = 0;
            if (k <= self || j != 1 || strcmp(r->op_type, "Gather") || r->input_count != 2 ||
                count == cap || fe_attr_int(c, r, "axis", 0, &a) || (a != 0 && a != -1) ||
                g->values[r->inputs[0]].type.rank != 1 || places_of(c, r->inputs[0]) != m)
                return false;
            out_readers[count++] = k;
        }
    }
    *out_count = count;
    return true;
}

lm_status fe_topk_of_selection(fe_ctx *c, const fe_node *n, int64_t k, bool largest,
                               bool *out_done) {
    *out_done = false;
    fe_graph *g = c->g;
    const fe_value *sv = &g->values[n->inputs[0]];
    if (sv->type.rank != 1 || sv->producer == FE_NONE || n->output_count != 2) return LM_OK;
    /* The selected values: x gathered at the places of m's trues. */
    const fe_node *p = &g->nodes[sv->producer];
    bool nd = !strcmp(p->op_type, "GatherND");
    int64_t a = 0;
    if ((!nd && strcmp(p->op_type, "Gather")) || p->input_count != 2 ||
        fe_attr_int(c, p, nd ? "batch_dims" : "axis", 0, &a) || (a != 0 && (nd || a != -1)))
        return LM_OK;
    uint32_t x = p->inputs[0], m = places_of(c, p->inputs[1]);
    const fe_type *xt = &g->values[x].type, *it = &g->values[p->inputs[1]].type;
    if (m == FE_NONE || xt->rank != 1 || !fe_elem_is_float(xt->elem) || g->values[x].padded ||
        (nd && (it->rank != 2 || it->dims[1] != 1)) || (!nd && it->rank != 1))
        return LM_OK;
    uint32_t t = FE_NONE;
    int dir = selects_beyond(c, m, x, &t);
    if (!dir || (dir > 0) != largest) return LM_OK;
    uint32_t self = (uint32_t)(n - g->nodes), readers[16], count;
    if (!places_readers(c, n, self, m, readers, 16, &count)) return LM_OK;
    /* The element-wise work on what x was flattened from, when that is
     * stored in fewer tiles: a vector's tile rows hold 32 times its
     * elements. */
    uint32_t src = flattened_from(c, x);
    const fe_type *tt = &g->values[t].type;
    if (src == FE_NONE || fe_type_volume(tt) != 1) src = x;
    int32_t rank = g->values[src].type.rank > tt->rank ? g->values[src].type.rank : tt->rank;
    int64_t all[FE_MAX_RANK], len = xt->dims[0];
    for (int32_t d = 0; d < rank; d++)
        all[d] = d;

    fe_elem e = xt->elem;
    uint32_t outs[2] = {n->outputs[0], n->outputs[1]};
    fe_build bb = {.elem = FE_FLOAT}, *b = &bb;
    fe_x_begin(c, n, &b->x);
    uint32_t cond = src == x ? m : fe_b_op(b, dir > 0 ? "Greater" : "Less", src, t);
    /* The record first: what puts padding back after the TopK reads it. */
    uint32_t selected = fe_b_sum(b, fe_b_cast(b, cond, FE_FLOAT), all, (uint32_t)rank);
    selected = fe_b_cast(b, fe_b_reshape(b, selected, (const int64_t[]){1}, 1), FE_INT64);
    uint32_t valid = fe_b_op(b, "Less", fe_b_iota(b, k), selected);
    uint32_t scores =
        fe_b_where(b, cond, src, fe_b_const(b, e, 0, NULL, largest ? -INFINITY : INFINITY));
    if (src != x) scores = fe_b_reshape(b, scores, &len, 1);
    fe_node *op = fe_b_copy_node(b);
    if (op) op->inputs[0] = scores;
    if (!b->st)
        for (uint32_t r = 0; r < count; r++) { /* idx[i] is i */
            fe_node *rd = &g->nodes[readers[r]];
            g->values[rd->inputs[0]].use_count--;
            rd->op_type = "Identity";
            rd->inputs[0] = outs[1];
            rd->input_count = 1;
            rd->attr_count = 0;
        }
    lm_status st = fe_x_end(c, &b->x, b->st);
    if (st) return st;
    for (uint32_t o = 0; o < 2; o++) {
        if (outs[o] == FE_NONE) continue;
        fe_mark_padded(c, outs[o], 0, valid);
        c->g->values[outs[o]].pad_dirty = true; /* -inf and its places */
    }
    *out_done = true;
    return LM_OK;
}

/* ---- Unique ---- */

/* The tensor seen as `slices` slices along an axis, each `outer` runs of
 * `inner` elements (`stride` apart: the axis's length times inner). */
typedef struct slices {
    const fe_tensor *x;
    uint64_t count, outer, inner;
    bool ints; /* compare as int64 (exact), else as double */
} slices;

static int compare_slices(const slices *s, uint64_t a, uint64_t b) {
    for (uint64_t o = 0; o < s->outer; o++)
        for (uint64_t i = 0; i < s->inner; i++) {
            uint64_t base = o * s->count * s->inner + i;
            uint64_t ia = base + a * s->inner, ib = base + b * s->inner;
            if (s->ints) {
                int64_t va = fe_tensor_get_i64(s->x, ia), vb = fe_tensor_get_i64(s->x, ib);
                if (va != vb) return va < vb ? -1 : 1;
            } else {
                double va = fe_tensor_get_f64(s->x, ia), vb = fe_tensor_get_f64(s->x, ib);
                if (va != vb) return va < vb ? -1 : 1;
            }
        }
    return 0;
}

/* Merge sort of slice numbers by content, stable, so that equal slices keep
 * their order (the first of a run is the first occurrence). */
static void sort_slices(const slices *s, uint64_t *v, uint64_t *tmp, uint64_t count) {
    if (count < 2) return;
    uint64_t half = count / 2;
    sort_slices(s, v, tmp, half);
    sort_slices(s, v + half, tmp, count - half);
    uint64_t i = 0, j = half, k = 0;
    while (i < half && j < count)
        tmp[k++] = compare_slices(s, v[j], v[i]) < 0 ? v[j++] : v[i++];
    while (i < half)
        tmp[k++] = v[i++];
    while (j < count)
        tmp[k++] = v[j++];
    memcpy(v, tmp, count * sizeof *v);
}

/* Unique's four results: the distinct slices (`first[g]`, in output order),
 * their count, and for each slice its group (`group`) and each group's size. */
typedef struct unique_result {
    uint64_t *first, *group, *size;
    uint64_t groups;
} unique_result;

static lm_status find_unique(const slices *s, bool sorted, unique_result *r) {
    uint64_t k = s->count;
    uint64_t *order = malloc(k * sizeof *order), *tmp = malloc(k * sizeof *tmp);
    r->first = malloc(k * sizeof *r->first);
    r->group = malloc(k * sizeof *r->group);
    r->size = calloc(k, sizeof *r->size);
    if (!order || !tmp || !r->first || !r->group || !r->size) {
        free(order);
        free(tmp);
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    }
    for (uint64_t i = 0; i < k; i++)
        order[i] = i;
    sort_slices(s, order, tmp, k);
    /* Runs of equal slices, in sorted order: rank[i] numbers the run of
     * order[i]. */
    r->groups = 0;
    for (uint64_t i = 0; i < k; i++) {
        if (i == 0 || compare_slices(s, order[i - 1], order[i]) != 0)
            r->first[r->groups++] = order[i];
        r->group[order[i]] = r->groups - 1;
    }
    if (!sorted) {
        /* Groups in the order their first slices come: renumber. */
        uint64_t *renum = tmp, g = 0;
        for (uint64_t i = 0; i < r->groups; i++)
            renum[i] = UINT64_MAX;
        for (uint64_t i = 0; i < k; i++)
            if (renum[r->group[i]] == UINT64_MAX) {
                renum[r->group[i]] = g;
                r->first[g++] = i;
            }
        for (uint64_t i = 0; i < k; i++)
            r->group[i] = renum[r->group[i]];
    }
    for (uint64_t i = 0; i < k; i++)
        r->size[r->group[i]]++;
    free(order);
    free(tmp);
    return LM_OK;
}

static lm_status int_vector(fe_ctx *c, const fe_node *n, uint32_t out, const uint64_t *v,
                            uint64_t count) {
    int64_t dims[1] = {(int64_t)count};
    fe_tensor *t;
    lm_status st = fe_const_new(c, FE_INT64, 1, dims, &t);
    if (st) return fe_nn_fail(c, n, st);
    for (uint64_t i = 0; i < count; i++)
        fe_tensor_set_i64(t, i, (int64_t)v[i]);
    return fe_set_out_const(c, n, out, t);
}

/* The most elements a padded Unique sorts: lmnn_topk keeps a row's
 * results in one core's L1. */
#define UNIQUE_MAX_COUNT 32768

/* Output i of the node, or FE_NONE when it does not ask for it. */
static uint32_t node_out(const fe_node *n, uint32_t i) {
    return i < n->output_count ? n->outputs[i] : FE_NONE;
}

/* `v` ([count]) sorted ascending (descending when `largest`), ties in
 * index order (TopK); the positions the sorted values came from in
 * *out_from. */
static uint32_t sort_by(fe_build *b, uint32_t v, int64_t count, bool largest, uint32_t *out_from) {
    uint32_t sorted = FE_NONE;
    *out_from = FE_NONE;
    if (!b->st && !(b->st = fe_x_value(&b->x, "sorted", &sorted)))
        b->st = fe_x_value(&b->x, "from", out_from);
    fe_node *topk = b->st ? NULL : fe_x_node(&b->x, "TopK", 11, 2, 2);
    if (!b->st && !topk) b->st = fe_x_oom();
    if (!topk) return FE_NONE;
    topk->inputs[0] = v;
    topk->inputs[1] = fe_b_ints(b, &count, 1);
    topk->outputs[0] = sorted;
    topk->outputs[1] = *out_from;
    fe_b_ints_attr(b, topk, "largest", false, (const int64_t[]){largest}, 1);
    fe_b_ints_attr(b, topk, "axis", false, (const int64_t[]){0}, 1);
    return sorted;
}

/* Unique of run-time values (opts->pad_dynamic), flattened (or a 1-D input
 * along its axis): Y, indices and counts get an entry per element, the
 * groups' first and then padding (NaN, -1 or false; -1), inverse_indices
 * its exact size. Device ops: the values sorted ascending (TopK, ties in
 * index order, so each group's first is its first occurrence), a new group
 * wherever a value differs from the one before (NaNs make one group, as
 * NumPy's unique), a running sum numbering the groups, then scatters by
 * group: the values and first indices (the groups' first entries), the
 * counts (a scatter-add of ones), and each element's group at its index.
 * With sorted 0 the groups are then put in the order of their first
 * occurrences (another TopK, of the first indices) and renumbered. */
static lm_status unique_padded(fe_ctx *c, const fe_node *n, bool sorted) {
    const fe_type *t = fe_in_type(c, n, 0);
    int64_t count = fe_type_volume(t);
    double pad;
    lm_status st = fe_padding_of(c, n, t->elem, "its outputs are", "input's", &pad);
    if (st) return st;
    if (count > UNIQUE_MAX_COUNT)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "with run-time values, %lld elements: padded, at most %d (they are "
                       "sorted on one core)",
                       (long long)count, UNIQUE_MAX_COUNT);
    fe_build bb = {.elem = FE_FLOAT}, *b = &bb;
    fe_x_begin(c, n, &b->x);
    const fe_node *nd = &b->x.node;
    fe_elem held = t->elem == FE_BOOL ? FE_INT32 : t->elem;
    uint32_t flat = fe_b_reshape(b, nd->inputs[0], &count, 1);
    if (held != t->elem) flat = fe_b_cast(b, flat, held);
    /* Sorted ascending, with where each value came from. */
    uint32_t from, v = sort_by(b, flat, count, false, &from);
    /* Whether each sorted value starts a group: the first, and any that
     * differs from the one before (two NaNs do not). */
    uint32_t fresh = fe_b_const(b, FE_BOOL, 1, (const int64_t[]){1}, 1);
    if (count > 1) {
        uint32_t cur = fe_b_slice(b, v, 0, 1, count), prev = fe_b_slice(b, v, 0, 0, count - 1);
        uint32_t same = fe_b_op(b, "Equal", cur, prev);
        if (fe_elem_is_float(held))
            same = fe_b_op(b, "Or", same,
                           fe_b_op(b, "And", fe_b_op(b, "IsNaN", cur, FE_NONE),
                                   fe_b_op(b, "IsNaN", prev, FE_NONE)));
        fresh = fe_b_concat(b, (const uint32_t[]){fresh, fe_b_op(b, "Not", same, FE_NONE)}, 2, 0);
    }
    uint32_t fresh_i = fe_b_cast(b, fresh, FE_INT64);
    uint32_t group =
        fe_b_op(b, "Sub", fe_b_op(b, "CumSum", fresh_i, fe_b_const(b, FE_INT64, 0, NULL, 0)),
                fe_b_const(b, FE_INT64, 0, NULL, 1));
    uint32_t first_at = fe_b_unsqueeze(
        b, fe_b_where(b, fresh, group, fe_b_const(b, FE_INT64, 0, NULL, (double)count)), 1);
    uint32_t groups = fe_b_sum(b, fresh_i, (const int64_t[]){0}, 1); /* [1] */
    int64_t one_d[1] = {count};
    uint32_t y =
        fe_b_node(b, "ScatterND", 13,
                  (const uint32_t[]){fe_b_const(b, held, 1, one_d, pad), first_at, v}, 3, NULL);
    uint32_t first = fe_b_node(
        b, "ScatterND", 13,
        (const uint32_t[]){fe_b_const(b, FE_INT64, 1, one_d, -1), first_at, from}, 3, NULL);
    fe_node *add = NULL;
    uint32_t sizes = fe_b_node(b, "ScatterElements", 16,
                               (const uint32_t[]){fe_b_const(b, FE_INT64, 1, one_d, 0), group,
                                                  fe_b_const(b, FE_INT64, 1, one_d, 1)},
                               3, &add);
    fe_b_attr(b, add,
              (fe_attr){.name = "reduction", .type = FE_ATTR_STRING, .s = "add", .s_len = 3});
    uint32_t positions = fe_b_iota(b, count);
    uint32_t real = fe_b_op(b, "Less", positions, groups);
    uint32_t counts = fe_b_where(b, real, sizes, fe_b_const(b, FE_INT64, 0, NULL, -1));
    /* Each element's group, at its own index. */
    uint32_t inverse = fe_b_node(
        b, "ScatterND", 13,
        (const uint32_t[]){fe_b_const(b, FE_INT64, 1, one_d, 0), fe_b_unsqueeze(b, from, 1), group},
        3, NULL);
    if (!sorted) {
        /* The groups in the order of their first occurrences (padding's
         * after: keyed past every index), and each group's new number. */
        uint32_t key = fe_b_where(b, real, first, fe_b_const(b, FE_INT64, 0, NULL, (double)count));
        uint32_t order;
        sort_by(b, key, count, false, &order);
        uint32_t renumber = fe_b_node(b, "ScatterND", 13,
                                      (const uint32_t[]){fe_b_const(b, FE_INT64, 1, one_d, 0),
                                                         fe_b_unsqueeze(b, order, 1), positions},
                                      3, NULL);
        y = fe_b_node(b, "Gather", 13, (const uint32_t[]){y, order}, 2, NULL);
        first = fe_b_node(b, "Gather", 13, (const uint32_t[]){first, order}, 2, NULL);
        counts = fe_b_node(b, "Gather", 13, (const uint32_t[]){counts, order}, 2, NULL);
        inverse = fe_b_node(b, "Gather", 13, (const uint32_t[]){renumber, inverse}, 2, NULL);
    }
    if (held != t->elem) y = fe_b_cast(b, y, t->elem);
    const uint32_t results[4] = {y, first, inverse, counts};
    for (uint32_t i = 0; i < 4; i++)
        if (!b->st && node_out(nd, i) != FE_NONE)
            b->st = fe_x_identity(&b->x, results[i], node_out(nd, i));
    /* Y, indices and counts are padded; inverse_indices is not. */
    uint32_t outs[3] = {node_out(nd, 0), node_out(nd, 1), node_out(nd, 3)};
    if ((st = end_padded(c, b, outs[0], 0, real))) return st;
    for (int i = 1; i < 3; i++)
        fe_mark_padded(c, outs[i], 0, real);
    return LM_OK;
}

static lm_status infer_unique(fe_ctx *c, const fe_node *n) {
    static const char *const known[] = {"axis", "sorted", NULL};
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st) st = fe_check_attrs(c, n, known);
    int64_t sorted, axis;
    if (!st) st = fe_attr_int(c, n, "sorted", 1, &sorted);
    if (!st) st = fe_attr_int(c, n, "axis", INT64_MIN, &axis);
    if (st) return st;
    const fe_type *tx = fe_in_type(c, n, 0);
    if (tx->elem == FE_STRING)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "string tensors are not supported");
    const fe_tensor *x = fe_in_const(c, n, 0);
    if (!x && fe_type_volume(tx) > 0) {
        bool flat = axis == INT64_MIN || tx->rank == 1;
        if (c->opts->pad_dynamic && flat) return unique_padded(c, n, sorted != 0);
        if (c->opts->pad_dynamic)
            return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                           "with run-time values, Unique along an axis of a %u-D input is not "
                           "supported (padded, it takes the flattened input or a 1-D one)",
                           tx->rank);
        return refuse_runtime(c, n, 0, "how many distinct values there are",
                              "outputs of an entry per element, the unused ones padding");
    }
    if ((st = fe_in_const_required(c, n, 0, &x))) return st;
    if (x->count == 0)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "an input with no elements is not supported");
    slices s = {.x = x, .outer = 1, .inner = 1, .ints = !fe_elem_is_float(x->elem)};
    int32_t a = -1;
    if (axis == INT64_MIN) {
        s.count = x->count; /* the flattened input */
    } else {
        if ((st = fe_axis(c, n, axis, (int32_t)x->rank, &a))) return st;
        s.count = (uint64_t)x->dims[a];
        for (int32_t d = 0; d < a; d++)
            s.outer *= (uint64_t)x->dims[d];
        for (uint32_t d = (uint32_t)a + 1; d < x->rank; d++)
            s.inner *= (uint64_t)x->dims[d];
    }
    unique_result r = {0};
    st = find_unique(&s, sorted != 0, &r);
    /* Y: the first slice of each group, along the axis (or flat). */
    int64_t dims[FE_MAX_RANK] = {(int64_t)r.groups};
    uint32_t rank = 1;
    if (a >= 0) {
        rank = x->rank;
        memcpy(dims, x->dims, rank * sizeof *dims);
        dims[a] = (int64_t)r.groups;
    }
    fe_tensor *y = NULL;
    if (!st && (st = fe_const_new(c, x->elem, rank, dims, &y))) st = fe_nn_fail(c, n, st);
    if (!st) {
        size_t es = fe_elem_size(x->elem);
        char *dst = (char *)y->data;
        for (uint64_t o = 0; o < s.outer; o++)
            for (uint64_t g = 0; g < r.groups; g++) {
                memcpy(dst, (const char *)x->data + ((o * s.count + r.first[g]) * s.inner) * es,
                       s.inner * es);
                dst += s.inner * es;
            }
        st = fe_set_out_const(c, n, 0, y);
    }
    if (!st && n->output_count > 1) st = int_vector(c, n, 1, r.first, r.groups);
    if (!st && n->output_count > 2) st = int_vector(c, n, 2, r.group, s.count);
    if (!st && n->output_count > 3) st = int_vector(c, n, 3, r.size, r.groups);
    free(r.first);
    free(r.group);
    free(r.size);
    return st;
}

/* ---- Compress ---- */

typedef struct compress_geom {
    int32_t axis;   /* -1: the flattened input */
    int64_t length; /* the axis's length (or the element count) */
    int64_t *keep;  /* the positions kept, in order (arena) */
    int64_t kept;
} compress_geom;

/* The axis and its length, and the condition's length; checks them. */
static lm_status compress_axis(fe_ctx *c, const fe_node *n, compress_geom *g, int64_t *cond_len) {
    static const char *const known[] = {"axis", NULL};
    lm_status st = fe_check_inputs(c, n, 2, 2);
    if (!st) st = fe_check_attrs(c, n, known);
    int64_t axis;
    if (!st) st = fe_attr_int(c, n, "axis", INT64_MIN, &axis);
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0), *ct = fe_in_type(c, n, 1);
    if (ct->rank != 1)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "condition must be 1-D, given rank %u", ct->rank);
    g->axis = -1;
    g->length = fe_type_volume(x);
    if (axis != INT64_MIN) {
        if ((st = fe_axis(c, n, axis, x->rank, &g->axis))) return st;
        g->length = x->dims[g->axis];
    }
    /* A condition shorter than the axis drops what it does not reach;
     * longer, its extra entries would select nothing there is. */
    *cond_len = ct->dims[0];
    if (*cond_len > g->length)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "condition has %lld entries but the %s has %lld",
                       (long long)*cond_len, g->axis < 0 ? "flattened input" : "axis",
                       (long long)g->length);
    return LM_OK;
}

static lm_status compress_geom_of(fe_ctx *c, const fe_node *n, compress_geom *g) {
    int64_t len;
    lm_status st = compress_axis(c, n, g, &len);
    const fe_tensor *cond = fe_in_const(c, n, 1);
    /* An empty condition keeps nothing, whatever it is. */
    if (!st && len > 0) st = fe_in_const_required(c, n, 1, &cond);
    if (st) return st;
    g->keep = fe_arena_alloc(&c->g->arena, (size_t)(len ? len : 1) * sizeof *g->keep);
    if (!g->keep) return fe_nn_fail(c, n, err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory"));
    g->kept = 0;
    for (int64_t i = 0; i < len; i++)
        if (fe_tensor_get_f64(cond, (uint64_t)i) != 0) g->keep[g->kept++] = i;
    return LM_OK; /* kept may be 0: an empty result */
}

/* Compress with a run-time condition (opts->pad_dynamic): along the axis
 * (or of the flattened data), a slice for every entry of the condition, the
 * kept ones first, in order, then padding (NaN, -1 or false by the data's
 * type). The data's slices, moved to the front, are scattered into padding
 * at their places (kept_places), those not kept past the end. */
static lm_status compress_padded(fe_ctx *c, const fe_node *n, const compress_geom *g, int64_t len) {
    const fe_type *x = fe_in_type(c, n, 0), *ct = fe_in_type(c, n, 1);
    double pad;
    lm_status st = fe_padding_of(c, n, x->elem, "its output is", "data's", &pad);
    if (!st) st = check_padded(c, n, len, "a run-time condition");
    if (st) return st;
    fe_build bb = {.elem = FE_FLOAT}, *b = &bb;
    fe_x_begin(c, n, &b->x);
    const fe_node *nd = &b->x.node;
    int32_t axis = g->axis < 0 ? 0 : g->axis, rank = g->axis < 0 ? 1 : x->rank;
    int64_t dims[FE_MAX_RANK] = {g->length};
    if (g->axis >= 0) memcpy(dims, x->dims, (size_t)rank * sizeof *dims);
    uint32_t data = g->axis < 0 ? fe_b_reshape(b, nd->inputs[0], dims, 1) : nd->inputs[0];
    if (len < g->length) data = fe_b_slice(b, data, axis, 0, len);
    dims[axis] = len;
    /* The axis first: perm moves it there, and back. */
    int64_t perm[FE_MAX_RANK], back[FE_MAX_RANK], moved[FE_MAX_RANK];
    for (int32_t d = 0, k = 1; d < rank; d++)
        if (d != axis) perm[k++] = d;
    perm[0] = axis;
    for (int32_t d = 0; d < rank; d++) {
        back[perm[d]] = d;
        moved[d] = dims[perm[d]];
    }
    fe_node *tn = NULL;
    if (axis != 0) {
        data = fe_b_node(b, "Transpose", 13, &data, 1, &tn);
        fe_b_ints_attr(b, tn, "perm", true, perm, rank);
    }
    /* Scatters move numbers: bool goes as int32, false as 0. */
    fe_elem held = x->elem == FE_BOOL ? FE_INT32 : x->elem;
    if (held != x->elem) data = fe_b_cast(b, data, held);
    uint32_t valid, places = kept_places(b, nd->inputs[1], ct->elem, len, nd->inputs[1], &valid);
    uint32_t base = fe_b_const(b, held, (uint32_t)rank, moved, pad);
    uint32_t out = fe_b_node(b, "ScatterND", 13, (const uint32_t[]){base, places, data}, 3, NULL);
    if (held != x->elem) out = fe_b_cast(b, out, x->elem);
    if (axis != 0) {
        out = fe_b_node(b, "Transpose", 13, &out, 1, &tn);
        fe_b_ints_attr(b, tn, "perm", true, back, rank);
    }
    if (!b->st) b->st = fe_x_identity(&b->x, out, nd->outputs[0]);
    return end_padded(c, b, nd->outputs[0], axis, valid);
}

static lm_status infer_compress(fe_ctx *c, const fe_node *n) {
    compress_geom g;
    int64_t len;
    lm_status st = compress_axis(c, n, &g, &len);
    if (st) return st;
    if (!fe_in_const(c, n, 1) && len > 0) {
        if (c->opts->pad_dynamic) return compress_padded(c, n, &g, len);
        return refuse_runtime(c, n, 1, "how many slices are kept",
                              "an output of a slice per entry of the condition, the unused ones "
                              "padding");
    }
    if ((st = compress_geom_of(c, n, &g))) return st;
    const fe_type *x = fe_in_type(c, n, 0);
    int64_t dims[FE_MAX_RANK] = {g.kept};
    int32_t rank = 1;
    if (g.axis >= 0) {
        rank = x->rank;
        memcpy(dims, x->dims, (size_t)rank * sizeof *dims);
        dims[g.axis] = g.kept;
    }
    const fe_tensor *kx = fe_in_const(c, n, 0);
    if (!kx) return fe_set_out_type(c, n, 0, x->elem, rank, dims);
    /* Known data: the kept slices, copied. */
    fe_tensor *t;
    if ((st = fe_const_new(c, kx->elem, (uint32_t)rank, dims, &t))) return fe_nn_fail(c, n, st);
    uint64_t outer = 1, inner = 1;
    for (int32_t d = 0; d < g.axis; d++)
        outer *= (uint64_t)x->dims[d];
    for (int32_t d = g.axis + 1; g.axis >= 0 && d < x->rank; d++)
        inner *= (uint64_t)x->dims[d];
    size_t es = fe_elem_size(kx->elem);
    char *dst = (char *)t->data;
    for (uint64_t o = 0; o < outer; o++)
        for (int64_t k = 0; k < g.kept; k++) {
            uint64_t at = (o * (uint64_t)g.length + (uint64_t)g.keep[k]) * inner;
            memcpy(dst, (const char *)kx->data + at * es, inner * es);
            dst += inner * es;
        }
    return fe_set_out_const(c, n, 0, t);
}

/* Run-time data: the kept positions as a row-major index table, then one
 * index_select along the axis (of the flattened data without one). */
static lm_status lower_compress(fe_ctx *c, const fe_node *n) {
    compress_geom g;
    lm_status st = compress_geom_of(c, n, &g);
    if (st) return st;
    const fe_type *x = fe_in_type(c, n, 0);
    fe_tensor *table;
    int64_t kept = g.kept;
    if ((st = fe_const_new(c, FE_INT64, 1, &kept, &table))) return fe_nn_fail(c, n, st);
    for (int64_t k = 0; k < kept; k++)
        fe_tensor_set_i64(table, (uint64_t)k, g.keep[k]);
    lmnn_tensor d, idx, flat = {0}, r;
    if ((st = fe_aux(c, n, 0, table, LMNN_ROW_MAJOR, &idx))) return st;
    if ((st = fe_in_dev(c, n, 0, &d))) return st;
    int32_t axis = g.axis;
    if (axis < 0) {
        int64_t count = fe_type_volume(x);
        lmnn_shape s1 = fe_shape(1, &count);
        if ((st = lmnn_reshape(d, &s1, NULL, &flat))) return fe_nn_fail(c, n, st);
        d = flat;
        axis = 0;
    }
    st = lmnn_index_select(d, axis, idx, NULL, &r);
    fe_free(flat);
    if (st) return fe_nn_fail(c, n, st);
    return fe_out_dev(c, n, 0, r);
}

/* ---- NonMaxSuppression ---- */

/* Box `i` of batch b as corners (y1 <= y2, x1 <= x2). */
static void nms_box(const fe_tensor *boxes, int64_t n, int64_t b, int64_t i, bool center,
                    double out[4]) {
    double v[4];
    for (int k = 0; k < 4; k++)
        v[k] = fe_tensor_get_f64(boxes, (uint64_t)((b * n + i) * 4 + k));
    if (center) { /* [x_center, y_center, width, height] */
        out[0] = v[1] - v[3] / 2;
        out[1] = v[0] - v[2] / 2;
        out[2] = v[1] + v[3] / 2;
        out[3] = v[0] + v[2] / 2;
    } else { /* [y1, x1, y2, x2], either diagonal */
        out[0] = v[0] < v[2] ? v[0] : v[2];
        out[1] = v[1] < v[3] ? v[1] : v[3];
        out[2] = v[0] < v[2] ? v[2] : v[0];
        out[3] = v[1] < v[3] ? v[3] : v[1];
    }
}

static double nms_iou(const double a[4], const double b[4]) {
    double area_a = (a[2] - a[0]) * (a[3] - a[1]), area_b = (b[2] - b[0]) * (b[3] - b[1]);
    if (area_a <= 0 || area_b <= 0) return 0;
    double h = (a[2] < b[2] ? a[2] : b[2]) - (a[0] > b[0] ? a[0] : b[0]);
    double w = (a[3] < b[3] ? a[3] : b[3]) - (a[1] > b[1] ? a[1] : b[1]);
    if (h <= 0 || w <= 0) return 0;
    return h * w / (area_a + area_b - h * w);
}

typedef struct nms_candidate {
    double score;
    int64_t index;
} nms_candidate;

/* Higher scores first; equal scores in box order. */
static int nms_order(const void *pa, const void *pb) {
    const nms_candidate *a = pa, *b = pb;
    if (a->score != b->score) return a->score > b->score ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

/* An optional scalar input's value, or `def`. */
static lm_status nms_scalar(fe_ctx *c, const fe_node *n, uint32_t i, double def, double *out) {
    *out = def;
    if (!fe_has_in(n, i)) return LM_OK;
    const fe_tensor *t;
    lm_status st = fe_in_const_required(c, n, i, &t);
    if (st) return st;
    if (t->count != 1) return fe_fail(c, n, LM_ERR_INVALID_FILE, "input %u must be one value", i);
    *out = fe_tensor_get_f64(t, 0);
    return LM_OK;
}

/* The most entries of the table of which boxes overlap ([batch, boxes,
 * boxes]) made whole. More boxes of one batch entry and class go by blocks
 * of NMS_BLOCK (nms_blocked), comparing at most NMS_MAX_PAIRS pairs of
 * boxes; TopK sorts at most NMS_SORT boxes at once. */
enum { NMS_MAX_TABLE = 1 << 27, NMS_MAX_PAIRS = 1 << 30, NMS_BLOCK = 1024, NMS_SORT = 32768 };
/* TopK's rounds for the most boxes the pairs allow (a block's own table
 * alone compares NMS_BLOCK pairs a box). */
enum { NMS_SORT_ROUNDS = NMS_MAX_PAIRS / NMS_BLOCK / NMS_SORT };

/* Boxes as their extents along y and x and their areas, from their four
 * coordinates `v` (any one shape each). */
typedef struct nms_extents {
    uint32_t lo[2], hi[2], area;
} nms_extents;

static nms_extents box_extents(fe_build *b, const uint32_t v[4], bool center) {
    nms_extents e;
    for (int a = 0; a < 2; a++) {
        if (center) { /* [x_center, y_center, width, height] */
            uint32_t mid = v[1 - a], half = fe_b_op(b, "Mul", v[3 - a], fe_b_scalar(b, 0.5));
            e.lo[a] = fe_b_op(b, "Sub", mid, half);
            e.hi[a] = fe_b_op(b, "Add", mid, half);
        } else { /* [y1, x1, y2, x2], either diagonal */
            e.lo[a] = fe_b_op(b, "Min", v[a], v[a + 2]);
            e.hi[a] = fe_b_op(b, "Max", v[a], v[a + 2]);
        }
    }
    e.area =
        fe_b_op(b, "Mul", fe_b_op(b, "Sub", e.hi[0], e.lo[0]), fe_b_op(b, "Sub", e.hi[1], e.lo[1]));
    return e;
}

/* Whether boxes i overlap boxes j (IoU above iou_max; a box of no area
 * overlaps nothing), 0/1 float32 as their shapes broadcast. */
static uint32_t box_overlaps(fe_build *b, const nms_extents *i, const nms_extents *j,
                             double iou_max) {
    uint32_t side[2], zero = fe_b_scalar(b, 0.0);
    for (int a = 0; a < 2; a++)
        side[a] = fe_b_op(b, "Relu",
                          fe_b_op(b, "Sub", fe_b_op(b, "Min", i->hi[a], j->hi[a]),
                                  fe_b_op(b, "Max", i->lo[a], j->lo[a])),
                          FE_NONE);
    uint32_t inter = fe_b_op(b, "Mul", side[0], side[1]);
    uint32_t iou =
        fe_b_op(b, "Div", inter, fe_b_op(b, "Sub", fe_b_op(b, "Add", i->area, j->area), inter));
    uint32_t both = fe_b_op(b, "And", fe_b_op(b, "Greater", i->area, zero),
                            fe_b_op(b, "Greater", j->area, zero));
    return fe_b_cast(b,
                     fe_b_op(b, "Greater", fe_b_where(b, both, iou, zero), fe_b_scalar(b, iou_max)),
                     FE_FLOAT);
}

/* The rewritten node's boxes and scores (types tb, ts) as float32. */
static void nms_float_inputs(fe_build *b, const fe_type *tb, const fe_type *ts, uint32_t *boxes,
                             uint32_t *scores) {
    *boxes = b->x.node.inputs[0];
    *scores = b->x.node.inputs[1];
    if (tb->elem != FE_FLOAT) *boxes = fe_b_cast(b, *boxes, FE_FLOAT);
    if (ts->elem != FE_FLOAT) *scores = fe_b_cast(b, *scores, FE_FLOAT);
}

/* A NonMaxSuppression node marked to read a table of overlaps (lower_nms:
 * lmnn_nms), on inputs in[count]; its output. */
static uint32_t nms_marked(fe_build *b, const fe_node *nd, uint32_t *in, uint32_t count,
                           bool center) {
    fe_node *sel = NULL;
    uint32_t out = fe_b_node(b, "NonMaxSuppression", nd->opset, in, count, &sel);
    if (sel) {
        sel->nms_overlaps = true;
        fe_b_ints_attr(b, sel, "center_point_box", false, (const int64_t[]){center}, 1);
    }
    return out;
}

/* key ([count], no NaN) sorted descending, ties in index order, by TopK in
 * rounds of NMS_SORT: what a round took (every entry above its last, and
 * those equal to it up to its index) becomes -inf for the next rounds.
 * Every entry above -inf comes once, in order, before the rest (an entry
 * taken early may come again later as -inf, where nothing reads it). */
static uint32_t sort_desc(fe_build *b, uint32_t key, int64_t count, uint32_t *out_from) {
    if (count <= NMS_SORT) return sort_by(b, key, count, true, out_from);
    uint32_t sorted[NMS_SORT_ROUNDS], from[NMS_SORT_ROUNDS], rounds = 0;
    uint32_t at = fe_b_iota(b, count), low = fe_b_scalar(b, -INFINITY);
    for (int64_t done = 0; done < count && rounds < NMS_SORT_ROUNDS; rounds++) {
        int64_t take = count - done < NMS_SORT ? count - done : NMS_SORT;
        sorted[rounds] = sort_by(b, key, take, true, &from[rounds]);
        done += take;
        if (done < count) {
            uint32_t last = fe_b_slice(b, sorted[rounds], 0, take - 1, take);
            uint32_t last_at = fe_b_slice(b, from[rounds], 0, take - 1, take);
            uint32_t tied = fe_b_op(b, "And", fe_b_op(b, "Equal", key, last),
                                    fe_b_op(b, "LessOrEqual", at, last_at));
            uint32_t taken = fe_b_op(b, "Or", fe_b_op(b, "Greater", key, last), tied);
            key = fe_b_where(b, taken, low, key);
        }
    }
    *out_from = fe_b_concat(b, from, rounds, 0);
    return fe_b_concat(b, sorted, rounds, 0);
}

/* Pairs of boxes nms_blocked compares for `count` boxes of which `cap`
 * kept ones are read. */
static uint64_t nms_blocked_pairs(int64_t count, int64_t cap) {
    uint64_t pairs = 0;
    for (int64_t r0 = 0; r0 < count; r0 += NMS_BLOCK) {
        uint64_t len = (uint64_t)(count - r0 < NMS_BLOCK ? count - r0 : NMS_BLOCK);
        pairs += (uint64_t)(r0 < cap ? r0 : cap) * len + len * len;
    }
    return pairs;
}

/* One batch entry and class of more boxes than a whole table takes
 * (opts->pad_dynamic), of which the model reads the first `cap` selected
 * (fe_nms_resolve). The boxes sorted by score (candidates: above the
 * threshold), then a block of NMS_BLOCK at a time: a box of the block is
 * out when a box kept before it overlaps it -- the list of kept boxes holds
 * the first `cap`, their extents and index, zero area past its count (a
 * box of no area overlaps nothing) -- and the rest go through lmnn_nms on
 * the block's own table (their scores in order, so it keeps them as the
 * greedy rounds over all would); the block's kept boxes then join the list
 * (a scatter past the count, those beyond `cap` dropped). The first `cap`
 * rows are exact: a box kept after them is never compared, but it would be
 * selected later than they were. Rows (0, 0, box), then -1; the record of
 * which rows are results is written into `valid_out`. */
static lm_status nms_blocked(fe_ctx *c, const fe_node *n, int64_t rows, int64_t cap,
                             uint32_t valid_out, uint32_t *out_nodes) {
    const fe_type *tb = fe_in_type(c, n, 0), *ts = fe_in_type(c, n, 1);
    int64_t N = tb->dims[1], center;
    double score_min, iou_max;
    lm_status st = fe_attr_int(c, n, "center_point_box", 0, &center);
    if (!st) st = nms_scalar(c, n, 3, 0, &iou_max);
    if (!st) st = nms_scalar(c, n, 4, -INFINITY, &score_min);
    if (st) return st;
    fe_build bb = {.elem = FE_FLOAT}, *b = &bb;
    fe_x_begin(c, n, &b->x);
    const fe_node *nd = &b->x.node;
    uint32_t boxes, scores;
    nms_float_inputs(b, tb, ts, &boxes, &scores);
    boxes = fe_b_reshape(b, boxes, (const int64_t[]){N, 4}, 2);
    scores = fe_b_reshape(b, scores, &N, 1);
    /* Candidates (NaN is none) by score, best first; the rest last. */
    uint32_t low = fe_b_scalar(b, -INFINITY);
    uint32_t key =
        fe_b_where(b, fe_b_op(b, "Greater", scores, fe_b_scalar(b, score_min)), scores, low);
    uint32_t order, sorted = sort_desc(b, key, N, &order);
    uint32_t alive = fe_b_op(b, "Greater", sorted, low);
    uint32_t by_score = fe_b_node(b, "Gather", 13, (const uint32_t[]){boxes, order}, 2, NULL);
    uint32_t col[4], row[4];
    for (int64_t k = 0; k < 4; k++) {
        col[k] = fe_b_slice(b, by_score, 1, k, k + 1); /* [N, 1] */
        row[k] = fe_b_reshape(b, col[k], (const int64_t[]){1, N}, 2);
    }
    nms_extents ec = box_extents(b, col, !!center), er = box_extents(b, row, !!center);
    /* Each box's record in the list: its extents, area and index, [N, 6]. */
    uint32_t fields[6] = {ec.lo[0], ec.lo[1], ec.hi[0],
                          ec.hi[1], ec.area,  fe_b_cast(b, fe_b_unsqueeze(b, order, 1), FE_FLOAT)};
    uint32_t record = fe_b_concat(b, fields, 6, 1);
    uint32_t list = fe_b_const(b, FE_FLOAT, 2, (const int64_t[]){cap, 6}, 0);
    uint32_t count = fe_b_const(b, FE_INT64, 1, (const int64_t[]){1}, 0);
    for (int64_t r0 = 0; r0 < N && !b->st; r0 += NMS_BLOCK) {
        int64_t r1 = r0 + NMS_BLOCK < N ? r0 + NMS_BLOCK : N, len = r1 - r0;
        int64_t held = r0 < cap ? r0 : cap; /* the list's entries that may be filled */
        nms_extents bi, bj;
        for (int a = 0; a < 2; a++) {
            bi.lo[a] = fe_b_slice(b, ec.lo[a], 0, r0, r1);
            bi.hi[a] = fe_b_slice(b, ec.hi[a], 0, r0, r1);
            bj.lo[a] = fe_b_slice(b, er.lo[a], 1, r0, r1);
            bj.hi[a] = fe_b_slice(b, er.hi[a], 1, r0, r1);
        }
        bi.area = fe_b_slice(b, ec.area, 0, r0, r1);
        bj.area = fe_b_slice(b, er.area, 1, r0, r1);
        uint32_t in = fe_b_slice(b, alive, 0, r0, r1);
        if (held > 0) { /* out when a box kept before overlaps it */
            uint32_t kept = fe_b_slice(b, list, 0, 0, held);
            nms_extents prev;
            for (int a = 0; a < 2; a++) {
                prev.lo[a] = fe_b_slice(b, kept, 1, a, a + 1);
                prev.hi[a] = fe_b_slice(b, kept, 1, 2 + a, 3 + a);
            }
            prev.area = fe_b_slice(b, kept, 1, 4, 5);
            uint32_t hits =
                fe_b_sum(b, box_overlaps(b, &prev, &bj, iou_max), (const int64_t[]){0}, 1);
            uint32_t hit =
                fe_b_op(b, "Greater", fe_b_reshape(b, hits, &len, 1), fe_b_scalar(b, 0.5));
            in = fe_b_op(b, "And", in, fe_b_op(b, "Not", hit, FE_NONE));
        }
        uint32_t sc = fe_b_where(b, in, fe_b_slice(b, sorted, 0, r0, r1), fe_b_scalar(b, NAN));
        uint32_t table =
            fe_b_reshape(b, box_overlaps(b, &bi, &bj, iou_max), (const int64_t[]){1, len, len}, 3);
        uint32_t sel_in[3] = {table, fe_b_reshape(b, sc, (const int64_t[]){1, 1, len}, 3),
                              fe_b_ints(b, &len, 1)};
        uint32_t sel = nms_marked(b, nd, sel_in, 3, !!center);
        /* The block's kept boxes as 0/1 [len]: rows (0, 0, j), then -1. */
        uint32_t picked = fe_b_slice(b, sel, 1, 2, 3); /* [len, 1] */
        uint32_t at = fe_b_reshape(b, fe_b_iota(b, len), (const int64_t[]){1, len}, 2);
        uint32_t hit_at = fe_b_cast(b, fe_b_op(b, "Equal", picked, at), FE_INT64);
        uint32_t mine = fe_b_reshape(b, fe_b_sum(b, hit_at, (const int64_t[]){0}, 1), &len, 1);
        /* ... into the list after the count (past `cap`: dropped). */
        uint32_t running = fe_b_op(b, "CumSum", mine, fe_b_const(b, FE_INT64, 0, NULL, 0));
        uint32_t place = fe_b_op(b, "Sub", fe_b_op(b, "Add", running, count),
                                 fe_b_const(b, FE_INT64, 0, NULL, 1));
        uint32_t to =
            fe_b_where(b, fe_b_op(b, "Greater", mine, fe_b_const(b, FE_INT64, 0, NULL, 0)), place,
                       fe_b_const(b, FE_INT64, 0, NULL, (double)cap));
        uint32_t in3[3] = {list, fe_b_unsqueeze(b, to, 1), fe_b_slice(b, record, 0, r0, r1)};
        list = fe_b_node(b, "ScatterND", 13, in3, 3, NULL);
        count = fe_b_op(b, "Add", count, fe_b_sum(b, mine, (const int64_t[]){0}, 1));
    }
    /* Rows (0, 0, box) of the list's first `count` (past `cap`, boxes
     * compared with the first `cap` kept only: no rows), then -1. */
    count = fe_b_op(b, "Min", count, fe_b_const(b, FE_INT64, 1, (const int64_t[]){1}, (double)cap));
    uint32_t valid = fe_b_op(b, "Less", fe_b_iota(b, rows), count);
    uint32_t box = fe_b_cast(b, fe_b_slice(b, list, 1, 5, 6), FE_INT64);
    uint32_t sel = fe_b_concat(
        b, (const uint32_t[]){fe_b_const(b, FE_INT64, 2, (const int64_t[]){cap, 2}, 0), box}, 2, 1);
    if (rows > cap) {
        uint32_t rest = fe_b_const(b, FE_INT64, 2, (const int64_t[]){rows - cap, 3}, -1);
        sel = fe_b_concat(b, (const uint32_t[]){sel, rest}, 2, 0);
    }
    uint32_t out =
        fe_b_where(b, fe_b_unsqueeze(b, valid, 1), sel, fe_b_const(b, FE_INT64, 0, NULL, -1));
    if (!b->st) b->st = fe_x_identity(&b->x, out, nd->outputs[0]);
    if (!b->st) b->st = fe_x_identity(&b->x, valid, valid_out);
    *out_nodes = b->x.count;
    return end_padded(c, b, nd->outputs[0], 0, valid_out);
}

/* How many of its first entries along dim 0 the model reads of value v, at
 * most `all` (fe_nms_resolve): through readers that keep each entry at its
 * place along dim 0 (element-wise ops of the same rank, Gather of other
 * dims or by v's entries along dim 0, Squeeze and Unsqueeze of other dims,
 * Concat along another dim, Slice of other dims) up to a Slice of dim 0
 * from its start. Any other reader, a graph output or a reader kept only
 * at run time (not folded) reads all. */
static int64_t leading_read(fe_ctx *c, uint32_t v, int64_t all, int depth);

static int64_t read_by(fe_ctx *c, const fe_node *r, uint32_t i, int64_t all, int depth) {
    const fe_graph *g = c->g;
    if (r->output_count < 1 || r->outputs[0] == FE_NONE) return all;
    uint32_t o = r->outputs[0];
    const fe_type *tin = &g->values[r->inputs[i]].type, *tout = &g->values[o].type;
    if (tin->rank < 1 || tout->rank < 1) return all;
    int64_t axis = 0;
    const int64_t *axes = NULL;
    size_t axis_count = 0;
    if (!strcmp(r->op_type, "Gather") || !strcmp(r->op_type, "Concat")) {
        if (fe_attr_int(c, r, "axis", 0, &axis)) return all;
        if (axis < 0) axis += g->values[r->inputs[0]].type.rank; /* data's (Concat: any input's) */
        if (!strcmp(r->op_type, "Concat") ? axis != 0 : (i == 0) == (axis != 0))
            return leading_read(c, o, all, depth + 1);
        return all;
    }
    if (!strcmp(r->op_type, "Squeeze") || !strcmp(r->op_type, "Unsqueeze")) {
        const fe_tensor *t = r->input_count > 1 ? g->values[r->inputs[1]].konst : NULL;
        int32_t rank = !strcmp(r->op_type, "Squeeze") ? tin->rank : tout->rank;
        if (i != 0 || (r->input_count > 1 && !t)) return all;
        if (!t && fe_attr_ints(c, r, "axes", &axes, &axis_count)) return all;
        uint64_t k_count = t ? t->count : axis_count;
        if (!k_count && !strcmp(r->op_type, "Squeeze")) return all; /* every dim of 1 */
        for (uint64_t k = 0; k < k_count; k++) {
            int64_t a = t ? fe_tensor_get_i64(t, k) : axes[k];
            if (a == 0 || a == -(int64_t)rank) return all;
        }
        return leading_read(c, o, all, depth + 1);
    }
    if (!strcmp(r->op_type, "Slice")) {
        const fe_tensor *st = NULL, *en = NULL, *ax = NULL, *sp = NULL;
        if (i != 0 || r->input_count < 3 || !(st = g->values[r->inputs[1]].konst) ||
            !(en = g->values[r->inputs[2]].konst) ||
            (fe_has_in(r, 3) && !(ax = g->values[r->inputs[3]].konst)) ||
            (fe_has_in(r, 4) && !(sp = g->values[r->inputs[4]].konst)))
            return all;
        for (uint64_t k = 0; k < st->count && k < en->count; k++) {
            int64_t a = ax ? fe_tensor_get_i64(ax, k) : (int64_t)k;
            if (a != 0 && a != -(int64_t)tin->rank) continue;
            int64_t from = fe_tensor_get_i64(st, k), to = fe_tensor_get_i64(en, k);
            if ((sp && fe_tensor_get_i64(sp, k) != 1) || from != 0 || to < 0) return all;
            return to < all ? to : all; /* the first `to` of dim 0 */
        }
        return leading_read(c, o, all, depth + 1);
    }
    for (size_t k = 0; k < fe_ops_eltwise_count; k++)
        if (!strcmp(fe_ops_eltwise[k].op_type, r->op_type))
            return tin->rank == tout->rank && tin->dims[0] == tout->dims[0]
                       ? leading_read(c, o, all, depth + 1)
                       : all;
    return all;
}

static int64_t leading_read(fe_ctx *c, uint32_t v, int64_t all, int depth) {
    const fe_graph *g = c->g;
    if (g->values[v].graph_output || depth > 64) return all;
    int64_t most = 0;
    for (uint32_t k = 0; k < g->node_count && most < all; k++) {
        const fe_node *r = &g->nodes[k];
        if (c->plans[k].placement == LMFE_FOLDED) continue; /* reads v's type only */
        for (uint32_t i = 0; i < r->input_count && most < all; i++) {
            if (r->inputs[i] != v) continue;
            int64_t got = read_by(c, r, i, all, depth);
            if (got > most) most = got;
        }
    }
    return most;
}

/* Puts off the rewrite of a NonMaxSuppression of one batch entry and class
 * of more boxes than a table takes until inference has reached every
 * reader (fe_nms_resolve): its output typed and padded now, by a record of
 * results that the rewrite will write. */
static lm_status nms_wait(fe_ctx *c, const fe_node *n, int64_t rows) {
    lm_status st = fe_set_out_type(c, n, 0, FE_INT64, 2, (const int64_t[]){rows, 3});
    if (st) return st;
    if (c->nms_waiting_count == c->nms_waiting_cap) {
        uint32_t cap = c->nms_waiting_cap ? 2 * c->nms_waiting_cap : 4;
        uint32_t(*w)[2] = realloc(c->nms_waiting, cap * sizeof *w);
        if (!w) return fe_x_oom();
        c->nms_waiting = w;
        c->nms_waiting_cap = cap;
    }
    fe_expansion x;
    fe_x_begin(c, n, &x);
    uint32_t valid;
    if ((st = fe_x_value(&x, "valid", &valid))) return st;
    fe_type *t = &c->g->values[valid].type;
    t->elem = FE_BOOL;
    t->rank = 1;
    t->dims[0] = rows;
    c->nms_waiting[c->nms_waiting_count][0] = n->outputs[0];
    c->nms_waiting[c->nms_waiting_count++][1] = valid;
    fe_mark_padded(c, n->outputs[0], 0, valid);
    return LM_OK;
}

lm_status fe_nms_resolve(fe_ctx *c) {
    fe_graph *g = c->g;
    for (uint32_t w = 0; w < c->nms_waiting_count; w++) {
        uint32_t out = c->nms_waiting[w][0], valid = c->nms_waiting[w][1], k = 0;
        while (k < g->node_count &&
               (g->nodes[k].output_count < 1 || g->nodes[k].outputs[0] != out ||
                strcmp(g->nodes[k].op_type, "NonMaxSuppression")))
            k++;
        if (k == g->node_count)
            return err_set(LM_ERR_INTERNAL, "a NonMaxSuppression waiting to be rewritten is gone");
        const fe_node *n = &g->nodes[k];
        c->current = n;
        int64_t rows = g->values[out].type.dims[0], N = fe_in_type(c, n, 0)->dims[1];
        /* The rows read: of the selection, and of its record of results
         * (which a count of them reads whole). */
        int64_t cap = leading_read(c, out, rows, 0), cap_valid = leading_read(c, valid, rows, 0);
        if (cap_valid > cap) cap = cap_valid;
        if (cap < 1) cap = 1;
        uint64_t pairs = nms_blocked_pairs(N, cap);
        if (pairs > NMS_MAX_PAIRS || N > PADDED_MAX_COUNT)
            return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                           "with run-time boxes, %lld boxes of which the model reads the first "
                           "%lld selected compare %llu pairs of boxes (at most 2^30; a Slice of "
                           "the selection from its start reads fewer): compile with "
                           "--graph-outputs (options: outputs) up to the boxes and scores, and "
                           "select them in the program that reads the binary's outputs",
                           (long long)N, (long long)cap, (unsigned long long)pairs);
        uint32_t added = 0;
        lm_status st = nms_blocked(c, n, rows, cap, valid, &added);
        if (!st) st = fe_infer_range(c, k, k + added);
        if (st) return st;
    }
    c->current = NULL;
    return LM_OK;
}

/* The selection on the device, for run-time boxes or scores
 * (opts->pad_dynamic): the node gives way to ops computing which boxes
 * overlap (IoU above the threshold; a box of no area overlaps nothing), a
 * [batch, boxes, boxes] 0/1 table in float32, and a NonMaxSuppression node
 * marked to read that table instead of boxes, which lmnn_nms runs (the
 * greedy rounds of every batch entry and class, and the packing into
 * ONNX's order: batch, class, then score; rows past the last pick -1).
 * More boxes than the table takes go by blocks (nms_blocked) for one batch
 * entry and class. */
static lm_status nms_on_device(fe_ctx *c, const fe_node *n, bool center, double iou_max,
                               int64_t rows) {
    const fe_type *tb = fe_in_type(c, n, 0), *ts = fe_in_type(c, n, 1);
    int64_t B = tb->dims[0], N = tb->dims[1];
    if (N > NMS_MAX_TABLE / N / B) {
        if (B == 1 && ts->dims[1] == 1) return nms_wait(c, n, rows);
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "with run-time boxes, %lld batch entries of %lld boxes make a table of "
                       "overlaps over %d entries (batch entries x boxes x boxes; more boxes are "
                       "compared by blocks for one batch entry of one class only, given %lld x "
                       "%lld): compile with --graph-outputs (options: outputs) up to the boxes "
                       "and scores, and select them in the program that reads the binary's "
                       "outputs",
                       (long long)B, (long long)N, NMS_MAX_TABLE, (long long)B,
                       (long long)ts->dims[1]);
    }
    fe_build bb = {.elem = FE_FLOAT}, *b = &bb;
    fe_x_begin(c, n, &b->x);
    const fe_node *nd = &b->x.node;
    uint32_t boxes, scores;
    nms_float_inputs(b, tb, ts, &boxes, &scores);
    /* Whether box i's IoU with box j is above the threshold, [B, N, N] as
     * 0/1: each box's extents and area as [B, N, 1] (i) and [B, 1, N] (j). */
    uint32_t as_i[4], as_j[4];
    for (int64_t k = 0; k < 4; k++) {
        uint32_t coord = fe_b_slice(b, boxes, 2, k, k + 1);
        as_i[k] = fe_b_reshape(b, coord, (const int64_t[]){B, N, 1}, 3);
        as_j[k] = fe_b_reshape(b, coord, (const int64_t[]){B, 1, N}, 3);
    }
    nms_extents ei = box_extents(b, as_i, center), ej = box_extents(b, as_j, center);
    uint32_t over = box_overlaps(b, &ei, &ej, iou_max);
    /* The selection: this node again, on the table (its scalar inputs as
     * they were). */
    uint32_t in[5] = {over, scores, FE_NONE, FE_NONE, FE_NONE};
    for (uint32_t i = 2; i < nd->input_count && i < 5; i++)
        in[i] = nd->inputs[i];
    uint32_t out = nms_marked(b, nd, in, nd->input_count < 5 ? nd->input_count : 5, center);
    if (!b->st) b->st = fe_x_identity(&b->x, out, nd->outputs[0]);
    /* A row is a pick where its batch index is not -1. */
    uint32_t first = fe_b_reshape(b, fe_b_slice(b, out, 1, 0, 1), &rows, 1);
    uint32_t valid = fe_b_op(b, "GreaterOrEqual", first, fe_b_const(b, FE_INT64, 0, NULL, 0));
    return end_padded(c, b, nd->outputs[0], 0, valid);
}

/* Greedy selection per batch entry and class, on the host when the boxes
 * and scores are known (they decide how many indices come out), else on
 * the device with a padded output (nms_on_device) when the options allow. */
static lm_status infer_nms(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 2, 5);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"center_point_box", NULL});
    int64_t center;
    double max_out, iou_max, score_min;
    if (!st) st = fe_attr_int(c, n, "center_point_box", 0, &center);
    if (!st) st = nms_scalar(c, n, 2, 0, &max_out);
    if (!st) st = nms_scalar(c, n, 3, 0, &iou_max);
    if (!st) st = nms_scalar(c, n, 4, -INFINITY, &score_min);
    if (st) return st;
    if (center != 0 && center != 1)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "center_point_box must be 0 or 1, given %lld",
                       (long long)center);
    const fe_type *tb = fe_in_type(c, n, 0), *ts = fe_in_type(c, n, 1);
    if (!tb || !ts) return fe_fail(c, n, LM_ERR_INVALID_FILE, "boxes and scores are required");
    /* The marked node of nms_on_device reads the table of overlaps instead. */
    int64_t box_dim = n->nms_overlaps && tb->rank == 3 ? tb->dims[1] : 4;
    if (tb->rank != 3 || tb->dims[2] != box_dim || ts->rank != 3 || ts->dims[0] != tb->dims[0] ||
        ts->dims[2] != tb->dims[1])
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "boxes must be [batch, boxes, 4] and scores [batch, classes, boxes]");
    if (!fe_elem_is_float(tb->elem) || !fe_elem_is_float(ts->elem))
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "boxes and scores must be float");
    int64_t batches = tb->dims[0], count = tb->dims[1], classes = ts->dims[1];
    uint64_t per_class = max_out < 0               ? 0
                         : max_out > (double)count ? (uint64_t)count
                                                   : (uint64_t)max_out;
    if (n->nms_overlaps) /* lower_nms runs it */
        return fe_set_out_type(c, n, 0, FE_INT64, 2,
                               (const int64_t[]){batches * classes * (int64_t)per_class, 3});
    const fe_tensor *boxes = fe_in_const(c, n, 0), *scores = fe_in_const(c, n, 1);
    if ((!boxes || !scores) && per_class && batches && classes) {
        if (c->opts->pad_dynamic)
            return nms_on_device(c, n, center, iou_max, batches * classes * (int64_t)per_class);
        const fe_value *v = fe_in(c, n, boxes ? 1 : 0);
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "input %u ('%s') is known only at run time, and with it how many boxes "
                       "are selected: compile with --pad-dynamic (options: pad_dynamic) for an "
                       "output of the most rows the op can select, the unused ones -1%s%s%s",
                       boxes ? 1 : 0, v->name, v->graph_input ? ", or give it with --const " : "",
                       v->graph_input ? v->name : "", v->graph_input ? "=FILE" : "");
    }
    uint64_t cap = (uint64_t)(batches * classes) * per_class;
    if (!cap) {
        fe_tensor *t;
        if ((st = fe_const_new(c, FE_INT64, 2, (const int64_t[]){0, 3}, &t))) return st;
        return fe_set_out_const(c, n, 0, t);
    }
    nms_candidate *cand = malloc((size_t)(count ? count : 1) * sizeof *cand);
    double(*corners)[4] = malloc((size_t)(count ? count : 1) * sizeof *corners);
    int64_t *picked = malloc((size_t)cap * 3 * sizeof *picked);
    if (!cand || !corners || !picked) {
        st = fe_nn_fail(c, n, err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory"));
        goto done;
    }
    uint64_t total = 0;
    for (int64_t b = 0; b < batches; b++) {
        for (int64_t i = 0; i < count; i++)
            nms_box(boxes, count, b, i, center == 1, corners[i]);
        for (int64_t k = 0; k < classes; k++) {
            int64_t m = 0;
            for (int64_t i = 0; i < count; i++) {
                double sc = fe_tensor_get_f64(scores, (uint64_t)((b * classes + k) * count + i));
                if (sc > score_min) cand[m++] = (nms_candidate){sc, i};
            }
            qsort(cand, (size_t)m, sizeof *cand, nms_order);
            uint64_t kept = 0, first = total;
            for (int64_t j = 0; j < m && kept < per_class; j++) {
                bool keep = true;
                for (uint64_t q = first; keep && q < total; q++)
                    keep = !(nms_iou(corners[cand[j].index], corners[picked[3 * q + 2]]) > iou_max);
                if (!keep) continue;
                picked[3 * total] = b;
                picked[3 * total + 1] = k;
                picked[3 * total + 2] = cand[j].index;
                total++;
                kept++;
            }
        }
    }
    int64_t dims[2] = {(int64_t)total, 3};
    fe_tensor *t;
    if ((st = fe_const_new(c, FE_INT64, 2, dims, &t))) goto done;
    for (uint64_t i = 0; i < 3 * total; i++)
        fe_tensor_set_i64(t, i, picked[i]);
    st = fe_set_out_const(c, n, 0, t);
done:
    free(cand);
    free(corners);
    free(picked);
    return st;
}

/* The node nms_on_device marked: lmnn_nms on the table of overlaps and the
 * scores. */
static lm_status lower_nms(fe_ctx *c, const fe_node *n) {
    if (!n->nms_overlaps)
        return fe_fail(c, n, LM_ERR_INTERNAL, "NonMaxSuppression reached the device unrewritten");
    double max_out, score_min;
    lm_status st = nms_scalar(c, n, 2, 0, &max_out);
    if (!st) st = nms_scalar(c, n, 4, -INFINITY, &score_min);
    if (st) return st;
    lmnn_tensor over, scores, r;
    if ((st = fe_in_dev(c, n, 0, &over)) || (st = fe_in_dev(c, n, 1, &scores))) return st;
    lmnn_nms_options o;
    lmnn_nms_options_init(&o);
    /* At least 1 (nms_on_device runs only then); lmnn_nms takes at most the boxes. */
    o.max_per_class = max_out < (double)UINT32_MAX ? (uint32_t)max_out : UINT32_MAX;
    o.score_threshold = score_min;
    if ((st = lmnn_nms(scores, over, &o, &r))) return fe_nn_fail(c, n, st);
    return fe_out_dev(c, n, 0, r);
}

const fe_op_def fe_ops_select[] = {
    {"NonZero", infer_nonzero, NULL, 1u << 0, NULL},
    {"Unique", infer_unique, NULL, 1u << 0, NULL},
    {"Compress", infer_compress, lower_compress, 1u << 1, NULL},
    {"NonMaxSuppression", infer_nms, lower_nms, 0x1fu, NULL},
};
const size_t fe_ops_select_count = sizeof fe_ops_select / sizeof fe_ops_select[0];
