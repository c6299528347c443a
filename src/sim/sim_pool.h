/* A fixed pool of host threads that runs one parallel job at a time.
 *
 * sim_pool_run(fn, n) runs fn(ctx, 0..n-1) with every index on its own thread
 * at the same time (index 0 on the caller), which the core scheduler relies
 * on: its threads wait for one another. n is at most sim_pool_threads().
 * Concurrent sim_pool_run calls are serialised.
 */
#ifndef LM_SIM_POOL_H
#define LM_SIM_POOL_H

#include <stdbool.h>
#include <stdint.h>

#include "lightmetal/lm_status.h"

/* How long a thread polls before it sleeps on a condition variable, in
 * polls (a pause each, some tens of microseconds in all). A replay launches
 * program after program with a little host work between them, and a
 * launch's threads wait for one another's last cores: waking a sleeping
 * thread costs the kernel tens of microseconds each way, often more than a
 * small program takes, while polling through the gap costs nothing when
 * every thread has a CPU of its own (only then does the pool poll: with
 * more threads than CPUs the polls would take time from the thread doing
 * the work). */
#define SIM_SPIN_POLLS 20000

/* One poll's pause. */
static inline void sim_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

typedef struct sim_pool sim_pool;

/* A pool of `threads` (>= 1) threads in all, counting the caller of run. */
lm_status sim_pool_create(uint32_t threads, sim_pool **out_pool);
void sim_pool_destroy(sim_pool *pool);

uint32_t sim_pool_threads(const sim_pool *pool);

/* Whether the pool's threads poll before sleeping (SIM_SPIN_POLLS): each
 * has a CPU of its own. */
bool sim_pool_polls(const sim_pool *pool);

void sim_pool_run(sim_pool *pool, void (*fn)(void *ctx, uint32_t index), void *ctx, uint32_t n);

#endif
