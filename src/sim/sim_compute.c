#include "sim/sim_compute.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "lm_kernel_abi.h"

/* The ecall codes are the engine's own enum values. */
_Static_assert(LM_BINARY_ADD == TILE_BINARY_ADD && LM_BINARY_MUL == TILE_BINARY_MUL, "binary");
_Static_assert(LM_BCAST_NONE == TILE_BCAST_NONE && LM_BCAST_SCALAR == TILE_BCAST_SCALAR, "bcast");
_Static_assert(LM_REDUCE_SUM == TILE_REDUCE_SUM && LM_REDUCE_MAX == TILE_REDUCE_MAX &&
                   LM_REDUCE_AVG == TILE_REDUCE_AVG && LM_REDUCE_PROD == TILE_REDUCE_PROD &&
                   LM_REDUCE_PROD + 1 == TILE_REDUCE_FUNC_COUNT_,
               "reduce");
_Static_assert(LM_REDUCE_ROW == TILE_REDUCE_ROW && LM_REDUCE_SCALAR == TILE_REDUCE_SCALAR, "dim");
/* Every SFPU op code, one by one. */
#define SAME_SFPU(op) _Static_assert(LM_SFPU_##op == TILE_SFPU_##op, "sfpu " #op);
SAME_SFPU(EXP)
SAME_SFPU(LOG)
SAME_SFPU(SQRT)
SAME_SFPU(RSQRT)
SAME_SFPU(RECIP)
SAME_SFPU(RELU)
SAME_SFPU(GELU)
SAME_SFPU(SIGMOID)
SAME_SFPU(TANH)
SAME_SFPU(ABS)
SAME_SFPU(NEG)
SAME_SFPU(SQUARE)
SAME_SFPU(LOG1P)
SAME_SFPU(EXPM1)
SAME_SFPU(SIGN)
SAME_SFPU(RELU_MAX)
SAME_SFPU(RELU_MIN)
SAME_SFPU(LEAKY_RELU)
SAME_SFPU(ELU)
SAME_SFPU(SELU)
SAME_SFPU(CELU)
SAME_SFPU(GELU_ERF)
SAME_SFPU(SILU)
SAME_SFPU(MISH)
SAME_SFPU(HARDSIGMOID)
SAME_SFPU(HARDSWISH)
SAME_SFPU(HARDTANH)
SAME_SFPU(SOFTPLUS)
SAME_SFPU(SOFTSIGN)
SAME_SFPU(ERF)
SAME_SFPU(ERFC)
SAME_SFPU(SIN)
SAME_SFPU(COS)
SAME_SFPU(TAN)
SAME_SFPU(ASIN)
SAME_SFPU(ACOS)
SAME_SFPU(ATAN)
SAME_SFPU(SINH)
SAME_SFPU(COSH)
SAME_SFPU(ASINH)
SAME_SFPU(ACOSH)
SAME_SFPU(ATANH)
SAME_SFPU(FLOOR)
SAME_SFPU(CEIL)
SAME_SFPU(ROUND)
SAME_SFPU(TRUNC)
SAME_SFPU(FRAC)
SAME_SFPU(CLAMP)
SAME_SFPU(LOGICAL_NOT)
SAME_SFPU(ISNAN)
SAME_SFPU(ISINF)
SAME_SFPU(ISPOSINF)
SAME_SFPU(ISNEGINF)
SAME_SFPU(ISFINITE)
SAME_SFPU(EQZ)
SAME_SFPU(NEZ)
SAME_SFPU(LTZ)
SAME_SFPU(GTZ)
SAME_SFPU(LEZ)
SAME_SFPU(GEZ)
SAME_SFPU(EXP2)
SAME_SFPU(LOG2)
SAME_SFPU(LOG10)
SAME_SFPU(CBRT)
SAME_SFPU(POWER)
SAME_SFPU(POWER_ITERATIVE)
SAME_SFPU(HEAVISIDE)
SAME_SFPU(ADD_UNARY)
SAME_SFPU(SUB_UNARY)
SAME_SFPU(MUL_UNARY)
SAME_SFPU(DIV_UNARY)
SAME_SFPU(RSUB_UNARY)
SAME_SFPU(UNARY_MAX)
SAME_SFPU(UNARY_MIN)
SAME_SFPU(UNARY_EQ)
SAME_SFPU(UNARY_NE)
SAME_SFPU(UNARY_LT)
SAME_SFPU(UNARY_LE)
SAME_SFPU(UNARY_GT)
SAME_SFPU(UNARY_GE)
SAME_SFPU(TYPECAST)
#undef SAME_SFPU
_Static_assert(LM_SFPU_TYPECAST + 1 == TILE_SFPU_COUNT_, "sfpu count");
#define SAME_BINARY(op) _Static_assert(LM_SFPU_BINARY_##op == TILE_DST_BINARY_##op, "binary " #op);
SAME_BINARY(ADD)
SAME_BINARY(SUB)
SAME_BINARY(MUL)
SAME_BINARY(DIV)
SAME_BINARY(RSUB)
SAME_BINARY(MAX)
SAME_BINARY(MIN)
SAME_BINARY(POWER)
SAME_BINARY(EQ)
SAME_BINARY(NE)
SAME_BINARY(LT)
SAME_BINARY(LE)
SAME_BINARY(GT)
SAME_BINARY(GE)
SAME_BINARY(LOGICAL_AND)
SAME_BINARY(LOGICAL_OR)
SAME_BINARY(LOGICAL_XOR)
SAME_BINARY(ATAN2)
SAME_BINARY(FMOD)
SAME_BINARY(REMAINDER)
#undef SAME_BINARY
_Static_assert(LM_SFPU_BINARY_REMAINDER + 1 == TILE_DST_BINARY_COUNT_, "sfpu binary count");

