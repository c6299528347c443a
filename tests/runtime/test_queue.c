/* Command queues: data round trips, ordering (also when waiting threads run
 * commands themselves), device errors, bad arguments, how often a waiting
 * host thread is woken. */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include "lightmetal/lightmetal.h"
#include "lm_test.h"
#include "runtime/cq.h"

static lm_device *open_small(void) {
    lm_device_options o;
    lm_device_options_init(&o);
    o.grid_x = 4;
    o.grid_y = 2;
    o.dram_banks = 6;
    o.dram_bank_size = 16 << 20;
    lm_device *dev = NULL;
    return lm_device_open(&o, &dev) ? NULL : dev;
}

static lm_status make_buffer(lm_device *dev, lm_buffer_type type, uint64_t size, uint64_t page,
                             lm_buffer *out) {
    lm_buffer_config c;
    lm_buffer_config_init(&c);
    c.type = type;
    c.size = size;
    c.page_size = page;
    return lm_create_buffer(dev, &c, out);
}

static void fill(uint8_t *p, size_t n, uint32_t seed) {
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (uint8_t)(seed >> 16);
    }
}

/* Blocking round trips on both queues, both memories, padded page strides. */
static void test_round_trip(void) {
    lm_device *dev = open_small();
    CHECK(dev);
    static uint8_t src[100 * 1000], dst[100 * 1000];
    const lm_buffer_type types[] = {LM_BUFFER_DRAM, LM_BUFFER_L1};
    const uint64_t pages[] = {100, 1000, 4000, 100000};
    for (int q = 0; q < 2; q++)
        for (int t = 0; t < 2; t++)
            for (int p = 0; p < 4; p++) {
                lm_command_queue *cq = lm_device_command_queue(dev, (uint32_t)q);
                lm_buffer b;
                CHECK_OK(make_buffer(dev, types[t], sizeof src, pages[p], &b));
                fill(src, sizeof src, (uint32_t)(q * 100 + t * 10 + p));
                memset(dst, 0, sizeof dst);
                CHECK_OK(lm_enqueue_write_buffer(cq, b, src, true));
                CHECK_OK(lm_enqueue_read_buffer(cq, b, dst, true));
                CHECK(memcmp(src, dst, sizeof src) == 0);
                CHECK_OK(lm_deallocate_buffer(b));
            }
    CHECK_OK(lm_device_close(dev));
}

/* Big transfers are shared out over the simulator's threads: still exact. */
static void test_big_transfers(void) {
    lm_device *dev = open_small();
    CHECK(dev);
    enum { SIZE = 9 * 1000 * 1024 }; /* above the parallel threshold, odd page count */
    uint8_t *src = malloc(SIZE), *dst = malloc(SIZE);
    CHECK(src && dst);
    fill(src, SIZE, 77);
    for (int t = 0; t < 2; t++) {
        lm_buffer b;
        CHECK_OK(
            make_buffer(dev, t ? LM_BUFFER_L1 : LM_BUFFER_DRAM, t ? 800 * 1024 : SIZE, 1024, &b));
        uint64_t n = t ? 800 * 1024 : SIZE;
        memset(dst, 0, n);
        CHECK_OK(lm_enqueue_write_buffer(lm_device_command_queue(dev, t), b, src, false));
        CHECK_OK(lm_enqueue_read_buffer(lm_device_command_queue(dev, t), b, dst, true));
        CHECK(memcmp(src, dst, n) == 0);
        CHECK_OK(lm_deallocate_buffer(b));
    }
    free(src);
    free(dst);
    CHECK_OK(lm_device_close(dev));
}

/* Non-blocking commands run in order; the last write wins. */
static void test_non_blocking_order(void) {
    lm_device *dev = open_small();
    CHECK(dev);
    lm_command_queue *cq = lm_device_command_queue(dev, 1);
    enum { N = 3000, SIZE = 4096 };
    static uint8_t versions[N][SIZE];
    static uint8_t reads[N][SIZE];
    lm_buffer b;
    CHECK_OK(make_buffer(dev, LM_BUFFER_DRAM, SIZE, 512, &b));
    for (int i = 0; i < N; i++) {
        fill(versions[i], SIZE, (uint32_t)i);
        CHECK_OK(lm_enqueue_write_buffer(cq, b, versions[i], false));
        CHECK_OK(lm_enqueue_read_buffer(cq, b, reads[i], false));
    }
    CHECK_OK(lm_finish(cq));
    for (int i = 0; i < N; i++)
        CHECK(memcmp(versions[i], reads[i], SIZE) == 0);
    CHECK_OK(lm_finish(cq)); /* finishing an idle queue is fine */
    CHECK_OK(lm_device_close(dev));
}

