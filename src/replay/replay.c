/* Light Metal replay: verify a binary once, then execute its commands on a
 * device through the runtime (never through the public API, so nothing is
 * recorded again and no argument is checked twice). */
#include "lightmetal/lm_replay.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "base/file.h"
#include "base/hash.h"
#include "base/idmap.h"
#include "format/lmb.h"
#include "format/lmb_enums.h"
#include "format/lmb_semantic.h"
#include "replay/replay.h"
#include "runtime/buffer.h"
#include "runtime/capture_sink.h"
#include "runtime/cq.h"
#include "runtime/device.h"
#include "runtime/profile.h"
#include "runtime/program.h"
#include "runtime/trace.h"
#include "runtime/trace_blob.h"
#include "sim/kernel_map.h"

typedef struct named {
    char *name;
    uint32_t buffer_id;
    lm_replay_buffer_info info; /* info.name is `name` */
    const void *input;          /* replacement for what the workload writes, or NULL */
    uint64_t input_size;
    void *output; /* contents at the end of the last run */
    uint64_t output_size;
    bool empty; /* its shape has a 0 dimension: a tensor of no bytes */
} named;

struct lm_replay {
    file_mapping mapping; /* when opened from a file */
    const uint8_t *data;
    uint64_t size;
    fb_table root;
    fb_vec commands;
    named *names;
    uint32_t name_count;
    uint32_t queues_used; /* bit q: some command runs on queue q */
    /* The last run's profile, with lm_replay_options.profile: by label and
     * by (label, program). */
    lm_profile_entry *profile;
    size_t profile_count;
    lm_profile_program_entry *programs;
    size_t program_count;
};

/* What one run keeps. */
typedef struct run_state {
    lm_replay *r;
    lm_device *dev;
    const lm_replay_options *opts;
    lm_replay_report *report;
    idmap buffers, programs, kernels, traces; /* file id -> runtime handle */
    idmap events;                             /* file id -> index into `event` */
    idmap cbs;                                /* file id -> circular buffer handle */
    lm_event *event;                          /* the events the run recorded */
    uint32_t event_count, event_capacity;
    void **reads; /* host copies the workload read into, freed after the run */
    uint32_t read_count, read_capacity;
    uint32_t index; /* the command being run, for messages */
} run_state;

/* ---- id tables ---- */

static lm_status id_put(idmap *t, uint32_t id, uint64_t handle) {
    return idmap_put(t, id, handle) ? LM_OK
                                    : err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
}

/* The handle for `id` (the verifier guarantees it was defined). */
static uint64_t id_get(const idmap *t, uint32_t id) {
    const uint64_t *h = idmap_find(t, id);
    return h ? *h : 0;
}

/* ---- opening ---- */

/* The size the file gives buffer `buffer_id` (its CreateBuffer). */
static uint64_t created_size(fb_vec commands, uint32_t buffer_id) {
    for (uint32_t i = 0; i < commands.len; i++) {
        fb_table e = fb_vec_table(commands, i);
        if (lmb_CommandEntry_cmd_type(e) != LMB_Command_CreateBuffer) continue;
        fb_table c = lmb_CommandEntry_cmd(e);
        if (lmb_CreateBuffer_buffer_id(c) == buffer_id) return lmb_CreateBuffer_size(c);
    }
    return 0;
}

static lm_status load_names(lm_replay *r) {
    fb_vec v = lmb_LightMetalBinary_buffer_names(r->root);
    uint32_t n = v.len;
    r->names = calloc(n ? n : 1, sizeof *r->names);
    if (!r->names) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    for (uint32_t i = 0; i < n; i++) {
        fb_table t = fb_vec_table(v, i);
        fb_str name = lmb_BufferName_name(t);
        named *nm = &r->names[r->name_count++];
        nm->buffer_id = lmb_BufferName_buffer_id(t);
        nm->name = malloc(name.len + 1);
        if (!nm->name) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        memcpy(nm->name, name.ptr, name.len);
        nm->name[name.len] = '\0';
        /* Roles and formats share the file's numbering (verified ranges). */
        lm_replay_buffer_info *info = &nm->info;
        info->name = nm->name;
        info->role = (lm_buffer_role)lmb_BufferName_role(t);
        info->size = created_size(r->commands, nm->buffer_id);
        info->format = lmb_data_format_to_api(lmb_BufferName_format(t));
        info->element_type = lmb_element_type_to_api(lmb_BufferName_element_type(t));
        info->scalar = lmb_BufferName_scalar(t);
        fb_vec shape = lmb_BufferName_shape(t);
        info->rank = shape.len;
        for (uint32_t d = 0; d < shape.len && d < LM_MAX_TENSOR_RANK; d++) {
            info->shape[d] = fb_vec_u32(shape, d);
            nm->empty |= info->shape[d] == 0;
        }
        if (nm->empty) info->size = 0; /* its buffer is only a placeholder */
    }
    return LM_OK;
}

void rp_semantic_options(lmb_semantic_options *so) {
    lmb_semantic_options_init(so);
    so->kernel_map = (lmb_kernel_map){.code_base = KMAP_CODE_BASE,
                                      .code_size = KMAP_CODE_SIZE,
                                      .local_base = KMAP_LOCAL_BASE,
                                      .local_size = KMAP_LOCAL_SIZE};
    so->memory_map = (lmb_memory_map){.dram_alignment = RT_DRAM_ALIGNMENT,
                                      .l1_alignment = RT_L1_ALIGNMENT,
                                      .l1_base = RT_L1_RESERVED,
                                      .max_command_queues = LM_MAX_COMMAND_QUEUES};
}

static lm_status open_verified(const void *data, uint64_t size, lm_replay *r) {
    lmb_verify_options vo;
    lmb_verify_options_init(&vo);
    lm_status st = lmb_verify(data, size, &vo, NULL);
    if (st) return st;
    lmb_semantic_options so;
    rp_semantic_options(&so);
    lmb_semantic_facts facts;
    st = lmb_verify_semantics(data, size, &so, &facts);
    if (st) return st;
    r->queues_used = facts.queues_used;
    r->data = data;
    r->size = size;
    r->root = lmb_root(data);
    r->commands = lmb_LightMetalBinary_commands(r->root);
    return load_names(r);
}

