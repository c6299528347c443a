/* The matmul_multi_core example with lightmetal's C API: lm_split_work_to_cores
 * decides each core's run of output tiles, lm_set_runtime_args_each gives
 * every core its own arguments in one call per kernel. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "example.h"

#define M 256u
#define K 64u
#define N 320u
#define MT (M / 32)
#define KT (K / 32)
#define NT (N / 32)
#define MAX_CORES 64u

int main(int argc, char **argv) {
    const char *capture = ex_capture_path(argc, argv);
    static float a[M * K], b[K * N], c[M * N];
    static uint16_t ta[M * K], tb[K * N], tc[M * N];
    ex_random(a, M * K, 5, -1.0f, 1.0f);
    ex_random(b, K * N, 6, -1.0f, 1.0f);
    ex_round_bf16(a, M * K);
    ex_round_bf16(b, K * N);
    uint32_t tile = (uint32_t)lm_tile_size(LM_DATA_FORMAT_FLOAT16_B);

    lm_device *dev = NULL;
    lm_device_info info;
    if (ex_failed(lm_tilize(a, M, K, LM_DATA_FORMAT_FLOAT16_B, ta, sizeof ta), "tilize a") ||
        ex_failed(lm_tilize(b, K, N, LM_DATA_FORMAT_FLOAT16_B, tb, sizeof tb), "tilize b") ||
        ex_failed(lm_device_open(NULL, &dev), "open device") ||
        ex_failed(lm_device_get_info(dev, &info), "device info"))
        return 1;
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_work_split split;
    lm_buffer da, db, dc;
    lm_program prog;
    lm_kernel reader, writer, compute;
    lm_kernel_config rc, wc, cc;
    lm_kernel_config_init(&rc, LM_PROCESSOR_DM1);
    lm_kernel_config_init(&wc, LM_PROCESSOR_DM0);
    lm_kernel_config_init(&cc, LM_PROCESSOR_COMPUTE);
    cc.fp32_dest_acc_en = true;
    uint32_t rct[2 * LM_TENSOR_ACCESSOR_MAX_ARGS], wct[LM_TENSOR_ACCESSOR_MAX_ARGS], n0 = 0, n1 = 0,
                                                                                     n2 = 0;
    int bad =
        ex_capture_begin(dev, capture) ||
        ex_failed(
            lm_split_work_to_cores((lm_core){info.grid_x, info.grid_y}, MT * NT, true, &split),
            "split work") ||
        split.num_cores > MAX_CORES ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, sizeof ta, tile, &da), "buffer a") ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, sizeof tb, tile, &db), "buffer b") ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, sizeof tc, tile, &dc), "buffer c") ||
        ex_capture_input(da, "a", capture) || ex_capture_input(db, "b", capture) ||
        ex_failed(lm_enqueue_write_buffer(cq, da, ta, false), "write a") ||
        ex_failed(lm_enqueue_write_buffer(cq, db, tb, false), "write b") ||
        ex_failed(lm_create_program(dev, &prog), "program") ||
        ex_failed(ex_cb(prog, &split.all_cores, 0, LM_DATA_FORMAT_FLOAT16_B, 2), "cb 0") ||
        ex_failed(ex_cb(prog, &split.all_cores, 1, LM_DATA_FORMAT_FLOAT16_B, 2), "cb 1") ||
        ex_failed(ex_cb(prog, &split.all_cores, 16, LM_DATA_FORMAT_FLOAT16_B, 2), "cb 16") ||
        ex_failed(lm_tensor_accessor_args(da, rct, LM_TENSOR_ACCESSOR_MAX_ARGS, &n0), "args") ||
        ex_failed(lm_tensor_accessor_args(db, rct + n0, LM_TENSOR_ACCESSOR_MAX_ARGS, &n1),
                  "args") ||
        ex_failed(lm_tensor_accessor_args(dc, wct, LM_TENSOR_ACCESSOR_MAX_ARGS, &n2), "args");
    if (!bad) {
        rc.compile_args = rct;
        rc.compile_arg_count = n0 + n1;
        wc.compile_args = wct;
        wc.compile_arg_count = n2;
        bad = ex_failed(lm_create_kernel(
                            prog, LM_EXAMPLE_DIR "/kernels/reader_mm_output_tiles_partitioned.cpp",
                            &split.all_cores, &rc, &reader),
                        "reader") ||
              ex_failed(lm_create_kernel(
                            prog, LM_EXAMPLE_DIR "/kernels/writer_unary_interleaved_start_id.cpp",
                            &split.all_cores, &wc, &writer),
                        "writer") ||
              ex_failed(lm_create_kernel(prog, LM_EXAMPLE_DIR "/kernels/mm.cpp", &split.all_cores,
                                         &cc, &compute),
                        "compute");
    }
    if (!bad) {
        /* Row-major over the grid, as the split numbered the cores. */
        static lm_core cores[MAX_CORES];
        static uint32_t ra[MAX_CORES][6], wa[MAX_CORES][3], ca[MAX_CORES][2];
        const uint32_t *rp[MAX_CORES], *wp[MAX_CORES], *cp[MAX_CORES];
        uint32_t rn[MAX_CORES], wn[MAX_CORES], cn[MAX_CORES], first = 0;
        uint32_t n1_cores =
            split.units_per_core_group_2 ? MT * NT % split.num_cores : split.num_cores;
        for (uint32_t i = 0; i < split.num_cores; i++) {
            uint32_t n = i < n1_cores ? split.units_per_core_group_1 : split.units_per_core_group_2;
            cores[i] = (lm_core){i % info.grid_x, i / info.grid_x};
            uint32_t r[] = {ex_address(da), ex_address(db), KT, NT, first, n};
            memcpy(ra[i], r, sizeof r);
            wa[i][0] = ex_address(dc), wa[i][1] = n, wa[i][2] = first;
            ca[i][0] = n, ca[i][1] = KT;
            rp[i] = ra[i], wp[i] = wa[i], cp[i] = ca[i];
            rn[i] = 6, wn[i] = 3, cn[i] = 2;
            first += n;
        }
        bad = ex_failed(lm_set_runtime_args_each(prog, reader, cores, split.num_cores, rp, rn),
                        "reader args") ||
              ex_failed(lm_set_runtime_args_each(prog, writer, cores, split.num_cores, wp, wn),
                        "writer args") ||
              ex_failed(lm_set_runtime_args_each(prog, compute, cores, split.num_cores, cp, cn),
                        "compute args") ||
              ex_failed(lm_enqueue_program(cq, prog, false), "enqueue") ||
              ex_failed(lm_enqueue_read_buffer(cq, dc, tc, true), "read c") ||
              ex_capture_output(cq, dc, "c", capture) || ex_capture_end(dev, capture) ||
              ex_failed(lm_untilize(tc, sizeof tc, LM_DATA_FORMAT_FLOAT16_B, M, N, c, sizeof c),
                        "untilize c");
    }
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
    printf("%s matmul_multi_core (C host): %ux%ux%u on %u cores, %u values outside tolerance\n",
           pass ? "PASS" : "FAIL", M, K, N, split.num_cores, outside);
    if (ex_failed(lm_device_close(dev), "close device")) pass = false;
    return pass ? 0 : 1;
}
