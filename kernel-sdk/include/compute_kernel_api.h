/* Compute kernel API (tt-metal's compute_kernel_api, in C): the dst register
 * protocol, unpack + math operations on tiles from circular buffers, SFPU
 * operations on dst, and packing dst tiles back into circular buffers. Also
 * everything in lm_kernel_common.h (circular buffers, arguments, DPRINT).
 *
 * Where tt-metal uses templates, C gets a suffix: add_tiles_bcast_rows(...)
 * for add_tiles_bcast<BroadcastType::ROW>(...), reduce_tile(op, dim, ...) with
 * the reduction as arguments. The *_init functions exist so kernels written
 * for tt-metal keep their shape; the simulated engine needs no set-up.
 *
 * C++ kernels also get tt-metal's C++ forms (both dialects' entry points,
 * matmul_tiles with 5 arguments, add_tiles_init(a, b, acc_to_dest),
 * pack_tile<true>, reduce_tile<PoolType, ReduceDim>, ...) from
 * lm/compute.hpp, included at the end.
 *
 * These calls are for the compute processor only (a C data movement kernel
 * that makes one faults; in a C++ kernel built for a data movement processor
 * they do nothing, as in tt-metal -- see lm_compute_ecall), and the compute
 * processor has no NoC: the NoC calls of dataflow_api.h fault there, except
 * the semaphore calls on the core's own L1 (noc_semaphore_set,
 * noc_semaphore_wait, noc_semaphore_wait_min).
 */
#ifndef LM_COMPUTE_KERNEL_API_H
#define LM_COMPUTE_KERNEL_API_H

#include "lm_kernel_common.h"

/* The ecall of a compute operation. tt-metal compiles a compute call to
 * nothing on a data movement processor (its body runs only on the compute
 * processors), which single-source kernels -- one file built for every
 * processor -- rely on; so a C++ kernel built for a data movement processor
 * gets compute calls that do nothing. C kernels have no single-source form:
 * there a compute call on a data movement processor faults, naming it. */
#if defined(__cplusplus) && LM_PROCESSOR != LM_PROC_COMPUTE
#define LM_COMPUTE_CALLS_COMPILED_OUT 1
#endif
static inline uint32_t lm_compute_ecall(uint32_t n, uint32_t a0, uint32_t a1, uint32_t a2,
                                        uint32_t a3, uint32_t a4) {
#ifdef LM_COMPUTE_CALLS_COMPILED_OUT
    (void)n, (void)a0, (void)a1, (void)a2, (void)a3, (void)a4;
    return 0;
#else
    return lm_ecall(n, a0, a1, a2, a3, a4);
#endif
}

/* ---- dst ownership ---- */
static inline void tile_regs_acquire(void) {
    lm_compute_ecall(LM_ECALL_TILE_REGS_ACQUIRE, 0, 0, 0, 0, 0);
}
static inline void tile_regs_commit(void) {
    lm_compute_ecall(LM_ECALL_TILE_REGS_COMMIT, 0, 0, 0, 0, 0);
}
static inline void tile_regs_wait(void) {
    lm_compute_ecall(LM_ECALL_TILE_REGS_WAIT, 0, 0, 0, 0, 0);
}
static inline void tile_regs_release(void) {
    lm_compute_ecall(LM_ECALL_TILE_REGS_RELEASE, 0, 0, 0, 0, 0);
}
/* The older one-call forms: acquire_dst gives dst to math and pack at once
 * (math, then pack, then release_dst); do not mix them with tile_regs_*. */
static inline void acquire_dst(void) {
    lm_compute_ecall(LM_ECALL_DST_ACQUIRE, 0, 0, 0, 0, 0);
}
static inline void release_dst(void) {
    lm_compute_ecall(LM_ECALL_DST_RELEASE, 0, 0, 0, 0, 0);
}

