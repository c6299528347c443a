#include "runtime/allocator.h"

#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/error.h"

/* The trees are treaps: a search tree by address that is also a heap by a
 * pseudo-random priority, which keeps the expected depth logarithmic whatever
 * the order of calls. The shape depends only on the call sequence (the
 * generator is seeded the same way every time), and addresses never depend on
 * the shape at all. */

void alloc_init(allocator *a, uint64_t base, uint64_t end, uint64_t alignment, bool top_down) {
    memset(a, 0, sizeof *a);
    a->alignment = alignment;
    /* Shrink the range to aligned bounds so every free range is aligned at both ends. */
    a->base = ck_div_ceil_u64(base, alignment) * alignment;
    a->end = end / alignment * alignment;
    if (a->end < a->base) a->end = a->base;
    a->top_down = top_down;
    a->seed = 0x2545f491u;
}

void alloc_destroy(allocator *a) {
    free(a->nodes);
    memset(a, 0, sizeof *a);
}

/* ---- the node pool ---- */

/* Makes sure `count` nodes can be handed out without allocating, so that an
 * operation either fails before changing anything or completes. */
static lm_status reserve(allocator *a, uint32_t count) {
    uint32_t fresh = a->nodes ? a->fresh : 1; /* node 0 is never handed out */
    uint32_t spare = a->nodes ? a->capacity - fresh : 0;
    for (uint32_t i = a->free_list; i && spare < count; i = a->nodes[i].left)
        spare++;
    if (spare >= count) return LM_OK;
    uint64_t cap = a->capacity ? a->capacity : 32;
    while (cap < (uint64_t)a->capacity + (count - spare))
        cap *= 2;
    if (cap > UINT32_MAX)
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "too many blocks for the allocator");
    alloc_node *n = realloc(a->nodes, (size_t)cap * sizeof *n);
    if (!n) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory in the allocator");
    if (!a->nodes) memset(&n[0], 0, sizeof n[0]); /* the empty node: size and largest 0 */
    a->nodes = n;
    a->fresh = fresh;
    a->capacity = (uint32_t)cap;
    return LM_OK;
}

/* Takes a node (reserve() made sure there is one). */
static uint32_t node_new(allocator *a, uint64_t address, uint64_t size) {
    uint32_t i;
    if (a->free_list) {
        i = a->free_list;
        a->free_list = a->nodes[i].left;
    } else {
        i = a->fresh++;
    }
    /* xorshift32: any fixed sequence keeps the trees balanced on average. */
    uint32_t s = a->seed;
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    a->seed = s;
    a->nodes[i] = (alloc_node){
        .address = address, .size = size, .largest = size, .left = 0, .right = 0, .priority = s};
    return i;
}

static void node_release(allocator *a, uint32_t i) {
    a->nodes[i].left = a->free_list;
    a->free_list = i;
}

/* ---- treap operations; `n` is the pool, 0 the empty tree ---- */

static void pull(alloc_node *n, uint32_t t) {
    uint64_t m = n[t].size;
    if (n[n[t].left].largest > m) m = n[n[t].left].largest;
    if (n[n[t].right].largest > m) m = n[n[t].right].largest;
    n[t].largest = m;
}

/* Splits t into the nodes below `address` (*l) and the others (*r). */
static void split(alloc_node *n, uint32_t t, uint64_t address, uint32_t *l, uint32_t *r) {
    if (!t) {
        *l = *r = 0;
        return;
    }
    if (n[t].address < address) {
        split(n, n[t].right, address, &n[t].right, r);
        *l = t;
    } else {
        split(n, n[t].left, address, l, &n[t].left);
        *r = t;
    }
    pull(n, t);
}

/* Joins two trees where every address in l is below every address in r. */
static uint32_t join(alloc_node *n, uint32_t l, uint32_t r) {
    if (!l) return r;
    if (!r) return l;
    if (n[l].priority >= n[r].priority) {
        n[l].right = join(n, n[l].right, r);
        pull(n, l);
        return l;
    }
    n[r].left = join(n, l, n[r].left);
    pull(n, r);
    return r;
}

