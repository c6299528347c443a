/* The op library's benchmarks.
 *
 * nn_matmul_vs_openblas: lmnn_matmul of 1024 x 1024 by 1024 x 1024 bfloat16
 *   tile tensors in DRAM, float32 accumulation, bfloat16 result, on the whole
 *   8x8 grid, against OpenBLAS sgemm of the same size in float32 on as many
 *   threads as the simulator runs cores on. Each side's time is the median of
 *   several runs (interleaved, so load from elsewhere hits both alike) after
 *   a warm-up that compiles the kernels and caches the program; ours is the
 *   op call up to lm_finish (output allocation included, its free not). The
 *   figure is sgemm time / our time: higher is better. The op runs as by
 *   default: each core reads the A and B panels of its blocks itself.
 *   nn_matmul_multicast_vs_openblas is the same with the multicast option
 *   (panels read once per row and column of cores and multicast), which on
 *   the simulator is slower: it is there to show it.
 *
 * nn_cached_launch_vs_enqueue: what the op library adds on the host to a
 *   launch. "Host time" is the time the calling thread spends in the call
 *   until it returns with the work enqueued, not the device's run: for the
 *   op, a program-cache hit (argument checks, the output tensor's buffer, the
 *   cache key and lookup, the common runtime args of its kernels when its
 *   buffers moved, the non-blocking lm_enqueue_program); for the bare launch,
 *   the same cached program given to lm_enqueue_program (non-blocking)
 *   directly. Each timed call starts with the device idle (lm_finish and the
 *   output's free happen outside the timed part), so the simulator's threads
 *   do not compete with the caller for the host's cores. Both include handing
 *   the launch to the queue's dispatcher thread, whose wake-up costs from
 *   under 1 us to several us depending on the host's state; the two are
 *   timed alternately so that both see the same. The op is a 64 x 64 by
 *   64 x 64 matmul (one core: the smallest launch, where the op's own share
 *   weighs most); the figure is the ratio of the medians over many calls, op
 *   / bare (lower is better). nn_cached_launch_us and nn_bare_enqueue_us are
 *   the two medians. nn_cached_launch_vs_enqueue_1024 is the same ratio for
 *   the 1024 matmul above (64 cores, a 2 MiB output to allocate, and host
 *   caches cold after each 20 ms run), over fewer calls.
 *
 * nn_small_op_vs_one_thread: what the simulator's threads cost a small op
 *   called eagerly. A blocking op (lmnn_unary ReLU of a 64 x 64 float tensor,
 *   four tiles on four cores, then lm_finish), each call after a millisecond
 *   of other host work, as a program computing between ops would call it:
 *   on the device above (as many threads as CPUs), alternately with the same
 *   on a device of one thread, where no other thread takes part. The figure
 *   is the ratio of the medians, N threads / one (above 1: waking the other
 *   threads and waiting for them costs more than they save);
 *   nn_small_op_us and nn_small_op_one_thread_us are the two.
 *   nn_small_op_vs_device is nn_small_op_us / the simulator's own time for
 *   the launch (nn_small_op_device_us, the mean the device's profile gives):
 *   what handing the op to the queue and getting the answer back adds.
 */
#include <cblas.h>
#include <string.h>

#include "bench.h"
#include "lightmetal/nn.h"
#include "nn/nn_internal.h"

#define N 1024
#define REPS 7
#define CALLS 2000

static lmnn_tensor upload(lm_device *dev, uint32_t rows, uint32_t cols, uint64_t seed) {
    size_t n = (size_t)rows * cols;
    float *x = malloc(n * sizeof *x);
    if (!x) bench_die("out of memory");
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (float)((s >> 40) & 0xffff) / 32768.0f - 1.0f;
    }
    lmnn_shape shape = LMNN_SHAPE(rows, cols);
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = LMNN_BFLOAT16;
    lmnn_tensor t;
    if (lmnn_from_host(dev, &shape, x, n * sizeof *x, &o, &t)) bench_die("from_host");
    free(x);
    return t;
}

