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

/* Sequence graph inputs become their tensors, NAME[0] .. (the lengths the
 * options give); before fe_bind_inputs (fe_sequence.c). */
lm_status fe_seq_bind_inputs(fe_ctx *c);

/* Type and shape inference with constant folding, node by node; then the
 * selections that waited for their readers (fe_nms_resolve), and sequence
 * graph outputs become their tensors (fe_seq_bind_outputs). */
lm_status fe_infer_graph(fe_ctx *c);
/* Inference of nodes [from, to), where `to` moves along as rewrites put
 * several nodes in the place of one. */
lm_status fe_infer_range(fe_ctx *c, uint32_t from, uint32_t to);
/* NonMaxSuppressions of more boxes than a table of overlaps takes, whose
 * rewrite waited until inference had reached every reader of their output
 * (to learn how many of its rows are read): rewritten now, and their new
 * nodes inferred (fe_ops_select.c). */
lm_status fe_nms_resolve(fe_ctx *c);
/* TopK node n (k best, `largest`) of a padded 1-D selection that reads
 * better as a TopK of the selected values' source: rewritten so
 * (*out_done), the reads of the selection's places at its indices made
 * reads of its indices (fe_ops_select.c); else nothing changes. */
lm_status fe_topk_of_selection(fe_ctx *c, const fe_node *n, int64_t k, bool largest,
                               bool *out_done);
lm_status fe_seq_bind_outputs(fe_ctx *c);

/* The binary's name of graph output k. */
const char *fe_output_name(const fe_graph *g, uint32_t k);

/* Replaces control-flow node k (If, Loop, Scan) by what it runs
 * (fe_expand.c): the chosen branch, or one unrolled iteration and the rest
 * of the loop. The graph, plans and slots grow. Errors name the node. */
lm_status fe_expand_node(fe_ctx *c, uint32_t k);

/* Placement of every node (folded, dead, fused, on the device) and the use
 * counts the memory plan frees by. */
lm_status fe_plan_graph(fe_ctx *c);

/* ---- rewriting (fe_rewrite.c) ----
 *
 * Ops that are structure rather than computation (control flow in
 * fe_expand.c, sequences in fe_sequence.c) replace their node during
 * inference: node k gives way to the expansion's nodes, new values are
 * appended to the graph, and inference continues with the first new node
 * (the op's infer sets c->expanded). Errors name the node; the expansion's
 * own memory is freed by fe_x_finish whatever happens. */
typedef struct fe_expansion {
    fe_ctx *c;
    uint32_t k;       /* the node replaced */
    fe_node node;     /* a copy of it (the graph's array moves) */
    char prefix[200]; /* "<node>/<subgraph>/<step>/" for new names */
    fe_node *nodes;   /* what replaces it */
    uint32_t count, cap;
} fe_expansion;

lm_status fe_x_oom(void);
/* A new value named prefix + name, type unknown. */
lm_status fe_x_value(fe_expansion *x, const char *name, uint32_t *out);
/* A new value holding constant `t`. */
lm_status fe_x_const(fe_expansion *x, const fe_tensor *t, const char *name, uint32_t *out);
/* A new scalar constant: int64 `i`, or bool `i != 0`. */
lm_status fe_x_scalar(fe_expansion *x, fe_elem elem, int64_t i, const char *name, uint32_t *out);
/* A new node appended to the expansion (arrays in the graph's arena, the
 * rest from the node replaced: its index). NULL when out of memory. */
fe_node *fe_x_node(fe_expansion *x, const char *op, int64_t opset, uint32_t inputs,
                   uint32_t outputs);
/* Gives node n its one INT (or, with `list`, one-element INTS) attribute. */
lm_status fe_x_int_attr(fe_expansion *x, fe_node *n, const char *name, bool list, int64_t v);
/* Identity from -> to. */
lm_status fe_x_identity(fe_expansion *x, uint32_t from, uint32_t to);
/* A node op(a, b) at the default opset (b FE_NONE for a one-input op)
 * writing *out, a new value when *out is FE_NONE. */
lm_status fe_x_op(fe_expansion *x, const char *op, uint32_t a, uint32_t b, uint32_t *out);
/* The same into a new value, always. */
lm_status fe_x_emit(fe_expansion *x, const char *op, uint32_t a, uint32_t b, uint32_t *out);
/* A node op (at `opset`) of `count` inputs into a new value *out; its
 * node in *out_node (when not NULL), valid until the next node is added. */
lm_status fe_x_emit_n(fe_expansion *x, const char *op, int64_t opset, const uint32_t *in,
                      uint32_t count, uint32_t *out, fe_node **out_node);
