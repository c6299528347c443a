/* nn_transformer_trace_vs_eager: what a metal trace saves the host on a whole
 * model step, for the small transformer encoder of the op library's test
 * (tests/nn/nn_encoder.h: batch 2, 20 tokens, d_model 64, 4 heads, d_ff 128,
 * 2 layers; 32 programs per step).
 *
 * "Host time" is the time the calling thread spends issuing one step until
 * it returns with the step's work enqueued, not the device's run (the
 * simulator's device runs on the dispatcher's and the cores' host threads,
 * so wall time would mostly measure the simulated kernels, the same for both
 * forms):
 *   eager  enc_forward: every op called, each a program-cache hit (argument
 *          checks, output tensors' buffers, the cache key and lookup, common
 *          runtime args, the non-blocking lm_enqueue_program), intermediate
 *          tensors freed as it goes;
 *   trace  lm_replay_trace(cq, tid, false) of the same step captured once.
 * Each timed step starts with the device idle (lm_finish and the output's
 * free happen outside the timed part). The eager step's ops start running
 * on the device while later ones are still being issued, so on a host with
 * few cores the caller competes with the simulator's threads: that is part
 * of what eager costs and stays in the figure. The two forms are timed
 * alternately so that both see the same host state. The figure is the ratio
 * of the medians, trace / eager (lower is better); nn_transformer_eager_us
 * and nn_transformer_trace_us are the medians, and
 * nn_transformer_eager_step_ms / nn_transformer_trace_step_ms the medians of
 * the whole step to lm_finish (device included), for scale.
 *
 * Measured on a loaded 2-core host: eager 105-150 us (32 cache-hit ops at
 * 3-5 us each), trace 1-10 us (one enqueue; most of it is waking the
 * dispatcher thread, which varies with the host's state, as in bench_nn.c's
 * nn_cached_launch_vs_enqueue), so the ratio is 0.01-0.08; the step itself
 * takes 3-8 ms of simulation either way.
 */
#include <string.h>

#include "bench.h"
#include "lightmetal/nn.h"
#include "../../tests/nn/nn_encoder.h"

#define STEPS 101

int main(void) {
    lm_device *dev;
    if (lm_device_open(NULL, &dev)) bench_die("device open");
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    const enc_config cfg = {
        .vocab = 100, .seq = 20, .d_model = 64, .heads = 4, .d_ff = 128, .layers = 2, .batch = 2};
    enc_host h;
    enc_device d;
    enc_host_init(&h, &cfg, 1);
    if (enc_device_init(dev, &h, &d)) bench_die("weights");
    uint32_t ids[2 * 20];
    for (uint32_t i = 0; i < 2 * 20; i++)
        ids[i] = (i * 37 + 11) % cfg.vocab;
    lmnn_shape s = LMNN_SHAPE(cfg.batch, cfg.seq);
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = LMNN_UINT32;
    o.layout = LMNN_ROW_MAJOR;
    lmnn_tensor x, y, yt;
    if (lmnn_from_host(dev, &s, ids, sizeof ids, &o, &x)) bench_die("ids");
    /* Warm up: every program built and every kernel compiled. */
    for (int i = 0; i < 2; i++) {
        if (enc_forward(&d, x, (lmnn_tensor){0}, &y) || lm_finish(cq)) bench_die("warm-up");
        lmnn_tensor_free(y);
    }
    uint32_t tid;
    lmnn_program_cache_stats before, after;
    if (lmnn_program_cache_get_stats(dev, &before)) bench_die("stats");
    if (lm_begin_trace_capture(cq, &tid) || enc_forward(&d, x, (lmnn_tensor){0}, &yt) ||
        lm_end_trace_capture(cq, tid))
        bench_die("trace capture");
    if (lmnn_program_cache_get_stats(dev, &after) || after.misses != before.misses)
        bench_die("program cache misses during the trace capture");
    if (lm_replay_trace(cq, tid, true)) bench_die("trace replay");

    double t_eager[STEPS], t_trace[STEPS], w_eager[STEPS], w_trace[STEPS];
    for (int i = 0; i < STEPS; i++) {
        double t0 = bench_now();
        if (enc_forward(&d, x, (lmnn_tensor){0}, &y)) bench_die("eager step");
        double t1 = bench_now();
        if (lm_finish(cq)) bench_die("finish");
        double t2 = bench_now();
        lmnn_tensor_free(y);
        double t3 = bench_now();
        if (lm_replay_trace(cq, tid, false)) bench_die("trace step");
        double t4 = bench_now();
        if (lm_finish(cq)) bench_die("finish");
        double t5 = bench_now();
        t_eager[i] = (t1 - t0) * 1e6;
        w_eager[i] = (t2 - t0) * 1e3;
        t_trace[i] = (t4 - t3) * 1e6;
        w_trace[i] = (t5 - t3) * 1e3;
    }
    double eager = bench_median(t_eager, STEPS), trace = bench_median(t_trace, STEPS);
    bench_report("nn_transformer_eager_us", eager);
    bench_report("nn_transformer_trace_us", trace);
    bench_report("nn_transformer_eager_step_ms", bench_median(w_eager, STEPS));
    bench_report("nn_transformer_trace_step_ms", bench_median(w_trace, STEPS));
    bench_report("nn_transformer_trace_vs_eager", trace / eager);

    if (lm_release_trace(dev, tid)) bench_die("release");
    lmnn_tensor_free(x);
    lmnn_tensor_free(yt);
    enc_device_free(&d);
    enc_host_free(&h);
    lm_device_close(dev);
    return 0;
}