/* Settings the *_init calls make, kept in the kernel (the simulated engine
 * has no configuration registers): eltwise binary results added to dst
 * (add_tiles_init(a, b, true) in C++), matmul's B transposed (mm_init with
 * transpose), copy_tile transposing (copy_tile_to_dst_init_short(cb, 1)). */
static uint32_t lm_binary_acc_to_dest_;
static uint32_t lm_matmul_transpose_;
static uint32_t lm_copy_transpose_;

/* ---- set-up (no state to set on the simulated engine) ---- */
static inline void binary_op_init_common(uint32_t icb0, uint32_t icb1, uint32_t ocb) {
    (void)icb0, (void)icb1, (void)ocb;
    lm_binary_acc_to_dest_ = 0;
}
static inline void copy_tile_init(uint32_t icb) {
    (void)icb;
    lm_copy_transpose_ = 0;
}
static inline void copy_tile_to_dst_init_short(uint32_t icb) {
    (void)icb;
    lm_copy_transpose_ = 0;
}
static inline void add_tiles_init(uint32_t icb0, uint32_t icb1) {
    (void)icb0, (void)icb1;
    lm_binary_acc_to_dest_ = 0;
}
static inline void sub_tiles_init(uint32_t icb0, uint32_t icb1) {
    (void)icb0, (void)icb1;
    lm_binary_acc_to_dest_ = 0;
}
static inline void mul_tiles_init(uint32_t icb0, uint32_t icb1) {
    (void)icb0, (void)icb1;
    lm_binary_acc_to_dest_ = 0;
}
static inline void mm_init(uint32_t icb0, uint32_t icb1, uint32_t ocb) {
    (void)icb0, (void)icb1, (void)ocb;
    lm_matmul_transpose_ = 0;
}
static inline void reduce_init(uint32_t icb, uint32_t icb_scaler, uint32_t ocb) {
    (void)icb, (void)icb_scaler, (void)ocb;
}
static inline void reduce_uninit(void) {}
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
    lm_compute_ecall(lm_copy_transpose_ ? LM_ECALL_TRANSPOSE_TILE : LM_ECALL_COPY_TILE, icb, itile,
                     idst, 0, 0);
}

/* One eltwise binary operation; acc_to_dest adds the result to dst[idst]. */
static inline void lm_binary_tiles_acc(uint32_t op, uint32_t bcast, uint32_t icb0, uint32_t icb1,
                                       uint32_t itile0, uint32_t itile1, uint32_t idst,
                                       uint32_t acc_to_dest) {
    lm_compute_ecall(LM_ECALL_BINARY_TILES,
                     op | bcast << 8 | (idst & 0xFF) << 16 | (acc_to_dest != 0) << 24,
                     icb0 | icb1 << 8, itile0, itile1, 0);
}
static inline void lm_binary_tiles(uint32_t op, uint32_t bcast, uint32_t icb0, uint32_t icb1,
                                   uint32_t itile0, uint32_t itile1, uint32_t idst) {
    lm_binary_tiles_acc(op, bcast, icb0, icb1, itile0, itile1, idst,
                        bcast == LM_BCAST_NONE ? lm_binary_acc_to_dest_ : 0);
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
    lm_compute_ecall(LM_ECALL_MATMUL_TILES, icb0 | icb1 << 8, itile0, itile1, idst, transpose);
}

/* Reduction `op` (LM_REDUCE_SUM, LM_REDUCE_AVG, LM_REDUCE_MAX, and
 * lightmetal's LM_REDUCE_PROD: the product, in row-major element order) along `dim`
 * (LM_REDUCE_ROW, LM_REDUCE_COL, LM_REDUCE_SCALAR); every element is scaled by
 * element 0 of the scaler tile, as in tt-metal (AVG is SUM with a 1/N scaler).
 * Accumulates into dst. As on the chip, dst elements not written since
 * tile_regs_acquire count as 0 for SUM/AVG, -Inf for MAX and 1 for PROD, so a MAX of
 * all-negative tiles needs no fill first; to start from another value, write
 * it with fill_tile (or copy_tile a previous partial result). */
