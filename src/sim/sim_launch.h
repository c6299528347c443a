/* Running a program launch on the simulated cores.
 *
 * The caller (the dispatcher) has already written each core's reserved L1:
 * core information, runtime arguments, circular buffer configuration and
 * semaphores (kernel_abi layout). sim_launch_run then starts every kernel on
 * its core and processor and returns when all have finished, or when one
 * faults, overruns its instruction budget, or every live hart is blocked
 * (deadlock).
 *
 * Scheduling: a core's harts always run on one host thread, cooperatively
 * (a hart that blocks in cb_wait_front and the like parks, another runs);
 * cores are spread over the pool's threads. A blocked core wakes when another
 * core writes into its L1. Kernels that synchronise properly (semaphores,
 * circular buffers, barriers) get the same results whatever the thread count.
 *
 * Errors: LM_ERR_DEVICE_FAULT with a message naming the core (x,y), the
 * processor, the kernel, the pc and what went wrong; for a deadlock, what each
 * blocked hart waits on. Device memory written before the fault stays written.
 *
 * Instructions: *out_instructions (when not NULL) is set to the RISC-V
 * instructions every hart of the launch retired, also when it fails. An
 * ecall that blocks counts once, when it completes, so the count does not
 * depend on scheduling or the thread count -- unless a kernel polls memory
 * in a loop of its own.
 */
#ifndef LM_SIM_LAUNCH_H
#define LM_SIM_LAUNCH_H

#include <stdbool.h>
#include <stdint.h>

#include "lightmetal/lm_status.h"
#include "sim/rv32/rv_image.h"
#include "sim/sim_memory.h"
#include "sim/sim_pool.h"

/* Kernels of one core, by processor (DM0, DM1, compute); NULL where none. */
typedef struct sim_core_kernels {
    uint32_t core; /* row-major core index */
    const rv_image *image[3];
    const char *name[3];
    bool fp32_acc; /* the compute kernel's dst holds float32 (8 tiles) */
} sim_core_kernels;

/* Receives kernel prints, one line at a time (without the newline). */
typedef void (*sim_print_fn)(void *ctx, uint32_t x, uint32_t y, uint32_t processor,
                             const char *line);

typedef struct sim_launch_desc {
    const sim_core_kernels *cores;
    uint32_t core_count;
    uint64_t instruction_budget; /* per hart; exceeding it is a watchdog fault */
    bool strict_protocol;        /* tolerated compute protocol lapses fault */
    sim_print_fn print;          /* NULL: prints go nowhere */
    void *print_ctx;
} sim_launch_desc;

/* Scratch the launcher keeps between launches (hart-private memories). */
typedef struct sim_launcher sim_launcher;

lm_status sim_launcher_create(sim_memory *memory, sim_pool *pool, sim_launcher **out_launcher);
void sim_launcher_destroy(sim_launcher *launcher);

lm_status sim_launch_run(sim_launcher *launcher, const sim_launch_desc *desc,
                         uint64_t *out_instructions);

/* Name of a processor for messages: "DM0", "DM1", "COMPUTE". */
const char *sim_processor_name(uint32_t processor);

#endif
