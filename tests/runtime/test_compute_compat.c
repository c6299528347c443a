/* The compute API as tt-metal kernels use it: acquire_dst/release_dst,
 * accumulating eltwise binary ops, out-of-order packs, the dst-to-dst binary
 * SFPU family, tilize/untilize blocks, 5- and 6-argument matmul_tiles,
 * transposing copies, both C++ dialects' entry points, the newer names
 * (matmul_init/matmul_tile, copy_init, add_init...) and older defaults, a
 * single-source kernel built for all three processors; and the protocol
 * lapses the chip tolerates: a warning by default, a fault with
 * strict_protocol (device option, recorded in captures, replay option). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lightmetal/lightmetal.h"
#include "lm_test.h"
#include "lm_test_replay.h"

#define TILE_BYTES 4096u /* float32 tiles: exact comparisons */
#define NT 2u            /* tiles of A and of B */

typedef struct lines {
    char text[8192];
} lines;

static void collect(void *user, uint32_t x, uint32_t y, const char *proc, const char *line) {
    lines *l = user;
    size_t n = strlen(l->text);
    snprintf(l->text + n, sizeof l->text - n, "(%u,%u) %s: %s\n", x, y, proc, line);
}

static lm_device *open_device(bool strict, lines *out) {
    lm_device_options o;
    lm_device_options_init(&o);
    o.grid_x = 2;
    o.grid_y = 1;
    o.dram_banks = 2;
    o.dram_bank_size = 16 << 20;
    o.num_threads = 1;
    o.strict_protocol = strict;
    o.print = out ? collect : NULL;
    o.print_user = out;
    lm_device *dev = NULL;
    return lm_device_open(&o, &dev) ? NULL : dev;
}

/* Pushes NT tiles of A (arg 0) into CB 0 and NT of B (arg 1) into CB 1, one
 * page at a time. */
static const char *reader =
    "void kernel_main() {\n"
    "    const InterleavedAddrGen<true> a = {get_arg_val<uint32_t>(0), 4096};\n"
    "    const InterleavedAddrGen<true> b = {get_arg_val<uint32_t>(1), 4096};\n"
    "    for (uint32_t t = 0; t < 2; t++) {\n"
    "        cb_reserve_back(0, 1);\n"
    "        noc_async_read_tile(t, a, get_write_ptr(0));\n"
    "        noc_async_read_barrier();\n"
    "        cb_push_back(0, 1);\n"
    "        cb_reserve_back(1, 1);\n"
    "        noc_async_read_tile(t, b, get_write_ptr(1));\n"
    "        noc_async_read_barrier();\n"
    "        cb_push_back(1, 1);\n"
    "    }\n"
    "}\n";

/* Writes arg 1 tiles of CB 16 to the buffer at arg 0. */
static const char *writer =
    "void kernel_main() {\n"
    "    const InterleavedAddrGen<true> o = {get_arg_val<uint32_t>(0), 4096};\n"
    "    for (uint32_t t = 0; t < get_arg_val<uint32_t>(1); t++) {\n"
    "        cb_wait_front(16, 1);\n"
    "        noc_async_write_tile(t, o, get_read_ptr(16));\n"
    "        noc_async_write_barrier();\n"
    "        cb_pop_front(16, 1);\n"
    "    }\n"
    "}\n";

static float A[NT][1024], B[NT][1024], OUT[4][1024];
static uint8_t a_tiles[NT * TILE_BYTES], b_tiles[NT * TILE_BYTES], out_tiles[4 * TILE_BYTES];

static void make_inputs(void) {
    uint32_t seed = 11;
    for (uint32_t t = 0; t < NT; t++)
        for (int i = 0; i < 1024; i++) {
            seed = seed * 1664525u + 1013904223u;
            A[t][i] = (float)((int)(seed >> 20) - 2048) / 256.0f;
            seed = seed * 1664525u + 1013904223u;
            B[t][i] = (float)((int)(seed >> 20) - 2048) / 256.0f;
            if (B[t][i] == 0.0f) B[t][i] = 0.5f;
        }
    CHECK_OK(lm_tilize(A, 32, 32 * NT, LM_DATA_FORMAT_FLOAT32, a_tiles, sizeof a_tiles));
    CHECK_OK(lm_tilize(B, 32, 32 * NT, LM_DATA_FORMAT_FLOAT32, b_tiles, sizeof b_tiles));
    /* lm_tilize takes one row-major matrix: tile t is columns 32t..32t+31. */
    static float ra[32][32 * NT], rb[32][32 * NT];
    for (uint32_t t = 0; t < NT; t++)
        for (int r = 0; r < 32; r++)
            for (int c = 0; c < 32; c++) {
                ra[r][32 * t + c] = A[t][r * 32 + c];
                rb[r][32 * t + c] = B[t][r * 32 + c];
            }
    CHECK_OK(lm_tilize(ra, 32, 32 * NT, LM_DATA_FORMAT_FLOAT32, a_tiles, sizeof a_tiles));
    CHECK_OK(lm_tilize(rb, 32, 32 * NT, LM_DATA_FORMAT_FLOAT32, b_tiles, sizeof b_tiles));
}

/* Runs `compute` (a C++ kernel unless its name ends in .c) with the reader
 * and writer; the writer writes `outs` tiles, untilized into OUT. Returns the
 * status with the message in *msg. */
