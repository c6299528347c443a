/* Convolution and pooling, reader: builds the rows of a patch matrix
 * ("im2col") straight from a row-major NHWC image (one page of C elements per
 * pixel, pixel p = (n * H + y) * W + x; or one page per image row of W
 * pixels, e.g. an NCHW image of one channel) and hands them to the tilize kernels
 * (tilize_compute.c, tilize_writer.c) in their units (nn_row_block): 32 rows of
 * a block of columns, as `room` row-major pages of circular buffer 0.
 *
 * The image may be "virtually" strided (zeros between its pixels: a
 * transposed convolution's input) by uh, uw, and padded by pt rows on top and
 * pl columns on the left (negative pads crop); positions outside it read
 * `fill` (zero for convolutions, -inf for max pooling).
 *
 * A 3-D image (runtime args 42..48) is n x D images of H lines, its line
 * (n * D + z) * H + y, and its KD x KH x KW kernel has KD * KH kernel rows,
 * kz * KH + ky: everything below that walks the kernel rows walks those,
 * and output image b (the rows' n) is n * OD + oz. A 2-D image is one of
 * depth 1.
 *
 * Three matrix shapes:
 *   CONV (mode 0): one matrix [N * OH * OW, KH * KW * C]; row (n, oh, ow),
 *     column (kh * KW + kw) * C + c.
 *   POOL_FUSED (mode 2): units of the one matrix [N * OH * OW / q, q * C]
 *     (q output pixels a row, whole tiles wide), each given KH * KW times,
 *     once per tap (for pool_compute.c, which reduces them as they come).
 *   DEPTHWISE (mode 3): POOL_FUSED's units (q = 1), each tap's block
 *     followed by the unit's column tiles of the tap's weights (row t of
 *     a [1, KH * KW, C] tile tensor, common arg 2, moved to row 0) in
 *     circular buffer 4, for depthwise_compute.c.
 * The rows of an output pixel read runs of channels: one NoC read per tap
 * and pixel (per block of columns).
 *
 * No compile-time args. Runtime args: first unit, units, then h, w, ht, wt,
 * block (as tilize_compute.c and tile_units.c take them), then H, W, C, OH,
 * OW, KH, KW, sh, sw, dh, dw, pt, pl (int32), uh, uw, fill (float32 bits;
 * bfloat16 keeps the upper half), then is_dram_in, esize, mode (and
 * pool_compute.c's sum), pixels per page (1 or W), output pixels per row
 * (pooling, see nn_conv_im2col; 1 otherwise), lines staged whole (0: none;
 * see stage_lines), the weights' is_dram (DEPTHWISE), planes (1; or C for
 * an NCHW image, a page per row of one channel: staged lines only, each
 * interleaved into NHWC order as it is staged), depthwise_compute.c's taps
 * per batch (DEPTHWISE; unused here), the weights' element size
 * (DEPTHWISE; 1 for bfloat8_b, see read_row),
 * then (DEPTHWISE) whether there is a bias (a float32 or bfloat16 tile
 * tensor of C values, common arg 3), its is_dram and element size, and
 * depthwise_compute.c's activation args (unused here), the depth (args
 * 42..48: D, OD, KD, sd, dd, pd, ud), the step between a core's units
 * (arg 49; 0: consecutive), a 3-D image's ring (args 50 and 51, see
 * slot_of) and a fused max pooling's rows and row step (args 52 and 53, 0
 * for none; CONV only): all runtime, so one compiled kernel serves
 * every convolution and pooling. Common arg 0: the image's address.
 *
 * With NN_IM2COL_FUSED the units are whole patch rows that a matmul's
 * compute takes as they come (nn_linear_gathered), each core's every
 * step-th tile row. */
#include "dataflow_api.h"

/* The circular buffers: the patch rows handed on, zeros to copy from, the
 * staging. With NN_IM2COL_FUSED the rows go straight to a matmul's compute
 * (nn_linear_gathered), whose own buffers take the low indices. */
#ifdef NN_IM2COL_FUSED
#define CB_ROWS 7
#define CB_ZEROS 8
#define CB_STAGE 9
#else
#define CB_ROWS 0
#define CB_ZEROS 2
#define CB_STAGE 3
#endif

/* Zeros for the zero fills: a page of circular buffer 2 (when the program
 * has one) zeroed once, copied from with one NoC read per run instead of a
 * dozen transfers of nn_zero. */
static uint64_t zero_src;
static uint32_t zero_size;

static void zero_run(uint32_t dst, uint32_t bytes) {
    if (bytes == 0) return;
    if (bytes <= 16 && (dst | bytes) % 4 == 0) {
        /* A few words (a pixel or two of padding): stores cost less. */
        for (uint32_t i = 0; i < bytes; i += 4)
            *(volatile uint32_t *)(uintptr_t)(dst + i) = 0;
        return;
    }
    if (bytes <= zero_size)
        noc_async_read(zero_src, dst, bytes);
    else
        nn_zero(dst, bytes);
}

/* The image's pages: page g in bank g % banks at base + (g / banks) *
 * pstride (dataflow_api.h's interleaving, worked out once rather than per
 * read: the reads are this kernel's whole cost); ppp pixels of psize bytes
 * per page, or with planes > 1 a row of W elements of one channel a page. */
