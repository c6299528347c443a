/* Pooling, compute: each unit of conv_im2col_reader.c's POOL_FUSED mode
 * arrives once per tap (KH * KW row-major blocks in circular buffer 0); each
 * is tilized into circular buffer 1, then every tile of the unit is the max
 * (or, with runtime arg 26 set, the sum) of its taps, reduced in dst and
 * packed to circular buffer 16 for tilize_writer.c.
 * Runtime args as conv_im2col_reader.c; arg 26: 1 for the sum. */
#include "compute_kernel_api.h"

void kernel_main(void) {
    uint32_t first = get_arg_val(0), units = get_arg_val(1);
    uint32_t ht = get_arg_val(4), wt = get_arg_val(5);
    uint32_t block = get_arg_val(6);
    uint32_t taps = get_arg_val(12) * get_arg_val(13);
    bool sum = get_arg_val(26);
    uint32_t room = block < wt ? block : wt;
    for (uint32_t u = first; u < first + units; u++) {
        uint32_t tiles = nn_row_block_of(u, ht, wt, block).tiles;
        for (uint32_t t = 0; t < taps; t++) {
            cb_wait_front(0, room);
            cb_reserve_back(1, room);
            tilize_block(0, tiles, 1);
            cb_push_back(1, room);
            cb_pop_front(0, room);
        }
        cb_wait_front(1, taps * room);
        cb_reserve_back(16, room);
        for (uint32_t i = 0; i < tiles; i++) {
            tile_regs_acquire();
            copy_tile(1, i, 0);
            for (uint32_t t = 1; t < taps; t++) {
                copy_tile(1, t * room + i, 1);
                if (sum)
                    add_binary_tile(0, 1, 0);
                else
                    binary_max_tile(0, 1, 0);
            }
            tile_regs_commit();
            tile_regs_wait();
            pack_tile(0, 16);
            tile_regs_release();
        }
        cb_push_back(16, room);
        cb_pop_front(1, taps * room);
    }
}
