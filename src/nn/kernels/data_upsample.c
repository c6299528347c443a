/* Upsampling of a tile tensor [N, C, H, W] by integer factors, reader side:
 * for each output tile, the input tiles it needs (at most 2 x 2) are read
 * into L1 and their elements gathered into new tiles.
 *   nearest:  out[o][p] = in[o / sh][p / sw]: the gathered tile goes straight
 *             to circular buffer 16 (the writer's).
 *   bilinear: PyTorch's (align_corners = false) source rows h0 <= h1 and
 *             columns w0 <= w1 with weights: four gathered tiles (h0 w0,
 *             h0 w1, h1 w0, h1 w1) to circular buffer 0 and four float32
 *             weight tiles to circular buffer 1 (w0 and w1 weights in row 0,
 *             h0 and h1 weights in column 0) for data_bilinear_compute.c.
 * Positions outside the output (tile padding) gather zeros with zero weights.
 * Common args: input, output. Runtime args: first tile, tiles, flags (1 input
 * in DRAM, 16 bilinear, 32 bfloat16 weights), esize (2 or 4), H, W, Ho, Wo,
 * input tiles per column and row (hti, wti), output ones (hto, wto), sh, sw,
 * tile bytes, float32 bits of 1/sh and 1/sw. Circular buffer 3 (4 tiles)
 * caches input tiles. */
#include "dataflow_api.h"

typedef struct axis {
    uint32_t off[2][32]; /* byte offset of each tap within the cached tiles */
    uint32_t w[2][32];   /* weight bits of each tap */
    uint32_t valid;      /* positions inside the output */
    uint32_t t0, t1;     /* first and last input tile along the axis */
} axis;

/* ---- float32 on bit patterns (these cores have no FPU), round to nearest
 * even; non-negative finite numbers ---- */

static uint32_t top_bit64(uint64_t v) {
    uint32_t t = 0;
    while (v >> (t + 1))
        t++;
    return t;
}

/* Rounds m * 2^(e - 127 - shift) (m's top bit at `shift` + 23) to float32. */
static uint32_t f32_round(uint64_t m, int32_t e, uint32_t shift) {
    uint64_t q = m >> shift, rem = m & ((1ull << shift) - 1), half = 1ull << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) q++;
    if (q >> 24) {
        q >>= 1;
        e++;
    }
    return (uint32_t)e << 23 | ((uint32_t)q & 0x7fffffu);
}

static uint32_t f32_mul(uint32_t a, uint32_t b) {
    if (!a || !b) return 0;
    uint64_t m = (uint64_t)((a & 0x7fffffu) | 0x800000u) * ((b & 0x7fffffu) | 0x800000u);
    int32_t e = (int32_t)(a >> 23) + (int32_t)(b >> 23) - 127;
    if (m >> 47) return f32_round(m, e + 1, 24);
    return f32_round(m, e, 23);
}

/* a - b for a >= b >= 0. */
static uint32_t f32_sub(uint32_t a, uint32_t b) {
    if (!b) return a;
    uint32_t ea = a >> 23, eb = b >> 23, k = ea - eb;
    if (k >= 40) return a; /* b is below half of a's spacing */
    uint64_t A = (uint64_t)((a & 0x7fffffu) | 0x800000u) << 32;
    uint64_t mb = (uint64_t)((b & 0x7fffffu) | 0x800000u) << 32, B = mb >> k;
    if ((B << k) != mb) B |= 1; /* sticky: far below the rounding point */
    uint64_t d = A - B;
    if (!d) return 0;
    uint32_t t = top_bit64(d); /* <= 55 */
    /* d * 2^(ea - 127 - 55) */
    int32_t e = (int32_t)ea - (55 - (int32_t)t);
    if (t >= 24) return f32_round(d, e, t - 23);
    return (uint32_t)e << 23 | ((uint32_t)(d << (23 - t)) & 0x7fffffu);
}

