/* lightmetal model frontend — compile an ONNX model into a Light Metal binary.
 *
 * lmfe_compile_onnx loads an .onnx file (and its external data files), fixes
 * its input shapes, infers every tensor's type and shape, folds what is known
 * at compile time, removes dead nodes, fuses simple patterns, then runs every
 * node as op library (lmnn_*) operations on a device while Light Metal
 * captures. The result is a binary whose named inputs and outputs are the
 * model's graph inputs and outputs, with their shapes and element types, that
 * any replay (lm_replay_*, `lightmetal run`) runs with no compiler and no
 * framework.
 *
 * Element types at the boundary: float inputs and outputs are float32 on the
 * device; integer and bool tensors are int32 (the named buffer records the
 * model's element type, so `lightmetal run` reads and writes .npy files of
 * that type, converting and range-checking at the edge). float64 and float16
 * tensors compute in float32.
 *
 * Errors: every function returns lm_status with the detail in lm_last_error(),
 * naming the file, the node (its name, or "#index" when it has none), the op
 * and what is wrong or missing, e.g.
 *   "lmfe_compile_onnx: model.onnx: node 'conv1' (Conv): attribute
 *    auto_pad=VALID is not supported".
 * LM_ERR_INVALID_FILE for a malformed or inconsistent model,
 * LM_ERR_UNSUPPORTED for valid models using ops, attributes or element types
 * this compiler does not implement, or values larger than the device's DRAM
 * (refused when their shapes are known), LM_ERR_INVALID_ARGUMENT for bad options
 * (an unknown input name, a shape of the wrong rank, ...).
 *
 * Thread-safety: one compile per device at a time; separate compiles on
 * separate devices may run concurrently.
 */
#ifndef LIGHTMETAL_FRONTEND_H
#define LIGHTMETAL_FRONTEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lightmetal/lm_capture.h"
#include "lightmetal/lm_device.h"
#include "lightmetal/lm_status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LMFE_MAX_RANK 8

/* How float math runs on the device. */
typedef enum lmfe_dtype_mode {
    LMFE_DTYPE_FP32 = 0, /* everything float32 (the default; conformance) */
    LMFE_DTYPE_BF16 = 1, /* activations and weights bfloat16, float32 accumulation */
    LMFE_DTYPE_BFP8 = 2, /* as BF16, with matmul/conv weights in bfloat8_b */
} lmfe_dtype_mode;

/* A graph input's shape fixed by the user: every dim given (no -1; a 0 makes
 * the input empty). */
typedef struct lmfe_input_shape {
    const char *name;
    uint32_t rank;
    int64_t dims[LMFE_MAX_RANK];
} lmfe_input_shape;

/* A symbolic dim (an ONNX dim_param such as "batch") bound to a value. */
typedef struct lmfe_dim_binding {
    const char *symbol;
    int64_t value;
} lmfe_dim_binding;

/* The length of a graph input that is a sequence of tensors: the binary
 * takes it as that many tensor inputs, NAME[0] .. NAME[length-1] (each of
 * the sequence's declared tensor type; give open dims with input_shapes
 * under those names). Sequence outputs likewise become NAME[0] .. */
typedef struct lmfe_sequence_length {
    const char *name;
    uint32_t length; /* 0 .. 4096 */
} lmfe_sequence_length;

/* A tensor given by the caller: a graph input's value known at compile time
 * (folded into the model, no longer an input of the binary) or a golden input.
 * `data` holds `count` elements of `elem_type` (an ONNX TensorProto data type
 * number: 1 float, 6 int32, 7 int64, 9 bool, 11 double, ...), row-major,
 * little-endian; the caller keeps it valid during the call. */
typedef struct lmfe_tensor_value {
    const char *name;
    int32_t elem_type;
    uint32_t rank;
    int64_t dims[LMFE_MAX_RANK];
    const void *data;
    uint64_t size; /* bytes */
} lmfe_tensor_value;

/* Progress of a compile, for a progress bar: `done` of `total` nodes run;
 * `op_type` is the node being run (valid during the call). */
typedef void (*lmfe_progress_fn)(void *user, uint32_t done, uint32_t total, const char *op_type);

