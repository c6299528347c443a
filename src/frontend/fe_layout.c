/* Image layouts: which values stay flat NHWC images on the device.
 *
 * The op library's convolution and pooling work on NHWC rows; an NCHW
 * tensor costs them a transpose on the way in and another on the way out.
 * (A 3-D one's NCDHW volume is an image whose pixels are its D * H * W
 * voxels: the same plan holds NDHWC volumes.)
 * Between two such nodes the transposes cancel, so a node that takes images
 * (FE_IMAGE_OUT) hands its output over as a flat NHWC image when every
 * reader of it reads images (FE_IMAGE_IN: a convolution, a pooling, a
 * Flatten or Reshape, which transposes once instead of twice), and reads it
 * as input 0 only.
 *
 * Element-wise nodes (FE_IMAGE_ALL: the residual Add of a ResNet block, the
 * activation after it, a squeeze-and-excitation gate's Mul, a group
 * normalization) pass images on:
 * element by element the order does not matter, so such a node runs on
 * images when every input it computes at run time comes as one and every
 * reader of its output takes one. Images then flow through whole chains of
 * blocks; the choice is the largest consistent one (fe_plan_layouts). A
 * Concat of channels joins images the same way (FE_IMAGE_ALL). A value of
 * one pixel per channel is an image whoever writes it: a diffusion model's
 * time embedding, added per channel, does not stop the images.
 * Any other reader (a Transpose, a graph output) keeps the value in ONNX's
 * NCHW order, so the rest of the compiler never sees the difference.
 *
 * A flattened image ([N, C * H * W]) needs a transpose into ONNX's column
 * order, unless every reader is a matrix product with a constant other
 * operand (FE_ROWS_IN): permuting that constant's rows once at compile time
 * gives the same product from the columns in the image's own (h, w, c)
 * order, which the flatten then makes without moving data across pixels
 * (fe_plan.nhwc_rows). A CNN's classifier head is the common case.
 *
 * Channels-last sections (ConvNeXt's blocks: Transpose to NHWC, layer
 * normalization, two products, Transpose back) are planned the same way
 * with the FE_LAST_* kinds: a value of rank 3 or more that a Transpose to
 * NHWC writes, or a node working along the last dim only, is held as [1, 1,
 * rows, last dim] when every reader reads it so. Its rows then fill whole
 * tiles (an [N, 14, 14, C] tensor's matrices of 14 rows would each pad to
 * 32), the products read it as one matrix, and the Transposes at either
 * end hand over the image the rows already are, without a copy
 * (fe_plan.last_out, fe_out_view). The image plan comes first; a node it
 * makes write an image takes no part.
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

/* The layout plan's state for one kind of held form (images, FE_IMAGE_*,
 * or flat channels-last values, FE_LAST_*: `in`, `out` and `all` are the
 * kind's bits): ok[v], value v may be held so (its writer can write it so
 * and every reader so far takes it so); all[k], node k reads all its
 * run-time inputs so (the kind's `all`, still possible); caps[k], what
 * device node k can do; writer[v], the node that would write v; v's
 * readers are reader[first[v] .. first[v + 1]). A stack of nodes to look at
 * again after a value they touch stopped being held so: each value stops
 * once, so its writer and readers are pushed at most once for it, and the
 * whole plan costs time linear in the graph. */
typedef struct layout_plan {
    fe_ctx *c;
    uint32_t in, out, all_bit;
    bool *ok, *all;
    uint32_t *caps, *writer, *first, *reader, *stack, top;
} layout_plan;

/* Whether node k reads input i in the plan's form when it comes so: input 0
 * of an `in` node, any input of an `all` node while it reads all so. */
static bool takes_form(const layout_plan *lp, uint32_t k, bool all, uint32_t i) {
    return ((lp->caps[k] & lp->in) && i == 0) || all;
}

