/* A recurrent cell's math on one state tile at a time (lmnn_rnn.h): the
 * gates' tiles (circular buffers 0 and 1, gate k at index k) and the state's
 * tile (circular buffer 2) -> h' into circular buffer 16 and, for an LSTM,
 * c' into 17. dst is float32; every value stays there until the pack.
 *
 * Compile-time args: cell (0 LSTM, 1 GRU). Runtime args: first (unused),
 * count. */
#include "compute_kernel_api.h"

/* dst t = dst s, bit for bit (-0 + x is x for every x, signed zeros too). */
static void copy_dst(uint32_t s, uint32_t t) {
    fill_tile_bitcast(t, 0x80000000u);
    add_binary_tile(s, t, t);
}

void kernel_main(void) {
    uint32_t count = get_arg_val(1), lstm = get_compile_time_arg_val(0) == 0;
    uint32_t gates = lstm ? 4 : 3;
    for (uint32_t t = 0; t < count; t++) {
        cb_wait_front(0, gates);
        cb_wait_front(1, gates);
        cb_wait_front(2, 1);
        tile_regs_acquire();
        if (lstm) {
            /* dst 0..3: i, o, f, g; dst 4: c; c' in dst 0, h' in dst 1. */
            for (uint32_t k = 0; k < 4; k++)
                add_tiles(0, 1, k, k, k);
            sigmoid_tile(0);
            sigmoid_tile(1);
            sigmoid_tile(2);
            tanh_tile(3);
            copy_tile(2, 0, 4);
            mul_binary_tile(2, 4, 2);
            mul_binary_tile(0, 3, 0);
            add_binary_tile(0, 2, 0);
            copy_dst(0, 5);
            tanh_tile(5);
            mul_binary_tile(1, 5, 1);
        } else {
            /* dst 0: z, 1: r, 2: n, 3: the input's n part, 4: h, then h'. */
            add_tiles(0, 1, 0, 0, 0);
            sigmoid_tile(0);
            add_tiles(0, 1, 1, 1, 1);
            sigmoid_tile(1);
            copy_tile(1, 2, 2);
            mul_binary_tile(1, 2, 2);
            copy_tile(0, 2, 3);
            add_binary_tile(3, 2, 2);
            tanh_tile(2);
            copy_tile(2, 0, 4);
            sub_binary_tile(4, 2, 4);
            mul_binary_tile(0, 4, 4);
            add_binary_tile(2, 4, 4);
        }
        tile_regs_commit();
        tile_regs_wait();
        cb_reserve_back(16, 1);
        pack_tile(lstm ? 1 : 4, 16);
        cb_push_back(16, 1);
        if (lstm) {
            cb_reserve_back(17, 1);
            pack_tile(0, 17);
            cb_push_back(17, 1);
        }
        tile_regs_release();
        cb_pop_front(0, gates);
        cb_pop_front(1, gates);
        cb_pop_front(2, 1);
    }
}
