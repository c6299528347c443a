// tt-metal's 2026 path of the compute API.
#pragma once
#include "../../compute_kernel_api.h"