/* A thread waiting for a command runs the queue's commands itself when the
 * dispatcher is not running one, and hands back those after the one it
 * waits for. Blocking reads between queued writes see exactly the writes
 * before them; queue 1, waiting on the host for an event of queue 0, has its
 * wait run by a thread waiting on queue 1, which then runs queue 0's
 * commands; and commands queued after the last wait complete with no thread
 * waiting for them. */
static void test_waiters_run_commands_in_order(void) {
    lm_device *dev = open_small();
    CHECK(dev);
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_command_queue *cq1 = lm_device_command_queue(dev, 1);
    enum { N = 400, SIZE = 2048 };
    static uint8_t versions[N][SIZE];
    uint8_t out[SIZE];
    lm_buffer b;
    CHECK_OK(make_buffer(dev, LM_BUFFER_DRAM, SIZE, 256, &b));
    for (int i = 0; i < N; i++) {
        fill(versions[i], SIZE, (uint32_t)i + 100);
        CHECK_OK(lm_enqueue_write_buffer(cq, b, versions[i], false));
        if (i % 7 == 3) {
            CHECK_OK(lm_enqueue_read_buffer(cq, b, out, true));
            CHECK(memcmp(out, versions[i], SIZE) == 0);
        }
        if (i % 11 == 5) {
            lm_event e;
            CHECK_OK(lm_enqueue_record_event(cq, &e));
            CHECK_OK(lm_enqueue_wait_for_event(cq1, e));
            CHECK_OK(lm_enqueue_read_buffer(cq1, b, out, true));
            CHECK(memcmp(out, versions[i], SIZE) == 0);
        }
    }
    /* Rounds of: the dispatcher asleep (the queue idle a while), commands
     * queued, the first two waited for at once -- the waiting thread usually
     * takes them before the dispatcher is awake -- and the rest left
     * queued, to complete with no thread waiting for them. */
    enum { BIG = 8 << 20 };
    uint8_t *big = calloc(1, BIG);
    CHECK(big);
    lm_buffer bb;
    CHECK_OK(make_buffer(dev, LM_BUFFER_DRAM, BIG, 4096, &bb));
    for (int r = 0; r < 30; r++) {
        CHECK_OK(lm_finish(cq));
        usleep(2000);
        lm_event mid, last;
        /* long enough for the dispatcher to wake while it runs */
        CHECK_OK(lm_enqueue_write_buffer(cq, bb, big, false));
        CHECK_OK(lm_enqueue_write_buffer(cq, b, versions[r], false));
        CHECK_OK(lm_enqueue_record_event(cq, &mid));
        for (int i = 0; i < 20; i++)
            CHECK_OK(lm_enqueue_write_buffer(cq, b, versions[r + i], false));
        CHECK_OK(lm_enqueue_record_event(cq, &last));
        CHECK_OK(lm_event_synchronize(mid));
        bool done = false;
        /* A minute is a safety net against a hang, not a timing assumption. */
        for (int polls = 0; polls < 60000 && !done; polls++) {
            CHECK_OK(lm_event_query(last, &done));
            if (!done) usleep(1000);
        }
        CHECK(done);
        if (!done) break;
    }
    free(big);
    CHECK_OK(lm_enqueue_read_buffer(cq, b, out, true));
    CHECK(memcmp(out, versions[29 + 19], SIZE) == 0); /* the last round's last */
    CHECK_OK(lm_device_close(dev));
}

static void note_policy(void *arg) {
    *(int *)arg = sched_getscheduler(0);
}

/* The dispatcher runs as batch work: woken by a command, it does not
 * preempt the host thread that queued it. (The command completes with no
 * thread waiting, so the dispatcher is the one that runs it.) */
