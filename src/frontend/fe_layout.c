/* Image layouts: which values stay flat NHWC images on the device.
 *
 * The op library's convolution and pooling work on NHWC rows; an NCHW
 * tensor costs them a transpose on the way in and another on the way out.
 * Between two such nodes the transposes cancel, so a node that takes images
 * (FE_IMAGE_OUT) hands its output over as a flat NHWC image when every
 * reader of it reads images (FE_IMAGE_IN: a convolution, a pooling, a
 * Flatten or Reshape, which transposes once instead of twice), and reads it
 * as input 0 only.
 *
 * Element-wise nodes (FE_IMAGE_ALL: the residual Add of a ResNet block, the
 * activation after it, a squeeze-and-excitation gate's Mul) pass images on:
 * element by element the order does not matter, so such a node runs on
 * images when every input it computes at run time comes as one and every
 * reader of its output takes one. Images then flow through whole chains of
 * blocks; the choice is the largest consistent one (fe_plan_layouts). A
 * Concat of channels joins images the same way (FE_IMAGE_ALL).
 * Any other reader (a Transpose, a graph output) keeps the value in ONNX's
 * NCHW order, so the rest of the compiler never sees the difference.
 *
 * A flattened image ([N, C * H * W]) needs a transpose into ONNX's column
 * order, unless every reader is a matrix product with a constant other
 * operand (FE_ROWS_IN): permuting that constant's rows once at compile time
 * gives the same product from the columns in the image's own (h, w, c)
 * order, which the flatten then makes without moving data across pixels
 * (fe_plan.nhwc_rows). A CNN's classifier head is the common case.
 */
#include <stdlib.h>
#include <string.h>

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

/* The value node k writes as an image: output 0, or the last of its fused
 * chain. */
static uint32_t image_value(const fe_ctx *c, uint32_t k) {
    const fe_node *n = &c->g->nodes[k];
    uint32_t v = c->plans[k].fusion.output;
    return v != FE_NONE ? v : n->output_count ? n->outputs[0] : FE_NONE;
}

/* Whether node k, one of the image kinds `caps`, reads input i as an image
 * when it comes as one: input 0 of an FE_IMAGE_IN node, any input of an
 * element-wise node that runs on images (`ew`). */
static bool takes_image(uint32_t caps, bool ew, uint32_t i) {
    return ((caps & FE_IMAGE_IN) && i == 0) || ew;
}

lm_status fe_plan_layouts(fe_ctx *c) {
    fe_graph *g = c->g;
    size_t nv = g->value_count ? g->value_count : 1, nn = g->node_count ? g->node_count : 1;
    /* ok[v]: v may be an image (its writer can, and every reader so far
     * takes it as one); caps[k]: what device node k can do with images;
     * ew[k]: element-wise node k runs on images. */
    bool *ok = calloc(nv, sizeof *ok), *ew = calloc(nn, sizeof *ew);
    uint32_t *caps = calloc(nn, sizeof *caps);
    if (!ok || !ew || !caps) {
        free(ok);
        free(ew);
        free(caps);
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    }
    for (uint32_t k = 0; k < g->node_count; k++) {
        if (c->plans[k].placement != LMFE_ON_DEVICE) continue;
        caps[k] = images(c, &g->nodes[k]);
        ew[k] = (caps[k] & FE_IMAGE_ALL) != 0;
        uint32_t v = image_value(c, k);
        if ((caps[k] & (FE_IMAGE_OUT | FE_IMAGE_ALL)) && v != FE_NONE)
            ok[v] = !g->values[v].graph_output && c->slots[v].uses > 0;
    }
    /* The largest consistent choice: drop what a reader refuses, and an
     * element-wise node whose inputs or output are not all images (which
     * its own output then is not), until nothing changes. Each round only
     * clears flags, so it ends. */
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t k = 0; k < g->node_count; k++) {
            const fe_node *n = &g->nodes[k];
            lmfe_placement p = c->plans[k].placement;
            if (p == LMFE_FOLDED || p == LMFE_REMOVED) continue;
            for (uint32_t i = 0; i < n->input_count; i++) {
                uint32_t v = n->inputs[i];
                if (v == FE_NONE || !ok[v] || takes_image(caps[k], ew[k], i)) continue;
                ok[v] = false;
                changed = true;
            }
            if (!ew[k]) continue;
            uint32_t out = image_value(c, k);
            bool fine = out != FE_NONE && ok[out];
            for (uint32_t i = 0; i < n->input_count; i++)
                if (n->inputs[i] != FE_NONE && !g->values[n->inputs[i]].konst && !ok[n->inputs[i]])
                    fine = false;
            if (fine) continue;
            ew[k] = false;
            if (out != FE_NONE) ok[out] = false;
            changed = true;
        }
    }
    for (uint32_t k = 0; k < g->node_count; k++) {
        uint32_t v = image_value(c, k);
        c->plans[k].nhwc_out = ew[k] || ((caps[k] & FE_IMAGE_OUT) && v != FE_NONE && ok[v]);
        c->plans[k].nhwc_tiles = false;
    }
    /* Readers that want tiles (element-wise ones, FE_TILES_IN) get them
     * from the writer, which then skips the row-major form. */
    for (uint32_t k = 0; k < g->node_count; k++) {
        if (!ew[k] && !(caps[k] & FE_TILES_IN)) continue;
        const fe_node *n = &g->nodes[k];
        for (uint32_t w = 0; w < g->node_count; w++)
            for (uint32_t i = 0; i < n->input_count; i++)
                if (c->plans[w].nhwc_out && n->inputs[i] != FE_NONE &&
                    image_value(c, w) == n->inputs[i])
                    c->plans[w].nhwc_tiles = true;
    }
    free(ok);
    free(ew);
    free(caps);
    for (uint32_t k = 0; k < g->node_count; k++)
        c->plans[k].nhwc_rows = rows_ok(c, &g->nodes[k]);
    return LM_OK;
}

uint32_t fe_ew_images(fe_ctx *c, const fe_node *n) {
    if (n->output_count < 1 || n->outputs[0] == FE_NONE || n->input_count < 1) return 0;
    const fe_type *o = &c->g->values[n->outputs[0]].type;
    if (o->rank != 4 || !fe_elem_is_float(o->elem)) return 0;
    bool full = false;
    for (uint32_t i = 0; i < n->input_count; i++) {
        if (n->inputs[i] == FE_NONE) return 0;
        const fe_type *t = fe_in_type(c, n, i);
        if (!fe_elem_is_float(t->elem) || t->rank > 4) return 0;
        /* Dims aligned at the last, missing ones 1. */
        int64_t d[4] = {1, 1, 1, 1};
        for (int32_t j = 0; j < t->rank; j++)
            d[4 - t->rank + j] = t->dims[j];
        bool same = t->rank == 4 && !memcmp(d, o->dims, sizeof d);
        if (fe_in_const(c, n, i)) {
            if (d[0] != 1 || d[2] != 1 || d[3] != 1 || (d[1] != 1 && d[1] != o->dims[1])) return 0;
        } else if (same) {
            full = true;
        } else if (t->rank != 4 || d[0] != o->dims[0] || d[1] != o->dims[1] || d[2] != 1 ||
                   d[3] != 1) {
            return 0;
        }
    }
    return full ? FE_IMAGE_ALL : 0;
}
