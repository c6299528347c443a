/* Copies a tile tensor into another tile tensor with the same elements in
 * the same row-major order but another shape (a reshape in tile layout): the
 * step from a keepdim reduction result to the result without the reduced dims
 * when the last two dims change. Each output tile is assembled in CB 16 from
 * elements of the source tiles, the last source tile read kept in CB 0.
 * Moves bytes only (float32, bfloat16 or 32-bit integer elements).
 * Compile-time args: element size.
 * Runtime args: first, count (output tiles), output Ht, Wt, H, W, source
 * Ht, Wt, H, W, source is_dram, output is_dram. Common args: source address,
 * output address. */
#include "dataflow_api.h"

#define A(i) get_arg_val(i)

static inline uint32_t face_index(uint32_t r, uint32_t c) {
    return (r >> 4) << 9 | (c >> 4) << 8 | (r & 15) << 4 | (c & 15);
}

void kernel_main(void) {
    uint32_t esize = get_compile_time_arg_val(0);
    uint32_t first = A(0), count = A(1);
    uint32_t oht = A(2), owt = A(3), oh = A(4), ow = A(5);
    uint32_t kht = A(6), kwt = A(7), kh = A(8), kw = A(9);
    InterleavedAddrGenFast src = {.bank_base_address = get_common_arg_val(0),
                                  .page_size = get_tile_size(0),
                                  .is_dram = A(10)};
    InterleavedAddrGenFast dst = {.bank_base_address = get_common_arg_val(1),
                                  .page_size = get_tile_size(16),
                                  .is_dram = A(11)};
    cb_reserve_back(0, 1);
    cb_reserve_back(16, 1);
    uint32_t sbuf = get_write_ptr(0), obuf = get_write_ptr(16), cached = 0xffffffffu;
    for (uint32_t t = first; t < first + count; t++) {
        uint32_t bo = t / (oht * owt), tr = t / owt % oht, tc = t % owt;
        uint32_t rows = oh - tr * 32 < 32 ? oh - tr * 32 : 32;
        uint32_t cols = ow - tc * 32 < 32 ? ow - tc * 32 : 32;
        nn_zero(obuf, get_tile_size(16));
        for (uint32_t r = 0; r < rows; r++) {
            uint32_t f = (bo * oh + tr * 32 + r) * ow + tc * 32;
            uint32_t kc = f % kw, q = f / kw, kr = q % kh, kb = q / kh;
            for (uint32_t c = 0; c < cols; c++) {
                uint32_t s = (kb * kht + kr / 32) * kwt + kc / 32;
                if (s != cached) {
                    noc_async_read_tile(s, &src, sbuf);
                    noc_async_read_barrier();
                    cached = s;
                }
                uint32_t from = face_index(kr & 31, kc & 31) * esize;
                uint32_t to = face_index(r, c) * esize;
                if (esize == 2)
                    *(volatile uint16_t *)(uintptr_t)(obuf + to) =
                        *(volatile uint16_t *)(uintptr_t)(sbuf + from);
                else
                    *(volatile uint32_t *)(uintptr_t)(obuf + to) =
                        *(volatile uint32_t *)(uintptr_t)(sbuf + from);
                if (++kc == kw) {
                    kc = 0;
                    if (++kr == kh) {
                        kr = 0;
                        kb++;
                    }
                }
            }
        }
        noc_async_write_tile(t, &dst, obuf);
        noc_async_write_barrier();
    }
}
