// 2026 dialect: DEVICE_PRINT with {} fields, from the second data movement
// processor; DEVICE_PRINT_DATA1 prints only there.
#include "api/debug/dprint.h"

void kernel_main() {
    DEVICE_PRINT("Hello, Core {{{}, {}}} on DM1\n", get_absolute_logical_x(),
                 get_absolute_logical_y());
    DEVICE_PRINT_DATA0("not printed: this is DM1\n");
    DEVICE_PRINT_DATA1("value {} and {}\n", 7u, 2.5f);
}
