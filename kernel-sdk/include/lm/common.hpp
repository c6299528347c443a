// tt-metal's C++ kernel API, common part (data movement and compute): the
// names whose C++ form differs from the C one in lm_kernel_common.h, and the
// types and macros tt-metal kernels are written with. Included by
// lm_kernel_common.h in C++ kernels; thin inline wrappers over the lm_
// functions there.
#pragma once

#include <array>
#include <stddef.h>
#include <stdint.h>
#include <utility>

#define FORCE_INLINE inline __attribute__((always_inline))
#define ALWI inline __attribute__((always_inline))
// Address-space markers of tt-metal's toolchain: plain pointers here.
#define tt_l1_ptr
#define tt_reg_ptr

// ---- runtime arguments ----
template <typename T = uint32_t> FORCE_INLINE T get_arg_val(int i) {
    static_assert(sizeof(T) == 4, "get_arg_val<T>: T must be a 4-byte type");
    return *reinterpret_cast<volatile T *>(static_cast<uintptr_t>(lm_arg_addr(i)));
}
template <typename T = uint32_t> FORCE_INLINE T get_common_arg_val(int i) {
    static_assert(sizeof(T) == 4, "get_common_arg_val<T>: T must be a 4-byte type");
    return *reinterpret_cast<volatile T *>(static_cast<uintptr_t>(lm_common_arg_addr(i)));
}
FORCE_INLINE uint32_t get_arg_addr(int i) {
    return lm_arg_addr(i);
}
FORCE_INLINE uint32_t get_common_arg_addr(int i) {
    return lm_common_arg_addr(i);
}

// ---- compile-time arguments ----
namespace lm {
inline constexpr uint32_t compile_time_args[] = {KERNEL_COMPILE_TIME_ARGS};
#ifdef KERNEL_COMPILE_TIME_ARG_COUNT
inline constexpr size_t compile_time_arg_count = KERNEL_COMPILE_TIME_ARG_COUNT;
#else
inline constexpr size_t compile_time_arg_count = sizeof compile_time_args / 4;
#endif

// Not constexpr: reaching it in a constant expression is the compile error
// that names the mistake.
uint32_t compile_time_arg_index_is_out_of_range_for_this_kernel(int);
uint32_t named_compile_time_arg_is_not_given_to_this_kernel(const char *);

struct named_arg {
    const char *name;
    uint32_t value;
};
#ifdef KERNEL_NAMED_COMPILE_TIME_ARGS
inline constexpr named_arg named_args[] = {KERNEL_NAMED_COMPILE_TIME_ARGS};
inline constexpr size_t named_arg_count = sizeof named_args / sizeof named_args[0];
#else
inline constexpr named_arg named_args[] = {{"", 0}};
inline constexpr size_t named_arg_count = 0;
#endif

constexpr bool same_name(const char *a, const char *b) {
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}
} // namespace lm

constexpr uint32_t get_compile_time_arg_val(int i) {
    return i >= 0 && static_cast<size_t>(i) < lm::compile_time_arg_count
               ? lm::compile_time_args[i]
               : lm::compile_time_arg_index_is_out_of_range_for_this_kernel(i);
}

constexpr uint32_t get_named_compile_time_arg_val(const char *name) {
    for (size_t i = 0; i < lm::named_arg_count; i++)
        if (lm::same_name(lm::named_args[i].name, name)) return lm::named_args[i].value;
    return lm::named_compile_time_arg_is_not_given_to_this_kernel(name);
}

// tt-metal's constexpr array of the compile-time args (exactly the ones given,
// so size() counts them), and get_ct_arg<I>() with its range check.
namespace lm {
template <size_t... I> constexpr auto compile_time_args_array(std::index_sequence<I...>) {
    return std::array<uint32_t, sizeof...(I)>{{compile_time_args[I]...}};
}
} // namespace lm
inline constexpr auto kernel_compile_time_args =
    lm::compile_time_args_array(std::make_index_sequence<lm::compile_time_arg_count>{});
template <uint32_t Idx> constexpr uint32_t get_ct_arg() {
    static_assert(Idx < kernel_compile_time_args.size(), "Index out of range");
    return kernel_compile_time_args[Idx];
}

// ---- circular buffer indices and data formats ----
namespace tt {
enum CBIndex : uint8_t {
    c_0,
    c_1,
    c_2,
    c_3,
    c_4,
    c_5,
    c_6,
    c_7,
    c_8,
    c_9,
    c_10,
    c_11,
    c_12,
    c_13,
    c_14,
    c_15,
    c_16,
    c_17,
    c_18,
    c_19,
    c_20,
    c_21,
    c_22,
    c_23,
    c_24,
    c_25,
    c_26,
    c_27,
    c_28,
    c_29,
    c_30,
    c_31,
    SIZE
};
// The older names: inputs 0..7, outputs 16..23, intermediates 24..31.
enum CB : uint8_t {
    c_in0 = 0,
    c_in1,
    c_in2,
    c_in3,
    c_in4,
    c_in5,
    c_in6,
    c_in7,
    dataflow0 = 8,
    dataflow1,
    dataflow2,
    dataflow3,
    dataflow4,
    dataflow5,
    dataflow6,
    dataflow7,
    c_out0 = 16,
    c_out1,
    c_out2,
    c_out3,
    c_out4,
    c_out5,
    c_out6,
    c_out7,
    c_intermed0 = 24,
    c_intermed1,
    c_intermed2,
    c_intermed3,
    c_intermed4,
    c_intermed5,
    c_intermed6,
    c_intermed7
};
// The dst register's split between math and pack, as older kernels name it
// for acquire_dst(mode).
enum DstMode : uint8_t { Full = 0, Half = 1, Tile = 2, NUM_DST_MODES = 3 };
// Element formats; the ones the simulated chip has take the numbers of
// lm_data_format (what get_dataformat returns), the others are names only.
enum class DataFormat : uint8_t {
    Invalid = 0,
    Float32 = 1,
    Float16_b = 2,
    Bfp8_b = 3,
    UInt32 = 4,
    Int32 = 5,
    Float16 = 16,
    Bfp8,
    Bfp4,
    Bfp4_b,
    Bfp2,
    Bfp2_b,
    Lf8,
    Fp8_e4m3,
    Tf32,
    UInt16,
    UInt8,
    Int8,
    RawUInt8,
    RawUInt16,
    RawUInt32,
};
} // namespace tt
using tt::DataFormat;

// The data format of a circular buffer's pages.
FORCE_INLINE DataFormat get_dataformat(uint32_t cb) {
    return static_cast<DataFormat>(lm_l1_word(LM_L1_CB_CONFIG + cb * LM_CB_CONFIG_STRIDE)[4]);
}

// ---- this core ----
FORCE_INLINE uint32_t get_absolute_logical_x() {
    return my_x();
}
FORCE_INLINE uint32_t get_absolute_logical_y() {
    return my_y();
}
// Kernels run on the whole grid: relative and absolute coordinates agree.
FORCE_INLINE uint32_t get_relative_logical_x() {
    return my_x();
}
FORCE_INLINE uint32_t get_relative_logical_y() {
    return my_y();
}
// Waits `cycles` cycles on the chip; the simulator has no clock to wait for.
FORCE_INLINE void riscv_wait(uint32_t cycles) {
    (void)cycles;
}

// The processor a statement is for. The simulated core has one compute
// processor doing unpack, math and pack, so each runs its argument once.
#define MATH(x) x
#define PACK(x) x
#define UNPACK(x) x

#include "lm/print.hpp"
#include "lm/profiler.hpp"
#include "lm/sfpi_guard.hpp"
