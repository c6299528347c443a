/* The graph passes of a compile, in the order lmfe_compile_onnx runs them. */
#ifndef LM_FRONTEND_FE_PASSES_H
#define LM_FRONTEND_FE_PASSES_H

#include "frontend/fe_ctx.h"

/* Allocates the per-node plans and per-value slots. */
lm_status fe_plan_init(fe_ctx *c);

/* Applies the options to the graph inputs: fixed shapes, symbolic dims,
 * constants; checks every remaining input's shape is fully known. Builds
 * `*out_golden` (one entry per graph input, NULL where none; free() it). */
lm_status fe_bind_inputs(fe_ctx *c, const fe_tensor ***out_golden);

/* Type and shape inference with constant folding, node by node. */
lm_status fe_infer_graph(fe_ctx *c);

/* Replaces control-flow node k (If, Loop, Scan) by what it runs
 * (fe_expand.c): the chosen branch, or one unrolled iteration and the rest
 * of the loop. The graph, plans and slots grow. Errors name the node. */
lm_status fe_expand_node(fe_ctx *c, uint32_t k);

/* Placement of every node (folded, dead, fused, on the device) and the use
 * counts the memory plan frees by. */
lm_status fe_plan_graph(fe_ctx *c);

/* Fusions (fe_fuse.c): matmul + bias + activation, conv + batch norm + activation. */
lm_status fe_fuse(fe_ctx *c);

/* Image layouts (fe_layout.c): sets fe_plan.nhwc_out where every reader of
 * a node's output takes flat NHWC images. After fe_plan_graph. */
lm_status fe_plan_layouts(fe_ctx *c);

/* Resets the use counts before a run of the model. */
void fe_plan_reset_uses(fe_ctx *c);

/* The memory plan's peak: the most bytes of device tensors alive at once. */
uint64_t fe_plan_peak_bytes(const fe_ctx *c);

/* Writes the report's notes (precision lowered, integer math). */
lm_status fe_report_notes(const fe_ctx *c, lmfe_report *r);

/* Sets a named buffer's element type (what the model calls it) from `elem`. */
void fe_set_element_type(lm_buffer_name_options *o, fe_elem elem);

#endif
