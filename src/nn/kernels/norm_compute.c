/* Normalisation compute (layer_norm, rms_norm, group_norm), per group of n
 * tiles (see norm_reader.c), float32 throughout:
 *   mean   m = sum(x) / count (reduce SUM with the scaler 1 / count; not rms)
 *   dev    d = x - m with the padding masked to 0; element-wise sums of d^2
 *          and d (rms: of x^2), then reduced: var = sum(d^2) / count -
 *          (sum(d) / count)^2, the corrected two-pass form (the second term
 *          is the square of the mean's own rounding error), and the mean
 *          itself corrected by sum(d) / count; rstd = rsqrt(var + eps)
 *          broadcast to a whole tile (times a tile of ones)
 *   out    (x - m) * rstd [* weight] [+ bias]
 * Mode 1 normalises each row (reduce over rows, column broadcasts), mode 3
 * the whole group (reduce SCALAR, scalar broadcasts).
 * CBs: 0 input, 1 scaler, 2 ones, 3 masks, 4 scratch, 5 weight, 6 bias,
 * 7 mean, 8 corrected mean (resident: -d0 * rstd), 9 rstd, 10 the group's
 * x - m (resident), 11 normalised tiles before weight and bias (resident),
 * 16 output.
 * Compile-time args: mode, rms, masks, red_h, weight mode, bias mode (0
 * absent, 1 tile -- broadcast over rows in mode 1 --, 2 per-channel scalar),
 * resident, params kept (resident groups: the per-tile weight and bias stay
 * in CBs 5 and 6 for the whole kernel), x kept (resident groups: CB 0 holds
 * the whole group, read once for the mean and the deviation pass).
 * Runtime args: first, count (groups), n, Ht, Wt, H, W, scaler bits, groups,
 * channels, tiles per channel, eps bits, then a fused activation's (NN_ACT,
 * nn_kernel.h) parameters and op: applied to each output tile, which then
 * goes through dst one at a time. */
#include "compute_kernel_api.h"

#define A(i) get_arg_val(i)
#define C(i) get_compile_time_arg_val(i)
#define CB_IN 0
#define CB_SCALER 1
#define CB_ONES 2
#define CB_MASK 3
#define CB_ACC 4
#define CB_W 5
#define CB_B 6
#define CB_MEAN 7
#define CB_MEAN2 8
#define CB_RSTD 9
#define CB_KEEP 10
#define CB_DR 11
#define CB_OUT 16
#define ARG_ACT 12

static void pack_to(uint32_t cb, uint32_t d) {
    cb_reserve_back(cb, 1);
    pack_tile(d, cb);
    cb_push_back(cb, 1);
}

/* Packs dst 0..b-1 into `cb` with one reserve and one push (fewer calls:
 * every kernel call is interpreted). Whoever takes them waits for them in
 * the same blocks, or one by one. */
static void pack_block(uint32_t cb, uint32_t b) {
    cb_reserve_back(cb, b);
    for (uint32_t j = 0; j < b; j++)
        pack_tile(j, cb);
    cb_push_back(cb, b);
}

static void done_math(void) {
    tile_regs_commit();
    tile_regs_wait();
}

/* dst d = x - mean (x tile xi of CB 0, the mean tile of `cb`, broadcast as
 * mode left it). */
static void deviation(uint32_t mode, uint32_t cb, uint32_t xi, uint32_t d) {
    if (mode == 1)
        sub_tiles_bcast_cols(CB_IN, cb, xi, 0, d);
    else
        sub_tiles_bcast_scalar(CB_IN, cb, xi, 0, d);
}

/* dst d = the parameter tile of `cb` as a whole tile. */
static void param(uint32_t pmode, uint32_t mode, uint32_t cb, uint32_t d) {
    if (pmode == 2)
        mul_tiles_bcast_scalar(CB_ONES, cb, 0, 0, d);
    else if (mode == 1)
        mul_tiles_bcast_rows(CB_ONES, cb, 0, 0, d);
    else
        copy_tile(cb, 0, d);
}

/* Resident groups (all n tiles fit in CB 10): x - m is kept, so the output
 * needs no second read of x; sums accumulate element-wise on the FPU (dst +=
 * a * b), one reduce per group; tiles go through dst BLOCK at a time (each
 * acquire clears dst). Per-tile weight and bias (mode 1) arrive once, before
 * the first group, and stay, when they fit. The mean's rounding error d0 = sum(x - m) / count
 * enters the output as (x - m) * rstd - d0 * rstd. */