static inline void reduce_tile(uint32_t op, uint32_t dim, uint32_t icb, uint32_t icb_scaler,
                               uint32_t itile, uint32_t itile_scaler, uint32_t idst) {
    lm_compute_ecall(LM_ECALL_REDUCE_TILE, op | dim << 8 | idst << 16, icb | icb_scaler << 8, itile,
                     itile_scaler, 0);
}

static inline void transpose_wh_tile(uint32_t icb, uint32_t itile, uint32_t idst) {
    lm_compute_ecall(LM_ECALL_TRANSPOSE_TILE, icb, itile, idst, 0, 0);
}

/* ---- SFPU: dst[idst] = f(dst[idst]) ---- */
#define LM_SFPU_FORMS(name, op)                                                                    \
    static inline void name##_tile_init(void) {}                                                   \
    static inline void name##_tile(uint32_t idst) {                                                \
        lm_compute_ecall(LM_ECALL_SFPU_TILE, op, idst, 0, 0, 0);                                   \
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
static inline void neg_tile_init(void) {}
static inline void neg_tile(uint32_t idst) {
    negative_tile(idst);
}
/* sign: -1, 0 or 1 (+0 for both zeros); gelu_erf: 0.5 x (1 + erf(x / sqrt2)),
 * torch's exact gelu (gelu_tile is the tanh form); frac: x - trunc(x); the
 * predicates (logical_not and the is* ones, eqz..gez comparing with 0, -0
 * included) give 1.0 or 0.0, a NaN being nonzero. */
LM_SFPU_FORMS(log1p, LM_SFPU_LOG1P)
LM_SFPU_FORMS(expm1, LM_SFPU_EXPM1)
LM_SFPU_FORMS(sign, LM_SFPU_SIGN)
LM_SFPU_FORMS(gelu_erf, LM_SFPU_GELU_ERF)
LM_SFPU_FORMS(silu, LM_SFPU_SILU)
LM_SFPU_FORMS(mish, LM_SFPU_MISH)
LM_SFPU_FORMS(hardsigmoid, LM_SFPU_HARDSIGMOID)
LM_SFPU_FORMS(hardswish, LM_SFPU_HARDSWISH)
LM_SFPU_FORMS(softsign, LM_SFPU_SOFTSIGN)
LM_SFPU_FORMS(erf, LM_SFPU_ERF)
LM_SFPU_FORMS(erfc, LM_SFPU_ERFC)
LM_SFPU_FORMS(sin, LM_SFPU_SIN)
LM_SFPU_FORMS(cos, LM_SFPU_COS)
LM_SFPU_FORMS(tan, LM_SFPU_TAN)
LM_SFPU_FORMS(asin, LM_SFPU_ASIN)
LM_SFPU_FORMS(acos, LM_SFPU_ACOS)
LM_SFPU_FORMS(atan, LM_SFPU_ATAN)
LM_SFPU_FORMS(sinh, LM_SFPU_SINH)
LM_SFPU_FORMS(cosh, LM_SFPU_COSH)
LM_SFPU_FORMS(asinh, LM_SFPU_ASINH)
LM_SFPU_FORMS(acosh, LM_SFPU_ACOSH)
LM_SFPU_FORMS(atanh, LM_SFPU_ATANH)
LM_SFPU_FORMS(floor, LM_SFPU_FLOOR)
LM_SFPU_FORMS(ceil, LM_SFPU_CEIL)
LM_SFPU_FORMS(trunc, LM_SFPU_TRUNC)
LM_SFPU_FORMS(frac, LM_SFPU_FRAC)
LM_SFPU_FORMS(logical_not_unary, LM_SFPU_LOGICAL_NOT)
LM_SFPU_FORMS(logical_not, LM_SFPU_LOGICAL_NOT)
LM_SFPU_FORMS(isnan, LM_SFPU_ISNAN)
LM_SFPU_FORMS(isinf, LM_SFPU_ISINF)
LM_SFPU_FORMS(isposinf, LM_SFPU_ISPOSINF)
LM_SFPU_FORMS(isneginf, LM_SFPU_ISNEGINF)
LM_SFPU_FORMS(isfinite, LM_SFPU_ISFINITE)
LM_SFPU_FORMS(eqz, LM_SFPU_EQZ)
LM_SFPU_FORMS(nez, LM_SFPU_NEZ)
LM_SFPU_FORMS(ltz, LM_SFPU_LTZ)
LM_SFPU_FORMS(gtz, LM_SFPU_GTZ)
LM_SFPU_FORMS(lez, LM_SFPU_LEZ)
LM_SFPU_FORMS(gez, LM_SFPU_GEZ)
LM_SFPU_FORMS(exp2, LM_SFPU_EXP2)
LM_SFPU_FORMS(log2, LM_SFPU_LOG2)
LM_SFPU_FORMS(log10, LM_SFPU_LOG10)
LM_SFPU_FORMS(cbrt, LM_SFPU_CBRT)
#undef LM_SFPU_FORMS
/* floor, ceil, trunc, round and frac share tt-metal's init. */
static inline void rounding_op_tile_init(void) {}

