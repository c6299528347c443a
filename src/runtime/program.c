#include "runtime/program.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/file.h"
#include "base/handle.h"
#include "base/hash.h"
#include "base/shard.h"
#include "lm_kernel_abi.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/trace.h"
#include "runtime/cq.h"

enum { HANDLE_PROGRAM = 1, HANDLE_KERNEL = 2, HANDLE_CB = 3 };

#define MAX_GRID_CORES 1024 /* 32 x 32, the largest grid a device may have */

static handle_table handles = HANDLE_TABLE_INIT;

typedef struct core_mask {
    uint64_t bits[MAX_GRID_CORES / 64];
} core_mask;

static bool mask_has(const core_mask *m, uint32_t i) {
    return m->bits[i / 64] >> (i % 64) & 1;
}
static void mask_set(core_mask *m, uint32_t i) {
    m->bits[i / 64] |= 1ull << (i % 64);
}

typedef struct arg_list {
    uint32_t count;
    uint32_t *words;
    /* Handed out for in-place writes (rt_get_runtime_args): a capture
     * records the words at each launch when they changed since `recorded`. */
    bool exposed;
    uint64_t recorded; /* hash of the words last recorded */
} arg_list;

typedef struct rt_kernel {
    uint64_t handle;
    rt_program *program;
    char *name;
    const void *elf; /* the binary, kept for capture: the image cache's copy */
    size_t elf_size;
    char *source;            /* NULL when built from an ELF */
    lm_kernel_config config; /* without compile args and defines */
    uint32_t processor;      /* LM_PROC_* */
    bool fp32_acc;           /* compute kernels: fp32_dest_acc_en */
    core_mask cores;
    const rv_image *image;
    arg_list *args; /* per core index */
    arg_list common;
} rt_kernel;

typedef struct rt_cb {
    uint64_t handle;
    core_mask cores;
    lm_circular_buffer_config cfg;
    uint32_t address;
    uint32_t capacity; /* bytes placed for it (its own space); 0 with a buffer's */
} rt_cb;

struct rt_program {
    atomic_uint refs;
    uint64_t handle;
    lm_device *device;
    rt_program *prev, *next; /* the device's live programs (device->mutex) */
    pthread_mutex_t mutex;   /* guards everything below */
    uint32_t num_cores, grid_x;
    rt_kernel **kernels;
    uint32_t kernel_count;
    rt_cb **cbs;
    uint32_t cb_count;
    rt_kernel **placed;  /* [core * 3 + processor]: the kernel there, or NULL */
    uint32_t *cb_top;    /* per core: end of this program's CB space */
    uint32_t *cb_used;   /* per core: bit i set when CB index i is taken */
    uint8_t *sem_count;  /* per core */
    uint32_t *sem_value; /* per core * LM_MAX_SEMAPHORES */
};

lm_core_range_set lm_core_range_set_of(uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1) {
    lm_core_range_set s = {.count = 1};
    s.ranges[0] = (lm_core_range){{x0, y0}, {x1, y1}};
    return s;
}

/* ---- references and handles ---- */

static void kernel_free(lm_device *device, rt_kernel *k);

static void program_free(rt_program *p) {
    for (uint32_t i = 0; i < p->kernel_count; i++) {
        rt_kernel *k = p->kernels[i];
        for (uint32_t c = 0; k->args && c < p->num_cores; c++)
            free(k->args[c].words);
        free(k->common.words);
        kernel_free(p->device, k);
    }
    for (uint32_t i = 0; i < p->cb_count; i++)
        free(p->cbs[i]);
    free(p->kernels);
    free(p->cbs);
    free(p->placed);
    free(p->cb_top);
    free(p->cb_used);
    free(p->sem_count);
    free(p->sem_value);
    pthread_mutex_destroy(&p->mutex);
    free(p);
}

static void program_unref(rt_program *p) {
    if (atomic_fetch_sub(&p->refs, 1) == 1) program_free(p);
}

/* Resolves a program handle and takes a reference (drop it with program_unref). */
static lm_status program_ref(lm_program program, rt_program **out) {
    void *obj;
    handle_table_lock(&handles);
    handle_check check = handle_get_locked(&handles, program.id, HANDLE_PROGRAM, &obj);
    if (check == HANDLE_OK) atomic_fetch_add(&((rt_program *)obj)->refs, 1);
    handle_table_unlock(&handles);
    if (check != HANDLE_OK)
        return err_set(LM_ERR_INVALID_HANDLE, "program handle %s", handle_check_string(check));
    *out = obj;
    return LM_OK;
}

/* Resolves a kernel of program p (whose reference the caller holds). */
static lm_status kernel_of(rt_program *p, lm_kernel kernel, rt_kernel **out) {
    void *obj;
    handle_table_lock(&handles);
    handle_check check = handle_get_locked(&handles, kernel.id, HANDLE_KERNEL, &obj);
    handle_table_unlock(&handles);
    if (check != HANDLE_OK)
        return err_set(LM_ERR_INVALID_HANDLE, "kernel handle %s", handle_check_string(check));
    if (((rt_kernel *)obj)->program != p)
        return err_set(LM_ERR_INVALID_ARGUMENT, "kernel '%s' belongs to another program",
                       ((rt_kernel *)obj)->name);
    *out = obj;
    return LM_OK;
}

