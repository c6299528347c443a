/* The op families. Each fe_ops_<family>.c defines its table; fe_ops.c
 * lists the tables (add a new family there). */
#ifndef LM_FRONTEND_FE_OPS_H
#define LM_FRONTEND_FE_OPS_H

#include <stddef.h>

#include "frontend/fe_ctx.h"

#define FE_OPS_MAX 256

typedef struct fe_op_family {
    const fe_op_def *ops;
    const size_t *count;
} fe_op_family;

extern const fe_op_family fe_op_families[];

/* Element-wise math: unary, binary with broadcasting, comparisons, logic,
 * Where, Cast, the activations (fe_ops_eltwise.c). */
extern const fe_op_def fe_ops_eltwise[];
extern const size_t fe_ops_eltwise_count;

/* Shapes and data movement: Shape, Reshape, Transpose, Concat, Slice,
 * Gather, ... (fe_ops_shape.c). */
extern const fe_op_def fe_ops_shape[];
extern const size_t fe_ops_shape_count;

/* Composite ops: EyeLike, OneHot, CumSum, the NLL and softmax cross-entropy
 * losses (fe_ops_misc.c). */
extern const fe_op_def fe_ops_misc[];
extern const size_t fe_ops_misc_count;

/* Reductions, ArgMax/ArgMin, Softmax, LogSoftmax, Hardmax (fe_ops_reduce.c). */
extern const fe_op_def fe_ops_reduce[];
extern const size_t fe_ops_reduce_count;

/* Neural-network ops: MatMul, Gemm, Conv, ConvTranspose, pooling, the
 * normalisations, Dropout, DepthToSpace, ... (fe_ops_nn.c). */
extern const fe_op_def fe_ops_nn[];
extern const size_t fe_ops_nn_count;

/* Resampling: Resize and Upsample (fe_ops_resize.c). */
extern const fe_op_def fe_ops_resize[];
extern const size_t fe_ops_resize_count;

/* Recurrent ops: RNN, GRU, LSTM, unrolled (fe_ops_rnn.c). */
extern const fe_op_def fe_ops_rnn[];
extern const size_t fe_ops_rnn_count;

/* Indexing by run-time tensors: GatherND (fe_ops_index.c). */
extern const fe_op_def fe_ops_index[];
extern const size_t fe_ops_index_count;

/* Float row numbers (m of them, exact integers: any shape of m elements) as a
 * new row-major int32 index tensor [m] for lmnn_index_select. The caller
 * keeps `rows`. (fe_ops_index.c; GridSample uses it too.) */
lm_status fe_rows_index(lmnn_tensor rows, int64_t m, lmnn_tensor *out);

/* Input i, when it is a constant, read as index tuples [m, k] (GatherND's
 * and ScatterND's; k 1 and not `tuples` for the other indexing ops, whose
 * errors name an element) whose entry j indexes data dim first + j, of size
 * dims[j]: an entry outside
 * [-dims[j], dims[j]) is an invalid model (LM_ERR_INVALID_FILE naming the
 * node), as ONNX makes it an error; on the device such an index would
 * select zeros or change nothing. A run-time input is not checked.
 * (fe_ops_index.c.) */
lm_status fe_check_const_indices(fe_ctx *c, const fe_node *n, uint32_t i, bool tuples, int64_t k,
                                 int32_t first, const int64_t *dims);

/* `data` (dims `dims`, time along dim `time`, 0 or 1, batch along the
 * other) with each batch entry's first len steps reversed, as a new tensor
 * in *out; `lens` the float lengths shaped [1, B] (time 0) or [B, 1]. The
 * node's aux `slot` holds the positions table. Errors name the node.
 * (fe_ops_index.c; the recurrent ops use it too.) */
lm_status fe_reverse_sequences(fe_ctx *c, const fe_node *n, uint32_t slot, lmnn_tensor data,
                               int32_t rank, const int64_t *dims, int32_t time, lmnn_tensor lens,
                               lmnn_tensor *out);

/* Linear quantization: QuantizeLinear, DequantizeLinear,
 * DynamicQuantizeLinear (fe_ops_quant.c). */
