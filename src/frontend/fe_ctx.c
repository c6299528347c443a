/* What op implementations use: inputs, attributes, outputs, errors and the
 * device form of values. */
#include "frontend/fe_ctx.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors ---- */

lm_status fe_fail(fe_ctx *c, const fe_node *n, lm_status status, const char *fmt, ...) {
    char msg[ERR_MESSAGE_MAX], label[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    (void)c;
    if (!n) return err_set(status, "%s", msg);
    return err_set(status, "node %s: %s", fe_node_label(n, label, sizeof label), msg);
}

lm_status fe_nn_fail(fe_ctx *c, const fe_node *n, lm_status st) {
    char label[256];
    (void)c;
    return err_prefix(st, "node %s", fe_node_label(n, label, sizeof label));
}

/* ---- inputs and attributes ---- */

uint32_t fe_in_count(const fe_node *n) {
    uint32_t k = n->input_count;
    while (k > 0 && n->inputs[k - 1] == FE_NONE)
        k--;
    return k;
}

bool fe_has_in(const fe_node *n, uint32_t i) {
    return i < n->input_count && n->inputs[i] != FE_NONE;
}

const fe_value *fe_in(fe_ctx *c, const fe_node *n, uint32_t i) {
    return fe_has_in(n, i) ? &c->g->values[n->inputs[i]] : NULL;
}

const fe_type *fe_in_type(fe_ctx *c, const fe_node *n, uint32_t i) {
    const fe_value *v = fe_in(c, n, i);
    return v ? &v->type : NULL;
}

const fe_tensor *fe_in_const(fe_ctx *c, const fe_node *n, uint32_t i) {
    const fe_value *v = fe_in(c, n, i);
    return v ? v->konst : NULL;
}

lm_status fe_in_const_required(fe_ctx *c, const fe_node *n, uint32_t i, const fe_tensor **out) {
    const fe_value *v = fe_in(c, n, i);
    if (!v) return fe_fail(c, n, LM_ERR_INVALID_FILE, "input %u is missing", i);
    if (!v->konst) {
        if (v->graph_input)
            return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                           "input %u ('%s') decides the output shape, so its value must be "
                           "known at compile time: give it as a constant (--const %s=FILE)",
                           i, v->name, v->name);
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "input %u ('%s') decides the output shape but is computed at run time "
                       "(data-dependent shapes are not supported; --graph-outputs, options: "
                       "outputs, compiles the model up to values before this node)",
                       i, v->name);
    }
    *out = v->konst;
    return LM_OK;
}

lm_status fe_check_unread(fe_ctx *c, const fe_node *n, uint32_t v, const char *what) {
    const fe_graph *g = c->g;
    for (uint32_t k = 0; k < g->node_count; k++) {
        const fe_node *m = &g->nodes[k];
        bool reads = false;
        for (uint32_t i = 0; i < m->input_count; i++)
            reads |= m->inputs[i] == v;
        for (uint32_t i = 0; i < m->implicit_count; i++)
            reads |= m->implicit[i] == v;
        if (reads)
            return fe_fail(
                c, n, LM_ERR_UNSUPPORTED,
                "%s, so it must be a graph output no node reads; node '%s' (%s) reads it", what,
                m->name[0] ? m->name : "(unnamed)", m->op_type);
    }
    return LM_OK;
}

bool fe_pad_value(fe_elem e, double *out) {
    if (fe_elem_is_float(e))
        *out = NAN;
    else if (e == FE_BOOL)
        *out = 0;
    else if (e == FE_INT8 || e == FE_INT16 || e == FE_INT32 || e == FE_INT64)
        *out = -1;
    else
        return false;
    return true;
}

lm_status fe_check_inputs(fe_ctx *c, const fe_node *n, uint32_t min, uint32_t max) {
    uint32_t k = fe_in_count(n);
    if (k < min || k > max) {
        if (min == max)
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "expected %u inputs, given %u", min, k);
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "expected %u to %u inputs, given %u", min, max,
                       k);
    }
    for (uint32_t i = 0; i < min; i++)
        if (!fe_has_in(n, i))
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "required input %u is empty", i);
    for (uint32_t i = 0; i < k; i++) {
        const fe_type *t = fe_in_type(c, n, i);
        if (t && fe_in(c, n, i)->is_seq) continue; /* its ops check a sequence or optional */
        if (t && (t->elem == FE_UNDEFINED || t->rank < 0))
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "input %u ('%s') has no known type", i,
                           fe_in(c, n, i)->name);
        if (t && t->elem == FE_STRING)
            return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                           "input %u ('%s'): string tensors are not "
                           "supported",
                           i, fe_in(c, n, i)->name);
    }
    return LM_OK;
}

