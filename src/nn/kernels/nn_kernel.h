/* Helpers shared by the op library's kernels; the build puts this file in
 * front of each of them. Formats are lm_data_format values (compile-time
 * arguments of the kernels). */
#include <stdbool.h>
#include <stdint.h>

#ifdef NN_DM /* a data movement kernel (nn_program.c defines it) */
#include "dataflow_api.h"
#endif

#define NN_FMT_FLOAT32 1
#define NN_FMT_BF16 2
#define NN_FMT_BFP8 3
#define NN_FMT_UINT32 4
#define NN_FMT_INT32 5

/* Element `e` (face-layout index) of the tile at L1 `addr` = `bits` (float32
 * bits or a 32-bit integer; bfloat16 keeps the upper half; bfloat8_b can only
 * be zeroed: its mantissa byte becomes 0). */
static inline void nn_tile_store(uint32_t addr, uint32_t fmt, uint32_t e, uint32_t bits) {
    if (fmt == NN_FMT_BF16)
        *(volatile uint16_t *)(uintptr_t)(addr + 2 * e) = (uint16_t)(bits >> 16);
    else if (fmt == NN_FMT_BFP8)
        *(volatile uint8_t *)(uintptr_t)(addr + 64 + e) = 0;
    else
        *(volatile uint32_t *)(uintptr_t)(addr + 4 * e) = bits;
}

/* Sets every element of the tile at `addr` outside its first `rows` rows and
 * `cols` columns to `bits`: the padding of a tile at the edge of a tensor. */
static inline void nn_tile_fill_outside(uint32_t addr, uint32_t fmt, uint32_t rows, uint32_t cols,
                                        uint32_t bits) {
    if (rows >= 32 && cols >= 32) return;
    for (uint32_t f = 0; f < 4; f++) {
        uint32_t r0 = (f >> 1) * 16, c0 = (f & 1) * 16;
        uint32_t keep = cols <= c0 ? 0 : cols - c0 >= 16 ? 16 : cols - c0;
        for (uint32_t r = 0; r < 16; r++) {
            uint32_t from = r0 + r >= rows ? 0 : keep;
            for (uint32_t c = from; c < 16; c++)
                nn_tile_store(addr, fmt, f * 256 + r * 16 + c, bits);
        }
    }
}

/* Valid rows and columns of tile `id` of a tile-layout tensor whose matrices
 * are ht x wt tiles with h x w logical elements. */
static inline void nn_tile_extent(uint32_t id, uint32_t ht, uint32_t wt, uint32_t h, uint32_t w,
                                  uint32_t *rows, uint32_t *cols) {
    uint32_t tc = id % wt, tr = (id / wt) % ht;
    *rows = tr == ht - 1 ? h - tr * 32 : 32;
    *cols = tc == wt - 1 ? w - tc * 32 : 32;
}

/* Sets `n` bytes at L1 `addr` to zero. */
#ifdef NN_DM
/* Fills n bytes at addr (4-byte aligned, n a multiple of 4) with the word
 * `bits`: one store, then NoC copies of what is filled from this core's own
 * L1, doubling each time -- a dozen transfers for a tile rather than a
 * thousand interpreted stores. */
static inline void nn_fill_u32(uint32_t addr, uint32_t n, uint32_t bits) {
    if (n < 4) return;
    *(volatile uint32_t *)(uintptr_t)addr = bits;
    uint64_t self = get_noc_addr_local(addr);
    for (uint32_t done = 4; done < n; done *= 2) {
        noc_async_read(self, addr + done, n - done < done ? n - done : done);
        noc_async_read_barrier();
    }
}
#endif

/* Zeroes n bytes at addr (any alignment). */
static inline void nn_zero(uint32_t addr, uint32_t n) {
    uint32_t i = 0;
    for (; i < n && (addr + i) % 4; i++)
        *(volatile uint8_t *)(uintptr_t)(addr + i) = 0;
#ifdef NN_DM
    if (n - i >= 64) {
        uint32_t words = (n - i) / 4 * 4;
        nn_fill_u32(addr + i, words, 0);
        i += words;
    }
#endif
    for (; i + 4 <= n; i += 4)
        *(volatile uint32_t *)(uintptr_t)(addr + i) = 0;
    for (; i < n; i++)
        *(volatile uint8_t *)(uintptr_t)(addr + i) = 0;
}

/* Tilize and untilize work in units of one tile row of one matrix, cut into
 * column blocks of at most `block` tiles: unit u is block bk of tile row tr of
 * matrix b, `tiles` tiles wide, starting at tile `first_tile`. */
typedef struct nn_row_block {
    uint32_t b, tr, bk, tiles, first_tile;
} nn_row_block;

static inline nn_row_block nn_row_block_of(uint32_t u, uint32_t ht, uint32_t wt, uint32_t block) {
    uint32_t nb = (wt + block - 1) / block;
    nn_row_block r;
    r.b = u / (ht * nb);
    r.tr = u % (ht * nb) / nb;
    r.bk = u % nb;
    r.tiles = wt - r.bk * block < block ? wt - r.bk * block : block;
    r.first_tile = (r.b * ht + r.tr) * wt + r.bk * block;
    return r;
}