static lm_status run(lm_device *dev, const char *name, const char *compute, uint32_t outs,
                     char *msg, size_t msg_size) {
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_buffer_config bc;
    lm_buffer_config_init(&bc);
    bc.page_size = TILE_BYTES;
    lm_buffer a = {0}, b = {0}, o = {0};
    lm_program prog = {0};
    lm_kernel kr, kc, kw;
    lm_core_range_set core = lm_core_range_set_of(0, 0, 0, 0);
    lm_kernel_config rc, cc, wc;
    lm_kernel_config_init(&rc, LM_PROCESSOR_DM0);
    lm_kernel_config_init(&cc, LM_PROCESSOR_COMPUTE);
    lm_kernel_config_init(&wc, LM_PROCESSOR_DM1);
    cc.fp32_dest_acc_en = true;
    rc.language = wc.language = LM_KERNEL_LANGUAGE_CXX;
    lm_circular_buffer_config cb;
    lm_circular_buffer_config_init(&cb);
    cb.total_size = 4 * TILE_BYTES;
    cb.index_count = 1;
    lm_circular_buffer h;
    bc.size = NT * TILE_BYTES;
    lm_status st = lm_create_buffer(dev, &bc, &a);
    if (!st) st = lm_create_buffer(dev, &bc, &b);
    bc.size = 4 * TILE_BYTES;
    if (!st) st = lm_create_buffer(dev, &bc, &o);
    if (!st) st = lm_create_program(dev, &prog);
    static const uint32_t index[] = {0, 1, 16};
    for (uint32_t i = 0; i < 3 && !st; i++) {
        cb.indices[0] = (lm_cb_index_config){index[i], LM_DATA_FORMAT_FLOAT32, TILE_BYTES};
        st = lm_create_circular_buffer(prog, &core, &cb, &h);
    }
    if (!st) st = lm_create_kernel_from_string(prog, "reader", reader, &core, &rc, &kr);
    if (!st) st = lm_create_kernel_from_string(prog, name, compute, &core, &cc, &kc);
    if (!st) st = lm_create_kernel_from_string(prog, "writer", writer, &core, &wc, &kw);
    uint64_t aa = 0, ba = 0, oa = 0;
    if (!st) st = lm_buffer_address(a, &aa);
    if (!st) st = lm_buffer_address(b, &ba);
    if (!st) st = lm_buffer_address(o, &oa);
    uint32_t ra[] = {(uint32_t)aa, (uint32_t)ba}, wa[] = {(uint32_t)oa, outs};
    if (!st) st = lm_set_runtime_args(prog, kr, (lm_core){0, 0}, ra, 2);
    if (!st) st = lm_set_runtime_args(prog, kw, (lm_core){0, 0}, wa, 2);
    if (!st) st = lm_enqueue_write_buffer(cq, a, a_tiles, false);
    if (!st) st = lm_enqueue_write_buffer(cq, b, b_tiles, false);
    if (!st) st = lm_enqueue_program(cq, prog, true);
    if (!st) st = lm_enqueue_read_buffer(cq, o, out_tiles, true);
    snprintf(msg, msg_size, "%s", st ? lm_last_error() : "");
    if (!st) {
        static float rm[32][32 * 4];
        st = lm_untilize(out_tiles, sizeof out_tiles, LM_DATA_FORMAT_FLOAT32, 32, 32 * 4, rm,
                         sizeof rm);
        for (int t = 0; t < 4; t++)
            for (int r = 0; r < 32; r++)
                for (int c = 0; c < 32; c++)
                    OUT[t][r * 32 + c] = rm[r][32 * t + c];
    }
    if (prog.id) lm_release_program(prog);
    if (a.id) lm_deallocate_buffer(a);
    if (b.id) lm_deallocate_buffer(b);
    if (o.id) lm_deallocate_buffer(o);
    return st;
}

static int run_ok(lm_device *dev, const char *name, const char *compute, uint32_t outs) {
    char msg[1200];
    lm_status st = run(dev, name, compute, outs, msg, sizeof msg);
    if (st) printf("  %s: %s\n", name, msg);
    return st == LM_OK;
}

static int run_fails(lm_device *dev, const char *name, const char *compute, uint32_t outs,
                     const char *needle) {
    char msg[1200];
    lm_status st = run(dev, name, compute, outs, msg, sizeof msg);
    int ok = st == LM_ERR_DEVICE_FAULT && strstr(msg, needle);
    if (!ok) printf("  %s: got %s: %s\n", name, lm_status_string(st), msg);
    return ok;
}

/* out = f(a, b) element for element, exactly. */
static int outputs_are(uint32_t t, float (*f)(float, float), uint32_t ta, uint32_t tb) {
    for (int i = 0; i < 1024; i++) {
        float want = f(A[ta][i], B[tb][i]);
        if (OUT[t][i] != want && !(want != want && OUT[t][i] != OUT[t][i])) {
            printf("  tile %u element %d: got %g, want %g\n", t, i, OUT[t][i], want);
            return 0;
        }
    }
    return 1;
}

