/* The op library's kernel sources, embedded at build time from
 * src/nn/kernels/ (each one preceded by kernels/nn_kernel.h, the helpers they
 * share), so the library compiles its kernels from any install location. */
#ifndef LM_NN_KERNELS_H
#define LM_NN_KERNELS_H

#include <stddef.h>

typedef struct nn_kernel_entry {
    const char *name;   /* file name, e.g. "unary_compute.c" */
    const char *source; /* NUL-terminated C source */
} nn_kernel_entry;

extern const nn_kernel_entry nn_kernels[];
extern const size_t nn_kernel_count;

#endif
