/* Several host threads write and read distinct buffers through both queues at
 * once, allocating and freeing as they go; every byte is checked. */
#include <pthread.h>

#include "lightmetal/lightmetal.h"
#include "lm_test.h"

enum { THREADS = 8, ROUNDS = 40, MAX_SIZE = 64 * 1024 };

typedef struct worker {
    lm_device *dev;
    int index;
    int errors;
    char first_error[512];
} worker;

static void fail(worker *w, const char *what) {
    if (!w->errors++)
        snprintf(w->first_error, sizeof w->first_error, "thread %d: %s (%s)", w->index, what,
                 lm_last_error());
}

static void *worker_main(void *arg) {
    worker *w = arg;
    uint8_t *src = malloc(MAX_SIZE), *dst = malloc(MAX_SIZE);
    uint32_t s = 1000u + (uint32_t)w->index;
    for (int r = 0; r < ROUNDS && src && dst; r++) {
        s = s * 1664525u + 1013904223u;
        uint64_t page = 32u << (s >> 29); /* 32 .. 4096 */
        uint64_t size = page * (1 + (s >> 8) % (MAX_SIZE / page));
        lm_buffer_config c;
        lm_buffer_config_init(&c);
        c.type = (s >> 4) & 1 ? LM_BUFFER_L1 : LM_BUFFER_DRAM;
        c.size = size;
        c.page_size = page;
        lm_buffer b;
        if (lm_create_buffer(w->dev, &c, &b)) {
            fail(w, "create");
            continue;
        }
        for (uint64_t i = 0; i < size; i++)
            src[i] = (uint8_t)(s + i * 31 + (uint64_t)w->index);
        memset(dst, 0, size);
        lm_command_queue *cq = lm_device_command_queue(w->dev, (uint32_t)(r + w->index) % 2);
        int blocking = (s >> 5) & 1;
        if (lm_enqueue_write_buffer(cq, b, src, blocking)) fail(w, "write");
        if (lm_enqueue_read_buffer(cq, b, dst, blocking)) fail(w, "read");
        if (!blocking && lm_finish(cq)) fail(w, "finish");
        if (memcmp(src, dst, size) != 0) fail(w, "data mismatch");
        if (lm_deallocate_buffer(b)) fail(w, "deallocate");
    }
    free(src);
    free(dst);
    return NULL;
}

static void test_threads_through_two_queues(void) {
    lm_device *dev;
    CHECK_OK(lm_device_open(NULL, &dev));
    worker workers[THREADS];
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++) {
        workers[i] = (worker){.dev = dev, .index = i};
        CHECK(pthread_create(&threads[i], NULL, worker_main, &workers[i]) == 0);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    for (int i = 0; i < THREADS; i++) {
        if (workers[i].errors) printf("  %s\n", workers[i].first_error);
        CHECK(workers[i].errors == 0);
    }
    CHECK_OK(lm_device_close(dev));
}

int main(void) {
    TEST_RUN(test_threads_through_two_queues);
    return test_summary();
}
