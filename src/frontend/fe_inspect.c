/* lmfe_inspect_onnx: a model's interface without a device. */
#include <stdlib.h>
#include <string.h>

#include "frontend/fe_ctx.h"

/* Whether output j of subgraph `sg` is an empty optional (made by an
 * Optional node without input). */
static bool empty_optional_out(const fe_subgraph *sg, uint32_t j) {
    for (uint32_t i = 0; i < sg->node_count; i++) {
        const fe_node *sn = &sg->nodes[i];
        if (strcmp(sn->op_type, "Optional") || (sn->input_count && sg->in_names[i][0][0])) continue;
        for (uint32_t o = 0; o < sn->output_count; o++)
            if (!strcmp(sg->out_names[i][o], sg->outputs[j])) return true;
    }
    return false;
}

/* Whether If node `n` picks between an empty and a full optional for some
 * output: its condition then decides whether the output exists, which one
 * binary cannot leave to the run. */
static bool if_decides_presence(const fe_node *n) {
    const fe_attr *t = fe_node_attr(n, "then_branch"), *e = fe_node_attr(n, "else_branch");
    if (!t || !e || t->type != FE_ATTR_GRAPH || e->type != FE_ATTR_GRAPH || !t->graph || !e->graph)
        return false;
    for (uint32_t j = 0; j < t->graph->output_count && j < e->graph->output_count; j++)
        if (empty_optional_out(t->graph, j) != empty_optional_out(e->graph, j)) return true;
    return false;
}

/* How much a value decides: nothing; only the size of an output that
 * lmfe_compile_options.pad_dynamic pads instead (NonMaxSuppression's boxes
 * and scores, NonZero's and Unique's input, Compress's condition); or a
 * shape, so its value is needed. (A Loop's
 * condition counts as a shape: a masked loop refuses carried sequences, and it is folded loops that
 * the tools compile when given the condition.) */
enum { DECIDES_NOTHING, DECIDES_PADDED, DECIDES_SHAPE };

/* What input i of node n decides by itself (before the walk back). */
static uint8_t input_decides(const fe_node *n, const fe_op_def *op, uint32_t i) {
    if ((!strcmp(n->op_type, "NonMaxSuppression") && i < 2) ||
        (!strcmp(n->op_type, "NonZero") && i == 0) || (!strcmp(n->op_type, "Unique") && i == 0) ||
        (!strcmp(n->op_type, "Compress") && i == 1))
        return DECIDES_PADDED;
    return op->value_inputs >> i & 1 ? DECIDES_SHAPE : DECIDES_NOTHING;
}

/* Marks graph inputs whose value decides a shape (needed) or only a padded
 * output's size (padded): those read, directly or through any chain of
 * nodes, by an op's value input (fe_op_def.value_inputs, input_decides), or
 * by the condition of an If that picks between an empty and a full
 * optional. Shape and Size read only their input's shape, so the walk stops
 * there. */
static lm_status mark_needs_value(const fe_graph *g, bool *needed, bool *padded) {
    uint8_t *want = calloc(g->value_count ? g->value_count : 1, sizeof *want);
    if (!want) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    for (uint32_t k = 0; k < g->node_count; k++) {
        const fe_node *n = &g->nodes[k];
        const fe_op_def *op = fe_op_find(n->op_type);
        if (!op || n->domain[0]) continue;
        if (!strcmp(n->op_type, "If") && n->input_count && n->inputs[0] != FE_NONE &&
            if_decides_presence(n))
            want[n->inputs[0]] = DECIDES_SHAPE;
        for (uint32_t i = 0; i < n->input_count && i < 32; i++) {
            uint8_t d = input_decides(n, op, i);
            if (n->inputs[i] != FE_NONE && d > want[n->inputs[i]]) want[n->inputs[i]] = d;
        }
    }
    /* Nodes are sorted: walking backwards carries the need to every input. */
    for (uint32_t k = g->node_count; k-- > 0;) {
        const fe_node *n = &g->nodes[k];
        uint8_t out = DECIDES_NOTHING;
        for (uint32_t i = 0; i < n->output_count; i++)
            if (n->outputs[i] != FE_NONE && want[n->outputs[i]] > out) out = want[n->outputs[i]];
        /* Shapes, sizes and lengths are known without the values. */
        if (!out || !strcmp(n->op_type, "Shape") || !strcmp(n->op_type, "Size") ||
            !strcmp(n->op_type, "SequenceLength"))
            continue;
        for (uint32_t i = 0; i < n->input_count; i++)
            if (n->inputs[i] != FE_NONE && out > want[n->inputs[i]]) want[n->inputs[i]] = out;
    }
    /* A sequence's length, what its readers need, is given on its own. */
    for (uint32_t k = 0; k < g->input_count; k++) {
        const fe_value *v = &g->values[g->inputs[k]];
        bool counts = !v->declared_seq && !v->declared_opt;
        needed[k] = counts && want[g->inputs[k]] == DECIDES_SHAPE;
        padded[k] = counts && want[g->inputs[k]] == DECIDES_PADDED;
    }
    free(want);
    return LM_OK;
}

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* Copies a value's interface (the strings into one allocation per entry). */
static lm_status io_fill(const fe_value *v, lmfe_io_info *io) {
    size_t len = strlen(v->name) + 1;
    for (int32_t d = 0; d < v->type.rank; d++)
        len += v->type.sym[d] ? strlen(v->type.sym[d]) + 1 : 0;
    char *buf = malloc(len), *p = buf;
    if (!buf) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    memcpy(p, v->name, strlen(v->name) + 1);
    io->name = p;
    p += strlen(v->name) + 1;
    io->elem_type = (int32_t)v->type.elem;
    io->sequence = v->declared_seq;
    io->optional = v->declared_opt;
    io->rank = v->type.rank;
    for (int32_t d = 0; d < v->type.rank && d < LMFE_MAX_RANK; d++) {
        io->dims[d] = v->type.dims[d];
        io->symbols[d] = NULL;
        if (v->type.sym[d]) {
            size_t n = strlen(v->type.sym[d]) + 1;
            memcpy(p, v->type.sym[d], n);
            io->symbols[d] = p;
            p += n;
        }
    }
    return LM_OK;
}

