/* The Light Metal recorder: turns public API calls into commands of a binary.
 *
 * api/ calls one cap_* hook per successful call while a capture is active
 * (device->capture != NULL), after the runtime has done the work, so the
 * hook sees the results (addresses, handles). Hooks never fail the API call:
 * a recording problem is kept and reported by cap_end. Recording takes the
 * recorder's lock, so calls from several threads land in one order.
 *
 * Objects the capture has not seen (created before it began) are
 * snapshotted when it begins (buffers with their contents, programs with
 * their kernels, circular buffers, semaphores and arguments).
 */
#ifndef LM_CAPTURE_CAPTURE_H
#define LM_CAPTURE_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "lightmetal/lm_capture.h"
#include "format/lmb.h"
#include "lightmetal/lm_program.h"

typedef struct cap_recorder cap_recorder;

lm_status cap_begin(lm_device *device, const lm_capture_options *opts);
/* Stops recording and finishes the file with `header` (its data formats are
 * filled in here); hands over the finished writer. */
lm_status cap_end(lm_device *device, const lmb_header *header, lmb_writer **out_writer);

void cap_create_buffer(lm_device *device, lm_buffer buffer);
void cap_deallocate_buffer(lm_device *device, lm_buffer buffer);
/* A write or read of `size` bytes at `offset` (size 0: the whole buffer). */
void cap_write_buffer(lm_device *device, uint32_t cq_id, lm_buffer buffer, uint64_t offset,
                      uint64_t size, const void *src, bool blocking);
/* lm_device_write_l1. */
void cap_write_l1(lm_device *device, uint32_t cq_id, lm_core core, uint64_t address, uint64_t size,
                  const void *src);
/* Events, by their device-wide ids (lm_event.id). */
void cap_record_event(lm_device *device, uint32_t cq_id, uint32_t event_id);
void cap_wait_for_event(lm_device *device, uint32_t cq_id, uint32_t event_id);
void cap_event_synchronize(lm_device *device, uint32_t event_id);
/* lm_update_*circular_buffer*: the whole new configuration. */
void cap_update_cb(lm_device *device, lm_program program, lm_circular_buffer cb,
                   const lm_circular_buffer_config *cfg);
void cap_read_buffer(lm_device *device, uint32_t cq_id, lm_buffer buffer, uint64_t offset,
                     uint64_t size, bool blocking);
void cap_finish(lm_device *device, uint32_t cq_id);
void cap_create_program(lm_device *device, lm_program program);
void cap_release_program(lm_device *device, lm_program program);
void cap_create_kernel(lm_device *device, lm_program program, lm_kernel kernel,
                       const lm_core_range_set *cores, const lm_kernel_config *cfg);
void cap_set_runtime_args(lm_device *device, lm_program program, lm_kernel kernel, lm_core core,
                          const uint32_t *args, uint32_t count);
void cap_set_common_runtime_args(lm_device *device, lm_program program, lm_kernel kernel,
                                 const uint32_t *args, uint32_t count);
void cap_create_cb(lm_device *device, lm_program program, lm_circular_buffer cb,
                   const lm_core_range_set *cores, const lm_circular_buffer_config *cfg);
void cap_create_semaphore(lm_device *device, lm_program program, const lm_core_range_set *cores,
                          uint32_t initial_value, uint32_t id);
void cap_enqueue_program(lm_device *device, uint32_t cq_id, lm_program program, bool blocking);

/* Golden checks and names: these are capture-only calls, so they report. */
lm_status cap_golden(lm_device *device, uint32_t cq_id, lm_buffer buffer, const void *data,
                     uint64_t size);
/* `opts` is complete and checked (api/); the role may be AUTO. */
lm_status cap_name_buffer(lm_device *device, lm_buffer buffer, const char *name,
                          const lm_buffer_name_options *opts);

/* Metal traces: a trace that exists (captured or loaded) is stored in the
 * binary with a LoadTrace command; replays and releases are recorded as such.
 * The launches a trace records are part of it, not commands of their own. */
void cap_trace_exists(lm_device *device, uint32_t cq_id, uint32_t trace_id);
void cap_replay_trace(lm_device *device, uint32_t cq_id, uint32_t trace_id, bool blocking);
void cap_release_trace(lm_device *device, uint32_t trace_id);

#endif