static uint32_t banks, pstride, img_base, ppp, psize, planes;
static bool img_dram;

/* The NoC address of byte `off` of pixel `pix`. */
static uint64_t pixel_addr(uint32_t pix, uint32_t off) {
    uint32_t g = pix / ppp;
    return lm_bank_noc_addr(img_dram, g % banks,
                            img_base + g / banks * pstride + pix % ppp * psize + off);
}

/* Reads pixels pix .. pix + n - 1 (consecutive in one image row) to `dst`:
 * one read with a page per image row, else one per pixel (the bank and
 * offset stepped, not worked out again; the globals in locals, see
 * pool_rows). */
static void read_pixels(uint32_t pix, uint32_t n, uint32_t dst) {
    if (n == 0) return;
    if (ppp > 1) {
        noc_async_read(pixel_addr(pix, 0), dst, n * psize);
        return;
    }
    const uint32_t nb = banks, size = psize, stride = pstride;
    const bool dram = img_dram;
    uint32_t bank = pix % nb, addr = img_base + pix / nb * stride;
    for (uint32_t s = 0; s < n; s++, dst += size) {
        noc_async_read(lm_bank_noc_addr(dram, bank, addr), dst, size);
        if (++bank == nb) {
            bank = 0;
            addr += stride;
        }
    }
}

static void fill_run(uint32_t dst, uint32_t n, uint32_t esize, uint32_t bits) {
    if (!bits) {
        zero_run(dst, n * esize);
    } else if (esize == 2) {
        for (uint32_t i = 0; i < n; i++)
            *(volatile uint16_t *)(uintptr_t)(dst + 2 * i) = (uint16_t)(bits >> 16);
    } else {
        for (uint32_t i = 0; i < n; i++)
            *(volatile uint32_t *)(uintptr_t)(dst + 4 * i) = bits;
    }
}

/* Patch rows 0..len-1 of a staged run into rows `pitch` bytes apart at
 * dst: kernel row ky of patch row j is the `run` bytes of staged line ky
 * (lines `line` bytes apart) from byte j * step, so each kernel row of all
 * len patch rows is one strided local read; a line outside the image (bit
 * ky of yok clear) reads `fill`. */
static void copy_patches(uint32_t dst, uint32_t pitch, uint32_t len, uint32_t stage, uint32_t line,
                         uint32_t step, uint32_t run, uint32_t kh, uint32_t yok, uint64_t local,
                         uint32_t C, uint32_t esize, uint32_t fill) {
    for (uint32_t ky = 0; ky < kh; ky++, dst += run, stage += line) {
        if (yok >> ky & 1) {
            lm_noc_async_read_strided(local | stage, step, dst, pitch, run, len);
            continue;
        }
        for (uint32_t j = 0, at = dst; j < len; j++, at += pitch)
            fill_run(at, run / esize, esize, fill);
    }
}

/* Row r of the tiles read_row reads: a tile row is 16 elements in each of
 * faces 2 (r / 16) and 2 (r / 16) + 1. `esize` is the bytes of an element,
 * 1 for bfloat8_b, whose face rows' exponents come first (a byte each, 16
 * a face), then the faces' mantissas. */
typedef struct tile_row {
    uint32_t at, exp, esize; /* bytes from the tile: the row, its exponent */
} tile_row;

static tile_row tile_row_of(uint32_t r, uint32_t esize) {
    uint32_t elem = (r / 16) * 2 * 256 + (r % 16) * 16;
    return (tile_row){esize == 1 ? 64 + elem : elem * esize, (r / 16) * 2 * 16 + r % 16, esize};
}

/* Row `row` of the tile at `src` to row 0 of the tile at dst (the rest of
 * dst is left as it was: a row broadcast reads row 0 only). */
static void read_row(uint64_t src, const tile_row *row, uint32_t dst) {
    uint32_t e = row->esize;
    if (e == 1) lm_noc_async_read_strided(src + row->exp, 16, dst, 16, 1, 2);
    lm_noc_async_read_strided(src + row->at, 256 * e, dst + (e == 1 ? 64 : 0), 256 * e, 16 * e, 2);
}

/* Circular buffer 7's two bfloat16 tiles, pushed once: all ones, and ones
 * in rows 0 .. valid - 1 only (the last tile row of a matrix whose rows end
 * inside it), zeros below: depthwise_compute.c adds mask x bias, so rows
 * past the matrix's last stay zero. */
static void masks_make(uint32_t valid) {
    cb_reserve_back(7, 2);
    volatile uint32_t *w = (volatile uint32_t *)(uintptr_t)get_write_ptr(7);
    const uint32_t ones = 0x3f803f80u; /* two bfloat16 1.0 */
    for (uint32_t i = 0; i < 512; i++)
        w[i] = ones;
    /* Face f holds rows 16 (f / 2) .. +15, each row 8 words. */
    for (uint32_t f = 0; f < 4; f++)
        for (uint32_t r = 0; r < 16; r++)
            for (uint32_t k = 0; k < 8; k++)
                w[512 + f * 128 + r * 8 + k] = (f / 2) * 16 + r < valid ? ones : 0;
    cb_push_back(7, 2);
}