static float f_add(float a, float b) {
    return a + b;
}
static float f_acc(float a, float b) {
    return a + (a + b); /* copy_tile of a, then add_tiles(a, b) accumulated */
}
static float f_max(float a, float b) {
    return a > b ? a : b;
}
static float f_div(float a, float b) {
    return a / b;
}
static float f_rsub(float a, float b) {
    return b - a;
}
static float f_b(float a, float b) {
    (void)a;
    return b;
}
static float f_sub(float a, float b) {
    return a - b;
}
static float f_mul(float a, float b) {
    return a * b;
}

static void test_acquire_dst_and_dialects(void) {
    lm_device *dev = open_device(false, NULL);
    CHECK(dev);
    /* The classic C form: acquire_dst, math, pack, release_dst. */
    CHECK(run_ok(dev, "add.c",
                 "#include \"compute_kernel_api.h\"\n"
                 "void kernel_main(void) {\n"
                 "    binary_op_init_common(0, 1, 16); add_tiles_init(0, 1);\n"
                 "    for (uint32_t t = 0; t < 2; t++) {\n"
                 "        acquire_dst();\n"
                 "        cb_wait_front(0, 1); cb_wait_front(1, 1);\n"
                 "        add_tiles(0, 1, 0, 0, 0);\n"
                 "        cb_reserve_back(16, 1); pack_tile(0, 16); cb_push_back(16, 1);\n"
                 "        cb_pop_front(0, 1); cb_pop_front(1, 1);\n"
                 "        release_dst();\n"
                 "    }\n"
                 "}\n",
                 2));
    CHECK(outputs_are(0, f_add, 0, 0) && outputs_are(1, f_add, 1, 1));
    /* The late-2025 C++ dialect: NAMESPACE/MAIN, old headers, ckernel::. */
    CHECK(run_ok(dev, "add_2025.cpp",
                 "#include <cstdint>\n"
                 "#include \"compute_kernel_api/eltwise_binary.h\"\n"
                 "#include \"compute_kernel_api/tile_move_copy.h\"\n"
                 "namespace NAMESPACE {\n"
                 "void MAIN {\n"
                 "    constexpr auto in0 = tt::CBIndex::c_0, in1 = tt::CBIndex::c_1;\n"
                 "    constexpr auto out = tt::CBIndex::c_16;\n"
                 "    binary_op_init_common(in0, in1, out);\n"
                 "    add_tiles_init(in0, in1);\n"
                 "    for (uint32_t t = 0; t < 2; t++) {\n"
                 "        ckernel::cb_wait_front(in0, 1); ckernel::cb_wait_front(in1, 1);\n"
                 "        ckernel::tile_regs_acquire();\n"
                 "        add_tiles(in0, in1, 0, 0, 0);\n"
                 "        ckernel::tile_regs_commit(); ckernel::tile_regs_wait();\n"
                 "        cb_reserve_back(out, 1); ckernel::pack_tile(0, out);\n"
                 "        ckernel::tile_regs_release();\n"
                 "        cb_pop_front(in0, 1); cb_pop_front(in1, 1); cb_push_back(out, 1);\n"
                 "    }\n"
                 "}\n"
                 "}  // namespace NAMESPACE\n",
                 2));
    CHECK(outputs_are(0, f_add, 0, 0) && outputs_are(1, f_add, 1, 1));
    /* Mixing the two protocols is a fault that names both. */
    CHECK(run_fails(dev, "mix.c",
                    "#include \"compute_kernel_api.h\"\n"
                    "void kernel_main(void) { tile_regs_acquire(); release_dst(); }\n",
                    0,
                    "release_dst outside its place in the dst protocol: it must come after "
                    "acquire_dst, but dst is acquired"));
    CHECK(run_fails(dev, "twice.c",
                    "#include \"compute_kernel_api.h\"\n"
                    "void kernel_main(void) { acquire_dst(); tile_regs_acquire(); }\n",
                    0,
                    "tile_regs_acquire outside its place in the dst protocol: it must come "
                    "dst is released, but dst is held by acquire_dst"));
    CHECK_OK(lm_device_close(dev));
}