static lm_status new_handle(uint8_t type, void *obj, uint64_t *out) {
    handle_table_lock(&handles);
    lm_status st = handle_alloc_locked(&handles, type, obj, out);
    handle_table_unlock(&handles);
    return st;
}

/* Grows an array of pointers by one slot. */
static lm_status append(void *array_ptr, uint32_t *count, void *item) {
    void ***array = array_ptr;
    void **grown = realloc(*array, (size_t)(*count + 1) * sizeof **array);
    if (!grown) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    grown[(*count)++] = item;
    *array = grown;
    return LM_OK;
}

/* ---- programs ---- */

lm_status rt_program_create(lm_device *device, lm_program *out_program) {
    rt_program *p = calloc(1, sizeof *p);
    if (!p) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    atomic_init(&p->refs, 1);
    pthread_mutex_init(&p->mutex, NULL);
    p->device = device;
    p->grid_x = device->info.grid_x;
    p->num_cores = device->info.grid_x * device->info.grid_y;
    p->placed = calloc((size_t)p->num_cores * LM_NUM_PROCESSORS, sizeof *p->placed);
    p->cb_top = malloc(p->num_cores * sizeof *p->cb_top);
    p->cb_used = calloc(p->num_cores, sizeof *p->cb_used);
    p->sem_count = calloc(p->num_cores, sizeof *p->sem_count);
    p->sem_value = calloc((size_t)p->num_cores * LM_MAX_SEMAPHORES, sizeof *p->sem_value);
    lm_status st = LM_OK;
    if (!p->placed || !p->cb_top || !p->cb_used || !p->sem_count || !p->sem_value)
        st = err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    for (uint32_t c = 0; !st && c < p->num_cores; c++)
        p->cb_top[c] = (uint32_t)device->info.l1_unreserved_base;
    if (!st) st = new_handle(HANDLE_PROGRAM, p, &p->handle);
    if (st) {
        program_free(p);
        return st;
    }
    pthread_mutex_lock(&device->mutex);
    p->next = device->programs;
    if (p->next) p->next->prev = p;
    device->programs = p;
    pthread_mutex_unlock(&device->mutex);
    out_program->id = p->handle;
    return LM_OK;
}

static void unlink_program(rt_program *p) {
    lm_device *dev = p->device;
    pthread_mutex_lock(&dev->mutex);
    if (p->prev)
        p->prev->next = p->next;
    else
        dev->programs = p->next;
    if (p->next) p->next->prev = p->prev;
    p->prev = p->next = NULL;
    pthread_mutex_unlock(&dev->mutex);
}

lm_status rt_program_release(lm_program program) {
    void *obj;
    handle_table_lock(&handles);
    handle_check check = handle_get_locked(&handles, program.id, HANDLE_PROGRAM, &obj);
    if (check == HANDLE_OK) {
        rt_program *p = obj;
        handle_free_locked(&handles, program.id);
        for (uint32_t i = 0; i < p->kernel_count; i++)
            handle_free_locked(&handles, p->kernels[i]->handle);
        for (uint32_t i = 0; i < p->cb_count; i++)
            handle_free_locked(&handles, p->cbs[i]->handle);
    }
    handle_table_unlock(&handles);
    if (check != HANDLE_OK)
        return err_set(LM_ERR_INVALID_HANDLE, "program handle %s", handle_check_string(check));
    unlink_program(obj);
    program_unref(obj);
    return LM_OK;
}

void rt_program_release_all(lm_device *dev) {
    for (;;) {
        pthread_mutex_lock(&dev->mutex);
        rt_program *p = dev->programs;
        lm_program handle = {p ? p->handle : 0};
        pthread_mutex_unlock(&dev->mutex);
        if (!p) return;
        rt_program_release(handle);
    }
}

lm_status rt_program_device(lm_program program, lm_device **out_device) {
    rt_program *p;
    lm_status st = program_ref(program, &p);
    if (st) return st;
    *out_device = p->device;
    program_unref(p);
    return LM_OK;
}

/* Turns a range set into a mask; every core must lie inside the grid. */
static lm_status cores_to_mask(const rt_program *p, const lm_core_range_set *set, core_mask *out) {
    memset(out, 0, sizeof *out);
    uint32_t grid_y = p->num_cores / p->grid_x;
    for (uint32_t r = 0; r < set->count; r++) {
        const lm_core_range *cr = &set->ranges[r];
        if (cr->start.x > cr->end.x || cr->start.y > cr->end.y)
            return err_set(LM_ERR_INVALID_ARGUMENT,
                           "core range %u: start (%u,%u) is not before end (%u,%u)", r, cr->start.x,
                           cr->start.y, cr->end.x, cr->end.y);
        if (cr->end.x >= p->grid_x || cr->end.y >= grid_y)
            return err_set(LM_ERR_INVALID_ARGUMENT,
                           "core range %u: (%u,%u)-(%u,%u) is outside the %ux%u grid", r,
                           cr->start.x, cr->start.y, cr->end.x, cr->end.y, p->grid_x, grid_y);
        for (uint32_t y = cr->start.y; y <= cr->end.y; y++)
            for (uint32_t x = cr->start.x; x <= cr->end.x; x++)
                mask_set(out, y * p->grid_x + x);
    }
    return LM_OK;
}

