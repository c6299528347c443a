/* eltwise_sfpu: out = exp(a) on bfloat16 tiles with an SFPU operation, spread
 * over 16 cores (each core takes a contiguous run of tiles).
 *
 * Tolerance: the device computes exp to within 0.6 float32 ulp and rounds to
 * bfloat16; the host reference is exp in double rounded to bfloat16. They may
 * differ by one bfloat16 ulp where the two roundings part, so each value must
 * be within a relative 2^-7 of the reference. Prints PASS or FAIL.
 */
#include "../common/example.h"

#define ROWS 512
#define COLS 256
#define TILES (ROWS / 32 * COLS / 32)
#define CORES_X 4
#define CORES_Y 4
#define PER_CORE (TILES / (CORES_X * CORES_Y))

int main(int argc, char **argv) {
    const char *capture = ex_capture_path(argc, argv);
    static float a[ROWS * COLS], out[ROWS * COLS], ref[ROWS * COLS];
    static uint16_t ta[ROWS * COLS], tout[ROWS * COLS];
    ex_random(a, ROWS * COLS, 3, -8.0f, 8.0f);
    ex_round_bf16(a, ROWS * COLS);
    for (int i = 0; i < ROWS * COLS; i++)
        ref[i] = (float)exp((double)a[i]);
    ex_round_bf16(ref, ROWS * COLS);

    const uint32_t tile = (uint32_t)lm_tile_size(LM_DATA_FORMAT_FLOAT16_B);
    lm_device *dev;
    lm_buffer da, dout;
    lm_program prog;
    lm_kernel reader, compute, writer;
    lm_core_range_set cores = lm_core_range_set_of(0, 0, CORES_X - 1, CORES_Y - 1);
    if (ex_failed(lm_tilize(a, ROWS, COLS, LM_DATA_FORMAT_FLOAT16_B, ta, sizeof ta), "tilize") ||
        ex_failed(lm_device_open(NULL, &dev), "open device") || ex_capture_begin(dev, capture) ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, sizeof ta, tile, &da), "buffer a") ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, sizeof tout, tile, &dout), "buffer out") ||
        ex_failed(lm_create_program(dev, &prog), "program") ||
        ex_failed(ex_cb(prog, &cores, 0, LM_DATA_FORMAT_FLOAT16_B, 2), "cb 0") ||
        ex_failed(ex_cb(prog, &cores, 16, LM_DATA_FORMAT_FLOAT16_B, 2), "cb 16") ||
        ex_failed(ex_kernel(prog, LM_EXAMPLE_DIR "/../common/kernels/reader_tiles.c", &cores,
                            LM_PROCESSOR_DM0, &reader),
                  "reader kernel") ||
        ex_failed(ex_kernel(prog, LM_EXAMPLE_DIR "/kernels/exp.c", &cores, LM_PROCESSOR_COMPUTE,
                            &compute),
                  "compute kernel") ||
        ex_failed(ex_kernel(prog, LM_EXAMPLE_DIR "/../common/kernels/writer_tiles.c", &cores,
                            LM_PROCESSOR_DM1, &writer),
                  "writer kernel"))
        return 1;
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    int bad = 0;
    for (uint32_t y = 0; y < CORES_Y; y++)
        for (uint32_t x = 0; x < CORES_X; x++) {
            uint32_t first = (y * CORES_X + x) * PER_CORE;
            uint32_t rargs[] = {PER_CORE, ex_address(da), 0, first};
            uint32_t cargs[] = {PER_CORE};
            uint32_t wargs[] = {PER_CORE, ex_address(dout), first};
            lm_core c = {x, y};
            bad |= ex_failed(lm_set_runtime_args(prog, reader, c, rargs, 4), "args");
            bad |= ex_failed(lm_set_runtime_args(prog, compute, c, cargs, 1), "args");
            bad |= ex_failed(lm_set_runtime_args(prog, writer, c, wargs, 3), "args");
        }
    if (bad || ex_failed(lm_enqueue_write_buffer(cq, da, ta, false), "write a") ||
        ex_failed(lm_enqueue_program(cq, prog, false), "run") ||
        ex_failed(lm_enqueue_read_buffer(cq, dout, tout, true), "read out") ||
        ex_failed(
            lm_untilize(tout, sizeof tout, LM_DATA_FORMAT_FLOAT16_B, ROWS, COLS, out, sizeof out),
            "untilize") ||
        ex_capture_input(da, "a", capture) || ex_capture_output(cq, dout, "out", capture) ||
        ex_capture_end(dev, capture))
        return 1;
    int outside = 0, exact = 0;
    for (int i = 0; i < ROWS * COLS; i++) {
        exact += out[i] == ref[i];
        outside += fabsf(out[i] - ref[i]) > fabsf(ref[i]) * 0x1p-7f;
    }
    printf("exp over %d bfloat16 values on %d cores: %d exact, %d outside tolerance\n", ROWS * COLS,
           CORES_X * CORES_Y, exact, outside);
    lm_release_program(prog);
    bad = outside != 0;
    bad |= ex_failed(lm_device_close(dev), "close device");
    printf("%s\n", bad ? "FAIL" : "PASS");
    return bad;
}
