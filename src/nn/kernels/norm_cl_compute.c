/* Channels-last group normalisation compute, per span (norm_cl_reader.c),
 * float32 throughout. Statistics go from columns to groups and back through
 * the group maps E_k (CB 7): a row of per-column values times E_k sums them
 * into their groups' columns (a row of per-group values), and a row of
 * per-group values times E_k transposed hands each column its group's.
 *   mean   per column, reduce over rows with the scaler 1 / count; summed
 *          into groups: GM
 *   dev    d = x - GM's value for the column, the padding rows masked to 0;
 *          element-wise sums of d^2 and d per column, reduced, summed into
 *          groups: GSQ, GD; var = GSQ - GD^2 (GD is the mean's own rounding
 *          error), rstd = rsqrt(var + eps)
 *   out    (x - mean) * rstd - GD * rstd, times weight, plus bias, weight
 *          and bias per channel (row 0 of a tile per column, broadcast over
 *          rows)
 * CBs: 0 input, 1 scaler, 2 ones, 3 row mask, 4 and 10 column sums, 5
 * weight, 6 bias, 7 group maps, 8 GM, 9 a column's mean, 11 GSQ and GD, 12
 * rstd and -GD * rstd per group, 13 the same for a column, 14 a column's
 * scale and shift as whole tiles, 16 output.
 * Compile-time args: weight mode, bias mode (0 absent, 1 present), masks.
 * Runtime args: as the reader's, then a fused activation's (NN_ACT,
 * nn_kernel.h) parameters and op: each output tile then goes through dst 0
 * alone. */
#include "compute_kernel_api.h"

#define A(i) get_arg_val(i)
#define C(i) get_compile_time_arg_val(i)
#define CB_IN 0
#define CB_SCALER 1
#define CB_ONES 2
#define CB_MASK 3
#define CB_COL 4
#define CB_W 5
#define CB_B 6
#define CB_MAP 7
#define CB_GM 8
#define CB_MEAN 9
#define CB_COL2 10
#define CB_GSUM 11
#define CB_GSTAT 12
#define CB_RSTD 13
#define CB_AFFINE 14
#define CB_OUT 16
#define BLOCK 6
#define ARG_ACT 10

static void done_math(void) {
    tile_regs_commit();
    tile_regs_wait();
}

/* Packs dst 0..b-1 into `cb` with one reserve and one push. */
static void pack_block(uint32_t cb, uint32_t b) {
    cb_reserve_back(cb, b);
    for (uint32_t j = 0; j < b; j++)
        pack_tile(j, cb);
    cb_push_back(cb, b);
}

/* The k rows of column sums in CB `from` (popped) summed into their groups
 * (map `map`) and added to the k rows of group sums in CB `acc` (popped;
 * none before the span's first column); the new sums pushed to `acc`. */
static void into_groups(uint32_t from, uint32_t acc, uint32_t k, uint32_t map, bool first) {
    tile_regs_acquire();
    cb_wait_front(from, k);
    if (!first) {
        cb_wait_front(acc, k);
        for (uint32_t i = 0; i < k; i++)
            copy_tile(acc, i, i);
        cb_pop_front(acc, k);
    }
    for (uint32_t i = 0; i < k; i++)
        matmul_tiles(from, CB_MAP, i, map, i, 0);
    cb_pop_front(from, k);
    done_math();
    pack_block(acc, k);
    tile_regs_release();
}

/* dst d = group row `i` of CB `cb` handed to the span's column j (map). */
static void to_column(uint32_t cb, uint32_t i, uint32_t map, uint32_t d) {
    matmul_tiles(cb, CB_MAP, i, map, d, 1);
}

