/* Scatter of whole rows into a tensor, in place: row i of the updates (a
 * tile tensor whose rows are every dim but the last, M of them) replaces row
 * r(i) of the output (one of the same width and element size, N rows, which
 * already holds the data). Without a dim, r(i) is index[i]; with dim D > 0,
 * an entry v in [-D, D) (made positive by adding D) names row v * scale +
 * offsets[i] (offsets 0 without them), and any other entry nothing. A row
 * outside [0, N) leaves the output as it is; the sums are checked before
 * they are made, so none wraps into range. The rows go in order, each
 * written before the next is read, so of several updates of one row the
 * last stays: one core, deterministic.
 *
 * Row r of a tensor whose matrices have h rows is row r % h of matrix r / h:
 * tile row (r / h) * ceil(h / 32) + r % h / 32, row r % h % 32 in it. In a
 * tile, columns 16c .. 16c + 15 of rows 16v .. 16v + 15 are face 2v + c,
 * row by row: a matrix row is, in each of its W / 32 tiles, two runs of 16
 * elements, one a face apart. Runtime args: M, N, the tiles of a row, the
 * element size (2 or 4 bytes), D, scale, whether there are offsets, the
 * output's and the updates' rows per matrix, the step between entries in
 * the index and the index's elements per page, then the output's, the
 * updates', the index's and the offsets' (when there are) accessor words.
 * Common args: the output's, the updates', the index's and the offsets'
 * addresses. The index is row-major 32-bit, entry i its element i * step;
 * the offsets row-major 32-bit [M], one page. Circular buffers (scratch): 0
 * a block of index entries, 1 a block of a row's runs, 2 a block of
 * offsets. */
#include "dataflow_api.h"

#define IDX_BLOCK 512 /* entries read at once: 2 KiB */
#define RUN_BLOCK 64  /* tiles of a row moved at once: 128 runs */

/* The row entry v (and its offset) names, or n when it names none. */
static uint32_t row_of(int32_t v, uint32_t off, uint32_t n, uint32_t dim, uint32_t scale,
                       uint32_t top) {
    if (!dim) return (uint32_t)v < n ? (uint32_t)v : n;
    if (v < -(int32_t)dim || v >= (int32_t)dim) return n;
    uint32_t p = (uint32_t)(v < 0 ? v + (int32_t)dim : v);
    if (p > top) return n; /* p * scale would pass n - 1 */
    uint32_t r = p * scale;
    return off < n - r ? r + off : n;
}

/* Where row r of a tensor with matrices of h rows (tile rows ht of them)
 * is: its tile row, and its offset in a tile of the face half it starts. */
static uint32_t tile_row(uint32_t r, uint32_t h, uint32_t ht) {
    return r / h * ht + r % h / 32;
}

static uint32_t row_offset(uint32_t r, uint32_t h, uint32_t face, uint32_t run) {
    uint32_t in = r % h % 32;
    return in / 16 * 2 * face + in % 16 * run;
}

void kernel_main(void) {
    const uint32_t m = get_arg_val(0), n = get_arg_val(1), wt = get_arg_val(2);
    const uint32_t esize = get_arg_val(3), run = 16 * esize, face = 256 * esize;
    const uint32_t dim = get_arg_val(4), scale = get_arg_val(5), has_offsets = get_arg_val(6);
    const uint32_t oh = get_arg_val(7), uh = get_arg_val(8);
    const uint32_t step = get_arg_val(9), per_page = get_arg_val(10);
    const uint32_t oht = (oh + 31) / 32, uht = (uh + 31) / 32;
    const uint32_t tile = 4 * face, top = n ? (n - 1) / scale : 0;
    /* Entries next to each other in one page come in one read. */
    const uint32_t packed = step == 1 && per_page >= m;
    nn_accessor out, upd, idx, offs;
    uint32_t arg = nn_accessor_init(&out, 11, get_common_arg_val(0), tile);
    arg = nn_accessor_init(&upd, arg, get_common_arg_val(1), tile);
    arg = nn_accessor_init(&idx, arg, get_common_arg_val(2), 4 * per_page);
    if (has_offsets) nn_accessor_init(&offs, arg, get_common_arg_val(3), 4 * m);
    cb_reserve_back(0, 1);
    cb_reserve_back(1, 1);
    cb_reserve_back(2, 1);
    volatile int32_t *entries = (volatile int32_t *)(uintptr_t)get_write_ptr(0);
    volatile uint32_t *offsets = (volatile uint32_t *)(uintptr_t)get_write_ptr(2);
    const uint32_t buf = get_write_ptr(1);
    for (uint32_t i0 = 0; i0 < m; i0 += IDX_BLOCK) {
        uint32_t count = m - i0 < IDX_BLOCK ? m - i0 : IDX_BLOCK;
        if (packed) {
            noc_async_read(nn_accessor_addr(&idx, 0, 4 * i0), (uint32_t)(uintptr_t)entries,
                           4 * count);
        } else {
            for (uint32_t k = 0; k < count; k++) {
                uint32_t e = (i0 + k) * step;
                noc_async_read(nn_accessor_addr(&idx, e / per_page, 4 * (e % per_page)),
                               (uint32_t)(uintptr_t)(entries + k), 4);
            }
        }
        if (has_offsets)
            noc_async_read(nn_accessor_addr(&offs, 0, 4 * i0), (uint32_t)(uintptr_t)offsets,
                           4 * count);
        noc_async_read_barrier();
        for (uint32_t k = 0; k < count; k++) {
            const uint32_t i = i0 + k;
            const uint32_t r = row_of(entries[k], has_offsets ? offsets[k] : 0, n, dim, scale, top);
            if (r >= n) continue;
            /* The rows' tile rows and places in their tiles. */
            const uint32_t from = row_offset(i, uh, face, run), to = row_offset(r, oh, face, run);
            const uint32_t src_row = tile_row(i, uh, uht) * wt, dst_row = tile_row(r, oh, oht) * wt;
            for (uint32_t c0 = 0; c0 < wt; c0 += RUN_BLOCK) {
                uint32_t tiles = wt - c0 < RUN_BLOCK ? wt - c0 : RUN_BLOCK;
                for (uint32_t c = 0; c < tiles; c++) {
                    uint32_t src = src_row + c0 + c, at = buf + 2 * c * run;
                    noc_async_read(nn_accessor_addr(&upd, src, from), at, run);
                    noc_async_read(nn_accessor_addr(&upd, src, from + face), at + run, run);
                }
                noc_async_read_barrier();
                for (uint32_t c = 0; c < tiles; c++) {
                    uint32_t dst = dst_row + c0 + c, at = buf + 2 * c * run;
                    noc_async_write(at, nn_accessor_addr(&out, dst, to), run);
                    noc_async_write(at + run, nn_accessor_addr(&out, dst, to + face), run);
                }
                /* Written before the buffer is read into again, and before
                 * a later update of the same row. */
                noc_async_write_barrier();
            }
        }
    }
}
