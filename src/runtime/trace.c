#include "runtime/trace.h"
#include "runtime/buffer.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "lm_kernel_abi.h"
#include "runtime/cq.h"
#include "runtime/device.h"

#define CORE_WORDS (sizeof(rt_launch_core) / sizeof(uint32_t))
#define HEADER_WORDS 4u

_Static_assert(sizeof(rt_launch_core) % sizeof(uint32_t) == 0, "launch cores are whole words");

struct rt_trace {
    uint32_t id;
    lm_device *device;
    bool capturing;
    rt_launch **launches; /* owned; they keep the kernels' images alive */
    uint32_t launch_count;
    /* Once captured: the stream's place in bank 0 of DRAM, and the table of
     * kernels its launches index. */
    uint64_t address, size;
    rt_launch_kernel *kernels;
    uint32_t kernel_count, launch_total;
    bool owns_kernels; /* loaded traces hold their images (and so ELFs) and own their names */
    atomic_uint pins;  /* replays queued or running */
    /* Buffers deallocated while this trace was being captured: their memory
     * stays taken until the trace is released, because its launches may use
     * it (see rt_trace_hold_buffer). */
    struct rt_buffer **held;
    uint32_t held_count, held_capacity;
};

rt_trace *rt_trace_capturing(lm_command_queue *cq) {
    lm_device *dev = rt_cq_device(cq);
    pthread_mutex_lock(&dev->mutex);
    rt_trace *t = dev->capturing[rt_cq_id(cq)];
    pthread_mutex_unlock(&dev->mutex);
    return t;
}

bool rt_trace_any_capturing(lm_device *dev) {
    pthread_mutex_lock(&dev->mutex);
    bool any = false;
    for (uint32_t q = 0; q < LM_MAX_COMMAND_QUEUES; q++)
        any |= dev->capturing[q] != NULL;
    pthread_mutex_unlock(&dev->mutex);
    return any;
}

bool rt_trace_hold_buffer(lm_device *dev, struct rt_buffer *b) {
    pthread_mutex_lock(&dev->mutex);
    rt_trace *t = NULL;
    for (uint32_t q = 0; q < LM_MAX_COMMAND_QUEUES && !t; q++)
        t = dev->capturing[q];
    bool held = false;
    if (t && t->held_count == t->held_capacity) {
        uint32_t cap = t->held_capacity ? t->held_capacity * 2 : 16;
        struct rt_buffer **grown = realloc(t->held, cap * sizeof *grown);
        if (grown) {
            t->held = grown;
            t->held_capacity = cap;
        }
    }
    if (t && t->held_count < t->held_capacity) {
        t->held[t->held_count++] = b;
        held = true;
    }
    pthread_mutex_unlock(&dev->mutex);
    return held;
}

static void trace_free(rt_trace *t) {
    for (uint32_t i = 0; i < t->held_count; i++)
        rt_buffer_release_object(t->held[i]);
    free(t->held);
    for (uint32_t i = 0; t->owns_kernels && i < t->kernel_count; i++) {
        rv_image_cache_put(t->device->images, t->kernels[i].image); /* and with it the ELF */
        free((void *)t->kernels[i].name);
    }
    for (uint32_t i = 0; i < t->launch_count; i++)
        rt_launch_free(t->launches[i]);
    free(t->launches);
    free(t->kernels);
    free(t);
}

lm_status rt_trace_begin(lm_command_queue *cq, uint32_t *out_id) {
    lm_device *dev = rt_cq_device(cq);
    rt_trace *t = calloc(1, sizeof *t);
    if (!t) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    t->device = dev;
    t->capturing = true;
    atomic_init(&t->pins, 0);
    lm_status st = LM_OK;
    pthread_mutex_lock(&dev->mutex);
    uint32_t q = rt_cq_id(cq), slot = 0;
    while (slot < LM_MAX_TRACES && dev->traces[slot])
        slot++;
    if (dev->capturing[q])
        st = err_set(LM_ERR_INVALID_STATE, "command queue %u is already capturing trace %u", q,
                     dev->capturing[q]->id);
    else if (slot == LM_MAX_TRACES)
        st = err_set(LM_ERR_OUT_OF_HOST_MEMORY, "all %d trace ids are in use", LM_MAX_TRACES);
    if (!st) {
        t->id = slot + 1;
        dev->traces[slot] = t;
        dev->capturing[q] = t;
        *out_id = t->id;
    }
    pthread_mutex_unlock(&dev->mutex);
    if (st) free(t);
    return st;
}