/* Median host time (us) of a cache-hit lmnn_matmul of a by b and of a bare
 * lm_enqueue_program of its program; the program must be the cache's only. */
static void launch_times(lm_device *dev, lmnn_tensor a, lmnn_tensor b, const lmnn_matmul_options *o,
                         int calls, double *op_us, double *bare_us) {
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lmnn_tensor c;
    if (lmnn_program_cache_clear(dev) || lmnn_matmul(a, b, o, &c) || lm_finish(cq) ||
        lmnn_tensor_free(c))
        bench_die("launch warm-up");
    nn_program *prog = nn_cache_entry(dev, 0);
    if (!prog || nn_cache_entry(dev, 1)) bench_die("expected one cached program");
    double *t_op = malloc(calls * sizeof *t_op), *t_bare = malloc(calls * sizeof *t_bare);
    if (!t_op || !t_bare) bench_die("out of memory");
    for (int i = 0; i < calls; i++) {
        double t0 = bench_now();
        if (lmnn_matmul(a, b, o, &c)) bench_die("matmul");
        double t1 = bench_now();
        if (lm_finish(cq) || lmnn_tensor_free(c)) bench_die("finish");
        double t2 = bench_now();
        if (lm_enqueue_program(cq, prog->program, false)) bench_die("enqueue");
        double t3 = bench_now();
        if (lm_finish(cq)) bench_die("finish");
        t_op[i] = (t1 - t0) * 1e6;
        t_bare[i] = (t3 - t2) * 1e6;
    }
    *op_us = bench_median(t_op, calls);
    *bare_us = bench_median(t_bare, calls);
    free(t_op);
    free(t_bare);
}

/* Medians of a blocking op (ReLU, then lm_finish) on a (its device) and on
 * b (another device), alternately, each after IDLE_US of host work. */
#define IDLE_US 1000
static void eager_times(lmnn_tensor a, lmnn_tensor b, int calls, double *a_us, double *b_us) {
    double *t_a = malloc((size_t)calls * sizeof *t_a), *t_b = malloc((size_t)calls * sizeof *t_b);
    if (!t_a || !t_b) bench_die("out of memory");
    lmnn_tensor x[2] = {a, b}, c;
    lmnn_tensor_info info[2];
    if (lmnn_tensor_get_info(a, &info[0]) || lmnn_tensor_get_info(b, &info[1]))
        bench_die("tensor info");
    for (int i = -2; i < 2 * calls; i++) {
        for (double t = bench_now(); bench_now() - t < IDLE_US * 1e-6;) {
        }
        double t0 = bench_now();
        if (lmnn_unary(LMNN_RELU, x[i & 1], NULL, &c) ||
            lm_finish(lm_device_command_queue(info[i & 1].device, 0)))
            bench_die("relu");
        double dt = bench_now() - t0;
        if (lmnn_tensor_free(c)) bench_die("free");
        if (i >= 0) (i & 1 ? t_b : t_a)[i / 2] = dt * 1e6;
    }
    *a_us = bench_median(t_a, calls);
    *b_us = bench_median(t_b, calls);
    free(t_a);
    free(t_b);
}

