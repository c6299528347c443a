/* Attention softmax reader: for each group (one row of score tiles: batch
 * b, head h, tile row tr) reads its n tiles into CB 0 once, with the mask
 * tile each one needs into CB 1 (broadcast over batch, heads, rows or
 * columns as the mask's shape says; the compute broadcasts within the tile),
 * and, for the tiles that need it, an additive tile into CB 2: -Inf where
 * the causal mask removes a key (query i, key j > i; logical rows only) and
 * in the padding columns past Sk, 0 elsewhere. The compute adds it after the
 * scale, so any scale works, and the padding never enters the softmax.
 * Before the first group it writes the scaler tile (1.0 at [0][0]) into CB 4
 * and a tile of ones into CB 3.
 * Runtime args 13..16 (after those below): scores is_dram, mask is_dram,
 * causal, has_mask (runtime: one compiled kernel for every attention).
 * Runtime args: first, count (groups), n (= wt), ht, h (Sq), w (Sk), heads,
 * then the mask's: dims B, H (1 or the scores'), rows_one, cols_one (its Sq,
 * Sk are 1), mht, mwt. Common args: scores, output, mask. */
#include "dataflow_api.h"

#define A(i) get_arg_val(i)
#define ONE_BITS 0x3f800000u
#define NEG_INF_BITS 0xff800000u

static inline uint32_t face_index(uint32_t r, uint32_t c) {
    return ((r >> 4) * 2 + (c >> 4)) * 256 + (r & 15) * 16 + (c & 15);
}

void kernel_main(void) {
    uint32_t causal = A(15), has_mask = A(16);
    uint32_t first = A(0), count = A(1), n = A(2), ht = A(3), h = A(4), w = A(5);
    uint32_t heads = A(6), mb = A(7), mh = A(8), rows_one = A(9), cols_one = A(10);
    uint32_t mht = A(11), mwt = A(12);
    InterleavedAddrGenFast in = {.bank_base_address = get_common_arg_val(0),
                                 .page_size = get_tile_size(0),
                                 .is_dram = A(13)};
    InterleavedAddrGenFast mask = {.bank_base_address = get_common_arg_val(2),
                                   .page_size = has_mask ? get_tile_size(1) : 0,
                                   .is_dram = A(14)};
    cb_reserve_back(4, 1);
    nn_zero(get_write_ptr(4), 4096);
    *(volatile uint32_t *)(uintptr_t)get_write_ptr(4) = ONE_BITS;
    cb_push_back(4, 1);
    cb_reserve_back(3, 1);
    nn_fill_u32(get_write_ptr(3), 4096, ONE_BITS);
    cb_push_back(3, 1);

    for (uint32_t g = first; g < first + count; g++) {
        uint32_t bh = g / ht, tr = g % ht;
        uint32_t mm = (mb == 1 ? 0 : bh / heads) * mh + (mh == 1 ? 0 : bh % heads);
        for (uint32_t tc = 0; tc < n; tc++) {
            cb_reserve_back(0, 1);
            noc_async_read_tile(g * n + tc, &in, get_write_ptr(0));
            if (has_mask) {
                uint32_t mt = (mm * mht + (rows_one ? 0 : tr)) * mwt + (cols_one ? 0 : tc);
                cb_reserve_back(1, 1);
                noc_async_read_tile(mt, &mask, get_write_ptr(1));
            }
            noc_async_read_barrier();
            cb_push_back(0, 1);
            if (has_mask) cb_push_back(1, 1);
            bool diag = causal && tc * 32 + 31 > tr * 32, edge = tc == n - 1 && w % 32;
            if (!diag && !edge) continue;
            cb_reserve_back(2, 1);
            uint32_t addr = get_write_ptr(2);
            nn_zero(addr, 4096);
            uint32_t rows = tr == ht - 1 ? h - tr * 32 : 32, cols = tc == n - 1 ? w - tc * 32 : 32;
            for (uint32_t r = 0; r < 32; r++) {
                uint32_t i = tr * 32 + r;
                /* First removed column of row r in the tile. */
                uint32_t c0 = cols;
                if (causal && r < rows) c0 = i + 1 <= tc * 32 ? 0 : i + 1 - tc * 32;
                if (c0 > cols) c0 = cols;
                for (uint32_t c = c0; c < 32; c++)
                    *(volatile uint32_t *)(uintptr_t)(addr + 4 * face_index(r, c)) = NEG_INF_BITS;
            }
            cb_push_back(2, 1);
        }
    }
}
