#include "sim/sim_pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/error.h"
#include "base/thread.h"

struct sim_pool {
    uint32_t threads;
    bool spin;                 /* poll before sleeping (threads <= CPUs) */
    pthread_t *workers;        /* threads - 1 of them */
    pthread_mutex_t run_mutex; /* one job at a time */
    pthread_mutex_t mutex;
    pthread_cond_t start, done;
    /* The current job, one atomic word (so that a thread reads a job's
     * generation with its own n, offer flag and claims): worker w runs index
     * w + 1 when w + 1 < n -- for an offered job only once it has claimed
     * the index, which it can until the caller closes the job. fn and ctx
     * are written before `job` (release) and read after it (acquire); a job
     * stays until every thread that runs it has finished. */
    void (*fn)(void *ctx, uint32_t index);
    void *ctx;
    _Atomic uint64_t job;
    _Atomic uint32_t finished;
    _Atomic bool stopping;
};

/* The job word: n, the claims of an offered job, two flags, the generation. */
#define JOB_N_MASK 0xffffu /* n <= threads <= 65535 */
#define JOB_CLAIM_SHIFT 16
#define JOB_CLAIM_ONE (1ull << JOB_CLAIM_SHIFT)
#define JOB_OFFERED (1ull << 32)
#define JOB_CLOSED (1ull << 33)
#define JOB_GEN_SHIFT 34

static uint64_t job_gen(uint64_t job) {
    return job >> JOB_GEN_SHIFT;
}

static uint32_t job_n(uint64_t job) {
    return (uint32_t)(job & JOB_N_MASK);
}

static uint32_t job_claims(uint64_t job) {
    return (uint32_t)(job >> JOB_CLAIM_SHIFT) & JOB_N_MASK;
}

typedef struct worker_arg {
    sim_pool *pool;
    uint32_t index;
} worker_arg;

/* Polls until the job's generation differs from `seen` or the pool stops:
 * true when it did within the polls. */
static bool poll_start(sim_pool *pool, uint64_t seen) {
    for (sim_spin s = sim_spin_start(pool->spin); sim_spin_more(&s);)
        if (job_gen(atomic_load_explicit(&pool->job, memory_order_acquire)) != seen ||
            atomic_load_explicit(&pool->stopping, memory_order_acquire))
            return true;
    return false;
}

/* Claims this worker's index of an offered job: false when the caller
 * closed it first. (A new generation implies the old one closed.) */
static bool claim(sim_pool *pool, uint64_t job) {
    uint64_t gen = job_gen(job);
    while (!(job & JOB_CLOSED) && job_gen(job) == gen)
        if (atomic_compare_exchange_weak(&pool->job, &job, job + JOB_CLAIM_ONE)) return true;
    return false;
}

static void *worker_main(void *p) {
    worker_arg arg = *(worker_arg *)p;
    free(p);
    sim_pool *pool = arg.pool;
    thread_mark_batch();
    uint64_t seen = 0;
    for (;;) {
        if (!poll_start(pool, seen)) {
            pthread_mutex_lock(&pool->mutex);
            while (job_gen(atomic_load(&pool->job)) == seen && !atomic_load(&pool->stopping))
                pthread_cond_wait(&pool->start, &pool->mutex);
            pthread_mutex_unlock(&pool->mutex);
        }
        if (atomic_load(&pool->stopping)) break;
        uint64_t job = atomic_load_explicit(&pool->job, memory_order_acquire);
        seen = job_gen(job);
        uint32_t n = job_n(job);
        if (arg.index >= n || ((job & JOB_OFFERED) && !claim(pool, job))) continue;
        pool->fn(pool->ctx, arg.index);
        /* The last to finish wakes the caller if it went to sleep. The count
         * moves first, and the job word is read after it: a caller that
         * closes the job and then reads the count either sees this finish or
         * is seen to have closed (both sequentially consistent), and one
         * checking the count under the mutex sees it or is waiting when the
         * signal comes. */
        uint32_t done = atomic_fetch_add(&pool->finished, 1) + 1;
        job = atomic_load(&pool->job);
        uint32_t all = !(job & JOB_OFFERED) ? n - 1 : (job & JOB_CLOSED) ? job_claims(job) : 0;
        if (done == all) {
            pthread_mutex_lock(&pool->mutex);
            pthread_cond_signal(&pool->done);
            pthread_mutex_unlock(&pool->mutex);
        }
    }
    return NULL;
}

