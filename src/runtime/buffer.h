/* Buffers: device memory ranges known to the host through generational handles.
 *
 * Every live buffer is registered in one process-wide handle table, so a handle
 * alone (without its device) resolves, and a stale one is caught.
 *
 * In-flight use: rt_buffer_use() resolves a handle and pins the buffer for a
 * queued command; rt_buffer_unuse() is called when that command completes.
 * rt_buffer_destroy() waits for the pins to drop before freeing device memory,
 * so no queued command ever touches a range that was handed out again.
 */
#ifndef LM_RUNTIME_BUFFER_H
#define LM_RUNTIME_BUFFER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "lightmetal/lm_buffer.h"
#include "base/shard.h"
#include "runtime/command.h"

typedef struct rt_buffer {
    lm_device *device;
    uint64_t handle;
    lm_buffer_config config; /* as created, with the address filled in */
    rt_buffer_place place;
    shard_geometry shard; /* sharded layouts: where the pages live (place.shard) */
    atomic_uint pins;     /* queued commands still using the buffer */
    struct rt_buffer *prev, *next;
} rt_buffer;

/* lm_device_get_memory_stats / lm_device_reset_memory_peak of a valid
 * device and buffer type (DRAM or L1). */
void rt_memory_stats(lm_device *device, lm_buffer_type type, lm_memory_stats *out_stats);
void rt_memory_reset_peak(lm_device *device, lm_buffer_type type);

/* Allocates from validated arguments. */
lm_status rt_buffer_create(lm_device *device, const lm_buffer_config *cfg, lm_buffer *out_buffer);

/* Invalidates the handle, then (unless a trace being captured holds the
 * buffer until it is released: rt_trace_hold_buffer) waits for pins and frees
 * the device range. */
lm_status rt_buffer_destroy(lm_buffer buffer);

/* Waits for pins, frees the device range and the object (its handle is
 * already freed). */
void rt_buffer_release_object(rt_buffer *b);

/* Copies out what the buffer is. LM_ERR_INVALID_HANDLE for a bad handle. */
lm_status rt_buffer_describe(lm_buffer buffer, lm_device **out_device, lm_buffer_config *out_cfg);

/* Resolves and pins; *out_buffer must be handed to rt_buffer_unuse() later. */
lm_status rt_buffer_use(lm_buffer buffer, rt_buffer **out_buffer);
void rt_buffer_unuse(rt_buffer *buffer);

/* Queues a whole-buffer copy between `host` and `buffer` on `cq` (a write
 * when `to_device`), waiting when `blocking`. The buffer stays pinned until
 * the copy is done. LM_ERR_INVALID_ARGUMENT when the buffer lives on another
 * device than the queue. */
lm_status rt_buffer_transfer(lm_command_queue *cq, lm_buffer buffer, void *host, bool to_device,
                             bool blocking);

/* The same for the bytes [offset, offset + size) of the buffer (size 0: the
 * whole buffer, offset ignored). LM_ERR_INVALID_ARGUMENT when the region
 * does not lie inside the buffer. */
lm_status rt_buffer_transfer_region(lm_command_queue *cq, lm_buffer buffer, uint64_t offset,
                                    uint64_t size, void *host, bool to_device, bool blocking);

/* Copies `size` bytes between `host` and the L1 of `core` at `address`, on
 * `cq`, waiting until done (a write when `to_device`; with `hash`, checked as
 * rt_buffer_write_checked does). The range must lie in the unreserved L1
 * (LM_ERR_INVALID_ARGUMENT with both ranges otherwise). */
lm_status rt_l1_transfer(lm_command_queue *cq, lm_core core, uint64_t address, uint64_t size,
                         void *host, bool to_device, const uint64_t *hash);

/* A write of a region (size 0: the whole buffer) that hashes `src` on the
 * way (base/hash.h, seed 0) and fails the command on the device -- before
 * any later command of the queue runs -- when the hash is not `hash`
 * (LM_ERR_INVALID_FILE, "blob-hash-mismatch: ..."). For data whose hash a
 * file recorded. */
lm_status rt_buffer_write_checked(lm_command_queue *cq, lm_buffer buffer, uint64_t offset,
                                  uint64_t size, const void *src, uint64_t hash, bool blocking);

/* Reads the whole buffer now through `cq` (waiting for what is queued before)
 * into a malloc'ed copy the caller frees. For the runtime's own users
 * (capture snapshots, goldens, replay outputs). */
lm_status rt_buffer_read(lm_command_queue *cq, lm_buffer buffer, void **out_data,
                         uint64_t *out_size);

/* The device's live buffers from oldest to newest (capture snapshots). Not
 * safe against concurrent creation or deallocation on the device. */
rt_buffer *rt_buffer_oldest(lm_device *device);
rt_buffer *rt_buffer_newer(lm_device *device, rt_buffer *buffer);

/* Releases every buffer of a device whose queues are drained (device close). */
void rt_buffer_release_all(lm_device *device);

#endif
