/* Public program API: argument validation, then the runtime. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/file.h"
#include "base/hash.h"
#include "lightmetal/lm_program.h"
#include "lm_kernel_abi.h"
#include "runtime/cq.h"
#include "runtime/program.h"
#include "runtime/trace.h"
#include "api/api_capture_hook.h"

void lm_kernel_config_init(lm_kernel_config *cfg, lm_processor processor) {
    if (!cfg) return;
    *cfg = (lm_kernel_config){
        .processor = processor,
        .noc = processor == LM_PROCESSOR_DM1 ? LM_NOC_1 : LM_NOC_0,
        .math_fidelity = LM_MATH_FIDELITY_HIFI4,
    };
}

void lm_circular_buffer_config_init(lm_circular_buffer_config *cfg) {
    if (cfg) memset(cfg, 0, sizeof *cfg);
}

static lm_status finish(lm_status st, const char *fn) {
    return st ? err_prefix(st, "%s", fn) : LM_OK;
}

lm_status lm_create_program(lm_device *device, lm_program *out_program) {
    if (!device) return err_set(LM_ERR_INVALID_HANDLE, "lm_create_program: device is NULL");
    if (!out_program)
        return err_set(LM_ERR_INVALID_ARGUMENT, "lm_create_program: out_program is NULL");
    lm_status st = rt_program_create(device, out_program);
    if (st) return finish(st, "lm_create_program");
    CAPTURE(device, cap_create_program, *out_program);
    return LM_OK;
}

#if LM_ENABLE_CAPTURE
/* After a successful call on `program`: the device to record it on. */
static lm_device *device_of(lm_program program) {
    lm_device *device = NULL;
    rt_program_device(program, &device);
    return device;
}
#endif

lm_status lm_release_program(lm_program program) {
#if LM_ENABLE_CAPTURE
    lm_device *device = device_of(program); /* before it is gone */
#endif
    lm_status st = rt_program_release(program);
    if (st) return finish(st, "lm_release_program");
    CAPTURE(device, cap_release_program, program);
    return LM_OK;
}

static lm_status check_cores(const char *fn, const lm_core_range_set *cores) {
    if (!cores) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: cores is NULL", fn);
    if (cores->count == 0 || cores->count > LM_MAX_CORE_RANGES)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: cores has %u ranges (must be 1..%d)", fn,
                       cores->count, LM_MAX_CORE_RANGES);
    return LM_OK;
}

static lm_status check_kernel_config(const char *fn, const lm_kernel_config *c) {
    if (!c) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: cfg is NULL", fn);
    if (c->processor < LM_PROCESSOR_DM0 || c->processor > LM_PROCESSOR_COMPUTE)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: processor %d is not DM0, DM1 or COMPUTE", fn,
                       (int)c->processor);
    if (c->noc != LM_NOC_0 && c->noc != LM_NOC_1)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: noc %d is not NOC_0 or NOC_1", fn,
                       (int)c->noc);
    if (c->compile_arg_count > LM_MAX_COMPILE_ARGS || (c->compile_arg_count && !c->compile_args))
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: %u compile args (at most %d, non-NULL)", fn,
                       c->compile_arg_count, LM_MAX_COMPILE_ARGS);
    if (c->define_count > LM_MAX_KERNEL_DEFINES || (c->define_count && !c->defines))
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: %u defines (at most %d, non-NULL)", fn,
                       c->define_count, LM_MAX_KERNEL_DEFINES);
    if (c->named_compile_arg_count > LM_MAX_COMPILE_ARGS ||
        (c->named_compile_arg_count && !c->named_compile_args))
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: %u named compile args (at most %d, non-NULL)",
                       fn, c->named_compile_arg_count, LM_MAX_COMPILE_ARGS);
    if (c->language < LM_KERNEL_LANGUAGE_AUTO || c->language > LM_KERNEL_LANGUAGE_CXX)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: language %d is not AUTO, C or CXX", fn,
                       (int)c->language);
    if (c->processor == LM_PROCESSOR_COMPUTE &&
        (c->math_fidelity < LM_MATH_FIDELITY_LOFI || c->math_fidelity > LM_MATH_FIDELITY_HIFI4))
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: math_fidelity %d is not LOFI..HIFI4", fn,
                       (int)c->math_fidelity);
    return LM_OK;
}

