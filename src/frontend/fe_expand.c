/* Control flow: If, Loop, Scan and SequenceMap, inlined during inference.
 *
 * A binary has no branches, so control flow is resolved when compiling,
 * where inference reaches the node (conditions and trip counts may be
 * folded results of the nodes before it):
 *   If    the branch its condition picks replaces it when the condition is
 *         known (a constant, a folded value, a graph input given with
 *         --const); otherwise both branches run and a Where per output
 *         picks between them, which needs the branches' outputs to have the
 *         same types;
 *   Loop  one iteration at a time: the body, inlined with the iteration
 *         number and the carried values bound, then the Loop again with
 *         the body's results as its carried values (and its condition), one
 *         step further on. When the trip count is reached or the condition
 *         folds to false, Identity nodes hand the carried values over and a
 *         Concat stacks each scan output's pieces. A condition computed at
 *         run time makes the rest masked (see Loop below): every step runs,
 *         and what the run keeps is taken from a step only while the
 *         conditions so far held, until a bound on the steps folds;
 *   Scan  the same over the scan inputs' sequence axis (its length is
 *         static), each step's slices taken with Gather;
 *   SequenceMap  the body once per position of its input sequences, each
 *         output's results made a sequence (fe_sequence.c).
 * Unrolling one step at a time lets the condition of each iteration fold
 * before the next is decided. Values a subgraph defines get new values
 * (named "<node>/<subgraph>/<step>/<name>"); what it reads from outside
 * is the node's implicit inputs. The rewriting itself is fe_rewrite.c's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/fe_ops.h"
#include "frontend/fe_passes.h"

/* Iterations one Loop or Scan may unroll, and all of them in a model
 * (nested loops multiply). */
#define FE_MAX_STEPS 4096
#define FE_MAX_STEPS_IN_ALL 65536

/* Finds `name` for the subgraph being inlined: a value it defined (mapped
 * by position in sg->defined), else one the node reads from outside. */
