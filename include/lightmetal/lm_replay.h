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

#include "lightmetal/lm_capture.h"
#include "lightmetal/lm_device.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lm_replay lm_replay;

/* Verifies `data` (a binary of `size` bytes) and prepares to run it. The
 * bytes are not copied. Verification covers the structure, the table digest
 * (so no byte of the command tables changed since capture) and the meaning;
 * blob hashes are checked as the blobs are used (lm_replay_run).
 * Errors: LM_ERR_INVALID_FILE naming what is wrong. */
lm_status lm_replay_open(const void *data, uint64_t size, lm_replay **out_replay);

/* The same for a file, mapped read-only. */
lm_status lm_replay_open_file(const char *path, lm_replay **out_replay);

/* Replaces what the workload writes into the buffer named `name` (see
 * lm_capture_name_buffer) with `data`, which must be the buffer's size and
 * stay valid until the next run returns. Goldens may then no longer match.
 * An empty tensor (a 0 in its shape) takes size 0, and `data` may be NULL. */
lm_status lm_replay_set_input(lm_replay *replay, const char *name, const void *data, uint64_t size);

/* The named buffers of a binary, as the capture described them. */
typedef struct lm_replay_buffer_info {
    const char *name;      /* valid until lm_replay_close */
    lm_buffer_role role;   /* INPUT, OUTPUT or INPUT_OUTPUT */
    uint64_t size;         /* bytes; 0 for an empty tensor (a 0 in `shape`) */
    lm_data_format format; /* element format; LM_DATA_FORMAT_INVALID: plain bytes */
    uint32_t rank;         /* 0 when no shape was recorded, or for a scalar */
    uint64_t shape[LM_MAX_TENSOR_RANK];
    /* The tensor's type outside the device (it fits `format`), or
     * LM_ELEMENT_TYPE_AS_FORMAT; lm_replay_set_input and
     * lm_replay_get_output always take and give `format` elements. */
    lm_element_type element_type;
    bool scalar; /* a rank-0 tensor of one `format` element (rank is 0) */
} lm_replay_buffer_info;

/* Number of named buffers (0 for a NULL replay). */
uint32_t lm_replay_buffer_count(const lm_replay *replay);

/* Describes named buffer `index` (0 .. count-1, in the order of the file).
 * Errors: LM_ERR_INVALID_ARGUMENT (NULL arguments, index out of range). */
lm_status lm_replay_buffer_info_at(const lm_replay *replay, uint32_t index,
                                   lm_replay_buffer_info *out_info);

typedef struct lm_replay_options {
    uint32_t loops;       /* runs of the whole workload; default 1 */
    bool tolerance;       /* compare goldens as float32 within atol/rtol */
    double atol, rtol;    /* |got - want| <= atol + rtol * |want| */
    uint32_t num_threads; /* for a device the replay opens; 0 = online CPUs */
    /* Hash every kernel ELF, trace and data blob as it goes to the device
     * and fail the command (before anything uses the data) when it differs
     * from the file's hash. Default true; turn off only for a file that was
     * verified with its hashes before (lightmetal verify). */
    bool check_blob_hashes;
    /* Compare goldens (CompareToGolden commands). Default true. */
    bool check_goldens;
    /* Per kernel per launch, for a device the replay opens; 0 = what the
     * binary recorded (the capturing device's watchdog). */
    uint64_t watchdog_instructions;
    /* For a device the replay opens: the compute protocol lapses the chip
     * tolerates are faults (lm_device_options.strict_protocol), also when the
     * capturing device did not make them so. Default false: what the binary
     * recorded. */
    bool strict_protocol;
    /* Time every launch by its recorded label (lm_device_set_launch_label:
     * a compiled model's launches are labelled "OpType node-name", a trace
     * replay "trace N"); lm_replay_get_profile gives the result, and
     * lm_replay_get_program_profile the programs inside each label. On a device
     * given to lm_replay_run this restarts the device's profile and leaves
     * profiling off. Default false. */
    bool profile;
} lm_replay_options;

void lm_replay_options_init(lm_replay_options *opts);

typedef struct lm_replay_report {
    uint64_t commands; /* commands executed, all loops */
    uint64_t programs; /* program launches and trace replays */
    uint64_t bytes_written, bytes_read;
    uint32_t goldens_checked, goldens_failed;
    double max_abs_error, max_rel_error; /* tolerance mode */
    uint64_t first_mismatch;             /* byte (exact) or element (tolerance) index */
    /* Times the host stopped to wait for the device before a loop's end:
     * finishes, event synchronizes, goldens, and the blocking transfers and
     * launches that order another queue. A blocking write or read on a
     * binary that uses one queue does not wait (its bytes outlive the run). */
    uint64_t host_waits;
    double seconds;
} lm_replay_report;

/* Runs the workload `opts->loops` times on `device`, or on a device the
 * replay opens to match the binary's system descriptor and recorded device
 * options when `device` is NULL. Returns LM_ERR_MISMATCH when a golden
 * differs (the report says where; named buffers are still read back), a
 * device fault as LM_ERR_DEVICE_FAULT. The error reported is the first one
 * in command order. `*out_report` is written on LM_OK and LM_ERR_MISMATCH
 * only; after any other failure nothing is read back and the outputs of an
 * earlier run are dropped. `opts` and `out_report` may be NULL. */
lm_status lm_replay_run(lm_replay *replay, lm_device *device, const lm_replay_options *opts,
                        lm_replay_report *out_report);

/* Copies the named buffer's contents as the last run left them (`size`
 * bytes, the buffer's; for an empty tensor 0, and `dst` may be NULL). */
lm_status lm_replay_get_output(lm_replay *replay, const char *name, void *dst, uint64_t size);

/* The profile of the last run made with lm_replay_options.profile (all of
 * its loops), one entry per label in order of first launch; none (NULL, 0)
 * after a run without it. Owned by the replay: valid until the next
 * lm_replay_run or lm_replay_close. Errors: LM_ERR_INVALID_ARGUMENT for NULL
 * arguments. */
lm_status lm_replay_get_profile(const lm_replay *replay, const lm_profile_entry **out_entries,
                                size_t *out_count);

/* The same run's profile by (label, program), as
 * lm_device_get_program_profile gives it: which of a label's programs took
 * its time. Ownership and errors as lm_replay_get_profile. */
lm_status lm_replay_get_program_profile(const lm_replay *replay,
                                        const lm_profile_program_entry **out_entries,
                                        size_t *out_count);

void lm_replay_close(lm_replay *replay);

#ifdef __cplusplus
}
#endif

#endif
