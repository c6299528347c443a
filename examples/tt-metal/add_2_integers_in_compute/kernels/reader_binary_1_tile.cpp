// Reads one tile from each input (single-page buffers: the page sits in DRAM
// bank 0) into CB 0 and CB 1. Late-2025 dialect: dataflow_api.h,
// get_noc_addr_from_bank_id, tt::CB names.
#include <stdint.h>

#include "dataflow_api.h"

void kernel_main() {
    uint32_t src0_addr = get_arg_val<uint32_t>(0);
    uint32_t src1_addr = get_arg_val<uint32_t>(1);
    constexpr uint32_t cb_id_in0 = tt::CB::c_in0;
    constexpr uint32_t cb_id_in1 = tt::CB::c_in1;

    uint64_t src0_noc_addr = get_noc_addr_from_bank_id<true>(0, src0_addr);
    uint64_t src1_noc_addr = get_noc_addr_from_bank_id<true>(0, src1_addr);

    cb_reserve_back(cb_id_in0, 1);
    noc_async_read(src0_noc_addr, get_write_ptr(cb_id_in0), get_tile_size(cb_id_in0));
    noc_async_read_barrier();
    cb_push_back(cb_id_in0, 1);

    cb_reserve_back(cb_id_in1, 1);
    noc_async_read(src1_noc_addr, get_write_ptr(cb_id_in1), get_tile_size(cb_id_in1));
    noc_async_read_barrier();
    cb_push_back(cb_id_in1, 1);
}
