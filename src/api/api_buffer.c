/* Public buffer API: argument validation, then the runtime. */
#include <string.h>

#include "base/error.h"
#include "base/shard.h"
#include "lm_kernel_abi.h"
#include "lightmetal/lm_buffer.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/trace.h"
#include "api/api_capture_hook.h"

void lm_buffer_config_init(lm_buffer_config *cfg) {
    if (!cfg) return;
    *cfg = (lm_buffer_config){.type = LM_BUFFER_DRAM, .layout = LM_BUFFER_INTERLEAVED};
}

/* The shards of sharded config `c` on `dev`: over its worker cores in L1,
 * over its banks in DRAM. */
static lm_status buffer_shards(const lm_device *dev, const lm_buffer_config *c,
                               shard_geometry *out) {
    uint32_t gx, gy;
    shard_grid(c->type == LM_BUFFER_DRAM, dev->info.grid_x, dev->info.grid_y, dev->info.dram_banks,
               &gx, &gy);
    return shard_geometry_make(c->layout, &c->shard, c->size / c->page_size, gx, gy, out);
}

static lm_status validate_config(const lm_device *dev, const lm_buffer_config *c) {
    const char *fn = "lm_create_buffer";
    if (c->type != LM_BUFFER_DRAM && c->type != LM_BUFFER_L1)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: type %d is not LM_BUFFER_DRAM or LM_BUFFER_L1",
                       fn, (int)c->type);
    if (c->layout < LM_BUFFER_INTERLEAVED || c->layout > LM_BUFFER_BLOCK_SHARDED)
        return err_set(LM_ERR_INVALID_ARGUMENT,
                       "%s: layout %d is not INTERLEAVED or HEIGHT, WIDTH or BLOCK_SHARDED", fn,
                       (int)c->layout);
    if (c->size == 0) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: size is 0", fn);
    if (c->page_size == 0) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: page_size is 0", fn);
    if (c->size % c->page_size)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: size %llu is not a multiple of page_size %llu",
                       fn, (unsigned long long)c->size, (unsigned long long)c->page_size);
    if (c->layout == LM_BUFFER_INTERLEAVED) return LM_OK;
    shard_geometry g;
    lm_status st = buffer_shards(dev, c, &g);
    return st ? err_prefix(st, "%s", fn) : LM_OK;
}

lm_status lm_create_buffer(lm_device *device, const lm_buffer_config *cfg, lm_buffer *out_buffer) {
    if (!device) return err_set(LM_ERR_INVALID_HANDLE, "lm_create_buffer: device is NULL");
    if (!cfg) return err_set(LM_ERR_INVALID_ARGUMENT, "lm_create_buffer: cfg is NULL");
    if (!out_buffer)
        return err_set(LM_ERR_INVALID_ARGUMENT, "lm_create_buffer: out_buffer is NULL");
    lm_status st = validate_config(device, cfg);
    if (st) return st;
    st = rt_buffer_create(device, cfg, out_buffer);
    if (st) return err_prefix(st, "lm_create_buffer");
    CAPTURE(device, cap_create_buffer, *out_buffer);
    return LM_OK;
}

lm_status lm_deallocate_buffer(lm_buffer buffer) {
    lm_device *device;
    lm_status st = rt_buffer_describe(buffer, &device, NULL);
    if (!st) st = rt_buffer_destroy(buffer);
    if (!st) CAPTURE(device, cap_deallocate_buffer, buffer);
    return st ? err_prefix(st, "lm_deallocate_buffer") : LM_OK;
}

lm_status lm_buffer_get_config(lm_buffer buffer, lm_buffer_config *out_cfg) {
    if (!out_cfg) return err_set(LM_ERR_INVALID_ARGUMENT, "lm_buffer_get_config: out_cfg is NULL");
    lm_status st = rt_buffer_describe(buffer, NULL, out_cfg);
    return st ? err_prefix(st, "lm_buffer_get_config") : LM_OK;
}

lm_status lm_buffer_address(lm_buffer buffer, uint64_t *out_address) {
    if (!out_address)
        return err_set(LM_ERR_INVALID_ARGUMENT, "lm_buffer_address: out_address is NULL");
    lm_buffer_config cfg;
    lm_status st = rt_buffer_describe(buffer, NULL, &cfg);
    if (st) return err_prefix(st, "lm_buffer_address");
    *out_address = cfg.address;
    return LM_OK;
}