void kernel_main(void) {
    uint32_t wmode = C(0), bmode = C(1), masks = C(2);
    uint32_t first = A(0), count = A(1), ht = A(2), wt = A(3), s = A(5), cg = A(6);
    uint32_t eps = A(8), nq = A(9);
    uint32_t maps = cg % 32 ? s : 1;
    init_sfpu(CB_IN, CB_OUT);
    cb_wait_front(CB_SCALER, 1);
    cb_wait_front(CB_ONES, 1);
    if (masks) cb_wait_front(CB_MASK, 1);
    cb_wait_front(CB_MAP, maps);
    for (uint32_t u = first; u < first + count; u++) {
        uint32_t j0 = u % nq * s, span = wt - j0 < s ? wt - j0 : s;

        /* The group means. */
        for (uint32_t j = 0; j < span; j++) {
            tile_regs_acquire();
            for (uint32_t i = 0; i < ht; i++) {
                cb_wait_front(CB_IN, 1);
                reduce_tile(LM_REDUCE_SUM, LM_REDUCE_COL, CB_IN, CB_SCALER, 0, 0, 0);
                cb_pop_front(CB_IN, 1);
            }
            done_math();
            pack_block(CB_COL, 1);
            tile_regs_release();
            into_groups(CB_COL, CB_GM, 1, maps > 1 ? j : 0, j == 0);
        }
        cb_wait_front(CB_GM, 1);

        /* The deviations' sums. */
        for (uint32_t j = 0; j < span; j++) {
            uint32_t map = maps > 1 ? j : 0;
            tile_regs_acquire();
            to_column(CB_GM, 0, map, 0);
            done_math();
            pack_block(CB_MEAN, 1);
            tile_regs_release();
            cb_wait_front(CB_MEAN, 1);
            tile_regs_acquire();
            for (uint32_t i = 0; i < ht; i++) {
                cb_wait_front(CB_IN, 1);
                sub_tiles_bcast_rows(CB_IN, CB_MEAN, 0, 0, 2);
                if (masks && i == ht - 1) {
                    copy_tile(CB_MASK, 0, 3);
                    mul_binary_tile(2, 3, 2);
                }
                add_binary_tile(1, 2, 1);
                mul_binary_tile(2, 2, 2);
                add_binary_tile(0, 2, 0);
                cb_pop_front(CB_IN, 1);
            }
            done_math();
            pack_block(CB_COL, 2);
            tile_regs_release();
            cb_pop_front(CB_MEAN, 1);
            tile_regs_acquire();
            cb_wait_front(CB_COL, 2);
            reduce_tile(LM_REDUCE_SUM, LM_REDUCE_COL, CB_COL, CB_SCALER, 0, 0, 0);
            reduce_tile(LM_REDUCE_SUM, LM_REDUCE_COL, CB_COL, CB_SCALER, 1, 0, 1);
            cb_pop_front(CB_COL, 2);
            done_math();
            pack_block(CB_COL2, 2);
            tile_regs_release();
            into_groups(CB_COL2, CB_GSUM, 2, map, j == 0);
        }

        /* Per group: rstd, and -d0 * rstd with d0 = GD the mean's own
         * rounding error: the output is (x - mean) * rstd - d0 * rstd, as
         * x - mean loses less than x - (mean + d0) would. */
        cb_wait_front(CB_GSUM, 2);
        tile_regs_acquire();
        copy_tile(CB_GSUM, 0, 0);
        copy_tile(CB_GSUM, 1, 1);
        mul_binary_tile(1, 1, 2);
        sub_binary_tile(0, 2, 0);
        fill_tile_bitcast(2, eps);
        add_binary_tile(0, 2, 0);
        rsqrt_tile(0);
        mul_binary_tile(1, 0, 1);
        negative_tile(1);
        done_math();
        pack_block(CB_GSTAT, 2);
        tile_regs_release();
        cb_pop_front(CB_GSUM, 2);
        cb_wait_front(CB_GSTAT, 2);

        /* The output, column by column: (x - mean) * scale + shift with
         * scale = rstd [* weight], shift = -d0 * rstd [* weight] [+ bias]. */
        for (uint32_t j = 0; j < span; j++) {
            uint32_t map = maps > 1 ? j : 0;
            tile_regs_acquire();
            to_column(CB_GM, 0, map, 0);
            to_column(CB_GSTAT, 0, map, 1);
            to_column(CB_GSTAT, 1, map, 2);
            done_math();
            pack_block(CB_MEAN, 1);
            cb_reserve_back(CB_RSTD, 2);
            pack_tile(1, CB_RSTD);
            pack_tile(2, CB_RSTD);
            cb_push_back(CB_RSTD, 2);
            tile_regs_release();
            cb_wait_front(CB_MEAN, 1);
            cb_wait_front(CB_RSTD, 2);
            tile_regs_acquire();
            mul_tiles_bcast_rows(CB_ONES, CB_RSTD, 0, 0, 0);
            mul_tiles_bcast_rows(CB_ONES, CB_RSTD, 0, 1, 1);
            if (wmode) {
                cb_wait_front(CB_W, 1);
                mul_tiles_bcast_rows(CB_ONES, CB_W, 0, 0, 2);
                mul_binary_tile(0, 2, 0);
                mul_binary_tile(1, 2, 1);
                cb_pop_front(CB_W, 1);
            }
            if (bmode) {
                cb_wait_front(CB_B, 1);
                mul_tiles_bcast_rows(CB_ONES, CB_B, 0, 0, 2);
                add_binary_tile(1, 2, 1);
                cb_pop_front(CB_B, 1);
            }
            done_math();
            pack_block(CB_AFFINE, 2);
            tile_regs_release();
            cb_pop_front(CB_RSTD, 2);
            cb_wait_front(CB_AFFINE, 2);
            for (uint32_t i0 = 0; i0 < ht; i0 += BLOCK) {
                uint32_t b = ht - i0 < BLOCK ? ht - i0 : BLOCK;
                cb_wait_front(CB_IN, b);
#ifdef NN_ACT
                for (uint32_t t = 0; t < b; t++) {
                    tile_regs_acquire();
                    sub_tiles_bcast_rows(CB_IN, CB_MEAN, t, 0, 0);
                    copy_tile(CB_AFFINE, 0, 1);
                    mul_binary_tile(0, 1, 0);
                    copy_tile(CB_AFFINE, 1, 1);
                    add_binary_tile(0, 1, 0);
                    NN_ACT_DST0(ARG_ACT);
                    done_math();
                    pack_block(CB_OUT, 1);
                    tile_regs_release();
                }
#else
                tile_regs_acquire();
                copy_tile(CB_AFFINE, 0, 6);
                copy_tile(CB_AFFINE, 1, 7);
                for (uint32_t t = 0; t < b; t++) {
                    sub_tiles_bcast_rows(CB_IN, CB_MEAN, t, 0, t);
                    mul_binary_tile(t, 6, t);
                    add_binary_tile(t, 7, t);
                }
                done_math();
                pack_block(CB_OUT, b);
                tile_regs_release();
#endif
                cb_pop_front(CB_IN, b);
            }
            cb_pop_front(CB_AFFINE, 2);
            cb_pop_front(CB_MEAN, 1);
        }
        cb_pop_front(CB_GM, 1);
        cb_pop_front(CB_GSTAT, 2);
    }
}