static uint32_t resolve(const fe_expansion *x, const fe_subgraph *sg, const uint32_t *mapped,
                        const char *name) {
    const char **at = NULL;
    for (uint32_t lo = 0, hi = sg->defined_count; lo < hi;) {
        uint32_t mid = lo + (hi - lo) / 2;
        int cmp = strcmp(name, sg->defined[mid]);
        if (cmp == 0) {
            at = &sg->defined[mid];
            break;
        }
        if (cmp < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    if (at) return mapped[at - sg->defined];
    for (uint32_t i = 0; i < x->node.implicit_count; i++)
        if (!strcmp(x->node.implicit_names[i], name)) return x->node.implicit[i];
    return FE_NONE;
}

static uint32_t *map_slot(const fe_subgraph *sg, uint32_t *mapped, const char *name) {
    for (uint32_t lo = 0, hi = sg->defined_count; lo < hi;) {
        uint32_t mid = lo + (hi - lo) / 2;
        int cmp = strcmp(name, sg->defined[mid]);
        if (cmp == 0) return &mapped[mid];
        if (cmp < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

/* Appends sg's nodes with its inputs bound to `bind` (sg->input_count
 * values); its outputs' values into out (sg->output_count). */
static lm_status inline_subgraph(fe_expansion *x, const fe_subgraph *sg, const uint32_t *bind,
                                 uint32_t *out) {
    fe_ctx *c = x->c;
    uint32_t *mapped = malloc((sg->defined_count ? sg->defined_count : 1) * sizeof *mapped);
    if (!mapped) return fe_x_oom();
    for (uint32_t i = 0; i < sg->defined_count; i++)
        mapped[i] = FE_NONE;
    lm_status st = LM_OK;
    for (uint32_t i = 0; i < sg->input_count; i++)
        *map_slot(sg, mapped, sg->inputs[i]) = bind[i];
    for (uint32_t i = 0; !st && i < sg->init_count; i++)
        st =
            fe_x_const(x, sg->inits[i], sg->init_names[i], map_slot(sg, mapped, sg->init_names[i]));
    for (uint32_t i = 0; !st && i < sg->node_count; i++) {
        const fe_node *t = &sg->nodes[i];
        fe_node *n = fe_x_node(x, t->op_type, t->opset, t->input_count, t->output_count);
        if (!n) {
            st = fe_x_oom();
            break;
        }
        fe_node *keep_inputs = n; /* new_node filled the arrays; the rest comes from t */
        uint32_t *ins = keep_inputs->inputs, *outs = keep_inputs->outputs;
        *n = *t;
        n->inputs = ins;
        n->outputs = outs;
        n->index = x->node.index;
        n->step = 0;
        size_t len = strlen(x->prefix) + strlen(t->name) + 1;
        char *name = fe_arena_alloc(&x->c->g->arena, len);
        if (!name) {
            st = fe_x_oom();
            break;
        }
        snprintf(name, len, "%s%s", x->prefix, t->name);
        n->name = name;
        for (uint32_t j = 0; !st && j < t->input_count; j++) {
            const char *r = sg->in_names[i][j];
            n->inputs[j] = r[0] ? resolve(x, sg, mapped, r) : FE_NONE;
            if (r[0] && n->inputs[j] == FE_NONE)
                st = fe_fail(c, &x->node, LM_ERR_INVALID_FILE,
                             "subgraph '%s': node #%u reads '%s' before it is defined (subgraph "
                             "nodes must be in order)",
                             sg->name, i, r);
        }
        if (!st && t->implicit_count) {
            n->implicit = fe_arena_alloc(&x->c->g->arena, t->implicit_count * sizeof *n->implicit);
            if (!n->implicit) st = fe_x_oom();
        }
        for (uint32_t j = 0; !st && j < t->implicit_count; j++) {
            n->implicit[j] = resolve(x, sg, mapped, t->implicit_names[j]);
            if (n->implicit[j] == FE_NONE)
                st = fe_fail(c, &x->node, LM_ERR_INVALID_FILE,
                             "subgraph '%s': node #%u's subgraphs read '%s' before it is defined",
                             sg->name, i, t->implicit_names[j]);
        }
        for (uint32_t j = 0; !st && j < t->output_count; j++) {
            const char *o = sg->out_names[i][j];
            n->outputs[j] = FE_NONE;
            if (o[0]) st = fe_x_value(x, o, map_slot(sg, mapped, o));
            if (!st && o[0]) n->outputs[j] = *map_slot(sg, mapped, o);
        }
    }
    for (uint32_t j = 0; !st && j < sg->output_count; j++) {
        out[j] = resolve(x, sg, mapped, sg->outputs[j]);
        if (out[j] == FE_NONE)
            st = fe_fail(c, &x->node, LM_ERR_INVALID_FILE,
                         "subgraph '%s': output '%s' is not defined", sg->name, sg->outputs[j]);
    }
    free(mapped);
    return st;
}

static const fe_subgraph *graph_attr(fe_expansion *x, const char *name, lm_status *st) {
    const fe_attr *a = fe_node_attr(&x->node, name);
    if (a && a->type == FE_ATTR_GRAPH && a->graph) return a->graph;
    *st = fe_fail(x->c, &x->node, LM_ERR_INVALID_FILE, "graph attribute '%s' is missing", name);
    return NULL;
}

static void set_prefix(fe_expansion *x, const char *sub, uint32_t step) {
    char lb[120];
    const fe_node *n = &x->node;
    if (n->name[0])
        snprintf(lb, sizeof lb, "%s", n->name);
    else
        snprintf(lb, sizeof lb, "%s#%u", n->op_type, n->index);
    snprintf(x->prefix, sizeof x->prefix, "%s/%s/%u/", lb, sub, step);
}

/* ---- If ---- */

static lm_status again(fe_expansion *x, const uint32_t *head, uint32_t head_count, uint32_t pieces,
                       const uint32_t *added, uint32_t added_count);

/* What value `v` is, for messages. */
static const char *kind_of(const fe_value *v, char *buf, size_t size) {
    if (v->is_opt)
        snprintf(buf, size, "%s", v->seq_len ? "an optional holding a value" : "an empty optional");
    else if (v->is_seq)
        snprintf(buf, size, "a sequence of %u tensor%s", v->seq_len, v->seq_len == 1 ? "" : "s");
    else
        fe_type_format(&v->type, buf, size);
    return buf;
}

static lm_status differ(fe_ctx *c, const fe_node *n, uint32_t j, const fe_value *a,
                        const fe_value *b) {
    char ka[96], kb[96], hint[160] = "";
    const fe_value *cond = fe_in(c, n, 0);
    if (cond->graph_input)
        snprintf(hint, sizeof hint, ": give it as a constant (--const %s=FILE)", cond->name);
    return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                   "the condition ('%s') is computed at run time, so both branches run and each "
                   "output is picked between them, but output %u is %s in then_branch and %s in "
                   "else_branch%s",
                   cond->name, j, kind_of(a, ka, sizeof ka), kind_of(b, kb, sizeof kb), hint);
}

/* Writes into `out` the pick, by the run's condition, between branch
 * results `a` and `b` of output j: a Where for tensors (of one type); for
 * sequences (equally long) a Where per tensor, made a sequence again; for
 * optionals (both empty, or both holding a value) the pick between what
 * they hold. */
static lm_status pick(fe_expansion *x, uint32_t j, uint32_t a, uint32_t b, uint32_t out) {
    fe_ctx *c = x->c;
    const fe_node *n = &x->node;
    /* Copied out: values move as nodes and values are added. */
    fe_value va = c->g->values[a], vb = c->g->values[b];
    bool same = va.is_seq == vb.is_seq && va.is_opt == vb.is_opt && va.seq_len == vb.seq_len;
    if (!va.is_seq) {
        same &= va.type.elem == vb.type.elem && va.type.rank == vb.type.rank;
        for (int32_t d = 0; same && d < va.type.rank; d++)
            same = va.type.dims[d] == vb.type.dims[d];
    }
    if (!same) return differ(c, n, j, &va, &vb);
    lm_status st = LM_OK;
    if (!va.is_seq) {
        fe_node *w = fe_x_node(x, "Where", 16, 3, 1);
        if (!w) return fe_x_oom();
        w->inputs[0] = n->inputs[0];
        w->inputs[1] = a;
        w->inputs[2] = b;
        w->outputs[0] = out;
        return LM_OK;
    }
    if (va.is_opt && !va.seq_len) return fe_x_identity(x, a, out); /* both empty */
    uint32_t len = va.seq_len;
    uint32_t *items = malloc((len ? len : 1) * sizeof *items);
    if (!items) return fe_x_oom();
    for (uint32_t i = 0; !st && i < len; i++) {
        st = fe_x_value(x, "picked", &items[i]);
        if (!st) st = pick(x, j, va.seq[i], vb.seq[i], items[i]);
    }
    /* An optional holds the pick; a sequence is made of them (an empty one
     * on both sides stays empty, of their element type). */
    const char *op = va.is_opt ? "Optional" : len ? "SequenceConstruct" : "SequenceEmpty";
    fe_node *made = st ? NULL : fe_x_node(x, op, va.is_opt ? 15 : 11, len, 1);
    if (!st && !made) st = fe_x_oom();
    if (!st) {
        memcpy(made->inputs, items, len * sizeof *items);
        made->outputs[0] = out;
        if (!len) st = fe_x_int_attr(x, made, "dtype", false, va.type.elem);
    }
    free(items);
    return st;
}

/* The second step of an If whose condition is computed at run time: its
 * inputs are now the condition, the then branch's outputs and the else
 * branch's, all inferred. Each output is picked between them (pick). */
static lm_status select_branches(fe_expansion *x) {
    fe_ctx *c = x->c;
    const fe_node *n = &x->node;
    uint32_t outs = n->output_count;
    if (n->input_count != 1 + 2 * outs)
        return fe_fail(c, n, LM_ERR_INTERNAL, "an If's second step has %u inputs for %u outputs",
                       n->input_count, outs);
    const fe_type *ct = fe_in_type(c, n, 0);
    if (ct->elem != FE_BOOL || fe_type_volume(ct) != 1)
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "the condition must be one bool (a scalar or [1]), given %s",
                       fe_type_format(ct, (char[64]){0}, 64));
    lm_status st = LM_OK;
    for (uint32_t j = 0; !st && j < outs; j++)
        if (n->outputs[j] != FE_NONE)
            st = pick(x, j, n->inputs[1 + j], n->inputs[1 + outs + j], n->outputs[j]);
    return st;
}

static const fe_subgraph *branch(fe_expansion *x, const char *name, lm_status *st) {
    const fe_subgraph *sg = graph_attr(x, name, st);
    if (sg && (sg->input_count || sg->output_count != x->node.output_count)) {
        *st = fe_fail(x->c, &x->node, LM_ERR_INVALID_FILE,
                      "branch '%s' has %u inputs and %u outputs (expected none and %u)", sg->name,
                      sg->input_count, sg->output_count, x->node.output_count);
        return NULL;
    }
    return sg;
}

/* A known condition: the branch it picks. One computed at run time: both
 * branches, then the node again one step on (select_branches). */
static lm_status expand_if(fe_expansion *x) {
    fe_ctx *c = x->c;
    const fe_node *n = &x->node;
    if (n->step == 1) return select_branches(x);
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (st) return st;
    uint32_t outs = n->output_count;
    const fe_tensor *cond = fe_in_const(c, n, 0);
    if (cond && cond->count != 1)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "the condition has %llu elements (expected 1)",
                       (unsigned long long)cond->count);
    uint32_t *vals = malloc((1 + 2 * outs) * sizeof *vals);
    if (!vals) return fe_x_oom();
    vals[0] = n->inputs[0];
    for (int b = 0; !st && b < 2; b++) {
        bool take = b == 0 ? !cond || fe_tensor_get_f64(cond, 0) != 0
                           : !cond || fe_tensor_get_f64(cond, 0) == 0;
        if (!take) continue;
        const fe_subgraph *sg = branch(x, b == 0 ? "then_branch" : "else_branch", &st);
        if (!sg) break;
        set_prefix(x, sg->name, 0);
        st = inline_subgraph(x, sg, NULL, vals + 1 + (cond ? 0 : b * outs));
    }
    for (uint32_t j = 0; !st && cond && j < outs; j++)
        if (n->outputs[j] != FE_NONE) st = fe_x_identity(x, vals[1 + j], n->outputs[j]);
    if (!st && !cond) st = again(x, vals, 1 + 2 * outs, 1, NULL, 0);
    free(vals);
    return st;
}

/* ---- Loop and Scan: the end ---- */

/* Each scan output k (of `scans`, outputs carried..) is the Concat along
 * axes[k] of its `steps` pieces (input pieces + t * scans + k), in reverse
 * order where reverse[k]. */
static lm_status stack_scans(fe_expansion *x, uint32_t carried, uint32_t pieces, uint32_t scans,
                             const int64_t *axes, const int64_t *reverse) {
    const fe_node *n = &x->node;
    lm_status st = LM_OK;
    for (uint32_t k = 0; !st && k < scans; k++) {
        uint32_t o = carried + k;
        if (o >= n->output_count || n->outputs[o] == FE_NONE) continue;
        if (n->step == 0)
            return fe_fail(x->c, n, LM_ERR_UNSUPPORTED,
                           "no iteration runs, so scan output %u is empty (zero-size tensors "
                           "are not supported)",
                           k);
        fe_node *cat = fe_x_node(x, "Concat", 11, n->step, 1);
        if (!cat) return fe_x_oom();
        for (uint32_t t = 0; t < n->step; t++) {
            uint32_t at = reverse && reverse[k] ? n->step - 1 - t : t;
            cat->inputs[t] = n->inputs[pieces + at * scans + k];
        }
        cat->outputs[0] = n->outputs[o];
        st = fe_x_int_attr(x, cat, "axis", false, axes ? axes[k] : 0);
    }
    return st;
}

/* Outputs from..from+carried-1 are inputs from..; then the scan outputs
 * (stack_scans). */
static lm_status finish(fe_expansion *x, uint32_t from, uint32_t carried, uint32_t pieces,
                        uint32_t scans, const int64_t *axes, const int64_t *reverse) {
    const fe_node *n = &x->node;
    lm_status st = LM_OK;
    for (uint32_t j = 0; !st && j < carried; j++)
        if (n->outputs[j] != FE_NONE) st = fe_x_identity(x, n->inputs[from + j], n->outputs[j]);
    return st ? st : stack_scans(x, carried, pieces, scans, axes, reverse);
}

/* The node again, one step further: inputs `head` (head_count values) and
 * then the pieces it had plus `added`. */
static lm_status again(fe_expansion *x, const uint32_t *head, uint32_t head_count, uint32_t pieces,
                       const uint32_t *added, uint32_t added_count) {
    const fe_node *n = &x->node;
    uint32_t old = n->input_count - pieces;
    fe_node *r = fe_x_node(x, n->op_type, n->opset, head_count + old + added_count, 0);
    if (!r) return fe_x_oom();
    uint32_t *ins = r->inputs;
    *r = *n;
    r->inputs = ins;
    r->input_count = head_count + old + added_count;
    r->step = n->step + 1;
    memcpy(ins, head, head_count * sizeof *ins);
    if (old) memcpy(ins + head_count, n->inputs + pieces, old * sizeof *ins);
    if (added_count) memcpy(ins + head_count + old, added, added_count * sizeof *ins);
    return LM_OK;
}

/* ---- Loop ----
 *
 * A condition known when compiling decides each step. One computed at run
 * time makes the rest of the loop masked: every step runs the body on the
 * values the loop would hold had it not stopped ("unmasked": the body's own
 * results, so a counter stays a constant and a bound like i < 30 folds),
 * and keeps beside them what the run really holds: running, whether every
 * iteration so far ran, and each carried value as of the last iteration
 * that ran (Where). Unrolling ends where the unmasked condition folds to
 * false (And with a false bound folds) or the trip count ends. While
 * masked, step s's inputs are: the trip count, the unmasked condition and
 * carried values after s iterations, whether iteration s - 1 ran, the
 * values kept before it, then the scan pieces. */

/* `v` as a scalar (a [1] flag would broadcast a scalar carried value). */
static lm_status squeezed(fe_expansion *x, uint32_t v, const char *name, uint32_t *out) {
    lm_status st = fe_x_value(x, name, out);
    fe_node *sq = st ? NULL : fe_x_node(x, "Squeeze", 13, 1, 1);
    if (!st && !sq) return fe_x_oom();
    if (st) return st;
    sq->inputs[0] = v;
    sq->outputs[0] = *out;
    return LM_OK;
}

/* A new value `name` = op(a, b[, c]) for And and Where. */
static lm_status node3(fe_expansion *x, const char *op, int64_t opset, const uint32_t *in,
                       uint32_t count, const char *name, uint32_t *out) {
    lm_status st = fe_x_value(x, name, out);
    fe_node *nd = st ? NULL : fe_x_node(x, op, opset, count, 1);
    if (!st && !nd) return fe_x_oom();
    if (st) return st;
    memcpy(nd->inputs, in, count * sizeof *in);
    nd->outputs[0] = *out;
    return LM_OK;
}

/* A masked step's start: the kept values (out_kept) and whether iteration
 * `step` runs (out_running). Entering, what the loop holds and its
 * condition; after, the unmasked values taken while iteration step - 1 ran,
 * which needs them to keep their shapes (Where would broadcast). */
static lm_status keep(fe_expansion *x, uint32_t carried, uint32_t *out_kept,
                      uint32_t *out_running) {
    fe_ctx *c = x->c;
    const fe_node *n = &x->node;
    for (uint32_t j = 0; j < carried; j++)
        if (fe_in(c, n, 2 + j)->is_seq || fe_in(c, n, 2 + j)->is_opt)
            return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                           "the condition ('%s') is computed at run time and carried value %u is "
                           "%s would depend on the run",
                           fe_in(c, n, 1)->name, j,
                           fe_in(c, n, 2 + j)->is_opt ? "an optional, whose presence"
                                                      : "a sequence, whose length");
    if (!n->masked) {
        const fe_type *ct = fe_in_type(c, n, 1);
        if (fe_type_volume(ct) != 1) {
            char t[96];
            return fe_fail(c, n, LM_ERR_INVALID_FILE,
                           "the condition must be a single value, given %s",
                           fe_type_format(ct, t, sizeof t));
        }
        memcpy(out_kept, n->inputs + 2, carried * sizeof *out_kept);
        return squeezed(x, n->inputs[1], "running", out_running);
    }
    uint32_t ran = n->inputs[2 + carried];
    const uint32_t *before = n->inputs + 3 + carried;
    for (uint32_t j = 0; j < carried; j++) {
        const fe_type *now = fe_in_type(c, n, 2 + j), *was = &c->g->values[before[j]].type;
        bool same = now->rank == was->rank;
        for (int32_t d = 0; same && d < now->rank; d++)
            same = now->dims[d] == was->dims[d];
        if (!same) {
            char a[96], b[96];
            fe_type_format(now, a, sizeof a);
            fe_type_format(was, b, sizeof b);
            return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                           "the condition is computed at run time, so the iterations run masked, "
                           "which needs carried value %u to keep its shape: iteration %u made it "
                           "%s from %s",
                           j, n->step - 1, a, b);
        }
    }
    lm_status st = LM_OK;
    for (uint32_t j = 0; !st && j < carried; j++) {
        char name[32];
        snprintf(name, sizeof name, "keep/%u", j);
        st = node3(x, "Where", 16, (uint32_t[]){ran, n->inputs[2 + j], before[j]}, 3, name,
                   &out_kept[j]);
    }
    uint32_t both;
    if (!st) st = node3(x, "And", 7, (uint32_t[]){ran, n->inputs[1]}, 2, "running_and", &both);
    if (!st) st = squeezed(x, both, "running", out_running);
    return st;
}

