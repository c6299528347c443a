/* Matmul, data movement 1: the B blocks (kb x Nb tiles, [k][n] with stride
 * Nb) of every step into circular buffer 2 from the tensor at common argument
 * 0 (multicast down each column of cores by its core at y = x % gy when flags & 2,
 * with semaphores b_ready and b_valid, as matmul_reader.c does along rows);
 * the bias tiles of the block's columns into circular buffer 4 (from common
 * argument 2), after the two "ones" tiles the bias is added with (circular
 * buffer 3); and the output block from circular buffer 16 to the tensor at
 * common argument 1, its padding zeroed at the right and bottom edges.
 * With flags & 4096 (keep_b) all of B's K blocks come once, at the core's
 * first step (matmul_compute.c keeps them). With flags & 8192 (rm_out; Mb
 * 1, one column of blocks) the block comes untilized, 32 rows of Nb * 32
 * elements, and its N valid columns go to a row-major tensor of pages of
 * `len` elements (runtime arg 50) as the same elements in the same order:
 * whole rows to a page (len a multiple of N) or whole pages to a row (N a
 * multiple of len).
 *
 * Runtime args: the matmul geometry (nn_matmul.c's ARG_*); x and y (args 41
 * and 42) are the core's place in the gx x gy grid, which need not be its
 * coordinates (nn_matmul.c may fold the grid over the device); args 47..49
 * the groups of a block-diagonal B (nn_group_mask), whose tiles outside
 * them are not read, and with flags & 16384 (compact_b) B holds of each
 * tile row only its tiles from the first to the last that meet a group
 * (nn_group_span), a row after another; arg 51 a fused pooling's window rows and column groups
 * (matmul_compute.c's NN_MM_POOL), of which the output is one group. */
#include "dataflow_api.h"

#define CB_B 2
#define CB_ONES 3
#define CB_BIAS 4
#define CB_ZEROS 6 /* one page of zeros to copy from (with flags & 512) */
#define CB_OUT 16

/* b's matrix for output matrix `ob` (see matmul_reader.c). */
static uint32_t b_batch(uint32_t ob) {
    uint32_t nd = get_arg_val(22), bb = 0;
    for (uint32_t d = nd; d-- > 0;) {
        uint32_t od = get_arg_val(23 + 3 * d);
        bb += ob % od * get_arg_val(25 + 3 * d);
        ob /= od;
    }
    return bb;
}

/* NoC address of a face's worth of zeros in this core's L1 (CB_ZEROS). */
static uint64_t zeros;

/* Zeroes the elements of the tile at `addr` outside its first `rows` rows and
 * `cols` columns: each face's partial rows a run each, its rows past the
 * valid ones one run, each a copy from `zeros` (a transfer rather than a
 * loop of interpreted stores: edge tiles are every tile of a narrow matmul). */
static void zero_outside(uint32_t addr, uint32_t fmt, uint32_t rows, uint32_t cols) {
    uint32_t es = fmt == NN_FMT_BF16 ? 2 : fmt == NN_FMT_BFP8 ? 1 : 4;
    uint32_t data = fmt == NN_FMT_BFP8 ? addr + 64 : addr; /* bfp8: mantissas after exponents */
    for (uint32_t f = 0; f < 4; f++) {
        uint32_t r0 = (f >> 1) * 16, c0 = (f & 1) * 16, face = data + f * 256 * es;
        uint32_t keep = cols <= c0 ? 0 : cols - c0 >= 16 ? 16 : cols - c0;
        uint32_t full = keep == 0 || rows <= r0 ? 0 : rows - r0 >= 16 ? 16 : rows - r0;
        for (uint32_t r = 0; keep < 16 && r < full; r++)
            noc_async_read(zeros, face + (r * 16 + keep) * es, (16 - keep) * es);
        if (full < 16) noc_async_read(zeros, face + full * 16 * es, (16 - full) * 16 * es);
    }
    noc_async_read_barrier();
}

/* The ones tiles (bfloat16): column 0 is 1 in all 32 rows of tile 0 and
 * in the first `mlast` rows of tile 1, everything else 0; tile 2 is zeros. */
static void make_ones(uint32_t addr, uint32_t mlast) {
    nn_zero(addr, 3 * 2048);
    for (uint32_t r = 0; r < 32; r++) {
        uint32_t e = (r >> 4) * 512 + (r & 15) * 16;
        *(volatile uint16_t *)(uintptr_t)(addr + 2 * e) = 0x3f80;
        if (r < mlast) *(volatile uint16_t *)(uintptr_t)(addr + 2048 + 2 * e) = 0x3f80;
    }
}

