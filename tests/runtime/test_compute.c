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

/* One core per tile row of work: each of `cores` cores handles `tiles` tiles,
 * with the given data movement kernels. */
static run_result run_with(lm_device *dev, const char *reader_src, const char *compute,
                           const char *writer_src, bool fp32_acc, uint32_t cores, uint32_t tiles,
                           const void *in, void *out) {
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
    if (!st) st = lm_create_kernel_from_string(prog, "reader", reader_src, &set, &dm0, &kr);
    if (!st) st = lm_create_kernel_from_string(prog, "compute", compute, &set, &cc, &kc);
    if (!st) st = lm_create_kernel_from_string(prog, "writer", writer_src, &set, &dm1, &kw);
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

static run_result run(lm_device *dev, const char *compute, bool fp32_acc, uint32_t cores,
                      uint32_t tiles, const void *in, void *out) {
    return run_with(dev, reader, compute, writer, fp32_acc, cores, tiles, in, out);
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

/* Runs a misbehaving compute kernel; expects a fault naming `needle`. */
static int faults(lm_device *dev, const char *compute, bool fp32_acc, const char *needle) {
    run_result r = run(dev, compute, fp32_acc, 1, 1, input, NULL);
    int ok = r.status == LM_ERR_DEVICE_FAULT && strstr(r.message, needle) &&
             strstr(r.message, "core (0,0) COMPUTE kernel 'compute'");
    if (!ok) printf("  got %s: %s\n", lm_status_string(r.status), r.message);
    return ok;
}

/* faults(), then checks the device still runs the good kernel. */
static int misuse(lm_device *dev, const char *compute, bool fp32_acc, const char *needle) {
    return faults(dev, compute, fp32_acc, needle) &&
           run(dev, good_compute, false, 1, 1, input, NULL).status == LM_OK;
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
    /* Packing into pages nobody reserved: the chip does it; strict_protocol
     * (test_compute_compat.c) makes it a fault, and a full CB always is. */
    CHECK(misuse(dev,
                 COMPUTE("cb_wait_front(0, 1); tile_regs_acquire(); copy_tile(0, 0, 0);"
                         "tile_regs_commit(); tile_regs_wait(); cb_reserve_back(16, 2);"
                         "pack_tile(0, 16); pack_tile(0, 16); pack_tile(0, 16);"),
                 false,
                 "pack_tile: circular buffer 16 has no reserved tile left (cb_reserve_back "
                 "reserved 2, tile 2 wanted, 2 pages free)"));
    CHECK(misuse(dev, COMPUTE("exp_tile(0);"), false,
                 "exp_tile outside its place in the dst protocol"));
    CHECK(misuse(dev, COMPUTE("tile_regs_commit();"), false, "tile_regs_commit outside"));
    CHECK(misuse(dev, COMPUTE("tile_regs_acquire(); lm_ecall(LM_ECALL_SFPU_TILE, 99, 0, 0, 0, 0);"),
                 false, "sfpu: unknown operation 99"));
    CHECK_OK(lm_device_close(dev));
}

/* ---- reduce and fill, with formats of our choosing ---- */

/* Pushes one bfloat16 scaler tile (buffer at arg 0) into CB 1, then arg 3
 * tiles of the buffer at arg 1 (pages of arg 2 bytes) into CB 0. */
static const char *io_reader =
    "#include \"dataflow_api.h\"\n"
    "void kernel_main(void) {\n"
    "    InterleavedAddrGenFast k = {.bank_base_address = get_arg_val(0), .page_size = 2048,\n"
    "                                .is_dram = true};\n"
    "    InterleavedAddrGenFast s = {.bank_base_address = get_arg_val(1),\n"
    "                                .page_size = get_arg_val(2), .is_dram = true};\n"
    "    cb_reserve_back(1, 1);\n"
    "    noc_async_read_tile(0, &k, get_write_ptr(1));\n"
    "    noc_async_read_barrier();\n"
    "    cb_push_back(1, 1);\n"
    "    for (uint32_t t = 0; t < get_arg_val(3); t++) {\n"
    "        cb_reserve_back(0, 1);\n"
    "        noc_async_read_tile(t, &s, get_write_ptr(0));\n"
    "        noc_async_read_barrier();\n"
    "        cb_push_back(0, 1);\n"
    "    }\n"
    "}\n";

/* Writes arg 2 tiles of CB 16 (pages of arg 1 bytes) to the buffer at arg 0. */
static const char *io_writer =
    "#include \"dataflow_api.h\"\n"
    "void kernel_main(void) {\n"
    "    InterleavedAddrGenFast d = {.bank_base_address = get_arg_val(0),\n"
    "                                .page_size = get_arg_val(1), .is_dram = true};\n"
    "    for (uint32_t t = 0; t < get_arg_val(2); t++) {\n"
    "        cb_wait_front(16, 1);\n"
    "        noc_async_write_tile(t, &d, get_read_ptr(16));\n"
    "        noc_async_write_barrier();\n"
    "        cb_pop_front(16, 1);\n"
    "    }\n"
    "}\n";

typedef struct io_run {
    const char *compute; /* gets the number of input tiles as arg 0 */
    bool fp32_acc;
    lm_data_format in_format, out_format;
    const void *in; /* n_in tiles of in_format into CB 0 */
    uint32_t n_in;
    float scaler; /* every element of the bfloat16 tile in CB 1 */
    void *out;    /* n_out tiles of out_format from CB 16 */
    uint32_t n_out;
} io_run;

static lm_status make_dram_buffer(lm_device *dev, uint64_t size, uint64_t page, lm_buffer *out) {
    lm_buffer_config bc;
    lm_buffer_config_init(&bc);
    bc.size = size;
    bc.page_size = page;
    return lm_create_buffer(dev, &bc, out);
}

/* Runs io on core (0,0); the status, with lm_last_error() set on failure. */
static lm_status run_io(lm_device *dev, const io_run *io) {
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    uint32_t in_page = (uint32_t)lm_tile_size(io->in_format);
    uint32_t out_page = (uint32_t)lm_tile_size(io->out_format);
    static uint16_t scaler[1024];
    float sv[1024];
    for (int i = 0; i < 1024; i++)
        sv[i] = io->scaler;
    lm_status st = lm_tilize(sv, 32, 32, LM_DATA_FORMAT_FLOAT16_B, scaler, sizeof scaler);
    lm_buffer kb = {0}, src = {0}, dst = {0};
    lm_program prog = {0};
    if (!st) st = make_dram_buffer(dev, 2048, 2048, &kb);
    if (!st)
        st = make_dram_buffer(dev, (uint64_t)(io->n_in ? io->n_in : 1) * in_page, in_page, &src);
    if (!st) st = make_dram_buffer(dev, (uint64_t)io->n_out * out_page, out_page, &dst);
    if (!st) st = lm_create_program(dev, &prog);
    lm_core_range_set set = lm_core_range_set_of(0, 0, 0, 0);
    const struct {
        uint32_t index;
        lm_data_format format;
        uint32_t page;
    } cbs[] = {{0, io->in_format, in_page},
               {1, LM_DATA_FORMAT_FLOAT16_B, 2048},
               {16, io->out_format, out_page}};
    for (uint32_t i = 0; i < 3 && !st; i++) {
        lm_circular_buffer_config cb;
        lm_circular_buffer_config_init(&cb);
        cb.total_size = 2 * cbs[i].page;
        cb.index_count = 1;
        cb.indices[0] = (lm_cb_index_config){cbs[i].index, cbs[i].format, cbs[i].page};
        lm_circular_buffer h;
        st = lm_create_circular_buffer(prog, &set, &cb, &h);
    }
    lm_kernel_config dm0, dm1, cc;
    lm_kernel_config_init(&dm0, LM_PROCESSOR_DM0);
    lm_kernel_config_init(&dm1, LM_PROCESSOR_DM1);
    lm_kernel_config_init(&cc, LM_PROCESSOR_COMPUTE);
    cc.fp32_dest_acc_en = io->fp32_acc;
    lm_kernel kr, kc, kw;
    if (!st) st = lm_create_kernel_from_string(prog, "reader", io_reader, &set, &dm0, &kr);
    if (!st) st = lm_create_kernel_from_string(prog, "compute", io->compute, &set, &cc, &kc);
    if (!st) st = lm_create_kernel_from_string(prog, "writer", io_writer, &set, &dm1, &kw);
    uint64_t ka = 0, sa = 0, da = 0;
    lm_buffer_address(kb, &ka);
    lm_buffer_address(src, &sa);
    lm_buffer_address(dst, &da);
    uint32_t ra[] = {(uint32_t)ka, (uint32_t)sa, in_page, io->n_in}, ca[] = {io->n_in},
             wa[] = {(uint32_t)da, out_page, io->n_out};
    lm_core c00 = {0, 0};
    if (!st) st = lm_set_runtime_args(prog, kr, c00, ra, 4);
    if (!st) st = lm_set_runtime_args(prog, kc, c00, ca, 1);
    if (!st) st = lm_set_runtime_args(prog, kw, c00, wa, 3);
    if (!st) st = lm_enqueue_write_buffer(cq, kb, scaler, true);
    if (!st && io->n_in) st = lm_enqueue_write_buffer(cq, src, io->in, true);
    if (!st) st = lm_enqueue_program(cq, prog, true);
    if (!st) st = lm_enqueue_read_buffer(cq, dst, io->out, true);
    lm_release_program(prog);
    lm_deallocate_buffer(kb);
    lm_deallocate_buffer(src);
    lm_deallocate_buffer(dst);
    return st;
}

/* A reduction written as in tt-metal: reduce_init, then every input tile
 * reduced along each dimension into a freshly acquired dst (ROW into dst 0,
 * COL into 1, SCALAR into 2) with no fill first, the three packed in order.
 * `before` runs right after tile_regs_acquire. */
static const char *reduce_kernel(const char *op, const char *before) {
    static char src[1400];
    snprintf(src, sizeof src,
             "#include \"compute_kernel_api.h\"\n"
             "void kernel_main(void) {\n"
             "    reduce_init(0, 1, 16);\n"
             "    cb_wait_front(1, 1);\n"
             "    tile_regs_acquire();\n"
             "    %s\n"
             "    for (uint32_t t = 0; t < get_arg_val(0); t++) {\n"
             "        cb_wait_front(0, 1);\n"
             "        reduce_tile(%s, LM_REDUCE_ROW, 0, 1, 0, 0, 0);\n"
             "        reduce_tile(%s, LM_REDUCE_COL, 0, 1, 0, 0, 1);\n"
             "        reduce_tile(%s, LM_REDUCE_SCALAR, 0, 1, 0, 0, 2);\n"
             "        cb_pop_front(0, 1);\n"
             "    }\n"
             "    tile_regs_commit();\n"
             "    tile_regs_wait();\n"
             "    for (uint32_t d = 0; d < 3; d++) {\n"
             "        cb_reserve_back(16, 1);\n"
             "        pack_tile(d, 16);\n"
             "        cb_push_back(16, 1);\n"
             "    }\n"
             "    tile_regs_release();\n"
             "}\n",
             before, op, op, op);
    return src;
}

enum { RED_ROW, RED_COL, RED_SCALAR };
static const char *const dim_names[] = {"ROW", "COL", "SCALAR"};

/* Is (r, c) a result position of reduction `dim`? */
static bool result_pos(int dim, int r, int c) {
    return dim == RED_ROW ? c == 0 : dim == RED_COL ? r == 0 : r == 0 && c == 0;
}

/* Two tiles of row-major values v[t][r * 32 + c] -> bfloat16 tiles. */
static lm_status tilize2(float v[2][1024], uint16_t out[2][1024]) {
    lm_status st = LM_OK;
    for (int t = 0; t < 2 && !st; t++)
        st = lm_tilize(v[t], 32, 32, LM_DATA_FORMAT_FLOAT16_B, out[t], 2048);
    return st;
}

/* max (a NaN wins) or sum over both tiles of the elements that reduce into
 * (r, c); 0 (what an undefined element packs as) elsewhere. */
static double expect_reduce(float v[2][1024], int dim, bool max, int r, int c) {
    if (!result_pos(dim, r, c)) return 0;
    double acc = max ? -INFINITY : 0;
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < 32; i++)
            for (int j = 0; j < 32; j++) {
                bool in =
                    dim == RED_SCALAR || (dim == RED_ROW && i == r) || (dim == RED_COL && j == c);
                if (!in) continue;
                double x = v[t][i * 32 + j];
                acc = max ? (isnan(x) || x > acc ? x : acc) : acc + x;
            }
    return acc;
}

static bool same_value(float got, double want) {
    return isnan(want) ? isnan(got) : (double)got == want;
}

/* Runs reduce_kernel(op) on the two tiles of `v` (scaler `scaler`) and checks
 * all three results against expect_reduce scaled by `scale`. */
static int check_reduce(lm_device *dev, float v[2][1024], const char *op, bool fp32_acc,
                        float scaler) {
    static uint16_t in[2][1024];
    static float out[3][1024], got[1024];
    bool max = strcmp(op, "LM_REDUCE_MAX") == 0;
    io_run io = {reduce_kernel(op, ""),
                 fp32_acc,
                 LM_DATA_FORMAT_FLOAT16_B,
                 LM_DATA_FORMAT_FLOAT32,
                 in,
                 2,
                 scaler,
                 out,
                 3};
    lm_status st = tilize2(v, in);
    if (!st) st = run_io(dev, &io);
    if (st) {
        printf("  %s: %s\n", op, lm_last_error());
        return 0;
    }
    for (int dim = RED_ROW; dim <= RED_SCALAR; dim++) {
        if (lm_untilize(out[dim], sizeof out[dim], LM_DATA_FORMAT_FLOAT32, 32, 32, got, sizeof got))
            return 0;
        for (int r = 0; r < 32; r++)
            for (int c = 0; c < 32; c++) {
                double want = expect_reduce(v, dim, max, r, c) * (max ? 1.0 : scaler);
                if (!same_value(got[r * 32 + c], want)) {
                    printf("  %s %s fp32_acc %d at (%d,%d): got %g, want %g\n", op, dim_names[dim],
                           fp32_acc, r, c, got[r * 32 + c], want);
                    return 0;
                }
            }
    }
    return 1;
}

/* MAX of all-negative tiles gives the maximum, not 0, along every dimension
 * and in both dst modes; SUM and AVG of the same tiles still add up (fp32 dst,
 * where these sums are exact; AVG's scaler is 1/64). */
static void test_reduce_all_negative(void) {
    lm_device *dev = open_device(1);
    CHECK(dev);
    static float v[2][1024];
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < 1024; i++)
            v[t][i] = -(float)(1 + (t * 1024 + i) * 37 % 97) / 8.0f;
    CHECK(check_reduce(dev, v, "LM_REDUCE_MAX", false, 1.0f));
    CHECK(check_reduce(dev, v, "LM_REDUCE_MAX", true, 1.0f));
    CHECK(check_reduce(dev, v, "LM_REDUCE_SUM", true, 1.0f));
    CHECK(check_reduce(dev, v, "LM_REDUCE_AVG", true, 1.0f / 64));
    CHECK_OK(lm_device_close(dev));
}

