/* alloc_20k_buffers_ms: creating 20,000 DRAM buffers through the public API on
 * a default device, then deallocating them (oldest first), median of several
 * rounds. alloc_20k_vs_1k_per_buffer divides that by the time of the same
 * number of buffers made and freed 1,000 at a time, measured in the same run:
 * near 1 when creation and deallocation do not slow down as live buffers pile
 * up (a linear scan per call made it about 30; caches keep it above 1). */
#include "bench.h"
#include "lightmetal/lightmetal.h"

#define ROUNDS 7
#define MANY 20000
#define FEW 1000

static lm_buffer buffers[MANY];

/* Seconds to create and free MANY buffers, `n` live at a time. */
static double create_and_free(lm_device *dev, int n) {
    lm_buffer_config cfg;
    lm_buffer_config_init(&cfg);
    cfg.size = 2048;
    cfg.page_size = 2048;
    double t0 = bench_now();
    for (int done = 0; done < MANY; done += n) {
        for (int i = 0; i < n; i++)
            if (lm_create_buffer(dev, &cfg, &buffers[i])) bench_die("create");
        for (int i = 0; i < n; i++)
            if (lm_deallocate_buffer(buffers[i])) bench_die("deallocate");
    }
    return bench_now() - t0;
}

int main(void) {
    lm_device *dev;
    if (lm_device_open(NULL, &dev)) bench_die("open");
    double many[ROUNDS], few[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        many[r] = create_and_free(dev, MANY);
        few[r] = create_and_free(dev, FEW);
    }
    double m = bench_median(many, ROUNDS), f = bench_median(few, ROUNDS);
    bench_report("alloc_20k_buffers_ms", m * 1e3);
    bench_report("alloc_20k_vs_1k_per_buffer", m / f);
    lm_device_close(dev);
    return 0;
}