/* Where the dst protocol stands. tile_regs_acquire/commit/wait/release walk
 * IDLE -> ACQUIRED -> COMMITTED -> WAITED -> IDLE (math in ACQUIRED, packs in
 * WAITED); acquire_dst/release_dst, the older one-call forms, hold dst for
 * math and pack at once (FULL). */
enum { REGS_IDLE, REGS_ACQUIRED, REGS_COMMITTED, REGS_WAITED, REGS_FULL };

static const char *const regs_state_name[] = {"released", "acquired", "committed", "waited for",
                                              "held by acquire_dst"};

void sim_compute_reset(sim_compute *c, bool fp32_acc, bool strict) {
    static atomic_uint_fast64_t epochs;
    /* A cleared dst reads as zeros, as after tile_dst_init, without writing
     * its 64 KiB: a register is zeroed when first used. */
    c->dst.fp32_acc = fp32_acc;
    tile_dst_clear(&c->dst);
    tile_rand_seed(&c->rand, 0);
    c->regs = REGS_IDLE;
    c->strict = strict;
    c->warning[0] = '\0';
    c->epoch = atomic_fetch_add(&epochs, 1) + 1; /* 0 marks an empty entry */
}

static rv_ecall_result fault(rv_hart *h, const char *fmt, ...) ERR_PRINTF(2, 3);
static rv_ecall_result fault(rv_hart *h, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(h->fault.detail, sizeof h->fault.detail, fmt, ap);
    va_end(ap);
    return RV_ECALL_FAULT;
}

/* The engine rejected an argument; its message, in the thread's error, already
 * names the operation. */
static rv_ecall_result engine_fault(rv_hart *h) {
    return fault(h, "%s", lm_last_error());
}

/* A protocol lapse that the chip tolerates: a warning (once per pc and
 * launch, sim_launch.c prints it with the core and pc), or a fault with
 * strict_protocol. False when it faulted. */
static bool tolerate(sim_compute *c, rv_hart *h, rv_ecall_result *out, const char *fmt, ...)
    ERR_PRINTF(4, 5);
static bool tolerate(sim_compute *c, rv_hart *h, rv_ecall_result *out, const char *fmt, ...) {
    char what[sizeof c->warning / 2 - 48];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (c->strict) {
        *out = fault(h, "%s (strict_protocol)", what);
        return false;
    }
    /* One call may make two lapses: one line for both. */
    size_t n = strlen(c->warning);
    snprintf(c->warning + n, sizeof c->warning - n,
             "%s%s (allowed; strict_protocol makes this a fault)", n ? "; " : "", what);
    return true;
}

/* Math runs while dst is acquired (tile_regs_acquire or acquire_dst). */
static bool need_math(sim_compute *c, rv_hart *h, const char *op, rv_ecall_result *out) {
    if (c->regs == REGS_ACQUIRED || c->regs == REGS_FULL) return true;
    *out = fault(h,
                 "%s outside its place in the dst protocol: it must come between "
                 "tile_regs_acquire and tile_regs_commit (or acquire_dst and release_dst), but dst "
                 "is %s",
                 op, regs_state_name[c->regs]);
    return false;
}

/* Packs run after tile_regs_wait, or under acquire_dst. Right after
 * tile_regs_commit the chip's packer would race the math: tolerated. */
static bool need_pack(sim_compute *c, rv_hart *h, const char *op, rv_ecall_result *out) {
    if (c->regs == REGS_WAITED || c->regs == REGS_FULL) return true;
    if (c->regs == REGS_COMMITTED)
        return tolerate(c, h, out, "%s after tile_regs_commit without tile_regs_wait", op);
    *out = fault(h,
                 "%s outside its place in the dst protocol: it must come between tile_regs_wait "
                 "and tile_regs_release (or acquire_dst and release_dst), but dst is %s",
                 op, regs_state_name[c->regs]);
    return false;
}

