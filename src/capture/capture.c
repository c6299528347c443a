#include "capture/capture.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/idmap.h"
#include "format/lmb.h"
#include "format/lmb_enums.h"
#include "runtime/buffer.h"
#include "runtime/capture_sink.h"
#include "runtime/cq.h"
#include "runtime/device.h"
#include "runtime/profile.h"
#include "runtime/program.h"
#include "runtime/trace_blob.h"

/* Handle -> file id, for one kind of object (base/idmap.h), so recording
 * stays O(1) per call with many live objects. Handles are never 0. A handle
 * recorded again (a trace id reused after a release) maps to its newest id. */
typedef struct id_map {
    idmap ids;
    uint32_t next_id;
} id_map;

/* A named buffer, written into the file when the capture ends (its role
 * may depend on what the workload does after it was named). */
typedef struct cap_name {
    uint32_t id;
    char name[128];
    lm_buffer_name_options opts;
} cap_name;

/* How the host used a buffer, for LM_BUFFER_ROLE_AUTO. */
enum { CAP_WRITTEN = 1, CAP_READ = 2 };

struct cap_recorder {
    pthread_mutex_t mutex;
    lm_device *device;
    lm_capture_options opts;
    lmb_writer *writer;
    id_map buffers, programs, kernels, cbs, traces, events;
    /* The programs not recorded yet (handle -> 1): those alive at begin
     * and those made since, until the workload first enqueues them outside
     * a metal trace (adopt), when each is recorded as it is then. So a
     * binary holds only the programs its workload runs as programs: not
     * those a warm program cache keeps, nor those that run only inside a
     * trace, whose launches the trace holds. adopt_mutex makes a second
     * enqueuer wait for the first's recording. */
    idmap unrecorded;
    pthread_mutex_t adopt_mutex;
    lm_status error; /* the first recording failure, reported by cap_end */
    char error_message[ERR_MESSAGE_MAX];
    uint8_t formats_seen[8]; /* lmb_DataFormat values used by CBs */
    cap_name *names;
    uint32_t name_count, name_capacity;
    uint8_t *use; /* CAP_WRITTEN | CAP_READ by buffer id (ids are 1..next_id) */
    uint32_t use_capacity;
};

/* ---- small helpers ---- */

static void map_free(id_map *m) {
    idmap_free(&m->ids);
}

static lm_status map_add(id_map *m, uint64_t handle, uint32_t *out_id) {
    *out_id = 0; /* callers record on regardless; the failure is kept */
    if (!idmap_put(&m->ids, handle, m->next_id + 1))
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    *out_id = ++m->next_id;
    return LM_OK;
}

/* The file id of `handle`, or 0 when the capture never saw it. */
static uint32_t map_get(const id_map *m, uint64_t handle) {
    const uint64_t *id = idmap_find(&m->ids, handle);
    return id ? (uint32_t)*id : 0;
}

/* Keeps the first failure; the capture goes on recording nothing useful. */
static void fail(cap_recorder *r, lm_status st, const char *fmt, ...) ERR_PRINTF(3, 4);
static void fail(cap_recorder *r, lm_status st, const char *fmt, ...) {
    if (r->error) return;
    r->error = st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->error_message, sizeof r->error_message, fmt, ap);
    va_end(ap);
}

static void fail_with_last(cap_recorder *r, lm_status st) {
    if (st) fail(r, st, "%s", lm_last_error());
}

static cap_recorder *lock(lm_device *dev) {
    cap_recorder *r = dev->capture;
    if (r) pthread_mutex_lock(&r->mutex);
    return r;
}

static void unlock(cap_recorder *r) {
    pthread_mutex_unlock(&r->mutex);
}

static void add(cap_recorder *r, lmb_Command type, fb_ref table) {
    fail_with_last(r, lmb_writer_add_command(r->writer, type, table));
}

static uint32_t need(cap_recorder *r, const id_map *m, uint64_t handle, const char *what) {
    uint32_t id = map_get(m, handle);
    if (!id && !r->error)
        fail(r, LM_ERR_INVALID_STATE,
             "a %s the capture does not know (released, or of another "
             "device) was used",
             what);
    return id;
}

static void adopt_snapshot(lm_device *dev, lm_program p, cap_recorder *r);

/* Whether program p is not recorded yet: a change to it is then not a
 * command, since adopt records the program as it is when first enqueued. */
static bool unrecorded(lm_device *dev, lm_program p) {
    cap_recorder *r = dev->capture;
    if (!r) return false;
    pthread_mutex_lock(&r->mutex);
    bool pending = !map_get(&r->programs, p.id) && idmap_find(&r->unrecorded, p.id);
    pthread_mutex_unlock(&r->mutex);
    return pending;
}

/* Records program p, if not recorded yet, as it is now. Called before the
 * hook takes the recorder's lock (the recording goes through the hooks). */
static void adopt(lm_device *dev, lm_program p) {
    cap_recorder *r = dev->capture;
    if (!unrecorded(dev, p)) return;
    pthread_mutex_lock(&r->adopt_mutex);
    pthread_mutex_lock(&r->mutex);
    bool take = idmap_remove(&r->unrecorded, p.id);
    pthread_mutex_unlock(&r->mutex);
    if (take) adopt_snapshot(dev, p, r);
    pthread_mutex_unlock(&r->adopt_mutex);
}

