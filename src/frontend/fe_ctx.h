/* The compile context and what op implementations use.
 *
 * Each ONNX op is one fe_op_def (fe_ops_*.c, registered in fe_ops.c):
 *   infer  sets the outputs' types from the inputs' (fe_set_out_type), or
 *          their values when it can compute them on the host
 *          (fe_set_out_const: constant folding);
 *   lower  runs the node on the device as op library calls, reading inputs
 *          with fe_in_dev / fe_in_image and handing results over with
 *          fe_out_dev. NULL when infer always folds.
 * Inference runs over the whole graph before anything touches the device,
 * so a model with an unsupported op fails before any device work.
 *
 * Device representation of a value (fe_dev_dtype): float32, float64 and
 * float16 as the mode's float dtype (FLOAT32, or BFLOAT16 in the bf16/bfp8
 * modes); bfloat16 as BFLOAT16; integers and bool as INT32 (bool 0/1);
 * uint32/uint64 as UINT32. Tensors are in tile layout unless an op asks for
 * row-major (indices).
 *
 * Errors: fe_fail prefixes the node label, so an op writes only what is
 * wrong ("attribute auto_pad=VALID is not supported").
 */
#ifndef LM_FRONTEND_FE_CTX_H
#define LM_FRONTEND_FE_CTX_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "frontend/fe_graph.h"
#include "lightmetal/frontend.h"
#include "lightmetal/nn.h"

typedef struct fe_ctx fe_ctx;
typedef struct fe_pad_concat fe_pad_concat;

typedef struct fe_op_def {
    const char *op_type;
    lm_status (*infer)(fe_ctx *c, const fe_node *n);
    lm_status (*lower)(fe_ctx *c, const fe_node *n);
    /* Bit i: input i decides output shapes, so its value must be known at
     * compile time (Reshape's shape, Slice's starts, ...). */
    uint32_t value_inputs;
    /* What this node can do with flat NHWC images (FE_IMAGE_* bits): read
     * input 0 as one (fe_in_image), write output 0 as one (fe_plan.nhwc_out).
     * NULL: neither. Asked after inference. */
    uint32_t (*images)(fe_ctx *c, const fe_node *n);
} fe_op_def;

enum {
    FE_IMAGE_IN = 1u << 0,  /* reads input 0 as a flat NHWC image */
    FE_IMAGE_OUT = 1u << 1, /* writes output 0 as one */
    /* Writes output 0, the image of input 0 flattened to [N, C * H * W],
     * in the image's own order instead ([N, H * W * C]) when asked to
     * (fe_plan.nhwc_rows). */
    FE_ROWS_OUT = 1u << 2,
    /* Reads input 0 as [M, K] rows whose K columns it can take in any fixed
     * order: its other operand is a constant whose rows follow that order
     * instead (a matrix product). */
    FE_ROWS_IN = 1u << 3,
    /* Reads every input computed at run time as a flat NHWC image and
     * writes output 0 as one, when all of them come so: element-wise ops
     * (their constants broadcast per channel; fe_ew_images says which
     * nodes fit), whose lower takes the inputs with fe_in_ew and hands the
     * result over with fe_out_ew; a Concat of channels. */
    FE_IMAGE_ALL = 1u << 4,
    /* Reads its input image fastest in tile layout (fe_plan.nhwc_tiles). */
    FE_TILES_IN = 1u << 5,
    /* Channels-last values held flat (fe_plan.last_out): a float value of
     * rank 3 or more whose readers only ever work along its last dim is
     * held as [1, 1, rows, last], the same elements in the same order, so
     * that its rows fill whole tiles whatever the dims before the last.
     * FE_LAST_IN reads input 0 so, FE_LAST_OUT writes output 0 so, and
     * FE_LAST_ALL reads every input computed at run time so and writes
     * output 0 so, when all of them come so (a layer normalization over the
     * last dim, a product with a constant matrix). */
    FE_LAST_IN = 1u << 6,
    FE_LAST_OUT = 1u << 7,
    FE_LAST_ALL = 1u << 8,
};

/* The op named `op_type` in the default domain, or NULL. */
const fe_op_def *fe_op_find(const char *op_type);
/* The op named `op_type` in domain ai.onnx.preview.training, or NULL
 * (fe_ops_training.c). */
