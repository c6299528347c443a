/* The compute engine's tile math: dst registers, FPU and SFPU operations.
 *
 * Model. Source operands are tiles in working form (see tile_format.h: 1024
 * floats, row-major), produced by tile_unpack() from a circular-buffer tile.
 * Results go to the dst register file: 16 tiles, or 8 when fp32 accumulation
 * is on. With fp32 accumulation dst holds float32; without it dst holds 16-bit
 * values, modelled as bfloat16: every result written to dst is rounded to
 * bfloat16 (nearest, ties to even) once, at the end of the operation. Each op
 * computes in float32 with IEEE round-to-nearest (the transcendentals with
 * float64 intermediates, see below); source registers keep full
 * float32 (no 19-bit truncation) and math fidelity (LoFi..HiFi4) does not
 * change results: the model behaves as HiFi4 always.
 *
 * Undefined elements. As on the chip (where releasing dst marks its rows
 * undefined), tile_dst_clear leaves every element undefined: an undefined
 * element holds 0 and reads as 0 everywhere (packs, SUM/AVG reductions, matmul
 * accumulation, SFPU inputs) except in a MAX reduction, which reads it as -Inf,
 * the identity of max. So a MAX reduction into a freshly acquired dst gives the
 * maximum even when every input is negative, with no fill first. Each op
 * defines the elements it writes: every element for all ops but reduce, which
 * defines only its result positions.
 *
 * How tt-metal's compute API maps here (indices and enums come from kernel
 * code; the ops below check them):
 *   tile_regs_acquire          tile_dst_clear (dst starts undefined, see above)
 *   copy_tile(cb, i, d)        tile_unpack(cb format) then tile_copy (raw for
 *                              UInt32/Int32 CBs)
 *   add/sub/mul_tiles[_bcast]  tile_unpack both operands, tile_binary
 *   matmul_tiles(.., transpose) tile_matmul (accumulates into dst)
 *   reduce_tile<func, dim>     tile_reduce, scaler = element [0][0] of the
 *                              unpacked scaler tile
 *   transpose_wh_tile          tile_transpose
 *   <sfpu>_tile(d[, p0[, p1]]) tile_sfpu_param (parameter words as passed)
 *   typecast_tile              tile_sfpu_param(TILE_SFPU_TYPECAST, in, out)
 *   <op>_binary_tile(a, b, o)  tile_dst_binary
 *   where_tile, where_int32_tile  tile_where
 *   fill_tile, fill_tile_bitcast  tile_dst_fill
 *   fill_tile_int              tile_dst_fill_raw
 *   pack_tile(d, cb)           tile_pack_dst in the CB's data format
 *
 * Determinism. Results are the same bits on every host, with or without the
 * AVX2 path, for any number of threads: every accumulation has a fixed order,
 * only correctly rounded operations are used (+, -, *, /, sqrt and fused
 * multiply-add, the latter in matmul and reduce only, both paths), the library
 * is built with -ffp-contract=off, transcendental functions are our own fixed
 * polynomial/rational approximations (no libm), and every NaN written to dst
 * becomes the canonical quiet NaN 0x7fc00000. Subnormals are handled as IEEE
 * specifies (the hardware's flush-to-zero is not modelled); the host must run
 * with the default floating-point environment (no FTZ/DAZ, round to nearest).
 * tests/tile/test_tile_ops.c holds a hash of the bits of every op on fixed
 * inputs; it is checked for both kernel sets and, under qemu, on aarch64.
 *
 * Accuracy against a float64 reference, float32 dst. The bounds are asserted by
 * tests/tile/test_tile_ops.c over random inputs (uniform and log-uniform in
 * magnitude) plus edge values; "ulp" is the float32 ulp of the reference value
 * (the subnormal spacing below FLT_MIN); in brackets the largest error measured:
 *   copy, transpose, abs, neg, relu     exact
 *   add, sub, mul, square, sqrt, recip  correctly rounded, <= 0.5 ulp
 *   matmul (K = 32 per call)            |err| <= 2^-19 * (|dst| + sum_k |a_ik b_kj|)
 *                                       [1.95e-7 = 1.6 * 2^-23 times that sum]
 *   reduce sum                          same form of bound  [2.8e-7 times the sum]
 *   reduce max                          exact
 *   fill                                exact (bfloat16 dst: rounded once)
 *   rsqrt    x >= 0                     <= 0.6 ulp          [0.50]
 *   exp      x in [-103, 88]            <= 0.6 ulp          [0.503]
 *   log      x > 0, subnormals too      <= 0.6 ulp          [0.54]
 *   sigmoid  x in [-103, 88]            <= 0.6 ulp          [0.503]
 *   tanh     all x                      <= 0.6 ulp          [0.51]
 *   gelu     tanh form, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), against
 *            the same form in float64   <= 0.6 ulp or 2^-126 absolute  [0.504]
 * The operations with parameters hold their bounds for every parameter
 * value (the tests use torch's defaults and others); all x unless said:
 *   sign, floor, ceil, trunc, frac, round (decimals 0: ties to even),
 *   relu_max, relu_min, hardtanh, clamp, heaviside, unary_max/min,
 *   predicates and comparisons (1.0 / 0.0), where, fmod, remainder
 *                                       exact
 *   round with decimals d != 0          torch's float32 steps bit for bit:
 *                                       nearbyint(x * 10^d) / 10^d (d < 0:
 *                                       nearbyint(x / 10^-d) * 10^-d)
 *   leaky_relu, add/sub/mul/div/rsub_unary  correctly rounded, <= 0.5 ulp
 *   hardsigmoid, hardswish, softsign    <= 0.5 ulp + 2^-28 (one float64
 *                                       rounding first)     [0.500]
 *   log1p    x >= -1                    <= 0.6 ulp          [0.500]
 *   expm1                               <= 0.6 ulp          [0.503]
 *   elu, selu, celu (any nonzero alpha) <= 0.6 ulp          [0.504]
 *   silu, mish, softplus                <= 0.6 ulp          [0.502]
 *   gelu_erf 0.5 x erfc(-x / sqrt2)     <= 0.6 ulp          [0.500]
 *   erf, erfc                           <= 0.6 ulp          [0.502]
 *   sin, cos, tan  all finite x (exact Payne-Hanek reduction, so huge
 *                  arguments too)       <= 0.6 ulp          [0.500]
 *   asin, acos  [-1, 1]; atan           <= 0.6 ulp          [0.500]
 *   sinh, cosh                          <= 0.6 ulp          [0.507]
 *   asinh; acosh x >= 1; atanh [-1, 1]  <= 0.6 ulp          [0.500]
 *   exp2, log2, log10 (x > 0), cbrt     <= 0.6 ulp          [0.501]
 *                                       (exact results exact: 2^k, log2(2^k),
 *                                       log10(10^k), cbrt of cubes)
 *   power, power_iterative, power_binary: x^y as torch.pow, where the result
 *            is finite and nonzero     <= 0.6 ulp          [0.502]
 *   atan2_binary                        <= 0.6 ulp          [0.500]
 *   typecast float -> int32/uint32: truncation, saturating, NaN -> 0;
 *            int -> float32/bfloat16: rounded once, to nearest even; float32
 *            -> bfloat16 as the dst rounding; int32 <-> uint32 keeps the bits
 * The same bounds are asserted over a sweep of 262,000 float32 values evenly
 * spread over all bit patterns (the transcendental ops).
 * The transcendental ops keep float64 intermediates (IEEE, so still identical
 * everywhere) and round to float32 once, which is why they are nearly
 * correctly rounded: range reductions, series and polynomial fits of our own,
 * within 2^-44 relative, exp's 2^-32 dominating.
 * With bfloat16 dst add the final rounding: <= 0.5 bfloat16 ulp (2^-8 relative).
 * Specials: exp(+Inf) = +Inf, exp(-Inf) = 0, log(+-0) = -Inf, log(x < 0) = NaN,
 * sqrt(x < 0) = NaN, recip(+-0) = +-Inf, rsqrt(0) = +Inf, sigmoid(-Inf) = 0,
 * tanh(+-Inf) = +-1, gelu(-Inf) = -0, gelu(+Inf) = +Inf, relu(NaN) = NaN.
 * Every op gives NaN for a NaN input except the predicates and comparisons
 * (a NaN is nonzero and unordered: isnan and nez give 1, the others 0) and
 * the cast to an integer (0); IEEE and C99 specials otherwise (log1p(-1) =
 * -Inf, atanh(+-1) = +-Inf, sin(Inf) = NaN, erfc(-Inf) = 2, atan2's signed
 * zeros, pow's rules of C99 F.10.4.4: x^0 = 1^y = 1 even for NaN). Where
 * torch's formula meets Inf * 0 at -Inf, the engine gives the limit instead:
 * gelu_erf, silu, mish and hardswish of -Inf are -0 (torch: NaN). sign(+-0)
 * = +0. relu_max and relu_min compare as the chip does (NaN and -0 pass
 * through).
 * Errors: operations validate their enum arguments, dst indices and the
 * parameters an op cannot take (hardtanh min > max or NaN, softplus beta and
 * celu alpha 0 or NaN, round decimals outside -38..38, typecast formats
 * outside Float32, Float16_b, Bfp8_b, UInt32, Int32) and fail with
 * LM_ERR_INVALID_ARGUMENT (message names the operation) without touching dst,
 * because those values come from kernel code. Pointers are trusted.
 *
 * Thread-safety: a tile_dst belongs to one caller at a time; the operations
 * keep no other state. tile_force_kernels() is global and meant for tests and
 * benchmarks.
 */
