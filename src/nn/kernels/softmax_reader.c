/* Softmax reader: for each group (the tiles of one softmax slice: a row of
 * tiles for the last dim, a column of tiles for dim -2, the tiles at one
 * position along an outer dim) reads its n tiles into CB 0 three times: for
 * the max, for the sum of exponentials and for the output (twice when the
 * compute keeps the group's tiles). In the max's
 * direction the padding of edge tiles becomes -Inf (exp gives 0 there and the
 * max never sees it). Before the first group it writes the scaler tile (1.0
 * at [0][0]) into CB 1 and a tile of ones into CB 2.
 * Group g's tile i is (g / inner) * n * inner + g % inner + i * inner.
 * Compile-time args: is_dram, format, fill rows (dim -2), fill columns
 * (last dim), resident (the compute keeps the group: two reads, not three). Runtime args: first,
 * count (groups), n, inner, Ht, Wt, H, W. Common args: input address. */
#include "dataflow_api.h"

#define A(i) get_arg_val(i)
#define ONE_BITS 0x3f800000u

void kernel_main(void) {
    uint32_t fmt = get_compile_time_arg_val(1);
    uint32_t fill_rows = get_compile_time_arg_val(2), fill_cols = get_compile_time_arg_val(3);
    uint32_t resident = get_compile_time_arg_val(4);
    uint32_t first = A(0), count = A(1), n = A(2), inner = A(3);
    uint32_t ht = A(4), wt = A(5), h = A(6), w = A(7);
    InterleavedAddrGenFast in = {.bank_base_address = get_common_arg_val(0),
                                 .page_size = get_tile_size(0),
                                 .is_dram = get_compile_time_arg_val(0)};
    cb_reserve_back(1, 1);
    nn_zero(get_write_ptr(1), 4096);
    *(volatile uint32_t *)(uintptr_t)get_write_ptr(1) = ONE_BITS;
    cb_push_back(1, 1);
    cb_reserve_back(2, 1);
    nn_fill_u32(get_write_ptr(2), 4096, ONE_BITS);
    cb_push_back(2, 1);

    for (uint32_t g = first; g < first + count; g++) {
        uint32_t base = g / inner * n * inner + g % inner;
        for (uint32_t pass = resident; pass < 3; pass++)
            for (uint32_t i = 0; i < n; i++) {
                uint32_t t = base + i * inner;
                cb_reserve_back(0, 1);
                uint32_t addr = get_write_ptr(0);
                noc_async_read_tile(t, &in, addr);
                noc_async_read_barrier();
                if (fill_rows || fill_cols) {
                    uint32_t rows, cols;
                    nn_tile_extent(t, ht, wt, h, w, &rows, &cols);
                    nn_tile_fill_outside(addr, fmt, fill_rows ? rows : 32, fill_cols ? cols : 32,
                                         0xff800000u);
                }
                cb_push_back(0, 1);
            }
    }
}