/* A scan output of a masked loop has one piece per iteration unrolled; with
 * opts->pad_dynamic those of iterations that did not run are padding (NaN,
 * -1 or false by the output's declared type), else the loop is refused. The
 * output must be a graph output no node reads (fe_check_unread). */
static lm_status check_padded_scan(fe_expansion *x, uint32_t carried, uint32_t k) {
    fe_ctx *c = x->c;
    const fe_node *n = &x->node;
    uint32_t o = carried + k;
    if (o >= n->output_count || n->outputs[o] == FE_NONE) return LM_OK;
    if (!c->opts->pad_dynamic)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "the condition ('%s') is computed at run time and the loop has scan "
                       "output %u, whose length would depend on the run: compile with "
                       "--pad-dynamic (options: pad_dynamic) for one row per iteration unrolled, "
                       "those of iterations that did not run padded",
                       fe_in(c, n, 1)->name, k);
    char what[160];
    snprintf(what, sizeof what,
             "scan output %u is padded (the rows of iterations that did not run NaN, -1 or false)",
             k);
    lm_status st = fe_check_unread(c, n, n->outputs[o], what);
    const fe_value *v = &c->g->values[n->outputs[o]];
    if (st || !v->graph_output) return st; /* unread and no output: dead */
    double pad;
    if (!fe_pad_value(v->type.elem, &pad))
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "scan output %u ('%s') is padded, which needs its declared element type "
                       "to be a float, a signed integer or bool (given %s)",
                       k, v->name, fe_elem_name(v->type.elem));
    return LM_OK;
}

