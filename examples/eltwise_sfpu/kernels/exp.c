/* out = exp(a), tile by tile, from circular buffer 0 into 16.
 * Runtime args: tiles. */
#include "compute_kernel_api.h"

void kernel_main(void) {
    uint32_t tiles = get_arg_val(0);
    init_sfpu(0, 16);
    copy_tile_init(0);
    exp_tile_init();
    for (uint32_t t = 0; t < tiles; t++) {
        cb_wait_front(0, 1);
        tile_regs_acquire();
        copy_tile(0, 0, 0);
        exp_tile(0);
        tile_regs_commit();
        tile_regs_wait();
        cb_reserve_back(16, 1);
        pack_tile(0, 16);
        cb_push_back(16, 1);
        tile_regs_release();
        cb_pop_front(0, 1);
    }
}
