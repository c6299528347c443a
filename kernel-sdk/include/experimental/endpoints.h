// tt-metal's experimental/endpoints.h: part of the data movement API (lm/experimental.hpp).
#pragma once
#include "dataflow_api.h"