/* Scan output `o`'s piece of a masked step, where iteration running is
 * false, replaced by the padding check_padded_scan names. */
static lm_status pad_piece(fe_expansion *x, uint32_t o, uint32_t running, uint32_t *piece) {
    const fe_node *n = &x->node;
    if (o >= n->output_count || n->outputs[o] == FE_NONE ||
        !x->c->g->values[n->outputs[o]].graph_output)
        return LM_OK;
    fe_elem e = x->c->g->values[n->outputs[o]].type.elem;
    fe_tensor *t;
    uint32_t pad;
    double value = 0;
    fe_pad_value(e, &value); /* check_padded_scan checked the type */
    lm_status st = fe_const_new(x->c, e, 0, NULL, &t);
    if (st) return st;
    fe_tensor_set_f64(t, 0, value);
    if ((st = fe_x_const(x, t, "pad", &pad))) return st;
    return node3(x, "Where", 16, (uint32_t[]){running, *piece, pad}, 3, "padded", piece);
}

static lm_status expand_loop(fe_expansion *x) {
    fe_ctx *c = x->c;
    const fe_node *n = &x->node;
    lm_status st = LM_OK;
    const fe_subgraph *body = graph_attr(x, "body", &st);
    if (!body) return st;
    if (body->input_count < 2 || body->output_count < body->input_count - 1)
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "body has %u inputs and %u outputs (expected iteration number, condition "
                       "and the carried values in; condition, carried values and scan outputs "
                       "out)",
                       body->input_count, body->output_count);
    uint32_t carried = body->input_count - 2, scans = body->output_count - 1 - carried;
    uint32_t pieces = 2 + carried + (n->masked ? 1 + carried : 0);
    if (n->input_count != pieces + n->step * scans || n->output_count > carried + scans)
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "%u inputs and %u outputs for a body of %u carried values and %u scan "
                       "outputs",
                       n->input_count, n->output_count, carried, scans);
    const fe_tensor *m = fe_has_in(n, 0) ? fe_in_const(c, n, 0) : NULL;
    const fe_tensor *cond = fe_has_in(n, 1) ? fe_in_const(c, n, 1) : NULL;
    if (fe_has_in(n, 0) && !m) {
        const fe_value *v = fe_in(c, n, 0);
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       v->graph_input ? "the trip count ('%s') is a graph input: unrolling needs "
                                        "it at compile time (--const %s=FILE)"
                                      : "the trip count ('%s') is computed at run time: "
                                        "unrolling needs it at compile time",
                       v->name, v->name);
    }
    if ((m && m->count != 1) || (cond && cond->count != 1))
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "the trip count and the condition must be single values");
    bool masked = n->masked || (fe_has_in(n, 1) && !cond);
    for (uint32_t k = 0; masked && !n->masked && k < scans; k++)
        if ((st = check_padded_scan(x, carried, k))) return st;
    bool go = (!m || (int64_t)n->step < fe_tensor_get_i64(m, 0)) &&
              (!cond || fe_tensor_get_f64(cond, 0) != 0);
    if (!go && !n->masked) return finish(x, 2, carried, pieces, scans, NULL, NULL);
    if (!m && !cond && !masked)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "neither a trip count nor a condition: the loop would never end");
    if (go && n->step == FE_MAX_STEPS)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       masked ? "more than %d iterations to unroll: the condition is computed at "
                                "run time and no bound on the iterations folded"
                              : "more than %d iterations to unroll",
                       FE_MAX_STEPS);
    set_prefix(x, body->name, n->step);
    uint32_t head_count = 2 + carried + (masked ? 1 + carried : 0);
    uint32_t *bind = malloc((2 + carried + 2 * body->output_count + head_count) * sizeof *bind);
    if (!bind) return fe_x_oom();
    uint32_t *outs = bind + 2 + carried, *added = outs + body->output_count;
    uint32_t *head = added + body->output_count;
    if (masked) st = keep(x, carried, head + 3 + carried, head + 2 + carried);
    if (!st && !go) {
        /* Masked to the end: the loop's results are the kept values and
         * the padded scan outputs. */
        for (uint32_t j = 0; !st && j < carried; j++)
            if (n->outputs[j] != FE_NONE)
                st = fe_x_identity(x, head[3 + carried + j], n->outputs[j]);
        if (!st) st = stack_scans(x, carried, pieces, scans, NULL, NULL);
        free(bind);
        return st;
    }
    if (!st) st = fe_x_scalar(x, FE_INT64, n->step, "iteration", &bind[0]);
    if (!st && fe_has_in(n, 1))
        bind[1] = n->inputs[1];
    else if (!st)
        st = fe_x_scalar(x, FE_BOOL, 1, "cond", &bind[1]);
    memcpy(bind + 2, n->inputs + 2, carried * sizeof *bind);
    if (!st) st = inline_subgraph(x, body, bind, outs);
    for (uint32_t k = 0; !st && k < scans; k++) {
        uint32_t piece = outs[1 + carried + k];
        if (masked) st = pad_piece(x, carried + k, head[2 + carried], &piece);
        if (!st) st = fe_x_unsqueeze(x, piece, 0, &added[k]);
    }
    /* Next: the trip count, the body's condition and carried values (and,
     * masked, what the run keeps: set above). */
    if (!st) {
        head[0] = n->inputs[0];
        memcpy(head + 1, outs, (1 + carried) * sizeof *head);
        st = again(x, head, head_count, pieces, added, scans);
    }
    if (!st) x->nodes[x->count - 1].masked = masked;
    free(bind);
    return st;
}