uint32_t lm_replay_buffer_count(const lm_replay *r) {
    return r ? r->name_count : 0;
}

lm_status lm_replay_buffer_info_at(const lm_replay *r, uint32_t index,
                                   lm_replay_buffer_info *out_info) {
    const char *fn = "lm_replay_buffer_info_at";
    if (!r || !out_info)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: replay and out_info must not be NULL", fn);
    if (index >= r->name_count)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: index %u, the binary names %u buffers", fn,
                       index, r->name_count);
    *out_info = r->names[index].info;
    return LM_OK;
}

void lm_replay_close(lm_replay *r) {
    if (!r) return;
    for (uint32_t i = 0; i < r->name_count; i++) {
        free(r->names[i].name);
        free(r->names[i].output);
    }
    free(r->names);
    lm_profile_free(r->profile);
    lm_profile_program_free(r->programs);
    file_unmap(&r->mapping);
    free(r);
}

lm_status lm_replay_open(const void *data, uint64_t size, lm_replay **out_replay) {
    const char *fn = "lm_replay_open";
    if (!data || !out_replay)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: data and out_replay must not be NULL", fn);
    lm_replay *r = calloc(1, sizeof *r);
    if (!r) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
    lm_status st = open_verified(data, size, r);
    if (st) {
        lm_replay_close(r);
        return err_prefix(st, "%s", fn);
    }
    *out_replay = r;
    return LM_OK;
}

lm_status lm_replay_open_file(const char *path, lm_replay **out_replay) {
    const char *fn = "lm_replay_open_file";
    if (!path || !out_replay)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: path and out_replay must not be NULL", fn);
    lm_replay *r = calloc(1, sizeof *r);
    if (!r) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
    lm_status st = file_map(path, &r->mapping);
    if (!st && !r->mapping.data) st = err_set(LM_ERR_INVALID_FILE, "'%s' is empty", path);
    if (!st) {
        st = open_verified(r->mapping.data, r->mapping.size, r);
        if (st) err_prefix(st, "'%s'", path);
    }
    if (st) {
        lm_replay_close(r);
        return err_prefix(st, "%s", fn);
    }
    *out_replay = r;
    return LM_OK;
}

static named *find_name(lm_replay *r, const char *name) {
    for (uint32_t i = 0; i < r->name_count; i++)
        if (!strcmp(r->names[i].name, name)) return &r->names[i];
    return NULL;
}

static named *find_buffer_name(lm_replay *r, uint32_t buffer_id) {
    for (uint32_t i = 0; i < r->name_count; i++)
        if (r->names[i].buffer_id == buffer_id) return &r->names[i];
    return NULL;
}

lm_status lm_replay_set_input(lm_replay *r, const char *name, const void *data, uint64_t size) {
    const char *fn = "lm_replay_set_input";
    if (!r || !name || (!data && size))
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: replay, name and data must not be NULL", fn);
    named *nm = find_name(r, name);
    if (!nm) return err_set(LM_ERR_NOT_FOUND, "%s: the binary has no buffer named '%s'", fn, name);
    uint64_t want = nm->info.size;
    if (size != want)
        return err_set(LM_ERR_INVALID_ARGUMENT,
                       "%s: buffer '%s' holds %llu bytes, the input has %llu", fn, name,
                       (unsigned long long)want, (unsigned long long)size);
    if (nm->empty) return LM_OK; /* nothing to replace */
    nm->input = data;
    nm->input_size = size;
    return LM_OK;
}

lm_status lm_replay_get_output(lm_replay *r, const char *name, void *dst, uint64_t size) {
    const char *fn = "lm_replay_get_output";
    if (!r || !name || (!dst && size))
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: replay, name and dst must not be NULL", fn);
    named *nm = find_name(r, name);
    if (!nm) return err_set(LM_ERR_NOT_FOUND, "%s: the binary has no buffer named '%s'", fn, name);
    if (!nm->output)
        return err_set(LM_ERR_INVALID_STATE, "%s: buffer '%s' has no contents yet (run first)", fn,
                       name);
    if (size != nm->output_size)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: buffer '%s' holds %llu bytes, not %llu", fn,
                       name, (unsigned long long)nm->output_size, (unsigned long long)size);
    if (size) memcpy(dst, nm->output, size);
    return LM_OK;
}

void lm_replay_options_init(lm_replay_options *opts) {
    if (!opts) return;
    *opts = (lm_replay_options){.loops = 1, .check_blob_hashes = true, .check_goldens = true};
}

/* ---- running ---- */

static lm_command_queue *queue(run_state *s, uint8_t cq_id) {
    return s->dev->queues[cq_id < s->dev->info.num_command_queues ? cq_id : 0];
}

static lm_core_range_set core_set(fb_vec v) {
    lm_core_range_set set = {.count = v.len};
    for (uint32_t i = 0; i < set.count && i < LM_MAX_CORE_RANGES; i++) {
        lmb_CoreRange cr = lmb_vec_CoreRange_at(v, i);
        set.ranges[i] = (lm_core_range){{cr.start.x, cr.start.y}, {cr.end.x, cr.end.y}};
    }
    return set;
}

/* Runtime arguments out of the file (read as little-endian on every host).
 * The semantic verifier has already bounded their number. */
typedef struct arg_words {
    uint32_t n;
    uint32_t w[LM_MAX_RUNTIME_ARGS];
} arg_words;

static void u32_vec(fb_vec v, arg_words *out) {
    out->n = v.len < LM_MAX_RUNTIME_ARGS ? v.len : LM_MAX_RUNTIME_ARGS;
    for (uint32_t i = 0; i < out->n; i++)
        out->w[i] = fb_vec_u32(v, i);
}

static lm_status keep_read(run_state *s, void *host) {
    if (s->read_count == s->read_capacity) {
        uint32_t cap = s->read_capacity ? s->read_capacity * 2 : 16;
        void **p = realloc(s->reads, cap * sizeof *p);
        if (!p) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        s->reads = p;
        s->read_capacity = cap;
    }
    s->reads[s->read_count++] = host;
    return LM_OK;
}

