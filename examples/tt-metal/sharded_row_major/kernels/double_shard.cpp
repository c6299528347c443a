// Doubles every element of this core's shard of a width-sharded row-major
// bfloat16 tensor, page by page through the sharded TensorAccessor (a page is
// a 32-element segment of a row; this core holds one column of segments).
#include <cstdint>

void kernel_main() {
    const uint32_t addr = get_arg_val<uint32_t>(0);
    const uint32_t column = get_arg_val<uint32_t>(1);
    constexpr uint32_t cb = tt::CBIndex::c_0;
    constexpr auto args = TensorAccessorArgs<0>();
    static_assert(args.is_sharded && args.layout == LM_TA_WIDTH, "a width-sharded tensor");
    constexpr uint32_t page_elems = get_compile_time_arg_val(args.next_compile_time_args_offset());
    constexpr uint32_t rows = get_compile_time_arg_val(args.next_compile_time_args_offset() + 1);
    const auto t = TensorAccessor(args, addr, page_elems * 2);

    cb_reserve_back(cb, 1);
    const uint32_t l1 = get_write_ptr(cb);
    volatile tt_l1_ptr uint16_t *v = reinterpret_cast<volatile tt_l1_ptr uint16_t *>(l1);
    for (uint32_t r = 0; r < rows; r++) {
        const uint32_t page = r * args.tensor_w + column;
        noc_async_read_page(page, t, l1);
        noc_async_read_barrier();
        for (uint32_t i = 0; i < page_elems; i++) {
            // bfloat16 x 2: one more in the exponent, exact for normal values.
            const uint16_t b = v[i];
            if ((b & 0x7F80) != 0 && (b & 0x7F80) != 0x7F00 && (b & 0x7F80) != 0x7F80)
                v[i] = static_cast<uint16_t>(b + 0x80);
        }
        noc_async_write_page(page, t, l1);
        noc_async_write_barrier();
    }
    DPRINT << "core " << get_absolute_logical_x() << " doubled shard column " << column << ENDL();
}
