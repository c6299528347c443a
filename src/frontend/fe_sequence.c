/* Sequences: SequenceEmpty, SequenceConstruct, SequenceInsert,
 * SequenceErase, SequenceAt, SequenceLength, ConcatFromSequence and
 * SplitToSequence.
 *
 * A binary has fixed shapes and no lists, so a sequence exists only while
 * compiling: a value that holds the tensor values in it, in order
 * (fe_value.seq). Building, changing and measuring one is bookkeeping that
 * folds away (positions must be known when compiling: value_inputs); the
 * tensors themselves are ordinary values, computed on the device or folded
 * like any other. Reading one back is a rewrite into tensor nodes:
 * SequenceAt becomes an Identity of the chosen value, ConcatFromSequence a
 * Concat (after an Unsqueeze of each with new_axis), and SplitToSequence a
 * Split (and Squeezes) whose parts make the sequence. So the memory plan and
 * dead-node removal see the real readers of each tensor.
 *
 * A sequence graph input or output is its tensors, each an input or output
 * of the binary of its own (NAME[i]); an input's length is given when
 * compiling. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/fe_ops.h"
#include "frontend/fe_passes.h"

/* Tensors one sequence may hold (each is a value of its own). */
#define FE_MAX_SEQ 4096

lm_status fe_set_out_seq(fe_ctx *c, const fe_node *n, uint32_t i, fe_elem elem,
                         const uint32_t *items, uint32_t count) {
    if (i >= n->output_count || n->outputs[i] == FE_NONE) return LM_OK;
    fe_value *v = &c->g->values[n->outputs[i]];
    if (v->graph_output && (!v->declared_seq || v->declared_opt))
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "graph output '%s' is declared %s but the node makes a sequence", v->name,
                       v->declared_opt ? "an optional" : "a tensor");
    if (v->graph_output && v->type.elem != FE_UNDEFINED && v->type.elem != elem)
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "graph output '%s' is declared a sequence of %s but the node makes one "
                       "of %s",
                       v->name, fe_elem_name(v->type.elem), fe_elem_name(elem));
    if (count > FE_MAX_SEQ)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "a sequence of %u tensors (at most %d)", count,
                       FE_MAX_SEQ);
    uint32_t *copy = fe_arena_alloc(&c->g->arena, (count ? count : 1) * sizeof *copy);
    if (!copy) return fe_x_oom();
    if (count) memcpy(copy, items, count * sizeof *copy);
    v->is_seq = true;
    v->is_opt = false;
    v->seq = copy;
    v->seq_len = count;
    v->type = (fe_type){.elem = elem, .rank = 0};
    return LM_OK;
}

lm_status fe_set_out_opt(fe_ctx *c, const fe_node *n, uint32_t i, fe_elem elem, uint32_t held) {
    if (i >= n->output_count || n->outputs[i] == FE_NONE) return LM_OK;
    fe_value *v = &c->g->values[n->outputs[i]];
    if (v->graph_output && !v->declared_opt)
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "graph output '%s' is declared %s but the node makes an optional", v->name,
                       v->declared_seq ? "a sequence" : "a tensor");
    uint32_t *copy = fe_arena_alloc(&c->g->arena, sizeof *copy);
    if (!copy) return fe_x_oom();
    *copy = held;
    v->is_seq = v->is_opt = true;
    v->seq = copy;
    v->seq_len = held != FE_NONE;
    v->type = (fe_type){.elem = elem, .rank = 0};
    return LM_OK;
}

lm_status fe_set_out_like(fe_ctx *c, const fe_node *n, uint32_t i, const fe_value *src) {
    if (src->is_opt)
        return fe_set_out_opt(c, n, i, src->type.elem, src->seq_len ? src->seq[0] : FE_NONE);
    return fe_set_out_seq(c, n, i, src->type.elem, src->seq, src->seq_len);
}

