/* Binding the user's inputs, inference, placement and the memory plan. */
#include "frontend/fe_passes.h"
#include "frontend/fe_ops.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

lm_status fe_plan_init(fe_ctx *c) {
    fe_graph *g = c->g;
    /* Room for what the graph holds (fe_expand.c grows both with it). */
    if (g->node_cap < g->node_count) g->node_cap = g->node_count;
    if (g->value_cap < g->value_count) g->value_cap = g->value_count;
    c->plans = calloc(g->node_cap ? g->node_cap : 1, sizeof *c->plans);
    c->slots = calloc(g->value_cap ? g->value_cap : 1, sizeof *c->slots);
    if (!c->plans || !c->slots) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    for (uint32_t k = 0; k < g->node_count; k++) {
        c->plans[k].placement = LMFE_ON_DEVICE;
        c->plans[k].fusion.output = FE_NONE;
        c->plans[k].fusion.act_alpha = c->plans[k].fusion.act_beta = NAN;
    }
    for (uint32_t v = 0; v < g->value_count; v++)
        c->slots[v].dev = FE_NONE;
    return LM_OK;
}

/* ---- binding ---- */

static uint32_t find_input(const fe_graph *g, const char *name) {
    for (uint32_t k = 0; k < g->input_count; k++)
        if (strcmp(g->values[g->inputs[k]].name, name) == 0) return k;
    return FE_NONE;
}

static lm_status unknown_input(const fe_graph *g, const char *what, const char *name) {
    uint32_t v = fe_graph_find_value(g, name);
    if (v != FE_NONE && g->values[v].initializer)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: '%s' is an initializer, not a graph input",
                       what, name);
    char list[512] = "";
    size_t len = 0;
    for (uint32_t k = 0; k < g->input_count && len < sizeof list - 64; k++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s'%s'", k ? ", " : "",
                                g->values[g->inputs[k]].name);
    return err_set(LM_ERR_INVALID_ARGUMENT, "%s: the model has no input '%s' (its inputs: %s)",
                   what, name, g->input_count ? list : "none");
}

/* Binds symbol `sym` to `value` in every graph input. */
static lm_status bind_symbol(fe_graph *g, const char *sym, int64_t value, const char *what) {
    if (value < 0)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: dim '%s' must not be negative, given %lld",
                       what, sym, (long long)value);
    for (uint32_t k = 0; k < g->input_count; k++) {
        fe_type *t = &g->values[g->inputs[k]].type;
        for (int32_t d = 0; d < t->rank; d++) {
            if (!t->sym[d] || strcmp(t->sym[d], sym) != 0) continue;
            if (t->dims[d] >= 0 && t->dims[d] != value)
                return err_set(LM_ERR_INVALID_ARGUMENT,
                               "%s: dim '%s' is bound to %lld already, given %lld", what, sym,
                               (long long)t->dims[d], (long long)value);
            t->dims[d] = value;
        }
    }
    return LM_OK;
}

/* A caller's tensor as a graph constant (data copied into the arena). */
static lm_status tensor_from_value(fe_ctx *c, const lmfe_tensor_value *tv, const char *what,
                                   fe_tensor **out) {
    fe_elem e = (fe_elem)tv->elem_type;
    size_t esize = (tv->elem_type > 0 && tv->elem_type < FE_ELEM_COUNT_) ? fe_elem_size(e) : 0;
    if (!esize)
        return err_set(LM_ERR_UNSUPPORTED, "%s '%s': element type %d is not supported", what,
                       tv->name, (int)tv->elem_type);
    if (tv->rank > FE_MAX_RANK)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s '%s': rank %u exceeds %d", what, tv->name,
                       tv->rank, FE_MAX_RANK);
    fe_tensor *t;
    lm_status st = fe_const_new(c, e, tv->rank, tv->dims, &t);
    if (st) return err_prefix(st, "%s '%s'", what, tv->name);
    if (t->count * esize != tv->size || (tv->size && !tv->data))
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s '%s': expected %llu bytes of data, given %llu",
                       what, tv->name, (unsigned long long)(t->count * esize),
                       (unsigned long long)tv->size);
    if (tv->size) memcpy((void *)t->data, tv->data, (size_t)tv->size);
    *out = t;
    return LM_OK;
}

