/* Rewriting a node into other nodes during inference.
 *
 * The graph grows in place: node k is replaced by the new nodes (the nodes
 * after it move along), new values are appended, and the per-node plans
 * and per-value slots follow. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/fe_ops.h"
#include "frontend/fe_passes.h"

lm_status fe_x_oom(void) {
    return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
}

/* A new value named prefix + name, type unknown. */
lm_status fe_x_value(fe_expansion *x, const char *name, uint32_t *out) {
    fe_graph *g = x->c->g;
    if (g->value_count == FE_MAX_VALUES)
        return fe_fail(x->c, &x->node, LM_ERR_UNSUPPORTED, "unrolling makes more than %u values",
                       FE_MAX_VALUES);
    if (g->value_count == g->value_cap) {
        uint32_t cap = g->value_cap ? 2 * g->value_cap : 64;
        if (cap > FE_MAX_VALUES) cap = FE_MAX_VALUES;
        fe_value *v = fe_arena_alloc(&x->c->g->arena, (size_t)cap * sizeof *v);
        fe_slot *s = realloc(x->c->slots, (size_t)cap * sizeof *s);
        if (s) x->c->slots = s;
        if (!v || !s) return fe_x_oom();
        memcpy(v, g->values, (size_t)g->value_count * sizeof *v);
        g->values = v;
        g->value_cap = cap;
    }
    size_t len = strlen(x->prefix) + strlen(name) + 1;
    char *full = fe_arena_alloc(&x->c->g->arena, len);
    if (!full) return fe_x_oom();
    snprintf(full, len, "%s%s", x->prefix, name);
    uint32_t v = g->value_count++;
    g->values[v] = (fe_value){.name = full, .producer = FE_NONE};
    g->values[v].type.rank = -1;
    x->c->slots[v] = (fe_slot){.dev = FE_NONE};
    *out = v;
    return LM_OK;
}

lm_status fe_x_const(fe_expansion *x, const fe_tensor *t, const char *name, uint32_t *out) {
    lm_status st = fe_x_value(x, name, out);
    if (st) return st;
    fe_value *v = &x->c->g->values[*out];
    v->konst = t;
    v->initializer = true;
    v->type.elem = t->elem;
    v->type.rank = (int32_t)t->rank;
    memcpy(v->type.dims, t->dims, sizeof t->dims);
    return LM_OK;
}

/* A scalar constant: int64 `i`, or bool `i != 0`. */
lm_status fe_x_scalar(fe_expansion *x, fe_elem elem, int64_t i, const char *name, uint32_t *out) {
    fe_tensor *t;
    lm_status st = fe_const_new(x->c, elem, 0, NULL, &t);
    if (st) return st;
    fe_tensor_set_i64(t, 0, elem == FE_BOOL ? i != 0 : i);
    return fe_x_const(x, t, name, out);
}

/* A new node (arrays in the arena) appended to the expansion. */
fe_node *fe_x_node(fe_expansion *x, const char *op, int64_t opset, uint32_t inputs,
                   uint32_t outputs) {
    if (x->count == x->cap) {
        uint32_t cap = x->cap ? 2 * x->cap : 16;
        fe_node *n = realloc(x->nodes, (size_t)cap * sizeof *n);
        if (!n) return NULL;
        x->nodes = n;
        x->cap = cap;
    }
    fe_node *n = &x->nodes[x->count];
    *n = (fe_node){.name = "", .op_type = op, .domain = "", .opset = opset, .index = x->node.index};
    n->inputs = fe_arena_alloc(&x->c->g->arena, (inputs ? inputs : 1) * sizeof *n->inputs);
    n->outputs = fe_arena_alloc(&x->c->g->arena, (outputs ? outputs : 1) * sizeof *n->outputs);
    if (!n->inputs || !n->outputs) return NULL;
    n->input_count = inputs;
    n->output_count = outputs;
    x->count++;
    return n;
}

/* An INT or INTS attribute for a new node. */
lm_status fe_x_int_attr(fe_expansion *x, fe_node *n, const char *name, bool list, int64_t v) {
    fe_attr *a = fe_arena_alloc(&x->c->g->arena, sizeof *a);
    int64_t *ints = fe_arena_alloc(&x->c->g->arena, sizeof *ints);
    if (!a || !ints) return fe_x_oom();
    *ints = v;
    *a = (fe_attr){.name = name, .type = list ? FE_ATTR_INTS : FE_ATTR_INT, .i = v};
    if (list) {
        a->ints = ints;
        a->count = 1;
    }
    n->attrs = a;
    n->attr_count = 1;
    return LM_OK;
}

