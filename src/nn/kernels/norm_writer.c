/* Writes the output tiles of normalisations and reductions from CB 16, in
 * groups: unit g is n tiles of stride `inner` starting at
 * (g / inner) * n * inner + g % inner (a row of tiles: inner 1; a column of
 * tiles: inner = tiles per row; consecutive tiles: n 1, inner 1). With
 * zero_pad set, the padding of tiles at the right and bottom edges is zeroed
 * first (the op's math may have made it nonzero).
 * Compile-time args: is_dram, out_arg (the common arg holding the output's
 * address), zero_pad, format and, optionally, block: up to that many tiles of
 * a unit are written under one barrier (at most CB 16's pages, and only for
 * a compute that pushes CB 16 one tile at a time; 1 when absent). Runtime
 * args: first, count (units), n, inner, and the output's Ht, Wt, H, W. */
#include "dataflow_api.h"

#define A(i) get_arg_val(i)
#define NARGS (sizeof lm_compile_time_args_ / sizeof lm_compile_time_args_[0])

void kernel_main(void) {
    uint32_t zero_pad = get_compile_time_arg_val(2), fmt = get_compile_time_arg_val(3);
    uint32_t first = A(0), count = A(1), n = A(2), inner = A(3);
    uint32_t ht = A(4), wt = A(5), h = A(6), w = A(7);
    InterleavedAddrGenFast out = {.bank_base_address =
                                      get_common_arg_val(get_compile_time_arg_val(1)),
                                  .page_size = get_tile_size(16),
                                  .is_dram = get_compile_time_arg_val(0)};
    uint32_t block = NARGS > 4 ? get_compile_time_arg_val(NARGS > 4 ? 4 : 0) : 1;
    /* Nothing to zero when the last two dims fill their tiles. */
    if (h % 32 == 0 && w % 32 == 0) zero_pad = 0;
    const volatile uint32_t *cfg = lm_l1_word(LM_L1_CB_CONFIG + 16 * LM_CB_CONFIG_STRIDE);
    uint32_t fifo = cfg[0], fifo_end = cfg[0] + cfg[1], page = cfg[2];
    for (uint32_t g = first; g < first + count; g++) {
        uint32_t base = g / inner * n * inner + g % inner;
        for (uint32_t i0 = 0; i0 < n; i0 += block) {
            uint32_t b = n - i0 < block ? n - i0 : block;
            cb_wait_front(16, b);
            uint32_t addr = get_read_ptr(16);
            for (uint32_t i = i0; i < i0 + b; i++) {
                uint32_t t = base + i * inner;
                if (zero_pad) {
                    uint32_t rows, cols;
                    nn_tile_extent(t, ht, wt, h, w, &rows, &cols);
                    nn_tile_fill_outside(addr, fmt, rows, cols, 0);
                }
                noc_async_write_tile(t, &out, addr);
                addr += page;
                if (addr >= fifo_end) addr = fifo;
            }
            noc_async_write_barrier();
            cb_pop_front(16, b);
        }
    }
}
