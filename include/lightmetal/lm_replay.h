/* lightmetal — Light Metal replay: run a captured binary.
 *
 * lm_replay_open verifies the whole binary — structure, then meaning (ids,
 * core ranges, limits, kernel ELFs) — before anything touches a device; the
 * data is used in place (zero-copy) and must outlive the replay. Running needs
 * no compiler: kernels come as RV32 ELFs from the binary.
 *
 * Buffers are allocated at their recorded device addresses (metal traces and
 * runtime arguments embed them); on a device where an address is taken the
 * run fails with a clear error. Goldens are compared bit for bit, or within
 * a tolerance (float32 data) when the options ask for it.
 *
 * Thread-safety: a replay object belongs to one thread at a time.
 */
#ifndef LIGHTMETAL_LM_REPLAY_H
#define LIGHTMETAL_LM_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include "lightmetal/lm_device.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lm_replay lm_replay;

/* Verifies `data` (a binary of `size` bytes) and prepares to run it. The
 * bytes are not copied. Errors: LM_ERR_INVALID_FILE naming what is wrong. */
lm_status lm_replay_open(const void *data, uint64_t size, lm_replay **out_replay);

/* The same for a file, mapped read-only. */
lm_status lm_replay_open_file(const char *path, lm_replay **out_replay);

/* Replaces what the workload writes into the buffer named `name` (see
 * lm_capture_name_buffer) with `data`, which must be the buffer's size and
 * stay valid until the next run returns. Goldens may then no longer match. */
lm_status lm_replay_set_input(lm_replay *replay, const char *name, const void *data, uint64_t size);

typedef struct lm_replay_options {
    uint32_t loops;         /* runs of the whole workload; default 1 */
    bool tolerance;         /* compare goldens as float32 within atol/rtol */
    double atol, rtol;      /* |got - want| <= atol + rtol * |want| */
    uint32_t num_threads;   /* for a device the replay opens; 0 = online CPUs */
    bool check_blob_hashes; /* re-hash every blob at open (slower) */
} lm_replay_options;

void lm_replay_options_init(lm_replay_options *opts);

typedef struct lm_replay_report {
    uint64_t commands; /* commands executed, all loops */
    uint64_t programs; /* program launches and trace replays */
    uint64_t bytes_written, bytes_read;
    uint32_t goldens_checked, goldens_failed;
    double max_abs_error, max_rel_error; /* tolerance mode */
    uint64_t first_mismatch;             /* byte (exact) or element (tolerance) index */
    double seconds;
} lm_replay_report;

/* Runs the workload `opts->loops` times on `device`, or on a device the
 * replay opens to match the binary's system descriptor when `device` is NULL.
 * Returns LM_ERR_MISMATCH when a golden differs (the report says where), a
 * device fault as LM_ERR_DEVICE_FAULT. `opts` and `out_report` may be NULL. */
lm_status lm_replay_run(lm_replay *replay, lm_device *device, const lm_replay_options *opts,
                        lm_replay_report *out_report);

/* Copies the named buffer's contents as the last run left them. */
lm_status lm_replay_get_output(lm_replay *replay, const char *name, void *dst, uint64_t size);

void lm_replay_close(lm_replay *replay);

#ifdef __cplusplus
}
#endif

#endif
