// Writes this core's block of C to its place in the output.
#include <cstdint>

void kernel_main() {
    const uint32_t c_addr = get_arg_val<uint32_t>(0);
    const uint32_t m0 = get_arg_val<uint32_t>(1);
    const uint32_t n0 = get_arg_val<uint32_t>(2);
    constexpr uint32_t Nt = get_compile_time_arg_val(0);
    constexpr uint32_t per_core_M = get_compile_time_arg_val(1);
    constexpr uint32_t per_core_N = get_compile_time_arg_val(2);
    constexpr auto c_args = TensorAccessorArgs<3>();
    constexpr uint32_t cb_out = tt::CBIndex::c_16;
    const uint32_t tile = get_tile_size(cb_out);
    const auto c = TensorAccessor(c_args, c_addr, tile);
    cb_wait_front(cb_out, per_core_M * per_core_N);
    uint32_t l1 = get_read_ptr(cb_out);
    for (uint32_t h = 0; h < per_core_M; h++)
        for (uint32_t w = 0; w < per_core_N; w++, l1 += tile)
            noc_async_write_tile((m0 + h) * Nt + n0 + w, c, l1);
    noc_async_write_barrier();
    cb_pop_front(cb_out, per_core_M * per_core_N);
}
