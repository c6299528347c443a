/* Reads, for each tile [first, first + count) of a recurrent cell's [B, H]
 * state (wt tiles per tile row), gate k's tile of x_gates and of h_gates,
 * k = 0 .. gates - 1, into circular buffers 0 and 1 (gates tiles each, in
 * gate order), and the state's tile into circular buffer 2. Gate k's tile
 * of state tile (r, c) is (r, k * wt + c) of a [B, gates * wt tiles]
 * matrix; x_gates' matrix is number `step` (common argument 6, so one
 * compiled program serves every step).
 *
 * Compile-time args: gates.
 * Runtime args: first, count, ht, wt, then where the accessor words of
 * x_gates, h_gates and the state start (runtime arg indices), then those
 * words (lm_tensor_accessor_args). Common args: x_gates, h_gates, state,
 * then the outputs (rnn_cell_writer.c), then step at index 6. */
#include "dataflow_api.h"

void kernel_main(void) {
    uint32_t first = get_arg_val(0), count = get_arg_val(1);
    uint32_t ht = get_arg_val(2), wt = get_arg_val(3);
    uint32_t gates = get_compile_time_arg_val(0), gw = gates * wt;
    nn_accessor x, h, s;
    nn_accessor_init(&x, get_arg_val(4), get_common_arg_val(0), get_tile_size(0));
    nn_accessor_init(&h, get_arg_val(5), get_common_arg_val(1), get_tile_size(1));
    nn_accessor_init(&s, get_arg_val(6), get_common_arg_val(2), get_tile_size(2));
    uint32_t xbase = get_common_arg_val(6) * ht * gw;
    for (uint32_t t = first; t < first + count; t++) {
        uint32_t row = t / wt * gw + t % wt;
        cb_reserve_back(0, gates);
        cb_reserve_back(1, gates);
        cb_reserve_back(2, 1);
        uint32_t xp = get_write_ptr(0), hp = get_write_ptr(1);
        for (uint32_t k = 0; k < gates; k++) {
            noc_async_read(nn_accessor_addr(&x, xbase + row + k * wt, 0), xp + k * x.page, x.page);
            noc_async_read(nn_accessor_addr(&h, row + k * wt, 0), hp + k * h.page, h.page);
        }
        noc_async_read(nn_accessor_addr(&s, t, 0), get_write_ptr(2), s.page);
        noc_async_read_barrier();
        cb_push_back(0, gates);
        cb_push_back(1, gates);
        cb_push_back(2, 1);
    }
}
