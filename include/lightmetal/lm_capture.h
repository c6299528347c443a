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

/* Names a buffer for replay: lm_replay_set_input replaces what the captured
 * workload wrote into it, lm_replay_get_output reads it back. Names are
 * unique, 1..127 characters. */
lm_status lm_capture_name_buffer(lm_buffer buffer, const char *name);

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