/* First element (4-byte words) of got[0, n) outside the tolerance, or
 * UINT64_MAX; widens the report's error figures. */
static uint64_t first_beyond(run_state *s, const uint8_t *got, const uint8_t *want, uint64_t n) {
    lm_replay_report *rep = s->report;
    uint64_t first = UINT64_MAX;
    for (uint64_t i = 0; i < n; i++) {
        float g, w;
        memcpy(&g, got + 4 * i, 4);
        memcpy(&w, want + 4 * i, 4);
        double err = fabs((double)g - (double)w), rel = w != 0 ? err / fabs((double)w) : 0;
        bool ok = err <= s->opts->atol + s->opts->rtol * fabs((double)w) || (isnan(g) && isnan(w));
        if (err > rep->max_abs_error) rep->max_abs_error = err;
        if (rel > rep->max_rel_error) rep->max_rel_error = rel;
        if (!ok && first == UINT64_MAX) first = i;
    }
    return first;
}

/* Pieces of a golden hashed and then compared while still in cache. */
#define GOLDEN_PIECE (64u << 10)

/* Compares a buffer's contents with a golden, bit for bit or within the
 * tolerance, hashing the golden on the way when asked (one read of it);
 * records the outcome in the report. A golden whose hash is wrong is a
 * damaged file, reported as such rather than as a mismatch. */
static lm_status compare(run_state *s, const uint8_t *got, const uint8_t *want, uint64_t size,
                         uint64_t hash) {
    lm_replay_report *rep = s->report;
    hash64_state h;
    hash64_begin(&h, 0);
    uint64_t first = UINT64_MAX;
    for (uint64_t at = 0; at < size; at += GOLDEN_PIECE) {
        size_t n = size - at < GOLDEN_PIECE ? (size_t)(size - at) : GOLDEN_PIECE;
        if (s->opts->check_blob_hashes) hash64_update(&h, want + at, n);
        if (first != UINT64_MAX) continue;
        if (s->opts->tolerance) {
            uint64_t f = first_beyond(s, got + at, want + at, n / 4);
            if (f != UINT64_MAX) first = at / 4 + f;
        } else if (memcmp(got + at, want + at, n)) {
            uint64_t i = at;
            while (got[i] == want[i])
                i++;
            first = i;
        }
    }
    if (s->opts->check_blob_hashes && hash64_end(&h) != hash)
        return err_set(LM_ERR_INVALID_FILE,
                       "blob-hash-mismatch: the golden's %llu bytes hash to %016llx, the file says "
                       "%016llx",
                       (unsigned long long)size, (unsigned long long)hash64_end(&h),
                       (unsigned long long)hash);
    rep->goldens_checked++;
    if (first == UINT64_MAX) return LM_OK;
    rep->goldens_failed++;
    rep->first_mismatch = first;
    if (!s->opts->tolerance)
        return err_set(LM_ERR_MISMATCH, "golden mismatch at byte %llu: got 0x%02x, expected 0x%02x",
                       (unsigned long long)first, got[first], want[first]);
    return err_set(LM_ERR_MISMATCH,
                   "golden mismatch at element %llu beyond the tolerance (max abs error %g, max "
                   "relative error %g)",
                   (unsigned long long)first, rep->max_abs_error, rep->max_rel_error);
}

/* Kernels and traces are small next to buffers and are hashed whole before
 * they are used. */
static lm_status check_blob(const run_state *s, const char *what, const uint8_t *data,
                            lmb_BlobRef ref) {
    if (!s->opts->check_blob_hashes) return LM_OK;
    uint64_t got = hash64(data, (size_t)ref.size, 0);
    if (got == ref.hash) return LM_OK;
    return err_set(LM_ERR_INVALID_FILE,
                   "blob-hash-mismatch: %s of %llu bytes hashes to %016llx, the file says %016llx",
                   what, (unsigned long long)ref.size, (unsigned long long)got,
                   (unsigned long long)ref.hash);
}

/* When the device is being captured, the replay records itself through the
 * recorder's table (runtime/capture_sink.h): replaying a binary under capture
 * yields the same binary. */
#define SINK(s, hook, ...)                                                                         \
    do {                                                                                           \
        const rt_capture_sink *sink_ = (s)->dev->capture_sink;                                     \
        if (sink_) sink_->hook((s)->dev, __VA_ARGS__);                                             \
    } while (0)

static uint32_t cq_id_of(run_state *s, uint8_t cq) {
    return rt_cq_id(queue(s, cq));
}

/* Makes a launch's recorded label the device's current one (none when the
 * command has none), so profiles and a capture of this replay keep it. */
static lm_status set_label(run_state *s, fb_str label) {
    char text[LM_MAX_LAUNCH_LABEL + 1];
    size_t len = label.len < LM_MAX_LAUNCH_LABEL ? label.len : LM_MAX_LAUNCH_LABEL; /* verified */
    if (len) memcpy(text, label.ptr, len);
    text[len] = 0;
    return rt_profile_set_label(s->dev->profile, text);
}

/* Whether a transfer the capture made blocking must wait here. Its host
 * bytes stay put for the whole run (the binary's, an input valid until the
 * run returns, or a read's copy kept until then), so the wait is needed only
 * for the order it gave the other queues: every later command on its own
 * queue follows it on the device anyway. Counts the waits it asks for. */
static bool transfer_waits(run_state *s, uint8_t cq, bool captured_blocking) {
    bool wait = captured_blocking && (s->r->queues_used & ~(1u << cq)) != 0;
    s->report->host_waits += wait;
    return wait;
}

