// tt-metal's api/compute/eltwise_unary/rand.h: part of the compute API (compute_kernel_api.h).
#pragma once
#include "compute_kernel_api.h"
