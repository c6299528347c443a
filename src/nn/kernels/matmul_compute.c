/* Matmul, compute: for each step's output block (up to Mb x Nb tiles, in dst
 * for the whole K), dst[m][n] += A[m][k] x B[k][n] over the K blocks that
 * the data movement kernels push: A blocks (Mb x kb tiles, [m][k]) in circular
 * buffer 1, B blocks (kb x Nb tiles, [k][n]) in circular buffer 2. Then the
 * bias (row 0 of a bias tile, circular buffers 3 and 4), the activation, and the
 * block packed into circular buffer 16 (always Mb x Nb pages pushed, the
 * block's own tiles first, [m][n] with its width).
 *
 * With flags & 1024 (keep), A's K blocks stay for all of a core's steps
 * along one row of blocks (they come once); with flags & 4096 (keep_b, one
 * column of blocks), all of B's K blocks come at the core's first step and
 * stay for all of them.
 *
 * NN_MM_GATHER (a define; Mb 1): A is a convolution's patch matrix that is
 * never stored. conv_im2col_reader.c gathers each K block's 32 rows
 * row-major into circular buffer 7 and this kernel tilizes them into
 * circular buffer 1, where the product reads them as usual.
 * NN_MM_UNTILIZE (a define; Mb 1): each block goes to circular buffer 16
 * untilized (row-major pages), through circular buffer 10.
 *
 * NN_MM_POOL (a define, with NN_MM_GATHER): a max pooling fused after the
 * product (runtime arg 51: rows | groups << 16). A step's output tile row
 * is the max of `rows` gathered tile rows' products (the window's rows of
 * the pooling, gathered one after the other) and, in each, of `groups`
 * column groups of nc / groups tiles (its columns: B holds their weights
 * group after group); the bias and the activation follow on one group's
 * tiles, which alone are packed. Valid for an activation that keeps order
 * (max(f(a), f(b)) = f(max(a, b))), as the bias does: nn_conv.c fuses only
 * such.
 * NN_MM_ACT (a define): the activation's SFPU chain on dst 0; the block then
 * goes through circular buffer 0 tile by tile, as unary_compute.c runs it.
 * It is every activation's chain in a switch on nn_op (runtime arg 46, the
 * lmnn_unary_op) reading its parameters from nn_param[0..2] (runtime args
 * 43..45, nn_unary_chain), so one compiled kernel serves every activation
 * and parameter value.
 * NN_MM_TA (a define): A tiles arrive as stored (a transposed); each is
 * transposed through the spare dst register Mb * Nb into circular buffer 5
 * first (under acquire_dst, which lets math and packs interleave).
 *
 * Runtime args: the matmul geometry (nn_matmul.c's ARG_*); x and y (args 41
 * and 42) are the core's place in the gx x gy grid, which need not be its
 * coordinates (nn_matmul.c may fold the grid over the device). Args 47..49,
 * c, cg, ocg (c 0: none): B is block-diagonal over groups (nn_mm_groups), and
 * the products of its tiles outside every group are skipped. Arg 51: the
 * fused pooling's rows and groups (NN_MM_POOL). */
#include "compute_kernel_api.h"

#define CB_INTERM 0
#define CB_A 1
#define CB_B 2
#define CB_ONES 3
#define CB_BIAS 4
#define CB_AT 5
#define CB_ROWS 7 /* NN_MM_GATHER: A's rows as gathered */
#define CB_OUT 16
/* Where blocks are packed: the output, or with NN_MM_UNTILIZE tiles on
 * their way to it, untilized (row-major pages). */
#ifdef NN_MM_UNTILIZE
#define CB_PACK 10
#else
#define CB_PACK CB_OUT
#endif

#ifdef NN_MM_TA
#define DST_ACQUIRE() acquire_dst()
#define DST_TO_PACK() (void)0
#define DST_RELEASE() release_dst()
#define CB_AM CB_AT
#else
#define DST_ACQUIRE() tile_regs_acquire()
#define DST_TO_PACK() (tile_regs_commit(), tile_regs_wait())
#define DST_RELEASE() tile_regs_release()
#define CB_AM CB_A
#endif

/* The block in dst (mr x nc tiles), through the activation, to its place in
 * circular buffer 16; releases dst. An activation of one call on its
 * register (flags & 2048) runs on each tile where it is; others use dst
 * registers beyond their tile, so each tile goes through circular buffer 0
 * and back to register 0. */
