// SFPI, the compute engine's vector intrinsics (vFloat, dst_reg[], v_if), is
// not part of what the simulator models: it computes at the level of tile
// operations. Code that uses SFPI compiles into a clear error that says so,
// instead of a cascade of unknown names. Compute kernels see TRISC_MATH
// defined (the one compute processor is also the math one), so SFPI code
// inside `#ifdef TRISC_MATH` reaches these names too.
#pragma once

#if LM_PROCESSOR == LM_PROC_COMPUTE
#ifndef TRISC_MATH
#define TRISC_MATH 1
#endif

namespace lm {
template <class... T> inline constexpr bool sfpi_unsupported_ = false;
#define LM_SFPI_MESSAGE                                                                            \
    "SFPI intrinsics (vFloat, dst_reg, v_if, ...) are out of scope for lightmetal: the "           \
    "simulator computes whole tile operations; use the compute API's SFPU tile operations "        \
    "(exp_tile, sqrt_tile, add_binary_tile, ...) instead"
template <class Tag> struct sfpi_vector {
    template <class... A> sfpi_vector(A &&...) {
        static_assert(sfpi_unsupported_<A..., Tag>, LM_SFPI_MESSAGE);
    }
};
struct sfpi_dst {
    template <class I> sfpi_vector<I> operator[](I) const {
        static_assert(sfpi_unsupported_<I>, LM_SFPI_MESSAGE);
        return {};
    }
};
} // namespace lm

namespace sfpi {
using vFloat = lm::sfpi_vector<struct vfloat_tag>;
using vInt = lm::sfpi_vector<struct vint_tag>;
using vUInt = lm::sfpi_vector<struct vuint_tag>;
inline constexpr lm::sfpi_dst dst_reg{};
} // namespace sfpi
using sfpi::dst_reg;
using sfpi::vFloat;
using sfpi::vInt;
using sfpi::vUInt;

#define v_if(cond) static_assert(lm::sfpi_unsupported_<decltype(cond)>, LM_SFPI_MESSAGE);
#define v_elseif(cond) static_assert(lm::sfpi_unsupported_<decltype(cond)>, LM_SFPI_MESSAGE);
#define v_else
#define v_endif

// The LLK entry points custom SFPU code is wrapped in.
template <bool A = false, class... T> void _llk_math_eltwise_binary_sfpu_params_(T &&...) {
    static_assert(lm::sfpi_unsupported_<T...>, LM_SFPI_MESSAGE);
}
template <bool A = false, class... T> void _llk_math_eltwise_unary_sfpu_params_(T &&...) {
    static_assert(lm::sfpi_unsupported_<T...>, LM_SFPI_MESSAGE);
}
#endif