#ifndef LM_SIM_TILE_ENGINE_H
#define LM_SIM_TILE_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "lightmetal/lm_status.h"
#include "sim/tile/tile_format.h"

#define TILE_DST_TILES 16
#define TILE_DST_TILES_FP32 8

typedef enum tile_binary_op {
    TILE_BINARY_INVALID = 0,
    TILE_BINARY_ADD,
    TILE_BINARY_SUB,
    TILE_BINARY_MUL,
    TILE_BINARY_COUNT_
} tile_binary_op;

/* Which part of the B tile is combined with every element of A (tt-metal's
 * BroadcastType): ROW repeats B's row 0 down all rows, COL repeats B's column 0
 * across all columns, SCALAR uses B[0][0]. */
typedef enum tile_bcast {
    TILE_BCAST_INVALID = 0,
    TILE_BCAST_NONE,
    TILE_BCAST_ROW,
    TILE_BCAST_COL,
    TILE_BCAST_SCALAR,
    TILE_BCAST_COUNT_
} tile_bcast;

typedef enum tile_reduce_func {
    TILE_REDUCE_FUNC_INVALID = 0,
    TILE_REDUCE_SUM,
    TILE_REDUCE_MAX,
    TILE_REDUCE_AVG,  /* as SUM: tt-metal's scaler tile carries the 1/N */
    TILE_REDUCE_PROD, /* product of the scaled elements (not in tt-metal) */
    TILE_REDUCE_FUNC_COUNT_
} tile_reduce_func;