/* -Inf and NaN: a MAX over -Inf only is -Inf (the undefined dst adds nothing),
 * and a NaN anywhere in the reduced elements makes the result NaN. */
static void test_reduce_max_inf_nan(void) {
    lm_device *dev = open_device(1);
    CHECK(dev);
    static float v[2][1024];
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < 1024; i++)
            v[t][i] = -INFINITY;
    v[1][6 * 32 + 3] = NAN;
    /* Row 6, column 3 and the scalar see the NaN; every other result is -Inf. */
    CHECK(isnan(expect_reduce(v, RED_ROW, true, 6, 0)) &&
          expect_reduce(v, RED_ROW, true, 5, 0) == -INFINITY);
    CHECK(isnan(expect_reduce(v, RED_COL, true, 0, 3)) &&
          expect_reduce(v, RED_COL, true, 0, 4) == -INFINITY);
    CHECK(check_reduce(dev, v, "LM_REDUCE_MAX", false, 1.0f));
    CHECK_OK(lm_device_close(dev));
}

/* fill_tile gives a MAX its starting value, and every element of the tile. */
static void test_fill_then_reduce(void) {
    lm_device *dev = open_device(1);
    CHECK(dev);
    static float v[2][1024], got[1024];
    static uint16_t in[2][1024];
    static float out[3][1024];
    /* Rows 16..31 are all below the fill value, rows 0..15 reach above it. */
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < 1024; i++)
            v[t][i] = -(float)(1 + (t * 1024 + i) * 37 % 97) / 8.0f - (i >= 512 ? 16 : 0);
    CHECK_OK(tilize2(v, in));
    io_run io = {reduce_kernel("LM_REDUCE_MAX", "fill_tile_init(); fill_tile(0, -1.5f);"),
                 false,
                 LM_DATA_FORMAT_FLOAT16_B,
                 LM_DATA_FORMAT_FLOAT32,
                 in,
                 2,
                 1.0f,
                 out,
                 3};
    CHECK_OK(run_io(dev, &io));
    CHECK_OK(lm_untilize(out[0], sizeof out[0], LM_DATA_FORMAT_FLOAT32, 32, 32, got, sizeof got));
    int above = 0;
    for (int r = 0; r < 32; r++) {
        double m = expect_reduce(v, RED_ROW, true, r, 0);
        above += m > -1.5;
        CHECK(got[r * 32] == fmax(m, -1.5));
        for (int c = 1; c < 32; c++)
            CHECK(got[r * 32 + c] == -1.5f);
    }
    CHECK(above == 16); /* the data decided some rows, the fill the others */
    CHECK_OK(lm_device_close(dev));
}