/* floor(x) and x - floor(x) (exact) for 0 <= x < 2^23. */
static uint32_t f32_floor(uint32_t x, uint32_t *frac) {
    int32_t e = (int32_t)(x >> 23) - 127;
    if (e < 0) {
        *frac = x;
        return 0;
    }
    uint32_t m = (x & 0x7fffffu) | 0x800000u, sh = 23 - (uint32_t)e;
    uint32_t f = m & ((1u << sh) - 1);
    if (!f) {
        *frac = 0;
    } else {
        uint32_t t = top_bit64(f); /* f * 2^(e - 23) */
        *frac = (uint32_t)(e - 23 + (int32_t)t + 127) << 23 | ((f << (23 - t)) & 0x7fffffu);
    }
    return m >> sh;
}

static uint32_t bf16_round(uint32_t x) {
    return (x + 0x7fffu + ((x >> 16) & 1u)) & 0xffff0000u;
}

/* PyTorch's upsample_bilinear2d source index and weights for output index o
 * (align_corners false): src = scale * (o + 0.5) - 0.5 in float32, clamped at
 * 0; i0 = floor(src), i1 = i0 + (i0 < n - 1), l1 = src - i0, l0 = 1 - l1;
 * the weights in the input's dtype (bfloat16 rounds them). Scale 1 copies. */
static void bilinear_src(uint32_t o, uint32_t n, uint32_t s, uint32_t scale, bool bf16,
                         uint32_t *i0, uint32_t *i1, uint32_t *w0, uint32_t *w1) {
    if (s == 1) {
        *i0 = *i1 = o;
        *w0 = 0x3f800000u;
        *w1 = 0;
        return;
    }
    uint32_t v = 2 * o + 1, t = (uint32_t)top_bit64(v); /* o + 0.5, exact */
    uint32_t half_o = (t - 1 + 127) << 23 | ((v << (23 - t)) & 0x7fffffu);
    uint32_t p = f32_mul(scale, half_o), l1 = 0;
    uint32_t src = p <= 0x3f000000u ? 0 : f32_sub(p, 0x3f000000u);
    uint32_t k = f32_floor(src, &l1);
    if (k > n - 1) {
        k = n - 1;
        l1 = 0x3f800000u;
    }
    if (bf16) l1 = bf16_round(l1);
    uint32_t l0 = f32_sub(0x3f800000u, l1);
    if (bf16) l0 = bf16_round(l0);
    *i0 = k;
    *i1 = k + (k < n - 1);
    *w0 = l0;
    *w1 = l1;
}

/* Source positions of output positions [o0, o0 + 32) along an axis of n
 * input and no output elements, scale s (scale_bits: float32 1/s). `stride`
 * is the byte distance between cached tiles along this axis. */
static void plan_axis(axis *ax, uint32_t o0, uint32_t n, uint32_t no, uint32_t s, bool bilinear,
                      uint32_t scale_bits, bool bf16, uint32_t esize, uint32_t stride, bool rows) {
    uint32_t src[2][32];
    ax->valid = no - o0 < 32 ? no - o0 : 32;
    for (uint32_t i = 0; i < ax->valid; i++) {
        uint32_t o = o0 + i;
        if (!bilinear) {
            src[0][i] = src[1][i] = o / s;
            ax->w[0][i] = 0x3f800000u;
            ax->w[1][i] = 0;
        } else {
            bilinear_src(o, n, s, scale_bits, bf16, &src[0][i], &src[1][i], &ax->w[0][i],
                         &ax->w[1][i]);
        }
    }
    ax->t0 = src[0][0] / 32;
    ax->t1 = src[1][ax->valid - 1] / 32;
    for (uint32_t i = 0; i < ax->valid; i++)
        for (uint32_t k = 0; k < 2; k++) {
            uint32_t p = src[k][i], q = p & 31;
            uint32_t face = rows ? (q >> 4) * 512 + (q & 15) * 16 : (q >> 4) * 256 + (q & 15);
            ax->off[k][i] = (p / 32 - ax->t0) * stride + face * esize;
        }
}

