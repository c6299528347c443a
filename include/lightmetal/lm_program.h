/* lightmetal — programs: kernels, runtime arguments, circular buffers and
 * semaphores placed on a set of cores, launched with lm_enqueue_program().
 *
 * A program belongs to the device it was created on. Kernels are C sources
 * compiled once, when created, to RV32IM binaries (see lm_create_kernel), or
 * binaries built beforehand (lm_create_kernel_from_elf); a program launch
 * then needs no compiler.
 *
 * Thread-safety: a program may be built from one thread at a time; launching
 * it from several queues at once is allowed (each launch uses the program's
 * state as it was when lm_enqueue_program was called).
 */
#ifndef LIGHTMETAL_LM_PROGRAM_H
#define LIGHTMETAL_LM_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lightmetal/lm_buffer.h"
#include "lightmetal/lm_tile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lm_program {
    uint64_t id; /* 0 is never a valid program */
} lm_program;

typedef struct lm_kernel {
    uint64_t id; /* 0 is never a valid kernel */
} lm_kernel;

typedef struct lm_circular_buffer {
    uint64_t id;
} lm_circular_buffer;

/* The set holding the single rectangle (x0,y0)-(x1,y1). */
lm_core_range_set lm_core_range_set_of(uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1);

typedef enum lm_processor {
    LM_PROCESSOR_INVALID = 0,
    LM_PROCESSOR_DM0 = 1,     /* data movement 0 (tt-metal's RISCV_0 / BRISC) */
    LM_PROCESSOR_DM1 = 2,     /* data movement 1 (RISCV_1 / NCRISC) */
    LM_PROCESSOR_COMPUTE = 3, /* the compute engine's processor */
} lm_processor;

typedef enum lm_noc {
    LM_NOC_0 = 0,
    LM_NOC_1 = 1,
} lm_noc;

typedef enum lm_math_fidelity {
    LM_MATH_FIDELITY_INVALID = 0,
    LM_MATH_FIDELITY_LOFI = 1,
    LM_MATH_FIDELITY_HIFI2 = 2,
    LM_MATH_FIDELITY_HIFI3 = 3,
    LM_MATH_FIDELITY_HIFI4 = 4,
} lm_math_fidelity;

typedef struct lm_kernel_define {
    const char *name;  /* a C identifier */
    const char *value; /* NULL for a bare #define */
} lm_kernel_define;

/* A named compile-time argument of a C++ kernel, read there with
 * get_named_compile_time_arg_val("name") (a constant expression). */
typedef struct lm_named_compile_arg {
    const char *name; /* letters, digits and '_', not starting with a digit */
    uint32_t value;
} lm_named_compile_arg;

/* The language of a kernel's source. */
typedef enum lm_kernel_language {
    LM_KERNEL_LANGUAGE_AUTO =
        0, /* C++17 for a path or name ending in .cpp, .cc or .cxx, else C11 */
    LM_KERNEL_LANGUAGE_C = 1,
    LM_KERNEL_LANGUAGE_CXX = 2, /* C++17, freestanding, tt-metal's kernel dialects */
} lm_kernel_language;

#define LM_MAX_KERNEL_DEFINES 64
#define LM_MAX_COMPILE_ARGS 64
#define LM_MAX_RUNTIME_ARGS 341

/* How a kernel is built and where it runs. Start from lm_kernel_config_init. */
typedef struct lm_kernel_config {
    lm_processor processor;
    lm_noc noc;                   /* data movement kernels; default NOC_0 for DM0, NOC_1 for DM1 */
    const uint32_t *compile_args; /* get_compile_time_arg_val(i) */
    uint32_t compile_arg_count;
    const lm_kernel_define *defines;
    uint32_t define_count;
    /* Compute kernels only. */
    lm_math_fidelity math_fidelity; /* default HIFI4 */
    bool fp32_dest_acc_en;          /* dst holds float32 (8 tiles instead of 16) */
    bool math_approx_mode;
    lm_kernel_language language; /* default AUTO */
    /* C++ kernels only; names are unique (at most LM_MAX_COMPILE_ARGS). */
    const lm_named_compile_arg *named_compile_args;
    uint32_t named_compile_arg_count;
} lm_kernel_config;

void lm_kernel_config_init(lm_kernel_config *cfg, lm_processor processor);

/* Creates an empty program on `device`. */
lm_status lm_create_program(lm_device *device, lm_program *out_program);

/* Releases a program and its kernels, CBs and semaphores. Launches already
 * enqueued are unaffected. A second release is LM_ERR_INVALID_HANDLE. */
lm_status lm_release_program(lm_program program);

/* Compiles the kernel source file at `path` (see lm_create_kernel_from_string)
 * and places it on `cores`. */
lm_status lm_create_kernel(lm_program program, const char *path, const lm_core_range_set *cores,
                           const lm_kernel_config *cfg, lm_kernel *out_kernel);

