/* The sharded_row_major example with lightmetal's C API: a width-sharded
 * row-major tensor doubled in place by the cores holding it. */
#include <stdint.h>
#include <stdio.h>

#include "example.h"

#define ROWS 16u
#define COLS 64u
#define PAGE_ELEMS 32u

int main(int argc, char **argv) {
    const char *capture = ex_capture_path(argc, argv);
    static float f[ROWS * COLS], g[ROWS * COLS];
    static uint16_t in[ROWS * COLS], out[ROWS * COLS];
    for (uint32_t i = 0; i < ROWS * COLS; i++)
        f[i] = (float)i * 0.5f + 1.0f;
    lm_float_to_bfloat16(f, in, ROWS * COLS);
    lm_bfloat16_to_float(in, f, ROWS * COLS);
    lm_device *dev = NULL;
    if (ex_failed(lm_device_open(NULL, &dev), "open device")) return 1;
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_core_range_set cores = lm_core_range_set_of(0, 0, 1, 0);
    lm_buffer_config bc;
    lm_buffer_config_init(&bc);
    bc.type = LM_BUFFER_L1;
    bc.layout = LM_BUFFER_WIDTH_SHARDED;
    bc.size = sizeof in;
    bc.page_size = PAGE_ELEMS * 2;
    bc.shard = (lm_shard_spec){cores, ROWS, 1, ROWS, COLS / PAGE_ELEMS, false};
    lm_buffer t;
    lm_program prog;
    lm_kernel k;
    lm_kernel_config cfg;
    lm_kernel_config_init(&cfg, LM_PROCESSOR_DM0);
    uint32_t ct[LM_TENSOR_ACCESSOR_MAX_ARGS + 2], n = 0;
    int bad = ex_capture_begin(dev, capture) ||
              ex_failed(lm_create_buffer(dev, &bc, &t), "sharded buffer") ||
              ex_failed(lm_enqueue_write_buffer(cq, t, in, false), "write") ||
              ex_failed(lm_create_program(dev, &prog), "program") ||
              ex_failed(ex_cb(prog, &cores, 0, LM_DATA_FORMAT_FLOAT16_B, 1), "cb") ||
              ex_failed(lm_tensor_accessor_args(t, ct, LM_TENSOR_ACCESSOR_MAX_ARGS, &n), "args");
    ct[n] = PAGE_ELEMS;
    ct[n + 1] = ROWS;
    cfg.compile_args = ct;
    cfg.compile_arg_count = n + 2;
    bad = bad || ex_failed(lm_create_kernel(prog, LM_EXAMPLE_DIR "/kernels/double_shard.cpp",
                                            &cores, &cfg, &k),
                           "kernel");
    for (uint32_t x = 0; x < 2 && !bad; x++)
        bad = ex_failed(
            lm_set_runtime_args(prog, k, (lm_core){x, 0}, (uint32_t[]){ex_address(t), x}, 2),
            "args");
    bad = bad || ex_failed(lm_enqueue_program(cq, prog, false), "enqueue") ||
          ex_failed(lm_enqueue_read_buffer(cq, t, out, true), "read") ||
          ex_capture_output(cq, t, "t", capture) || ex_capture_end(dev, capture);
    uint32_t wrong = 0;
    lm_bfloat16_to_float(out, g, ROWS * COLS);
    for (uint32_t i = 0; !bad && i < ROWS * COLS; i++)
        wrong += g[i] != 2.0f * f[i];
    bool pass = !bad && wrong == 0;
    printf("%s sharded_row_major (C host): %ux%u elements over 2 cores, %u wrong\n",
           pass ? "PASS" : "FAIL", ROWS, COLS, wrong);
    if (ex_failed(lm_device_close(dev), "close device")) pass = false;
    return pass ? 0 : 1;
}
