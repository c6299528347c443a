// tt-metal's compute_kernel_api/eltwise_unary/rand.h: part of the compute API
// (compute_kernel_api.h).
#pragma once
#include "compute_kernel_api.h"