/* The 2026 dialect's compute features in one kernel file each. */
static void test_2026_compute_features(void) {
    lm_device *dev = open_device(false, NULL);
    CHECK(dev);
    /* add_tiles_init(a, b, acc_to_dest): dst += a + b, after copy_tile(a). */
    CHECK(run_ok(dev, "acc.cpp",
                 "#include \"api/compute/eltwise_binary.h\"\n"
                 "#include \"api/compute/tile_move_copy.h\"\n"
                 "void kernel_main() {\n"
                 "    for (uint32_t t = 0; t < 2; t++) {\n"
                 "        cb_wait_front(0, 1); cb_wait_front(1, 1);\n"
                 "        tile_regs_acquire();\n"
                 "        copy_tile_init(0); copy_tile(0, 0, 3);\n"
                 "        add_tiles_init(0, 1, true);\n"
                 "        add_tiles(0, 1, 0, 0, 3);\n"
                 "        tile_regs_commit(); tile_regs_wait();\n"
                 "        cb_reserve_back(16, 1); pack_tile(3, 16); cb_push_back(16, 1);\n"
                 "        tile_regs_release();\n"
                 "        cb_pop_front(0, 1); cb_pop_front(1, 1);\n"
                 "    }\n"
                 "}\n",
                 2));
    CHECK(outputs_are(0, f_acc, 0, 0) && outputs_are(1, f_acc, 1, 1));
    /* The dst-to-dst binary SFPU family, 3-argument (2026) and 2-argument
     * (2025) forms, and pack_tile<true> packing out of order. */
    CHECK(run_ok(dev, "sfpu_binary.cpp",
                 "#include \"api/compute/eltwise_binary_sfpu.h\"\n"
                 "#include \"api/compute/binary_max_min.h\"\n"
                 "void kernel_main() {\n"
                 "    cb_wait_front(0, 1); cb_wait_front(1, 1);\n"
                 "    tile_regs_acquire();\n"
                 "    copy_tile(0, 0, 0); copy_tile(1, 0, 1);\n"
                 "    copy_tile(0, 0, 2); copy_tile(0, 0, 3); copy_tile(0, 0, 4);\n"
                 "    add_binary_tile_init(); add_binary_tile(0, 1, 5);\n"
                 "    binary_max_tile_init(); binary_max_tile(2, 1);\n"
                 "    div_binary_tile_init(); div_binary_tile(3, 1, 3);\n"
                 "    rsub_binary_tile_init(); rsub_binary_tile(4, 1);\n"
                 "    tile_regs_commit(); tile_regs_wait();\n"
                 "    cb_reserve_back(16, 4);\n"
                 "    pack_tile<true>(4, 16, 3); pack_tile<true>(3, 16, 2);\n"
                 "    pack_tile<true>(2, 16, 1); pack_tile<true>(5, 16, 0);\n"
                 "    cb_push_back(16, 4);\n"
                 "    tile_regs_release();\n"
                 "    cb_pop_front(0, 1); cb_pop_front(1, 1);\n"
                 "    cb_wait_front(0, 1); cb_wait_front(1, 1);\n"
                 "    cb_pop_front(0, 1); cb_pop_front(1, 1);\n"
                 "}\n",
                 4));
    CHECK(outputs_are(0, f_add, 0, 0));
    CHECK(outputs_are(1, f_max, 0, 0));
    CHECK(outputs_are(2, f_div, 0, 0));
    CHECK(outputs_are(3, f_rsub, 0, 0));
    /* mm_init(in0, in1, out, transpose) + 5-argument matmul_tiles, against
     * the 6-argument form; copy_tile_to_dst_init_short(cb, transpose). */
    CHECK(run_ok(dev, "mm.cpp",
                 "#include \"api/compute/matmul.h\"\n"
                 "#include \"api/compute/tile_move_copy.h\"\n"
                 "void kernel_main() {\n"
                 "    cb_wait_front(0, 2); cb_wait_front(1, 2);\n"
                 "    mm_init(0, 1, 16, 1);\n"
                 "    tile_regs_acquire();\n"
                 "    matmul_tiles(0, 1, 0, 0, 0);\n"
                 "    matmul_tiles(0, 1, 0, 0, 1, 1);\n"
                 "    copy_tile_to_dst_init_short(1, 1); copy_tile(1, 1, 2);\n"
                 "    tile_regs_commit(); tile_regs_wait();\n"
                 "    cb_reserve_back(16, 3);\n"
                 "    pack_tile(0, 16); pack_tile(1, 16); pack_tile(2, 16);\n"
                 "    cb_push_back(16, 3);\n"
                 "    tile_regs_release();\n"
                 "    cb_pop_front(0, 2); cb_pop_front(1, 2);\n"
                 "}\n",
                 3));
    CHECK(memcmp(OUT[0], OUT[1], sizeof OUT[0]) == 0);
    int ok = 1;
    for (int r = 0; r < 32 && ok; r++)
        for (int c = 0; c < 32 && ok; c++) {
            double want = 0;
            for (int k = 0; k < 32; k++)
                want += (double)A[0][r * 32 + k] * B[0][c * 32 + k]; /* B transposed */
            ok = fabs(OUT[0][r * 32 + c] - want) <= 1e-4 * (1 + fabs(want));
            ok = ok && OUT[2][r * 32 + c] == B[1][c * 32 + r];
        }
    CHECK(ok);
    CHECK_OK(lm_device_close(dev));
}

/* tt-metal's newer names and older defaults: matmul_init + matmul_tile
 * (against mm_init + matmul_tiles), copy_init with a transpose, add_init /
 * sub_init / mul_init, add_tiles_init() with no arguments, and
 * acquire_dst(tt::DstMode). */
