// tt-metal's dataflow_api_common.h: part of the data movement API.
#pragma once
#include "dataflow_api.h"
