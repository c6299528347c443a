/* Weighted row gather, compute side (lmnn_gather_rows_weighted): each tap's
 * gathered rows (circular buffer 0, `group` pages) tilized into circular
 * buffer 3, then every output tile the sum over the taps of the tap's tile
 * times its weights broadcast along the rows (circular buffer 1, column 0),
 * added up in float32 dst, to circular buffer 16.
 * Runtime args: first unit, units, then as gather_weighted_reader.c (taps
 * at 7, group at 8). Needs fp32 dst accumulation. */
#include "compute_kernel_api.h"

void kernel_main(void) {
    uint32_t units = get_arg_val(1), taps = get_arg_val(7), group = get_arg_val(8);
    for (uint32_t u = 0; u < units; u++) {
        for (uint32_t t = 0; t < taps; t++) {
            cb_wait_front(0, group);
            cb_reserve_back(3, group);
            tilize_block(0, group, 3);
            cb_push_back(3, group);
            cb_pop_front(0, group);
        }
        cb_wait_front(3, taps * group);
        cb_wait_front(1, taps);
        tile_regs_acquire();
        for (uint32_t j = 0; j < group; j++)
            for (uint32_t t = 0; t < taps; t++)
                lm_binary_tiles_acc(LM_BINARY_MUL, LM_BCAST_COL, 3, 1, t * group + j, t, j, t > 0);
        tile_regs_commit();
        tile_regs_wait();
        cb_reserve_back(16, group);
        for (uint32_t j = 0; j < group; j++)
            pack_tile(j, 16);
        cb_push_back(16, group);
        tile_regs_release();
        cb_pop_front(3, taps * group);
        cb_pop_front(1, taps);
    }
}
