/* Batch norm (inference) compute: out = (x - mean) * (rsqrt(var + eps) *
 * weight) + bias, float32. For each channel (see norm_batch_reader.c) the
 * parameters become whole tiles once -- broadcast by multiplying a tile of
 * ones -- kept in CBs 7 (scale), 8 (mean) and 9 (bias) while the channel's
 * tiles stream through.
 * CBs: 0 input, 2 ones, 3..6 running mean, running var, weight, bias, 7..9
 * the whole-tile scale, mean and bias, 16 output.
 * Compile-time args: mode, has weight, has bias.
 * Runtime args: first, count (tiles), Ht, Wt, tiles per channel, channels,
 * eps bits, then a fused activation's (NN_ACT, nn_kernel.h) parameters and
 * op. */
#include "compute_kernel_api.h"

#define A(i) get_arg_val(i)
#define C(i) get_compile_time_arg_val(i)

static uint32_t channel_of(uint32_t mode, uint32_t t) {
    if (mode == 1) return t % A(3);
    if (mode == 2) return t / A(3) % A(2);
    return t / A(4) % A(5);
}

/* dst d = the parameter in `cb` as a whole tile. */
static void expand(uint32_t mode, uint32_t cb, uint32_t d) {
    if (mode == 1)
        mul_tiles_bcast_rows(2, cb, 0, 0, d);
    else if (mode == 2)
        mul_tiles_bcast_cols(2, cb, 0, 0, d);
    else
        mul_tiles_bcast_scalar(2, cb, 0, 0, d);
}

static void pack_to(uint32_t cb, uint32_t d) {
    cb_reserve_back(cb, 1);
    pack_tile(d, cb);
    cb_push_back(cb, 1);
}

void kernel_main(void) {
    uint32_t mode = C(0), has_w = C(1), has_b = C(2);
    uint32_t first = A(0), count = A(1), eps = A(6);
    uint32_t last = 0xffffffffu;
    init_sfpu(0, 16);
    cb_wait_front(2, 1);
    for (uint32_t t = first; t < first + count; t++) {
        uint32_t p = channel_of(mode, t);
        if (p != last) {
            if (last != 0xffffffffu) {
                cb_pop_front(7, 1);
                cb_pop_front(8, 1);
                if (has_b) cb_pop_front(9, 1);
            }
            cb_wait_front(3, 1);
            cb_wait_front(4, 1);
            if (has_w) cb_wait_front(5, 1);
            if (has_b) cb_wait_front(6, 1);
            tile_regs_acquire();
            expand(mode, 4, 0);
            fill_tile_bitcast(1, eps);
            add_binary_tile(0, 1, 0);
            rsqrt_tile(0);
            if (has_w) {
                expand(mode, 5, 1);
                mul_binary_tile(0, 1, 0);
            }
            expand(mode, 3, 2);
            if (has_b) expand(mode, 6, 3);
            tile_regs_commit();
            tile_regs_wait();
            pack_to(7, 0);
            pack_to(8, 2);
            if (has_b) pack_to(9, 3);
            tile_regs_release();
            cb_pop_front(3, 1);
            cb_pop_front(4, 1);
            if (has_w) cb_pop_front(5, 1);
            if (has_b) cb_pop_front(6, 1);
            cb_wait_front(7, 1);
            cb_wait_front(8, 1);
            if (has_b) cb_wait_front(9, 1);
            last = p;
        }
        cb_wait_front(0, 1);
        tile_regs_acquire();
        sub_tiles(0, 8, 0, 0, 0);
        copy_tile(7, 0, 1);
        mul_binary_tile(0, 1, 0);
        if (has_b) {
            copy_tile(9, 0, 1);
            add_binary_tile(0, 1, 0);
        }
        NN_ACT_DST0(7);
        tile_regs_commit();
        tile_regs_wait();
        pack_to(16, 0);
        tile_regs_release();
        cb_pop_front(0, 1);
    }
    if (last != 0xffffffffu) {
        cb_pop_front(7, 1);
        cb_pop_front(8, 1);
        if (has_b) cb_pop_front(9, 1);
    }
}
