/* trace_vs_eager_host: host time per program when replaying a trace of the
 * 100-program chain of examples/trace_chain, divided by host time per program
 * when enqueuing the same (already compiled) programs eagerly. Host time is
 * the time spent in the enqueue / replay calls themselves; the device work is
 * waited for outside the measurement. Median of several rounds; lower is
 * better. */
#include "../../examples/trace_chain/trace_chain.h"
#include "bench.h"

#define ROUNDS 7

int main(void) {
    lm_device *dev;
    chain c;
    uint32_t trace;
    if (lm_device_open(NULL, &dev) || chain_build(&c, dev) || chain_reset(&c)) bench_die("set-up");
    if (lm_begin_trace_capture(c.cq, &trace) || chain_enqueue(&c) ||
        lm_end_trace_capture(c.cq, trace))
        bench_die("capture");
    double eager[ROUNDS], replay[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = bench_now();
        if (chain_enqueue(&c)) bench_die("enqueue");
        eager[r] = (bench_now() - t0) / CHAIN_LINKS;
        if (lm_finish(c.cq)) bench_die("finish");
        t0 = bench_now();
        if (lm_replay_trace(c.cq, trace, false)) bench_die("replay");
        replay[r] = (bench_now() - t0) / CHAIN_LINKS;
        if (lm_finish(c.cq)) bench_die("finish");
    }
    double e = bench_median(eager, ROUNDS), t = bench_median(replay, ROUNDS);
    bench_report("eager_host_us_per_program", e * 1e6);
    bench_report("trace_host_us_per_program", t * 1e6);
    bench_report("trace_vs_eager_host", t / e);
    lm_device_close(dev);
    return 0;
}