lm_status lm_create_kernel_from_string(lm_program program, const char *name, const char *source,
                                       const lm_core_range_set *cores, const lm_kernel_config *cfg,
                                       lm_kernel *out_kernel) {
    const char *fn = "lm_create_kernel_from_string";
    if (!name || !*name) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: name is empty", fn);
    if (!source) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: source is NULL", fn);
    if (!out_kernel) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: out_kernel is NULL", fn);
    lm_status st = check_cores(fn, cores);
    if (!st) st = check_kernel_config(fn, cfg);
    if (st) return st;
    st = rt_kernel_create(program, name, NULL, source, cores, cfg, out_kernel);
    if (st) return finish(st, fn);
    CAPTURE(device_of(program), cap_create_kernel, program, *out_kernel, cores, cfg);
    return LM_OK;
}

lm_status lm_create_kernel(lm_program program, const char *path, const lm_core_range_set *cores,
                           const lm_kernel_config *cfg, lm_kernel *out_kernel) {
    const char *fn = "lm_create_kernel";
    if (!path || !*path) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: path is empty", fn);
    if (!out_kernel) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: out_kernel is NULL", fn);
    lm_status st = check_cores(fn, cores);
    if (!st) st = check_kernel_config(fn, cfg);
    if (st) return st;
    void *source;
    size_t size;
    st = file_read_all(path, &source, &size);
    if (st) return finish(st, fn);
    if (strlen(source) != size) {
        free(source);
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: '%s' contains a NUL byte", fn, path);
    }
    /* The kernel's name in messages is its file name without directories. */
    const char *slash = strrchr(path, '/');
    st = rt_kernel_create(program, slash ? slash + 1 : path, path, source, cores, cfg, out_kernel);
    free(source);
    if (st) return finish(st, fn);
    CAPTURE(device_of(program), cap_create_kernel, program, *out_kernel, cores, cfg);
    return LM_OK;
}

lm_status lm_create_kernel_from_elf(lm_program program, const void *elf, size_t size,
                                    const lm_core_range_set *cores, const lm_kernel_config *cfg,
                                    lm_kernel *out_kernel) {
    const char *fn = "lm_create_kernel_from_elf";
    if (!elf) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: elf is NULL", fn);
    if (size == 0) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: size is 0", fn);
    if (!out_kernel) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: out_kernel is NULL", fn);
    lm_status st = check_cores(fn, cores);
    if (!st) st = check_kernel_config(fn, cfg);
    if (st) return st;
    if (cfg->compile_arg_count || cfg->define_count)
        return err_set(LM_ERR_INVALID_ARGUMENT,
                       "%s: cfg has %u compile args and %u defines; a prebuilt ELF has them "
                       "compiled in",
                       fn, cfg->compile_arg_count, cfg->define_count);
    char name[24];
    snprintf(name, sizeof name, "elf-%016llx", (unsigned long long)hash64(elf, size, 0));
    st = rt_kernel_create_from_elf(program, name, elf, size, 0, NULL, cores, cfg, out_kernel);
    if (st) return finish(st, fn);
    CAPTURE(device_of(program), cap_create_kernel, program, *out_kernel, cores, cfg);
    return LM_OK;
}

lm_status lm_set_runtime_args(lm_program program, lm_kernel kernel, lm_core core,
                              const uint32_t *args, uint32_t count) {
    const char *fn = "lm_set_runtime_args";
    if (count > LM_MAX_RUNTIME_ARGS)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: %u arguments (at most %d)", fn, count,
                       LM_MAX_RUNTIME_ARGS);
    if (count && !args) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: args is NULL", fn);
    lm_status st = rt_set_runtime_args(program, kernel, core, args, count);
    if (st) return finish(st, fn);
    CAPTURE(device_of(program), cap_set_runtime_args, program, kernel, core, args, count);
    return LM_OK;
}

lm_status lm_set_runtime_args_range(lm_program program, lm_kernel kernel,
                                    const lm_core_range_set *cores, const uint32_t *args,
                                    uint32_t count) {
    const char *fn = "lm_set_runtime_args_range";
    lm_status st = check_cores(fn, cores);
    if (st) return st;
    if (count > LM_MAX_RUNTIME_ARGS)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: %u arguments (at most %d)", fn, count,
                       LM_MAX_RUNTIME_ARGS);
    if (count && !args) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: args is NULL", fn);
    /* Every core first: a bad one leaves all the args as they were. */
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t r = 0; r < cores->count; r++) {
            const lm_core_range *cr = &cores->ranges[r];
            if (cr->end.x < cr->start.x || cr->end.y < cr->start.y)
                return err_set(LM_ERR_INVALID_ARGUMENT, "%s: range %u is empty", fn, r);
            for (uint32_t y = cr->start.y; y <= cr->end.y; y++)
                for (uint32_t x = cr->start.x; x <= cr->end.x; x++) {
                    lm_core c = {x, y};
                    st = pass ? rt_set_runtime_args(program, kernel, c, args, count)
                              : rt_check_args_core(program, kernel, c);
                    if (st) return finish(st, fn);
                    if (pass)
                        CAPTURE(device_of(program), cap_set_runtime_args, program, kernel, c, args,
                                count);
                }
        }
    return LM_OK;
}