static const fe_attr *attr_typed(fe_ctx *c, const fe_node *n, const char *name, fe_attr_type type,
                                 lm_status *st) {
    static const char *const names[] = {
        "undefined",      "float",      "int",        "string",  "tensor", "graph",
        "floats",         "ints",       "strings",    "tensors", "graphs", "sparse tensor",
        "sparse tensors", "type proto", "type protos"};
    *st = LM_OK;
    const fe_attr *a = fe_node_attr(n, name);
    if (!a) return NULL;
    if (a->type != type) {
        unsigned t = (unsigned)a->type < sizeof names / sizeof names[0] ? (unsigned)a->type : 0;
        *st = fe_fail(c, n, LM_ERR_INVALID_FILE, "attribute %s: expected %s, given %s", name,
                      names[type], names[t]);
        return NULL;
    }
    return a;
}

lm_status fe_attr_int(fe_ctx *c, const fe_node *n, const char *name, int64_t def, int64_t *out) {
    lm_status st;
    const fe_attr *a = attr_typed(c, n, name, FE_ATTR_INT, &st);
    *out = a ? a->i : def;
    return st;
}

lm_status fe_attr_float(fe_ctx *c, const fe_node *n, const char *name, float def, float *out) {
    lm_status st;
    const fe_attr *a = attr_typed(c, n, name, FE_ATTR_FLOAT, &st);
    *out = a ? a->f : def;
    return st;
}

lm_status fe_attr_string(fe_ctx *c, const fe_node *n, const char *name, const char *def,
                         const char **out) {
    lm_status st;
    const fe_attr *a = attr_typed(c, n, name, FE_ATTR_STRING, &st);
    *out = a ? a->s : def;
    return st;
}

lm_status fe_attr_choice(fe_ctx *c, const fe_node *n, const char *name, const char *def,
                         const char *const *names, int *out) {
    const char *v;
    lm_status st = fe_attr_string(c, n, name, def, &v);
    if (st) return st;
    if (!v) return fe_fail(c, n, LM_ERR_INVALID_FILE, "attribute %s is required", name);
    for (int i = 0; names[i]; i++)
        if (strcmp(v, names[i]) == 0) {
            *out = i;
            return LM_OK;
        }
    return fe_fail(c, n, LM_ERR_INVALID_FILE, "attribute %s=%s is not valid", name, v);
}

lm_status fe_attr_ints(fe_ctx *c, const fe_node *n, const char *name, const int64_t **out,
                       size_t *out_count) {
    lm_status st;
    const fe_attr *a = attr_typed(c, n, name, FE_ATTR_INTS, &st);
    *out = a ? a->ints : NULL;
    *out_count = a ? a->count : 0;
    return st;
}

lm_status fe_attr_floats(fe_ctx *c, const fe_node *n, const char *name, const float **out,
                         size_t *out_count) {
    lm_status st;
    const fe_attr *a = attr_typed(c, n, name, FE_ATTR_FLOATS, &st);
    *out = a ? a->floats : NULL;
    *out_count = a ? a->count : 0;
    return st;
}

lm_status fe_check_attrs(fe_ctx *c, const fe_node *n, const char *const *known) {
    for (uint32_t i = 0; i < n->attr_count; i++) {
        bool ok = false;
        for (const char *const *k = known; *k && !ok; k++)
            ok = strcmp(*k, n->attrs[i].name) == 0;
        if (!ok)
            return fe_fail(c, n, LM_ERR_UNSUPPORTED, "attribute '%s' is not supported",
                           n->attrs[i].name);
    }
    return LM_OK;
}

lm_status fe_axis(fe_ctx *c, const fe_node *n, int64_t axis, int32_t rank, int32_t *out) {
    int64_t r = rank;
    if (axis < -r || axis >= r || (r == 0 && axis != 0 && axis != -1))
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "axis %lld is out of range for rank %d",
                       (long long)axis, rank);
    *out = (int32_t)(axis < 0 ? axis + r : axis);
    return LM_OK;
}

/* ---- element types ---- */

bool fe_elem_is_float(fe_elem e) {
    return e == FE_FLOAT || e == FE_DOUBLE || e == FE_FLOAT16 || e == FE_BFLOAT16;
}

bool fe_elem_is_int(fe_elem e) {
    switch (e) {
    case FE_UINT8:
    case FE_INT8:
    case FE_UINT16:
    case FE_INT16:
    case FE_INT32:
    case FE_INT64:
    case FE_UINT32:
    case FE_UINT64:
        return true;
    default:
        return false;
    }
}

bool fe_elem_is_numeric(fe_elem e) {
    return fe_elem_is_float(e) || fe_elem_is_int(e);
}