/* A bfloat16 input given as uint16 holds its bit patterns: NumPy has no
 * bfloat16, so .npy files and ONNX's own test data carry it so (as
 * `lightmetal run` takes it). */
static void as_declared(const fe_type *type, fe_tensor *t) {
    if (type->elem == FE_BFLOAT16 && t->elem == FE_UINT16) t->elem = FE_BFLOAT16;
}

/* Checks tensor `t` fits input type `type` (same element type; every known dim equal). */
static lm_status check_fits(const fe_type *type, const fe_tensor *t, const char *what,
                            const char *name) {
    char want[160];
    if (type->elem != FE_UNDEFINED && type->elem != t->elem)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s '%s': expected element type %s, given %s", what,
                       name, fe_elem_name(type->elem), fe_elem_name(t->elem));
    bool ok = type->rank < 0 || type->rank == (int32_t)t->rank;
    for (int32_t d = 0; ok && type->rank >= 0 && d < type->rank; d++)
        ok = type->dims[d] < 0 || type->dims[d] == t->dims[d];
    if (!ok) {
        fe_type g = {.elem = t->elem, .rank = (int32_t)t->rank};
        char given[160];
        for (uint32_t d = 0; d < t->rank; d++)
            g.dims[d] = t->dims[d];
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s '%s': expected shape %s, given %s", what, name,
                       fe_type_format(type, want, sizeof want),
                       fe_type_format(&g, given, sizeof given));
    }
    return LM_OK;
}

