/* Compute kernel API (tt-metal's compute_kernel_api, in C): the dst register
 * protocol, unpack + math operations on tiles from circular buffers, SFPU
 * operations on dst, and packing dst tiles back into circular buffers. Also
 * everything in lm_kernel_common.h (circular buffers, arguments, DPRINT).
 *
 * Where tt-metal uses templates, C gets a suffix: add_tiles_bcast_rows(...)
 * for add_tiles_bcast<BroadcastType::ROW>(...), reduce_tile(op, dim, ...) with
 * the reduction as arguments. The *_init functions exist so kernels written
 * for tt-metal keep their shape; the simulated engine needs no set-up.
 */
#ifndef LM_COMPUTE_KERNEL_API_H
#define LM_COMPUTE_KERNEL_API_H

#include "lm_kernel_common.h"

/* ---- dst ownership ---- */
static inline void tile_regs_acquire(void) {
    lm_ecall(LM_ECALL_TILE_REGS_ACQUIRE, 0, 0, 0, 0, 0);
}
static inline void tile_regs_commit(void) {
    lm_ecall(LM_ECALL_TILE_REGS_COMMIT, 0, 0, 0, 0, 0);
}
static inline void tile_regs_wait(void) {
    lm_ecall(LM_ECALL_TILE_REGS_WAIT, 0, 0, 0, 0, 0);
}
static inline void tile_regs_release(void) {
    lm_ecall(LM_ECALL_TILE_REGS_RELEASE, 0, 0, 0, 0, 0);
}
/* The older one-call forms. */
static inline void acquire_dst(void) {
    tile_regs_acquire();
}
static inline void release_dst(void) {
    tile_regs_commit();
    tile_regs_wait();
    tile_regs_release();
}

/* ---- set-up (no state to set on the simulated engine) ---- */
static inline void binary_op_init_common(uint32_t icb0, uint32_t icb1, uint32_t ocb) {
    (void)icb0, (void)icb1, (void)ocb;
}
static inline void copy_tile_init(uint32_t icb) {
    (void)icb;
}
static inline void copy_tile_to_dst_init_short(uint32_t icb) {
    (void)icb;
}
static inline void add_tiles_init(uint32_t icb0, uint32_t icb1) {
    (void)icb0, (void)icb1;
}
static inline void sub_tiles_init(uint32_t icb0, uint32_t icb1) {
    (void)icb0, (void)icb1;
}
static inline void mul_tiles_init(uint32_t icb0, uint32_t icb1) {
    (void)icb0, (void)icb1;
}
static inline void mm_init(uint32_t icb0, uint32_t icb1, uint32_t ocb) {
    (void)icb0, (void)icb1, (void)ocb;
}
static inline void reduce_init(uint32_t icb, uint32_t icb_scaler, uint32_t ocb) {
    (void)icb, (void)icb_scaler, (void)ocb;
}
static inline void transpose_wh_init(uint32_t icb, uint32_t ocb) {
    (void)icb, (void)ocb;
}
static inline void init_sfpu(uint32_t icb, uint32_t ocb) {
    (void)icb, (void)ocb;
}
static inline void pack_tile_init(uint32_t ocb) {
    (void)ocb;
}

/* ---- math: results go to dst tile `idst` ---- */
static inline void copy_tile(uint32_t icb, uint32_t itile, uint32_t idst) {
    lm_ecall(LM_ECALL_COPY_TILE, icb, itile, idst, 0, 0);
}

