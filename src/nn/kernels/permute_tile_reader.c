/* Reads the tiles of a permute's output in the output's order, each from
 * the input tile it is made of, into circular buffer 0 (for
 * transpose_compute.c: the permute swaps the two tile dims, so every tile
 * is transposed too).
 * Runtime args: first, count (output tiles), rank r (at most 8), the
 * output's r dims in tiles (batch dims, then the two tile dims), the input
 * tile index's step along each of them, then the input's accessor words.
 * Common arg 0: the input's address. */
#include "dataflow_api.h"

#define MAX_DIMS 8

void kernel_main(void) {
    uint32_t first = get_arg_val(0), count = get_arg_val(1), rank = get_arg_val(2);
    uint32_t tile = get_tile_size(0), dims[MAX_DIMS], steps[MAX_DIMS], at[MAX_DIMS];
    for (uint32_t d = 0; d < rank; d++) {
        dims[d] = get_arg_val(3 + d);
        steps[d] = get_arg_val(3 + rank + d);
    }
    nn_accessor in;
    nn_accessor_init(&in, 3 + 2 * rank, get_common_arg_val(0), tile);
    /* The first tile's place, then an odometer over the output's dims. */
    uint32_t src = 0, rest = first;
    for (uint32_t d = rank; d-- > 0;) {
        at[d] = rest % dims[d];
        rest /= dims[d];
        src += at[d] * steps[d];
    }
    for (uint32_t t = 0; t < count; t++) {
        cb_reserve_back(0, 1);
        noc_async_read(nn_accessor_addr(&in, src, 0), get_write_ptr(0), tile);
        noc_async_read_barrier();
        cb_push_back(0, 1);
        for (uint32_t d = rank; d-- > 0;) {
            src += steps[d];
            if (++at[d] < dims[d]) break;
            src -= steps[d] * dims[d];
            at[d] = 0;
        }
    }
}
