// tt-metal's compute_kernel_api/compute_kernel_hw_startup.h: part of the compute API
// (compute_kernel_api.h).
#pragma once
#include "compute_kernel_api.h"
