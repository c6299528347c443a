// SFPI is out of scope for lightmetal (see lm/sfpi_guard.hpp): any use of its
// names is a compile error that says so.
#pragma once
#ifndef __cplusplus
#error "SFPI intrinsics are out of scope for lightmetal: use the compute API's SFPU tile operations"
#endif
#include "compute_kernel_api.h"
#if LM_PROCESSOR != LM_PROC_COMPUTE
#error                                                                                             \
    "SFPI is for compute kernels, and out of scope for lightmetal: use the compute API's SFPU tile operations"
#endif
