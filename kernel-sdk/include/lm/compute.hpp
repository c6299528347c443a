// tt-metal's C++ compute API over the C one in compute_kernel_api.h: both
// dialects' entry points (namespace NAMESPACE { void MAIN } and
// void kernel_main()), the templated and defaulted forms (matmul_tiles with 5
// or 6 arguments, reduce_tile<PoolType, ReduceDim>, *_tiles_bcast<...>,
// pack_tile<out_of_order>, exp_tile<approx>, ...), the ckernel:: names, and
// the set-up calls the simulated engine needs no state for.
#pragma once

#include <stddef.h>
#include <stdint.h>

// The 2025 entry point: namespace NAMESPACE { void MAIN { ... } } defines the
// function crt0 calls.
namespace lm_compute {
void lm_compute_main() __asm__("kernel_main");
}
#define NAMESPACE lm_compute
#define MAIN lm_compute_main()

// Compile-time settings of a compute kernel, as tt-metal names them. The
// build defines them for the compute processor only; a single-source kernel
// built for a data movement processor includes this header too.
#if defined(MATH_APPROX_MODE)
inline constexpr bool APPROX = MATH_APPROX_MODE != 0;
#else
inline constexpr bool APPROX = false;
#endif
#if defined(FP32_DEST_ACC_EN)
inline constexpr bool DST_ACCUM_MODE = FP32_DEST_ACC_EN != 0;
#else
inline constexpr bool DST_ACCUM_MODE = false;
#endif

enum class PoolType : uint8_t { SUM, AVG, MAX };
enum class ReduceDim : uint8_t { REDUCE_ROW, REDUCE_COL, REDUCE_SCALAR };
enum class BroadcastType : uint8_t { NONE, COL, ROW, SCALAR };
enum class EltwiseBinaryType : uint8_t { ELWMUL, ELWDIV, ELWADD, ELWSUB, ELWMAX };
using ckernel_pool_type_t = PoolType;

namespace lm {
constexpr uint32_t reduce_func(PoolType t) {
    return t == PoolType::SUM ? LM_REDUCE_SUM : t == PoolType::AVG ? LM_REDUCE_AVG : LM_REDUCE_MAX;
}
constexpr uint32_t reduce_dim(ReduceDim d) {
    return d == ReduceDim::REDUCE_ROW   ? LM_REDUCE_ROW
           : d == ReduceDim::REDUCE_COL ? LM_REDUCE_COL
                                        : LM_REDUCE_SCALAR;
}
constexpr uint32_t bcast(BroadcastType b) {
    return b == BroadcastType::NONE  ? LM_BCAST_NONE
           : b == BroadcastType::ROW ? LM_BCAST_ROW
           : b == BroadcastType::COL ? LM_BCAST_COL
                                     : LM_BCAST_SCALAR;
}
constexpr uint32_t binary_op(EltwiseBinaryType t) {
    return t == EltwiseBinaryType::ELWADD   ? LM_BINARY_ADD
           : t == EltwiseBinaryType::ELWSUB ? LM_BINARY_SUB
                                            : LM_BINARY_MUL;
}
} // namespace lm

// ---- set-up: nothing to configure on the simulated engine ----
template <class... A> ALWI void compute_kernel_hw_startup(A...) {}
template <class... A> ALWI void unary_op_init_common(A...) {}
template <class... A> ALWI void reconfig_data_format(A...) {}
template <class... A> ALWI void reconfig_data_format_srca(A...) {}
template <class... A> ALWI void reconfig_data_format_srcb(A...) {}
template <class... A> ALWI void pack_reconfig_data_format(A...) {}
template <class... A> ALWI void pack_reconfig_l1_acc(A...) {}
// copy_tile transposes each tile (rows <-> columns) after a transposing init.
ALWI void copy_tile_to_dst_init_short(uint32_t icb, uint32_t transpose,
                                      bool transpose_within_16x16_face = false) {
    copy_tile_to_dst_init_short(icb);
    lm_copy_transpose_ = transpose != 0;
    (void)transpose_within_16x16_face;
}
template <bool... B>
ALWI void copy_tile_to_dst_init_short_with_dt(uint32_t, uint32_t icb, uint32_t transpose = 0) {
    copy_tile_to_dst_init_short(icb, transpose);
}
// The newer name of copy_tile_to_dst_init_short (call_line: the caller's line,
// for tt-metal's state checks).
ALWI void copy_init(uint32_t icb, uint32_t transpose = 0, uint32_t transpose_within_16x16_face = 0,
                    uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    copy_tile_to_dst_init_short(icb, transpose, transpose_within_16x16_face != 0);
}

