/* Image layouts: which values stay flat NHWC images on the device.
 *
 * The op library's convolution and pooling work on NHWC rows; an NCHW
 * tensor costs them a transpose on the way in and another on the way out.
 * Between two such nodes the transposes cancel, so a node that takes images
 * (FE_IMAGE_OUT) hands its output over as a flat NHWC image when every
 * reader of it reads images (FE_IMAGE_IN: a convolution, a pooling, a
 * Flatten or Reshape, which transposes once instead of twice), and reads it
 * as input 0 only. Any other reader (an Add, a graph output) keeps the
 * value in ONNX's NCHW order, so the rest of the compiler never sees the
 * difference.
 *
 * A flattened image ([N, C * H * W]) needs a transpose into ONNX's column
 * order, unless every reader is a matrix product with a constant other
 * operand (FE_ROWS_IN): permuting that constant's rows once at compile time
 * gives the same product from the columns in the image's own (h, w, c)
 * order, which the flatten then makes without moving data across pixels
 * (fe_plan.nhwc_rows). A CNN's classifier head is the common case.
 */
#include <stdlib.h>

#include "frontend/fe_passes.h"

static uint32_t images(fe_ctx *c, const fe_node *n) {
    const fe_op_def *def = fe_op_find(n->op_type);
    return def && def->images ? def->images(c, n) : 0;
}

/* True when value v is output 0 of a node that writes it as an image: its
 * producer, or the head of the fused chain that ends in it. */
static bool held_as_image(const fe_ctx *c, uint32_t v) {
    for (uint32_t k = 0; k < c->g->node_count; k++) {
        uint32_t out = c->plans[k].fusion.output;
        if (out == FE_NONE) out = c->g->nodes[k].output_count ? c->g->nodes[k].outputs[0] : FE_NONE;
        if (out == v) return c->plans[k].nhwc_out && c->plans[k].placement == LMFE_ON_DEVICE;
    }
    return false;
}

/* Whether `n` may flatten its input image in NHWC order: it can, the image
 * comes as one, and every reader of the result permutes its constant
 * instead (reads it as input 0 only, on the device). */
static bool rows_ok(fe_ctx *c, const fe_node *n) {
    const fe_graph *g = c->g;
    if (c->plans[n - g->nodes].placement != LMFE_ON_DEVICE || !(images(c, n) & FE_ROWS_OUT) ||
        n->input_count < 1 || n->output_count < 1 || n->inputs[0] == FE_NONE ||
        !held_as_image(c, n->inputs[0]))
        return false;
    uint32_t v = n->outputs[0];
    if (v == FE_NONE || g->values[v].graph_output || c->slots[v].uses == 0) return false;
    for (uint32_t k = 0; k < g->node_count; k++) {
        const fe_node *r = &g->nodes[k];
        lmfe_placement p = c->plans[k].placement;
        for (uint32_t i = 0; i < r->input_count; i++) {
            if (r->inputs[i] != v || p == LMFE_FOLDED || p == LMFE_REMOVED) continue;
            if (p != LMFE_ON_DEVICE || i != 0 || !(images(c, r) & FE_ROWS_IN)) return false;
        }
    }
    return true;
}

lm_status fe_plan_layouts(fe_ctx *c) {
    fe_graph *g = c->g;
    /* ok[v]: every reader of v so far takes it as an image. */
    bool *ok = malloc((g->value_count ? g->value_count : 1) * sizeof *ok);
    if (!ok) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    for (uint32_t v = 0; v < g->value_count; v++)
        ok[v] = !g->values[v].graph_output;
    for (uint32_t k = 0; k < g->node_count; k++) {
        const fe_node *n = &g->nodes[k];
        lmfe_placement p = c->plans[k].placement;
        if (p == LMFE_FOLDED || p == LMFE_REMOVED) continue;
        bool reads = p == LMFE_ON_DEVICE && (images(c, n) & FE_IMAGE_IN);
        for (uint32_t i = 0; i < n->input_count; i++)
            if (n->inputs[i] != FE_NONE && !(reads && i == 0)) ok[n->inputs[i]] = false;
    }
    for (uint32_t k = 0; k < g->node_count; k++) {
        const fe_node *n = &g->nodes[k];
        if (c->plans[k].placement != LMFE_ON_DEVICE || !(images(c, n) & FE_IMAGE_OUT)) continue;
        uint32_t v = c->plans[k].fusion.output;
        if (v == FE_NONE) v = n->output_count ? n->outputs[0] : FE_NONE;
        c->plans[k].nhwc_out = v != FE_NONE && ok[v] && c->slots[v].uses > 0;
    }
    free(ok);
    for (uint32_t k = 0; k < g->node_count; k++)
        c->plans[k].nhwc_rows = rows_ok(c, &g->nodes[k]);
    return LM_OK;
}