static void test_renamed_compute_calls(void) {
    lm_device *dev = open_device(false, NULL);
    CHECK(dev);
    CHECK(run_ok(
        dev, "matmul_tile.cpp",
        "#include \"compute_kernel_api/matmul.h\"\n"
        "#include \"compute_kernel_api/compute_kernel_hw_startup.h\"\n"
        "namespace NAMESPACE {\n"
        "void MAIN {\n"
        "    compute_kernel_hw_startup(tt::CBIndex::c_0, tt::CBIndex::c_1, tt::CBIndex::c_16);\n"
        "    cb_wait_front(0, 2); cb_wait_front(1, 2);\n"
        "    acquire_dst(tt::DstMode::Half);\n"
        "    matmul_init(tt::CBIndex::c_0, tt::CBIndex::c_1);\n"
        "    matmul_tile(0, 1, 0, 0, 0);\n"
        "    matmul_tile(0, 1, 1, 1, 0, false);\n"
        "    mm_init(0, 1, 16, 0);\n"
        "    matmul_tiles(0, 1, 0, 0, 1); matmul_tiles(0, 1, 1, 1, 1);\n"
        "    matmul_init(0, 1, 1);\n"
        "    matmul_tile(0, 1, 0, 0, 2);\n"
        "    ckernel::matmul_init(0, 1);\n"
        "    ckernel::matmul_tile(0, 1, 0, 0, 3, 1);\n"
        "    cb_reserve_back(16, 4);\n"
        "    for (uint32_t i = 0; i < 4; i++) pack_tile(i, 16);\n"
        "    cb_push_back(16, 4);\n"
        "    release_dst(tt::DstMode::Half);\n"
        "    cb_pop_front(0, 2); cb_pop_front(1, 2);\n"
        "}\n"
        "}  // namespace NAMESPACE\n",
        4));
    /* dst 0 and 1: A0 B0 + A1 B1 both ways; 2 and 3: A0 B0^T both ways. */
    CHECK(memcmp(OUT[0], OUT[1], sizeof OUT[0]) == 0);
    CHECK(memcmp(OUT[2], OUT[3], sizeof OUT[2]) == 0);
    int ok = 1;
    for (int r = 0; r < 32 && ok; r++)
        for (int c = 0; c < 32 && ok; c++) {
            double sum = 0, tr = 0;
            for (int k = 0; k < 32; k++) {
                sum += (double)A[0][r * 32 + k] * B[0][k * 32 + c];
                sum += (double)A[1][r * 32 + k] * B[1][k * 32 + c];
                tr += (double)A[0][r * 32 + k] * B[0][c * 32 + k];
            }
            ok = fabs(OUT[0][r * 32 + c] - sum) <= 1e-4 * (1 + fabs(sum)) &&
                 fabs(OUT[2][r * 32 + c] - tr) <= 1e-4 * (1 + fabs(tr));
        }
    CHECK(ok);
    /* copy_init(cb, transpose); add_init(a, b, acc_to_dest) after a copy
     * accumulates; sub_init and mul_init (whose acc_to_dest is unused, as on
     * Wormhole and Blackhole) write a - b and a * b over what dst held. */
    CHECK(run_ok(dev, "inits.cpp",
                 "#include \"api/compute/eltwise_binary.h\"\n"
                 "#include \"api/compute/tile_move_copy.h\"\n"
                 "void kernel_main() {\n"
                 "    cb_wait_front(0, 1); cb_wait_front(1, 1);\n"
                 "    tile_regs_acquire();\n"
                 "    copy_init(1, 1); copy_tile(1, 0, 0);\n"
                 "    copy_init(0); copy_tile(0, 0, 1); copy_tile(0, 0, 2); copy_tile(0, 0, 3);\n"
                 "    add_init(0, 1, true); add_tiles(0, 1, 0, 0, 1);\n"
                 "    sub_init(0, 1); sub_tiles(0, 1, 0, 0, 2);\n"
                 "    mul_init(0, 1); mul_tiles(0, 1, 0, 0, 3);\n"
                 "    tile_regs_commit(); tile_regs_wait();\n"
                 "    cb_reserve_back(16, 4);\n"
                 "    for (uint32_t i = 0; i < 4; i++) pack_tile(i, 16);\n"
                 "    cb_push_back(16, 4);\n"
                 "    tile_regs_release();\n"
                 "    cb_pop_front(0, 1); cb_pop_front(1, 1);\n"
                 "    cb_wait_front(0, 1); cb_wait_front(1, 1);\n"
                 "    cb_pop_front(0, 1); cb_pop_front(1, 1);\n"
                 "}\n",
                 4));
    ok = 1;
    for (int r = 0; r < 32 && ok; r++)
        for (int c = 0; c < 32 && ok; c++)
            ok = OUT[0][r * 32 + c] == B[0][c * 32 + r];
    CHECK(ok);
    CHECK(outputs_are(1, f_acc, 0, 0));
    CHECK(outputs_are(2, f_sub, 0, 0));
    CHECK(outputs_are(3, f_mul, 0, 0));
    /* Older tt-metal: add_tiles_init() reads CBs 0 and 1 by default. */
    CHECK(run_ok(dev, "defaults.cpp",
                 "#include \"compute_kernel_api/eltwise_binary.h\"\n"
                 "namespace NAMESPACE {\n"
                 "void MAIN {\n"
                 "    binary_op_init_common(tt::CB::c_in0, tt::CB::c_in1);\n"
                 "    add_tiles_init();\n"
                 "    for (uint32_t t = 0; t < 2; t++) {\n"
                 "        acquire_dst(tt::DstMode::Full);\n"
                 "        cb_wait_front(0, 1); cb_wait_front(1, 1);\n"
                 "        add_tiles(0, 1, 0, 0, 0);\n"
                 "        cb_reserve_back(16, 1); pack_tile(0, 16); cb_push_back(16, 1);\n"
                 "        cb_pop_front(0, 1); cb_pop_front(1, 1);\n"
                 "        release_dst(tt::DstMode::Full);\n"
                 "    }\n"
                 "}\n"
                 "}  // namespace NAMESPACE\n",
                 2));
    CHECK(outputs_are(0, f_add, 0, 0) && outputs_are(1, f_add, 1, 1));
    CHECK_OK(lm_device_close(dev));
}

