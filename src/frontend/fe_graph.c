/* The graph form's small helpers: element types, the arena, constants,
 * types, attribute and name look-ups, and cutting a graph at chosen
 * outputs. */
#include "frontend/fe_graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

/* ---- element types ---- */

size_t fe_elem_size(fe_elem elem) {
    switch (elem) {
    case FE_FLOAT:
        return 4;
    case FE_UINT8:
        return 1;
    case FE_INT8:
        return 1;
    case FE_UINT16:
        return 2;
    case FE_INT16:
        return 2;
    case FE_INT32:
        return 4;
    case FE_INT64:
        return 8;
    case FE_BOOL:
        return 1;
    case FE_FLOAT16:
        return 2;
    case FE_DOUBLE:
        return 8;
    case FE_UINT32:
        return 4;
    case FE_UINT64:
        return 8;
    case FE_COMPLEX64:
        return 8;
    case FE_COMPLEX128:
        return 16;
    case FE_BFLOAT16:
        return 2;
    default:
        return 0;
    }
}

const char *fe_elem_name(fe_elem elem) {
    switch (elem) {
    case FE_UNDEFINED:
        return "undefined";
    case FE_FLOAT:
        return "float";
    case FE_UINT8:
        return "uint8";
    case FE_INT8:
        return "int8";
    case FE_UINT16:
        return "uint16";
    case FE_INT16:
        return "int16";
    case FE_INT32:
        return "int32";
    case FE_INT64:
        return "int64";
    case FE_STRING:
        return "string";
    case FE_BOOL:
        return "bool";
    case FE_FLOAT16:
        return "float16";
    case FE_DOUBLE:
        return "double";
    case FE_UINT32:
        return "uint32";
    case FE_UINT64:
        return "uint64";
    case FE_COMPLEX64:
        return "complex64";
    case FE_COMPLEX128:
        return "complex128";
    case FE_BFLOAT16:
        return "bfloat16";
    default:
        return "unknown";
    }
}

/* ---- arena ---- */

/* Blocks are chained newest first; small requests are carved from the head
 * block, large ones get a block of their own (so a big tensor does not waste
 * the rest of a shared block). */
struct fe_arena_block {
    fe_arena_block *next;
    size_t size; /* usable bytes after the header */
    size_t used;
    void *adopted; /* fe_arena_adopt's allocation, freed with the block */
    /* Keeps the payload 16-byte aligned. */
    _Alignas(16) unsigned char data[];
};

#define FE_ARENA_BLOCK (64u * 1024u)
/* No single request beyond this is honoured: it can only come from a
 * corrupted size (FE_MAX_TENSOR_BYTES is far below). */
#define FE_ARENA_MAX ((size_t)1 << 40)

static fe_arena_block *arena_new_block(fe_arena *arena, size_t size) {
    fe_arena_block *b = calloc(1, sizeof *b + size);
    if (!b) return NULL;
    b->size = size;
    b->next = arena->head;
    arena->head = b;
    return b;
}

/* A block of one allocation, linked behind the head so the head keeps its
 * space. */
static void link_own(fe_arena *arena, fe_arena_block *own, size_t bytes) {
    fe_arena_block *b = arena->head;
    if (b) {
        own->next = b->next;
        b->next = own;
    } else {
        arena->head = own;
    }
    arena->bytes += bytes;
}

bool fe_arena_adopt(fe_arena *arena, void *allocation, size_t size) {
    fe_arena_block *own = calloc(1, sizeof *own);
    if (!own) return false;
    own->adopted = allocation;
    link_own(arena, own, size);
    return true;
}