/* `fill` writes dst 0..n-1; they are packed in order. */
static const char *fill_kernel(const char *fill, int n) {
    static char src[800];
    snprintf(src, sizeof src,
             "#include \"compute_kernel_api.h\"\n"
             "void kernel_main(void) {\n"
             "    tile_regs_acquire();\n"
             "    fill_tile_init();\n"
             "    %s\n"
             "    tile_regs_commit();\n"
             "    tile_regs_wait();\n"
             "    for (uint32_t d = 0; d < %d; d++) {\n"
             "        cb_reserve_back(16, 1);\n"
             "        pack_tile(d, 16);\n"
             "        cb_push_back(16, 1);\n"
             "    }\n"
             "    tile_regs_release();\n"
             "}\n",
             fill, n);
    return src;
}

static void test_fill_tile_formats(void) {
    lm_device *dev = open_device(1);
    CHECK(dev);
    const struct {
        lm_data_format format;
        bool fp32_acc;
        const char *fill;
        int n;
        uint32_t want[4]; /* every element of tile d, as bits */
    } cases[] = {
        /* Rounded like any result: to bfloat16 unless dst holds fp32. */
        {LM_DATA_FORMAT_FLOAT32,
         false,
         "fill_tile(0, -2.5f); fill_tile(1, 1.00390625f);",
         2,
         {0xc0200000u, 0x3f800000u}},
        /* A signalling NaN becomes the canonical quiet NaN. */
        {LM_DATA_FORMAT_FLOAT32,
         true,
         "fill_tile(0, -__builtin_inff()); fill_tile(1, 1.00390625f);"
         "fill_tile_bitcast(2, 0x40490fdbu); fill_tile_bitcast(3, 0x7f800001u);",
         4,
         {0xff800000u, 0x3f808000u, 0x40490fdbu, 0x7fc00000u}},
        {LM_DATA_FORMAT_FLOAT16_B,
         false,
         "fill_tile(0, -2.5f); fill_tile(1, -__builtin_inff());",
         2,
         {0xc0200000u, 0xff800000u}},
        {LM_DATA_FORMAT_BFP8_B,
         true,
         "fill_tile(0, -2.5f); fill_tile(1, 96.0f);",
         2,
         {0xc0200000u, 0x42c00000u}},
        {LM_DATA_FORMAT_UINT32, false, "fill_tile_int(0, 0xdeadbeefu);", 1, {0xdeadbeefu}},
        {LM_DATA_FORMAT_INT32,
         true,
         "fill_tile_int(0, (uint32_t)-7); fill_tile_int(1, 0x7fc00001u);",
         2,
         {(uint32_t)-7, 0x7fc00001u}},
    };
    static uint32_t out[4 * 1024], got[1024];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        io_run io = {fill_kernel(cases[i].fill, cases[i].n),
                     cases[i].fp32_acc,
                     LM_DATA_FORMAT_FLOAT16_B,
                     cases[i].format,
                     NULL,
                     0,
                     1.0f,
                     out,
                     (uint32_t)cases[i].n};
        lm_status st = run_io(dev, &io);
        if (st) printf("  %s: %s\n", cases[i].fill, lm_last_error());
        CHECK_OK(st);
        size_t tile = lm_tile_size(cases[i].format);
        for (int d = 0; d < cases[i].n; d++) {
            CHECK_OK(lm_untilize((const uint8_t *)out + d * tile, tile, cases[i].format, 32, 32,
                                 got, sizeof got));
            for (int e = 0; e < 1024; e++)
                if (got[e] != cases[i].want[d]) {
                    printf("  %s in %s: dst %d element %d is 0x%08x, want 0x%08x\n", cases[i].fill,
                           lm_data_format_name(cases[i].format), d, e, got[e], cases[i].want[d]);
                    CHECK(0);
                }
        }
    }
    CHECK_OK(lm_device_close(dev));
}

