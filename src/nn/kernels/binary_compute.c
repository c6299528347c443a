/* One output tile per input tile set: the front tiles of circular buffers
 * 0 .. n_in - 1 -> either one FPU call (fpu_op 1 add, 2 sub, 3 mul of
 * operands cb fpu_a and fpu_b, the second broadcast as fpu_bcast: 0 none,
 * 1 rows, 2 columns, 3 scalar) or each input i loaded into dst i (load[i]
 * 0: a copy, else a broadcast expanded as below) -> NN_BINARY_MATH (a
 * define: the dst-to-dst calls that leave the result in dst 0, fused
 * activation included) -> circular buffer 16. The loads are runtime args,
 * so the broadcast pattern compiles no new kernel.
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
 * Compile-time args: n_in. Runtime args: first (unused), count, scalar bits,
 * nn_param[0..2], fpu_op, fpu_bcast, fpu_a, fpu_b, load[0..2], neg_zero,
 * has_scalar (fill dst n_in with the scalar), nn_bop (the dst-to-dst op),
 * nn_op (the fused activation) (nn_binary.c's LOAD_*). NN_BINARY_MATH is
 * the same for every call (switches on nn_bop and nn_op), so every binary
 * op compiles one kernel per operand count. */
#include "compute_kernel_api.h"

void kernel_main(void) {
    uint32_t count = get_arg_val(1), nn_scalar = get_arg_val(2);
    uint32_t n_in = get_compile_time_arg_val(0);
    uint32_t nn_param[3] = {get_arg_val(3), get_arg_val(4), get_arg_val(5)};
    (void)nn_scalar;
    (void)nn_param;
    /* The codes are the engine's less its base (no tables: kernel code
     * here keeps its data on the stack). */
    _Static_assert(LM_BINARY_ADD == 1 && LM_BINARY_SUB == 2 && LM_BINARY_MUL == 3, "op codes");
    _Static_assert(LM_BCAST_ROW == LM_BCAST_NONE + 1 && LM_BCAST_COL == LM_BCAST_NONE + 2 &&
                       LM_BCAST_SCALAR == LM_BCAST_NONE + 3,
                   "broadcast codes");
    uint32_t fpu_op = get_arg_val(6), fpu_bcast = LM_BCAST_NONE + get_arg_val(7);
    uint32_t fpu_a = get_arg_val(8), fpu_b = get_arg_val(9);
    uint32_t load[3] = {LM_BCAST_NONE + get_arg_val(10), LM_BCAST_NONE + get_arg_val(11),
                        LM_BCAST_NONE + get_arg_val(12)};
    uint32_t has_scalar = get_arg_val(14), nn_bop = get_arg_val(15), nn_op = get_arg_val(16);
    (void)nn_bop;
    (void)nn_op;
    if (get_arg_val(13)) {
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
        if (fpu_op) {
            lm_binary_tiles(fpu_op, fpu_bcast, fpu_a, fpu_b, 0, 0, 0);
        } else {
            for (uint32_t i = 0; i < n_in; i++) {
                if (load[i] == LM_BCAST_NONE)
                    copy_tile(i, 0, i);
                else
                    lm_binary_tiles(LM_BINARY_ADD, load[i], 8, i, 0, 0, i);
            }
        }
        if (has_scalar) fill_tile_bitcast(n_in, nn_scalar);
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
