// Late-2025 compute dialect: the per-TRISC print forms. The simulated core has
// one compute processor doing unpack, math and pack, so each prints once.
#include "compute_kernel_api.h"
#include "debug/dprint.h"

namespace NAMESPACE {
void MAIN {
    DPRINT_UNPACK(DPRINT << "Hello from UNPACK" << ENDL());
    DPRINT_MATH(DPRINT << "Hello from MATH" << ENDL());
    DPRINT_PACK(DPRINT << "Hello from PACK" << ENDL());
}
} // namespace NAMESPACE
