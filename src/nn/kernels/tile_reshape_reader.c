/* Reads the tiles of a reshape that changes the last dim, or of a slice of
 * the last two dims, into circular buffer 16, straight from the input's
 * tiles. Reshape: [..., H_in, W_in] to [..., H_out, W_out], the elements
 * in the same row-major order. Slice: each [H_in, W_in] matrix cut to its
 * [H_out, W_out] window from row R and column C. Each output face row (16
 * columns of a row, or what the row has of them) is a run of elements
 * consecutive in the input too, read in pieces that stay inside one input
 * face row; a small tensor (a decoder's heads split and joined, a rotary
 * embedding's halves) moves in one launch where row-major stand-ins would
 * take an untilize, a copy and a tilize. The tile is zeroed first, so its
 * padding is zero.
 *
 * Row r of a tensor whose matrices have h rows is row r % h of matrix r / h:
 * tile row (r / h) * ceil(h / 32) + r % h / 32. In a tile, columns 16c ..
 * 16c + 15 of rows 16v .. 16v + 15 are face 2v + c, row by row.
 * Runtime args: first, count (output tiles), H_in, W_in, H_out, W_out, the
 * element size (2 or 4 bytes: float32, bfloat16, int32, uint32 tiles),
 * whether it is a slice, R, C, then the input's accessor words. Common arg
 * 0: the input's address. */
#include "dataflow_api.h"

static uint32_t min_u32(uint32_t a, uint32_t b) {
    return a < b ? a : b;
}

/* The byte offset of (row, col) in its tile. */
static uint32_t in_tile(uint32_t row, uint32_t col, uint32_t face, uint32_t esize) {
    return (row % 32 / 16 * 2 + col % 32 / 16) * face + (row % 16 * 16 + col % 16) * esize;
}

void kernel_main(void) {
    const uint32_t first = get_arg_val(0), count = get_arg_val(1);
    const uint32_t hin = get_arg_val(2), win = get_arg_val(3);
    const uint32_t hout = get_arg_val(4), wout = get_arg_val(5), esize = get_arg_val(6);
    const uint32_t slice = get_arg_val(7), row0 = get_arg_val(8), col0 = get_arg_val(9);
    const uint32_t face = 256 * esize, tile = 4 * face;
    const uint32_t htin = (hin + 31) / 32, wtin = (win + 31) / 32;
    const uint32_t htout = (hout + 31) / 32, wtout = (wout + 31) / 32;
    nn_accessor in;
    nn_accessor_init(&in, 10, get_common_arg_val(0), tile);
    for (uint32_t t = first; t < first + count; t++) {
        const uint32_t tc = t % wtout, tr = t / wtout % htout, b = t / wtout / htout;
        const uint32_t r0 = tr * 32, rows = min_u32(hout - r0, 32);
        const uint32_t c0 = tc * 32, cols = min_u32(wout - c0, 32);
        cb_reserve_back(16, 1);
        const uint32_t dst = get_write_ptr(16);
        nn_zero(dst, tile);
        for (uint32_t d = 0; d < rows; d++) {
            /* Row d's columns c0 .. c0 + cols: in a reshape the flat
             * elements from f on (below 2^32: the host checks), in a slice
             * the window's row of matrix b. */
            uint32_t f = ((b * hout) + r0 + d) * wout + c0;
            for (uint32_t c = 0; c < cols;) {
                uint32_t mat = b, row = r0 + d + row0, ci = c0 + c + col0;
                if (!slice) {
                    mat = f / win / hin;
                    row = f / win % hin;
                    ci = f % win;
                }
                /* A piece inside one input face row and one output face row. */
                uint32_t n =
                    min_u32(min_u32(cols - c, 16 - c % 16), min_u32(16 - ci % 16, win - ci));
                uint32_t src = (mat * htin + row / 32) * wtin + ci / 32;
                noc_async_read(nn_accessor_addr(&in, src, in_tile(row, ci, face, esize)),
                               dst + in_tile(d, c, face, esize), n * esize);
                c += n;
                f += n;
            }
        }
        noc_async_read_barrier();
        cb_push_back(16, 1);
    }
}
