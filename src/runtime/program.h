/* Programs: kernels, runtime arguments, circular buffers and semaphores on a
 * device's cores, and the launch snapshots the dispatcher executes.
 *
 * Programs, kernels and CBs are reached through generational handles (a
 * stale handle is an error, never a crash). A program is reference counted:
 * its handle holds one reference and every launch in flight another, so
 * releasing a program while a launch of it is queued is safe.
 *
 * Arguments are validated by api/ before these are called; what needs the
 * program's state (overlaps, L1 room, ids) is checked here.
 */
#ifndef LM_RUNTIME_PROGRAM_H
#define LM_RUNTIME_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lightmetal/lm_program.h"
#include "runtime/jit.h"
#include "sim/rv32/rv_image.h"

typedef struct rt_program rt_program;

/* Everything the dispatcher needs to run one launch, fixed at enqueue time. */
typedef struct rt_launch_kernel {
    const rv_image *image;
    const char *name;
    bool fp32_acc;   /* compute kernels: dst holds float32 */
    const void *elf; /* the binary the image came from (serialized traces) */
    size_t elf_size;
    uint64_t hash; /* hash64(elf, elf_size, 0) when known (a file's content address), or 0 */
} rt_launch_kernel;

typedef struct rt_launch_core {
    uint32_t core;                       /* row-major core index */
    uint32_t kernel[3];                  /* index into kernels[], or UINT32_MAX */
    uint32_t args[3], args_count[3];     /* offsets into words[] */
    uint32_t common[3], common_count[3]; /* offsets into words[] */
    uint32_t sems, sem_count;            /* semaphore initial values, in words[] */
    uint32_t cbs, cb_count; /* CB slots (index + LM_CB_CONFIG_WORDS words), in words[] */
} rt_launch_core;

typedef struct rt_launch {
    rt_program *program; /* holds a reference */
    rt_launch_kernel *kernels;
    uint32_t kernel_count;
    rt_launch_core *cores;
    uint32_t core_count;
    uint32_t *words;
    uint32_t word_count;
} rt_launch;

lm_status rt_program_create(lm_device *device, lm_program *out_program);
lm_status rt_program_release(lm_program program);

/* Releases every program of a device whose queues are drained (device close);
 * their handles become stale. */
void rt_program_release_all(lm_device *device);

/* What a snapshot reports, in an order that recreates the programs exactly:
 * each program, then its kernels (each followed by its arguments), its
 * circular buffers and its semaphores. */
typedef struct rt_snapshot_visitor {
    void *ctx;
    void (*program)(void *ctx, lm_program program);
    void (*kernel)(void *ctx, lm_program program, lm_kernel kernel, const lm_core_range_set *cores,
                   const lm_kernel_config *cfg);
    void (*runtime_args)(void *ctx, lm_program program, lm_kernel kernel, lm_core core,
                         const uint32_t *args, uint32_t count);
    void (*common_args)(void *ctx, lm_program program, lm_kernel kernel, const uint32_t *args,
                        uint32_t count);
    void (*cb)(void *ctx, lm_program program, lm_circular_buffer cb, const lm_core_range_set *cores,
               const lm_circular_buffer_config *cfg);
    void (*semaphore)(void *ctx, lm_program program, const lm_core_range_set *cores,
                      uint32_t initial_value, uint32_t id);
} rt_snapshot_visitor;

/* Reports one live program (LM_ERR_INVALID_HANDLE for a stale handle). Not
 * safe against concurrent changes to it. LM_ERR_UNSUPPORTED when a set of
 * cores needs more than LM_MAX_CORE_RANGES rectangles. */
lm_status rt_program_snapshot_one(lm_program program, const rt_snapshot_visitor *v);

/* Calls fn with each live program of the device (under the device's lock:
 * fn must not call into the runtime). */
void rt_program_each(lm_device *device, void (*fn)(void *ctx, lm_program program), void *ctx);

/* The device a program belongs to. */
lm_status rt_program_device(lm_program program, lm_device **out_device);

/* Compiles and places a kernel (kernel_build.c). `path` is the source's file
 * name for file kernels (its directory joins the include path), or NULL. */
lm_status rt_kernel_create(lm_program program, const char *name, const char *path,
                           const char *source, const lm_core_range_set *cores,
                           const lm_kernel_config *cfg, lm_kernel *out_kernel);

