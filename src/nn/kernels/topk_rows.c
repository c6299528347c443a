/* The k best elements of each row (lmnn_topk), one unit per row of a
 * row-major tensor: their values and positions, best first.
 *
 * Elements become order-preserving integer keys (floats: the sign flipped
 * for positives and every bit for negatives; int32: the sign flipped;
 * uint32 as is), inverted for the smallest, so one unsigned comparison
 * ranks them; NaN is above every number (PyTorch's order: first among the
 * largest, last among the smallest), -0 ties with +0. Ties go to the lower
 * position. The row streams through in chunks, each element against
 * a heap of the k best so far whose root is the worst of them (O(N log k),
 * and only the heap stays in L1: rows of any length); the heap is then
 * sorted in place.
 *
 * No compile-time args. Runtime args: first unit, units, flags (1 input in
 * DRAM, 2 values in DRAM, 4 positions in DRAM, 8 smallest first), N (row
 * length), k, kind (0 float32, 1 bfloat16, 2 int32, 3 uint32), chunk
 * (elements read at once). Common args: the input [rows, N], values [rows,
 * k] (the input's dtype), positions [rows, k] int32. Circular buffers (one
 * page each): 0 a chunk of the row, 1 2 3 the heap's keys, positions and
 * value bits, 4 the values out, 5 the positions out. */
#include "dataflow_api.h"

#define KIND_BF16 1
#define KIND_INT32 2
#define KIND_UINT32 3

static volatile uint32_t *hkey, *hpos, *hval;

/* Whether entry (ka, pa) ranks below (kb, pb). */
static inline bool worse(uint32_t ka, uint32_t pa, uint32_t kb, uint32_t pb) {
    return ka < kb || (ka == kb && pa > pb);
}

/* Puts entry (k, p, v) at `at` of a heap of `n` (the worst at the root) and
 * moves it down to its place. */
static void sift_down(uint32_t at, uint32_t n, uint32_t k, uint32_t p, uint32_t v) {
    for (;;) {
        uint32_t child = 2 * at + 1;
        if (child >= n) break;
        if (child + 1 < n && worse(hkey[child + 1], hpos[child + 1], hkey[child], hpos[child]))
            child++;
        if (!worse(hkey[child], hpos[child], k, p)) break;
        hkey[at] = hkey[child];
        hpos[at] = hpos[child];
        hval[at] = hval[child];
        at = child;
    }
    hkey[at] = k;
    hpos[at] = p;
    hval[at] = v;
}

/* Adds entry (k, p, v) to a heap of `at` entries. */
static void sift_up(uint32_t at, uint32_t k, uint32_t p, uint32_t v) {
    while (at > 0) {
        uint32_t parent = (at - 1) / 2;
        if (!worse(k, p, hkey[parent], hpos[parent])) break;
        hkey[at] = hkey[parent];
        hpos[at] = hpos[parent];
        hval[at] = hval[parent];
        at = parent;
    }
    hkey[at] = k;
    hpos[at] = p;
    hval[at] = v;
}

/* The key of an element's bits. */
static inline uint32_t key_of(uint32_t bits, uint32_t kind, bool smallest) {
    uint32_t key;
    if (kind == KIND_UINT32) {
        key = bits;
    } else if (kind == KIND_INT32) {
        key = bits ^ 0x80000000u;
    } else {
        if (kind == KIND_BF16) bits <<= 16;
        if ((bits & 0x7fffffffu) > 0x7f800000u)
            key = UINT32_MAX; /* NaN: above every number */
        else if (bits == 0x80000000u)
            key = 0x80000000u; /* -0: +0's */
        else
            key = bits & 0x80000000u ? ~bits : bits | 0x80000000u;
    }
    return smallest ? ~key : key;
}

void kernel_main(void) {
    uint32_t first = get_arg_val(0), units = get_arg_val(1), flags = get_arg_val(2);
    uint32_t N = get_arg_val(3), K = get_arg_val(4), kind = get_arg_val(5);
    uint32_t chunk = get_arg_val(6);
    uint32_t es = kind == KIND_BF16 ? 2 : 4;
    bool smallest = (flags & 8) != 0;
    InterleavedAddrGenFast in = {get_common_arg_val(0), N * es, (flags & 1) != 0};
    InterleavedAddrGenFast vals = {get_common_arg_val(1), K * es, (flags & 2) != 0};
    InterleavedAddrGenFast poss = {get_common_arg_val(2), K * 4, (flags & 4) != 0};
    for (uint32_t cb = 0; cb < 6; cb++)
        cb_reserve_back(cb, 1);
    uint32_t buf = get_write_ptr(0), vout = get_write_ptr(4);
    hkey = (volatile uint32_t *)(uintptr_t)get_write_ptr(1);
    hpos = (volatile uint32_t *)(uintptr_t)get_write_ptr(2);
    hval = (volatile uint32_t *)(uintptr_t)get_write_ptr(3);
    volatile uint32_t *po = (volatile uint32_t *)(uintptr_t)get_write_ptr(5);
    volatile uint16_t *v16 = (volatile uint16_t *)(uintptr_t)vout;
    volatile uint32_t *v32 = (volatile uint32_t *)(uintptr_t)vout;
    const volatile uint16_t *b16 = (const volatile uint16_t *)(uintptr_t)buf;
    const volatile uint32_t *b32 = (const volatile uint32_t *)(uintptr_t)buf;
    for (uint32_t r = first; r < first + units; r++) {
        uint32_t n = 0;
        for (uint32_t at = 0; at < N; at += chunk) {
            uint32_t len = N - at < chunk ? N - at : chunk;
            noc_async_read(get_noc_addr_interleaved(r, &in, at * es), buf, len * es);
            noc_async_read_barrier();
            for (uint32_t j = 0; j < len; j++) {
                uint32_t bits = es == 2 ? b16[j] : b32[j];
                uint32_t key = key_of(bits, kind, smallest);
                if (n < K)
                    sift_up(n++, key, at + j, bits);
                else if (key > hkey[0]) /* a later position never wins a tie */
                    sift_down(0, n, key, at + j, bits);
            }
        }
        /* Sorted: the worst leaves the root for the end, best first. */
        for (uint32_t end = n; end > 0; end--) {
            po[end - 1] = hpos[0];
            if (es == 2)
                v16[end - 1] = (uint16_t)hval[0];
            else
                v32[end - 1] = hval[0];
            if (end > 1) sift_down(0, end - 1, hkey[end - 1], hpos[end - 1], hval[end - 1]);
        }
        noc_async_write_page(r, &vals, vout);
        noc_async_write_page(r, &poss, (uint32_t)(uintptr_t)po);
        noc_async_write_barrier();
    }
}
