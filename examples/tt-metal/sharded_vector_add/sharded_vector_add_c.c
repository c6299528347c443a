/* The sharded_vector_add example with lightmetal's C API: height-sharded L1
 * buffers (lm_shard_spec) with circular buffers on the shards. */
#include <stdint.h>
#include <stdio.h>

#include "example.h"

#define CORES 4u
#define PER_CORE 4u
#define TILES (CORES * PER_CORE)
#define ELEMS (TILES * 1024u)

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
    for (uint32_t i = 0; i < ELEMS; i++) {
        fa[i] = (float)(i % 301) / 8.0f;
        fb[i] = -(float)(i % 127) / 4.0f;
    }
    lm_float_to_bfloat16(fa, ha, ELEMS);
    lm_float_to_bfloat16(fb, hb, ELEMS);
    lm_bfloat16_to_float(ha, fa, ELEMS);
    lm_bfloat16_to_float(hb, fb, ELEMS);
    uint32_t tile = (uint32_t)lm_tile_size(LM_DATA_FORMAT_FLOAT16_B);
    lm_device *dev = NULL;
    if (ex_failed(lm_device_open(NULL, &dev), "open device")) return 1;
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_core_range_set cores = lm_core_range_set_of(0, 0, CORES - 1, 0);
    lm_buffer_config bc;
    lm_buffer_config_init(&bc);
    bc.type = LM_BUFFER_L1;
    bc.layout = LM_BUFFER_HEIGHT_SHARDED;
    bc.size = TILES * tile;
    bc.page_size = tile;
    bc.shard = (lm_shard_spec){cores, PER_CORE, 1, TILES, 1, false};
    lm_buffer buf[3];
    lm_program prog;
    lm_kernel k[3];
    int bad = ex_capture_begin(dev, capture);
    for (int i = 0; i < 3 && !bad; i++)
        bad = ex_failed(lm_create_buffer(dev, &bc, &buf[i]), "sharded buffer");
    bad = bad || ex_capture_input(buf[0], "a", capture) || ex_capture_input(buf[1], "b", capture) ||
          ex_failed(lm_enqueue_write_buffer(cq, buf[0], ha, false), "write a") ||
          ex_failed(lm_enqueue_write_buffer(cq, buf[1], hb, false), "write b") ||
          ex_failed(lm_create_program(dev, &prog), "program");
    static const uint32_t index[] = {0, 1, 16};
    for (int i = 0; i < 3 && !bad; i++) {
        lm_circular_buffer_config cc;
        lm_circular_buffer_config_init(&cc);
        cc.total_size = PER_CORE * tile;
        cc.index_count = 1;
        cc.indices[0] = (lm_cb_index_config){index[i], LM_DATA_FORMAT_FLOAT16_B, tile};
        cc.globally_allocated = buf[i];
        lm_circular_buffer h;
        bad = ex_failed(lm_create_circular_buffer(prog, &cores, &cc, &h), "circular buffer");
    }
    static const char *const files[] = {LM_EXAMPLE_DIR "/kernels/reader_sharded.cpp",
                                        LM_EXAMPLE_DIR "/kernels/writer_sharded.cpp",
                                        LM_EXAMPLE_DIR "/kernels/add_sharded.cpp"};
    static const lm_processor procs[] = {LM_PROCESSOR_DM1, LM_PROCESSOR_DM0, LM_PROCESSOR_COMPUTE};
    uint32_t n = PER_CORE;
    for (int i = 0; i < 3 && !bad; i++)
        bad = ex_failed(ex_kernel(prog, files[i], &cores, procs[i], &k[i]), "kernel") ||
              ex_failed(lm_set_runtime_args_range(prog, k[i], &cores, &n, 1), "args");
    bad = bad || ex_failed(lm_enqueue_program(cq, prog, false), "enqueue") ||
          ex_failed(lm_enqueue_read_buffer(cq, buf[2], hc, true), "read c") ||
          ex_capture_output(cq, buf[2], "c", capture) || ex_capture_end(dev, capture);
    uint32_t wrong = 0;
    lm_bfloat16_to_float(hc, fc, ELEMS);
    for (uint32_t i = 0; !bad && i < ELEMS; i++)
        wrong += fc[i] != bf16(fa[i] + fb[i]);
    bool pass = !bad && wrong == 0;
    printf("%s sharded_vector_add (C host): %u tiles on %u cores, %u elements wrong\n",
           pass ? "PASS" : "FAIL", TILES, CORES, wrong);
    if (ex_failed(lm_device_close(dev), "close device")) pass = false;
    return pass ? 0 : 1;
}
