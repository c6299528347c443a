#include "sim/sim_compute.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "lm_kernel_abi.h"

/* The ecall codes are the engine's own enum values. */
_Static_assert(LM_BINARY_ADD == TILE_BINARY_ADD && LM_BINARY_MUL == TILE_BINARY_MUL, "binary");
_Static_assert(LM_BCAST_NONE == TILE_BCAST_NONE && LM_BCAST_SCALAR == TILE_BCAST_SCALAR, "bcast");
_Static_assert(LM_REDUCE_SUM == TILE_REDUCE_SUM && LM_REDUCE_MAX == TILE_REDUCE_MAX, "reduce");
_Static_assert(LM_REDUCE_ROW == TILE_REDUCE_ROW && LM_REDUCE_SCALAR == TILE_REDUCE_SCALAR, "dim");
_Static_assert(LM_SFPU_EXP == TILE_SFPU_EXP && LM_SFPU_SQUARE == TILE_SFPU_SQUARE &&
                   LM_SFPU_SQUARE + 1 == TILE_SFPU_COUNT_,
               "sfpu");

enum { REGS_IDLE, REGS_ACQUIRED, REGS_COMMITTED, REGS_WAITED };

static const char *const regs_state_name[] = {"released", "acquired", "committed", "waited for"};

void sim_compute_reset(sim_compute *c, bool fp32_acc) {
    tile_dst_init(&c->dst, fp32_acc);
    c->regs = REGS_IDLE;
    if (++c->epoch == 0) { /* after 2^32 launches, really forget everything */
        for (uint32_t i = 0; i < SIM_UNPACK_CACHE; i++)
            c->cache[i].epoch = 0;
        c->epoch = 1;
    }
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

static bool need_state(sim_compute *c, int state, rv_hart *h, const char *op,
                       rv_ecall_result *out) {
    if (c->regs == state) return true;
    static const char *const hint[] = {
        [REGS_IDLE] = "",
        [REGS_ACQUIRED] = "between tile_regs_acquire and tile_regs_commit",
        [REGS_COMMITTED] = "after tile_regs_commit",
        [REGS_WAITED] = "between tile_regs_wait and tile_regs_release",
    };
    *out = fault(h, "%s outside its place in the dst protocol: it must come %s, but dst is %s", op,
                 hint[state], regs_state_name[c->regs]);
    return false;
}

/* Tile `tile` counted from the front of circular buffer `cb`, unpacked (from
 * the cache when it was unpacked before), or NULL after a fault. */
static const float *unpack(sim_compute *cp, sim_cb *cbs, rv_hart *h, uint32_t cb, uint32_t tile,
                           bool *out_raw, const char *op, rv_ecall_result *res) {
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
    sim_unpacked *e = &cp->cache[(seq + cb * (SIM_UNPACK_CACHE / 2 + 3)) % SIM_UNPACK_CACHE];
    if (e->epoch != cp->epoch || e->key != key) {
        tile_unpack((lm_data_format)c->format, h->l1 + sim_cb_page_addr(c, c->rd_ptr, tile), e->v);
        e->key = key;
        e->epoch = cp->epoch;
    }
    return e->v;
}

static rv_ecall_result pack(sim_compute *c, sim_cb *cbs, rv_hart *h, uint32_t dst, uint32_t cb) {
    const char *op = "pack_tile";
    if (cb >= LM_MAX_CBS || cbs[cb].fifo_size == 0)
        return fault(h, "%s: circular buffer %u is not configured on this core", op, cb);
    sim_cb *q = &cbs[cb];
    if (q->packed >= q->reserved)
        return fault(h,
                     "%s: circular buffer %u has no reserved tile left (cb_reserve_back "
                     "reserved %u, %u already packed)",
                     op, cb, q->reserved, q->packed);
    size_t size = tile_format_size((lm_data_format)q->format);
    if (size == 0 || size > q->page_size)
        return fault(h,
                     "%s: circular buffer %u has pages of %u bytes, too small for a tile of "
                     "its format",
                     op, cb, q->page_size);
    uint32_t addr = sim_cb_page_addr(q, q->wr_ptr, q->packed);
    if (tile_pack_dst(&c->dst, dst, (lm_data_format)q->format, h->l1 + addr))
        return engine_fault(h);
    q->packed++;
    return RV_ECALL_CONTINUE;
}

rv_ecall_result sim_compute_ecall(sim_compute *c, sim_cb *cbs, rv_hart *h, uint32_t call) {
    const uint32_t *a = &h->x[10];
    rv_ecall_result res = RV_ECALL_CONTINUE;
    const float *x, *y;
    bool raw;
    switch (call) {
    case LM_ECALL_TILE_REGS_ACQUIRE:
        if (!need_state(c, REGS_IDLE, h, "tile_regs_acquire", &res)) return res;
        tile_dst_clear(&c->dst);
        c->regs = REGS_ACQUIRED;
        return res;
    case LM_ECALL_TILE_REGS_COMMIT:
        if (!need_state(c, REGS_ACQUIRED, h, "tile_regs_commit", &res)) return res;
        c->regs = REGS_COMMITTED;
        return res;
    case LM_ECALL_TILE_REGS_WAIT:
        if (!need_state(c, REGS_COMMITTED, h, "tile_regs_wait", &res)) return res;
        c->regs = REGS_WAITED;
        return res;
    case LM_ECALL_TILE_REGS_RELEASE:
        if (!need_state(c, REGS_WAITED, h, "tile_regs_release", &res)) return res;
        c->regs = REGS_IDLE;
        return res;
    case LM_ECALL_PACK_TILE:
        if (!need_state(c, REGS_WAITED, h, "pack_tile", &res)) return res;
        return pack(c, cbs, h, a[0], a[1]);
    }
    if (!need_state(c, REGS_ACQUIRED, h, "a math operation", &res)) return res;
    switch (call) {
    case LM_ECALL_COPY_TILE:
        if (!(x = unpack(c, cbs, h, a[0], a[1], &raw, "copy_tile", &res))) return res;
        return tile_copy(&c->dst, a[2], x, raw) ? engine_fault(h) : res;
    case LM_ECALL_BINARY_TILES: {
        const char *op = "binary tile operation";
        if (!(x = unpack(c, cbs, h, a[1] & 0xFF, a[2], NULL, op, &res)) ||
            !(y = unpack(c, cbs, h, a[1] >> 8 & 0xFF, a[3], NULL, op, &res)))
            return res;
        return tile_binary(&c->dst, a[0] >> 16, (tile_binary_op)(a[0] & 0xFF),
                           (tile_bcast)(a[0] >> 8 & 0xFF), x, y)
                   ? engine_fault(h)
                   : res;
    }
    case LM_ECALL_MATMUL_TILES:
        if (!(x = unpack(c, cbs, h, a[0] & 0xFF, a[1], NULL, "matmul_tiles", &res)) ||
            !(y = unpack(c, cbs, h, a[0] >> 8 & 0xFF, a[2], NULL, "matmul_tiles", &res)))
            return res;
        return tile_matmul(&c->dst, a[3], x, y, a[4] != 0) ? engine_fault(h) : res;
    case LM_ECALL_REDUCE_TILE:
        if (!(x = unpack(c, cbs, h, a[1] & 0xFF, a[2], NULL, "reduce_tile", &res)) ||
            !(y = unpack(c, cbs, h, a[1] >> 8 & 0xFF, a[3], NULL, "reduce_tile", &res)))
            return res;
        return tile_reduce(&c->dst, a[0] >> 16, (tile_reduce_func)(a[0] & 0xFF),
                           (tile_reduce_dim)(a[0] >> 8 & 0xFF), x, y[0])
                   ? engine_fault(h)
                   : res;
    case LM_ECALL_TRANSPOSE_TILE:
        if (!(x = unpack(c, cbs, h, a[0], a[1], NULL, "transpose_wh_tile", &res))) return res;
        return tile_transpose(&c->dst, a[2], x) ? engine_fault(h) : res;
    case LM_ECALL_SFPU_TILE:
        return tile_sfpu(&c->dst, a[1], (tile_sfpu_op)a[0]) ? engine_fault(h) : res;
    }
    return fault(h, "unknown compute call %u", call);
}
