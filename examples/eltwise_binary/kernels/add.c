/* out = a + b, tile by tile, from circular buffers 0 and 1 into 16.
 * Runtime args: tiles. */
#include "compute_kernel_api.h"

void kernel_main(void) {
    uint32_t tiles = get_arg_val(0);
    binary_op_init_common(0, 1, 16);
    add_tiles_init(0, 1);
    for (uint32_t t = 0; t < tiles; t++) {
        cb_wait_front(0, 1);
        cb_wait_front(1, 1);
        tile_regs_acquire();
        add_tiles(0, 1, 0, 0, 0);
        tile_regs_commit();
        tile_regs_wait();
        cb_reserve_back(16, 1);
        pack_tile(0, 16);
        cb_push_back(16, 1);
        tile_regs_release();
        cb_pop_front(0, 1);
        cb_pop_front(1, 1);
    }
}