/* One step of the tile_regs_* walk (or of acquire_dst/release_dst). */
static bool step(sim_compute *c, rv_hart *h, int from, int to, const char *op,
                 rv_ecall_result *out) {
    if (c->regs == from) {
        c->regs = to;
        return true;
    }
    static const char *const hint[] = {
        [REGS_IDLE] = "dst is released",
        [REGS_ACQUIRED] = "after tile_regs_acquire",
        [REGS_COMMITTED] = "after tile_regs_commit",
        [REGS_WAITED] = "after tile_regs_wait",
        [REGS_FULL] = "after acquire_dst",
    };
    *out = fault(h, "%s outside its place in the dst protocol: it must come %s, but dst is %s", op,
                 hint[from], regs_state_name[c->regs]);
    return false;
}

/* Tile `tile` counted from the front of circular buffer `cb`, unpacked (from
 * the cache when it was unpacked before), or NULL after a fault. `keep` is
 * the other operand of the same operation (or NULL): its cache entry must not
 * be reused for this one. */
static const float *unpack(sim_compute *cp, sim_cb *cbs, rv_hart *h, uint32_t cb, uint32_t tile,
                           bool *out_raw, const char *op, rv_ecall_result *res, const float *keep) {
    if (cb >= LM_MAX_CBS || cbs[cb].fifo_size == 0) {
        *res = fault(h, "%s: circular buffer %u is not configured on this core", op, cb);
        return NULL;
    }
    const sim_cb *c = &cbs[cb];
    if (tile >= c->waited) {
        *res = fault(h,
                     "%s: tile %u of circular buffer %u was not waited for (cb_wait_front "
                     "covers %u tiles)",
                     op, tile, cb, c->waited);
        return NULL;
    }
    size_t size = tile_format_size((lm_data_format)c->format);
    if (size == 0 || size > c->page_size) {
        *res = fault(h,
                     "%s: circular buffer %u has pages of %u bytes, too small for a tile of its "
                     "format",
                     op, cb, c->page_size);
        return NULL;
    }
    if (out_raw) *out_raw = c->format == LM_DATA_FORMAT_UINT32 || c->format == LM_DATA_FORMAT_INT32;
    uint32_t seq = c->popped + tile;
    uint64_t key = cb | (uint64_t)c->format << 8 | (uint64_t)seq << 16;
    /* Consecutive pages of a CB take consecutive slots; CBs start far apart,
     * so a resident operand (matmul's B) and a streamed one (A) rarely meet. */
    uint32_t slot = (seq + cb * (SIM_UNPACK_CACHE / 2 + 3)) % SIM_UNPACK_CACHE;
    sim_unpacked *e = &cp->cache[slot];
    /* Two operands whose tiles share a slot: the second takes the next one. */
    if (e->v == keep && e->key != key) e = &cp->cache[(slot + 1) % SIM_UNPACK_CACHE];
    if (e->epoch != cp->epoch || e->key != key) {
        tile_unpack((lm_data_format)c->format, h->l1 + sim_cb_page_addr(c, c->rd_ptr, tile), e->v);
        e->key = key;
        e->epoch = cp->epoch;
    }
    return e->v;
}

/* The broadcast operand of a binary op, or a reduce's scaler: only the
 * elements the op reads -- row 0 (ROW), column 0 (COL) or element 0 (SCALAR)
 * -- taken from tile `tile` of `cb` into `buf` (the rest of it is left as it
 * is), with the same bits a full unpack gives them; float32 and bfloat16
 * tiles only (anything else, and a tile already unpacked, through unpack).
 * Row-broadcast parameters are a tile each: unpacking all of one for its
 * first row was most of such an op's cost, and crowded the cache. */
