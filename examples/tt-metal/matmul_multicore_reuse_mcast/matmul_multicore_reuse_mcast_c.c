/* The matmul_multicore_reuse_mcast example with lightmetal's C API: the four
 * semaphores' ids reach the reader as named compile-time args. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "example.h"

#define M 256u
#define K 192u
#define N 256u
#define KT (K / 32)
#define NT (N / 32)
#define PM 2u
#define PN 4u
#define BW 2u
#define GX (NT / PN)
#define GY ((M / 32) / PM)

int main(int argc, char **argv) {
    const char *capture = ex_capture_path(argc, argv);
    static float a[M * K], b[K * N], c[M * N];
    static uint16_t ta[M * K], tb[K * N], tc[M * N];
    ex_random(a, M * K, 9, -1.0f, 1.0f);
    ex_random(b, K * N, 10, -1.0f, 1.0f);
    ex_round_bf16(a, M * K);
    ex_round_bf16(b, K * N);
    uint32_t tile = (uint32_t)lm_tile_size(LM_DATA_FORMAT_FLOAT16_B);
    lm_device *dev = NULL;
    if (ex_failed(lm_tilize(a, M, K, LM_DATA_FORMAT_FLOAT16_B, ta, sizeof ta), "tilize a") ||
        ex_failed(lm_tilize(b, K, N, LM_DATA_FORMAT_FLOAT16_B, tb, sizeof tb), "tilize b") ||
        ex_failed(lm_device_open(NULL, &dev), "open device"))
        return 1;
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_core_range_set cores = lm_core_range_set_of(0, 0, GX - 1, GY - 1);
    lm_buffer da, db, dc;
    lm_program prog;
    lm_kernel reader, writer, compute;
    lm_kernel_config rc, wc, cc;
    lm_named_compile_arg sems[] = {{"a_ready", 0}, {"a_valid", 0}, {"b_ready", 0}, {"b_valid", 0}};
    lm_kernel_config_init(&rc, LM_PROCESSOR_DM1);
    lm_kernel_config_init(&wc, LM_PROCESSOR_DM0);
    lm_kernel_config_init(&cc, LM_PROCESSOR_COMPUTE);
    uint32_t rct[5 + 2 * LM_TENSOR_ACCESSOR_MAX_ARGS] = {KT, NT, PM, PN, BW};
    uint32_t wct[3 + LM_TENSOR_ACCESSOR_MAX_ARGS] = {NT, PM, PN};
    uint32_t cct[] = {KT, NT, PM, PN, BW}, n0 = 0, n1 = 0, n2 = 0;
    int bad =
        ex_capture_begin(dev, capture) ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, sizeof ta, tile, &da), "buffer a") ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, sizeof tb, tile, &db), "buffer b") ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, sizeof tc, tile, &dc), "buffer c") ||
        ex_capture_input(da, "a", capture) || ex_capture_input(db, "b", capture) ||
        ex_failed(lm_enqueue_write_buffer(cq, da, ta, false), "write a") ||
        ex_failed(lm_enqueue_write_buffer(cq, db, tb, false), "write b") ||
        ex_failed(lm_create_program(dev, &prog), "program") ||
        ex_failed(ex_cb(prog, &cores, 0, LM_DATA_FORMAT_FLOAT16_B, 2 * PM * BW), "cb 0") ||
        ex_failed(ex_cb(prog, &cores, 1, LM_DATA_FORMAT_FLOAT16_B, 2 * BW * PN), "cb 1") ||
        ex_failed(ex_cb(prog, &cores, 16, LM_DATA_FORMAT_FLOAT16_B, PM * PN), "cb 16") ||
        ex_failed(lm_create_semaphore(prog, &cores, 0, &sems[0].value), "semaphore") ||
        ex_failed(lm_create_semaphore(prog, &cores, 0, &sems[1].value), "semaphore") ||
        ex_failed(lm_create_semaphore(prog, &cores, 0, &sems[2].value), "semaphore") ||
        ex_failed(lm_create_semaphore(prog, &cores, 0, &sems[3].value), "semaphore") ||
        ex_failed(lm_tensor_accessor_args(da, rct + 5, LM_TENSOR_ACCESSOR_MAX_ARGS, &n0), "args") ||
        ex_failed(lm_tensor_accessor_args(db, rct + 5 + n0, LM_TENSOR_ACCESSOR_MAX_ARGS, &n1),
                  "args") ||
        ex_failed(lm_tensor_accessor_args(dc, wct + 3, LM_TENSOR_ACCESSOR_MAX_ARGS, &n2), "args");
    rc.named_compile_args = sems;
    rc.named_compile_arg_count = 4;
    rc.compile_args = rct;
    rc.compile_arg_count = 5 + n0 + n1;
    wc.compile_args = wct;
    wc.compile_arg_count = 3 + n2;
    cc.compile_args = cct;
    cc.compile_arg_count = 5;
    cc.fp32_dest_acc_en = true;
    bad = bad ||
          ex_failed(lm_create_kernel(prog, LM_EXAMPLE_DIR "/kernels/reader_mcast.cpp", &cores, &rc,
                                     &reader),
                    "reader") ||
          ex_failed(lm_create_kernel(prog, LM_EXAMPLE_DIR "/kernels/writer_block.cpp", &cores, &wc,
                                     &writer),
                    "writer") ||
          ex_failed(lm_create_kernel(prog, LM_EXAMPLE_DIR "/kernels/bmm_reuse.cpp", &cores, &cc,
                                     &compute),
                    "compute");
    for (uint32_t y = 0; y < GY && !bad; y++)
        for (uint32_t x = 0; x < GX && !bad; x++) {
            lm_core noc;
            bad = ex_failed(lm_worker_core_from_logical_core(dev, (lm_core){x, y}, &noc), "noc");
            uint32_t ra[] = {ex_address(da), ex_address(db), noc.x, noc.y, GX, GY};
            uint32_t wa[] = {ex_address(dc), y * PM, x * PN};
            bad = bad ||
                  ex_failed(lm_set_runtime_args(prog, reader, (lm_core){x, y}, ra, 6), "args") ||
                  ex_failed(lm_set_runtime_args(prog, writer, (lm_core){x, y}, wa, 3), "args");
        }
    bad = bad || ex_failed(lm_enqueue_program(cq, prog, false), "enqueue") ||
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
    printf("%s matmul_multicore_reuse_mcast (C host): %ux%ux%u on %ux%u cores, %u values outside "
           "tolerance\n",
           pass ? "PASS" : "FAIL", M, K, N, GX, GY, outside);
    if (ex_failed(lm_device_close(dev), "close device")) pass = false;
    return pass ? 0 : 1;
}
