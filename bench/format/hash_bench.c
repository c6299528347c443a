/* hash64 throughput on a large buffer against memcpy of the same buffer,
 * measured in the same run (median of several repetitions). The content
 * hash must keep up with bulk data: a later check wants hashing a 1 GiB
 * file at >= 0.5x memcpy speed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/hash.h"

#define SIZE (256u << 20)
#define REPS 7

/* Keeps the results alive so the compiler cannot drop the work. */
volatile uint64_t hash_bench_sink;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void) {
    unsigned char *src = malloc(SIZE), *dst = malloc(SIZE);
    if (!src || !dst) {
        fprintf(stderr, "hash_bench: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < SIZE; i++)
        src[i] = (unsigned char)(i * 131 + (i >> 12));
    memset(dst, 0, SIZE);
    double th[REPS], tm[REPS];
    for (int r = 0; r < REPS; r++) {
        double t0 = now_s();
        hash_bench_sink += hash64(src, SIZE, 0);
        double t1 = now_s();
        memcpy(dst, src, SIZE);
        hash_bench_sink += dst[r * 4096];
        double t2 = now_s();
        th[r] = t1 - t0;
        tm[r] = t2 - t1;
    }
    qsort(th, REPS, sizeof th[0], cmp_double);
    qsort(tm, REPS, sizeof tm[0], cmp_double);
    double gh = SIZE / th[REPS / 2] / 1e9, gm = SIZE / tm[REPS / 2] / 1e9;
    printf("hash64_gbps: %.2f\n", gh);
    printf("hash64_memcpy_gbps: %.2f\n", gm);
    printf("hash64_vs_memcpy: %.2f\n", gh / gm);
    free(src);
    free(dst);
    return 0;
}