/* ---- kernels ---- */

static lm_status check_free_slots(const rt_program *p, const core_mask *m, uint32_t proc) {
    for (uint32_t c = 0; c < p->num_cores; c++) {
        const rt_kernel *k = p->placed[c * LM_NUM_PROCESSORS + proc];
        if (mask_has(m, c) && k)
            return err_set(LM_ERR_INVALID_ARGUMENT,
                           "core (%u,%u) already runs kernel '%s' on processor %s", c % p->grid_x,
                           c / p->grid_x, k->name,
                           proc == LM_PROC_DM0   ? "DM0"
                           : proc == LM_PROC_DM1 ? "DM1"
                                                 : "COMPUTE");
    }
    return LM_OK;
}

static void kernel_free(lm_device *device, rt_kernel *k) {
    rv_image_cache_put(device->images, k->image); /* k->elf with it */
    free(k->source);
    free(k->name);
    free(k->args);
    free(k);
}

/* Places a kernel whose ELF is known (copied; `hash` as
 * rv_image_cache_get takes it). `source` may be NULL. */
static lm_status kernel_place(rt_program *p, const char *name, const void *elf, size_t elf_size,
                              uint64_t hash, const char *source, const core_mask *cores,
                              const lm_kernel_config *cfg, lm_kernel *out_kernel) {
    uint32_t proc = (uint32_t)cfg->processor - 1; /* validated: DM0, DM1 or COMPUTE */
    rt_kernel *k = calloc(1, sizeof *k);
    if (!k) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    k->cores = *cores;
    k->elf_size = elf_size;
    lm_status st = rv_image_cache_get(p->device->images, elf, elf_size, hash, &k->image, &k->elf);
    if (st) err_prefix(st, "kernel '%s' is not a usable RV32IM binary", name);
    if (!st) {
        k->program = p;
        k->processor = proc;
        k->fp32_acc = proc == LM_PROC_COMPUTE && cfg->fp32_dest_acc_en;
        k->config = *cfg;
        /* The ELF embodies the compile-time arguments and defines; the
         * caller's arrays are not ours to keep (a capture begun later
         * snapshots this config). */
        k->config.compile_args = NULL;
        k->config.compile_arg_count = 0;
        k->config.defines = NULL;
        k->config.define_count = 0;
        k->config.named_compile_args = NULL;
        k->config.named_compile_arg_count = 0;
        k->name = strdup(name);
        k->source = source ? strdup(source) : NULL;
        k->args = calloc(p->num_cores, sizeof *k->args);
        if (!k->name || !k->args || (source && !k->source))
            st = err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    }
    bool owned = false; /* once listed, the program frees the kernel */
    if (!st) {
        pthread_mutex_lock(&p->mutex);
        st = check_free_slots(p, &k->cores, proc); /* again: another thread may have won */
        if (!st) st = append(&p->kernels, &p->kernel_count, k);
        if (!st) {
            owned = true;
            for (uint32_t c = 0; c < p->num_cores; c++)
                if (mask_has(&k->cores, c)) p->placed[c * LM_NUM_PROCESSORS + proc] = k;
            st = new_handle(HANDLE_KERNEL, k, &k->handle);
        }
        pthread_mutex_unlock(&p->mutex);
        if (!st) out_kernel->id = k->handle;
    }
    if (st && !owned) kernel_free(p->device, k);
    return st;
}

/* Checks the cores and that their processor slots are free. */
static lm_status kernel_cores(rt_program *p, const lm_core_range_set *cores, uint32_t proc,
                              core_mask *out) {
    lm_status st = cores_to_mask(p, cores, out);
    if (st) return st;
    pthread_mutex_lock(&p->mutex);
    st = check_free_slots(p, out, proc);
    pthread_mutex_unlock(&p->mutex);
    return st;
}

lm_status rt_kernel_check_placement(lm_program program, const lm_core_range_set *cores,
                                    const lm_kernel_config *cfg) {
    rt_program *p;
    lm_status st = program_ref(program, &p);
    if (st) return st;
    core_mask mask;
    st = kernel_cores(p, cores, (uint32_t)cfg->processor - 1, &mask);
    program_unref(p);
    return st;
}

lm_status rt_kernel_create_from_elf(lm_program program, const char *name, const void *elf,
                                    size_t elf_size, uint64_t hash, const char *source,
                                    const lm_core_range_set *cores, const lm_kernel_config *cfg,
                                    lm_kernel *out_kernel) {
    rt_program *p;
    lm_status st = program_ref(program, &p);
    if (st) return st;
    core_mask mask;
    st = kernel_cores(p, cores, (uint32_t)cfg->processor - 1, &mask);
    if (!st) st = kernel_place(p, name, elf, elf_size, hash, source, &mask, cfg, out_kernel);
    program_unref(p);
    return st;
}