void kernel_main(void) {
    uint32_t mt = get_arg_val(0), kt = get_arg_val(1), nt = get_arg_val(2);
    uint32_t rows = get_arg_val(3), mbg = get_arg_val(4), nbk = get_arg_val(5);
    uint32_t mbk = get_arg_val(6), mb = get_arg_val(7), nb = get_arg_val(8);
    uint32_t kb = get_arg_val(9), gx = get_arg_val(10), gy = get_arg_val(11);
    uint32_t si = get_arg_val(12), sj = get_arg_val(13), mlast = get_arg_val(14);
    uint32_t nlast = get_arg_val(15), flags = get_arg_val(16), fmt = get_arg_val(17);
    bool mcast = flags & 2, bias = flags & 4, tb = flags & 16, zero_pad = flags & 512;
    bool keep_b = flags & 4096, rm_out = flags & 8192, compact_b = flags & 16384;
    uint32_t x = get_arg_val(41), y = get_arg_val(42), kblocks = (kt + kb - 1) / kb;
    uint32_t gc = get_arg_val(47), gcg = get_arg_val(48), gocg = get_arg_val(49);
    uint32_t tile = get_tile_size(CB_B), otile = get_tile_size(CB_OUT), block = kb * nb;
    InterleavedAddrGenFast b = {
        .bank_base_address = get_common_arg_val(0), .page_size = tile, .is_dram = flags & 64};
    /* With a pooling fused (matmul_compute.c's NN_MM_POOL: arg 51 holds
     * the column groups in its upper half) the output is one column group
     * of B's: ont of its nt tiles, onc of a block's nc. */
    uint32_t groups = get_arg_val(51) >> 16, ont = nt / groups;
    uint32_t len = get_arg_val(50), n = (ont - 1) * 32 + nlast, es = fmt == NN_FMT_BF16 ? 2 : 4;
    InterleavedAddrGenFast out = {.bank_base_address = get_common_arg_val(1),
                                  .page_size = rm_out ? len * es : otile,
                                  .is_dram = flags & 128};
    InterleavedAddrGenFast bs = {.bank_base_address = bias ? get_common_arg_val(2) : 0,
                                 .page_size = bias ? get_tile_size(CB_BIAS) : 0,
                                 .is_dram = flags & 256};
    uint32_t ready_sem = get_semaphore(get_arg_val(20)), valid_sem = get_semaphore(get_arg_val(21));
    volatile uint32_t *ready = (volatile uint32_t *)ready_sem;
    volatile uint32_t *valid = (volatile uint32_t *)valid_sem;
    uint32_t sy = x % gy; /* the column's sender, on the diagonal (see the reader) */
    uint64_t sender_ready = get_noc_addr(x, sy, ready_sem);
    uint64_t col_valid = get_noc_multicast_addr(x, 0, x, gy - 1, valid_sem);
    if (zero_pad) {
        cb_reserve_back(CB_ZEROS, 1); /* scratch: never pushed */
        uint32_t z = get_write_ptr(CB_ZEROS);
        nn_zero(z, get_tile_size(CB_ZEROS));
        zeros = get_noc_addr(my_x(), my_y(), z);
    }
    if (bias) {
        cb_reserve_back(CB_ONES, 3);
        make_ones(get_write_ptr(CB_ONES), mlast);
        cb_push_back(CB_ONES, 3);
    }
    /* B tile (k, n) of the step is at bbase + k * kstride + n * nstride. */
    uint32_t kstride = tb ? 1 : nt, nstride = tb ? kt : 1;
    for (uint32_t s = 0; s < si * sj; s++) {
        uint32_t ii = s / sj, jj = s % sj, i = y + gy * ii, j = x + gx * jj;
        bool work = i < mbk && j < nbk;
        uint32_t c0 = j * nb, nc = nt - c0 < nb ? nt - c0 : nb, onc = nc / groups;
        /* keep_b: B comes once, at the core's first step (nbk is 1). */
        if (j < nbk && (mcast ? gy * ii < mbk : i < mbk) && (!keep_b || s == 0)) {
            bool receiver = mcast && y != sy;
            uint32_t bbase = 0;
            if (!receiver) {
                uint32_t g = i / mbg, r0 = g * rows + i % mbg * mb;
                bbase = b_batch(r0 / mt) * kt * nt + c0 * nstride;
            }
            uint32_t row_at = 0; /* compact_b: tile row k's first tile */
            for (uint32_t q = 0; q < kblocks; q++) {
                cb_reserve_back(CB_B, block);
                uint32_t wp = get_write_ptr(CB_B);
                if (receiver) {
                    noc_semaphore_set(valid, 0);
                    noc_semaphore_inc(sender_ready, 1);
                    noc_semaphore_wait(valid, 1);
                } else {
                    uint32_t k0 = q * kb, kk = kt - k0 < kb ? kt - k0 : kb;
                    for (uint32_t k = 0; k < kk; k++) {
                        /* Tiles outside the groups stay unread: the compute
                         * kernel skips them. */
                        uint32_t live = nn_group_mask(k0 + k, gc, gcg, gocg, c0, nc);
                        uint32_t id = bbase + (k0 + k) * kstride, dst = wp + k * nb * tile;
                        if (compact_b) {
                            uint32_t lo, hi;
                            nn_group_span(k0 + k, gc, gcg, gocg, nt, &lo, &hi);
                            id = row_at + c0 - lo; /* tile c0's place, were it stored */
                            row_at += hi - lo + 1;
                        }
                        for (uint32_t n = 0; n < nc; n++, id += nstride, dst += tile)
                            if (live >> n & 1) noc_async_read_tile(id, &b, dst);
                    }
                    noc_async_read_barrier();
                    if (mcast) {
                        noc_semaphore_wait(ready, gy - 1);
                        noc_semaphore_set(ready, 0);
                        noc_async_write_multicast(wp, get_noc_multicast_addr(x, 0, x, gy - 1, wp),
                                                  block * tile, gy - 1);
                        noc_semaphore_set(valid, 1);
                        noc_semaphore_set_multicast(valid_sem, col_valid, gy - 1);
                        noc_async_write_barrier();
                    }
                }
                cb_push_back(CB_B, block);
            }
        }
        if (!work) continue;
        uint32_t g = i / mbg, bi = i % mbg, r0 = g * rows + bi * mb;
        uint32_t mr = rows - bi * mb < mb ? rows - bi * mb : mb;
        if (bias) {
            cb_reserve_back(CB_BIAS, nb);
            uint32_t wp = get_write_ptr(CB_BIAS);
            for (uint32_t n = 0; n < onc; n++)
                noc_async_read_tile(c0 + n, &bs, wp + n * bs.page_size);
            noc_async_read_barrier();
            cb_push_back(CB_BIAS, nb);
        }
        cb_wait_front(CB_OUT, mb * nb);
        uint32_t rp = get_read_ptr(CB_OUT);
        if (rm_out) {
            /* Row q of the block is row r0 * 32 + q of the matrix, elements
             * (r0 * 32 + q) * n.. of the flat order. */
            uint32_t rows = r0 % mt == mt - 1 ? mlast : 32, pitch = onc * 32 * es;
            for (uint32_t q = 0; q < rows;) {
                uint32_t at = (r0 * 32 + q) * n, page = at / len, off = at % len;
                if (len % n == 0) {
                    uint32_t cnt = (len - off) / n < rows - q ? (len - off) / n : rows - q;
                    lm_noc_async_write_strided(rp + q * pitch, pitch,
                                               get_noc_addr_interleaved(page, &out, off * es),
                                               n * es, n * es, cnt);
                    q += cnt;
                } else {
                    for (uint32_t j = 0; j < n / len; j++)
                        noc_async_write(rp + q * pitch + j * len * es,
                                        get_noc_addr_interleaved(page + j, &out, 0), len * es);
                    q++;
                }
            }
            noc_async_write_barrier();
            cb_pop_front(CB_OUT, mb * nb);
            continue;
        }
        for (uint32_t m = 0; m < mr; m++) {
            uint32_t r = r0 + m, vrows = r % mt == mt - 1 ? mlast : 32;
            for (uint32_t n = 0; n < onc; n++, rp += otile) {
                uint32_t vcols = c0 + n == ont - 1 ? nlast : 32;
                if (zero_pad && (vrows < 32 || vcols < 32)) zero_outside(rp, fmt, vrows, vcols);
                noc_async_write_tile(r * ont + c0 + n, &out, rp);
            }
        }
        noc_async_write_barrier();
        cb_pop_front(CB_OUT, mb * nb);
    }
}