static lm_status run_command(run_state *s, fb_table e) {
    lm_replay *r = s->r;
    fb_table c = lmb_CommandEntry_cmd(e);
    lm_status st = LM_OK;
    switch (lmb_CommandEntry_cmd_type(e)) {
    case LMB_Command_CreateBuffer: {
        lm_shard_spec shard;
        lm_buffer_layout layout = lmb_buffer_layout(c, &shard);
        lm_buffer_config cfg = {
            .type = lmb_CreateBuffer_type(c) == LMB_BufferType_DRAM ? LM_BUFFER_DRAM : LM_BUFFER_L1,
            .layout = layout,
            .shard = shard,
            .size = lmb_CreateBuffer_size(c),
            .page_size = lmb_CreateBuffer_page_size(c),
            .at_address = true,
            .address = lmb_CreateBuffer_address(c),
        };
        lm_buffer b;
        if (!cfg.page_size || cfg.size % cfg.page_size)
            return err_set(LM_ERR_INVALID_FILE, "buffer %u: size and page size do not agree",
                           lmb_CreateBuffer_buffer_id(c));
        st = rt_buffer_create(s->dev, &cfg, &b);
        if (st)
            return err_prefix(st, "buffer %u at its recorded address 0x%llx",
                              lmb_CreateBuffer_buffer_id(c), (unsigned long long)cfg.address);
        SINK(s, create_buffer, b);
        named *nm = find_buffer_name(r, lmb_CreateBuffer_buffer_id(c));
        if (nm) {
            lm_buffer_name_options no = {.role = nm->info.role,
                                         .format = nm->info.format,
                                         .rank = nm->info.rank,
                                         .element_type = nm->info.element_type,
                                         .scalar = nm->info.scalar};
            memcpy(no.shape, nm->info.shape, sizeof no.shape);
            SINK(s, name_buffer, b, nm->name, &no);
        }
        return id_put(&s->buffers, lmb_CreateBuffer_buffer_id(c), b.id);
    }
    case LMB_Command_DeallocateBuffer: {
        uint32_t id = lmb_DeallocateBuffer_buffer_id(c);
        lm_buffer b = {id_get(&s->buffers, id)};
        st = rt_buffer_destroy(b);
        if (!st) SINK(s, deallocate_buffer, b);
        if (!st) idmap_remove(&s->buffers, id);
        return st;
    }
    case LMB_Command_EnqueueWriteBuffer: {
        uint32_t id = lmb_EnqueueWriteBuffer_buffer_id(c);
        lmb_BlobRef ref = lmb_EnqueueWriteBuffer_data(c);
        const void *src = lmb_blob_data(r->data, r->root, ref);
        lm_buffer b = {id_get(&s->buffers, id)};
        lm_buffer_config cfg;
        st = rt_buffer_describe(b, NULL, &cfg);
        /* A region write carries its bytes; a whole write the buffer's. */
        bool region = lmb_EnqueueWriteBuffer_region(c);
        uint64_t offset = region ? lmb_EnqueueWriteBuffer_offset(c) : 0,
                 size = region ? ref.size : 0;
        named *nm = find_buffer_name(r, id);
        bool replaced = nm && nm->input;
        if (replaced) src = (const uint8_t *)nm->input + offset;
        uint8_t q = lmb_EnqueueWriteBuffer_cq_id(c);
        lm_command_queue *cq = queue(s, q);
        bool blocking = !st && transfer_waits(s, q, lmb_EnqueueWriteBuffer_blocking(c));
        if (!st)
            st = replaced || !s->opts->check_blob_hashes
                     ? rt_buffer_transfer_region(cq, b, offset, size, (void *)src, true, blocking)
                     : rt_buffer_write_checked(cq, b, offset, size, src, ref.hash, blocking);
        if (!st) s->report->bytes_written += region ? size : cfg.size;
        if (!st)
            SINK(s, write_buffer, cq_id_of(s, q), b, offset, size, src,
                 lmb_EnqueueWriteBuffer_blocking(c));
        return st;
    }
    case LMB_Command_EnqueueReadBuffer: {
        lm_buffer b = {id_get(&s->buffers, lmb_EnqueueReadBuffer_buffer_id(c))};
        lm_buffer_config cfg;
        st = rt_buffer_describe(b, NULL, &cfg);
        uint64_t offset = lmb_EnqueueReadBuffer_offset(c), size = lmb_EnqueueReadBuffer_size(c);
        if (!st && size) cfg.size = size; /* a region: only its bytes */
        void *host = st ? NULL : malloc(cfg.size ? cfg.size : 1);
        if (!st && !host) st = err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        if (!st) st = keep_read(s, host);
        if (st) {
            free(host);
            return st;
        }
        uint8_t q = lmb_EnqueueReadBuffer_cq_id(c);
        st = rt_buffer_transfer_region(queue(s, q), b, offset, size, host, false,
                                       transfer_waits(s, q, lmb_EnqueueReadBuffer_blocking(c)));
        if (!st) s->report->bytes_read += cfg.size;
        if (!st)
            SINK(s, read_buffer, cq_id_of(s, q), b, offset, size,
                 lmb_EnqueueReadBuffer_blocking(c));
        return st;
    }
    case LMB_Command_FinishQueue:
        s->report->host_waits++;
        SINK(s, finish, cq_id_of(s, lmb_FinishQueue_cq_id(c)));
        return rt_cq_finish(queue(s, lmb_FinishQueue_cq_id(c)));
    case LMB_Command_CreateProgram: {
        lm_program p;
        st = rt_program_create(s->dev, &p);
        if (!st) SINK(s, create_program, p);
        return st ? st : id_put(&s->programs, lmb_CreateProgram_program_id(c), p.id);
    }
    case LMB_Command_ReleaseProgram: {
        uint32_t id = lmb_ReleaseProgram_program_id(c);
        lm_program p = {id_get(&s->programs, id)};
        st = rt_program_release(p);
        if (!st) SINK(s, release_program, p);
        if (!st) idmap_remove(&s->programs, id);
        return st;
    }
    case LMB_Command_CreateKernel: {
        lmb_BlobRef ref;
        if (!lmb_find_kernel_binary(r->root, lmb_CreateKernel_binary_hash(c), &ref))
            return err_set(LM_ERR_INVALID_FILE, "kernel binary %016llx is missing",
                           (unsigned long long)lmb_CreateKernel_binary_hash(c));
        const uint8_t *elf = lmb_blob_data(r->data, r->root, ref);
        if ((st = check_blob(s, "the kernel ELF", elf, ref))) return st;
        fb_table kc = lmb_CreateKernel_config(c);
        /* Processor and fidelity share the file's numbering (verified ranges). */
        lm_kernel_config cfg = {
            .processor = (lm_processor)lmb_KernelConfig_processor(kc),
            .noc = lmb_KernelConfig_noc(kc) == LMB_NocIndex_Noc1 ? LM_NOC_1 : LM_NOC_0,
            .math_fidelity = lmb_KernelConfig_math_fidelity(kc)
                                 ? (lm_math_fidelity)lmb_KernelConfig_math_fidelity(kc)
                                 : LM_MATH_FIDELITY_HIFI4,
            .fp32_dest_acc_en = lmb_KernelConfig_fp32_dest_acc_en(kc),
            .math_approx_mode = lmb_KernelConfig_math_approx_mode(kc),
        };
        fb_str name = lmb_CreateKernel_name(c);
        char label[128];
        snprintf(label, sizeof label, "%.*s", (int)name.len, name.len ? name.ptr : "kernel");
        lm_core_range_set cores = core_set(lmb_CreateKernel_cores(c));
        lm_kernel k;
        lm_program p = {id_get(&s->programs, lmb_CreateKernel_program_id(c))};
        /* The hash check_blob compared is the image cache's key too. */
        uint64_t hash = s->opts->check_blob_hashes ? ref.hash : 0;
        st = rt_kernel_create_from_elf(p, label, elf, ref.size, hash, NULL, &cores, &cfg, &k);
        if (!st) SINK(s, create_kernel, p, k, &cores, &cfg);
        return st ? st : id_put(&s->kernels, lmb_CreateKernel_kernel_id(c), k.id);
    }
    case LMB_Command_SetRuntimeArgs: {
        arg_words a;
        u32_vec(lmb_SetRuntimeArgs_args(c), &a);
        lmb_CoreCoord core = lmb_SetRuntimeArgs_core(c);
        lm_program p = {id_get(&s->programs, lmb_SetRuntimeArgs_program_id(c))};
        lm_kernel k = {id_get(&s->kernels, lmb_SetRuntimeArgs_kernel_id(c))};
        st = rt_set_runtime_args(p, k, (lm_core){core.x, core.y}, a.w, a.n);
        if (!st) SINK(s, set_runtime_args, p, k, (lm_core){core.x, core.y}, a.w, a.n);
        return st;
    }
    case LMB_Command_SetRuntimeArgsMulti: {
        fb_vec per = lmb_SetRuntimeArgsMulti_per_core(c);
        lm_program p = {id_get(&s->programs, lmb_SetRuntimeArgsMulti_program_id(c))};
        lm_kernel k = {id_get(&s->kernels, lmb_SetRuntimeArgsMulti_kernel_id(c))};
        for (uint32_t i = 0; i < per.len && !st; i++) {
            fb_table ca = fb_vec_table(per, i);
            arg_words a;
            u32_vec(lmb_CoreArgs_args(ca), &a);
            lmb_CoreCoord core = lmb_CoreArgs_core(ca);
            st = rt_set_runtime_args(p, k, (lm_core){core.x, core.y}, a.w, a.n);
            if (!st) SINK(s, set_runtime_args, p, k, (lm_core){core.x, core.y}, a.w, a.n);
        }
        return st;
    }
    case LMB_Command_SetCommonRuntimeArgs: {
        arg_words a;
        u32_vec(lmb_SetCommonRuntimeArgs_args(c), &a);
        lm_program p = {id_get(&s->programs, lmb_SetCommonRuntimeArgs_program_id(c))};
        lm_kernel k = {id_get(&s->kernels, lmb_SetCommonRuntimeArgs_kernel_id(c))};
        st = rt_set_common_runtime_args(p, k, a.w, a.n);
        if (!st) SINK(s, set_common_runtime_args, p, k, a.w, a.n);
        return st;
    }
    case LMB_Command_CreateCircularBuffer: {
        lm_circular_buffer_config cfg = {0};
        cfg.total_size = lmb_CreateCircularBuffer_total_size(c);
        fb_vec f = lmb_CreateCircularBuffer_formats(c);
        cfg.index_count = f.len;
        for (uint32_t i = 0; i < cfg.index_count && i < LM_MAX_CB_INDICES; i++) {
            lmb_CBFormat cf = lmb_vec_CBFormat_at(f, i);
            cfg.indices[i] = (lm_cb_index_config){
                cf.index, lmb_data_format_to_api((lmb_DataFormat)cf.format), cf.page_size};
            if (!cfg.indices[i].format)
                return err_set(LM_ERR_UNSUPPORTED, "circular buffer data format %u",
                               (unsigned)cf.format);
        }
        uint32_t global = lmb_CreateCircularBuffer_global_buffer_id(c);
        if (global) cfg.globally_allocated = (lm_buffer){id_get(&s->buffers, global)};
        lm_core_range_set cores = core_set(lmb_CreateCircularBuffer_cores(c));
        lm_circular_buffer cb;
        lm_program p = {id_get(&s->programs, lmb_CreateCircularBuffer_program_id(c))};
        st = rt_cb_create(p, &cores, &cfg, &cb);
        if (!st) st = id_put(&s->cbs, lmb_CreateCircularBuffer_cb_id(c), cb.id);
        if (!st) SINK(s, create_cb, p, cb, &cores, &cfg);
        return st;
    }
    case LMB_Command_UpdateCircularBuffer: {
        lm_program p = {id_get(&s->programs, lmb_UpdateCircularBuffer_program_id(c))};
        lm_circular_buffer cb = {id_get(&s->cbs, lmb_UpdateCircularBuffer_cb_id(c))};
        lm_circular_buffer_config cfg = {0};
        cfg.total_size = lmb_UpdateCircularBuffer_total_size(c);
        fb_vec f = lmb_UpdateCircularBuffer_formats(c);
        cfg.index_count = f.len < LM_MAX_CB_INDICES ? f.len : LM_MAX_CB_INDICES;
        for (uint32_t i = 0; i < cfg.index_count; i++) {
            lmb_CBFormat cf = lmb_vec_CBFormat_at(f, i);
            cfg.indices[i] = (lm_cb_index_config){
                cf.index, lmb_data_format_to_api((lmb_DataFormat)cf.format), cf.page_size};
            if (!cfg.indices[i].format)
                return err_set(LM_ERR_UNSUPPORTED, "circular buffer data format %u",
                               (unsigned)cf.format);
        }
        uint32_t global = lmb_UpdateCircularBuffer_global_buffer_id(c);
        if (global) cfg.globally_allocated = (lm_buffer){id_get(&s->buffers, global)};
        st = rt_cb_update(p, cb, &cfg);
        if (!st) SINK(s, update_cb, p, cb, &cfg);
        return st;
    }
    case LMB_Command_CreateSemaphore: {
        lm_core_range_set cores = core_set(lmb_CreateSemaphore_cores(c));
        uint32_t id;
        lm_program p = {id_get(&s->programs, lmb_CreateSemaphore_program_id(c))};
        st = rt_semaphore_create(p, &cores, lmb_CreateSemaphore_initial_value(c), &id);
        if (!st && id != lmb_CreateSemaphore_semaphore_id(c))
            st = err_set(LM_ERR_INVALID_FILE, "semaphore got id %u, the capture had %u", id,
                         lmb_CreateSemaphore_semaphore_id(c));
        if (!st) SINK(s, create_semaphore, p, &cores, lmb_CreateSemaphore_initial_value(c), id);
        return st;
    }
    case LMB_Command_EnqueueProgram: {
        s->report->programs++;
        lm_command_queue *cq = queue(s, lmb_EnqueueProgram_cq_id(c));
        lm_program p = {id_get(&s->programs, lmb_EnqueueProgram_program_id(c))};
        bool into_trace = rt_trace_capturing(cq) != NULL; /* then the trace holds it */
        s->report->host_waits += lmb_EnqueueProgram_blocking(c);
        if ((st = set_label(s, lmb_EnqueueProgram_label(c)))) return st;
        st = rt_program_enqueue(cq, p, lmb_EnqueueProgram_blocking(c));
        if (!st && !into_trace)
            SINK(s, enqueue_program, rt_cq_id(cq), p, lmb_EnqueueProgram_blocking(c));
        return st;
    }
    case LMB_Command_WriteDeviceL1: {
        lmb_BlobRef ref = lmb_WriteDeviceL1_data(c);
        lmb_CoreCoord core = lmb_WriteDeviceL1_core(c);
        lm_core at = {core.x, core.y};
        const void *src = lmb_blob_data(r->data, r->root, ref);
        lm_command_queue *cq = queue(s, lmb_WriteDeviceL1_cq_id(c));
        s->report->host_waits++;
        st = rt_l1_transfer(cq, at, lmb_WriteDeviceL1_address(c), ref.size, (void *)src, true,
                            s->opts->check_blob_hashes ? &ref.hash : NULL);
        if (!st) s->report->bytes_written += ref.size;
        if (!st) SINK(s, write_l1, rt_cq_id(cq), at, lmb_WriteDeviceL1_address(c), ref.size, src);
        return st;
    }
    case LMB_Command_EnqueueRecordEvent: {
        if (s->event_count == s->event_capacity) {
            uint32_t cap = s->event_capacity ? 2 * s->event_capacity : 16;
            lm_event *grown = realloc(s->event, cap * sizeof *grown);
            if (!grown) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
            s->event = grown;
            s->event_capacity = cap;
        }
        lm_command_queue *cq = queue(s, lmb_EnqueueRecordEvent_cq_id(c));
        lm_event *ev = &s->event[s->event_count];
        st = rt_event_record(cq, ev);
        if (!st) st = id_put(&s->events, lmb_EnqueueRecordEvent_event_id(c), s->event_count++);
        if (!st) SINK(s, record_event, rt_cq_id(cq), ev->id);
        return st;
    }
    case LMB_Command_EnqueueWaitForEvent: {
        lm_event ev = s->event[id_get(&s->events, lmb_EnqueueWaitForEvent_event_id(c))];
        lm_command_queue *cq = queue(s, lmb_EnqueueWaitForEvent_cq_id(c));
        st = rt_event_wait(cq, ev);
        if (!st) SINK(s, wait_for_event, rt_cq_id(cq), ev.id);
        return st;
    }
    case LMB_Command_EventSynchronize: {
        lm_event ev = s->event[id_get(&s->events, lmb_EventSynchronize_event_id(c))];
        s->report->host_waits++;
        SINK(s, event_synchronize, ev.id);
        return rt_cq_wait(ev.cq, ev.seq);
    }
    case LMB_Command_CompareToGolden: {
        lmb_BlobRef ref = lmb_CompareToGolden_golden(c);
        if (!s->opts->check_goldens) return LM_OK;
        void *got;
        uint64_t size;
        s->report->host_waits++;
        st = rt_buffer_read(queue(s, lmb_CompareToGolden_cq_id(c)),
                            (lm_buffer){id_get(&s->buffers, lmb_CompareToGolden_buffer_id(c))},
                            &got, &size);
        if (st) return st;
        if (size != ref.size)
            st = err_set(LM_ERR_INVALID_FILE, "golden of %llu bytes for a buffer of %llu",
                         (unsigned long long)ref.size, (unsigned long long)size);
        else
            st = compare(s, got, lmb_blob_data(r->data, r->root, ref), size, ref.hash);
        if (!st)
            SINK(s, golden, cq_id_of(s, lmb_CompareToGolden_cq_id(c)),
                 (lm_buffer){id_get(&s->buffers, lmb_CompareToGolden_buffer_id(c))},
                 lmb_blob_data(r->data, r->root, ref), size);
        s->report->bytes_read += size;
        free(got);
        return st;
    }
    case LMB_Command_BeginTraceCapture: {
        /* Launches enqueued on the queue until the end are recorded into it. */
        uint32_t id;
        st = rt_trace_begin(queue(s, lmb_BeginTraceCapture_cq_id(c)), &id);
        return st ? st : id_put(&s->traces, lmb_BeginTraceCapture_trace_id(c), id);
    }
    case LMB_Command_EndTraceCapture: {
        lm_command_queue *cq = queue(s, lmb_EndTraceCapture_cq_id(c));
        uint32_t id = (uint32_t)id_get(&s->traces, lmb_EndTraceCapture_trace_id(c));
        st = rt_trace_end(cq, id);
        if (!st) SINK(s, trace_exists, rt_cq_id(cq), id);
        return st;
    }
    case LMB_Command_LoadTrace: {
        uint32_t id;
        lmb_BlobRef ref;
        if (lmb_find_trace(r->root, lmb_LoadTrace_trace_id(c), &ref) &&
            (st = check_blob(s, "the trace", lmb_blob_data(r->data, r->root, ref), ref)))
            return st;
        st = trace_blob_load(queue(s, lmb_LoadTrace_cq_id(c)), r->data, lmb_LoadTrace_trace_id(c),
                             s->opts->check_blob_hashes, &id);
        if (!st) SINK(s, trace_exists, cq_id_of(s, lmb_LoadTrace_cq_id(c)), id);
        return st ? st : id_put(&s->traces, lmb_LoadTrace_trace_id(c), id);
    }
    case LMB_Command_ReplayTrace:
        s->report->programs++;
        {
            uint32_t id = (uint32_t)id_get(&s->traces, lmb_ReplayTrace_trace_id(c));
            s->report->host_waits += lmb_ReplayTrace_blocking(c);
            char label[32];
            snprintf(label, sizeof label, "trace %" PRIu32, lmb_ReplayTrace_trace_id(c));
            if ((st = rt_profile_set_label(s->dev->profile, label))) return st;
            st = rt_trace_replay(queue(s, lmb_ReplayTrace_cq_id(c)), id,
                                 lmb_ReplayTrace_blocking(c));
            if (!st)
                SINK(s, replay_trace, cq_id_of(s, lmb_ReplayTrace_cq_id(c)), id,
                     lmb_ReplayTrace_blocking(c));
            return st;
        }
    case LMB_Command_ReleaseTrace: {
        uint32_t id = lmb_ReleaseTrace_trace_id(c);
        uint32_t rid = (uint32_t)id_get(&s->traces, id);
        st = rt_trace_release(s->dev, rid);
        if (!st) SINK(s, release_trace, rid);
        if (!st) idmap_remove(&s->traces, id);
        return st;
    }
    default:
        break;
    }
    return err_set(LM_ERR_INVALID_FILE, "unknown command type %u",
                   (unsigned)lmb_CommandEntry_cmd_type(e));
}