/* ---- graph inputs and outputs ----
 *
 * A sequence graph input of length L (lmfe_compile_options.sequence_lengths)
 * becomes L tensor inputs named NAME[0] .. NAME[L-1], each of the declared
 * tensor type. An optional graph input is present (its tensor or sequence
 * is taken as above, under the same name) unless the options call it
 * absent. Outputs unfold the same way, as inference made them: a
 * sequence's tensors as NAME[i], an optional's value as itself, an empty
 * optional as nothing. */

static const lmfe_sequence_length *length_of(const lmfe_compile_options *o, const char *name) {
    for (size_t i = 0; i < o->sequence_length_count; i++)
        if (o->sequence_lengths[i].name && !strcmp(o->sequence_lengths[i].name, name))
            return &o->sequence_lengths[i];
    return NULL;
}

static bool is_absent(const lmfe_compile_options *o, const char *name) {
    for (size_t i = 0; i < o->absent_input_count; i++)
        if (o->absent_inputs[i] && !strcmp(o->absent_inputs[i], name)) return true;
    return false;
}

static const fe_value *input_named(const fe_graph *g, const char *name) {
    for (uint32_t k = 0; k < g->input_count; k++)
        if (!strcmp(g->values[g->inputs[k]].name, name)) return &g->values[g->inputs[k]];
    return NULL;
}

static lm_status check_options(const fe_graph *g, const lmfe_compile_options *o) {
    for (size_t i = 0; i < o->absent_input_count; i++) {
        const char *name = o->absent_inputs[i];
        if (!name) return err_set(LM_ERR_INVALID_ARGUMENT, "absent_inputs[%zu] is NULL", i);
        const fe_value *v = input_named(g, name);
        if (!v)
            return err_set(LM_ERR_INVALID_ARGUMENT, "absent input: the model has no input '%s'",
                           name);
        if (!v->declared_opt)
            return err_set(LM_ERR_INVALID_ARGUMENT,
                           "absent input: graph input '%s' is not optional", name);
    }
    for (size_t i = 0; i < o->sequence_length_count; i++) {
        const lmfe_sequence_length *s = &o->sequence_lengths[i];
        if (!s->name)
            return err_set(LM_ERR_INVALID_ARGUMENT, "sequence_lengths[%zu].name is NULL", i);
        if (length_of(o, s->name) != s)
            return err_set(LM_ERR_INVALID_ARGUMENT, "sequence length: '%s' is given twice",
                           s->name);
        if (s->length > FE_MAX_SEQ)
            return err_set(LM_ERR_UNSUPPORTED, "sequence length: '%s' of %u tensors (at most %d)",
                           s->name, s->length, FE_MAX_SEQ);
        const fe_value *v = input_named(g, s->name);
        if (!v)
            return err_set(LM_ERR_INVALID_ARGUMENT, "sequence length: the model has no input '%s'",
                           s->name);
        if (!v->declared_seq)
            return err_set(LM_ERR_INVALID_ARGUMENT,
                           "sequence length: graph input '%s' is a tensor, not a sequence",
                           s->name);
        if (is_absent(o, s->name))
            return err_set(LM_ERR_INVALID_ARGUMENT, "sequence length: graph input '%s' is absent",
                           s->name);
    }
    for (uint32_t k = 0; k < g->input_count; k++) {
        const fe_value *v = &g->values[g->inputs[k]];
        if (v->declared_seq && !(v->declared_opt && is_absent(o, v->name)) &&
            !length_of(o, v->name))
            return err_set(LM_ERR_INVALID_ARGUMENT,
                           "graph input '%s' is %s: give its length with --sequence %s=N", v->name,
                           v->declared_opt ? "an optional sequence" : "a sequence", v->name);
    }
    return LM_OK;
}

/* Makes `target` the sequence of `length` new tensor inputs NAME[i] of
 * type `type`, appended to inputs[*n]. */
