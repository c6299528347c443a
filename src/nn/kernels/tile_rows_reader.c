/* Reads the tiles of a reshape that keeps the last dim into circular buffer
 * 16: [..., H_in, W] to [..., H_out, W], the same rows in the same order,
 * regrouped into matrices of another height (e.g. [1, 14, 14, 384] and
 * [196, 384]). Each output tile is made of runs of consecutive input rows:
 * in a tile, columns 16h .. 16h + 15 of rows 16v .. 16v + 15 are face 2v + h,
 * row by row, so a run inside one half of the input tile and one half of the
 * output tile is one read per column half. Rows past the output's last are
 * zeroed; the padding columns come as the input has them (zero).
 * Runtime args: first, count (output tiles), H_in, H_out, W in tiles, the
 * element size (2 or 4 bytes: float32, bfloat16, int32, uint32 tiles), then
 * the input's accessor words. Common arg 0: the input's address. */
#include "dataflow_api.h"

static uint32_t min_u32(uint32_t a, uint32_t b) {
    return a < b ? a : b;
}

void kernel_main(void) {
    uint32_t first = get_arg_val(0), count = get_arg_val(1);
    uint32_t hin = get_arg_val(2), hout = get_arg_val(3), wt = get_arg_val(4);
    uint32_t esize = get_arg_val(5), tile = get_tile_size(16);
    nn_accessor in;
    nn_accessor_init(&in, 6, get_common_arg_val(0), tile);
    const uint32_t htin = (hin + 31) / 32, htout = (hout + 31) / 32;
    const uint32_t face = 256 * esize, row = 16 * esize;
    for (uint32_t t = first; t < first + count; t++) {
        uint32_t tc = t % wt, tr = t / wt % htout, b = t / wt / htout;
        uint32_t r0 = tr * 32, rows = min_u32(hout - r0, 32);
        uint32_t i = b * hout + r0; /* the first row's index over all matrices */
        cb_reserve_back(16, 1);
        uint32_t dst = get_write_ptr(16);
        for (uint32_t d = 0; d < rows;) {
            uint32_t ib = i / hin, ir = i % hin;
            uint32_t n = min_u32(min_u32(rows - d, hin - ir), min_u32(16 - ir % 16, 16 - d % 16));
            uint32_t src = (ib * htin + ir / 32) * wt + tc;
            uint32_t from = ir % 32 / 16 * 2 * face + ir % 16 * row;
            uint32_t to = dst + d / 16 * 2 * face + d % 16 * row;
            noc_async_read(nn_accessor_addr(&in, src, from), to, n * row);
            noc_async_read(nn_accessor_addr(&in, src, from + face), to + face, n * row);
            d += n;
            i += n;
        }
        /* The rows past the last: their part of each face. */
        for (uint32_t v = rows < 16 ? 0 : 1; rows < 32 && v < 2; v++) {
            uint32_t skip = rows > 16 * v ? rows - 16 * v : 0;
            for (uint32_t h = 0; h < 2; h++)
                nn_zero(dst + (2 * v + h) * face + skip * row, (16 - skip) * row);
        }
        noc_async_read_barrier();
        cb_push_back(16, 1);
    }
}