/* A command failed on the host; a launch queued before it may have failed on
 * the device already. That fault came first in program order, so it is the
 * one to report. */
static lm_status earlier_fault(run_state *s, lm_status st) {
    char message[ERR_MESSAGE_MAX];
    err_copy(message, sizeof message);
    for (uint32_t q = 0; q < s->dev->info.num_command_queues; q++) {
        lm_status fs = rt_cq_finish(s->dev->queues[q]);
        if (fs) return err_prefix(fs, "before command %u", s->index);
    }
    return err_set(st, "%s", message);
}

/* Keeps the named buffers' final contents, then frees what the run made so
 * the next loop (or run) starts from the same empty device. */
static lm_status end_run(run_state *s, lm_status st) {
    lm_replay *r = s->r;
    for (uint32_t q = 0; q < s->dev->info.num_command_queues; q++) {
        lm_status fs = rt_cq_finish(s->dev->queues[q]);
        if (!st) st = fs;
    }
    /* Outputs are kept after a golden mismatch (they show what differs) but
     * not after a failure: the buffers may hold anything, and reading them
     * back could cost more than the run and hide the real error. */
    bool keep = st == LM_OK || st == LM_ERR_MISMATCH;
    for (uint32_t i = 0; i < r->name_count; i++) {
        named *nm = &r->names[i];
        free(nm->output);
        nm->output = NULL;
        uint64_t handle = id_get(&s->buffers, nm->buffer_id);
        if (!keep || !handle) continue;
        if (nm->empty) { /* no bytes to read, but the run gave it its contents */
            nm->output = malloc(1);
            nm->output_size = 0;
            if (!nm->output && !st) st = err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
            continue;
        }
        char message[ERR_MESSAGE_MAX];
        err_copy(message, sizeof message);
        lm_status rs =
            rt_buffer_read(s->dev->queues[0], (lm_buffer){handle}, &nm->output, &nm->output_size);
        if (rs && st) err_set(st, "%s", message); /* the mismatch stays the first error */
        if (!st) st = rs;
    }
    uint64_t id, handle;
    size_t at = 0;
    while (idmap_next(&s->traces, &at, &id, &handle))
        rt_trace_release(s->dev, (uint32_t)handle);
    for (at = 0; idmap_next(&s->programs, &at, &id, &handle);)
        rt_program_release((lm_program){handle});
    for (at = 0; idmap_next(&s->buffers, &at, &id, &handle);)
        rt_buffer_destroy((lm_buffer){handle});
    idmap_free(&s->traces);
    idmap_free(&s->events);
    idmap_free(&s->cbs);
    free(s->event);
    idmap_free(&s->programs);
    idmap_free(&s->buffers);
    idmap_free(&s->kernels);
    for (uint32_t i = 0; i < s->read_count; i++)
        free(s->reads[i]);
    s->read_count = 0;
    return st;
}

