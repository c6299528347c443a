/* Softmax compute, per group of n tiles (see softmax_reader.c), in three
 * passes over the group's tiles:
 *   max    m = max over the slice (reduce MAX along rows or columns, or the
 *          element-wise max of the tiles for an outer dim);
 *   sum    s = sum of exp(x - m) (element-wise over the tiles, then one
 *          reduce SUM), then 1 / s (softmax) or log(s) (log_softmax),
 *          broadcast to a whole tile through a multiply with a tile of ones;
 *   out    exp(x - m) * (1 / s), or (x - m) - log(s).
 * m is subtracted with the FPU's broadcast (columns for the last dim, rows
 * for dim -2), which reads the reduce result where it left it.
 * CBs: 0 input, 1 scaler (1.0), 2 ones, 3 max, 4 scratch, 5 broadcast 1/s or
 * log s (or, resident, 1/s or log s as the reduce left it), 6 the group's
 * exp(x - m) or x - m (resident), 16 output.
 * Compile-time args: mode (0 outer dim, 1 last dim, 2 dim -2), log,
 * resident (the reader sends each tile twice, not three times).
 * Runtime args: first, count (groups), n. */
#include "compute_kernel_api.h"

#define CB_IN 0
#define CB_SCALER 1
#define CB_ONES 2
#define CB_MAX 3
#define CB_ACC 4
#define CB_FULL 5
#define CB_KEEP 6
#define CB_OUT 16

static void pack_out(uint32_t cb) {
    tile_regs_commit();
    tile_regs_wait();
    cb_reserve_back(cb, 1);
    pack_tile(0, cb);
    cb_push_back(cb, 1);
    tile_regs_release();
}

/* dst d = x - m. */
static void sub_max(uint32_t mode, uint32_t d) {
    if (mode == 1)
        sub_tiles_bcast_cols(CB_IN, CB_MAX, 0, 0, d);
    else if (mode == 2)
        sub_tiles_bcast_rows(CB_IN, CB_MAX, 0, 0, d);
    else
        sub_tiles(CB_IN, CB_MAX, 0, 0, d);
}

/* Resident groups: pass 2 keeps exp(x - m) (log_softmax: x - m) of every
 * tile of the group in CB 6, so the sum reads them there and the output is
 * one FPU operation per tile (no second exp, no second read of x). Tiles go
 * through dst BLOCK at a time (each acquire clears dst); sums accumulate
 * element-wise on the FPU (dst += tile * 1), one reduce per group. */
#define BLOCK 8
static void resident_group(uint32_t mode, uint32_t log, uint32_t n, uint32_t dim) {
    for (uint32_t i0 = 0; i0 < n; i0 += BLOCK) {
        uint32_t b = n - i0 < BLOCK ? n - i0 : BLOCK;
        tile_regs_acquire();
        for (uint32_t j = 0; j < b; j++) {
            cb_wait_front(CB_IN, 1);
            sub_max(mode, j);
            if (!log) exp_tile(j);
            cb_pop_front(CB_IN, 1);
        }
        tile_regs_commit();
        tile_regs_wait();
        for (uint32_t j = 0; j < b; j++) {
            cb_reserve_back(CB_KEEP, 1);
            pack_tile(j, CB_KEEP);
            cb_push_back(CB_KEEP, 1);
        }
        tile_regs_release();
    }
    cb_wait_front(CB_KEEP, n);
    tile_regs_acquire();
    for (uint32_t i = 0; i < n; i++) {
        if (log) {
            copy_tile(CB_KEEP, i, 1);
            exp_tile(1);
            add_binary_tile(0, 1, 0);
        } else {
            lm_binary_tiles_acc(LM_BINARY_MUL, LM_BCAST_NONE, CB_KEEP, CB_ONES, i, 0, 0, 1);
        }
    }
    if (mode) {
        pack_out(CB_ACC);
        tile_regs_acquire();
        cb_wait_front(CB_ACC, 1);
        reduce_tile(LM_REDUCE_SUM, dim, CB_ACC, CB_SCALER, 0, 0, 0);
        cb_pop_front(CB_ACC, 1);
    }
    if (log)
        log_tile(0);
    else
        recip_tile(0);
    pack_out(CB_FULL);
    cb_wait_front(CB_FULL, 1);
    uint32_t op = log ? LM_BINARY_SUB : LM_BINARY_MUL;
    uint32_t bcast = mode == 1 ? LM_BCAST_COL : mode == 2 ? LM_BCAST_ROW : LM_BCAST_NONE;
    for (uint32_t i0 = 0; i0 < n; i0 += BLOCK) {
        uint32_t b = n - i0 < BLOCK ? n - i0 : BLOCK;
        tile_regs_acquire();
        for (uint32_t j = 0; j < b; j++)
            lm_binary_tiles_acc(op, bcast, CB_KEEP, CB_FULL, i0 + j, 0, j, 0);
        tile_regs_commit();
        tile_regs_wait();
        for (uint32_t j = 0; j < b; j++) {
            cb_reserve_back(CB_OUT, 1);
            pack_tile(j, CB_OUT);
            cb_push_back(CB_OUT, 1);
        }
        tile_regs_release();
    }
    cb_pop_front(CB_KEEP, n);
    cb_pop_front(CB_FULL, 1);
}

