/* Weighted row gather, reader side (lmnn_gather_rows_weighted): for each
 * unit, a block of 32 output rows by `group` column tiles, and for each of
 * the T taps, the 32 source rows the tap's indices name, `group` tiles wide,
 * as row-major pages of circular buffer 0 (one NoC read a row), then the
 * tap's 32 weights in column 0 of a float32 tile of circular buffer 1 (the
 * column data_bilinear_compute.c's kind of broadcast reads). A row past the
 * output, or whose index lies outside [0, rows) after a negative one is
 * counted from the end, is zeros; so is each row's part past the last
 * column.
 * Common args: a (rows, row-major), index and weights ([T, G] row-major,
 * int32 or uint32, and float32), out. Runtime args: first unit, units,
 * flags (1 a in DRAM, 2 index in DRAM, 4 weights in DRAM, 8 uint32 index),
 * esize, rows, columns, G, T, group, column groups per row block. */
#include "dataflow_api.h"

void kernel_main(void) {
    uint32_t first = get_arg_val(0), units = get_arg_val(1), flags = get_arg_val(2);
    uint32_t esize = get_arg_val(3), rows = get_arg_val(4), cols = get_arg_val(5);
    uint32_t g_total = get_arg_val(6), taps = get_arg_val(7), group = get_arg_val(8);
    uint32_t groups = get_arg_val(9);
    InterleavedAddrGenFast a = {get_common_arg_val(0), cols * esize, (flags & 1) != 0};
    InterleavedAddrGenFast idx = {get_common_arg_val(1), g_total * 4, (flags & 2) != 0};
    InterleavedAddrGenFast wts = {get_common_arg_val(2), g_total * 4, (flags & 4) != 0};
    uint32_t row_bytes = group * 32 * esize;
    cb_reserve_back(2, 1); /* scratch: a tap's indices, then its weights */
    uint32_t scratch = get_write_ptr(2);
    volatile int32_t *ibuf = (volatile int32_t *)(uintptr_t)scratch;
    volatile uint32_t *wbuf = (volatile uint32_t *)(uintptr_t)(scratch + 128);
    for (uint32_t u = first; u < first + units; u++) {
        uint32_t g0 = u / groups * 32, c0 = u % groups * group * 32;
        uint32_t n = g_total - g0 < 32 ? g_total - g0 : 32;
        uint32_t width = cols - c0 < group * 32 ? cols - c0 : group * 32;
        for (uint32_t t = 0; t < taps; t++) {
            noc_async_read(get_noc_addr_interleaved(t, &idx, g0 * 4), (uint32_t)(uintptr_t)ibuf,
                           n * 4);
            noc_async_read(get_noc_addr_interleaved(t, &wts, g0 * 4), (uint32_t)(uintptr_t)wbuf,
                           n * 4);
            noc_async_read_barrier();
            cb_reserve_back(0, group);
            uint32_t block = get_write_ptr(0);
            for (uint32_t r = 0; r < 32; r++) {
                uint32_t dst = block + r * row_bytes;
                uint32_t s = r < n ? (uint32_t)ibuf[r] : rows;
                if (!(flags & 8) && (int32_t)s < 0) s += rows; /* mod 2^32: below -rows stays out */
                if (s < rows)
                    noc_async_read(get_noc_addr_interleaved(s, &a, c0 * esize), dst, width * esize);
                else
                    nn_zero(dst, width * esize);
                if (width < group * 32) nn_zero(dst + width * esize, row_bytes - width * esize);
            }
            /* Column 0 of the weight tile: rows 0-15 in face 0, 16-31 in
             * face 2 (the rest of the tile is never read). */
            cb_reserve_back(1, 1);
            volatile uint32_t *wt = (volatile uint32_t *)(uintptr_t)get_write_ptr(1);
            for (uint32_t r = 0; r < 32; r++)
                wt[(r >> 4) * 512 + (r & 15) * 16] = r < n ? wbuf[r] : 0;
            noc_async_read_barrier();
            cb_push_back(0, group);
            cb_push_back(1, 1);
        }
    }
}