lm_status rt_trace_record(rt_trace *t, rt_launch *launch) {
    rt_launch **grown = realloc(t->launches, (t->launch_count + 1) * sizeof *grown);
    if (!grown) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    t->launches = grown;
    t->launches[t->launch_count++] = launch;
    return LM_OK;
}

/* Builds the stream and the kernel table from the recorded launches. */
static lm_status encode(rt_trace *t, uint32_t **out_words, size_t *out_count) {
    size_t words = 0;
    uint32_t kernels = 0;
    for (uint32_t i = 0; i < t->launch_count; i++) {
        const rt_launch *l = t->launches[i];
        words += HEADER_WORDS + (size_t)l->core_count * CORE_WORDS + l->word_count;
        kernels += l->kernel_count;
    }
    uint32_t *w = malloc((words ? words : 1) * sizeof *w);
    t->kernels = calloc(kernels ? kernels : 1, sizeof *t->kernels);
    if (!w || !t->kernels) {
        free(w);
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    }
    size_t pos = 0;
    uint32_t base = 0;
    for (uint32_t i = 0; i < t->launch_count; i++) {
        const rt_launch *l = t->launches[i];
        memcpy(&t->kernels[base], l->kernels, l->kernel_count * sizeof *l->kernels);
        w[pos++] = RT_TRACE_LAUNCH_MAGIC;
        w[pos++] = 0;
        w[pos++] = l->core_count;
        w[pos++] = l->word_count;
        for (uint32_t c = 0; c < l->core_count; c++) {
            rt_launch_core lc = l->cores[c];
            for (uint32_t p = 0; p < LM_NUM_PROCESSORS; p++)
                if (lc.kernel[p] != UINT32_MAX) lc.kernel[p] += base;
            memcpy(&w[pos], &lc, sizeof lc);
            pos += CORE_WORDS;
        }
        memcpy(&w[pos], l->words, l->word_count * sizeof *w);
        pos += l->word_count;
        base += l->kernel_count;
    }
    t->kernel_count = kernels;
    t->launch_total = t->launch_count;
    *out_words = w;
    *out_count = words;
    return LM_OK;
}

static void free_stream(void *words) {
    free(words);
}

lm_status rt_trace_end(lm_command_queue *cq, uint32_t id) {
    lm_device *dev = rt_cq_device(cq);
    uint32_t q = rt_cq_id(cq);
    pthread_mutex_lock(&dev->mutex);
    rt_trace *t = dev->capturing[q];
    lm_status st = LM_OK;
    if (!t)
        st = err_set(LM_ERR_INVALID_STATE, "command queue %u is not capturing a trace", q);
    else if (t->id != id)
        st = err_set(LM_ERR_INVALID_ARGUMENT, "command queue %u is capturing trace %u, not %u", q,
                     t->id, id);
    pthread_mutex_unlock(&dev->mutex);
    if (st) return st;

    uint32_t *words = NULL;
    size_t count = 0;
    st = encode(t, &words, &count);
    uint64_t bytes = count * sizeof(uint32_t), address = 0;
    if (!st) {
        pthread_mutex_lock(&dev->mutex);
        st = bytes ? alloc_take(&dev->trace_region, bytes, &address) : LM_OK;
        pthread_mutex_unlock(&dev->mutex);
        if (st)
            err_prefix(st, "trace %u of %llu bytes does not fit the trace region", id,
                       (unsigned long long)bytes);
    }
    if (!st && bytes) {
        /* One contiguous range of bank 0: the dispatcher reads it in place. */
        rt_cmd cmd = {.op = RT_CMD_WRITE_BUFFER,
                      .u.write = {.place = {.memory = LM_BUFFER_DRAM,
                                            .num_banks = 1,
                                            .address = address,
                                            .size = bytes,
                                            .page_size = bytes,
                                            .page_stride = bytes},
                                  .src = words}};
        uint64_t seq;
        st = rt_cq_push(cq, &cmd, free_stream, words, &seq);
        words = NULL; /* the queue frees it */
        if (!st) st = rt_cq_wait(cq, seq);
    }
    free(words);
    /* Success or not, the capture is over; a failed trace is released. */
    pthread_mutex_lock(&dev->mutex);
    dev->capturing[q] = NULL;
    t->capturing = false;
    t->address = address;
    t->size = bytes;
    if (st) {
        if (address) alloc_give_back(&dev->trace_region, address); /* never 0 when placed */
        dev->traces[t->id - 1] = NULL;
    }
    pthread_mutex_unlock(&dev->mutex);
    if (st) trace_free(t);
    return st;
}

