// For each K block, reads this core's block of A (per_core_M x block_w tiles)
// into CB 0 and of B (block_w x per_core_N tiles) into CB 1, row-major within
// the block. 2026 dialect, TensorAccessor.
#include <cstdint>

void kernel_main() {
    const uint32_t a_addr = get_arg_val<uint32_t>(0);
    const uint32_t b_addr = get_arg_val<uint32_t>(1);
    const uint32_t m0 = get_arg_val<uint32_t>(2); // first output tile row of this core
    const uint32_t n0 = get_arg_val<uint32_t>(3); // first output tile column
    constexpr uint32_t Kt = get_compile_time_arg_val(0);
    constexpr uint32_t Nt = get_compile_time_arg_val(1);
    constexpr uint32_t per_core_M = get_compile_time_arg_val(2);
    constexpr uint32_t per_core_N = get_compile_time_arg_val(3);
    constexpr uint32_t block_w = get_compile_time_arg_val(4);
    constexpr auto a_args = TensorAccessorArgs<5>();
    constexpr auto b_args = TensorAccessorArgs<a_args.next_compile_time_args_offset()>();
    constexpr uint32_t cb_a = tt::CBIndex::c_0, cb_b = tt::CBIndex::c_1;
    const uint32_t a_tile = get_tile_size(cb_a), b_tile = get_tile_size(cb_b);
    const auto a = TensorAccessor(a_args, a_addr, a_tile);
    const auto b = TensorAccessor(b_args, b_addr, b_tile);

    for (uint32_t kb = 0; kb < Kt / block_w; kb++) {
        cb_reserve_back(cb_a, per_core_M * block_w);
        uint32_t l1 = get_write_ptr(cb_a);
        for (uint32_t h = 0; h < per_core_M; h++)
            for (uint32_t k = 0; k < block_w; k++, l1 += a_tile)
                noc_async_read_tile((m0 + h) * Kt + kb * block_w + k, a, l1);
        cb_reserve_back(cb_b, block_w * per_core_N);
        l1 = get_write_ptr(cb_b);
        for (uint32_t k = 0; k < block_w; k++)
            for (uint32_t w = 0; w < per_core_N; w++, l1 += b_tile)
                noc_async_read_tile((kb * block_w + k) * Nt + n0 + w, b, l1);
        noc_async_read_barrier();
        cb_push_back(cb_a, per_core_M * block_w);
        cb_push_back(cb_b, block_w * per_core_N);
    }
}