const fe_op_def *fe_op_find_training(const char *op_type);
/* Whether `op` takes sequence or optional values as inputs: the sequence
 * and optional ops, Identity and control flow, which pass them on
 * (fe_sequence.c). Other ops are refused one before their infer runs. */
bool fe_op_takes_sequences(const fe_op_def *op);
/* Every op, for listings: *out_count entries. */
const fe_op_def *const *fe_op_all(size_t *out_count);

/* Fusions recorded on a node by fe_fuse (fe_fuse.c), applied by its lower:
 * use `weight` instead of input 1 when set, add `bias` (1-D: MatMul's N,
 * Conv's output channels; it already includes the node's own bias input,
 * which the lower then ignores), apply `activation`. fe_out_dev sends
 * output 0 to `output`, the fused chain's last value.
 *
 * A ReduceMean heading the layer normalization older exporters spell out
 * (`layer_norm`) computes it instead, over its input's last dim: epsilon
 * `eps`, then times `weight` and plus `bias` when set (1-D, that dim's
 * size). A Pow(x, 2) or Mul(x, x) heading an RMS normalization spelled out
 * (`rms_norm`) computes that over x's last dim: epsilon `eps`, then times
 * `weight` when set. */
enum { FE_REGROUP_STEPS = 4 };

typedef struct fe_fusion {
    const fe_tensor *weight;
    const fe_tensor *bias;
    lmnn_unary_op activation; /* LMNN_UNARY_INVALID: none */
    double act_alpha, act_beta;
    uint32_t output; /* FE_NONE: the node's own */
    bool layer_norm;
    bool rms_norm;
    uint32_t group_norm; /* a group normalization spelled out: its groups (0: none) */
    /* A MaxPool after a convolution's chain (fe_pool_fusable): its kernel
     * and strides, for lmnn_conv2d's fused pooling; kernel 0: none. */
    int32_t pool_kernel[2], pool_stride[2];
    double eps;
    /* Reshape -> Transposes and Reshapes: the nodes after the head, each
     * the last one's single reader, applied with it in one pass
     * (fe_regroup.c). */
    uint32_t steps[FE_REGROUP_STEPS];
    uint32_t step_count;
} fe_fusion;

/* Per-node plan. */
typedef struct fe_plan {
    lmfe_placement placement;
    fe_fusion fusion;
    bool lowered_precision; /* float math below float32 (dtype mode) */
    /* Output 0 (the fused chain's last value) is handed over as a flat NHWC
     * image, [1, 1, N * H * W, C] (tile) or [N * H, W * C] (row-major, a
     * page per image row) for the value's [N, C, H, W]: every reader takes
     * that form (fe_plan_layouts). */
    bool nhwc_out;
    /* Output 0, [N, C * H * W] in ONNX, holds its columns in NHWC order
     * (h, w, c) instead: every reader permutes its constant operand's rows
     * to match, so a flattened image needs no transpose (fe_plan_layouts). */
    bool nhwc_rows;
    /* With nhwc_out: the image goes over in tile layout, not row-major,
     * because a node that reads every input so (FE_IMAGE_ALL) reads it. */
    bool nhwc_tiles;
    /* Output 0 (the fused chain's last value) is held flat as [1, 1, rows,
     * last dim] (FE_LAST_*; fe_slot.last marks the value). */
    bool last_out;
} fe_plan;

/* A device tensor shared by the values that alias it (Identity, ...). */
typedef struct fe_dev {
    lmnn_tensor tile, rm; /* tile-layout and row-major forms (either may be 0) */
    lmnn_tensor nhwc;     /* the flat NHWC image form (fe_plan.nhwc_out), or 0 */
    /* The value as rows, [dim 0, the rest] in tiles (fe_out_rows), or 0:
     * the other forms are made from it when a reader asks for them. */
    lmnn_tensor rows;
    uint32_t refs; /* values that point here and are still to be used */
    /* A permutation not yet made (fe_out_permuted): the value is entry
     * `pre`'s tile form with its dims permuted by `perm`; FE_NONE: none. */
    uint32_t pre;
    int32_t perm[FE_MAX_RANK];
    /* A view (fe_out_view): `tile` or `nhwc` (FE_VIEW_TILE, FE_VIEW_NHWC) is
     * entry `pre`'s tensor, borrowed (one reference on `pre` taken, the
     * tensor not freed here), and `perm` means nothing. */
    uint32_t borrowed;
    /* The value whose node made this entry (fe_out_dev); FE_NONE for an
     * input's, a constant's or a view's. */
    uint32_t owner;
} fe_dev;

