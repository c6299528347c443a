/* The loopback example with lightmetal's C API: the same kernel, the same
 * check. Prints PASS when the copy matches; `--capture FILE` records a Light
 * Metal binary of the run. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "example.h"

#define PAGE_SIZE 2048u
#define NUM_PAGES 50u

int main(int argc, char **argv) {
    const char *capture = ex_capture_path(argc, argv);
    static uint32_t input[PAGE_SIZE * NUM_PAGES / 4], output[PAGE_SIZE * NUM_PAGES / 4];
    uint32_t seed = 7;
    for (size_t i = 0; i < sizeof input / 4; i++)
        input[i] = seed = seed * 1664525u + 1013904223u;

    lm_device *dev = NULL;
    if (ex_failed(lm_device_open(NULL, &dev), "open device")) return 1;
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_buffer src, dst, scratch;
    lm_program prog;
    lm_kernel copy;
    lm_core_range_set core = lm_core_range_set_of(0, 0, 0, 0);
    lm_kernel_config cfg;
    lm_kernel_config_init(&cfg, LM_PROCESSOR_DM0);
    uint32_t ct[1 + 2 * LM_TENSOR_ACCESSOR_MAX_ARGS] = {PAGE_SIZE}, n = 0, m = 0;
    int bad =
        ex_capture_begin(dev, capture) ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, PAGE_SIZE * NUM_PAGES, PAGE_SIZE, &src),
                  "src buffer") ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, PAGE_SIZE * NUM_PAGES, PAGE_SIZE, &dst),
                  "dst buffer") ||
        ex_failed(ex_buffer(dev, LM_BUFFER_L1, PAGE_SIZE, PAGE_SIZE, &scratch), "scratch buffer") ||
        ex_capture_input(src, "in", capture) ||
        ex_failed(lm_enqueue_write_buffer(cq, src, input, false), "write input") ||
        ex_failed(lm_create_program(dev, &prog), "create program") ||
        ex_failed(lm_tensor_accessor_args(src, ct + 1, LM_TENSOR_ACCESSOR_MAX_ARGS, &n),
                  "src accessor args") ||
        ex_failed(lm_tensor_accessor_args(dst, ct + 1 + n, LM_TENSOR_ACCESSOR_MAX_ARGS, &m),
                  "dst accessor args");
    if (!bad) {
        cfg.compile_args = ct;
        cfg.compile_arg_count = 1 + n + m;
        uint32_t args[] = {ex_address(scratch), ex_address(src), ex_address(dst), NUM_PAGES};
        bad =
            ex_failed(lm_create_kernel(prog, LM_EXAMPLE_DIR "/kernels/loopback_dram_copy.cpp",
                                       &core, &cfg, &copy),
                      "create kernel") ||
            ex_failed(lm_set_runtime_args(prog, copy, (lm_core){0, 0}, args, 4), "runtime args") ||
            ex_failed(lm_enqueue_program(cq, prog, false), "enqueue program") ||
            ex_failed(lm_finish(cq), "finish") ||
            ex_failed(lm_enqueue_read_buffer(cq, dst, output, true), "read output") ||
            ex_capture_output(cq, dst, "out", capture) || ex_capture_end(dev, capture);
    }
    bool pass = !bad && memcmp(input, output, sizeof input) == 0;
    printf("%s loopback (C host): %u pages through L1\n", pass ? "PASS" : "FAIL", NUM_PAGES);
    if (ex_failed(lm_device_close(dev), "close device")) pass = false;
    return pass ? 0 : 1;
}
