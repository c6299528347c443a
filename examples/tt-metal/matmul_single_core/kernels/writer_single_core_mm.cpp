// Writes the Mt x Nt output tiles in row-major tile order. Late-2025 dialect,
// with stream DPRINT at the end.
#include <stdint.h>

#include "dataflow_api.h"
#include "debug/dprint.h"

void kernel_main() {
    uint32_t dst_addr = get_arg_val<uint32_t>(0);
    uint32_t Mt = get_arg_val<uint32_t>(1);
    uint32_t Nt = get_arg_val<uint32_t>(2);

    constexpr uint32_t cb_id_out0 = tt::CB::c_out0;
    const uint32_t tile_bytes = get_tile_size(cb_id_out0);
    const InterleavedAddrGenFast<true> s = {.bank_base_address = dst_addr,
                                            .page_size = tile_bytes,
                                            .data_format = get_dataformat(cb_id_out0)};
    for (uint32_t m = 0; m < Mt; ++m) {
        for (uint32_t n = 0; n < Nt; ++n) {
            cb_wait_front(cb_id_out0, 1);
            noc_async_write_tile(m * Nt + n, s, get_read_ptr(cb_id_out0));
            noc_async_write_barrier();
            cb_pop_front(cb_id_out0, 1);
        }
    }
    DPRINT << "wrote " << Mt * Nt << " tiles" << ENDL();
}