/* ---- SFPU with parameters: dst[idst] = f(dst[idst], parameters) ----
 * As in tt-metal, a float parameter travels as its float32 bits (kernels have
 * no floating point: take the bits from a compile-time or runtime argument the
 * host filled, or write them out, 0x40c00000 for 6.0f). The engine faults on
 * parameters an operation cannot take, naming the call. */
#define LM_SFPU_FORMS1(name, op)                                                                   \
    static inline void name##_tile_init(void) {}                                                   \
    static inline void name##_tile(uint32_t idst, uint32_t param0) {                               \
        lm_compute_ecall(LM_ECALL_SFPU_TILE, op, idst, param0, 0, 0);                              \
    }
#define LM_SFPU_FORMS2(name, op)                                                                   \
    static inline void name##_tile_init(void) {}                                                   \
    static inline void name##_tile(uint32_t idst, uint32_t param0, uint32_t param1) {              \
        lm_compute_ecall(LM_ECALL_SFPU_TILE, op, idst, param0, param1, 0);                         \
    }
/* relu_max: min(max(x, 0), upper) (relu6: upper 6.0); relu_min: max(x,
 * lower); leaky_relu: slope x below 0; elu: alpha (exp(x) - 1) at or below 0;
 * selu: scale, alpha (torch's are 0x3f867d5f, 0x3fd62d7d); hardtanh: min, max
 * (min above max, or a NaN, faults); clamp: min, max as torch.clamp. */
LM_SFPU_FORMS1(relu_max, LM_SFPU_RELU_MAX)
LM_SFPU_FORMS1(relu_min, LM_SFPU_RELU_MIN)
LM_SFPU_FORMS1(leaky_relu, LM_SFPU_LEAKY_RELU)
LM_SFPU_FORMS1(elu, LM_SFPU_ELU)
LM_SFPU_FORMS2(selu, LM_SFPU_SELU)
LM_SFPU_FORMS2(hardtanh, LM_SFPU_HARDTANH)
LM_SFPU_FORMS2(clamp, LM_SFPU_CLAMP)
/* x^p with p float32 bits, as tt-metal's power_tile takes it today (older
 * tt-metal took an integer there); power_iterative_tile: x^n for an unsigned
 * integer n. Both follow torch.pow (a negative x needs an integer exponent). */
LM_SFPU_FORMS1(power, LM_SFPU_POWER)
LM_SFPU_FORMS1(power_iterative, LM_SFPU_POWER_ITERATIVE)
/* 0 below 0, 1 above, the value at 0 (NaN stays NaN). */
LM_SFPU_FORMS1(heaviside, LM_SFPU_HEAVISIDE)
/* With a scalar s (init: binop_with_scalar_tile_init): x + s, x - s, x * s,
 * x / s (a division, not a product with 1/s), s - x; max and min (NaN when
 * either is NaN); the comparisons x == s ... x >= s give 1.0 or 0.0. */
