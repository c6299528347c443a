// tt-metal's experimental/noc_semaphore.h: part of the data movement API (lm/experimental.hpp).
#pragma once
#include "dataflow_api.h"