lm_status fe_bind_inputs(fe_ctx *c, const fe_tensor ***out_golden) {
    fe_graph *g = c->g;
    const lmfe_compile_options *o = c->opts;
    *out_golden = NULL;
    lm_status st = fe_seq_bind_inputs(c);
    if (st) return st;
    for (size_t i = 0; i < o->input_shape_count; i++) {
        const lmfe_input_shape *s = &o->input_shapes[i];
        const char *what = "input shape";
        if (!s->name) return err_set(LM_ERR_INVALID_ARGUMENT, "input_shapes[%zu].name is NULL", i);
        uint32_t k = find_input(g, s->name);
        if (k == FE_NONE) return unknown_input(g, what, s->name);
        fe_type *t = &g->values[g->inputs[k]].type;
        if (s->rank > FE_MAX_RANK)
            return err_set(LM_ERR_INVALID_ARGUMENT, "%s '%s': rank %u exceeds %d", what, s->name,
                           s->rank, FE_MAX_RANK);
        if (t->rank >= 0 && (uint32_t)t->rank != s->rank) {
            char buf[160];
            return err_set(LM_ERR_INVALID_ARGUMENT,
                           "%s '%s': the model declares %s (rank %d), given rank %u", what, s->name,
                           fe_type_format(t, buf, sizeof buf), t->rank, s->rank);
        }
        fe_type old = *t;
        t->rank = (int32_t)s->rank;
        for (uint32_t d = 0; d < s->rank; d++) {
            if (s->dims[d] < 0)
                return err_set(LM_ERR_INVALID_ARGUMENT,
                               "%s '%s': dim %u must not be negative, given %lld", what, s->name, d,
                               (long long)s->dims[d]);
            if (old.rank >= 0 && old.dims[d] >= 0 && old.dims[d] != s->dims[d]) {
                char buf[160];
                return err_set(LM_ERR_INVALID_ARGUMENT,
                               "%s '%s': the model fixes dim %u of %s to %lld, given %lld", what,
                               s->name, d, fe_type_format(&old, buf, sizeof buf),
                               (long long)old.dims[d], (long long)s->dims[d]);
            }
            t->dims[d] = s->dims[d];
        }
        for (uint32_t d = 0; d < s->rank; d++)
            if (old.rank >= 0 && old.sym[d] && (st = bind_symbol(g, old.sym[d], s->dims[d], what)))
                return st;
    }
    for (size_t i = 0; i < o->dim_count; i++) {
        if (!o->dims[i].symbol)
            return err_set(LM_ERR_INVALID_ARGUMENT, "dims[%zu].symbol is NULL", i);
        bool found = false;
        for (uint32_t k = 0; k < g->input_count && !found; k++) {
            const fe_type *t = &g->values[g->inputs[k]].type;
            for (int32_t d = 0; d < t->rank; d++)
                found |= t->sym[d] && strcmp(t->sym[d], o->dims[i].symbol) == 0;
        }
        if (!found)
            return err_set(LM_ERR_INVALID_ARGUMENT,
                           "dim '%s': no graph input has that symbolic dim", o->dims[i].symbol);
        if ((st = bind_symbol(g, o->dims[i].symbol, o->dims[i].value, "dim"))) return st;
    }
    for (size_t i = 0; i < o->constant_count; i++) {
        const lmfe_tensor_value *tv = &o->constants[i];
        if (!tv->name) return err_set(LM_ERR_INVALID_ARGUMENT, "constants[%zu].name is NULL", i);
        uint32_t k = find_input(g, tv->name);
        if (k == FE_NONE) return unknown_input(g, "constant", tv->name);
        fe_tensor *t;
        if ((st = tensor_from_value(c, tv, "constant", &t))) return st;
        fe_value *v = &g->values[g->inputs[k]];
        as_declared(&v->type, t);
        if ((st = check_fits(&v->type, t, "constant", tv->name))) return st;
        v->konst = t;
        v->type.elem = t->elem;
        v->type.rank = (int32_t)t->rank;
        for (uint32_t d = 0; d < t->rank; d++)
            v->type.dims[d] = t->dims[d];
    }
    for (uint32_t k = 0; k < g->input_count; k++) {
        const fe_value *v = &g->values[g->inputs[k]];
        if (v->konst) continue;
        char buf[160];
        if (v->type.elem == FE_UNDEFINED || v->type.rank < 0)
            return err_set(LM_ERR_INVALID_ARGUMENT,
                           "graph input '%s' has no declared type or shape: give it with "
                           "--input-shape %s=DIMS",
                           v->name, v->name);
        for (int32_t d = 0; d < v->type.rank; d++) {
            if (v->type.dims[d] >= 0) continue;
            if (v->type.sym[d])
                return err_set(
                    LM_ERR_INVALID_ARGUMENT,
                    "graph input '%s' %s: dim %d ('%s') is not fixed: give --input-shape "
                    "%s=DIMS or --dim %s=N",
                    v->name, fe_type_format(&v->type, buf, sizeof buf), d, v->type.sym[d], v->name,
                    v->type.sym[d]);
            return err_set(LM_ERR_INVALID_ARGUMENT,
                           "graph input '%s' %s: dim %d is unknown: give --input-shape %s=DIMS",
                           v->name, fe_type_format(&v->type, buf, sizeof buf), d, v->name);
        }
        char what[320];
        snprintf(what, sizeof what, "graph input '%s'", v->name);
        if ((st = fe_check_fits_device(c, NULL, what, &v->type))) return st;
    }
    /* An empty input's value is known: nothing. Folding it away is what
     * lets the ops that read it see a constant. */
    for (uint32_t k = 0; k < g->input_count; k++) {
        fe_value *v = &g->values[g->inputs[k]];
        if (v->konst || fe_type_volume(&v->type) != 0) continue;
        fe_tensor *t;
        if ((st = fe_const_new(c, v->type.elem, (uint32_t)v->type.rank, v->type.dims, &t)))
            return st;
        v->konst = t;
        v->empty_input = true;
    }
    const fe_tensor **golden = calloc(g->input_count ? g->input_count : 1, sizeof *golden);
    if (!golden) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    for (size_t i = 0; i < o->golden_input_count; i++) {
        const lmfe_tensor_value *tv = &o->golden_inputs[i];
        st = LM_OK;
        uint32_t k = tv->name ? find_input(g, tv->name) : FE_NONE;
        if (!tv->name)
            st = err_set(LM_ERR_INVALID_ARGUMENT, "golden_inputs[%zu].name is NULL", i);
        else if (k == FE_NONE)
            st = unknown_input(g, "golden input", tv->name);
        else if (g->values[g->inputs[k]].konst)
            st = err_set(LM_ERR_INVALID_ARGUMENT, "golden input '%s' is given as a constant too",
                         tv->name);
        fe_tensor *t = NULL;
        if (!st) st = tensor_from_value(c, tv, "golden input", &t);
        if (!st) as_declared(&g->values[g->inputs[k]].type, t);
        if (!st) st = check_fits(&g->values[g->inputs[k]].type, t, "golden input", tv->name);
        if (st) {
            free(golden);
            return st;
        }
        golden[k] = t;
    }
    *out_golden = golden;
    return LM_OK;
}

