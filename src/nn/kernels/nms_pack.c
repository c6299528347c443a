/* Non-maximum suppression, the output (lmnn_nms), on one core: the groups'
 * picks (nms_select.c's rows [count, box...] of the picks tensor, group g =
 * b * C + c) become rows (b, c, box) of the output [R, 3] int32, group
 * after group from row 0; the rows after the last pick are -1.
 *
 * Each output row is its own page (12 bytes), written from its own slot of
 * a ring so no write waits for the one before; the ring is drained before a
 * slot is used again.
 *
 * No compile-time args. Runtime args: flags (1 picks in DRAM, 2 output in
 * DRAM), G (groups), C (classes), K (most picks a group takes), R (output
 * rows). Common args: picks, output. Circular buffers (one page each): 0 a
 * group's picks, 1 the ring of SLOTS rows. */
#include "dataflow_api.h"

#define SLOTS 64

void kernel_main(void) {
    uint32_t flags = get_arg_val(0), G = get_arg_val(1), C = get_arg_val(2);
    uint32_t K = get_arg_val(3), R = get_arg_val(4);
    InterleavedAddrGenFast picks = {get_common_arg_val(0), (K + 1) * 4, (flags & 1) != 0};
    InterleavedAddrGenFast out = {get_common_arg_val(1), 12, (flags & 2) != 0};
    cb_reserve_back(0, 1);
    cb_reserve_back(1, 1);
    uint32_t in_addr = get_write_ptr(0), ring = get_write_ptr(1);
    volatile uint32_t *in = (volatile uint32_t *)(uintptr_t)in_addr;
    uint32_t r = 0;
    for (uint32_t g = 0; g < G; g++) {
        noc_async_read_page(g, &picks, in_addr);
        noc_async_read_barrier();
        uint32_t count = in[0];
        if (count > K) count = K; /* cannot happen: nms_select.c takes at most K */
        for (uint32_t t = 0; t < count && r < R; t++, r++) {
            uint32_t slot = ring + r % SLOTS * 12;
            if (r % SLOTS == 0) noc_async_write_barrier();
            volatile uint32_t *s = (volatile uint32_t *)(uintptr_t)slot;
            s[0] = g / C;
            s[1] = g % C;
            s[2] = in[1 + t];
            noc_async_write_page(r, &out, slot);
        }
    }
    noc_async_write_barrier();
    /* The padding: every row from one slot of -1s, never written again. */
    volatile uint32_t *s = (volatile uint32_t *)(uintptr_t)ring;
    s[0] = s[1] = s[2] = 0xffffffffu;
    for (; r < R; r++)
        noc_async_write_page(r, &out, ring);
    noc_async_write_barrier();
}
