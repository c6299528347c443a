// The sender: reads one tile into its CB, multicasts it into the same CB
// address of every receiver in a rectangle, then multicasts a semaphore value
// that tells them it is there. 2026 dialect, the classic NoC calls.
#include <cstdint>

void kernel_main() {
    const uint32_t src_addr = get_arg_val<uint32_t>(0);
    const uint32_t x0 = get_arg_val<uint32_t>(1), y0 = get_arg_val<uint32_t>(2);
    const uint32_t x1 = get_arg_val<uint32_t>(3), y1 = get_arg_val<uint32_t>(4);
    const uint32_t num_dests = get_arg_val<uint32_t>(5);
    constexpr uint32_t cb = tt::CBIndex::c_0;
    constexpr uint32_t sem_id = get_compile_time_arg_val(0);
    constexpr auto src_args = TensorAccessorArgs<1>();
    const uint32_t tile_bytes = get_tile_size(cb);
    const auto src = TensorAccessor(src_args, src_addr);

    cb_reserve_back(cb, 1);
    const uint32_t l1 = get_write_ptr(cb);
    noc_async_read_tile(0, src, l1);
    noc_async_read_barrier();

    noc_async_write_multicast(l1, get_noc_multicast_addr(x0, y0, x1, y1, l1), tile_bytes,
                              num_dests);
    noc_async_write_barrier();

    const uint32_t sem_addr = get_semaphore(sem_id);
    volatile tt_l1_ptr uint32_t *sem = reinterpret_cast<volatile tt_l1_ptr uint32_t *>(sem_addr);
    *sem = 1;
    noc_semaphore_set_multicast(sem_addr, get_noc_multicast_addr(x0, y0, x1, y1, sem_addr),
                                num_dests);
    noc_async_write_barrier();
}
