/* The eltwise_binary example with lightmetal's C API and the classic reader.
 * Prints PASS when every element is bf16(a + b). */
#include <stdint.h>
#include <stdio.h>

#include "example.h"

#define N_TILES 16u
#define ELEMS (N_TILES * 1024u)
#define TILE_BYTES 2048u

static float bf16(float v) {
    uint16_t h;
    lm_float_to_bfloat16(&v, &h, 1);
    lm_bfloat16_to_float(&h, &v, 1);
    return v;
}

int main(int argc, char **argv) {
    const char *capture = ex_capture_path(argc, argv);
    static float fa[ELEMS], fb[ELEMS], fc[ELEMS];
    static uint16_t ha[ELEMS], hb[ELEMS], hc[ELEMS];
    ex_random(fa, ELEMS, 1, -4.0f, 4.0f);
    ex_random(fb, ELEMS, 2, -4.0f, 4.0f);
    lm_float_to_bfloat16(fa, ha, ELEMS);
    lm_float_to_bfloat16(fb, hb, ELEMS);

    lm_device *dev = NULL;
    if (ex_failed(lm_device_open(NULL, &dev), "open device")) return 1;
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_buffer a, b, c;
    lm_program prog;
    lm_kernel reader, writer, compute;
    lm_core_range_set core = lm_core_range_set_of(0, 0, 0, 0);
    lm_kernel_config rc, wc, cc;
    lm_kernel_config_init(&rc, LM_PROCESSOR_DM1);
    lm_kernel_config_init(&wc, LM_PROCESSOR_DM0);
    lm_kernel_config_init(&cc, LM_PROCESSOR_COMPUTE);
    uint32_t rargs[2 * LM_TENSOR_ACCESSOR_MAX_ARGS], wargs[LM_TENSOR_ACCESSOR_MAX_ARGS],
        n = 0, m = 0, w = 0;
    int bad =
        ex_capture_begin(dev, capture) ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, ELEMS * 2, TILE_BYTES, &a), "buffer a") ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, ELEMS * 2, TILE_BYTES, &b), "buffer b") ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, ELEMS * 2, TILE_BYTES, &c), "buffer c") ||
        ex_capture_input(a, "a", capture) || ex_capture_input(b, "b", capture) ||
        ex_failed(lm_enqueue_write_buffer(cq, a, ha, false), "write a") ||
        ex_failed(lm_enqueue_write_buffer(cq, b, hb, false), "write b") ||
        ex_failed(lm_create_program(dev, &prog), "create program") ||
        ex_failed(ex_cb(prog, &core, 0, LM_DATA_FORMAT_FLOAT16_B, 2), "cb 0") ||
        ex_failed(ex_cb(prog, &core, 1, LM_DATA_FORMAT_FLOAT16_B, 2), "cb 1") ||
        ex_failed(ex_cb(prog, &core, 16, LM_DATA_FORMAT_FLOAT16_B, 2), "cb 16") ||
        ex_failed(lm_tensor_accessor_args(a, rargs, LM_TENSOR_ACCESSOR_MAX_ARGS, &n), "args") ||
        ex_failed(lm_tensor_accessor_args(b, rargs + n, LM_TENSOR_ACCESSOR_MAX_ARGS, &m), "args") ||
        ex_failed(lm_tensor_accessor_args(c, wargs, LM_TENSOR_ACCESSOR_MAX_ARGS, &w), "args");
    if (!bad) {
        rc.compile_args = rargs;
        rc.compile_arg_count = n + m;
        wc.compile_args = wargs;
        wc.compile_arg_count = w;
        uint32_t ra[] = {ex_address(a), ex_address(b), N_TILES}, wa[] = {ex_address(c), N_TILES},
                 ca[] = {N_TILES};
        lm_core c0 = {0, 0};
        bad = ex_failed(lm_create_kernel(prog, LM_EXAMPLE_DIR "/kernels/read_tiles.cpp", &core, &rc,
                                         &reader),
                        "reader") ||
              ex_failed(lm_create_kernel(prog, LM_EXAMPLE_DIR "/kernels/write_tiles.cpp", &core,
                                         &wc, &writer),
                        "writer") ||
              ex_failed(lm_create_kernel(prog, LM_EXAMPLE_DIR "/kernels/tiles_add.cpp", &core, &cc,
                                         &compute),
                        "compute") ||
              ex_failed(lm_set_runtime_args(prog, reader, c0, ra, 3), "reader args") ||
              ex_failed(lm_set_runtime_args(prog, writer, c0, wa, 2), "writer args") ||
              ex_failed(lm_set_runtime_args(prog, compute, c0, ca, 1), "compute args") ||
              ex_failed(lm_enqueue_program(cq, prog, false), "enqueue") ||
              ex_failed(lm_enqueue_read_buffer(cq, c, hc, true), "read c") ||
              ex_capture_output(cq, c, "c", capture) || ex_capture_end(dev, capture);
    }
    uint32_t wrong = 0;
    if (!bad) {
        lm_bfloat16_to_float(ha, fa, ELEMS);
        lm_bfloat16_to_float(hb, fb, ELEMS);
        lm_bfloat16_to_float(hc, fc, ELEMS);
        for (uint32_t i = 0; i < ELEMS; i++)
            wrong += fc[i] != bf16(fa[i] + fb[i]);
    }
    bool pass = !bad && wrong == 0;
    printf("%s eltwise_binary (C host): %u bf16 tiles added, %u wrong\n", pass ? "PASS" : "FAIL",
           N_TILES, wrong);
    if (ex_failed(lm_device_close(dev), "close device")) pass = false;
    return pass ? 0 : 1;
}
