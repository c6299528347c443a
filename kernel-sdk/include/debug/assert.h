/* tt-metal's late-2025 path of ASSERT (api/debug/assert.h). */
#pragma once
#include "api/debug/assert.h"
