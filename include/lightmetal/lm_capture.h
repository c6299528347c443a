/* lightmetal — Light Metal capture: record a workload into one binary.
 *
 * Between lm_light_metal_begin_capture and lm_light_metal_end_capture, every
 * successful public API call on the device becomes a command of the binary,
 * in the order the calls returned (several threads may call at once), with
 * one exception for programs: a program, whether alive when the capture
 * begins or made during it, is recorded — its kernels, circular buffers,
 * semaphores and runtime arguments as they are then — when the workload
 * first enqueues it outside a metal trace, and its changes after that as
 * they are made. So the binary holds no program that never runs as one:
 * not those of a warm program cache, nor those that run only inside
 * traces, whose launches the traces hold. Capture may begin at any point:
 * buffers already alive are snapshotted first with their current contents.
 * Kernels are stored as their compiled RV32 ELF
 * (content-addressed, stored once); data written to buffers and goldens are
 * stored once per distinct content.
 *
 * Builds configured with LM_ENABLE_CAPTURE=OFF carry no recorder: these
 * functions then fail with LM_ERR_UNSUPPORTED ("capture not built in").
 *
 * Thread-safety: any thread. One capture per device at a time.
 */
#ifndef LIGHTMETAL_LM_CAPTURE_H
#define LIGHTMETAL_LM_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "lightmetal/lm_buffer.h"
#include "lightmetal/lm_tile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A finished binary in host memory. */
typedef struct lm_binary lm_binary;

typedef struct lm_capture_options {
    bool include_kernel_sources; /* keep each kernel's C source, for debugging */
} lm_capture_options;

void lm_capture_options_init(lm_capture_options *opts);

/* Starts recording `device`. `opts` may be NULL. LM_ERR_INVALID_STATE when
 * the device is already being captured or a metal trace capture is open. */
lm_status lm_light_metal_begin_capture(lm_device *device, const lm_capture_options *opts);

/* Stops recording and hands over the binary (free it with lm_binary_free). */
lm_status lm_light_metal_end_capture(lm_device *device, lm_binary **out_binary);

/* Reads `buffer` now (waiting for `cq`) and stores its contents as a golden:
 * replay compares the buffer at this point against it. */
lm_status lm_capture_compare_to_capture(lm_command_queue *cq, lm_buffer buffer);

/* Stores `size` bytes (the buffer's size) of expected contents as a golden. */
lm_status lm_capture_compare_to_golden(lm_command_queue *cq, lm_buffer buffer, const void *data,
                                       uint64_t size);

/* What a named buffer is to the workload. */
typedef enum lm_buffer_role {
    LM_BUFFER_ROLE_AUTO = 0,   /* from its use during the capture: written by
                                  the host -> input; read by the host or
                                  compared -> output; both -> input_output */
    LM_BUFFER_ROLE_INPUT = 1,  /* replay may replace its contents */
    LM_BUFFER_ROLE_OUTPUT = 2, /* replay reads it back */
    LM_BUFFER_ROLE_INPUT_OUTPUT = 3,
} lm_buffer_role;

#define LM_MAX_TENSOR_RANK 8

/* The element type a named tensor has outside the device, when the device
 * holds it in a wider format (an ONNX model's int64 input kept as int32, its
 * bool output as int32, a float64 tensor as float32). Tools exchanging
 * tensors (`lightmetal run --input x.npy`) convert between the two; raw bytes
 * stay in the storage format. The numbering is the binary's (ElementType).
 * Allowed pairs (storage format <- element types):
 *   LM_DATA_FORMAT_FLOAT32 <- FLOAT64, FLOAT16
 *   LM_DATA_FORMAT_INT32   <- INT64, INT16, INT8, UINT16, UINT8, BOOL
 *   LM_DATA_FORMAT_UINT32  <- UINT64, UINT16, UINT8, BOOL */
