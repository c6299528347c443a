/* Reduction reader: for each unit of work (an output tile, or a chunk of one
 * when partial results are combined later) reads the input tiles that reduce
 * into it into circular buffer 0 -- twice for var (mean pass, then deviation
 * pass). Before the first unit it writes the scaler tiles (element [0][0] is
 * what reduce_tile scales by) into CB 1, a tile of ones into CB 5 and, for
 * var, the padding masks into CB 2; so the program needs no host data.
 *
 * Tiles are found by an odometer over the input's tile index space: the kept
 * dims (sizes and tile strides, the unit's output tile enumerates them
 * row-major) and the reduced dims (enumerated row-major for each unit).
 *
 * Where max or min read the padding of an edge tile, it is filled with -Inf
 * (+Inf) first, in the reduced directions only: the padding of kept
 * directions stays zero so the output's padding comes out zero.
 *
 * No compile-time args.
 * Runtime args: first, count (units), Ht, Wt, H, W, chunks per output tile,
 * chunk, tiles reduced per output tile, scaler bits, mean scaler bits, var
 * correction factor bits, fill bits (0: no fill), masks, then the compute
 * kernel's mode, func, pre, post, var, partial, red_h, red_w, then is_dram
 * and the input's format, then kept dim count, reduced dim count, then (size, stride) of each kept
 * and each reduced dim (runtime, so that one compiled kernel serves every shape and reduction).
 * Common args: input address. */
#include "dataflow_api.h"

#define A(i) get_arg_val(i)
#define DIMS 24

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

/* A tile of float32 zeros with element [0][0] = bits. */
static void scalar_tile(uint32_t addr, uint32_t bits) {
    nn_zero(addr, 4096);
    *(volatile uint32_t *)(uintptr_t)addr = bits;
}

/* A float32 tile of 1.0 in its first rows x cols, 0 elsewhere. */
static void mask_tile(uint32_t addr, uint32_t rows, uint32_t cols) {
    nn_fill_u32(addr, 4096, 0x3f800000u);
    nn_tile_fill_outside(addr, NN_FMT_FLOAT32, rows, cols, 0);
}

void kernel_main(void) {
    uint32_t is_dram = A(22), fmt = A(23);
    uint32_t red_h = A(20), red_w = A(21), var = A(18);
    uint32_t fill = A(12), masks = A(13);
    uint32_t first = A(0), count = A(1), ht = A(2), wt = A(3), h = A(4), w = A(5);
    uint32_t chunks = A(6), chunk = A(7), n_red = A(8);
    InterleavedAddrGenFast in = {.bank_base_address = get_common_arg_val(0),
                                 .page_size = get_tile_size(0),
                                 .is_dram = is_dram};

    cb_reserve_back(1, 2);
    scalar_tile(get_write_ptr(1), A(9));
    scalar_tile(get_write_ptr(1) + 4096, A(10));
    cb_push_back(1, 2);
    cb_reserve_back(5, 1);
    mask_tile(get_write_ptr(5), 32, 32);
    cb_push_back(5, 1);
    if (masks) {
        uint32_t hr = red_h && h % 32 ? h % 32 : 32, wr = red_w && w % 32 ? w % 32 : 32;
        cb_reserve_back(2, 3);
        mask_tile(get_write_ptr(2), hr, 32);
        mask_tile(get_write_ptr(2) + 4096, 32, wr);
        mask_tile(get_write_ptr(2) + 8192, hr, wr);
        cb_push_back(2, 3);
    }

    for (uint32_t u = first; u < first + count; u++) {
        uint32_t base = kept_base(u / chunks), lo = u % chunks * chunk;
        uint32_t hi = lo + chunk < n_red ? lo + chunk : n_red;
        for (uint32_t pass = 0; pass <= var; pass++)
            for (uint32_t i = lo; i < hi; i++) {
                uint32_t t = base + reduced_offset(i);
                cb_reserve_back(0, 1);
                uint32_t addr = get_write_ptr(0);
                noc_async_read_tile(t, &in, addr);
                noc_async_read_barrier();
                if (fill) {
                    uint32_t rows, cols;
                    nn_tile_extent(t, ht, wt, h, w, &rows, &cols);
                    nn_tile_fill_outside(addr, fmt, red_h ? rows : 32, red_w ? cols : 32, fill);
                }
                cb_push_back(0, 1);
            }
    }
}