/* Compiles `source` (C11 with the kernel SDK: dataflow_api.h for data
 * movement) for the processor in `cfg` and places it on `cores`. `name` labels
 * the kernel in messages. Builds are cached on disk (see the README).
 * Errors: LM_ERR_COMPILE with the compiler's messages (see
 * lm_last_compile_log); LM_ERR_INVALID_ARGUMENT for cores outside the grid, a
 * processor already taken on one of the cores, bad defines or too many
 * compile-time arguments. */
lm_status lm_create_kernel_from_string(lm_program program, const char *name, const char *source,
                                       const lm_core_range_set *cores, const lm_kernel_config *cfg,
                                       lm_kernel *out_kernel);

/* The kernel compiler's whole output, as it printed it (every error, warning
 * and note, with source lines and carets), from the calling thread's most
 * recent kernel build that failed with LM_ERR_COMPILE (lm_create_kernel,
 * lm_create_kernel_from_string), like OpenCL's build log.
 *
 * After such a failure lm_last_error() reads
 *   "lm_create_kernel: kernel 'NAME' failed to compile:" (one line), then the
 *   compiler's output.
 * But lm_last_error() is bounded (about 1 KiB): when the output does not fit,
 * it holds the diagnostic lines only ("file:line:col: error: ..."; no quoted
 * source, carets or "In file included from" chains), as many whole lines as
 * fit, and ends with the line
 *   "[S of T lines of compiler output shown (source quotes and include chains
 *    left out): lm_last_compile_log() returns all of it]".
 * This function returns all of it, however long. For a kernel that uses SFPI
 * (vFloat, dst_reg[], v_if, sfpi::, custom ckernel_sfpu_*.h headers), which
 * lightmetal does not support, the first line of lm_last_error() says so,
 * whatever else failed.
 *
 * Never NULL; "" when no kernel build failed to compile on this thread yet.
 * A success does not clear it. The pointer stays valid until the next
 * lightmetal call on the same thread. Thread-safety: each thread has its own. */
const char *lm_last_compile_log(void);

/* Places a prebuilt kernel: an RV32 ELF executable built by any toolchain
 * for the kernel ABI (docs/kernel-abi.md), for instance by `lightmetal kcc`
 * or by riscv64-unknown-elf-gcc with -march=rv32im -mabi=ilp32 against the
 * kernel SDK's headers, crt0.S and link.ld. The bytes are copied (the caller
 * keeps `elf`); the kernel then runs, and is captured, like a compiled one.
 * Messages name it "elf-<hash of its bytes>".
 *
 * The ELF must be ELFCLASS32, little-endian, EM_RISCV, ET_EXEC, without
 * compressed instructions or a hardware floating-point ABI, with its
 * loadable segments inside a core's kernel memory map (code and read-only
 * data in [0x40000000, +1 MiB), writable data in [0x20000000, +128 KiB)),
 * none overlapping, and its entry point on an executable word.
 *
 * `cfg` gives the processor, NoC and compute settings. A prebuilt kernel has
 * its compile-time arguments and defines compiled in (and must have been
 * built for cfg's processor, LM_PROCESSOR; that cannot be checked), so cfg
 * must list none.
 * Errors: LM_ERR_INVALID_ARGUMENT for a NULL or empty elf, compile args or
 * defines in cfg, bad cores or cfg (as lm_create_kernel); LM_ERR_INVALID_FILE
 * naming the first ELF field that is wrong. */
lm_status lm_create_kernel_from_elf(lm_program program, const void *elf, size_t size,
                                    const lm_core_range_set *cores, const lm_kernel_config *cfg,
                                    lm_kernel *out_kernel);

/* tt-metal's split_work_to_cores: `units` of work over the cores of a
 * grid_size.x x grid_size.y grid, taken in row-major order (x fastest) or,
 * with row_major false, column-major. num_cores = min(units, cores); the
 * first units % num_cores of them (core_group_1) get one unit more than the
 * rest (core_group_2, empty when the split is even, in which case group 1
 * holds every core). */
typedef struct lm_work_split {
    uint32_t num_cores;
    lm_core_range_set all_cores, core_group_1, core_group_2;
    uint32_t units_per_core_group_1, units_per_core_group_2;
} lm_work_split;

/* Errors: LM_ERR_INVALID_ARGUMENT for a NULL out_split or an empty grid. No
 * device needed: the caller passes its grid (lm_device_info). */
lm_status lm_split_work_to_cores(lm_core grid_size, uint32_t units, bool row_major,
                                 lm_work_split *out_split);

/* Runtime arguments of `kernel` on one of its cores (up to 341 words). Later
 * calls replace earlier ones; launches enqueued before keep what they had. */
