// Reads tile i of two float32 inputs into CB 0 and CB 1 (2026 dialect).
#include <cstdint>

void kernel_main() {
    const uint32_t a_addr = get_arg_val<uint32_t>(0);
    const uint32_t b_addr = get_arg_val<uint32_t>(1);
    const uint32_t n_tiles = get_arg_val<uint32_t>(2);
    constexpr auto a_args = TensorAccessorArgs<0>();
    constexpr auto b_args = TensorAccessorArgs<a_args.next_compile_time_args_offset()>();
    const auto a = TensorAccessor(a_args, a_addr, get_tile_size(0));
    const auto b = TensorAccessor(b_args, b_addr, get_tile_size(1));
    for (uint32_t i = 0; i < n_tiles; i++) {
        cb_reserve_back(0, 1);
        cb_reserve_back(1, 1);
        noc_async_read_tile(i, a, get_write_ptr(0));
        noc_async_read_tile(i, b, get_write_ptr(1));
        noc_async_read_barrier();
        cb_push_back(0, 1);
        cb_push_back(1, 1);
    }
}