// ---- dst ownership: the older forms with a mode ----
// Half (double buffering) or Full dst: one dst either way on the simulated
// engine, so the mode changes nothing.
ALWI void acquire_dst(tt::DstMode mode) {
    (void)mode;
    acquire_dst();
}
ALWI void release_dst(tt::DstMode mode) {
    (void)mode;
    release_dst();
}

// ---- matmul ----
ALWI void mm_init(uint32_t in0, uint32_t in1, uint32_t out, uint32_t transpose) {
    mm_init(in0, in1, out);
    lm_matmul_transpose_ = transpose;
}
ALWI void mm_init_short(uint32_t in0, uint32_t in1, uint32_t transpose = 0) {
    mm_init(in0, in1, 0, transpose);
}
ALWI void mm_init_short_with_dt(uint32_t in0, uint32_t in1, uint32_t, uint32_t transpose = 0) {
    mm_init(in0, in1, 0, transpose);
}
// The 2026 form: the transpose set by mm_init (or matmul_init).
ALWI void matmul_tiles(uint32_t in0, uint32_t in1, uint32_t t0, uint32_t t1, uint32_t idst) {
    matmul_tiles(in0, in1, t0, t1, idst, lm_matmul_transpose_);
}
// The newer names: matmul_init takes no output CB (compute_kernel_hw_startup
// names it); matmul_tile is matmul_tiles, its transpose given per call or,
// without one, the init's.
ALWI void matmul_init(uint32_t in0, uint32_t in1, uint32_t transpose = 0,
                      uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    mm_init(in0, in1, 0, transpose);
}
ALWI void matmul_tile(uint32_t in0, uint32_t in1, uint32_t t0, uint32_t t1, uint32_t idst) {
    matmul_tiles(in0, in1, t0, t1, idst);
}
ALWI void matmul_tile(uint32_t in0, uint32_t in1, uint32_t t0, uint32_t t1, uint32_t idst,
                      uint32_t transpose) {
    matmul_tiles(in0, in1, t0, t1, idst, transpose != 0);
}

