// Copies a DRAM buffer into another, page by page, through a scratch buffer
// in this core's L1. 2026 dialect: no include (the build adds the dataflow
// API), TensorAccessor for both buffers.
#include <cstdint>

void kernel_main() {
    const uint32_t scratch = get_arg_val<uint32_t>(0);
    const uint32_t src_addr = get_arg_val<uint32_t>(1);
    const uint32_t dst_addr = get_arg_val<uint32_t>(2);
    const uint32_t num_pages = get_arg_val<uint32_t>(3);

    constexpr uint32_t page_size = get_compile_time_arg_val(0);
    constexpr auto src_args = TensorAccessorArgs<1>();
    constexpr auto dst_args = TensorAccessorArgs<src_args.next_compile_time_args_offset()>();
    const auto src = TensorAccessor(src_args, src_addr, page_size);
    const auto dst = TensorAccessor(dst_args, dst_addr, page_size);

    for (uint32_t page = 0; page < num_pages; page++) {
        noc_async_read_page(page, src, scratch);
        noc_async_read_barrier();
        noc_async_write_page(page, dst, scratch);
        noc_async_write_barrier();
    }
}
