// tt-metal's api/compile_time_args.h: kernel_compile_time_args and
// get_ct_arg<I>() (lm/common.hpp, in every C++ kernel).
#pragma once
#include "lm_kernel_common.h"
