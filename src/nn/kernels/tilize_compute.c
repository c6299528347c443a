/* Tilize or untilize (NN_UNTILIZE defined) each unit's block: circular buffer
 * 0 -> 16. Runtime args as tilize_reader.c (no compile-time args). */
#include "compute_kernel_api.h"

void kernel_main(void) {
    uint32_t first = get_arg_val(0), units = get_arg_val(1);
    uint32_t ht = get_arg_val(4), wt = get_arg_val(5);
    uint32_t block = get_arg_val(6);
    /* Every unit moves `room` pages, however many it fills, so no unit
     * wraps around the end of a circular buffer (2 * room pages). */
    uint32_t room = block < wt ? block : wt;
    for (uint32_t u = first; u < first + units; u++) {
        uint32_t tiles = nn_row_block_of(u, ht, wt, block).tiles;
        cb_wait_front(0, room);
        cb_reserve_back(16, room);
#ifdef NN_UNTILIZE
        untilize_block(0, tiles, 16);
#else
        tilize_block(0, tiles, 16);
#endif
        cb_push_back(16, room);
        cb_pop_front(0, room);
    }
}