static lm_status sequence_input(fe_ctx *c, uint32_t target, const char *name, const fe_type *type,
                                uint32_t length, uint32_t *inputs, uint32_t *n) {
    fe_graph *g = c->g;
    fe_expansion x = {.c = c, .node = {.name = name, .op_type = "input", .domain = ""}};
    uint32_t *items = fe_arena_alloc(&g->arena, (length ? length : 1) * sizeof *items);
    if (!items) return fe_x_oom();
    for (uint32_t i = 0; i < length; i++) {
        char item[160];
        snprintf(item, sizeof item, "%s[%u]", name, i);
        lm_status st = fe_x_value(&x, item, &items[i]);
        if (st) return st;
        fe_value *e = &g->values[items[i]]; /* after fe_x_value: the array may move */
        e->type = *type;
        e->graph_input = true;
        /* The tensors of a sequence may differ in shape, so a symbolic dim
         * of its declared type ties neither them nor other inputs: each
         * tensor's open dims are given under its own name. */
        for (int32_t d = 0; d < e->type.rank; d++)
            e->type.sym[d] = NULL;
        inputs[(*n)++] = items[i];
    }
    fe_value *v = &g->values[target];
    v->graph_input = false;
    v->is_seq = true;
    v->seq = items;
    v->seq_len = length;
    v->type.rank = 0;
    return LM_OK;
}

lm_status fe_seq_bind_inputs(fe_ctx *c) {
    fe_graph *g = c->g;
    const lmfe_compile_options *o = c->opts;
    lm_status st = check_options(g, o);
    if (st) return st;
    uint64_t total = 0;
    bool any = false;
    for (uint32_t k = 0; k < g->input_count; k++) {
        const fe_value *v = &g->values[g->inputs[k]];
        any |= v->declared_seq || v->declared_opt;
        if (v->declared_opt && is_absent(o, v->name)) continue;
        total += v->declared_seq ? length_of(o, v->name)->length : 1;
    }
    if (!any) return LM_OK;
    uint32_t *inputs = fe_arena_alloc(&g->arena, (size_t)(total ? total : 1) * sizeof *inputs);
    if (!inputs) return fe_x_oom();
    uint32_t n = 0;
    for (uint32_t k = 0; k < g->input_count && !st; k++) {
        uint32_t vi = g->inputs[k];
        fe_value v = g->values[vi];
        if (!v.declared_seq && !v.declared_opt) {
            inputs[n++] = vi;
            continue;
        }
        if (!v.declared_opt) {
            st = sequence_input(c, vi, v.name, &v.type, length_of(o, v.name)->length, inputs, &n);
            continue;
        }
        /* An optional: what it holds (if present) is a value of its own,
         * under the same name. */
        uint32_t held = FE_NONE;
        if (!is_absent(o, v.name)) {
            fe_expansion x = {.c = c, .node = {.name = v.name, .op_type = "input", .domain = ""}};
            if ((st = fe_x_value(&x, v.name, &held))) break;
            fe_value *h = &g->values[held];
            h->type = v.type;
            if (v.declared_seq)
                st = sequence_input(c, held, v.name, &v.type, length_of(o, v.name)->length, inputs,
                                    &n);
            else
                h->graph_input = true, inputs[n++] = held;
        }
        uint32_t *slot = st ? NULL : fe_arena_alloc(&g->arena, sizeof *slot);
        if (!st && !slot) st = fe_x_oom();
        if (st) break;
        *slot = held;
        fe_value *w = &g->values[vi];
        w->graph_input = false;
        w->is_seq = w->is_opt = true;
        w->seq = slot;
        w->seq_len = held != FE_NONE;
        w->type.rank = 0;
    }
    if (st) return st;
    g->inputs = inputs;
    g->input_count = n;
    return LM_OK;
}

/* Appends what graph output value `vi` (named `name`) unfolds to. */
static lm_status unfold_output(fe_graph *g, uint32_t vi, const char *name, uint32_t *outputs,
                               const char **names, uint32_t *n) {
    const fe_value *v = &g->values[vi];
    if (v->is_opt) /* empty: nothing; else what it holds, under its name */
        return v->seq_len ? unfold_output(g, v->seq[0], name, outputs, names, n) : LM_OK;
    if (!v->is_seq) {
        names[*n] = name;
        outputs[(*n)++] = vi;
        return LM_OK;
    }
    for (uint32_t i = 0; i < v->seq_len; i++) {
        size_t len = strlen(name) + 16;
        char *item = fe_arena_alloc(&g->arena, len);
        if (!item) return fe_x_oom();
        snprintf(item, len, "%s[%u]", name, i);
        names[*n] = item;
        outputs[(*n)++] = v->seq[i];
    }
    return LM_OK;
}

