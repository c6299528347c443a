/* Bank allocator: hands out address ranges inside one bank-local address space
 * [base, end). An interleaved buffer takes the same range in every bank of its
 * memory, so one allocator serves all banks of a memory (DRAM or L1).
 *
 * Deterministic by construction: first fit over a list kept sorted by address,
 * bottom-up or top-down, with no dependence on host pointers or timing.
 *
 * Not thread-safe: the device serialises calls.
 */
#ifndef LM_RUNTIME_ALLOCATOR_H
#define LM_RUNTIME_ALLOCATOR_H

#include <stdbool.h>
#include <stdint.h>

#include "lightmetal/lm_status.h"

typedef struct alloc_block {
    uint64_t address;
    uint64_t size;
} alloc_block;

typedef struct allocator {
    uint64_t base, end; /* managed range */
    uint64_t alignment; /* power of two; every block starts and ends aligned */
    bool top_down;
    alloc_block *blocks; /* allocated blocks, sorted by address */
    uint32_t count, capacity;
} allocator;

void alloc_init(allocator *a, uint64_t base, uint64_t end, uint64_t alignment, bool top_down);
void alloc_destroy(allocator *a);

/* Finds room for `size` bytes (rounded up to the alignment). Errors:
 * LM_ERR_OUT_OF_DEVICE_MEMORY naming the size asked for and the largest free
 * range; LM_ERR_OUT_OF_HOST_MEMORY. */
lm_status alloc_take(allocator *a, uint64_t size, uint64_t *out_address);

/* Takes exactly [address, address + size). Errors: LM_ERR_INVALID_ARGUMENT when
 * misaligned or outside [base, end); LM_ERR_OUT_OF_DEVICE_MEMORY when any part
 * is already taken (the message names the block in the way). */
lm_status alloc_take_at(allocator *a, uint64_t address, uint64_t size);

/* Returns the block starting at `address`; false when there is none. */
bool alloc_give_back(allocator *a, uint64_t address);

/* Lowest allocated address; `end` when nothing is allocated. */
uint64_t alloc_lowest(const allocator *a);

/* Bytes currently allocated, and the largest free range. */
uint64_t alloc_used(const allocator *a);
uint64_t alloc_largest_free(const allocator *a);

#endif
