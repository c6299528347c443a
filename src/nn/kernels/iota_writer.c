/* Writes 0, 1, ..., n - 1 as float32 into the tile tensor of shape [n] at
 * common argument 0: tiles [first, first + count), element c of row 0 of
 * tile p being p * 32 + c, everything else (padding) zero. The values are
 * below 2^24, so their float32 bits come from integer arithmetic (this
 * processor has no floating point).
 * Compile-time args: is_dram. Runtime args: first, count, n. */
#include "dataflow_api.h"

static uint32_t float_bits_of(uint32_t v) {
    if (v == 0) return 0;
    uint32_t e = 0;
    while (v >> (e + 1))
        e++;
    return (e + 127) << 23 | ((v << (23 - e)) & 0x7fffffu);
}

void kernel_main(void) {
    uint32_t first = get_arg_val(0), count = get_arg_val(1);
    uint32_t n = get_arg_val(2);
    InterleavedAddrGenFast out = {.bank_base_address = get_common_arg_val(0),
                                  .page_size = get_tile_size(16),
                                  .is_dram = get_compile_time_arg_val(0)};
    cb_reserve_back(16, 1);
    uint32_t buf = get_write_ptr(16);
    nn_zero(buf, 4096);
    for (uint32_t p = first; p < first + count; p++) {
        for (uint32_t c = 0; c < 32; c++) {
            uint32_t v = p * 32 + c;
            nn_tile_store(buf, NN_FMT_FLOAT32, (c / 16) * 256 + c % 16,
                          v < n ? float_bits_of(v) : 0);
        }
        noc_async_write_page(p, &out, buf);
        noc_async_write_barrier();
    }
}
