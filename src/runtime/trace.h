/* Metal traces: launch snapshots recorded on a queue, encoded into a command
 * stream that lives in the device's trace region and that the dispatcher
 * executes on replay.
 *
 * The encoded stream (all little-endian 32-bit words) is, per launch:
 *   RT_TRACE_LAUNCH_MAGIC, kernel_count (unused, 0), core_count, word_count,
 *   core_count rt_launch_core records (kernel indices into the trace's
 *   kernel table), word_count words.
 * It sits in device DRAM where kernels could overwrite it, so the dispatcher
 * checks every field as it decodes (rt_trace_decode) and stops with a device
 * fault at the first inconsistency instead of trusting it.
 */
#ifndef LM_RUNTIME_TRACE_H
#define LM_RUNTIME_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "lightmetal/lm_trace.h"
#include "runtime/program.h"

#define RT_TRACE_LAUNCH_MAGIC 0x4c54524du /* "MRTL" */

typedef struct rt_trace rt_trace;

/* The trace being captured on `cq`, or NULL. */
rt_trace *rt_trace_capturing(lm_command_queue *cq);

/* True while any queue of the device is capturing. */
bool rt_trace_any_capturing(lm_device *device);

/* True when trace `id` exists and is not being captured. */
bool rt_trace_exists(lm_device *device, uint32_t id);

lm_status rt_trace_begin(lm_command_queue *cq, uint32_t *out_id);

/* Adds a launch to the capture (the trace takes ownership of it). */
lm_status rt_trace_record(rt_trace *trace, rt_launch *launch);

lm_status rt_trace_end(lm_command_queue *cq, uint32_t id);
lm_status rt_trace_replay(lm_command_queue *cq, uint32_t id, bool blocking);
lm_status rt_trace_release(lm_device *device, uint32_t id);

/* A captured trace as it travels between processes: its command stream (read
 * back from the trace region; the caller frees it) and the kernels the stream
 * indexes (ELF, name and mode each; valid while the trace lives). */
typedef struct rt_trace_contents {
    uint32_t *stream;
    size_t words;
    const rt_launch_kernel *kernels;
    uint32_t kernel_count;
} rt_trace_contents;

lm_status rt_trace_export(lm_device *device, uint32_t id, rt_trace_contents *out);

/* Makes a new trace on cq's device from serialized contents: loads the
 * kernels from their ELFs (the `image` fields are ignored), checks every
 * launch of the stream, and stores it in the trace region. Errors:
 * LM_ERR_INVALID_FILE for a stream or ELF that does not hold together. */
lm_status rt_trace_import(lm_command_queue *cq, const rt_trace_contents *in, uint32_t *out_id);

struct rt_buffer;

/* When a trace of the device is being captured, hands it buffer `b` (whose
 * handle is already freed) to release with the trace, and returns true: the
 * trace's launches may use the buffer's memory, so nothing else may be placed
 * there while the trace can still be replayed. False when no capture is open
 * (or no memory to note it: the caller then releases the buffer now). */
bool rt_trace_hold_buffer(lm_device *device, struct rt_buffer *b);

/* Releases every trace of a device whose queues are drained (device close). */
void rt_trace_release_all(lm_device *device);

/* Decodes the launch starting at word `*pos` of `stream` (n words) into
 * `out` (whose arrays point into the stream) and advances *pos. Checks every
 * field against the kernel table size and the core count. */
lm_status rt_trace_decode(const uint32_t *stream, size_t n, size_t *pos, uint32_t kernel_count,
                          uint32_t num_cores, rt_launch *out);

#endif