lm_status fe_x_op(fe_expansion *x, const char *op, uint32_t a, uint32_t b, uint32_t *out) {
    lm_status st = *out == FE_NONE ? fe_x_value(x, op, out) : LM_OK;
    fe_node *n = st ? NULL : fe_x_node(x, op, 13, b == FE_NONE ? 1 : 2, 1);
    if (!st && !n) st = fe_x_oom();
    if (st) return st;
    n->inputs[0] = a;
    if (b != FE_NONE) n->inputs[1] = b;
    n->outputs[0] = *out;
    return LM_OK;
}

lm_status fe_x_emit(fe_expansion *x, const char *op, uint32_t a, uint32_t b, uint32_t *out) {
    *out = FE_NONE;
    return fe_x_op(x, op, a, b, out);
}

lm_status fe_x_emit_n(fe_expansion *x, const char *op, int64_t opset, const uint32_t *in,
                      uint32_t count, uint32_t *out, fe_node **out_node) {
    uint32_t v;
    lm_status st = fe_x_value(x, op, &v);
    if (st) return st;
    fe_node *n = fe_x_node(x, op, opset, count, 1);
    if (!n) return fe_x_oom();
    memcpy(n->inputs, in, count * sizeof *in);
    n->outputs[0] = v;
    *out = v;
    if (out_node) *out_node = n;
    return LM_OK;
}

lm_status fe_x_float(fe_expansion *x, fe_elem elem, double v, uint32_t *out) {
    fe_tensor *t;
    lm_status st = fe_const_new(x->c, elem, 0, NULL, &t);
    if (st) return st;
    fe_tensor_set_f64(t, 0, v);
    return fe_x_const(x, t, "k", out);
}

lm_status fe_x_identity(fe_expansion *x, uint32_t from, uint32_t to) {
    fe_node *n = fe_x_node(x, "Identity", 13, 1, 1);
    if (!n) return fe_x_oom();
    n->inputs[0] = from;
    n->outputs[0] = to;
    return LM_OK;
}

/* `piece` with a new dim of 1 at `axis` (a new value). */
lm_status fe_x_unsqueeze(fe_expansion *x, uint32_t piece, int64_t axis, uint32_t *out) {
    lm_status st = fe_x_value(x, "piece", out);
    fe_node *n = st ? NULL : fe_x_node(x, "Unsqueeze", 11, 1, 1);
    if (!st && !n) st = fe_x_oom();
    if (st) return st;
    n->inputs[0] = piece;
    n->outputs[0] = *out;
    return fe_x_int_attr(x, n, "axes", true, axis);
}

/* ---- sticky building ---- */

uint32_t fe_b_node(fe_build *b, const char *op, int64_t opset, const uint32_t *in, uint32_t n_in,
                   fe_node **out_node) {
    uint32_t v = FE_NONE;
    if (!b->st) b->st = fe_x_emit_n(&b->x, op, opset, in, n_in, &v, out_node);
    return b->st ? FE_NONE : v;
}

uint32_t fe_b_op(fe_build *b, const char *op, uint32_t a, uint32_t c) {
    return fe_b_node(b, op, 13, (const uint32_t[]){a, c}, c == FE_NONE ? 1 : 2, NULL);
}

void fe_b_attr(fe_build *b, fe_node *n, fe_attr a) {
    if (b->st || !n) return;
    fe_attr *list = fe_arena_alloc(&b->x.c->g->arena, (n->attr_count + 1) * sizeof *list);
    if (!list) {
        b->st = fe_x_oom();
        return;
    }
    if (n->attr_count) memcpy(list, n->attrs, n->attr_count * sizeof *list);
    list[n->attr_count] = a;
    n->attrs = list;
    n->attr_count++;
}

