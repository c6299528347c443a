/* onnx_classify: classify a Fashion-MNIST image with a model compiled by
 * `lightmetal compile`. The embedding side of the ONNX compiler: this program
 * links only the replay library (no compiler, no recorder, no framework) and
 * runs the .lmb on a simulated device that matches it.
 *
 *   lightmetal compile cnn.onnx -o cnn.lmb --dim batch=1
 *   onnx_classify cnn.lmb --image 42
 *
 * Usage: onnx_classify MODEL.lmb [--image N] [--data DIR]
 *   MODEL.lmb  a binary with one float32 input of shape [1, 1, 28, 28] and
 *              one float32 output of 10 logits (the first input and output
 *              the binary names, whatever they are called)
 *   --image N  the test image to classify, 0..9999 (default 0)
 *   --data DIR where t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte are,
 *              uncompressed (default: the build tree's copy of Debian's
 *              dataset-fashion-mnist)
 *
 * Preprocessing is the one the model was trained with
 * (scripts/make_onnx_models.py): image[0, 0, y, x] = pixel[y][x] / 255.0.
 * The logits are turned into probabilities on the host (softmax).
 *
 * Prints the image's label, the predicted class and every class's
 * probability. Exit status: 0 when the model ran (whatever it predicted),
 * 2 for bad arguments or files, 3 when the replay fails.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lightmetal/lm_replay.h"

#ifndef LM_FASHION_MNIST_DIR
#define LM_FASHION_MNIST_DIR "data/fashion-mnist"
#endif

#define ROWS 28
#define COLS 28
#define PIXELS (ROWS * COLS)
#define TEST_IMAGES 10000
#define CLASSES 10

static const char *const class_names[CLASSES] = {
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
    "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot",
};

static uint32_t be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Reads item `index` (`item` bytes) of an IDX file whose header must say
 * `magic` and TEST_IMAGES items (and 28x28 for images). */
static int read_idx_item(const char *dir, const char *name, uint32_t magic, uint32_t index,
                         uint8_t *dst, size_t item) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "onnx_classify: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t header = magic == 0x803 ? 16 : 8;
    uint8_t head[16];
    int ok = fread(head, 1, header, f) == header && be32(head) == magic &&
             be32(head + 4) == TEST_IMAGES &&
             (magic != 0x803 || (be32(head + 8) == ROWS && be32(head + 12) == COLS)) &&
             fseek(f, (long)(header + (size_t)index * item), SEEK_SET) == 0 &&
             fread(dst, 1, item, f) == item;
    fclose(f);
    if (!ok) {
        fprintf(stderr, "onnx_classify: %s is not the Fashion-MNIST test set's IDX file\n", path);
        return -1;
    }
    return 0;
}

/* The first named buffer of `role`; its index, or -1. */
static int find_buffer(const lm_replay *r, lm_buffer_role role, lm_replay_buffer_info *info) {
    for (uint32_t i = 0; i < lm_replay_buffer_count(r); i++)
        if (lm_replay_buffer_info_at(r, i, info) == LM_OK && info->role == role) return (int)i;
    return -1;
}

static int usage(const char *prog) {
    fprintf(stderr, "usage: %s MODEL.lmb [--image N] [--data DIR]\n", prog);
    return 2;
}

int main(int argc, char **argv) {
    const char *model = NULL, *data = LM_FASHION_MNIST_DIR;
    long index = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--image") && i + 1 < argc) {
            char *end;
            errno = 0;
            index = strtol(argv[++i], &end, 10);
            if (errno || *end || end == argv[i] || index < 0 || index >= TEST_IMAGES) {
                fprintf(stderr, "onnx_classify: --image takes 0..%d, not '%s'\n", TEST_IMAGES - 1,
                        argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--data") && i + 1 < argc) {
            data = argv[++i];
        } else if (argv[i][0] != '-' && !model) {
            model = argv[i];
        } else {
            return usage(argv[0]);
        }
    }
    if (!model) return usage(argv[0]);

    uint8_t pixels[PIXELS], label;
    if (read_idx_item(data, "t10k-images-idx3-ubyte", 0x803, (uint32_t)index, pixels, PIXELS) ||
        read_idx_item(data, "t10k-labels-idx1-ubyte", 0x801, (uint32_t)index, &label, 1))
        return 2;
    if (label >= CLASSES) {
        fprintf(stderr, "onnx_classify: image %ld has label %u, not a class\n", index, label);
        return 2;
    }

    lm_replay *replay;
    if (lm_replay_open_file(model, &replay) != LM_OK) {
        fprintf(stderr, "onnx_classify: %s\n", lm_last_error());
        return 2;
    }
    /* The model's interface, as the compiler recorded it in the binary. */
    lm_replay_buffer_info in, out;
    if (find_buffer(replay, LM_BUFFER_ROLE_INPUT, &in) < 0 ||
        find_buffer(replay, LM_BUFFER_ROLE_OUTPUT, &out) < 0) {
        fprintf(stderr, "onnx_classify: %s has no named input and output\n", model);
        lm_replay_close(replay);
        return 2;
    }
    if (in.format != LM_DATA_FORMAT_FLOAT32 || in.size != PIXELS * sizeof(float) ||
        out.format != LM_DATA_FORMAT_FLOAT32 || out.size != CLASSES * sizeof(float)) {
        fprintf(stderr,
                "onnx_classify: %s takes '%s' (%llu bytes) and gives '%s' (%llu bytes); "
                "expected one float32 1x1x28x28 image and 10 float32 logits (compile with "
                "--dim batch=1)\n",
                model, in.name, (unsigned long long)in.size, out.name,
                (unsigned long long)out.size);
        lm_replay_close(replay);
        return 2;
    }

    float image[PIXELS], logits[CLASSES];
    for (int i = 0; i < PIXELS; i++)
        image[i] = (float)pixels[i] / 255.0f;
    lm_replay_report report = {0};
    lm_status st = lm_replay_set_input(replay, in.name, image, sizeof image);
    if (st == LM_OK) st = lm_replay_run(replay, NULL, NULL, &report);
    /* A golden mismatch is expected: goldens, if the model was compiled with
     * some, hold the outputs of another input. The outputs are still read. */
    if (st == LM_ERR_MISMATCH) st = LM_OK;
    if (st == LM_OK) st = lm_replay_get_output(replay, out.name, logits, sizeof logits);
    if (st != LM_OK) {
        fprintf(stderr, "onnx_classify: %s\n", lm_last_error());
        lm_replay_close(replay);
        return 3;
    }

    /* Softmax on the host, shifted by the largest logit so exp cannot overflow. */
    double top = logits[0], sum = 0, prob[CLASSES];
    int best = 0;
    for (int k = 1; k < CLASSES; k++)
        if (logits[k] > top) {
            top = logits[k];
            best = k;
        }
    for (int k = 0; k < CLASSES; k++)
        sum += prob[k] = exp((double)logits[k] - top);
    printf("image %ld: label %s\n", index, class_names[label]);
    printf("class: %s (%.1f%%)\n", class_names[best], 100 * prob[best] / sum);
    for (int k = 0; k < CLASSES; k++)
        printf("  %-12s %6.2f%%%s\n", class_names[k], 100 * prob[k] / sum, k == best ? "  <" : "");
    printf("replayed %llu commands (%llu launches) in %.3f s\n",
           (unsigned long long)report.commands, (unsigned long long)report.programs,
           report.seconds);
    lm_replay_close(replay);
    return 0;
}
