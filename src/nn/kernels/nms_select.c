/* Non-maximum suppression, the greedy selection (lmnn_nms): one unit per
 * group g = b * C + c (batch entry b, class c), independent of the others.
 *
 * The group's scores become order-preserving integer keys (a float's bits,
 * the sign flipped for positives and every bit for negatives, compare as
 * unsigned integers in the floats' order), so no step needs floating point.
 * The candidates -- boxes whose key is above the threshold's, NaN never --
 * are kept as (key, box) lists in box order. Each round takes the first
 * largest key (ties to the lower box), reads the picked box's row of the
 * overlap table, and compacts the lists to the boxes that row leaves (the
 * pick itself gone), until K are taken or none remain: the work shrinks with
 * the candidates.
 *
 * The group's result is one row of the picks tensor [G, K + 1] int32: the
 * count, then the boxes in the order taken (nms_pack.c packs them).
 *
 * No compile-time args. Runtime args: first unit, units, flags (1 scores in
 * DRAM, 2 overlaps in DRAM, 4 picks in DRAM), N (boxes), C (classes), K
 * (most picks a group takes), the scores' and the overlaps' element sizes
 * (4 float32, 2 bfloat16), the threshold's key (a candidate's key must be
 * greater). Common args: scores [B, C, N], overlaps [B, N, N], picks, all
 * row-major. Circular buffers (one page each): 0 the keys, 1 the boxes, 2 a
 * row of scores or overlaps, 3 the group's picks. */
#include "dataflow_api.h"

/* The key of float32 bits (bfloat16 bits shifted up): larger floats give
 * larger keys. */
static inline uint32_t order_key(uint32_t bits) {
    return bits & 0x80000000u ? ~bits : bits | 0x80000000u;
}

/* Element i of the row at L1 `row` as float32 bits. */
static inline uint32_t row_bits(uint32_t row, uint32_t esize, uint32_t i) {
    if (esize == 2) return (uint32_t) * (volatile uint16_t *)(uintptr_t)(row + 2 * i) << 16;
    return *(volatile uint32_t *)(uintptr_t)(row + 4 * i);
}

void kernel_main(void) {
    uint32_t first = get_arg_val(0), units = get_arg_val(1), flags = get_arg_val(2);
    uint32_t N = get_arg_val(3), C = get_arg_val(4), K = get_arg_val(5);
    uint32_t es = get_arg_val(6), eo = get_arg_val(7), threshold = get_arg_val(8);
    InterleavedAddrGenFast scores = {get_common_arg_val(0), N * es, (flags & 1) != 0};
    InterleavedAddrGenFast over = {get_common_arg_val(1), N * eo, (flags & 2) != 0};
    InterleavedAddrGenFast picks = {get_common_arg_val(2), (K + 1) * 4, (flags & 4) != 0};
    cb_reserve_back(0, 1);
    cb_reserve_back(1, 1);
    cb_reserve_back(2, 1);
    cb_reserve_back(3, 1);
    volatile uint32_t *keys = (volatile uint32_t *)(uintptr_t)get_write_ptr(0);
    volatile uint32_t *boxes = (volatile uint32_t *)(uintptr_t)get_write_ptr(1);
    uint32_t row = get_write_ptr(2), out_addr = get_write_ptr(3);
    volatile uint32_t *out = (volatile uint32_t *)(uintptr_t)out_addr;
    /* Overlap-row bits that make an entry nonzero (either zero counts as
     * zero). */
    const uint32_t magnitude = 0x7fffffffu;
    for (uint32_t g = first; g < first + units; g++) {
        uint32_t b = g / C;
        noc_async_read_page(g, &scores, row);
        noc_async_read_barrier();
        uint32_t m = 0;
        for (uint32_t i = 0; i < N; i++) {
            uint32_t bits = row_bits(row, es, i);
            if ((bits & magnitude) > 0x7f800000u) continue; /* NaN */
            if (bits == 0x80000000u) bits = 0;              /* -0 ties with +0 */
            uint32_t key = order_key(bits);
            if (key <= threshold) continue;
            keys[m] = key;
            boxes[m] = i;
            m++;
        }
        uint32_t taken = 0;
        while (taken < K && m > 0) {
            uint32_t best = 0, best_key = keys[0];
            for (uint32_t j = 1; j < m; j++) {
                uint32_t key = keys[j];
                if (key > best_key) {
                    best_key = key;
                    best = j;
                }
            }
            uint32_t box = boxes[best];
            out[1 + taken++] = box;
            if (taken == K) break;
            noc_async_read_page(b * N + box, &over, row);
            noc_async_read_barrier();
            uint32_t kept = 0;
            for (uint32_t j = 0; j < m; j++) {
                uint32_t other = boxes[j];
                if (j == best || (row_bits(row, eo, other) & magnitude)) continue;
                keys[kept] = keys[j];
                boxes[kept] = other;
                kept++;
            }
            m = kept;
        }
        out[0] = taken;
        noc_async_write(out_addr, get_noc_addr_interleaved(g, &picks, 0), (taken + 1) * 4);
        noc_async_write_barrier();
    }
}