LM_SFPU_FORMS1(add_unary, LM_SFPU_ADD_UNARY)
LM_SFPU_FORMS1(sub_unary, LM_SFPU_SUB_UNARY)
LM_SFPU_FORMS1(mul_unary, LM_SFPU_MUL_UNARY)
LM_SFPU_FORMS1(div_unary, LM_SFPU_DIV_UNARY)
LM_SFPU_FORMS1(rsub_unary, LM_SFPU_RSUB_UNARY)
LM_SFPU_FORMS1(unary_max, LM_SFPU_UNARY_MAX)
LM_SFPU_FORMS1(unary_min, LM_SFPU_UNARY_MIN)
LM_SFPU_FORMS1(unary_eq, LM_SFPU_UNARY_EQ)
LM_SFPU_FORMS1(unary_ne, LM_SFPU_UNARY_NE)
LM_SFPU_FORMS1(unary_lt, LM_SFPU_UNARY_LT)
LM_SFPU_FORMS1(unary_le, LM_SFPU_UNARY_LE)
LM_SFPU_FORMS1(unary_gt, LM_SFPU_UNARY_GT)
LM_SFPU_FORMS1(unary_ge, LM_SFPU_UNARY_GE)
#undef LM_SFPU_FORMS1
#undef LM_SFPU_FORMS2
static inline void binop_with_scalar_tile_init(void) {}
/* celu: x > 0: x, else alpha (exp(x / alpha) - 1); alpha nonzero. tt-metal's
 * alpha_recip is accepted and unused (the engine divides by alpha). */
static inline void celu_tile_init(void) {}
static inline void celu_tile(uint32_t idst, uint32_t alpha, uint32_t alpha_recip) {
    (void)alpha_recip;
    lm_compute_ecall(LM_ECALL_SFPU_TILE, LM_SFPU_CELU, idst, alpha, 0, 0);
}
/* softplus as torch: log(1 + exp(beta x)) / beta, or x where beta x >
 * threshold; beta nonzero. beta_reciprocal is accepted and unused. */
static inline void softplus_tile_init(void) {}
static inline void softplus_tile(uint32_t idst, uint32_t beta, uint32_t beta_reciprocal,
                                 uint32_t threshold) {
    (void)beta_reciprocal;
    lm_compute_ecall(LM_ECALL_SFPU_TILE, LM_SFPU_SOFTPLUS, idst, beta, threshold, 0);
}
/* torch.round(x, decimals): to nearest, ties to even, at 10^-decimals;
 * decimals in -38..38. */
static inline void round_tile_init(void) {}
static inline void round_tile(uint32_t idst, int32_t decimals) {
    lm_compute_ecall(LM_ECALL_SFPU_TILE, LM_SFPU_ROUND, idst, (uint32_t)decimals, 0, 0);
}
/* dst[idst] from data format in_format to out_format (LM_DF_FLOAT32,
 * LM_DF_FLOAT16_B, LM_DF_BFP8_B, LM_DF_UINT32, LM_DF_INT32; C++:
 * typecast_tile<IN, OUT>(idst) with tt::DataFormat values). Float to integer
 * truncates toward zero and saturates, NaN giving 0; integer to float rounds
 * to nearest; integers are held raw (pack them to an Int32/UInt32 CB). */
static inline void typecast_tile_init(void) {}
static inline void typecast_tile(uint32_t idst, uint32_t in_format, uint32_t out_format) {
    lm_compute_ecall(LM_ECALL_SFPU_TILE, LM_SFPU_TYPECAST, idst, in_format, out_format, 0);
}

