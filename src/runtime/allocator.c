#include "runtime/allocator.h"

#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/error.h"

void alloc_init(allocator *a, uint64_t base, uint64_t end, uint64_t alignment, bool top_down) {
    memset(a, 0, sizeof *a);
    a->alignment = alignment;
    /* Shrink the range to aligned bounds so every gap is aligned at both ends. */
    a->base = ck_div_ceil_u64(base, alignment) * alignment;
    a->end = end / alignment * alignment;
    if (a->end < a->base) a->end = a->base;
    a->top_down = top_down;
}

void alloc_destroy(allocator *a) {
    free(a->blocks);
    memset(a, 0, sizeof *a);
}

/* Index of the first block whose address is >= `address`. */
static uint32_t lower_bound(const allocator *a, uint64_t address) {
    uint32_t lo = 0, hi = a->count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (a->blocks[mid].address < address)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Free gap before block i (i == count: the gap after the last block). */
static void gap_before(const allocator *a, uint32_t i, uint64_t *start, uint64_t *end) {
    *start = i == 0 ? a->base : a->blocks[i - 1].address + a->blocks[i - 1].size;
    *end = i == a->count ? a->end : a->blocks[i].address;
}

static lm_status insert(allocator *a, uint32_t at, uint64_t address, uint64_t size) {
    if (a->count == a->capacity) {
        uint32_t cap = a->capacity ? a->capacity * 2 : 16;
        alloc_block *b = realloc(a->blocks, (size_t)cap * sizeof *b);
        if (!b) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory in the allocator");
        a->blocks = b;
        a->capacity = cap;
    }
    memmove(&a->blocks[at + 1], &a->blocks[at], (size_t)(a->count - at) * sizeof *a->blocks);
    a->blocks[at] = (alloc_block){address, size};
    a->count++;
    return LM_OK;
}

lm_status alloc_take(allocator *a, uint64_t size, uint64_t *out_address) {
    uint64_t need;
    if (size == 0 || !ck_align_up_u64(size, a->alignment, &need))
        return err_set(LM_ERR_OUT_OF_DEVICE_MEMORY, "cannot allocate %llu bytes per bank",
                       (unsigned long long)size);
    for (uint32_t k = 0; k <= a->count; k++) {
        uint32_t i = a->top_down ? a->count - k : k;
        uint64_t start, end;
        gap_before(a, i, &start, &end);
        if (end - start < need) continue;
        uint64_t address = a->top_down ? end - need : start;
        lm_status st = insert(a, i, address, need);
        if (st) return st;
        *out_address = address;
        return LM_OK;
    }
    return err_set(LM_ERR_OUT_OF_DEVICE_MEMORY,
                   "out of device memory: %llu bytes per bank requested, largest free range is "
                   "%llu bytes (%llu of %llu bytes in use)",
                   (unsigned long long)need, (unsigned long long)alloc_largest_free(a),
                   (unsigned long long)alloc_used(a), (unsigned long long)(a->end - a->base));
}

lm_status alloc_take_at(allocator *a, uint64_t address, uint64_t size) {
    uint64_t need;
    if (address % a->alignment != 0)
        return err_set(LM_ERR_INVALID_ARGUMENT, "address 0x%llx is not aligned to %llu bytes",
                       (unsigned long long)address, (unsigned long long)a->alignment);
    if (size == 0 || !ck_align_up_u64(size, a->alignment, &need) || address < a->base ||
        !ck_range_within(address, need, a->end))
        return err_set(LM_ERR_INVALID_ARGUMENT,
                       "range [0x%llx, +%llu) is outside the allocatable range [0x%llx, 0x%llx)",
                       (unsigned long long)address, (unsigned long long)size,
                       (unsigned long long)a->base, (unsigned long long)a->end);
    uint32_t i = lower_bound(a, address);
    uint64_t start, end;
    gap_before(a, i, &start, &end);
    if (address < start || address + need > end) {
        /* Name the block in the way: the one before if it overlaps, else the next. */
        const alloc_block *b = address < start ? &a->blocks[i - 1] : &a->blocks[i];
        return err_set(LM_ERR_OUT_OF_DEVICE_MEMORY,
                       "range [0x%llx, +%llu) overlaps the allocated block [0x%llx, +%llu)",
                       (unsigned long long)address, (unsigned long long)need,
                       (unsigned long long)b->address, (unsigned long long)b->size);
    }
    return insert(a, i, address, need);
}

bool alloc_give_back(allocator *a, uint64_t address) {
    uint32_t i = lower_bound(a, address);
    if (i == a->count || a->blocks[i].address != address) return false;
    memmove(&a->blocks[i], &a->blocks[i + 1], (size_t)(a->count - i - 1) * sizeof *a->blocks);
    a->count--;
    return true;
}

uint64_t alloc_used(const allocator *a) {
    uint64_t used = 0;
    for (uint32_t i = 0; i < a->count; i++)
        used += a->blocks[i].size;
    return used;
}

uint64_t alloc_largest_free(const allocator *a) {
    uint64_t best = 0;
    for (uint32_t i = 0; i <= a->count; i++) {
        uint64_t start, end;
        gap_before(a, i, &start, &end);
        if (end - start > best) best = end - start;
    }
    return best;
}

uint64_t alloc_lowest(const allocator *a) {
    return a->count ? a->blocks[0].address : a->end;
}
