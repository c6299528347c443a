// tt-metal's profiler header: zones compile to nothing (lm/profiler.hpp).
#pragma once
#include "lm_kernel_common.h"