static uint32_t tree_insert(alloc_node *n, uint32_t root, uint32_t node) {
    uint32_t l, r;
    split(n, root, n[node].address, &l, &r);
    return join(n, join(n, l, node), r);
}

/* Unlinks the node at `address` (which must be in the tree). */
static uint32_t tree_remove(alloc_node *n, uint32_t t, uint64_t address) {
    if (!t) return 0;
    if (n[t].address == address) return join(n, n[t].left, n[t].right);
    if (address < n[t].address)
        n[t].left = tree_remove(n, n[t].left, address);
    else
        n[t].right = tree_remove(n, n[t].right, address);
    pull(n, t);
    return t;
}

/* Moves or resizes the node at `address` in place; the caller guarantees the
 * new address keeps its place in the order. */
static void tree_update(alloc_node *n, uint32_t t, uint64_t address, uint64_t new_address,
                        uint64_t new_size) {
    if (!t) return;
    if (n[t].address == address) {
        n[t].address = new_address;
        n[t].size = new_size;
    } else {
        tree_update(n, address < n[t].address ? n[t].left : n[t].right, address, new_address,
                    new_size);
    }
    pull(n, t);
}

static uint32_t tree_find(const alloc_node *n, uint32_t t, uint64_t address) {
    while (t && n[t].address != address)
        t = address < n[t].address ? n[t].left : n[t].right;
    return t;
}

/* The node with the highest address <= `address`, or 0. */
static uint32_t tree_floor(const alloc_node *n, uint32_t t, uint64_t address) {
    uint32_t best = 0;
    while (t) {
        if (n[t].address <= address) {
            best = t;
            t = n[t].right;
        } else {
            t = n[t].left;
        }
    }
    return best;
}

/* The lowest (or highest) addressed node of at least `size` bytes, or 0. */
static uint32_t tree_fit(const alloc_node *n, uint32_t t, uint64_t size, bool highest) {
    if (n[t].largest < size) return 0;
    for (;;) {
        uint32_t first = highest ? n[t].right : n[t].left;
        uint32_t second = highest ? n[t].left : n[t].right;
        if (n[first].largest >= size)
            t = first;
        else if (n[t].size >= size)
            return t;
        else
            t = second;
    }
}

/* ---- the allocator ---- */

/* Reserves the nodes one take needs (a block, a split-off free range, and the
 * initial free range of a fresh allocator). */
static lm_status prepare(allocator *a) {
    lm_status st = reserve(a, 3);
    if (st) return st;
    /* Nothing allocated means all of [base, end) is free; the free tree is
     * empty then only before the first take. */
    if (a->block_count == 0 && a->free_root == 0 && a->end > a->base)
        a->free_root = tree_insert(a->nodes, 0, node_new(a, a->base, a->end - a->base));
    return LM_OK;
}

static void add_block(allocator *a, uint64_t address, uint64_t size) {
    a->block_root = tree_insert(a->nodes, a->block_root, node_new(a, address, size));
    a->block_count++;
    a->used += size;
    if (a->used > a->peak) a->peak = a->used;
}

/* Removes `size` bytes at `address` from the free range node g. */
static void carve(allocator *a, uint32_t g, uint64_t address, uint64_t size) {
    alloc_node *n = a->nodes;
    uint64_t start = n[g].address, end = start + n[g].size;
    uint64_t below = address - start, above = end - (address + size);
    if (below)
        tree_update(n, a->free_root, start, start, below);
    else if (above)
        tree_update(n, a->free_root, start, address + size, above);
    else {
        a->free_root = tree_remove(n, a->free_root, start);
        node_release(a, g);
    }
    if (below && above)
        a->free_root = tree_insert(n, a->free_root, node_new(a, address + size, above));
}

