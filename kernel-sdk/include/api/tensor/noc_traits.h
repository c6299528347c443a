// tt-metal's 2026 api/tensor/noc_traits.h: a TensorAccessor as a Noc
// transfer's source or destination ({.page_id, .offset_bytes}), with the
// Device 2.0 objects (lm/noc.hpp).
#pragma once
#include "dataflow_api.h"
#include "lm/noc.hpp"