/* tt-metal's ReduceDim: ROW reduces each row (result in column 0), COL each
 * column (result in row 0), SCALAR the whole tile (result at [0][0]). */
typedef enum tile_reduce_dim {
    TILE_REDUCE_DIM_INVALID = 0,
    TILE_REDUCE_ROW,
    TILE_REDUCE_COL,
    TILE_REDUCE_SCALAR,
    TILE_REDUCE_DIM_COUNT_
} tile_reduce_dim;

typedef enum tile_sfpu_op {
    TILE_SFPU_INVALID = 0,
    TILE_SFPU_EXP,
    TILE_SFPU_LOG,
    TILE_SFPU_SQRT,
    TILE_SFPU_RSQRT,
    TILE_SFPU_RECIP,
    TILE_SFPU_RELU,
    TILE_SFPU_GELU,
    TILE_SFPU_SIGMOID,
    TILE_SFPU_TANH,
    TILE_SFPU_ABS,
    TILE_SFPU_NEG,
    TILE_SFPU_SQUARE,
    /* Parameters p0, p1 in brackets: float32 bits unless marked (int32) or
     * (uint32). */
    TILE_SFPU_LOG1P,
    TILE_SFPU_EXPM1,
    TILE_SFPU_SIGN,
    TILE_SFPU_RELU_MAX,   /* [upper]: clipped at upper, then at 0 (relu6: 6) */
    TILE_SFPU_RELU_MIN,   /* [lower]: max(x, lower) */
    TILE_SFPU_LEAKY_RELU, /* [slope] */
    TILE_SFPU_ELU,        /* [alpha] */
    TILE_SFPU_SELU,       /* [scale, alpha] */
    TILE_SFPU_CELU,       /* [alpha], nonzero */
    TILE_SFPU_GELU_ERF,   /* 0.5 x (1 + erf(x / sqrt 2)) */
    TILE_SFPU_SILU,
    TILE_SFPU_MISH,
    TILE_SFPU_HARDSIGMOID,
    TILE_SFPU_HARDSWISH,
    TILE_SFPU_HARDTANH, /* [min, max], min <= max */
    TILE_SFPU_SOFTPLUS, /* [beta (nonzero), threshold] */
    TILE_SFPU_SOFTSIGN,
    TILE_SFPU_ERF,
    TILE_SFPU_ERFC,
    TILE_SFPU_SIN,
    TILE_SFPU_COS,
    TILE_SFPU_TAN,
    TILE_SFPU_ASIN,
    TILE_SFPU_ACOS,
    TILE_SFPU_ATAN,
    TILE_SFPU_SINH,
    TILE_SFPU_COSH,
    TILE_SFPU_ASINH,
    TILE_SFPU_ACOSH,
    TILE_SFPU_ATANH,
    TILE_SFPU_FLOOR,
    TILE_SFPU_CEIL,
    TILE_SFPU_ROUND, /* [decimals (int32) in -38..38]: torch.round(x, decimals) */
    TILE_SFPU_TRUNC,
    TILE_SFPU_FRAC,
    TILE_SFPU_CLAMP, /* [min, max] */
    TILE_SFPU_LOGICAL_NOT,
    TILE_SFPU_ISNAN,
    TILE_SFPU_ISINF,
    TILE_SFPU_ISPOSINF,
    TILE_SFPU_ISNEGINF,
    TILE_SFPU_ISFINITE,
    TILE_SFPU_EQZ,
    TILE_SFPU_NEZ,
    TILE_SFPU_LTZ,
    TILE_SFPU_GTZ,
    TILE_SFPU_LEZ,
    TILE_SFPU_GEZ,
    TILE_SFPU_EXP2,
    TILE_SFPU_LOG2,
    TILE_SFPU_LOG10,
    TILE_SFPU_CBRT,
    TILE_SFPU_POWER,           /* [exponent]: x^p */
    TILE_SFPU_POWER_ITERATIVE, /* [exponent (uint32)]: x^n */
    TILE_SFPU_HEAVISIDE,       /* [value at 0] */
    TILE_SFPU_ADD_UNARY,       /* [s]: x + s */
    TILE_SFPU_SUB_UNARY,       /* [s]: x - s */
    TILE_SFPU_MUL_UNARY,       /* [s]: x * s */
    TILE_SFPU_DIV_UNARY,       /* [s]: x / s */
    TILE_SFPU_RSUB_UNARY,      /* [s]: s - x */
    TILE_SFPU_UNARY_MAX,       /* [s]: max(x, s) */
    TILE_SFPU_UNARY_MIN,       /* [s]: min(x, s) */
    TILE_SFPU_UNARY_EQ,        /* [s]: x == s, 1.0 or 0.0; likewise the next five */
    TILE_SFPU_UNARY_NE,
    TILE_SFPU_UNARY_LT,
    TILE_SFPU_UNARY_LE,
    TILE_SFPU_UNARY_GT,
    TILE_SFPU_UNARY_GE,
    /* [in, out (uint32 lm_data_format numbers)]: between the float formats
     * and Int32 / UInt32 */
    TILE_SFPU_TYPECAST,
    TILE_SFPU_COUNT_
} tile_sfpu_op;