/* ---- inference ---- */

/* Infers node *k; a node rewritten into others leaves *k one before them,
 * so that they come next. */
static lm_status infer_node(fe_ctx *c, uint32_t *k) {
    fe_graph *g = c->g;
    const fe_node *n = &g->nodes[*k];
    c->current = n;
    bool training = !strcmp(n->domain, FE_TRAINING_DOMAIN);
    if (n->domain[0] && strcmp(n->domain, "ai.onnx") != 0 && !training)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "ops of domain '%s' are not supported", n->domain);
    const fe_op_def *op = training ? fe_op_find_training(n->op_type) : fe_op_find(n->op_type);
    if (!op)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED, "op %s%s%s is not supported",
                       training ? n->domain : "", training ? "." : "", n->op_type);
    for (uint32_t i = 0; i < n->input_count; i++) {
        const fe_value *v = fe_in(c, n, i);
        if (v && v->is_seq && !fe_op_takes_sequences(op))
            return fe_fail(c, n, LM_ERR_UNSUPPORTED, "input %u ('%s') is %s; %s takes tensors (%s)",
                           i, v->name, v->is_opt ? "an optional" : "a sequence", n->op_type,
                           v->is_opt ? "OptionalGetElement reads what an optional holds"
                                     : "a sequence's tensors are read with SequenceAt or "
                                       "ConcatFromSequence");
        if (v && !v->is_seq && (v->type.elem == FE_UNDEFINED || v->type.rank < 0))
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "input %u ('%s') has no known type", i,
                           v->name);
    }
    c->expanded = false;
    lm_status st = fe_padded_read(c, n);
    if (st) return st;
    if (c->expanded) {
        (*k)--; /* rewritten: the new nodes at k come next (a wrap at 0 is undone by k++) */
        return LM_OK;
    }
    st = op->infer(c, n);
    if (!st && !c->expanded) st = fe_padded_written(c, n);
    if (st) return st;
    if (c->expanded) {
        (*k)--;
        return LM_OK;
    }
    bool folded = true;
    for (uint32_t i = 0; i < n->output_count; i++) {
        if (n->outputs[i] == FE_NONE) continue;
        fe_value *v = &g->values[n->outputs[i]];
        if (v->is_seq) continue; /* a list of values: nothing runs for it */
        if (v->type.elem == FE_UNDEFINED || v->type.rank < 0)
            return fe_fail(c, n, LM_ERR_INTERNAL, "output %u ('%s') got no type", i, v->name);
        if (!v->konst && fe_type_volume(&v->type) == 0) {
            /* An empty result is known whatever the inputs hold. */
            fe_tensor *t;
            if ((st = fe_const_new(c, v->type.elem, (uint32_t)v->type.rank, v->type.dims, &t)))
                return st;
            v->konst = t;
        }
        folded &= v->konst != NULL;
    }
    if (folded)
        c->plans[*k].placement = LMFE_FOLDED;
    else if (!op->lower)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "runs only on values known at compile time (it has no device form)");
    return LM_OK;
}

