#include "runtime/buffer.h"
#include "runtime/trace.h"

#include <stdlib.h>

#include "base/checked.h"
#include "base/error.h"
#include "base/handle.h"
#include "runtime/cq.h"
#include "runtime/device.h"

enum { HANDLE_TYPE_BUFFER = 1 };

/* One table for all devices: handles resolve without naming their device. */
static handle_table buffer_handles = HANDLE_TABLE_INIT;

static lm_status bad_handle(handle_check check) {
    return err_set(LM_ERR_INVALID_HANDLE, "buffer handle %s", handle_check_string(check));
}

static void link_buffer(lm_device *dev, rt_buffer *b) {
    b->next = dev->buffers;
    if (dev->buffers) dev->buffers->prev = b;
    dev->buffers = b;
}

static void unlink_buffer(lm_device *dev, rt_buffer *b) {
    if (b->prev)
        b->prev->next = b->next;
    else
        dev->buffers = b->next;
    if (b->next) b->next->prev = b->prev;
}

lm_status rt_buffer_create(lm_device *dev, const lm_buffer_config *cfg, lm_buffer *out_buffer) {
    int dram = cfg->type == LM_BUFFER_DRAM;
    bool sharded = cfg->layout != LM_BUFFER_INTERLEAVED;
    uint64_t alignment = dram ? RT_DRAM_ALIGNMENT : RT_L1_ALIGNMENT;
    uint32_t banks = dram ? dev->info.dram_banks : dev->info.grid_x * dev->info.grid_y;
    uint64_t stride, pages = cfg->size / cfg->page_size, bytes_per_bank;
    rt_buffer *b = calloc(1, sizeof *b);
    if (!b) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    uint32_t gx, gy;
    shard_grid(dram, dev->info.grid_x, dev->info.grid_y, dev->info.dram_banks, &gx, &gy);
    lm_status st =
        sharded ? shard_geometry_make(cfg->layout, &cfg->shard, pages, gx, gy, &b->shard) : LM_OK;
    /* A shard per core (or DRAM bank): each keeps a whole shard's room. */
    uint64_t per_bank_pages =
        sharded ? (uint64_t)b->shard.shard_h * b->shard.shard_w : ck_div_ceil_u64(pages, banks);
    if (!st && (!ck_align_up_u64(cfg->page_size, alignment, &stride) ||
                !ck_mul_u64(per_bank_pages, stride, &bytes_per_bank)))
        st = err_set(LM_ERR_OUT_OF_DEVICE_MEMORY, "buffer of %llu bytes cannot fit any bank",
                     (unsigned long long)cfg->size);
    if (st) {
        free(b);
        return st;
    }
    b->device = dev;
    b->config = *cfg;
    atomic_init(&b->pins, 0);

    pthread_mutex_lock(&dev->mutex);
    allocator *a = dram ? &dev->dram : &dev->l1;
    uint64_t address = cfg->address;
    st = cfg->at_address ? alloc_take_at(a, address, bytes_per_bank)
                         : alloc_take(a, bytes_per_bank, &address);
    if (st) {
        pthread_mutex_unlock(&dev->mutex);
        free(b);
        return err_prefix(st, "%s buffer of %llu bytes", dram ? "DRAM" : "L1",
                          (unsigned long long)cfg->size);
    }
    b->config.address = address;
    b->place = (rt_buffer_place){
        .memory = (uint8_t)cfg->type,
        .num_banks = banks,
        .address = address,
        .size = cfg->size,
        .page_size = cfg->page_size,
        .page_stride = stride,
        .shard = sharded ? &b->shard : NULL,
    };
    link_buffer(dev, b);
    pthread_mutex_unlock(&dev->mutex);

    handle_table_lock(&buffer_handles);
    st = handle_alloc_locked(&buffer_handles, HANDLE_TYPE_BUFFER, b, &b->handle);
    handle_table_unlock(&buffer_handles);
    if (st) {
        pthread_mutex_lock(&dev->mutex);
        alloc_give_back(a, address);
        unlink_buffer(dev, b);
        pthread_mutex_unlock(&dev->mutex);
        free(b);
        return st;
    }
    out_buffer->id = b->handle;
    return LM_OK;
}

void rt_memory_stats(lm_device *dev, lm_buffer_type type, lm_memory_stats *out) {
    bool dram = type == LM_BUFFER_DRAM;
    pthread_mutex_lock(&dev->mutex);
    const allocator *a = dram ? &dev->dram : &dev->l1;
    *out = (lm_memory_stats){
        .banks = dram ? dev->info.dram_banks : dev->info.grid_x * dev->info.grid_y,
        .total_allocatable_bytes = a->end - a->base,
        .total_allocated_bytes = alloc_used(a),
        .total_free_bytes = a->end - a->base - alloc_used(a),
        .largest_free_block_bytes = alloc_largest_free(a),
        .peak_allocated_bytes = alloc_peak(a),
    };
    pthread_mutex_unlock(&dev->mutex);
}

