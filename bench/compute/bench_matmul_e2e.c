/* matmul_e2e_vs_openblas: C = A x B with M = N = K = 1024 in bfloat16 (float32
 * accumulation) through the whole stack — host API, reader/writer, weight
 * multicast and compute kernels on the 8x8 grid, all host threads — against
 * OpenBLAS sgemm of the same size on the same number of threads. The figure
 * is sgemm time / our time for one launch (operands already in device DRAM,
 * kernels already built), median of several runs; higher is better. */
#include <cblas.h>
#include <unistd.h>

#include "../../examples/common/matmul.h"
#include "bench.h"

#define N 1024
#define REPS 3

int main(void) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    float *a = malloc(sizeof(float) * N * N), *b = malloc(sizeof(float) * N * N);
    float *c = malloc(sizeof(float) * N * N);
    uint16_t *ta = malloc(2u * N * N), *tb = malloc(2u * N * N);
    if (!a || !b || !c || !ta || !tb) bench_die("out of memory");
    ex_random(a, (size_t)N * N, 1, -1, 1);
    ex_random(b, (size_t)N * N, 2, -1, 1);

    openblas_set_num_threads((int)cpus);
    double t_blas[REPS], t_dev[REPS];
    for (int r = 0; r < REPS; r++) {
        double t0 = bench_now();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a, N, b, N, 0.0f, c,
                    N);
        t_blas[r] = bench_now() - t0;
    }

    lm_device *dev;
    lm_buffer da, db, dc;
    lm_program prog;
    ex_matmul mm = {N / 32,
                    N / 32,
                    N / 32,
                    LM_DATA_FORMAT_FLOAT16_B,
                    LM_DATA_FORMAT_FLOAT16_B,
                    LM_DATA_FORMAT_FLOAT16_B,
                    false,
                    true,
                    8,
                    8};
    if (lm_tilize(a, N, N, LM_DATA_FORMAT_FLOAT16_B, ta, 2u * N * N) ||
        lm_tilize(b, N, N, LM_DATA_FORMAT_FLOAT16_B, tb, 2u * N * N) ||
        lm_device_open(NULL, &dev) || ex_buffer(dev, LM_BUFFER_DRAM, 2u * N * N, 2048, &da) ||
        ex_buffer(dev, LM_BUFFER_DRAM, 2u * N * N, 2048, &db) ||
        ex_buffer(dev, LM_BUFFER_DRAM, 2u * N * N, 2048, &dc) ||
        ex_matmul_program(dev, &mm, da, db, dc, &prog))
        bench_die("set-up");
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    if (lm_enqueue_write_buffer(cq, da, ta, false) || lm_enqueue_write_buffer(cq, db, tb, false) ||
        lm_enqueue_program(cq, prog, true))
        bench_die("warm-up");
    for (int r = 0; r < REPS; r++) {
        double t0 = bench_now();
        if (lm_enqueue_program(cq, prog, true)) bench_die("run");
        t_dev[r] = bench_now() - t0;
    }
    double blas = bench_median(t_blas, REPS), dev_t = bench_median(t_dev, REPS);
    bench_report("matmul_e2e_gflops", 2.0 * N * N * N / dev_t * 1e-9);
    bench_report("matmul_e2e_vs_openblas", blas / dev_t);
    lm_release_program(prog);
    lm_device_close(dev);
    free(a), free(b), free(c), free(ta), free(tb);
    return 0;
}
