/* Copies a DRAM buffer to another, page by page, through this core's L1.
 * Runtime args: src address, dst address, L1 staging address, pages, page size. */
#include "dataflow_api.h"

void kernel_main(void) {
    uint32_t src_addr = get_arg_val(0);
    uint32_t dst_addr = get_arg_val(1);
    uint32_t l1_addr = get_arg_val(2);
    uint32_t pages = get_arg_val(3);
    uint32_t page_size = get_arg_val(4);

    InterleavedAddrGenFast src = {
        .bank_base_address = src_addr, .page_size = page_size, .is_dram = true};
    InterleavedAddrGenFast dst = {
        .bank_base_address = dst_addr, .page_size = page_size, .is_dram = true};
    for (uint32_t p = 0; p < pages; p++) {
        noc_async_read_page(p, &src, l1_addr);
        noc_async_read_barrier();
        noc_async_write_page(p, &dst, l1_addr);
        noc_async_write_barrier();
    }
}
