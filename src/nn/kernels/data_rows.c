/* Generic data movement, one data movement kernel: every output row of a box
 * of the output tensor is assembled in L1 from the input tensor and written
 * with one NoC write per chunk. Serves reshape, permute, slice, concat (one
 * box per input), pad, repeat, expand, index_select, embedding and nearest
 * upsampling on row-major tensors, and whole-tile remaps of tile tensors.
 *
 * The view. Both tensors are row-major arrays of elements of `esize` bytes,
 * one page per row (in_w elements per input row, out_w per output row). A
 * tile tensor is viewed as an array of tiles (esize = the tile's bytes, one
 * tile per page, in_w = out_w = 1). The box has `rank` dims; its last dim
 * runs along output rows.
 *
 * The map. Output index o along box dim d becomes a source index s (kind,
 * a, b, n below) that moves istride[d] elements in the flat input:
 *   AFFINE     s = a + b*o                 (slice, permute, expand with b = 0)
 *   DIV        s = a + o / b               (nearest upsampling)
 *   MOD        s = (a + o) % n             (repeat, circular pad)
 *   PAD        s = o - a, fill outside [0, n)
 *   REFLECT    s = |o - a| mirrored at n - 1 (reflect pad; pads < n)
 *   REPLICATE  s = clamp(o - a, 0, n - 1)
 *   INDEX      s = index[a + b*o], zero when s >= n (counted); INDEX_WRAP
 *              the same with an entry below 0 counted from n
 *   BLOCK      s = (o / (b*b2))*n + (o / b2 % b)*a + (o % b2)*a2  (last dim
 *              only: three dims of the output row of sizes (any, b, b2)
 *              and steps (n, a, a2) in input elements; istride 1)
 * The sum of s*istride over the dims before the last gives a source row
 * start; the last dim's map picks the row's elements: whole runs with one
 * NoC read where the map is unit-stride (AFFINE b=1, PAD, MOD), else from a
 * staged copy of the source window (the DR_STAGE elements from the row's
 * source start, all the map reaches; with F_STAGE_PAGE the whole page the
 * start lies on, kept for the next rows that start on it) in L1 when it
 * fits, else as runs (BLOCK with a2 = 1) or element by element.
 * FLAT mode (reshape) instead reads the output's flat range of elements from
 * the input, crossing input rows.
 *
 * Tile views: TRANSPOSE transposes each tile in L1 (face layout, any 16- or
 * 32-bit element); ZERO_PAD zeroes the padding of the output's edge tiles.
 *
 * Common args: input, output, index tensor, counter (addresses; the last two
 * 0 when unused). Runtime args: first unit, units, then the descriptor (see
 * DR_* below). A unit is one chunk of one output row of the box. Circular
 * buffers (used as scratch): 16 the output chunk, 0 the staged source row
 * (or a tile to transpose), 1 a block of index entries. */
#include "dataflow_api.h"

#define DR_FLAGS 2
#define DR_ESIZE 3
#define DR_RANK 4
#define DR_IN_W 5
#define DR_OUT_W 6
#define DR_CHUNK 7
#define DR_NCHUNKS 8
#define DR_OUT_ROW0 9
#define DR_OUT_COL0 10
#define DR_FILL 11
#define DR_IDX_W 12
#define DR_STAGE 13
#define DR_HT 14
#define DR_WT 15
#define DR_H 16
#define DR_W 17
#define DR_FMT 18
#define DR_DIMS 20
#define DR_DIM_WORDS 9 /* size, out row stride, kind, a, b, n, istride, b2, a2 */

#define F_IN_DRAM 1u
#define F_OUT_DRAM 2u
#define F_IDX_DRAM 4u
#define F_COUNT 8u
#define F_TRANSPOSE 16u
#define F_ZERO_PAD 32u
#define F_FLAT 64u
#define F_STAGE_PAGE 128u /* stage the whole page the row's source starts on */

#define M_AFFINE 0u
#define M_DIV 1u
#define M_MOD 2u
#define M_PAD 3u
#define M_REFLECT 4u
#define M_REPLICATE 5u
#define M_INDEX 6u
#define M_BLOCK 7u
#define M_INDEX_WRAP 8u