/* A new scalar constant `v` of float element type `elem`. */
lm_status fe_x_float(fe_expansion *x, fe_elem elem, double v, uint32_t *out);
/* `piece` with a new dim of 1 at `axis` (a new value). */
lm_status fe_x_unsqueeze(fe_expansion *x, uint32_t piece, int64_t axis, uint32_t *out);
/* With st == LM_OK, puts the expansion's nodes in place of node x->k; frees
 * the expansion's node list either way. Returns st or the splice's error. */
lm_status fe_x_finish(fe_expansion *x, lm_status st);
/* An op's infer rewriting its own node n: the expansion, its new values
 * named "<node>/..." ... */
void fe_x_begin(fe_ctx *c, const fe_node *n, fe_expansion *x);
/* ... then fe_x_finish, and on success c->expanded for inference to go on
 * with the new nodes. */
lm_status fe_x_end(fe_ctx *c, fe_expansion *x, lm_status st);

/* ---- building an expansion with sticky errors ----
 *
 * A rewrite reads as straight-line math when its errors are sticky: once
 * st is set, every fe_b_* call does nothing and returns FE_NONE, and the
 * caller checks st once (fe_x_end). New nodes are at opset 13 unless
 * given; node pointers are valid until the next node is added. */
typedef struct fe_build {
    fe_expansion x;
    lm_status st;
    fe_elem elem; /* the float type of fe_b_scalar's constants */
} fe_build;

/* A node op (at `opset`) of `n_in` inputs into a new value; the node in
 * *out_node when not NULL. */
uint32_t fe_b_node(fe_build *b, const char *op, int64_t opset, const uint32_t *in, uint32_t n_in,
                   fe_node **out_node);
/* A copy of the node being rewritten (name, attributes, flags, inputs and
 * outputs, in arrays of its own) appended to the rewrite; valid until the
 * next node is added. */
fe_node *fe_b_copy_node(fe_build *b);
/* op(a) or op(a, c) (c FE_NONE for one input). */
uint32_t fe_b_op(fe_build *b, const char *op, uint32_t a, uint32_t c);
/* Appends attribute a (its arrays in the graph's arena, or static) to n. */
void fe_b_attr(fe_build *b, fe_node *n, fe_attr a);
/* Appends an INTS attribute (`list`; the values copied) or an INT one (v[0]). */
void fe_b_ints_attr(fe_build *b, fe_node *n, const char *name, bool list, const int64_t *v,
                    int32_t count);
/* A constant of `elem` and shape dims[rank], every element `fill`. */
uint32_t fe_b_const(fe_build *b, fe_elem elem, uint32_t rank, const int64_t *dims, double fill);
/* A scalar of b->elem. */
uint32_t fe_b_scalar(fe_build *b, double v);
/* A 1-D int64 constant. */
uint32_t fe_b_ints(fe_build *b, const int64_t *v, uint32_t count);
/* 0, 1, ..., count - 1: a 1-D int64 constant. */
uint32_t fe_b_iota(fe_build *b, int64_t count);
uint32_t fe_b_cast(fe_build *b, uint32_t v, fe_elem to);
uint32_t fe_b_where(fe_build *b, uint32_t cond, uint32_t x, uint32_t y);
/* The sum over `axes` (kept as 1s). */
uint32_t fe_b_sum(fe_build *b, uint32_t v, const int64_t *axes, uint32_t count);
/* v's elements [from, to) along `axis`. */
uint32_t fe_b_slice(fe_build *b, uint32_t v, int64_t axis, int64_t from, int64_t to);
/* v with a new dim of 1 at `axis`. */
uint32_t fe_b_unsqueeze(fe_build *b, uint32_t v, int64_t axis);
/* The parts joined along `axis` (one part is itself). */
uint32_t fe_b_concat(fe_build *b, const uint32_t *parts, uint32_t count, int64_t axis);
/* v reshaped to dims[rank]. */
uint32_t fe_b_reshape(fe_build *b, uint32_t v, const int64_t *dims, uint32_t rank);

/* Fusions (fe_fuse.c): matmul + bias + activation, conv + batch norm +
 * activation, a layer normalization spelled out. */
lm_status fe_fuse(fe_ctx *c);

/* Image layouts (fe_layout.c): sets fe_plan.nhwc_out where every reader of
 * a node's output takes flat NHWC images. After fe_plan_graph. */
lm_status fe_plan_layouts(fe_ctx *c);

/* Resets the use counts before a run of the model. */
void fe_plan_reset_uses(fe_ctx *c);

/* Writes the report's notes (precision lowered, integer math). */
lm_status fe_report_notes(const fe_ctx *c, lmfe_report *r);

/* Sets a named buffer's element type (what the model calls it) from `elem`. */
void fe_set_element_type(lm_buffer_name_options *o, fe_elem elem);

#endif
