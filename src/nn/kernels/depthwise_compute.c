/* Depthwise convolution, compute: each unit of conv_im2col_reader.c's
 * DEPTHWISE mode arrives once per tap (a row-major block in circular buffer
 * 0, then the unit's weight tiles of the tap in circular buffer 4, row 0 of
 * each holding the tap's weight per channel). The taps are taken in batches
 * (runtime arg 32 taps each; circular buffers 1 and 4 hold a batch): each
 * block of the batch is tilized into circular buffer 1, then every product
 * of the batch is added in dst to the sum so far (the binary operation's
 * accumulate form, the weights broadcast down the rows), up to 8 tiles at a
 * time. dst cannot hold the sums across batches, since a tilize needs it
 * released: between batches they go round circular buffer 5 in float32
 * tiles, the last batch's packed to circular buffer 16 for tile_units.c.
 * The sums are the same whatever the batch: float32, taps in order. No
 * product is ever stored.
 *
 * After the last batch, with a bias (runtime arg 34): each sum plus mask x
 * bias, the unit's bias tiles in circular buffer 6 (row 0 broadcast down
 * the rows) and the mask circular buffer 7's tile 0 (ones) or, in a
 * matrix's last tile row when its rows end inside it, tile 1 (ones in those
 * rows only), so that the padding rows stay zero. Then the activation (arg
 * 37 its lmnn_unary_op, args 38..40 its nn_param, arg 41 whether it runs
 * on each tile where it is in dst; NN_DW_ACT and NN_DW_ACT_AT, defines, are
 * every activation's chain as in matmul_compute.c): an activation that
 * needs registers beyond its tile's takes the tiles one at a time through
 * circular buffer 8 and dst 0. Only activations with f(0) = 0 come here.
 * Runtime args as conv_im2col_reader.c. */
#include "compute_kernel_api.h"

#define CB_ROWS 0
#define CB_TAP 1
#define CB_W 4
#define CB_ACC 5
#define CB_BIAS 6
#define CB_MASK 7
#define CB_INTERM 8
#define CB_OUT 16
/* Tiles dst holds in float32. */
#define DW_GROUP 8

/* The n tiles in dst, through the activation (if any), packed to `to`;
 * releases dst. */
static void finish_group(uint32_t n, uint32_t to, bool act) {
#ifdef NN_DW_ACT
    uint32_t nn_param[3] = {get_arg_val(38), get_arg_val(39), get_arg_val(40)};
    uint32_t nn_op = get_arg_val(37);
    (void)nn_param;
    if (act && get_arg_val(41)) {
        for (uint32_t nn_t = 0; nn_t < n; nn_t++)
            NN_DW_ACT_AT;
    } else if (act) {
        tile_regs_commit();
        tile_regs_wait();
        cb_reserve_back(CB_INTERM, n);
        for (uint32_t i = 0; i < n; i++)
            pack_tile(i, CB_INTERM);
        cb_push_back(CB_INTERM, n);
        tile_regs_release();
        for (uint32_t i = 0; i < n; i++) {
            cb_wait_front(CB_INTERM, 1);
            tile_regs_acquire();
            copy_tile(CB_INTERM, 0, 0);
            NN_DW_ACT;
            tile_regs_commit();
            tile_regs_wait();
            pack_tile(0, to);
            tile_regs_release();
            cb_pop_front(CB_INTERM, 1);
        }
        return;
    }
#else
    (void)act;
#endif
    tile_regs_commit();
    tile_regs_wait();
    for (uint32_t i = 0; i < n; i++)
        pack_tile(i, to);
    tile_regs_release();
}

void kernel_main(void) {
    uint32_t first = get_arg_val(0), units = get_arg_val(1);
    uint32_t h = get_arg_val(2), ht = get_arg_val(4), wt = get_arg_val(5);
    uint32_t block = get_arg_val(6);
    uint32_t taps = get_arg_val(12) * get_arg_val(13), batch = get_arg_val(32);
    bool bias = get_arg_val(34), act = get_arg_val(37) != 0;
    uint32_t room = block < wt ? block : wt;
    if (bias) cb_wait_front(CB_MASK, 2); /* kept to the end */
    for (uint32_t u = first; u < first + units; u++) {
        nn_row_block rb = nn_row_block_of(u, ht, wt, block);
        uint32_t tiles = rb.tiles, mask = h - rb.tr * 32 < 32;
        for (uint32_t t0 = 0; t0 < taps; t0 += batch) {
            uint32_t nt = taps - t0 < batch ? taps - t0 : batch;
            bool last = t0 + nt == taps;
            for (uint32_t j = 0; j < nt; j++) {
                cb_wait_front(CB_ROWS, room);
                cb_reserve_back(CB_TAP, room);
                tilize_block(CB_ROWS, tiles, CB_TAP);
                cb_push_back(CB_TAP, room);
                cb_pop_front(CB_ROWS, room);
            }
            cb_wait_front(CB_TAP, nt * room);
            cb_wait_front(CB_W, nt * room);
            if (t0) cb_wait_front(CB_ACC, room);
            if (last && bias) cb_wait_front(CB_BIAS, room);
            uint32_t to = last ? CB_OUT : CB_ACC;
            cb_reserve_back(to, room);
            for (uint32_t i0 = 0; i0 < tiles; i0 += DW_GROUP) {
                uint32_t n = tiles - i0 < DW_GROUP ? tiles - i0 : DW_GROUP;
                tile_regs_acquire();
                if (t0)
                    for (uint32_t i = 0; i < n; i++)
                        copy_tile(CB_ACC, i0 + i, i);
                /* Tap by tap (the sum's order), each tile's product added
                 * to its sum; the very first product starts it. */
                for (uint32_t j = 0; j < nt; j++)
                    for (uint32_t i = 0; i < n; i++)
                        lm_binary_tiles_acc(LM_BINARY_MUL, LM_BCAST_ROW, CB_TAP, CB_W,
                                            j * room + i0 + i, j * room + i0 + i, i, t0 + j != 0);
                if (last && bias)
                    for (uint32_t i = 0; i < n; i++)
                        lm_binary_tiles_acc(LM_BINARY_MUL, LM_BCAST_ROW, CB_MASK, CB_BIAS, mask,
                                            i0 + i, i, 1);
                finish_group(n, to, last && act);
            }
            cb_push_back(to, room);
            cb_pop_front(CB_TAP, nt * room);
            cb_pop_front(CB_W, nt * room);
            if (t0) cb_pop_front(CB_ACC, room);
            if (last && bias) cb_pop_front(CB_BIAS, room);
        }
    }
}
