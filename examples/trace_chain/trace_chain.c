/* trace_chain: a chain of 100 small element-wise programs on all 64 cores,
 * run once eagerly (100 enqueues) and once as a metal trace (captured once,
 * replayed with one command). The outputs must be identical, bit for bit.
 * Prints PASS or FAIL. */
#include "trace_chain.h"

int main(int argc, char **argv) {
    const char *capture = ex_capture_path(argc, argv);
    static uint32_t eager[CHAIN_WORDS], traced[CHAIN_WORDS];
    lm_device *dev;
    chain c;
    uint32_t trace;
    if (ex_failed(lm_device_open(NULL, &dev), "open device") || ex_capture_begin(dev, capture) ||
        ex_failed(chain_build(&c, dev), "build the chain") ||
        ex_failed(chain_reset(&c), "write input") || ex_failed(chain_enqueue(&c), "run eagerly") ||
        ex_failed(lm_enqueue_read_buffer(c.cq, c.x, eager, true), "read eager output") ||
        ex_failed(chain_reset(&c), "write input") ||
        ex_failed(lm_begin_trace_capture(c.cq, &trace), "begin capture") ||
        ex_failed(chain_enqueue(&c), "capture") ||
        ex_failed(lm_end_trace_capture(c.cq, trace), "end capture") ||
        ex_failed(lm_replay_trace(c.cq, trace, false), "replay") ||
        ex_failed(lm_enqueue_read_buffer(c.cq, c.x, traced, true), "read traced output"))
        return 1;
    int differ = memcmp(eager, traced, sizeof eager) != 0;
    if (ex_capture_output(c.cq, c.x, "x", capture) || ex_capture_end(dev, capture)) return 1;
    printf("%d programs on 64 cores: eager and traced outputs %s (%u words)\n", CHAIN_LINKS,
           differ ? "DIFFER" : "are identical", CHAIN_WORDS);
    int bad = differ | ex_failed(lm_release_trace(dev, trace), "release trace");
    for (int i = 0; i < CHAIN_LINKS; i++)
        lm_release_program(c.links[i]);
    bad |= ex_failed(lm_device_close(dev), "close device");
    printf("%s\n", bad ? "FAIL" : "PASS");
    return bad;
}