enum { FE_VIEW_TILE = 1u << 0, FE_VIEW_NHWC = 1u << 1 };

typedef struct fe_slot {
    uint32_t dev;       /* index into ctx->devs, FE_NONE: none yet */
    uint32_t uses;      /* reads by device nodes (+1 for a graph output): the plan */
    uint32_t remaining; /* uses left in the current run */
    bool pinned;        /* constants and graph inputs/outputs: never freed while compiling */
    bool last;          /* held as [1, 1, rows, last dim] (fe_plan.last_out) */
} fe_slot;

/* A device tensor an op made once per compile (fe_cache_get). */
typedef struct fe_cache_entry {
    uint64_t key;
    lmnn_tensor t;
} fe_cache_entry;

/* An uploaded constant, by content (fe_dev.c). */
typedef struct fe_const_entry {
    uint64_t hash;
    uint32_t dev;
} fe_const_entry;

struct fe_ctx {
    fe_graph *g;
    const lmfe_compile_options *opts;
    fe_plan *plans; /* one per node */
    fe_slot *slots; /* one per value */
    fe_dev *devs;
    uint32_t dev_count, dev_cap;
    lm_device *device;
    uint64_t dram_bytes;    /* the device's DRAM, which no value may exceed (0: no limit) */
    lmnn_dtype float_dtype; /* FLOAT32 or BFLOAT16 */
    bool bfp8_weights;
    bool device_phase;      /* lowering (fe_in_dev may upload) */
    const fe_node *current; /* node being inferred or lowered, for messages */
    uint32_t trace_id;      /* the model's metal trace (--trace) when `traced` */
    bool traced;
    lmnn_tensor run_seed; /* the seed input's tensor (opts->seed_input), or {0} */
    uint64_t weight_bytes;
    uint64_t peak_device_bytes; /* measured: fe_memory_begin / fe_memory_end */
    fe_const_entry *consts;
    uint32_t const_count, const_cap;
    fe_cache_entry *cache; /* fe_cache_get / fe_cache_put */
    uint32_t cache_count, cache_cap;
    /* Set by a control-flow node's inference: it was replaced by the nodes
     * now at its place, which inference takes next (fe_expand.c). */
    bool expanded;
    uint32_t unrolled; /* expansions so far (fe_expand.c bounds them) */
    /* The Concats along a padded dim made so far (fe_padded.c), in the
     * graph's arena. */
    fe_pad_concat *pad_concats;
    /* NonMaxSuppressions waiting for fe_nms_resolve: each one's output
     * and the record of its results (fe_value.pad_valid), made already. */
    uint32_t (*nms_waiting)[2];
    uint32_t nms_waiting_count, nms_waiting_cap;
};

/* ---- errors ---- */

/* Records "<node label>: <message>" and returns `status`. */
lm_status fe_fail(fe_ctx *c, const fe_node *n, lm_status status, const char *fmt, ...)
    ERR_PRINTF(4, 5);

/* ---- inputs and attributes (infer and lower) ---- */

/* Number of inputs actually given (trailing omitted ones not counted). */
uint32_t fe_in_count(const fe_node *n);
bool fe_has_in(const fe_node *n, uint32_t i);
const fe_value *fe_in(fe_ctx *c, const fe_node *n, uint32_t i);
const fe_type *fe_in_type(fe_ctx *c, const fe_node *n, uint32_t i);
/* The input's value when known at compile time, else NULL. */
const fe_tensor *fe_in_const(fe_ctx *c, const fe_node *n, uint32_t i);
/* The input's value, which must be known at compile time: else an error
 * saying so (and what to do about a graph input). */
lm_status fe_in_const_required(fe_ctx *c, const fe_node *n, uint32_t i, const fe_tensor **out);
/* A padded scan output (opts->pad_dynamic) holds rows that are not
 * results, which only the program reading it can tell apart: value v of
 * node n must be a graph output no node reads. The error names n and the
 * reader; `what` names v and its padding. (Other padded outputs may go
 * through the readers fe_padded_read allows.) */
