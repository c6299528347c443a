/* A transposed convolution run by phases (nn_conv.c), reader: the output's
 * pixels, interleaved from the phase convolution's row-major product, as
 * the units of the tilize kernels (tilize_compute.c, tile_units.c): 32
 * pixel rows of a block of channels, row-major in circular buffer 0.
 *
 * The input has a page per row of the phase convolution, [N * OH',
 * OW' * SH * SW * OC]: pixel X of row Y holds its output block's SH * SW
 * phases, phase (rh, rw) at element (rh * SW + rw) * OC. Output pixel (n,
 * oh, ow) is uncropped pixel (q, c) = (oh + crop0, ow + crop1): phase (q %
 * SH, c % SW) of pixel c / SW of row n * OH' + q / SH. Along an output row
 * the pixels of one rw are SW apart and a pixel of the input apart: one
 * strided read each.
 *
 * Runtime args: first unit, units, then h (N * OH * OW), w (OC), ht, wt,
 * block (as tilize_compute.c and tile_units.c take them), then OH', OW',
 * SH, SW, OH, OW, crop0, crop1, the element size, then the input's
 * accessor words. Common arg 0: the input's address. */
#include "dataflow_api.h"

void kernel_main(void) {
    uint32_t first = get_arg_val(0), units = get_arg_val(1);
    uint32_t h = get_arg_val(2), w = get_arg_val(3), ht = get_arg_val(4);
    uint32_t wt = get_arg_val(5), block = get_arg_val(6);
    uint32_t ylen = get_arg_val(7), xlen = get_arg_val(8), sh = get_arg_val(9);
    uint32_t sw = get_arg_val(10), oh_n = get_arg_val(11), ow_n = get_arg_val(12);
    uint32_t crop0 = get_arg_val(13), crop1 = get_arg_val(14), esize = get_arg_val(15);
    const uint32_t pixel = w * esize, per = sh * sw * pixel; /* an input pixel's bytes */
    nn_accessor in;
    nn_accessor_init(&in, 16, get_common_arg_val(0), xlen * per);
    uint32_t room = block < wt ? block : wt;
    for (uint32_t u = first; u < first + units; u++) {
        nn_row_block rb = nn_row_block_of(u, ht, wt, block);
        uint32_t col0 = rb.bk * block * 32, width = rb.tiles * 32;
        uint32_t valid = w - col0 < width ? w - col0 : width, pitch = width * esize;
        cb_reserve_back(0, room);
        uint32_t base = get_write_ptr(0);
        for (uint32_t r = 0; r < 32;) {
            uint32_t p = rb.tr * 32 + r;
            if (p >= h) {
                nn_zero(base + r * pitch, (32 - r) * pitch);
                break;
            }
            uint32_t n = p / (oh_n * ow_n), ow = p % ow_n, q = p / ow_n % oh_n + crop0;
            uint32_t len = 32 - r < ow_n - ow ? 32 - r : ow_n - ow; /* this output row's */
            uint32_t page = n * ylen + q / sh, from = q % sh * sw * pixel + col0 * esize;
            for (uint32_t k = 0; k < sw && k < len; k++) {
                uint32_t c = ow + crop1 + k;
                lm_noc_async_read_strided(
                    nn_accessor_addr(&in, page, c / sw * per + from + c % sw * pixel), per,
                    base + (r + k) * pitch, sw * pitch, valid * esize, (len - k + sw - 1) / sw);
            }
            for (uint32_t j = 0; valid < width && j < len; j++)
                nn_zero(base + (r + j) * pitch + valid * esize, (width - valid) * esize);
            r += len;
        }
        noc_async_read_barrier();
        cb_push_back(0, room);
    }
}