// ---- eltwise binary ----
template <EltwiseBinaryType T = EltwiseBinaryType::ELWADD, BroadcastType B = BroadcastType::NONE>
ALWI void binary_op_specific_init(uint32_t icb0 = 0, uint32_t icb1 = 0) {
    (void)icb0, (void)icb1;
}
ALWI void add_tiles_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest) {
    add_tiles_init(icb0, icb1);
    lm_binary_acc_to_dest_ = acc_to_dest;
}
ALWI void sub_tiles_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest) {
    sub_tiles_init(icb0, icb1);
    lm_binary_acc_to_dest_ = acc_to_dest;
}
ALWI void mul_tiles_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest) {
    mul_tiles_init(icb0, icb1);
    lm_binary_acc_to_dest_ = acc_to_dest;
}
// Older tt-metal's defaults: inputs CB 0 and 1, output CB 16.
ALWI void binary_op_init_common(uint32_t icb0, uint32_t icb1) {
    binary_op_init_common(icb0, icb1, tt::CB::c_out0);
}
ALWI void add_tiles_init(uint32_t icb0 = tt::CB::c_in0) {
    add_tiles_init(icb0, tt::CB::c_in1);
}
ALWI void sub_tiles_init(uint32_t icb0 = tt::CB::c_in0) {
    sub_tiles_init(icb0, tt::CB::c_in1);
}
ALWI void mul_tiles_init(uint32_t icb0 = tt::CB::c_in0) {
    mul_tiles_init(icb0, tt::CB::c_in1);
}
// The newer names of the *_tiles_init calls (call_line: the caller's line,
// for tt-metal's state checks). mul_init's acc_to_dest (true by default) is
// unused on Wormhole and Blackhole, whose multiply writes A * B; so it is
// here.
ALWI void add_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = false,
                   uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    add_tiles_init(icb0, icb1, acc_to_dest);
}
ALWI void sub_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = false,
                   uint32_t call_line = __builtin_LINE()) {
    (void)call_line;
    sub_tiles_init(icb0, icb1, acc_to_dest);
}
ALWI void mul_init(uint32_t icb0, uint32_t icb1, bool acc_to_dest = true,
                   uint32_t call_line = __builtin_LINE()) {
    (void)acc_to_dest, (void)call_line;
    mul_tiles_init(icb0, icb1);
}
template <EltwiseBinaryType T, BroadcastType B>
ALWI void any_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t t0, uint32_t t1, uint32_t idst) {
    static_assert(T == EltwiseBinaryType::ELWADD || T == EltwiseBinaryType::ELWSUB ||
                      T == EltwiseBinaryType::ELWMUL,
                  "the compute engine broadcasts add, sub and mul");
    lm_binary_tiles(lm::binary_op(T), lm::bcast(B), icb0, icb1, t0, t1, idst);
}
template <BroadcastType B>
ALWI void add_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t t0, uint32_t t1, uint32_t idst) {
    any_tiles_bcast<EltwiseBinaryType::ELWADD, B>(icb0, icb1, t0, t1, idst);
}
template <BroadcastType B>
ALWI void sub_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t t0, uint32_t t1, uint32_t idst) {
    any_tiles_bcast<EltwiseBinaryType::ELWSUB, B>(icb0, icb1, t0, t1, idst);
}
template <BroadcastType B>
ALWI void mul_tiles_bcast(uint32_t icb0, uint32_t icb1, uint32_t t0, uint32_t t1, uint32_t idst) {
    any_tiles_bcast<EltwiseBinaryType::ELWMUL, B>(icb0, icb1, t0, t1, idst);
}
template <EltwiseBinaryType T = EltwiseBinaryType::ELWADD, BroadcastType B = BroadcastType::NONE>
ALWI void init_bcast(uint32_t icb0, uint32_t icb1, uint32_t ocb) {
    (void)icb0, (void)icb1, (void)ocb;
}
template <class... A> ALWI void add_bcast_rows_init_short(A...) {}
template <class... A> ALWI void add_bcast_cols_init_short(A...) {}
template <class... A> ALWI void add_bcast_scalar_init_short(A...) {}
template <class... A> ALWI void sub_bcast_cols_init_short(A...) {}
template <class... A> ALWI void sub_tiles_bcast_scalar_init_short(A...) {}
template <class... A> ALWI void mul_bcast_rows_init_short(A...) {}
template <class... A> ALWI void mul_bcast_cols_init_short(A...) {}
template <class... A> ALWI void mul_tiles_bcast_scalar_init_short(A...) {}

// ---- reduce ----
#if defined(REDUCE_OP) && defined(REDUCE_DIM)
#define LM_REDUCE_DEFAULTS_ = REDUCE_OP, ReduceDim dim = REDUCE_DIM
#else
#define LM_REDUCE_DEFAULTS_ , ReduceDim dim
#endif
template <PoolType type LM_REDUCE_DEFAULTS_, class... A>
ALWI void reduce_init(uint32_t icb, uint32_t icb_scaler, uint32_t ocb, A...) {
    reduce_init(icb, icb_scaler, ocb);
}
template <PoolType type LM_REDUCE_DEFAULTS_, class... A>
ALWI void reduce_tile(uint32_t icb, uint32_t icb_scaler, uint32_t itile, uint32_t itile_scaler,
                      uint32_t idst, A...) {
    reduce_tile(lm::reduce_func(type), lm::reduce_dim(dim), icb, icb_scaler, itile, itile_scaler,
                idst);
}
#undef LM_REDUCE_DEFAULTS_
template <class... A> ALWI void reduce_uninit(A...) {}

// ---- pack ----
template <bool out_of_order_output>
ALWI void pack_tile(uint32_t idst, uint32_t ocb, uint32_t output_tile_index = 0) {
    if constexpr (out_of_order_output)
        pack_tile_at(idst, ocb, output_tile_index);
    else
        pack_tile(idst, ocb);
}

