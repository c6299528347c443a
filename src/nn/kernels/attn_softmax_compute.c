/* Attention softmax compute: per group (a row of n score tiles, see
 * attn_softmax_reader.c), x = score * scale (+ mask, broadcast) (+ the
 * additive causal / padding tile), kept in CB 8 as float32; then
 *   max    m = max of each row (reduce MAX along rows),
 *   sum    s = sum of exp(x - m), then 1 / s spread over a tile,
 *   out    exp(x - m) * (1 / s),
 * as lmnn_softmax computes it. Additions go through the FPU's accumulate
 * into dst (dst += ones * tile, broadcast as the mask needs).
 * CBs: 0 scores, 1 mask, 2 additive tile, 3 ones, 4 scaler, 5 max, 6 scratch,
 * 7 1/s, 8 x (n tiles), 16 output.
 * Runtime args: first, count (groups), n, ht, w (Sk), do_scale, scale bits,
 * has_mask, mask broadcast (0 none, 1 rows, 2 columns, 3 scalar), causal
 * (all runtime: one compiled kernel for every attention). */
#include "compute_kernel_api.h"

#define CB_IN 0
#define CB_MASK 1
#define CB_ADD 2
#define CB_ONES 3
#define CB_SCALER 4
#define CB_MAX 5
#define CB_ACC 6
#define CB_FULL 7
#define CB_X 8
#define CB_OUT 16

static void pack_out(uint32_t cb) {
    tile_regs_commit();
    tile_regs_wait();
    cb_reserve_back(cb, 1);
    pack_tile(0, cb);
    cb_push_back(cb, 1);
    tile_regs_release();
}

void kernel_main(void) {
    /* The engine's broadcast codes follow LM_BCAST_NONE in this order (no
     * table: kernel data lives on the stack). */
    _Static_assert(LM_BCAST_ROW == LM_BCAST_NONE + 1 && LM_BCAST_COL == LM_BCAST_NONE + 2 &&
                       LM_BCAST_SCALAR == LM_BCAST_NONE + 3,
                   "broadcast codes");
    uint32_t has_mask = get_arg_val(7), bcast = LM_BCAST_NONE + (get_arg_val(8) & 3);
    uint32_t causal = get_arg_val(9);
    uint32_t first = get_arg_val(0), count = get_arg_val(1), n = get_arg_val(2);
    uint32_t ht = get_arg_val(3), w = get_arg_val(4);
    uint32_t do_scale = get_arg_val(5), scale = get_arg_val(6);
    init_sfpu(CB_IN, CB_OUT);
    cb_wait_front(CB_SCALER, 1);
    cb_wait_front(CB_ONES, 1);
    for (uint32_t g = first; g < first + count; g++) {
        uint32_t tr = g % ht;
        for (uint32_t tc = 0; tc < n; tc++) {
            tile_regs_acquire();
            cb_wait_front(CB_IN, 1);
            copy_tile(CB_IN, 0, 0);
            cb_pop_front(CB_IN, 1);
            if (do_scale) mul_unary_tile(0, scale);
            if (has_mask) {
                cb_wait_front(CB_MASK, 1);
                lm_binary_tiles_acc(LM_BINARY_MUL, bcast, CB_ONES, CB_MASK, 0, 0, 0, 1);
                cb_pop_front(CB_MASK, 1);
            }
            if ((causal && tc * 32 + 31 > tr * 32) || (tc == n - 1 && w % 32)) {
                cb_wait_front(CB_ADD, 1);
                lm_binary_tiles_acc(LM_BINARY_MUL, LM_BCAST_NONE, CB_ONES, CB_ADD, 0, 0, 0, 1);
                cb_pop_front(CB_ADD, 1);
            }
            pack_out(CB_X);
        }
        cb_wait_front(CB_X, n);
        tile_regs_acquire();
        for (uint32_t i = 0; i < n; i++)
            reduce_tile(LM_REDUCE_MAX, LM_REDUCE_ROW, CB_X, CB_SCALER, i, 0, 0);
        pack_out(CB_MAX);
        cb_wait_front(CB_MAX, 1);

        tile_regs_acquire();
        for (uint32_t i = 0; i < n; i++) {
            sub_tiles_bcast_cols(CB_X, CB_MAX, i, 0, i ? 1 : 0);
            exp_tile(i ? 1 : 0);
            if (i) add_binary_tile(0, 1, 0);
        }
        pack_out(CB_ACC);
        tile_regs_acquire();
        cb_wait_front(CB_ACC, 1);
        reduce_tile(LM_REDUCE_SUM, LM_REDUCE_ROW, CB_ACC, CB_SCALER, 0, 0, 0);
        cb_pop_front(CB_ACC, 1);
        recip_tile(0);
        pack_out(CB_ACC);
        tile_regs_acquire();
        cb_wait_front(CB_ACC, 1);
        mul_tiles_bcast_cols(CB_ONES, CB_ACC, 0, 0, 0);
        cb_pop_front(CB_ACC, 1);
        pack_out(CB_FULL);
        cb_wait_front(CB_FULL, 1);

        for (uint32_t i = 0; i < n; i++) {
            tile_regs_acquire();
            sub_tiles_bcast_cols(CB_X, CB_MAX, i, 0, 0);
            exp_tile(0);
            copy_tile(CB_FULL, 0, 1);
            mul_binary_tile(0, 1, 0);
            pack_out(CB_OUT);
        }
        cb_pop_front(CB_X, n);
        cb_pop_front(CB_MAX, 1);
        cb_pop_front(CB_FULL, 1);
    }
}