extern const fe_op_def fe_ops_quant[];
extern const size_t fe_ops_quant_count;

/* Sampling at run-time positions: GridSample, RoiAlign, MaxRoiPool
 * (fe_ops_grid.c). */
extern const fe_op_def fe_ops_grid[];
extern const size_t fe_ops_grid_count;

/* Shapes decided by values known at compile time: NonZero, Unique, Compress
 * (fe_ops_select.c). */
extern const fe_op_def fe_ops_select[];
extern const size_t fe_ops_select_count;

/* Control flow: If, Loop and Scan, inlined where inference reaches them
 * (fe_expand.c). */
extern const fe_op_def fe_ops_control[];
extern const size_t fe_ops_control_count;

/* Sequences, held as lists of tensor values while compiling: SequenceEmpty,
 * SequenceConstruct, SequenceInsert, SequenceErase, SequenceAt,
 * SequenceLength, ConcatFromSequence, SplitToSequence (fe_sequence.c). */
extern const fe_op_def fe_ops_sequence[];
extern const size_t fe_ops_sequence_count;

/* The ops of domain ai.onnx.preview.training: the optimizers Adagrad,
 * Momentum and Adam, rewritten into element-wise ops (fe_ops_training.c),
 * and Gradient. Not in the default domain's registry. */
extern const fe_op_def fe_ops_training[];
extern const size_t fe_ops_training_count;

/* The spatial geometry of a Conv, ConvTranspose, MaxPool or AveragePool
 * node over input type x (N x C x 1 to 3 spatial dims): the attributes
 * with their defaults, auto_pad resolved into pads, and the output dims, as
 * the op computes them (fe_ops_nn.c). `kernel` is the kernel's spatial
 * dims from a convolution's weight, or NULL for kernel_shape. Errors name
 * the node. */
typedef struct fe_geom {
    int32_t sp; /* spatial dims */
    int64_t kernel[3], stride[3], dil[3], pad_b[3], pad_e[3];
    int64_t in[3], out[3];
    int64_t out_pad[3]; /* ConvTranspose */
    int64_t group;
    bool ceil_mode; /* pools */
} fe_geom;

lm_status fe_geom_read(fe_ctx *c, const fe_node *n, const fe_type *x, const int64_t *kernel,
                       fe_geom *out);

/* A Slice node's slice as the op library takes it, per dim of the input:
 * ascending from begin to end (exclusive) by step >= 1, dims[d] elements;
 * `flip` marks dims whose ONNX step is negative, their elements reversed.
 * starts, ends, axes and steps must be constants (fe_ops_shape.c). Errors
 * name the node. */
typedef struct fe_slice_plan {
    int32_t begin[FE_MAX_RANK], end[FE_MAX_RANK], step[FE_MAX_RANK];
    int64_t dims[FE_MAX_RANK];
    bool flip[FE_MAX_RANK];
} fe_slice_plan;

lm_status fe_slice_read(fe_ctx *c, const fe_node *n, fe_slice_plan *out);

/* LRN's attributes (fe_ops_nn.c): alpha, beta, bias and size (at least 1,
 * else an error naming the node). */
lm_status fe_lrn_read(fe_ctx *c, const fe_node *n, float *alpha, float *beta, float *bias,
                      int64_t *size);
/* A Gelu node's form (attribute approximate: "none" or "tanh") as the op
 * library's LMNN_GELU or LMNN_GELU_TANH (fe_ops_eltwise.c). Errors name the
 * node. */
lm_status fe_gelu_form(fe_ctx *c, const fe_node *n, lmnn_unary_op *out);
/* GELU of x in float64, in form LMNN_GELU (erf) or LMNN_GELU_TANH. */
double fe_gelu_value(lmnn_unary_op form, double x);
/* Whether MaxPool node n is one a convolution before it may take
 * (fe_fuse.c): a 2-D window over a float image with no padding, dilation
 * 1, no Indices output and the floor-mode size (every window wholly
 * inside), its kernel and strides to kernel[2] and stride[2]
 * (fe_ops_nn.c). */
