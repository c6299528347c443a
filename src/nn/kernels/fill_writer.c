/* Fills the tensor at common argument 0 with one value: pages [first, first
 * + count) of a tile tensor (zero padding at the edges) or of a row-major one
 * (a page is a row). Circular buffer 16 is scratch for the page image.
 * Compile-time args: is_dram, tile (1) or row-major (0), format (tiles) or
 * element size (rows). Runtime args: first, count, value bits, ht, wt, h, w. */
#include "dataflow_api.h"

static void fill_row(uint32_t addr, uint32_t esize, uint32_t n, uint32_t bits) {
    for (uint32_t i = 0; i < n; i++) {
        if (esize == 4)
            *(volatile uint32_t *)(uintptr_t)(addr + 4 * i) = bits;
        else if (esize == 2)
            *(volatile uint16_t *)(uintptr_t)(addr + 2 * i) = (uint16_t)bits;
        else
            *(volatile uint8_t *)(uintptr_t)(addr + i) = (uint8_t)bits;
    }
}

void kernel_main(void) {
    uint32_t first = get_arg_val(0), count = get_arg_val(1);
    uint32_t tile = get_compile_time_arg_val(1), fmt = get_compile_time_arg_val(2);
    uint32_t bits = get_arg_val(2), ht = get_arg_val(3);
    uint32_t wt = get_arg_val(4), h = get_arg_val(5);
    uint32_t w = get_arg_val(6);
    uint32_t page = tile ? get_tile_size(16) : w * fmt;
    InterleavedAddrGenFast out = {.bank_base_address = get_common_arg_val(0),
                                  .page_size = page,
                                  .is_dram = get_compile_time_arg_val(0)};
    cb_reserve_back(16, 1);
    uint32_t buf = get_write_ptr(16);
    uint32_t have_rows = 0, have_cols = 0; /* the extent the image holds now */
    if (!tile) fill_row(buf, fmt, w, bits);
    for (uint32_t p = first; p < first + count; p++) {
        if (tile) {
            uint32_t rows, cols;
            nn_tile_extent(p, ht, wt, h, w, &rows, &cols);
            if (rows != have_rows || cols != have_cols) {
                for (uint32_t e = 0; e < 1024; e++)
                    nn_tile_store(buf, fmt, e, bits);
                nn_tile_fill_outside(buf, fmt, rows, cols, 0);
                have_rows = rows;
                have_cols = cols;
            }
        }
        noc_async_write_page(p, &out, buf);
        noc_async_write_barrier();
    }
}