lm_status fe_check_unread(fe_ctx *c, const fe_node *n, uint32_t v, const char *what);
/* Reading padded values (fe_padded.c). fe_mark_padded marks value v padded
 * along `dim`, bool vector `valid` saying which entries along it are
 * results (fe_value.padded, pad_valid). Before node n is inferred,
 * fe_padded_read lets it read padded values when it keeps padding apart
 * (docs/frontend.md lists those ops), marking its outputs padded or
 * rewriting it (c->expanded) so that padding takes no part in what it
 * computes; any other reader is an error naming it. After n is inferred,
 * fe_padded_written marks a computed padded output dirty (its padding is
 * whatever the op made of it) or a reshape's padded, and puts padding back
 * into a dirty graph output (a rewrite, c->expanded). fe_padding_of is
 * fe_pad_value's padding of element type e, or an error naming n: `what`
 * says which outputs are padded, `whose` whose type e is. */
void fe_mark_padded(fe_ctx *c, uint32_t v, int32_t dim, uint32_t valid);
/* The longest axis a CumSum of run-time data takes: its sums are float32,
 * whose integers (the positions and counts it makes for NonZero, Compress
 * and a Concat of padded values) are exact below 2^24. */
#define FE_CUMSUM_MAX (INT64_C(1) << 24)
lm_status fe_padded_read(fe_ctx *c, const fe_node *n);
lm_status fe_padded_written(fe_ctx *c, const fe_node *n);
lm_status fe_padding_of(fe_ctx *c, const fe_node *n, fe_elem e, const char *what, const char *whose,
                        double *out);
/* The padding of a padded output of element type e, in *out: NaN for
 * floats, -1 for signed integers, false (0) for bool; false for any other
 * type (unsigned integers have no value a result cannot take). */
bool fe_pad_value(fe_elem e, double *out);

/* Checks the input count is within [min, max] and every required input is there. */
lm_status fe_check_inputs(fe_ctx *c, const fe_node *n, uint32_t min, uint32_t max);

/* Attribute readers: a missing attribute gives `def`; one of the wrong type
 * is an error. */
lm_status fe_attr_int(fe_ctx *c, const fe_node *n, const char *name, int64_t def, int64_t *out);
lm_status fe_attr_float(fe_ctx *c, const fe_node *n, const char *name, float def, float *out);
/* *out NULL when missing and def NULL. */
lm_status fe_attr_string(fe_ctx *c, const fe_node *n, const char *name, const char *def,
                         const char **out);
/* A string attribute (`def` when missing) that must be one of the
 * NULL-terminated `names`: its index in *out, else "attribute NAME=VALUE is
 * not valid" (LM_ERR_INVALID_FILE); with `def` NULL, a missing one is
 * "attribute NAME is required". */
lm_status fe_attr_choice(fe_ctx *c, const fe_node *n, const char *name, const char *def,
                         const char *const *names, int *out);
/* *out_count 0 and *out NULL when missing. */
lm_status fe_attr_ints(fe_ctx *c, const fe_node *n, const char *name, const int64_t **out,
                       size_t *out_count);
lm_status fe_attr_floats(fe_ctx *c, const fe_node *n, const char *name, const float **out,
                         size_t *out_count);
/* Fails for any attribute not in the NULL-terminated list `known`: an
 * attribute the compiler does not understand is never silently ignored. */
lm_status fe_check_attrs(fe_ctx *c, const fe_node *n, const char *const *known);

/* Normalises axis `axis` (negative counts from the end) into [0, rank). */
lm_status fe_axis(fe_ctx *c, const fe_node *n, int64_t axis, int32_t rank, int32_t *out);

/* ---- outputs (infer) ---- */

/* LM_ERR_UNSUPPORTED, naming the node (or none) and `what` ('output 0
 * ('y')', 'graph input 'x''), when a value of type `t`, at 4 bytes an
 * element, would take more than the device's DRAM (c->dram_bytes): such a
 * model cannot run, and finding out when memory runs out would say less. */
lm_status fe_check_fits_device(fe_ctx *c, const fe_node *n, const char *what, const fe_type *t);

lm_status fe_set_out_type(fe_ctx *c, const fe_node *n, uint32_t i, fe_elem elem, int32_t rank,
                          const int64_t *dims);