#define BLOCK 6
static void resident_group(uint32_t g, uint32_t n) {
    uint32_t mode = C(0), rms = C(1), masks = C(2), red_h = C(3), wmode = C(4), bmode = C(5);
    uint32_t kept = C(7), xkept = C(8);
    uint32_t ht = A(3), wt = A(4), h = A(5), w = A(6), eps = A(11);
    uint32_t dim = mode == 1 ? LM_REDUCE_ROW : LM_REDUCE_SCALAR;
    uint32_t bc = mode == 1 ? LM_BCAST_COL : LM_BCAST_SCALAR;
    if (xkept) cb_wait_front(CB_IN, n); /* the reader pushes the group at once */
    if (!rms) {
        tile_regs_acquire();
        for (uint32_t i = 0; i < n; i++) {
            if (!xkept) cb_wait_front(CB_IN, 1);
            lm_binary_tiles_acc(LM_BINARY_MUL, LM_BCAST_NONE, CB_IN, CB_ONES, xkept ? i : 0, 0, 0,
                                1);
            if (!xkept) cb_pop_front(CB_IN, 1);
        }
        done_math();
        pack_to(CB_ACC, 0);
        tile_regs_release();
        tile_regs_acquire();
        cb_wait_front(CB_ACC, 1);
        reduce_tile(LM_REDUCE_SUM, dim, CB_ACC, CB_SCALER, 0, 0, 0);
        cb_pop_front(CB_ACC, 1);
        done_math();
        pack_to(CB_MEAN, 0);
        tile_regs_release();
        cb_wait_front(CB_MEAN, 1);
    }
    for (uint32_t i0 = 0; i0 < n; i0 += BLOCK) {
        uint32_t b = n - i0 < BLOCK ? n - i0 : BLOCK;
        tile_regs_acquire();
        for (uint32_t j = 0; j < b; j++) {
            uint32_t xi = xkept ? i0 + j : 0;
            if (!xkept) cb_wait_front(CB_IN, 1);
            if (rms) {
                copy_tile(CB_IN, xi, j);
            } else {
                deviation(mode, CB_MEAN, xi, j);
                if (masks) {
                    uint32_t t = g * n + i0 + j;
                    uint32_t last_h = red_h && h % 32 && t / wt % ht == ht - 1;
                    uint32_t last_w = w % 32 && t % wt == wt - 1;
                    uint32_t kind = last_h | last_w << 1;
                    if (kind) {
                        copy_tile(CB_MASK, kind - 1, 7);
                        mul_binary_tile(j, 7, j);
                    }
                }
            }
            if (!xkept) cb_pop_front(CB_IN, 1);
        }
        done_math();
        pack_block(CB_KEEP, b);
        tile_regs_release();
    }
    if (xkept) cb_pop_front(CB_IN, n);
    if (!rms) cb_pop_front(CB_MEAN, 1);
    cb_wait_front(CB_KEEP, n);

    /* dst 0 = sum(d^2), dst 1 = sum(d), element-wise; then var and rstd. */
    tile_regs_acquire();
    for (uint32_t i = 0; i < n; i++) {
        lm_binary_tiles_acc(LM_BINARY_MUL, LM_BCAST_NONE, CB_KEEP, CB_KEEP, i, i, 0, 1);
        if (!rms) lm_binary_tiles_acc(LM_BINARY_MUL, LM_BCAST_NONE, CB_KEEP, CB_ONES, i, 0, 1, 1);
    }
    done_math();
    cb_reserve_back(CB_ACC, 2);
    pack_tile(0, CB_ACC);
    pack_tile(1, CB_ACC);
    cb_push_back(CB_ACC, 2);
    tile_regs_release();
    tile_regs_acquire();
    cb_wait_front(CB_ACC, 2);
    reduce_tile(LM_REDUCE_SUM, dim, CB_ACC, CB_SCALER, 0, 0, 0);
    if (!rms) {
        reduce_tile(LM_REDUCE_SUM, dim, CB_ACC, CB_SCALER, 1, 0, 1);
        mul_binary_tile(1, 1, 2);
        sub_binary_tile(0, 2, 0);
    }
    cb_pop_front(CB_ACC, 2);
    fill_tile_bitcast(2, eps);
    add_binary_tile(0, 2, 0);
    rsqrt_tile(0);
    if (!rms) {
        /* dst 1 = -d0 * rstd */
        mul_binary_tile(1, 0, 1);
        negative_tile(1);
    }
    done_math();
    pack_to(CB_RSTD, 0);
    if (!rms) pack_to(CB_MEAN2, 1);
    tile_regs_release();
    cb_wait_front(CB_RSTD, 1);
    if (!rms) cb_wait_front(CB_MEAN2, 1);

    uint32_t affine = wmode || bmode;
    uint32_t wb = wmode == 2 ? LM_BCAST_SCALAR : mode == 1 ? LM_BCAST_ROW : LM_BCAST_NONE;
    uint32_t bb = bmode == 2 ? LM_BCAST_SCALAR : mode == 1 ? LM_BCAST_ROW : LM_BCAST_NONE;
#ifdef NN_ACT
    uint32_t block = 1; /* the activation works on dst 0 */
#else
    uint32_t block = BLOCK;
#endif
    for (uint32_t i0 = 0; i0 < n; i0 += block) {
        uint32_t b = n - i0 < block ? n - i0 : block;
        tile_regs_acquire();
        for (uint32_t j = 0; j < b; j++) {
            if (!rms) lm_binary_tiles(LM_BINARY_MUL, bc, CB_ONES, CB_MEAN2, 0, 0, j);
            lm_binary_tiles_acc(LM_BINARY_MUL, bc, CB_KEEP, CB_RSTD, i0 + j, 0, j, !rms);
        }
        if (!affine) NN_ACT_DST0(ARG_ACT);
        done_math();
        pack_block(affine ? CB_DR : CB_OUT, b);
        tile_regs_release();
        if (!affine) continue;
        cb_wait_front(CB_DR, b);
        tile_regs_acquire();
        for (uint32_t j = 0; j < b; j++) {
            /* Per-tile parameters stay in their CBs for the whole kernel. */
            uint32_t wkept = kept && wmode == 1, bkept = kept && bmode == 1;
            uint32_t wi = wkept ? i0 + j : 0, bi = bkept ? i0 + j : 0;
            if (wmode && !wkept) cb_wait_front(CB_W, 1);
            if (bmode && !bkept) cb_wait_front(CB_B, 1);
            if (wmode && bmode) {
                lm_binary_tiles(LM_BINARY_MUL, bb, CB_ONES, CB_B, 0, bi, j);
                lm_binary_tiles_acc(LM_BINARY_MUL, wb, CB_DR, CB_W, j, wi, j, 1);
            } else if (wmode) {
                lm_binary_tiles(LM_BINARY_MUL, wb, CB_DR, CB_W, j, wi, j);
            } else {
                lm_binary_tiles(LM_BINARY_ADD, bb, CB_DR, CB_B, j, bi, j);
            }
            if (wmode && !wkept) cb_pop_front(CB_W, 1);
            if (bmode && !bkept) cb_pop_front(CB_B, 1);
        }
        NN_ACT_DST0(ARG_ACT);
        done_math();
        pack_block(CB_OUT, b);
        tile_regs_release();
        cb_pop_front(CB_DR, b);
    }
    cb_pop_front(CB_KEEP, n);
    cb_pop_front(CB_RSTD, 1);
    if (!rms) cb_pop_front(CB_MEAN2, 1);
}

