/* Concatenation of tile tensors along their last dim (columns) or their
 * second-last (rows) where the inputs' extents do not fill whole tiles (an
 * NHWC image's channels; a key/value cache grown by a token): each output
 * tile is assembled in L1 from the runs of the input tiles that land in it
 * and written with one NoC write. A tile is four 16 x 16 faces, row-major
 * each, so a run that stays inside one half of both tiles is, per half of
 * the other dim, one read: of 16 strided pieces for columns (one per face
 * row), of one contiguous block for rows. Past the last input's extent the
 * tile is zeroed; the other dim's padding comes as the inputs keep it
 * (zero).
 *
 * Common args: the output's address, then each input's. Runtime args:
 * first unit, units (a unit: one output tile, in page order: every
 * matrix's tile rows, each row's tile columns), then the tile's bytes, the
 * element size (2 or 4), the output's tile rows and tile columns, whether
 * it is in DRAM, whether the dim is the rows, the number of inputs, then
 * per input its extent along the dim, its offset in the output, its tiles
 * along the dim and whether it is in DRAM. Circular buffer 16: scratch, one
 * tile. */
#include "dataflow_api.h"

#define CR_INPUTS 8
#define CR_INPUT_WORDS 4

void kernel_main(void) {
    uint32_t first = get_arg_val(0), units = get_arg_val(1);
    uint32_t tile = get_arg_val(2), esize = get_arg_val(3);
    uint32_t ht = get_arg_val(4), wt = get_arg_val(5);
    bool out_dram = get_arg_val(6) != 0, rows = get_arg_val(7) != 0;
    uint32_t inputs = get_arg_val(CR_INPUTS);
    /* The output's extent: the last input's end. */
    const uint32_t last = CR_INPUTS + 1 + (inputs - 1) * CR_INPUT_WORDS;
    uint32_t total = get_arg_val(last) + get_arg_val(last + 1);
    cb_reserve_back(16, 1); /* scratch: never pushed */
    uint32_t buf = get_write_ptr(16), out = get_common_arg_val(0), face_row = 16 * esize;
    /* Along the dim: faces step by `along` per half, positions by `pitch`
     * elements; a run is `pieces` reads of run * pitch elements, a face row
     * apart. The other dim's half steps faces by `across`. */
    uint32_t along = rows ? 2 : 1, across = rows ? 1 : 2, pitch = rows ? 16 : 1;
    uint32_t pieces = rows ? 1 : 16;
    for (uint32_t u = first; u < first + units; u++) {
        uint32_t tc = u % wt, tr = u / wt, o0 = (rows ? tr % ht : tc) * 32;
        if (o0 + 32 > total) nn_zero(buf, tile); /* what no input fills */
        for (uint32_t i = 0; i < inputs; i++) {
            const uint32_t at = CR_INPUTS + 1 + i * CR_INPUT_WORDS;
            uint32_t extent = get_arg_val(at), off = get_arg_val(at + 1),
                     tiles = get_arg_val(at + 2);
            bool dram = get_arg_val(at + 3) != 0;
            uint32_t base = get_common_arg_val(1 + i);
            /* Output positions [a, b) of this tile come from input i, in runs
             * that stay inside one half of both tiles. */
            uint32_t a = off > o0 ? off : o0, b = off + extent < o0 + 32 ? off + extent : o0 + 32;
            while (a < b) {
                uint32_t from = a - off, fi = from % 32, to = a - o0, run = b - a;
                if (run > 16 - to % 16) run = 16 - to % 16;
                if (run > 16 - fi % 16) run = 16 - fi % 16;
                /* The input tile: the same tile column of row from / 32 of
                 * the same matrix, or the same tile row's column from / 32. */
                uint32_t page =
                    rows ? (tr / ht * tiles + from / 32) * wt + tc : tr * tiles + from / 32;
                uint32_t sat = (fi / 16 * along * 256 + fi % 16 * pitch) * esize;
                uint32_t dat = (to / 16 * along * 256 + to % 16 * pitch) * esize;
                for (uint32_t h = 0; h < 2; h++) {
                    uint32_t half = h * across * 256 * esize;
                    lm_noc_async_read_strided(
                        lm_interleaved_noc_addr(dram, base, tile, page, sat + half), face_row,
                        buf + dat + half, face_row, run * pitch * esize, pieces);
                }
                a += run;
            }
        }
        noc_async_read_barrier();
        noc_async_write(buf, lm_interleaved_noc_addr(out_dram, out, tile, u, 0), tile);
        noc_async_write_barrier();
    }
}