bool fe_pool_fusable(fe_ctx *c, const fe_node *n, int32_t *kernel, int32_t *stride);
/* MeanVarianceNormalization's axes as a bit mask (fe_ops_nn.c; default 0, 2
 * and 3). */
lm_status fe_mvn_axes(fe_ctx *c, const fe_node *n, uint32_t *mask);
/* A Pad node's pads, per dim a (begin, end) pair in pads[2d], pads[2d + 1],
 * its negative pads (ONNX's crops, which remove elements) as a pair of
 * counts in crops[2d], crops[2d + 1] (a side has a pad or a crop, not both),
 * and its mode and value in *o (fe_ops_shape.c). Errors name the node. */
lm_status fe_pad_read(fe_ctx *c, const fe_node *n, uint32_t *pads, uint32_t *crops,
                      lmnn_pad_options *o);

/* The matrix [in, out] resampling dim d of a Resize's (or Upsample's)
 * input: output position o along d is the sum over input positions i of
 * element (i, o) times the input's (none for a position that takes the
 * extrapolation value), as the op computes it (fe_ops_resize.c). A float64
 * constant in the graph's arena. Errors name the node. */
lm_status fe_resize_matrix(fe_ctx *c, const fe_node *n, int32_t d, fe_tensor **out);

/* Operands an Einsum may have: more is refused, naming the node. */
#define FE_EINSUM_MAX_OPERANDS 16

/* An Einsum node's equation: the operands' subscripts and the output's, as
 * one label per dim: letters, and for the dims an ellipsis covers the
 * labels '0', '1', ... (right-aligned: the last ellipsis dim is the same
 * label in every operand). A label may repeat within an operand (a
 * diagonal). Dims one label names have one size, `size`, or 1 in an
 * operand it is broadcast in. (fe_ops_nn.c.) Errors name the node. */
typedef struct fe_einsum {
    uint32_t count;
    char in[FE_EINSUM_MAX_OPERANDS][FE_MAX_RANK + 1];
    char out[FE_MAX_RANK + 1];
    int64_t size[128]; /* per label, -1 unset */
} fe_einsum;

lm_status fe_einsum_read(fe_ctx *c, const fe_node *n, fe_einsum *out);

/* Gradient's inference: the node rewritten into the forward ops it needs
 * and their vector-Jacobian products (fe_grad.c). */
lm_status fe_infer_gradient(fe_ctx *c, const fe_node *n);

/* Text features: TfIdfVectorizer (fe_ops_text.c). */
extern const fe_op_def fe_ops_text[];
extern const size_t fe_ops_text_count;

/* Spectral ops: DFT, STFT, MelWeightMatrix (fe_ops_spectral.c). */
extern const fe_op_def fe_ops_spectral[];
extern const size_t fe_ops_spectral_count;

/* round(x) (half to even) + zp (none when zp.id is 0), saturated to the
 * 8-bit range (u8: 0..255, else -128..127), as a new tensor in *out. x is
 * consumed, zp is not. (fe_ops_quant.c; QLinearMatMul and QLinearConv use
 * it too.) */
lm_status fe_quantize_tail(lmnn_tensor x, lmnn_tensor zp, bool u8, lmnn_tensor *out);

/* ---- regroups (fe_regroup.c) ----
 * A Reshape with Transposes and Reshapes after it (fe_fusion.steps), or a
 * Reshape of a permutation not yet made, as one pass over the elements. */
/* Whether Reshape n with `count` steps after it (node indices) makes one
 * pass. Errors: none (false). */
bool fe_regroup_fits(fe_ctx *c, const fe_node *n, const uint32_t *steps, uint32_t count);
/* What the head of such a chain does with images (FE_IMAGE_IN, _OUT). */
uint32_t fe_regroup_images(fe_ctx *c, const fe_node *n);
/* Lowers Reshape n with its fused steps. Errors name the node. */
lm_status fe_lower_regroup(fe_ctx *c, const fe_node *n);

/* ---- a group normalization spelled out (fe_ops_nn.c) ----
 * Lowers Reshape n, the head of the chain fe_fuse found (fe_fusion.group_norm),
 * with its activation; writes the chain's last value. Errors name the node. */