static const float *unpack_bcast(sim_compute *cp, sim_cb *cbs, rv_hart *h, uint32_t cb,
                                 uint32_t tile, tile_bcast bcast, float *buf, const char *op,
                                 rv_ecall_result *res, const float *keep) {
    if (cb >= LM_MAX_CBS || cbs[cb].fifo_size == 0 || tile >= cbs[cb].waited ||
        (bcast != TILE_BCAST_ROW && bcast != TILE_BCAST_COL && bcast != TILE_BCAST_SCALAR))
        return unpack(cp, cbs, h, cb, tile, NULL, op, res, keep);
    const sim_cb *c = &cbs[cb];
    uint32_t es = c->format == LM_DATA_FORMAT_FLOAT32     ? 4
                  : c->format == LM_DATA_FORMAT_FLOAT16_B ? 2
                                                          : 0;
    if (!es || TILE_ELEMS * es > c->page_size)
        return unpack(cp, cbs, h, cb, tile, NULL, op, res, keep);
    const uint8_t *src = h->l1 + sim_cb_page_addr(c, c->rd_ptr, tile);
    if (bcast == TILE_BCAST_ROW && es == 4) { /* row 0: faces 0 and 1 begin with it */
        memcpy(buf, src, 4 * TILE_FACE_DIM);
        memcpy(buf + TILE_FACE_DIM, src + 4 * tile_face_offset(0, TILE_FACE_DIM),
               4 * TILE_FACE_DIM);
        return buf;
    }
    uint32_t n = bcast == TILE_BCAST_SCALAR ? 1 : TILE_DIM;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r = bcast == TILE_BCAST_COL ? i : 0, col = bcast == TILE_BCAST_ROW ? i : 0;
        const uint8_t *p = src + es * tile_face_offset(r, col);
        uint32_t bits;
        if (es == 4) {
            memcpy(&bits, p, 4);
        } else {
            uint16_t half;
            memcpy(&half, p, 2);
            bits = (uint32_t)half << 16;
        }
        memcpy(&buf[r * TILE_DIM + col], &bits, 4);
    }
    return buf;
}

/* The circular buffer `cb` with tiles of its format fitting its pages, or
 * NULL after a fault. */
static sim_cb *tile_cb(sim_cb *cbs, rv_hart *h, uint32_t cb, const char *op, rv_ecall_result *res) {
    if (cb >= LM_MAX_CBS || cbs[cb].fifo_size == 0) {
        *res = fault(h, "%s: circular buffer %u is not configured on this core", op, cb);
        return NULL;
    }
    size_t size = tile_format_size((lm_data_format)cbs[cb].format);
    if (size == 0 || size > cbs[cb].page_size) {
        *res = fault(h,
                     "%s: circular buffer %u has pages of %u bytes, too small for a tile of "
                     "its format",
                     op, cb, cbs[cb].page_size);
        return NULL;
    }
    return &cbs[cb];
}

/* Whether the kernel may write back page `index` (from the write pointer)
 * of q: reserved by cb_reserve_back, or -- tolerated -- free all the same
 * (the chip's packer writes wherever the pointer says). */
static bool may_write_back(sim_compute *c, rv_hart *h, sim_cb *q, uint32_t cb, uint32_t index,
                           const char *op, rv_ecall_result *res) {
    if (index < q->reserved) return true;
    if (index < q->num_pages - sim_cb_fill(q))
        return tolerate(c, h, res,
                        "%s into circular buffer %u without cb_reserve_back (tile %u of the back, "
                        "%u reserved)",
                        op, cb, index, q->reserved);
    *res = fault(h,
                 "%s: circular buffer %u has no reserved tile left (cb_reserve_back reserved %u, "
                 "tile %u wanted, %u pages free)",
                 op, cb, q->reserved, index, q->num_pages - sim_cb_fill(q));
    return false;
}

/* pack_tile: `at` 0 packs the next tile, 1 + i packs tile i of the back
 * (tt-metal's out-of-order pack_tile<true>). */
static rv_ecall_result pack(sim_compute *c, sim_cb *cbs, rv_hart *h, uint32_t dst, uint32_t cb,
                            uint32_t at) {
    const char *op = "pack_tile";
    rv_ecall_result res = RV_ECALL_CONTINUE;
    sim_cb *q = tile_cb(cbs, h, cb, op, &res);
    if (!q) return res;
    uint32_t index = at ? at - 1 : q->packed;
    if (!may_write_back(c, h, q, cb, index, op, &res)) return res;
    uint32_t addr = sim_cb_page_addr(q, q->wr_ptr, index);
    if (tile_pack_dst(&c->dst, dst, (lm_data_format)q->format, h->l1 + addr))
        return engine_fault(h);
    if (index + 1 > q->packed) q->packed = index + 1;
    return res;
}

/* Element size of a row-major circular buffer format, 0 for formats that
 * have no row-major form (block floats). */
static uint32_t row_major_size(uint32_t format) {
    return format == LM_DATA_FORMAT_FLOAT16_B ? 2
           : format == LM_DATA_FORMAT_FLOAT32 || format == LM_DATA_FORMAT_UINT32 ||
                   format == LM_DATA_FORMAT_INT32
               ? 4
               : 0;
}

/* Element e of a row-major block spread over q's pages from `ptr`, as the
 * 32-bit pattern of its working-form float (integer formats: raw). */
