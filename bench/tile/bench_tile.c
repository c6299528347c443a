/* Tile math throughput.
 *
 *   tile_matmul_vs_openblas   our 32x32x32 tile matmul (dst += A x B, fp32
 *                             accumulation) against OpenBLAS sgemm on the same
 *                             32x32x32 blocks (C += A x B), one thread, measured
 *                             in the same run; ratio of throughputs (goal >= 0.7)
 *
 * plus the absolute figures behind it and a few element-wise ops (the SFPU's
 * on inputs in [-4, 4): GELU's erf form, a transformer's costliest, takes its
 * continued fraction above 2.83 in magnitude). Every figure is the median of
 * several repetitions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/tile/tile_engine.h"

/* OpenBLAS, declared here so the benchmark does not depend on which cblas.h
 * the system's alternatives point at. Enum arguments are ints in the ABI. */
void cblas_sgemm(int order, int trans_a, int trans_b, int m, int n, int k, float alpha,
                 const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc);
void openblas_set_num_threads(int num_threads);
#define CBLAS_ROW_MAJOR 101
#define CBLAS_NO_TRANS 111

#define REPS 9

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof v[0], cmp_double);
    return v[n / 2];
}

static tile_dst dst;
static float ta[TILE_ELEMS], tb[TILE_ELEMS], tc[TILE_ELEMS];
static volatile float sink;

typedef void (*bench_fn)(int iters);

static void run_tile_matmul(int iters) {
    for (int i = 0; i < iters; i++)
        (void)tile_matmul(&dst, (uint32_t)(i & 7), ta, tb, false);
    sink = dst.reg[0][0];
}

static void run_sgemm(int iters) {
    for (int i = 0; i < iters; i++)
        cblas_sgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, 32, 32, 32, 1.0f, ta, 32, tb,
                    32, 1.0f, tc, 32);
    sink = tc[0];
}

static void run_add(int iters) {
    for (int i = 0; i < iters; i++)
        (void)tile_binary(&dst, (uint32_t)(i & 7), TILE_BINARY_ADD, TILE_BCAST_NONE, ta, tb, false);
    sink = dst.reg[0][0];
}

/* SFPU ops work in place; each call first reloads its register so the values
 * never drift into subnormals (the reload is part of the figure). */
static void run_sfpu(int iters, tile_sfpu_op op) {
    for (int i = 0; i < iters; i++) {
        memcpy(dst.reg[i & 7], ta, sizeof ta);
        (void)tile_sfpu(&dst, (uint32_t)(i & 7), op);
    }
    sink = dst.reg[0][0];
}

static void run_exp(int iters) {
    run_sfpu(iters, TILE_SFPU_EXP);
}
static void run_gelu(int iters) {
    run_sfpu(iters, TILE_SFPU_GELU);
}
static void run_gelu_erf(int iters) {
    run_sfpu(iters, TILE_SFPU_GELU_ERF);
}

/* Median seconds per call of fn, each repetition timing about 20 ms. */
static double time_per_call(bench_fn fn) {
    int iters = 16;
    for (;;) { /* calibrate */
        double t0 = now_s();
        fn(iters);
        if (now_s() - t0 > 0.02 || iters > (1 << 24)) break;
        iters *= 2;
    }
    double v[REPS];
    for (int r = 0; r < REPS; r++) {
        double t0 = now_s();
        fn(iters);
        v[r] = (now_s() - t0) / iters;
    }
    return median(v, REPS);
}

/* Keeps values bounded while ops run again and again on the same registers. */
static void reset_inputs(void) {
    for (int i = 0; i < TILE_ELEMS; i++) {
        ta[i] = (float)((i * 37) % 101) / 101.0f - 0.5f;
        tb[i] = (float)((i * 53) % 97) / 97.0f - 0.5f;
        tc[i] = 0.0f;
    }
    tile_dst_init(&dst, true);
    for (int r = 0; r < 8; r++)
        memcpy(dst.reg[r], ta, sizeof ta);
}

int main(void) {
    openblas_set_num_threads(1);
    reset_inputs();
    const double flops = 2.0 * 32 * 32 * 32;

    /* Interleave the two contenders so machine noise hits both alike. */
    double ours[3], blas[3];
    for (int round = 0; round < 3; round++) {
        ours[round] = time_per_call(run_tile_matmul);
        blas[round] = time_per_call(run_sgemm);
        reset_inputs();
    }
    double t_ours = median(ours, 3), t_blas = median(blas, 3);
    printf("tile_kernels: %s\n", tile_kernels_name());
    printf("tile_matmul_gflops: %.2f\n", flops / t_ours * 1e-9);
    printf("openblas_sgemm32_gflops: %.2f\n", flops / t_blas * 1e-9);
    printf("tile_matmul_vs_openblas: %.3f\n", t_blas / t_ours);

    /* The other kernel sets this CPU runs, for comparison. */
    static const char *const sets[] = {"portable", "avx2"};
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
        if (strcmp(sets[i], tile_kernels_name()) && tile_force_kernels(sets[i])) {
            printf("tile_matmul_%s_gflops: %.2f\n", sets[i],
                   flops / time_per_call(run_tile_matmul) * 1e-9);
            tile_force_kernels(NULL);
        }

    reset_inputs();
    printf("tile_add_ns: %.1f\n", time_per_call(run_add) * 1e9);
    reset_inputs();
    printf("tile_exp_ns: %.1f\n", time_per_call(run_exp) * 1e9);
    reset_inputs();
    printf("tile_gelu_ns: %.1f\n", time_per_call(run_gelu) * 1e9);
    /* Inputs across [-4, 4) for the one whose cost depends on the range. */
    for (int i = 0; i < TILE_ELEMS; i++)
        ta[i] = (float)((i * 37) % 101) / 101.0f * 8.0f - 4.0f;
    printf("tile_gelu_erf_ns: %.1f\n", time_per_call(run_gelu_erf) * 1e9);
    return 0;
}
