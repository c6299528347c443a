/* The add_2_integers_in_riscv example with lightmetal's C API. */
#include <stdint.h>
#include <stdio.h>

#include "example.h"

#define N 16u

int main(int argc, char **argv) {
    const char *capture = ex_capture_path(argc, argv);
    uint32_t va[N], vb[N], vc[N];
    for (uint32_t i = 0; i < N; i++) {
        va[i] = 1000 * i + 14;
        vb[i] = 7 * i + 0x80000000u;
    }
    lm_device *dev = NULL;
    if (ex_failed(lm_device_open(NULL, &dev), "open device")) return 1;
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_buffer a, b, c;
    lm_program prog;
    lm_kernel k;
    lm_core_range_set core = lm_core_range_set_of(0, 0, 0, 0);
    lm_kernel_config cfg;
    lm_kernel_config_init(&cfg, LM_PROCESSOR_DM0);
    uint32_t ct[] = {N};
    cfg.compile_args = ct;
    cfg.compile_arg_count = 1;
    lm_circular_buffer_config cb;
    lm_circular_buffer_config_init(&cb);
    cb.total_size = N * 4;
    cb.index_count = 1;
    lm_circular_buffer h;
    int bad =
        ex_capture_begin(dev, capture) ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, N * 4, N * 4, &a), "buffer a") ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, N * 4, N * 4, &b), "buffer b") ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, N * 4, N * 4, &c), "buffer c") ||
        ex_capture_input(a, "a", capture) || ex_capture_input(b, "b", capture) ||
        ex_failed(lm_enqueue_write_buffer(cq, a, va, false), "write a") ||
        ex_failed(lm_enqueue_write_buffer(cq, b, vb, false), "write b") ||
        ex_failed(lm_create_program(dev, &prog), "program") ||
        /* two circular buffers (indices of one would share its memory) */
        ex_failed((cb.indices[0] = (lm_cb_index_config){0, LM_DATA_FORMAT_UINT32, N * 4},
                   lm_create_circular_buffer(prog, &core, &cb, &h)),
                  "cb 0") ||
        ex_failed((cb.indices[0] = (lm_cb_index_config){1, LM_DATA_FORMAT_UINT32, N * 4},
                   lm_create_circular_buffer(prog, &core, &cb, &h)),
                  "cb 1") ||
        ex_failed(lm_create_kernel(prog, LM_EXAMPLE_DIR "/kernels/reader_writer_add_in_riscv.cpp",
                                   &core, &cfg, &k),
                  "kernel") ||
        ex_failed(lm_set_runtime_args(prog, k, (lm_core){0, 0},
                                      (uint32_t[]){ex_address(a), ex_address(b), ex_address(c)}, 3),
                  "args") ||
        ex_failed(lm_enqueue_program(cq, prog, false), "enqueue") ||
        ex_failed(lm_enqueue_read_buffer(cq, c, vc, true), "read c") ||
        ex_capture_output(cq, c, "c", capture) || ex_capture_end(dev, capture);
    uint32_t wrong = 0;
    for (uint32_t i = 0; !bad && i < N; i++)
        wrong += vc[i] != va[i] + vb[i];
    bool pass = !bad && wrong == 0;
    printf("%s add_2_integers_in_riscv (C host): %u sums, %u wrong\n", pass ? "PASS" : "FAIL", N,
           wrong);
    if (ex_failed(lm_device_close(dev), "close device")) pass = false;
    return pass ? 0 : 1;
}
