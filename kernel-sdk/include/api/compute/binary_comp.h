// tt-metal's api/compute/binary_comp.h: part of the compute API (compute_kernel_api.h).
#pragma once
#include "compute_kernel_api.h"