typedef enum lm_element_type {
    LM_ELEMENT_TYPE_AS_FORMAT = 0, /* the storage format's own type (default) */
    LM_ELEMENT_TYPE_FLOAT64 = 1,   /* IEEE binary64; stored rounded to float32 */
    LM_ELEMENT_TYPE_FLOAT16 = 2,   /* IEEE binary16 (not bfloat16); float32 holds
                                      it exactly */
    LM_ELEMENT_TYPE_INT64 = 3,     /* signed 64-bit; stored values fit int32 */
    LM_ELEMENT_TYPE_INT16 = 4,     /* signed 16-bit */
    LM_ELEMENT_TYPE_INT8 = 5,      /* signed 8-bit */
    LM_ELEMENT_TYPE_UINT16 = 6,    /* unsigned 16-bit */
    LM_ELEMENT_TYPE_UINT8 = 7,     /* unsigned 8-bit */
    LM_ELEMENT_TYPE_BOOL = 8,      /* false = 0, true = 1 (any nonzero reads
                                      back as true) */
    LM_ELEMENT_TYPE_UINT64 = 9,    /* unsigned 64-bit; stored values fit uint32 */
} lm_element_type;

/* Stable short name of an element type, as the binary spells it ("Int64",
 * "Bool", "Float16", ...); "AsFormat" for LM_ELEMENT_TYPE_AS_FORMAT and
 * "Invalid" for a value that is not an lm_element_type. */
const char *lm_element_type_name(lm_element_type type);

/* Whether a tensor of `type` may be stored in `format` (the table above;
 * LM_ELEMENT_TYPE_AS_FORMAT fits every format). */
bool lm_element_type_fits(lm_element_type type, lm_data_format format);

/* How a named buffer's contents read as a tensor (for tools that exchange
 * tensors, e.g. `lightmetal run --input x.npy`). */
typedef struct lm_buffer_name_options {
    lm_buffer_role role;                /* default LM_BUFFER_ROLE_AUTO */
    lm_data_format format;              /* element format; default INVALID = plain bytes */
    uint32_t rank;                      /* 0..LM_MAX_TENSOR_RANK; 0 = no shape */
    uint64_t shape[LM_MAX_TENSOR_RANK]; /* row-major, outermost first; each
                                           0..2^32-1; product x element size
                                           (of `format`) = the buffer's size,
                                           or 0: an empty tensor, whose
                                           buffer only carries the name */
    lm_element_type element_type;       /* the tensor's type outside the device;
                                           default AS_FORMAT; otherwise it must
                                           fit `format` (lm_element_type_fits) */
    bool scalar;                        /* a rank-0 tensor: rank 0, and the buffer
                                           holds one element of `format` (binary
                                           format 2.3; older readers see a
                                           format without a shape) */
} lm_buffer_name_options;

void lm_buffer_name_options_init(lm_buffer_name_options *opts);

/* Names a buffer for replay: lm_replay_set_input replaces what the captured
 * workload wrote into it, lm_replay_get_output reads it back. Names are
 * unique within a capture, 1..127 printable characters; a name already
 * given is refused (LM_ERR_INVALID_ARGUMENT naming both buffers), as is a
 * buffer named twice. Errors: LM_ERR_INVALID_STATE when the buffer's device
 * is not being captured. */
lm_status lm_capture_name_buffer(lm_buffer buffer, const char *name);

/* The same with a role, format, shape and element type (`opts` may be NULL).
 * The format must be FLOAT32, FLOAT16_B, UINT32 or INT32 for a shape or a
 * scalar (BFP8_B and plain bytes take neither), and the shape must cover the
 * buffer exactly (a scalar: one element). An element type other than AS_FORMAT needs a format it
 * fits (LM_ERR_INVALID_ARGUMENT naming both and what the format holds). */
lm_status lm_capture_name_buffer_ex(lm_buffer buffer, const char *name,
                                    const lm_buffer_name_options *opts);

/* Writes the binary to `path` atomically (all or nothing, flushed to disk).
 * A process killed mid-save leaves no partial or temporary file where the file
 * system has unnamed temporary files (Linux O_TMPFILE: ext4, xfs, btrfs,
 * tmpfs); elsewhere a "<path>.tmp.XXXXXX" may stay behind. */
lm_status lm_binary_save(const lm_binary *binary, const char *path);

/* The binary's bytes, valid until lm_binary_free. The first call makes
 * them: a copy of the whole file in memory, which lm_binary_save and
 * lm_binary_size do without. */
lm_status lm_binary_data(const lm_binary *binary, const void **out_data, uint64_t *out_size);

/* The size in bytes of the file lm_binary_save writes (and of
 * lm_binary_data's bytes). LM_ERR_INVALID_ARGUMENT for a NULL argument. */
lm_status lm_binary_size(const lm_binary *binary, uint64_t *out_size);

void lm_binary_free(lm_binary *binary);

#ifdef __cplusplus
}
#endif

#endif