lm_status rt_kernel_describe(lm_program program, lm_kernel kernel, rt_kernel_desc *out) {
    rt_program *p;
    lm_status st = program_ref(program, &p);
    if (st) return st;
    rt_kernel *k;
    st = kernel_of(p, kernel, &k);
    if (!st)
        *out = (rt_kernel_desc){.name = k->name,
                                .elf = k->elf,
                                .elf_size = k->elf_size,
                                .source = k->source,
                                .config = k->config};
    program_unref(p);
    return st;
}

/* The index of `core` in p's grid when `kernel` runs there. */
static lm_status args_slot(rt_program *p, rt_kernel *k, lm_core core, uint32_t *out_index) {
    uint32_t index = core.y * p->grid_x + core.x;
    if (core.x >= p->grid_x || index >= p->num_cores || !mask_has(&k->cores, index))
        return err_set(LM_ERR_INVALID_ARGUMENT, "kernel '%s' does not run on core (%u,%u)", k->name,
                       core.x, core.y);
    *out_index = index;
    return LM_OK;
}

lm_status rt_check_args_core(lm_program program, lm_kernel kernel, lm_core core) {
    rt_program *p;
    lm_status st = program_ref(program, &p);
    if (st) return st;
    rt_kernel *k;
    uint32_t index;
    st = kernel_of(p, kernel, &k);
    if (!st) st = args_slot(p, k, core, &index);
    program_unref(p);
    return st;
}

lm_status rt_get_runtime_args(lm_program program, lm_kernel kernel, lm_core core,
                              uint32_t **out_args, uint32_t *out_count) {
    rt_program *p;
    lm_status st = program_ref(program, &p);
    if (st) return st;
    rt_kernel *k;
    uint32_t index;
    st = kernel_of(p, kernel, &k);
    if (!st) st = args_slot(p, k, core, &index);
    if (!st) {
        pthread_mutex_lock(&p->mutex);
        arg_list *a = &k->args[index];
        if (!a->exposed) a->recorded = hash64(a->words, a->count * sizeof *a->words, 0);
        a->exposed = true;
        *out_args = a->words;
        *out_count = a->count;
        pthread_mutex_unlock(&p->mutex);
    }
    program_unref(p);
    return st;
}

/* One changed args array, copied out so fn runs without the program's lock
 * (the recorder takes its own lock, and takes program locks under it). */
typedef struct changed_args {
    lm_kernel kernel;
    lm_core core;
    uint32_t count;
    uint32_t *words;
} changed_args;

lm_status rt_visit_changed_args(lm_program program, rt_args_visit_fn fn, void *ctx) {
    rt_program *p;
    lm_status st = program_ref(program, &p);
    if (st) return st;
    changed_args *list = NULL;
    size_t n = 0, cap = 0;
    pthread_mutex_lock(&p->mutex);
    for (uint32_t ki = 0; !st && ki < p->kernel_count; ki++)
        for (uint32_t i = 0; !st && i < p->num_cores; i++) {
            rt_kernel *k = p->kernels[ki];
            arg_list *a = &k->args[i];
            if (!a->exposed) continue;
            uint64_t h = hash64(a->words, a->count * sizeof *a->words, 0);
            if (h == a->recorded) continue;
            if (n == cap) {
                cap = cap ? 2 * cap : 8;
                changed_args *grown = realloc(list, cap * sizeof *grown);
                if (!grown) {
                    st = err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
                    break;
                }
                list = grown;
            }
            uint32_t *w = malloc(a->count ? a->count * sizeof *w : 1);
            if (!w) {
                st = err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
                break;
            }
            memcpy(w, a->words, a->count * sizeof *w);
            list[n++] = (changed_args){{k->handle}, {i % p->grid_x, i / p->grid_x}, a->count, w};
            a->recorded = h;
        }
    pthread_mutex_unlock(&p->mutex);
    program_unref(p);
    for (size_t i = 0; i < n; i++) {
        if (!st) fn(ctx, program, list[i].kernel, list[i].core, list[i].words, list[i].count);
        free(list[i].words);
    }
    free(list);
    return st;
}

static lm_status copy_args(arg_list *dst, const uint32_t *args, uint32_t count) {
    uint32_t *w = NULL;
    if (count == dst->count && dst->words) { /* in place: a pointer handed out stays valid */
        memcpy(dst->words, args, count * sizeof *w);
        return LM_OK;
    }
    if (count) {
        w = malloc(count * sizeof *w);
        if (!w) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        memcpy(w, args, count * sizeof *w);
    }
    free(dst->words);
    dst->words = w;
    dst->count = count;
    dst->exposed = false; /* a new array: the old pointer is gone */
    return LM_OK;
}

lm_status rt_set_runtime_args(lm_program program, lm_kernel kernel, lm_core core,
                              const uint32_t *args, uint32_t count) {
    rt_program *p;
    lm_status st = program_ref(program, &p);
    if (st) return st;
    rt_kernel *k;
    uint32_t index = 0;
    st = kernel_of(p, kernel, &k);
    if (!st) st = args_slot(p, k, core, &index);
    if (!st) {
        pthread_mutex_lock(&p->mutex);
        arg_list *a = &k->args[index];
        st = copy_args(a, args, count);
        /* Set (and captured) through the API: nothing left to record. */
        if (!st && a->exposed) a->recorded = hash64(a->words, count * sizeof *a->words, 0);
        pthread_mutex_unlock(&p->mutex);
    }
    program_unref(p);
    return st;
}

