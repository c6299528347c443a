/* Where the pages of a sharded buffer live: the geometry of lm_shard_spec
 * (lightmetal/lm_buffer.h), checked once and then used to place pages. Pure
 * functions of their arguments, shared by the API's checks, the verifier of
 * binaries and the runtime's transfers, so the three agree.
 */
#ifndef LM_BASE_SHARD_H
#define LM_BASE_SHARD_H

#include <stdbool.h>
#include <stdint.h>

#include "lightmetal/lm_buffer.h"

typedef struct shard_geometry {
    uint32_t layout; /* LM_BUFFER_*_SHARDED */
    uint32_t shard_h, shard_w, tensor_w;
    uint32_t shard_cols; /* shards across the page grid */
    uint32_t shards;
    uint16_t core[LM_MAX_SHARDS]; /* core index (y * grid_x + x) of each shard */
} shard_geometry;

/* The grid a buffer's shards are placed on: worker cores for L1; DRAM banks
 * for DRAM, bank b at (b, 0), as tt-metal names a DRAM shard's place by its
 * logical DRAM core. A shard's "core index" (shard_geometry.core) is then the
 * bank. */
static inline void shard_grid(bool dram, uint32_t grid_x, uint32_t grid_y, uint32_t dram_banks,
                              uint32_t *out_x, uint32_t *out_y) {
    *out_x = dram ? dram_banks : grid_x;
    *out_y = dram ? 1 : grid_y;
}

/* Checks a sharded layout of `pages` pages on a grid_x x grid_y grid (see
 * shard_grid) and fills *out. Errors: LM_ERR_INVALID_ARGUMENT naming the shard field at fault (the
 * message starts with "shard."). */
lm_status shard_geometry_make(lm_buffer_layout layout, const lm_shard_spec *spec, uint64_t pages,
                              uint32_t grid_x, uint32_t grid_y, shard_geometry *out);

/* Page p: the core index holding it and its index within that core's shard. */
static inline void shard_locate(const shard_geometry *g, uint64_t p, uint32_t *out_core,
                                uint64_t *out_local) {
    uint64_t r = p / g->tensor_w, c = p % g->tensor_w;
    uint64_t sr = r / g->shard_h, sc = c / g->shard_w;
    uint64_t s = g->layout == LM_BUFFER_HEIGHT_SHARDED  ? sr
                 : g->layout == LM_BUFFER_WIDTH_SHARDED ? sc
                                                        : sr * g->shard_cols + sc;
    *out_core = g->core[s];
    *out_local = (r % g->shard_h) * g->shard_w + c % g->shard_w;
}

#endif
