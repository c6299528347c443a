/* Writes `tiles` tiles from circular buffer 16 to an interleaved DRAM buffer.
 * Runtime args: tiles, destination address, first tile index. */
#include "dataflow_api.h"

void kernel_main(void) {
    uint32_t tiles = get_arg_val(0), dst_addr = get_arg_val(1), first = get_arg_val(2);
    InterleavedAddrGenFast dst = {
        .bank_base_address = dst_addr, .page_size = get_tile_size(16), .is_dram = true};
    for (uint32_t t = 0; t < tiles; t++) {
        cb_wait_front(16, 1);
        noc_async_write_tile(first + t, &dst, get_read_ptr(16));
        noc_async_write_barrier();
        cb_pop_front(16, 1);
    }
}
