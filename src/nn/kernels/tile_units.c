/* Tilize's writer and untilize's reader: the tile side of a unit of row
 * tiles (see nn_row_block_of). Tilize (the default) writes each unit's tiles
 * from circular buffer 16 to the tile tensor at common argument 1; with
 * NN_UNITS_READ untilize reads them from the tile tensor at common argument 0
 * into circular buffer 0. Compile-time and runtime args as tilize_reader.c. */
#include "dataflow_api.h"

#ifdef NN_UNITS_READ
#define CB 0
#define TENSOR 0
#else
#define CB 16
#define TENSOR 1
#endif

void kernel_main(void) {
    uint32_t first = get_arg_val(0), units = get_arg_val(1);
    uint32_t ht = get_arg_val(4), wt = get_arg_val(5);
    uint32_t block = get_arg_val(6);
    /* Every unit moves `room` pages, however many it fills, so no unit
     * wraps around the end of a circular buffer (2 * room pages). */
    uint32_t room = block < wt ? block : wt;
    uint32_t tile = get_tile_size(CB);
    InterleavedAddrGenFast t = {.bank_base_address = get_common_arg_val(TENSOR),
                                .page_size = tile,
                                .is_dram = get_compile_time_arg_val(TENSOR)};
    for (uint32_t u = first; u < first + units; u++) {
        nn_row_block rb = nn_row_block_of(u, ht, wt, block);
#ifdef NN_UNITS_READ
        cb_reserve_back(CB, room);
        uint32_t l1 = get_write_ptr(CB);
        for (uint32_t i = 0; i < rb.tiles; i++)
            noc_async_read_tile(rb.first_tile + i, &t, l1 + i * tile);
        noc_async_read_barrier();
        cb_push_back(CB, room);
#else
        cb_wait_front(CB, room);
        uint32_t l1 = get_read_ptr(CB);
        for (uint32_t i = 0; i < rb.tiles; i++)
            noc_async_write_tile(rb.first_tile + i, &t, l1 + i * tile);
        noc_async_write_barrier();
        cb_pop_front(CB, room);
#endif
    }
}
