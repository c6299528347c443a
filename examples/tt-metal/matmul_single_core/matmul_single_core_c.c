/* The matmul_single_core example with lightmetal's C API: the same kernels
 * and check. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "example.h"

#define M 64u
#define K 96u
#define N 64u

int main(int argc, char **argv) {
    const char *capture = ex_capture_path(argc, argv);
    static float a[M * K], b[K * N], c[M * N];
    static uint16_t ta[M * K], tb[K * N], tc[M * N];
    ex_random(a, M * K, 42, -1.0f, 1.0f);
    ex_random(b, K * N, 43, -1.0f, 1.0f);
    ex_round_bf16(a, M * K);
    ex_round_bf16(b, K * N);
    uint32_t tile = (uint32_t)lm_tile_size(LM_DATA_FORMAT_FLOAT16_B);

    lm_device *dev = NULL;
    lm_buffer da, db, dc;
    lm_program prog;
    lm_kernel reader, writer, compute;
    lm_core_range_set core = lm_core_range_set_of(0, 0, 0, 0);
    lm_kernel_config rc, wc, cc;
    lm_kernel_config_init(&rc, LM_PROCESSOR_DM1);
    lm_kernel_config_init(&wc, LM_PROCESSOR_DM0);
    lm_kernel_config_init(&cc, LM_PROCESSOR_COMPUTE);
    uint32_t ct[] = {M / 32, K / 32, N / 32};
    cc.compile_args = ct;
    cc.compile_arg_count = 3;
    cc.fp32_dest_acc_en = true;
    if (ex_failed(lm_tilize(a, M, K, LM_DATA_FORMAT_FLOAT16_B, ta, sizeof ta), "tilize a") ||
        ex_failed(lm_tilize(b, K, N, LM_DATA_FORMAT_FLOAT16_B, tb, sizeof tb), "tilize b") ||
        ex_failed(lm_device_open(NULL, &dev), "open device"))
        return 1;
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_core c0 = {0, 0};
    int bad =
        ex_capture_begin(dev, capture) ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, sizeof ta, tile, &da), "buffer a") ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, sizeof tb, tile, &db), "buffer b") ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, sizeof tc, tile, &dc), "buffer c") ||
        ex_capture_input(da, "a", capture) || ex_capture_input(db, "b", capture) ||
        ex_failed(lm_enqueue_write_buffer(cq, da, ta, false), "write a") ||
        ex_failed(lm_enqueue_write_buffer(cq, db, tb, false), "write b") ||
        ex_failed(lm_create_program(dev, &prog), "program") ||
        ex_failed(ex_cb(prog, &core, 0, LM_DATA_FORMAT_FLOAT16_B, 2), "cb 0") ||
        ex_failed(ex_cb(prog, &core, 1, LM_DATA_FORMAT_FLOAT16_B, 2), "cb 1") ||
        ex_failed(ex_cb(prog, &core, 16, LM_DATA_FORMAT_FLOAT16_B, 2), "cb 16") ||
        ex_failed(lm_create_kernel(prog, LM_EXAMPLE_DIR "/kernels/reader_single_core_mm.cpp", &core,
                                   &rc, &reader),
                  "reader") ||
        ex_failed(lm_create_kernel(prog, LM_EXAMPLE_DIR "/kernels/writer_single_core_mm.cpp", &core,
                                   &wc, &writer),
                  "writer") ||
        ex_failed(lm_create_kernel(prog, LM_EXAMPLE_DIR "/kernels/mm.cpp", &core, &cc, &compute),
                  "compute") ||
        ex_failed(lm_set_runtime_args(
                      prog, reader, c0,
                      (uint32_t[]){ex_address(da), ex_address(db), M / 32, K / 32, N / 32}, 5),
                  "reader args") ||
        ex_failed(
            lm_set_runtime_args(prog, writer, c0, (uint32_t[]){ex_address(dc), M / 32, N / 32}, 3),
            "writer args") ||
        ex_failed(lm_enqueue_program(cq, prog, false), "enqueue") ||
        ex_failed(lm_enqueue_read_buffer(cq, dc, tc, true), "read c") ||
        ex_capture_output(cq, dc, "c", capture) || ex_capture_end(dev, capture) ||
        ex_failed(lm_untilize(tc, sizeof tc, LM_DATA_FORMAT_FLOAT16_B, M, N, c, sizeof c),
                  "untilize c");
    uint32_t outside = 0;
    for (uint32_t i = 0; !bad && i < M; i++)
        for (uint32_t j = 0; j < N; j++) {
            double ref = 0, mag = 0;
            for (uint32_t q = 0; q < K; q++) {
                double p = (double)a[i * K + q] * b[q * N + j];
                ref += p;
                mag += fabs(p);
            }
            outside += fabs(c[i * N + j] - ref) > fabs(ref) * 0x1p-8 + mag * 0x1p-16;
        }
    bool pass = !bad && outside == 0;
    printf("%s matmul_single_core (C host): %ux%ux%u, %u values outside tolerance\n",
           pass ? "PASS" : "FAIL", M, K, N, outside);
    if (ex_failed(lm_device_close(dev), "close device")) pass = false;
    return pass ? 0 : 1;
}