#define MAX_DIMS 10
#define IDX_BLOCK 256u

typedef struct dim_map {
    uint32_t size, ostride, kind, a, b, n, istride, b2, a2;
} dim_map;

static dim_map dims[MAX_DIMS];
static uint32_t rank, esize, in_w, flags;
static InterleavedAddrGenFast in_gen, out_gen, idx_gen;
static uint32_t idx_w, idx_buf, idx_page = 0xffffffffu, idx_col, idx_len;
static uint32_t invalid; /* elements zeroed for an out-of-range index */

/* Entry f (row-major) of the index tensor, through a block cache in L1. */
static uint32_t index_at(uint32_t f) {
    uint32_t page = f / idx_w, col = f % idx_w;
    if (page != idx_page || col < idx_col || col >= idx_col + idx_len) {
        idx_len = idx_w - col < IDX_BLOCK ? idx_w - col : IDX_BLOCK;
        noc_async_read(get_noc_addr_interleaved(page, &idx_gen, col * 4), idx_buf, idx_len * 4);
        noc_async_read_barrier();
        idx_page = page;
        idx_col = col;
    }
    return *(volatile uint32_t *)(uintptr_t)(idx_buf + 4 * (col - idx_col));
}

static bool is_index(uint32_t kind) {
    return kind == M_INDEX || kind == M_INDEX_WRAP;
}

/* The source index of output index o along `m`; false: fill this position. */
static bool map_index(const dim_map *m, uint32_t o, uint32_t *s) {
    switch (m->kind) {
    case M_AFFINE:
        *s = m->a + m->b * o;
        return true;
    case M_DIV:
        *s = m->a + o / m->b;
        return true;
    case M_MOD:
        *s = (m->a + o) % m->n;
        return true;
    case M_PAD:
        if (o < m->a || o - m->a >= m->n) return false;
        *s = o - m->a;
        return true;
    case M_REFLECT: {
        int32_t t = (int32_t)o - (int32_t)m->a;
        if (t < 0) t = -t;
        if (t >= (int32_t)m->n) t = 2 * ((int32_t)m->n - 1) - t;
        *s = (uint32_t)t;
        return true;
    }
    case M_REPLICATE:
        *s = o < m->a ? 0 : o - m->a >= m->n ? m->n - 1 : o - m->a;
        return true;
    case M_BLOCK:
        *s = o / (m->b * m->b2) * m->n + o / m->b2 % m->b * m->a + o % m->b2 * m->a2;
        return true;
    case M_INDEX_WRAP: {
        int32_t v = (int32_t)index_at(m->a + m->b * o);
        *s = (uint32_t)(v < 0 ? v + (int32_t)m->n : v);
        return *s < m->n;
    }
    default: /* M_INDEX */
        *s = index_at(m->a + m->b * o);
        return *s < m->n;
    }
}

static void copy_elem(uint32_t dst, uint32_t src) {
    if (esize == 4)
        *(volatile uint32_t *)(uintptr_t)dst = *(volatile uint32_t *)(uintptr_t)src;
    else if (esize == 2)
        *(volatile uint16_t *)(uintptr_t)dst = *(volatile uint16_t *)(uintptr_t)src;
    else
        *(volatile uint8_t *)(uintptr_t)dst = *(volatile uint8_t *)(uintptr_t)src;
}

static void fill(uint32_t dst, uint32_t n, uint32_t bits) {
    if (bits == 0) {
        nn_zero(dst, n * esize);
        return;
    }
    for (uint32_t i = 0; i < n; i++, dst += esize) {
        if (esize == 4)
            *(volatile uint32_t *)(uintptr_t)dst = bits;
        else if (esize == 2)
            *(volatile uint16_t *)(uintptr_t)dst = (uint16_t)bits;
        else
            *(volatile uint8_t *)(uintptr_t)dst = (uint8_t)bits;
    }
}

/* Reads input elements [e, e + n) to L1 `dst`: one read per input row they
 * touch. A run along the output's last dim usually lies in one row, but
 * not when it moves along an inner input dim whose later dims are all 1
 * (a permute of [.., W, 1] to [.., 1, W]: stride 1, a row per element). */