/* Looks a captured trace up by id; called with the device mutex held. */
static lm_status find_locked(lm_device *dev, uint32_t id, rt_trace **out) {
    if (id == 0 || id > LM_MAX_TRACES || !dev->traces[id - 1])
        return err_set(LM_ERR_NOT_FOUND, "trace %u does not exist (never captured or released)",
                       id);
    if (dev->traces[id - 1]->capturing)
        return err_set(LM_ERR_INVALID_STATE, "trace %u is still being captured", id);
    *out = dev->traces[id - 1];
    return LM_OK;
}

bool rt_trace_exists(lm_device *dev, uint32_t id) {
    pthread_mutex_lock(&dev->mutex);
    bool ok =
        id >= 1 && id <= LM_MAX_TRACES && dev->traces[id - 1] && !dev->traces[id - 1]->capturing;
    pthread_mutex_unlock(&dev->mutex);
    return ok;
}

static void unpin(void *trace) {
    rt_trace *t = trace;
    lm_device *dev = t->device; /* read first: once unpinned, a release may free t */
    if (atomic_fetch_sub(&t->pins, 1) == 1) {
        pthread_mutex_lock(&dev->mutex);
        pthread_cond_broadcast(&dev->buffer_idle);
        pthread_mutex_unlock(&dev->mutex);
    }
}

lm_status rt_trace_replay(lm_command_queue *cq, uint32_t id, bool blocking) {
    lm_device *dev = rt_cq_device(cq);
    rt_trace *t;
    pthread_mutex_lock(&dev->mutex);
    lm_status st = find_locked(dev, id, &t);
    if (!st) atomic_fetch_add(&t->pins, 1);
    pthread_mutex_unlock(&dev->mutex);
    if (st) return st;
    rt_cmd cmd = {.op = RT_CMD_TRACE,
                  .u.trace = {.address = t->address,
                              .size = t->size,
                              .kernels = t->kernels,
                              .kernel_count = t->kernel_count}};
    uint64_t seq;
    st = rt_cq_push(cq, &cmd, unpin, t, &seq);
    if (!st && blocking) st = rt_cq_wait(cq, seq);
    return st;
}

/* Waits for replays in flight, then frees. The trace is out of the table. */
static void release(lm_device *dev, rt_trace *t) {
    pthread_mutex_lock(&dev->mutex);
    while (atomic_load(&t->pins))
        pthread_cond_wait(&dev->buffer_idle, &dev->mutex);
    if (t->size) alloc_give_back(&dev->trace_region, t->address);
    pthread_mutex_unlock(&dev->mutex);
    trace_free(t);
}

lm_status rt_trace_release(lm_device *dev, uint32_t id) {
    rt_trace *t;
    pthread_mutex_lock(&dev->mutex);
    lm_status st = find_locked(dev, id, &t);
    if (!st) dev->traces[id - 1] = NULL;
    pthread_mutex_unlock(&dev->mutex);
    if (st) return st;
    release(dev, t);
    return LM_OK;
}

void rt_trace_release_all(lm_device *dev) {
    for (uint32_t i = 0; i < LM_MAX_TRACES; i++) {
        rt_trace *t = dev->traces[i];
        if (!t) continue;
        dev->traces[i] = NULL;
        release(dev, t);
    }
    for (uint32_t q = 0; q < LM_MAX_COMMAND_QUEUES; q++)
        dev->capturing[q] = NULL;
}

/* ---- serialized traces ---- */