void rt_memory_reset_peak(lm_device *dev, lm_buffer_type type) {
    pthread_mutex_lock(&dev->mutex);
    alloc_reset_peak(type == LM_BUFFER_DRAM ? &dev->dram : &dev->l1);
    pthread_mutex_unlock(&dev->mutex);
}

/* Frees device memory and the object; the handle is already invalid. */
void rt_buffer_release_object(rt_buffer *b) {
    lm_device *dev = b->device;
    pthread_mutex_lock(&dev->mutex);
    while (atomic_load(&b->pins) != 0)
        pthread_cond_wait(&dev->buffer_idle, &dev->mutex);
    alloc_give_back(b->config.type == LM_BUFFER_DRAM ? &dev->dram : &dev->l1, b->place.address);
    unlink_buffer(dev, b);
    pthread_mutex_unlock(&dev->mutex);
    free(b);
}

lm_status rt_buffer_destroy(lm_buffer buffer) {
    void *obj;
    handle_table_lock(&buffer_handles);
    handle_check check = handle_get_locked(&buffer_handles, buffer.id, HANDLE_TYPE_BUFFER, &obj);
    if (check == HANDLE_OK) handle_free_locked(&buffer_handles, buffer.id);
    handle_table_unlock(&buffer_handles);
    if (check != HANDLE_OK) return bad_handle(check);
    rt_buffer *b = obj;
    if (!rt_trace_hold_buffer(b->device, b)) rt_buffer_release_object(b);
    return LM_OK;
}

lm_status rt_buffer_describe(lm_buffer buffer, lm_device **out_device, lm_buffer_config *out_cfg) {
    void *obj;
    handle_table_lock(&buffer_handles);
    handle_check check = handle_get_locked(&buffer_handles, buffer.id, HANDLE_TYPE_BUFFER, &obj);
    if (check == HANDLE_OK) {
        const rt_buffer *b = obj;
        if (out_device) *out_device = b->device;
        if (out_cfg) *out_cfg = b->config;
    }
    handle_table_unlock(&buffer_handles);
    return check == HANDLE_OK ? LM_OK : bad_handle(check);
}

lm_status rt_buffer_use(lm_buffer buffer, rt_buffer **out_buffer) {
    void *obj;
    handle_table_lock(&buffer_handles);
    handle_check check = handle_get_locked(&buffer_handles, buffer.id, HANDLE_TYPE_BUFFER, &obj);
    /* Pinning under the table lock: a destroy cannot slip in between. */
    if (check == HANDLE_OK) atomic_fetch_add(&((rt_buffer *)obj)->pins, 1);
    handle_table_unlock(&buffer_handles);
    if (check != HANDLE_OK) return bad_handle(check);
    *out_buffer = obj;
    return LM_OK;
}

void rt_buffer_unuse(rt_buffer *b) {
    /* Read the device first: once the count drops, a waiting destroy may free b. */
    lm_device *dev = b->device;
    if (atomic_fetch_sub(&b->pins, 1) == 1) {
        pthread_mutex_lock(&dev->mutex);
        pthread_cond_broadcast(&dev->buffer_idle);
        pthread_mutex_unlock(&dev->mutex);
    }
}

void rt_buffer_release_all(lm_device *dev) {
    for (;;) {
        pthread_mutex_lock(&dev->mutex);
        rt_buffer *b = dev->buffers;
        pthread_mutex_unlock(&dev->mutex);
        if (!b) return;
        handle_table_lock(&buffer_handles);
        handle_free_locked(&buffer_handles, b->handle);
        handle_table_unlock(&buffer_handles);
        rt_buffer_release_object(b);
    }
}

rt_buffer *rt_buffer_oldest(lm_device *dev) {
    pthread_mutex_lock(&dev->mutex);
    rt_buffer *b = dev->buffers;
    while (b && b->next)
        b = b->next;
    pthread_mutex_unlock(&dev->mutex);
    return b;
}

rt_buffer *rt_buffer_newer(lm_device *dev, rt_buffer *b) {
    pthread_mutex_lock(&dev->mutex);
    rt_buffer *newer = b->prev;
    pthread_mutex_unlock(&dev->mutex);
    return newer;
}

lm_status rt_buffer_read(lm_command_queue *cq, lm_buffer buffer, void **out_data,
                         uint64_t *out_size) {
    rt_buffer *b = NULL;
    lm_status st = rt_buffer_use(buffer, &b);
    if (st) return st;
    void *data = malloc(b->place.size ? b->place.size : 1);
    if (!data) {
        rt_buffer_unuse(b);
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory reading a buffer");
    }
    rt_cmd cmd = {.op = RT_CMD_READ_BUFFER, .u.read = {.place = b->place, .dst = data}};
    uint64_t seq, size = b->place.size;
    st = rt_cq_push(cq, &cmd, NULL, NULL, &seq);
    if (!st) st = rt_cq_wait(cq, seq);
    rt_buffer_unuse(b);
    if (st) {
        free(data);
        return st;
    }
    *out_data = data;
    *out_size = size;
    return LM_OK;
}