/* Element-wise operations between two dst tiles (the SFPU's binary family):
 * out = a (op) b; RSUB is b - a. MAX and MIN return NaN when either input is
 * NaN. */
typedef enum tile_dst_binary_op {
    TILE_DST_BINARY_INVALID = 0,
    TILE_DST_BINARY_ADD,
    TILE_DST_BINARY_SUB,
    TILE_DST_BINARY_MUL,
    TILE_DST_BINARY_DIV,
    TILE_DST_BINARY_RSUB,
    TILE_DST_BINARY_MAX,
    TILE_DST_BINARY_MIN,
    TILE_DST_BINARY_POWER, /* a^b as torch.pow */
    TILE_DST_BINARY_EQ,    /* a == b, 1.0 or 0.0; likewise the next five */
    TILE_DST_BINARY_NE,
    TILE_DST_BINARY_LT,
    TILE_DST_BINARY_LE,
    TILE_DST_BINARY_GT,
    TILE_DST_BINARY_GE,
    TILE_DST_BINARY_LOGICAL_AND, /* nonzero (NaN too) is true; 1.0 or 0.0 */
    TILE_DST_BINARY_LOGICAL_OR,
    TILE_DST_BINARY_LOGICAL_XOR,
    TILE_DST_BINARY_ATAN2,     /* atan2(a, b) as torch.atan2(a, b) */
    TILE_DST_BINARY_FMOD,      /* torch.fmod: the sign of a, exact */
    TILE_DST_BINARY_REMAINDER, /* torch.remainder: the sign of b */
    TILE_DST_BINARY_COUNT_
} tile_dst_binary_op;