/* Makes output i the sequence of `count` tensor values `items` (copied) of
 * element type `elem` (fe_sequence.c). */
lm_status fe_set_out_seq(fe_ctx *c, const fe_node *n, uint32_t i, fe_elem elem,
                         const uint32_t *items, uint32_t count);
/* Makes output i an optional holding value `held` (a tensor or a sequence),
 * or empty when `held` is FE_NONE (fe_sequence.c). */
lm_status fe_set_out_opt(fe_ctx *c, const fe_node *n, uint32_t i, fe_elem elem, uint32_t held);
/* Makes output i the same sequence or optional as `src`. */
lm_status fe_set_out_like(fe_ctx *c, const fe_node *n, uint32_t i, const fe_value *src);
/* Sets output i's value (and type) to `t` (arena memory; fe_const_new). */
lm_status fe_set_out_const(fe_ctx *c, const fe_node *n, uint32_t i, const fe_tensor *t);
/* A new constant with zeroed data in the graph's arena. */
lm_status fe_const_new(fe_ctx *c, fe_elem elem, uint32_t rank, const int64_t *dims,
                       fe_tensor **out);
void fe_tensor_set_f64(fe_tensor *t, uint64_t index, double v);
void fe_tensor_set_i64(fe_tensor *t, uint64_t index, int64_t v);

/* The flat index into constant `in`, broadcast NumPy-style to `out`'s dims,
 * of flat output index `idx` (constant folding). */
uint64_t fe_bcast_index(const fe_type *out, const fe_tensor *in, uint64_t idx);

/* NumPy broadcasting of two shapes into `out` (rank max of both). */
lm_status fe_broadcast(fe_ctx *c, const fe_node *n, const fe_type *a, const fe_type *b,
                       fe_type *out);

/* Element type classes. */
bool fe_elem_is_float(fe_elem e);   /* float, double, float16, bfloat16 */
bool fe_elem_is_int(fe_elem e);     /* signed and unsigned integers */
bool fe_elem_is_numeric(fe_elem e); /* float or int (not bool, string) */
/* Fails unless input i's element type is one of `allowed` (FE_UNDEFINED-terminated). */
lm_status fe_check_elem(fe_ctx *c, const fe_node *n, uint32_t i, const fe_elem *allowed);

/* ---- device (lower) ---- */

lmnn_dtype fe_dev_dtype(fe_ctx *c, fe_elem elem);
/* Input i on the device in tile layout with its device dtype (constants are
 * uploaded once, on first use). */
lm_status fe_in_dev(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_tensor *out);
/* Input i row-major in `dtype`, as a tensor of the caller's (a buffer no
 * value shares: a graph output's, asked for after its last use): the
 * row-major form held in that dtype, handed over when only this value
 * holds it (a node's result, not an input's or a constant's, one output
 * listing) and else copied; without one, made from the tile form
 * (typecast, untilized). */
lm_status fe_in_dev_rm_own(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_dtype dtype,
                           lmnn_tensor *out);
/* Input i row-major in `dtype` to read: the form held so, borrowed
 * (*out_owned false), or else one made as fe_in_dev_rm_own does, the
 * caller's to free. */
lm_status fe_in_dev_rm(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_dtype dtype, lmnn_tensor *out,
                       bool *out_owned);
/* Storage dtype of a graph input or output of element type `e`. */
lmnn_dtype fe_boundary_dtype(fe_elem e);
/* Whether node n's output i (the fused chain's last value for output 0) is
 * a float graph output no node reads, listed once: the node may give it
 * row-major in its boundary dtype (*out_dtype) and hand it over with
 * fe_out_dev, for the output to take as it is (fe_in_dev_rm_own). */
bool fe_out_is_boundary(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_dtype *out_dtype);
/* Input i of a node that reads images (FE_IMAGE_IN): the flat NHWC form
 * (fe_plan.nhwc_out's) when its producer wrote one (*out_flat
 * true), else the NCHW value: row-major when held only so (a rank-4 float
 * graph input), else the tile form. fe_in_dev on a value held only as a flat
 * image makes the NCHW form (a transpose on the device) and keeps it. */