/* Queues the file uses (a file that does not say has one, as the verifier
 * has it). */
static uint32_t file_queues(fb_table sys) {
    uint32_t n = lmb_SystemDescriptor_num_command_queues(sys);
    return n ? n : 1;
}

static lm_status check_device(const lm_replay *r, lm_device *dev) {
    fb_table sys = lmb_LightMetalBinary_system(r->root);
    const lm_device_info *i = &dev->info;
    if (i->grid_x != lmb_SystemDescriptor_grid_x(sys) ||
        i->grid_y != lmb_SystemDescriptor_grid_y(sys) ||
        i->l1_size != lmb_SystemDescriptor_l1_size(sys) ||
        i->dram_banks != lmb_SystemDescriptor_dram_banks(sys) ||
        i->dram_bank_size < lmb_SystemDescriptor_dram_bank_size(sys) ||
        i->num_command_queues < file_queues(sys))
        return err_set(LM_ERR_INVALID_ARGUMENT,
                       "the device (%ux%u cores, %llu B of L1, %u DRAM banks of %llu B, %u "
                       "queues) does not match the binary's (%ux%u, %u B, %u banks of %llu B, %u "
                       "queues)",
                       i->grid_x, i->grid_y, (unsigned long long)i->l1_size, i->dram_banks,
                       (unsigned long long)i->dram_bank_size, i->num_command_queues,
                       lmb_SystemDescriptor_grid_x(sys), lmb_SystemDescriptor_grid_y(sys),
                       lmb_SystemDescriptor_l1_size(sys), lmb_SystemDescriptor_dram_banks(sys),
                       (unsigned long long)lmb_SystemDescriptor_dram_bank_size(sys),
                       file_queues(sys));
    return LM_OK;
}