lm_status alloc_take(allocator *a, uint64_t size, uint64_t *out_address) {
    uint64_t need;
    if (size == 0 || !ck_align_up_u64(size, a->alignment, &need))
        return err_set(LM_ERR_OUT_OF_DEVICE_MEMORY, "cannot allocate %llu bytes per bank",
                       (unsigned long long)size);
    lm_status st = prepare(a);
    if (st) return st;
    uint32_t g = tree_fit(a->nodes, a->free_root, need, a->top_down);
    if (!g)
        return err_set(LM_ERR_OUT_OF_DEVICE_MEMORY,
                       "out of device memory: %llu bytes per bank requested, largest free range "
                       "is %llu bytes (%llu of %llu bytes in use)",
                       (unsigned long long)need, (unsigned long long)alloc_largest_free(a),
                       (unsigned long long)alloc_used(a), (unsigned long long)(a->end - a->base));
    const alloc_node *gap = &a->nodes[g];
    uint64_t address = a->top_down ? gap->address + gap->size - need : gap->address;
    carve(a, g, address, need);
    add_block(a, address, need);
    *out_address = address;
    return LM_OK;
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
    lm_status st = prepare(a);
    if (st) return st;
    const alloc_node *n = a->nodes;
    uint32_t g = tree_floor(n, a->free_root, address), in_way;
    if (g && address - n[g].address < n[g].size) {
        uint64_t gap_end = n[g].address + n[g].size;
        if (need <= gap_end - address) {
            carve(a, g, address, need);
            add_block(a, address, need);
            return LM_OK;
        }
        in_way = tree_find(n, a->block_root, gap_end); /* the block the range runs into */
    } else {
        in_way = tree_floor(n, a->block_root, address); /* the block holding the address */
    }
    return err_set(LM_ERR_OUT_OF_DEVICE_MEMORY,
                   "range [0x%llx, +%llu) overlaps the allocated block [0x%llx, +%llu)",
                   (unsigned long long)address, (unsigned long long)need,
                   (unsigned long long)n[in_way].address, (unsigned long long)n[in_way].size);
}

bool alloc_give_back(allocator *a, uint64_t address) {
    alloc_node *n = a->nodes;
    uint32_t b = tree_find(n, a->block_root, address);
    if (!b) return false;
    uint64_t size = n[b].size, end = address + size;
    a->block_root = tree_remove(n, a->block_root, address);
    a->block_count--;
    a->used -= size;
    /* Merge with the free ranges on either side, so free ranges stay maximal
     * and first fit sees exactly the holes a scan over the blocks would. */
    uint32_t prev = tree_floor(n, a->free_root, address);
    if (prev && n[prev].address + n[prev].size != address) prev = 0;
    uint32_t next = tree_find(n, a->free_root, end);
    if (prev) {
        uint64_t start = n[prev].address, stop = end;
        if (next) {
            stop = end + n[next].size;
            a->free_root = tree_remove(n, a->free_root, end);
            node_release(a, next);
        }
        tree_update(n, a->free_root, start, start, stop - start);
        node_release(a, b);
    } else if (next) {
        tree_update(n, a->free_root, end, address, size + n[next].size);
        node_release(a, b);
    } else {
        /* The block's node becomes the free range: no allocation needed. */
        n[b].left = n[b].right = 0;
        n[b].largest = size;
        a->free_root = tree_insert(n, a->free_root, b);
    }
    return true;
}

uint64_t alloc_used(const allocator *a) {
    return a->used;
}

uint64_t alloc_peak(const allocator *a) {
    return a->peak;
}

void alloc_reset_peak(allocator *a) {
    a->peak = a->used;
}

uint64_t alloc_largest_free(const allocator *a) {
    if (a->block_count == 0) return a->end - a->base;
    return a->nodes[a->free_root].largest;
}

uint64_t alloc_lowest(const allocator *a) {
    if (a->block_count == 0) return a->end;
    uint32_t t = a->block_root;
    while (a->nodes[t].left)
        t = a->nodes[t].left;
    return a->nodes[t].address;
}
