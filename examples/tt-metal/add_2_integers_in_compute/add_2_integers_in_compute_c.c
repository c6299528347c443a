/* The add_2_integers_in_compute example with lightmetal's C API. */
#include <stdint.h>
#include <stdio.h>

#include "example.h"

int main(int argc, char **argv) {
    const char *capture = ex_capture_path(argc, argv);
    static float fa[1024], fb[1024], fc[1024];
    static uint16_t ha[1024], hb[1024], hc[1024];
    for (int i = 0; i < 1024; i++) {
        fa[i] = (float)(i % 100);
        fb[i] = (float)(14 - i % 29);
    }
    lm_float_to_bfloat16(fa, ha, 1024);
    lm_float_to_bfloat16(fb, hb, 1024);
    lm_device *dev = NULL;
    if (ex_failed(lm_device_open(NULL, &dev), "open device")) return 1;
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    uint32_t tile = (uint32_t)lm_tile_size(LM_DATA_FORMAT_FLOAT16_B);
    lm_buffer a, b, c;
    lm_program prog;
    lm_kernel reader, writer, compute;
    lm_core_range_set core = lm_core_range_set_of(0, 0, 0, 0);
    int bad = ex_capture_begin(dev, capture) ||
              ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, tile, tile, &a), "buffer a") ||
              ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, tile, tile, &b), "buffer b") ||
              ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, tile, tile, &c), "buffer c") ||
              ex_capture_input(a, "a", capture) || ex_capture_input(b, "b", capture) ||
              ex_failed(lm_enqueue_write_buffer(cq, a, ha, false), "write a") ||
              ex_failed(lm_enqueue_write_buffer(cq, b, hb, false), "write b") ||
              ex_failed(lm_create_program(dev, &prog), "program") ||
              ex_failed(ex_cb(prog, &core, 0, LM_DATA_FORMAT_FLOAT16_B, 1), "cb 0") ||
              ex_failed(ex_cb(prog, &core, 1, LM_DATA_FORMAT_FLOAT16_B, 1), "cb 1") ||
              ex_failed(ex_cb(prog, &core, 16, LM_DATA_FORMAT_FLOAT16_B, 1), "cb 16") ||
              ex_failed(ex_kernel(prog, LM_EXAMPLE_DIR "/kernels/reader_binary_1_tile.cpp", &core,
                                  LM_PROCESSOR_DM1, &reader),
                        "reader") ||
              ex_failed(ex_kernel(prog, LM_EXAMPLE_DIR "/kernels/writer_1_tile.cpp", &core,
                                  LM_PROCESSOR_DM0, &writer),
                        "writer") ||
              ex_failed(ex_kernel(prog, LM_EXAMPLE_DIR "/kernels/add_2_tiles.cpp", &core,
                                  LM_PROCESSOR_COMPUTE, &compute),
                        "compute") ||
              ex_failed(lm_set_runtime_args(prog, reader, (lm_core){0, 0},
                                            (uint32_t[]){ex_address(a), ex_address(b)}, 2),
                        "reader args") ||
              ex_failed(lm_set_runtime_args(prog, writer, (lm_core){0, 0},
                                            (uint32_t[]){ex_address(c)}, 1),
                        "writer args") ||
              ex_failed(lm_enqueue_program(cq, prog, false), "enqueue") ||
              ex_failed(lm_enqueue_read_buffer(cq, c, hc, true), "read c") ||
              ex_capture_output(cq, c, "c", capture) || ex_capture_end(dev, capture);
    uint32_t wrong = 0;
    lm_bfloat16_to_float(hc, fc, 1024);
    for (int i = 0; !bad && i < 1024; i++)
        wrong += fc[i] != fa[i] + fb[i];
    bool pass = !bad && wrong == 0;
    printf("%s add_2_integers_in_compute (C host): 1024 sums, %u wrong\n", pass ? "PASS" : "FAIL",
           wrong);
    if (ex_failed(lm_device_close(dev), "close device")) pass = false;
    return pass ? 0 : 1;
}
