/* A core's circular buffer state, shared by the data movement side
 * (sim_launch.c: reserve, push, wait, pop) and the compute side
 * (sim_compute.c: reading tiles at the front, packing tiles at the back).
 *
 * Pages counters only grow; their difference is the fill, so no flag is
 * needed to tell full from empty. A core's harts all run on one host thread,
 * so this state needs no locking.
 */
#ifndef LM_SIM_CB_H
#define LM_SIM_CB_H

#include <stdint.h>

typedef struct sim_cb {
    uint32_t fifo_addr, fifo_size, page_size, num_pages, format;
    uint32_t wr_ptr, rd_ptr;
    uint32_t pushed, popped; /* pages ever pushed and popped */
    uint32_t waited;         /* front pages the consumer has waited for */
    uint32_t reserved;       /* back pages the producer has reserved */
    uint32_t packed;         /* tiles packed at the back since the last push */
} sim_cb;

static inline uint32_t sim_cb_fill(const sim_cb *c) {
    return c->pushed - c->popped;
}

/* L1 address of page `i` counted from `ptr`, wrapping around the fifo. */
static inline uint32_t sim_cb_page_addr(const sim_cb *c, uint32_t ptr, uint32_t i) {
    uint64_t at = (uint64_t)ptr - c->fifo_addr + (uint64_t)i * c->page_size;
    return c->fifo_addr + (uint32_t)(at % c->fifo_size);
}

#endif
