/* The eltwise_sfpu example (exp on the SFPU) with lightmetal's C API. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "example.h"

#define N_TILES 8u
#define ELEMS (N_TILES * 1024u)

int main(int argc, char **argv) {
    const char *capture = ex_capture_path(argc, argv);
    static float x[ELEMS], y[ELEMS];
    static uint16_t hx[ELEMS], hy[ELEMS];
    for (uint32_t i = 0; i < ELEMS; i++)
        x[i] = (float)((int)(i % 1601) - 800) / 100.0f;
    lm_float_to_bfloat16(x, hx, ELEMS);
    lm_bfloat16_to_float(hx, x, ELEMS);
    lm_device *dev = NULL;
    if (ex_failed(lm_device_open(NULL, &dev), "open device")) return 1;
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    uint32_t tile = (uint32_t)lm_tile_size(LM_DATA_FORMAT_FLOAT16_B);
    lm_buffer in, out;
    lm_program prog;
    lm_kernel reader, writer, compute;
    lm_core_range_set core = lm_core_range_set_of(0, 0, 0, 0);
    lm_kernel_config rc, wc, cc;
    lm_kernel_config_init(&rc, LM_PROCESSOR_DM1);
    lm_kernel_config_init(&wc, LM_PROCESSOR_DM0);
    lm_kernel_config_init(&cc, LM_PROCESSOR_COMPUTE);
    uint32_t ra[LM_TENSOR_ACCESSOR_MAX_ARGS], wa[LM_TENSOR_ACCESSOR_MAX_ARGS];
    int bad = ex_capture_begin(dev, capture) ||
              ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, sizeof hx, tile, &in), "buffer in") ||
              ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, sizeof hy, tile, &out), "buffer out") ||
              ex_capture_input(in, "in", capture) ||
              ex_failed(lm_enqueue_write_buffer(cq, in, hx, false), "write in") ||
              ex_failed(lm_create_program(dev, &prog), "program") ||
              ex_failed(ex_cb(prog, &core, 0, LM_DATA_FORMAT_FLOAT16_B, 2), "cb 0") ||
              ex_failed(ex_cb(prog, &core, 16, LM_DATA_FORMAT_FLOAT16_B, 2), "cb 16") ||
              ex_failed(lm_tensor_accessor_args(in, ra, LM_TENSOR_ACCESSOR_MAX_ARGS,
                                                &rc.compile_arg_count),
                        "args") ||
              ex_failed(lm_tensor_accessor_args(out, wa, LM_TENSOR_ACCESSOR_MAX_ARGS,
                                                &wc.compile_arg_count),
                        "args");
    rc.compile_args = ra;
    wc.compile_args = wa;
    bad = bad ||
          ex_failed(
              lm_create_kernel(prog, LM_EXAMPLE_DIR "/kernels/read_tiles.cpp", &core, &rc, &reader),
              "reader") ||
          ex_failed(lm_create_kernel(prog, LM_EXAMPLE_DIR "/kernels/write_tiles.cpp", &core, &wc,
                                     &writer),
                    "writer") ||
          ex_failed(
              lm_create_kernel(prog, LM_EXAMPLE_DIR "/kernels/exp_tiles.cpp", &core, &cc, &compute),
              "compute") ||
          ex_failed(lm_set_runtime_args(prog, reader, (lm_core){0, 0},
                                        (uint32_t[]){ex_address(in), N_TILES}, 2),
                    "reader args") ||
          ex_failed(lm_set_runtime_args(prog, writer, (lm_core){0, 0},
                                        (uint32_t[]){ex_address(out), N_TILES}, 2),
                    "writer args") ||
          ex_failed(lm_set_runtime_args(prog, compute, (lm_core){0, 0}, (uint32_t[]){N_TILES}, 1),
                    "compute args") ||
          ex_failed(lm_enqueue_program(cq, prog, false), "enqueue") ||
          ex_failed(lm_enqueue_read_buffer(cq, out, hy, true), "read out") ||
          ex_capture_output(cq, out, "out", capture) || ex_capture_end(dev, capture);
    uint32_t wrong = 0;
    lm_bfloat16_to_float(hy, y, ELEMS);
    for (uint32_t i = 0; !bad && i < ELEMS; i++) {
        double want = exp((double)x[i]);
        wrong += fabs(y[i] - want) > want * 0x1p-8;
    }
    bool pass = !bad && wrong == 0;
    printf("%s eltwise_sfpu (C host): exp of %u bf16 tiles, %u outside one bf16 rounding\n",
           pass ? "PASS" : "FAIL", N_TILES, wrong);
    if (ex_failed(lm_device_close(dev), "close device")) pass = false;
    return pass ? 0 : 1;
}
