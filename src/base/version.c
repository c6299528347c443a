/* The library's version, from the generated public header. */
#include "lightmetal/lm_version.h"

const char *lm_version_string(void) {
    return LM_VERSION_STRING;
}
