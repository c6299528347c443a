// The same reader with the experimental (Device 2.0) objects: Noc,
// CircularBuffer, and a TensorAccessor as the transfer's source.
#include <cstdint>

#include "experimental/circular_buffer.h"
#include "experimental/noc.h"
#include "experimental/tensor.h"

void kernel_main() {
    const uint32_t in0_addr = get_arg_val<uint32_t>(0);
    const uint32_t in1_addr = get_arg_val<uint32_t>(1);
    const uint32_t n_tiles = get_arg_val<uint32_t>(2);

    experimental::Noc noc;
    experimental::CircularBuffer cb_in0(tt::CBIndex::c_0);
    experimental::CircularBuffer cb_in1(tt::CBIndex::c_1);
    const uint32_t tile_bytes = cb_in0.get_tile_size();

    constexpr auto in0_args = TensorAccessorArgs<0>();
    constexpr auto in1_args = TensorAccessorArgs<in0_args.next_compile_time_args_offset()>();
    const auto in0 = TensorAccessor(in0_args, in0_addr, tile_bytes);
    const auto in1 = TensorAccessor(in1_args, in1_addr, tile_bytes);

    for (uint32_t i = 0; i < n_tiles; i++) {
        cb_in0.reserve_back(1);
        cb_in1.reserve_back(1);
        noc.async_read(in0, cb_in0, tile_bytes, {.page_id = i}, {.offset_bytes = 0});
        noc.async_read(in1, cb_in1, tile_bytes, {.page_id = i}, {.offset_bytes = 0});
        noc.async_read_barrier();
        cb_in0.push_back(1);
        cb_in1.push_back(1);
    }
}
