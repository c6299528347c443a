// tt-metal's header path of TileSlice / SliceRange (lm/print.hpp, in every
// C++ kernel).
#pragma once
#include "lm_kernel_common.h"