void kernel_main(void) {
    uint32_t mode = get_compile_time_arg_val(0), log = get_compile_time_arg_val(1);
    uint32_t resident = get_compile_time_arg_val(2);
    uint32_t count = get_arg_val(1), n = get_arg_val(2);
    uint32_t dim = mode == 1 ? LM_REDUCE_ROW : LM_REDUCE_COL;
    init_sfpu(CB_IN, CB_OUT);
    cb_wait_front(CB_SCALER, 1);
    cb_wait_front(CB_ONES, 1);
    for (uint32_t g = 0; g < count; g++) {
        tile_regs_acquire();
        for (uint32_t i = 0; i < n; i++) {
            cb_wait_front(CB_IN, 1);
            if (mode) {
                reduce_tile(LM_REDUCE_MAX, dim, CB_IN, CB_SCALER, 0, 0, 0);
            } else {
                copy_tile(CB_IN, 0, i ? 1 : 0);
                if (i) binary_max_tile(0, 1, 0);
            }
            cb_pop_front(CB_IN, 1);
        }
        pack_out(CB_MAX);
        cb_wait_front(CB_MAX, 1);
        if (resident) {
            resident_group(mode, log, n, dim);
            cb_pop_front(CB_MAX, 1);
            continue;
        }

        tile_regs_acquire();
        for (uint32_t i = 0; i < n; i++) {
            cb_wait_front(CB_IN, 1);
            sub_max(mode, i ? 1 : 0);
            exp_tile(i ? 1 : 0);
            if (i) add_binary_tile(0, 1, 0);
            cb_pop_front(CB_IN, 1);
        }
        if (mode) {
            pack_out(CB_ACC);
            tile_regs_acquire();
            cb_wait_front(CB_ACC, 1);
            reduce_tile(LM_REDUCE_SUM, dim, CB_ACC, CB_SCALER, 0, 0, 0);
            cb_pop_front(CB_ACC, 1);
        }
        if (log)
            log_tile(0);
        else
            recip_tile(0);
        if (mode) {
            pack_out(CB_ACC);
            tile_regs_acquire();
            cb_wait_front(CB_ACC, 1);
            if (mode == 1)
                mul_tiles_bcast_cols(CB_ONES, CB_ACC, 0, 0, 0);
            else
                mul_tiles_bcast_rows(CB_ONES, CB_ACC, 0, 0, 0);
            cb_pop_front(CB_ACC, 1);
        }
        pack_out(CB_FULL);
        cb_wait_front(CB_FULL, 1);

        for (uint32_t i = 0; i < n; i++) {
            cb_wait_front(CB_IN, 1);
            tile_regs_acquire();
            sub_max(mode, 0);
            copy_tile(CB_FULL, 0, 1);
            if (log) {
                sub_binary_tile(0, 1, 0);
            } else {
                exp_tile(0);
                mul_binary_tile(0, 1, 0);
            }
            pack_out(CB_OUT);
            cb_pop_front(CB_IN, 1);
        }
        cb_pop_front(CB_MAX, 1);
        cb_pop_front(CB_FULL, 1);
    }
}
