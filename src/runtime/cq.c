#include "runtime/cq.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/error.h"
#include "base/thread.h"
#include "runtime/device.h"
#include "runtime/profile.h"
#include "runtime/program.h"

/* Ring size: enough to keep the dispatcher busy, small enough that a runaway
 * producer is throttled early. */
#define CQ_RING_CAPACITY 1024u

typedef struct cq_entry {
    rt_cmd cmd;
    rt_cmd_done_fn done;
    void *done_arg;
    /* Launches: the label current when enqueued, and whether to time it
     * (profiling was on then) as a launch of which program. */
    uint32_t label, program;
    bool timed;
} cq_entry;

struct lm_command_queue {
    lm_device *device;
    uint32_t id;
    pthread_t thread;
    pthread_mutex_t mutex;
    pthread_cond_t not_empty, not_full, progress;
    cq_entry ring[CQ_RING_CAPACITY];
    uint32_t head, count;
    uint64_t pushed, completed; /* sequence numbers; command n has seq n (1-based) */
    /* The smallest seq a thread sleeping on `progress` waits for (UINT64_MAX:
     * none): the dispatcher wakes the waiters when it is reached, not at
     * every command, which would wake a thread waiting for the end of a long
     * run once per command. */
    uint64_t wake_at;
    /* A thread is running the head command: the dispatcher, or a thread
     * waiting for the queue that found it idle (see wait_locked). */
    bool busy;
    bool stopping;
    /* The first error since the last report, and how many commands it cost. */
    lm_status error;
    char error_message[ERR_MESSAGE_MAX];
    uint64_t skipped;
};

/* Runs the head command and counts it complete. Called locked, with the
 * queue not empty and not busy; unlocks while the command runs. */
static void run_head_locked(lm_command_queue *cq) {
    rt_backend *backend = cq->device->backend;
    cq_entry entry = cq->ring[cq->head];
    bool skip = cq->error != LM_OK;
    cq->busy = true;
    pthread_mutex_unlock(&cq->mutex);

    lm_status st = LM_OK;
    char message[ERR_MESSAGE_MAX];
    if (entry.cmd.op == RT_CMD_WAIT_QUEUE) {
        /* Not the device's business: this queue waits on the host side,
         * and even after an error (the other queue must move on). */
        rt_cq_wait_completed(entry.cmd.u.wait.queue, entry.cmd.u.wait.seq);
    } else if (entry.cmd.op == RT_CMD_MARKER) {
    } else if (!skip) {
        double t0 = entry.timed ? rt_profile_now() : 0;
        uint64_t instructions = 0;
        st = backend->ops->execute(backend, cq->id, &entry.cmd, &instructions);
        if (st) err_copy(message, sizeof message);
        if (entry.timed)
            rt_profile_add(cq->device->profile, entry.label, entry.program, rt_profile_now() - t0,
                           instructions);
    }
    /* Release before counting the command complete, so a finished queue
     * holds nothing. */
    if (entry.done) entry.done(entry.done_arg);

    pthread_mutex_lock(&cq->mutex);
    cq->busy = false;
    if (skip) {
        cq->skipped++;
    } else if (st) {
        cq->error = st;
        snprintf(cq->error_message, sizeof cq->error_message, "%s", message);
    }
    cq->head = (cq->head + 1) % CQ_RING_CAPACITY;
    cq->count--;
    cq->completed++;
    pthread_cond_signal(&cq->not_full);
    if (cq->completed >= cq->wake_at) {
        cq->wake_at = UINT64_MAX;
        pthread_cond_broadcast(&cq->progress);
    }
}

/* The dispatcher: runs the commands in order, those a waiting thread does
 * not run first. */
static void *dispatcher_main(void *arg) {
    lm_command_queue *cq = arg;
    thread_mark_batch();
    pthread_mutex_lock(&cq->mutex);
    for (;;) {
        while ((cq->count == 0 || cq->busy) && !(cq->stopping && cq->count == 0))
            pthread_cond_wait(&cq->not_empty, &cq->mutex);
        if (cq->count == 0) break;
        run_head_locked(cq);
    }
    pthread_mutex_unlock(&cq->mutex);
    return NULL;
}

lm_status rt_cq_create(lm_device *device, uint32_t id, lm_command_queue **out_cq) {
    lm_command_queue *cq = calloc(1, sizeof *cq);
    if (!cq) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    cq->device = device;
    cq->id = id;
    cq->wake_at = UINT64_MAX;
    pthread_mutex_init(&cq->mutex, NULL);
    pthread_cond_init(&cq->not_empty, NULL);
    pthread_cond_init(&cq->not_full, NULL);
    pthread_cond_init(&cq->progress, NULL);
    int rc = pthread_create(&cq->thread, NULL, dispatcher_main, cq);
    if (rc != 0) {
        pthread_cond_destroy(&cq->progress);
        pthread_cond_destroy(&cq->not_full);
        pthread_cond_destroy(&cq->not_empty);
        pthread_mutex_destroy(&cq->mutex);
        free(cq);
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY,
                       "cannot start the dispatcher thread of command queue %u", id);
    }
    *out_cq = cq;
    return LM_OK;
}

/* Hands the kept error to the caller's thread and clears it. Called locked. */
static lm_status take_error_locked(lm_command_queue *cq) {
    if (cq->error == LM_OK) return LM_OK;
    lm_status st = cq->error;
    if (cq->skipped)
        err_set(st, "%s (%llu later command%s on queue %u skipped)", cq->error_message,
                (unsigned long long)cq->skipped, cq->skipped == 1 ? "" : "s", cq->id);
    else
        err_set(st, "%s", cq->error_message);
    cq->error = LM_OK;
    cq->skipped = 0;
    return st;
}