/* ---- where: dst[odst] = dst[icond] != 0 ? dst[itrue] : dst[ifalse] ----
 * A NaN condition is true. where_int32_tile reads the three tiles as raw
 * 32-bit integers and copies the chosen bits untouched. */
static inline void where_tile_init(void) {}
static inline void where_tile(uint32_t icond, uint32_t itrue, uint32_t ifalse, uint32_t odst) {
    lm_compute_ecall(LM_ECALL_SFPU_WHERE, icond, itrue, ifalse, odst, LM_WHERE_FLOAT);
}
static inline void where_fp32_tile(uint32_t icond, uint32_t itrue, uint32_t ifalse, uint32_t odst) {
    where_tile(icond, itrue, ifalse, odst);
}
static inline void where_int32_tile(uint32_t icond, uint32_t itrue, uint32_t ifalse,
                                    uint32_t odst) {
    lm_compute_ecall(LM_ECALL_SFPU_WHERE, icond, itrue, ifalse, odst, LM_WHERE_INT32);
}

/* ---- random numbers: every element of dst[idst] = from + u * scale, u
 * uniform in [0, 1) (from and scale are float32 bits). The engine's
 * generator starts each launch from seed 0; rand_tile_init restarts it, and
 * equal seeds give equal numbers. Draws fill a tile in its element order. */
static inline void rand_tile_init(uint32_t seed) {
    lm_compute_ecall(LM_ECALL_RAND, LM_RAND_SEED, seed, 0, 0, 0);
}
static inline void rand_tile(uint32_t idst, uint32_t from, uint32_t scale) {
    lm_compute_ecall(LM_ECALL_RAND, LM_RAND_TILE, idst, from, scale, 0);
}

/* ---- fill: every element of dst[idst] = a value ---- */
static inline void fill_tile_init(void) {}
/* The value rounds like any result (to bfloat16 without fp32 accumulation). */
static inline void fill_tile(uint32_t idst, float value) {
    union {
        float f;
        uint32_t u;
    } b = {value};
    lm_compute_ecall(LM_ECALL_FILL_TILE, idst, b.u, LM_FILL_FLOAT, 0, 0);
}
/* fill_tile with the float given by its bits. */
static inline void fill_tile_bitcast(uint32_t idst, uint32_t bits) {
    lm_compute_ecall(LM_ECALL_FILL_TILE, idst, bits, LM_FILL_FLOAT, 0, 0);
}
/* The 32-bit integer stored untouched, for UInt32 / Int32 circular buffers. */
static inline void fill_tile_int(uint32_t idst, uint32_t value) {
    lm_compute_ecall(LM_ECALL_FILL_TILE, idst, value, LM_FILL_INT, 0, 0);
}

/* ---- dst-to-dst binary SFPU: dst[odst] = dst[idst0] op dst[idst1] ---- */
#define LM_SFPU_BINARY_FORMS(name, op)                                                             \
    static inline void name##_init(void) {}                                                        \
    static inline void name(uint32_t idst0, uint32_t idst1, uint32_t odst) {                       \
        lm_compute_ecall(LM_ECALL_SFPU_BINARY, op, idst0, idst1, odst, 0);                         \
    }
LM_SFPU_BINARY_FORMS(add_binary_tile, LM_SFPU_BINARY_ADD)
LM_SFPU_BINARY_FORMS(sub_binary_tile, LM_SFPU_BINARY_SUB)
LM_SFPU_BINARY_FORMS(mul_binary_tile, LM_SFPU_BINARY_MUL)
LM_SFPU_BINARY_FORMS(div_binary_tile, LM_SFPU_BINARY_DIV)
LM_SFPU_BINARY_FORMS(rsub_binary_tile, LM_SFPU_BINARY_RSUB) /* dst[idst1] - dst[idst0] */
LM_SFPU_BINARY_FORMS(binary_max_tile, LM_SFPU_BINARY_MAX)
LM_SFPU_BINARY_FORMS(binary_min_tile, LM_SFPU_BINARY_MIN)
/* power as torch.pow; the comparisons a == b ... a >= b and the logical ops
 * (nonzero, NaN included, is true) give 1.0 or 0.0; atan2 as
 * torch.atan2(a, b); fmod with a's sign and remainder with b's, as torch. */