/* One kernel file built for all three processors, as tt-metal's
 * single-source kernels are: the build defines COMPILE_FOR_BRISC on DM0
 * (which reads A and B), COMPILE_FOR_NCRISC on DM1 (which writes the sum)
 * and COMPILE_FOR_TRISC on the compute processor (which adds). The compute
 * calls outside the COMPILE_FOR_TRISC blocks do nothing on the data movement
 * processors, and the compute build takes TensorAccessorArgs from
 * accessor/tensor_accessor.h. */
static const char *single_source =
    "#include <cstdint>\n"
    "#include \"compute_kernel_api/common.h\"\n"
    "#include \"compute_kernel_api/eltwise_binary.h\"\n"
    "#include \"compute_kernel_api/tile_move_copy.h\"\n"
    "#include \"compute_kernel_api.h\"\n"
    "#ifdef COMPILE_FOR_TRISC\n"
    "#include \"accessor/tensor_accessor.h\"\n"
    "#include \"dataflow_api_common.h\"\n"
    "#include \"debug/assert.h\"\n"
    "static_assert(COMPILE_FOR_TRISC == 1, \"the compute processor is the math TRISC\");\n"
    "#define ENTRY namespace NAMESPACE { void MAIN; } void NAMESPACE::MAIN\n"
    "#else\n"
    "#define ENTRY void kernel_main()\n"
    "#endif\n"
    "#if defined(COMPILE_FOR_BRISC) + defined(COMPILE_FOR_NCRISC) + defined(COMPILE_FOR_TRISC) != "
    "1\n"
    "#error \"expected exactly one COMPILE_FOR_ define\"\n"
    "#endif\n"
    "constexpr uint32_t cb_in = tt::CBIndex::c_0, cb_out = tt::CBIndex::c_16;\n"
    "ENTRY {\n"
    "    const uint32_t n = get_arg_val<uint32_t>(3);\n"
    "    constexpr uint32_t page = get_compile_time_arg_val(0);\n"
    "    constexpr auto a_args = TensorAccessorArgs<1>();\n"
    "    constexpr auto b_args = TensorAccessorArgs<a_args.next_compile_time_args_offset()>();\n"
    "    constexpr auto o_args = TensorAccessorArgs<b_args.next_compile_time_args_offset()>();\n"
    "    const auto a = TensorAccessor(a_args, get_arg_val<uint32_t>(0), page);\n"
    "    const auto b = TensorAccessor(b_args, get_arg_val<uint32_t>(1), page);\n"
    "    const auto o = TensorAccessor(o_args, get_arg_val<uint32_t>(2), page);\n"
    "    (void)a, (void)b, (void)o;\n"
    "    binary_op_init_common(cb_in, cb_in, cb_out);\n"
    "    add_tiles_init(cb_in, cb_in);\n"
    "    for (uint32_t i = 0; i < n; i++) {\n"
    "#ifdef COMPILE_FOR_BRISC\n"
    "        cb_reserve_back(cb_in, 2);\n"
    "        noc_async_read_tile(i, a, get_write_ptr(cb_in));\n"
    "        noc_async_read_tile(i, b, get_write_ptr(cb_in) + page);\n"
    "        noc_async_read_barrier();\n"
    "        cb_push_back(cb_in, 2);\n"
    "#endif\n"
    "#ifdef COMPILE_FOR_TRISC\n"
    "        cb_wait_front(cb_in, 2);\n"
    "#endif\n"
    "        tile_regs_acquire();\n"
    "        add_tiles(cb_in, cb_in, 0, 1, 0);\n"
    "        tile_regs_commit();\n"
    "        tile_regs_wait();\n"
    "#ifdef COMPILE_FOR_TRISC\n"
    "        cb_reserve_back(cb_out, 1);\n"
    "        pack_tile(0, cb_out);\n"
    "        cb_push_back(cb_out, 1);\n"
    "        cb_pop_front(cb_in, 2);\n"
    "#endif\n"
    "#ifdef COMPILE_FOR_NCRISC\n"
    "        cb_wait_front(cb_out, 1);\n"
    "        noc_async_write_tile(i, o, get_read_ptr(cb_out));\n"
    "        noc_async_write_barrier();\n"
    "        cb_pop_front(cb_out, 1);\n"
    "#endif\n"
    "        tile_regs_release();\n"
    "    }\n"
    "}\n";