/* Whether value v, written by no node that writes images, is an image
 * all the same: a float value of one pixel per channel ([N, C, 1, 1], or
 * [N, C, 1, 1, 1]: a time embedding, an attention gate) has its image's
 * element order, so readers take it as one without a transpose
 * (fe_in_image_tiles). */
static bool image_anyway(const layout_plan *lp, uint32_t v) {
    const fe_type *t = &lp->c->g->values[v].type;
    return lp->in == FE_IMAGE_IN && lp->writer[v] == FE_NONE && fe_image_rank(t) &&
           fe_image_pixels(t) == 1 && fe_elem_is_float(t->elem);
}

static void not_held(layout_plan *lp, uint32_t v) {
    if (v == FE_NONE || !lp->ok[v] || image_anyway(lp, v)) return;
    lp->ok[v] = false;
    if (lp->writer[v] != FE_NONE) lp->stack[lp->top++] = lp->writer[v];
    for (uint32_t r = lp->first[v]; r < lp->first[v + 1]; r++)
        lp->stack[lp->top++] = lp->reader[r];
}

/* Node k reads all its inputs in the form only while every run-time one and
 * its output are so; once it cannot, its output is not and the inputs it
 * no longer takes are not either. */
static void recheck(layout_plan *lp, uint32_t k) {
    if (!lp->all[k]) return;
    const fe_graph *g = lp->c->g;
    const fe_node *n = &g->nodes[k];
    uint32_t out = image_value(lp->c, k);
    bool fine = out != FE_NONE && lp->ok[out];
    for (uint32_t i = 0; i < n->input_count; i++)
        if (n->inputs[i] != FE_NONE && !g->values[n->inputs[i]].konst && !lp->ok[n->inputs[i]])
            fine = false;
    if (fine) return;
    lp->all[k] = false;
    not_held(lp, out);
    for (uint32_t i = 0; i < n->input_count; i++)
        if (!takes_form(lp, k, false, i)) not_held(lp, n->inputs[i]);
}

/* The largest consistent choice, from all that could be held so. `caps`
 * gives each device node's bits (0 for the nodes that take no part). */
static void plan_form(layout_plan *lp, const uint32_t *caps) {
    fe_ctx *c = lp->c;
    const fe_graph *g = c->g;
    size_t nv = (size_t)g->value_count + 1;
    memset(lp->ok, 0, nv * sizeof *lp->ok);
    for (size_t v = 0; v < nv; v++)
        lp->writer[v] = FE_NONE;
    lp->top = 0;
    for (uint32_t k = 0; k < g->node_count; k++) {
        lp->caps[k] = c->plans[k].placement == LMFE_ON_DEVICE ? caps[k] : 0;
        lp->all[k] = (lp->caps[k] & lp->all_bit) != 0;
        uint32_t v = image_value(c, k);
        if ((lp->caps[k] & (lp->out | lp->all_bit)) && v != FE_NONE) {
            lp->ok[v] = !g->values[v].graph_output && c->slots[v].uses > 0;
            lp->writer[v] = k;
        }
    }
    for (uint32_t v = 0; v < g->value_count; v++)
        if (image_anyway(lp, v)) lp->ok[v] = true;
    /* A fused node reads nothing itself: its chain's head reads for it (a
     * layer normalization's Sub reads X, which its ReduceMean reads). */
    for (uint32_t k = 0; k < g->node_count; k++) {
        const fe_node *n = &g->nodes[k];
        lmfe_placement p = c->plans[k].placement;
        if (p == LMFE_FOLDED || p == LMFE_REMOVED || p == LMFE_FUSED) continue;
        for (uint32_t i = 0; i < n->input_count; i++)
            if (!takes_form(lp, k, lp->all[k], i)) not_held(lp, n->inputs[i]);
        lp->stack[lp->top++] = k;
    }
    while (lp->top)
        recheck(lp, lp->stack[--lp->top]);
}

