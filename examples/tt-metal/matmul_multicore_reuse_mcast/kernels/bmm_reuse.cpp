// One core's per_core_M x per_core_N block of C, accumulated in dst over the
// K blocks: every A tile of a block serves per_core_N outputs and every B
// tile per_core_M, straight from L1. 2026 dialect, 5-argument matmul_tiles.
#include <cstdint>

#include "api/compute/matmul.h"

void kernel_main() {
    constexpr uint32_t Kt = get_compile_time_arg_val(0);
    constexpr uint32_t per_core_M = get_compile_time_arg_val(2);
    constexpr uint32_t per_core_N = get_compile_time_arg_val(3);
    constexpr uint32_t block_w = get_compile_time_arg_val(4);
    constexpr auto cb_a = tt::CBIndex::c_0, cb_b = tt::CBIndex::c_1, cb_out = tt::CBIndex::c_16;
    static_assert(per_core_M * per_core_N <= 8, "the block must fit dst (8 tiles in fp32)");

    mm_init(cb_a, cb_b, cb_out);
    tile_regs_acquire();
    for (uint32_t kb = 0; kb < Kt / block_w; kb++) {
        cb_wait_front(cb_a, per_core_M * block_w);
        cb_wait_front(cb_b, block_w * per_core_N);
        for (uint32_t h = 0; h < per_core_M; h++)
            for (uint32_t w = 0; w < per_core_N; w++)
                for (uint32_t k = 0; k < block_w; k++)
                    matmul_tiles(cb_a, cb_b, h * block_w + k, k * per_core_N + w,
                                 h * per_core_N + w);
        cb_pop_front(cb_a, per_core_M * block_w);
        cb_pop_front(cb_b, block_w * per_core_N);
    }
    tile_regs_commit();
    tile_regs_wait();
    cb_reserve_back(cb_out, per_core_M * per_core_N);
    for (uint32_t t = 0; t < per_core_M * per_core_N; t++)
        pack_tile(t, cb_out);
    cb_push_back(cb_out, per_core_M * per_core_N);
    tile_regs_release();
}