/* The geometry, for pool_rows, stage_lines and line_of. */
static int32_t g_H, g_W, g_sh, g_sw, g_pt, g_pl, g_dh, g_sd, g_dd, g_pd;
static uint32_t g_OH, g_OW, g_KH, g_KW, g_uh, g_uw, g_D, g_OD, g_KD, g_ud, g_VH, g_VD;
static bool g_flat; /* 2-D: depth 1, one depth tap, no depth padding */

/* The input line that kernel row kr (kz * KH + ky) of output image b reads
 * when its window's top row is y0: (n * D + z) * H + y, or UINT32_MAX where
 * the row is outside the image (padding, or between the lines of a
 * virtually strided one). */
static uint32_t line_of(uint32_t b, uint32_t kr, int32_t y0) {
    const uint32_t uh = g_uh;
    if (g_flat) { /* no division by KH on the common path */
        uint32_t vy = (uint32_t)(y0 + (int32_t)kr * g_dh);
        return vy < g_VH && vy % uh == 0 ? b * (uint32_t)g_H + vy / uh : UINT32_MAX;
    }
    const uint32_t KH = g_KH, OD = g_OD;
    uint32_t kz = kr / KH, vy = (uint32_t)(y0 + (int32_t)(kr - kz * KH) * g_dh);
    if (vy >= g_VH || vy % uh) return UINT32_MAX;
    uint32_t oz = b % OD, vz = (uint32_t)((int32_t)oz * g_sd - g_pd + (int32_t)kz * g_dd);
    if (vz >= g_VD || vz % g_ud) return UINT32_MAX;
    return ((b / OD) * g_D + vz / g_ud) * (uint32_t)g_H + vy / uh;
}

/* Input line `line` (n * H + y) as W pixels to dst, uw pixels apart (a
 * virtual stride: the zeros between them are left as they are): one read
 * of a page per image row, strided with uw > 1; from an NCHW image, one
 * strided read per channel, each element to its place in the pixels (the
 * channels interleaved as the line arrives, so the patches are NHWC's). */
static void read_line(uint32_t line, uint32_t dst) {
    const uint32_t W = (uint32_t)g_W, np = planes, apart = g_uw * psize;
    if (np == 1 && apart == psize) {
        read_pixels(line * W, W, dst);
        return;
    }
    if (np == 1) {
        lm_noc_async_read_strided(pixel_addr(line * W, 0), psize, dst, apart, psize, W);
        return;
    }
    const uint32_t H = (uint32_t)g_H * g_D, esize = psize / np, nb = banks; /* an image's lines */
    uint32_t g = (line / H * np) * H + line % H;                            /* channel 0's row */
    for (uint32_t c = 0; c < np; c++, g += H)
        lm_noc_async_read_strided(lm_bank_noc_addr(img_dram, g % nb, img_base + g / nb * pstride),
                                  esize, dst + c * esize, apart, esize, W);
}

/* Whole-line staging (runtime arg 29 > 0, see nn_conv.c): circular buffer
 * 3 is a ring of `lines` input lines (n * H + y) of s_pitch bytes, line l
 * in slot l % lines, its pixel x at byte (x * uw + s_left) * page; the
 * padding beside the pixels and the virtual stride's zeros between them
 * stay as zeroed at the start. Virtual rows between the image's (y not a
 * multiple of uh) read as outside it. The host sized the ring so that the
 * lines of any one unit never share a slot. */
#define STAGE_LINES 64
static uint32_t s_tag[STAGE_LINES]; /* the line in each slot */
static uint32_t s_lines, s_pitch, s_left;
/* A 3-D image's ring (runtime args 50 and 51, nn_conv.c's staged_ring; 0
 * for a 2-D one): line l (image l / H, row l % H) in slot (l / H % s_zs) *
 * s_hs + l % H % s_hs, so that the lines of a unit, KD images apart, share
 * no slot. */
static uint32_t s_zs, s_hs;

static uint32_t slot_of(uint32_t line) {
    if (!s_zs) return line % s_lines; /* 2-D */
    const uint32_t H = (uint32_t)g_H;
    return line / H % s_zs * s_hs + line % H % s_hs;
}

/* Columns c0 .. c1 - 1 (bytes of a patch row, mode 0) of patch rows row ..
 * row + count - 1 into rows `pitch` bytes apart at dst: first each input
 * line they read that the ring lacks (read_line), then for each output row
 * and kernel row whose KW pixels the columns reach one strided local read
 * of that part of them per patch row; kernel rows outside the image read
 * zeros. Whole patch rows are c0 = 0, c1 = KH * KW pixels; a unit of a
 * column block takes its block's window, so a patch row wider than a block
 * is staged as one narrower is. */