lm_status fe_in_image(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_tensor *out, bool *out_flat);
/* fe_in_image for a convolution, which rounds its input itself (its
 * input_dtype) and views a row-major 1-D signal as [N, C, 1, L]: a
 * row-major graph input of rank 3 comes as it is too, and a float32 one in
 * a mode computing in bfloat16 with *out_cast the dtype it is to be taken
 * in; else *out_cast is 0 and *out what fe_in_image gives. */
lm_status fe_in_image_cast(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_tensor *out,
                           bool *out_flat, lmnn_dtype *out_cast);
/* FE_IMAGE_ALL when element-wise node `n` can run on images: float inputs
 * and output, the output rank 4 [N, C, H, W] (or 5, [N, C, D, H, W]), each
 * input computed at run time of that shape or [N, C, 1, 1] (a gate, as
 * squeeze-and-excitation multiplies by; [N, C, 1, 1, 1]), each constant one
 * value per channel or a scalar ([C, 1, 1], [1, C, 1, 1], [1], ...), and
 * no attributes (the legacy broadcast). With it, or alone, FE_LAST_ALL when the node can run on
 * channels-last values held flat: float inputs and output, the output rank
 * 3 or more, each input computed at run time of the output's shape, each
 * constant of rank 4 or less whose dims are 1 but for the last (1 or the
 * output's last). */
uint32_t fe_ew_images(fe_ctx *c, const fe_node *n);
/* Input i of an element-wise node as a float tile tensor: fe_in_dev_float's
 * when the node runs on NCHW values; on images (fe_plan.nhwc_out of an
 * FE_IMAGE_ALL node) in the node's image frame, [1, B, P, C] with the
 * image's pixels as P (B = 1, P = N * H * W: the flat image itself; or
 * B = N, P = H * W when the node has a gate and N > 1), a gate as
 * [1, B, 1, C], a constant as [C] or [1], so the op library's broadcasting
 * gives the image result. *out_owned: the caller frees *out. */
lm_status fe_in_ew(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_tensor *out, bool *out_owned);
/* Hands float result `t` of an element-wise node over as output 0: in the
 * image frame (fe_in_ew) it becomes the flat image. Consumes `t`. */
lm_status fe_out_ew(fe_ctx *c, const fe_node *n, lmnn_tensor t);
/* Input i in tile layout as FLOAT32 (or the float dtype), for integer
 * tensors that go through float math: a new tensor the caller frees. */
lm_status fe_in_dev_float(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_tensor *out,
                          bool *out_owned);
/* fe_in_dev_float for a reader that takes a row-major tensor as well (a
 * product's A, which tilizes its rows as it multiplies them): a float
 * value held only row-major (a Flatten's result, a graph input) as it is,
 * *out_cast the dtype it is to be taken in when that is not its own (a
 * float32 graph input in a mode computing in bfloat16: the matmul's
 * input_dtype), else 0. */
lm_status fe_in_dev_float_rows(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_tensor *out,
                               bool *out_owned, lmnn_dtype *out_cast);
/* The same as a new tensor of `rank` dims `dims` (the input's element
 * count): the caller frees it. Errors name the node. */
lm_status fe_in_float_as(fe_ctx *c, const fe_node *n, uint32_t i, int32_t rank, const int64_t *dims,
                         lmnn_tensor *out);
/* Whether a value of type t can be held as a flat image: rank 4 [N, C, H,
 * W], 5 [N, C, D, H, W] (its pixels the D * H * W voxels), or 3 [N, C, L]
 * (a 1-D convolution's signal, its pixels the L samples). */
bool fe_image_rank(const fe_type *t);
/* The pixels of one batch entry's channel of an image type: the product of
 * its dims after the channels. */
int64_t fe_image_pixels(const fe_type *t);
/* Flat NHWC image `image` (fe_plan.nhwc_out's) of the NCHW value of `rank`
 * dims `dims` (N, C, H, W; or N, C, D, H, W) as a new tile tensor of shape
 * `to` in NCHW element order (the value's shape itself, or any reshape of
 * it). */
lm_status fe_image_nchw(fe_ctx *c, const fe_node *n, lmnn_tensor image, int32_t rank,
                        const int64_t *dims, const lmnn_shape *to, lmnn_tensor *out);
/* Flat NHWC image `image` (either layout) in NHWC element order as a tile
 * tensor of shape `to` (e.g. [1, N, H * W, C]): `image` itself when it is
 * one already (*out_owned false), else a new one the caller frees. */