/* Whether node k writes its value in the plan's form. */
static bool writes_form(const layout_plan *lp, uint32_t k) {
    uint32_t v = image_value(lp->c, k);
    return lp->all[k] || ((lp->caps[k] & lp->out) && v != FE_NONE && lp->ok[v]);
}

/* Flat channels-last values (FE_LAST_*), after the images (`caps`, each
 * node's bits, as the image plan had them): a node that writes an image
 * takes no part, nor does a value of rank below 3. */
static void plan_last(layout_plan *lp, uint32_t *caps) {
    fe_ctx *c = lp->c;
    const fe_graph *g = c->g;
    for (uint32_t v = 0; v < g->value_count; v++)
        c->slots[v].last = false;
    for (uint32_t k = 0; k < g->node_count; k++) {
        uint32_t v = image_value(c, k);
        if (c->plans[k].nhwc_out || v == FE_NONE || g->values[v].type.rank < 3)
            caps[k] &= ~(uint32_t)(FE_LAST_OUT | FE_LAST_ALL);
    }
    lp->in = FE_LAST_IN;
    lp->out = FE_LAST_OUT;
    lp->all_bit = FE_LAST_ALL;
    plan_form(lp, caps);
    for (uint32_t k = 0; k < g->node_count; k++) {
        c->plans[k].last_out = writes_form(lp, k);
        uint32_t v = image_value(c, k);
        if (c->plans[k].last_out) c->slots[v].last = true;
    }
}

lm_status fe_plan_layouts(fe_ctx *c) {
    fe_graph *g = c->g;
    size_t nv = (size_t)g->value_count + 1, nn = g->node_count ? g->node_count : 1, edges = 0;
    for (uint32_t k = 0; k < g->node_count; k++)
        edges += g->nodes[k].input_count;
    layout_plan lp = {.c = c,
                      .in = FE_IMAGE_IN,
                      .out = FE_IMAGE_OUT,
                      .all_bit = FE_IMAGE_ALL,
                      .ok = calloc(nv, sizeof(bool)),
                      .all = calloc(nn, sizeof(bool)),
                      .caps = calloc(nn, sizeof(uint32_t)),
                      .writer = malloc(nv * sizeof(uint32_t)),
                      .first = calloc(nv + 1, sizeof(uint32_t)),
                      .reader = malloc((edges + 1) * sizeof(uint32_t)),
                      /* each node once, then per value stopped its writer
                       * and readers */
                      .stack = malloc((nn + nv + edges) * sizeof(uint32_t))};
    uint32_t *caps = calloc(nn, sizeof(uint32_t));
    lm_status st = LM_OK;
    if (!lp.ok || !lp.all || !lp.caps || !lp.writer || !lp.first || !lp.reader || !lp.stack ||
        !caps) {
        st = err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    } else {
        /* The readers, grouped by value (counted, summed, placed). */
        for (uint32_t k = 0; k < g->node_count; k++)
            for (uint32_t i = 0; i < g->nodes[k].input_count; i++)
                if (g->nodes[k].inputs[i] != FE_NONE) lp.first[g->nodes[k].inputs[i] + 1]++;
        for (size_t v = 0; v < nv; v++)
            lp.first[v + 1] += lp.first[v];
        uint32_t *at = lp.stack; /* a cursor per value, borrowed before use */
        memcpy(at, lp.first, nv * sizeof *at);
        for (uint32_t k = 0; k < g->node_count; k++)
            for (uint32_t i = 0; i < g->nodes[k].input_count; i++)
                if (g->nodes[k].inputs[i] != FE_NONE) lp.reader[at[g->nodes[k].inputs[i]]++] = k;
        for (uint32_t k = 0; k < g->node_count; k++)
            caps[k] = c->plans[k].placement == LMFE_ON_DEVICE ? images(c, &g->nodes[k]) : 0;
        plan_form(&lp, caps);
        for (uint32_t k = 0; k < g->node_count; k++) {
            c->plans[k].nhwc_out = writes_form(&lp, k);
            c->plans[k].nhwc_tiles = false;
        }
        /* Readers that want tiles (element-wise ones, FE_TILES_IN) get them
         * from the writer, which then skips the row-major form. */
        for (uint32_t k = 0; k < g->node_count; k++) {
            if (!lp.all[k] && !(lp.caps[k] & FE_TILES_IN)) continue;
            const fe_node *n = &g->nodes[k];
            for (uint32_t i = 0; i < n->input_count; i++) {
                uint32_t v = n->inputs[i], w = v != FE_NONE ? lp.writer[v] : FE_NONE;
                if (w != FE_NONE && c->plans[w].nhwc_out) c->plans[w].nhwc_tiles = true;
            }
        }
        for (uint32_t k = 0; k < g->node_count; k++)
            c->plans[k].nhwc_rows = rows_ok(c, &g->nodes[k]);
        plan_last(&lp, caps);
    }
    free(lp.ok);
    free(lp.all);
    free(lp.caps);
    free(lp.writer);
    free(lp.first);
    free(lp.reader);
    free(lp.stack);
    free(caps);
    return st;
}

