/* The multicast example with lightmetal's C API. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "example.h"

#define DESTS 6u

int main(int argc, char **argv) {
    const char *capture = ex_capture_path(argc, argv);
    static float f[1024];
    static uint16_t tile[1024], out[DESTS * 1024];
    for (int i = 0; i < 1024; i++)
        f[i] = (float)(i % 97) - 48.0f;
    lm_float_to_bfloat16(f, tile, 1024);
    lm_device *dev = NULL;
    if (ex_failed(lm_device_open(NULL, &dev), "open device")) return 1;
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    uint32_t bytes = (uint32_t)lm_tile_size(LM_DATA_FORMAT_FLOAT16_B);
    lm_buffer src, dst;
    lm_program prog;
    lm_kernel coordinator, receiver;
    lm_core_range_set sender = lm_core_range_set_of(0, 0, 0, 0);
    lm_core_range_set receivers = lm_core_range_set_of(1, 0, 3, 1);
    lm_core_range_set all = sender;
    all.ranges[all.count++] = receivers.ranges[0];
    uint32_t sem = 0, sct[1 + LM_TENSOR_ACCESSOR_MAX_ARGS], rct[1 + LM_TENSOR_ACCESSOR_MAX_ARGS];
    lm_kernel_config sc, rc;
    lm_kernel_config_init(&sc, LM_PROCESSOR_DM0);
    lm_kernel_config_init(&rc, LM_PROCESSOR_DM1);
    int bad = ex_capture_begin(dev, capture) ||
              ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, bytes, bytes, &src), "buffer src") ||
              ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, DESTS * bytes, bytes, &dst), "buffer dst") ||
              ex_capture_input(src, "in", capture) ||
              ex_failed(lm_enqueue_write_buffer(cq, src, tile, false), "write src") ||
              ex_failed(lm_create_program(dev, &prog), "program") ||
              ex_failed(ex_cb(prog, &all, 0, LM_DATA_FORMAT_FLOAT16_B, 1), "cb 0") ||
              ex_failed(lm_create_semaphore(prog, &all, 0, &sem), "semaphore") ||
              ex_failed(lm_tensor_accessor_args(src, sct + 1, LM_TENSOR_ACCESSOR_MAX_ARGS,
                                                &sc.compile_arg_count),
                        "args") ||
              ex_failed(lm_tensor_accessor_args(dst, rct + 1, LM_TENSOR_ACCESSOR_MAX_ARGS,
                                                &rc.compile_arg_count),
                        "args");
    sct[0] = rct[0] = sem;
    sc.compile_args = sct;
    sc.compile_arg_count++;
    rc.compile_args = rct;
    rc.compile_arg_count++;
    bad = bad ||
          ex_failed(lm_create_kernel(prog, LM_EXAMPLE_DIR "/kernels/coordinator.cpp", &sender, &sc,
                                     &coordinator),
                    "coordinator") ||
          ex_failed(lm_create_kernel(prog, LM_EXAMPLE_DIR "/kernels/receiver.cpp", &receivers, &rc,
                                     &receiver),
                    "receiver") ||
          ex_failed(lm_set_runtime_args(prog, coordinator, (lm_core){0, 0},
                                        (uint32_t[]){ex_address(src), 1, 0, 3, 1, DESTS}, 6),
                    "coordinator args");
    for (uint32_t i = 0; !bad && i < DESTS; i++)
        bad = ex_failed(lm_set_runtime_args(prog, receiver, (lm_core){1 + i % 3, i / 3},
                                            (uint32_t[]){ex_address(dst), i}, 2),
                        "receiver args");
    bad = bad || ex_failed(lm_enqueue_program(cq, prog, false), "enqueue") ||
          ex_failed(lm_enqueue_read_buffer(cq, dst, out, true), "read dst") ||
          ex_capture_output(cq, dst, "out", capture) || ex_capture_end(dev, capture);
    uint32_t intact = 0;
    for (uint32_t r = 0; !bad && r < DESTS; r++)
        intact += memcmp(out + r * 1024, tile, sizeof tile) == 0;
    bool pass = !bad && intact == DESTS;
    printf("%s multicast (C host): %u of %u receivers got the tile\n", pass ? "PASS" : "FAIL",
           intact, DESTS);
    if (ex_failed(lm_device_close(dev), "close device")) pass = false;
    return pass ? 0 : 1;
}