lm_status fe_lower_group_norm(fe_ctx *c, const fe_node *n);
/* What a group normalization (that chain's head, InstanceNormalization,
 * GroupNormalization) does with images: a rank-4 float input it reads and
 * writes as flat NHWC images, best in tiles. */
uint32_t fe_group_norm_images(fe_ctx *c, const fe_node *n);

/* ---- a work list (fe_work.c) ----
 * For lowerings made of many small library calls: every tensor made is
 * kept on the list, so one fe_work_release frees them all on success or
 * failure, and each step is a no-op (giving a zero tensor) once one has
 * failed; `st` holds the first failure. Not thread-safe (one per lowering);
 * allocate it (it holds FE_WORK_MAX handles). */
enum { FE_WORK_MAX = 512 };

typedef struct fe_work {
    lm_status st;
    uint32_t count;
    lmnn_tensor made[FE_WORK_MAX];
} fe_work;

/* Keeps *made, which the call that returned `st` made (a pointer: a call's
 * arguments are all evaluated before it runs, so the call has written it). */
lmnn_tensor fe_work_keep(fe_work *w, lm_status st, const lmnn_tensor *made);
/* Frees what was kept since `mark` (0: everything). */
void fe_work_release(fe_work *w, uint32_t mark);
lmnn_tensor fe_work_scalar(fe_work *w, lmnn_binary_op op, lmnn_tensor a, double s);
lmnn_tensor fe_work_binary(fe_work *w, lmnn_binary_op op, lmnn_tensor a, lmnn_tensor b);
lmnn_tensor fe_work_unary(fe_work *w, lm_status (*f)(lmnn_tensor, lmnn_tensor *), lmnn_tensor a);
lmnn_tensor fe_work_reshape(fe_work *w, lmnn_tensor a, const lmnn_shape *shape);
/* lmnn_slice with steps of 1. */
lmnn_tensor fe_work_slice(fe_work *w, lmnn_tensor a, const int32_t *begins, const int32_t *ends,
                          uint32_t count);

/* Random numbers: RandomUniform, RandomNormal, their Like forms, Bernoulli
 * (fe_ops_random.c). */
extern const fe_op_def fe_ops_random[];
extern const size_t fe_ops_random_count;
/* How random op `n` draws: its seed attribute's seed, else one made from its
 * output's name, and the seed input's tensor as the run seed when the
 * compile has one (fe_ops_random.c). */
void fe_random_options(fe_ctx *c, const fe_node *n, lmnn_random_options *out);
/* Whether node `n` draws random numbers: a random op, or a Dropout in
 * training mode with a nonzero ratio (fe_dropout_drops, fe_ops_nn.c, which
 * also gives the ratio when out_ratio is not NULL). */
bool fe_draws_random(fe_ctx *c, const fe_node *n);
bool fe_dropout_drops(fe_ctx *c, const fe_node *n, double *out_ratio);

/* Whether ReduceMean node n averages over its input's last dim alone,
 * keeping it (fe_ops_reduce.c): how a spelled-out layer norm starts
 * (fe_fuse.c). */
bool fe_mean_over_last_dim(fe_ctx *c, const fe_node *n);
/* Whether n is a Reduce*, ArgMax, ArgMin, Softmax, LogSoftmax or Hardmax
 * node; if so, the dims of input 0 it works along (a bit mask: a Reduce*
 * with no axes and noop_with_empty_axes none) and whether its result keeps
 * them (as 1s; the Softmax-like keep their shape), or the node's error in
 * *out_st (fe_fail's, naming it). */
bool fe_reduce_dims(fe_ctx *c, const fe_node *n, uint32_t *out_mask, bool *out_keepdims,
                    lm_status *out_st);

/* The layer or RMS normalization fe_fuse found spelled out, headed by node n
 * (fe_fusion.layer_norm or .rms_norm): the op library's over the last dim
 * of n's input 0, written to the chain's last value (fe_ops_reduce.c). */
lm_status fe_lower_spelled_norm(fe_ctx *c, const fe_node *n, const fe_fusion *f);

#endif