int main(void) {
    lm_device *dev;
    lm_device_info info;
    if (lm_device_open(NULL, &dev) || lm_device_get_info(dev, &info)) bench_die("open");
    lm_command_queue *cq = lm_device_command_queue(dev, 0);

    /* ---- nn_matmul_vs_openblas ---- */
    float *fa = malloc(sizeof(float) * N * N), *fb = malloc(sizeof(float) * N * N);
    float *fc = malloc(sizeof(float) * N * N);
    if (!fa || !fb || !fc) bench_die("out of memory");
    for (size_t i = 0; i < (size_t)N * N; i++) {
        fa[i] = (float)(i % 251) / 125.0f - 1.0f;
        fb[i] = (float)(i % 241) / 120.0f - 1.0f;
    }
    openblas_set_num_threads((int)info.num_threads);
    lmnn_tensor a = upload(dev, N, N, 1), b = upload(dev, N, N, 2), c;
    lmnn_matmul_options o;
    lmnn_matmul_options_init(&o);
    o.fp32_accumulate = LMNN_FP32_ACC_ON;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, fa, N, fb, N, 0.0f, fc,
                N);
    lmnn_matmul_options om = o;
    om.multicast = true;
    if (lmnn_matmul(a, b, &o, &c) || lm_finish(cq) || lmnn_tensor_free(c) ||
        lmnn_matmul(a, b, &om, &c) || lm_finish(cq) || lmnn_tensor_free(c))
        bench_die("warm-up");
    double t_blas[REPS], t_nn[REPS], t_mc[REPS];
    for (int r = 0; r < REPS; r++) {
        double t0 = bench_now();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, fa, N, fb, N, 0.0f,
                    fc, N);
        double t1 = bench_now();
        if (lmnn_matmul(a, b, &o, &c) || lm_finish(cq)) bench_die("matmul");
        double t2 = bench_now();
        if (lmnn_tensor_free(c)) bench_die("free");
        double t3 = bench_now();
        if (lmnn_matmul(a, b, &om, &c) || lm_finish(cq)) bench_die("matmul");
        double t4 = bench_now();
        if (lmnn_tensor_free(c)) bench_die("free");
        t_blas[r] = t1 - t0;
        t_nn[r] = t2 - t1;
        t_mc[r] = t4 - t3;
    }
    double blas = bench_median(t_blas, REPS), nn = bench_median(t_nn, REPS);
    bench_report("nn_matmul_gflops", 2.0 * N * N * N / nn * 1e-9);
    bench_report("nn_matmul_vs_openblas", blas / nn);
    bench_report("nn_matmul_multicast_vs_openblas", blas / bench_median(t_mc, REPS));

    /* ---- nn_cached_launch_vs_enqueue ---- */
    double op_big, bare_big, op_us, bare_us;
    launch_times(dev, a, b, &o, 50, &op_big, &bare_big);
    lmnn_tensor sa = upload(dev, 64, 64, 3), sb = upload(dev, 64, 64, 4);
    launch_times(dev, sa, sb, NULL, CALLS, &op_us, &bare_us);
    bench_report("nn_cached_launch_us", op_us);
    bench_report("nn_bare_enqueue_us", bare_us);
    bench_report("nn_cached_launch_vs_enqueue", op_us / bare_us);
    bench_report("nn_cached_launch_vs_enqueue_1024", op_big / bare_big);

    /* ---- nn_small_op_vs_one_thread ---- */
    lm_device_options one;
    lm_device_options_init(&one);
    one.num_threads = 1;
    lm_device *dev1;
    if (lm_device_open(&one, &dev1)) bench_die("open");
    lmnn_tensor s1 = upload(dev1, 64, 64, 3);
    double many_us, one_us;
    lm_profile_entry *prof = NULL;
    size_t nprof = 0;
    if (lm_device_set_profiling(dev, true)) bench_die("profiling");
    eager_times(sa, s1, 300, &many_us, &one_us);
    if (lm_device_set_profiling(dev, false) || lm_device_get_profile(dev, &prof, &nprof))
        bench_die("profile");
    double device_s = 0, launches = 0;
    for (size_t i = 0; i < nprof; i++) {
        device_s += prof[i].seconds;
        launches += (double)prof[i].launches;
    }
    lm_profile_free(prof);
    if (!(launches > 0)) bench_die("no launches profiled");
    double device_us = device_s / launches * 1e6;
    bench_report("nn_small_op_us", many_us);
    bench_report("nn_small_op_one_thread_us", one_us);
    bench_report("nn_small_op_vs_one_thread", many_us / one_us);
    bench_report("nn_small_op_device_us", device_us);
    bench_report("nn_small_op_vs_device", many_us / device_us);
    lmnn_tensor_free(s1);
    lm_device_close(dev1);

    lmnn_tensor_free(a);
    lmnn_tensor_free(b);
    lmnn_tensor_free(sa);
    lmnn_tensor_free(sb);
    free(fa), free(fb), free(fc);
    lm_device_close(dev);
    return 0;
}