lm_status fe_infer_range(fe_ctx *c, uint32_t from, uint32_t to) {
    fe_graph *g = c->g;
    lm_status st = LM_OK;
    for (uint32_t k = from; !st && k < to; k++) {
        uint32_t before = g->node_count;
        st = infer_node(c, &k);
        to += g->node_count - before; /* a rewrite's nodes take the place of one */
    }
    c->current = NULL;
    return st;
}

lm_status fe_infer_graph(fe_ctx *c) {
    lm_status st = fe_infer_range(c, 0, c->g->node_count);
    /* Selections whose size waited for what reads them (fe_ops_select.c). */
    if (!st) st = fe_nms_resolve(c);
    return st ? st : fe_seq_bind_outputs(c);
}

const char *fe_output_name(const fe_graph *g, uint32_t k) {
    const char *name = g->output_names ? g->output_names[k] : NULL;
    return name ? name : g->values[g->outputs[k]].name;
}

/* ---- placement ---- */

lm_status fe_plan_graph(fe_ctx *c) {
    fe_graph *g = c->g;
    /* Dead nodes: nothing a graph output depends on reads them. */
    bool *live = calloc(g->value_count ? g->value_count : 1, sizeof *live);
    if (!live) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    for (uint32_t k = 0; k < g->output_count; k++)
        live[g->outputs[k]] = true;
    /* A sequence output, which its tensors now stand for: what made it is
     * folded, not dead. */
    for (uint32_t v = 0; v < g->value_count; v++)
        live[v] |= g->values[v].graph_output && g->values[v].is_seq;
    for (uint32_t k = g->node_count; k-- > 0;) {
        const fe_node *n = &g->nodes[k];
        bool used = false;
        for (uint32_t i = 0; i < n->output_count; i++)
            used |= n->outputs[i] != FE_NONE && live[n->outputs[i]];
        if (!used) {
            c->plans[k].placement = LMFE_REMOVED;
            continue;
        }
        /* A folded node reads no values, but what it builds on is a
         * sequence or optional that made it (folded too, not dead). */
        bool folded = c->plans[k].placement == LMFE_FOLDED;
        for (uint32_t i = 0; i < n->input_count; i++)
            if (n->inputs[i] != FE_NONE && (!folded || g->values[n->inputs[i]].is_seq))
                live[n->inputs[i]] = true;
    }
    free(live);
    lm_status st = fe_fuse(c);
    if (st) return st;
    for (uint32_t k = 0; k < g->node_count; k++) {
        const fe_node *n = &g->nodes[k];
        if (c->plans[k].placement != LMFE_ON_DEVICE) continue;
        for (uint32_t i = 0; i < n->input_count; i++)
            if (n->inputs[i] != FE_NONE) c->slots[n->inputs[i]].uses++;
        if (c->float_dtype != LMNN_FLOAT32)
            for (uint32_t i = 0; i < n->output_count; i++)
                if (n->outputs[i] != FE_NONE &&
                    fe_elem_is_float(g->values[n->outputs[i]].type.elem))
                    c->plans[k].lowered_precision = true;
    }
    for (uint32_t k = 0; k < g->output_count; k++) {
        c->slots[g->outputs[k]].uses++;
        c->slots[g->outputs[k]].pinned = true;
    }
    return fe_plan_layouts(c);
}

void fe_plan_reset_uses(fe_ctx *c) {
    for (uint32_t v = 0; v < c->g->value_count; v++)
        c->slots[v].remaining = c->slots[v].uses;
}

/* Appends to the notes in `buf` (`len` used of `size`), cutting what does not
 * fit; returns the new length. */
static size_t note(char *buf, size_t size, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static size_t note(char *buf, size_t size, size_t len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + len, size - len, fmt, ap);
    va_end(ap);
    len += n > 0 ? (size_t)n : 0;
    return len < size ? len : size - 1;
}

