/* Reads tiles [first, first + count) of the tensor at common argument 0 into
 * circular buffer 0, one at a time.
 * Runtime args: first, count, is_dram. */
#include "dataflow_api.h"

void kernel_main(void) {
    uint32_t first = get_arg_val(0), count = get_arg_val(1);
    InterleavedAddrGenFast in = {.bank_base_address = get_common_arg_val(0),
                                 .page_size = get_tile_size(0),
                                 .is_dram = get_arg_val(2)};
    for (uint32_t t = first; t < first + count; t++) {
        cb_reserve_back(0, 1);
        noc_async_read_tile(t, &in, get_write_ptr(0));
        noc_async_read_barrier();
        cb_push_back(0, 1);
    }
}