/* ---- Scan ---- */

/* What both Scans check first: their attributes, the body, num_scan_inputs
 * within its inputs and enough outputs for its states. */
static const fe_subgraph *scan_body(fe_expansion *x, const char *const *known, uint32_t *out_s_in,
                                    uint32_t *out_states, lm_status *st) {
    fe_ctx *c = x->c;
    const fe_node *n = &x->node;
    int64_t scan_inputs = 0;
    *st = fe_check_attrs(c, n, known);
    const fe_subgraph *body = *st ? NULL : graph_attr(x, "body", st);
    if (!*st) *st = fe_attr_int(c, n, "num_scan_inputs", 0, &scan_inputs);
    if (*st) return NULL;
    if (scan_inputs < 1 || (uint64_t)scan_inputs > body->input_count) {
        *st = fe_fail(c, n, LM_ERR_INVALID_FILE,
                      "num_scan_inputs=%lld for a body of %u inputs (from 1)",
                      (long long)scan_inputs, body->input_count);
        return NULL;
    }
    *out_s_in = (uint32_t)scan_inputs;
    *out_states = body->input_count - *out_s_in;
    if (body->output_count < *out_states) {
        *st = fe_fail(c, n, LM_ERR_INVALID_FILE, "body has %u outputs for %u states",
                      body->output_count, *out_states);
        return NULL;
    }
    return body;
}

