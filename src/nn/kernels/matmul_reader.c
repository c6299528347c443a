/* Matmul, data movement 0: the A blocks (Mb x kb tiles, [m][k] with stride
 * kb; a block past the edge of A is pushed whole, its missing tiles unread)
 * of every step into circular buffer 1, from the tensor at common argument 0.
 *
 * With A multicast (flags & 1) the core at x = y % gx of each row of cores
 * reads the row's blocks and multicasts each to the others at the same L1
 * address (their circular buffers move in step); semaphore a_ready counts the
 * receivers that have room, a_valid tells them the block arrived. Otherwise
 * each core reads its own.
 *
 * With flags & 1024 (keep, never with multicast), a core's steps along one
 * row of blocks share the A blocks, read at the first.
 *
 * Runtime args: the matmul geometry (nn_matmul.c's ARG_*); x and y (args 41
 * and 42) are the core's place in the gx x gy grid, which need not be its
 * coordinates (nn_matmul.c may fold the grid over the device). */
#include "dataflow_api.h"

#define CB_A 1

/* a's matrix for output matrix `ob` (NumPy broadcasting over the batch dims
 * in the args: count, then (out dim, a stride, b stride) each). */
static uint32_t a_batch(uint32_t ob) {
    uint32_t nd = get_arg_val(22), ab = 0;
    for (uint32_t d = nd; d-- > 0;) {
        uint32_t od = get_arg_val(23 + 3 * d);
        ab += ob % od * get_arg_val(24 + 3 * d);
        ob /= od;
    }
    return ab;
}

void kernel_main(void) {
    uint32_t mt = get_arg_val(0), kt = get_arg_val(1), rows = get_arg_val(3);
    uint32_t mbg = get_arg_val(4), nbk = get_arg_val(5), mbk = get_arg_val(6);
    uint32_t mb = get_arg_val(7), kb = get_arg_val(9), gx = get_arg_val(10);
    uint32_t gy = get_arg_val(11), si = get_arg_val(12), sj = get_arg_val(13);
    uint32_t flags = get_arg_val(16);
    bool mcast = flags & 1, ta = flags & 8, keep = flags & 1024;
    uint32_t x = get_arg_val(41), y = get_arg_val(42), kblocks = (kt + kb - 1) / kb;
    uint32_t tile = get_tile_size(CB_A), block = mb * kb;
    InterleavedAddrGenFast a = {
        .bank_base_address = get_common_arg_val(0), .page_size = tile, .is_dram = flags & 32};
    uint32_t ready_sem = get_semaphore(get_arg_val(18)), valid_sem = get_semaphore(get_arg_val(19));
    volatile uint32_t *ready = (volatile uint32_t *)ready_sem;
    volatile uint32_t *valid = (volatile uint32_t *)valid_sem;
    /* The row's sender is on the diagonal, so that the senders (which do
     * all the reading) spread over the grid and the host's threads. */
    uint32_t sx = y % gx;
    uint64_t sender_ready = get_noc_addr(sx, y, ready_sem);
    uint64_t row_valid = get_noc_multicast_addr(0, y, gx - 1, y, valid_sem);
    /* Tile (m, k) of the block is at base[m] + k * kstride. */
    uint32_t base[16], kstride = ta ? mt : 1;
    for (uint32_t s = 0; s < si * sj; s++) {
        uint32_t ii = s / sj, jj = s % sj, i = y + gy * ii, j = x + gx * jj;
        if (!(i < mbk && (mcast ? gx * jj < nbk : j < nbk))) continue;
        if (keep && jj > 0) continue; /* the row's A blocks are still there */
        uint32_t g = i / mbg, bi = i % mbg, r0 = g * rows + bi * mb;
        uint32_t mr = rows - bi * mb < mb ? rows - bi * mb : mb;
        bool receiver = mcast && x != sx;
        if (!receiver)
            for (uint32_t m = 0; m < mr; m++) {
                uint32_t r = r0 + m, ab = a_batch(r / mt), rm = r % mt;
                base[m] = ta ? ab * kt * mt + rm : (ab * mt + rm) * kt;
            }
        for (uint32_t q = 0; q < kblocks; q++) {
            cb_reserve_back(CB_A, block);
            uint32_t wp = get_write_ptr(CB_A);
            if (receiver) {
                noc_semaphore_set(valid, 0);
                noc_semaphore_inc(sender_ready, 1);
                noc_semaphore_wait(valid, 1);
            } else {
                uint32_t k0 = q * kb, kk = kt - k0 < kb ? kt - k0 : kb;
                for (uint32_t m = 0; m < mr; m++) {
                    uint32_t id = base[m] + k0 * kstride, dst = wp + m * kb * tile;
                    for (uint32_t k = 0; k < kk; k++, id += kstride, dst += tile)
                        noc_async_read_tile(id, &a, dst);
                }
                noc_async_read_barrier();
                if (mcast) {
                    noc_semaphore_wait(ready, gx - 1);
                    noc_semaphore_set(ready, 0);
                    noc_async_write_multicast(wp, get_noc_multicast_addr(0, y, gx - 1, y, wp),
                                              block * tile, gx - 1);
                    noc_semaphore_set(valid, 1);
                    noc_semaphore_set_multicast(valid_sem, row_valid, gx - 1);
                    noc_async_write_barrier();
                }
            }
            cb_push_back(CB_A, block);
        }
    }
}
