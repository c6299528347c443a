/* Waits for the sender's block, stamps it with this core's coordinates and
 * writes it to its page of the output buffer, then tells the sender.
 * Runtime args: block address, output buffer address, sender x, sender y. */
#include "dataflow_api.h"

void kernel_main(void) {
    uint32_t block = get_arg_val(0), out = get_arg_val(1);
    uint32_t sender_x = get_arg_val(2), sender_y = get_arg_val(3);

    noc_semaphore_wait((volatile uint32_t *)get_semaphore(0), 1);
    volatile uint32_t *words = (volatile uint32_t *)block;
    uint32_t stamp = my_y() << 8 | my_x();
    for (uint32_t i = 0; i < BLOCK_WORDS; i++)
        words[i] += stamp << 16;

    InterleavedAddrGenFast dst = {
        .bank_base_address = out, .page_size = BLOCK_WORDS * 4, .is_dram = true};
    noc_async_write_page(my_y() * get_common_arg_val(0) + my_x(), &dst, block);
    noc_async_write_barrier();
    noc_semaphore_inc(get_noc_addr(sender_x, sender_y, get_semaphore(1)), 1);
}
