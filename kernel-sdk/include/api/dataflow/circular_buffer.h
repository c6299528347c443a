// tt-metal's 2026 api/dataflow/circular_buffer.h: the Device 2.0 objects outside namespace
// experimental (lm/noc.hpp).
#pragma once
#include "../../dataflow_api.h"
#include "lm/noc.hpp"
