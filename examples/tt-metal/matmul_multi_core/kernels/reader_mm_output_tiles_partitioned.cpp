// Streams the A and B tiles of this core's output tiles: output tile id t is
// (mt, nt) = (t / Nt, t % Nt), which needs A[mt][kt] and B[kt][nt] for all kt.
// 2026 dialect: no include, TensorAccessor for both inputs.
#include <cstdint>

void kernel_main() {
    const uint32_t src0_addr = get_arg_val<uint32_t>(0);
    const uint32_t src1_addr = get_arg_val<uint32_t>(1);
    const uint32_t Kt = get_arg_val<uint32_t>(2);
    const uint32_t Nt = get_arg_val<uint32_t>(3);
    const uint32_t first_tile = get_arg_val<uint32_t>(4);
    const uint32_t num_tiles = get_arg_val<uint32_t>(5);

    constexpr uint32_t cb_in0 = tt::CBIndex::c_0;
    constexpr uint32_t cb_in1 = tt::CBIndex::c_1;
    constexpr auto a_args = TensorAccessorArgs<0>();
    constexpr auto b_args = TensorAccessorArgs<a_args.next_compile_time_args_offset()>();
    const auto a = TensorAccessor(a_args, src0_addr);
    const auto b = TensorAccessor(b_args, src1_addr);

    for (uint32_t t = first_tile; t < first_tile + num_tiles; t++) {
        const uint32_t mt = t / Nt, nt = t % Nt;
        for (uint32_t kt = 0; kt < Kt; kt++) {
            cb_reserve_back(cb_in0, 1);
            noc_async_read_tile(mt * Kt + kt, a, get_write_ptr(cb_in0));
            cb_reserve_back(cb_in1, 1);
            noc_async_read_tile(kt * Nt + nt, b, get_write_ptr(cb_in1));
            noc_async_read_barrier();
            cb_push_back(cb_in0, 1);
            cb_push_back(cb_in1, 1);
        }
    }
}