typedef struct tile_dst {
    bool fp32_acc;
    float reg[TILE_DST_TILES][TILE_ELEMS];
    /* Bit c of defined[t][r]: element (r, c) of reg[t] was written since the
     * last clear (see "Undefined elements"). */
    uint32_t defined[TILE_DST_TILES][TILE_DIM];
    /* Bit t: reg[t] and defined[t] hold tile t's state. tile_dst_clear resets
     * only this mask and a tile is zeroed when first touched after it, since
     * kernels acquire dst once per tile or block and use one or two tiles of
     * the sixteen. tile_dst_init clears everything and sets every bit. */
    uint32_t live;
} tile_dst;

/* Sets the accumulation mode and clears every register. */
void tile_dst_init(tile_dst *dst, bool fp32_acc);

/* Usable dst tiles: 16, or 8 with fp32 accumulation. */
uint32_t tile_dst_capacity(const tile_dst *dst);

/* Makes every element undefined, holding 0 (what tile_regs_acquire hands a
 * kernel). */
void tile_dst_clear(tile_dst *dst);

/* dst[idx] = a. With raw, the 32-bit patterns are copied untouched (integer
 * formats); otherwise the copy is a float result like any other. */
lm_status tile_copy(tile_dst *dst, uint32_t idx, const float *a, bool raw);

/* dst[idx] = a (op) b, with b broadcast as `bcast` says; with acc_to_dest,
 * dst[idx] += a (op) b instead (one more rounded addition: tt-metal's
 * add_tiles_init(a, b, acc_to_dest = true)). */
lm_status tile_binary(tile_dst *dst, uint32_t idx, tile_binary_op op, tile_bcast bcast,
                      const float *a, const float *b, bool acc_to_dest);

/* dst[out] = dst[a] (op) dst[b] element-wise; out may be a or b. */
lm_status tile_dst_binary(tile_dst *dst, tile_dst_binary_op op, uint32_t a, uint32_t b,
                          uint32_t out);

/* Short name of a dst binary operation ("add_binary_tile", ...); "invalid"
 * out of range. */
const char *tile_dst_binary_name(tile_dst_binary_op op);

/* dst[idx] += a x b (b transposed first when transpose_b), each element
 * accumulated as acc = fma(a[i][k], b[k][j], acc) for k = 0..31 in order,
 * starting from the current dst value; one rounding to bfloat16 at the end
 * when fp32 accumulation is off. a and b must not be dst registers. */
lm_status tile_matmul(tile_dst *dst, uint32_t idx, const float *a, const float *b,
                      bool transpose_b);

