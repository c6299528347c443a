/* eltwise_binary: out = a + b on bfloat16 tiles, with a reader, a compute and
 * a writer kernel on one core (tt-metal's classic first program).
 *
 * Tolerance: none. The device adds the bfloat16 inputs in float32 and rounds
 * the sum to bfloat16 once; the host reference does the same, so every value
 * must match exactly. Prints PASS or FAIL.
 */
#include "../common/example.h"

#define ROWS 256
#define COLS 256
#define TILES (ROWS / 32 * COLS / 32)

int main(int argc, char **argv) {
    const char *capture = ex_capture_path(argc, argv);
    static float a[ROWS * COLS], b[ROWS * COLS], out[ROWS * COLS], ref[ROWS * COLS];
    static uint16_t ta[ROWS * COLS], tb[ROWS * COLS], tout[ROWS * COLS];
    ex_random(a, ROWS * COLS, 1, -4.0f, 4.0f);
    ex_random(b, ROWS * COLS, 2, -4.0f, 4.0f);
    ex_round_bf16(a, ROWS * COLS);
    ex_round_bf16(b, ROWS * COLS);
    for (int i = 0; i < ROWS * COLS; i++)
        ref[i] = a[i] + b[i];
    ex_round_bf16(ref, ROWS * COLS);

    const uint32_t tile = (uint32_t)lm_tile_size(LM_DATA_FORMAT_FLOAT16_B);
    lm_device *dev;
    lm_buffer da, db, dout;
    lm_program prog;
    lm_kernel reader, compute, writer;
    lm_core_range_set core = lm_core_range_set_of(0, 0, 0, 0);
    if (ex_failed(lm_tilize(a, ROWS, COLS, LM_DATA_FORMAT_FLOAT16_B, ta, sizeof ta), "tilize a") ||
        ex_failed(lm_tilize(b, ROWS, COLS, LM_DATA_FORMAT_FLOAT16_B, tb, sizeof tb), "tilize b") ||
        ex_failed(lm_device_open(NULL, &dev), "open device") || ex_capture_begin(dev, capture) ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, sizeof ta, tile, &da), "buffer a") ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, sizeof tb, tile, &db), "buffer b") ||
        ex_failed(ex_buffer(dev, LM_BUFFER_DRAM, sizeof tout, tile, &dout), "buffer out") ||
        ex_failed(lm_create_program(dev, &prog), "program") ||
        ex_failed(ex_cb(prog, &core, 0, LM_DATA_FORMAT_FLOAT16_B, 2), "cb 0") ||
        ex_failed(ex_cb(prog, &core, 1, LM_DATA_FORMAT_FLOAT16_B, 2), "cb 1") ||
        ex_failed(ex_cb(prog, &core, 16, LM_DATA_FORMAT_FLOAT16_B, 2), "cb 16") ||
        ex_failed(ex_kernel(prog, LM_EXAMPLE_DIR "/../common/kernels/reader_tiles.c", &core,
                            LM_PROCESSOR_DM0, &reader),
                  "reader kernel") ||
        ex_failed(
            ex_kernel(prog, LM_EXAMPLE_DIR "/kernels/add.c", &core, LM_PROCESSOR_COMPUTE, &compute),
            "compute kernel") ||
        ex_failed(ex_kernel(prog, LM_EXAMPLE_DIR "/../common/kernels/writer_tiles.c", &core,
                            LM_PROCESSOR_DM1, &writer),
                  "writer kernel"))
        return 1;
    uint32_t rargs[] = {TILES, ex_address(da), ex_address(db), 0};
    uint32_t cargs[] = {TILES};
    uint32_t wargs[] = {TILES, ex_address(dout), 0};
    lm_core c0 = {0, 0};
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    if (ex_failed(lm_set_runtime_args(prog, reader, c0, rargs, 4), "args") ||
        ex_failed(lm_set_runtime_args(prog, compute, c0, cargs, 1), "args") ||
        ex_failed(lm_set_runtime_args(prog, writer, c0, wargs, 3), "args") ||
        ex_failed(lm_enqueue_write_buffer(cq, da, ta, false), "write a") ||
        ex_failed(lm_enqueue_write_buffer(cq, db, tb, false), "write b") ||
        ex_failed(lm_enqueue_program(cq, prog, false), "run") ||
        ex_failed(lm_enqueue_read_buffer(cq, dout, tout, true), "read out") ||
        ex_failed(
            lm_untilize(tout, sizeof tout, LM_DATA_FORMAT_FLOAT16_B, ROWS, COLS, out, sizeof out),
            "untilize") ||
        ex_capture_input(da, "a", capture) || ex_capture_input(db, "b", capture) ||
        ex_capture_output(cq, dout, "out", capture) || ex_capture_end(dev, capture))
        return 1;
    int mismatches = 0;
    for (int i = 0; i < ROWS * COLS; i++)
        mismatches += memcmp(&out[i], &ref[i], 4) != 0;
    printf("%dx%d bfloat16 add on one core: %d of %d values differ from the host reference\n", ROWS,
           COLS, mismatches, ROWS * COLS);
    lm_release_program(prog);
    int bad = mismatches != 0;
    bad |= ex_failed(lm_device_close(dev), "close device");
    printf("%s\n", bad ? "FAIL" : "PASS");
    return bad;
}
