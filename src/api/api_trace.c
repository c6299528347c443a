/* Public metal trace API: argument validation, then the runtime; and the
 * serialized form of traces (collect / load). */
#include <stdlib.h>
#include <string.h>

#include "api/api_binary.h"
#include "runtime/device.h"
#include "runtime/trace_blob.h"
#include "base/error.h"
#include "format/lmb_semantic.h"
#include "sim/kernel_map.h"
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
    return finish(rt_trace_begin(cq, out_trace_id), fn);
}

lm_status lm_end_trace_capture(lm_command_queue *cq, uint32_t trace_id) {
    const char *fn = "lm_end_trace_capture";
    if (!cq) return err_set(LM_ERR_INVALID_HANDLE, "%s: cq is NULL", fn);
    lm_status st = rt_trace_end(cq, trace_id);
    if (st) return finish(st, fn);
    CAPTURE(rt_cq_device(cq), cap_trace_exists, rt_cq_id(cq), trace_id);
    return LM_OK;
}

lm_status lm_replay_trace(lm_command_queue *cq, uint32_t trace_id, bool blocking) {
    const char *fn = "lm_replay_trace";
    if (!cq) return err_set(LM_ERR_INVALID_HANDLE, "%s: cq is NULL", fn);
    if (rt_trace_capturing(cq))
        return err_set(LM_ERR_INVALID_STATE, "%s: the queue is capturing a trace", fn);
    lm_status st = rt_trace_replay(cq, trace_id, blocking);
    if (st) return finish(st, fn);
    CAPTURE(rt_cq_device(cq), cap_replay_trace, rt_cq_id(cq), trace_id, blocking);
    return LM_OK;
}

lm_status lm_release_trace(lm_device *device, uint32_t trace_id) {
    const char *fn = "lm_release_trace";
    if (!device) return err_set(LM_ERR_INVALID_HANDLE, "%s: device is NULL", fn);
    lm_status st = rt_trace_release(device, trace_id);
    if (st) return finish(st, fn);
    CAPTURE(device, cap_release_trace, trace_id);
    return LM_OK;
}

/* ---- serializable traces: a Light Metal binary with no commands, holding
 * the device geometry, the kernels' ELFs and the one trace ---- */

lm_status lm_collect_trace(lm_device *device, uint32_t trace_id, lm_binary **out_blob) {
    const char *fn = "lm_collect_trace";
    if (!device) return err_set(LM_ERR_INVALID_HANDLE, "%s: device is NULL", fn);
    if (!out_blob) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: out_blob is NULL", fn);
    rt_trace_contents c;
    lm_status st = rt_trace_export(device, trace_id, &c);
    if (st) return finish(st, fn);
    lmb_writer *w;
    lmb_header hdr;
    api_binary_header(&device->info, &hdr);
    st = lmb_writer_create(&w);
    if (!st) st = trace_blob_add(w, trace_id, &c);
    if (!st) st = lmb_writer_finish(w, &hdr);
    free(c.stream);
    if (st) {
        lmb_writer_destroy(w);
        return finish(st, fn);
    }
    *out_blob = api_binary_wrap(w);
    return *out_blob ? LM_OK : finish(LM_ERR_OUT_OF_HOST_MEMORY, fn);
}

lm_status lm_load_trace(lm_command_queue *cq, const void *data, uint64_t size,
                        uint32_t *out_trace_id) {
    const char *fn = "lm_load_trace";
    if (!cq) return err_set(LM_ERR_INVALID_HANDLE, "%s: cq is NULL", fn);
    if (!data || !out_trace_id)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: data and out_trace_id must not be NULL", fn);
    lmb_verify_options vo;
    lmb_verify_options_init(&vo);
    vo.check_blob_hashes = true; /* blobs are small; catch every flipped bit */
    lm_status st = lmb_verify(data, size, &vo, NULL);
    lmb_semantic_options so;
    lmb_semantic_options_init(&so);
    so.kernel_map =
        (lmb_kernel_map){KMAP_CODE_BASE, KMAP_CODE_SIZE, KMAP_LOCAL_BASE, KMAP_LOCAL_SIZE};
    if (!st) st = lmb_verify_semantics(data, size, &so, NULL);
    if (st) return finish(st, fn);
    fb_table root = lmb_root(data);
    fb_table sys = lmb_LightMetalBinary_system(root);
    const lm_device_info *i = &rt_cq_device(cq)->info;
    if (i->grid_x != lmb_SystemDescriptor_grid_x(sys) ||
        i->grid_y != lmb_SystemDescriptor_grid_y(sys) ||
        i->l1_size != lmb_SystemDescriptor_l1_size(sys) ||
        i->dram_banks != lmb_SystemDescriptor_dram_banks(sys) ||
        i->dram_bank_size < lmb_SystemDescriptor_dram_bank_size(sys))
        return err_set(LM_ERR_INVALID_ARGUMENT,
                       "%s: the trace was made for a %ux%u device with %u B of L1 and %u DRAM "
                       "banks, not this %ux%u one with %llu B and %u banks",
                       fn, lmb_SystemDescriptor_grid_x(sys), lmb_SystemDescriptor_grid_y(sys),
                       lmb_SystemDescriptor_l1_size(sys), lmb_SystemDescriptor_dram_banks(sys),
                       i->grid_x, i->grid_y, (unsigned long long)i->l1_size, i->dram_banks);
    fb_vec traces = lmb_LightMetalBinary_traces(root);
    if (traces.len != 1)
        return err_set(LM_ERR_INVALID_FILE,
                       "%s: a serialized trace holds exactly one trace, not %u", fn, traces.len);
    uint32_t id = lmb_TraceDescriptor_trace_id(fb_vec_table(traces, 0));
    st = trace_blob_load(cq, data, id, false, out_trace_id); /* every blob checked above */
    if (st) return finish(st, fn);
    CAPTURE(rt_cq_device(cq), cap_trace_exists, rt_cq_id(cq), *out_trace_id);
    return LM_OK;
}
