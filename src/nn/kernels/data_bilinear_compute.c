/* Bilinear upsampling, compute side, as PyTorch computes it (float32):
 *   t0 = w0 * x[h0][w0] + w1 * x[h0][w1]
 *   t1 = w0 * x[h1][w0] + w1 * x[h1][w1]
 *   out = h0 * t0 + h1 * t1
 * with the column weights as row-broadcast tiles and the row weights as
 * column-broadcast tiles (data_upsample.c). Circular buffers: 0 the four
 * gathered tiles, 1 the four weight tiles, 2 t0 and t1 (float32), 16 out.
 * Runtime args: first (unused), tiles. Needs fp32 dst accumulation. */
#include "compute_kernel_api.h"

void kernel_main(void) {
    uint32_t count = get_arg_val(1);
    for (uint32_t t = 0; t < count; t++) {
        cb_wait_front(0, 4);
        cb_wait_front(1, 4);
        tile_regs_acquire();
        lm_binary_tiles_acc(LM_BINARY_MUL, LM_BCAST_ROW, 0, 1, 0, 0, 0, 0);
        lm_binary_tiles_acc(LM_BINARY_MUL, LM_BCAST_ROW, 0, 1, 1, 1, 0, 1);
        lm_binary_tiles_acc(LM_BINARY_MUL, LM_BCAST_ROW, 0, 1, 2, 0, 1, 0);
        lm_binary_tiles_acc(LM_BINARY_MUL, LM_BCAST_ROW, 0, 1, 3, 1, 1, 1);
        tile_regs_commit();
        tile_regs_wait();
        cb_reserve_back(2, 2);
        pack_tile(0, 2);
        pack_tile(1, 2);
        cb_push_back(2, 2);
        tile_regs_release();
        cb_pop_front(0, 4);
        cb_wait_front(2, 2);
        tile_regs_acquire();
        lm_binary_tiles_acc(LM_BINARY_MUL, LM_BCAST_COL, 2, 1, 0, 2, 0, 0);
        lm_binary_tiles_acc(LM_BINARY_MUL, LM_BCAST_COL, 2, 1, 1, 3, 0, 1);
        tile_regs_commit();
        tile_regs_wait();
        cb_reserve_back(16, 1);
        pack_tile(0, 16);
        cb_push_back(16, 1);
        tile_regs_release();
        cb_pop_front(2, 2);
        cb_pop_front(1, 4);
    }
}