static void finish_block(uint32_t mr, uint32_t nc, bool in_place) {
#ifdef NN_MM_ACT
    uint32_t nn_param[3] = {get_arg_val(43), get_arg_val(44), get_arg_val(45)};
    uint32_t nn_op = get_arg_val(46);
    (void)nn_param;
    (void)nn_op;
    if (in_place) {
        for (uint32_t nn_t = 0; nn_t < mr * nc; nn_t++)
            NN_MM_ACT_AT;
        DST_TO_PACK();
        for (uint32_t t = 0; t < mr * nc; t++)
            pack_tile(t, CB_PACK);
        DST_RELEASE();
        return;
    }
    DST_TO_PACK();
    cb_reserve_back(CB_INTERM, mr * nc);
    for (uint32_t t = 0; t < mr * nc; t++)
        pack_tile(t, CB_INTERM);
    cb_push_back(CB_INTERM, mr * nc);
    DST_RELEASE();
    for (uint32_t t = 0; t < mr * nc; t++) {
        cb_wait_front(CB_INTERM, 1);
        DST_ACQUIRE();
        copy_tile(CB_INTERM, 0, 0);
        NN_MM_ACT;
        DST_TO_PACK();
        pack_tile(0, CB_PACK);
        DST_RELEASE();
        cb_pop_front(CB_INTERM, 1);
    }
#else
    (void)in_place;
    DST_TO_PACK();
    for (uint32_t t = 0; t < mr * nc; t++)
        pack_tile(t, CB_PACK);
    DST_RELEASE();
#endif
}

/* dst += row 0 of the bias tile, on every row of the block whose first row
 * is r: broadcast onto the zeros tile (ones tile 2) and added to dst; but
 * for a matrix's last tile row with padding rows, ones x bias, the ones
 * tile 1 having a 1 in the valid rows only, so the padding stays zero. */
static void add_bias(uint32_t r, uint32_t mr, uint32_t nc, uint32_t nb, uint32_t mt,
                     uint32_t mlast) {
    cb_wait_front(CB_BIAS, nb);
    for (uint32_t m = 0; m < mr; m++) {
        bool padded = (r + m) % mt == mt - 1 && mlast < 32;
        for (uint32_t n = 0; n < nc; n++) {
            if (padded)
                matmul_tiles(CB_ONES, CB_BIAS, 1, n, m * nc + n, 0);
            else
                lm_binary_tiles_acc(LM_BINARY_ADD, LM_BCAST_ROW, CB_ONES, CB_BIAS, 2, n, m * nc + n,
                                    1);
        }
    }
    cb_pop_front(CB_BIAS, nb);
}

#ifdef NN_MM_POOL
/* One step of NN_MM_POOL: the output tile row's `rows` gathered tile rows
 * (each all of K, kt tiles), all tilized first (tilizing uses dst), then
 * their products with B (K x nc tiles, nb a row) and the max of them all,
 * left in dst 0 .. nc / groups - 1 (acquired here). The first product goes
 * to dst 0 .. nc - 1, each later one to dst nc / groups .., cleared first
 * (products add to dst). */
static void pool_step(uint32_t kt, uint32_t nc, uint32_t nb, uint32_t rows, uint32_t groups) {
    uint32_t nco = nc / groups;
    for (uint32_t t = 0; t < rows; t++) {
        cb_wait_front(CB_ROWS, kt);
        cb_reserve_back(CB_A, kt);
        tilize_block(CB_ROWS, kt, CB_A);
        cb_push_back(CB_A, kt);
        cb_pop_front(CB_ROWS, kt);
    }
    cb_wait_front(CB_A, rows * kt);
    DST_ACQUIRE();
    for (uint32_t t = 0; t < rows; t++) {
        uint32_t at = t == 0 ? 0 : nco;
        for (uint32_t n = 0; t > 0 && n < nc; n++)
            fill_tile(at + n, 0.0f);
        for (uint32_t k = 0; k < kt; k++)
            for (uint32_t n = 0; n < nc; n++)
                matmul_tiles(CB_A, CB_B, t * kt + k, k * nb + n, at + n, false);
        for (uint32_t g = t == 0 ? 1 : 0; g < groups; g++)
            for (uint32_t i = 0; i < nco; i++)
                binary_max_tile(i, at + g * nco + i, i);
    }
    cb_pop_front(CB_A, rows * kt);
}
#endif