static void test_fill_tile_misuse(void) {
    lm_device *dev = open_device(2);
    CHECK(dev);
    CHECK(faults(dev, COMPUTE("tile_regs_acquire(); fill_tile(16, 1.0f);"), false,
                 "fill_tile: dst index 16 out of range (16 dst tiles with fp32 accumulation off)"));
    CHECK(faults(dev, COMPUTE("tile_regs_acquire(); fill_tile(8, 1.0f);"), true,
                 "fill_tile: dst index 8 out of range (8 dst tiles with fp32 accumulation on)"));
    CHECK(faults(dev, COMPUTE("tile_regs_acquire(); fill_tile_int(0xffffffffu, 1);"), false,
                 "fill_tile_int: dst index 4294967295 out of range"));
    CHECK(faults(dev, COMPUTE("tile_regs_acquire(); lm_ecall(LM_ECALL_FILL_TILE, 0, 0, 9, 0, 0);"),
                 false, "fill_tile: unknown fill kind 9"));
    CHECK(misuse(dev, COMPUTE("fill_tile(0, 1.0f);"), false,
                 "fill_tile outside its place in the dst protocol"));
    CHECK_OK(lm_device_close(dev));
}

/* rand_tile: values in [from, from + scale), a seed repeating its numbers,
 * the stream going on from one tile to the next, in float32 and bfloat16. */
