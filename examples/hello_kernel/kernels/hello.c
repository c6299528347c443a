/* Says hello from whichever core and processor runs it. */
#include "dataflow_api.h"

void kernel_main(void) {
    DPRINT("Hello from core (%u,%u), %s, launch %u", my_x(), my_y(), PROCESSOR_NAME,
           get_common_arg_val(0));
}
