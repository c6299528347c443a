/* Public metal trace API: argument validation, then the runtime. */
#include "base/error.h"
#include "lightmetal/lm_trace.h"
#include "runtime/cq.h"
#include "runtime/trace.h"
#include "api/api_capture_hook.h"

static lm_status finish(lm_status st, const char *fn) {
    return st ? err_prefix(st, "%s", fn) : LM_OK;
}

lm_status lm_begin_trace_capture(lm_command_queue *cq, uint32_t *out_trace_id) {
    const char *fn = "lm_begin_trace_capture";
    if (!cq) return err_set(LM_ERR_INVALID_HANDLE, "%s: cq is NULL", fn);
    if (!out_trace_id) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: out_trace_id is NULL", fn);
    CAPTURE(rt_cq_device(cq), cap_unsupported,
            "a metal trace capture during a Light Metal capture");
    return finish(rt_trace_begin(cq, out_trace_id), fn);
}

lm_status lm_end_trace_capture(lm_command_queue *cq, uint32_t trace_id) {
    const char *fn = "lm_end_trace_capture";
    if (!cq) return err_set(LM_ERR_INVALID_HANDLE, "%s: cq is NULL", fn);
    return finish(rt_trace_end(cq, trace_id), fn);
}

lm_status lm_replay_trace(lm_command_queue *cq, uint32_t trace_id, bool blocking) {
    const char *fn = "lm_replay_trace";
    if (!cq) return err_set(LM_ERR_INVALID_HANDLE, "%s: cq is NULL", fn);
    if (rt_trace_capturing(cq))
        return err_set(LM_ERR_INVALID_STATE, "%s: the queue is capturing a trace", fn);
    CAPTURE(rt_cq_device(cq), cap_unsupported,
            "replaying a metal trace during a Light Metal capture");
    return finish(rt_trace_replay(cq, trace_id, blocking), fn);
}

lm_status lm_release_trace(lm_device *device, uint32_t trace_id) {
    const char *fn = "lm_release_trace";
    if (!device) return err_set(LM_ERR_INVALID_HANDLE, "%s: device is NULL", fn);
    return finish(rt_trace_release(device, trace_id), fn);
}
