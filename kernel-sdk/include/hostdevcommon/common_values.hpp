// tt-metal's hostdevcommon/common_values.hpp: values host and kernels share.
// Data movement kernels get it with the dataflow API, as in tt-metal: VALID
// and INVALID are what handshake semaphores are set to.
#pragma once

#include <stddef.h>
#include <stdint.h>

constexpr static uint32_t INVALID = 0;
constexpr static uint32_t VALID = 1;
// Device-open defaults of tt-metal's host (0: none reserved, or sized by the
// device); kept so code that names them compiles.
constexpr static size_t DEFAULT_L1_SMALL_SIZE = 0;
constexpr static size_t DEFAULT_TRACE_REGION_SIZE = 0;
constexpr static size_t DEFAULT_WORKER_L1_SIZE = 0;
