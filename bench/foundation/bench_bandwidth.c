/* Queue bandwidth against memcpy.
 *
 * write_bw_vs_memcpy / read_bw_vs_memcpy: a 256 MiB DRAM buffer (2 KiB pages,
 * a bfloat16 tile each, interleaved over 12 banks) written and read through a
 * command queue, divided by memcpy of the same 256 MiB in the same run. Every
 * figure is the median of several repetitions after a warm-up that faults in
 * all memory, so both sides copy into committed pages.
 */
#include <string.h>

#include "bench.h"
#include "lightmetal/lightmetal.h"

#define SIZE (256ull << 20)
#define PAGE 2048
#define REPS 5

int main(void) {
    uint8_t *src = malloc(SIZE), *dst = malloc(SIZE);
    if (!src || !dst) bench_die("out of host memory");
    for (size_t i = 0; i < SIZE; i++)
        src[i] = (uint8_t)(i * 131 + 7);
    memset(dst, 1, SIZE);

    lm_device *dev;
    if (lm_device_open(NULL, &dev)) bench_die("open");
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_buffer_config cfg;
    lm_buffer_config_init(&cfg);
    cfg.size = SIZE;
    cfg.page_size = PAGE;
    lm_buffer buf;
    if (lm_create_buffer(dev, &cfg, &buf)) bench_die("create");
    if (lm_enqueue_write_buffer(cq, buf, src, true)) bench_die("warm-up write");

    double t_memcpy[REPS], t_write[REPS], t_read[REPS];
    for (int r = 0; r < REPS; r++) {
        double t0 = bench_now();
        memcpy(dst, src, SIZE);
        double t1 = bench_now();
        if (lm_enqueue_write_buffer(cq, buf, src, true)) bench_die("write");
        double t2 = bench_now();
        if (lm_enqueue_read_buffer(cq, buf, dst, true)) bench_die("read");
        double t3 = bench_now();
        t_memcpy[r] = t1 - t0;
        t_write[r] = t2 - t1;
        t_read[r] = t3 - t2;
    }
    if (memcmp(src, dst, SIZE) != 0) bench_die("read back differs");
    double m = bench_median(t_memcpy, REPS);
    double w = bench_median(t_write, REPS);
    double rd = bench_median(t_read, REPS);
    bench_report("memcpy_gib_per_s", (double)SIZE / m / (1 << 30));
    bench_report("write_bw_vs_memcpy", m / w);
    bench_report("read_bw_vs_memcpy", m / rd);
    if (lm_deallocate_buffer(buf) || lm_device_close(dev)) bench_die("close");
    free(src);
    free(dst);
    return 0;
}
