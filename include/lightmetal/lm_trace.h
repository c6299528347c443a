/* lightmetal — metal traces: record the device commands of a sequence of
 * program launches once, keep them in the device's trace region, and replay
 * them with one host command (tt-metal's BeginTraceCapture / EndTraceCapture /
 * ReplayTrace / ReleaseTrace).
 *
 * Capture: between lm_begin_trace_capture and lm_end_trace_capture on a queue,
 * lm_enqueue_program on that queue records the launch (with the runtime
 * arguments, circular buffers and semaphores it has at that moment) instead
 * of running it. Buffer reads, writes and lm_finish on the capturing queue
 * are refused with LM_ERR_INVALID_STATE while a capture is open: a trace must
 * not depend on host data. Other queues keep working normally.
 *
 * Buffers may be created and deallocated during a capture (a model's
 * intermediate results). A buffer deallocated while a trace is being captured
 * keeps its device memory until that trace is released, since the trace's
 * launches may still use it: replays never touch memory given to a buffer
 * created later. (Its handle is invalid at once, as after any deallocation.)
 *
 * Replay: lm_replay_trace costs the host one command whatever the number of
 * launches; the device's dispatcher reads the launches from the trace region.
 * A trace embeds buffer addresses: the buffers its programs use must stay
 * allocated (and nothing else may be put in their place) for as long as the
 * trace is replayed. Releasing a program does not affect traces that
 * recorded it.
 *
 * Trace ids are small integers starting at 1; a released id is reused by a
 * later capture. The trace region's size is lm_device_options.trace_region_size
 * (per DRAM bank; traces are kept in bank 0's part); a trace that does not fit
 * is refused by lm_end_trace_capture with LM_ERR_OUT_OF_DEVICE_MEMORY.
 *
 * Thread-safety: any thread; one capture at a time per queue.
 */
#ifndef LIGHTMETAL_LM_TRACE_H
#define LIGHTMETAL_LM_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "lightmetal/lm_capture.h"
#include "lightmetal/lm_device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most traces a device holds at once. */
#define LM_MAX_TRACES 64

/* Starts recording on `cq`. LM_ERR_INVALID_STATE when the queue is already
 * capturing; LM_ERR_OUT_OF_HOST_MEMORY when all trace ids are in use. */
lm_status lm_begin_trace_capture(lm_command_queue *cq, uint32_t *out_trace_id);

/* Ends the capture `trace_id` on `cq` and stores the trace in the trace region. */
lm_status lm_end_trace_capture(lm_command_queue *cq, uint32_t trace_id);

/* Runs a captured trace on `cq`. Device faults are reported like those of
 * lm_enqueue_program. */
lm_status lm_replay_trace(lm_command_queue *cq, uint32_t trace_id, bool blocking);

/* Frees the trace (after replays already queued have run) and its id. */
lm_status lm_release_trace(lm_device *device, uint32_t trace_id);

/* Serializable traces (tt-metal's CollectTrace / LoadTrace proposal).
 *
 * lm_collect_trace packs a captured trace into a self-contained blob — a
 * Light Metal binary holding the device geometry, the kernels' RV32 ELFs and
 * the trace's command stream — that lm_binary_data / lm_binary_save hand out.
 * lm_load_trace, in this process or another on another machine, verifies such
 * a blob completely and makes a new trace of it on cq's device; replaying it
 * gives the same results as the original, provided the buffers it uses exist
 * at the same addresses with the same contents.
 * Errors: LM_ERR_INVALID_FILE for a corrupt blob, LM_ERR_INVALID_ARGUMENT for
 * a blob made for a device of another geometry. */
lm_status lm_collect_trace(lm_device *device, uint32_t trace_id, lm_binary **out_blob);
lm_status lm_load_trace(lm_command_queue *cq, const void *data, uint64_t size,
                        uint32_t *out_trace_id);

#ifdef __cplusplus
}
#endif

#endif
