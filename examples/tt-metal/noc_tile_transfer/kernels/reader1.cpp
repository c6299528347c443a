// Core 1: waits for core 0's signal, pulls the tile from core 0's L1 over the
// NoC into its own CB 0 (the CB sits at the same L1 address on both cores),
// and writes it to the output buffer. Late-2025 dialect.
#include <cstdint>

#include "dataflow_api.h"
#include "debug/dprint.h"

void kernel_main() {
    const uint32_t dst_addr = get_arg_val<uint32_t>(0);
    const uint32_t peer_x = get_arg_val<uint32_t>(1);
    const uint32_t peer_y = get_arg_val<uint32_t>(2);
    constexpr uint32_t cb = get_compile_time_arg_val(0);
    constexpr uint32_t sem_id = get_compile_time_arg_val(1);
    const uint32_t tile_bytes = get_tile_size(cb);

    volatile tt_l1_ptr uint32_t *sem =
        reinterpret_cast<volatile tt_l1_ptr uint32_t *>(get_semaphore(sem_id));
    noc_semaphore_wait(sem, 1);
    noc_semaphore_set(sem, 0);

    cb_reserve_back(cb, 1);
    const uint32_t l1 = get_write_ptr(cb);
    noc_async_read(get_noc_addr(peer_x, peer_y, l1), l1, tile_bytes);
    noc_async_read_barrier();
    cb_push_back(cb, 1);
    DPRINT << "core 1: tile pulled from core 0" << ENDL();

    cb_wait_front(cb, 1);
    const InterleavedAddrGenFast<true> dst = {
        .bank_base_address = dst_addr, .page_size = tile_bytes, .data_format = get_dataformat(cb)};
    noc_async_write_tile(0, dst, get_read_ptr(cb));
    noc_async_write_barrier();
    cb_pop_front(cb, 1);
}
