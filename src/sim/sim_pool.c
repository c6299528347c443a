#include "sim/sim_pool.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "base/error.h"

struct sim_pool {
    uint32_t threads;
    pthread_t *workers;        /* threads - 1 of them */
    pthread_mutex_t run_mutex; /* one job at a time */
    pthread_mutex_t mutex;
    pthread_cond_t start, done;
    /* The current job. Worker w runs index w + 1 when w + 1 < n. */
    void (*fn)(void *ctx, uint32_t index);
    void *ctx;
    uint32_t n;
    uint64_t generation;
    uint32_t finished;
    bool stopping;
};

typedef struct worker_arg {
    sim_pool *pool;
    uint32_t index;
} worker_arg;

static void *worker_main(void *p) {
    worker_arg arg = *(worker_arg *)p;
    free(p);
    sim_pool *pool = arg.pool;
    uint64_t seen = 0;
    pthread_mutex_lock(&pool->mutex);
    for (;;) {
        while (pool->generation == seen && !pool->stopping)
            pthread_cond_wait(&pool->start, &pool->mutex);
        if (pool->stopping) break;
        seen = pool->generation;
        if (arg.index >= pool->n) continue;
        void (*fn)(void *, uint32_t) = pool->fn;
        void *ctx = pool->ctx;
        pthread_mutex_unlock(&pool->mutex);
        fn(ctx, arg.index);
        pthread_mutex_lock(&pool->mutex);
        if (++pool->finished == pool->n - 1) pthread_cond_signal(&pool->done);
    }
    pthread_mutex_unlock(&pool->mutex);
    return NULL;
}

lm_status sim_pool_create(uint32_t threads, sim_pool **out_pool) {
    sim_pool *pool = calloc(1, sizeof *pool);
    if (!pool) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    pool->threads = threads ? threads : 1;
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
    pool->stopping = true;
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

void sim_pool_run(sim_pool *pool, void (*fn)(void *ctx, uint32_t index), void *ctx, uint32_t n) {
    if (n == 0) return;
    pthread_mutex_lock(&pool->run_mutex);
    if (n > 1) {
        pthread_mutex_lock(&pool->mutex);
        pool->fn = fn;
        pool->ctx = ctx;
        pool->n = n;
        pool->finished = 0;
        pool->generation++;
        pthread_cond_broadcast(&pool->start);
        pthread_mutex_unlock(&pool->mutex);
    }
    fn(ctx, 0);
    if (n > 1) {
        pthread_mutex_lock(&pool->mutex);
        while (pool->finished < n - 1)
            pthread_cond_wait(&pool->done, &pool->mutex);
        pthread_mutex_unlock(&pool->mutex);
    }
    pthread_mutex_unlock(&pool->run_mutex);
}
