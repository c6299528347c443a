/* Semantic verification of a Light Metal binary: what a structurally valid
 * file must also mean before replay may run it.
 *
 * Checks, in command order: every id (buffer, program, kernel, CB,
 * semaphore, trace) is defined before use, never defined twice, and not used
 * after release; kernels, CBs, semaphores and runtime args name a live
 * program and (for args) a kernel of that program; core ranges are ordered
 * and inside the descriptor's grid; CB indices < 32 and sizes consistent;
 * runtime args per core per kernel within the device limit; buffer writes,
 * reads and goldens fit their buffer; every buffer's pages fit its banks
 * (the descriptor's DRAM and L1 geometry) at its recorded address, and
 * buffers alive at the same time never overlap; writes and goldens are the
 * size of their buffer; queue ids exist; trace capture/load/replay/release
 * pair up; every kernel ELF is a well-formed RV32 executable whose loadable
 * segments fit the kernel memory map; buffer names are unique, refer to
 * created buffers and describe them consistently (role, format, shape);
 * circular buffers over a global buffer name a live L1 buffer big enough.
 *
 * The kernel memory map comes in as parameters so this layer does not
 * depend on the simulator; replay passes the simulator's numbers.
 *
 * Errors: LM_ERR_INVALID_FILE with a message naming the command index, the
 * command type and the field, e.g.
 *   "invalid binary: commands[12] (CreateKernel).cores[1]: core range
 *    (0,0)-(9,1) is outside the 8x8 grid".
 * Thread-safety: reads the file only; allocates its own scratch.
 */
#ifndef LM_FORMAT_LMB_SEMANTIC_H
#define LM_FORMAT_LMB_SEMANTIC_H

#include "format/lmb.h"

/* Where kernel code and writable data may be placed (see sim/kernel_map.h). */
typedef struct lmb_kernel_map {
    uint32_t code_base, code_size;   /* read-only / executable segments */
    uint32_t local_base, local_size; /* writable segments (data, bss) */
} lmb_kernel_map;

/* How the device lays buffers out (see runtime/device.h): an interleaved
 * buffer of P pages takes ceil(P / banks) pages per bank, each page rounded
 * up to the alignment, from its recorded address on. DRAM buffers live in
 * [0, dram_bank_size - trace_region_size) of every bank, L1 buffers in
 * [l1_base, l1_size) of every core. */
typedef struct lmb_memory_map {
    uint32_t dram_alignment, l1_alignment; /* 0: pages are not rounded up */
    uint64_t l1_base;                      /* first L1 byte for buffers */
    uint32_t max_command_queues;           /* 0: not checked */
} lmb_memory_map;

typedef struct lmb_semantic_options {
    lmb_kernel_map kernel_map; /* all zero: segments are not placed-checked */
    lmb_memory_map memory_map;
    uint32_t max_runtime_args; /* per core per kernel; default 341 */
    uint32_t max_grid;         /* largest grid_x / grid_y; default 32 */
    uint32_t max_compile_args; /* default 64 */
    uint32_t max_semaphores;   /* per core; semaphore ids are 0..max-1; default 16 */
    uint32_t max_core_ranges;  /* rectangles in one set of cores; default 16 */
} lmb_semantic_options;

void lmb_semantic_options_init(lmb_semantic_options *opts);

/* What the checks learn about a file on the way, for readers to plan with. */
typedef struct lmb_semantic_facts {
    uint32_t queues_used; /* bit q set: some command runs on command queue q */
} lmb_semantic_facts;

/* `file` must have passed lmb_verify(). `out_facts` may be NULL; it is
 * filled only when the file passes. */
lm_status lmb_verify_semantics(const void *file, uint64_t size, const lmb_semantic_options *opts,
                               lmb_semantic_facts *out_facts);

/* What is wrong with a launch label of `len` bytes (lm_device_set_launch_label,
 * EnqueueProgram.label), or NULL when nothing is: at most LM_MAX_LAUNCH_LABEL
 * bytes of printable UTF-8 on one line (text_char_len), so that tools print
 * it as is. The message completes "label ...". */
const char *lmb_launch_label_problem(const char *label, size_t len);

/* Checks one kernel ELF on its own (same rules as above); `what` names it in
 * the message. */
lm_status lmb_check_kernel_elf(const uint8_t *elf, uint64_t size, const lmb_kernel_map *map,
                               const char *what);

#endif
