// For each output tile (mt, nt), streams A[mt][kt] into CB 0 and B[kt][nt]
// into CB 1 for kt = 0..Kt-1. Late-2025 dialect: dataflow_api.h,
// InterleavedAddrGenFast<true> filled with designated initialisers.
#include <stdint.h>

#include "dataflow_api.h"

void kernel_main() {
    uint32_t src0_addr = get_arg_val<uint32_t>(0);
    uint32_t src1_addr = get_arg_val<uint32_t>(1);
    uint32_t Mt = get_arg_val<uint32_t>(2);
    uint32_t Kt = get_arg_val<uint32_t>(3);
    uint32_t Nt = get_arg_val<uint32_t>(4);

    constexpr uint32_t cb_id_in0 = tt::CB::c_in0;
    constexpr uint32_t cb_id_in1 = tt::CB::c_in1;
    const uint32_t in0_tile_bytes = get_tile_size(cb_id_in0);
    const uint32_t in1_tile_bytes = get_tile_size(cb_id_in1);

    const InterleavedAddrGenFast<true> s0 = {.bank_base_address = src0_addr,
                                             .page_size = in0_tile_bytes,
                                             .data_format = get_dataformat(cb_id_in0)};
    const InterleavedAddrGenFast<true> s1 = {.bank_base_address = src1_addr,
                                             .page_size = in1_tile_bytes,
                                             .data_format = get_dataformat(cb_id_in1)};

    for (uint32_t mt = 0; mt < Mt; mt++) {
        for (uint32_t nt = 0; nt < Nt; nt++) {
            for (uint32_t kt = 0; kt < Kt; kt++) {
                cb_reserve_back(cb_id_in0, 1);
                noc_async_read_tile(mt * Kt + kt, s0, get_write_ptr(cb_id_in0));
                noc_async_read_barrier();
                cb_push_back(cb_id_in0, 1);

                cb_reserve_back(cb_id_in1, 1);
                noc_async_read_tile(kt * Nt + nt, s1, get_write_ptr(cb_id_in1));
                noc_async_read_barrier();
                cb_push_back(cb_id_in1, 1);
            }
        }
    }
}