/* Outputs value `vi` unfolds to (an optional's or a sequence's tensors). */
static uint64_t unfolded(const fe_graph *g, uint32_t vi) {
    const fe_value *v = &g->values[vi];
    if (v->is_opt) return v->seq_len ? unfolded(g, v->seq[0]) : 0;
    return v->is_seq ? v->seq_len : 1;
}

lm_status fe_seq_bind_outputs(fe_ctx *c) {
    fe_graph *g = c->g;
    uint64_t total = 0;
    bool any = false;
    for (uint32_t k = 0; k < g->output_count; k++) {
        const fe_value *v = &g->values[g->outputs[k]];
        if ((v->declared_seq || v->declared_opt) && !v->is_seq)
            return err_set(LM_ERR_INVALID_FILE, "graph output '%s' is declared %s but is a tensor",
                           v->name, v->declared_opt ? "an optional" : "a sequence");
        any |= v->is_seq;
        total += unfolded(g, g->outputs[k]);
    }
    if (!any) return LM_OK;
    uint32_t *outputs = fe_arena_alloc(&g->arena, (size_t)(total ? total : 1) * sizeof *outputs);
    const char **names = fe_arena_alloc(&g->arena, (size_t)(total ? total : 1) * sizeof *names);
    if (!outputs || !names) return fe_x_oom();
    uint32_t n = 0;
    for (uint32_t k = 0; k < g->output_count; k++) {
        lm_status st = unfold_output(g, g->outputs[k], fe_output_name(g, k), outputs, names, &n);
        if (st) return st;
    }
    g->outputs = outputs;
    g->output_names = names;
    g->output_count = n;
    return LM_OK;
}

/* ---- inputs ---- */

static lm_status seq_in(fe_ctx *c, const fe_node *n, uint32_t i, const fe_value **out) {
    const fe_value *v = fe_in(c, n, i);
    if (!v) return fe_fail(c, n, LM_ERR_INVALID_FILE, "input %u is missing", i);
    if (!v->is_seq || v->is_opt)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "input %u ('%s') must be a sequence%s", i,
                       v->name,
                       v->is_opt ? " (it is an optional: OptionalGetElement reads it)" : "");
    *out = v;
    return LM_OK;
}

static lm_status tensor_in(fe_ctx *c, const fe_node *n, uint32_t i) {
    const fe_value *v = fe_in(c, n, i);
    if (v && v->is_seq)
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "input %u ('%s') must be a tensor, not a sequence", i, v->name);
    return LM_OK;
}

/* Optional input i: a known integer scalar (rank 0 or one element) within
 * [lo, hi] (negative counts from `len`), or `def` when absent. */
static lm_status position(fe_ctx *c, const fe_node *n, uint32_t i, int64_t def, int64_t lo,
                          int64_t hi, int64_t len, int64_t *out) {
    *out = def;
    if (!fe_has_in(n, i)) return LM_OK;
    lm_status st = tensor_in(c, n, i);
    const fe_tensor *t;
    if (!st) st = fe_in_const_required(c, n, i, &t);
    if (st) return st;
    if (fe_elem_is_float(t->elem) || t->elem == FE_BOOL || t->count != 1)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "the position must be one integer");
    int64_t p = fe_tensor_get_i64(t, 0);
    if (p < lo || p > hi)
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "position %lld is outside [%lld, %lld] (the sequence holds %lld)",
                       (long long)p, (long long)lo, (long long)hi, (long long)len);
    *out = p < 0 ? p + len : p;
    return LM_OK;
}

/* ---- building ---- */