lm_status rt_set_common_runtime_args(lm_program program, lm_kernel kernel, const uint32_t *args,
                                     uint32_t count) {
    rt_program *p;
    lm_status st = program_ref(program, &p);
    if (st) return st;
    rt_kernel *k;
    st = kernel_of(p, kernel, &k);
    if (!st) {
        pthread_mutex_lock(&p->mutex);
        st = copy_args(&k->common, args, count);
        pthread_mutex_unlock(&p->mutex);
    }
    program_unref(p);
    return st;
}

/* ---- circular buffers and semaphores ---- */

/* The per-core bytes of L1 buffer `buffer` a circular buffer may use, and
 * its address; the message names `what`. */
static lm_status cb_buffer_space(rt_program *p, lm_buffer buffer, uint32_t total, const char *what,
                                 uint32_t *out_address) {
    lm_device *dev;
    lm_buffer_config bc;
    lm_status st = rt_buffer_describe(buffer, &dev, &bc);
    if (st) return err_prefix(st, "%s", what);
    uint64_t pages = bc.size / bc.page_size, per_core = (pages + p->num_cores - 1) / p->num_cores;
    shard_geometry g;
    if (bc.layout != LM_BUFFER_INTERLEAVED &&
        !shard_geometry_make(bc.layout, &bc.shard, pages, p->grid_x, p->num_cores / p->grid_x, &g))
        per_core = (uint64_t)g.shard_h * g.shard_w; /* a shard per core */
    uint64_t per_bank =
        per_core * ((bc.page_size + RT_L1_ALIGNMENT - 1) / RT_L1_ALIGNMENT * RT_L1_ALIGNMENT);
    if (dev != p->device || bc.type != LM_BUFFER_L1 || per_bank < total)
        return err_set(LM_ERR_INVALID_ARGUMENT,
                       "%s must be an L1 buffer of this device holding at least total_size (%u) "
                       "bytes per core",
                       what, total);
    *out_address = (uint32_t)bc.address;
    return LM_OK;
}

static lm_status place_cb(rt_program *p, rt_cb *cb) {
    const lm_circular_buffer_config *cfg = &cb->cfg;
    uint32_t indices = 0;
    for (uint32_t i = 0; i < cfg->index_count; i++)
        indices |= 1u << cfg->indices[i].index;
    for (uint32_t c = 0; c < p->num_cores; c++)
        if (mask_has(&cb->cores, c) && (p->cb_used[c] & indices)) {
            uint32_t clash = p->cb_used[c] & indices, i = 0;
            while (!(clash >> i & 1))
                i++;
            return err_set(LM_ERR_INVALID_ARGUMENT,
                           "circular buffer index %u is already used on core (%u,%u)", i,
                           c % p->grid_x, c / p->grid_x);
        }
    uint64_t l1_size = p->device->info.l1_size;
    if (cfg->globally_allocated.id) {
        lm_status st = cb_buffer_space(p, cfg->globally_allocated, cfg->total_size,
                                       "globally_allocated", &cb->address);
        if (st) return st;
    } else {
        uint32_t address = 0;
        for (uint32_t c = 0; c < p->num_cores; c++)
            if (mask_has(&cb->cores, c) && p->cb_top[c] > address) address = p->cb_top[c];
        uint64_t end = (uint64_t)address + cfg->total_size;
        if (end > l1_size)
            return err_set(LM_ERR_OUT_OF_DEVICE_MEMORY,
                           "circular buffers need L1 up to 0x%llx, beyond the %llu bytes of L1",
                           (unsigned long long)end, (unsigned long long)l1_size);
        cb->address = address;
        cb->capacity = cfg->total_size;
        uint32_t top = (uint32_t)((end + RT_L1_ALIGNMENT - 1) / RT_L1_ALIGNMENT * RT_L1_ALIGNMENT);
        for (uint32_t c = 0; c < p->num_cores; c++)
            if (mask_has(&cb->cores, c)) p->cb_top[c] = top;
    }
    for (uint32_t c = 0; c < p->num_cores; c++)
        if (mask_has(&cb->cores, c)) p->cb_used[c] |= indices;
    return LM_OK;
}

lm_status rt_cb_create(lm_program program, const lm_core_range_set *cores,
                       const lm_circular_buffer_config *cfg, lm_circular_buffer *out_cb) {
    rt_program *p;
    lm_status st = program_ref(program, &p);
    if (st) return st;
    rt_cb *cb = calloc(1, sizeof *cb);
    if (!cb) st = err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    if (!st) st = cores_to_mask(p, cores, &cb->cores);
    if (!st) {
        cb->cfg = *cfg;
        pthread_mutex_lock(&p->mutex);
        /* List first, so placing (which commits only after its checks) is last. */
        st = append(&p->cbs, &p->cb_count, cb);
        if (!st) {
            st = place_cb(p, cb);
            if (st) p->cb_count--;
        }
        if (!st) {
            cb = NULL; /* owned by the program now */
            st = new_handle(HANDLE_CB, p->cbs[p->cb_count - 1], &p->cbs[p->cb_count - 1]->handle);
            if (!st) out_cb->id = p->cbs[p->cb_count - 1]->handle;
        }
        pthread_mutex_unlock(&p->mutex);
    }
    free(cb);
    program_unref(p);
    return st;
}