lm_status rt_trace_export(lm_device *dev, uint32_t id, rt_trace_contents *out) {
    rt_trace *t;
    pthread_mutex_lock(&dev->mutex);
    lm_status st = find_locked(dev, id, &t);
    pthread_mutex_unlock(&dev->mutex);
    if (st) return st;
    uint32_t *stream = malloc(t->size ? t->size : 4);
    if (!stream) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    if (t->size) {
        rt_cmd cmd = {.op = RT_CMD_READ_BUFFER,
                      .u.read = {.place = {.memory = LM_BUFFER_DRAM,
                                           .num_banks = 1,
                                           .address = t->address,
                                           .size = t->size,
                                           .page_size = t->size,
                                           .page_stride = t->size},
                                 .dst = stream}};
        uint64_t seq;
        st = rt_cq_push(dev->queues[0], &cmd, NULL, NULL, &seq);
        if (!st) st = rt_cq_wait(dev->queues[0], seq);
    }
    if (st) {
        free(stream);
        return st;
    }
    *out = (rt_trace_contents){stream, t->size / sizeof(uint32_t), t->kernels, t->kernel_count};
    return LM_OK;
}

/* The kernels of a loaded trace: each an image held in the device's cache
 * (whose copy of the ELF the entry points at) and a name of its own. A
 * trace lists a kernel once per launch that runs it, and those entries
 * share their bytes (a file holds each distinct ELF once): an entry whose
 * ELF lies where an earlier one's does takes another hold on that image
 * rather than hashing and comparing the same bytes again. `first` is an
 * open-addressed table of entry index + 1 by ELF address. */
static lm_status own_kernels(rt_trace *t, const rt_trace_contents *in) {
    uint32_t n = in->kernel_count, bits = 4;
    while ((UINT64_C(1) << bits) < 2 * (uint64_t)n) /* at most half full: probes end */
        bits++;
    const uint64_t mask = (UINT64_C(1) << bits) - 1;
    uint32_t *first = calloc((size_t)mask + 1, sizeof *first);
    t->kernels = calloc(n ? n : 1, sizeof *t->kernels);
    if (!first || !t->kernels) {
        free(first);
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    }
    t->owns_kernels = true;
    lm_status st = LM_OK;
    for (uint32_t i = 0; i < n && !st; i++) {
        const rt_launch_kernel *k = &in->kernels[i];
        uint64_t at = (uint64_t)(uintptr_t)k->elf * 0x9E3779B97F4A7C15u >> (64 - bits);
        while (first[at] && in->kernels[first[at] - 1].elf != k->elf)
            at = (at + 1) & mask;
        const rt_launch_kernel *same = first[at] ? &t->kernels[first[at] - 1] : NULL;
        const rv_image *image;
        const void *elf;
        if (same && same->elf_size == k->elf_size) {
            rv_image_cache_hold(t->device->images, same->image);
            image = same->image;
            elf = same->elf;
        } else if (rv_image_cache_get(t->device->images, k->elf, k->elf_size, k->hash, &image,
                                      &elf)) {
            st = err_prefix(LM_ERR_INVALID_FILE, "trace kernel %u", i);
            break;
        } else if (!same) {
            first[at] = i + 1;
        }
        char *name = strdup(k->name ? k->name : "kernel");
        t->kernels[i] = (rt_launch_kernel){image, name, k->fp32_acc, elf, k->elf_size, k->hash};
        t->kernel_count = i + 1;
        if (!name) st = err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    }
    free(first);
    return st;
}

