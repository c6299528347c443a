/* The pad example with lightmetal's C API: the same kernel on both data
 * movement processors, its shapes as named compile-time args. */
#include <stdint.h>
#include <stdio.h>

#include "example.h"

#define H 40u
#define W 64u
#define HP 48u
#define WP 96u

int main(int argc, char **argv) {
    const char *capture = ex_capture_path(argc, argv);
    static float f[H * W];
    static uint16_t in[H * W], out[HP * WP];
    for (uint32_t i = 0; i < H * W; i++)
        f[i] = (float)(i % 251);
    lm_float_to_bfloat16(f, in, H * W);
    float padf = -1.5f;
    uint16_t pad;
    lm_float_to_bfloat16(&padf, &pad, 1);
    lm_device *dev = NULL;
    if (ex_failed(lm_device_open(NULL, &dev), "open device")) return 1;
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_buffer src, dst;
    lm_program prog;
    lm_kernel k0, k1;
    lm_core_range_set core = lm_core_range_set_of(0, 0, 0, 0);
    lm_circular_buffer_config cb;
    lm_circular_buffer_config_init(&cb);
    cb.total_size = 2 * WP * 2;
    cb.index_count = 1;
    cb.indices[0] = (lm_cb_index_config){0, LM_DATA_FORMAT_FLOAT16_B, WP * 2};
    lm_circular_buffer h;
    uint32_t ct[2 * LM_TENSOR_ACCESSOR_MAX_ARGS], n = 0, m = 0;
    lm_named_compile_arg shapes[] = {{"H", H}, {"W", W}, {"Hp", HP}, {"Wp", WP}, {"pad_bits", pad}};
    lm_kernel_config c0, c1;
    lm_kernel_config_init(&c0, LM_PROCESSOR_DM0);
    lm_kernel_config_init(&c1, LM_PROCESSOR_DM1);
    int bad =
        ex_capture_begin(dev, capture) ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, sizeof in, W * 2, &src), "buffer src") ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, sizeof out, WP * 2, &dst), "buffer dst") ||
        ex_capture_input(src, "in", capture) ||
        ex_failed(lm_enqueue_write_buffer(cq, src, in, false), "write src") ||
        ex_failed(lm_create_program(dev, &prog), "program") ||
        ex_failed(lm_create_circular_buffer(prog, &core, &cb, &h), "cb") ||
        ex_failed(lm_tensor_accessor_args(src, ct, LM_TENSOR_ACCESSOR_MAX_ARGS, &n), "args") ||
        ex_failed(lm_tensor_accessor_args(dst, ct + n, LM_TENSOR_ACCESSOR_MAX_ARGS, &m), "args");
    lm_kernel_config *cfgs[] = {&c0, &c1};
    for (int i = 0; i < 2; i++) {
        cfgs[i]->compile_args = ct;
        cfgs[i]->compile_arg_count = n + m;
        cfgs[i]->named_compile_args = shapes;
        cfgs[i]->named_compile_arg_count = 5;
    }
    bad = bad ||
          ex_failed(lm_create_kernel(prog, LM_EXAMPLE_DIR "/kernels/pad_rows.cpp", &core, &c0, &k0),
                    "kernel 0") ||
          ex_failed(lm_create_kernel(prog, LM_EXAMPLE_DIR "/kernels/pad_rows.cpp", &core, &c1, &k1),
                    "kernel 1") ||
          ex_failed(lm_set_runtime_args(prog, k0, (lm_core){0, 0},
                                        (uint32_t[]){ex_address(src), ex_address(dst), 0, 2}, 4),
                    "args 0") ||
          ex_failed(lm_set_runtime_args(prog, k1, (lm_core){0, 0},
                                        (uint32_t[]){ex_address(src), ex_address(dst), 1, 2}, 4),
                    "args 1") ||
          ex_failed(lm_enqueue_program(cq, prog, false), "enqueue") ||
          ex_failed(lm_enqueue_read_buffer(cq, dst, out, true), "read dst") ||
          ex_capture_output(cq, dst, "out", capture) || ex_capture_end(dev, capture);
    uint32_t wrong = 0;
    for (uint32_t r = 0; !bad && r < HP; r++)
        for (uint32_t c = 0; c < WP; c++)
            wrong += out[r * WP + c] != (r < H && c < W ? in[r * W + c] : pad);
    bool pass = !bad && wrong == 0;
    printf("%s pad (C host): %ux%u -> %ux%u, %u elements wrong\n", pass ? "PASS" : "FAIL", H, W, HP,
           WP, wrong);
    if (ex_failed(lm_device_close(dev), "close device")) pass = false;
    return pass ? 0 : 1;
}
