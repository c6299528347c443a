/* Untilize, writer: the logical part of each unit's 32 rows, from circular
 * buffer 16, into the row-major tensor at common argument 1. Compile-time
 * and runtime args as tilize_reader.c, and runtime arg 7: pages per row
 * (split > 1: each row is `split` rows of the tensor, W / split wide, and a
 * unit holds whole rows). */
#include "dataflow_api.h"

void kernel_main(void) {
    uint32_t first = get_arg_val(0), units = get_arg_val(1);
    uint32_t esize = get_compile_time_arg_val(2), h = get_arg_val(2);
    uint32_t w = get_arg_val(3), ht = get_arg_val(4);
    uint32_t wt = get_arg_val(5), block = get_arg_val(6), split = get_arg_val(7);
    /* Every unit moves `room` pages, however many it fills, so no unit
     * wraps around the end of a circular buffer (2 * room pages). */
    uint32_t room = block < wt ? block : wt;
    uint32_t page = w / split * esize;
    InterleavedAddrGenFast out = {.bank_base_address = get_common_arg_val(1),
                                  .page_size = page,
                                  .is_dram = get_compile_time_arg_val(1)};
    for (uint32_t u = first; u < first + units; u++) {
        nn_row_block rb = nn_row_block_of(u, ht, wt, block);
        uint32_t col0 = rb.bk * block * 32, width = rb.tiles * 32;
        uint32_t valid = w - col0 < width ? w - col0 : width;
        cb_wait_front(16, room);
        uint32_t src = get_read_ptr(16);
        for (uint32_t r = 0; r < 32 && rb.tr * 32 + r < h; r++) {
            uint32_t row = rb.b * h + rb.tr * 32 + r, at = src + r * width * esize;
            if (split == 1) {
                noc_async_write(at, get_noc_addr_interleaved(row, &out, col0 * esize),
                                valid * esize);
                continue;
            }
            for (uint32_t s = 0; s < split; s++, at += page)
                noc_async_write(at, get_noc_addr_interleaved(row * split + s, &out, 0), page);
        }
        noc_async_write_barrier();
        cb_pop_front(16, room);
    }
}
