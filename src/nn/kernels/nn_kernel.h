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
#ifdef NN_DM
    /* Per face, the first row of each padded run is stored and the face's
     * other rows are copied from it in one strided local read: a few dozen
     * interpreted stores a tile instead of up to a thousand (a writer pads
     * every tile of a tensor whose width is not a multiple of 32). */
    uint32_t es = fmt == NN_FMT_BF16 ? 2 : fmt == NN_FMT_BFP8 ? 1 : 4;
    uint32_t data = fmt == NN_FMT_BFP8 ? addr + 64 : addr; /* bfloat8_b: the mantissas */
    bool copied = false;
    for (uint32_t f = 0; f < 4; f++) {
        uint32_t r0 = (f >> 1) * 16, c0 = (f & 1) * 16;
        uint32_t keep = cols <= c0 ? 0 : cols - c0 >= 16 ? 16 : cols - c0;
        uint32_t live = rows <= r0 ? 0 : rows - r0 >= 16 ? 16 : rows - r0;
        uint32_t face = data + f * 256 * es, row = 16 * es;
        if (keep < 16 && live > 0) { /* the live rows' padded columns */
            for (uint32_t c = keep; c < 16; c++)
                nn_tile_store(addr, fmt, f * 256 + c, bits);
            if (live > 1) {
                lm_noc_async_read_strided(get_noc_addr_local(face + keep * es), 0,
                                          face + row + keep * es, row, (16 - keep) * es, live - 1);
                copied = true;
            }
        }
        if (live < 16) { /* the padded rows, whole */
            for (uint32_t c = 0; c < 16; c++)
                nn_tile_store(addr, fmt, f * 256 + live * 16 + c, bits);
            if (live < 15) {
                lm_noc_async_read_strided(get_noc_addr_local(face + live * row), 0,
                                          face + (live + 1) * row, row, row, 15 - live);
                copied = true;
            }
        }
    }
    if (copied) noc_async_read_barrier();
#else
    for (uint32_t f = 0; f < 4; f++) {
        uint32_t r0 = (f >> 1) * 16, c0 = (f & 1) * 16;
        uint32_t keep = cols <= c0 ? 0 : cols - c0 >= 16 ? 16 : cols - c0;
        for (uint32_t r = 0; r < 16; r++) {
            uint32_t from = r0 + r >= rows ? 0 : keep;
            for (uint32_t c = from; c < 16; c++)
                nn_tile_store(addr, fmt, f * 256 + r * 16 + c, bits);
        }
    }
#endif
}

/* Valid rows and columns of tile `id` of a tile-layout tensor whose matrices
 * are ht x wt tiles with h x w logical elements. */
static inline void nn_tile_extent(uint32_t id, uint32_t ht, uint32_t wt, uint32_t h, uint32_t w,
                                  uint32_t *rows, uint32_t *cols) {
    uint32_t tc = id % wt, tr = (id / wt) % ht;
    *rows = tr == ht - 1 ? h - tr * 32 : 32;
    *cols = tc == wt - 1 ? w - tc * 32 : 32;
}

/* Of a matmul's block of nc (at most 16: dst) tile columns from `first`, a
 * mask of those whose product with B's tile row k is not zero when B is
 * block-diagonal over groups (nn_mm_groups: B's row r is channel r % c of
 * kernel tap r / c, in group (r % c) / cg, whose outputs are ocg columns).
 * A tile row may hold the end of one tap and the start of the next (c not
 * a multiple of 32), so its columns need not be one run. All nc when c is 0
 * (a dense B). */
static inline uint32_t nn_group_mask(uint32_t k, uint32_t c, uint32_t cg, uint32_t ocg,
                                     uint32_t first, uint32_t nc) {
    uint32_t all = (1u << nc) - 1, mask = 0;
    if (!c) return all;
    for (uint32_t r = k * 32, end = r + 32; r < end && mask != all;) {
        /* A run of one tap's channels ch .. ch + run - 1: groups ch / cg ..
         * (ch + run - 1) / cg, output tile columns lo .. hi. */
        uint32_t ch = r % c, run = c - ch < end - r ? c - ch : end - r;
        uint32_t lo = ch / cg * ocg / 32, hi = (((ch + run - 1) / cg + 1) * ocg - 1) / 32;
        if (hi >= first && lo < first + nc) {
            uint32_t from = lo > first ? lo - first : 0;
            uint32_t to = hi + 1 - first < nc ? hi + 1 - first : nc;
            mask |= ((1u << to) - 1) & ~((1u << from) - 1);
        }
        r += run;
    }
    return mask;
}

/* Of tile row k of such a B (nt tile columns), the first and the last
 * tile columns that meet a group: B's compact form (nn_mm_groups.k) stores
 * each row's tiles from *lo to *hi, a row after another. */
static inline void nn_group_span(uint32_t k, uint32_t c, uint32_t cg, uint32_t ocg, uint32_t nt,
                                 uint32_t *lo, uint32_t *hi) {
    *lo = nt - 1, *hi = 0;
    for (uint32_t r = k * 32, end = r + 32; r < end;) {
        uint32_t ch = r % c, run = c - ch < end - r ? c - ch : end - r;
        uint32_t a = ch / cg * ocg / 32, b = (((ch + run - 1) / cg + 1) * ocg - 1) / 32;
        if (a < *lo) *lo = a;
        if (b > *hi) *hi = b;
        r += run;
    }
    if (*hi > nt - 1) *hi = nt - 1;
    if (*lo > *hi) *lo = *hi;
}