void kernel_main(void) {
    uint32_t mt = get_arg_val(0), kt = get_arg_val(1), nt = get_arg_val(2), rows = get_arg_val(3);
    uint32_t mbg = get_arg_val(4), nbk = get_arg_val(5), mbk = get_arg_val(6);
    uint32_t mb = get_arg_val(7), nb = get_arg_val(8), kb = get_arg_val(9);
    uint32_t gx = get_arg_val(10), gy = get_arg_val(11), si = get_arg_val(12);
    uint32_t sj = get_arg_val(13), mlast = get_arg_val(14), flags = get_arg_val(16);
    bool mcast_a = flags & 1, mcast_b = flags & 2, bias = flags & 4, tb = flags & 16;
    bool keep = flags & 1024, act_in_place = flags & 2048, keep_b = flags & 4096;
    uint32_t x = get_arg_val(41), y = get_arg_val(42), kblocks = (kt + kb - 1) / kb, ablk = mb * kb;
    uint32_t gc = get_arg_val(47), gcg = get_arg_val(48), gocg = get_arg_val(49);
    mm_init(CB_A, CB_B, CB_PACK);
    if (bias) cb_wait_front(CB_ONES, 3);
    for (uint32_t s = 0; s < si * sj; s++) {
        uint32_t ii = s / sj, jj = s % sj, i = y + gy * ii, j = x + gx * jj;
        bool a_in = i < mbk && (mcast_a ? gx * jj < nbk : j < nbk);
        bool b_in = j < nbk && (mcast_b ? gy * ii < mbk : i < mbk);
        bool work = i < mbk && j < nbk;
        uint32_t r0 = 0, mr = 0, nc = 0;
        if (work) {
            uint32_t g = i / mbg, bi = i % mbg;
            r0 = g * rows + bi * mb;
            mr = rows - bi * mb < mb ? rows - bi * mb : mb;
            nc = nt - j * nb < nb ? nt - j * nb : nb;
            cb_reserve_back(CB_PACK, mb * nb);
        }
        /* With `keep`, a core's steps along a row of blocks share A: its K
         * blocks come once, at the row's first step, and stay until the
         * last (each waited for as it comes, at the first). With `keep_b`
         * (one column of blocks) all of B comes at the core's first step
         * and stays. */
        bool a_first = !keep || jj == 0;
        bool a_last = !keep || jj + 1 == sj || x + gx * (jj + 1) >= nbk;
        bool b_first = !keep_b || s == 0;
#ifdef NN_MM_POOL
        /* (Gathered: one K block, all of B kept, one column block.) The
         * output block is one column group. */
        if (b_in && b_first) cb_wait_front(CB_B, kt * nb);
        if (work) {
            uint32_t prow = get_arg_val(51) & 0xffff, pgrp = get_arg_val(51) >> 16;
            pool_step(kt, nc, nb, prow, pgrp);
            nc /= pgrp;
            if (bias) add_bias(r0, mr, nc, nb, mt, mlast);
            finish_block(mr, nc, act_in_place);
        }
#else
        uint32_t a0 = 0, b0 = 0; /* where the K block's A and B tiles start */
        for (uint32_t q = 0; q < kblocks; q++) {
#ifdef NN_MM_GATHER
            /* The block's rows, row-major as gathered, tilized here. */
            if (a_in && a_first) {
                uint32_t kk = kt - q * kb < kb ? kt - q * kb : kb;
                cb_wait_front(CB_ROWS, kb);
                cb_reserve_back(CB_A, ablk);
                tilize_block(CB_ROWS, kk, CB_A);
                cb_push_back(CB_A, ablk);
                cb_pop_front(CB_ROWS, kb);
            }
#endif
            if (a_in && a_first) cb_wait_front(CB_A, keep ? a0 + ablk : ablk);
            if (b_in && b_first) cb_wait_front(CB_B, b0 + kb * nb);
            if (work) {
                uint32_t kk = kt - q * kb < kb ? kt - q * kb : kb;
                bool last = q + 1 == kblocks;
                if (q == 0) DST_ACQUIRE();
#ifdef NN_MM_TA
                uint32_t spare = mb * nb;
                cb_reserve_back(CB_AT, mb * kb);
                for (uint32_t m = 0; m < mr; m++)
                    for (uint32_t k = 0; k < kk; k++) {
                        transpose_wh_tile(CB_A, m * kb + k, spare);
                        pack_tile_at(spare, CB_AT, m * kb + k);
                    }
                cb_push_back(CB_AT, mb * kb);
                cb_wait_front(CB_AT, mb * kb);
#endif
                /* k outermost: each A and B tile is unpacked once. */
                for (uint32_t k = 0; k < kk; k++) {
                    uint32_t live = nn_group_mask(q * kb + k, gc, gcg, gocg, j * nb, nc);
                    for (uint32_t m = 0; m < mr; m++)
                        for (uint32_t n = 0; n < nc; n++)
                            if (live >> n & 1)
                                matmul_tiles(CB_AM, CB_B, a0 + m * kb + k, b0 + k * nb + n,
                                             m * nc + n, tb);
                }
                if (last) {
                    if (bias) add_bias(r0, mr, nc, nb, mt, mlast);
                    finish_block(mr, nc, act_in_place);
                }
#ifdef NN_MM_TA
                cb_pop_front(CB_AT, mb * kb);
#endif
            }
            if (a_in && !keep) cb_pop_front(CB_A, ablk);
            if (b_in && !keep_b) cb_pop_front(CB_B, kb * nb);
            a0 += keep ? ablk : 0;
            b0 += keep_b ? kb * nb : 0;
        }
#endif
        if (a_in && keep && a_last) cb_pop_front(CB_A, kblocks * ablk);
        if (work) cb_push_back(CB_PACK, mb * nb);
#ifdef NN_MM_UNTILIZE
        /* (Mb is 1.) */
        if (work) {
            cb_wait_front(CB_PACK, nb);
            cb_reserve_back(CB_OUT, nb);
            untilize_block(CB_PACK, nc, CB_OUT);
            cb_push_back(CB_OUT, nb);
            cb_pop_front(CB_PACK, nb);
        }
#endif
    }
    /* keep_b: all of B, if the core had a step (its first). */
    if (keep_b && y < mbk) cb_pop_front(CB_B, kblocks * kb * nb);
    if (bias) cb_pop_front(CB_ONES, 3);
}