static fb_ref core_ranges(fb_builder *b, const lm_core_range_set *set) {
    lmb_CoreRange ranges[LM_MAX_CORE_RANGES];
    for (uint32_t i = 0; i < set->count; i++)
        ranges[i] =
            (lmb_CoreRange){{(uint16_t)set->ranges[i].start.x, (uint16_t)set->ranges[i].start.y},
                            {(uint16_t)set->ranges[i].end.x, (uint16_t)set->ranges[i].end.y}};
    return lmb_vec_CoreRange_create(b, ranges, set->count);
}

/* ---- buffers ---- */

/* Notes how the host used buffer `id`. */
static void mark_use(cap_recorder *r, uint32_t id, uint8_t how) {
    if (!id) return;
    if (id >= r->use_capacity) {
        uint32_t cap = r->use_capacity ? r->use_capacity : 64;
        while (cap <= id)
            cap *= 2;
        uint8_t *u = realloc(r->use, cap);
        if (!u) return fail(r, LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        memset(u + r->use_capacity, 0, cap - r->use_capacity);
        r->use = u;
        r->use_capacity = cap;
    }
    r->use[id] |= how;
}

static void record_create_buffer(cap_recorder *r, lm_buffer buffer, const lm_buffer_config *c) {
    uint32_t id;
    lm_status st = map_add(&r->buffers, buffer.id, &id);
    if (st) return fail_with_last(r, st);
    fb_builder *b = lmb_writer_builder(r->writer);
    fb_ref shard = 0;
    if (c->layout != LM_BUFFER_INTERLEAVED) {
        fb_ref vcores = core_ranges(b, &c->shard.cores);
        lmb_ShardSpec_start(b);
        lmb_ShardSpec_add_cores(b, vcores);
        lmb_ShardSpec_add_shard_height(b, c->shard.shard_height);
        lmb_ShardSpec_add_shard_width(b, c->shard.shard_width);
        lmb_ShardSpec_add_tensor_height(b, c->shard.tensor_height);
        lmb_ShardSpec_add_tensor_width(b, c->shard.tensor_width);
        lmb_ShardSpec_add_col_major(b, c->shard.col_major);
        shard = lmb_ShardSpec_end(b);
    }
    lmb_CreateBuffer_start(b);
    lmb_CreateBuffer_add_buffer_id(b, id);
    lmb_CreateBuffer_add_type(b,
                              c->type == LM_BUFFER_DRAM ? LMB_BufferType_DRAM : LMB_BufferType_L1);
    /* lmb_BufferLayout numbers the layouts as lm_buffer_layout does. */
    lmb_CreateBuffer_add_layout(b, (lmb_BufferLayout)c->layout);
    if (shard) lmb_CreateBuffer_add_shard(b, shard);
    lmb_CreateBuffer_add_size(b, c->size);
    lmb_CreateBuffer_add_page_size(b, c->page_size);
    lmb_CreateBuffer_add_address(b, c->address);
    add(r, LMB_Command_CreateBuffer, lmb_CreateBuffer_end(b));
}

/* A write of `size` bytes at `offset`; region false: the whole buffer. */
static void record_write(cap_recorder *r, uint32_t cq, uint32_t id, const void *src, uint64_t size,
                         bool blocking, bool region, uint64_t offset) {
    lmb_BlobRef ref;
    lm_status st = lmb_writer_add_blob(r->writer, src, size, true, &ref);
    if (st) return fail_with_last(r, st);
    fb_builder *b = lmb_writer_builder(r->writer);
    lmb_EnqueueWriteBuffer_start(b);
    lmb_EnqueueWriteBuffer_add_cq_id(b, (uint8_t)cq);
    lmb_EnqueueWriteBuffer_add_buffer_id(b, id);
    lmb_EnqueueWriteBuffer_add_data(b, &ref);
    lmb_EnqueueWriteBuffer_add_blocking(b, blocking);
    if (region) {
        lmb_EnqueueWriteBuffer_add_offset(b, offset);
        lmb_EnqueueWriteBuffer_add_region(b, true);
    }
    add(r, LMB_Command_EnqueueWriteBuffer, lmb_EnqueueWriteBuffer_end(b));
    mark_use(r, id, CAP_WRITTEN);
}

void cap_create_buffer(lm_device *dev, lm_buffer buffer) {
    cap_recorder *r = lock(dev);
    if (!r) return;
    lm_buffer_config cfg;
    lm_status st = rt_buffer_describe(buffer, NULL, &cfg);
    if (st)
        fail_with_last(r, st);
    else
        record_create_buffer(r, buffer, &cfg);
    unlock(r);
}

void cap_deallocate_buffer(lm_device *dev, lm_buffer buffer) {
    cap_recorder *r = lock(dev);
    if (!r) return;
    uint32_t id = need(r, &r->buffers, buffer.id, "buffer");
    fb_builder *b = lmb_writer_builder(r->writer);
    lmb_DeallocateBuffer_start(b);
    lmb_DeallocateBuffer_add_buffer_id(b, id);
    add(r, LMB_Command_DeallocateBuffer, lmb_DeallocateBuffer_end(b));
    unlock(r);
}

void cap_write_buffer(lm_device *dev, uint32_t cq, lm_buffer buffer, uint64_t offset, uint64_t size,
                      const void *src, bool blocking) {
    cap_recorder *r = lock(dev);
    if (!r) return;
    lm_buffer_config cfg;
    lm_status st = rt_buffer_describe(buffer, NULL, &cfg);
    if (st)
        fail_with_last(r, st);
    else
        record_write(r, cq, need(r, &r->buffers, buffer.id, "buffer"), src, size ? size : cfg.size,
                     blocking, size != 0, offset);
    unlock(r);
}

void cap_read_buffer(lm_device *dev, uint32_t cq, lm_buffer buffer, uint64_t offset, uint64_t size,
                     bool blocking) {
    cap_recorder *r = lock(dev);
    if (!r) return;
    fb_builder *b = lmb_writer_builder(r->writer);
    uint32_t id = need(r, &r->buffers, buffer.id, "buffer");
    lmb_EnqueueReadBuffer_start(b);
    lmb_EnqueueReadBuffer_add_cq_id(b, (uint8_t)cq);
    lmb_EnqueueReadBuffer_add_buffer_id(b, id);
    lmb_EnqueueReadBuffer_add_blocking(b, blocking);
    if (size) {
        lmb_EnqueueReadBuffer_add_offset(b, offset);
        lmb_EnqueueReadBuffer_add_size(b, size);
    }
    add(r, LMB_Command_EnqueueReadBuffer, lmb_EnqueueReadBuffer_end(b));
    mark_use(r, id, CAP_READ);
    unlock(r);
}

void cap_write_l1(lm_device *dev, uint32_t cq, lm_core core, uint64_t address, uint64_t size,
                  const void *src) {
    cap_recorder *r = lock(dev);
    if (!r) return;
    lmb_BlobRef ref;
    lm_status st = lmb_writer_add_blob(r->writer, src, size, true, &ref);
    if (st) {
        fail_with_last(r, st);
        unlock(r);
        return;
    }
    fb_builder *b = lmb_writer_builder(r->writer);
    lmb_CoreCoord c = {(uint16_t)core.x, (uint16_t)core.y};
    lmb_WriteDeviceL1_start(b);
    lmb_WriteDeviceL1_add_cq_id(b, (uint8_t)cq);
    lmb_WriteDeviceL1_add_core(b, &c);
    lmb_WriteDeviceL1_add_address(b, address);
    lmb_WriteDeviceL1_add_data(b, &ref);
    add(r, LMB_Command_WriteDeviceL1, lmb_WriteDeviceL1_end(b));
    unlock(r);
}

void cap_record_event(lm_device *dev, uint32_t cq, uint32_t event_id) {
    cap_recorder *r = lock(dev);
    if (!r) return;
    uint32_t id = 0;
    lm_status st = map_add(&r->events, event_id, &id);
    if (st) {
        fail_with_last(r, st);
        unlock(r);
        return;
    }
    fb_builder *b = lmb_writer_builder(r->writer);
    lmb_EnqueueRecordEvent_start(b);
    lmb_EnqueueRecordEvent_add_cq_id(b, (uint8_t)cq);
    lmb_EnqueueRecordEvent_add_event_id(b, id);
    add(r, LMB_Command_EnqueueRecordEvent, lmb_EnqueueRecordEvent_end(b));
    unlock(r);
}

/* An event recorded before the capture began marks a point the replay has
 * passed before its first command: waiting for it is a no-op, not recorded. */
void cap_wait_for_event(lm_device *dev, uint32_t cq, uint32_t event_id) {
    cap_recorder *r = lock(dev);
    if (!r) return;
    uint32_t id = map_get(&r->events, event_id);
    if (!id) {
        unlock(r);
        return;
    }
    fb_builder *b = lmb_writer_builder(r->writer);
    lmb_EnqueueWaitForEvent_start(b);
    lmb_EnqueueWaitForEvent_add_cq_id(b, (uint8_t)cq);
    lmb_EnqueueWaitForEvent_add_event_id(b, id);
    add(r, LMB_Command_EnqueueWaitForEvent, lmb_EnqueueWaitForEvent_end(b));
    unlock(r);
}

void cap_event_synchronize(lm_device *dev, uint32_t event_id) {
    cap_recorder *r = lock(dev);
    if (!r) return;
    uint32_t id = map_get(&r->events, event_id);
    if (!id) {
        unlock(r);
        return;
    }
    fb_builder *b = lmb_writer_builder(r->writer);
    lmb_EventSynchronize_start(b);
    lmb_EventSynchronize_add_event_id(b, id);
    add(r, LMB_Command_EventSynchronize, lmb_EventSynchronize_end(b));
    unlock(r);
}

void cap_finish(lm_device *dev, uint32_t cq) {
    cap_recorder *r = lock(dev);
    if (!r) return;
    fb_builder *b = lmb_writer_builder(r->writer);
    lmb_FinishQueue_start(b);
    lmb_FinishQueue_add_cq_id(b, (uint8_t)cq);
    add(r, LMB_Command_FinishQueue, lmb_FinishQueue_end(b));
    unlock(r);
}

/* ---- programs ---- */

/* The CreateProgram of a program being adopted (adopt_snapshot). */
static void record_program(lm_device *dev, lm_program program) {
    cap_recorder *r = lock(dev);
    if (!r) return;
    uint32_t id;
    lm_status st = map_add(&r->programs, program.id, &id);
    if (st) {
        fail_with_last(r, st);
    } else {
        fb_builder *b = lmb_writer_builder(r->writer);
        lmb_CreateProgram_start(b);
        lmb_CreateProgram_add_program_id(b, id);
        add(r, LMB_Command_CreateProgram, lmb_CreateProgram_end(b));
    }
    unlock(r);
}

void cap_create_program(lm_device *dev, lm_program program) {
    cap_recorder *r = lock(dev);
    if (!r) return;
    if (!idmap_put(&r->unrecorded, program.id, 1) && !r->error)
        fail(r, LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    unlock(r);
}

void cap_release_program(lm_device *dev, lm_program program) {
    cap_recorder *r = lock(dev);
    if (!r) return;
    /* Never enqueued outside a trace: nothing to record. */
    if (!map_get(&r->programs, program.id) && idmap_remove(&r->unrecorded, program.id))
        return unlock(r);
    fb_builder *b = lmb_writer_builder(r->writer);
    uint32_t id = need(r, &r->programs, program.id, "program");
    lmb_ReleaseProgram_start(b);
    lmb_ReleaseProgram_add_program_id(b, id);
    add(r, LMB_Command_ReleaseProgram, lmb_ReleaseProgram_end(b));
    unlock(r);
}

void cap_create_kernel(lm_device *dev, lm_program program, lm_kernel kernel,
                       const lm_core_range_set *cores, const lm_kernel_config *cfg) {
    if (unrecorded(dev, program)) return; /* recorded as it is when first enqueued */
    cap_recorder *r = lock(dev);
    if (!r) return;
    uint32_t pid = need(r, &r->programs, program.id, "program"), kid = 0;
    rt_kernel_desc d;
    uint64_t hash = 0;
    lm_status st = rt_kernel_describe(program, kernel, &d);
    if (!st) st = lmb_writer_add_kernel_binary(r->writer, d.elf, d.elf_size, &hash);
    if (!st) st = map_add(&r->kernels, kernel.id, &kid);
    if (st) {
        fail_with_last(r, st);
        unlock(r);
        return;
    }
    fb_builder *b = lmb_writer_builder(r->writer);
    fb_ref vcores = core_ranges(b, cores);
    fb_ref vargs = fb_create_vector_u32(b, cfg->compile_args, cfg->compile_arg_count);
    fb_ref name = fb_create_string(b, d.name, strlen(d.name));
    fb_ref source = r->opts.include_kernel_sources && d.source
                        ? fb_create_string(b, d.source, strlen(d.source))
                        : 0;
    fb_ref vdefs = 0, vnamed = 0,
           refs[LM_MAX_KERNEL_DEFINES > LM_MAX_COMPILE_ARGS ? LM_MAX_KERNEL_DEFINES
                                                            : LM_MAX_COMPILE_ARGS];
    for (uint32_t i = 0; i < cfg->define_count; i++) {
        const lm_kernel_define *def = &cfg->defines[i];
        fb_ref dn = fb_create_string(b, def->name, strlen(def->name));
        fb_ref dv = def->value ? fb_create_string(b, def->value, strlen(def->value)) : 0;
        lmb_KernelDefine_start(b);
        lmb_KernelDefine_add_name(b, dn);
        if (dv) lmb_KernelDefine_add_value(b, dv);
        refs[i] = lmb_KernelDefine_end(b);
    }
    if (cfg->define_count) vdefs = fb_create_vector_refs(b, refs, cfg->define_count);
    for (uint32_t i = 0; i < cfg->named_compile_arg_count; i++) {
        const lm_named_compile_arg *n = &cfg->named_compile_args[i];
        fb_ref nn = fb_create_string(b, n->name, strlen(n->name));
        lmb_NamedCompileArg_start(b);
        lmb_NamedCompileArg_add_name(b, nn);
        lmb_NamedCompileArg_add_value(b, n->value);
        refs[i] = lmb_NamedCompileArg_end(b);
    }
    if (cfg->named_compile_arg_count)
        vnamed = fb_create_vector_refs(b, refs, cfg->named_compile_arg_count);
    lmb_KernelConfig_start(b);
    lmb_KernelConfig_add_processor(b, (lmb_Processor)cfg->processor); /* same numbering */
    lmb_KernelConfig_add_noc(b, cfg->noc == LM_NOC_1 ? LMB_NocIndex_Noc1 : LMB_NocIndex_Noc0);
    lmb_KernelConfig_add_math_fidelity(b, (lmb_MathFidelity)cfg->math_fidelity);
    lmb_KernelConfig_add_fp32_dest_acc_en(b, cfg->fp32_dest_acc_en);
    lmb_KernelConfig_add_math_approx_mode(b, cfg->math_approx_mode);
    lmb_KernelConfig_add_compile_args(b, vargs);
    if (vdefs) lmb_KernelConfig_add_defines(b, vdefs);
    if (vnamed) lmb_KernelConfig_add_named_compile_args(b, vnamed);
    fb_ref kcfg = lmb_KernelConfig_end(b);
    lmb_CreateKernel_start(b);
    lmb_CreateKernel_add_kernel_id(b, kid);
    lmb_CreateKernel_add_program_id(b, pid);
    lmb_CreateKernel_add_binary_hash(b, hash);
    lmb_CreateKernel_add_cores(b, vcores);
    lmb_CreateKernel_add_config(b, kcfg);
    lmb_CreateKernel_add_name(b, name);
    if (source) lmb_CreateKernel_add_source(b, source);
    add(r, LMB_Command_CreateKernel, lmb_CreateKernel_end(b));
    unlock(r);
}

void cap_set_runtime_args(lm_device *dev, lm_program program, lm_kernel kernel, lm_core core,
                          const uint32_t *args, uint32_t count) {
    if (unrecorded(dev, program)) return; /* recorded as it is when first enqueued */
    cap_recorder *r = lock(dev);
    if (!r) return;
    uint32_t pid = need(r, &r->programs, program.id, "program");
    uint32_t kid = need(r, &r->kernels, kernel.id, "kernel");
    fb_builder *b = lmb_writer_builder(r->writer);
    fb_ref v = fb_create_vector_u32(b, args, count);
    lmb_CoreCoord c = {(uint16_t)core.x, (uint16_t)core.y};
    lmb_SetRuntimeArgs_start(b);
    lmb_SetRuntimeArgs_add_program_id(b, pid);
    lmb_SetRuntimeArgs_add_kernel_id(b, kid);
    lmb_SetRuntimeArgs_add_core(b, &c);
    lmb_SetRuntimeArgs_add_args(b, v);
    add(r, LMB_Command_SetRuntimeArgs, lmb_SetRuntimeArgs_end(b));
    unlock(r);
}

void cap_set_common_runtime_args(lm_device *dev, lm_program program, lm_kernel kernel,
                                 const uint32_t *args, uint32_t count) {
    if (unrecorded(dev, program)) return; /* recorded as it is when first enqueued */
    cap_recorder *r = lock(dev);
    if (!r) return;
    uint32_t pid = need(r, &r->programs, program.id, "program");
    uint32_t kid = need(r, &r->kernels, kernel.id, "kernel");
    fb_builder *b = lmb_writer_builder(r->writer);
    fb_ref v = fb_create_vector_u32(b, args, count);
    lmb_SetCommonRuntimeArgs_start(b);
    lmb_SetCommonRuntimeArgs_add_program_id(b, pid);
    lmb_SetCommonRuntimeArgs_add_kernel_id(b, kid);
    lmb_SetCommonRuntimeArgs_add_args(b, v);
    add(r, LMB_Command_SetCommonRuntimeArgs, lmb_SetCommonRuntimeArgs_end(b));
    unlock(r);
}

void cap_create_cb(lm_device *dev, lm_program program, lm_circular_buffer cb,
                   const lm_core_range_set *cores, const lm_circular_buffer_config *cfg) {
    if (unrecorded(dev, program)) return; /* recorded as it is when first enqueued */
    cap_recorder *r = lock(dev);
    if (!r) return;
    uint32_t pid = need(r, &r->programs, program.id, "program"), id = 0;
    uint32_t global =
        cfg->globally_allocated.id ? need(r, &r->buffers, cfg->globally_allocated.id, "buffer") : 0;
    lm_status st = map_add(&r->cbs, cb.id, &id);
    if (st) fail_with_last(r, st);
    fb_builder *b = lmb_writer_builder(r->writer);
    lmb_CBFormat formats[LM_MAX_CB_INDICES];
    for (uint32_t i = 0; i < cfg->index_count; i++) {
        lmb_DataFormat f = lmb_data_format_from_api(cfg->indices[i].format);
        formats[i] =
            (lmb_CBFormat){(uint8_t)cfg->indices[i].index, (uint8_t)f, cfg->indices[i].page_size};
        if (f < sizeof r->formats_seen) r->formats_seen[f] = 1;
    }
    fb_ref vcores = core_ranges(b, cores);
    fb_ref vformats = lmb_vec_CBFormat_create(b, formats, cfg->index_count);
    lmb_CreateCircularBuffer_start(b);
    lmb_CreateCircularBuffer_add_cb_id(b, id);
    lmb_CreateCircularBuffer_add_program_id(b, pid);
    lmb_CreateCircularBuffer_add_cores(b, vcores);
    lmb_CreateCircularBuffer_add_total_size(b, cfg->total_size);
    lmb_CreateCircularBuffer_add_formats(b, vformats);
    lmb_CreateCircularBuffer_add_global_buffer_id(b, global);
    add(r, LMB_Command_CreateCircularBuffer, lmb_CreateCircularBuffer_end(b));
    unlock(r);
}

void cap_update_cb(lm_device *dev, lm_program program, lm_circular_buffer cb,
                   const lm_circular_buffer_config *cfg) {
    if (unrecorded(dev, program)) return; /* recorded as it is when first enqueued */
    cap_recorder *r = lock(dev);
    if (!r) return;
    uint32_t pid = need(r, &r->programs, program.id, "program");
    uint32_t id = need(r, &r->cbs, cb.id, "circular buffer");
    uint32_t global =
        cfg->globally_allocated.id ? need(r, &r->buffers, cfg->globally_allocated.id, "buffer") : 0;
    fb_builder *b = lmb_writer_builder(r->writer);
    lmb_CBFormat formats[LM_MAX_CB_INDICES];
    for (uint32_t i = 0; i < cfg->index_count; i++)
        formats[i] = (lmb_CBFormat){(uint8_t)cfg->indices[i].index,
                                    (uint8_t)lmb_data_format_from_api(cfg->indices[i].format),
                                    cfg->indices[i].page_size};
    fb_ref vformats = lmb_vec_CBFormat_create(b, formats, cfg->index_count);
    lmb_UpdateCircularBuffer_start(b);
    lmb_UpdateCircularBuffer_add_cb_id(b, id);
    lmb_UpdateCircularBuffer_add_program_id(b, pid);
    lmb_UpdateCircularBuffer_add_total_size(b, cfg->total_size);
    lmb_UpdateCircularBuffer_add_formats(b, vformats);
    lmb_UpdateCircularBuffer_add_global_buffer_id(b, global);
    add(r, LMB_Command_UpdateCircularBuffer, lmb_UpdateCircularBuffer_end(b));
    unlock(r);
}

void cap_create_semaphore(lm_device *dev, lm_program program, const lm_core_range_set *cores,
                          uint32_t initial_value, uint32_t id) {
    if (unrecorded(dev, program)) return; /* recorded as it is when first enqueued */
    cap_recorder *r = lock(dev);
    if (!r) return;
    uint32_t pid = need(r, &r->programs, program.id, "program");
    fb_builder *b = lmb_writer_builder(r->writer);
    fb_ref vcores = core_ranges(b, cores);
    lmb_CreateSemaphore_start(b);
    lmb_CreateSemaphore_add_semaphore_id(b, id);
    lmb_CreateSemaphore_add_program_id(b, pid);
    lmb_CreateSemaphore_add_cores(b, vcores);
    lmb_CreateSemaphore_add_initial_value(b, initial_value);
    add(r, LMB_Command_CreateSemaphore, lmb_CreateSemaphore_end(b));
    unlock(r);
}

void cap_enqueue_program(lm_device *dev, uint32_t cq, lm_program program, bool blocking) {
    adopt(dev, program);
    cap_recorder *r = lock(dev);
    if (!r) return;
    uint32_t pid = need(r, &r->programs, program.id, "program");
    fb_builder *b = lmb_writer_builder(r->writer);
    /* The label current at the enqueue, which this thread just made. */
    const char *label = rt_profile_text(dev->profile, rt_profile_current(dev->profile));
    fb_ref vlabel = label ? fb_create_string(b, label, strlen(label)) : 0;
    lmb_EnqueueProgram_start(b);
    lmb_EnqueueProgram_add_cq_id(b, (uint8_t)cq);
    lmb_EnqueueProgram_add_program_id(b, pid);
    lmb_EnqueueProgram_add_blocking(b, blocking);
    if (vlabel) lmb_EnqueueProgram_add_label(b, vlabel);
    add(r, LMB_Command_EnqueueProgram, lmb_EnqueueProgram_end(b));
    unlock(r);
}

static void record_trace(cap_recorder *r, uint32_t cq, uint32_t trace_id) {
    rt_trace_contents c;
    uint32_t id = 0;
    lm_status st = rt_trace_export(r->device, trace_id, &c);
    if (st) return fail_with_last(r, st);
    st = map_add(&r->traces, trace_id, &id);
    if (!st) st = trace_blob_add(r->writer, id, &c);
    free(c.stream);
    if (st) return fail_with_last(r, st);
    fb_builder *b = lmb_writer_builder(r->writer);
    lmb_LoadTrace_start(b);
    lmb_LoadTrace_add_cq_id(b, (uint8_t)cq);
    lmb_LoadTrace_add_trace_id(b, id);
    add(r, LMB_Command_LoadTrace, lmb_LoadTrace_end(b));
}

void cap_trace_exists(lm_device *dev, uint32_t cq, uint32_t trace_id) {
    cap_recorder *r = lock(dev);
    if (!r) return;
    record_trace(r, cq, trace_id);
    unlock(r);
}

void cap_replay_trace(lm_device *dev, uint32_t cq, uint32_t trace_id, bool blocking) {
    cap_recorder *r = lock(dev);
    if (!r) return;
    uint32_t id = need(r, &r->traces, trace_id, "trace");
    fb_builder *b = lmb_writer_builder(r->writer);
    lmb_ReplayTrace_start(b);
    lmb_ReplayTrace_add_cq_id(b, (uint8_t)cq);
    lmb_ReplayTrace_add_trace_id(b, id);
    lmb_ReplayTrace_add_blocking(b, blocking);
    add(r, LMB_Command_ReplayTrace, lmb_ReplayTrace_end(b));
    unlock(r);
}

void cap_release_trace(lm_device *dev, uint32_t trace_id) {
    cap_recorder *r = lock(dev);
    if (!r) return;
    uint32_t id = need(r, &r->traces, trace_id, "trace");
    fb_builder *b = lmb_writer_builder(r->writer);
    lmb_ReleaseTrace_start(b);
    lmb_ReleaseTrace_add_trace_id(b, id);
    add(r, LMB_Command_ReleaseTrace, lmb_ReleaseTrace_end(b));
    unlock(r);
}

/* ---- goldens and names ---- */

lm_status cap_golden(lm_device *dev, uint32_t cq, lm_buffer buffer, const void *data,
                     uint64_t size) {
    cap_recorder *r = lock(dev);
    if (!r) return err_set(LM_ERR_INVALID_STATE, "no Light Metal capture is active");
    lm_status st = LM_OK;
    uint32_t id = map_get(&r->buffers, buffer.id);
    lmb_BlobRef ref;
    if (!id) st = err_set(LM_ERR_INVALID_ARGUMENT, "the buffer is not part of the capture");
    if (!st) st = lmb_writer_add_blob(r->writer, data, size, true, &ref);
    if (!st) {
        fb_builder *b = lmb_writer_builder(r->writer);
        lmb_CompareToGolden_start(b);
        lmb_CompareToGolden_add_cq_id(b, (uint8_t)cq);
        lmb_CompareToGolden_add_buffer_id(b, id);
        lmb_CompareToGolden_add_golden(b, &ref);
        st = lmb_writer_add_command(r->writer, LMB_Command_CompareToGolden,
                                    lmb_CompareToGolden_end(b));
    }
    if (!st) mark_use(r, id, CAP_READ);
    unlock(r);
    return st;
}

/* A clash is refused when the name is given: a file with two buffers of one
 * name could not be replayed (the verifier refuses it). */
static lm_status check_name(const cap_recorder *r, uint32_t id, const char *name) {
    for (uint32_t i = 0; i < r->name_count; i++) {
        const cap_name *n = &r->names[i];
        if (!strcmp(n->name, name))
            return err_set(LM_ERR_INVALID_ARGUMENT,
                           "the name '%s' is already given to buffer %u of the capture", name,
                           n->id);
        if (n->id == id)
            return err_set(LM_ERR_INVALID_ARGUMENT,
                           "buffer %u of the capture is already named '%s' (asked for '%s')", id,
                           n->name, name);
    }
    return LM_OK;
}

lm_status cap_name_buffer(lm_device *dev, lm_buffer buffer, const char *name,
                          const lm_buffer_name_options *opts) {
    cap_recorder *r = lock(dev);
    if (!r) return err_set(LM_ERR_INVALID_STATE, "no Light Metal capture is active");
    lm_status st = LM_OK;
    uint32_t id = map_get(&r->buffers, buffer.id);
    if (!id) st = err_set(LM_ERR_INVALID_ARGUMENT, "the buffer is not part of the capture");
    if (!st) st = check_name(r, id, name);
    if (!st && r->name_count == r->name_capacity) {
        uint32_t cap = r->name_capacity ? r->name_capacity * 2 : 8;
        cap_name *n = realloc(r->names, cap * sizeof *n);
        if (!n) st = err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        if (n) r->names = n, r->name_capacity = cap;
    }
    if (!st) {
        cap_name *n = &r->names[r->name_count++];
        n->id = id;
        snprintf(n->name, sizeof n->name, "%s", name);
        n->opts = *opts;
    }
    unlock(r);
    return st;
}

/* The role a name gets in the file: as given, or from what the host did. */
static lmb_BufferRole role_of(const cap_recorder *r, const cap_name *n) {
    if (n->opts.role != LM_BUFFER_ROLE_AUTO) return (lmb_BufferRole)n->opts.role;
    uint8_t use = n->id < r->use_capacity ? r->use[n->id] : 0;
    if (use == CAP_WRITTEN) return LMB_BufferRole_Input;
    if (use == CAP_READ) return LMB_BufferRole_Output;
    return LMB_BufferRole_InputOutput; /* both, or no sign of either */
}

static lm_status write_names(cap_recorder *r) {
    lm_status st = LM_OK;
    for (uint32_t i = 0; i < r->name_count && !st; i++) {
        const cap_name *n = &r->names[i];
        uint32_t shape[LM_MAX_TENSOR_RANK];
        for (uint32_t d = 0; d < n->opts.rank; d++)
            shape[d] = (uint32_t)n->opts.shape[d]; /* the API checked the range */
        lmb_tensor_desc d = {.format = lmb_data_format_from_api(n->opts.format),
                             .shape = shape,
                             .rank = n->opts.rank,
                             .scalar = n->opts.scalar,
                             .element_type = lmb_element_type_from_api(n->opts.element_type)};
        st = lmb_writer_name_tensor_as(r->writer, n->id, role_of(r, n), n->name, &d);
    }
    return st;
}

/* ---- begin and end ---- */

/* Snapshot of the buffers alive at begin: created, then written with their
 * current contents, so the binary needs nothing from before it. */
static void snapshot_buffers(cap_recorder *r, lm_device *dev) {
    lm_command_queue *cq = dev->queues[0];
    for (rt_buffer *b = rt_buffer_oldest(dev); b && !r->error; b = rt_buffer_newer(dev, b)) {
        lm_buffer handle = {b->handle};
        record_create_buffer(r, handle, &b->config);
        void *data = NULL;
        uint64_t size = 0;
        lm_status st = rt_buffer_read(cq, handle, &data, &size);
        if (st) return fail_with_last(r, st);
        record_write(r, 0, map_get(&r->buffers, handle.id), data, size, true, false, 0);
        free(data);
    }
}

/* A program recorded when first enqueued (adopt) through the same hooks
 * live calls use. */
static void snap_program(void *dev, lm_program p) {
    record_program(dev, p);
}
static void snap_kernel(void *dev, lm_program p, lm_kernel k, const lm_core_range_set *cores,
                        const lm_kernel_config *cfg) {
    cap_create_kernel(dev, p, k, cores, cfg);
}
static void snap_args(void *dev, lm_program p, lm_kernel k, lm_core core, const uint32_t *args,
                      uint32_t n) {
    cap_set_runtime_args(dev, p, k, core, args, n);
}
static void snap_common(void *dev, lm_program p, lm_kernel k, const uint32_t *args, uint32_t n) {
    cap_set_common_runtime_args(dev, p, k, args, n);
}
static void snap_cb(void *dev, lm_program p, lm_circular_buffer cb, const lm_core_range_set *cores,
                    const lm_circular_buffer_config *cfg) {
    cap_create_cb(dev, p, cb, cores, cfg);
}
static void snap_semaphore(void *dev, lm_program p, const lm_core_range_set *cores,
                           uint32_t initial, uint32_t id) {
    cap_create_semaphore(dev, p, cores, initial, id);
}

static void adopt_snapshot(lm_device *dev, lm_program p, cap_recorder *r) {
    rt_snapshot_visitor v = {dev,         snap_program, snap_kernel,   snap_args,
                             snap_common, snap_cb,      snap_semaphore};
    lm_status st = rt_program_snapshot_one(p, &v);
    if (st) {
        pthread_mutex_lock(&r->mutex);
        fail_with_last(r, st);
        pthread_mutex_unlock(&r->mutex);
    }
}

static void note_unrecorded(void *ctx, lm_program p) {
    cap_recorder *r = ctx;
    if (!idmap_put(&r->unrecorded, p.id, 1) && !r->error)
        fail(r, LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
}

static void recorder_free(cap_recorder *r) {
    if (!r) return;
    idmap_free(&r->unrecorded);
    pthread_mutex_destroy(&r->adopt_mutex);
    lmb_writer_destroy(r->writer);
    map_free(&r->buffers);
    map_free(&r->programs);
    map_free(&r->kernels);
    map_free(&r->events);
    map_free(&r->cbs);
    map_free(&r->traces);
    free(r->names);
    free(r->use);
    pthread_mutex_destroy(&r->mutex);
    free(r);
}

static const rt_capture_sink sink = {
    .create_buffer = cap_create_buffer,
    .deallocate_buffer = cap_deallocate_buffer,
    .write_buffer = cap_write_buffer,
    .write_l1 = cap_write_l1,
    .update_cb = cap_update_cb,
    .record_event = cap_record_event,
    .wait_for_event = cap_wait_for_event,
    .event_synchronize = cap_event_synchronize,
    .read_buffer = cap_read_buffer,
    .finish = cap_finish,
    .create_program = cap_create_program,
    .release_program = cap_release_program,
    .create_kernel = cap_create_kernel,
    .set_runtime_args = cap_set_runtime_args,
    .set_common_runtime_args = cap_set_common_runtime_args,
    .create_cb = cap_create_cb,
    .create_semaphore = cap_create_semaphore,
    .enqueue_program = cap_enqueue_program,
    .trace_exists = cap_trace_exists,
    .replay_trace = cap_replay_trace,
    .release_trace = cap_release_trace,
    .golden = cap_golden,
    .name_buffer = cap_name_buffer,
};

lm_status cap_begin(lm_device *dev, const lm_capture_options *opts) {
    if (dev->capture) return err_set(LM_ERR_INVALID_STATE, "the device is already being captured");
    cap_recorder *r = calloc(1, sizeof *r);
    if (!r) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    pthread_mutex_init(&r->mutex, NULL);
    pthread_mutex_init(&r->adopt_mutex, NULL);
    r->device = dev;
    if (opts) r->opts = *opts;
    lm_status st = lmb_writer_create(&r->writer);
    if (st) {
        recorder_free(r);
        return st;
    }
    snapshot_buffers(r, dev);
    /* The programs alive now are recorded when first enqueued (adopt). */
    rt_program_each(dev, note_unrecorded, r);
    dev->capture = r;
    dev->capture_sink = &sink;
    /* Traces alive at begin: stored, and loaded first thing on replay. */
    for (uint32_t id = 1; id <= LM_MAX_TRACES && !r->error; id++)
        if (rt_trace_exists(dev, id)) cap_trace_exists(dev, 0, id);
    if (r->error) {
        dev->capture = NULL;
        dev->capture_sink = NULL;
        st = err_set(r->error, "%s", r->error_message);
        recorder_free(r);
        return st;
    }
    return LM_OK;
}

lm_status cap_end(lm_device *dev, const lmb_header *base, lmb_writer **out_writer) {
    cap_recorder *r = dev->capture;
    if (!r) return err_set(LM_ERR_INVALID_STATE, "no Light Metal capture is active");
    pthread_mutex_lock(&r->mutex);
    dev->capture = NULL;
    dev->capture_sink = NULL;
    pthread_mutex_unlock(&r->mutex);
    lm_status st = LM_OK;
    if (r->error) st = err_set(r->error, "%s", r->error_message);
    lmb_header hdr = *base;
    uint8_t formats[8];
    size_t nformats = 0;
    for (uint8_t f = 0; f < sizeof r->formats_seen; f++)
        if (r->formats_seen[f]) formats[nformats++] = f;
    hdr.data_formats = formats;
    hdr.data_format_count = nformats;
    if (!st) st = write_names(r);
    if (!st) st = lmb_writer_finish(r->writer, &hdr);
    if (!st) {
        *out_writer = r->writer;
        r->writer = NULL;
    }
    recorder_free(r);
    return st;
}
