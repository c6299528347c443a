/* Untilize, reader: each unit's tiles of the tile tensor at common argument 0
 * into circular buffer 0. Compile-time args as tilize_reader.c (esize is the
 * row-major side's). Runtime args: first unit, units. */
#include "dataflow_api.h"

void kernel_main(void) {
    uint32_t first = get_arg_val(0), units = get_arg_val(1);
    uint32_t ht = get_compile_time_arg_val(5), wt = get_compile_time_arg_val(6);
    uint32_t block = get_compile_time_arg_val(7);
    /* Every unit moves `room` pages, however many it fills, so no unit
     * wraps around the end of a circular buffer (2 * room pages). */
    uint32_t room = block < wt ? block : wt;
    uint32_t tile = get_tile_size(0);
    InterleavedAddrGenFast in = {.bank_base_address = get_common_arg_val(0),
                                 .page_size = tile,
                                 .is_dram = get_compile_time_arg_val(0)};
    for (uint32_t u = first; u < first + units; u++) {
        nn_row_block rb = nn_row_block_of(u, ht, wt, block);
        cb_reserve_back(0, room);
        uint32_t dst = get_write_ptr(0);
        for (uint32_t i = 0; i < rb.tiles; i++)
            noc_async_read_tile(rb.first_tile + i, &in, dst + i * tile);
        noc_async_read_barrier();
        cb_push_back(0, room);
    }
}
