/* Public command queue API: argument validation, then the runtime. */
#include "base/error.h"
#include "lightmetal/lm_queue.h"
#include "runtime/buffer.h"
#include "runtime/cq.h"
#include "runtime/trace.h"

/* Resolves and pins `buffer` for a command on `cq`; checks it lives on cq's device. */
static lm_status use_buffer(const char *fn, lm_command_queue *cq, lm_buffer buffer,
                            rt_buffer **out) {
    lm_status st = rt_buffer_use(buffer, out);
    if (st) return err_prefix(st, "%s", fn);
    if ((*out)->device != rt_cq_device(cq)) {
        rt_buffer_unuse(*out);
        return err_set(LM_ERR_INVALID_ARGUMENT,
                       "%s: the buffer belongs to another device than the queue", fn);
    }
    return LM_OK;
}

/* A trace must not depend on host data: no transfers on a capturing queue. */
static lm_status check_not_capturing(const char *fn, lm_command_queue *cq) {
    rt_trace *t = rt_trace_capturing(cq);
    if (!t) return LM_OK;
    return err_set(LM_ERR_INVALID_STATE,
                   "%s: not allowed while command queue %u is capturing a trace", fn, rt_cq_id(cq));
}

static void unpin(void *buffer) { rt_buffer_unuse(buffer); }

static lm_status submit(const char *fn, lm_command_queue *cq, const rt_cmd *cmd, rt_buffer *pinned,
                        bool blocking) {
    uint64_t seq;
    lm_status st = rt_cq_push(cq, cmd, unpin, pinned, &seq);
    if (!st && blocking) st = rt_cq_wait(cq, seq);
    return st ? err_prefix(st, "%s", fn) : LM_OK;
}

lm_status lm_enqueue_write_buffer(lm_command_queue *cq, lm_buffer buffer, const void *src,
                                  bool blocking) {
    const char *fn = "lm_enqueue_write_buffer";
    if (!cq) return err_set(LM_ERR_INVALID_HANDLE, "%s: cq is NULL", fn);
    if (!src) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: src is NULL", fn);
    lm_status st = check_not_capturing(fn, cq);
    if (st) return st;
    rt_buffer *b;
    st = use_buffer(fn, cq, buffer, &b);
    if (st) return st;
    rt_cmd cmd = {.op = RT_CMD_WRITE_BUFFER, .u.write = {.place = b->place, .src = src}};
    return submit(fn, cq, &cmd, b, blocking);
}

lm_status lm_enqueue_read_buffer(lm_command_queue *cq, lm_buffer buffer, void *dst,
                                 bool blocking) {
    const char *fn = "lm_enqueue_read_buffer";
    if (!cq) return err_set(LM_ERR_INVALID_HANDLE, "%s: cq is NULL", fn);
    if (!dst) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: dst is NULL", fn);
    lm_status st = check_not_capturing(fn, cq);
    if (st) return st;
    rt_buffer *b;
    st = use_buffer(fn, cq, buffer, &b);
    if (st) return st;
    rt_cmd cmd = {.op = RT_CMD_READ_BUFFER, .u.read = {.place = b->place, .dst = dst}};
    return submit(fn, cq, &cmd, b, blocking);
}

lm_status lm_finish(lm_command_queue *cq) {
    if (!cq) return err_set(LM_ERR_INVALID_HANDLE, "lm_finish: cq is NULL");
    lm_status st = check_not_capturing("lm_finish", cq);
    if (st) return st;
    st = rt_cq_finish(cq);
    return st ? err_prefix(st, "lm_finish") : LM_OK;
}