static void gather(uint32_t dst, uint32_t cache, const axis *ra, const axis *ca, uint32_t rk,
                   uint32_t ck, uint32_t esize) {
    nn_zero(dst, 1024 * esize);
    for (uint32_t r = 0; r < ra->valid; r++) {
        uint32_t drow = dst + ((r >> 4) * 512 + (r & 15) * 16) * esize;
        uint32_t srow = cache + ra->off[rk][r];
        for (uint32_t c = 0; c < ca->valid; c++) {
            uint32_t d = drow + ((c >> 4) * 256 + (c & 15)) * esize, s = srow + ca->off[ck][c];
            if (esize == 4)
                *(volatile uint32_t *)(uintptr_t)d = *(volatile uint32_t *)(uintptr_t)s;
            else
                *(volatile uint16_t *)(uintptr_t)d = *(volatile uint16_t *)(uintptr_t)s;
        }
    }
}

/* Weight tile: `row` set: row 0 holds w[k][c]; else column 0 holds w[k][r]. */
static void weights(uint32_t dst, const axis *ax, uint32_t k, bool row) {
    nn_zero(dst, 4096);
    for (uint32_t i = 0; i < ax->valid; i++) {
        uint32_t e = row ? (i >> 4) * 256 + (i & 15) : (i >> 4) * 512 + (i & 15) * 16;
        *(volatile uint32_t *)(uintptr_t)(dst + 4 * e) = ax->w[k][i];
    }
}

void kernel_main(void) {
    uint32_t first = get_arg_val(0), count = get_arg_val(1), flags = get_arg_val(2);
    uint32_t esize = get_arg_val(3), H = get_arg_val(4), W = get_arg_val(5);
    uint32_t Ho = get_arg_val(6), Wo = get_arg_val(7), hti = get_arg_val(8);
    uint32_t wti = get_arg_val(9), hto = get_arg_val(10), wto = get_arg_val(11);
    uint32_t sh = get_arg_val(12), sw = get_arg_val(13), tile = get_arg_val(14);
    uint32_t scale_h = get_arg_val(15), scale_w = get_arg_val(16);
    bool bilinear = (flags & 16) != 0, bf16 = (flags & 32) != 0;
    InterleavedAddrGenFast in = {get_common_arg_val(0), tile, (flags & 1) != 0};
    cb_reserve_back(3, 4);
    uint32_t cache = get_write_ptr(3);
    uint32_t cached[4] = {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu};
    static axis ra, ca;
    uint32_t row_tile = 0xffffffffu;
    for (uint32_t t = first; t < first + count; t++) {
        uint32_t b = t / (hto * wto), I = t / wto % hto, J = t % wto;
        if (I != row_tile) {
            plan_axis(&ra, I * 32, H, Ho, sh, bilinear, scale_h, bf16, esize, 2 * tile, true);
            row_tile = I;
        }
        plan_axis(&ca, J * 32, W, Wo, sw, bilinear, scale_w, bf16, esize, tile, false);
        for (uint32_t i = 0; i <= ra.t1 - ra.t0; i++)
            for (uint32_t j = 0; j <= ca.t1 - ca.t0; j++) {
                uint32_t id = (b * hti + ra.t0 + i) * wti + ca.t0 + j, slot = 2 * i + j;
                if (cached[slot] == id) continue;
                noc_async_read_tile(id, &in, cache + slot * tile);
                cached[slot] = id;
            }
        noc_async_read_barrier();
        if (!bilinear) {
            cb_reserve_back(16, 1);
            gather(get_write_ptr(16), cache, &ra, &ca, 0, 0, esize);
            cb_push_back(16, 1);
            continue;
        }
        cb_reserve_back(0, 4);
        uint32_t g = get_write_ptr(0), gt = 1024 * esize;
        gather(g, cache, &ra, &ca, 0, 0, esize);
        gather(g + gt, cache, &ra, &ca, 0, 1, esize);
        gather(g + 2 * gt, cache, &ra, &ca, 1, 0, esize);
        gather(g + 3 * gt, cache, &ra, &ca, 1, 1, esize);
        cb_push_back(0, 4);
        cb_reserve_back(1, 4);
        uint32_t w = get_write_ptr(1);
        weights(w, &ca, 0, true);
        weights(w + 4096, &ca, 1, true);
        weights(w + 8192, &ra, 0, false);
        weights(w + 12288, &ra, 1, false);
        cb_push_back(1, 4);
    }
}
