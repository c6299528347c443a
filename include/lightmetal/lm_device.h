/* lightmetal — devices and command queues.
 *
 * A device is one simulated chip: a grid of worker cores, each with its own L1
 * SRAM, plus DRAM banks, driven through command queues. Device memory is
 * backed lazily: a default device with 12 GiB of DRAM costs almost no host
 * memory until it is written.
 *
 * Thread-safety: a device and its queues may be used from several threads at
 * once. lm_device_close() must not race with any other call on the device.
 */
#ifndef LIGHTMETAL_LM_DEVICE_H
#define LIGHTMETAL_LM_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lightmetal/lm_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lm_device lm_device;
typedef struct lm_command_queue lm_command_queue;

/* Most command queues a device offers (tt-metal's devices offer two). */
#define LM_MAX_COMMAND_QUEUES 2

/* Geometry and behaviour of a simulated device. Start from
 * lm_device_options_init(), then change what you need. */
/* A worker core by logical coordinates; x is the column, y the row. */
typedef struct lm_core {
    uint32_t x, y;
} lm_core;

/* The cores of an inclusive rectangle. */
typedef struct lm_core_range {
    lm_core start, end;
} lm_core_range;

#define LM_MAX_CORE_RANGES 16

/* A set of cores as a union of rectangles (tt-metal's CoreRangeSet). */
typedef struct lm_core_range_set {
    uint32_t count;
    lm_core_range ranges[LM_MAX_CORE_RANGES];
} lm_core_range_set;

typedef struct lm_device_options {
    uint32_t grid_x;                /* worker cores per row; default 8 */
    uint32_t grid_y;                /* worker core rows; default 8 */
    uint64_t l1_size;               /* L1 bytes per core; default 1,499,136 */
    uint32_t dram_banks;            /* default 12 */
    uint64_t dram_bank_size;        /* bytes per DRAM bank; default 1 GiB */
    uint64_t trace_region_size;     /* bytes per DRAM bank kept for metal traces, at
                                       the top of every bank; default 8 MiB */
    uint32_t num_command_queues;    /* 1..LM_MAX_COMMAND_QUEUES; default 2 */
    uint32_t num_threads;           /* host threads simulating cores; 0 = online CPUs */
    uint64_t watchdog_instructions; /* per kernel per launch; more is a device
                                       fault. Default 4,000,000,000 */
    /* Compute kernels: the dst/CB protocol lapses that the chip tolerates
     * (pack_tile into free pages cb_reserve_back did not reserve, pack_tile
     * after tile_regs_commit without tile_regs_wait) are device faults. Off
     * (the default), they run, and each prints one warning line per kernel pc
     * and launch through `print` ("warning: kernel 'NAME' pc 0x...: ..."). */
    bool strict_protocol;
    /* Receives every line a kernel prints (DPRINT), tagged with its core and
     * processor ("DM0", "DM1", "COMPUTE"). May be called from any simulator
     * thread, never concurrently. NULL: lines go to standard output as
     * "[core (x,y) DM0] text". */
    void (*print)(void *user, uint32_t x, uint32_t y, const char *processor, const char *line);
    void *print_user;
} lm_device_options;

/* Fills `opts` with the defaults above (a Wormhole-like chip). */
void lm_device_options_init(lm_device_options *opts);

/* Opens a simulated device. `opts` may be NULL for the defaults.
 * Errors: LM_ERR_INVALID_ARGUMENT for out-of-range options (the message names
 * the field and its limits), LM_ERR_OUT_OF_HOST_MEMORY when the host cannot
 * reserve address space for the device memory. */
lm_status lm_device_open(const lm_device_options *opts, lm_device **out_device);

/* Waits for every queue to drain, then releases the device and every object
 * made on it; handles to those objects become stale. A device error that no
 * lm_finish() reported yet is returned here (the device is closed anyway).
 * NULL is accepted and does nothing. */
lm_status lm_device_close(lm_device *device);

/* What a device is, as opened. Addresses are device addresses. */
typedef struct lm_device_info {
    uint32_t grid_x, grid_y;
    uint64_t l1_size;
    uint64_t l1_unreserved_base; /* first L1 byte free for buffers and CBs */
    uint32_t l1_alignment;       /* L1 buffer address and page alignment */
    uint32_t dram_banks;
    uint64_t dram_bank_size;
    uint64_t dram_unreserved_base; /* first bank-local DRAM byte free for buffers */
    uint64_t trace_region_base;    /* bank-local start of the trace region */
    uint64_t trace_region_size;
    uint32_t dram_alignment;
    uint32_t num_command_queues;
    uint32_t num_threads;
    uint64_t watchdog_instructions; /* per kernel per launch */
    bool strict_protocol;
} lm_device_info;

lm_status lm_device_get_info(const lm_device *device, lm_device_info *out_info);

/* The device's command queue `cq_id` (0-based). Returns NULL when `device` is
 * NULL or `cq_id` is out of range; lm_last_error() then says which. The queue
 * lives as long as the device. */
lm_command_queue *lm_device_command_queue(lm_device *device, uint32_t cq_id);

/* What lm_device_add_close_callback registers: called with the closing
 * device and the `user` pointer given at registration. */
typedef void (*lm_device_close_fn)(lm_device *device, void *user);

#define LM_MAX_CLOSE_CALLBACKS 16

/* Has lm_device_close call fn(device, user) first, while the device and every
 * object on it still work (the most recently registered callback first). It
 * is how a library built on this API (the op library's program cache)
 * releases what it keeps per device. Errors: LM_ERR_INVALID_HANDLE for a NULL
 * device; LM_ERR_INVALID_ARGUMENT for a NULL fn or when
 * LM_MAX_CLOSE_CALLBACKS are registered already. Thread-safe. */