static lm_status infer_empty(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 0, 0);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"dtype", NULL});
    int64_t dtype;
    if (!st) st = fe_attr_int(c, n, "dtype", FE_FLOAT, &dtype);
    if (st) return st;
    if (dtype <= FE_UNDEFINED || dtype >= FE_ELEM_COUNT_ || dtype == FE_STRING)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "dtype %lld is not a supported element type",
                       (long long)dtype);
    return fe_set_out_seq(c, n, 0, (fe_elem)dtype, NULL, 0);
}

static lm_status infer_construct(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 1, FE_MAX_SEQ);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){NULL});
    if (st) return st;
    for (uint32_t i = 0; i < n->input_count; i++)
        if (!fe_has_in(n, i)) return fe_fail(c, n, LM_ERR_INVALID_FILE, "input %u is missing", i);
    fe_elem elem = fe_in_type(c, n, 0)->elem;
    for (uint32_t i = 0; i < n->input_count; i++) {
        if ((st = tensor_in(c, n, i))) return st;
        if (fe_in_type(c, n, i)->elem != elem)
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "input %u is %s, input 0 %s", i,
                           fe_elem_name(fe_in_type(c, n, i)->elem), fe_elem_name(elem));
    }
    return fe_set_out_seq(c, n, 0, elem, n->inputs, n->input_count);
}

/* The tensor must have the sequence's element type (an empty sequence
 * from SequenceEmpty has one too). */
static lm_status check_item(fe_ctx *c, const fe_node *n, const fe_value *s, uint32_t i) {
    fe_elem e = fe_in_type(c, n, i)->elem;
    if (e != s->type.elem)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "the tensor is %s, the sequence holds %s",
                       fe_elem_name(e), fe_elem_name(s->type.elem));
    return LM_OK;
}

static lm_status infer_insert(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 2, 3);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){NULL});
    const fe_value *s = NULL;
    if (!st) st = seq_in(c, n, 0, &s);
    if (!st) st = tensor_in(c, n, 1);
    if (!st) st = check_item(c, n, s, 1);
    if (st) return st;
    int64_t len = s->seq_len, at;
    if ((st = position(c, n, 2, len, -len, len, len, &at))) return st;
    uint32_t *items = malloc((size_t)(len + 1) * sizeof *items);
    if (!items) return fe_x_oom();
    memcpy(items, s->seq, (size_t)at * sizeof *items);
    items[at] = n->inputs[1];
    memcpy(items + at + 1, s->seq + at, (size_t)(len - at) * sizeof *items);
    st = fe_set_out_seq(c, n, 0, s->type.elem, items, (uint32_t)len + 1);
    free(items);
    return st;
}

/* The checks SequenceErase and SequenceAt share: no attributes, a sequence
 * that holds something at input 0, then the position at input 1 (`def`
 * when absent). */
static lm_status pick(fe_ctx *c, const fe_node *n, uint32_t min_inputs, bool last,
                      const fe_value **out_seq, int64_t *out_at) {
    lm_status st = fe_check_inputs(c, n, min_inputs, 2);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){NULL});
    if (!st) st = seq_in(c, n, 0, out_seq);
    if (st) return st;
    int64_t len = (*out_seq)->seq_len;
    if (len == 0) return fe_fail(c, n, LM_ERR_INVALID_FILE, "the sequence is empty");
    return position(c, n, 1, last ? len - 1 : 0, -len, len - 1, len, out_at);
}

static lm_status infer_erase(fe_ctx *c, const fe_node *n) {
    const fe_value *s = NULL;
    int64_t at;
    lm_status st = pick(c, n, 1, true, &s, &at);
    if (st) return st;
    int64_t len = s->seq_len;
    uint32_t *items = malloc((size_t)len * sizeof *items);
    if (!items) return fe_x_oom();
    memcpy(items, s->seq, (size_t)at * sizeof *items);
    memcpy(items + at, s->seq + at + 1, (size_t)(len - at - 1) * sizeof *items);
    st = fe_set_out_seq(c, n, 0, s->type.elem, items, (uint32_t)len - 1);
    free(items);
    return st;
}