// ---- dst-to-dst binary SFPU: the 2025 two-argument forms (result in idst0) ----
ALWI void add_binary_tile(uint32_t idst0, uint32_t idst1) {
    add_binary_tile(idst0, idst1, idst0);
}
ALWI void sub_binary_tile(uint32_t idst0, uint32_t idst1) {
    sub_binary_tile(idst0, idst1, idst0);
}
ALWI void mul_binary_tile(uint32_t idst0, uint32_t idst1) {
    mul_binary_tile(idst0, idst1, idst0);
}
ALWI void div_binary_tile(uint32_t idst0, uint32_t idst1) {
    div_binary_tile(idst0, idst1, idst0);
}
ALWI void rsub_binary_tile(uint32_t idst0, uint32_t idst1) {
    rsub_binary_tile(idst0, idst1, idst0);
}
ALWI void binary_max_tile(uint32_t idst0, uint32_t idst1) {
    binary_max_tile(idst0, idst1, idst0);
}
ALWI void binary_min_tile(uint32_t idst0, uint32_t idst1) {
    binary_min_tile(idst0, idst1, idst0);
}

// ---- unary SFPU: the templated forms (exp_tile<approx>(i), ...) ----
#define LM_SFPU_TEMPLATES_(name)                                                                   \
    template <auto... P, class... R> ALWI void name##_tile_init(R...) {                            \
        name##_tile_init();                                                                        \
    }                                                                                              \
    template <auto P0, auto... P, class... R> ALWI void name##_tile(uint32_t idst, R...) {         \
        name##_tile(idst);                                                                         \
    }
LM_SFPU_TEMPLATES_(exp)
LM_SFPU_TEMPLATES_(log)
LM_SFPU_TEMPLATES_(sqrt)
LM_SFPU_TEMPLATES_(rsqrt)
LM_SFPU_TEMPLATES_(recip)
LM_SFPU_TEMPLATES_(relu)
LM_SFPU_TEMPLATES_(gelu)
LM_SFPU_TEMPLATES_(sigmoid)
LM_SFPU_TEMPLATES_(tanh)
LM_SFPU_TEMPLATES_(abs)
LM_SFPU_TEMPLATES_(negative)
LM_SFPU_TEMPLATES_(square)
LM_SFPU_TEMPLATES_(log1p)
LM_SFPU_TEMPLATES_(expm1)
LM_SFPU_TEMPLATES_(sign)
LM_SFPU_TEMPLATES_(gelu_erf)
LM_SFPU_TEMPLATES_(silu)
LM_SFPU_TEMPLATES_(mish)
LM_SFPU_TEMPLATES_(hardsigmoid)
LM_SFPU_TEMPLATES_(hardswish)
LM_SFPU_TEMPLATES_(softsign)
LM_SFPU_TEMPLATES_(erf)
LM_SFPU_TEMPLATES_(erfc)
LM_SFPU_TEMPLATES_(sin)
LM_SFPU_TEMPLATES_(cos)
LM_SFPU_TEMPLATES_(tan)
LM_SFPU_TEMPLATES_(asin)
LM_SFPU_TEMPLATES_(acos)
LM_SFPU_TEMPLATES_(atan)
LM_SFPU_TEMPLATES_(sinh)
LM_SFPU_TEMPLATES_(cosh)
LM_SFPU_TEMPLATES_(asinh)
LM_SFPU_TEMPLATES_(acosh)
LM_SFPU_TEMPLATES_(atanh)
LM_SFPU_TEMPLATES_(floor)
LM_SFPU_TEMPLATES_(ceil)
LM_SFPU_TEMPLATES_(trunc)
LM_SFPU_TEMPLATES_(frac)
LM_SFPU_TEMPLATES_(logical_not_unary)
LM_SFPU_TEMPLATES_(logical_not)
LM_SFPU_TEMPLATES_(isnan)
LM_SFPU_TEMPLATES_(isinf)
LM_SFPU_TEMPLATES_(isposinf)
LM_SFPU_TEMPLATES_(isneginf)
LM_SFPU_TEMPLATES_(isfinite)
LM_SFPU_TEMPLATES_(eqz)
LM_SFPU_TEMPLATES_(nez)
LM_SFPU_TEMPLATES_(ltz)
LM_SFPU_TEMPLATES_(gtz)
LM_SFPU_TEMPLATES_(lez)
LM_SFPU_TEMPLATES_(gez)
LM_SFPU_TEMPLATES_(exp2)
LM_SFPU_TEMPLATES_(log2)
LM_SFPU_TEMPLATES_(log10)
LM_SFPU_TEMPLATES_(cbrt)
#undef LM_SFPU_TEMPLATES_
// The same for the operations with parameters (power_tile<fp32>(i, p), ...).
#define LM_SFPU_TEMPLATES1_(name)                                                                  \
    template <auto... P, class... R> ALWI void name##_tile_init(R...) {                            \
        name##_tile_init();                                                                        \
    }                                                                                              \
    template <auto P0, auto... P, class... R>                                                      \
    ALWI void name##_tile(uint32_t idst, uint32_t param0, R...) {                                  \
        name##_tile(idst, param0);                                                                 \
    }
