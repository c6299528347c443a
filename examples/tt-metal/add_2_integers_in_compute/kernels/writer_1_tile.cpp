// Writes the tile of CB 16 to the output (DRAM bank 0). Late-2025 dialect.
#include <stdint.h>

#include "dataflow_api.h"

void kernel_main() {
    uint32_t dst_addr = get_arg_val<uint32_t>(0);
    constexpr uint32_t cb_id_out0 = tt::CB::c_out0;
    cb_wait_front(cb_id_out0, 1);
    noc_async_write(get_read_ptr(cb_id_out0), get_noc_addr_from_bank_id<true>(0, dst_addr),
                    get_tile_size(cb_id_out0));
    noc_async_write_barrier();
    cb_pop_front(cb_id_out0, 1);
}