static void test_rand_tile(void) {
    lm_device *dev = open_device(1);
    CHECK(dev);
    static uint32_t out[4 * 1024];
    static float t[4][1024];
    for (int bf16 = 0; bf16 < 2; bf16++) {
        lm_data_format f = bf16 ? LM_DATA_FORMAT_FLOAT16_B : LM_DATA_FORMAT_FLOAT32;
        /* from 2, scale 1; then from -1, scale 2 */
        io_run io = {fill_kernel("rand_tile_init(5); rand_tile(0, 0x40000000u, 0x3f800000u); "
                                 "rand_tile_init(5); rand_tile(1, 0x40000000u, 0x3f800000u); "
                                 "rand_tile(2, 0x40000000u, 0x3f800000u); "
                                 "rand_tile(3, 0xbf800000u, 0x40000000u);",
                                 4),
                     !bf16,
                     LM_DATA_FORMAT_FLOAT16_B,
                     f,
                     NULL,
                     0,
                     1.0f,
                     out,
                     4};
        lm_status st = run_io(dev, &io);
        if (st) printf("  %s\n", lm_last_error());
        CHECK_OK(st);
        size_t tile = lm_tile_size(f);
        for (int d = 0; d < 4; d++)
            CHECK_OK(
                lm_untilize((const uint8_t *)out + d * tile, tile, f, 32, 32, t[d], sizeof t[d]));
        int outside = 0, same12 = 0;
        double sum = 0;
        for (int e = 0; e < 1024; e++) {
            outside += !(t[0][e] >= 2 && t[0][e] < 3) || !(t[3][e] >= -1 && t[3][e] < 1);
            same12 += t[1][e] == t[2][e];
            sum += t[3][e];
        }
        CHECK(outside == 0);
        CHECK(!memcmp(t[0], t[1], sizeof t[0])); /* one seed, one tile of numbers */
        CHECK(same12 < 64);                      /* the next tile draws on */
        CHECK(fabs(sum / 1024) < 5 * sqrt(1.0 / 3 / 1024));
    }
    CHECK(faults(dev, COMPUTE("tile_regs_acquire(); rand_tile(16, 0, 0x3f800000u);"), false,
                 "rand_tile: dst index 16 out of range (16 dst tiles with fp32 accumulation off)"));
    CHECK(faults(dev, COMPUTE("tile_regs_acquire(); lm_ecall(LM_ECALL_RAND, 9, 0, 0, 0, 0);"),
                 false, "rand_tile: unknown call 9"));
    CHECK(misuse(dev, COMPUTE("rand_tile_init(1); rand_tile(0, 0, 0x3f800000u);"), false,
                 "rand_tile outside its place in the dst protocol"));
    CHECK_OK(lm_device_close(dev));
}