lm_status lm_device_add_close_callback(lm_device *device, lm_device_close_fn fn, void *user);

/* The NoC coordinates of worker core `logical` (tt-metal's
 * worker_core_from_logical_core): on the simulated chip a worker core's NoC
 * coordinates equal its logical ones, so this checks the core and copies it;
 * kernels address other cores with either. Errors: LM_ERR_INVALID_ARGUMENT
 * for a NULL pointer or a core outside the grid. */
lm_status lm_worker_core_from_logical_core(const lm_device *device, lm_core logical,
                                           lm_core *out_noc);

/* Direct access to one core's L1, for tests and set-up (tt-metal's
 * WriteToDeviceL1 / ReadFromDeviceL1): `size` bytes at L1 `address` of
 * `core`, which must lie in the unreserved L1 [l1_unreserved_base, l1_size).
 * Runs on command queue 0 in order with what was enqueued there, and returns
 * when done (other queues are not waited for). Writes are captured by Light
 * Metal and replayed. Errors: LM_ERR_INVALID_ARGUMENT for NULL pointers, size
 * 0, a core outside the grid or a range outside the unreserved L1; device
 * errors of queue 0 as lm_finish reports them. */
lm_status lm_device_write_l1(lm_device *device, lm_core core, uint64_t address, uint64_t size,
                             const void *src);
lm_status lm_device_read_l1(lm_device *device, lm_core core, uint64_t address, uint64_t size,
                            void *dst);

/* ---- launch labels and profiles ----
 *
 * A launch label names the program launches and trace replays enqueued
 * after it, on any queue of the device and from any thread, until the next
 * label. The profile sums the time and the kernels' instructions of
 * launches by label, and a Light Metal
 * capture records the label with each EnqueueProgram, so a replay of the
 * binary profiles under the same names (the ONNX compiler labels each
 * node's launches "OpType node-name"). */

#define LM_MAX_LAUNCH_LABEL 1024 /* bytes, without the terminating NUL */

/* Copies `label` and makes it the current one; NULL or "" clears it.
 * Labels are kept (interned) until the device closes. Errors:
 * LM_ERR_INVALID_HANDLE for a NULL device; LM_ERR_INVALID_ARGUMENT for a
 * label longer than LM_MAX_LAUNCH_LABEL bytes, one that is not printable
 * UTF-8 on one line (a control character, a malformed byte), or beyond 2^20
 * distinct ones.
 * Thread-safe. */
lm_status lm_device_set_launch_label(lm_device *device, const char *label);

/* One label's launches in a profile. */
typedef struct lm_profile_entry {
    const char *label; /* "" for launches made with no label */
    uint64_t launches; /* program launches and trace replays (a trace counts once) */
    double seconds;    /* wall time the simulator spent running them */
    /* RISC-V instructions their kernels retired, on every core and processor.
     * Unlike the time it does not depend on the host, its load or the thread
     * count: the same launches on the same data count the same, unless a
     * kernel polls memory in a loop of its own (a blocking call such as
     * cb_wait_front counts once, when it returns). */
    uint64_t instructions;
} lm_profile_entry;

/* Starts timing every launch, clearing what was measured before, or stops
 * (what was measured stays readable). Off when a device opens: timing costs
 * two clock reads a launch. Launches already enqueued are timed only if
 * profiling is on when they were enqueued. Errors: LM_ERR_INVALID_HANDLE for
 * a NULL device. Thread-safe. */
lm_status lm_device_set_profiling(lm_device *device, bool enable);

/* The launches timed since profiling was last enabled, one entry per label
 * in order of each label's first launch. Launches still queued are not
 * counted yet: lm_finish the queues first. `*out_entries` (NULL when there
 * are none) and its labels are one allocation, the caller's: free it with
 * lm_profile_free. Errors: LM_ERR_INVALID_HANDLE for a NULL device;
 * LM_ERR_INVALID_ARGUMENT for NULL outputs; out of host memory.
 * Thread-safe. */
lm_status lm_device_get_profile(lm_device *device, lm_profile_entry **out_entries,
                                size_t *out_count);

/* Frees what lm_device_get_profile gave (NULL is fine). */
void lm_profile_free(lm_profile_entry *entries);

/* One program's launches under one label: the detail inside a label (an op
 * that launches several programs, as a convolution's conversions and its
 * matrix product). */
typedef struct lm_profile_program_entry {
    const char *label;   /* "" for launches made with no label */
    const char *program; /* its kernels' names in creation order, joined by
                          * " + " (cut at LM_MAX_LAUNCH_LABEL bytes, bytes
                          * that are not printable UTF-8 as '?'); "trace"
                          * for a trace replay */
    uint64_t launches;
    double seconds;
    uint64_t instructions; /* as lm_profile_entry's */
} lm_profile_program_entry;

/* The same launches as lm_device_get_profile, one entry per (label,
 * program) pair in order of the pair's first launch; the entries of a label
 * add up to its lm_device_get_profile entry. Ownership, errors and
 * thread-safety as there; free with lm_profile_program_free. */
lm_status lm_device_get_program_profile(lm_device *device, lm_profile_program_entry **out_entries,
                                        size_t *out_count);

/* Frees what lm_device_get_program_profile gave (NULL is fine). */
void lm_profile_program_free(lm_profile_program_entry *entries);

#ifdef __cplusplus
}
#endif

#endif
