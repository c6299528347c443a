/* Loads this core's block of B (Kt x Nb tiles, starting at tile column
 * n_start of a B that is Nt tiles wide) into circular buffer 1, where it stays
 * for the whole launch. Either the core reads it itself, or one core of a
 * group reads it and multicasts it to the others (same L1 address on every
 * core), then releases them with semaphore 0.
 * Runtime args: b address, Kt, Nt, n_start, Nb, role (0 self, 1 sender,
 * 2 receiver), multicast rectangle x0, y0, x1, y1, number of receivers. */
#include "dataflow_api.h"

void kernel_main(void) {
    uint32_t b_addr = get_arg_val(0), kt = get_arg_val(1), nt = get_arg_val(2);
    uint32_t n_start = get_arg_val(3), nb = get_arg_val(4), role = get_arg_val(5);
    uint32_t tiles = kt * nb, tile = get_tile_size(1);

    cb_reserve_back(1, tiles);
    uint32_t base = get_write_ptr(1);
    volatile uint32_t *go = (volatile uint32_t *)get_semaphore(0);
    if (role == 2) {
        noc_semaphore_wait(go, 1);
    } else {
        InterleavedAddrGenFast b = {
            .bank_base_address = b_addr, .page_size = tile, .is_dram = true};
        for (uint32_t k = 0; k < kt; k++)
            for (uint32_t n = 0; n < nb; n++)
                noc_async_read_tile(k * nt + n_start + n, &b, base + (k * nb + n) * tile);
        noc_async_read_barrier();
        if (role == 1) {
            uint64_t dst = get_noc_multicast_addr(get_arg_val(6), get_arg_val(7), get_arg_val(8),
                                                  get_arg_val(9), base);
            noc_async_write_multicast(base, dst, tiles * tile, get_arg_val(10));
            noc_async_write_barrier();
            noc_semaphore_set(go, 1);
            uint32_t sem = get_semaphore(0);
            noc_semaphore_set_multicast(sem,
                                        get_noc_multicast_addr(get_arg_val(6), get_arg_val(7),
                                                               get_arg_val(8), get_arg_val(9), sem),
                                        get_arg_val(10));
        }
    }
    cb_push_back(1, tiles);
}
