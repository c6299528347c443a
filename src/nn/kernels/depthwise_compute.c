/* Depthwise convolution, compute: each unit of conv_im2col_reader.c's
 * DEPTHWISE mode arrives once per tap (a row-major block in circular buffer
 * 0, then the unit's weight tiles of the tap in circular buffer 4, row 0 of
 * each holding the tap's weight per channel). Each block is tilized into
 * circular buffer 1 and multiplied by its weights broadcast down the rows,
 * each product added in dst to the sum so far (the binary operation's
 * accumulate form); the sums go round circular buffer 5 between taps, in
 * tap order, in float32 tiles (dst cannot hold a unit's tiles across them:
 * the tilize needs it released), the last packed to circular buffer 16 for
 * tile_units.c. No product is ever stored.
 * Runtime args as conv_im2col_reader.c. */
#include "compute_kernel_api.h"

#define CB_ROWS 0
#define CB_TAP 1
#define CB_W 4
#define CB_ACC 5
#define CB_OUT 16
/* Tiles dst holds in float32. */
#define DW_GROUP 8

void kernel_main(void) {
    uint32_t first = get_arg_val(0), units = get_arg_val(1);
    uint32_t ht = get_arg_val(4), wt = get_arg_val(5);
    uint32_t block = get_arg_val(6);
    uint32_t taps = get_arg_val(12) * get_arg_val(13);
    uint32_t room = block < wt ? block : wt;
    for (uint32_t u = first; u < first + units; u++) {
        uint32_t tiles = nn_row_block_of(u, ht, wt, block).tiles;
        for (uint32_t t = 0; t < taps; t++) {
            cb_wait_front(CB_ROWS, room);
            cb_reserve_back(CB_TAP, room);
            tilize_block(CB_ROWS, tiles, CB_TAP);
            cb_push_back(CB_TAP, room);
            cb_pop_front(CB_ROWS, room);
            cb_wait_front(CB_TAP, room);
            cb_wait_front(CB_W, room);
            if (t) cb_wait_front(CB_ACC, room);
            uint32_t to = t + 1 == taps ? CB_OUT : CB_ACC;
            cb_reserve_back(to, room);
            /* A group of tiles at a time in dst (float32: 8): the sum so
             * far copied in, the tap's product added to it. */
            for (uint32_t i0 = 0; i0 < tiles; i0 += DW_GROUP) {
                uint32_t n = tiles - i0 < DW_GROUP ? tiles - i0 : DW_GROUP;
                tile_regs_acquire();
                for (uint32_t j = 0; j < n; j++) {
                    if (t) copy_tile(CB_ACC, i0 + j, j);
                    lm_binary_tiles_acc(LM_BINARY_MUL, LM_BCAST_ROW, CB_TAP, CB_W, i0 + j, i0 + j,
                                        j, t != 0);
                }
                tile_regs_commit();
                tile_regs_wait();
                for (uint32_t j = 0; j < n; j++)
                    pack_tile(j, to);
                tile_regs_release();
            }
            cb_push_back(to, room);
            cb_pop_front(CB_TAP, room);
            cb_pop_front(CB_W, room);
            if (t) cb_pop_front(CB_ACC, room);
        }
    }
}
