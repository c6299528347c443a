/* Reduction compute: for each unit, the input tiles from CB 0 combine
 * element-wise in dst 0 (add, max, min or mul, after an optional abs or square;
 * for var the squared, masked deviations from the mean of a first pass), then
 * one reduce_tile over the tile's rows, columns or both gives the result in
 * column 0, row 0 or [0][0] (nothing for mode NONE: only outer dims reduced),
 * scaled by the scaler, then an optional sqrt. Sums of x and x^2 accumulate
 * on the FPU (dst 0 += x * 1, or x * x); a plain max reduces each input tile
 * straight into dst 0.
 * min is -max(-x) for the in-tile step (exact). With partial set the
 * element-wise accumulator is the result: a later launch combines the
 * partial results of the chunks of one output tile.
 *
 * dst elements a reduce does not write stay undefined and pack as 0: the
 * output tile is zero outside its result positions.
 *
 * CBs: 0 input, 1 scaler tiles (final, mean), 2 masks (var), 3 accumulators,
 * 4 mean (var), 5 ones, 16 output.
 * Runtime args: as the reader's (args 22 and 23, its buffer and format,
 * unused here), whose args 14..21 are mode (0 NONE, 1 ROW,
 * 2 COL, 3 SCALAR), func (1 sum, 2 max, 3 min, 4 prod), pre (0, 1 abs,
 * 2 square), post (0, 1 sqrt), var, partial, red_h, red_w: runtime too, so
 * one compiled kernel serves every reduction (the branches cost nothing next
 * to the tile math). */
#include "compute_kernel_api.h"

#define A(i) get_arg_val(i)
#define DIMS 24
#define CB_IN 0
#define CB_SCALER 1
#define CB_MASK 2
#define CB_ACC 3
#define CB_MEAN 4
#define CB_ONES 5
#define CB_OUT 16
#define ONE_BITS 0x3f800000u

static uint32_t kept_base(uint32_t k) {
    uint32_t nk = A(DIMS), base = 0;
    for (uint32_t j = nk; j-- > 0;) {
        uint32_t size = A(DIMS + 2 + 2 * j), stride = A(DIMS + 3 + 2 * j);
        base += k % size * stride;
        k /= size;
    }
    return base;
}

static uint32_t reduced_offset(uint32_t i) {
    uint32_t nk = A(DIMS), nr = A(DIMS + 1), off = 0;
    for (uint32_t j = nr; j-- > 0;) {
        uint32_t size = A(DIMS + 2 + 2 * (nk + j)), stride = A(DIMS + 3 + 2 * (nk + j));
        off += i % size * stride;
        i /= size;
    }
    return off;
}

static uint32_t reduce_dim(uint32_t mode) {
    return mode == 1 ? LM_REDUCE_ROW : mode == 2 ? LM_REDUCE_COL : LM_REDUCE_SCALAR;
}

/* d = in - mean, the mean broadcast as the mode's reduce left it. */
static void deviation(uint32_t mode, uint32_t d) {
    if (mode == 0)
        sub_tiles(CB_IN, CB_MEAN, 0, 0, d);
    else if (mode == 1)
        sub_tiles_bcast_cols(CB_IN, CB_MEAN, 0, 0, d);
    else if (mode == 2)
        sub_tiles_bcast_rows(CB_IN, CB_MEAN, 0, 0, d);
    else
        sub_tiles_bcast_scalar(CB_IN, CB_MEAN, 0, 0, d);
}

/* dst 0 -> the front of `cb` (dst released after). */
static void pack_out(uint32_t cb) {
    tile_regs_commit();
    tile_regs_wait();
    cb_reserve_back(cb, 1);
    pack_tile(0, cb);
    cb_push_back(cb, 1);
    tile_regs_release();
}

/* dst d *= the float32 whose bits are runtime arg `arg`; dst 3 is scratch. */
static void scale_dst(uint32_t d, uint32_t arg) {
    uint32_t bits = A(arg);
    if (bits == ONE_BITS) return;
    fill_tile_bitcast(3, bits);
    mul_binary_tile(d, 3, d);
}

/* dst 0 *= the scaler tile `s`'s value (mode NONE, where no reduce scales). */
static void scale(uint32_t s) {
    scale_dst(0, 9 + s);
}

/* dst to = dst from (x + 0 is x for every x but -0). */
static void copy_dst(uint32_t from, uint32_t to) {
    fill_tile_bitcast(to, 0);
    add_binary_tile(from, to, to);
}

/* var from the deviation pass: dst 0 = sum(d^2), dst 4 = sum(d) element-wise
 * (d = x - mean). The corrected two-pass formula
 *   var = (sum(d^2) - sum(d)^2 / N) / (N - correction)
 * removes the first-order effect of the mean's rounding error, which for data
 * far from zero would dominate. Leaves var in dst 0 (dst acquired). */
static void finish_var(uint32_t mode, uint32_t dim) {
    if (mode) {
        tile_regs_commit();
        tile_regs_wait();
        cb_reserve_back(CB_ACC, 2);
        pack_tile(0, CB_ACC);
        pack_tile(4, CB_ACC);
        cb_push_back(CB_ACC, 2);
        tile_regs_release();
        tile_regs_acquire();
        cb_wait_front(CB_ACC, 2);
        reduce_tile(LM_REDUCE_SUM, dim, CB_ACC, CB_SCALER, 0, 0, 0);
        reduce_tile(LM_REDUCE_SUM, dim, CB_ACC, CB_SCALER, 1, 1, 1);
        cb_pop_front(CB_ACC, 2);
    } else {
        scale(0);
        copy_dst(4, 1);
        scale_dst(1, 10);
    }
    /* dst 0 = sum(d^2) / (N - c), dst 1 = sum(d) / N; subtract
     * (sum(d) / N)^2 * N / (N - c). */
    mul_binary_tile(1, 1, 1);
    fill_tile_bitcast(2, A(11));
    mul_binary_tile(1, 2, 1);
    sub_binary_tile(0, 1, 0);
}

