/* What workload.c computes, shared with replayer.c: an input pattern and the
 * output the kernel makes of it. */
#ifndef WORKLOAD_H
#define WORKLOAD_H

#include <stdint.h>

#define WL_PAGE_SIZE 1024u
#define WL_PAGES 24u
#define WL_WORDS (WL_PAGE_SIZE * WL_PAGES / 4u)

static inline uint32_t wl_input(uint32_t i) {
    return i * 2654435761u ^ 0x5bd1e995u;
}
static inline uint32_t wl_output(uint32_t i) {
    return wl_input(i) * 3u + 1u;
}

#endif