/* Opset 8's Scan is batched: every input has the batch along axis 0 (scan
 * inputs their sequence along axis 1), and sequence_lens (input 0) may give
 * each batch entry its length. Each batch entry is an opset 9 Scan of its
 * own (Gather takes its slice), the results stacked again along axis 0.
 * Lengths must be known and whole: a shorter sequence would leave part of
 * the scan outputs undefined. */
static lm_status expand_scan8(fe_expansion *x) {
    fe_ctx *c = x->c;
    const fe_node *n = &x->node;
    static const char *const known[] = {"body", "num_scan_inputs", "directions", NULL};
    uint32_t s_in, states;
    lm_status st;
    const fe_subgraph *body = scan_body(x, known, &s_in, &states, &st);
    const int64_t *dirs;
    size_t ndir;
    if (!st) st = fe_attr_ints(c, n, "directions", &dirs, &ndir);
    if (st) return st;
    uint32_t ins = states + s_in, outs = body->output_count;
    if (n->input_count != 1 + ins || n->output_count > outs)
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "%u inputs and %u outputs for a body of %u states, %u scan inputs and %u "
                       "outputs (and sequence_lens first)",
                       n->input_count, n->output_count, states, s_in, outs);
    if (ndir && ndir != s_in)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "directions has %zu entries for %u scan inputs",
                       ndir, s_in);
    int64_t batch = -1, length = -1;
    for (uint32_t i = 0; i < ins; i++) {
        if (!fe_has_in(n, 1 + i))
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "input %u is missing", 1 + i);
        const fe_type *t = fe_in_type(c, n, 1 + i);
        if (t->rank < (i < states ? 1 : 2) || (batch >= 0 && t->dims[0] != batch) ||
            (i >= states && length >= 0 && t->dims[1] != length))
            return fe_fail(c, n, LM_ERR_INVALID_FILE,
                           "input %u: every input needs the batch along axis 0 (%lld) and every "
                           "scan input the sequence along axis 1",
                           1 + i, (long long)batch);
        batch = t->dims[0];
        if (i >= states) length = t->dims[1];
    }
    const fe_tensor *lens = fe_has_in(n, 0) ? fe_in_const(c, n, 0) : NULL;
    if (fe_has_in(n, 0) && !lens)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "sequence_lens is computed at run time (its values decide which steps run)");
    for (uint64_t b = 0; lens && b < lens->count; b++)
        if (lens->count != (uint64_t)batch || fe_tensor_get_i64(lens, b) != length)
            return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                           "sequence_lens must give every batch entry the whole sequence (%lld "
                           "steps); entry %llu has %lld",
                           (long long)length, (unsigned long long)b,
                           (long long)fe_tensor_get_i64(lens, b));
    /* The opset 9 Scan's attributes: the same body and count, the
     * directions under their new name. */
    fe_attr *attrs = fe_arena_alloc(&c->g->arena, 3 * sizeof *attrs);
    uint32_t *pieces = malloc((size_t)(batch ? batch : 1) * (outs ? outs : 1) * sizeof *pieces);
    if (!attrs || !pieces) {
        free(pieces);
        return fe_x_oom();
    }
    attrs[0] = *fe_node_attr(n, "body");
    attrs[1] = (fe_attr){.name = "num_scan_inputs", .type = FE_ATTR_INT, .i = s_in};
    attrs[2] = (fe_attr){
        .name = "scan_input_directions", .type = FE_ATTR_INTS, .ints = dirs, .count = ndir};
    uint32_t *entries = malloc((ins ? ins : 1) * sizeof *entries);
    uint32_t *parts = malloc((size_t)(batch ? batch : 1) * sizeof *parts);
    if (!entries || !parts) st = fe_x_oom();
    for (int64_t b = 0; !st && b < batch; b++) {
        set_prefix(x, body->name, (uint32_t)b);
        uint32_t index;
        st = fe_x_scalar(x, FE_INT64, b, "batch", &index);
        for (uint32_t i = 0; !st && i < ins; i++) {
            fe_node *gather = NULL;
            st = fe_x_value(x, "entry", &entries[i]);
            if (!st && !(gather = fe_x_node(x, "Gather", 13, 2, 1))) st = fe_x_oom();
            if (st) break;
            gather->inputs[0] = n->inputs[1 + i];
            gather->inputs[1] = index;
            gather->outputs[0] = entries[i];
            st = fe_x_int_attr(x, gather, "axis", false, 0);
        }
        for (uint32_t j = 0; !st && j < outs; j++)
            st = fe_x_value(x, "result", &pieces[(size_t)b * outs + j]);
        fe_node *scan = st ? NULL : fe_x_node(x, "Scan", 9, ins, outs);
        if (!st && !scan) st = fe_x_oom();
        if (st) break;
        memcpy(scan->inputs, entries, ins * sizeof *entries);
        memcpy(scan->outputs, &pieces[(size_t)b * outs], outs * sizeof *pieces);
        scan->attrs = attrs;
        scan->attr_count = ndir ? 3 : 2;
        scan->implicit_names = n->implicit_names;
        scan->implicit = n->implicit;
        scan->implicit_count = n->implicit_count;
    }
    /* Each output: the batch entries' results, stacked along axis 0. */
    for (uint32_t j = 0; !st && j < n->output_count; j++) {
        if (n->outputs[j] == FE_NONE) continue;
        for (int64_t b = 0; !st && b < batch; b++)
            st = fe_x_unsqueeze(x, pieces[(size_t)b * outs + j], 0, &parts[b]);
        fe_node *cat = st ? NULL : fe_x_node(x, "Concat", 13, (uint32_t)batch, 1);
        if (!st && !cat) st = fe_x_oom();
        if (st) break;
        memcpy(cat->inputs, parts, (size_t)batch * sizeof *parts);
        cat->outputs[0] = n->outputs[j];
        st = fe_x_int_attr(x, cat, "axis", false, 0);
    }
    free(entries);
    free(parts);
    free(pieces);
    return st;
}