static void stage_lines(uint32_t dst, uint32_t pitch, uint32_t row, uint32_t count, uint32_t c0,
                        uint32_t c1, uint32_t stage, uint64_t local) {
    /* The geometry in locals (as pool_rows'): a NoC call clobbers memory. */
    const uint32_t OH = g_OH, OW = g_OW, KR = g_KH * g_KD, H = (uint32_t)g_H, per = OH * OW;
    const uint32_t page = psize, lpitch = s_pitch, left = s_left * page, nlines = s_lines;
    const int32_t sh = g_sh, pt = g_pt, dh = g_dh;
    const uint32_t sw = (uint32_t)g_sw, pl = (uint32_t)g_pl;
    /* A 2-D image not strided virtually, in a ring of l % lines (the
     * common case): kernel row kr of output image b reads line b * H + y0 +
     * kr * dh when that row is inside the image, worked out here rather
     * than by line_of. With dh 1 an output row's lines are a range, and the
     * ranges of the output rows after it only move down: each row stages
     * those of its range past the last one staged. */
    const bool plain = g_flat && g_uh == 1 && !s_zs;
    const uint32_t end = row + count;
    uint32_t next = 0; /* dh 1: the lines before this one are staged */
    for (uint32_t r = row; r < end;) {
        uint32_t b = r / per, p = r % per, ox = p % OW;
        int32_t y0 = (int32_t)(p / OW) * sh - pt;
        r += OW - ox < end - r ? OW - ox : end - r;
        if (plain && dh == 1) {
            /* [lo, hi) clamped to the image: empty for a window wholly in
             * the top or the bottom padding. */
            int32_t lo = y0 > 0 ? y0 : 0, hi = y0 + (int32_t)KR;
            if (lo > (int32_t)H) lo = (int32_t)H;
            if (hi > (int32_t)H) hi = (int32_t)H;
            if (hi < lo) hi = lo;
            uint32_t line = b * H + (uint32_t)lo, last = b * H + (uint32_t)hi;
            if (line < next) line = next;
            for (; line < last; line++) {
                uint32_t slot = line % nlines;
                if (s_tag[slot] == line) continue;
                s_tag[slot] = line;
                read_line(line, stage + slot * lpitch + left);
            }
            if (last > next) next = last;
            continue;
        }
        for (uint32_t kr = 0; kr < KR; kr++) {
            uint32_t line, slot;
            if (plain) {
                uint32_t vy = (uint32_t)(y0 + (int32_t)kr * dh);
                if (vy >= H) continue;
                line = b * H + vy;
                slot = line % nlines;
            } else {
                line = line_of(b, kr, y0);
                if (line == UINT32_MAX) continue;
                slot = slot_of(line);
            }
            if (s_tag[slot] == line) continue;
            s_tag[slot] = line;
            read_line(line, stage + slot * lpitch + left);
        }
    }
    noc_async_read_barrier(); /* staged before it is copied */
    const uint32_t step = sw * page, run = g_KW * page, zsize = zero_size;
    const uint64_t zsrc = zero_src;
    /* Kernel row kr is bytes [kr * run, kr * run + run) of a patch row:
     * the rows the window reaches, and of each the part inside it. Each
     * output row's patch rows read that part from one staged line, `step`
     * bytes apart: one strided read. In the plain case, m whole output
     * rows of one image whose lines for kr are inside it and follow in the
     * ring (sh slots apart) are m strided reads of the same shape, or, when
     * that is fewer, one per patch of a row taking it down all m rows. */
    const uint32_t kr0 = c0 / run, kend = (c1 + run - 1) / run;
    for (uint32_t kr = kr0; kr < kend; kr++) {
        const uint32_t a = kr * run > c0 ? kr * run : c0;
        const uint32_t bytes = (kr * run + run < c1 ? kr * run + run : c1) - a;
        for (uint32_t r = row; r < end;) {
            uint32_t b = r / per, p = r % per, oy = p / OW, ox = p % OW;
            uint32_t len = OW - ox < end - r ? OW - ox : end - r;
            int32_t y0 = (int32_t)oy * sh - pt;
            uint32_t to = dst + (r - row) * pitch + (a - c0), line, slot = 0, m = 1;
            if (plain) {
                uint32_t vy = (uint32_t)(y0 + (int32_t)kr * dh);
                line = vy < H ? b * H + vy : UINT32_MAX;
                if (line != UINT32_MAX) {
                    slot = line % nlines;
                    if (ox == 0 && len == OW) {
                        uint32_t rows = (end - r) / OW, n;
                        if (rows > OH - oy) rows = OH - oy;
                        n = (H - 1 - vy) / (uint32_t)sh + 1; /* lines left in the image */
                        if (rows > n) rows = n;
                        n = (nlines - 1 - slot) / (uint32_t)sh + 1; /* before the ring wraps */
                        m = rows < n ? rows : n;
                    }
                }
            } else {
                line = line_of(b, kr, y0);
                if (line != UINT32_MAX) slot = slot_of(line);
            }
            /* Pixel ox * sw - pl of the line: at or right of its padding. */
            uint32_t src = stage + slot * lpitch + (ox * sw - pl) * page + left + (a - kr * run);
            if (line == UINT32_MAX) {
                if (bytes <= zsize)
                    lm_noc_async_read_strided(zsrc, 0, to, pitch, bytes, len);
                else
                    for (uint32_t j = 0; j < len; j++)
                        nn_zero(to + j * pitch, bytes);
            } else if (m > 1 && len < m) {
                for (uint32_t j = 0; j < len; j++)
                    lm_noc_async_read_strided(local | (src + j * step), (uint32_t)sh * lpitch,
                                              to + j * pitch, len * pitch, bytes, m);
                len *= m;
            } else {
                for (uint32_t i = 0; i < m; i++)
                    lm_noc_async_read_strided(local | (src + i * (uint32_t)sh * lpitch), step,
                                              to + i * len * pitch, pitch, bytes, len);
                len *= m;
            }
            r += len;
        }
    }
}

