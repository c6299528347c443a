/* Concatenation of tile tensors along their last dim where the widths do
 * not fill whole tiles (an NHWC image's channels): each output tile is
 * assembled in L1 from the column runs of the input tiles that land in it
 * -- one strided read per run and face row (a tile is four 16 x 16 faces,
 * row-major each, so a run of columns inside one face is 16 rows 16
 * elements apart) -- and written with one NoC write. The columns past the
 * last input's are zeroed; the padding rows come as the inputs keep them
 * (zero).
 *
 * Common args: the output's address, then each input's. Runtime args:
 * first unit, units (a unit: one output tile, in page order: tile rows of
 * every matrix, then tile columns), then the tile's bytes, the element
 * size (2 or 4), the output's tile columns and whether it is in DRAM, the
 * number of inputs, then per input its width, its first column in the
 * output, its tile columns and whether it is in DRAM. Circular buffer 16:
 * scratch, one tile. */
#include "dataflow_api.h"

#define CC_INPUTS 6
#define CC_INPUT_WORDS 4

void kernel_main(void) {
    uint32_t first = get_arg_val(0), units = get_arg_val(1);
    uint32_t tile = get_arg_val(2), esize = get_arg_val(3), wt = get_arg_val(4);
    bool out_dram = get_arg_val(5) != 0;
    uint32_t inputs = get_arg_val(CC_INPUTS);
    /* The output's width: the last input's end. */
    const uint32_t last = CC_INPUTS + 1 + (inputs - 1) * CC_INPUT_WORDS;
    uint32_t total = get_arg_val(last) + get_arg_val(last + 1);
    cb_reserve_back(16, 1); /* scratch: never pushed */
    uint32_t buf = get_write_ptr(16), out = get_common_arg_val(0), row = 16 * esize;
    for (uint32_t u = first; u < first + units; u++) {
        uint32_t tr = u / wt, c0 = u % wt * 32;
        if (c0 + 32 > total) nn_zero(buf, tile); /* columns no input fills */
        for (uint32_t i = 0; i < inputs; i++) {
            const uint32_t at = CC_INPUTS + 1 + i * CC_INPUT_WORDS;
            uint32_t width = get_arg_val(at), off = get_arg_val(at + 1), iwt = get_arg_val(at + 2);
            bool dram = get_arg_val(at + 3) != 0;
            uint32_t base = get_common_arg_val(1 + i);
            /* Output columns [a, b) of this tile come from input i, in runs
             * that stay inside one face of both tiles. */
            uint32_t a = off > c0 ? off : c0, b = off + width < c0 + 32 ? off + width : c0 + 32;
            while (a < b) {
                uint32_t ic = a - off, icol = ic % 32, oc = a - c0, run = b - a;
                if (run > 16 - oc % 16) run = 16 - oc % 16;
                if (run > 16 - icol % 16) run = 16 - icol % 16;
                uint32_t page = tr * iwt + ic / 32;
                for (uint32_t fr = 0; fr < 2; fr++) {
                    uint32_t sface = fr * 2 + icol / 16, dface = fr * 2 + oc / 16;
                    uint64_t src = lm_interleaved_noc_addr(dram, base, tile, page,
                                                           (sface * 256 + icol % 16) * esize);
                    lm_noc_async_read_strided(src, row, buf + (dface * 256 + oc % 16) * esize, row,
                                              run * esize, 16);
                }
                a += run;
            }
        }
        noc_async_read_barrier();
        noc_async_write(buf, lm_interleaved_noc_addr(out_dram, out, tile, u, 0), tile);
        noc_async_write_barrier();
    }
}
