/* Public Light Metal capture API: argument validation, then the recorder. */
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/error.h"
#include "format/lmb_enums.h"
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

const char *lm_element_type_name(lm_element_type type) {
    if (type == LM_ELEMENT_TYPE_AS_FORMAT) return "AsFormat";
    const char *name =
        (unsigned)type <= LMB_ElementType_MAX ? lmb_enum_name("ElementType", (unsigned)type) : NULL;
    return name ? name : "Invalid";
}

bool lm_element_type_fits(lm_element_type type, lm_data_format format) {
    if ((unsigned)type > LMB_ElementType_MAX) return false;
    if (type == LM_ELEMENT_TYPE_AS_FORMAT) return true;
    return lmb_element_type_fits(lmb_element_type_from_api(type), lmb_data_format_from_api(format));
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

/* Bytes per element of the formats a shape may describe (0: none). */
static uint32_t element_size(lm_data_format f) {
    switch (f) {
    case LM_DATA_FORMAT_FLOAT32:
    case LM_DATA_FORMAT_UINT32:
    case LM_DATA_FORMAT_INT32:
        return 4;
    case LM_DATA_FORMAT_FLOAT16_B:
        return 2;
    default:
        return 0;
    }
}

/* Names travel to command lines and JSON: printable ASCII only. */
static lm_status check_name_text(const char *fn, const char *name) {
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > 127)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: name must be 1..127 characters", fn);
    for (size_t i = 0; i < n; i++)
        if (name[i] < 0x21 || name[i] > 0x7e || name[i] == '=')
            return err_set(LM_ERR_INVALID_ARGUMENT,
                           "%s: name character %zu (0x%02x) is not printable ASCII other than "
                           "space and '='",
                           fn, i, (unsigned char)name[i]);
    return LM_OK;
}

static lm_status check_name_options(const char *fn, const lm_buffer_name_options *o,
                                    uint64_t buffer_size) {
    if ((unsigned)o->role > LM_BUFFER_ROLE_INPUT_OUTPUT)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: role %d is not a lm_buffer_role", fn,
                       (int)o->role);
    if (o->format != LM_DATA_FORMAT_INVALID && !lm_data_format_name(o->format))
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: format %d is not a lm_data_format", fn,
                       (int)o->format);
    if ((unsigned)o->element_type > LMB_ElementType_MAX)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: element type %d is not a lm_element_type", fn,
                       (int)o->element_type);
    if (!lm_element_type_fits(o->element_type, o->format)) {
        lmb_ElementType et = lmb_element_type_from_api(o->element_type);
        return err_set(LM_ERR_INVALID_ARGUMENT,
                       "%s: element type %s needs format %s, the options give %s", fn,
                       lm_element_type_name(o->element_type), lmb_element_type_storage_text(et),
                       o->format ? lm_data_format_name(o->format) : "none (plain bytes)");
    }
    if (o->rank > LM_MAX_TENSOR_RANK)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: rank %u (at most %d)", fn, o->rank,
                       LM_MAX_TENSOR_RANK);
    if (o->scalar && o->rank)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: a scalar has rank 0, the options give rank %u",
                       fn, o->rank);
    if (o->rank == 0 && !o->scalar) return LM_OK;
    uint64_t bytes = element_size(o->format);
    if (!bytes)
        return err_set(LM_ERR_INVALID_ARGUMENT,
                       "%s: a %s needs FLOAT32, FLOAT16_B, UINT32 or INT32 elements", fn,
                       o->scalar ? "scalar" : "shape");
    if (o->scalar && bytes != buffer_size)
        return err_set(LM_ERR_INVALID_ARGUMENT,
                       "%s: a scalar of %s is %llu bytes, the buffer has %llu", fn,
                       lm_data_format_name(o->format), (unsigned long long)bytes,
                       (unsigned long long)buffer_size);
    for (uint32_t d = 0; d < o->rank; d++) {
        if (o->shape[d] > UINT32_MAX || !ck_mul_u64(bytes, o->shape[d], &bytes))
            return err_set(LM_ERR_INVALID_ARGUMENT,
                           "%s: shape[%u] = %llu (each dimension 0..4294967295, the product "
                           "at most 2^64 bytes)",
                           fn, d, (unsigned long long)o->shape[d]);
    }
    /* An empty tensor (a 0 dimension) has no bytes; its buffer, which cannot
     * be empty, only holds the name. */
    if (bytes != 0 && bytes != buffer_size)
        return err_set(LM_ERR_INVALID_ARGUMENT,
                       "%s: the shape covers %llu bytes, the buffer has %llu", fn,
                       (unsigned long long)bytes, (unsigned long long)buffer_size);
    return LM_OK;
}

void lm_buffer_name_options_init(lm_buffer_name_options *opts) {
    if (opts) memset(opts, 0, sizeof *opts);
}

lm_status lm_capture_name_buffer_ex(lm_buffer buffer, const char *name,
                                    const lm_buffer_name_options *opts) {
    const char *fn = "lm_capture_name_buffer";
    lm_buffer_name_options defaults;
    lm_buffer_name_options_init(&defaults);
    if (!opts) opts = &defaults;
    lm_status st = check_name_text(fn, name);
    if (st) return st;
    lm_device *dev;
    lm_buffer_config cfg;
    st = rt_buffer_describe(buffer, &dev, &cfg);
    if (st) return err_prefix(st, "%s", fn);
    if ((st = check_name_options(fn, opts, cfg.size))) return st;
    if (!dev->capture) return err_set(LM_ERR_INVALID_STATE, "%s: no capture is active", fn);
    st = cap_name_buffer(dev, buffer, name, opts);
    return st ? err_prefix(st, "%s", fn) : LM_OK;
}

lm_status lm_capture_name_buffer(lm_buffer buffer, const char *name) {
    return lm_capture_name_buffer_ex(buffer, name, NULL);
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
lm_status lm_capture_name_buffer_ex(lm_buffer buffer, const char *name,
                                    const lm_buffer_name_options *opts) {
    (void)buffer, (void)name, (void)opts;
    return not_built("lm_capture_name_buffer");
}
void lm_buffer_name_options_init(lm_buffer_name_options *opts) {
    if (opts) memset(opts, 0, sizeof *opts);
}

#endif