static void test_dispatcher_is_batch(void) {
    lm_device *dev = open_small();
    CHECK(dev);
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    int policy = -2;
    uint64_t seq = 0;
    rt_cmd cmd = {.op = RT_CMD_MARKER};
    CHECK_OK(rt_cq_push(cq, &cmd, note_policy, &policy, &seq));
    for (int polls = 0; polls < 60000 && !rt_cq_completed(cq, seq); polls++)
        usleep(1000); /* a safety net against a hang, not a timing assumption */
    CHECK(rt_cq_completed(cq, seq));
#ifdef SCHED_BATCH
    CHECK(policy == SCHED_BATCH);
#else
    CHECK(policy != -2);
#endif
    CHECK_OK(lm_device_close(dev));
}

/* The times the calling thread has gone to sleep (voluntary context
 * switches). */
static long thread_sleeps(void) {
    struct rusage ru;
    return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_nvcsw : -1;
}

/* A thread waiting for the last of many queued commands sleeps until that
 * one completes, not once per command: the dispatcher wakes waiters when
 * the command they wait for completes. (Going to sleep a few times is
 * allowed: taking the queue's lock may sleep too.) */
static void test_waiter_woken_once(void) {
    lm_device *dev = open_small();
    CHECK(dev);
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    enum { N = 600, SIZE = 256 * 1024 };
    uint8_t *data = malloc(SIZE);
    CHECK(data);
    fill(data, SIZE, 7);
    lm_buffer b;
    CHECK_OK(make_buffer(dev, LM_BUFFER_DRAM, SIZE, 4096, &b));
    for (int i = 0; i < N; i++)
        CHECK_OK(lm_enqueue_write_buffer(cq, b, data, false));
    long before = thread_sleeps();
    CHECK_OK(lm_finish(cq));
    long sleeps = thread_sleeps() - before;
    CHECK(before >= 0);
    if (sleeps > 20) printf("  lm_finish slept %ld times for %d commands\n", sleeps, N);
    CHECK(sleeps <= 20);
    free(data);
    CHECK_OK(lm_device_close(dev));
}

static void inject_fault(lm_command_queue *cq, const char *message) {
    rt_cmd cmd = {.op = RT_CMD_FAULT, .u.fault.message = message};
    rt_cq_push(cq, &cmd, NULL, NULL, NULL);
}

/* A device error reaches the next lm_finish; commands behind it are skipped;
 * the queue works normally afterwards; the other queue is unaffected. */
static void test_device_error_reported_by_finish(void) {
    lm_device *dev = open_small();
    CHECK(dev);
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_command_queue *other = lm_device_command_queue(dev, 1);
    uint8_t a[1024], b[1024], out[1024];
    fill(a, sizeof a, 1);
    fill(b, sizeof b, 2);
    lm_buffer buf, buf2;
    CHECK_OK(make_buffer(dev, LM_BUFFER_DRAM, sizeof a, 256, &buf));
    CHECK_OK(make_buffer(dev, LM_BUFFER_DRAM, sizeof a, 256, &buf2));
    CHECK_OK(lm_enqueue_write_buffer(cq, buf, a, false));
    inject_fault(cq, "core (1,2) DM0 kernel 'k': illegal instruction at pc 0x40000010");
    CHECK_OK(lm_enqueue_write_buffer(cq, buf, b, false));    /* will be skipped */
    CHECK_OK(lm_enqueue_write_buffer(other, buf2, a, true)); /* unaffected */
    CHECK_FAILS(lm_finish(cq), LM_ERR_DEVICE_FAULT,
                "lm_finish: core (1,2) DM0 kernel 'k': illegal instruction at pc 0x40000010 (1 "
                "later command on queue 0 skipped)");
    CHECK_OK(lm_finish(cq)); /* reported once */
    CHECK_OK(lm_enqueue_read_buffer(cq, buf, out, true));
    CHECK(memcmp(out, a, sizeof a) == 0); /* the skipped write never ran */
    CHECK_OK(lm_enqueue_write_buffer(cq, buf, b, true));
    CHECK_OK(lm_enqueue_read_buffer(cq, buf, out, true));
    CHECK(memcmp(out, b, sizeof b) == 0);
    CHECK_OK(lm_device_close(dev));
}

static void test_device_error_reported_by_blocking_call(void) {
    lm_device *dev = open_small();
    CHECK(dev);
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    uint8_t data[256] = {1};
    lm_buffer buf;
    CHECK_OK(make_buffer(dev, LM_BUFFER_L1, sizeof data, 32, &buf));
    inject_fault(cq, "watchdog");
    CHECK_FAILS(lm_enqueue_read_buffer(cq, buf, data, true), LM_ERR_DEVICE_FAULT,
                "lm_enqueue_read_buffer: watchdog (1 later command");
    CHECK_OK(lm_enqueue_read_buffer(cq, buf, data, true));
    CHECK(data[0] == 0);
    /* An error nobody reported is returned by close. */
    inject_fault(cq, "late fault");
    CHECK_FAILS(lm_device_close(dev), LM_ERR_DEVICE_FAULT,
                "lm_device_close: unreported device error: late fault");
}