#define LM_SFPU_TEMPLATES2_(name)                                                                  \
    template <auto... P, class... R> ALWI void name##_tile_init(R...) {                            \
        name##_tile_init();                                                                        \
    }                                                                                              \
    template <auto P0, auto... P, class... R>                                                      \
    ALWI void name##_tile(uint32_t idst, uint32_t param0, uint32_t param1, R...) {                 \
        name##_tile(idst, param0, param1);                                                         \
    }
LM_SFPU_TEMPLATES1_(relu_max)
LM_SFPU_TEMPLATES1_(relu_min)
LM_SFPU_TEMPLATES1_(leaky_relu)
LM_SFPU_TEMPLATES1_(elu)
LM_SFPU_TEMPLATES1_(power)
LM_SFPU_TEMPLATES1_(power_iterative)
LM_SFPU_TEMPLATES1_(heaviside)
LM_SFPU_TEMPLATES1_(add_unary)
LM_SFPU_TEMPLATES1_(sub_unary)
LM_SFPU_TEMPLATES1_(mul_unary)
LM_SFPU_TEMPLATES1_(div_unary)
LM_SFPU_TEMPLATES1_(rsub_unary)
LM_SFPU_TEMPLATES1_(unary_max)
LM_SFPU_TEMPLATES1_(unary_min)
LM_SFPU_TEMPLATES1_(unary_eq)
LM_SFPU_TEMPLATES1_(unary_ne)
LM_SFPU_TEMPLATES1_(unary_lt)
LM_SFPU_TEMPLATES1_(unary_le)
LM_SFPU_TEMPLATES1_(unary_gt)
LM_SFPU_TEMPLATES1_(unary_ge)
LM_SFPU_TEMPLATES2_(selu)
LM_SFPU_TEMPLATES2_(hardtanh)
LM_SFPU_TEMPLATES2_(clamp)
LM_SFPU_TEMPLATES2_(celu)
#undef LM_SFPU_TEMPLATES1_
#undef LM_SFPU_TEMPLATES2_
template <auto... P, class... R> ALWI void softplus_tile_init(R...) {
    softplus_tile_init();
}
template <auto... P, class... R> ALWI void round_tile_init(R...) {
    round_tile_init();
}
template <auto... P, class... R> ALWI void typecast_tile_init(R...) {
    typecast_tile_init();
}
template <auto... P, class... R> ALWI void where_tile_init(R...) {
    where_tile_init();
}
template <auto... P, class... R> ALWI void rounding_op_tile_init(R...) {
    rounding_op_tile_init();
}
template <auto... P, class... R> ALWI void binop_with_scalar_tile_init(R...) {
    binop_with_scalar_tile_init();
}
// round_tile without decimals: to an integer (tt-metal's older form).
ALWI void round_tile(uint32_t idst) {
    round_tile(idst, 0);
}
// typecast_tile<IN_DTYPE, OUT_DTYPE>(idst): tt::DataFormat values, or their
// numbers as uint32_t.
template <auto IN, auto OUT> ALWI void typecast_tile(uint32_t idst) {
    typecast_tile(idst, static_cast<uint32_t>(IN), static_cast<uint32_t>(OUT));
}
// where_tile<DataFormat>(cond, a, b, out): the integer formats select raw
// 32-bit integers, as where_int32_tile.
template <auto F, class... R>
ALWI void where_tile(uint32_t icond, uint32_t itrue, uint32_t ifalse, uint32_t odst, R...) {
    constexpr uint32_t f = static_cast<uint32_t>(F);
    if constexpr (f == LM_DF_INT32 || f == LM_DF_UINT32)
        where_int32_tile(icond, itrue, ifalse, odst);
    else
        where_tile(icond, itrue, ifalse, odst);
}