static uint32_t rm_load(const sim_cb *q, const uint8_t *l1, uint32_t ptr, uint32_t e) {
    uint32_t es = row_major_size(q->format), off = e * es;
    const uint8_t *p = l1 + sim_cb_page_addr(q, ptr, off / q->page_size) + off % q->page_size;
    if (es == 2) return (uint32_t)(p[0] | p[1] << 8) << 16;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void rm_store(const sim_cb *q, uint8_t *l1, uint32_t ptr, uint32_t e, uint32_t bits) {
    uint32_t es = row_major_size(q->format), off = e * es;
    uint8_t *p = l1 + sim_cb_page_addr(q, ptr, off / q->page_size) + off % q->page_size;
    if (es == 2) bits = tile_bf16_from_bits(bits);
    for (uint32_t i = 0; i < es; i++)
        p[i] = (uint8_t)(bits >> 8 * i);
}

/* tilize_block / untilize_block: `block` tiles between a row-major block of
 * 32 rows x (block * 32) elements, over `block` pages, and `block` tiles. The
 * two CBs have the same kind of element (float or integer). */
static rv_ecall_result tilize_block(sim_compute *c, sim_cb *cbs, rv_hart *h, uint32_t icb,
                                    uint32_t block, uint32_t ocb, uint32_t dir) {
    const char *op = dir == LM_TILIZE ? "tilize_block" : "untilize_block";
    if (dir != LM_TILIZE && dir != LM_UNTILIZE)
        return fault(h, "tilize: unknown direction %u", dir);
    rv_ecall_result res = RV_ECALL_CONTINUE;
    sim_cb *in = tile_cb(cbs, h, icb, op, &res), *out = in ? tile_cb(cbs, h, ocb, op, &res) : NULL;
    if (!out) return res;
    const sim_cb *rm = dir == LM_TILIZE ? in : out;
    if (!row_major_size(rm->format))
        return fault(h, "%s: circular buffer %u's format has no row-major form", op,
                     dir == LM_TILIZE ? icb : ocb);
    bool raw_in = row_major_size(in->format) == 4 && in->format != LM_DATA_FORMAT_FLOAT32;
    bool raw_out = row_major_size(out->format) == 4 && out->format != LM_DATA_FORMAT_FLOAT32;
    if ((in->format == LM_DATA_FORMAT_UINT32 || in->format == LM_DATA_FORMAT_INT32 || raw_in) !=
        (out->format == LM_DATA_FORMAT_UINT32 || out->format == LM_DATA_FORMAT_INT32 || raw_out))
        return fault(h, "%s: circular buffers %u and %u mix integer and float formats", op, icb,
                     ocb);
    if (block == 0 || block > in->num_pages || block > out->num_pages)
        return fault(h, "%s: block of %u tiles does not fit circular buffers %u and %u", op, block,
                     icb, ocb);
    if (in->waited < block)
        return fault(h,
                     "%s: %u tiles of circular buffer %u were not waited for (cb_wait_front "
                     "covers %u)",
                     op, block, icb, in->waited);
    if (!may_write_back(c, h, out, ocb, out->packed + block - 1, op, &res)) return res;
    float t[TILE_ELEMS];
    uint32_t width = block * TILE_DIM;
    for (uint32_t b = 0; b < block; b++) {
        if (dir == LM_TILIZE) {
            uint32_t es = row_major_size(in->format), seg = TILE_DIM * es;
            uint8_t *o = h->l1 + sim_cb_page_addr(out, out->wr_ptr, out->packed + b);
            /* bfloat16 to bfloat16 tiles: the values move as they are (the
             * widening and rounding of the general path give them back
             * unchanged), but a NaN gets its quiet bit, as there. */
            bool direct = es == 2 && out->format == LM_DATA_FORMAT_FLOAT16_B;
            for (uint32_t r = 0; r < TILE_DIM; r++) {
                uint32_t off = (r * width + b * TILE_DIM) * es;
                if (off / in->page_size == (off + seg - 1) / in->page_size) {
                    /* The tile's row lies in one page: read it in one go
                     * (the common case; the same bits as rm_load). */
                    const uint8_t *p = h->l1 +
                                       sim_cb_page_addr(in, in->rd_ptr, off / in->page_size) +
                                       off % in->page_size;
                    if (direct) {
                        uint16_t v[TILE_DIM];
                        memcpy(v, p, sizeof v);
                        for (uint32_t col = 0; col < TILE_DIM; col++)
                            v[col] = (v[col] & 0x7fffu) > 0x7f80u ? (uint16_t)(v[col] | 0x0040u)
                                                                  : v[col];
                        memcpy(o + 2 * tile_face_offset(r, 0), v, sizeof v / 2);
                        memcpy(o + 2 * tile_face_offset(r, TILE_FACE_DIM), v + TILE_FACE_DIM,
                               sizeof v / 2);
                        continue;
                    }
                    float *row = &t[r * TILE_DIM];
                    if (es == 4) { /* L1 is little-endian, like the hosts we run on */
                        memcpy(row, p, TILE_DIM * 4);
                    } else {
                        uint16_t half[TILE_DIM];
                        uint32_t bits[TILE_DIM];
                        memcpy(half, p, sizeof half);
                        for (uint32_t col = 0; col < TILE_DIM; col++)
                            bits[col] = (uint32_t)half[col] << 16;
                        memcpy(row, bits, sizeof bits);
                    }
                    continue;
                }
                for (uint32_t col = 0; col < TILE_DIM; col++) {
                    uint32_t bits = rm_load(in, h->l1, in->rd_ptr, r * width + b * TILE_DIM + col);
                    if (direct) {
                        uint16_t v = tile_bf16_from_bits(bits);
                        memcpy(o + 2 * tile_face_offset(r, col), &v, sizeof v);
                    }
                    memcpy(&t[r * TILE_DIM + col], &bits, 4);
                }
            }
            if (!direct) tile_pack((lm_data_format)out->format, t, o);
        } else {
            tile_unpack((lm_data_format)in->format, h->l1 + sim_cb_page_addr(in, in->rd_ptr, b), t);
            uint32_t es = row_major_size(out->format), seg = TILE_DIM * es;
            for (uint32_t r = 0; r < TILE_DIM; r++) {
                uint32_t e0 = out->packed * TILE_ELEMS + r * width + b * TILE_DIM, off = e0 * es;
                if (off / out->page_size == (off + seg - 1) / out->page_size) {
                    /* The row lies in one page: write it in one go (the
                     * common case; the same bits as rm_store). */
                    uint8_t *p = h->l1 + sim_cb_page_addr(out, out->wr_ptr, off / out->page_size) +
                                 off % out->page_size;
                    if (es == 4) {
                        memcpy(p, &t[r * TILE_DIM], TILE_DIM * 4);
                    } else {
                        uint16_t half[TILE_DIM];
                        for (uint32_t col = 0; col < TILE_DIM; col++) {
                            uint32_t bits;
                            memcpy(&bits, &t[r * TILE_DIM + col], 4);
                            half[col] = tile_bf16_from_bits(bits);
                        }
                        memcpy(p, half, sizeof half);
                    }
                    continue;
                }
                for (uint32_t col = 0; col < TILE_DIM; col++) {
                    uint32_t bits;
                    memcpy(&bits, &t[r * TILE_DIM + col], 4);
                    rm_store(out, h->l1, out->wr_ptr, e0 + col, bits);
                }
            }
        }
    }
    out->packed += block;
    return res;
}

void sim_compute_call_name(const rv_hart *h, uint32_t call, char *buf, size_t size) {
    static const char *const names[] = {
        [LM_ECALL_TILE_REGS_ACQUIRE - LM_ECALL_COMPUTE_FIRST] = "tile_regs_acquire",
        [LM_ECALL_TILE_REGS_COMMIT - LM_ECALL_COMPUTE_FIRST] = "tile_regs_commit",
        [LM_ECALL_TILE_REGS_WAIT - LM_ECALL_COMPUTE_FIRST] = "tile_regs_wait",
        [LM_ECALL_TILE_REGS_RELEASE - LM_ECALL_COMPUTE_FIRST] = "tile_regs_release",
        [LM_ECALL_COPY_TILE - LM_ECALL_COMPUTE_FIRST] = "copy_tile",
        [LM_ECALL_BINARY_TILES - LM_ECALL_COMPUTE_FIRST] = "an eltwise binary tile operation",
        [LM_ECALL_MATMUL_TILES - LM_ECALL_COMPUTE_FIRST] = "matmul_tiles",
        [LM_ECALL_REDUCE_TILE - LM_ECALL_COMPUTE_FIRST] = "reduce_tile",
        [LM_ECALL_TRANSPOSE_TILE - LM_ECALL_COMPUTE_FIRST] = "transpose_wh_tile",
        [LM_ECALL_SFPU_TILE - LM_ECALL_COMPUTE_FIRST] = "an SFPU tile operation",
        [LM_ECALL_PACK_TILE - LM_ECALL_COMPUTE_FIRST] = "pack_tile",
        [LM_ECALL_FILL_TILE - LM_ECALL_COMPUTE_FIRST] = "fill_tile",
        [LM_ECALL_DST_ACQUIRE - LM_ECALL_COMPUTE_FIRST] = "acquire_dst",
        [LM_ECALL_DST_RELEASE - LM_ECALL_COMPUTE_FIRST] = "release_dst",
        [LM_ECALL_SFPU_BINARY - LM_ECALL_COMPUTE_FIRST] = "a binary SFPU tile operation",
        [LM_ECALL_TILIZE_BLOCK - LM_ECALL_COMPUTE_FIRST] = "tilize_block",
        [LM_ECALL_SFPU_WHERE - LM_ECALL_COMPUTE_FIRST] = "where_tile",
        [LM_ECALL_RAND - LM_ECALL_COMPUTE_FIRST] = "rand_tile",
    };
    static const char *const binary_names[TILE_BINARY_COUNT_] = {[TILE_BINARY_ADD] = "add_tiles",
                                                                 [TILE_BINARY_SUB] = "sub_tiles",
                                                                 [TILE_BINARY_MUL] = "mul_tiles"};
    const uint32_t *a = &h->x[10];
    if (call == LM_ECALL_SFPU_TILE && a[0] > TILE_SFPU_INVALID && a[0] < TILE_SFPU_COUNT_)
        snprintf(buf, size, "%s_tile", tile_sfpu_op_name((tile_sfpu_op)a[0]));
    else if (call == LM_ECALL_SFPU_BINARY && a[0] > TILE_DST_BINARY_INVALID &&
             a[0] < TILE_DST_BINARY_COUNT_)
        snprintf(buf, size, "%s", tile_dst_binary_name((tile_dst_binary_op)a[0]));
    else if (call == LM_ECALL_SFPU_WHERE && a[4] == LM_WHERE_INT32)
        snprintf(buf, size, "where_int32_tile");
    else if (call == LM_ECALL_RAND && a[0] == LM_RAND_SEED)
        snprintf(buf, size, "rand_tile_init");
    else if (call == LM_ECALL_TILIZE_BLOCK && a[3] == LM_UNTILIZE)
        snprintf(buf, size, "untilize_block");
    else if (call == LM_ECALL_BINARY_TILES && (a[0] & 0xFF) > TILE_BINARY_INVALID &&
             (a[0] & 0xFF) < TILE_BINARY_COUNT_)
        snprintf(buf, size, "%s", binary_names[a[0] & 0xFF]);
    else if (call >= LM_ECALL_COMPUTE_FIRST && call <= LM_ECALL_COMPUTE_LAST)
        snprintf(buf, size, "%s", names[call - LM_ECALL_COMPUTE_FIRST]);
    else
        snprintf(buf, size, "compute call %u", call);
}

rv_ecall_result sim_compute_ecall(sim_compute *c, sim_cb *cbs, rv_hart *h, uint32_t call) {
    const uint32_t *a = &h->x[10];
    rv_ecall_result res = RV_ECALL_CONTINUE;
    const float *x, *y;
    bool raw;
    switch (call) {
    case LM_ECALL_TILE_REGS_ACQUIRE:
        if (step(c, h, REGS_IDLE, REGS_ACQUIRED, "tile_regs_acquire", &res))
            tile_dst_clear(&c->dst);
        return res;
    case LM_ECALL_TILE_REGS_COMMIT:
        step(c, h, REGS_ACQUIRED, REGS_COMMITTED, "tile_regs_commit", &res);
        return res;
    case LM_ECALL_TILE_REGS_WAIT:
        step(c, h, REGS_COMMITTED, REGS_WAITED, "tile_regs_wait", &res);
        return res;
    case LM_ECALL_TILE_REGS_RELEASE:
        step(c, h, REGS_WAITED, REGS_IDLE, "tile_regs_release", &res);
        return res;
    case LM_ECALL_DST_ACQUIRE:
        if (step(c, h, REGS_IDLE, REGS_FULL, "acquire_dst", &res)) tile_dst_clear(&c->dst);
        return res;
    case LM_ECALL_DST_RELEASE:
        step(c, h, REGS_FULL, REGS_IDLE, "release_dst", &res);
        return res;
    case LM_ECALL_PACK_TILE:
        if (!need_pack(c, h, "pack_tile", &res)) return res;
        return pack(c, cbs, h, a[0], a[1], a[2]);
    case LM_ECALL_TILIZE_BLOCK:
        /* The whole unpack -> dst -> pack inside one call, as tt-metal's
         * tilize_block does: dst must be free for it. */
        if (c->regs != REGS_IDLE)
            return fault(h, "%s while dst is %s: it uses dst itself",
                         a[3] == LM_UNTILIZE ? "untilize_block" : "tilize_block",
                         regs_state_name[c->regs]);
        return tilize_block(c, cbs, h, a[0], a[1], a[2], a[3]);
    case LM_ECALL_RAND:
        /* Seeding touches no register: allowed outside acquire, as the
         * kernels that seed once before their loop do. */
        if (a[0] == LM_RAND_SEED) {
            tile_rand_seed(&c->rand, a[1]);
            return res;
        }
        if (a[0] != LM_RAND_TILE) return fault(h, "rand_tile: unknown call %u", a[0]);
        break;
    }
    if (c->regs != REGS_ACQUIRED && c->regs != REGS_FULL) {
        /* Named only here: formatting it on every call cost more than some
         * of the operations. */
        char name[48];
        sim_compute_call_name(h, call, name, sizeof name);
        if (!need_math(c, h, name, &res)) return res;
    }
    switch (call) {
    case LM_ECALL_COPY_TILE:
        if (!(x = unpack(c, cbs, h, a[0], a[1], &raw, "copy_tile", &res, NULL))) return res;
        return tile_copy(&c->dst, a[2], x, raw) ? engine_fault(h) : res;
    case LM_ECALL_BINARY_TILES: {
        const char *op = "binary tile operation";
        float bbuf[TILE_ELEMS];
        if (!(x = unpack(c, cbs, h, a[1] & 0xFF, a[2], NULL, op, &res, NULL)) ||
            !(y = unpack_bcast(c, cbs, h, a[1] >> 8 & 0xFF, a[3], (tile_bcast)(a[0] >> 8 & 0xFF),
                               bbuf, op, &res, x)))
            return res;
        return tile_binary(&c->dst, a[0] >> 16 & 0xFF, (tile_binary_op)(a[0] & 0xFF),
                           (tile_bcast)(a[0] >> 8 & 0xFF), x, y, (a[0] >> 24) != 0)
                   ? engine_fault(h)
                   : res;
    }
    case LM_ECALL_MATMUL_TILES:
        if (!(x = unpack(c, cbs, h, a[0] & 0xFF, a[1], NULL, "matmul_tiles", &res, NULL)) ||
            !(y = unpack(c, cbs, h, a[0] >> 8 & 0xFF, a[2], NULL, "matmul_tiles", &res, x)))
            return res;
        return tile_matmul(&c->dst, a[3], x, y, a[4] != 0) ? engine_fault(h) : res;
    case LM_ECALL_REDUCE_TILE: {
        float sbuf[TILE_ELEMS];
        if (!(x = unpack(c, cbs, h, a[1] & 0xFF, a[2], NULL, "reduce_tile", &res, NULL)) ||
            !(y = unpack_bcast(c, cbs, h, a[1] >> 8 & 0xFF, a[3], TILE_BCAST_SCALAR, sbuf,
                               "reduce_tile", &res, x)))
            return res;
        return tile_reduce(&c->dst, a[0] >> 16, (tile_reduce_func)(a[0] & 0xFF),
                           (tile_reduce_dim)(a[0] >> 8 & 0xFF), x, y[0])
                   ? engine_fault(h)
                   : res;
    }
    case LM_ECALL_TRANSPOSE_TILE:
        if (!(x = unpack(c, cbs, h, a[0], a[1], NULL, "transpose_wh_tile", &res, NULL))) return res;
        return tile_transpose(&c->dst, a[2], x) ? engine_fault(h) : res;
    case LM_ECALL_SFPU_TILE:
        return tile_sfpu_param(&c->dst, a[1], (tile_sfpu_op)a[0], a[2], a[3]) ? engine_fault(h)
                                                                              : res;
    case LM_ECALL_SFPU_WHERE:
        if (a[4] != LM_WHERE_FLOAT && a[4] != LM_WHERE_INT32)
            return fault(h, "where_tile: unknown element kind %u", a[4]);
        return tile_where(&c->dst, a[0], a[1], a[2], a[3], a[4] == LM_WHERE_INT32) ? engine_fault(h)
                                                                                   : res;
    case LM_ECALL_SFPU_BINARY:
        return tile_dst_binary(&c->dst, (tile_dst_binary_op)a[0], a[1], a[2], a[3])
                   ? engine_fault(h)
                   : res;
    case LM_ECALL_RAND: {
        float from, scale;
        memcpy(&from, &a[2], sizeof from);
        memcpy(&scale, &a[3], sizeof scale);
        return tile_dst_rand(&c->dst, a[1], &c->rand, from, scale) ? engine_fault(h) : res;
    }
    case LM_ECALL_FILL_TILE: {
        lm_status st;
        if (a[2] == LM_FILL_FLOAT) {
            float v;
            memcpy(&v, &a[1], sizeof v);
            st = tile_dst_fill(&c->dst, a[0], v);
        } else if (a[2] == LM_FILL_INT) {
            st = tile_dst_fill_raw(&c->dst, a[0], a[1]);
        } else {
            return fault(h, "fill_tile: unknown fill kind %u", a[2]);
        }
        return st ? engine_fault(h) : res;
    }
    }
    return fault(h, "unknown compute call %u", call);
}
