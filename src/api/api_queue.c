/* Public command queue API: argument validation, then the runtime. */
#include "base/error.h"
#include "lightmetal/lm_queue.h"
#include "runtime/buffer.h"
#include "runtime/cq.h"
#include "runtime/trace.h"
#include "api/api_capture_hook.h"

/* A trace must not depend on host data: no transfers on a capturing queue. */
static lm_status check_not_capturing(const char *fn, lm_command_queue *cq) {
    rt_trace *t = rt_trace_capturing(cq);
    if (!t) return LM_OK;
    return err_set(LM_ERR_INVALID_STATE,
                   "%s: not allowed while command queue %u is capturing a trace", fn, rt_cq_id(cq));
}

lm_status lm_enqueue_write_buffer(lm_command_queue *cq, lm_buffer buffer, const void *src,
                                  bool blocking) {
    const char *fn = "lm_enqueue_write_buffer";
    if (!cq) return err_set(LM_ERR_INVALID_HANDLE, "%s: cq is NULL", fn);
    if (!src) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: src is NULL", fn);
    lm_status st = check_not_capturing(fn, cq);
    if (!st) st = rt_buffer_transfer(cq, buffer, (void *)src, true, blocking);
    if (st) return err_prefix(st, "%s", fn);
    CAPTURE(rt_cq_device(cq), cap_write_buffer, rt_cq_id(cq), buffer, src, blocking);
    return LM_OK;
}

lm_status lm_enqueue_read_buffer(lm_command_queue *cq, lm_buffer buffer, void *dst, bool blocking) {
    const char *fn = "lm_enqueue_read_buffer";
    if (!cq) return err_set(LM_ERR_INVALID_HANDLE, "%s: cq is NULL", fn);
    if (!dst) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: dst is NULL", fn);
    lm_status st = check_not_capturing(fn, cq);
    if (!st) st = rt_buffer_transfer(cq, buffer, dst, false, blocking);
    if (st) return err_prefix(st, "%s", fn);
    CAPTURE(rt_cq_device(cq), cap_read_buffer, rt_cq_id(cq), buffer, blocking);
    return LM_OK;
}

lm_status lm_finish(lm_command_queue *cq) {
    if (!cq) return err_set(LM_ERR_INVALID_HANDLE, "lm_finish: cq is NULL");
    lm_status st = check_not_capturing("lm_finish", cq);
    if (st) return st;
    CAPTURE(rt_cq_device(cq), cap_finish, rt_cq_id(cq));
    st = rt_cq_finish(cq);
    return st ? err_prefix(st, "lm_finish") : LM_OK;
}