void fe_b_ints_attr(fe_build *b, fe_node *n, const char *name, bool list, const int64_t *v,
                    int32_t count) {
    if (b->st || !n) return;
    if (!list) {
        fe_b_attr(b, n, (fe_attr){.name = name, .type = FE_ATTR_INT, .i = v[0]});
        return;
    }
    int64_t *ints = fe_arena_alloc(&b->x.c->g->arena, (size_t)(count ? count : 1) * sizeof *ints);
    if (!ints) {
        b->st = fe_x_oom();
        return;
    }
    memcpy(ints, v, (size_t)count * sizeof *v);
    fe_b_attr(b, n,
              (fe_attr){.name = name, .type = FE_ATTR_INTS, .ints = ints, .count = (size_t)count});
}

uint32_t fe_b_const(fe_build *b, fe_elem elem, uint32_t rank, const int64_t *dims, double fill) {
    if (b->st) return FE_NONE;
    fe_tensor *t;
    uint32_t v;
    if ((b->st = fe_const_new(b->x.c, elem, rank, dims, &t))) return FE_NONE;
    for (uint64_t i = 0; i < t->count; i++)
        fe_tensor_set_f64(t, i, fill);
    if ((b->st = fe_x_const(&b->x, t, "k", &v))) return FE_NONE;
    return v;
}

uint32_t fe_b_scalar(fe_build *b, double v) {
    return fe_b_const(b, b->elem, 0, NULL, v);
}

uint32_t fe_b_ints(fe_build *b, const int64_t *v, uint32_t count) {
    if (b->st) return FE_NONE;
    fe_tensor *t;
    uint32_t out;
    if ((b->st = fe_const_new(b->x.c, FE_INT64, 1, (const int64_t[]){count}, &t))) return FE_NONE;
    for (uint32_t i = 0; i < count; i++)
        fe_tensor_set_i64(t, i, v[i]);
    if ((b->st = fe_x_const(&b->x, t, "ints", &out))) return FE_NONE;
    return out;
}

fe_node *fe_b_copy_node(fe_build *b) {
    const fe_node *nd = &b->x.node;
    fe_node *m =
        b->st ? NULL : fe_x_node(&b->x, nd->op_type, nd->opset, nd->input_count, nd->output_count);
    if (!b->st && !m) b->st = fe_x_oom();
    if (!m) return NULL;
    uint32_t *in = m->inputs, *out = m->outputs;
    *m = *nd;
    m->inputs = memcpy(in, nd->inputs, nd->input_count * sizeof *in);
    m->outputs = memcpy(out, nd->outputs, nd->output_count * sizeof *out);
    return m;
}

uint32_t fe_b_iota(fe_build *b, int64_t count) {
    if (b->st) return FE_NONE;
    fe_tensor *t;
    uint32_t out;
    if ((b->st = fe_const_new(b->x.c, FE_INT64, 1, &count, &t))) return FE_NONE;
    for (int64_t i = 0; i < count; i++)
        fe_tensor_set_i64(t, (uint64_t)i, i);
    if ((b->st = fe_x_const(&b->x, t, "positions", &out))) return FE_NONE;
    return out;
}

uint32_t fe_b_cast(fe_build *b, uint32_t v, fe_elem to) {
    fe_node *n = NULL;
    uint32_t out = fe_b_node(b, "Cast", 13, &v, 1, &n);
    fe_b_ints_attr(b, n, "to", false, (const int64_t[]){to}, 1);
    return out;
}

uint32_t fe_b_where(fe_build *b, uint32_t cond, uint32_t x, uint32_t y) {
    return fe_b_node(b, "Where", 16, (const uint32_t[]){cond, x, y}, 3, NULL);
}

uint32_t fe_b_sum(fe_build *b, uint32_t v, const int64_t *axes, uint32_t count) {
    return fe_b_op(b, "ReduceSum", v, fe_b_ints(b, axes, count));
}

uint32_t fe_b_slice(fe_build *b, uint32_t v, int64_t axis, int64_t from, int64_t to) {
    uint32_t in[4] = {v, fe_b_ints(b, &from, 1), fe_b_ints(b, &to, 1), fe_b_ints(b, &axis, 1)};
    return fe_b_node(b, "Slice", 13, in, 4, NULL);
}

uint32_t fe_b_unsqueeze(fe_build *b, uint32_t v, int64_t axis) {
    uint32_t out = FE_NONE;
    if (!b->st) b->st = fe_x_unsqueeze(&b->x, v, axis, &out);
    return b->st ? FE_NONE : out;
}

