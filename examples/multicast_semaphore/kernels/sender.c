/* Fills a block in L1, multicasts it to every other core of the rectangle,
 * releases them with a multicast semaphore, then waits until each has
 * reported back by incrementing this core's "done" semaphore.
 * Runtime args: block address, rectangle end x, end y, number of receivers. */
#include "dataflow_api.h"

void kernel_main(void) {
    uint32_t block = get_arg_val(0);
    uint32_t end_x = get_arg_val(1), end_y = get_arg_val(2), receivers = get_arg_val(3);
    uint32_t go = get_semaphore(0), done = get_semaphore(1);

    volatile uint32_t *words = (volatile uint32_t *)block;
    for (uint32_t i = 0; i < BLOCK_WORDS; i++)
        words[i] = 0x1000u + i;

    noc_async_write_multicast(block, get_noc_multicast_addr(0, 0, end_x, end_y, block),
                              BLOCK_WORDS * 4, receivers);
    noc_async_write_barrier();
    noc_semaphore_set((volatile uint32_t *)go, 1);
    noc_semaphore_set_multicast(go, get_noc_multicast_addr(0, 0, end_x, end_y, go), receivers);
    noc_semaphore_wait((volatile uint32_t *)done, receivers);
}
