/* tile_reader.c for the random ops with a run seed: first the seed (the
 * first 4 bytes of page 0 of the tensor at common argument 2) into circular
 * buffer 1, which the compute kernel reads and never pops, then tiles
 * [first, first + count) of the tensor at common argument 0 into circular
 * buffer 0, one at a time.
 * Compile-time args: the seed tensor's page size.
 * Runtime args: first, count, the input's accessor words, then the seed
 * tensor's. */
#include "dataflow_api.h"

void kernel_main(void) {
    uint32_t first = get_arg_val(0), count = get_arg_val(1), tile = get_tile_size(0);
    nn_accessor in, seed;
    uint32_t next = nn_accessor_init(&in, 2, get_common_arg_val(0), tile);
    nn_accessor_init(&seed, next, get_common_arg_val(2), get_compile_time_arg_val(0));
    cb_reserve_back(1, 1);
    noc_async_read(nn_accessor_addr(&seed, 0, 0), get_write_ptr(1), 4);
    noc_async_read_barrier();
    cb_push_back(1, 1);
    nn_read_pages(&in, 0, first, count, tile);
}
