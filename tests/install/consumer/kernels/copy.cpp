// A tt-metal-dialect data movement kernel, built from the installed kernel
// SDK: copies n pages between two DRAM buffers through CB 0.
#include <cstdint>

void kernel_main() {
    const uint32_t src_addr = get_arg_val<uint32_t>(0);
    const uint32_t dst_addr = get_arg_val<uint32_t>(1);
    const uint32_t n = get_arg_val<uint32_t>(2);
    constexpr uint32_t cb = tt::CBIndex::c_0;
    constexpr auto src_args = TensorAccessorArgs<0>();
    constexpr auto dst_args = TensorAccessorArgs<src_args.next_compile_time_args_offset()>();
    const auto src = TensorAccessor(src_args, src_addr, get_tile_size(cb));
    const auto dst = TensorAccessor(dst_args, dst_addr, get_tile_size(cb));
    for (uint32_t i = 0; i < n; i++) {
        cb_reserve_back(cb, 1);
        noc_async_read_page(i, src, get_write_ptr(cb));
        noc_async_read_barrier();
        noc_async_write_page(i, dst, get_write_ptr(cb));
        noc_async_write_barrier();
    }
}