lm_status lm_set_runtime_args_each(lm_program program, lm_kernel kernel, const lm_core *cores,
                                   uint32_t core_count, const uint32_t *const *args,
                                   const uint32_t *counts) {
    const char *fn = "lm_set_runtime_args_each";
    if (core_count && (!cores || !args || !counts))
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                       !cores  ? "cores"
                       : !args ? "args"
                               : "counts");
    for (uint32_t i = 0; i < core_count; i++) {
        if (counts[i] > LM_MAX_RUNTIME_ARGS)
            return err_set(LM_ERR_INVALID_ARGUMENT, "%s: core %u: %u arguments (at most %d)", fn, i,
                           counts[i], LM_MAX_RUNTIME_ARGS);
        if (counts[i] && !args[i])
            return err_set(LM_ERR_INVALID_ARGUMENT, "%s: args[%u] is NULL", fn, i);
        lm_status st = rt_check_args_core(program, kernel, cores[i]);
        if (st) return err_prefix(st, "%s: core %u", fn, i);
    }
    for (uint32_t i = 0; i < core_count; i++) {
        lm_status st = rt_set_runtime_args(program, kernel, cores[i], args[i], counts[i]);
        if (st) return finish(st, fn);
        CAPTURE(device_of(program), cap_set_runtime_args, program, kernel, cores[i], args[i],
                counts[i]);
    }
    return LM_OK;
}

lm_status lm_get_runtime_args(lm_program program, lm_kernel kernel, lm_core core,
                              uint32_t **out_args, uint32_t *out_count) {
    const char *fn = "lm_get_runtime_args";
    if (!out_args || !out_count)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                       out_args ? "out_count" : "out_args");
    lm_status st = rt_get_runtime_args(program, kernel, core, out_args, out_count);
    return st ? finish(st, fn) : LM_OK;
}

#if LM_ENABLE_CAPTURE
/* In-place writes through lm_get_runtime_args, recorded as the launch sees them. */
static void capture_changed_args(void *dev, lm_program program, lm_kernel kernel, lm_core core,
                                 const uint32_t *args, uint32_t count) {
    cap_set_runtime_args(dev, program, kernel, core, args, count);
}
#endif

lm_status lm_set_common_runtime_args(lm_program program, lm_kernel kernel, const uint32_t *args,
                                     uint32_t count) {
    const char *fn = "lm_set_common_runtime_args";
    if (count > LM_MAX_RUNTIME_ARGS)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: %u arguments (at most %d)", fn, count,
                       LM_MAX_RUNTIME_ARGS);
    if (count && !args) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: args is NULL", fn);
    lm_status st = rt_set_common_runtime_args(program, kernel, args, count);
    if (st) return finish(st, fn);
    CAPTURE(device_of(program), cap_set_common_runtime_args, program, kernel, args, count);
    return LM_OK;
}

static lm_status check_cb_config(const char *fn, const lm_circular_buffer_config *c) {
    if (!c) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: cfg is NULL", fn);
    if (c->total_size == 0) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: total_size is 0", fn);
    if (c->index_count == 0 || c->index_count > LM_MAX_CB_INDICES)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: index_count %u (must be 1..32)", fn,
                       c->index_count);
    uint32_t seen = 0;
    for (uint32_t i = 0; i < c->index_count; i++) {
        const lm_cb_index_config *ic = &c->indices[i];
        if (ic->index >= LM_MAX_CBS)
            return err_set(LM_ERR_INVALID_ARGUMENT, "%s: indices[%u].index %u (must be 0..31)", fn,
                           i, ic->index);
        if (seen >> ic->index & 1)
            return err_set(LM_ERR_INVALID_ARGUMENT, "%s: index %u is listed twice", fn, ic->index);
        seen |= 1u << ic->index;
        if (lm_tile_size(ic->format) == 0)
            return err_set(LM_ERR_INVALID_ARGUMENT,
                           "%s: indices[%u].format %d is not a data "
                           "format",
                           fn, i, (int)ic->format);
        if (ic->page_size == 0 || c->total_size % ic->page_size)
            return err_set(LM_ERR_INVALID_ARGUMENT,
                           "%s: total_size %u is not a multiple of indices[%u].page_size %u", fn,
                           c->total_size, i, ic->page_size);
    }
    return LM_OK;
}

