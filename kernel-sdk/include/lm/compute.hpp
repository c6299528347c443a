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
#undef LM_SFPU_TEMPLATES_

// tt-metal's compute functions live in namespace ckernel too.
namespace ckernel {
using ::acquire_dst;
using ::add_init;
using ::add_tiles;
using ::add_tiles_init;
using ::binary_op_init_common;
using ::cb_pop_front;
using ::cb_push_back;
using ::cb_reserve_back;
using ::cb_wait_front;
using ::copy_init;
using ::copy_tile;
using ::copy_tile_init;
using ::copy_tile_to_dst_init_short;
using ::get_tile_size;
using ::matmul_init;
using ::matmul_tile;
using ::matmul_tiles;
using ::mm_init;
using ::mul_init;
using ::mul_tiles;
using ::mul_tiles_init;
using ::pack_tile;
using ::reduce_tile;
using ::release_dst;
using ::sub_init;
using ::sub_tiles;
using ::sub_tiles_init;
using ::tile_regs_acquire;
using ::tile_regs_commit;
using ::tile_regs_release;
using ::tile_regs_wait;
using ::transpose_wh_tile;
} // namespace ckernel
