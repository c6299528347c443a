// tt-metal's 2026 header path of the data movement API.
#pragma once
#include "../../dataflow_api.h"