static void read_run(uint32_t e, uint32_t dst, uint32_t n) {
    while (n) {
        uint32_t col = e % in_w, len = in_w - col < n ? in_w - col : n;
        noc_async_read(get_noc_addr_interleaved(e / in_w, &in_gen, col * esize), dst, len * esize);
        e += len;
        dst += len * esize;
        n -= len;
    }
}

/* Transposes a tile in face layout: face (fr, fc) of dst is face (fc, fr) of
 * src transposed, so each face is a 16 x 16 transpose. The inner row is
 * written out with constant offsets because this is the kernel's whole cost:
 * two interpreted instructions per element instead of a loop's dozen. */
#define TR_ROW()                                                                                   \
    do {                                                                                           \
        d[0] = s[0], d[1] = s[16], d[2] = s[32], d[3] = s[48], d[4] = s[64];                       \
        d[5] = s[80], d[6] = s[96], d[7] = s[112], d[8] = s[128], d[9] = s[144];                   \
        d[10] = s[160], d[11] = s[176], d[12] = s[192], d[13] = s[208], d[14] = s[224];            \
        d[15] = s[240];                                                                            \
    } while (0)

static void transpose_face32(uint32_t *d, const uint32_t *s) {
    for (uint32_t i = 0; i < 16; i++, d += 16, s++)
        TR_ROW();
}

static void transpose_face16(uint16_t *d, const uint16_t *s) {
    for (uint32_t i = 0; i < 16; i++, d += 16, s++)
        TR_ROW();
}

static void transpose_tile(uint32_t dst, uint32_t src, uint32_t es) {
    for (uint32_t f = 0; f < 4; f++) {
        uint32_t fr = f >> 1, fc = f & 1, from = (fc * 512 + fr * 256) * es;
        uint32_t to = (fr * 512 + fc * 256) * es;
        if (es == 4)
            transpose_face32((uint32_t *)(uintptr_t)(dst + to),
                             (const uint32_t *)(uintptr_t)(src + from));
        else
            transpose_face16((uint16_t *)(uintptr_t)(dst + to),
                             (const uint16_t *)(uintptr_t)(src + from));
    }
}

/* Output elements [c0, c0 + n) of a BLOCK last dim `m` from the staged
 * window: runs of up to m->b2 elements, m->a2 apart, one per (q, r).
 * Depth-to-space moves every element this way, so the runs are copied in
 * tight loops rather than through map_index. */
static void block_copy(uint32_t dst, uint32_t stage, const dim_map *m, uint32_t c0, uint32_t n) {
    uint32_t q = c0 / (m->b * m->b2), r = c0 / m->b2 % m->b, r2 = c0 % m->b2;
    uint32_t step = m->a2;
    if (m->b2 < 8 && esize == 4) {
        /* Short runs: element by element, the offset stepped along, which
         * costs less than setting up a run of 2 or 3. */
        volatile uint32_t *d = (volatile uint32_t *)(uintptr_t)dst;
        const volatile uint32_t *s = (const volatile uint32_t *)(uintptr_t)stage;
        uint32_t off = q * m->n + r * m->a + r2 * step, back = (m->b2 - 1) * step;
        for (uint32_t i = 0; i < n; i++) {
            d[i] = s[off];
            if (++r2 < m->b2) {
                off += step;
                continue;
            }
            r2 = 0;
            if (++r < m->b) {
                off += m->a - back; /* mod 2^32: the sum is the next run's start */
            } else {
                r = 0;
                off = ++q * m->n;
            }
        }
        return;
    }
    while (n) {
        uint32_t len = m->b2 - r2 < n ? m->b2 - r2 : n;
        uint32_t from = stage + (q * m->n + r * m->a + r2 * step) * esize;
        if (esize == 4 && step == 1) {
            nn_copy_words(dst, from, len);
        } else if (esize == 4) {
            volatile uint32_t *d = (volatile uint32_t *)(uintptr_t)dst;
            const volatile uint32_t *s = (const volatile uint32_t *)(uintptr_t)from;
            for (uint32_t i = 0; i < len; i++, s += step)
                d[i] = *s;
        } else if (esize == 2) {
            volatile uint16_t *d = (volatile uint16_t *)(uintptr_t)dst;
            const volatile uint16_t *s = (const volatile uint16_t *)(uintptr_t)from;
            for (uint32_t i = 0; i < len; i++, s += step)
                d[i] = *s;
        } else {
            for (uint32_t i = 0; i < len; i++)
                copy_elem(dst + i * esize, from + i * step * esize);
        }
        dst += len * esize;
        n -= len;
        r2 = 0;
        if (++r == m->b) {
            r = 0;
            q++;
        }
    }
}