/* Sets `n` bytes at L1 `addr` to zero. */
#ifdef NN_DM
/* tt-metal's TensorAccessor over runtime-arg words (lm_tensor_accessor_args'
 * words: interleaved, or height, width or block sharded, in L1 or DRAM):
 * page p's NoC address. */
typedef struct nn_accessor {
    uint32_t base, page, stride;
    bool dram, sharded;
    uint32_t layout, shard_h, shard_w, tensor_w, shard_cols;
    uint32_t cores; /* runtime arg index of the shard core table */
} nn_accessor;

/* Reads the words at runtime arg `arg`; returns the index after them. */
static inline uint32_t nn_accessor_init(nn_accessor *a, uint32_t arg, uint32_t base,
                                        uint32_t page) {
    uint32_t cfg = get_arg_val(arg);
    a->base = base;
    a->page = page;
    a->dram = (cfg & LM_TA_DRAM) != 0;
    a->sharded = (cfg & LM_TA_SHARDED) != 0;
    a->stride = get_arg_val(arg + 1);
    if (!a->sharded) return arg + LM_TA_PAGE_WORDS;
    a->layout = get_arg_val(arg + LM_TA_PAGE_WORDS);
    a->shard_h = get_arg_val(arg + LM_TA_PAGE_WORDS + 1);
    a->shard_w = get_arg_val(arg + LM_TA_PAGE_WORDS + 2);
    a->tensor_w = get_arg_val(arg + LM_TA_PAGE_WORDS + 3);
    a->shard_cols = get_arg_val(arg + LM_TA_PAGE_WORDS + 4);
    uint32_t shards = get_arg_val(arg + LM_TA_PAGE_WORDS + 5);
    a->cores = arg + LM_TA_SHARD_WORDS;
    return a->cores + (shards + 1) / 2;
}

static inline uint64_t nn_accessor_addr(const nn_accessor *a, uint32_t p, uint32_t offset) {
    if (!a->sharded) return lm_interleaved_noc_addr(a->dram, a->base, a->page, p, offset);
    uint32_t r = p / a->tensor_w, c = p % a->tensor_w;
    uint32_t sr = r / a->shard_h, sc = c / a->shard_w;
    uint32_t s = a->layout == LM_TA_HEIGHT  ? sr
                 : a->layout == LM_TA_WIDTH ? sc
                                            : sr * a->shard_cols + sc;
    uint32_t word = get_arg_val(a->cores + s / 2);
    uint32_t xy = s % 2 ? word >> 16 : word & 0xFFFF;
    uint32_t local = (r % a->shard_h) * a->shard_w + c % a->shard_w;
    uint32_t addr = a->base + local * a->stride + offset;
    /* A DRAM shard's place is its bank, (bank, 0). */
    if (a->dram) return lm_bank_noc_addr(true, xy & 0xFF, addr);
    return get_noc_addr(xy & 0xFF, xy >> 8, addr);
}

/* Reads pages [first, first + count) of `a` (each `page` bytes) into
 * circular buffer `cb`, one at a time. */
static inline void nn_read_pages(const nn_accessor *a, uint32_t cb, uint32_t first, uint32_t count,
                                 uint32_t page) {
    for (uint32_t t = first; t < first + count; t++) {
        cb_reserve_back(cb, 1);
        noc_async_read(nn_accessor_addr(a, t, 0), get_write_ptr(cb), page);
        noc_async_read_barrier();
        cb_push_back(cb, 1);
    }
}

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

/* Copies n 4-byte words from src to dst within L1 (dst below src, or the
 * ranges apart), four a step: a short copy costs fewer interpreted
 * instructions this way than a NoC transfer. */
static inline void nn_copy_words(uint32_t dst, uint32_t src, uint32_t n) {
    uint32_t *d = (uint32_t *)(uintptr_t)dst;
    const uint32_t *s = (const uint32_t *)(uintptr_t)src;
    uint32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        uint32_t a = s[i], b = s[i + 1], c = s[i + 2], e = s[i + 3];
        d[i] = a;
        d[i + 1] = b;
        d[i + 2] = c;
        d[i + 3] = e;
    }
    for (; i < n; i++)
        d[i] = s[i];
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

/* A compute kernel's fused activation on dst 0 (dst 1 and up scratch): with
 * the define NN_ACT (nn_unary_fused_switch's text), the activation whose
 * parameters nn_param[0..2] and op nn_op are runtime args `arg` .. arg + 3;
 * without it, nothing. */
#ifdef NN_ACT
#define NN_ACT_DST0(arg)                                                                           \
    do {                                                                                           \
        uint32_t nn_param[3] = {get_arg_val(arg), get_arg_val((arg) + 1), get_arg_val((arg) + 2)}; \
        uint32_t nn_op = get_arg_val((arg) + 3);                                                   \
        (void)nn_param;                                                                            \
        (void)nn_op;                                                                               \
        NN_ACT;                                                                                    \
    } while (0)
#else
#define NN_ACT_DST0(arg) ((void)0)
#endif