lm_status lm_tensor_accessor_args(lm_buffer buffer, uint32_t *out_args, uint32_t capacity,
                                  uint32_t *out_count) {
    const char *fn = "lm_tensor_accessor_args";
    if (!out_args || !out_count)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                       out_args ? "out_count" : "out_args");
    lm_buffer_config cfg;
    lm_device *dev = NULL;
    lm_status st = rt_buffer_describe(buffer, &dev, &cfg);
    if (st) return err_prefix(st, "%s", fn);
    shard_geometry g = {0};
    bool sharded = cfg.layout != LM_BUFFER_INTERLEAVED;
    if (sharded) st = buffer_shards(dev, &cfg, &g);
    if (st) return err_prefix(st, "%s", fn);
    uint32_t gx = cfg.type == LM_BUFFER_DRAM ? dev->info.dram_banks : dev->info.grid_x;
    /* Layout (lm_kernel_abi.h): the marker word; sharded, then the geometry
     * and the shards' cores two to a word. */
    uint32_t need = sharded ? LM_TA_SHARD_WORDS + (g.shards + 1) / 2 : LM_TA_PAGE_WORDS;
    if (capacity < need)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: capacity is %u, the buffer needs %u words", fn,
                       capacity, need);
    /* The kernel side (lm/tensor_accessor.hpp) checks the marker. */
    out_args[0] = LM_TA_MAGIC | (cfg.type == LM_BUFFER_DRAM ? LM_TA_DRAM : 0u) |
                  (sharded ? LM_TA_SHARDED : 0u);
    uint64_t align = cfg.type == LM_BUFFER_DRAM ? dev->info.dram_alignment : dev->info.l1_alignment;
    uint64_t aligned_page = (cfg.page_size + align - 1) / align * align;
    if (aligned_page > UINT32_MAX)
        return err_set(LM_ERR_INVALID_ARGUMENT,
                       "%s: page size %llu is beyond a kernel's 32-bit addresses", fn,
                       (unsigned long long)cfg.page_size);
    out_args[1] = (uint32_t)aligned_page;
    if (sharded) {
        uint32_t head[] = {cfg.layout, g.shard_h, g.shard_w, g.tensor_w, g.shard_cols, g.shards};
        memcpy(out_args + LM_TA_PAGE_WORDS, head, sizeof head);
        for (uint32_t s = 0; s < g.shards; s++) {
            uint32_t xy = g.core[s] % gx | g.core[s] / gx << 8; /* a DRAM shard: (bank, 0) */
            uint32_t *w = &out_args[LM_TA_SHARD_WORDS + s / 2];
            *w = s % 2 ? *w | xy << 16 : xy;
        }
    }
    *out_count = need;
    return LM_OK;
}

static lm_status check_memory(const char *fn, lm_device *device, lm_buffer_type type) {
    if (!device) return err_set(LM_ERR_INVALID_HANDLE, "%s: device is NULL", fn);
    if (type != LM_BUFFER_DRAM && type != LM_BUFFER_L1)
        return err_set(LM_ERR_INVALID_ARGUMENT,
                       "%s: type %d is not LM_BUFFER_DRAM (1) or LM_BUFFER_L1 (2)", fn, (int)type);
    return LM_OK;
}

lm_status lm_device_get_memory_stats(lm_device *device, lm_buffer_type type,
                                     lm_memory_stats *out_stats) {
    static const char fn[] = "lm_device_get_memory_stats";
    lm_status st = check_memory(fn, device, type);
    if (st) return st;
    if (!out_stats) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: out_stats is NULL", fn);
    rt_memory_stats(device, type, out_stats);
    return LM_OK;
}

lm_status lm_device_reset_memory_peak(lm_device *device, lm_buffer_type type) {
    lm_status st = check_memory("lm_device_reset_memory_peak", device, type);
    if (!st) rt_memory_reset_peak(device, type);
    return st;
}

lm_status lm_buffer_size(lm_buffer buffer, uint64_t *out_size) {
    if (!out_size) return err_set(LM_ERR_INVALID_ARGUMENT, "lm_buffer_size: out_size is NULL");
    lm_buffer_config cfg;
    lm_status st = rt_buffer_describe(buffer, NULL, &cfg);
    if (st) return err_prefix(st, "lm_buffer_size");
    *out_size = cfg.size;
    return LM_OK;
}
