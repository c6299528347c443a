/* A fixed pool of host threads that runs one parallel job at a time.
 *
 * sim_pool_run(fn, n) runs fn(ctx, 0..n-1) with every index on its own thread
 * at the same time (index 0 on the caller), which the core scheduler relies
 * on: its threads wait for one another. n is at most sim_pool_threads().
 * Concurrent sim_pool_run calls are serialised.
 */
#ifndef LM_SIM_POOL_H
#define LM_SIM_POOL_H

#include <stdint.h>

#include "lightmetal/lm_status.h"

typedef struct sim_pool sim_pool;

/* A pool of `threads` (>= 1) threads in all, counting the caller of run. */
lm_status sim_pool_create(uint32_t threads, sim_pool **out_pool);
void sim_pool_destroy(sim_pool *pool);

uint32_t sim_pool_threads(const sim_pool *pool);

void sim_pool_run(sim_pool *pool, void (*fn)(void *ctx, uint32_t index), void *ctx, uint32_t n);

#endif
