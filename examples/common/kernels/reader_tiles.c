/* Reads `tiles` tiles, starting at tile `first`, from one or two interleaved
 * DRAM buffers into circular buffers 0 and 1, one tile at a time.
 * Runtime args: tiles, address of A, address of B (0: unary, only A), first. */
#include "dataflow_api.h"

void kernel_main(void) {
    uint32_t tiles = get_arg_val(0), a_addr = get_arg_val(1), b_addr = get_arg_val(2);
    uint32_t first = get_arg_val(3);
    uint32_t tile_a = get_tile_size(0);
    InterleavedAddrGenFast a = {.bank_base_address = a_addr, .page_size = tile_a, .is_dram = true};
    InterleavedAddrGenFast b = {.bank_base_address = b_addr, .page_size = tile_a, .is_dram = true};
    for (uint32_t t = 0; t < tiles; t++) {
        cb_reserve_back(0, 1);
        noc_async_read_tile(first + t, &a, get_write_ptr(0));
        if (b_addr) {
            cb_reserve_back(1, 1);
            noc_async_read_tile(first + t, &b, get_write_ptr(1));
        }
        noc_async_read_barrier();
        cb_push_back(0, 1);
        if (b_addr) cb_push_back(1, 1);
    }
}
