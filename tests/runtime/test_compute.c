/* Compute kernels end to end: misuse of the compute API is a kernel fault with
 * a clear message, and results are bit-identical whatever the thread count. */
#include <math.h>
#include <stdlib.h>

#include "lightmetal/lightmetal.h"
#include "lm_test.h"

static lm_device *open_device(uint32_t threads) {
    lm_device_options o;
    lm_device_options_init(&o);
    o.grid_x = 4;
    o.grid_y = 4;
    o.dram_banks = 4;
    o.dram_bank_size = 64 << 20;
    o.num_threads = threads;
    lm_device *dev = NULL;
    return lm_device_open(&o, &dev) ? NULL : dev;
}

/* Pushes `tiles` tiles of the DRAM buffer at arg 0 into CB 0 and CB 1. */
static const char *reader =
    "#include \"dataflow_api.h\"\n"
    "void kernel_main(void) {\n"
    "    InterleavedAddrGenFast s = {.bank_base_address = get_arg_val(0), .page_size = 2048,\n"
    "                                .is_dram = true};\n"
    "    for (uint32_t t = 0; t < get_arg_val(1); t++) {\n"
    "        cb_reserve_back(0, 1); cb_reserve_back(1, 1);\n"
    "        noc_async_read_tile(t, &s, get_write_ptr(0));\n"
    "        noc_async_read_tile(t, &s, get_write_ptr(1));\n"
    "        noc_async_read_barrier();\n"
    "        cb_push_back(0, 1); cb_push_back(1, 1);\n"
    "    }\n"
    "}\n";

/* Writes `tiles` tiles of CB 16 to the DRAM buffer at arg 0. */
static const char *writer =
    "#include \"dataflow_api.h\"\n"
    "void kernel_main(void) {\n"
    "    InterleavedAddrGenFast d = {.bank_base_address = get_arg_val(0), .page_size = 2048,\n"
    "                                .is_dram = true};\n"
    "    for (uint32_t t = 0; t < get_arg_val(1); t++) {\n"
    "        cb_wait_front(16, 1);\n"
    "        noc_async_write_tile(get_arg_val(2) + t, &d, get_read_ptr(16));\n"
    "        noc_async_write_barrier();\n"
    "        cb_pop_front(16, 1);\n"
    "    }\n"
    "}\n";

#define COMPUTE(body)                                                                              \
    "#include \"compute_kernel_api.h\"\nvoid kernel_main(void) {\n"                                \
    "    for (uint32_t t = 0; t < get_arg_val(0); t++) {\n" body "    }\n}\n"

/* A correct compute kernel: out = sigmoid(a * b) + a, through two dst tiles. */
static const char *good_compute =
    COMPUTE("        cb_wait_front(0, 1); cb_wait_front(1, 1);\n"
            "        tile_regs_acquire();\n"
            "        mul_tiles(0, 1, 0, 0, 1);\n"
            "        sigmoid_tile(1);\n"
            "        tile_regs_commit(); tile_regs_wait();\n"
            "        cb_reserve_back(16, 1); pack_tile(1, 16); cb_push_back(16, 1);\n"
            "        tile_regs_release();\n"
            "        cb_pop_front(0, 1); cb_pop_front(1, 1);\n");

typedef struct run_result {
    lm_status status;
    char message[1100];
} run_result;

/* One core per tile row of work: each of `cores` cores handles `tiles` tiles. */
static run_result run(lm_device *dev, const char *compute, bool fp32_acc, uint32_t cores,
                      uint32_t tiles, const void *in, void *out) {
    run_result r = {LM_OK, ""};
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_buffer_config bc;
    lm_buffer_config_init(&bc);
    bc.size = (uint64_t)cores * tiles * 2048;
    bc.page_size = 2048;
    lm_buffer src, dst;
    lm_program prog;
    lm_kernel kr, kc, kw;
    lm_core_range_set set = lm_core_range_set_of(0, 0, cores - 1, 0);
    lm_kernel_config dm0, dm1, cc;
    lm_kernel_config_init(&dm0, LM_PROCESSOR_DM0);
    lm_kernel_config_init(&dm1, LM_PROCESSOR_DM1);
    lm_kernel_config_init(&cc, LM_PROCESSOR_COMPUTE);
    cc.fp32_dest_acc_en = fp32_acc;
    lm_circular_buffer_config cb;
    lm_circular_buffer_config_init(&cb);
    cb.total_size = 2 * 2048;
    cb.index_count = 1;
    lm_circular_buffer h;
    lm_status st = lm_create_buffer(dev, &bc, &src);
    if (!st) st = lm_create_buffer(dev, &bc, &dst);
    if (!st) st = lm_create_program(dev, &prog);
    for (uint32_t i = 0; i < 3 && !st; i++) {
        static const uint32_t index[] = {0, 1, 16};
        cb.indices[0] = (lm_cb_index_config){index[i], LM_DATA_FORMAT_FLOAT16_B, 2048};
        st = lm_create_circular_buffer(prog, &set, &cb, &h);
    }
    if (!st) st = lm_create_kernel_from_string(prog, "reader", reader, &set, &dm0, &kr);
    if (!st) st = lm_create_kernel_from_string(prog, "compute", compute, &set, &cc, &kc);
    if (!st) st = lm_create_kernel_from_string(prog, "writer", writer, &set, &dm1, &kw);
    for (uint32_t c = 0; c < cores && !st; c++) {
        uint64_t sa, da;
        lm_buffer_address(src, &sa);
        lm_buffer_address(dst, &da);
        /* Each core reads the same input tiles and writes its own slice. */
        uint32_t ra[] = {(uint32_t)sa, tiles}, ca[] = {tiles},
                 wa[] = {(uint32_t)da, tiles, c * tiles};
        st = lm_set_runtime_args(prog, kr, (lm_core){c, 0}, ra, 2);
        if (!st) st = lm_set_runtime_args(prog, kc, (lm_core){c, 0}, ca, 1);
        if (!st) st = lm_set_runtime_args(prog, kw, (lm_core){c, 0}, wa, 3);
    }
    if (!st) st = lm_enqueue_write_buffer(cq, src, in, true);
    if (!st) st = lm_enqueue_program(cq, prog, true);
    r.status = st;
    snprintf(r.message, sizeof r.message, "%s", st ? lm_last_error() : "");
    if (!st && out) r.status = lm_enqueue_read_buffer(cq, dst, out, true);
    lm_release_program(prog);
    lm_deallocate_buffer(src);
    lm_deallocate_buffer(dst);
    return r;
}

