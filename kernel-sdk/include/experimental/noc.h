// tt-metal's experimental/noc.h: part of the data movement API (lm/experimental.hpp).
#pragma once
#include "dataflow_api.h"