/* Tap (kernel row kr, dx) of output pixels row .. row + count - 1 (modes 1 and 2) into rows
 * `pitch` bytes apart at dst, q pixels a row: the output pixel stepped
 * along rather than divided out of each row; with a page per image row and
 * dense rows (or a pixel a row), the pixels an output row reads are one
 * strided read, else one read per pixel. Positions outside the image read
 * `fill`.
 * The geometry is copied to locals first: every NoC call clobbers memory,
 * so globals would be loaded again for each read. */
static void pool_rows(uint32_t dst, uint32_t pitch, uint32_t q, uint32_t row, uint32_t count,
                      uint32_t kr, int32_t dx, uint32_t C, uint32_t esize, uint32_t fill) {
    const uint32_t W = (uint32_t)g_W, OH = g_OH, OW = g_OW;
    const uint32_t size = psize, nb = banks, base = img_base, stride = pstride;
    const int32_t sh = g_sh, sw = g_sw, vx0 = dx - g_pl;
    const bool per_row = ppp > 1, dram = img_dram;
    /* Rows q pixels wide with no gap between them: the destination just
     * moves on. With a pixel a row, the next pixel's place is a row on. */
    const bool dense = q * size == pitch;
    const uint32_t next = q == 1 ? pitch : size;
    uint32_t at = dst, qi = 0;
    while (count) {
        /* The output pixels of one output row: their taps lie on one image
         * row, those in the image a run of it between fills. */
        uint32_t b = row / (OH * OW), p = row % (OH * OW), oy = p / OW, ox = p % OW;
        uint32_t len = OW - ox < count ? OW - ox : count;
        int32_t vx = (int32_t)ox * sw + vx0;
        uint32_t line = line_of(b, kr, (int32_t)oy * sh - g_pt), first = len, last = len;
        if (line != UINT32_MAX) {
            /* j in [first, last): vx + j * sw inside [0, W). */
            first = vx >= 0 ? 0 : (uint32_t)(-vx + sw - 1) / (uint32_t)sw;
            last = vx >= (int32_t)W
                       ? 0
                       : ((uint32_t)((int32_t)W - vx) + (uint32_t)sw - 1) / (uint32_t)sw;
            if (last > len) last = len;
            if (first > last) first = last;
        }
        uint64_t line_addr = 0;
        if (per_row && first < last)
            line_addr = lm_bank_noc_addr(dram, line % nb, base + line / nb * stride);
        const uint32_t hi = (uint32_t)(line_addr >> 32), step = (uint32_t)sw * size;
        uint32_t lo = (uint32_t)line_addr + (uint32_t)(vx + (int32_t)first * sw) * size;
        if (per_row && (dense || q == 1)) {
            /* The common case in three plain runs: fills, reads, fills. */
            for (uint32_t j = 0; j < first; j++, at += next)
                fill_run(at, C, esize, fill);
            lm_noc_async_read_strided((uint64_t)hi << 32 | lo, step, at, next, size, last - first);
            at += (last - first) * next;
            for (uint32_t j = last; j < len; j++, at += next)
                fill_run(at, C, esize, fill);
            row += len;
            count -= len;
            continue;
        }
        for (uint32_t j = 0; j < len; j++) {
            if (j < first || j >= last) {
                fill_run(at, C, esize, fill);
            } else if (per_row) {
                noc_async_read((uint64_t)hi << 32 | lo, at, size);
                lo += step;
            } else {
                uint32_t pix = line * W + (uint32_t)(vx + (int32_t)j * sw);
                noc_async_read(lm_bank_noc_addr(dram, pix % nb, base + pix / nb * stride), at,
                               size);
            }
            at += size;
            if (!dense && ++qi == q) {
                qi = 0;
                dst += pitch;
                at = dst;
            }
        }
        row += len;
        count -= len;
    }
}