static void test_single_source_kernel(void) {
    lm_device *dev = open_device(false, NULL);
    CHECK(dev);
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_buffer_config bc;
    lm_buffer_config_init(&bc);
    bc.page_size = TILE_BYTES;
    bc.size = NT * TILE_BYTES;
    lm_buffer a = {0}, b = {0}, o = {0};
    lm_program prog = {0};
    lm_core_range_set core = lm_core_range_set_of(1, 0, 1, 0);
    CHECK_OK(lm_create_buffer(dev, &bc, &a));
    CHECK_OK(lm_create_buffer(dev, &bc, &b));
    CHECK_OK(lm_create_buffer(dev, &bc, &o));
    CHECK_OK(lm_create_program(dev, &prog));
    lm_circular_buffer_config cb;
    lm_circular_buffer_config_init(&cb);
    lm_circular_buffer h;
    cb.index_count = 1;
    cb.total_size = 4 * TILE_BYTES;
    cb.indices[0] = (lm_cb_index_config){0, LM_DATA_FORMAT_FLOAT32, TILE_BYTES};
    CHECK_OK(lm_create_circular_buffer(prog, &core, &cb, &h));
    cb.total_size = 2 * TILE_BYTES;
    cb.indices[0] = (lm_cb_index_config){16, LM_DATA_FORMAT_FLOAT32, TILE_BYTES};
    CHECK_OK(lm_create_circular_buffer(prog, &core, &cb, &h));
    uint32_t ct[64] = {TILE_BYTES}, nct = 1, n = 0;
    const lm_buffer bufs[] = {a, b, o};
    for (int i = 0; i < 3; i++) {
        CHECK_OK(lm_tensor_accessor_args(bufs[i], ct + nct, 64 - nct, &n));
        nct += n;
    }
    uint64_t aa = 0, ba = 0, oa = 0;
    CHECK_OK(lm_buffer_address(a, &aa));
    CHECK_OK(lm_buffer_address(b, &ba));
    CHECK_OK(lm_buffer_address(o, &oa));
    const uint32_t args[] = {(uint32_t)aa, (uint32_t)ba, (uint32_t)oa, NT};
    static const lm_processor procs[] = {LM_PROCESSOR_DM0, LM_PROCESSOR_DM1, LM_PROCESSOR_COMPUTE};
    for (int i = 0; i < 3; i++) {
        lm_kernel_config kc;
        lm_kernel_config_init(&kc, procs[i]);
        kc.compile_args = ct;
        kc.compile_arg_count = nct;
        kc.fp32_dest_acc_en = true;
        lm_kernel k;
        lm_status st =
            lm_create_kernel_from_string(prog, "tiles_add.cpp", single_source, &core, &kc, &k);
        if (st) printf("  processor %d: %s\n", (int)procs[i], lm_last_error());
        CHECK_OK(st);
        CHECK_OK(lm_set_runtime_args(prog, k, (lm_core){1, 0}, args, 4));
    }
    CHECK_OK(lm_enqueue_write_buffer(cq, a, a_tiles, false));
    CHECK_OK(lm_enqueue_write_buffer(cq, b, b_tiles, false));
    lm_status st = lm_enqueue_program(cq, prog, true);
    if (st) printf("  %s\n", lm_last_error());
    CHECK_OK(st);
    memset(out_tiles, 0, sizeof out_tiles);
    CHECK_OK(lm_enqueue_read_buffer(cq, o, out_tiles, true));
    static float rm[32][32 * NT];
    CHECK_OK(lm_untilize(out_tiles, NT * TILE_BYTES, LM_DATA_FORMAT_FLOAT32, 32, 32 * NT, rm,
                         sizeof rm));
    for (uint32_t t = 0; t < NT; t++)
        for (int r = 0; r < 32; r++)
            for (int c = 0; c < 32; c++)
                OUT[t][r * 32 + c] = rm[r][32 * t + c];
    CHECK(outputs_are(0, f_add, 0, 0) && outputs_are(1, f_add, 1, 1));
    lm_release_program(prog);
    lm_deallocate_buffer(a);
    lm_deallocate_buffer(b);
    lm_deallocate_buffer(o);
    CHECK_OK(lm_device_close(dev));
}

/* tilize_block then untilize_block: the row-major pages of A (32 x 64 per
 * two pages) become tiles and back. */
static void test_tilize_untilize(void) {
    lm_device *dev = open_device(false, NULL);
    CHECK(dev);
    CHECK(run_ok(dev, "tilize.cpp",
                 "#include \"api/compute/tilize.h\"\n"
                 "#include \"api/compute/untilize.h\"\n"
                 "void kernel_main() {\n"
                 "    tilize_init(0, 2, 16);\n"
                 "    cb_wait_front(0, 2); cb_reserve_back(16, 2);\n"
                 "    tilize_block(0, 2, 16);\n"
                 "    cb_push_back(16, 2); cb_pop_front(0, 2);\n"
                 "    tilize_uninit(0, 16);\n"
                 "    untilize_init(1);\n"
                 "    cb_wait_front(1, 2); cb_reserve_back(16, 2);\n"
                 "    untilize_block(1, 2, 16);\n"
                 "    cb_push_back(16, 2); cb_pop_front(1, 2);\n"
                 "}\n",
                 4));
    /* Output tiles 0-1: a_tiles' bytes read as row-major 32 x 64 and tilized. */
    static float rm[32 * 64], want[2 * 1024];
    memcpy(rm, a_tiles, sizeof rm);
    CHECK_OK(lm_tilize(rm, 32, 64, LM_DATA_FORMAT_FLOAT32, want, sizeof want));
    CHECK(memcmp(out_tiles, want, sizeof want) == 0);
    /* Tiles 2-3: b_tiles untilized, as row-major 32 x 64 bytes. */
    CHECK_OK(lm_untilize(b_tiles, sizeof b_tiles, LM_DATA_FORMAT_FLOAT32, 32, 64, rm, sizeof rm));
    CHECK(memcmp(out_tiles + 2 * TILE_BYTES, rm, sizeof rm) == 0);
    /* Misuse: dst held, output not reserved and full, unknown CB. */
    CHECK(run_fails(dev, "tilize_held.cpp",
                    "#include \"api/compute/tilize.h\"\n"
                    "void kernel_main() { tile_regs_acquire(); tilize_block(0, 1, 16); }\n",
                    0, "tilize_block while dst is acquired: it uses dst itself"));
    CHECK(run_fails(dev, "tilize_wait.cpp",
                    "#include \"api/compute/tilize.h\"\n"
                    "void kernel_main() { tilize_block(0, 1, 16); }\n",
                    0, "tilize_block: 1 tiles of circular buffer 0 were not waited for"));
    CHECK(run_fails(dev, "untilize_cb.cpp",
                    "#include \"api/compute/untilize.h\"\n"
                    "void kernel_main() { cb_wait_front(0, 1); untilize_block(0, 1, 9); }\n",
                    0, "untilize_block: circular buffer 9 is not configured on this core"));
    CHECK_OK(lm_device_close(dev));
}