// tt-metal's compute functions live in namespace ckernel too.
namespace ckernel {
using ::abs_tile;
using ::abs_tile_init;
using ::acos_tile;
using ::acos_tile_init;
using ::acosh_tile;
using ::acosh_tile_init;
using ::acquire_dst;
using ::add_binary_tile;
using ::add_binary_tile_init;
using ::add_init;
using ::add_tiles;
using ::add_tiles_init;
using ::add_unary_tile;
using ::add_unary_tile_init;
using ::asin_tile;
using ::asin_tile_init;
using ::asinh_tile;
using ::asinh_tile_init;
using ::atan2_binary_tile;
using ::atan2_binary_tile_init;
using ::atan_tile;
using ::atan_tile_init;
using ::atanh_tile;
using ::atanh_tile_init;
using ::binary_max_tile;
using ::binary_max_tile_init;
using ::binary_min_tile;
using ::binary_min_tile_init;
using ::binary_op_init_common;
using ::binop_with_scalar_tile_init;
using ::cb_pop_front;
using ::cb_push_back;
using ::cb_reserve_back;
using ::cb_wait_front;
using ::cbrt_tile;
using ::cbrt_tile_init;
using ::ceil_tile;
using ::ceil_tile_init;
using ::celu_tile;
using ::celu_tile_init;
using ::clamp_tile;
using ::clamp_tile_init;
using ::copy_init;
using ::copy_tile;
using ::copy_tile_init;
using ::copy_tile_to_dst_init_short;
using ::cos_tile;
using ::cos_tile_init;
using ::cosh_tile;
using ::cosh_tile_init;
using ::div_binary_tile;
using ::div_binary_tile_init;
using ::div_unary_tile;
using ::div_unary_tile_init;
using ::elu_tile;
using ::elu_tile_init;
using ::eq_binary_tile;
using ::eq_binary_tile_init;
using ::eqz_tile;
using ::eqz_tile_init;
using ::erf_tile;
using ::erf_tile_init;
using ::erfc_tile;
using ::erfc_tile_init;
using ::exp2_tile;
using ::exp2_tile_init;
using ::exp_tile;
using ::exp_tile_init;
using ::expm1_tile;
using ::expm1_tile_init;
using ::fill_tile;
using ::fill_tile_bitcast;
using ::fill_tile_init;
using ::fill_tile_int;
using ::floor_tile;
using ::floor_tile_init;
using ::fmod_binary_tile;
using ::fmod_binary_tile_init;
using ::frac_tile;
using ::frac_tile_init;
using ::ge_binary_tile;
using ::ge_binary_tile_init;
using ::gelu_erf_tile;
using ::gelu_erf_tile_init;
using ::gelu_tile;
using ::gelu_tile_init;
using ::get_tile_size;
using ::gez_tile;
using ::gez_tile_init;
using ::gt_binary_tile;
using ::gt_binary_tile_init;
using ::gtz_tile;
using ::gtz_tile_init;
using ::hardsigmoid_tile;
using ::hardsigmoid_tile_init;
using ::hardswish_tile;
using ::hardswish_tile_init;
using ::hardtanh_tile;
using ::hardtanh_tile_init;
using ::heaviside_tile;
using ::heaviside_tile_init;
using ::isfinite_tile;
using ::isfinite_tile_init;
using ::isinf_tile;
using ::isinf_tile_init;
using ::isnan_tile;
using ::isnan_tile_init;
using ::isneginf_tile;
using ::isneginf_tile_init;
using ::isposinf_tile;
using ::isposinf_tile_init;
using ::le_binary_tile;
using ::le_binary_tile_init;
using ::leaky_relu_tile;
using ::leaky_relu_tile_init;
using ::lez_tile;
using ::lez_tile_init;
using ::log10_tile;
using ::log10_tile_init;
using ::log1p_tile;
using ::log1p_tile_init;
using ::log2_tile;
using ::log2_tile_init;
using ::log_tile;
using ::log_tile_init;
using ::logical_and_binary_tile;
using ::logical_and_binary_tile_init;
using ::logical_not_tile;
using ::logical_not_tile_init;
using ::logical_not_unary_tile;
using ::logical_not_unary_tile_init;
using ::logical_or_binary_tile;
using ::logical_or_binary_tile_init;
using ::logical_xor_binary_tile;
using ::logical_xor_binary_tile_init;
using ::lt_binary_tile;
using ::lt_binary_tile_init;
using ::ltz_tile;
using ::ltz_tile_init;
using ::matmul_init;
using ::matmul_tile;
using ::matmul_tiles;
using ::mish_tile;
using ::mish_tile_init;
using ::mm_init;
using ::mul_binary_tile;
using ::mul_binary_tile_init;
using ::mul_init;
using ::mul_tiles;
using ::mul_tiles_init;
using ::mul_unary_tile;
using ::mul_unary_tile_init;
using ::ne_binary_tile;
using ::ne_binary_tile_init;
using ::neg_tile;
using ::neg_tile_init;
using ::negative_tile;
using ::negative_tile_init;
using ::nez_tile;
using ::nez_tile_init;
using ::pack_tile;
using ::power_binary_tile;
using ::power_binary_tile_init;
using ::power_iterative_tile;
using ::power_iterative_tile_init;
using ::power_tile;
using ::power_tile_init;
using ::recip_tile;
using ::recip_tile_init;
using ::reduce_tile;
using ::release_dst;
using ::relu_max_tile;
using ::relu_max_tile_init;
using ::relu_min_tile;
using ::relu_min_tile_init;
using ::relu_tile;
using ::relu_tile_init;
using ::remainder_binary_tile;
using ::remainder_binary_tile_init;
using ::round_tile;
using ::round_tile_init;
using ::rounding_op_tile_init;
using ::rsqrt_tile;
using ::rsqrt_tile_init;
using ::rsub_binary_tile;
using ::rsub_binary_tile_init;
using ::rsub_unary_tile;
using ::rsub_unary_tile_init;
using ::selu_tile;
using ::selu_tile_init;
using ::sigmoid_tile;
using ::sigmoid_tile_init;
using ::sign_tile;
using ::sign_tile_init;
using ::silu_tile;
using ::silu_tile_init;
using ::sin_tile;
using ::sin_tile_init;
using ::sinh_tile;
using ::sinh_tile_init;
using ::softplus_tile;
using ::softplus_tile_init;
using ::softsign_tile;
using ::softsign_tile_init;
using ::sqrt_tile;
using ::sqrt_tile_init;
using ::square_tile;
using ::square_tile_init;
using ::sub_binary_tile;
using ::sub_binary_tile_init;
using ::sub_init;
using ::sub_tiles;
using ::sub_tiles_init;
using ::sub_unary_tile;
using ::sub_unary_tile_init;
using ::tan_tile;
using ::tan_tile_init;
using ::tanh_tile;
using ::tanh_tile_init;
using ::tile_regs_acquire;
using ::tile_regs_commit;
using ::tile_regs_release;
using ::tile_regs_wait;
using ::transpose_wh_tile;
using ::trunc_tile;
using ::trunc_tile_init;
using ::typecast_tile;
using ::typecast_tile_init;
using ::unary_eq_tile;
using ::unary_eq_tile_init;
using ::unary_ge_tile;
using ::unary_ge_tile_init;
using ::unary_gt_tile;
using ::unary_gt_tile_init;
using ::unary_le_tile;
using ::unary_le_tile_init;
using ::unary_lt_tile;
using ::unary_lt_tile_init;
using ::unary_max_tile;
using ::unary_max_tile_init;
using ::unary_min_tile;
using ::unary_min_tile_init;
using ::unary_ne_tile;
using ::unary_ne_tile_init;
using ::where_fp32_tile;
using ::where_int32_tile;
using ::where_tile;
using ::where_tile_init;
} // namespace ckernel