lm_status lm_set_runtime_args(lm_program program, lm_kernel kernel, lm_core core,
                              const uint32_t *args, uint32_t count);

/* The same arguments on every core of `cores` (tt-metal's SetRuntimeArgs
 * with a CoreRange or CoreRangeSet). All the cores are checked first: on an
 * error no core's arguments change. */
lm_status lm_set_runtime_args_range(lm_program program, lm_kernel kernel,
                                    const lm_core_range_set *cores, const uint32_t *args,
                                    uint32_t count);

/* Per-core arguments in one call: args[i] (counts[i] words) on cores[i]
 * (tt-metal's SetRuntimeArgs with vectors of cores and of argument
 * vectors). Checked first as above. */
lm_status lm_set_runtime_args_each(lm_program program, lm_kernel kernel, const lm_core *cores,
                                   uint32_t core_count, const uint32_t *const *args,
                                   const uint32_t *counts);

/* The program's own array of `kernel`'s arguments on `core`, to update in
 * place between launches (tt-metal's GetRuntimeArgs): *out_count words at
 * *out_args. Words written there are what the next lm_enqueue_program
 * launches with (and what a Light Metal capture records for it). The array
 * stays valid until lm_set_runtime_args gives that core a different number
 * of words, or the program is released. Do not write it while another
 * thread enqueues the program. Errors as lm_set_runtime_args. */
lm_status lm_get_runtime_args(lm_program program, lm_kernel kernel, lm_core core,
                              uint32_t **out_args, uint32_t *out_count);

/* Arguments every core of `kernel` sees through get_common_arg_val. */
lm_status lm_set_common_runtime_args(lm_program program, lm_kernel kernel, const uint32_t *args,
                                     uint32_t count);

/* One index of a circular buffer: pages of `page_size` bytes in `format`. */
typedef struct lm_cb_index_config {
    uint32_t index; /* 0..31 */
    lm_data_format format;
    uint32_t page_size;
} lm_cb_index_config;

#define LM_MAX_CB_INDICES 32

/* A circular buffer: `total_size` bytes of L1 on every core of the set,
 * shared by the listed indices (each index sees the whole space, as in
 * tt-metal). Without `globally_allocated`, the space comes from the bottom of
 * the cores' free L1; with it, it is that L1 buffer's space (whose size must
 * be at least total_size). */
typedef struct lm_circular_buffer_config {
    uint32_t total_size;
    uint32_t index_count;
    lm_cb_index_config indices[LM_MAX_CB_INDICES];
    lm_buffer globally_allocated; /* {0}: none */
} lm_circular_buffer_config;

void lm_circular_buffer_config_init(lm_circular_buffer_config *cfg);

/* Errors: LM_ERR_INVALID_ARGUMENT for indices >= 32 or used twice on a core,
 * total_size not a multiple of every page size, cores outside the grid;
 * LM_ERR_OUT_OF_DEVICE_MEMORY when the program's CBs no longer fit a core's
 * L1. */
lm_status lm_create_circular_buffer(lm_program program, const lm_core_range_set *cores,
                                    const lm_circular_buffer_config *cfg,
                                    lm_circular_buffer *out_cb);

/* Changing a circular buffer between launches (tt-metal's
 * UpdateDynamicCircularBufferAddress, UpdateCircularBufferTotalSize,
 * UpdateCircularBufferPageSize); launches already enqueued keep what they
 * had. A circular buffer created in an L1 buffer's space (globally_allocated)
 * may move to another L1 buffer of the device and grow to its size; one with
 * space of its own may change total size within the space placed for it at
 * creation. The total size stays a multiple of every page size. Captured and
 * replayed. Errors: LM_ERR_INVALID_ARGUMENT (the message says which rule),
 * LM_ERR_INVALID_HANDLE for a circular buffer of another program. */
lm_status lm_update_dynamic_circular_buffer_address(lm_program program, lm_circular_buffer cb,
                                                    lm_buffer buffer);
lm_status lm_update_circular_buffer_total_size(lm_program program, lm_circular_buffer cb,
                                               uint32_t total_size);
lm_status lm_update_circular_buffer_page_size(lm_program program, lm_circular_buffer cb,
                                              uint32_t index, uint32_t page_size);

/* A semaphore on every core of the set, starting at `initial_value`; its id is
 * what kernels pass to get_semaphore(). Up to 16 per core. */
lm_status lm_create_semaphore(lm_program program, const lm_core_range_set *cores,
                              uint32_t initial_value, uint32_t *out_semaphore_id);

/* Launches the program on the queue's device. Device faults (a kernel's
 * illegal instruction, bad access, watchdog, deadlock) are reported as
 * LM_ERR_DEVICE_FAULT by the blocking call or the next lm_finish. */
lm_status lm_enqueue_program(lm_command_queue *cq, lm_program program, bool blocking);

#ifdef __cplusplus
}
#endif

#endif
