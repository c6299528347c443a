/* Streams this core's rows of A into circular buffer 0 and writes its block of
 * C from circular buffer 16: for each of Mb tile rows, the row's Kt tiles of A
 * go in, then the row's Nb result tiles come out.
 * Runtime args: a address, c address, Kt, Nt (C width in tiles), m_start, Mb,
 * n_start, Nb. */
#include "dataflow_api.h"

void kernel_main(void) {
    uint32_t a_addr = get_arg_val(0), c_addr = get_arg_val(1), kt = get_arg_val(2);
    uint32_t nt = get_arg_val(3), m_start = get_arg_val(4), mb = get_arg_val(5);
    uint32_t n_start = get_arg_val(6), nb = get_arg_val(7);
    InterleavedAddrGenFast a = {
        .bank_base_address = a_addr, .page_size = get_tile_size(0), .is_dram = true};
    InterleavedAddrGenFast c = {
        .bank_base_address = c_addr, .page_size = get_tile_size(16), .is_dram = true};
    for (uint32_t m = 0; m < mb; m++) {
        for (uint32_t k = 0; k < kt; k++) {
            cb_reserve_back(0, 1);
            noc_async_read_tile((m_start + m) * kt + k, &a, get_write_ptr(0));
            noc_async_read_barrier();
            cb_push_back(0, 1);
        }
        cb_wait_front(16, nb);
        uint32_t at = get_read_ptr(16);
        for (uint32_t n = 0; n < nb; n++)
            noc_async_write_tile((m_start + m) * nt + n_start + n, &c, at + n * get_tile_size(16));
        noc_async_write_barrier();
        cb_pop_front(16, nb);
    }
}