lm_status rt_trace_import(lm_command_queue *cq, const rt_trace_contents *in, uint32_t *out_id) {
    lm_device *dev = rt_cq_device(cq);
    /* Check every launch now: a bad stream is the file's fault, not a device's. */
    for (size_t pos = 0; pos < in->words;) {
        rt_launch l;
        lm_status st = rt_trace_decode(in->stream, in->words, &pos, in->kernel_count,
                                       dev->info.grid_x * dev->info.grid_y, &l);
        if (st) return err_set(LM_ERR_INVALID_FILE, "%s", lm_last_error());
    }
    rt_trace *t = calloc(1, sizeof *t);
    if (!t) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    t->device = dev;
    atomic_init(&t->pins, 0);
    lm_status st = own_kernels(t, in);
    uint64_t bytes = in->words * sizeof(uint32_t), address = 0;
    pthread_mutex_lock(&dev->mutex);
    uint32_t slot = 0;
    while (slot < LM_MAX_TRACES && dev->traces[slot])
        slot++;
    if (!st && slot == LM_MAX_TRACES)
        st = err_set(LM_ERR_OUT_OF_HOST_MEMORY, "all %d trace ids are in use", LM_MAX_TRACES);
    if (!st && bytes) {
        st = alloc_take(&dev->trace_region, bytes, &address);
        if (st)
            err_prefix(st, "a trace of %llu bytes does not fit the trace region",
                       (unsigned long long)bytes);
    }
    if (!st) {
        t->id = slot + 1;
        t->address = address;
        t->size = bytes;
        dev->traces[slot] = t;
    }
    pthread_mutex_unlock(&dev->mutex);
    if (st) {
        trace_free(t);
        return st;
    }
    if (bytes) {
        void *copy = malloc(bytes);
        if (!copy)
            st = err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        else
            memcpy(copy, in->stream, bytes);
        rt_cmd cmd = {.op = RT_CMD_WRITE_BUFFER,
                      .u.write = {.place = {.memory = LM_BUFFER_DRAM,
                                            .num_banks = 1,
                                            .address = address,
                                            .size = bytes,
                                            .page_size = bytes,
                                            .page_stride = bytes},
                                  .src = copy}};
        uint64_t seq;
        if (!st) st = rt_cq_push(cq, &cmd, free_stream, copy, &seq);
        if (!st) st = rt_cq_wait(cq, seq);
    }
    if (st) {
        rt_trace_release(dev, t->id);
        return st;
    }
    *out_id = t->id;
    return LM_OK;
}

/* ---- decoding, for the dispatcher ---- */

static lm_status corrupt(size_t pos, const char *what) {
    return err_set(LM_ERR_DEVICE_FAULT, "trace stream corrupt at word %zu: %s", pos, what);
}

static bool span_ok(uint32_t offset, uint32_t count, uint32_t total) {
    return offset <= total && count <= total - offset;
}

lm_status rt_trace_decode(const uint32_t *s, size_t n, size_t *pos, uint32_t kernel_count,
                          uint32_t num_cores, rt_launch *out) {
    size_t at = *pos;
    if (n - at < HEADER_WORDS || s[at] != RT_TRACE_LAUNCH_MAGIC) return corrupt(at, "bad header");
    uint32_t cores = s[at + 2], words = s[at + 3];
    at += HEADER_WORDS;
    if (cores > num_cores || (n - at) / CORE_WORDS < cores)
        return corrupt(at, "core count out of range");
    const rt_launch_core *lc = (const rt_launch_core *)&s[at];
    at += (size_t)cores * CORE_WORDS;
    if (n - at < words) return corrupt(at, "word count beyond the stream");
    for (uint32_t i = 0; i < cores; i++) {
        const rt_launch_core *c = &lc[i];
        bool ok = c->core < num_cores && c->sem_count <= LM_MAX_SEMAPHORES &&
                  span_ok(c->sems, c->sem_count, words) && c->cb_count <= LM_MAX_CBS &&
                  span_ok(c->cbs, c->cb_count * (1 + LM_CB_CONFIG_WORDS), words);
        for (uint32_t p = 0; ok && p < LM_NUM_PROCESSORS; p++)
            ok = (c->kernel[p] == UINT32_MAX || c->kernel[p] < kernel_count) &&
                 c->args_count[p] <= LM_KERNEL_MAX_ARGS &&
                 span_ok(c->args[p], c->args_count[p], words) &&
                 c->common_count[p] <= LM_KERNEL_MAX_ARGS &&
                 span_ok(c->common[p], c->common_count[p], words);
        const uint32_t *w = &s[at];
        for (uint32_t k = 0; ok && k < c->cb_count; k++)
            ok = w[c->cbs + k * (1 + LM_CB_CONFIG_WORDS)] < LM_MAX_CBS;
        if (!ok) return corrupt(at, "a core record is inconsistent");
    }
    *out = (rt_launch){
        .cores = (rt_launch_core *)lc,
        .core_count = cores,
        .words = (uint32_t *)&s[at],
        .word_count = words,
        .kernel_count = kernel_count,
    };
    *pos = at + words;
    return LM_OK;
}