void kernel_main(void) {
    uint32_t mode = C(0), rms = C(1), masks = C(2), red_h = C(3), wmode = C(4), bmode = C(5);
    uint32_t count = A(1), n = A(2), ht = A(3), wt = A(4), h = A(5), w = A(6);
    uint32_t g0 = A(0), eps = A(11);
    uint32_t dim = mode == 1 ? LM_REDUCE_ROW : LM_REDUCE_SCALAR;
    init_sfpu(CB_IN, CB_OUT);
    cb_wait_front(CB_SCALER, 1);
    cb_wait_front(CB_ONES, 1);
    if (masks) cb_wait_front(CB_MASK, 3);
    if (C(7) && wmode == 1) cb_wait_front(CB_W, n);
    if (C(7) && bmode == 1) cb_wait_front(CB_B, n);
    for (uint32_t g = g0; g < g0 + count; g++) {
        if (C(6)) {
            resident_group(g, n);
            continue;
        }
        if (!rms) {
            tile_regs_acquire();
            for (uint32_t i = 0; i < n; i++) {
                cb_wait_front(CB_IN, 1);
                reduce_tile(LM_REDUCE_SUM, dim, CB_IN, CB_SCALER, 0, 0, 0);
                cb_pop_front(CB_IN, 1);
            }
            done_math();
            pack_to(CB_MEAN, 0);
            tile_regs_release();
            cb_wait_front(CB_MEAN, 1);
        }

        tile_regs_acquire();
        fill_tile_bitcast(4, 0);
        for (uint32_t i = 0; i < n; i++) {
            uint32_t d = i ? 1 : 0;
            cb_wait_front(CB_IN, 1);
            if (rms) {
                copy_tile(CB_IN, 0, d);
            } else {
                deviation(mode, CB_MEAN, 0, d);
                if (masks) {
                    uint32_t t = g * n + i;
                    uint32_t last_h = red_h && h % 32 && t / wt % ht == ht - 1;
                    uint32_t last_w = w % 32 && t % wt == wt - 1;
                    uint32_t kind = last_h | last_w << 1;
                    if (kind) {
                        copy_tile(CB_MASK, kind - 1, 2);
                        mul_binary_tile(d, 2, d);
                    }
                }
                add_binary_tile(4, d, 4);
            }
            mul_binary_tile(d, d, d);
            if (d) add_binary_tile(0, 1, 0);
            cb_pop_front(CB_IN, 1);
        }
        done_math();
        cb_reserve_back(CB_ACC, 2);
        pack_tile(0, CB_ACC);
        pack_tile(4, CB_ACC);
        cb_push_back(CB_ACC, 2);
        tile_regs_release();

        /* var, rstd and the corrected mean. */
        tile_regs_acquire();
        cb_wait_front(CB_ACC, 2);
        reduce_tile(LM_REDUCE_SUM, dim, CB_ACC, CB_SCALER, 0, 0, 0);
        if (!rms) {
            reduce_tile(LM_REDUCE_SUM, dim, CB_ACC, CB_SCALER, 1, 0, 1);
            mul_binary_tile(1, 1, 2);
            sub_binary_tile(0, 2, 0);
        }
        cb_pop_front(CB_ACC, 2);
        fill_tile_bitcast(2, eps);
        add_binary_tile(0, 2, 0);
        rsqrt_tile(0);
        done_math();
        cb_reserve_back(CB_ACC, 2);
        pack_tile(0, CB_ACC);
        pack_tile(1, CB_ACC);
        cb_push_back(CB_ACC, 2);
        tile_regs_release();
        tile_regs_acquire();
        cb_wait_front(CB_ACC, 2);
        if (mode == 1)
            mul_tiles_bcast_cols(CB_ONES, CB_ACC, 0, 0, 0);
        else
            mul_tiles_bcast_scalar(CB_ONES, CB_ACC, 0, 0, 0);
        if (!rms) add_tiles(CB_MEAN, CB_ACC, 0, 1, 1);
        cb_pop_front(CB_ACC, 2);
        done_math();
        pack_to(CB_RSTD, 0);
        if (!rms) pack_to(CB_MEAN2, 1);
        tile_regs_release();
        if (!rms) {
            cb_pop_front(CB_MEAN, 1);
            cb_wait_front(CB_MEAN2, 1);
        }
        cb_wait_front(CB_RSTD, 1);

        for (uint32_t i = 0; i < n; i++) {
            cb_wait_front(CB_IN, 1);
            tile_regs_acquire();
            if (rms)
                copy_tile(CB_IN, 0, 0);
            else
                deviation(mode, CB_MEAN2, 0, 0);
            copy_tile(CB_RSTD, 0, 1);
            mul_binary_tile(0, 1, 0);
            if (wmode) {
                cb_wait_front(CB_W, 1);
                param(wmode, mode, CB_W, 1);
                mul_binary_tile(0, 1, 0);
                cb_pop_front(CB_W, 1);
            }
            if (bmode) {
                cb_wait_front(CB_B, 1);
                param(bmode, mode, CB_B, 1);
                add_binary_tile(0, 1, 0);
                cb_pop_front(CB_B, 1);
            }
            NN_ACT_DST0(ARG_ACT);
            done_math();
            pack_to(CB_OUT, 0);
            tile_regs_release();
            cb_pop_front(CB_IN, 1);
        }
        if (!rms) cb_pop_front(CB_MEAN2, 1);
        cb_pop_front(CB_RSTD, 1);
    }
}
