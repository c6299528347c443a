/* mlp_fashion_mnist: a real workload on a real data set.
 *
 * A 784-127-10 multilayer perceptron (bias, relu) classifies the 10,000
 * Fashion-MNIST test images. It is trained on the host (plain minibatch SGD,
 * fixed seed) the first time and its weights saved to a file, which later runs
 * load. Inference then runs on the simulated device as two batched matmuls
 * over all images: bfloat16 inputs and weights, float32 accumulation, relu on
 * the device, biases folded into the matmuls (a constant-1 input column and a
 * constant-1 hidden unit, so the hidden layer is 127 units plus that one).
 *
 * It prints the accuracy from the device and from a float32 host reference;
 * PASS when they agree within 0.5 percentage points, and when the same two
 * launches replayed as a metal trace give bit-identical logits.
 *
 * Usage: mlp_fashion_mnist [--data DIR] [--weights FILE] [--bench] [--capture FILE]
 *   DIR holds the uncompressed IDX files (the build prepares them from
 *   Debian's dataset-fashion-mnist package); FILE caches the trained weights.
 *   --bench runs the device inference five more times and prints the median
 *   throughput as `mlp_images_per_s: N` (for make bench).
 *   --capture FILE records the device part of the run as a Light Metal binary
 *   (inputs "images", "w1", "w2"; output "logits", with its golden).
 */
#include <time.h>

#include "../common/matmul.h"

#define IN 784
#define HID 127 /* plus one constant unit that carries the output bias */
#define OUT 10
#define IN_PAD 800 /* 25 tiles: the inputs, the constant 1, zeros */
#define HID_PAD 128
#define OUT_PAD 32
#define TEST_N 10000
#define TEST_PAD 10016 /* 313 tiles */
#define EPOCHS 2
#define BATCH 16
#define RATE 0.1f

typedef struct weights {
    float w1[IN * HID], b1[HID], w2[HID * OUT], b2[OUT];
} weights;

static uint32_t be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Reads an IDX file of `count` items of `item` bytes; checks its header. */
static uint8_t *read_idx(const char *dir, const char *name, uint32_t magic, uint32_t count,
                         size_t item) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "mlp_fashion_mnist: cannot open %s\n", path);
        return NULL;
    }
    size_t header = magic == 0x803 ? 16 : 8;
    uint8_t head[16];
    uint8_t *data = malloc((size_t)count * item);
    int ok = data && fread(head, 1, header, f) == header && be32(head) == magic &&
             be32(head + 4) == count && fread(data, item, count, f) == count;
    fclose(f);
    if (!ok) {
        fprintf(stderr, "mlp_fashion_mnist: %s is not the expected IDX file\n", path);
        free(data);
        return NULL;
    }
    return data;
}

/* ---- the host model ---- */

static void forward(const weights *w, const float *x, float *h, float *o) {
    for (int j = 0; j < HID; j++)
        h[j] = w->b1[j];
    for (int i = 0; i < IN; i++) {
        if (x[i] == 0.0f) continue;
        const float *row = &w->w1[i * HID];
        for (int j = 0; j < HID; j++)
            h[j] += x[i] * row[j];
    }
    for (int j = 0; j < HID; j++)
        h[j] = h[j] > 0 ? h[j] : 0;
    for (int k = 0; k < OUT; k++)
        o[k] = w->b2[k];
    for (int j = 0; j < HID; j++)
        for (int k = 0; k < OUT; k++)
            o[k] += h[j] * w->w2[j * OUT + k];
}

static int argmax(const float *v, int n) {
    int best = 0;
    for (int i = 1; i < n; i++)
        if (v[i] > v[best]) best = i;
    return best;
}

static void to_floats(const uint8_t *pixels, float *x) {
    for (int i = 0; i < IN; i++)
        x[i] = pixels[i] / 255.0f;
}