lm_status fe_image_tiles(fe_ctx *c, const fe_node *n, lmnn_tensor image, const lmnn_shape *to,
                         lmnn_tensor *out, bool *out_owned);
/* Input i of a node that reads images (FE_IMAGE_ALL) as a tile tensor of
 * shape `to` in NHWC element order: its flat image (fe_image_tiles), or,
 * for a value of one pixel per channel that no node wrote as an image, its
 * NCHW form, whose order is the same. *out_owned: the caller frees *out. */
lm_status fe_in_image_tiles(fe_ctx *c, const fe_node *n, uint32_t i, const lmnn_shape *to,
                            lmnn_tensor *out, bool *out_owned);
/* `t` (consumed) in shape `to`: itself when it has it (a reshape would
 * copy), else a new tensor. */
lm_status fe_reshape_owned(fe_ctx *c, const fe_node *n, lmnn_tensor t, const lmnn_shape *to,
                           lmnn_tensor *out);
/* Hands `t` (tile or row-major; for output 0 of a node planned nhwc_out,
 * the flat NHWC image) over as output i. On failure `t` is freed. */
lm_status fe_out_dev(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_tensor t);
/* Hands input j's tensor over as output i's, without a copy, when it is
 * in tile layout of `shape` and the output's dtype: with `as` FE_VIEW_TILE,
 * input j's flat NHWC image as the output's tile form (a Transpose to a
 * channels-last value held flat); with FE_VIEW_NHWC, input j's tile form as
 * the output's image. False (nothing bound) otherwise: the caller copies. */
bool fe_out_view(fe_ctx *c, const fe_node *n, uint32_t i, uint32_t j, uint32_t as,
                 const lmnn_shape *shape);
/* Output i is input j (Identity and friends): no device work. */
lm_status fe_out_alias(fe_ctx *c, const fe_node *n, uint32_t i, uint32_t j);
/* Hands `t` ([dim 0, the rest of output i's dims], tiles; consumed) over
 * as output i held as rows: a reader that takes rows (fe_in_float_as of
 * that shape, a Flatten after dim 0) reads it as it is, any other the
 * value's own shape, made when first read. A row-wise scatter's result
 * goes so, sparing a relayout each way when its dims after the first are
 * small (RoiAlign's [R, C, 7, 7]: each 7x7 plane pads a 32x32 tile). */
lm_status fe_out_rows(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_tensor t);
/* Input i's rows form (fe_out_rows) when it has one of `shape` (NULL:
 * any; not owned), else a zero handle. */
lmnn_tensor fe_in_rows(fe_ctx *c, const fe_node *n, uint32_t i, const lmnn_shape *shape);
/* ---- permutations not yet made ----
 * A Transpose that keeps the last dim only records its permutation: its
 * output is held as "pre permuted by perm". Readers that can work on `pre`
 * directly (a product with a matrix, a slice of the last dim, a reshape,
 * another transpose: each then records the same or a composed permutation
 * of its own result) ask fe_in_permuted; every other read makes the
 * permuted tensor once (fe_in_dev and friends), so no reader sees a
 * difference but the work saved: a transformer exported sequence-first
 * keeps its [S, B, C] values, whose tiles are mostly padding for a small B,
 * as the [B, S, C] they came from. */
/* Output i is `pre` (float, consumed) with its dims permuted by `perm`
 * (the value's rank): no device work. Converts `pre` to output i's dtype
 * as fe_out_from_float. */
lm_status fe_out_permuted(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_tensor pre,
                          const int32_t *perm);
/* Output i is input j with its dims permuted by `perm`: no device work when
 * the permutation (composed with input j's own, if any) keeps the last dim
 * or only swaps the last two (a MatMul reads that as its transpose_b),
 * else one lmnn_permute. */
lm_status fe_out_permute_of(fe_ctx *c, const fe_node *n, uint32_t i, uint32_t j,
                            const int32_t *perm);
/* Whether input i is held as a permutation not yet made: then *pre (the
 * caller's to read, not to free) and perm[0 .. rank). */
bool fe_in_permuted(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_tensor *pre, int32_t *perm);
/* A permutation of `rank` dims keeps the last dim where it is; swaps the
 * last two and keeps the others. */