typedef struct lmfe_compile_options {
    const lmfe_input_shape *input_shapes; /* overrides the model's input shapes */
    size_t input_shape_count;
    const lmfe_dim_binding *dims; /* symbolic dims; unbound ones that remain are an error */
    size_t dim_count;
    const lmfe_tensor_value *constants; /* graph inputs known at compile time */
    size_t constant_count;
    /* Golden inputs: the model runs on them during the capture, and the
     * binary compares each output with what it gave (a golden check at every
     * replay that keeps these inputs). Inputs not given run on zeros. */
    const lmfe_tensor_value *golden_inputs;
    size_t golden_input_count;
    lmfe_dtype_mode dtype;
    bool trace; /* wrap the model in a metal trace: replay is one launch */
    /* With trace and no device: the trace region of the device the compile
     * opens (and its replays), bytes per DRAM bank, a multiple of 32 up to
     * half a bank (lm_device_options.trace_region_size); 0: the device's
     * default, 8 MiB. The model's trace must fit it: a compile whose trace
     * does not fails with LM_ERR_OUT_OF_DEVICE_MEMORY naming its size.
     * Given with a device (or without trace): LM_ERR_INVALID_ARGUMENT. */
    uint64_t trace_region_size;
    /* Device to compile on; NULL: the compile opens a default device
     * (lm_device_options_init) and closes it. The binary then asks replay
     * for that device's descriptor. The compile restarts the device's
     * memory peaks (lm_device_reset_memory_peak) to measure its own. */
    lm_device *device;
    lmfe_progress_fn progress;
    void *progress_user;
    /* Lengths of the graph inputs that are sequences (each must be given). */
    const lmfe_sequence_length *sequence_lengths;
    size_t sequence_length_count;
    /* Optional graph inputs the binary does not take (their value is
     * empty); every other optional input is present and taken as the
     * tensor or sequence it holds, under its own name. */
    const char *const *absent_inputs;
    size_t absent_input_count;
    /* Random ops draw the same numbers on every run of a binary, picked by
     * their seeds. With seed_input, the binary also takes a named input of
     * that name, a uint32 scalar mixed into every random op's seed at each
     * run (recorded as seed_value): new values, new numbers. NULL (the
     * default): no such input. A name the model already uses, or a model
     * with no random op, is an error. */
    const char *seed_input;
    uint32_t seed_value;
    /* Outputs whose size the run decides are refused unless this is set.
     * Set, they get their largest size, padded: NonMaxSuppression on boxes
     * or scores known only at run time ([batch * classes * K, 3], K =
     * min(max_output_boxes_per_class, boxes): the selected rows in ONNX's
     * order, then rows of -1); NonZero of run-time data ([rank, elements]:
     * the nonzero elements' coordinates, then columns of -1); Compress
     * with a run-time condition (a slice per entry of the condition: the
     * kept slices, then NaN, -1 or false by the data's type); Unique of
     * run-time values, flattened (Y, indices and counts an entry per
     * element, the groups' first, then padding); and the scan
     * outputs of a Loop whose condition is computed at run time (a row per
     * iteration unrolled; NaN, -1 or false in those of iterations that did
     * not run). Only ops that keep the padding apart may read a padded
     * output (docs/frontend.md: Identity, Transpose, Squeeze, Unsqueeze,
     * Slice and Split leaving the padded dim whole, Gather, GatherND); a
     * scan output, none. */
    bool pad_dynamic;
    /* The binary's outputs, by name, instead of the model's own: any node
     * output or initializer (e.g. a detector's head, before the
     * post-processing whose shapes its data decides). Only the nodes they
     * depend on are compiled, and the binary takes only the graph inputs
     * those nodes read (without `outputs` it takes every input the model
     * declares). NULL (the default): the model's outputs. A name the model
     * lacks, a repeated one and a graph input are errors. */
    const char *const *outputs;
    size_t output_count;
} lmfe_compile_options;

void lmfe_compile_options_init(lmfe_compile_options *opts);

/* Where an op type ran, as lmfe_report lists it. */
typedef enum lmfe_placement {
    LMFE_ON_DEVICE = 0, /* op library programs, recorded in the binary */
    LMFE_FOLDED = 1,    /* computed at compile time; its result is a constant */
    LMFE_VIEW = 2,      /* no launch: a view of its input (a reshape that keeps the
                         * pages, an identity), or a transpose its reader applies */
    LMFE_FUSED = 3,     /* merged into another node's op (e.g. Add and Relu into MatMul) */
    LMFE_REMOVED = 4,   /* dead: nothing uses its outputs */
} lmfe_placement;

typedef struct lmfe_op_summary {
    const char *op_type; /* static: valid for the life of the program */
    lmfe_placement placement;
    uint32_t count;
    double seconds; /* host time spent running these nodes while capturing */
    /* Time the simulator spent running their programs (launches labelled
     * "OpType name", lm_device_set_launch_label), in the captured run or,
     * with opts->trace, in the run before it; 0 for ops not on the device.
     * The queue is asynchronous, so `seconds` does not include it. */
    double device_seconds;
} lmfe_op_summary;

