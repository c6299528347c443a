/* The kernels compiled for the baseline target of the host. */
#define TILE_KERN_TABLE tile_kernels_portable
#define TILE_KERN_NAME "portable"
#include "sim/tile/tile_kern_body.h"
