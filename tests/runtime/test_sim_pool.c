/* sim/sim_pool: every index of a job runs once and on its own thread, jobs
 * follow one another; an offered index runs at most once and never after
 * the job returned; the pool's threads are batch work; bounded polling,
 * refusals. */
#define _GNU_SOURCE /* SCHED_BATCH */
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "lm_test.h"
#include "sim/sim_pool.h"

enum { MAX_INDEX = 8 };

typedef struct job {
    _Atomic uint32_t runs[MAX_INDEX];
    _Atomic uint32_t arrived; /* for the rendezvous: every index at once */
    _Atomic uint32_t inside;  /* indices between their start and their end */
    uint32_t n;
} job;

static void count(void *ctx, uint32_t index) {
    job *j = ctx;
    atomic_fetch_add(&j->runs[index], 1);
}

/* Returns only once all n indices are running: a pool that ran two indices
 * on one thread, one after the other, would never return. */
static void rendezvous(void *ctx, uint32_t index) {
    job *j = ctx;
    atomic_fetch_add(&j->arrived, 1);
    while (atomic_load(&j->arrived) < j->n)
        sim_cpu_relax();
    atomic_fetch_add(&j->runs[index], 1);
}

static void run_jobs(uint32_t threads) {
    sim_pool *pool;
    CHECK_OK(sim_pool_create(threads, &pool));
    CHECK_EQ_U64(sim_pool_threads(pool), threads);
    for (uint32_t round = 0; round < 200; round++) {
        job j;
        memset(&j, 0, sizeof j);
        j.n = 1 + round % threads;
        sim_pool_run(pool, round % 2 ? rendezvous : count, &j, j.n);
        for (uint32_t i = 0; i < MAX_INDEX; i++)
            CHECK_EQ_U64(atomic_load(&j.runs[i]), i < j.n ? 1 : 0);
    }
    sim_pool_destroy(pool);
}

/* Index 0 returns at once; a helper that took its index up works a little
 * longer, counted as inside the job meanwhile. */
static void helper(void *ctx, uint32_t index) {
    job *j = ctx;
    atomic_fetch_add(&j->inside, 1);
    if (index)
        for (int i = 0; i < 2000; i++)
            sim_cpu_relax();
    atomic_fetch_add(&j->runs[index], 1);
    atomic_fetch_sub(&j->inside, 1);
}

/* Offered jobs: a rendezvous still meets (the job stays open while index 0
 * waits, so every thread takes its index up); when index 0 returns at
 * once, each other index ran at most once and none is still running. Plain
 * jobs in between must still run every index. */
static void offer_jobs(uint32_t threads) {
    sim_pool *pool;
    CHECK_OK(sim_pool_create(threads, &pool));
    for (uint32_t round = 0; round < 300; round++) {
        job j;
        memset(&j, 0, sizeof j);
        j.n = 1 + round % threads;
        switch (round % 3) {
        case 0:
            sim_pool_offer(pool, rendezvous, &j, j.n);
            for (uint32_t i = 0; i < MAX_INDEX; i++)
                CHECK_EQ_U64(atomic_load(&j.runs[i]), i < j.n ? 1 : 0);
            break;
        case 1:
            sim_pool_offer(pool, helper, &j, j.n);
            CHECK_EQ_U64(atomic_load(&j.inside), 0);
            CHECK_EQ_U64(atomic_load(&j.runs[0]), 1);
            for (uint32_t i = 1; i < MAX_INDEX; i++)
                CHECK(atomic_load(&j.runs[i]) <= (i < j.n ? 1u : 0u));
            break;
        default:
            sim_pool_run(pool, count, &j, j.n);
            for (uint32_t i = 0; i < MAX_INDEX; i++)
                CHECK_EQ_U64(atomic_load(&j.runs[i]), i < j.n ? 1 : 0);
        }
    }
    sim_pool_destroy(pool);
}

static void test_offered_indices(void) {
    offer_jobs(1);
    offer_jobs(2);
    offer_jobs(MAX_INDEX);
}

static void test_every_index_once(void) {
    run_jobs(1);
    run_jobs(2);
    /* More threads than most CI machines have CPUs: the pool sleeps
     * instead of polling, and the rendezvous still meets. */
    run_jobs(MAX_INDEX);
}

static _Atomic int policies[MAX_INDEX];

static void record_policy(void *ctx, uint32_t index) {
    (void)ctx;
    atomic_store(&policies[index], sched_getscheduler(0));
}

/* The pool's own threads run as batch work (a woken one does not preempt
 * the host's threads); the caller's thread keeps its policy. */
static void test_threads_are_batch(void) {
    sim_pool *pool;
    CHECK_OK(sim_pool_create(4, &pool));
    sim_pool_run(pool, record_policy, NULL, 4);
    CHECK(atomic_load(&policies[0]) == sched_getscheduler(0));
#ifdef SCHED_BATCH
    for (int i = 1; i < 4; i++)
        CHECK(atomic_load(&policies[i]) == SCHED_BATCH);
#endif
    sim_pool_destroy(pool);
}

static void test_refuses_too_many_threads(void) {
    sim_pool *pool;
    CHECK_FAILS(sim_pool_create(1u << 16, &pool), LM_ERR_INVALID_ARGUMENT,
                "65536 simulator threads: at most 65535");
    sim_pool_destroy(NULL);
}

/* A poll that is off never polls; one that is on polls until its time is up
 * and then stops (the upper bound is the machine's business, so only the
 * lower one is checked). */
static void test_spin_bounded(void) {
    sim_spin off = sim_spin_start(false);
    CHECK(!sim_spin_more(&off));
    uint64_t t0 = sim_spin_now_ns();
    sim_spin on = sim_spin_start(true);
    uint64_t polls = 0;
    while (sim_spin_more(&on))
        polls++;
    CHECK(sim_spin_now_ns() - t0 >= SIM_SPIN_NS);
    CHECK(polls >= 63);
    CHECK(!sim_spin_more(&on));
}

int main(void) {
    TEST_RUN(test_every_index_once);
    TEST_RUN(test_offered_indices);
    TEST_RUN(test_threads_are_batch);
    TEST_RUN(test_refuses_too_many_threads);
    TEST_RUN(test_spin_bounded);
    return test_summary();
}
