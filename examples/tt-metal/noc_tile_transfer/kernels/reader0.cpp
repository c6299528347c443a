// Core 0: reads one tile from DRAM into its CB 0, then tells core 1 (whose NoC
// coordinates are runtime args) through core 1's semaphore. Late-2025
// dialect: dataflow_api.h, debug/dprint.h, stream DPRINT.
#include <cstdint>

#include "dataflow_api.h"
#include "debug/dprint.h"

void kernel_main() {
    const uint32_t src_addr = get_arg_val<uint32_t>(0);
    const uint32_t peer_x = get_arg_val<uint32_t>(1);
    const uint32_t peer_y = get_arg_val<uint32_t>(2);
    constexpr uint32_t cb = get_compile_time_arg_val(0);
    constexpr uint32_t sem_id = get_compile_time_arg_val(1);

    const InterleavedAddrGenFast<true> src = {.bank_base_address = src_addr,
                                              .page_size = get_tile_size(cb),
                                              .data_format = get_dataformat(cb)};
    cb_reserve_back(cb, 1);
    noc_async_read_tile(0, src, get_write_ptr(cb));
    noc_async_read_barrier();
    volatile tt_l1_ptr uint16_t *first =
        reinterpret_cast<volatile tt_l1_ptr uint16_t *>(get_write_ptr(cb));
    DPRINT << "core 0: tile in L1, first element bits " << HEX() << first[0] << DEC() << ENDL();
    cb_push_back(cb, 1);

    noc_semaphore_inc(get_noc_addr(peer_x, peer_y, get_semaphore(sem_id)), 1);
    noc_async_atomic_barrier();
}
