/* Fuzz target over the ONNX loader: any input either is refused with a
 * status and a message, or loads into a graph whose every field can be
 * read (names, types, attributes, constant data, subgraphs and what they
 * read from outside) without a crash or an out-of-bounds read. The same bytes are also parsed as a
 * TensorProto (the test data's .pb files). Built as a libFuzzer target with clang
 * (LM_FUZZ_INSTRUMENT) and, everywhere, as a replay of the regression corpus. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/fe_graph.h"
#include "lightmetal/lm_status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t walk_tensor(const fe_tensor *t) {
    uint64_t sum = t->elem + t->rank + t->count;
    if (!t->data) return sum;
    for (uint64_t i = 0; i < t->count; i++)
        sum += (uint64_t)fe_tensor_get_i64(t, i);
    return sum;
}

static uint64_t walk_attrs(const fe_node *n);

/* A subgraph: its names, initializers and nodes (attributes included,
 * nested subgraphs too); its sorted name table in order. */
static uint64_t walk_subgraph(const fe_subgraph *sg) {
    uint64_t sum = strlen(sg->name);
    for (uint32_t i = 0; i < sg->input_count; i++)
        sum += strlen(sg->inputs[i]);
    for (uint32_t i = 0; i < sg->output_count; i++)
        sum += strlen(sg->outputs[i]);
    for (uint32_t i = 0; i < sg->init_count; i++)
        sum += strlen(sg->init_names[i]) + walk_tensor(sg->inits[i]);
    for (uint32_t i = 1; i < sg->defined_count; i++)
        if (strcmp(sg->defined[i - 1], sg->defined[i]) >= 0) abort();
    for (uint32_t i = 0; i < sg->node_count; i++) {
        const fe_node *n = &sg->nodes[i];
        sum += strlen(n->op_type) + strlen(n->name) + walk_attrs(n);
        for (uint32_t k = 0; k < n->input_count; k++)
            sum += strlen(sg->in_names[i][k]);
        for (uint32_t k = 0; k < n->output_count; k++)
            sum += strlen(sg->out_names[i][k]);
        for (uint32_t k = 0; k < n->implicit_count; k++)
            sum += strlen(n->implicit_names[k]);
    }
    return sum;
}

static uint64_t walk_attrs(const fe_node *n) {
    uint64_t sum = 0;
    for (uint32_t k = 0; k < n->attr_count; k++) {
        const fe_attr *a = &n->attrs[k];
        sum += strlen(a->name) + a->type;
        if (a->type == FE_ATTR_STRING) sum += strlen(a->s);
        if (a->type == FE_ATTR_TENSOR) sum += walk_tensor(a->t);
        if (a->type == FE_ATTR_INTS)
            for (size_t j = 0; j < a->count; j++)
                sum += (uint64_t)a->ints[j];
        if (a->type == FE_ATTR_FLOATS)
            for (size_t j = 0; j < a->count; j++)
                sum += (uint64_t)(a->floats[j] != 0);
        if (a->type == FE_ATTR_STRINGS)
            for (size_t j = 0; j < a->count; j++)
                sum += strlen(a->strings[j]);
        if (a->type == FE_ATTR_GRAPH) {
            if (!a->graph) abort();
            sum += walk_subgraph(a->graph);
        }
    }
    return sum;
}

static uint64_t walk(const fe_graph *g) {
    uint64_t sum = (uint64_t)g->opset + strlen(g->producer);
    char buf[256];
    for (uint32_t i = 0; i < g->value_count; i++) {
        const fe_value *v = &g->values[i];
        sum += strlen(v->name) + v->use_count + strlen(fe_type_format(&v->type, buf, sizeof buf));
        if (v->konst) sum += walk_tensor(v->konst);
        if (v->producer != FE_NONE && v->producer >= g->node_count) abort();
    }
    for (uint32_t i = 0; i < g->node_count; i++) {
        const fe_node *n = &g->nodes[i];
        sum += strlen(fe_node_label(n, buf, sizeof buf)) + strlen(n->domain);
        for (uint32_t k = 0; k < n->input_count; k++) {
            if (n->inputs[k] == FE_NONE) continue;
            if (n->inputs[k] >= g->value_count) abort();
            /* Sorted: every input is produced earlier. */
            uint32_t p = g->values[n->inputs[k]].producer;
            if (p != FE_NONE && p >= i) abort();
        }
        for (uint32_t k = 0; k < n->output_count; k++)
            if (n->outputs[k] != FE_NONE && g->values[n->outputs[k]].producer != i) abort();
        sum += walk_attrs(n);
        /* What its subgraphs read: values of this graph, by those names. */
        for (uint32_t k = 0; k < n->implicit_count; k++) {
            if (n->implicit[k] >= g->value_count) abort();
            if (strcmp(g->values[n->implicit[k]].name, n->implicit_names[k]) != 0) abort();
            uint32_t p = g->values[n->implicit[k]].producer;
            if (p != FE_NONE && p >= i) abort();
        }
    }
    return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fe_graph *g = NULL;
    if (fe_onnx_load_memory(data, size, NULL, "fuzz.onnx", &g) == LM_OK) {
        volatile uint64_t sum = walk(g);
        (void)sum;
        fe_graph_free(g);
    } else if (!lm_last_error()[0]) {
        abort(); /* every refusal says why */
    }
    fe_arena arena = {0};
    fe_tensor t;
    if (fe_onnx_load_tensor(data, size, "fuzz.pb", &arena, &t) == LM_OK) {
        volatile uint64_t sum = walk_tensor(&t);
        (void)sum;
    }
    fe_arena_free(&arena);
    return 0;
}
