/* The noc_tile_transfer example with lightmetal's C API. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "example.h"

int main(int argc, char **argv) {
    const char *capture = ex_capture_path(argc, argv);
    static float f[1024];
    static uint16_t tile[1024], out[1024];
    for (int i = 0; i < 1024; i++)
        f[i] = (float)i * 0.25f - 100.0f;
    lm_float_to_bfloat16(f, tile, 1024);
    lm_device *dev = NULL;
    if (ex_failed(lm_device_open(NULL, &dev), "open device")) return 1;
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    uint32_t bytes = (uint32_t)lm_tile_size(LM_DATA_FORMAT_FLOAT16_B);
    lm_buffer src, dst;
    lm_program prog;
    lm_kernel k0, k1;
    lm_core c0 = {0, 0}, c1 = {3, 2}, n0, n1;
    lm_core_range_set s0 = lm_core_range_set_of(0, 0, 0, 0), s1 = lm_core_range_set_of(3, 2, 3, 2);
    lm_core_range_set both = s0;
    both.ranges[both.count++] = s1.ranges[0];
    uint32_t sem = 0;
    lm_kernel_config cfg;
    lm_kernel_config_init(&cfg, LM_PROCESSOR_DM0);
    uint32_t ct[2] = {0, 0};
    cfg.compile_args = ct;
    cfg.compile_arg_count = 2;
    int bad = ex_capture_begin(dev, capture) ||
              ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, bytes, bytes, &src), "buffer src") ||
              ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, bytes, bytes, &dst), "buffer dst") ||
              ex_capture_input(src, "in", capture) ||
              ex_failed(lm_enqueue_write_buffer(cq, src, tile, false), "write src") ||
              ex_failed(lm_create_program(dev, &prog), "program") ||
              ex_failed(ex_cb(prog, &both, 0, LM_DATA_FORMAT_FLOAT16_B, 1), "cb 0") ||
              ex_failed(lm_create_semaphore(prog, &both, 0, &sem), "semaphore") ||
              ex_failed(lm_worker_core_from_logical_core(dev, c0, &n0), "noc coordinates") ||
              ex_failed(lm_worker_core_from_logical_core(dev, c1, &n1), "noc coordinates");
    ct[1] = sem;
    bad = bad ||
          ex_failed(lm_create_kernel(prog, LM_EXAMPLE_DIR "/kernels/reader0.cpp", &s0, &cfg, &k0),
                    "kernel 0") ||
          ex_failed(lm_create_kernel(prog, LM_EXAMPLE_DIR "/kernels/reader1.cpp", &s1, &cfg, &k1),
                    "kernel 1") ||
          ex_failed(lm_set_runtime_args(prog, k0, c0, (uint32_t[]){ex_address(src), n1.x, n1.y}, 3),
                    "args 0") ||
          ex_failed(lm_set_runtime_args(prog, k1, c1, (uint32_t[]){ex_address(dst), n0.x, n0.y}, 3),
                    "args 1") ||
          ex_failed(lm_enqueue_program(cq, prog, false), "enqueue") ||
          ex_failed(lm_enqueue_read_buffer(cq, dst, out, true), "read dst") ||
          ex_capture_output(cq, dst, "out", capture) || ex_capture_end(dev, capture);
    bool pass = !bad && memcmp(out, tile, sizeof out) == 0;
    printf("%s noc_tile_transfer (C host): core (0,0) -> core (3,2) over the NoC\n",
           pass ? "PASS" : "FAIL");
    if (ex_failed(lm_device_close(dev), "close device")) pass = false;
    return pass ? 0 : 1;
}
