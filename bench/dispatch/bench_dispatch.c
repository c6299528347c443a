/* dispatch_us_per_program: host wall time per launch of an already compiled
 * tiny program (one data movement kernel on each of the 64 cores), measured
 * over 1000 non-blocking lm_enqueue_program calls followed by lm_finish.
 * The median of several rounds is reported. */
#include "bench.h"
#include "lightmetal/lightmetal.h"

#define LAUNCHES 1000
#define ROUNDS 5

int main(void) {
    lm_device *dev;
    if (lm_device_open(NULL, &dev)) bench_die("open");
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_program prog;
    lm_kernel k;
    lm_kernel_config kc;
    lm_kernel_config_init(&kc, LM_PROCESSOR_DM0);
    lm_core_range_set all = lm_core_range_set_of(0, 0, 7, 7);
    const char *src =
        "#include \"dataflow_api.h\"\n"
        "void kernel_main(void) { *(volatile uint32_t *)0x20000 = get_arg_val(0); }\n";
    if (lm_create_program(dev, &prog) ||
        lm_create_kernel_from_string(prog, "tiny", src, &all, &kc, &k))
        bench_die("build");
    for (uint32_t y = 0; y < 8; y++)
        for (uint32_t x = 0; x < 8; x++) {
            uint32_t arg = y * 8 + x;
            if (lm_set_runtime_args(prog, k, (lm_core){x, y}, &arg, 1)) bench_die("args");
        }
    if (lm_enqueue_program(cq, prog, true)) bench_die("warm-up");
    double us[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = bench_now();
        for (int i = 0; i < LAUNCHES; i++)
            if (lm_enqueue_program(cq, prog, false)) bench_die("enqueue");
        if (lm_finish(cq)) bench_die("finish");
        us[r] = (bench_now() - t0) * 1e6 / LAUNCHES;
    }
    bench_report("dispatch_us_per_program", bench_median(us, ROUNDS));
    lm_release_program(prog);
    lm_device_close(dev);
    return 0;
}
