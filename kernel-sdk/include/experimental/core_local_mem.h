// tt-metal's experimental/core_local_mem.h: part of the data movement API (lm/experimental.hpp).
#pragma once
#include "dataflow_api.h"
