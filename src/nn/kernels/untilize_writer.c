/* Untilize, writer: the logical part of each unit's 32 rows, from circular
 * buffer 16, into the row-major tensor at common argument 1. Compile-time
 * and runtime args as tilize_reader.c, and runtime arg 7: the elements of a
 * row of the row-major tensor, `len`.
 *
 * len = W (the tile tensor's row), or a unit holding part of each row (rows
 * wider than a block; len is then a multiple of W, so the part never
 * crosses a page): a write per row. Otherwise the two tensors hold the same
 * elements in the same order with rows of another length, and a unit holds
 * whole rows: rows narrower than the unit's tiles
 * that never cross a page go a strided write per page, and the others, made
 * contiguous in L1, are one run of the flat element order, written a page
 * (or the part of one in the run) at a time -- a few writes where rows of W
 * would take 32. */
#include "dataflow_api.h"

/* Moves the unit's rows 1..rows-1 from `pitch` bytes apart to `bytes`
 * apart, in place (each goes down, so ascending order is safe). */
static void compact(uint32_t src, uint32_t rows, uint32_t pitch, uint32_t bytes) {
    for (uint32_t r = 1; r < rows; r++) {
        if (bytes % 4 == 0) {
            nn_copy_words(src + r * bytes, src + r * pitch, bytes / 4);
        } else {
            uint16_t *d = (uint16_t *)(uintptr_t)(src + r * bytes);
            const uint16_t *s = (const uint16_t *)(uintptr_t)(src + r * pitch);
            for (uint32_t i = 0; i < bytes / 2; i++)
                d[i] = s[i];
        }
    }
}

void kernel_main(void) {
    uint32_t first = get_arg_val(0), units = get_arg_val(1);
    uint32_t esize = get_compile_time_arg_val(2), h = get_arg_val(2);
    uint32_t w = get_arg_val(3), ht = get_arg_val(4);
    uint32_t wt = get_arg_val(5), block = get_arg_val(6), len = get_arg_val(7);
    /* Every unit moves `room` pages, however many it fills, so no unit
     * wraps around the end of a circular buffer (2 * room pages). */
    uint32_t room = block < wt ? block : wt;
    InterleavedAddrGenFast out = {.bank_base_address = get_common_arg_val(1),
                                  .page_size = len * esize,
                                  .is_dram = get_compile_time_arg_val(1)};
    for (uint32_t u = first; u < first + units; u++) {
        nn_row_block rb = nn_row_block_of(u, ht, wt, block);
        uint32_t col0 = rb.bk * block * 32, width = rb.tiles * 32;
        uint32_t valid = w - col0 < width ? w - col0 : width;
        uint32_t rows = h - rb.tr * 32 < 32 ? h - rb.tr * 32 : 32;
        cb_wait_front(16, room);
        uint32_t src = get_read_ptr(16);
        if (len == w || valid < w) {
            for (uint32_t r = 0; r < rows; r++) {
                uint32_t at = (rb.b * h + rb.tr * 32 + r) * w;
                noc_async_write(src + r * width * esize,
                                get_noc_addr_interleaved(at / len, &out, (at % len + col0) * esize),
                                valid * esize);
            }
        } else if (width != w && len % w == 0) {
            /* Rows narrower than the block but never across a page: the
             * rows bound for one page are one strided write, which beats
             * moving them together first. */
            for (uint32_t r = 0; r < rows;) {
                uint32_t at = (rb.b * h + rb.tr * 32 + r) * w, off = at % len;
                uint32_t n = (len - off) / w < rows - r ? (len - off) / w : rows - r;
                lm_noc_async_write_strided(src + r * width * esize, width * esize,
                                           get_noc_addr_interleaved(at / len, &out, off * esize),
                                           w * esize, w * esize, n);
                r += n;
            }
        } else {
            if (width != w) compact(src, rows, width * esize, w * esize);
            uint32_t at = (rb.b * h + rb.tr * 32) * w, left = rows * w;
            while (left) {
                uint32_t page = at / len, off = at % len;
                uint32_t n = len - off < left ? len - off : left;
                noc_async_write(src, get_noc_addr_interleaved(page, &out, off * esize), n * esize);
                src += n * esize;
                at += n;
                left -= n;
            }
        }
        noc_async_write_barrier();
        cb_pop_front(16, room);
    }
}
