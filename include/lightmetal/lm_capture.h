/* lightmetal — Light Metal capture: record a workload into one binary.
 *
 * Between lm_light_metal_begin_capture and lm_light_metal_end_capture, every
 * successful public API call on the device becomes a command of the binary,
 * in the order the calls returned (several threads may call at once). Capture
 * may begin at any point: objects already alive — buffers with their current
 * contents, programs with their kernels, circular buffers, semaphores and
 * runtime arguments — are snapshotted first, so the binary replays on its
 * own. Kernels are stored as their compiled RV32 ELF (content-addressed,
 * stored once); data written to buffers and goldens are stored once per
 * distinct content.
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

/* How a named buffer's contents read as a tensor (for tools that exchange
 * tensors, e.g. `lightmetal run --input x.npy`). */
typedef struct lm_buffer_name_options {
    lm_buffer_role role;                /* default LM_BUFFER_ROLE_AUTO */
    lm_data_format format;              /* element format; default INVALID = plain bytes */
    uint32_t rank;                      /* 0..LM_MAX_TENSOR_RANK; 0 = no shape */
    uint64_t shape[LM_MAX_TENSOR_RANK]; /* row-major, outermost first; each
                                           1..2^32-1; product x element size
                                           = the buffer's size */
} lm_buffer_name_options;

void lm_buffer_name_options_init(lm_buffer_name_options *opts);

/* Names a buffer for replay: lm_replay_set_input replaces what the captured
 * workload wrote into it, lm_replay_get_output reads it back. Names are
 * unique within a capture, 1..127 printable characters; a name already
 * given is refused (LM_ERR_INVALID_ARGUMENT naming both buffers), as is a
 * buffer named twice. Errors: LM_ERR_INVALID_STATE when the buffer's device
 * is not being captured. */
lm_status lm_capture_name_buffer(lm_buffer buffer, const char *name);

/* The same with a role, format and shape (`opts` may be NULL). The format
 * must be FLOAT32, FLOAT16_B, UINT32 or INT32 for a shape (BFP8_B and plain
 * bytes take no shape), and the shape must cover the buffer exactly. */
lm_status lm_capture_name_buffer_ex(lm_buffer buffer, const char *name,
                                    const lm_buffer_name_options *opts);

/* Writes the binary to `path` atomically (all or nothing, flushed to disk).
 * A process killed mid-save leaves no partial or temporary file where the file
 * system has unnamed temporary files (Linux O_TMPFILE: ext4, xfs, btrfs,
 * tmpfs); elsewhere a "<path>.tmp.XXXXXX" may stay behind. */
lm_status lm_binary_save(const lm_binary *binary, const char *path);

/* The binary's bytes, valid until lm_binary_free. */
lm_status lm_binary_data(const lm_binary *binary, const void **out_data, uint64_t *out_size);

void lm_binary_free(lm_binary *binary);

#ifdef __cplusplus
}
#endif

#endif
