/* Channels-last group normalisation reader (norm_cl_compute.c's). Each
 * matrix of the input is one sample: rows are positions, columns channels.
 * A unit of work is one span of a sample: s tile columns from tile column
 * j0, the fewest whole tile columns that hold whole groups (s = lcm(cg, 32)
 * / 32, cut short by the matrix's last column). Three passes over the span,
 * each column by column and each column top to bottom, BLOCK tiles under
 * one barrier: for the mean, for the deviations, for the output (then each
 * column's weight and bias tiles first, into CBs 5 and 6).
 *
 * Before the first unit: the scaler tile (1 / count at [0][0]) into CB 1,
 * a tile of ones into CB 2, when the matrix's last tile row is partly
 * padding the mask of its valid rows into CB 3, and the group maps into
 * CB 7: map k has a 1 at [r][g] where the span's channel 32k + r is in the
 * span's group g (a span starts a group, so the maps are the same for every
 * span; one map serves all when groups are whole tile columns).
 *
 * Compile-time args: is_dram, weight mode (0 absent, 1 a [C] tensor: tile
 * j's row 0 read), weight is_dram, weight element size, bias mode, bias
 * is_dram, bias element size, masks.
 * Runtime args: first, count (units), Ht, Wt, H, s, cg (channels per
 * group), scaler bits, eps bits, spans per sample.
 * Common args: input, weight, bias addresses (0 when absent), output. */
#include "dataflow_api.h"

#define A(i) get_arg_val(i)
#define C(i) get_compile_time_arg_val(i)
#define ONE_BITS 0x3f800000u
#define BLOCK 6

static void fill_ones(uint32_t addr, uint32_t rows) {
    nn_fill_u32(addr, 4096, ONE_BITS);
    nn_tile_fill_outside(addr, NN_FMT_FLOAT32, rows, 32, 0);
}

/* Row 0 of parameter tile j (its first face row in faces 0 and 1) into
 * `cb`; the rest of the page is left as it is: only row 0 is broadcast. */
static void param_row(uint32_t cb, const InterleavedAddrGenFast *s, uint32_t esize, uint32_t j) {
    cb_reserve_back(cb, 1);
    uint32_t addr = get_write_ptr(cb);
    uint64_t src = get_noc_addr_interleaved(j, s, 0);
    noc_async_read(src, addr, 16 * esize);
    noc_async_read(src + 256 * esize, addr + 256 * esize, 16 * esize);
    noc_async_read_barrier();
    cb_push_back(cb, 1);
}

void kernel_main(void) {
    uint32_t first = A(0), count = A(1), ht = A(2), wt = A(3), h = A(4), s = A(5), cg = A(6);
    uint32_t nq = A(9);
    InterleavedAddrGenFast in = {
        .bank_base_address = get_common_arg_val(0), .page_size = get_tile_size(0), .is_dram = C(0)};
    InterleavedAddrGenFast wt_s = {.bank_base_address = get_common_arg_val(1),
                                   .page_size = C(1) ? get_tile_size(5) : 4096,
                                   .is_dram = C(2)};
    InterleavedAddrGenFast bs = {.bank_base_address = get_common_arg_val(2),
                                 .page_size = C(4) ? get_tile_size(6) : 4096,
                                 .is_dram = C(5)};
    cb_reserve_back(1, 1);
    nn_zero(get_write_ptr(1), 4096);
    *(volatile uint32_t *)(uintptr_t)get_write_ptr(1) = A(7);
    cb_push_back(1, 1);
    cb_reserve_back(2, 1);
    fill_ones(get_write_ptr(2), 32);
    cb_push_back(2, 1);
    if (C(7)) {
        cb_reserve_back(3, 1);
        fill_ones(get_write_ptr(3), h % 32);
        cb_push_back(3, 1);
    }
    uint32_t maps = cg % 32 ? s : 1;
    cb_reserve_back(7, maps);
    for (uint32_t k = 0, addr = get_write_ptr(7); k < maps; k++, addr += 4096) {
        nn_zero(addr, 4096);
        for (uint32_t r = 0; r < 32; r++) {
            uint32_t g = (32 * k + r) / cg; /* < 32: a span holds 32 / gcd(cg, 32) groups */
            uint32_t face = (r / 16) * 2 + g / 16;
            *(volatile uint32_t *)(uintptr_t)(addr + 4 * (face * 256 + r % 16 * 16 + g % 16)) =
                ONE_BITS;
        }
    }
    cb_push_back(7, maps);

    const volatile uint32_t *cfg = lm_l1_word(LM_L1_CB_CONFIG);
    uint32_t fifo = cfg[0], fifo_end = cfg[0] + cfg[1], page = cfg[2];
    for (uint32_t u = first; u < first + count; u++) {
        uint32_t j0 = u % nq * s, span = wt - j0 < s ? wt - j0 : s;
        uint32_t base = u / nq * ht * wt + j0;
        for (uint32_t pass = 0; pass < 3; pass++)
            for (uint32_t j = 0; j < span; j++) {
                if (pass == 2 && C(1)) param_row(5, &wt_s, C(3), j0 + j);
                if (pass == 2 && C(4)) param_row(6, &bs, C(6), j0 + j);
                for (uint32_t i0 = 0; i0 < ht; i0 += BLOCK) {
                    uint32_t b = ht - i0 < BLOCK ? ht - i0 : BLOCK;
                    cb_reserve_back(0, b);
                    /* A column's last block may be short: blocks wrap. */
                    uint32_t addr = get_write_ptr(0);
                    for (uint32_t i = 0; i < b; i++) {
                        noc_async_read_tile(base + (i0 + i) * wt + j, &in, addr);
                        addr += page;
                        if (addr >= fifo_end) addr = fifo;
                    }
                    noc_async_read_barrier();
                    cb_push_back(0, b);
                }
            }
    }
}
