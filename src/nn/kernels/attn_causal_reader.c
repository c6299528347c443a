/* Attention scores reader: reads tiles [first, first + count) of the scores
 * tensor (common argument 0) into circular buffer 0, one at a time; with
 * `causal` set, the elements (i, j) of each [Sq, Sk] matrix with j > i become
 * -Inf first (PyTorch's is_causal: query i sees keys 0..i). Only the logical
 * region is touched, so the padding stays zero. A tile wholly on or below the
 * diagonal is left as read; one wholly above it is filled without a test per
 * element (on the core only the diagonal's tiles cost a compare each).
 * Compile-time args: is_dram, format. Runtime args: first, count, causal,
 * ht, wt, h (Sq), w (Sk) (runtime, so one compiled kernel serves every
 * shape; nn_unary_map_with's reader layout). */
#include "dataflow_api.h"

#define NEG_INF_BITS 0xff800000u

void kernel_main(void) {
    uint32_t first = get_arg_val(0), count = get_arg_val(1);
    uint32_t fmt = get_compile_time_arg_val(1), causal = get_arg_val(2);
    uint32_t ht = get_arg_val(3), wt = get_arg_val(4);
    uint32_t h = get_arg_val(5), w = get_arg_val(6);
    InterleavedAddrGenFast in = {.bank_base_address = get_common_arg_val(0),
                                 .page_size = get_tile_size(0),
                                 .is_dram = get_compile_time_arg_val(0)};
    for (uint32_t t = first; t < first + count; t++) {
        cb_reserve_back(0, 1);
        uint32_t addr = get_write_ptr(0);
        noc_async_read_tile(t, &in, addr);
        noc_async_read_barrier();
        uint32_t tc = t % wt, tr = (t / wt) % ht;
        /* Masked somewhere: the tile's last column lies right of its first
         * row's diagonal. */
        if (causal && tc * 32 + 31 > tr * 32) {
            uint32_t rows, cols;
            nn_tile_extent(t, ht, wt, h, w, &rows, &cols);
            for (uint32_t r = 0; r < rows; r++) {
                uint32_t i = tr * 32 + r;
                /* First masked column of row r within the tile. */
                uint32_t c0 = i + 1 <= tc * 32 ? 0 : i + 1 - tc * 32;
                for (uint32_t c = c0; c < cols; c++) {
                    uint32_t e = ((r >> 4) * 2 + (c >> 4)) * 256 + (r & 15) * 16 + (c & 15);
                    nn_tile_store(addr, fmt, e, NEG_INF_BITS);
                }
            }
        }
        cb_push_back(0, 1);
    }
}