static lm_status infer_length(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){NULL});
    const fe_value *s = NULL;
    if (!st) st = seq_in(c, n, 0, &s);
    fe_tensor *t;
    if (!st) st = fe_const_new(c, FE_INT64, 0, NULL, &t);
    if (st) return st;
    fe_tensor_set_i64(t, 0, s->seq_len);
    return fe_set_out_const(c, n, 0, t);
}

/* ---- reading: rewrites into tensor nodes ---- */

static lm_status infer_at(fe_ctx *c, const fe_node *n) {
    const fe_value *s = NULL;
    int64_t at;
    lm_status st = pick(c, n, 2, false, &s, &at);
    if (st) return st;
    fe_expansion x;
    fe_x_begin(c, n, &x);
    return fe_x_end(c, &x, fe_x_identity(&x, s->seq[at], n->outputs[0]));
}

static lm_status infer_concat(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"axis", "new_axis", NULL});
    const fe_value *s = NULL;
    if (!st) st = seq_in(c, n, 0, &s);
    int64_t axis, new_axis;
    if (!st) st = fe_attr_int(c, n, "axis", INT64_MIN, &axis);
    if (!st) st = fe_attr_int(c, n, "new_axis", 0, &new_axis);
    if (st) return st;
    if (axis == INT64_MIN) return fe_fail(c, n, LM_ERR_INVALID_FILE, "attribute axis is required");
    if (new_axis != 0 && new_axis != 1)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "new_axis must be 0 or 1, given %lld",
                       (long long)new_axis);
    if (s->seq_len == 0)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "the sequence is empty: there is nothing to concatenate");
    /* With new_axis the axis counts in the result, one dim more. */
    int32_t rank = c->g->values[s->seq[0]].type.rank + (int32_t)new_axis, a;
    if ((st = fe_axis(c, n, axis, rank, &a))) return st;
    fe_expansion x;
    fe_x_begin(c, n, &x);
    uint32_t *parts = malloc(s->seq_len * sizeof *parts);
    if (!parts) st = fe_x_oom();
    for (uint32_t i = 0; !st && i < s->seq_len; i++) {
        parts[i] = s->seq[i];
        if (new_axis) st = fe_x_unsqueeze(&x, s->seq[i], a, &parts[i]);
    }
    fe_node *cat = st ? NULL : fe_x_node(&x, "Concat", 13, s->seq_len, 1);
    if (!st && !cat) st = fe_x_oom();
    if (!st) {
        memcpy(cat->inputs, parts, s->seq_len * sizeof *parts);
        cat->outputs[0] = n->outputs[0];
        st = fe_x_int_attr(&x, cat, "axis", false, a);
    }
    free(parts);
    return fe_x_end(c, &x, st);
}

/* Part lengths along the axis: `split` as given (a scalar: chunks of that
 * length, the last shorter), else chunks of 1. */
static lm_status split_lengths(fe_ctx *c, const fe_node *n, int64_t dim, int64_t **out,
                               uint32_t *out_count) {
    const fe_tensor *t = NULL;
    lm_status st = fe_has_in(n, 1) ? tensor_in(c, n, 1) : LM_OK;
    if (!st && fe_has_in(n, 1)) st = fe_in_const_required(c, n, 1, &t);
    if (st) return st;
    if (t && (fe_elem_is_float(t->elem) || t->elem == FE_BOOL || t->rank > 1))
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "split must be an integer scalar or 1-D tensor");
    uint64_t count;
    int64_t chunk = 1;
    if (t && t->rank == 1) {
        count = t->count;
    } else {
        if (t) chunk = fe_tensor_get_i64(t, 0);
        if (chunk < 1)
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "split %lld must be at least 1",
                           (long long)chunk);
        count = (uint64_t)(dim / chunk + (dim % chunk != 0)); /* dim + chunk - 1 may overflow */
    }
    if (count > FE_MAX_SEQ)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "a sequence of %llu tensors (at most %d)",
                       (unsigned long long)count, FE_MAX_SEQ);
    int64_t *len = malloc((count ? count : 1) * sizeof *len), sum = 0;
    if (!len) return fe_x_oom();
    for (uint64_t i = 0; i < count; i++) {
        len[i] = t && t->rank == 1
                     ? fe_tensor_get_i64(t, i)
                     : (dim - (int64_t)i * chunk < chunk ? dim - (int64_t)i * chunk : chunk);
        if (len[i] < 0) {
            free(len);
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "split[%llu] is negative",
                           (unsigned long long)i);
        }
        if (len[i] > dim - sum) { /* checked before the sum, which could overflow */
            long long part = (long long)len[i];
            free(len);
            return fe_fail(c, n, LM_ERR_INVALID_FILE,
                           "split[%llu] is %lld: with the parts before it, more than the axis' "
                           "%lld",
                           (unsigned long long)i, part, (long long)dim);
        }
        sum += len[i];
    }
    if (sum != dim) {
        free(len);
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "split adds up to %lld, the axis has %lld",
                       (long long)sum, (long long)dim);
    }
    *out = len;
    *out_count = (uint32_t)count;
    return LM_OK;
}