void *fe_arena_alloc(fe_arena *arena, size_t size) {
    if (size > FE_ARENA_MAX) return NULL;
    size_t rounded = (size + 15u) & ~(size_t)15u;
    if (rounded == 0) rounded = 16;
    fe_arena_block *b = arena->head;
    if (rounded > FE_ARENA_BLOCK / 4) {
        fe_arena_block *own = calloc(1, sizeof *own + rounded);
        if (!own) return NULL;
        own->size = own->used = rounded;
        link_own(arena, own, rounded);
        return own->data;
    }
    if (!b || b->size - b->used < rounded) {
        b = arena_new_block(arena, FE_ARENA_BLOCK);
        if (!b) return NULL;
    }
    void *p = b->data + b->used;
    b->used += rounded;
    arena->bytes += rounded;
    return p;
}

char *fe_arena_strndup(fe_arena *arena, const char *s, size_t len) {
    if (len >= FE_ARENA_MAX) return NULL;
    char *p = fe_arena_alloc(arena, len + 1);
    if (!p) return NULL;
    if (len) memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

void fe_arena_free(fe_arena *arena) {
    fe_arena_block *b = arena->head;
    while (b) {
        fe_arena_block *next = b->next;
        free(b->adopted);
        free(b);
        b = next;
    }
    arena->head = NULL;
    arena->bytes = 0;
}

/* ---- constants ---- */

static double half_to_double(uint16_t h) {
    int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    double v;
    if (exp == 0) {
        v = mant * (1.0 / (1 << 24)); /* subnormal: mant * 2^-24 */
    } else if (exp == 31) {
        v = mant ? (double)NAN : (double)INFINITY;
    } else {
        v = (1.0 + mant / 1024.0);
        int e = exp - 15;
        v = e >= 0 ? v * (double)(1u << e) : v / (double)(1u << -e);
    }
    return sign ? -v : v;
}

static double bf16_to_double(uint16_t b) {
    uint32_t bits = (uint32_t)b << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

double fe_tensor_get_f64(const fe_tensor *t, uint64_t i) {
    const void *d = t->data;
    switch (t->elem) {
    case FE_FLOAT:
        return ((const float *)d)[i];
    case FE_UINT8:
        return ((const uint8_t *)d)[i];
    case FE_INT8:
        return ((const int8_t *)d)[i];
    case FE_UINT16:
        return ((const uint16_t *)d)[i];
    case FE_INT16:
        return ((const int16_t *)d)[i];
    case FE_INT32:
        return ((const int32_t *)d)[i];
    case FE_INT64:
        return (double)((const int64_t *)d)[i];
    case FE_BOOL:
        return ((const uint8_t *)d)[i] != 0;
    case FE_FLOAT16:
        return half_to_double(((const uint16_t *)d)[i]);
    case FE_DOUBLE:
        return ((const double *)d)[i];
    case FE_UINT32:
        return ((const uint32_t *)d)[i];
    case FE_UINT64:
        return (double)((const uint64_t *)d)[i];
    /* Complex numbers: the real part. */
    case FE_COMPLEX64:
        return ((const float *)d)[2 * i];
    case FE_COMPLEX128:
        return ((const double *)d)[2 * i];
    case FE_BFLOAT16:
        return bf16_to_double(((const uint16_t *)d)[i]);
    default:
        return 0.0;
    }
}

/* Float to int64 saturating, NaN to 0: a plain cast of an out-of-range
 * float is undefined behaviour. */
static int64_t f64_to_i64(double v) {
    if (v != v) return 0;
    if (v >= 9223372036854775807.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}

int64_t fe_tensor_get_i64(const fe_tensor *t, uint64_t i) {
    const void *d = t->data;
    switch (t->elem) {
    case FE_UINT8:
        return ((const uint8_t *)d)[i];
    case FE_INT8:
        return ((const int8_t *)d)[i];
    case FE_UINT16:
        return ((const uint16_t *)d)[i];
    case FE_INT16:
        return ((const int16_t *)d)[i];
    case FE_INT32:
        return ((const int32_t *)d)[i];
    case FE_INT64:
        return ((const int64_t *)d)[i];
    case FE_BOOL:
        return ((const uint8_t *)d)[i] != 0;
    case FE_UINT32:
        return ((const uint32_t *)d)[i];
    case FE_UINT64:
        return (int64_t)((const uint64_t *)d)[i];
    default:
        return f64_to_i64(fe_tensor_get_f64(t, i));
    }
}

/* ---- types ---- */

int64_t fe_type_volume(const fe_type *t) {
    if (t->rank < 0 || t->rank > FE_MAX_RANK) return -1;
    int64_t v = 1;
    for (int32_t i = 0; i < t->rank; i++) {
        if (t->dims[i] < 0) return -1;
        if (__builtin_mul_overflow(v, t->dims[i], &v)) return -1;
    }
    return v;
}

bool fe_type_is_known(const fe_type *t) {
    if (t->elem == FE_UNDEFINED || t->rank < 0 || t->rank > FE_MAX_RANK) return false;
    for (int32_t i = 0; i < t->rank; i++)
        if (t->dims[i] < 0) return false;
    return true;
}

const char *fe_type_format(const fe_type *t, char *buf, size_t size) {
    if (!buf || size == 0) return "";
    size_t n = 0;
#define FE_APPEND(...)                                                                             \
    do {                                                                                           \
        if (n < size) {                                                                            \
            int w_ = snprintf(buf + n, size - n, __VA_ARGS__);                                     \
            if (w_ > 0) n += (size_t)w_;                                                           \
        }                                                                                          \
    } while (0)
    FE_APPEND("%s[", fe_elem_name(t->elem));
    if (t->rank < 0 || t->rank > FE_MAX_RANK) {
        FE_APPEND("?");
    } else {
        for (int32_t i = 0; i < t->rank; i++) {
            if (i) FE_APPEND(", ");
            if (t->dims[i] >= 0)
                FE_APPEND("%lld", (long long)t->dims[i]);
            else if (t->sym[i] && t->sym[i][0])
                FE_APPEND("%s", t->sym[i]);
            else
                FE_APPEND("?");
        }
    }
    FE_APPEND("]");
#undef FE_APPEND
    return buf;
}

/* ---- nodes, attributes, values ---- */

const char *fe_node_label(const fe_node *node, char *buf, size_t size) {
    if (!buf || size == 0) return "";
    const char *op = node->op_type ? node->op_type : "?";
    if (node->name && node->name[0])
        snprintf(buf, size, "'%s' (%s)", node->name, op);
    else
        snprintf(buf, size, "#%u (%s)", node->index, op);
    return buf;
}

const fe_attr *fe_node_attr(const fe_node *node, const char *name) {
    for (uint32_t i = 0; i < node->attr_count; i++)
        if (node->attrs[i].name && strcmp(node->attrs[i].name, name) == 0) return &node->attrs[i];
    return NULL;
}

uint32_t fe_graph_find_value(const fe_graph *graph, const char *name) {
    for (uint32_t i = 0; i < graph->value_count; i++)
        if (graph->values[i].name && strcmp(graph->values[i].name, name) == 0) return i;
    return FE_NONE;
}

void fe_node_push_operands(const fe_node *n, uint8_t *seen, uint32_t *stack, uint32_t *top) {
    for (uint32_t i = 0; i < n->input_count + n->implicit_count; i++) {
        uint32_t u = i < n->input_count ? n->inputs[i] : n->implicit[i - n->input_count];
        if (u != FE_NONE && !seen[u]) {
            seen[u] = 1;
            stack[(*top)++] = u;
        }
    }
}

/* Recounts every value's use_count: node inputs and implicit inputs that
 * read it, plus 1 when it is a graph output. */
static void count_uses(fe_graph *g) {
    for (uint32_t v = 0; v < g->value_count; v++)
        g->values[v].use_count = 0;
    for (uint32_t k = 0; k < g->node_count; k++) {
        const fe_node *n = &g->nodes[k];
        for (uint32_t i = 0; i < n->input_count; i++)
            if (n->inputs[i] != FE_NONE) g->values[n->inputs[i]].use_count++;
        for (uint32_t i = 0; i < n->implicit_count; i++)
            g->values[n->implicit[i]].use_count++;
    }
    for (uint32_t k = 0; k < g->output_count; k++)
        g->values[g->outputs[k]].use_count++;
}

lm_status fe_graph_cut(fe_graph *g, const char *const *names, size_t count) {
    if (!count) return LM_OK;
    if (count > g->value_count)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%zu outputs: the graph has %u values", count,
                       g->value_count);
    uint32_t *outs = fe_arena_alloc(&g->arena, count * sizeof *outs);
    uint8_t *live = calloc(g->value_count, 1);
    lm_status st = outs && live ? LM_OK : err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    for (size_t i = 0; !st && i < count; i++) {
        uint32_t v = names[i] ? fe_graph_find_value(g, names[i]) : FE_NONE;
        if (!names[i])
            st = err_set(LM_ERR_INVALID_ARGUMENT, "outputs[%zu] is NULL", i);
        else if (v == FE_NONE)
            st = err_set(LM_ERR_INVALID_ARGUMENT,
                         "output '%s': the model has no value of that name (a node's output or "
                         "an initializer)",
                         names[i]);
        else if (live[v])
            st = err_set(LM_ERR_INVALID_ARGUMENT, "output '%s' is given twice", names[i]);
        else if (g->values[v].graph_input)
            st = err_set(LM_ERR_INVALID_ARGUMENT,
                         "output '%s' is a graph input: choose a value a node makes (or an "
                         "initializer)",
                         names[i]);
        else if (g->values[v].declared_seq || g->values[v].declared_opt)
            st = err_set(LM_ERR_INVALID_ARGUMENT,
                         "output '%s' is a sequence or an optional: only tensors can be chosen",
                         names[i]);
        if (!st) outs[i] = v;
        if (!st) live[v] = 1;
    }
    if (st) {
        free(live);
        return st;
    }
    /* The nodes the chosen values depend on, found from the last back. */
    for (uint32_t k = g->node_count; k-- > 0;) {
        const fe_node *n = &g->nodes[k];
        bool needed = false;
        for (uint32_t i = 0; i < n->output_count; i++)
            needed |= n->outputs[i] != FE_NONE && live[n->outputs[i]];
        if (!needed) continue;
        for (uint32_t i = 0; i < n->input_count; i++)
            if (n->inputs[i] != FE_NONE) live[n->inputs[i]] = 1;
        for (uint32_t i = 0; i < n->implicit_count; i++)
            live[n->implicit[i]] = 1;
    }
    /* Kept nodes move down in order (still sorted); a removed node's
     * outputs are made by nothing and read by nothing. */
    uint32_t j = 0;
    for (uint32_t k = 0; k < g->node_count; k++) {
        fe_node *n = &g->nodes[k];
        bool needed = false;
        for (uint32_t i = 0; i < n->output_count; i++)
            needed |= n->outputs[i] != FE_NONE && live[n->outputs[i]];
        for (uint32_t i = 0; i < n->output_count; i++)
            if (n->outputs[i] != FE_NONE) g->values[n->outputs[i]].producer = needed ? j : FE_NONE;
        if (needed) g->nodes[j++] = *n;
    }
    g->node_count = j;
    for (uint32_t k = 0; k < g->output_count; k++)
        g->values[g->outputs[k]].graph_output = false;
    for (size_t i = 0; i < count; i++)
        g->values[outs[i]].graph_output = true;
    g->outputs = outs;
    g->output_count = (uint32_t)count;
    g->output_names = NULL;
    /* Graph inputs nothing kept reads (and not chosen) leave the interface. */
    uint32_t m = 0;
    for (uint32_t k = 0; k < g->input_count; k++) {
        uint32_t v = g->inputs[k];
        if (live[v])
            g->inputs[m++] = v;
        else
            g->values[v].graph_input = false;
    }
    g->input_count = m;
    count_uses(g);
    free(live);
    return LM_OK;
}

void fe_graph_free(fe_graph *graph) {
    if (!graph) return;
    fe_arena_free(&graph->arena);
    free(graph);
}