lm_status lm_create_circular_buffer(lm_program program, const lm_core_range_set *cores,
                                    const lm_circular_buffer_config *cfg,
                                    lm_circular_buffer *out_cb) {
    const char *fn = "lm_create_circular_buffer";
    if (!out_cb) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: out_cb is NULL", fn);
    lm_status st = check_cores(fn, cores);
    if (!st) st = check_cb_config(fn, cfg);
    if (st) return st;
    st = rt_cb_create(program, cores, cfg, out_cb);
    if (st) return finish(st, fn);
    CAPTURE(device_of(program), cap_create_cb, program, *out_cb, cores, cfg);
    return LM_OK;
}

/* Reads cb's configuration, lets `change` alter it, checks and applies it. */
static lm_status update_cb(const char *fn, lm_program program, lm_circular_buffer cb,
                           void (*change)(lm_circular_buffer_config *, const void *),
                           const void *arg) {
    lm_circular_buffer_config cfg;
    lm_status st = rt_cb_get_config(program, cb, &cfg);
    if (st) return finish(st, fn);
    change(&cfg, arg);
    st = check_cb_config(fn, &cfg);
    if (!st) st = rt_cb_update(program, cb, &cfg);
    if (st) return finish(st, fn);
    CAPTURE(device_of(program), cap_update_cb, program, cb, &cfg);
    return LM_OK;
}

static void set_buffer(lm_circular_buffer_config *cfg, const void *arg) {
    cfg->globally_allocated = *(const lm_buffer *)arg;
}
static void set_total(lm_circular_buffer_config *cfg, const void *arg) {
    cfg->total_size = *(const uint32_t *)arg;
}
/* arg: {index, page_size}; an index the CB lacks stays absent (caught below). */
static void set_page(lm_circular_buffer_config *cfg, const void *arg) {
    const uint32_t *ip = arg;
    for (uint32_t i = 0; i < cfg->index_count; i++)
        if (cfg->indices[i].index == ip[0]) cfg->indices[i].page_size = ip[1];
}

lm_status lm_update_dynamic_circular_buffer_address(lm_program program, lm_circular_buffer cb,
                                                    lm_buffer buffer) {
    const char *fn = "lm_update_dynamic_circular_buffer_address";
    if (!buffer.id) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: buffer is {0}", fn);
    return update_cb(fn, program, cb, set_buffer, &buffer);
}

lm_status lm_update_circular_buffer_total_size(lm_program program, lm_circular_buffer cb,
                                               uint32_t total_size) {
    return update_cb("lm_update_circular_buffer_total_size", program, cb, set_total, &total_size);
}

lm_status lm_update_circular_buffer_page_size(lm_program program, lm_circular_buffer cb,
                                              uint32_t index, uint32_t page_size) {
    const char *fn = "lm_update_circular_buffer_page_size";
    lm_circular_buffer_config cfg;
    lm_status st = rt_cb_get_config(program, cb, &cfg);
    if (st) return finish(st, fn);
    bool found = false;
    for (uint32_t i = 0; i < cfg.index_count; i++)
        found |= cfg.indices[i].index == index;
    if (!found)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: the circular buffer has no index %u", fn,
                       index);
    uint32_t ip[2] = {index, page_size};
    return update_cb(fn, program, cb, set_page, ip);
}

lm_status lm_create_semaphore(lm_program program, const lm_core_range_set *cores,
                              uint32_t initial_value, uint32_t *out_semaphore_id) {
    const char *fn = "lm_create_semaphore";
    if (!out_semaphore_id)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: out_semaphore_id is NULL", fn);
    lm_status st = check_cores(fn, cores);
    if (st) return st;
    st = rt_semaphore_create(program, cores, initial_value, out_semaphore_id);
    if (st) return finish(st, fn);
    CAPTURE(device_of(program), cap_create_semaphore, program, cores, initial_value,
            *out_semaphore_id);
    return LM_OK;
}

lm_status lm_enqueue_program(lm_command_queue *cq, lm_program program, bool blocking) {
    const char *fn = "lm_enqueue_program";
    if (!cq) return err_set(LM_ERR_INVALID_HANDLE, "%s: cq is NULL", fn);
    bool into_trace = rt_trace_capturing(cq) != NULL; /* then the trace holds the launch */
#if LM_ENABLE_CAPTURE
    lm_device *dev = rt_cq_device(cq);
    if (!into_trace && dev && dev->capture) {
        lm_status vs = rt_visit_changed_args(program, capture_changed_args, dev);
        if (vs) return finish(vs, fn);
    }
#endif
    lm_status st = rt_program_enqueue(cq, program, blocking);
    if (st) return finish(st, fn);
    if (!into_trace)
        CAPTURE(rt_cq_device(cq), cap_enqueue_program, rt_cq_id(cq), program, blocking);
    return LM_OK;
}