static uint16_t input[4 * 8 * 1024];

static void make_input(void) {
    float v[1024];
    for (uint32_t t = 0; t < 4 * 8; t++) {
        for (int i = 0; i < 1024; i++)
            v[i] = (float)((int)((t * 1024 + i) * 2654435761u >> 20) % 200 - 100) / 25.0f;
        lm_tilize(v, 32, 32, LM_DATA_FORMAT_FLOAT16_B, &input[t * 1024], 2048);
    }
}

static void test_bit_identical_across_thread_counts(void) {
    static uint16_t one[4 * 8 * 1024], four[4 * 8 * 1024];
    lm_device *a = open_device(1), *b = open_device(4);
    CHECK(a && b);
    run_result r = run(a, good_compute, false, 4, 8, input, one);
    if (r.status) printf("  %s\n", r.message);
    CHECK_OK(r.status);
    r = run(b, good_compute, false, 4, 8, input, four);
    CHECK_OK(r.status);
    CHECK(memcmp(one, four, sizeof one) == 0);
    /* And the values are right: sigmoid(x * x) of bfloat16 inputs. */
    float x[1024], y[1024];
    CHECK_OK(lm_untilize(input, 2048, LM_DATA_FORMAT_FLOAT16_B, 32, 32, x, sizeof x));
    CHECK_OK(lm_untilize(one, 2048, LM_DATA_FORMAT_FLOAT16_B, 32, 32, y, sizeof y));
    for (int i = 0; i < 1024; i++) {
        double want = 1.0 / (1.0 + exp(-(double)x[i] * x[i]));
        CHECK(fabs(y[i] - want) <= want * 0x1p-7);
    }
    CHECK_OK(lm_device_close(a));
    CHECK_OK(lm_device_close(b));
}

/* Runs a misbehaving compute kernel; expects a fault naming `needle`, then
 * checks the device still runs the good kernel. */
static int misuse(lm_device *dev, const char *compute, bool fp32_acc, const char *needle) {
    run_result r = run(dev, compute, fp32_acc, 1, 1, input, NULL);
    int ok = r.status == LM_ERR_DEVICE_FAULT && strstr(r.message, needle) &&
             strstr(r.message, "core (0,0) COMPUTE kernel 'compute'");
    if (!ok) printf("  got %s: %s\n", lm_status_string(r.status), r.message);
    return ok && run(dev, good_compute, false, 1, 1, input, NULL).status == LM_OK;
}

static void test_misuse_is_a_fault(void) {
    make_input();
    lm_device *dev = open_device(2);
    CHECK(dev);
    CHECK(misuse(dev, COMPUTE("cb_wait_front(0, 1); tile_regs_acquire(); copy_tile(0, 0, 16);"),
                 false,
                 "copy_tile: dst index 16 out of range (16 dst tiles with fp32 accumulation off)"));
    CHECK(misuse(dev, COMPUTE("cb_wait_front(0, 1); tile_regs_acquire(); copy_tile(0, 0, 8);"),
                 true, "dst index 8 out of range (8 dst tiles"));
    CHECK(misuse(dev, COMPUTE("tile_regs_acquire(); copy_tile(0, 0, 0);"), false,
                 "copy_tile: tile 0 of circular buffer 0 was not waited for"));
    CHECK(misuse(dev,
                 COMPUTE("cb_wait_front(0, 1); tile_regs_acquire(); copy_tile(0, 0, 0);"
                         "cb_reserve_back(16, 1); pack_tile(0, 16);"),
                 false, "pack_tile outside its place in the dst protocol"));
    CHECK(misuse(dev,
                 COMPUTE("cb_wait_front(0, 1); tile_regs_acquire(); copy_tile(0, 0, 0);"
                         "tile_regs_commit(); tile_regs_wait(); pack_tile(0, 16);"),
                 false, "pack_tile: circular buffer 16 has no reserved tile left"));
    CHECK(misuse(dev, COMPUTE("exp_tile(0);"), false,
                 "a math operation outside its place in the dst protocol"));
    CHECK(misuse(dev, COMPUTE("tile_regs_commit();"), false, "tile_regs_commit outside"));
    CHECK(misuse(dev, COMPUTE("tile_regs_acquire(); lm_ecall(LM_ECALL_SFPU_TILE, 99, 0, 0, 0, 0);"),
                 false, "sfpu: unknown operation 99"));
    CHECK_OK(lm_device_close(dev));
}

int main(void) {
    setenv("LM_CACHE_DIR", "test_compute_cache", 0);
    TEST_RUN(test_misuse_is_a_fault);
    TEST_RUN(test_bit_identical_across_thread_counts);
    return test_summary();
}
