/* Reads tiles [first, first + count) of the tensor at common argument 0 into
 * circular buffer 0, one at a time.
 * Runtime args: first, count, then the tensor's accessor words
 * (lm_tensor_accessor_args: interleaved or sharded, L1 or DRAM). */
#include "dataflow_api.h"

void kernel_main(void) {
    uint32_t first = get_arg_val(0), count = get_arg_val(1), tile = get_tile_size(0);
    nn_accessor in;
    nn_accessor_init(&in, 2, get_common_arg_val(0), tile);
    nn_read_pages(&in, 0, first, count, tile);
}
