// tt-metal's hostdevcommon/kernel_structs.h: tt::CBIndex, tt::CB and
// tt::DstMode, which every kernel gets from lm/common.hpp.
#pragma once
#include "lm_kernel_common.h"
