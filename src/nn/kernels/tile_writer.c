/* Writes tiles [first, first + count) of the tensor at common argument
 * `out_arg` from circular buffer 16. With zero_pad set, the padding of tiles
 * at the tensor's right and bottom edges is zeroed first (the op's math may
 * have made it nonzero; tensors keep it zero).
 * No compile-time args. Runtime args: first, count, ht, wt, h, w (the
 * matrices' tiles and logical size), out_arg, zero_pad, format, then the
 * output's accessor words (lm_tensor_accessor_args: interleaved or sharded):
 * all runtime, so one compiled kernel serves every shape, buffer and format
 * (the branch per tile costs nothing next to the tile's write). */
#include "dataflow_api.h"

void kernel_main(void) {
    uint32_t first = get_arg_val(0), count = get_arg_val(1);
    uint32_t ht = get_arg_val(2), wt = get_arg_val(3);
    uint32_t h = get_arg_val(4), w = get_arg_val(5);
    uint32_t zero_pad = get_arg_val(7), fmt = get_arg_val(8), tile = get_tile_size(16);
    nn_accessor out;
    nn_accessor_init(&out, 9, get_common_arg_val(get_arg_val(6)), tile);
    for (uint32_t t = first; t < first + count; t++) {
        cb_wait_front(16, 1);
        uint32_t addr = get_read_ptr(16);
        if (zero_pad) {
            uint32_t rows, cols;
            nn_tile_extent(t, ht, wt, h, w, &rows, &cols);
            nn_tile_fill_outside(addr, fmt, rows, cols, 0);
        }
        noc_async_write(addr, nn_accessor_addr(&out, t, 0), tile);
        noc_async_write_barrier();
        cb_pop_front(16, 1);
    }
}