LM_SFPU_BINARY_FORMS(power_binary_tile, LM_SFPU_BINARY_POWER)
LM_SFPU_BINARY_FORMS(eq_binary_tile, LM_SFPU_BINARY_EQ)
LM_SFPU_BINARY_FORMS(ne_binary_tile, LM_SFPU_BINARY_NE)
LM_SFPU_BINARY_FORMS(lt_binary_tile, LM_SFPU_BINARY_LT)
LM_SFPU_BINARY_FORMS(le_binary_tile, LM_SFPU_BINARY_LE)
LM_SFPU_BINARY_FORMS(gt_binary_tile, LM_SFPU_BINARY_GT)
LM_SFPU_BINARY_FORMS(ge_binary_tile, LM_SFPU_BINARY_GE)
LM_SFPU_BINARY_FORMS(logical_and_binary_tile, LM_SFPU_BINARY_LOGICAL_AND)
LM_SFPU_BINARY_FORMS(logical_or_binary_tile, LM_SFPU_BINARY_LOGICAL_OR)
LM_SFPU_BINARY_FORMS(logical_xor_binary_tile, LM_SFPU_BINARY_LOGICAL_XOR)
LM_SFPU_BINARY_FORMS(atan2_binary_tile, LM_SFPU_BINARY_ATAN2)
LM_SFPU_BINARY_FORMS(fmod_binary_tile, LM_SFPU_BINARY_FMOD)
LM_SFPU_BINARY_FORMS(remainder_binary_tile, LM_SFPU_BINARY_REMAINDER)
#undef LM_SFPU_BINARY_FORMS

/* ---- pack: dst[idst] -> the next reserved tile at the back of `ocb` ---- */
static inline void pack_tile(uint32_t idst, uint32_t ocb) {
    lm_compute_ecall(LM_ECALL_PACK_TILE, idst, ocb, 0, 0, 0);
}
/* dst[idst] -> tile `index` of the region cb_reserve_back reserved in ocb, in
 * any order (tt-metal's pack_tile<true>). */
static inline void pack_tile_at(uint32_t idst, uint32_t ocb, uint32_t index) {
    lm_compute_ecall(LM_ECALL_PACK_TILE, idst, ocb, index + 1, 0, 0);
}

/* ---- tilize / untilize: whole blocks, dst released ----
 * tilize_block reads `block` pages at the front of icb holding 32 rows of
 * block * 32 row-major elements and writes `block` tiles at the back of ocb;
 * untilize_block does the reverse. The kernel waits for the input pages and
 * reserves the output ones around the call, as in tt-metal. Float32 and
 * bfloat16 (and the 32-bit integer formats, copied as they are). */
static inline void tilize_init(uint32_t icb, uint32_t block, uint32_t ocb) {
    (void)icb, (void)block, (void)ocb;
}
static inline void tilize_uninit(uint32_t icb, uint32_t ocb) {
    (void)icb, (void)ocb;
}
static inline void tilize_block(uint32_t icb, uint32_t block, uint32_t ocb) {
    lm_compute_ecall(LM_ECALL_TILIZE_BLOCK, icb, block, ocb, LM_TILIZE, 0);
}
static inline void untilize_init(uint32_t icb) {
    (void)icb;
}
static inline void untilize_uninit(uint32_t icb) {
    (void)icb;
}
static inline void untilize_block(uint32_t icb, uint32_t block, uint32_t ocb) {
    lm_compute_ecall(LM_ECALL_TILIZE_BLOCK, icb, block, ocb, LM_UNTILIZE, 0);
}

#ifdef __cplusplus
#include "lm/compute.hpp"
#endif

#endif
