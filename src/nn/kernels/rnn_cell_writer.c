/* Writes a recurrent cell's new states, tiles [first, first + count) of
 * [B, H] (ht x wt tiles, h x w logical): h' from circular buffer 16 to the
 * tensor at common argument 3 and, with steps set, to matrix `step` (common
 * argument 7) of the tensor at common argument 5; an LSTM's c' from
 * circular buffer 17 to common argument 4. With zero_pad set, the padding
 * of the right and bottom edge tiles is zeroed first (the gate columns
 * between H and the next tile are not the cell's to trust).
 *
 * Compile-time args: lstm, steps.
 * Runtime args: first, count, ht, wt, h, w, zero_pad, format of 16, format
 * of 17, then where the accessor words of h', c' and steps start (runtime
 * arg indices; 0 for none), then those words. */
#include "dataflow_api.h"

static void write_tile(uint32_t cb, uint32_t t, uint32_t fmt, uint32_t zero_pad, uint32_t ht,
                       uint32_t wt, uint32_t h, uint32_t w, nn_accessor *a, nn_accessor *b,
                       uint32_t bt) {
    cb_wait_front(cb, 1);
    uint32_t addr = get_read_ptr(cb);
    if (zero_pad) {
        uint32_t rows, cols;
        nn_tile_extent(t, ht, wt, h, w, &rows, &cols);
        nn_tile_fill_outside(addr, fmt, rows, cols, 0);
    }
    noc_async_write(addr, nn_accessor_addr(a, t, 0), a->page);
    if (b) noc_async_write(addr, nn_accessor_addr(b, bt, 0), b->page);
    noc_async_write_barrier();
    cb_pop_front(cb, 1);
}

void kernel_main(void) {
    uint32_t first = get_arg_val(0), count = get_arg_val(1);
    uint32_t ht = get_arg_val(2), wt = get_arg_val(3), h = get_arg_val(4), w = get_arg_val(5);
    uint32_t zero_pad = get_arg_val(6), fmt_h = get_arg_val(7), fmt_c = get_arg_val(8);
    uint32_t lstm = get_compile_time_arg_val(0), steps = get_compile_time_arg_val(1);
    nn_accessor oh, oc, os;
    nn_accessor_init(&oh, get_arg_val(9), get_common_arg_val(3), get_tile_size(16));
    if (lstm) nn_accessor_init(&oc, get_arg_val(10), get_common_arg_val(4), get_tile_size(17));
    if (steps) nn_accessor_init(&os, get_arg_val(11), get_common_arg_val(5), get_tile_size(16));
    uint32_t base = steps ? get_common_arg_val(7) * ht * wt : 0;
    for (uint32_t t = first; t < first + count; t++) {
        write_tile(16, t, fmt_h, zero_pad, ht, wt, h, w, &oh, steps ? &os : 0, base + t);
        if (lstm) write_tile(17, t, fmt_c, zero_pad, ht, wt, h, w, &oc, 0, 0);
    }
}