static void unpin(void *buffer) {
    rt_buffer_unuse(buffer);
}

/* Queues `cmd` (its place filled in here: the bytes [offset, offset + size)
 * of the buffer, size 0 for all of it) with the buffer pinned until done. */
static lm_status push_region(lm_command_queue *cq, lm_buffer buffer, rt_cmd *cmd, uint64_t offset,
                             uint64_t size, bool blocking) {
    rt_buffer *b = NULL;
    lm_status st = rt_buffer_use(buffer, &b);
    if (st) return st;
    if (b->device != rt_cq_device(cq)) {
        rt_buffer_unuse(b);
        return err_set(LM_ERR_INVALID_ARGUMENT,
                       "the buffer belongs to another device than the queue");
    }
    uint64_t total = b->place.size;
    if (size && (offset > total || size > total - offset)) {
        rt_buffer_unuse(b);
        return err_set(LM_ERR_INVALID_ARGUMENT,
                       "region of %llu bytes at offset %llu exceeds the buffer's %llu bytes",
                       (unsigned long long)size, (unsigned long long)offset,
                       (unsigned long long)total);
    }
    rt_buffer_place place = b->place;
    if (size) {
        place.offset = offset;
        place.size = size;
    }
    if (cmd->op == RT_CMD_WRITE_BUFFER)
        cmd->u.write.place = place;
    else
        cmd->u.read.place = place;
    uint64_t seq;
    st = rt_cq_push(cq, cmd, unpin, b, &seq);
    if (!st && blocking) st = rt_cq_wait(cq, seq);
    return st;
}

lm_status rt_buffer_transfer(lm_command_queue *cq, lm_buffer buffer, void *host, bool to_device,
                             bool blocking) {
    return rt_buffer_transfer_region(cq, buffer, 0, 0, host, to_device, blocking);
}

lm_status rt_buffer_transfer_region(lm_command_queue *cq, lm_buffer buffer, uint64_t offset,
                                    uint64_t size, void *host, bool to_device, bool blocking) {
    rt_cmd cmd = to_device ? (rt_cmd){.op = RT_CMD_WRITE_BUFFER, .u.write = {.src = host}}
                           : (rt_cmd){.op = RT_CMD_READ_BUFFER, .u.read = {.dst = host}};
    return push_region(cq, buffer, &cmd, offset, size, blocking);
}

lm_status rt_l1_transfer(lm_command_queue *cq, lm_core core, uint64_t address, uint64_t size,
                         void *host, bool to_device, const uint64_t *hash) {
    const lm_device_info *i = &rt_cq_device(cq)->info;
    if (core.x >= i->grid_x || core.y >= i->grid_y)
        return err_set(LM_ERR_INVALID_ARGUMENT, "core (%u,%u) is outside the %ux%u grid", core.x,
                       core.y, i->grid_x, i->grid_y);
    if (size == 0 || address < i->l1_unreserved_base || address > i->l1_size ||
        size > i->l1_size - address)
        return err_set(LM_ERR_INVALID_ARGUMENT,
                       "L1 range of %llu bytes at 0x%llx is not inside the unreserved L1 "
                       "[0x%llx, 0x%llx)",
                       (unsigned long long)size, (unsigned long long)address,
                       (unsigned long long)i->l1_unreserved_base, (unsigned long long)i->l1_size);
    /* One "page" per core, so the transfer lands in that core's L1: page
     * `index` of an L1 interleaving whose pages are `size` bytes. */
    uint32_t index = core.y * i->grid_x + core.x;
    rt_buffer_place place = {.memory = LM_BUFFER_L1,
                             .num_banks = i->grid_x * i->grid_y,
                             .address = address,
                             .offset = (uint64_t)index * size,
                             .size = size,
                             .page_size = size,
                             .page_stride = size};
    rt_cmd cmd = to_device
                     ? (rt_cmd){.op = RT_CMD_WRITE_BUFFER,
                                .u.write = {.place = place,
                                            .src = host,
                                            .check_hash = hash != NULL,
                                            .hash = hash ? *hash : 0}}
                     : (rt_cmd){.op = RT_CMD_READ_BUFFER, .u.read = {.place = place, .dst = host}};
    uint64_t seq;
    lm_status st = rt_cq_push(cq, &cmd, NULL, NULL, &seq);
    return st ? st : rt_cq_wait(cq, seq);
}

lm_status rt_buffer_write_checked(lm_command_queue *cq, lm_buffer buffer, uint64_t offset,
                                  uint64_t size, const void *src, uint64_t hash, bool blocking) {
    rt_cmd cmd = {.op = RT_CMD_WRITE_BUFFER,
                  .u.write = {.src = src, .check_hash = true, .hash = hash}};
    return push_region(cq, buffer, &cmd, offset, size, blocking);
}
