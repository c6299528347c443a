// tt-metal's api/compute/eltwise_unary/binop_with_scalar.h: part of the compute API
// (compute_kernel_api.h).
#pragma once
#include "compute_kernel_api.h"
