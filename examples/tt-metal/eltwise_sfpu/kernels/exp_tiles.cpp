// out = exp(in), tile by tile, on the SFPU: copy_tile into dst, exp_tile
// there, pack. 2026 dialect with the templated exp_tile<approx>.
#include <cstdint>

#include "api/compute/eltwise_unary/eltwise_unary.h"
#include "api/compute/eltwise_unary/exp.h"
#include "api/compute/tile_move_copy.h"

void kernel_main() {
    const uint32_t n_tiles = get_arg_val<uint32_t>(0);
    constexpr auto cb_in = tt::CBIndex::c_0;
    constexpr auto cb_out = tt::CBIndex::c_16;

    init_sfpu(cb_in, cb_out);
    exp_tile_init<false>();
    for (uint32_t i = 0; i < n_tiles; i++) {
        cb_wait_front(cb_in, 1);
        tile_regs_acquire();
        copy_tile(cb_in, 0, 0);
        exp_tile<false>(0);
        tile_regs_commit();
        cb_pop_front(cb_in, 1);
        tile_regs_wait();
        cb_reserve_back(cb_out, 1);
        pack_tile(0, cb_out);
        cb_push_back(cb_out, 1);
        tile_regs_release();
    }
}