static void train(weights *w, const uint8_t *images, const uint8_t *labels, uint32_t n) {
    static weights grad;
    uint32_t seed = 20261122;
    float *all = (float *)w;
    for (size_t i = 0; i < sizeof *w / sizeof(float); i++) {
        seed = seed * 1664525u + 1013904223u;
        float u = (float)(seed >> 8) / 16777216.0f - 0.5f;
        all[i] = u * (i < IN * HID ? 0.1f : i < IN * HID + HID ? 0.0f : 0.4f);
    }
    memset(w->b1, 0, sizeof w->b1);
    memset(w->b2, 0, sizeof w->b2);
    uint32_t *order = malloc(n * sizeof *order);
    float x[IN], h[HID], o[OUT], dh[HID];
    for (uint32_t i = 0; i < n; i++)
        order[i] = i;
    for (int epoch = 0; epoch < EPOCHS; epoch++) {
        for (uint32_t i = n - 1; i > 0; i--) { /* a fixed shuffle per epoch */
            seed = seed * 1664525u + 1013904223u;
            uint32_t j = (seed >> 8) % (i + 1), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (uint32_t start = 0; start < n; start += BATCH) {
            memset(&grad, 0, sizeof grad);
            uint32_t end = start + BATCH < n ? start + BATCH : n;
            for (uint32_t s = start; s < end; s++) {
                uint32_t img = order[s];
                to_floats(images + (size_t)img * IN, x);
                forward(w, x, h, o);
                /* softmax cross-entropy gradient */
                float mx = o[argmax(o, OUT)], sum = 0;
                for (int k = 0; k < OUT; k++)
                    sum += o[k] = expf(o[k] - mx);
                for (int k = 0; k < OUT; k++)
                    o[k] = o[k] / sum - (k == labels[img]);
                for (int j = 0; j < HID; j++) {
                    float d = 0;
                    for (int k = 0; k < OUT; k++) {
                        grad.w2[j * OUT + k] += h[j] * o[k];
                        d += w->w2[j * OUT + k] * o[k];
                    }
                    dh[j] = h[j] > 0 ? d : 0;
                }
                for (int k = 0; k < OUT; k++)
                    grad.b2[k] += o[k];
                for (int j = 0; j < HID; j++)
                    grad.b1[j] += dh[j];
                for (int i = 0; i < IN; i++) {
                    if (x[i] == 0.0f) continue;
                    float *row = &grad.w1[i * HID];
                    for (int j = 0; j < HID; j++)
                        row[j] += x[i] * dh[j];
                }
            }
            float step = RATE / (float)(end - start);
            float *p = (float *)w, *g = (float *)&grad;
            for (size_t i = 0; i < sizeof *w / sizeof(float); i++)
                p[i] -= step * g[i];
        }
        printf("trained epoch %d of %d\n", epoch + 1, EPOCHS);
        fflush(stdout);
    }
    free(order);
}

/* The weights file: "LMMLP1\0\0", then the floats of `weights`. */
static int load_weights(const char *path, weights *w) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    char magic[8];
    int ok = fread(magic, 1, 8, f) == 8 && memcmp(magic, "LMMLP1\0\0", 8) == 0 &&
             fread(w, sizeof *w, 1, f) == 1 && fgetc(f) == EOF;
    fclose(f);
    return ok;
}

static void save_weights(const char *path, const weights *w) {
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) return;
    int ok = fwrite("LMMLP1\0\0", 1, 8, f) == 8 && fwrite(w, sizeof *w, 1, f) == 1;
    ok &= fclose(f) == 0;
    if (ok)
        rename(tmp, path);
    else
        remove(tmp);
}

/* ---- the device ---- */

