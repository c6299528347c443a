// Adds two vectors of 16 integers on the data movement processor itself:
// reads both pages into circular buffer memory, adds with plain loads and
// stores, writes the sum back. 2026 dialect with api/dataflow/dataflow_api.h.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t src0_addr = get_arg_val<uint32_t>(0);
    const uint32_t src1_addr = get_arg_val<uint32_t>(1);
    const uint32_t dst_addr = get_arg_val<uint32_t>(2);
    constexpr uint32_t n = get_compile_time_arg_val(0);
    constexpr uint32_t cb_in0 = tt::CBIndex::c_0;
    constexpr uint32_t cb_in1 = tt::CBIndex::c_1;

    const InterleavedAddrGen<true> src0 = {.bank_base_address = src0_addr, .page_size = n * 4};
    const InterleavedAddrGen<true> src1 = {.bank_base_address = src1_addr, .page_size = n * 4};
    const InterleavedAddrGen<true> dst = {.bank_base_address = dst_addr, .page_size = n * 4};

    cb_reserve_back(cb_in0, 1);
    cb_reserve_back(cb_in1, 1);
    const uint32_t l1_a = get_write_ptr(cb_in0), l1_b = get_write_ptr(cb_in1);
    noc_async_read(get_noc_addr(0, src0), l1_a, n * 4);
    noc_async_read(get_noc_addr(0, src1), l1_b, n * 4);
    noc_async_read_barrier();

    volatile tt_l1_ptr uint32_t *a = reinterpret_cast<volatile tt_l1_ptr uint32_t *>(l1_a);
    volatile tt_l1_ptr uint32_t *b = reinterpret_cast<volatile tt_l1_ptr uint32_t *>(l1_b);
    for (uint32_t i = 0; i < n; i++)
        a[i] = a[i] + b[i];

    noc_async_write(l1_a, get_noc_addr(0, dst), n * 4);
    noc_async_write_barrier();
}