lm_status sim_pool_create(uint32_t threads, sim_pool **out_pool) {
    sim_pool *pool = calloc(1, sizeof *pool);
    if (!pool) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    pool->threads = threads ? threads : 1;
    if (pool->threads > JOB_N_MASK) {
        free(pool);
        return err_set(LM_ERR_INVALID_ARGUMENT, "%u simulator threads: at most %u", threads,
                       JOB_N_MASK);
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    pool->spin = cpus > 0 && pool->threads <= (uint64_t)cpus;
    atomic_init(&pool->job, 0);
    atomic_init(&pool->finished, 0);
    atomic_init(&pool->stopping, false);
    pthread_mutex_init(&pool->run_mutex, NULL);
    pthread_mutex_init(&pool->mutex, NULL);
    pthread_cond_init(&pool->start, NULL);
    pthread_cond_init(&pool->done, NULL);
    pool->workers = calloc(pool->threads, sizeof *pool->workers);
    if (!pool->workers) {
        sim_pool_destroy(pool);
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    }
    for (uint32_t w = 0; w + 1 < pool->threads; w++) {
        worker_arg *arg = malloc(sizeof *arg);
        if (arg) *arg = (worker_arg){pool, w + 1};
        if (!arg || pthread_create(&pool->workers[w], NULL, worker_main, arg) != 0) {
            free(arg);
            pool->threads = w + 1; /* only the started workers get joined */
            sim_pool_destroy(pool);
            return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "cannot start simulator thread %u", w + 1);
        }
    }
    *out_pool = pool;
    return LM_OK;
}

void sim_pool_destroy(sim_pool *pool) {
    if (!pool) return;
    pthread_mutex_lock(&pool->mutex);
    atomic_store(&pool->stopping, true);
    pthread_cond_broadcast(&pool->start);
    pthread_mutex_unlock(&pool->mutex);
    for (uint32_t w = 0; pool->workers && w + 1 < pool->threads; w++)
        pthread_join(pool->workers[w], NULL);
    free(pool->workers);
    pthread_cond_destroy(&pool->done);
    pthread_cond_destroy(&pool->start);
    pthread_mutex_destroy(&pool->mutex);
    pthread_mutex_destroy(&pool->run_mutex);
    free(pool);
}

uint32_t sim_pool_threads(const sim_pool *pool) {
    return pool->threads;
}

bool sim_pool_polls(const sim_pool *pool) {
    return pool->spin;
}

/* Publishes the job, runs index 0, closes an offered job, and waits for
 * the workers that run it. */
static void run_job(sim_pool *pool, void (*fn)(void *ctx, uint32_t index), void *ctx, uint32_t n,
                    bool offered) {
    if (n == 0) return;
    pthread_mutex_lock(&pool->run_mutex);
    if (n > 1) {
        pthread_mutex_lock(&pool->mutex);
        pool->fn = fn;
        pool->ctx = ctx;
        atomic_store(&pool->finished, 0);
        uint64_t gen = job_gen(atomic_load(&pool->job)) + 1;
        atomic_store_explicit(&pool->job, gen << JOB_GEN_SHIFT | (offered ? JOB_OFFERED : 0) | n,
                              memory_order_release);
        pthread_cond_broadcast(&pool->start);
        pthread_mutex_unlock(&pool->mutex);
    }
    fn(ctx, 0);
    if (n > 1) {
        uint32_t all = n - 1;
        if (offered) all = job_claims(atomic_fetch_or(&pool->job, JOB_CLOSED));
        for (sim_spin s = sim_spin_start(pool->spin && all); sim_spin_more(&s);)
            if (atomic_load_explicit(&pool->finished, memory_order_acquire) >= all) break;
        if (atomic_load(&pool->finished) < all) {
            pthread_mutex_lock(&pool->mutex);
            while (atomic_load(&pool->finished) < all)
                pthread_cond_wait(&pool->done, &pool->mutex);
            pthread_mutex_unlock(&pool->mutex);
        }
    }
    pthread_mutex_unlock(&pool->run_mutex);
}

void sim_pool_run(sim_pool *pool, void (*fn)(void *ctx, uint32_t index), void *ctx, uint32_t n) {
    run_job(pool, fn, ctx, n, false);
}

void sim_pool_offer(sim_pool *pool, void (*fn)(void *ctx, uint32_t index), void *ctx, uint32_t n) {
    run_job(pool, fn, ctx, n, true);
}
