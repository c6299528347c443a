// Pads a row-major bfloat16 tensor of H x W (one row per page) to Hp x Wp with
// a pad value: each source row is read into the CB, the rest of its padded
// row filled, and the padded row written; the rows below H are all pad. Two
// processors share the rows: this one takes rows first, first + step, ...
// 2026 dialect with TensorAccessor over pages of two sizes.
#include <cstdint>

void kernel_main() {
    const uint32_t src_addr = get_arg_val<uint32_t>(0);
    const uint32_t dst_addr = get_arg_val<uint32_t>(1);
    const uint32_t first = get_arg_val<uint32_t>(2);
    const uint32_t step = get_arg_val<uint32_t>(3);
    constexpr uint32_t H = get_named_compile_time_arg_val("H");
    constexpr uint32_t W = get_named_compile_time_arg_val("W");
    constexpr uint32_t Hp = get_named_compile_time_arg_val("Hp");
    constexpr uint32_t Wp = get_named_compile_time_arg_val("Wp");
    constexpr uint16_t pad_bits = get_named_compile_time_arg_val("pad_bits");
    static_assert(W <= Wp && H <= Hp, "padding only grows the tensor");
    constexpr uint32_t cb = tt::CBIndex::c_0;
    constexpr auto src_args = TensorAccessorArgs<0>();
    constexpr auto dst_args = TensorAccessorArgs<src_args.next_compile_time_args_offset()>();
    const auto src = TensorAccessor(src_args, src_addr, W * 2);
    const auto dst = TensorAccessor(dst_args, dst_addr, Wp * 2);

    for (uint32_t row = first; row < Hp; row += step) {
        cb_reserve_back(cb, 1);
        const uint32_t l1 = get_write_ptr(cb);
        volatile tt_l1_ptr uint16_t *v = reinterpret_cast<volatile tt_l1_ptr uint16_t *>(l1);
        uint32_t from = 0;
        if (row < H) {
            noc_async_read_page(row, src, l1);
            noc_async_read_barrier();
            from = W;
        }
        for (uint32_t c = from; c < Wp; c++)
            v[c] = pad_bits;
        noc_async_write_page(row, dst, l1);
        noc_async_write_barrier();
        cb_push_back(cb, 1);
        cb_wait_front(cb, 1);
        cb_pop_front(cb, 1);
    }
}