/* Compiles a kernel as rt_kernel_create does, without placing it (what
 * `lightmetal kcc` writes): the processor's and cfg's defines join cfg's
 * own; a file kernel's directory (from `path`) joins the include path.
 * `cfg` is validated by the caller (processor DM0..COMPUTE). */
lm_status rt_kernel_build(const char *name, const char *path, const char *source,
                          const lm_kernel_config *cfg, jit_artifact *out);

/* Places a kernel from its RV32 ELF (copied; replay needs no compiler).
 * `hash`: hash64(elf, elf_size, 0) when the caller has it already, else 0.
 * `source` (may be NULL) is kept for capture. */
lm_status rt_kernel_create_from_elf(lm_program program, const char *name, const void *elf,
                                    size_t elf_size, uint64_t hash, const char *source,
                                    const lm_core_range_set *cores, const lm_kernel_config *cfg,
                                    lm_kernel *out_kernel);

/* Checks that `cores` are in the grid and free on cfg's processor. */
lm_status rt_kernel_check_placement(lm_program program, const lm_core_range_set *cores,
                                    const lm_kernel_config *cfg);

/* What capture needs of a kernel; pointers live as long as the program. */
typedef struct rt_kernel_desc {
    const char *name;
    const void *elf;
    size_t elf_size;
    const char *source; /* NULL when built from an ELF */
    lm_kernel_config config;
} rt_kernel_desc;

lm_status rt_kernel_describe(lm_program program, lm_kernel kernel, rt_kernel_desc *out);

lm_status rt_set_runtime_args(lm_program program, lm_kernel kernel, lm_core core,
                              const uint32_t *args, uint32_t count);

/* LM_OK when `kernel` of `program` runs on `core` (so its args may be set). */
lm_status rt_check_args_core(lm_program program, lm_kernel kernel, lm_core core);

/* The program's own array of the kernel's args on `core`, for in-place
 * writes (valid until the args are set with another count or the program
 * is released). From then on the array is watched: rt_visit_changed_args
 * reports it whenever its words differ from what was last reported or set. */
lm_status rt_get_runtime_args(lm_program program, lm_kernel kernel, lm_core core,
                              uint32_t **out_args, uint32_t *out_count);

typedef void (*rt_args_visit_fn)(void *ctx, lm_program program, lm_kernel kernel, lm_core core,
                                 const uint32_t *args, uint32_t count);

/* Calls fn for each watched args array written in place since it was last
 * reported, with a copy of its words, outside the program's lock. */
lm_status rt_visit_changed_args(lm_program program, rt_args_visit_fn fn, void *ctx);
lm_status rt_set_common_runtime_args(lm_program program, lm_kernel kernel, const uint32_t *args,
                                     uint32_t count);
lm_status rt_cb_create(lm_program program, const lm_core_range_set *cores,
                       const lm_circular_buffer_config *cfg, lm_circular_buffer *out_cb);
/* The configuration circular buffer `cb` of `program` has now. */
lm_status rt_cb_get_config(lm_program program, lm_circular_buffer cb,
                           lm_circular_buffer_config *out_cfg);

/* Gives `cb` a new configuration for the next launches (validated by the API:
 * page sizes divide the total): the same indices; a new L1 buffer's space, or
 * -- a CB with space of its own -- a total size within what was placed for
 * it. LM_ERR_INVALID_ARGUMENT otherwise, LM_ERR_INVALID_HANDLE for a CB of
 * another program. */
lm_status rt_cb_update(lm_program program, lm_circular_buffer cb,
                       const lm_circular_buffer_config *cfg);

lm_status rt_semaphore_create(lm_program program, const lm_core_range_set *cores,
                              uint32_t initial_value, uint32_t *out_id);

/* Launches the program on `cq` (or records the launch when the queue is
 * capturing a metal trace), waiting when `blocking`. */
lm_status rt_program_enqueue(lm_command_queue *cq, lm_program program, bool blocking);

/* Snapshots the program for a launch on `device`: checks it belongs there and
 * that its CBs do not run into L1 buffers. Free with rt_launch_free. */
lm_status rt_launch_build(lm_program program, lm_device *device, rt_launch **out_launch);
void rt_launch_free(rt_launch *launch);

#endif