static lm_status expand_scan(fe_expansion *x) {
    fe_ctx *c = x->c;
    const fe_node *n = &x->node;
    if (n->opset < 9) return expand_scan8(x);
    static const char *const known[] = {"body",
                                        "num_scan_inputs",
                                        "scan_input_axes",
                                        "scan_input_directions",
                                        "scan_output_axes",
                                        "scan_output_directions",
                                        NULL};
    uint32_t s_in, states;
    lm_status st;
    const fe_subgraph *body = scan_body(x, known, &s_in, &states, &st);
    const int64_t *in_axes, *in_dirs, *out_axes, *out_dirs;
    size_t nia, nid, noa, nod;
    if (!st) st = fe_attr_ints(c, n, "scan_input_axes", &in_axes, &nia);
    if (!st) st = fe_attr_ints(c, n, "scan_input_directions", &in_dirs, &nid);
    if (!st) st = fe_attr_ints(c, n, "scan_output_axes", &out_axes, &noa);
    if (!st) st = fe_attr_ints(c, n, "scan_output_directions", &out_dirs, &nod);
    if (st) return st;
    uint32_t scans = body->output_count - states;
    if ((nia && nia != s_in) || (nid && nid != s_in) || (noa && noa != scans) ||
        (nod && nod != scans))
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "scan axes and directions need one entry per scan input (%u) and output "
                       "(%u)",
                       s_in, scans);
    if (n->input_count != states + s_in + n->step * scans || n->output_count > states + scans)
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "%u inputs and %u outputs for a body of %u states, %u scan inputs and %u "
                       "scan outputs",
                       n->input_count, n->output_count, states, s_in, scans);
    /* The sequence: every scan input's length along its axis. */
    int64_t length = -1;
    int32_t axes[64];
    if (s_in > 64) return fe_fail(c, n, LM_ERR_UNSUPPORTED, "more than 64 scan inputs");
    for (uint32_t i = 0; i < s_in; i++) {
        const fe_type *t = fe_in_type(c, n, states + i);
        if ((st = fe_axis(c, n, nia ? in_axes[i] : 0, t->rank, &axes[i]))) return st;
        int64_t len = t->dims[axes[i]];
        if (length >= 0 && len != length)
            return fe_fail(c, n, LM_ERR_INVALID_FILE,
                           "scan inputs of different lengths (%lld and %lld)", (long long)length,
                           (long long)len);
        length = len;
    }
    if ((int64_t)n->step >= length)
        return finish(x, 0, states, states + s_in, scans, noa ? out_axes : NULL,
                      nod ? out_dirs : NULL);
    if (n->step == FE_MAX_STEPS)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "more than %d iterations to unroll", FE_MAX_STEPS);
    set_prefix(x, body->name, n->step);
    uint32_t *bind = malloc((body->input_count + 2 * body->output_count + 1) * sizeof *bind);
    if (!bind) return fe_x_oom();
    uint32_t *outs = bind + body->input_count, *added = outs + body->output_count;
    memcpy(bind, n->inputs, states * sizeof *bind);
    for (uint32_t i = 0; !st && i < s_in; i++) {
        /* Step t's slice: Gather of one index along the axis drops it. */
        int64_t t = nid && in_dirs[i] ? length - 1 - n->step : n->step;
        uint32_t index;
        st = fe_x_scalar(x, FE_INT64, t, "index", &index);
        if (!st) st = fe_x_value(x, "slice", &bind[states + i]);
        fe_node *g = st ? NULL : fe_x_node(x, "Gather", 11, 2, 1);
        if (!st && !g) st = fe_x_oom();
        if (st) break;
        g->inputs[0] = n->inputs[states + i];
        g->inputs[1] = index;
        g->outputs[0] = bind[states + i];
        st = fe_x_int_attr(x, g, "axis", false, axes[i]);
    }
    if (!st) st = inline_subgraph(x, body, bind, outs);
    for (uint32_t k = 0; !st && k < scans; k++)
        st = fe_x_unsqueeze(x, outs[states + k], noa ? out_axes[k] : 0, &added[k]);
    if (!st) {
        /* Next: the body's states, the same scan inputs. */
        uint32_t *head = malloc((states + s_in + 1) * sizeof *head);
        if (!head) st = fe_x_oom();
        if (!st) {
            memcpy(head, outs, states * sizeof *head);
            memcpy(head + states, n->inputs + states, s_in * sizeof *head);
            st = again(x, head, states + s_in, states + s_in, added, scans);
        }
        free(head);
    }
    free(bind);
    return st;
}

