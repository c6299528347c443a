/* Reads tiles [first, first + count) of the tensor at common argument 0 into
 * circular buffer 0, one at a time.
 * Runtime args: first, count, then the tensor's accessor words
 * (lm_tensor_accessor_args: interleaved or sharded, L1 or DRAM). */
#include "dataflow_api.h"

void kernel_main(void) {
    uint32_t first = get_arg_val(0), count = get_arg_val(1), tile = get_tile_size(0);
    nn_accessor in;
    nn_accessor_init(&in, 2, get_common_arg_val(0), tile);
    for (uint32_t t = first; t < first + count; t++) {
        cb_reserve_back(0, 1);
        noc_async_read(nn_accessor_addr(&in, t, 0), get_write_ptr(0), tile);
        noc_async_read_barrier();
        cb_push_back(0, 1);
    }
}
