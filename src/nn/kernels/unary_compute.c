/* out = f(in) tile by tile: circular buffer 0 -> dst 0 -> NN_UNARY_CHAIN
 * (SFPU calls on dst 0, a define) -> circular buffer 16. The chain reads its
 * parameters from nn_param[0 .. NN_UNARY_PARAMS) (runtime args 2..4), so
 * one compiled kernel serves every parameter value (nn_unary_chain); the
 * public unary ops share one kernel whose chain is a switch on nn_op. A
 * chain may read nn_tile, the tile's place in the tensor (random numbers
 * seed from it, so they do not depend on the split across cores).
 * Runtime args: first (tile), count (tiles), nn_param[0..2], nn_op. */
#include "compute_kernel_api.h"

void kernel_main(void) {
    uint32_t first = get_arg_val(0), count = get_arg_val(1);
    uint32_t nn_param[3] = {get_arg_val(2), get_arg_val(3), get_arg_val(4)};
    uint32_t nn_op = get_arg_val(5);
    (void)nn_param;
    (void)nn_op;
    init_sfpu(0, 16);
    for (uint32_t t = 0; t < count; t++) {
        uint32_t nn_tile = first + t;
        (void)nn_tile;
        cb_wait_front(0, 1);
        tile_regs_acquire();
        copy_tile(0, 0, 0);
        NN_UNARY_CHAIN;
        tile_regs_commit();
        tile_regs_wait();
        cb_reserve_back(16, 1);
        pack_tile(0, 16);
        cb_push_back(16, 1);
        tile_regs_release();
        cb_pop_front(0, 1);
    }
}
