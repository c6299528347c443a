/* Bank allocator: hands out address ranges inside one bank-local address space
 * [base, end). An interleaved buffer takes the same range in every bank of its
 * memory, so one allocator serves all banks of a memory (DRAM or L1).
 *
 * Placement policy (addresses are recorded in captured files and metal traces,
 * so it must never change): first fit over the free ranges in address order,
 * bottom-up (the lowest range that fits, taken from its start) or top-down
 * (the highest range that fits, taken from its end). Deterministic by
 * construction: no dependence on host pointers or timing.
 *
 * Cost: every call is O(log n) in the number of allocated blocks. The free
 * ranges and the allocated blocks are kept in two balanced search trees keyed
 * by address; each free-range node also knows the largest free range below it,
 * so the first (or last) range that fits is found without a scan.
 *
 * Not thread-safe: the device serialises calls.
 */
#ifndef LM_RUNTIME_ALLOCATOR_H
#define LM_RUNTIME_ALLOCATOR_H

#include <stdbool.h>
#include <stdint.h>

#include "lightmetal/lm_status.h"

/* A tree node: a free range or an allocated block [address, address + size).
 * Nodes live in one pool shared by both trees, addressed by index (0 = none). */
typedef struct alloc_node {
    uint64_t address, size;
    uint64_t largest; /* the largest size in this node's subtree */
    uint32_t left, right;
    uint32_t priority; /* heap order of the treap; fixed by a seeded generator */
} alloc_node;

typedef struct allocator {
    uint64_t base, end; /* managed range */
    uint64_t alignment; /* power of two; every block starts and ends aligned */
    bool top_down;
    alloc_node *nodes;   /* the pool; nodes[0] is the empty node */
    uint32_t capacity;   /* nodes in the pool */
    uint32_t fresh;      /* nodes[fresh..capacity) were never used */
    uint32_t free_list;  /* released nodes, linked through `left` */
    uint32_t free_root;  /* maximal free ranges (never empty, never adjacent) */
    uint32_t block_root; /* allocated blocks */
    uint32_t block_count;
    uint32_t seed;
    uint64_t used; /* bytes in allocated blocks */
    uint64_t peak; /* the most `used` has been since init or alloc_reset_peak */
} allocator;

void alloc_init(allocator *a, uint64_t base, uint64_t end, uint64_t alignment, bool top_down);
void alloc_destroy(allocator *a);

/* Finds room for `size` bytes (rounded up to the alignment). Errors:
 * LM_ERR_OUT_OF_DEVICE_MEMORY naming the size asked for and the largest free
 * range; LM_ERR_OUT_OF_HOST_MEMORY. */
lm_status alloc_take(allocator *a, uint64_t size, uint64_t *out_address);

/* Takes exactly [address, address + size). Errors: LM_ERR_INVALID_ARGUMENT when
 * misaligned or outside [base, end); LM_ERR_OUT_OF_DEVICE_MEMORY when any part
 * is already taken (the message names the block in the way);
 * LM_ERR_OUT_OF_HOST_MEMORY. */
lm_status alloc_take_at(allocator *a, uint64_t address, uint64_t size);

/* Returns the block starting at `address`; false when there is none. Never
 * fails otherwise (it needs no host memory). */
bool alloc_give_back(allocator *a, uint64_t address);

/* Lowest allocated address; `end` when nothing is allocated. */
uint64_t alloc_lowest(const allocator *a);

/* Bytes currently allocated, and the largest free range. */
uint64_t alloc_used(const allocator *a);
uint64_t alloc_largest_free(const allocator *a);

/* The most bytes allocated at once since alloc_init or alloc_reset_peak,
 * which starts counting again from what is allocated now. */
uint64_t alloc_peak(const allocator *a);
void alloc_reset_peak(allocator *a);

#endif
