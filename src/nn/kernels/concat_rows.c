/* Concatenation of tile tensors along their second-last dim where the
 * heights do not fill whole tiles (a key/value cache grown by a token):
 * each output tile is assembled in L1 from the row runs of the input tiles
 * that land in it and written with one NoC write. A tile is four 16 x 16
 * faces, row-major each, so rows that stay inside one half of both tiles
 * are one contiguous block per face column: a read of run x 16 elements.
 * The rows past the last input's are zeroed; the padding columns come as
 * the inputs keep them (zero).
 *
 * Common args: the output's address, then each input's. Runtime args:
 * first unit, units (a unit: one output tile, in page order: every
 * matrix's tile rows, each row's tile columns), then the tile's bytes, the
 * element size (2 or 4), the output's tile rows and tile columns and
 * whether it is in DRAM, the number of inputs, then per input its height,
 * its first row in the output, its tile rows and whether it is in DRAM.
 * Circular buffer 16: scratch, one tile. */
#include "dataflow_api.h"

#define CR_INPUTS 7
#define CR_INPUT_WORDS 4

void kernel_main(void) {
    uint32_t first = get_arg_val(0), units = get_arg_val(1);
    uint32_t tile = get_arg_val(2), esize = get_arg_val(3);
    uint32_t ht = get_arg_val(4), wt = get_arg_val(5);
    bool out_dram = get_arg_val(6) != 0;
    uint32_t inputs = get_arg_val(CR_INPUTS);
    /* The output's height: the last input's end. */
    const uint32_t last = CR_INPUTS + 1 + (inputs - 1) * CR_INPUT_WORDS;
    uint32_t total = get_arg_val(last) + get_arg_val(last + 1);
    cb_reserve_back(16, 1); /* scratch: never pushed */
    uint32_t buf = get_write_ptr(16), out = get_common_arg_val(0);
    for (uint32_t u = first; u < first + units; u++) {
        uint32_t tc = u % wt, tr = u / wt % ht, m = u / wt / ht, r0 = tr * 32;
        if (r0 + 32 > total) nn_zero(buf, tile); /* rows no input fills */
        for (uint32_t i = 0; i < inputs; i++) {
            const uint32_t at = CR_INPUTS + 1 + i * CR_INPUT_WORDS;
            uint32_t height = get_arg_val(at), off = get_arg_val(at + 1), iht = get_arg_val(at + 2);
            bool dram = get_arg_val(at + 3) != 0;
            uint32_t base = get_common_arg_val(1 + i);
            /* Output rows [a, b) of this tile come from input i, in runs
             * that stay inside one half of both tiles. */
            uint32_t a = off > r0 ? off : r0, b = off + height < r0 + 32 ? off + height : r0 + 32;
            while (a < b) {
                uint32_t ir = a - off, irow = ir % 32, orow = a - r0, run = b - a;
                if (run > 16 - orow % 16) run = 16 - orow % 16;
                if (run > 16 - irow % 16) run = 16 - irow % 16;
                uint32_t page = (m * iht + ir / 32) * wt + tc;
                for (uint32_t fc = 0; fc < 2; fc++) {
                    uint32_t sface = irow / 16 * 2 + fc, dface = orow / 16 * 2 + fc;
                    uint64_t src = lm_interleaved_noc_addr(dram, base, tile, page,
                                                           (sface * 256 + irow % 16 * 16) * esize);
                    noc_async_read(src, buf + (dface * 256 + orow % 16 * 16) * esize,
                                   run * 16 * esize);
                }
                a += run;
            }
        }
        noc_async_read_barrier();
        noc_async_write(buf, lm_interleaved_noc_addr(out_dram, out, tile, u, 0), tile);
        noc_async_write_barrier();
    }
}
