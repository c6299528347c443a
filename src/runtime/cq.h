/* Command queues: the host side of the path to the device's dispatcher.
 *
 * A queue is a bounded ring of commands consumed, in order and one at a
 * time, by its dispatcher thread, which hands each command to the backend --
 * or by a thread waiting for the queue (rt_cq_wait, rt_cq_wait_completed,
 * rt_cq_finish), which runs commands itself while the dispatcher is not
 * running one. Enqueuing blocks while the ring is full (back-pressure, as a
 * real issue queue would apply).
 *
 * Errors: the first failing command's status and message are kept; commands
 * behind it are skipped (counted, not run) until a wait reports the error.
 *
 * Thread-safety: every function may be called from any thread.
 */
#ifndef LM_RUNTIME_CQ_H
#define LM_RUNTIME_CQ_H

#include <stdint.h>

#include "lightmetal/lm_device.h"
#include "lightmetal/lm_queue.h"
#include "runtime/backend.h"

lm_status rt_cq_create(lm_device *device, uint32_t id, lm_command_queue **out_cq);

/* Runs what is queued, stops the dispatcher thread and frees the queue.
 * Returns the unreported error, if any. NULL is accepted. */
lm_status rt_cq_destroy(lm_command_queue *cq);

/* Called once a command has completed or been skipped, before it counts as
 * complete: releases what the command held (a pinned buffer, a launch). */
typedef void (*rt_cmd_done_fn)(void *arg);

/* Queues `cmd`; `done` (may be NULL) is called with `done_arg` when it is over.
 * *out_seq (may be NULL) receives the command's sequence number. */
lm_status rt_cq_push(lm_command_queue *cq, const rt_cmd *cmd, rt_cmd_done_fn done, void *done_arg,
                     uint64_t *out_seq);

/* Waits until command `seq` and all before it completed, running commands
 * on the calling thread while the dispatcher runs none (so the caller must
 * hold no lock a command's completion takes); then reports (and clears) the
 * queue's kept error, if any. */
lm_status rt_cq_wait(lm_command_queue *cq, uint64_t seq);

/* Waits until command `seq` completed, leaving the queue's error for its
 * owner to report. */
void rt_cq_wait_completed(lm_command_queue *cq, uint64_t seq);

/* Whether command `seq` completed. */
bool rt_cq_completed(lm_command_queue *cq, uint64_t seq);

/* An event at the current end of cq (lm_enqueue_record_event). */
lm_status rt_event_record(lm_command_queue *cq, lm_event *out_event);

/* Holds cq's later commands until `event` completed (lm_enqueue_wait_for_event). */
lm_status rt_event_wait(lm_command_queue *cq, lm_event event);

/* Waits for everything pushed so far (lm_finish). */
lm_status rt_cq_finish(lm_command_queue *cq);

lm_device *rt_cq_device(const lm_command_queue *cq);
uint32_t rt_cq_id(const lm_command_queue *cq);

#endif
