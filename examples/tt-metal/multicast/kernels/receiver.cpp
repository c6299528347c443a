// A receiver: waits for the sender's semaphore, then writes the tile it was
// sent to its own page of the output. The experimental (Device 2.0) objects:
// Semaphore, CircularBuffer seen through its write pointer, Noc writing to a
// TensorAccessor.
#include <cstdint>

#include "experimental/circular_buffer.h"
#include "experimental/noc.h"
#include "experimental/noc_semaphore.h"

void kernel_main() {
    const uint32_t dst_addr = get_arg_val<uint32_t>(0);
    const uint32_t page = get_arg_val<uint32_t>(1);
    constexpr uint32_t sem_id = get_compile_time_arg_val(0);
    constexpr auto dst_args = TensorAccessorArgs<1>();

    experimental::Semaphore<> sem(sem_id);
    sem.wait(1);

    experimental::Noc noc;
    experimental::CircularBuffer cb(tt::CBIndex::c_0);
    const uint32_t tile_bytes = cb.get_tile_size();
    const auto dst = TensorAccessor(dst_args, dst_addr, tile_bytes);
    using experimental::CircularBuffer;
    noc.async_write(experimental::use<CircularBuffer::AddrSelector::WRITE_PTR>(cb), dst, tile_bytes,
                    {.offset_bytes = 0}, {.page_id = page});
    noc.async_write_barrier();
}
