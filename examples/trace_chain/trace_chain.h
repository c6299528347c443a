/* The chain shared by the trace_chain example and the trace benchmark: two
 * buffers x and y and 100 small programs on all 64 cores, link i computing
 * (i even ? y : x) = (i even ? x : y) * 3 + i. */
#ifndef LM_TRACE_CHAIN_H
#define LM_TRACE_CHAIN_H

#include "../common/example.h"

#define CHAIN_LINKS 100
#define CHAIN_WORDS (64 * 64)

typedef struct chain {
    lm_device *dev;
    lm_command_queue *cq;
    lm_buffer x, y;
    lm_program links[CHAIN_LINKS];
} chain;

static inline lm_status chain_build(chain *c, lm_device *dev) {
    c->dev = dev;
    c->cq = lm_device_command_queue(dev, 0);
    lm_status st = ex_buffer(dev, LM_BUFFER_DRAM, CHAIN_WORDS * 4, 256, &c->x);
    if (!st) st = ex_buffer(dev, LM_BUFFER_DRAM, CHAIN_WORDS * 4, 256, &c->y);
    lm_core_range_set all = lm_core_range_set_of(0, 0, 7, 7);
    for (uint32_t i = 0; i < CHAIN_LINKS && !st; i++) {
        lm_kernel k;
        uint32_t from = ex_address(i % 2 ? c->y : c->x), to = ex_address(i % 2 ? c->x : c->y);
        uint32_t args[] = {from, to};
        st = lm_create_program(dev, &c->links[i]);
        if (!st)
            st = ex_kernel(c->links[i], LM_EXAMPLE_DIR "/kernels/step.c", &all, LM_PROCESSOR_DM0,
                           &k);
        for (uint32_t y = 0; y < 8 && !st; y++)
            for (uint32_t x = 0; x < 8 && !st; x++)
                st = lm_set_runtime_args(c->links[i], k, (lm_core){x, y}, args, 2);
        if (!st) st = lm_set_common_runtime_args(c->links[i], k, &i, 1);
    }
    return st;
}

static inline lm_status chain_reset(chain *c) {
    static uint32_t in[CHAIN_WORDS];
    for (uint32_t i = 0; i < CHAIN_WORDS; i++)
        in[i] = i * 2654435761u;
    return lm_enqueue_write_buffer(c->cq, c->x, in, true);
}

/* Enqueues every link, non-blocking. */
static inline lm_status chain_enqueue(chain *c) {
    lm_status st = LM_OK;
    for (uint32_t i = 0; i < CHAIN_LINKS && !st; i++)
        st = lm_enqueue_program(c->cq, c->links[i], false);
    return st;
}

#endif
