/* Transposes each tile of circular buffer 0 into circular buffer 16 on the
 * compute engine (transpose_wh_tile), for a permute that swaps the two tile
 * dims (permute_tile_reader.c gives the tiles in the output's order).
 * Runtime args: first, count (tiles). */
#include "compute_kernel_api.h"

void kernel_main(void) {
    uint32_t count = get_arg_val(1);
    init_sfpu(0, 16);
    for (uint32_t t = 0; t < count; t++) {
        cb_wait_front(0, 1);
        tile_regs_acquire();
        transpose_wh_tile(0, 0, 0);
        tile_regs_commit();
        tile_regs_wait();
        cb_reserve_back(16, 1);
        pack_tile(0, 16);
        cb_push_back(16, 1);
        tile_regs_release();
        cb_pop_front(0, 1);
    }
}