static inline void lm_binary_tiles(uint32_t op, uint32_t bcast, uint32_t icb0, uint32_t icb1,
                                   uint32_t itile0, uint32_t itile1, uint32_t idst) {
    lm_ecall(LM_ECALL_BINARY_TILES, op | bcast << 8 | idst << 16, icb0 | icb1 << 8, itile0, itile1,
             0);
}
#define LM_BINARY_FORMS(name, op)                                                                  \
    static inline void name##_tiles(uint32_t icb0, uint32_t icb1, uint32_t t0, uint32_t t1,        \
                                    uint32_t idst) {                                               \
        lm_binary_tiles(op, LM_BCAST_NONE, icb0, icb1, t0, t1, idst);                              \
    }                                                                                              \
    static inline void name##_tiles_bcast_rows(uint32_t icb0, uint32_t icb1, uint32_t t0,          \
                                               uint32_t t1, uint32_t idst) {                       \
        lm_binary_tiles(op, LM_BCAST_ROW, icb0, icb1, t0, t1, idst);                               \
    }                                                                                              \
    static inline void name##_tiles_bcast_cols(uint32_t icb0, uint32_t icb1, uint32_t t0,          \
                                               uint32_t t1, uint32_t idst) {                       \
        lm_binary_tiles(op, LM_BCAST_COL, icb0, icb1, t0, t1, idst);                               \
    }                                                                                              \
    static inline void name##_tiles_bcast_scalar(uint32_t icb0, uint32_t icb1, uint32_t t0,        \
                                                 uint32_t t1, uint32_t idst) {                     \
        lm_binary_tiles(op, LM_BCAST_SCALAR, icb0, icb1, t0, t1, idst);                            \
    }
LM_BINARY_FORMS(add, LM_BINARY_ADD)
LM_BINARY_FORMS(sub, LM_BINARY_SUB)
LM_BINARY_FORMS(mul, LM_BINARY_MUL)
#undef LM_BINARY_FORMS

/* dst[idst] += A[itile0] x B[itile1] (B transposed when `transpose`). */
static inline void matmul_tiles(uint32_t icb0, uint32_t icb1, uint32_t itile0, uint32_t itile1,
                                uint32_t idst, uint32_t transpose) {
    lm_ecall(LM_ECALL_MATMUL_TILES, icb0 | icb1 << 8, itile0, itile1, idst, transpose);
}

/* Reduction `op` (LM_REDUCE_SUM / LM_REDUCE_MAX) along `dim` (LM_REDUCE_ROW,
 * LM_REDUCE_COL, LM_REDUCE_SCALAR); every element is scaled by element 0 of
 * the scaler tile, as in tt-metal. Accumulates into dst. */
static inline void reduce_tile(uint32_t op, uint32_t dim, uint32_t icb, uint32_t icb_scaler,
                               uint32_t itile, uint32_t itile_scaler, uint32_t idst) {
    lm_ecall(LM_ECALL_REDUCE_TILE, op | dim << 8 | idst << 16, icb | icb_scaler << 8, itile,
             itile_scaler, 0);
}

static inline void transpose_wh_tile(uint32_t icb, uint32_t itile, uint32_t idst) {
    lm_ecall(LM_ECALL_TRANSPOSE_TILE, icb, itile, idst, 0, 0);
}

/* ---- SFPU: dst[idst] = f(dst[idst]) ---- */
#define LM_SFPU_FORMS(name, op)                                                                    \
    static inline void name##_tile_init(void) {}                                                   \
    static inline void name##_tile(uint32_t idst) {                                                \
        lm_ecall(LM_ECALL_SFPU_TILE, op, idst, 0, 0, 0);                                           \
    }
LM_SFPU_FORMS(exp, LM_SFPU_EXP)
LM_SFPU_FORMS(log, LM_SFPU_LOG)
LM_SFPU_FORMS(sqrt, LM_SFPU_SQRT)
LM_SFPU_FORMS(rsqrt, LM_SFPU_RSQRT)
LM_SFPU_FORMS(recip, LM_SFPU_RECIP)
LM_SFPU_FORMS(relu, LM_SFPU_RELU)
LM_SFPU_FORMS(gelu, LM_SFPU_GELU)
LM_SFPU_FORMS(sigmoid, LM_SFPU_SIGMOID)
LM_SFPU_FORMS(tanh, LM_SFPU_TANH)
LM_SFPU_FORMS(abs, LM_SFPU_ABS)
LM_SFPU_FORMS(negative, LM_SFPU_NEG)
LM_SFPU_FORMS(square, LM_SFPU_SQUARE)
#undef LM_SFPU_FORMS
static inline void neg_tile_init(void) {}
static inline void neg_tile(uint32_t idst) {
    negative_tile(idst);
}

/* ---- pack: dst[idst] -> the next reserved tile at the back of `ocb` ---- */
static inline void pack_tile(uint32_t idst, uint32_t ocb) {
    lm_ecall(LM_ECALL_PACK_TILE, idst, ocb, 0, 0, 0);
}

#endif