/* FE_LAST_ALL for an element-wise node (fe_ew_images): on [1, 1, rows,
 * last] its constants broadcast along the last dim as they do on the
 * value's own shape. */
static uint32_t ew_last(fe_ctx *c, const fe_node *n) {
    const fe_type *o = &c->g->values[n->outputs[0]].type;
    if (o->rank < 3 || !fe_elem_is_float(o->elem)) return 0;
    for (uint32_t i = 0; i < n->input_count; i++) {
        if (n->inputs[i] == FE_NONE) return 0;
        const fe_type *t = fe_in_type(c, n, i);
        if (!fe_elem_is_float(t->elem)) return 0;
        if (!fe_in_const(c, n, i)) {
            if (t->rank != o->rank || memcmp(t->dims, o->dims, (size_t)o->rank * sizeof *o->dims))
                return 0;
            continue;
        }
        if (t->rank > 4) return 0;
        for (int32_t j = 0; j + 1 < t->rank; j++)
            if (t->dims[j] != 1) return 0;
        if (t->rank && t->dims[t->rank - 1] != 1 && t->dims[t->rank - 1] != o->dims[o->rank - 1])
            return 0;
    }
    return FE_LAST_ALL;
}

uint32_t fe_ew_images(fe_ctx *c, const fe_node *n) {
    if (n->output_count < 1 || n->outputs[0] == FE_NONE || n->input_count < 1) return 0;
    const fe_type *o = &c->g->values[n->outputs[0]].type;
    uint32_t last = ew_last(c, n);
    if (!fe_image_rank(o) || !fe_elem_is_float(o->elem)) return last;
    const int32_t r = o->rank;
    bool full = false;
    for (uint32_t i = 0; i < n->input_count; i++) {
        if (n->inputs[i] == FE_NONE) return last;
        const fe_type *t = fe_in_type(c, n, i);
        if (!fe_elem_is_float(t->elem) || t->rank > r) return last;
        /* Dims aligned at the last, missing ones 1. */
        fe_type a = {.rank = r, .dims = {1, 1, 1, 1, 1}};
        for (int32_t j = 0; j < t->rank; j++)
            a.dims[r - t->rank + j] = t->dims[j];
        bool same = t->rank == r && !memcmp(a.dims, o->dims, (size_t)r * sizeof *a.dims);
        bool per_channel = fe_image_pixels(&a) == 1; /* every dim after the channels 1 */
        if (fe_in_const(c, n, i)) {
            if (a.dims[0] != 1 || !per_channel || (a.dims[1] != 1 && a.dims[1] != o->dims[1]))
                return last;
        } else if (same) {
            full = true;
        } else if (t->rank != r || a.dims[0] != o->dims[0] || a.dims[1] != o->dims[1] ||
                   !per_channel) {
            return last;
        }
    }
    return (full ? FE_IMAGE_ALL : 0) | last;
}
