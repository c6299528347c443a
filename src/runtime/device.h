/* The runtime's device object behind lm_device.
 *
 * Owns the backend, the allocators (DRAM and L1, each shared by all banks of
 * its memory, and the trace region), the command queues and the traces.
 * `mutex` guards the allocators, the list of live buffers and the trace
 * tables; `buffer_idle` is signalled whenever the last in-flight command of a
 * buffer or trace completes.
 */
#ifndef LM_RUNTIME_DEVICE_H
#define LM_RUNTIME_DEVICE_H

#include <pthread.h>
#include <stdatomic.h>

#include "lightmetal/lm_device.h"
#include "lightmetal/lm_trace.h"
#include "runtime/allocator.h"
#include "runtime/backend.h"
#include "sim/rv32/rv_image_cache.h"

/* Bytes at the bottom of every L1 kept for the device itself (kernel runtime
 * arguments, circular buffer configuration, semaphores, mailboxes). */
#define RT_L1_RESERVED 0x10000u
#define RT_L1_ALIGNMENT 16u
/* Kernel images kept while no program uses them (a model's worth and more). */
#define RT_IMAGES_KEPT 256u
#define RT_DRAM_ALIGNMENT 32u

struct rt_buffer;
struct rt_program;
struct rt_trace;
struct cap_recorder;
struct rt_capture_sink;
struct rt_profile;

struct lm_device {
    lm_device_info info;
    rt_backend *backend;
    pthread_mutex_t mutex;
    pthread_cond_t buffer_idle; /* a buffer's or trace's last user is done */
    allocator dram, l1;
    allocator trace_region;                            /* bank 0's part of the trace region */
    struct rt_buffer *buffers;                         /* live buffers, most recent first */
    struct rt_program *programs;                       /* live programs, most recent first */
    struct rt_trace *traces[LM_MAX_TRACES];            /* by id - 1 */
    struct rt_trace *capturing[LM_MAX_COMMAND_QUEUES]; /* per queue */
    lm_command_queue *queues[LM_MAX_COMMAND_QUEUES];
    atomic_uint events;                         /* events recorded so far (their ids) */
    struct cap_recorder *capture;               /* the Light Metal capture in progress, or NULL */
    const struct rt_capture_sink *capture_sink; /* its entry points (capture_sink.h) */
    struct {
        lm_device_close_fn fn;
        void *user;
    } close_callbacks[LM_MAX_CLOSE_CALLBACKS]; /* under mutex */
    uint32_t close_callback_count;
    /* Kernel images by content: programs made again (each replay) reuse
     * them (thread-safe on its own). */
    struct rv_image_cache *images;
    /* Launch labels and times (profile.h; thread-safe on its own). */
    struct rt_profile *profile;
};

/* Opens a device from validated options. */
lm_status rt_device_open(const lm_device_options *opts, lm_device **out_device);

/* Registers a close callback (see lm_device_add_close_callback); the caller
 * checked the arguments. LM_ERR_INVALID_ARGUMENT when the table is full. */
lm_status rt_device_add_close_callback(lm_device *device, lm_device_close_fn fn, void *user);

/* Runs the close callbacks (most recent first), then drains the queues, releases every buffer and
 * the backend. Returns the first unreported device error, if any. */
lm_status rt_device_close(lm_device *device);

#endif
