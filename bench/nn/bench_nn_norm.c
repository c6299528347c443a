/* nn_softmax_vs_host, nn_layernorm_vs_host: lmnn_softmax over the last dim
 * and lmnn_layer_norm (with weight and bias) of a 1024 x 1024 float32 tensor
 * on the default 8x8 device, against a straightforward single-threaded C loop
 * over the same floats on the host. Each figure is host time / device time
 * (higher is better; the goal is >= 0.5), medians of several runs after a
 * warm-up run (kernels built, programs cached, input already in device
 * memory); the device time is the op's call plus the wait for its result. */
#include <math.h>
#include <string.h>

#include "bench.h"
#include "lightmetal/nn.h"

#define N 1024
#define REPS 7

static float *random_floats(size_t n, uint32_t seed, float lo, float hi) {
    float *v = malloc(n * sizeof *v);
    if (!v) bench_die("out of memory");
    uint32_t s = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13, s ^= s >> 17, s ^= s << 5;
        v[i] = lo + (hi - lo) * (float)(s >> 8) / 16777216.0f;
    }
    return v;
}

static void host_softmax(const float *x, float *y) {
    for (int r = 0; r < N; r++) {
        const float *p = x + (size_t)r * N;
        float *q = y + (size_t)r * N;
        float m = -INFINITY, s = 0;
        for (int c = 0; c < N; c++)
            m = p[c] > m ? p[c] : m;
        for (int c = 0; c < N; c++)
            s += q[c] = expf(p[c] - m);
        float inv = 1.0f / s;
        for (int c = 0; c < N; c++)
            q[c] *= inv;
    }
}

static void host_layernorm(const float *x, const float *w, const float *b, float *y) {
    for (int r = 0; r < N; r++) {
        const float *p = x + (size_t)r * N;
        float *q = y + (size_t)r * N;
        float mean = 0, var = 0;
        for (int c = 0; c < N; c++)
            mean += p[c];
        mean /= N;
        for (int c = 0; c < N; c++)
            var += (p[c] - mean) * (p[c] - mean);
        float rstd = 1.0f / sqrtf(var / N + 1e-5f);
        for (int c = 0; c < N; c++)
            q[c] = (p[c] - mean) * rstd * w[c] + b[c];
    }
}

static lmnn_tensor upload(lm_device *dev, const lmnn_shape *s, const float *x) {
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = LMNN_FLOAT32;
    lmnn_tensor t;
    if (lmnn_from_host(dev, s, x, lmnn_shape_volume(s) * sizeof(float), &o, &t))
        bench_die("upload");
    return t;
}

typedef lm_status (*device_op)(lmnn_tensor x, lmnn_tensor w, lmnn_tensor b, lmnn_tensor *out);

static lm_status dev_softmax(lmnn_tensor x, lmnn_tensor w, lmnn_tensor b, lmnn_tensor *out) {
    (void)w, (void)b;
    return lmnn_softmax(x, -1, NULL, out);
}

static lm_status dev_layernorm(lmnn_tensor x, lmnn_tensor w, lmnn_tensor b, lmnn_tensor *out) {
    return lmnn_layer_norm(x, w, b, NULL, out);
}

/* Median seconds of one device run (the op, then waiting for it). */
static double time_device(lm_device *dev, device_op fn, lmnn_tensor x, lmnn_tensor w,
                          lmnn_tensor b) {
    double t[REPS];
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    for (int r = -1; r < REPS; r++) {
        lmnn_tensor y;
        double t0 = bench_now();
        if (fn(x, w, b, &y) || lm_finish(cq)) bench_die("device op");
        if (r >= 0) t[r] = bench_now() - t0;
        lmnn_tensor_free(y);
    }
    return bench_median(t, REPS);
}

static double nn_softmax_vs_host(lm_device *dev) {
    lmnn_shape s = LMNN_SHAPE(N, N);
    float *x = random_floats((size_t)N * N, 1, -8, 8), *y = malloc(sizeof(float) * N * N);
    double th[REPS];
    for (int r = -1; r < REPS; r++) {
        double t0 = bench_now();
        host_softmax(x, y);
        if (r >= 0) th[r] = bench_now() - t0;
    }
    lmnn_tensor a = upload(dev, &s, x);
    double td = time_device(dev, dev_softmax, a, (lmnn_tensor){0}, (lmnn_tensor){0});
    double host = bench_median(th, REPS);
    printf("# softmax 1024x1024 float32: host %.2f ms, device %.2f ms\n", host * 1e3, td * 1e3);
    lmnn_tensor_free(a);
    free(x), free(y);
    return host / td;
}

static double nn_layernorm_vs_host(lm_device *dev) {
    lmnn_shape s = LMNN_SHAPE(N, N), ws = LMNN_SHAPE(N);
    float *x = random_floats((size_t)N * N, 2, -3, 3), *y = malloc(sizeof(float) * N * N);
    float *w = random_floats(N, 3, 0.5f, 1.5f), *b = random_floats(N, 4, -1, 1);
    double th[REPS];
    for (int r = -1; r < REPS; r++) {
        double t0 = bench_now();
        host_layernorm(x, w, b, y);
        if (r >= 0) th[r] = bench_now() - t0;
    }
    lmnn_tensor a = upload(dev, &s, x), tw = upload(dev, &ws, w), tb = upload(dev, &ws, b);
    double td = time_device(dev, dev_layernorm, a, tw, tb);
    double host = bench_median(th, REPS);
    printf("# layer_norm 1024x1024 float32: host %.2f ms, device %.2f ms\n", host * 1e3, td * 1e3);
    lmnn_tensor_free(a), lmnn_tensor_free(tw), lmnn_tensor_free(tb);
    free(x), free(y), free(w), free(b);
    return host / td;
}

int main(void) {
    lm_device *dev;
    if (lm_device_open(NULL, &dev)) bench_die("device open");
    bench_report("nn_softmax_vs_host", nn_softmax_vs_host(dev));
    bench_report("nn_layernorm_vs_host", nn_layernorm_vs_host(dev));
    lm_device_close(dev);
    return 0;
}
