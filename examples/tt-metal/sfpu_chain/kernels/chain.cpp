// out = max(a * b + a, b) / b - computed entirely in dst: both operands copied
// in once, then a chain of the binary SFPU operations between dst tiles. The
// 3-argument form (2026) and the 2-argument one (late 2025, result in the
// first operand) are both used.
#include <cstdint>

#include "api/compute/binary_max_min.h"
#include "api/compute/eltwise_binary_sfpu.h"
#include "api/compute/tile_move_copy.h"

void kernel_main() {
    const uint32_t n_tiles = get_arg_val<uint32_t>(0);
    constexpr auto cb_a = tt::CBIndex::c_0;
    constexpr auto cb_b = tt::CBIndex::c_1;
    constexpr auto cb_out = tt::CBIndex::c_16;

    unary_op_init_common(cb_a, cb_out);
    for (uint32_t i = 0; i < n_tiles; i++) {
        cb_wait_front(cb_a, 1);
        cb_wait_front(cb_b, 1);
        tile_regs_acquire();
        copy_tile_init(cb_a);
        copy_tile(cb_a, 0, 0);
        copy_tile_init(cb_b);
        copy_tile(cb_b, 0, 1);
        mul_binary_tile_init();
        mul_binary_tile(0, 1, 2); // d2 = a * b
        add_binary_tile_init();
        add_binary_tile(2, 0); // d2 = a * b + a
        binary_max_tile_init();
        binary_max_tile(2, 1, 2); // d2 = max(d2, b)
        div_binary_tile_init();
        div_binary_tile(2, 1, 3); // d3 = d2 / b
        tile_regs_commit();
        cb_pop_front(cb_a, 1);
        cb_pop_front(cb_b, 1);
        tile_regs_wait();
        cb_reserve_back(cb_out, 1);
        pack_tile(3, cb_out);
        cb_push_back(cb_out, 1);
        tile_regs_release();
    }
}
