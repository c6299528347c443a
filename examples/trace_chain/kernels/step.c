/* One link of the chain: dst = src * 3 + k, element-wise on uint32 words, for
 * this core's page of two interleaved DRAM buffers.
 * Runtime args: src address, dst address. Common args: k. */
#include "dataflow_api.h"

#define PAGE_WORDS 64

void kernel_main(void) {
    InterleavedAddrGenFast src = {
        .bank_base_address = get_arg_val(0), .page_size = PAGE_WORDS * 4, .is_dram = true};
    InterleavedAddrGenFast dst = {
        .bank_base_address = get_arg_val(1), .page_size = PAGE_WORDS * 4, .is_dram = true};
    uint32_t page = my_y() * 8 + my_x(), l1 = LM_L1_RESERVED_END;
    noc_async_read_page(page, &src, l1);
    noc_async_read_barrier();
    volatile uint32_t *w = (volatile uint32_t *)l1;
    uint32_t k = get_common_arg_val(0);
    for (int i = 0; i < PAGE_WORDS; i++)
        w[i] = w[i] * 3u + k;
    noc_async_write_page(page, &dst, l1);
    noc_async_write_barrier();
}
