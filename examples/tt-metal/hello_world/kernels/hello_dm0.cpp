// Late-2025 dialect: stream DPRINT from the first data movement processor.
#include "dataflow_api.h"
#include "debug/dprint.h"

void kernel_main() {
    DPRINT << "Hello, Core {" << get_absolute_logical_x() << ", " << get_absolute_logical_y()
           << "} on DM0" << ENDL();
}