bool fe_perm_keeps_last(const int32_t *perm, uint32_t rank);
bool fe_perm_swaps_last(const int32_t *perm, uint32_t rank);
/* Converts float tensor `t` (consumed) to output i's device dtype and hands it over. */
lm_status fe_out_from_float(fe_ctx *c, const fe_node *n, uint32_t i, lmnn_tensor t);
/* An nn call failed: prefix the node label to its message. */
lm_status fe_nn_fail(fe_ctx *c, const fe_node *n, lm_status st);
/* Frees `t` if nonzero (ignoring errors: cleanup paths). */
void fe_free(lmnn_tensor t);
/* `t`'s elements as host data of device dtype `dtype` (float, int32_t or
 * uint32_t; malloc'd into *out). Integers that do not fit are an error
 * naming `name`; for bfloat16 and bfloat8_b, finite floats beyond
 * bfloat16's range become its largest finite value of their sign. */
/* Whether float data for `dtype` is saturated to bfloat16's range. */
bool fe_dtype_saturates(lmnn_dtype dtype);
/* Scalar `f` as a constant of `dtype` holds it: saturated when the dtype
 * saturates (fe_dtype_saturates), else itself. */
float fe_saturate_scalar(lmnn_dtype dtype, float f);
/* `v` with finite values beyond bfloat16's range saturated (see
 * fe_host_data): `v` itself when none is, else a malloc'd copy, also
 * returned in *out_copy for the caller to free; NULL when out of memory. */
const float *fe_saturated(const float *v, size_t count, float **out_copy);
lm_status fe_host_data(const fe_tensor *t, lmnn_dtype dtype, const char *name, void **out,
                       size_t *out_size);
/* A host tensor the op made (an index table, a mask) on the device, in
 * `layout` and its device dtype: uploaded on the node's first run and kept
 * by the compile (slot tells a node's tables apart), so a trace compile's
 * capture, which may not write from the host, finds it made. Not freed by
 * the caller. */
lm_status fe_aux(fe_ctx *c, const fe_node *n, uint32_t slot, const fe_tensor *t, lmnn_layout layout,
                 lmnn_tensor *out);
/* The same for a float table that must be exact whatever the dtype mode
 * (positions, row numbers: integers below 2^24): FLOAT32, tile layout. */
lm_status fe_aux_f32(fe_ctx *c, const fe_node *n, uint32_t slot, const fe_tensor *t,
                     lmnn_tensor *out);
/* Binds row-major tensor `t` (owned from now on) as value `v`'s device form. */
lm_status fe_bind_rm(fe_ctx *c, uint32_t v, lmnn_tensor t);
/* Marks one use of value `v` done: its tensors are freed after the last. */
void fe_value_used(fe_ctx *c, uint32_t v);
/* Frees every device tensor but the uploaded constants. */
void fe_release_non_constants(fe_ctx *c);
/* Frees every device tensor the compile holds. */
void fe_values_release_all(fe_ctx *c);
/* ---- tensors an op makes once per compile (fe_ops_nn.c) ----
 * Prepared convolution weights, index tables: made on first use and kept
 * for the compile's later runs (a traced compile runs the model twice and
 * may upload nothing inside the trace). Keys are the op's choice (an op
 * kind in the top byte keeps families apart). The context owns the tensors;
 * fe_values_release_all frees them with the cache. */
/* True and *out set when `key` is cached. */
bool fe_cache_get(fe_ctx *c, uint64_t key, lmnn_tensor *out);
/* Caches `t` (owned from now on; freed on failure). */
lm_status fe_cache_put(fe_ctx *c, uint64_t key, lmnn_tensor t);
/* Uploads host `data` (`size` bytes of dtype's host element type, row-major)
 * as a tensor of `shape`, `dtype` and `layout`, caches it under `key` and
 * gives it in *out (owned by the cache). */
lm_status fe_cache_upload(fe_ctx *c, const fe_node *n, uint64_t key, const lmnn_shape *shape,
                          const void *data, size_t size, lmnn_dtype dtype, lmnn_layout layout,
                          lmnn_tensor *out);
/* Frees every cached tensor and the cache. */
void fe_cache_release(fe_ctx *c);

/* lmnn_shape from dims. */
lmnn_shape fe_shape(int32_t rank, const int64_t *dims);

#endif