lm_status rt_cq_destroy(lm_command_queue *cq) {
    if (!cq) return LM_OK;
    pthread_mutex_lock(&cq->mutex);
    cq->stopping = true;
    pthread_cond_signal(&cq->not_empty);
    pthread_mutex_unlock(&cq->mutex);
    pthread_join(cq->thread, NULL);
    lm_status st = take_error_locked(cq); /* the thread is gone: no lock needed */
    pthread_cond_destroy(&cq->progress);
    pthread_cond_destroy(&cq->not_full);
    pthread_cond_destroy(&cq->not_empty);
    pthread_mutex_destroy(&cq->mutex);
    free(cq);
    return st;
}

/* A launch's program as the profile names it: its kernels' names joined by
 * " + " (the kernels of every core, in the program's order); a trace replay
 * is "trace". */
static uint32_t program_of(rt_profile *profile, const rt_cmd *cmd) {
    if (cmd->op == RT_CMD_TRACE) return rt_profile_program(profile, "trace");
    const rt_launch *launch = cmd->u.program.launch;
    char name[LM_MAX_LAUNCH_LABEL + 1] = "";
    size_t len = 0;
    for (uint32_t i = 0; i < launch->kernel_count && len < sizeof name - 1; i++) {
        const char *kernel = launch->kernels[i].name ? launch->kernels[i].name : "kernel";
        int n = snprintf(name + len, sizeof name - len, "%s%s", i ? " + " : "", kernel);
        if (n < 0) break;
        len += (size_t)n;
    }
    return rt_profile_program(profile, name);
}

lm_status rt_cq_push(lm_command_queue *cq, const rt_cmd *cmd, rt_cmd_done_fn done, void *done_arg,
                     uint64_t *out_seq) {
    /* Named before taking the queue's lock: interning takes the profile's. */
    rt_profile *profile = cq->device->profile;
    bool launch = cmd->op == RT_CMD_PROGRAM || cmd->op == RT_CMD_TRACE;
    bool timed = launch && rt_profile_enabled(profile);
    uint32_t program = timed ? program_of(profile, cmd) : 0;
    pthread_mutex_lock(&cq->mutex);
    while (cq->count == CQ_RING_CAPACITY)
        pthread_cond_wait(&cq->not_full, &cq->mutex);
    cq_entry *e = &cq->ring[(cq->head + cq->count) % CQ_RING_CAPACITY];
    e->cmd = *cmd;
    e->done = done;
    e->done_arg = done_arg;
    e->label = launch ? rt_profile_current(profile) : 0;
    e->program = program;
    e->timed = timed;
    cq->count++;
    uint64_t seq = ++cq->pushed;
    pthread_cond_signal(&cq->not_empty);
    pthread_mutex_unlock(&cq->mutex);
    if (out_seq) *out_seq = seq;
    return LM_OK;
}

/* Waits until command `seq` has completed. Called locked. A command the
 * dispatcher has not started yet is run here, on the waiting thread: the
 * dispatcher sleeps when the queue runs dry, and waking it, then being woken
 * by it, costs more than a small command takes. Whatever is left after
 * `seq` goes back to the dispatcher. */
static void wait_locked(lm_command_queue *cq, uint64_t seq) {
    while (cq->completed < seq) {
        if (!cq->busy && cq->count > 0) {
            run_head_locked(cq);
            continue;
        }
        if (seq < cq->wake_at) cq->wake_at = seq;
        pthread_cond_wait(&cq->progress, &cq->mutex);
    }
    if (!cq->busy && cq->count > 0) pthread_cond_signal(&cq->not_empty);
}

lm_status rt_cq_wait(lm_command_queue *cq, uint64_t seq) {
    pthread_mutex_lock(&cq->mutex);
    wait_locked(cq, seq);
    lm_status st = take_error_locked(cq);
    pthread_mutex_unlock(&cq->mutex);
    return st;
}

void rt_cq_wait_completed(lm_command_queue *cq, uint64_t seq) {
    pthread_mutex_lock(&cq->mutex);
    wait_locked(cq, seq);
    pthread_mutex_unlock(&cq->mutex);
}

bool rt_cq_completed(lm_command_queue *cq, uint64_t seq) {
    pthread_mutex_lock(&cq->mutex);
    bool done = cq->completed >= seq;
    pthread_mutex_unlock(&cq->mutex);
    return done;
}

lm_status rt_event_record(lm_command_queue *cq, lm_event *out_event) {
    rt_cmd cmd = {.op = RT_CMD_MARKER};
    uint64_t seq;
    lm_status st = rt_cq_push(cq, &cmd, NULL, NULL, &seq);
    if (!st) *out_event = (lm_event){cq, seq, atomic_fetch_add(&cq->device->events, 1) + 1};
    return st;
}

lm_status rt_event_wait(lm_command_queue *cq, lm_event event) {
    if (event.cq == cq) return LM_OK; /* on its own queue, order already holds */
    rt_cmd cmd = {.op = RT_CMD_WAIT_QUEUE, .u.wait = {event.cq, event.seq}};
    return rt_cq_push(cq, &cmd, NULL, NULL, NULL);
}

lm_status rt_cq_finish(lm_command_queue *cq) {
    pthread_mutex_lock(&cq->mutex);
    uint64_t seq = cq->pushed;
    pthread_mutex_unlock(&cq->mutex);
    return rt_cq_wait(cq, seq);
}

lm_device *rt_cq_device(const lm_command_queue *cq) {
    return cq->device;
}
uint32_t rt_cq_id(const lm_command_queue *cq) {
    return cq->id;
}