/* The program's CB of handle `cb`, or NULL (error set). Called locked. */
static rt_cb *find_cb(rt_program *p, lm_circular_buffer cb) {
    for (uint32_t i = 0; i < p->cb_count; i++)
        if (p->cbs[i]->handle == cb.id) return p->cbs[i];
    err_set(LM_ERR_INVALID_HANDLE, "circular buffer handle %llu is not one of this program's",
            (unsigned long long)cb.id);
    return NULL;
}

lm_status rt_cb_get_config(lm_program program, lm_circular_buffer cb,
                           lm_circular_buffer_config *out_cfg) {
    rt_program *p;
    lm_status st = program_ref(program, &p);
    if (st) return st;
    pthread_mutex_lock(&p->mutex);
    rt_cb *c = find_cb(p, cb);
    if (c) *out_cfg = c->cfg;
    pthread_mutex_unlock(&p->mutex);
    program_unref(p);
    return c ? LM_OK : LM_ERR_INVALID_HANDLE;
}

lm_status rt_cb_update(lm_program program, lm_circular_buffer cb,
                       const lm_circular_buffer_config *cfg) {
    rt_program *p;
    lm_status st = program_ref(program, &p);
    if (st) return st;
    pthread_mutex_lock(&p->mutex);
    rt_cb *c = find_cb(p, cb);
    st = c ? LM_OK : LM_ERR_INVALID_HANDLE;
    uint32_t address = 0;
    if (!st) {
        /* The same indices: which cores use which index does not change. */
        uint32_t before = 0, after = 0;
        for (uint32_t i = 0; i < c->cfg.index_count; i++)
            before |= 1u << c->cfg.indices[i].index;
        for (uint32_t i = 0; i < cfg->index_count; i++)
            after |= 1u << cfg->indices[i].index;
        if (before != after)
            st = err_set(LM_ERR_INVALID_ARGUMENT,
                         "the circular buffer's indices cannot change (only addresses and sizes)");
    }
    bool dynamic = !st && c->cfg.globally_allocated.id;
    if (!st && dynamic != (cfg->globally_allocated.id != 0))
        st = err_set(LM_ERR_INVALID_ARGUMENT,
                     dynamic ? "a circular buffer in an L1 buffer's space stays in one"
                             : "only a circular buffer created in an L1 buffer's space "
                               "(globally_allocated) can move to another");
    else if (!st && dynamic)
        st = cb_buffer_space(p, cfg->globally_allocated, cfg->total_size, "buffer", &address);
    else if (!st && cfg->total_size > c->capacity)
        st = err_set(LM_ERR_INVALID_ARGUMENT,
                     "total size %u exceeds the %u bytes placed for the circular buffer (only a "
                     "circular buffer in an L1 buffer's space can grow)",
                     cfg->total_size, c->capacity);
    if (!st) {
        c->cfg = *cfg;
        if (cfg->globally_allocated.id) c->address = address;
    }
    pthread_mutex_unlock(&p->mutex);
    program_unref(p);
    return st;
}

lm_status rt_semaphore_create(lm_program program, const lm_core_range_set *cores,
                              uint32_t initial_value, uint32_t *out_id) {
    rt_program *p;
    lm_status st = program_ref(program, &p);
    if (st) return st;
    core_mask m;
    st = cores_to_mask(p, cores, &m);
    if (!st) {
        pthread_mutex_lock(&p->mutex);
        /* The same id on every core of the set: the first one free on all. */
        uint32_t id = 0;
        for (uint32_t c = 0; c < p->num_cores; c++)
            if (mask_has(&m, c) && p->sem_count[c] > id) id = p->sem_count[c];
        if (id >= LM_MAX_SEMAPHORES) {
            st = err_set(LM_ERR_INVALID_ARGUMENT, "too many semaphores: at most %u per core",
                         LM_MAX_SEMAPHORES);
        } else {
            for (uint32_t c = 0; c < p->num_cores; c++)
                if (mask_has(&m, c)) {
                    p->sem_count[c] = (uint8_t)(id + 1);
                    p->sem_value[c * LM_MAX_SEMAPHORES + id] = initial_value;
                }
            *out_id = id;
        }
        pthread_mutex_unlock(&p->mutex);
    }
    program_unref(p);
    return st;
}

/* ---- launches ---- */

/* words[] is filled in two passes: count, then copy. */
typedef struct word_writer {
    uint32_t *words;
    uint32_t count;
} word_writer;

static uint32_t put_words(word_writer *w, const uint32_t *src, uint32_t n) {
    uint32_t at = w->count;
    if (w->words && n) memcpy(w->words + at, src, n * sizeof *src);
    w->count += n;
    return at;
}