static void test_bad_arguments(void) {
    lm_device *dev = open_small(), *dev2 = open_small();
    CHECK(dev && dev2);
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_buffer buf, foreign;
    CHECK_OK(make_buffer(dev, LM_BUFFER_DRAM, 64, 64, &buf));
    CHECK_OK(make_buffer(dev2, LM_BUFFER_DRAM, 64, 64, &foreign));
    uint8_t data[64];
    CHECK_FAILS(lm_enqueue_write_buffer(NULL, buf, data, true), LM_ERR_INVALID_HANDLE,
                "lm_enqueue_write_buffer: cq is NULL");
    CHECK_FAILS(lm_enqueue_read_buffer(NULL, buf, data, true), LM_ERR_INVALID_HANDLE,
                "lm_enqueue_read_buffer: cq is NULL");
    CHECK_FAILS(lm_enqueue_write_buffer(cq, buf, NULL, true), LM_ERR_INVALID_ARGUMENT,
                "src is NULL");
    CHECK_FAILS(lm_enqueue_read_buffer(cq, buf, NULL, true), LM_ERR_INVALID_ARGUMENT,
                "dst is NULL");
    CHECK_FAILS(lm_enqueue_write_buffer(cq, foreign, data, true), LM_ERR_INVALID_ARGUMENT,
                "belongs to another device");
    lm_buffer null_buffer = {0};
    CHECK_FAILS(lm_enqueue_read_buffer(cq, null_buffer, data, true), LM_ERR_INVALID_HANDLE,
                "buffer handle is null");
    CHECK_FAILS(lm_finish(NULL), LM_ERR_INVALID_HANDLE, "lm_finish: cq is NULL");
    /* Nothing was left pinned: both buffers free cleanly. */
    CHECK_OK(lm_deallocate_buffer(foreign));
    CHECK_OK(lm_deallocate_buffer(buf));
    CHECK_OK(lm_device_close(dev));
    CHECK_OK(lm_device_close(dev2));
}

/* Deallocating waits for queued commands that use the buffer, so a buffer
 * allocated right after in the same place cannot be overwritten by them. */
static void test_deallocate_waits_for_queued_commands(void) {
    lm_device *dev = open_small();
    CHECK(dev);
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    enum { SIZE = 1 << 20, N = 16 };
    uint8_t *src = malloc(SIZE), *zeros = calloc(1, SIZE), *out = malloc(SIZE);
    CHECK(src && zeros && out);
    fill(src, SIZE, 5);
    lm_buffer a, b;
    CHECK_OK(make_buffer(dev, LM_BUFFER_DRAM, SIZE, 2048, &a));
    for (int i = 0; i < N; i++)
        CHECK_OK(lm_enqueue_write_buffer(cq, a, src, false));
    CHECK_OK(lm_deallocate_buffer(a));
    CHECK_OK(make_buffer(dev, LM_BUFFER_DRAM, SIZE, 2048, &b)); /* same address as a */
    CHECK_OK(lm_enqueue_write_buffer(lm_device_command_queue(dev, 1), b, zeros, true));
    CHECK_OK(lm_finish(cq));
    CHECK_OK(lm_enqueue_read_buffer(cq, b, out, true));
    CHECK(memcmp(out, zeros, SIZE) == 0);
    free(src);
    free(zeros);
    free(out);
    CHECK_OK(lm_device_close(dev));
}

int main(void) {
    TEST_RUN(test_round_trip);
    TEST_RUN(test_non_blocking_order);
    TEST_RUN(test_waiters_run_commands_in_order);
    TEST_RUN(test_dispatcher_is_batch);
    TEST_RUN(test_waiter_woken_once);
    TEST_RUN(test_big_transfers);
    TEST_RUN(test_device_error_reported_by_finish);
    TEST_RUN(test_device_error_reported_by_blocking_call);
    TEST_RUN(test_bad_arguments);
    TEST_RUN(test_deallocate_waits_for_queued_commands);
    return test_summary();
}
