/* One output tile per input tile set: the front tiles of circular buffers
 * 0 .. n_in - 1 -> NN_BINARY_MATH (a define: the calls that leave the result
 * in dst 0, fused activation included) -> circular buffer 16.
 *
 * NN_BINARY_MATH may use `nn_scalar` (runtime arg 2, float32 bits: the scalar
 * operand of the scalar forms) and circular buffer 8, which holds a tile of
 * -0.0 when neg_zero is set: add_tiles_bcast_*(8, i, ...) expands input i's
 * broadcast row, column or scalar into a whole dst tile exactly (-0 + x is x
 * for every x, signed zeros included), for the ops that only exist dst to dst.
 *
 * A fused activation's chain reads its parameters from nn_param[0..2]
 * (runtime args 3..5, nn_unary_chain).
 *
 * Compile-time args: n_in, neg_zero. Runtime args: first (unused), count,
 * scalar bits, nn_param[0..2]. */
#include "compute_kernel_api.h"

void kernel_main(void) {
    uint32_t count = get_arg_val(1), nn_scalar = get_arg_val(2);
    uint32_t n_in = get_compile_time_arg_val(0);
    uint32_t nn_param[3] = {get_arg_val(3), get_arg_val(4), get_arg_val(5)};
    (void)nn_scalar;
    (void)nn_param;
    if (get_compile_time_arg_val(1)) {
        cb_reserve_back(8, 1);
        tile_regs_acquire();
        fill_tile_bitcast(0, 0x80000000u);
        tile_regs_commit();
        tile_regs_wait();
        pack_tile(0, 8);
        tile_regs_release();
        cb_push_back(8, 1);
        cb_wait_front(8, 1); /* kept to the end */
    }
    for (uint32_t t = 0; t < count; t++) {
        for (uint32_t i = 0; i < n_in; i++)
            cb_wait_front(i, 1);
        tile_regs_acquire();
        NN_BINARY_MATH;
        tile_regs_commit();
        tile_regs_wait();
        cb_reserve_back(16, 1);
        pack_tile(0, 16);
        cb_push_back(16, 1);
        tile_regs_release();
        for (uint32_t i = 0; i < n_in; i++)
            cb_pop_front(i, 1);
    }
}
