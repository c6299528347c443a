// tt-metal's hostdevcommon/dprint_common.h (the print server's shared
// definitions): kernels that include it get the print API (lm/print.hpp).
#pragma once
#include "lm_kernel_common.h"