void kernel_main(void) {
    uint32_t mode = A(14), func = A(15), pre = A(16), post = A(17);
    uint32_t var = A(18), partial = A(19), masks = A(13), red_h = A(20), red_w = A(21);
    uint32_t first = A(0), count = A(1), ht = A(2), wt = A(3), h = A(4), w = A(5);
    uint32_t chunks = A(6), chunk = A(7), n_red = A(8);
    uint32_t dim = reduce_dim(mode);
    /* Sums (of x or x^2) accumulate element-wise on the FPU (dst 0 += x * 1 or
     * x * x), max reduces each tile straight into dst 0; either way one
     * in-tile step at the end. */
    bool fpu = func == 1 && pre != 1 && !var;
    bool direct = func == 2 && pre == 0 && !partial && mode != 0;
    init_sfpu(CB_IN, CB_OUT);
    cb_wait_front(CB_SCALER, 2);
    cb_wait_front(CB_ONES, 1);
    if (masks) cb_wait_front(CB_MASK, 3);

    for (uint32_t u = first; u < first + count; u++) {
        uint32_t base = kept_base(u / chunks), lo = u % chunks * chunk;
        uint32_t hi = lo + chunk < n_red ? lo + chunk : n_red;
        if (var) {
            tile_regs_acquire();
            for (uint32_t i = lo; i < hi; i++) {
                cb_wait_front(CB_IN, 1);
                lm_binary_tiles_acc(LM_BINARY_MUL, LM_BCAST_NONE, CB_IN, CB_ONES, 0, 0, 0, 1);
                cb_pop_front(CB_IN, 1);
            }
            if (mode) {
                pack_out(CB_ACC);
                tile_regs_acquire();
                cb_wait_front(CB_ACC, 1);
                reduce_tile(LM_REDUCE_SUM, dim, CB_ACC, CB_SCALER, 0, 1, 0);
                cb_pop_front(CB_ACC, 1);
            } else {
                scale(1);
            }
            pack_out(CB_MEAN);
            cb_wait_front(CB_MEAN, 1);
        }

        tile_regs_acquire();
        if (var) fill_tile_bitcast(4, 0);
        for (uint32_t i = lo; i < hi; i++) {
            cb_wait_front(CB_IN, 1);
            if (fpu) {
                lm_binary_tiles_acc(LM_BINARY_MUL, LM_BCAST_NONE, CB_IN, pre == 2 ? CB_IN : CB_ONES,
                                    0, 0, 0, 1);
            } else if (direct) {
                reduce_tile(LM_REDUCE_MAX, dim, CB_IN, CB_SCALER, 0, 0, 0);
            } else {
                uint32_t d = i == lo ? 0 : 1;
                if (var) {
                    deviation(mode, d);
                    if (masks) {
                        uint32_t t = base + reduced_offset(i);
                        uint32_t last_h = red_h && h % 32 && t / wt % ht == ht - 1;
                        uint32_t last_w = red_w && w % 32 && t % wt == wt - 1;
                        uint32_t kind = last_h | last_w << 1;
                        if (kind) {
                            copy_tile(CB_MASK, kind - 1, 2);
                            mul_binary_tile(d, 2, d);
                        }
                    }
                    /* dst 4 = sum of deviations (the mean's own error). */
                    add_binary_tile(4, d, 4);
                    mul_binary_tile(d, d, d);
                } else {
                    copy_tile(CB_IN, 0, d);
                    if (pre == 1) abs_tile(d);
                }
                if (d) {
                    if (func == 1)
                        add_binary_tile(0, 1, 0);
                    else if (func == 2)
                        binary_max_tile(0, 1, 0);
                    else if (func == 3)
                        binary_min_tile(0, 1, 0);
                    else
                        mul_binary_tile(0, 1, 0);
                }
            }
            cb_pop_front(CB_IN, 1);
        }
        if (var) {
            finish_var(mode, dim);
        } else if (!partial) {
            if (!direct && mode) {
                /* The in-tile step reads a CB: through the accumulator CB. */
                if (func == 3) negative_tile(0);
                pack_out(CB_ACC);
                tile_regs_acquire();
                cb_wait_front(CB_ACC, 1);
                reduce_tile(func == 1   ? LM_REDUCE_SUM
                            : func == 4 ? LM_REDUCE_PROD
                                        : LM_REDUCE_MAX,
                            dim, CB_ACC, CB_SCALER, 0, 0, 0);
                cb_pop_front(CB_ACC, 1);
                if (func == 3) {
                    /* 0 - x rather than -x: the positions without a result
                     * stay +0, not -0 (the output's padding is zero). */
                    fill_tile_bitcast(1, 0);
                    rsub_binary_tile(0, 1, 0);
                }
            } else if (!mode) {
                scale(0);
            }
        }
        if (!partial && post == 1) sqrt_tile(0);
        pack_out(CB_OUT);
        if (var) cb_pop_front(CB_MEAN, 1);
    }
}
