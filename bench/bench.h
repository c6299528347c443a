/* Small helpers shared by the benchmarks: a monotonic clock, medians, and the
 * `name: value` output format that scripts/run-bench.sh collects. */
#ifndef LM_BENCH_H
#define LM_BENCH_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "lightmetal/lm_status.h"

static inline double bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int bench_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of n samples (sorts them in place). */
static inline double bench_median(double *samples, int n) {
    qsort(samples, (size_t)n, sizeof *samples, bench_cmp_double);
    return n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
}

/* Stops a benchmark that cannot go on, with lightmetal's last error. */
_Noreturn static inline void bench_die(const char *what) {
    fprintf(stderr, "benchmark failed: %s: %s\n", what, lm_last_error());
    exit(1);
}

static inline void bench_report(const char *name, double value) {
    printf("%s: %.3f\n", name, value);
    fflush(stdout);
}

#endif
