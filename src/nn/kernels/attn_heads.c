/* Head split and concatenation on tile tensors, one data movement kernel:
 * each output tile is assembled in L1 from runs of the input read straight
 * out of its tiles (a run: consecutive elements of one face row of one input
 * tile that land in one face row of the output tile), then written whole.
 *   mode 0 (split)   in [B, S, C] -> `parts` outputs [B, H, S, D]: output
 *                    part p, matrix m = b*H + h, element (i, j) is input
 *                    matrix b, element (i, p*H*D + h*D + j).
 *   mode 1 (concat)  in [B, H, S, D] -> out [B, S, H*D]: output matrix b,
 *                    element (i, j) is input matrix b*H + j/D, element
 *                    (i, j % D).
 *   mode 2 (concat, sequence first) in [B, H, S, D] -> out [S*B, H*D]:
 *                    element (i, j) is input matrix (i % B)*H + j/D,
 *                    element (i / B, j % D).
 *   mode 3 (split, sequence first) in [S, B, H*D] -> out [B, H, S, D]:
 *                    matrix m = b*H + h, element (i, j) is input matrix i,
 *                    element (b, h*D + j).
 * Only the logical region is read; edge tiles are zeroed first, so the
 * padding stays zero. When D is a multiple of 32 every output tile is one
 * whole input tile (same rows, padding included): one read per tile.
 * Runtime args: first, count (output tiles over all parts), H, D, per-part
 * tiles, out ht, wt, h, w, in ht, wt, mode, esize (2 or 4 bytes), in is_dram,
 * out is_dram, B (mode 2; all runtime: one compiled kernel for every split
 * and merge).
 * Common args: input, outputs. CB 16 is the scratch tile. */
#include "dataflow_api.h"

#define A(i) get_arg_val(i)

/* Face-layout index of (r, c) in a 32x32 tile. */
static inline uint32_t face_index(uint32_t r, uint32_t c) {
    return ((r >> 4) * 2 + (c >> 4)) * 256 + (r & 15) * 16 + (c & 15);
}

void kernel_main(void) {
    uint32_t mode = A(11), esize = A(12);
    uint32_t first = A(0), count = A(1), heads = A(2), d = A(3), per_part = A(4);
    uint32_t oht = A(5), owt = A(6), oh = A(7), ow = A(8), iht = A(9), iwt = A(10);
    uint32_t batch = mode == 2 ? A(15) : 1;
    bool split = mode == 0 || mode == 3;
    uint32_t page = get_tile_size(16);
    InterleavedAddrGenFast in = {
        .bank_base_address = get_common_arg_val(0), .page_size = page, .is_dram = A(13)};
    cb_reserve_back(16, 1);
    uint32_t addr = get_write_ptr(16);
    for (uint32_t u = first; u < first + count; u++) {
        uint32_t part = u / per_part, t = u % per_part;
        uint32_t m = t / (oht * owt), tr = (t / owt) % oht, tc = t % owt;
        uint32_t rows, cols;
        nn_tile_extent(t, oht, owt, oh, ow, &rows, &cols);
        if (d % 32 == 0 && mode < 2) {
            uint32_t sm, sct;
            if (mode == 0) {
                sm = m / heads;
                sct = (part * heads * d + (m % heads) * d) / 32 + tc;
            } else {
                sm = m * heads + tc * 32 / d;
                sct = tc * 32 % d / 32;
            }
            rows = 0; /* nothing element by element */
            noc_async_read_tile((sm * iht + tr) * iwt + sct, &in, addr);
        } else if (rows < 32 || cols < 32) {
            nn_zero(addr, page);
        }
        /* A split's batch entry and first input column, the same for the
         * whole tile. */
        uint32_t mbatch = m / heads, col0 = part * heads * d + (m % heads) * d;
        for (uint32_t r = 0; r < rows; r++) {
            /* Output row tr * 32 + r reads row i of input matrix sm (splits)
             * or of input matrix mb*H + the head of its column (joins; mode
             * 2's output rows are (i, mb) pairs, B to an input row). */
            uint32_t i = tr * 32 + r, mb = m, sm = mbatch;
            if (mode == 2) {
                mb = i % batch;
                i /= batch;
            } else if (mode == 3) {
                sm = i;
                i = mbatch;
            }
            for (uint32_t c = 0; c < cols;) {
                uint32_t j = tc * 32 + c, sc, run = cols - c;
                if (split) {
                    sc = col0 + j;
                } else {
                    sm = mb * heads + j / d;
                    sc = j % d;
                    if (d - sc < run) run = d - sc;
                }
                if (16 - (c & 15) < run) run = 16 - (c & 15);
                if (16 - (sc & 15) < run) run = 16 - (sc & 15);
                uint32_t tile = (sm * iht + i / 32) * iwt + sc / 32;
                uint64_t src =
                    get_noc_addr_interleaved(tile, &in, face_index(i & 31, sc & 31) * esize);
                noc_async_read(src, addr + face_index(r, c) * esize, run * esize);
                c += run;
            }
        }
        noc_async_read_barrier();
        InterleavedAddrGenFast out = {
            .bank_base_address = get_common_arg_val(1 + part), .page_size = page, .is_dram = A(14)};
        noc_async_write_tile(t, &out, addr);
        noc_async_write_barrier();
    }
}
