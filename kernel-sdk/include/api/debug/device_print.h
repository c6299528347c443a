// tt-metal's 2026 header path of DEVICE_PRINT (lm/print.hpp, in every C++
// kernel).
#pragma once
#include "lm_kernel_common.h"
