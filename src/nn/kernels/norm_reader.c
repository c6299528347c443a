/* Normalisation reader (layer_norm, rms_norm, group_norm): for each group --
 * n consecutive tiles normalised together: a row of tiles (over the last
 * dim) or whole matrices (over the last dims, or a group's channels) -- reads
 * its tiles into CB 0 once per pass: mean (not for rms), deviations, output
 * (not when the compute keeps the group); with each output tile, its weight
 * and bias tiles into CBs 5 and 6 (or, when they are kept, the per-tile
 * ones only once, before the first group). Before
 * the first group: the scaler tile (1 / count at [0][0]) into CB 1, a tile of
 * ones into CB 2 and, where the last tile of a row or column of tiles is
 * partly padding, the masks (1.0 on the valid elements) into CB 3.
 *
 * Weight and bias (each mode 0 absent, 1 tile i of the group, 2 the
 * per-channel element c written at [0][0], c = (g % groups) * channels +
 * i / tiles_per_channel).
 *
 * Compile-time args: is_dram, mean pass, masks, red_h (masks over rows too),
 * weight mode, weight is_dram, weight element size, bias mode, bias is_dram,
 * bias element size, resident (the compute keeps the group after the
 * deviation pass: the output pass reads only weight and bias), params kept
 * (per-tile weight and bias are sent once, before the first group), x kept
 * (CB 0 holds a whole group: its tiles are read once, all with one barrier,
 * and serve both the mean and the deviation pass), row params (bit 0 weight,
 * bit 1 bias: per-tile parameters of mode 1, only broadcast from their row 0,
 * in an element format -- just that row is read, the rest of the page is
 * left as it is).
 * Runtime args: first, count (groups), n, Ht, Wt, H, W, scaler bits, groups
 * per sample, channels per group, tiles per channel.
 * Common args: input, weight, bias addresses (0 when absent), output. */
#include "dataflow_api.h"

#define A(i) get_arg_val(i)
#define C(i) get_compile_time_arg_val(i)
#define ONE_BITS 0x3f800000u

static void fill_ones(uint32_t addr, uint32_t rows, uint32_t cols) {
    nn_fill_u32(addr, 4096, ONE_BITS);
    nn_tile_fill_outside(addr, NN_FMT_FLOAT32, rows, cols, 0);
}

/* Reads the parameter tile for group g's tile i to `addr`. */
static void param_read(uint32_t addr, uint32_t mode, const InterleavedAddrGenFast *s,
                       uint32_t esize, uint32_t g, uint32_t i, uint32_t row) {
    if (mode == 1 && row) {
        /* Row 0: the first face row of faces 0 and 1 (16 elements each). */
        uint64_t src = get_noc_addr_interleaved(i, s, 0);
        noc_async_read(src, addr, 16 * esize);
        noc_async_read(src + 256 * esize, addr + 256 * esize, 16 * esize);
    } else if (mode == 1) {
        noc_async_read_tile(i, s, addr);
    } else {
        uint32_t c = g % A(8) * A(9) + i / A(10), e = c % 32;
        uint32_t face = e < 16 ? e : 256 + e - 16;
        noc_async_read(get_noc_addr_interleaved(c / 32, s, face * esize), addr, esize);
    }
}

/* Pushes the parameter tile for group g's tile i into `cb`. */
static void param(uint32_t cb, uint32_t mode, const InterleavedAddrGenFast *s, uint32_t esize,
                  uint32_t g, uint32_t i) {
    cb_reserve_back(cb, 1);
    param_read(get_write_ptr(cb), mode, s, esize, g, i, C(13) >> (cb - 5) & 1);
    noc_async_read_barrier();
    cb_push_back(cb, 1);
}

void kernel_main(void) {
    uint32_t mean_pass = C(1), masks = C(2), red_h = C(3);
    uint32_t wmode = C(4), bmode = C(7), resident = C(10), kept = C(11);
    uint32_t first = A(0), count = A(1), n = A(2), h = A(5), w = A(6);
    InterleavedAddrGenFast in = {
        .bank_base_address = get_common_arg_val(0), .page_size = get_tile_size(0), .is_dram = C(0)};
    InterleavedAddrGenFast wt = {
        .bank_base_address = get_common_arg_val(1), .page_size = get_tile_size(5), .is_dram = C(5)};
    InterleavedAddrGenFast bs = {
        .bank_base_address = get_common_arg_val(2), .page_size = get_tile_size(6), .is_dram = C(8)};
    cb_reserve_back(1, 1);
    nn_zero(get_write_ptr(1), 4096);
    *(volatile uint32_t *)(uintptr_t)get_write_ptr(1) = A(7);
    cb_push_back(1, 1);
    cb_reserve_back(2, 1);
    fill_ones(get_write_ptr(2), 32, 32);
    cb_push_back(2, 1);
    if (masks) {
        uint32_t hr = red_h && h % 32 ? h % 32 : 32, wr = w % 32 ? w % 32 : 32;
        cb_reserve_back(3, 3);
        fill_ones(get_write_ptr(3), hr, 32);
        fill_ones(get_write_ptr(3) + 4096, 32, wr);
        fill_ones(get_write_ptr(3) + 8192, hr, wr);
        cb_push_back(3, 3);
    }
    /* Resident groups keep per-tile weight and bias for the whole kernel:
     * all of them read under one barrier. */
    for (uint32_t cb = 5; kept && cb <= 6; cb++) {
        if ((cb == 5 ? wmode : bmode) != 1) continue;
        cb_reserve_back(cb, n);
        uint32_t addr = get_write_ptr(cb), page = get_tile_size(cb);
        for (uint32_t i = 0; i < n; i++, addr += page)
            param_read(addr, 1, cb == 5 ? &wt : &bs, C(cb == 5 ? 6 : 9), 0, i,
                       C(13) >> (cb - 5) & 1);
        noc_async_read_barrier();
        cb_push_back(cb, n);
    }
    uint32_t xkept = C(12);
    for (uint32_t g = first; g < first + count; g++)
        for (uint32_t pass = !mean_pass; pass < 3; pass++) {
            if (xkept && pass == !mean_pass) {
                cb_reserve_back(0, n);
                uint32_t addr = get_write_ptr(0), page = get_tile_size(0);
                for (uint32_t i = 0; i < n; i++, addr += page)
                    noc_async_read_tile(g * n + i, &in, addr);
                noc_async_read_barrier();
                cb_push_back(0, n);
            }
            for (uint32_t i = 0; i < n; i++) {
                if (!xkept && (pass < 2 || !resident)) {
                    cb_reserve_back(0, 1);
                    noc_async_read_tile(g * n + i, &in, get_write_ptr(0));
                    noc_async_read_barrier();
                    cb_push_back(0, 1);
                }
                if (pass == 2 && wmode && !(kept && wmode == 1)) param(5, wmode, &wt, C(6), g, i);
                if (pass == 2 && bmode && !(kept && bmode == 1)) param(6, bmode, &bs, C(9), g, i);
            }
        }
}