static void layout_core(const rt_program *p, uint32_t c, rt_launch_core *lc, word_writer *w) {
    lc->core = c;
    for (uint32_t proc = 0; proc < LM_NUM_PROCESSORS; proc++) {
        const rt_kernel *k = p->placed[c * LM_NUM_PROCESSORS + proc];
        lc->kernel[proc] = UINT32_MAX;
        lc->args_count[proc] = lc->common_count[proc] = 0;
        if (!k) continue;
        for (uint32_t i = 0; i < p->kernel_count; i++)
            if (p->kernels[i] == k) lc->kernel[proc] = i;
        lc->args[proc] = put_words(w, k->args[c].words, k->args[c].count);
        lc->args_count[proc] = k->args[c].count;
        lc->common[proc] = put_words(w, k->common.words, k->common.count);
        lc->common_count[proc] = k->common.count;
    }
    lc->sem_count = p->sem_count[c];
    lc->sems = put_words(w, &p->sem_value[c * LM_MAX_SEMAPHORES], lc->sem_count);
    lc->cb_count = 0;
    lc->cbs = w->count;
    for (uint32_t i = 0; i < p->cb_count; i++) {
        const rt_cb *cb = p->cbs[i];
        if (!mask_has(&cb->cores, c)) continue;
        for (uint32_t j = 0; j < cb->cfg.index_count; j++) {
            const lm_cb_index_config *ic = &cb->cfg.indices[j];
            uint32_t slot[1 + LM_CB_CONFIG_WORDS] = {ic->index,
                                                     cb->address,
                                                     cb->cfg.total_size,
                                                     ic->page_size,
                                                     cb->cfg.total_size / ic->page_size,
                                                     (uint32_t)ic->format};
            put_words(w, slot, 1 + LM_CB_CONFIG_WORDS);
            lc->cb_count++;
        }
    }
}

static bool core_in_launch(const rt_program *p, uint32_t c) {
    for (uint32_t proc = 0; proc < LM_NUM_PROCESSORS; proc++)
        if (p->placed[c * LM_NUM_PROCESSORS + proc]) return true;
    return p->sem_count[c] || p->cb_used[c];
}

lm_status rt_launch_build(lm_program program, lm_device *device, rt_launch **out_launch) {
    rt_program *p;
    lm_status st = program_ref(program, &p);
    if (st) return st;
    if (p->device != device) {
        program_unref(p);
        return err_set(LM_ERR_INVALID_ARGUMENT, "the program belongs to another device");
    }
    rt_launch *l = calloc(1, sizeof *l);
    if (!l) {
        program_unref(p);
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    }
    l->program = p; /* the reference taken above now belongs to the launch */
    pthread_mutex_lock(&p->mutex);
    /* CBs grow up from the bottom of L1, buffers down from the top. */
    pthread_mutex_lock(&device->mutex);
    uint64_t lowest = alloc_lowest(&device->l1);
    pthread_mutex_unlock(&device->mutex);
    uint32_t cores = 0;
    for (uint32_t c = 0; c < p->num_cores && !st; c++) {
        if (!core_in_launch(p, c)) continue;
        cores++;
        if (p->cb_top[c] > lowest)
            st = err_set(LM_ERR_OUT_OF_DEVICE_MEMORY,
                         "the program's circular buffers on core (%u,%u) end at 0x%x, above the "
                         "L1 buffer at 0x%llx",
                         c % p->grid_x, c / p->grid_x, p->cb_top[c], (unsigned long long)lowest);
    }
    l->kernels = calloc(p->kernel_count ? p->kernel_count : 1, sizeof *l->kernels);
    l->cores = calloc(cores ? cores : 1, sizeof *l->cores);
    if (!st && (!l->kernels || !l->cores))
        st = err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    word_writer w = {0};
    for (int pass = 0; pass < 2 && !st; pass++) {
        w.count = 0;
        l->core_count = 0;
        for (uint32_t c = 0; c < p->num_cores; c++)
            if (core_in_launch(p, c)) layout_core(p, c, &l->cores[l->core_count++], &w);
        if (pass == 0) {
            w.words = malloc((w.count ? w.count : 1) * sizeof *w.words);
            if (!w.words) st = err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        }
    }
    l->words = w.words;
    l->word_count = w.count;
    for (uint32_t i = 0; i < p->kernel_count && !st; i++)
        l->kernels[i] = (rt_launch_kernel){p->kernels[i]->image,    p->kernels[i]->name,
                                           p->kernels[i]->fp32_acc, p->kernels[i]->elf,
                                           p->kernels[i]->elf_size, 0};
    l->kernel_count = p->kernel_count;
    pthread_mutex_unlock(&p->mutex);
    if (st) {
        rt_launch_free(l);
        return st;
    }
    *out_launch = l;
    return LM_OK;
}

void rt_launch_free(rt_launch *l) {
    if (!l) return;
    program_unref(l->program);
    free(l->kernels);
    free(l->cores);
    free(l->words);
    free(l);
}

static void launch_done(void *launch) {
    rt_launch_free(launch);
}

