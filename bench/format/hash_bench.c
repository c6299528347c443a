/* hash64 throughput on a large buffer against memcpy of the same buffer,
 * measured in the same run (median of several repetitions). The content
 * hash must keep up with bulk data: a later check wants hashing a 1 GiB
 * file at >= 0.5x memcpy speed. */
#include <string.h>

#include "base/hash.h"
#include "bench.h"

#define SIZE (256u << 20)
#define REPS 7

/* Keeps the results alive so the compiler cannot drop the work. */
volatile uint64_t hash_bench_sink;

int main(void) {
    unsigned char *src = malloc(SIZE), *dst = malloc(SIZE);
    if (!src || !dst) bench_die("hash_bench: out of memory");
    for (size_t i = 0; i < SIZE; i++)
        src[i] = (unsigned char)(i * 131 + (i >> 12));
    memset(dst, 0, SIZE);
    double th[REPS], tm[REPS];
    for (int r = 0; r < REPS; r++) {
        double t0 = bench_now();
        hash_bench_sink += hash64(src, SIZE, 0);
        double t1 = bench_now();
        memcpy(dst, src, SIZE);
        hash_bench_sink += dst[r * 4096];
        double t2 = bench_now();
        th[r] = t1 - t0;
        tm[r] = t2 - t1;
    }
    double gh = SIZE / bench_median(th, REPS) / 1e9, gm = SIZE / bench_median(tm, REPS) / 1e9;
    bench_report("hash64_gbps", gh);
    bench_report("hash64_memcpy_gbps", gm);
    bench_report("hash64_vs_memcpy", gh / gm);
    free(src);
    free(dst);
    return 0;
}