lm_status fe_check_elem(fe_ctx *c, const fe_node *n, uint32_t i, const fe_elem *allowed) {
    const fe_type *t = fe_in_type(c, n, i);
    if (!t) return LM_OK;
    for (const fe_elem *a = allowed; *a != FE_UNDEFINED; a++)
        if (*a == t->elem) return LM_OK;
    return fe_fail(c, n, LM_ERR_UNSUPPORTED, "input %u ('%s'): element type %s is not supported", i,
                   fe_in(c, n, i)->name, fe_elem_name(t->elem));
}

/* ---- outputs ---- */

static lm_status out_value(fe_ctx *c, const fe_node *n, uint32_t i, fe_value **out) {
    if (i >= n->output_count)
        return fe_fail(c, n, LM_ERR_INVALID_FILE, "expected at least %u outputs, given %u", i + 1,
                       n->output_count);
    *out = n->outputs[i] == FE_NONE ? NULL : &c->g->values[n->outputs[i]];
    return LM_OK;
}

lm_status fe_check_fits_device(fe_ctx *c, const fe_node *n, const char *what, const fe_type *t) {
    /* Counted as 4-byte elements whatever the type: the device holds
     * integers and bools as 32-bit values, and a graph input crosses the
     * binary's edge as 4 bytes an element. */
    uint64_t volume = (uint64_t)fe_type_volume(t), size = 4;
    if (!c->dram_bytes || volume <= c->dram_bytes / size) return LM_OK;
    char buf[160];
    const double gib = 1024.0 * 1024.0 * 1024.0;
    return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                   "%s %s would take %.1f GiB, more than the device's %.1f GiB of DRAM", what,
                   fe_type_format(t, buf, sizeof buf), (double)volume * (double)size / gib,
                   (double)c->dram_bytes / gib);
}

lm_status fe_set_out_type(fe_ctx *c, const fe_node *n, uint32_t i, fe_elem elem, int32_t rank,
                          const int64_t *dims) {
    fe_value *v = NULL;
    lm_status st = out_value(c, n, i, &v);
    if (st || !v) return st;
    if (rank > FE_MAX_RANK)
        return fe_fail(c, n, LM_ERR_UNSUPPORTED,
                       "output %u ('%s') would have rank %d; at most %d "
                       "dims are supported",
                       i, v->name, rank, FE_MAX_RANK);
    int64_t volume = 1;
    for (int32_t d = 0; d < rank; d++) {
        if (dims[d] < 0)
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "output %u ('%s'): dim %d is negative (%lld)",
                           i, v->name, d, (long long)dims[d]);
        if (dims[d] && volume > INT64_MAX / dims[d])
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "output %u ('%s'): the shape overflows", i,
                           v->name);
        volume *= dims[d];
    }
    if (v->graph_output && v->type.elem != FE_UNDEFINED && v->type.elem != elem)
        return fe_fail(c, n, LM_ERR_INVALID_FILE,
                       "graph output '%s' is declared %s but the node makes %s", v->name,
                       fe_elem_name(v->type.elem), fe_elem_name(elem));
    fe_type t = {.elem = elem, .rank = rank};
    for (int32_t d = 0; d < rank; d++)
        t.dims[d] = dims[d];
    char what[320];
    snprintf(what, sizeof what, "output %u ('%s')", i, v->name);
    if ((st = fe_check_fits_device(c, n, what, &t))) return st;
    v->type = t;
    return LM_OK;
}

lm_status fe_set_out_const(fe_ctx *c, const fe_node *n, uint32_t i, const fe_tensor *t) {
    lm_status st = fe_set_out_type(c, n, i, t->elem, (int32_t)t->rank, t->dims);
    if (st) return st;
    if (n->outputs[i] != FE_NONE) c->g->values[n->outputs[i]].konst = t;
    return LM_OK;
}

lm_status fe_const_new(fe_ctx *c, fe_elem elem, uint32_t rank, const int64_t *dims,
                       fe_tensor **out) {
    fe_tensor *t = fe_arena_alloc(&c->g->arena, sizeof *t);
    if (!t) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    t->elem = elem;
    t->rank = rank;
    t->count = 1;
    for (uint32_t d = 0; d < rank; d++) {
        t->dims[d] = dims[d];
        if (dims[d] < 0 || (dims[d] && t->count > (UINT64_C(1) << 40) / (uint64_t)dims[d]))
            return err_set(LM_ERR_INVALID_FILE, "a folded constant is too large");
        t->count *= (uint64_t)dims[d];
    }
    size_t bytes = (size_t)(t->count * fe_elem_size(elem));
    if (c->dram_bytes && bytes > c->dram_bytes)
        return err_set(LM_ERR_UNSUPPORTED,
                       "a folded constant of %llu elements would take %.1f GiB, more than the "
                       "device's %.1f GiB of DRAM",
                       (unsigned long long)t->count, (double)bytes / (1024.0 * 1024.0 * 1024.0),
                       (double)c->dram_bytes / (1024.0 * 1024.0 * 1024.0));
    void *data = fe_arena_alloc(&c->g->arena, bytes ? bytes : 1);
    if (!data) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    t->data = data;
    *out = t;
    return LM_OK;
}