lm_status rt_program_enqueue(lm_command_queue *cq, lm_program program, bool blocking) {
    rt_launch *launch;
    lm_status st = rt_launch_build(program, rt_cq_device(cq), &launch);
    if (st) return st;
    rt_trace *trace = rt_trace_capturing(cq);
    if (trace) { /* recorded, not run */
        st = rt_trace_record(trace, launch);
        if (st) rt_launch_free(launch);
        return st;
    }
    rt_cmd cmd = {.op = RT_CMD_PROGRAM, .u.program.launch = launch};
    uint64_t seq;
    st = rt_cq_push(cq, &cmd, launch_done, launch, &seq);
    if (!st && blocking) st = rt_cq_wait(cq, seq);
    return st;
}

/* ---- snapshots (for a capture that begins after programs exist) ---- */

/* Rectangles covering exactly the cores of `m`: runs along each row, merged
 * down the rows where they line up. */
static lm_status mask_to_ranges(const rt_program *p, const core_mask *m, lm_core_range_set *out) {
    out->count = 0;
    uint32_t grid_y = p->num_cores / p->grid_x;
    for (uint32_t y = 0; y < grid_y; y++)
        for (uint32_t x = 0; x < p->grid_x;) {
            if (!mask_has(m, y * p->grid_x + x)) {
                x++;
                continue;
            }
            uint32_t x0 = x;
            while (x < p->grid_x && mask_has(m, y * p->grid_x + x))
                x++;
            lm_core_range *grow = NULL;
            for (uint32_t i = 0; i < out->count; i++) {
                lm_core_range *r = &out->ranges[i];
                if (r->end.y + 1 == y && r->start.x == x0 && r->end.x == x - 1) grow = r;
            }
            if (grow) {
                grow->end.y = y;
            } else if (out->count == LM_MAX_CORE_RANGES) {
                return err_set(LM_ERR_UNSUPPORTED,
                               "a program's cores need more than %d rectangles to describe",
                               LM_MAX_CORE_RANGES);
            } else {
                out->ranges[out->count++] = (lm_core_range){{x0, y}, {x - 1, y}};
            }
        }
    return LM_OK;
}

static lm_status snapshot_program(rt_program *p, const rt_snapshot_visitor *v) {
    lm_program prog = {p->handle};
    lm_core_range_set set;
    lm_status st = LM_OK;
    pthread_mutex_lock(&p->mutex);
    v->program(v->ctx, prog);
    for (uint32_t i = 0; i < p->kernel_count && !st; i++) {
        const rt_kernel *k = p->kernels[i];
        lm_kernel kernel = {k->handle};
        st = mask_to_ranges(p, &k->cores, &set);
        if (st) break;
        v->kernel(v->ctx, prog, kernel, &set, &k->config);
        for (uint32_t c = 0; c < p->num_cores; c++)
            if (k->args[c].words)
                v->runtime_args(v->ctx, prog, kernel, (lm_core){c % p->grid_x, c / p->grid_x},
                                k->args[c].words, k->args[c].count);
        if (k->common.words) v->common_args(v->ctx, prog, kernel, k->common.words, k->common.count);
    }
    for (uint32_t i = 0; i < p->cb_count && !st; i++) {
        const rt_cb *cb = p->cbs[i];
        st = mask_to_ranges(p, &cb->cores, &set);
        if (!st) v->cb(v->ctx, prog, (lm_circular_buffer){cb->handle}, &set, &cb->cfg);
    }
    /* Semaphores in id order, one call per group of cores with the same
     * initial value: replay hands out the same ids in the same order. */
    for (uint32_t id = 0; id < LM_MAX_SEMAPHORES && !st; id++) {
        core_mask todo = {0};
        for (uint32_t c = 0; c < p->num_cores; c++)
            if (p->sem_count[c] > id) mask_set(&todo, c);
        for (uint32_t c = 0; c < p->num_cores && !st; c++) {
            if (!mask_has(&todo, c)) continue;
            uint32_t value = p->sem_value[c * LM_MAX_SEMAPHORES + id];
            core_mask group = {0};
            for (uint32_t d = c; d < p->num_cores; d++)
                if (mask_has(&todo, d) && p->sem_value[d * LM_MAX_SEMAPHORES + id] == value) {
                    mask_set(&group, d);
                    todo.bits[d / 64] &= ~(1ull << (d % 64));
                }
            st = mask_to_ranges(p, &group, &set);
            if (!st) v->semaphore(v->ctx, prog, &set, value, id);
        }
    }
    pthread_mutex_unlock(&p->mutex);
    return st;
}

lm_status rt_program_snapshot_one(lm_program program, const rt_snapshot_visitor *v) {
    rt_program *p;
    lm_status st = program_ref(program, &p);
    if (st) return st;
    st = snapshot_program(p, v);
    program_unref(p);
    return st;
}

void rt_program_each(lm_device *dev, void (*fn)(void *ctx, lm_program program), void *ctx) {
    pthread_mutex_lock(&dev->mutex);
    for (rt_program *p = dev->programs; p; p = p->next)
        fn(ctx, (lm_program){p->handle});
    pthread_mutex_unlock(&dev->mutex);
}