static lm_status infer_split(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 1, 2);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"axis", "keepdims", NULL});
    if (!st) st = tensor_in(c, n, 0);
    int64_t axis, keepdims;
    if (!st) st = fe_attr_int(c, n, "axis", 0, &axis);
    if (!st) st = fe_attr_int(c, n, "keepdims", 1, &keepdims);
    if (st) return st;
    const fe_type *xt = fe_in_type(c, n, 0);
    int32_t a;
    if ((st = fe_axis(c, n, axis, xt->rank, &a))) return st;
    int64_t *len = NULL;
    uint32_t count = 0;
    if ((st = split_lengths(c, n, xt->dims[a], &len, &count))) return st;
    if (count == 0) {
        free(len);
        return fe_set_out_seq(c, n, 0, xt->elem, NULL, 0);
    }
    /* keepdims = 0 drops the axis, which only chunks of 1 allow (split not
     * given). */
    bool squeeze = keepdims == 0 && !fe_has_in(n, 1);
    fe_expansion x;
    fe_x_begin(c, n, &x);
    fe_tensor *sizes;
    uint32_t sizes_value = FE_NONE;
    int64_t dims1 = count;
    st = fe_const_new(c, FE_INT64, 1, &dims1, &sizes);
    for (uint32_t i = 0; !st && i < count; i++)
        fe_tensor_set_i64(sizes, i, len[i]);
    if (!st) st = fe_x_const(&x, sizes, "split", &sizes_value);
    fe_node *sp = st ? NULL : fe_x_node(&x, "Split", 13, 2, count);
    if (!st && !sp) st = fe_x_oom();
    fe_node *seq = NULL;
    uint32_t *pieces = sp ? sp->outputs : NULL; /* arena memory: stays put as nodes are added */
    if (!st) {
        sp->inputs[0] = n->inputs[0];
        sp->inputs[1] = sizes_value;
        st = fe_x_int_attr(&x, sp, "axis", false, a);
    }
    for (uint32_t i = 0; !st && i < count; i++) {
        char name[32];
        snprintf(name, sizeof name, "part%u", i);
        st = fe_x_value(&x, name, &pieces[i]);
    }
    /* The parts (squeezed) make the sequence, as a SequenceConstruct. */
    uint32_t *parts = st ? NULL : malloc(count * sizeof *parts);
    if (!st && !parts) st = fe_x_oom();
    for (uint32_t i = 0; !st && i < count; i++) {
        parts[i] = pieces[i];
        if (!squeeze) continue;
        char name[32];
        snprintf(name, sizeof name, "item%u", i);
        fe_node *sq = NULL;
        st = fe_x_value(&x, name, &parts[i]);
        if (!st && !(sq = fe_x_node(&x, "Squeeze", 11, 1, 1))) st = fe_x_oom();
        if (!st) {
            sq->inputs[0] = pieces[i];
            sq->outputs[0] = parts[i];
            st = fe_x_int_attr(&x, sq, "axes", true, a);
        }
    }
    if (!st && !(seq = fe_x_node(&x, "SequenceConstruct", 11, count, 1))) st = fe_x_oom();
    if (!st) {
        memcpy(seq->inputs, parts, count * sizeof *parts);
        seq->outputs[0] = n->outputs[0];
    }
    free(parts);
    free(len);
    return fe_x_end(c, &x, st);
}