lm_status fe_report_notes(const fe_ctx *c, lmfe_report *r) {
    char buf[1024];
    size_t len = 0;
    uint32_t int_nodes = 0, double_nodes = 0, images = 0, flattened = 0, last = 0, random = 0;
    for (uint32_t k = 0; k < c->g->node_count; k++) {
        const fe_node *n = &c->g->nodes[k];
        images += c->plans[k].nhwc_out;
        flattened += c->plans[k].nhwc_rows;
        last += c->plans[k].last_out;
        if (c->plans[k].placement != LMFE_ON_DEVICE || !n->output_count || n->outputs[0] == FE_NONE)
            continue;
        fe_elem e = c->g->values[n->outputs[0]].type.elem;
        int_nodes += fe_elem_is_int(e);
        double_nodes += e == FE_DOUBLE;
        random += fe_draws_random((fe_ctx *)c, n);
    }
    if (r->lowered_nodes)
        len = note(buf, sizeof buf, len,
                   "precision: %u of %u device nodes compute in bfloat16%s "
                   "(float32 accumulation)\n",
                   r->lowered_nodes, r->device_nodes,
                   c->bfp8_weights ? " with bfloat8_b weights" : "");
    if (int_nodes)
        len = note(buf, sizeof buf, len,
                   "integers: %u device nodes hold integers as int32 (exact for "
                   "|x| < 2^31; their arithmetic is exact for |x| < 2^24)\n",
                   int_nodes);
    if (double_nodes)
        len = note(buf, sizeof buf, len,
                   "float64: %u device node%s compute%s float64 values in float32 (about 7 "
                   "significant digits; magnitudes beyond 3.4e38 become infinities)\n",
                   double_nodes, double_nodes == 1 ? "" : "s", double_nodes == 1 ? "s" : "");
    if (images)
        len = note(buf, sizeof buf, len,
                   "layout: %u results of convolutions, poolings, element-wise ops and reshapes "
                   "stay NHWC images for their readers (no transposes)\n",
                   images);
    if (flattened)
        len = note(buf, sizeof buf, len,
                   "layout: %u flattened image%s kept in NHWC order (the weights "
                   "of the matrix products reading them permuted to match)\n",
                   flattened, flattened == 1 ? "" : "s");
    if (last)
        len = note(buf, sizeof buf, len,
                   "layout: %u channels-last result%s (layer normalizations, products, "
                   "element-wise ops) held as "
                   "rows [1, 1, rows, channels], whole tiles whatever the dims before\n",
                   last, last == 1 ? "" : "s");
    if (random && c->opts->seed_input)
        len = note(buf, sizeof buf, len,
                   "random: %u device node%s draw%s random numbers, new ones for each "
                   "value of the input '%.64s'\n",
                   random, random == 1 ? "" : "s", random == 1 ? "s" : "", c->opts->seed_input);
    else if (random)
        len = note(buf, sizeof buf, len,
                   "random: %u device node%s draw%s random numbers, the same on every "
                   "run of the binary (set by each node's seed, else its output "
                   "name; --seed-input makes them an input's)\n",
                   random, random == 1 ? "" : "s", random == 1 ? "s" : "");
    if (!len) return LM_OK;
    if (!(r->notes = malloc(len + 1)))
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    memcpy(r->notes, buf, len + 1);
    return LM_OK;
}

void fe_set_element_type(lm_buffer_name_options *o, fe_elem elem) {
    lm_element_type t = LM_ELEMENT_TYPE_AS_FORMAT;
    switch (elem) {
    case FE_DOUBLE:
        t = LM_ELEMENT_TYPE_FLOAT64;
        break;
    case FE_FLOAT16:
        t = LM_ELEMENT_TYPE_FLOAT16;
        break;
    case FE_INT64:
        t = LM_ELEMENT_TYPE_INT64;
        break;
    case FE_INT16:
        t = LM_ELEMENT_TYPE_INT16;
        break;
    case FE_INT8:
        t = LM_ELEMENT_TYPE_INT8;
        break;
    case FE_UINT16:
        t = LM_ELEMENT_TYPE_UINT16;
        break;
    case FE_UINT8:
        t = LM_ELEMENT_TYPE_UINT8;
        break;
    case FE_BOOL:
        t = LM_ELEMENT_TYPE_BOOL;
        break;
    case FE_UINT64:
        t = LM_ELEMENT_TYPE_UINT64;
        break;
    default:
        break;
    }
    o->element_type = t;
}