/* Row-major padded matrices for the device, biases folded in. */
static void device_operands(const weights *w, const uint8_t *images, float *x, float *w1,
                            float *w2) {
    memset(x, 0, sizeof(float) * TEST_PAD * IN_PAD);
    for (int r = 0; r < TEST_N; r++) {
        to_floats(images + (size_t)r * IN, &x[(size_t)r * IN_PAD]);
        x[(size_t)r * IN_PAD + IN] = 1.0f;
    }
    memset(w1, 0, sizeof(float) * IN_PAD * HID_PAD);
    for (int i = 0; i < IN; i++)
        for (int j = 0; j < HID; j++)
            w1[i * HID_PAD + j] = w->w1[i * HID + j];
    for (int j = 0; j < HID; j++)
        w1[IN * HID_PAD + j] = w->b1[j];
    w1[IN * HID_PAD + HID] = 1.0f; /* hidden unit 127 is relu(1) = 1 */
    memset(w2, 0, sizeof(float) * HID_PAD * OUT_PAD);
    for (int j = 0; j < HID; j++)
        for (int k = 0; k < OUT; k++)
            w2[j * OUT_PAD + k] = w->w2[j * OUT + k];
    for (int k = 0; k < OUT; k++)
        w2[HID * OUT_PAD + k] = w->b2[k];
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    const char *data = LM_FASHION_MNIST_DIR, *weights_path = LM_MLP_WEIGHTS;
    int bench = 0;
    const char *capture = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--data") && i + 1 < argc)
            data = argv[++i];
        else if (!strcmp(argv[i], "--weights") && i + 1 < argc)
            weights_path = argv[++i];
        else if (!strcmp(argv[i], "--bench"))
            bench = 1;
        else if (!strcmp(argv[i], "--capture") && i + 1 < argc)
            capture = argv[++i];
        else {
            fprintf(stderr, "usage: mlp_fashion_mnist [--data DIR] [--weights FILE] [--bench] "
                            "[--capture FILE]\n");
            return 2;
        }
    }
    uint8_t *test_images = read_idx(data, "t10k-images-idx3-ubyte", 0x803, TEST_N, IN);
    uint8_t *test_labels = read_idx(data, "t10k-labels-idx1-ubyte", 0x801, TEST_N, 1);
    if (!test_images || !test_labels) return 1;
    static weights w;
    if (!load_weights(weights_path, &w)) {
        uint8_t *images = read_idx(data, "train-images-idx3-ubyte", 0x803, 60000, IN);
        uint8_t *labels = read_idx(data, "train-labels-idx1-ubyte", 0x801, 60000, 1);
        if (!images || !labels) return 1;
        printf("training the MLP on 60000 images (once; weights go to %s)\n", weights_path);
        train(&w, images, labels, 60000);
        save_weights(weights_path, &w);
        free(images);
        free(labels);
    }

    int host_correct = 0;
    float x[IN], h[HID], o[OUT];
    for (int r = 0; r < TEST_N; r++) {
        to_floats(test_images + (size_t)r * IN, x);
        forward(&w, x, h, o);
        host_correct += argmax(o, OUT) == test_labels[r];
    }

    float *dx = malloc(sizeof(float) * TEST_PAD * IN_PAD);
    float *dw1 = malloc(sizeof(float) * IN_PAD * HID_PAD);
    float *dw2 = malloc(sizeof(float) * HID_PAD * OUT_PAD);
    float *logits = malloc(sizeof(float) * TEST_PAD * OUT_PAD);
    uint16_t *tx = malloc(2u * TEST_PAD * IN_PAD), *tw1 = malloc(2u * IN_PAD * HID_PAD);
    uint16_t *tw2 = malloc(2u * HID_PAD * OUT_PAD);
    float *tlogits = malloc(sizeof(float) * TEST_PAD * OUT_PAD);
    if (!dx || !dw1 || !dw2 || !logits || !tx || !tw1 || !tw2 || !tlogits) return 1;
    device_operands(&w, test_images, dx, dw1, dw2);

    const lm_data_format bf16 = LM_DATA_FORMAT_FLOAT16_B, f32 = LM_DATA_FORMAT_FLOAT32;
    uint32_t bf16_tile = (uint32_t)lm_tile_size(bf16), f32_tile = (uint32_t)lm_tile_size(f32);
    ex_matmul layer1 = {TEST_PAD / 32, IN_PAD / 32, HID_PAD / 32, bf16, bf16,
                        bf16,          true,        true,         4,    8};
    ex_matmul layer2 = {TEST_PAD / 32, HID_PAD / 32, OUT_PAD / 32, bf16, bf16,
                        f32,           false,        true,         1,    8};
    lm_device *dev;
    lm_buffer bx, bw1, bw2, bh, bo;
    lm_program p1, p2;
    if (ex_failed(lm_tilize(dx, TEST_PAD, IN_PAD, bf16, tx, 2u * TEST_PAD * IN_PAD), "tilize") ||
        ex_failed(lm_tilize(dw1, IN_PAD, HID_PAD, bf16, tw1, 2u * IN_PAD * HID_PAD), "tilize") ||
        ex_failed(lm_tilize(dw2, HID_PAD, OUT_PAD, bf16, tw2, 2u * HID_PAD * OUT_PAD), "tilize") ||
        ex_failed(lm_device_open(NULL, &dev), "open device") || ex_capture_begin(dev, capture) ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, 2u * TEST_PAD * IN_PAD, bf16_tile, &bx), "x") ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, 2u * IN_PAD * HID_PAD, bf16_tile, &bw1), "w1") ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, 2u * HID_PAD * OUT_PAD, bf16_tile, &bw2), "w2") ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, 2u * TEST_PAD * HID_PAD, bf16_tile, &bh), "h") ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, 4u * TEST_PAD * OUT_PAD, f32_tile, &bo), "out") ||
        ex_failed(ex_matmul_program(dev, &layer1, bx, bw1, bh, &p1), "layer 1 program") ||
        ex_failed(ex_matmul_program(dev, &layer2, bh, bw2, bo, &p2), "layer 2 program"))
        return 1;
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    double t0 = now();
    if (ex_failed(lm_enqueue_write_buffer(cq, bw1, tw1, false), "write w1") ||
        ex_failed(lm_enqueue_write_buffer(cq, bw2, tw2, false), "write w2") ||
        ex_failed(lm_enqueue_write_buffer(cq, bx, tx, false), "write images") ||
        ex_failed(lm_enqueue_program(cq, p1, false), "layer 1") ||
        ex_failed(lm_enqueue_program(cq, p2, false), "layer 2") ||
        ex_failed(lm_enqueue_read_buffer(cq, bo, tlogits, true), "read logits"))
        return 1;
    double seconds = now() - t0;
    /* The two launches once more, as a metal trace: the logits must not move. */
    uint32_t trace;
    float *traced = malloc(sizeof(float) * TEST_PAD * OUT_PAD);
    if (!traced || ex_failed(lm_begin_trace_capture(cq, &trace), "begin trace") ||
        ex_failed(lm_enqueue_program(cq, p1, false), "trace layer 1") ||
        ex_failed(lm_enqueue_program(cq, p2, false), "trace layer 2") ||
        ex_failed(lm_end_trace_capture(cq, trace), "end trace") ||
        ex_failed(lm_replay_trace(cq, trace, false), "replay trace") ||
        ex_failed(lm_enqueue_read_buffer(cq, bo, traced, true), "read traced logits") ||
        ex_failed(lm_release_trace(dev, trace), "release trace"))
        return 1;
    int trace_differs = memcmp(traced, tlogits, sizeof(float) * TEST_PAD * OUT_PAD) != 0;
    free(traced);
    printf("metal trace of both layers: logits %s\n",
           trace_differs ? "DIFFER from the eager run" : "bit-identical to the eager run");
    if (ex_capture_input(bx, "images", capture) || ex_capture_input(bw1, "w1", capture) ||
        ex_capture_input(bw2, "w2", capture) || ex_capture_output(cq, bo, "logits", capture) ||
        ex_capture_end(dev, capture))
        return 1;
    if (ex_failed(lm_untilize(tlogits, 4u * TEST_PAD * OUT_PAD, f32, TEST_PAD, OUT_PAD, logits,
                              sizeof(float) * TEST_PAD * OUT_PAD),
                  "untilize"))
        return 1;
    int device_correct = 0;
    for (int r = 0; r < TEST_N; r++)
        device_correct += argmax(&logits[(size_t)r * OUT_PAD], OUT) == test_labels[r];

    double host_acc = 100.0 * host_correct / TEST_N, dev_acc = 100.0 * device_correct / TEST_N;
    printf("accuracy on %d test images: device %.2f %%, host float32 %.2f %% (difference %.2f "
           "points, allowed 0.50)\n",
           TEST_N, dev_acc, host_acc, fabs(dev_acc - host_acc));
    printf("device inference: %.3f s, %.0f images/s\n", seconds, TEST_N / seconds);
    if (bench) {
        double runs[5];
        for (int r = 0; r < 5; r++) {
            double t = now();
            if (ex_failed(lm_enqueue_write_buffer(cq, bx, tx, false), "write images") ||
                ex_failed(lm_enqueue_program(cq, p1, false), "layer 1") ||
                ex_failed(lm_enqueue_program(cq, p2, false), "layer 2") ||
                ex_failed(lm_enqueue_read_buffer(cq, bo, tlogits, true), "read logits"))
                return 1;
            runs[r] = now() - t;
        }
        for (int i = 0; i < 5; i++) /* median of five */
            for (int j = i + 1; j < 5; j++)
                if (runs[j] < runs[i]) {
                    double t = runs[i];
                    runs[i] = runs[j];
                    runs[j] = t;
                }
        printf("mlp_images_per_s: %.0f\n", TEST_N / runs[2]);
    }
    lm_release_program(p1);
    lm_release_program(p2);
    int bad = fabs(dev_acc - host_acc) > 0.5 || trace_differs;
    bad |= ex_failed(lm_device_close(dev), "close device");
    printf("%s\n", bad ? "FAIL" : "PASS");
    free(dx), free(dw1), free(dw2), free(logits), free(tx), free(tw1), free(tw2), free(tlogits);
    free(test_images), free(test_labels);
    return bad;
}
