#include "base/shard.h"

#include <string.h>

#include "base/error.h"

static uint32_t div_up(uint64_t a, uint64_t b) {
    return (uint32_t)((a + b - 1) / b);
}

lm_status shard_geometry_make(lm_buffer_layout layout, const lm_shard_spec *spec, uint64_t pages,
                              uint32_t grid_x, uint32_t grid_y, shard_geometry *out) {
    if (layout < LM_BUFFER_HEIGHT_SHARDED || layout > LM_BUFFER_BLOCK_SHARDED)
        return err_set(LM_ERR_INVALID_ARGUMENT, "layout %d is not a sharded layout", (int)layout);
    const lm_shard_spec *s = spec;
    if (!s->shard_height || !s->shard_width || !s->tensor_height || !s->tensor_width)
        return err_set(LM_ERR_INVALID_ARGUMENT,
                       "shard: shard %ux%u and tensor %ux%u pages must all be nonzero",
                       s->shard_height, s->shard_width, s->tensor_height, s->tensor_width);
    if ((uint64_t)s->tensor_height * s->tensor_width != pages)
        return err_set(LM_ERR_INVALID_ARGUMENT,
                       "shard.tensor_height x tensor_width = %ux%u pages, the buffer has %llu",
                       s->tensor_height, s->tensor_width, (unsigned long long)pages);
    if (s->cores.count == 0 || s->cores.count > LM_MAX_CORE_RANGES)
        return err_set(LM_ERR_INVALID_ARGUMENT, "shard.cores has %u ranges (must be 1..%d)",
                       s->cores.count, LM_MAX_CORE_RANGES);
    memset(out, 0, sizeof *out);
    out->layout = layout;
    out->shard_h = s->shard_height;
    out->shard_w = s->shard_width;
    out->tensor_w = s->tensor_width;
    uint32_t rows = div_up(s->tensor_height, s->shard_height);
    uint32_t cols = div_up(s->tensor_width, s->shard_width);
    out->shard_cols = cols;
    if (layout == LM_BUFFER_HEIGHT_SHARDED && s->shard_width != s->tensor_width)
        return err_set(LM_ERR_INVALID_ARGUMENT,
                       "shard.shard_width %u must equal tensor_width %u for height sharding",
                       s->shard_width, s->tensor_width);
    if (layout == LM_BUFFER_WIDTH_SHARDED && s->shard_height != s->tensor_height)
        return err_set(LM_ERR_INVALID_ARGUMENT,
                       "shard.shard_height %u must equal tensor_height %u for width sharding",
                       s->shard_height, s->tensor_height);
    uint64_t shards = (uint64_t)rows * cols;
    if (shards > LM_MAX_SHARDS)
        return err_set(LM_ERR_INVALID_ARGUMENT, "shard: %llu shards (at most %d)",
                       (unsigned long long)shards, LM_MAX_SHARDS);
    out->shards = (uint32_t)shards;
    /* The cores, checked, in the order shards take them. */
    uint16_t order[LM_MAX_SHARDS];
    uint32_t n = 0;
    uint8_t used[64 * 64 / 8] = {0};
    for (uint32_t i = 0; i < s->cores.count; i++) {
        lm_core a = s->cores.ranges[i].start, b = s->cores.ranges[i].end;
        if (b.x < a.x || b.y < a.y || b.x >= grid_x || b.y >= grid_y)
            return err_set(LM_ERR_INVALID_ARGUMENT,
                           "shard.cores range %u (%u,%u)-(%u,%u) is empty or outside the %ux%u "
                           "grid",
                           i, a.x, a.y, b.x, b.y, grid_x, grid_y);
        uint32_t w = b.x - a.x + 1, h = b.y - a.y + 1;
        for (uint32_t k = 0; k < w * h; k++) {
            uint32_t x = s->col_major ? a.x + k / h : a.x + k % w;
            uint32_t y = s->col_major ? a.y + k % h : a.y + k / w;
            uint32_t index = y * grid_x + x;
            if (index < sizeof used * 8) {
                if (used[index / 8] >> index % 8 & 1)
                    return err_set(LM_ERR_INVALID_ARGUMENT, "shard.cores lists core (%u,%u) twice",
                                   x, y);
                used[index / 8] |= (uint8_t)(1u << index % 8);
            }
            if (n < LM_MAX_SHARDS) order[n] = (uint16_t)index;
            n++;
        }
    }
    if (layout == LM_BUFFER_BLOCK_SHARDED) {
        lm_core a = s->cores.ranges[0].start, b = s->cores.ranges[0].end;
        uint32_t w = b.x - a.x + 1, h = b.y - a.y + 1;
        uint32_t need_w = s->col_major ? rows : cols, need_h = s->col_major ? cols : rows;
        if (s->cores.count != 1 || w < need_w || h < need_h)
            return err_set(LM_ERR_INVALID_ARGUMENT,
                           "shard.cores must be one rectangle of at least %ux%u cores for %ux%u "
                           "block shards",
                           need_w, need_h, cols, rows);
        for (uint32_t r = 0; r < rows; r++)
            for (uint32_t c = 0; c < cols; c++) {
                uint32_t x = a.x + (s->col_major ? r : c), y = a.y + (s->col_major ? c : r);
                out->core[r * cols + c] = (uint16_t)(y * grid_x + x);
            }
        return LM_OK;
    }
    if (n < shards)
        return err_set(LM_ERR_INVALID_ARGUMENT, "shard.cores has %u cores for %llu shards", n,
                       (unsigned long long)shards);
    memcpy(out->core, order, shards * sizeof order[0]);
    return LM_OK;
}