/* pack_tile without cb_reserve_back while the CB has room: tt-metal's
 * hardware runs it; here a warning, or a fault with strict_protocol. */
static const char *lax = "#include \"compute_kernel_api.h\"\n"
                         "void kernel_main(void) {\n"
                         "    for (uint32_t t = 0; t < 2; t++) {\n"
                         "        cb_wait_front(1, 1);\n"
                         "        tile_regs_acquire(); copy_tile(1, 0, 0); tile_regs_commit();\n"
                         "        pack_tile(0, 16);\n"
                         "        tile_regs_wait(); tile_regs_release();\n"
                         "        cb_push_back(16, 1); cb_pop_front(1, 1);\n"
                         "        cb_wait_front(0, 1); cb_pop_front(0, 1);\n"
                         "    }\n"
                         "}\n";

static void test_lenient_and_strict(void) {
    lines got = {""};
    lm_device *dev = open_device(false, &got);
    CHECK(dev);
    CHECK_OK(lm_light_metal_begin_capture(dev, NULL));
    CHECK(run_ok(dev, "lax.c", lax, 2));
    lm_binary *bin = NULL;
    CHECK_OK(lm_light_metal_end_capture(dev, &bin));
    CHECK(outputs_are(0, f_b, 0, 0) && outputs_are(1, f_b, 1, 1));
    /* One line per pc (both lapses of that pack_tile), not per iteration. */
    const char *w1 = "(0,0) COMPUTE: warning: kernel 'lax.c' pc 0x";
    const char *p1 = strstr(got.text, w1);
    CHECK(p1 && strstr(p1, ": pack_tile after tile_regs_commit without tile_regs_wait (allowed; "
                           "strict_protocol makes this a fault); "));
    CHECK(strstr(got.text,
                 "fault); pack_tile into circular buffer 16 without cb_reserve_back (tile "
                 "0 of the back, 0 reserved) (allowed; strict_protocol makes this a "
                 "fault)\n"));
    int lines_n = 0;
    for (const char *p = got.text; (p = strchr(p, '\n')); p++)
        lines_n++;
    if (lines_n != 1) printf("  got:\n%s", got.text);
    CHECK(lines_n == 1);
    CHECK_OK(lm_device_close(dev));

    /* strict_protocol: the first lapse faults. */
    lm_device *strict = open_device(true, NULL);
    CHECK(strict);
    CHECK(run_fails(strict, "lax.c", lax, 2,
                    "pack_tile after tile_regs_commit without tile_regs_wait (strict_protocol)"));
    CHECK_OK(lm_device_close(strict));

    /* Replaying the lenient capture: runs as captured; strict on request. */
    lm_replay *rp = NULL;
    REPLAY_RUN(bin, rp);
    lm_replay_options ro;
    lm_replay_options_init(&ro);
    ro.strict_protocol = true;
    CHECK_FAILS(lm_replay_run(rp, NULL, &ro, NULL), LM_ERR_DEVICE_FAULT,
                "pack_tile after tile_regs_commit without tile_regs_wait (strict_protocol)");
    lm_replay_close(rp);
    lm_binary_free(bin);

    /* A capture from a strict device replays strict. */
    strict = open_device(true, NULL);
    CHECK_OK(lm_light_metal_begin_capture(strict, NULL));
    CHECK(run_ok(strict, "add.c",
                 "#include \"compute_kernel_api.h\"\n"
                 "void kernel_main(void) {\n"
                 "    for (uint32_t t = 0; t < 2; t++) {\n"
                 "        acquire_dst(); cb_wait_front(0, 1); cb_wait_front(1, 1);\n"
                 "        add_tiles(0, 1, 0, 0, 0);\n"
                 "        cb_reserve_back(16, 1); pack_tile(0, 16); cb_push_back(16, 1);\n"
                 "        cb_pop_front(0, 1); cb_pop_front(1, 1); release_dst();\n"
                 "    }\n"
                 "}\n",
                 2));
    CHECK_OK(lm_light_metal_end_capture(strict, &bin));
    CHECK_OK(lm_device_close(strict));
    REPLAY_RUN(bin, rp);
    lm_replay_close(rp);
    lm_binary_free(bin);
}

int main(void) {
    make_inputs();
    TEST_RUN(test_acquire_dst_and_dialects);
    TEST_RUN(test_2026_compute_features);
    TEST_RUN(test_renamed_compute_calls);
    TEST_RUN(test_single_source_kernel);
    TEST_RUN(test_tilize_untilize);
    TEST_RUN(test_lenient_and_strict);
    return test_summary();
}