void lmfe_model_info_free(lmfe_model_info *info) {
    if (!info) return;
    for (size_t i = 0; info->inputs && i < info->input_count; i++)
        free((void *)info->inputs[i].name);
    for (size_t i = 0; info->outputs && i < info->output_count; i++)
        free((void *)info->outputs[i].name);
    free(info->inputs);
    free(info->outputs);
    free(info->producer);
    memset(info, 0, sizeof *info);
}

static lm_status inspect(const char *fn, const char *path, const char *const *outputs,
                         size_t output_count, lmfe_model_info *out_info) {
    if (!path) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: path is NULL", fn);
    if (!out_info) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: out_info is NULL", fn);
    memset(out_info, 0, sizeof *out_info);
    if (output_count && !outputs)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: outputs is NULL with a count of %zu", fn,
                       output_count);
    fe_graph *g;
    lm_status st = fe_onnx_load(path, &g);
    if (st) return err_prefix(st, "%s", fn);
    if ((st = fe_graph_cut(g, outputs, output_count))) {
        fe_graph_free(g);
        return err_prefix(st, "%s", fn);
    }
    lmfe_model_info info = {0};
    bool *needed = calloc(g->input_count ? g->input_count : 1, sizeof *needed);
    bool *padded = calloc(g->input_count ? g->input_count : 1, sizeof *padded);
    info.inputs = calloc(g->input_count ? g->input_count : 1, sizeof *info.inputs);
    info.outputs = calloc(g->output_count ? g->output_count : 1, sizeof *info.outputs);
    info.producer = dup_str(g->producer ? g->producer : "");
    if (!needed || !padded || !info.inputs || !info.outputs || !info.producer)
        st = err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    if (!st) st = mark_needs_value(g, needed, padded);
    for (uint32_t k = 0; !st && k < g->input_count; k++) {
        st = io_fill(&g->values[g->inputs[k]], &info.inputs[k]);
        info.inputs[k].needs_value = needed[k];
        info.inputs[k].padded_size = padded[k];
        if (!st) info.input_count++;
    }
    for (uint32_t k = 0; !st && k < g->output_count; k++) {
        st = io_fill(&g->values[g->outputs[k]], &info.outputs[k]);
        if (!st) info.output_count++;
    }
    info.ir_version = g->ir_version;
    info.opset = g->opset;
    info.nodes = g->node_count;
    free(needed);
    free(padded);
    fe_graph_free(g);
    if (st) {
        lmfe_model_info_free(&info);
        return err_prefix(st, "%s", fn);
    }
    *out_info = info;
    return LM_OK;
}

lm_status lmfe_inspect_onnx(const char *path, lmfe_model_info *out_info) {
    return inspect("lmfe_inspect_onnx", path, NULL, 0, out_info);
}

lm_status lmfe_inspect_onnx_cut(const char *path, const char *const *outputs, size_t output_count,
                                lmfe_model_info *out_info) {
    return inspect("lmfe_inspect_onnx_cut", path, outputs, output_count, out_info);
}
