// tt-metal's accessor/tensor_accessor.h: TensorAccessorArgs and
// TensorAccessor. Compute kernels may include it too (single-source kernels
// do), as in tt-metal: they get the data movement API with it, whose NoC
// transfers fault on the compute processor.
#pragma once
#include "api/tensor/tensor_accessor.h"
