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

/* One transfer, whole (region false) or of `size` bytes at `offset`. */
static lm_status transfer(const char *fn, lm_command_queue *cq, lm_buffer buffer, bool region,
                          uint64_t offset, uint64_t size, void *host, bool to_device,
                          bool blocking) {
    if (!cq) return err_set(LM_ERR_INVALID_HANDLE, "%s: cq is NULL", fn);
    if (!host)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, to_device ? "src" : "dst");
    if (region && size == 0) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: size is 0", fn);
    lm_status st = check_not_capturing(fn, cq);
    if (!st) st = rt_buffer_transfer_region(cq, buffer, offset, size, host, to_device, blocking);
    if (st) return err_prefix(st, "%s", fn);
    if (to_device)
        CAPTURE(rt_cq_device(cq), cap_write_buffer, rt_cq_id(cq), buffer, offset, size, host,
                blocking);
    else
        CAPTURE(rt_cq_device(cq), cap_read_buffer, rt_cq_id(cq), buffer, offset, size, blocking);
    return LM_OK;
}

lm_status lm_enqueue_write_buffer(lm_command_queue *cq, lm_buffer buffer, const void *src,
                                  bool blocking) {
    return transfer("lm_enqueue_write_buffer", cq, buffer, false, 0, 0, (void *)src, true,
                    blocking);
}

lm_status lm_enqueue_read_buffer(lm_command_queue *cq, lm_buffer buffer, void *dst, bool blocking) {
    return transfer("lm_enqueue_read_buffer", cq, buffer, false, 0, 0, dst, false, blocking);
}

lm_status lm_enqueue_write_buffer_region(lm_command_queue *cq, lm_buffer buffer, uint64_t offset,
                                         uint64_t size, const void *src, bool blocking) {
    return transfer("lm_enqueue_write_buffer_region", cq, buffer, true, offset, size, (void *)src,
                    true, blocking);
}

lm_status lm_enqueue_read_buffer_region(lm_command_queue *cq, lm_buffer buffer, uint64_t offset,
                                        uint64_t size, void *dst, bool blocking) {
    return transfer("lm_enqueue_read_buffer_region", cq, buffer, true, offset, size, dst, false,
                    blocking);
}

lm_status lm_enqueue_record_event(lm_command_queue *cq, lm_event *out_event) {
    const char *fn = "lm_enqueue_record_event";
    if (!cq) return err_set(LM_ERR_INVALID_HANDLE, "%s: cq is NULL", fn);
    if (!out_event) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: out_event is NULL", fn);
    lm_status st = check_not_capturing(fn, cq);
    if (st) return st;
    st = rt_event_record(cq, out_event);
    if (st) return err_prefix(st, "%s", fn);
    CAPTURE(rt_cq_device(cq), cap_record_event, rt_cq_id(cq), out_event->id);
    return LM_OK;
}

static lm_status check_event(const char *fn, lm_event e) {
    if (!e.cq || e.id == 0 || e.seq == 0)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: the event was not recorded", fn);
    return LM_OK;
}

lm_status lm_enqueue_wait_for_event(lm_command_queue *cq, lm_event event) {
    const char *fn = "lm_enqueue_wait_for_event";
    if (!cq) return err_set(LM_ERR_INVALID_HANDLE, "%s: cq is NULL", fn);
    lm_status st = check_event(fn, event);
    if (!st) st = check_not_capturing(fn, cq);
    if (st) return st;
    if (rt_cq_device(event.cq) != rt_cq_device(cq))
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: the event belongs to another device", fn);
    st = rt_event_wait(cq, event);
    if (st) return err_prefix(st, "%s", fn);
    CAPTURE(rt_cq_device(cq), cap_wait_for_event, rt_cq_id(cq), event.id);
    return LM_OK;
}

lm_status lm_event_synchronize(lm_event event) {
    const char *fn = "lm_event_synchronize";
    lm_status st = check_event(fn, event);
    if (st) return st;
    CAPTURE(rt_cq_device(event.cq), cap_event_synchronize, event.id);
    st = rt_cq_wait(event.cq, event.seq);
    return st ? err_prefix(st, "%s", fn) : LM_OK;
}

lm_status lm_event_query(lm_event event, bool *out_done) {
    const char *fn = "lm_event_query";
    lm_status st = check_event(fn, event);
    if (st) return st;
    if (!out_done) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: out_done is NULL", fn);
    *out_done = rt_cq_completed(event.cq, event.seq);
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