uint64_t fe_bcast_index(const fe_type *out, const fe_tensor *in, uint64_t idx) {
    uint64_t off = 0, stride = 1;
    int32_t shift = out->rank - (int32_t)in->rank;
    for (int32_t d = out->rank - 1; d >= 0; d--) {
        uint64_t od = (uint64_t)out->dims[d], i = od ? idx % od : 0;
        idx = od ? idx / od : 0;
        int32_t id = d - shift;
        if (id < 0) continue;
        uint64_t n = (uint64_t)in->dims[id];
        if (n != 1) off += i * stride;
        stride *= n;
    }
    return off;
}

static uint16_t f32_to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u, exp = (x >> 23) & 0xffu, man = x & 0x7fffffu;
    if (exp == 0xff) return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0));
    int32_t e = (int32_t)exp - 127 + 15;
    if (e >= 31) return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {
        if (e < -10) return (uint16_t)sign;
        man |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - e);
        uint32_t half = man >> shift, rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1))) half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = ((uint32_t)e << 10) | (man >> 13), rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) half++;
    return (uint16_t)(sign | half);
}

void fe_tensor_set_f64(fe_tensor *t, uint64_t index, double v) {
    void *p = (void *)t->data;
    switch (t->elem) {
    case FE_FLOAT:
        ((float *)p)[index] = (float)v;
        break;
    case FE_DOUBLE:
        ((double *)p)[index] = v;
        break;
    case FE_FLOAT16:
        ((uint16_t *)p)[index] = f32_to_f16((float)v);
        break;
    case FE_BFLOAT16: {
        float f = (float)v;
        uint32_t x;
        memcpy(&x, &f, 4);
        if ((x & 0x7fffffffu) > 0x7f800000u)
            x |= 0x400000u;
        else
            x += 0x7fffu + ((x >> 16) & 1);
        ((uint16_t *)p)[index] = (uint16_t)(x >> 16);
        break;
    }
    case FE_BOOL:
        ((uint8_t *)p)[index] = v != 0;
        break;
    default:
        fe_tensor_set_i64(t, index, isnan(v) ? 0 : (int64_t)v);
        break;
    }
}

void fe_tensor_set_i64(fe_tensor *t, uint64_t index, int64_t v) {
    void *p = (void *)t->data;
    switch (t->elem) {
    case FE_UINT8:
        ((uint8_t *)p)[index] = (uint8_t)v;
        break;
    case FE_INT8:
        ((int8_t *)p)[index] = (int8_t)v;
        break;
    case FE_UINT16:
        ((uint16_t *)p)[index] = (uint16_t)v;
        break;
    case FE_INT16:
        ((int16_t *)p)[index] = (int16_t)v;
        break;
    case FE_INT32:
        ((int32_t *)p)[index] = (int32_t)v;
        break;
    case FE_INT64:
        ((int64_t *)p)[index] = v;
        break;
    case FE_UINT32:
        ((uint32_t *)p)[index] = (uint32_t)v;
        break;
    case FE_UINT64:
        ((uint64_t *)p)[index] = (uint64_t)v;
        break;
    case FE_BOOL:
        ((uint8_t *)p)[index] = v != 0;
        break;
    default:
        fe_tensor_set_f64(t, index, (double)v);
        break;
    }
}

lm_status fe_broadcast(fe_ctx *c, const fe_node *n, const fe_type *a, const fe_type *b,
                       fe_type *out) {
    int32_t r = a->rank > b->rank ? a->rank : b->rank;
    fe_type t = {.elem = a->elem, .rank = r};
    for (int32_t i = 0; i < r; i++) {
        int32_t ia = i - (r - a->rank), ib = i - (r - b->rank);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da != db && da != 1 && db != 1) {
            char sa[160], sb[160];
            return fe_fail(c, n, LM_ERR_INVALID_FILE, "shapes %s and %s do not broadcast",
                           fe_type_format(a, sa, sizeof sa), fe_type_format(b, sb, sizeof sb));
        }
        t.dims[i] = da == 1 ? db : da;
    }
    *out = t;
    return LM_OK;
}

lmnn_shape fe_shape(int32_t rank, const int64_t *dims) {
    lmnn_shape s = {.rank = (uint32_t)rank};
    for (int32_t i = 0; i < rank; i++)
        s.dims[i] = (uint32_t)dims[i];
    return s;
}

void fe_free(lmnn_tensor t) {
    if (t.id) (void)lmnn_tensor_free(t);
}
