/* lightmetal — command queues: moving data and running work on the device.
 *
 * Commands on one queue execute in order; commands on different queues may run
 * concurrently. Each queue carries its commands to the device's dispatcher as
 * a command stream, the same path program launches and metal traces take.
 *
 * Host memory lifetime: a blocking call is done with the host memory when it
 * returns. A non-blocking call keeps using the host memory (`src` or `dst`)
 * until the command completes, which is certain once lm_finish() on that
 * queue returns: until then `src` must stay valid and unchanged, and `dst`
 * must stay valid and must not be read. No copy of `src` is made.
 *
 * Device errors: when a command fails on the device (a kernel fault, say), the
 * queue keeps the first error and skips the commands queued after it, until
 * the error is reported, by the next lm_finish() or blocking call on that
 * queue, with a message. The queue is then usable again.
 *
 * Thread-safety: any thread may enqueue on any queue; a queue keeps the order
 * in which enqueue calls returned. A thread waiting for a queue (a blocking
 * call, lm_finish, lm_event_synchronize) runs the queue's commands itself
 * while the dispatcher runs none, so the simulator's work may be done on
 * the caller's thread; the order and the results are the same.
 */
#ifndef LIGHTMETAL_LM_QUEUE_H
#define LIGHTMETAL_LM_QUEUE_H

#include <stdbool.h>

#include "lightmetal/lm_buffer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Copies buffer-size bytes from `src` into `buffer`, page by page. */
lm_status lm_enqueue_write_buffer(lm_command_queue *cq, lm_buffer buffer, const void *src,
                                  bool blocking);

/* Copies the whole of `buffer` into `dst` (buffer-size bytes). */
lm_status lm_enqueue_read_buffer(lm_command_queue *cq, lm_buffer buffer, void *dst, bool blocking);

/* The same for the `size` bytes at byte `offset` of `buffer` (tt-metal's
 * transfers with a BufferRegion): any offset and size inside the buffer, not
 * only whole pages. Captured and replayed like whole-buffer transfers.
 * Errors: LM_ERR_INVALID_ARGUMENT for a NULL src/dst, size 0, or a region
 * that does not lie inside the buffer (the message gives both sizes). */
lm_status lm_enqueue_write_buffer_region(lm_command_queue *cq, lm_buffer buffer, uint64_t offset,
                                         uint64_t size, const void *src, bool blocking);
lm_status lm_enqueue_read_buffer_region(lm_command_queue *cq, lm_buffer buffer, uint64_t offset,
                                        uint64_t size, void *dst, bool blocking);

/* ---- events (tt-metal's EnqueueRecordEvent, EnqueueWaitForEvent,
 * EventSynchronize, EventQuery) ----
 * An event marks a point in one queue: it completes when every command
 * enqueued on that queue before it has completed. It is a plain value: copy
 * it freely; there is nothing to release. Its fields are the library's. */
typedef struct lm_event {
    lm_command_queue *cq;
    uint64_t seq;
    uint32_t id; /* numbers the device's events, for captures */
} lm_event;

/* Records an event at the current end of `cq`. LM_ERR_INVALID_STATE while
 * `cq` is capturing a trace. */
lm_status lm_enqueue_record_event(lm_command_queue *cq, lm_event *out_event);

/* Commands enqueued on `cq` after this call start only once `event`
 * completed (on its own queue; on the same queue this is already so). The
 * host does not wait. A device error on the event's queue does not hold
 * `cq` back; that queue reports it. */
lm_status lm_enqueue_wait_for_event(lm_command_queue *cq, lm_event event);

/* Waits on the host until `event` completed; reports the event's queue's
 * device error, if any, as lm_finish does. */
lm_status lm_event_synchronize(lm_event event);

/* *out_done = whether `event` completed, without waiting. */
lm_status lm_event_query(lm_event event, bool *out_done);

/* Waits until every command enqueued on `cq` so far has completed; returns the
 * first device error since the last report, if any. */
lm_status lm_finish(lm_command_queue *cq);

#ifdef __cplusplus
}
#endif

#endif