/* Reduces a (every element multiplied by `scaler`, the value tt-metal takes
 * from the scaler tile) into dst[idx], accumulating: SUM and AVG add to the
 * current dst values, MAX keeps the larger of the current dst value (-Inf where
 * undefined) and the tile's maximum; a NaN anywhere makes the result NaN. Only
 * the result positions (see tile_reduce_dim) are written and become defined.
 * Summation order: row-major over the reduced elements, fused multiply-add. */
lm_status tile_reduce(tile_dst *dst, uint32_t idx, tile_reduce_func func, tile_reduce_dim dim,
                      const float *a, float scaler);

/* dst[idx] = a transposed (rows <-> columns), exactly. */
lm_status tile_transpose(tile_dst *dst, uint32_t idx, const float *a);

/* dst[idx] = f(dst[idx]) element-wise, f taking the op's parameters: p0 and
 * p1 are the 32-bit words a kernel passes (tt-metal's convention: float32
 * bits, except ROUND's int32 decimals, POWER_ITERATIVE's uint32 exponent and
 * TYPECAST's data format numbers; see tile_sfpu_op), the ones an op does not
 * take are ignored. Parameters an op cannot work with (see the table above)
 * fail like a bad index. TYPECAST to Int32/UInt32 stores the integers raw, as
 * tile_copy's raw mode does. */
lm_status tile_sfpu_param(tile_dst *dst, uint32_t idx, tile_sfpu_op op, uint32_t p0, uint32_t p1);

/* tile_sfpu_param with both parameter words 0. */
lm_status tile_sfpu(tile_dst *dst, uint32_t idx, tile_sfpu_op op);

/* How many parameter words the op reads (0, 1 or 2); 0 out of range. */
uint32_t tile_sfpu_op_params(tile_sfpu_op op);

/* dst[out] = dst[cond] != 0 ? dst[a] : dst[b] element-wise (tt-metal's
 * where_tile; a NaN condition is true, -0 false). With raw, every tile is
 * read as 32-bit integers and the chosen bits are stored untouched
 * (where_int32_tile). out may be any of the three. */
lm_status tile_where(tile_dst *dst, uint32_t cond, uint32_t a, uint32_t b, uint32_t out, bool raw);

/* Every element of dst[idx] = value (rounded like any result). */
lm_status tile_dst_fill(tile_dst *dst, uint32_t idx, float value);

/* Every element of dst[idx] = the 32-bit pattern `bits`, untouched (integer
 * formats, like tile_copy's raw mode). */
lm_status tile_dst_fill_raw(tile_dst *dst, uint32_t idx, uint32_t bits);

/* The state of a compute engine's random generator (rand_tile_init sets it
 * from a seed; rand_tile draws from it). */
typedef struct tile_rand {
    uint64_t state;
} tile_rand;

/* rand_tile_init: the generator restarts from `seed`; equal seeds give equal
 * draws. */
void tile_rand_seed(tile_rand *r, uint32_t seed);

/* rand_tile: every element of dst[idx] = from + u * scale, u uniform in
 * [0, 1) with 24 random bits, drawn in the tile's element order and rounded
 * like any result; never from + scale itself. */
lm_status tile_dst_rand(tile_dst *dst, uint32_t idx, tile_rand *r, float from, float scale);

/* dst[idx] -> memory tile in `format` (tt-metal's pack_tile). */
lm_status tile_pack_dst(const tile_dst *dst, uint32_t idx, lm_data_format format, void *out);

/* Forces kernel set `name` ("portable", "avx2" or "avx512"), or with NULL
 * goes back to the default, the best one this build and CPU run. Returns
 * false, changing nothing, when the set is not available here. Global (every
 * thread's ops); meant for tests and benchmarks comparing the sets, whose
 * results are identical by design. */
bool tile_force_kernels(const char *name);

/* Name of the kernel set in use: "avx512", "avx2" or "portable". */
const char *tile_kernels_name(void);

/* Short names of the enum values, for messages and tests ("exp", "add", ...);
 * "invalid" for values out of range. */
const char *tile_sfpu_op_name(tile_sfpu_op op);

#endif
