/* A fixed pool of host threads that runs one parallel job at a time.
 *
 * sim_pool_run(fn, n) runs fn(ctx, 0..n-1) with every index on its own thread
 * at the same time (index 0 on the caller), so indices may wait for one
 * another; sim_pool_offer runs index 0 and lets the other threads join
 * while it runs. n is at most sim_pool_threads(). Concurrent jobs are
 * serialised.
 */
#ifndef LM_SIM_POOL_H
#define LM_SIM_POOL_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "lightmetal/lm_status.h"

/* How long a thread polls before it sleeps on a condition variable. A
 * replay launches program after program with a little host work between
 * them, and a launch's threads wait for one another's last cores: waking a
 * sleeping thread costs the kernel tens of microseconds each way, often more
 * than a small program takes, so a waiting thread polls through short gaps
 * (only when every thread has a CPU of its own; with more threads than CPUs
 * the polls would take time from the thread doing the work). The budget is
 * time, not a count of polls: a pause takes from a few to a hundred and
 * more cycles depending on the CPU, and a long poll hurts when the machine is
 * busy, where a waiting thread's polls take the CPU of a thread the wait is
 * for -- other processes' or the host's own. */
#define SIM_SPIN_NS 50000

/* One poll's pause. */
static inline void sim_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

/* A bounded poll: `for (sim_spin s = sim_spin_start(on); sim_spin_more(&s);)
 * if (condition) break;` polls for at most SIM_SPIN_NS, or not at all when
 * `on` is false. */
typedef struct sim_spin {
    uint64_t deadline; /* CLOCK_MONOTONIC ns; 0: no polling */
    uint32_t polls;
} sim_spin;

static inline uint64_t sim_spin_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline sim_spin sim_spin_start(bool on) {
    return (sim_spin){on ? sim_spin_now_ns() + SIM_SPIN_NS : 0, 0};
}

/* Pauses once and tells whether the poll may go on; reads the clock only
 * every 64 polls. */
static inline bool sim_spin_more(sim_spin *s) {
    if (!s->deadline) return false;
    if (s->polls++ != 0) sim_cpu_relax();
    if ((s->polls & 63) == 0 && sim_spin_now_ns() >= s->deadline) s->deadline = 0;
    return s->deadline != 0;
}

typedef struct sim_pool sim_pool;

/* A pool of `threads` (>= 1) threads in all, counting the caller of run. */
lm_status sim_pool_create(uint32_t threads, sim_pool **out_pool);
void sim_pool_destroy(sim_pool *pool);

uint32_t sim_pool_threads(const sim_pool *pool);

/* Whether the pool's threads poll before sleeping (SIM_SPIN_NS): each
 * has a CPU of its own. */
bool sim_pool_polls(const sim_pool *pool);

void sim_pool_run(sim_pool *pool, void (*fn)(void *ctx, uint32_t index), void *ctx, uint32_t n);

/* Like sim_pool_run, but indices 1..n-1 are offered: each runs, on its own
 * thread and alongside index 0, only if its thread takes it up before
 * fn(ctx, 0) returns; the others do not run at all. For jobs whose index 0
 * can do all the work alone and the others only help (the core scheduler's
 * threads take ready cores from one another): a small launch that the
 * caller finishes before a sleeping thread has woken does not wait for it
 * to wake, find nothing and report back. */
void sim_pool_offer(sim_pool *pool, void (*fn)(void *ctx, uint32_t index), void *ctx, uint32_t n);

#endif
