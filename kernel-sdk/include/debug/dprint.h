// tt-metal's header path of kernel printing (lm/print.hpp, in every C++ kernel).
#pragma once
#include "lm_kernel_common.h"
