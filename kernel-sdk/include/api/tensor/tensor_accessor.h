// tt-metal's header path of TensorAccessor (lm/tensor_accessor.hpp).
#pragma once
#include "dataflow_api.h"