/* ---- SequenceMap ---- */

/* The body once per position of the input sequences (which must be equally
 * long; tensor inputs go to every step as they are), then each output's
 * results made a sequence. */
static lm_status expand_sequence_map(fe_expansion *x) {
    const fe_node *n = &x->node;
    lm_status st = LM_OK;
    const fe_subgraph *body = graph_attr(x, "body", &st);
    if (!body) return st;
    uint32_t ins = n->input_count, outs = n->output_count;
    if (body->input_count != ins || body->output_count != outs)
        return fe_fail(x->c, n, LM_ERR_INVALID_FILE,
                       "the body takes %u inputs and gives %u outputs; the node has %u and %u",
                       body->input_count, body->output_count, ins, outs);
    /* Copied out: values move as the expansion adds some. */
    const uint32_t **seqs = calloc(ins ? ins : 1, sizeof *seqs);
    uint32_t *bind = malloc((ins ? ins : 1) * sizeof *bind), len = 0;
    if (!seqs || !bind) st = fe_x_oom();
    for (uint32_t j = 0; !st && j < ins; j++) {
        const fe_value *v = n->inputs[j] != FE_NONE ? &x->c->g->values[n->inputs[j]] : NULL;
        if (!v)
            st = fe_fail(x->c, n, LM_ERR_INVALID_FILE, "input %u is missing", j);
        else if (j == 0 && !v->is_seq)
            st = fe_fail(x->c, n, LM_ERR_INVALID_FILE, "input 0 must be a sequence");
        if (st || !v->is_seq) continue;
        if (j == 0) len = v->seq_len;
        if (v->seq_len != len)
            st = fe_fail(x->c, n, LM_ERR_INVALID_FILE,
                         "input %u holds %u tensors, input 0 holds %u", j, v->seq_len, len);
        seqs[j] = v->seq;
    }
    if (!st && len == 0)
        st = fe_fail(x->c, n, LM_ERR_UNSUPPORTED,
                     "the input sequence is empty (its results' types would be unknown)");
    if (!st && x->c->unrolled + len > FE_MAX_STEPS_IN_ALL)
        st = fe_fail(x->c, n, LM_ERR_UNSUPPORTED, "more than %d loop iterations to unroll in all",
                     FE_MAX_STEPS_IN_ALL);
    uint32_t *res = st ? NULL : malloc((size_t)len * (outs ? outs : 1) * sizeof *res);
    if (!st && !res) st = fe_x_oom();
    for (uint32_t i = 0; !st && i < len; i++) {
        for (uint32_t j = 0; j < ins; j++)
            bind[j] = seqs[j] ? seqs[j][i] : n->inputs[j];
        set_prefix(x, body->name, i);
        st = inline_subgraph(x, body, bind, res + (size_t)i * outs);
    }
    if (!st) x->c->unrolled += len;
    for (uint32_t j = 0; !st && j < outs; j++) {
        if (n->outputs[j] == FE_NONE) continue;
        fe_node *sc = fe_x_node(x, "SequenceConstruct", 11, len, 1);
        if (!sc) {
            st = fe_x_oom();
            break;
        }
        for (uint32_t i = 0; i < len; i++)
            sc->inputs[i] = res[(size_t)i * outs + j];
        sc->outputs[0] = n->outputs[j];
    }
    free(res);
    free(bind);
    free(seqs);
    return st;
}

lm_status fe_expand_node(fe_ctx *c, uint32_t k) {
    fe_expansion x = {.c = c, .k = k, .node = c->g->nodes[k]};
    if (c->unrolled == FE_MAX_STEPS_IN_ALL)
        return fe_fail(c, &x.node, LM_ERR_UNSUPPORTED,
                       "more than %d loop iterations to unroll in all", FE_MAX_STEPS_IN_ALL);
    c->unrolled++;
    lm_status st;
    if (!strcmp(x.node.op_type, "If"))
        st = expand_if(&x);
    else if (!strcmp(x.node.op_type, "Loop"))
        st = expand_loop(&x);
    else if (!strcmp(x.node.op_type, "SequenceMap"))
        st = expand_sequence_map(&x);
    else
        st = expand_scan(&x);
    return fe_x_finish(&x, st);
}

/* Inference of a control-flow node is its fe_expansion: the nodes that replace
 * it are inferred next (fe_infer_graph sees c->expanded). */
static lm_status infer_control(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_expand_node(c, (uint32_t)(n - c->g->nodes));
    if (!st) c->expanded = true;
    return st;
}

/* value_inputs: Loop's trip count and condition (If runs both branches
 * when its condition is only known at run time). */
const fe_op_def fe_ops_control[] = {
    {"If", infer_control, NULL, 0, NULL},
    {"Loop", infer_control, NULL, 3u << 0, NULL},
    {"Scan", infer_control, NULL, 0, NULL},
    {"SequenceMap", infer_control, NULL, 0, NULL},
};
const size_t fe_ops_control_count = sizeof fe_ops_control / sizeof fe_ops_control[0];