static lm_status open_matching_device(const lm_replay *r, const lm_replay_options *opts,
                                      lm_device **out) {
    fb_table sys = lmb_LightMetalBinary_system(r->root);
    lm_device_options o;
    lm_device_options_init(&o);
    o.grid_x = lmb_SystemDescriptor_grid_x(sys);
    o.grid_y = lmb_SystemDescriptor_grid_y(sys);
    o.l1_size = lmb_SystemDescriptor_l1_size(sys);
    o.dram_banks = lmb_SystemDescriptor_dram_banks(sys);
    o.dram_bank_size = lmb_SystemDescriptor_dram_bank_size(sys);
    /* The options the capturing device had, where the file records them;
     * the defaults otherwise. */
    if (lmb_SystemDescriptor_num_command_queues(sys))
        o.num_command_queues = lmb_SystemDescriptor_num_command_queues(sys);
    if (lmb_SystemDescriptor_trace_region_size(sys))
        o.trace_region_size = lmb_SystemDescriptor_trace_region_size(sys);
    else if (o.trace_region_size > o.dram_bank_size / 2)
        o.trace_region_size = 0;
    if (lmb_SystemDescriptor_watchdog_instructions(sys))
        o.watchdog_instructions = lmb_SystemDescriptor_watchdog_instructions(sys);
    if (opts->watchdog_instructions) o.watchdog_instructions = opts->watchdog_instructions;
    o.strict_protocol = lmb_SystemDescriptor_strict_protocol(sys) || opts->strict_protocol;
    o.num_threads = opts->num_threads;
    /* The descriptor was verified, but the device has its own limits. */
    return lm_device_open(&o, out);
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

lm_status lm_replay_run(lm_replay *r, lm_device *device, const lm_replay_options *opts,
                        lm_replay_report *out_report) {
    const char *fn = "lm_replay_run";
    if (!r) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: replay is NULL", fn);
    lm_replay_options defaults;
    lm_replay_options_init(&defaults);
    if (!opts) opts = &defaults;
    if (opts->loops == 0) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: loops is 0", fn);
    if (opts->tolerance && (!(opts->atol >= 0) || !(opts->rtol >= 0)))
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: atol and rtol must be >= 0", fn);
    lm_replay_report report = {0};
    lm_device *dev = device, *own = NULL;
    lm_status st = dev ? check_device(r, dev) : open_matching_device(r, opts, &own);
    if (st) return err_prefix(st, "%s", fn);
    if (own) dev = own;

    lm_profile_free(r->profile);
    lm_profile_program_free(r->programs);
    r->profile = NULL;
    r->programs = NULL;
    r->profile_count = r->program_count = 0;
    if (opts->profile) rt_profile_set_enabled(dev->profile, true);

    run_state s = {.r = r, .dev = dev, .opts = opts, .report = &report};
    double t0 = now();
    uint32_t n = r->commands.len;
    for (uint32_t loop = 0; loop < opts->loops && !st; loop++) {
        for (s.index = 0; s.index < n && !st; s.index++) {
            fb_table e = fb_vec_table(r->commands, s.index);
            st = run_command(&s, e);
            if (st) {
                err_prefix(st, "command %u (%s)", s.index,
                           lmb_command_name(lmb_CommandEntry_cmd_type(e)));
                st = earlier_fault(&s, st);
            } else {
                report.commands++;
            }
        }
        st = end_run(&s, st);
    }
    report.seconds = now() - t0;
    free(s.reads);
    /* The queues are finished (end_run); a label of this binary does not
     * outlive the run on a device that is the caller's. */
    rt_profile_set_label(dev->profile, NULL);
    if (opts->profile) {
        lm_status ps = rt_profile_copy(dev->profile, &r->profile, &r->profile_count);
        if (!ps) ps = rt_profile_copy_programs(dev->profile, &r->programs, &r->program_count);
        if (!st) st = ps;
        rt_profile_set_enabled(dev->profile, false);
    }
    if (own) {
        lm_status cs = lm_device_close(own);
        if (!st) st = cs;
    }
    if (out_report && (st == LM_OK || st == LM_ERR_MISMATCH)) *out_report = report;
    return st ? err_prefix(st, "%s", fn) : LM_OK;
}

/* The checks both profile getters make. */
static lm_status check_profile_args(const char *fn, const lm_replay *r, const void *out_entries,
                                    const size_t *out_count) {
    if (!r) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: replay is NULL", fn);
    if (!out_entries || !out_count)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                       out_entries ? "out_count" : "out_entries");
    return LM_OK;
}

lm_status lm_replay_get_profile(const lm_replay *r, const lm_profile_entry **out_entries,
                                size_t *out_count) {
    lm_status st = check_profile_args("lm_replay_get_profile", r, out_entries, out_count);
    if (st) return st;
    *out_entries = r->profile;
    *out_count = r->profile_count;
    return LM_OK;
}

lm_status lm_replay_get_program_profile(const lm_replay *r,
                                        const lm_profile_program_entry **out_entries,
                                        size_t *out_count) {
    lm_status st = check_profile_args("lm_replay_get_program_profile", r, out_entries, out_count);
    if (st) return st;
    *out_entries = r->programs;
    *out_count = r->program_count;
    return LM_OK;
}