/* ---- processors: no NoC on the compute processor, no compute engine on
 * the data movement ones ---- */

#define COMPUTE_NOC(body)                                                                          \
    "#include \"compute_kernel_api.h\"\n#include \"dataflow_api.h\"\n"                             \
    "void kernel_main(void) {\n" body "\n}\n"

static void test_compute_has_no_noc(void) {
    lm_device *dev = open_device(2);
    CHECK(dev);
    const struct {
        const char *body, *name;
    } calls[] = {
        {"noc_async_read(get_noc_addr(1, 0, 0x20000), 0x20000, 64);", "noc_async_read"},
        {"noc_async_write(0x20000, get_noc_addr(1, 0, 0x20000), 64);", "noc_async_write"},
        {"noc_async_write_multicast(0x20000, get_noc_multicast_addr(1, 0, 2, 0, 0x20000), 64, 2);",
         "noc_async_write_multicast"},
        {"lm_noc_async_read_strided(get_noc_addr(1, 0, 0x20000), 64, 0x20000, 64, 64, 2);",
         "lm_noc_async_read_strided"},
        {"lm_noc_async_write_strided(0x20000, 64, get_noc_addr(1, 0, 0x20000), 64, 64, 2);",
         "lm_noc_async_write_strided"},
        {"noc_async_read_barrier();", "noc_async_read_barrier"},
        {"noc_async_write_barrier();", "noc_async_write_barrier"},
        {"noc_semaphore_inc(get_noc_addr(1, 0, get_semaphore(0)), 1);", "noc_semaphore_inc"},
        {"noc_semaphore_set_remote(get_semaphore(0), get_noc_addr(1, 0, get_semaphore(0)));",
         "noc_semaphore_set_remote"},
        {"noc_semaphore_set_multicast(get_semaphore(0), "
         "get_noc_multicast_addr(1, 0, 2, 0, get_semaphore(0)), 2);",
         "noc_semaphore_set_multicast"},
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        char src[600], needle[160];
        snprintf(src, sizeof src, COMPUTE_NOC("%s"), calls[i].body);
        snprintf(needle, sizeof needle, "%s is not available on the compute processor",
                 calls[i].name);
        CHECK(faults(dev, src, false, needle));
    }
    /* Semaphores in the core's own L1 need no NoC: allowed, and they work (and
     * the device is fine after the faults). */
    static const char *local_sems = COMPUTE_NOC(
        "    volatile uint32_t *s = (volatile uint32_t *)(uintptr_t)get_semaphore(0);\n"
        "    noc_semaphore_set(s, 3);\n"
        "    noc_semaphore_wait(s, 3);\n"
        "    noc_semaphore_wait_min(s, 2);\n"
        "    cb_wait_front(0, 1); cb_wait_front(1, 1);\n"
        "    tile_regs_acquire(); copy_tile(0, 0, 0); tile_regs_commit(); tile_regs_wait();\n"
        "    cb_reserve_back(16, 1); pack_tile(0, 16); cb_push_back(16, 1);\n"
        "    tile_regs_release();\n"
        "    cb_pop_front(0, 1); cb_pop_front(1, 1);");
    run_result r = run(dev, local_sems, false, 1, 1, input, NULL);
    if (r.status) printf("  %s\n", r.message);
    CHECK_OK(r.status);
    CHECK_OK(lm_device_close(dev));
}

