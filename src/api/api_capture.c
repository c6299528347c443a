/* Public Light Metal capture API: argument validation, then the recorder. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "lightmetal/lm_capture.h"
#include "runtime/buffer.h"
#include "runtime/cq.h"
#include "runtime/trace.h"

#if LM_ENABLE_CAPTURE
#include "api/api_binary.h"
#include "capture/capture.h"
#include "runtime/device.h"
#endif

void lm_capture_options_init(lm_capture_options *opts) {
    if (opts) memset(opts, 0, sizeof *opts);
}

#if LM_ENABLE_CAPTURE

lm_status lm_light_metal_begin_capture(lm_device *device, const lm_capture_options *opts) {
    const char *fn = "lm_light_metal_begin_capture";
    if (!device) return err_set(LM_ERR_INVALID_HANDLE, "%s: device is NULL", fn);
    if (rt_trace_any_capturing(device))
        return err_set(LM_ERR_INVALID_STATE, "%s: a metal trace capture is open", fn);
    lm_status st = cap_begin(device, opts);
    return st ? err_prefix(st, "%s", fn) : LM_OK;
}

lm_status lm_light_metal_end_capture(lm_device *device, lm_binary **out_binary) {
    const char *fn = "lm_light_metal_end_capture";
    if (!device) return err_set(LM_ERR_INVALID_HANDLE, "%s: device is NULL", fn);
    if (!out_binary) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: out_binary is NULL", fn);
    lmb_header hdr;
    api_binary_header(&device->info, &hdr);
    lmb_writer *w;
    lm_status st = cap_end(device, &hdr, &w);
    if (st) return err_prefix(st, "%s", fn);
    *out_binary = api_binary_wrap(w);
    return *out_binary ? LM_OK : err_prefix(LM_ERR_OUT_OF_HOST_MEMORY, "%s", fn);
}

lm_status lm_capture_compare_to_capture(lm_command_queue *cq, lm_buffer buffer) {
    const char *fn = "lm_capture_compare_to_capture";
    if (!cq) return err_set(LM_ERR_INVALID_HANDLE, "%s: cq is NULL", fn);
    lm_device *dev = rt_cq_device(cq);
    if (!dev->capture) return err_set(LM_ERR_INVALID_STATE, "%s: no capture is active", fn);
    void *data;
    uint64_t size;
    lm_status st = rt_buffer_read(cq, buffer, &data, &size);
    if (!st) {
        st = cap_golden(dev, rt_cq_id(cq), buffer, data, size);
        free(data);
    }
    return st ? err_prefix(st, "%s", fn) : LM_OK;
}

lm_status lm_capture_compare_to_golden(lm_command_queue *cq, lm_buffer buffer, const void *data,
                                       uint64_t size) {
    const char *fn = "lm_capture_compare_to_golden";
    if (!cq) return err_set(LM_ERR_INVALID_HANDLE, "%s: cq is NULL", fn);
    if (!data) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: data is NULL", fn);
    lm_device *dev = rt_cq_device(cq);
    lm_buffer_config cfg;
    lm_status st = rt_buffer_describe(buffer, NULL, &cfg);
    if (st) return err_prefix(st, "%s", fn);
    if (size != cfg.size)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: size %llu is not the buffer's size %llu", fn,
                       (unsigned long long)size, (unsigned long long)cfg.size);
    if (!dev->capture) return err_set(LM_ERR_INVALID_STATE, "%s: no capture is active", fn);
    st = cap_golden(dev, rt_cq_id(cq), buffer, data, size);
    return st ? err_prefix(st, "%s", fn) : LM_OK;
}

lm_status lm_capture_name_buffer(lm_buffer buffer, const char *name) {
    const char *fn = "lm_capture_name_buffer";
    if (!name || !*name || strlen(name) > 127)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: name must be 1..127 characters", fn);
    lm_device *dev;
    lm_status st = rt_buffer_describe(buffer, &dev, NULL);
    if (st) return err_prefix(st, "%s", fn);
    if (!dev->capture) return err_set(LM_ERR_INVALID_STATE, "%s: no capture is active", fn);
    st = cap_name_buffer(dev, buffer, name);
    return st ? err_prefix(st, "%s", fn) : LM_OK;
}

#else /* the recorder is not built in */

static lm_status not_built(const char *fn) {
    return err_set(LM_ERR_UNSUPPORTED, "%s: capture not built in (LM_ENABLE_CAPTURE=OFF)", fn);
}

lm_status lm_light_metal_begin_capture(lm_device *device, const lm_capture_options *opts) {
    (void)device, (void)opts;
    return not_built("lm_light_metal_begin_capture");
}
lm_status lm_light_metal_end_capture(lm_device *device, lm_binary **out_binary) {
    (void)device, (void)out_binary;
    return not_built("lm_light_metal_end_capture");
}
lm_status lm_capture_compare_to_capture(lm_command_queue *cq, lm_buffer buffer) {
    (void)cq, (void)buffer;
    return not_built("lm_capture_compare_to_capture");
}
lm_status lm_capture_compare_to_golden(lm_command_queue *cq, lm_buffer buffer, const void *data,
                                       uint64_t size) {
    (void)cq, (void)buffer, (void)data, (void)size;
    return not_built("lm_capture_compare_to_golden");
}
lm_status lm_capture_name_buffer(lm_buffer buffer, const char *name) {
    (void)buffer, (void)name;
    return not_built("lm_capture_name_buffer");
}

#endif