void kernel_main(void) {
    uint32_t first = get_arg_val(0), units = get_arg_val(1);
    uint32_t esize = get_arg_val(24), mode = get_arg_val(25);
    uint32_t h = get_arg_val(2), w = get_arg_val(3), ht = get_arg_val(4);
    uint32_t wt = get_arg_val(5), block = get_arg_val(6);
    int32_t H = (int32_t)get_arg_val(7), W = (int32_t)get_arg_val(8);
    uint32_t C = get_arg_val(9);
    uint32_t OH = get_arg_val(10), OW = get_arg_val(11);
    /* Arg 12 is the kernel rows, KD * KH (the computes take KH * KW taps). */
    uint32_t KR = get_arg_val(12), KW = get_arg_val(13), KD = get_arg_val(44), KH = KR / KD;
    int32_t sh = (int32_t)get_arg_val(14), sw = (int32_t)get_arg_val(15);
    int32_t dh = (int32_t)get_arg_val(16), dw = (int32_t)get_arg_val(17);
    int32_t pt = (int32_t)get_arg_val(18), pl = (int32_t)get_arg_val(19);
    int32_t uh = (int32_t)get_arg_val(20), uw = (int32_t)get_arg_val(21);
    uint32_t fill = get_arg_val(22);
    int32_t vw = (W - 1) * uw + 1; /* the virtual image's width */
    uint32_t room = block < wt ? block : wt;
    bool dram = get_arg_val(23);
    const volatile uint32_t *info = lm_l1_word(LM_L1_CORE_INFO);
    banks = dram ? info[LM_CORE_INFO_DRAM_BANKS]
                 : info[LM_CORE_INFO_GRID_X] * info[LM_CORE_INFO_GRID_Y];
    uint32_t align = dram ? info[LM_CORE_INFO_DRAM_ALIGN] : info[LM_CORE_INFO_L1_ALIGN];
    uint32_t page = C * esize; /* a pixel */
    img_dram = dram;
    ppp = get_arg_val(27);
    uint32_t q = get_arg_val(28); /* output pixels per row (pooling) */
    psize = page;
    planes = get_arg_val(31);
    pstride = (ppp * page / planes + align - 1) / align * align;
    img_base = get_common_arg_val(0);
    zero_size = 0;
    if (fill == 0 && lm_l1_word(LM_L1_CB_CONFIG + CB_ZEROS * LM_CB_CONFIG_STRIDE)[1]) {
        cb_reserve_back(CB_ZEROS, 1); /* scratch: never pushed */
        uint32_t z = get_write_ptr(CB_ZEROS);
        zero_size = get_tile_size(CB_ZEROS);
        nn_zero(z, zero_size);
        zero_src = get_noc_addr(my_x(), my_y(), z);
    }
    /* One unit holds whole patch rows (the usual case): walk the taps. */
    bool whole = mode == 0 && wt <= block;
    /* Staging (circular buffer 3, when the program has one; whole patch rows,
     * undilated along W): a run of output pixels in one output row reads
     * each input pixel it needs once per kernel row into L1, then copies
     * every pixel's KW taps of a kernel row with one local read -- fewer
     * transfers than one per tap. */
    uint32_t stage = 0, local = 0;
    s_lines = get_arg_val(29);
    s_zs = get_arg_val(50), s_hs = get_arg_val(51);
    if (s_lines || (whole && dw == 1 && uw == 1 && uh == 1 && KR <= 32 &&
                    lm_l1_word(LM_L1_CB_CONFIG + CB_STAGE * LM_CB_CONFIG_STRIDE)[1] >=
                        KR * (31 * (uint32_t)sw + KW) * page)) {
        cb_reserve_back(CB_STAGE, 1); /* scratch: never pushed */
        stage = get_write_ptr(CB_STAGE);
        local = (uint32_t)(get_noc_addr(my_x(), my_y(), 0) >> 32);
    }
    if (s_lines) {
        /* The line's padding, as nn_conv.c's staged_line_bytes. */
        int32_t last = (int32_t)(OW - 1) * sw - pl + (int32_t)(KW - 1);
        uint32_t right = last > vw - 1 ? (uint32_t)(last - (vw - 1)) : 0;
        s_left = pl > 0 ? (uint32_t)pl : 0;
        s_pitch = ((s_left + (uint32_t)vw + right) * page + 15) / 16 * 16;
        nn_zero(stage, s_lines * s_pitch);
        for (uint32_t i = 0; i < s_lines; i++)
            s_tag[i] = UINT32_MAX;
    }
    /* With one column block every unit writes the same columns, so those
     * past the last valid one stay as zeroed here, once, in the whole ring
     * of circular buffer 0 (not every row: one transfer in four). */
    bool cols_zeroed = wt <= block;
    if (cols_zeroed) {
        const volatile uint32_t *cb0 = lm_l1_word(LM_L1_CB_CONFIG + CB_ROWS * LM_CB_CONFIG_STRIDE);
        cb_reserve_back(CB_ROWS, cb0[3]); /* the whole ring, before anything is pushed */
        nn_zero(get_write_ptr(CB_ROWS), cb0[1]);
    }
    /* POOL_FUSED and DEPTHWISE give each unit's block once per tap, taps
     * in order. So does CONV with a max pooling fused after the product
     * (args 52 and 53: the pooling window's rows and the output rows
     * between them, in input rows; see matmul_compute.c's NN_MM_POOL): its
     * unit once per window row, the top padding less by the step each
     * time (the window's columns are the product's column groups). */
    int32_t pt0 = pt, prow_step = (int32_t)get_arg_val(53);
    uint32_t taps = mode >= 2 ? KR * KW : get_arg_val(52) ? get_arg_val(52) : 1;
    /* Whole pixels a row (the pooling modes and a depthwise convolution's
     * per-tap matrices), not strided virtually: pool_rows. */
    bool fast_pool = mode != 0 && uh == 1 && uw == 1 && cols_zeroed;
    g_H = H, g_W = W, g_sh = sh, g_sw = sw, g_pt = pt, g_pl = pl, g_dh = dh;
    g_OH = OH, g_OW = OW, g_KH = KH, g_KW = KW, g_uh = (uint32_t)uh, g_uw = (uint32_t)uw;
    g_VH = (uint32_t)(H - 1) * g_uh + 1;
    g_D = get_arg_val(42), g_OD = get_arg_val(43), g_KD = KD;
    g_sd = (int32_t)get_arg_val(45), g_dd = (int32_t)get_arg_val(46);
    g_pd = (int32_t)get_arg_val(47), g_ud = get_arg_val(48);
    g_VD = (g_D - 1) * g_ud + 1;
    g_flat = g_D == 1 && g_OD == 1 && KD == 1 && g_pd == 0;
    uint32_t wsize = mode == 3 ? get_tile_size(4) : 0;
    /* The weights' element size (read_row: the compute broadcasts row 0
     * of each tile down the rows, so each tap's row is moved there). */
    uint32_t wrow = get_arg_val(33);
    InterleavedAddrGenFast wgen = {
        .bank_base_address = get_common_arg_val(2), .page_size = wsize, .is_dram = get_arg_val(30)};
    /* A bias: each unit's tiles of it (row 0, as the weights') after the
     * unit's last tap, in circular buffer 6; first the masks it is added
     * through (masks_make). */
    bool has_bias = mode == 3 && get_arg_val(34);
    uint32_t brow = has_bias ? get_arg_val(36) : 0, bsize = has_bias ? get_tile_size(6) : 0;
    tile_row row0 = tile_row_of(0, brow);
    InterleavedAddrGenFast bgen = {.bank_base_address = has_bias ? get_common_arg_val(3) : 0,
                                   .page_size = bsize,
                                   .is_dram = get_arg_val(35)};
    if (has_bias) masks_make(h % 32 ? h % 32 : 32);
    /* A core's units are consecutive, or (fused) every ustep-th. */
    uint32_t ustep = get_arg_val(49) ? get_arg_val(49) : 1;
    for (uint32_t ui = 0, u = first; ui < units; ui++, u += ustep) {
        nn_row_block rb = nn_row_block_of(u, ht, wt, block);
        uint32_t col0 = rb.bk * block * 32, width = rb.tiles * 32;
        uint32_t valid = w - col0 < width ? w - col0 : width;
        for (uint32_t t = 0; t < taps; t++) {
            uint32_t ptap = t; /* the tap of the pooling modes */
            if (mode == 0) g_pt = pt = pt0 - (int32_t)t * prow_step;
            cb_reserve_back(CB_ROWS, room);
            uint32_t base = get_write_ptr(CB_ROWS);
            if (s_lines) {
                uint32_t row0 = rb.tr * 32, count = h - row0 < 32 ? h - row0 : 32;
                uint32_t pitch = width * esize;
                stage_lines(base, pitch, row0, count, col0 * esize, (col0 + valid) * esize, stage,
                            (uint64_t)local << 32);
                /* The last block's columns past the matrix's (with one block
                 * they stay zeroed from the start): a wider block's values
                 * left there meet the weights' zero rows, and an inf among
                 * them would make a NaN of a finite output. */
                uint32_t tail = (width - valid) * esize;
                if (!cols_zeroed && tail && tail <= zero_size)
                    lm_noc_async_read_strided(zero_src, 0, base + valid * esize, pitch, tail,
                                              count);
                else if (!cols_zeroed && tail)
                    for (uint32_t r = 0; r < count; r++)
                        nn_zero(base + r * pitch + valid * esize, tail);
                for (uint32_t r = count; r < 32; r++)
                    zero_run(base + r * pitch, pitch);
            }
            for (uint32_t r = 0; stage && !s_lines && r < 32;) {
                uint32_t row = rb.tr * 32 + r, dst = base + r * width * esize;
                if (row >= h) {
                    zero_run(dst, width * esize);
                    r++;
                    continue;
                }
                uint32_t b = row / (OH * OW), p = row % (OH * OW), ox = p % OW;
                int32_t y0 = (int32_t)(p / OW) * sh - pt, x0 = (int32_t)(ox * (uint32_t)sw) - pl;
                /* Output pixels r..r+len-1: one output row, this unit. */
                uint32_t len = 32 - r < OW - ox ? 32 - r : OW - ox;
                if (h - row < len) len = h - row;
                uint32_t span = (len - 1) * (uint32_t)sw + KW, yok = 0;
                for (uint32_t kr = 0; kr < KR; kr++) {
                    uint32_t in = line_of(b, kr, y0);
                    if (in == UINT32_MAX) continue;
                    yok |= 1u << kr;
                    uint32_t line = stage + kr * span * page;
                    int32_t lo = x0 < 0 ? -x0 : 0, hi = W - x0;
                    if (hi > (int32_t)span) hi = (int32_t)span;
                    if (hi < lo) hi = lo;
                    if (lo > (int32_t)span) lo = hi = (int32_t)span;
                    fill_run(line, (uint32_t)lo * C, esize, fill);
                    read_pixels(in * (uint32_t)W + (uint32_t)(x0 + lo), (uint32_t)(hi - lo),
                                line + (uint32_t)lo * page);
                    fill_run(line + (uint32_t)hi * page, (span - (uint32_t)hi) * C, esize, fill);
                }
                noc_async_read_barrier(); /* staged before it is copied */
                /* (Staging needs whole patch rows: the columns past the
                 * valid ones are zeroed already.) */
                copy_patches(dst, width * esize, len, stage, span * page, (uint32_t)sw * page,
                             KW * page, KR, yok, (uint64_t)local << 32, C, esize, fill);
                noc_async_read_barrier(); /* copied before it is staged again */
                r += len;
            }
            if (fast_pool) {
                uint32_t row0 = rb.tr * 32, count = h - row0 < 32 ? h - row0 : 32;
                pool_rows(base, width * esize, q, row0 * q, count * q, ptap / KW,
                          (int32_t)(ptap % KW) * dw, C, esize, fill);
                for (uint32_t r = count; r < 32; r++)
                    zero_run(base + r * width * esize, width * esize);
            }
            for (uint32_t r = 0; !stage && !fast_pool && r < 32; r++) {
                uint32_t row = rb.tr * 32 + r, dst = base + r * width * esize;
                if (row >= h) {
                    zero_run(dst, width * esize);
                    continue;
                }
                uint32_t b = row / (OH * OW), p = row % (OH * OW);
                int32_t y0 = (int32_t)(p / OW) * sh - pt, x0 = (int32_t)(p % OW) * sw - pl;
                if (whole) {
                    uint32_t at = dst;
                    for (uint32_t kr = 0; kr < KR; kr++) {
                        uint32_t rowpix = line_of(b, kr, y0);
                        bool yok = rowpix != UINT32_MAX;
                        if (!yok && !fill) { /* the row's taps are one run */
                            zero_run(at, KW * page);
                            at += KW * page;
                            continue;
                        }
                        if (dw == 1 && uw == 1 && yok) {
                            /* Taps lo..hi-1 read consecutive pixels: the
                             * first one's bank and offset worked out, the
                             * next ones' stepped (the loop's whole cost is
                             * interpreted instructions); the taps left and
                             * right of the image are one fill each. */
                            int32_t lo = x0 < 0 ? -x0 : 0, hi = W - x0;
                            if (hi > (int32_t)KW) hi = (int32_t)KW;
                            if (hi < lo) hi = lo;
                            if (lo > (int32_t)KW) lo = hi = (int32_t)KW;
                            fill_run(at, (uint32_t)lo * C, esize, fill);
                            at += (uint32_t)lo * page;
                            read_pixels(rowpix * (uint32_t)W + (uint32_t)(x0 + lo),
                                        (uint32_t)(hi - lo), at);
                            at += (uint32_t)(hi - lo) * page;
                            fill_run(at, (KW - (uint32_t)hi) * C, esize, fill);
                            at += (KW - (uint32_t)hi) * page;
                            continue;
                        }
                        for (uint32_t kx = 0; kx < KW; kx++, at += page) {
                            int32_t vx = x0 + (int32_t)kx * dw;
                            if (yok && vx >= 0 && vx < vw && vx % uw == 0) {
                                uint32_t pix = rowpix * (uint32_t)W + (uint32_t)(vx / uw);
                                noc_async_read(pixel_addr(pix, 0), at, page);
                            } else {
                                fill_run(at, C, esize, fill);
                            }
                        }
                    }
                } else {
                    uint32_t k = col0, end = col0 + valid;
                    while (k < end) {
                        uint32_t tap, c, run;
                        if (mode == 0) {
                            tap = k / C;
                            c = k % C;
                            run = C - c < end - k ? C - c : end - k;
                        } else {
                            tap = ptap;
                            c = k;
                            run = end - k;
                        }
                        uint32_t line = line_of(b, tap / KW, y0);
                        int32_t vx = x0 + (int32_t)(tap % KW) * dw;
                        uint32_t at = dst + (k - col0) * esize;
                        if (line != UINT32_MAX && vx >= 0 && vx < vw && vx % uw == 0) {
                            uint32_t pix = line * (uint32_t)W + (uint32_t)(vx / uw);
                            noc_async_read(pixel_addr(pix, c * esize), at, run * esize);
                        } else {
                            fill_run(at, run, esize, fill);
                        }
                        k += run;
                    }
                }
                if (!cols_zeroed) zero_run(dst + valid * esize, (width - valid) * esize);
            }
            noc_async_read_barrier();
            cb_push_back(CB_ROWS, room);
            if (mode == 3) {
                /* DEPTHWISE: then the unit's columns of the tap's weights,
                 * row t of the [1, taps, C] weights moved to row 0. */
                cb_reserve_back(4, room);
                uint32_t at = get_write_ptr(4), page = t / 32 * wt + rb.bk * block;
                tile_row row = tile_row_of(t % 32, wrow);
                for (uint32_t i = 0; i < rb.tiles; i++)
                    read_row(get_noc_addr_interleaved(page + i, &wgen, 0), &row, at + i * wsize);
                noc_async_read_barrier();
                cb_push_back(4, room);
            }
            if (has_bias && t + 1 == taps) {
                cb_reserve_back(6, room);
                uint32_t at = get_write_ptr(6);
                for (uint32_t i = 0; i < rb.tiles; i++)
                    read_row(get_noc_addr_interleaved(rb.bk * block + i, &bgen, 0), &row0,
                             at + i * bsize);
                noc_async_read_barrier();
                cb_push_back(6, room);
            }
        }
    }
}