/* A data movement kernel (in the reader's or the writer's place) calling the
 * compute API faults, naming its processor and the call. */
static int dm_misuse(lm_device *dev, bool dm1, const char *body, const char *call) {
    char src[400], needle[200];
    snprintf(src, sizeof src, "#include \"compute_kernel_api.h\"\nvoid kernel_main(void) { %s }\n",
             body);
    run_result r = run_with(dev, dm1 ? reader : src, good_compute, dm1 ? src : writer, false, 1, 1,
                            input, NULL);
    snprintf(needle, sizeof needle, "%s is not available on a data movement processor", call);
    int ok = r.status == LM_ERR_DEVICE_FAULT && strstr(r.message, needle) &&
             strstr(r.message,
                    dm1 ? "core (0,0) DM1 kernel 'writer'" : "core (0,0) DM0 kernel 'reader'");
    if (!ok) printf("  %s: got %s: %s\n", call, lm_status_string(r.status), r.message);
    return ok;
}

static void test_data_movement_has_no_compute_engine(void) {
    lm_device *dev = open_device(2);
    CHECK(dev);
    CHECK(dm_misuse(dev, false, "tile_regs_acquire();", "tile_regs_acquire"));
    CHECK(dm_misuse(dev, false, "copy_tile(0, 0, 0);", "copy_tile"));
    CHECK(dm_misuse(dev, false, "add_tiles(0, 1, 0, 0, 0);", "add_tiles"));
    CHECK(dm_misuse(dev, true, "matmul_tiles(0, 1, 0, 0, 0, 0);", "matmul_tiles"));
    CHECK(dm_misuse(dev, true, "reduce_tile(LM_REDUCE_MAX, LM_REDUCE_ROW, 0, 1, 0, 0, 0);",
                    "reduce_tile"));
    CHECK(dm_misuse(dev, false, "exp_tile(0);", "exp_tile"));
    CHECK(dm_misuse(dev, true, "fill_tile(0, 1.0f);", "fill_tile"));
    CHECK(dm_misuse(dev, true, "pack_tile(0, 16);", "pack_tile"));
    CHECK_OK(run(dev, good_compute, false, 1, 1, input, NULL).status);
    CHECK_OK(lm_device_close(dev));
}

int main(void) {
    setenv("LM_CACHE_DIR", "test_compute_cache", 0);
    TEST_RUN(test_misuse_is_a_fault);
    TEST_RUN(test_bit_identical_across_thread_counts);
    TEST_RUN(test_reduce_all_negative);
    TEST_RUN(test_reduce_max_inf_nan);
    TEST_RUN(test_fill_then_reduce);
    TEST_RUN(test_fill_tile_formats);
    TEST_RUN(test_fill_tile_misuse);
    TEST_RUN(test_rand_tile);
    TEST_RUN(test_compute_has_no_noc);
    TEST_RUN(test_data_movement_has_no_compute_engine);
    return test_summary();
}
