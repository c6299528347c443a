/* The sfpu_chain example with lightmetal's C API. */
#include <stdint.h>
#include <stdio.h>

#include "example.h"

#define N_TILES 4u
#define ELEMS (N_TILES * 1024u)

int main(int argc, char **argv) {
    const char *capture = ex_capture_path(argc, argv);
    static float va[ELEMS], vb[ELEMS], vc[ELEMS];
    uint32_t seed = 3;
    for (uint32_t i = 0; i < ELEMS; i++) {
        seed = seed * 1664525u + 1013904223u;
        va[i] = (float)((int)(seed >> 16) - 32768) / 1024.0f;
        seed = seed * 1664525u + 1013904223u;
        vb[i] = (float)((int)(seed >> 16) - 32768) / 512.0f + 0.25f;
    }
    lm_device *dev = NULL;
    if (ex_failed(lm_device_open(NULL, &dev), "open device")) return 1;
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    uint32_t tile = (uint32_t)lm_tile_size(LM_DATA_FORMAT_FLOAT32);
    lm_buffer a, b, c;
    lm_program prog;
    lm_kernel reader, writer, compute;
    lm_core_range_set core = lm_core_range_set_of(1, 1, 1, 1);
    lm_core c11 = {1, 1};
    lm_kernel_config rc, wc, cc;
    lm_kernel_config_init(&rc, LM_PROCESSOR_DM1);
    lm_kernel_config_init(&wc, LM_PROCESSOR_DM0);
    lm_kernel_config_init(&cc, LM_PROCESSOR_COMPUTE);
    cc.fp32_dest_acc_en = true;
    uint32_t ra[2 * LM_TENSOR_ACCESSOR_MAX_ARGS], wa[LM_TENSOR_ACCESSOR_MAX_ARGS], n = 0, m = 0;
    int bad =
        ex_capture_begin(dev, capture) ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, sizeof va, tile, &a), "buffer a") ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, sizeof vb, tile, &b), "buffer b") ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, sizeof vc, tile, &c), "buffer c") ||
        ex_capture_input(a, "a", capture) || ex_capture_input(b, "b", capture) ||
        ex_failed(lm_enqueue_write_buffer(cq, a, va, false), "write a") ||
        ex_failed(lm_enqueue_write_buffer(cq, b, vb, false), "write b") ||
        ex_failed(lm_create_program(dev, &prog), "program") ||
        ex_failed(ex_cb(prog, &core, 0, LM_DATA_FORMAT_FLOAT32, 2), "cb 0") ||
        ex_failed(ex_cb(prog, &core, 1, LM_DATA_FORMAT_FLOAT32, 2), "cb 1") ||
        ex_failed(ex_cb(prog, &core, 16, LM_DATA_FORMAT_FLOAT32, 2), "cb 16") ||
        ex_failed(lm_tensor_accessor_args(a, ra, LM_TENSOR_ACCESSOR_MAX_ARGS, &n), "args") ||
        ex_failed(lm_tensor_accessor_args(b, ra + n, LM_TENSOR_ACCESSOR_MAX_ARGS, &m), "args") ||
        ex_failed(
            lm_tensor_accessor_args(c, wa, LM_TENSOR_ACCESSOR_MAX_ARGS, &wc.compile_arg_count),
            "args");
    rc.compile_args = ra;
    rc.compile_arg_count = n + m;
    wc.compile_args = wa;
    bad =
        bad ||
        ex_failed(
            lm_create_kernel(prog, LM_EXAMPLE_DIR "/kernels/read_two.cpp", &core, &rc, &reader),
            "reader") ||
        ex_failed(
            lm_create_kernel(prog, LM_EXAMPLE_DIR "/kernels/write_tiles.cpp", &core, &wc, &writer),
            "writer") ||
        ex_failed(lm_create_kernel(prog, LM_EXAMPLE_DIR "/kernels/chain.cpp", &core, &cc, &compute),
                  "compute") ||
        ex_failed(lm_set_runtime_args(prog, reader, c11,
                                      (uint32_t[]){ex_address(a), ex_address(b), N_TILES}, 3),
                  "reader args") ||
        ex_failed(lm_set_runtime_args(prog, writer, c11, (uint32_t[]){ex_address(c), N_TILES}, 2),
                  "writer args") ||
        ex_failed(lm_set_runtime_args(prog, compute, c11, (uint32_t[]){N_TILES}, 1),
                  "compute args") ||
        ex_failed(lm_enqueue_program(cq, prog, false), "enqueue") ||
        ex_failed(lm_enqueue_read_buffer(cq, c, vc, true), "read c") ||
        ex_capture_output(cq, c, "c", capture) || ex_capture_end(dev, capture);
    uint32_t wrong = 0;
    for (uint32_t i = 0; !bad && i < ELEMS; i++) {
        volatile float p = va[i] * vb[i];
        volatile float s = p + va[i];
        float mx = s > vb[i] ? s : vb[i];
        volatile float want = mx / vb[i];
        wrong += vc[i] != want;
    }
    bool pass = !bad && wrong == 0;
    printf("%s sfpu_chain (C host): %u float32 tiles, %u wrong\n", pass ? "PASS" : "FAIL", N_TILES,
           wrong);
    if (ex_failed(lm_device_close(dev), "close device")) pass = false;
    return pass ? 0 : 1;
}
