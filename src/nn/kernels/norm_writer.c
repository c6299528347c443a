/* Writes the output tiles of normalisations and reductions from CB 16, in
 * groups: unit g is n tiles of stride `inner` starting at
 * (g / inner) * n * inner + g % inner (a row of tiles: inner 1; a column of
 * tiles: inner = tiles per row; consecutive tiles: n 1, inner 1). With
 * zero_pad set, the padding of tiles at the right and bottom edges is zeroed
 * first (the op's math may have made it nonzero).
 * Compile-time args: is_dram, out_arg (the common arg holding the output's
 * address), zero_pad, format. Runtime args: first, count (units), n, inner,
 * and the output's Ht, Wt, H, W. */
#include "dataflow_api.h"

#define A(i) get_arg_val(i)

void kernel_main(void) {
    uint32_t zero_pad = get_compile_time_arg_val(2), fmt = get_compile_time_arg_val(3);
    uint32_t first = A(0), count = A(1), n = A(2), inner = A(3);
    uint32_t ht = A(4), wt = A(5), h = A(6), w = A(7);
    InterleavedAddrGenFast out = {.bank_base_address =
                                      get_common_arg_val(get_compile_time_arg_val(1)),
                                  .page_size = get_tile_size(16),
                                  .is_dram = get_compile_time_arg_val(0)};
    for (uint32_t g = first; g < first + count; g++) {
        uint32_t base = g / inner * n * inner + g % inner;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t t = base + i * inner;
            cb_wait_front(16, 1);
            uint32_t addr = get_read_ptr(16);
            if (zero_pad) {
                uint32_t rows, cols;
                nn_tile_extent(t, ht, wt, h, w, &rows, &cols);
                nn_tile_fill_outside(addr, fmt, rows, cols, 0);
            }
            noc_async_write_tile(t, &out, addr);
            noc_async_write_barrier();
            cb_pop_front(16, 1);
        }
    }
}