/* What a compile did. Owned by the caller: lmfe_report_free. */
typedef struct lmfe_report {
    lmfe_op_summary *ops; /* one row per (op type, placement), in order of first use */
    size_t op_count;
    uint32_t nodes, device_nodes;
    /* Nodes whose float math the dtype mode lowered below float32. */
    uint32_t lowered_nodes;
    uint64_t weight_bytes; /* distinct constant data stored, after deduplication */
    /* Device memory the model took at most at once (DRAM and L1 buffers of
     * all banks, the ops' own included), measured while it ran. */
    uint64_t peak_device_bytes;
    double seconds; /* the whole compile */
    char *notes;    /* human-readable remarks (precision lowered, ...); may be NULL */
    /* Time the simulator spent running the model's programs: every launch
     * of the run lmfe_op_summary.device_seconds describes, the graph's
     * inputs and outputs included. On a device given in opts->device the
     * compile restarts the device's profile (lm_device_set_profiling) and
     * leaves profiling off. */
    double device_seconds;
} lmfe_report;

void lmfe_report_free(lmfe_report *report);

/* Compiles the ONNX model at `path` into `*out_binary` (free it with
 * lm_binary_free). `opts` may be NULL (the defaults). `out_report` may be
 * NULL; when given it is filled on success (free it with lmfe_report_free). */
lm_status lmfe_compile_onnx(const char *path, const lmfe_compile_options *opts,
                            lm_binary **out_binary, lmfe_report *out_report);

/* A graph input or output as the model declares it. */
typedef struct lmfe_io_info {
    const char *name;
    int32_t elem_type;                  /* ONNX data type number; 0 when not a tensor */
    int32_t rank;                       /* -1: not declared */
    int64_t dims[LMFE_MAX_RANK];        /* -1 for a symbolic or unknown dim */
    const char *symbols[LMFE_MAX_RANK]; /* dim_param names, or NULL */
    /* Inputs only: the input decides shapes (e.g. Reshape's `shape`), so its
     * value must be given at compile time (lmfe_compile_options.constants). */
    bool needs_value;
    /* Inputs only: the input decides only the size of an output that
     * lmfe_compile_options.pad_dynamic pads (e.g. the image a detector's
     * NonMaxSuppression boxes come from, a NonZero's or Unique's input, a
     * Compress's condition); without that option its value
     * must be given at compile time. */
    bool padded_size;
    /* A sequence of tensors of the type above (its length is given with
     * lmfe_compile_options.sequence_lengths; the binary takes and gives its
     * tensors as NAME[0] ..). */
    bool sequence;
    /* An optional (of a tensor, or of a sequence when `sequence`): present
     * unless lmfe_compile_options.absent_inputs names it. */
    bool optional;
} lmfe_io_info;

/* A model's interface. Owned by the caller: lmfe_model_info_free. */
typedef struct lmfe_model_info {
    lmfe_io_info *inputs, *outputs;
    size_t input_count, output_count;
    int64_t ir_version, opset;
    char *producer;
    uint32_t nodes;
} lmfe_model_info;

/* Loads and checks the model at `path` and describes its interface, without
 * a device. Errors as lmfe_compile_onnx for a malformed file. */
lm_status lmfe_inspect_onnx(const char *path, lmfe_model_info *out_info);

/* The same for the model cut at `outputs` (`output_count` names, as
 * lmfe_compile_options.outputs takes them; 0: the model's own): its outputs
 * are those values, its inputs the ones they depend on. Errors also as
 * lmfe_compile_onnx gives for those names. */
lm_status lmfe_inspect_onnx_cut(const char *path, const char *const *outputs, size_t output_count,
                                lmfe_model_info *out_info);

void lmfe_model_info_free(lmfe_model_info *info);

/* Reads a serialized ONNX TensorProto file (the .pb files of ONNX's test
 * data) into `*out` (`out->data` is malloc'd: free it with lmfe_tensor_value_free;
 * `out->name` is the tensor's name, or NULL). */
lm_status lmfe_read_tensor_pb(const char *path, lmfe_tensor_value *out);

void lmfe_tensor_value_free(lmfe_tensor_value *value);

/* The ONNX op types the compiler supports, by index: the default domain's,
 * then other domains' as DOMAIN.OP (ai.onnx.preview.training.Adam); NULL
 * past the last. The names are static. */
const char *lmfe_supported_op(size_t index);

/* ONNX's name of a data type number ("float", "int64", ...), "unknown" otherwise. */
const char *lmfe_elem_type_name(int32_t elem_type);

#ifdef __cplusplus
}
#endif

#endif