void kernel_main(void) {
    uint32_t first = get_arg_val(0), units = get_arg_val(1);
    flags = get_arg_val(DR_FLAGS);
    esize = get_arg_val(DR_ESIZE);
    rank = get_arg_val(DR_RANK);
    in_w = get_arg_val(DR_IN_W);
    uint32_t out_w = get_arg_val(DR_OUT_W), chunk = get_arg_val(DR_CHUNK);
    uint32_t nchunks = get_arg_val(DR_NCHUNKS), out_row0 = get_arg_val(DR_OUT_ROW0);
    uint32_t out_col0 = get_arg_val(DR_OUT_COL0), fill_bits = get_arg_val(DR_FILL);
    uint32_t stage_cap = get_arg_val(DR_STAGE);
    idx_w = get_arg_val(DR_IDX_W);
    for (uint32_t d = 0; d < rank; d++) {
        uint32_t base = DR_DIMS + d * DR_DIM_WORDS;
        dims[d] = (dim_map){get_arg_val(base),     get_arg_val(base + 1), get_arg_val(base + 2),
                            get_arg_val(base + 3), get_arg_val(base + 4), get_arg_val(base + 5),
                            get_arg_val(base + 6), get_arg_val(base + 7), get_arg_val(base + 8)};
    }
    in_gen =
        (InterleavedAddrGenFast){get_common_arg_val(0), in_w * esize, (flags & F_IN_DRAM) != 0};
    out_gen =
        (InterleavedAddrGenFast){get_common_arg_val(1), out_w * esize, (flags & F_OUT_DRAM) != 0};
    idx_gen = (InterleavedAddrGenFast){get_common_arg_val(2), idx_w * 4, (flags & F_IDX_DRAM) != 0};
    const dim_map *last = &dims[rank - 1];
    uint32_t width = last->size;

    cb_reserve_back(16, 1);
    uint32_t buf = get_write_ptr(16);
    uint32_t stage = 0, staged_row = 0xffffffffu;
    if (stage_cap) {
        cb_reserve_back(0, 1);
        stage = get_write_ptr(0);
    }
    if (idx_w) {
        cb_reserve_back(1, 1);
        idx_buf = get_write_ptr(1);
    }

    uint32_t cur_row = 0xffffffffu, src = 0, out_row = 0;
    bool valid = true, bad_index = false;
    for (uint32_t u = first; u < first + units; u++) {
        uint32_t row = u / nchunks, c0 = u % nchunks * chunk;
        uint32_t n = width - c0 < chunk ? width - c0 : chunk;
        if (row != cur_row) {
            /* The row's multi-index, its output page and its source row. */
            uint32_t rest = row;
            cur_row = row;
            valid = true;
            bad_index = false;
            src = 0;
            out_row = out_row0;
            for (int32_t d = (int32_t)rank - 2; d >= 0; d--) {
                uint32_t o = rest % dims[d].size, s;
                rest /= dims[d].size;
                out_row += o * dims[d].ostride;
                if (!valid) continue;
                if (!map_index(&dims[d], o, &s)) {
                    valid = false;
                    bad_index = is_index(dims[d].kind);
                    continue;
                }
                src += s * dims[d].istride;
            }
        }
        if (!valid) {
            fill(buf, n, fill_bits);
            if (bad_index && get_arg_val(DR_FMT)) {
                /* a tile: count its logical elements */
                uint32_t rows, cols;
                nn_tile_extent(out_row, get_arg_val(DR_HT), get_arg_val(DR_WT), get_arg_val(DR_H),
                               get_arg_val(DR_W), &rows, &cols);
                invalid += rows * cols;
            } else if (bad_index) {
                invalid += n;
            }
        } else if (flags & F_TRANSPOSE) {
            read_run(src + c0, stage, n);
            noc_async_read_barrier();
            transpose_tile(buf, stage, get_arg_val(DR_FMT) == NN_FMT_BF16 ? 2 : 4);
        } else if (flags & F_FLAT) {
            read_run(out_row * out_w + c0, buf, n);
        } else if (last->istride == 1 && last->kind == M_AFFINE && last->b == 1) {
            read_run(src + last->a + c0, buf, n);
        } else if (last->istride == 1 && last->kind == M_PAD) {
            /* fill [c0, lo), run [lo, hi), fill [hi, c0 + n) */
            uint32_t lo = last->a, hi = last->a + last->n;
            lo = lo < c0 ? c0 : lo > c0 + n ? c0 + n : lo;
            hi = hi < c0 ? c0 : hi > c0 + n ? c0 + n : hi;
            fill(buf, lo - c0, fill_bits);
            if (hi > lo) read_run(src + (lo - last->a), buf + (lo - c0) * esize, hi - lo);
            fill(buf + (hi - c0) * esize, c0 + n - hi, fill_bits);
        } else if (last->istride == 1 && last->kind == M_MOD) {
            for (uint32_t o = c0; o < c0 + n;) {
                uint32_t s = (last->a + o) % last->n;
                uint32_t len = last->n - s < c0 + n - o ? last->n - s : c0 + n - o;
                read_run(src + s, buf + (o - c0) * esize, len);
                o += len;
            }
        } else if (last->istride == 1 && stage_cap) {
            /* Stage the source window (or its page) once, then pick its
             * elements. */
            uint32_t base = flags & F_STAGE_PAGE ? src - src % in_w : src;
            uint32_t from = stage + (src - base) * esize;
            if (base != staged_row) {
                read_run(base, stage, stage_cap);
                noc_async_read_barrier();
                staged_row = base;
            }
            if (last->kind == M_BLOCK) {
                block_copy(buf, from, last, c0, n);
            } else {
                for (uint32_t i = 0; i < n; i++) {
                    uint32_t s;
                    if (map_index(last, c0 + i, &s))
                        copy_elem(buf + i * esize, from + s * esize);
                    else {
                        fill(buf + i * esize, 1, is_index(last->kind) ? 0 : fill_bits);
                        if (is_index(last->kind)) invalid++;
                    }
                }
            }
        } else if (last->istride == 1 && last->kind == M_BLOCK && last->a2 == 1) {
            /* Runs of the inner dim, one read each. */
            for (uint32_t o = c0; o < c0 + n;) {
                uint32_t r2 = o % last->b2;
                uint32_t len = last->b2 - r2 < c0 + n - o ? last->b2 - r2 : c0 + n - o;
                uint32_t s = o / (last->b * last->b2) * last->n + o / last->b2 % last->b * last->a;
                read_run(src + s + r2, buf + (o - c0) * esize, len);
                o += len;
            }
        } else {
            /* Element by element: the last dim moved, or its row is too long
             * to stage. */
            for (uint32_t i = 0; i < n; i++) {
                uint32_t s;
                if (map_index(last, c0 + i, &s))
                    read_run(src + s * last->istride, buf + i * esize, 1);
                else {
                    fill(buf + i * esize, 1, is_index(last->kind) ? 0 : fill_bits);
                    if (is_index(last->kind)) invalid++;
                }
            }
        }
        noc_async_read_barrier();
        if (flags & F_ZERO_PAD) {
            uint32_t rows, cols;
            nn_tile_extent(out_row, get_arg_val(DR_HT), get_arg_val(DR_WT), get_arg_val(DR_H),
                           get_arg_val(DR_W), &rows, &cols);
            nn_tile_fill_outside(buf, get_arg_val(DR_FMT), rows, cols, 0);
        }
        noc_async_write(buf, get_noc_addr_interleaved(out_row, &out_gen, (out_col0 + c0) * esize),
                        n * esize);
        noc_async_write_barrier();
    }
    if ((flags & F_COUNT) && invalid)
        noc_semaphore_inc(lm_bank_noc_addr(false, 0, get_common_arg_val(3)), invalid);
}