/* ---- optionals ---- */

/* Optional(x): holds x (a tensor or a sequence); without x, empty. */
static lm_status infer_optional(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 0, 1);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){"type", NULL});
    if (st) return st;
    const fe_value *v = fe_in(c, n, 0);
    if (v && v->is_opt)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "input 0 ('%s') is an optional already", v->name);
    if (v) return fe_set_out_opt(c, n, 0, v->type.elem, n->inputs[0]);
    if (!fe_node_attr(n, "type"))
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "an empty Optional needs its 'type' attribute");
    return fe_set_out_opt(c, n, 0, FE_UNDEFINED, FE_NONE);
}

/* Whether the optional holds something (known when compiling). The input
 * may also be missing (false), or a tensor or a sequence (true): opset 18
 * says so, and a Loop whose carried optional becomes the body's plain
 * sequence (as ONNX's own loop16 test does) needs it earlier too. */
static lm_status infer_has_element(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 0, 1);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){NULL});
    if (st) return st;
    const fe_value *v = fe_in(c, n, 0);
    fe_tensor *t;
    if ((st = fe_const_new(c, FE_BOOL, 0, NULL, &t))) return st;
    fe_tensor_set_i64(t, 0, v && (!v->is_opt || v->seq_len));
    return fe_set_out_const(c, n, 0, t);
}

/* What the optional holds (a tensor or a sequence given instead is itself,
 * as for OptionalHasElement): an Identity of it. */
static lm_status infer_get_element(fe_ctx *c, const fe_node *n) {
    lm_status st = fe_check_inputs(c, n, 1, 1);
    if (!st) st = fe_check_attrs(c, n, (const char *const[]){NULL});
    if (st) return st;
    const fe_value *v = fe_in(c, n, 0);
    if (v->is_opt && !v->seq_len)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "the optional '%s' is empty", v->name);
    uint32_t held = v->is_opt ? v->seq[0] : n->inputs[0];
    fe_expansion x;
    fe_x_begin(c, n, &x);
    return fe_x_end(c, &x, fe_x_identity(&x, held, n->outputs[0]));
}

/* value_inputs: the positions and SplitToSequence's split. */
const fe_op_def fe_ops_sequence[] = {
    {"SequenceEmpty", infer_empty, NULL, 0, NULL},
    {"SequenceConstruct", infer_construct, NULL, 0, NULL},
    {"SequenceInsert", infer_insert, NULL, 1u << 2, NULL},
    {"SequenceErase", infer_erase, NULL, 1u << 1, NULL},
    {"SequenceAt", infer_at, NULL, 1u << 1, NULL},
    {"SequenceLength", infer_length, NULL, 0, NULL},
    {"ConcatFromSequence", infer_concat, NULL, 0, NULL},
    {"SplitToSequence", infer_split, NULL, 1u << 1, NULL},
    {"Optional", infer_optional, NULL, 0, NULL},
    {"OptionalHasElement", infer_has_element, NULL, 0, NULL},
    {"OptionalGetElement", infer_get_element, NULL, 0, NULL},
};
const size_t fe_ops_sequence_count = sizeof fe_ops_sequence / sizeof fe_ops_sequence[0];

bool fe_op_takes_sequences(const fe_op_def *op) {
    static const char *const passers[] = {"Identity", "If", "Loop", "Scan", "SequenceMap"};
    if (op >= fe_ops_sequence && op < fe_ops_sequence + fe_ops_sequence_count) return true;
    for (size_t i = 0; i < sizeof passers / sizeof passers[0]; i++)
        if (!strcmp(op->op_type, passers[i])) return true;
    return false;
}
