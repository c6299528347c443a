/* A small workload built outside the source tree against an installed
 * lightmetal: a device, two DRAM buffers and an L1 one, a kernel compiled
 * from a source file, a launch, a check of the results, all captured into a
 * Light Metal binary that is then replayed in the same process; then an op of
 * the op library.
 *
 * Usage: workload KERNEL.c OUT.lmb      prints PASS, or what failed */
#include <stdio.h>
#include <string.h>

#include <lightmetal/lightmetal.h>
#include <lightmetal/frontend.h>
#include <lightmetal/nn.h>

#include "workload.h"

static int failed(lm_status st, const char *what) {
    if (st == LM_OK) return 0;
    fprintf(stderr, "workload: %s: %s: %s\n", what, lm_status_string(st), lm_last_error());
    return 1;
}

static lm_status make_buffer(lm_device *dev, lm_buffer_type type, uint64_t size, lm_buffer *out) {
    lm_buffer_config cfg;
    lm_buffer_config_init(&cfg);
    cfg.type = type;
    cfg.size = size;
    cfg.page_size = WL_PAGE_SIZE;
    return lm_create_buffer(dev, &cfg, out);
}

static int check(const uint32_t *out, const char *what) {
    for (uint32_t i = 0; i < WL_WORDS; i++)
        if (out[i] != wl_output(i)) {
            fprintf(stderr, "workload: %s: word %u is 0x%08x, want 0x%08x\n", what, i, out[i],
                    wl_output(i));
            return 1;
        }
    return 0;
}

static int run(const char *kernel_path, const char *capture_path) {
    static uint32_t input[WL_WORDS], output[WL_WORDS];
    for (uint32_t i = 0; i < WL_WORDS; i++)
        input[i] = wl_input(i);

    lm_device *dev;
    if (failed(lm_device_open(NULL, &dev), "open device")) return 1;
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_buffer src, dst, staging;
    lm_program prog;
    lm_kernel kernel;
    lm_kernel_config kc;
    lm_kernel_config_init(&kc, LM_PROCESSOR_DM0);
    lm_core_range_set core0 = lm_core_range_set_of(0, 0, 0, 0);
    int bad = failed(lm_light_metal_begin_capture(dev, NULL), "begin capture") ||
              failed(make_buffer(dev, LM_BUFFER_DRAM, sizeof input, &src), "create src") ||
              failed(make_buffer(dev, LM_BUFFER_DRAM, sizeof input, &dst), "create dst") ||
              failed(make_buffer(dev, LM_BUFFER_L1, WL_PAGE_SIZE, &staging), "create staging") ||
              failed(lm_create_program(dev, &prog), "create program") ||
              failed(lm_create_kernel(prog, kernel_path, &core0, &kc, &kernel), "create kernel");
    if (!bad) {
        uint64_t a[3];
        lm_buffer_address(src, &a[0]);
        lm_buffer_address(dst, &a[1]);
        lm_buffer_address(staging, &a[2]);
        uint32_t args[] = {(uint32_t)a[0], (uint32_t)a[1], (uint32_t)a[2], WL_PAGES, WL_PAGE_SIZE};
        lm_core c00 = {0, 0};
        bad = failed(lm_set_runtime_args(prog, kernel, c00, args, 5), "set runtime args") ||
              failed(lm_enqueue_write_buffer(cq, src, input, false), "write input") ||
              failed(lm_enqueue_program(cq, prog, false), "enqueue program") ||
              failed(lm_enqueue_read_buffer(cq, dst, output, true), "read output") ||
              check(output, "live run") ||
              failed(lm_capture_name_buffer(src, "input"), "name input") ||
              failed(lm_capture_name_buffer(dst, "output"), "name output") ||
              failed(lm_capture_compare_to_capture(cq, dst), "record golden");
    }
    lm_binary *bin = NULL;
    bad = bad || failed(lm_light_metal_end_capture(dev, &bin), "end capture") ||
          failed(lm_binary_save(bin, capture_path), "save capture");
    lm_binary_free(bin);
    bad |= failed(lm_device_close(dev), "close device");
    if (bad) return 1;

    /* The capture, replayed on a device of its own. */
    lm_replay *replay;
    if (failed(lm_replay_open_file(capture_path, &replay), "open capture")) return 1;
    memset(output, 0, sizeof output);
    lm_replay_report report;
    bad = failed(lm_replay_run(replay, NULL, NULL, &report), "replay") ||
          failed(lm_replay_get_output(replay, "output", output, sizeof output), "replay output") ||
          check(output, "replay");
    if (!bad && report.goldens_checked != 1) {
        fprintf(stderr, "workload: replay checked %u goldens, want 1\n", report.goldens_checked);
        bad = 1;
    }
    lm_replay_close(replay);
    return bad;
}

/* The op library from the installed package: its kernels travel inside the
 * library, so this works from any prefix. */
static int run_nn(void) {
    lm_device *dev;
    if (failed(lm_device_open(NULL, &dev), "open device for nn")) return 1;
    float x[3 * 40], y[3 * 40];
    for (int i = 0; i < 3 * 40; i++)
        x[i] = (float)(i % 7) - 3.0f;
    lmnn_shape shape = LMNN_SHAPE(3, 40);
    lmnn_tensor_options o;
    lmnn_tensor_options_init(&o);
    o.dtype = LMNN_FLOAT32;
    lmnn_tensor t = {0}, r = {0};
    int bad = failed(lmnn_from_host(dev, &shape, x, sizeof x, &o, &t), "lmnn_from_host") ||
              failed(lmnn_relu(t, &r), "lmnn_relu") ||
              failed(lmnn_to_host(r, y, sizeof y), "lmnn_to_host");
    for (int i = 0; !bad && i < 3 * 40; i++)
        if (y[i] != (x[i] > 0 ? x[i] : 0.0f)) {
            fprintf(stderr, "workload: relu[%d] = %g, want %g\n", i, y[i], x[i]);
            bad = 1;
        }
    lmnn_tensor_free(t);
    lmnn_tensor_free(r);
    bad |= failed(lm_device_close(dev), "close device");
    return bad;
}

/* The ONNX compiler from the installed package (static links pull in
 * protobuf-c through pkg-config's Libs.private). */
static int run_frontend(const char *dir) {
    size_t n = 0;
    while (lmfe_supported_op(n))
        n++;
    if (n < 100) {
        fprintf(stderr, "workload: lmfe_supported_op lists %zu ops\n", n);
        return 1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/missing.onnx", dir);
    lm_binary *bin = NULL;
    if (lmfe_compile_onnx(path, NULL, &bin, NULL) != LM_ERR_IO || bin) {
        fprintf(stderr, "workload: compiling a missing model: %s\n", lm_last_error());
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: workload KERNEL.c OUT.lmb\n");
        return 2;
    }
    printf("lightmetal %s (headers %s)\n", lm_version_string(), LM_VERSION_STRING);
    int bad = strcmp(lm_version_string(), LM_VERSION_STRING) != 0 || run(argv[1], argv[2]) ||
              run_nn() || run_frontend(".");
    printf("%s\n", bad ? "FAIL" : "PASS");
    return bad;
}