uint32_t fe_b_concat(fe_build *b, const uint32_t *parts, uint32_t count, int64_t axis) {
    if (count == 1) return parts[0];
    fe_node *n = NULL;
    uint32_t r = fe_b_node(b, "Concat", 13, parts, count, &n);
    fe_b_ints_attr(b, n, "axis", false, &axis, 1);
    return r;
}

uint32_t fe_b_reshape(fe_build *b, uint32_t v, const int64_t *dims, uint32_t rank) {
    return fe_b_op(b, "Reshape", v, fe_b_ints(b, dims, rank));
}

/* Replaces node k by the expansion's nodes: the nodes after it move along
 * with their plans; producers and use counts follow. */
static lm_status splice(fe_expansion *x) {
    fe_ctx *c = x->c;
    fe_graph *g = c->g;
    uint64_t total = (uint64_t)g->node_count - 1 + x->count;
    if (total > FE_MAX_NODES)
        return fe_fail(c, &x->node, LM_ERR_UNSUPPORTED, "unrolling makes more than %u nodes",
                       FE_MAX_NODES);
    if (total > g->node_cap) {
        uint32_t cap = g->node_cap ? g->node_cap : 16;
        while (cap < total)
            cap *= 2;
        fe_node *n = fe_arena_alloc(&g->arena, (size_t)cap * sizeof *n);
        fe_plan *p = realloc(c->plans, (size_t)cap * sizeof *p);
        if (p) c->plans = p;
        if (!n || !p) return fe_x_oom();
        memcpy(n, g->nodes, (size_t)g->node_count * sizeof *n);
        g->nodes = n;
        g->node_cap = cap;
    }
    const fe_node *old = &g->nodes[x->k];
    for (uint32_t i = 0; i < old->input_count; i++)
        if (old->inputs[i] != FE_NONE) g->values[old->inputs[i]].use_count--;
    for (uint32_t i = 0; i < old->implicit_count; i++)
        g->values[old->implicit[i]].use_count--;
    uint32_t tail = g->node_count - x->k - 1;
    memmove(&g->nodes[x->k + x->count], &g->nodes[x->k + 1], (size_t)tail * sizeof *g->nodes);
    memmove(&c->plans[x->k + x->count], &c->plans[x->k + 1], (size_t)tail * sizeof *c->plans);
    memcpy(&g->nodes[x->k], x->nodes, (size_t)x->count * sizeof *g->nodes);
    g->node_count = (uint32_t)total;
    for (uint32_t i = x->k; i < x->k + x->count; i++) {
        c->plans[i] = (fe_plan){.placement = LMFE_ON_DEVICE};
        c->plans[i].fusion.output = FE_NONE;
        c->plans[i].fusion.act_alpha = c->plans[i].fusion.act_beta = NAN;
        const fe_node *n = &g->nodes[i];
        for (uint32_t j = 0; j < n->input_count; j++)
            if (n->inputs[j] != FE_NONE) g->values[n->inputs[j]].use_count++;
        for (uint32_t j = 0; j < n->implicit_count; j++)
            g->values[n->implicit[j]].use_count++;
    }
    for (uint32_t i = x->k; i < g->node_count; i++)
        for (uint32_t j = 0; j < g->nodes[i].output_count; j++)
            if (g->nodes[i].outputs[j] != FE_NONE) g->values[g->nodes[i].outputs[j]].producer = i;
    return LM_OK;
}

lm_status fe_x_finish(fe_expansion *x, lm_status st) {
    if (!st) st = splice(x);
    free(x->nodes);
    x->nodes = NULL;
    return st;
}

void fe_x_begin(fe_ctx *c, const fe_node *n, fe_expansion *x) {
    *x = (fe_expansion){.c = c, .k = (uint32_t)(n - c->g->nodes), .node = *n};
    if (n->name[0])
        snprintf(x->prefix, sizeof x->prefix, "%s/", n->name);
    else
        snprintf(x->prefix, sizeof x->prefix, "%s#%u/", n->op_type, n->index);
}

lm_status fe_x_end(fe_ctx *c, fe_expansion *x, lm_status st) {
    st = fe_x_finish(x, st);
    if (!st) c->expanded = true;
    return st;
}
