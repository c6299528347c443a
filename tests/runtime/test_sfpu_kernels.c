/* The SFPU operations from kernel code, end to end on the simulator: a C
 * kernel and a C++ kernel in tt-metal's 2026 dialect call the unary ops with
 * parameters (float bits from runtime arguments, int32 decimals, data format
 * numbers), the dst-to-dst binary ops and where_tile, and pack the results;
 * every element is checked exactly -- against the definition for the exact
 * ops, against the tile engine run in this process for the others (so the
 * parameters must arrive unchanged). Parameters and op codes an op cannot
 * take fault with a message that names the call. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lightmetal/lightmetal.h"
#include "lm_test.h"
#include "sim/tile/tile_engine.h"

#define TILE_BYTES 4096u /* float32 tiles */
#define NOUT 8u          /* output tiles at most (8 fp32 dst tiles) */

static uint32_t f2u(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static lm_device *open_device(void) {
    lm_device_options o;
    lm_device_options_init(&o);
    o.grid_x = 1;
    o.grid_y = 1;
    o.dram_banks = 2;
    o.dram_bank_size = 16 << 20;
    o.num_threads = 1;
    lm_device *dev = NULL;
    return lm_device_open(&o, &dev) ? NULL : dev;
}

/* One tile of A into CB 0 and one of B into CB 1. */
static const char *reader =
    "void kernel_main() {\n"
    "    const InterleavedAddrGen<true> a = {get_arg_val<uint32_t>(0), 4096};\n"
    "    const InterleavedAddrGen<true> b = {get_arg_val<uint32_t>(1), 4096};\n"
    "    cb_reserve_back(0, 1);\n"
    "    noc_async_read_tile(0, a, get_write_ptr(0));\n"
    "    noc_async_read_barrier();\n"
    "    cb_push_back(0, 1);\n"
    "    cb_reserve_back(1, 1);\n"
    "    noc_async_read_tile(0, b, get_write_ptr(1));\n"
    "    noc_async_read_barrier();\n"
    "    cb_push_back(1, 1);\n"
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

static float A[1024], B[1024], OUT[NOUT][1024];
static uint8_t a_tile[TILE_BYTES], b_tile[TILE_BYTES], out_tiles[NOUT * TILE_BYTES];

/* A in [-8, 8) and B in [-4, 4) on a 1/256 grid, B never 0; a few edges. */
static int make_inputs(void) {
    uint32_t seed = 7;
    for (int i = 0; i < 1024; i++) {
        seed = seed * 1664525u + 1013904223u;
        A[i] = (float)((int)(seed >> 20) - 2048) / 256.0f;
        seed = seed * 1664525u + 1013904223u;
        B[i] = (float)((int)(seed >> 21) - 1024) / 256.0f;
        if (B[i] == 0.0f) B[i] = 0.75f;
    }
    A[0] = 0.0f, A[1] = -0.0f, A[2] = 2.5f, A[3] = -2.5f, A[4] = 0.05f, A[5] = 6.0f;
    B[2] = 2.5f;
    return !lm_tilize(A, 32, 32, LM_DATA_FORMAT_FLOAT32, a_tile, sizeof a_tile) &&
           !lm_tilize(B, 32, 32, LM_DATA_FORMAT_FLOAT32, b_tile, sizeof b_tile);
}

/* Runs `compute` (C++ when its name ends in .cpp) with `args` as its runtime
 * arguments; the writer writes `outs` tiles, untilized into OUT. Returns the
 * status with the message in msg. */
static lm_status run(lm_device *dev, const char *name, const char *compute, const uint32_t *args,
                     uint32_t nargs, uint32_t outs, char *msg, size_t msg_size) {
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
    cb.index_count = 1;
    lm_circular_buffer h;
    bc.size = TILE_BYTES;
    lm_status st = lm_create_buffer(dev, &bc, &a);
    if (!st) st = lm_create_buffer(dev, &bc, &b);
    bc.size = NOUT * TILE_BYTES;
    if (!st) st = lm_create_buffer(dev, &bc, &o);
    if (!st) st = lm_create_program(dev, &prog);
    static const uint32_t index[] = {0, 1, 16};
    for (uint32_t i = 0; i < 3 && !st; i++) {
        cb.total_size = (index[i] == 16 ? NOUT : 1) * TILE_BYTES;
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
    if (!st && nargs) st = lm_set_runtime_args(prog, kc, (lm_core){0, 0}, args, nargs);
    if (!st) st = lm_enqueue_write_buffer(cq, a, a_tile, false);
    if (!st) st = lm_enqueue_write_buffer(cq, b, b_tile, false);
    if (!st) st = lm_enqueue_program(cq, prog, true);
    if (!st) st = lm_enqueue_read_buffer(cq, o, out_tiles, true);
    snprintf(msg, msg_size, "%s", st ? lm_last_error() : "");
    if (!st) {
        static float rm[32][32 * NOUT];
        st = lm_untilize(out_tiles, sizeof out_tiles, LM_DATA_FORMAT_FLOAT32, 32, 32 * NOUT, rm,
                         sizeof rm);
        for (uint32_t t = 0; t < NOUT; t++)
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

static int run_ok(lm_device *dev, const char *name, const char *compute, const uint32_t *args,
                  uint32_t nargs, uint32_t outs) {
    char msg[1200];
    lm_status st = run(dev, name, compute, args, nargs, outs, msg, sizeof msg);
    if (st) printf("  %s: %s\n", name, msg);
    return st == LM_OK;
}

static int run_fails(lm_device *dev, const char *name, const char *compute, const char *needle) {
    char msg[1200];
    lm_status st = run(dev, name, compute, NULL, 0, 0, msg, sizeof msg);
    int ok = st == LM_ERR_DEVICE_FAULT && strstr(msg, needle);
    if (!ok) printf("  %s: got %s: %s\n", name, lm_status_string(st), msg);
    return ok;
}

/* Output tile t is `want` bit for bit (NaNs are canonical on both sides). */
static int tile_is(uint32_t t, const float *want, const char *what) {
    for (int i = 0; i < 1024; i++)
        if (f2u(OUT[t][i]) != f2u(want[i])) {
            printf("  %s: element %d (A %a, B %a): got %a, want %a\n", what, i, A[i], B[i],
                   OUT[t][i], want[i]);
            return 0;
        }
    return 1;
}

/* The tile engine's result of a unary op on `in`, with fp32 dst as the
 * kernels have it. */
static tile_dst ref_dst;

static const float *engine_unary(const float *in, tile_sfpu_op op, uint32_t p0, uint32_t p1) {
    tile_dst_init(&ref_dst, true);
    memcpy(ref_dst.reg[0], in, sizeof ref_dst.reg[0]);
    if (tile_sfpu_param(&ref_dst, 0, op, p0, p1)) printf("  engine: %s\n", lm_last_error());
    return ref_dst.reg[0];
}

static const float *engine_binary(const float *x, const float *y, tile_dst_binary_op op) {
    tile_dst_init(&ref_dst, true);
    memcpy(ref_dst.reg[0], x, sizeof ref_dst.reg[0]);
    memcpy(ref_dst.reg[1], y, sizeof ref_dst.reg[1]);
    if (tile_dst_binary(&ref_dst, op, 0, 1, 2)) printf("  engine: %s\n", lm_last_error());
    return ref_dst.reg[2];
}

/* Exact ops with parameters from runtime arguments, in a C kernel. */
static void test_c_kernel_exact_ops(void) {
    lm_device *dev = open_device();
    CHECK(dev);
    const uint32_t args[] = {f2u(6.0f), f2u(0.5f), f2u(-1.5f), f2u(2.25f), f2u(1.75f)};
    CHECK(run_ok(dev, "exact.c",
                 "#include \"compute_kernel_api.h\"\n"
                 "#include \"compute_kernel_api/eltwise_unary/relu.h\"\n"
                 "#include \"compute_kernel_api/eltwise_unary/clamp.h\"\n"
                 "#include \"compute_kernel_api/eltwise_unary/rounding.h\"\n"
                 "#include \"compute_kernel_api/eltwise_unary/binop_with_scalar.h\"\n"
                 "#include \"compute_kernel_api/eltwise_unary/comp.h\"\n"
                 "#include \"compute_kernel_api/eltwise_unary/typecast.h\"\n"
                 "void kernel_main(void) {\n"
                 "    uint32_t six = get_arg_val(0), half = get_arg_val(1);\n"
                 "    uint32_t lo = get_arg_val(2), hi = get_arg_val(3), s = get_arg_val(4);\n"
                 "    cb_wait_front(0, 1);\n"
                 "    tile_regs_acquire();\n"
                 "    for (uint32_t i = 0; i < 8; i++) copy_tile(0, 0, i);\n"
                 "    relu_max_tile_init(); relu_max_tile(0, six);\n"
                 "    leaky_relu_tile_init(); leaky_relu_tile(1, half);\n"
                 "    clamp_tile_init(); clamp_tile(2, lo, hi);\n"
                 "    binop_with_scalar_tile_init(); rsub_unary_tile(3, s);\n"
                 "    rounding_op_tile_init(); floor_tile(4); round_tile(5, 1);\n"
                 "    unary_gt_tile_init(); unary_gt_tile(6, s);\n"
                 "    typecast_tile_init();\n"
                 "    typecast_tile(7, LM_DF_FLOAT32, LM_DF_INT32);\n"
                 "    typecast_tile(7, LM_DF_INT32, LM_DF_FLOAT32);\n"
                 "    tile_regs_commit(); tile_regs_wait();\n"
                 "    cb_reserve_back(16, 8);\n"
                 "    for (uint32_t i = 0; i < 8; i++) pack_tile(i, 16);\n"
                 "    cb_push_back(16, 8);\n"
                 "    tile_regs_release();\n"
                 "    cb_pop_front(0, 1);\n"
                 "    cb_wait_front(1, 1); cb_pop_front(1, 1);\n"
                 "}\n",
                 args, 5, 8));
    static float want[8][1024];
    for (int i = 0; i < 1024; i++) {
        float x = A[i];
        want[0][i] = x > 6.0f ? 6.0f : x < 0.0f ? 0.0f : x;
        want[1][i] = x < 0.0f ? x * 0.5f : x;
        want[2][i] = x < -1.5f ? -1.5f : x > 2.25f ? 2.25f : x;
        want[3][i] = 1.75f - x;
        want[4][i] = floorf(x);
        want[5][i] = nearbyintf(x * 10.0f) / 10.0f; /* torch.round(x, decimals=1) */
        want[6][i] = x > 1.75f ? 1.0f : 0.0f;
        want[7][i] = (float)(int32_t)x;
    }
    static const char *const what[8] = {
        "relu_max 6", "leaky_relu 0.5", "clamp",         "rsub_unary",
        "floor",      "round 1",        "unary_gt 1.75", "typecast round trip"};
    for (uint32_t t = 0; t < 8; t++)
        CHECK(tile_is(t, want[t], what[t]));
    CHECK(OUT[5][2] == 2.5f && OUT[0][5] == 6.0f && f2u(OUT[0][1]) == 0x80000000u);
    CHECK_OK(lm_device_close(dev));
}

/* Transcendental ops with parameters, a binary op and where_tile, in a C
 * kernel; the results are the engine's, so the parameters arrived intact. */
static void test_c_kernel_transcendentals(void) {
    lm_device *dev = open_device();
    CHECK(dev);
    const uint32_t alpha = f2u(1.25f), beta = f2u(2.0f), recip = f2u(0.5f), thr = f2u(3.0f);
    const uint32_t args[] = {alpha, beta, recip, thr};
    CHECK(run_ok(dev, "transcendental.c",
                 "#include \"compute_kernel_api.h\"\n"
                 "#include \"compute_kernel_api/eltwise_unary/erf_erfc.h\"\n"
                 "#include \"compute_kernel_api/eltwise_unary/trigonometry.h\"\n"
                 "#include \"compute_kernel_api/eltwise_unary/elu.h\"\n"
                 "#include \"compute_kernel_api/eltwise_unary/softplus.h\"\n"
                 "#include \"compute_kernel_api/eltwise_unary/where.h\"\n"
                 "#include \"compute_kernel_api/atan2.h\"\n"
                 "#include \"compute_kernel_api/binary_comp.h\"\n"
                 "void kernel_main(void) {\n"
                 "    uint32_t alpha = get_arg_val(0), beta = get_arg_val(1);\n"
                 "    uint32_t recip = get_arg_val(2), thr = get_arg_val(3);\n"
                 "    cb_wait_front(0, 1); cb_wait_front(1, 1);\n"
                 "    tile_regs_acquire();\n"
                 "    copy_tile(0, 0, 0); copy_tile(1, 0, 1);\n"
                 "    for (uint32_t i = 2; i < 6; i++) copy_tile(0, 0, i);\n"
                 "    erf_tile_init(); erf_tile(2);\n"
                 "    sin_tile_init(); sin_tile(3);\n"
                 "    elu_tile_init(); elu_tile(4, alpha);\n"
                 "    softplus_tile_init(); softplus_tile(5, beta, recip, thr);\n"
                 "    atan2_binary_tile_init(); atan2_binary_tile(0, 1, 6);\n"
                 "    lt_binary_tile_init(); lt_binary_tile(0, 1, 7);\n"
                 "    where_tile_init(); where_tile(7, 0, 1, 7);\n"
                 "    tile_regs_commit(); tile_regs_wait();\n"
                 "    cb_reserve_back(16, 8);\n"
                 "    for (uint32_t i = 0; i < 8; i++) pack_tile(i, 16);\n"
                 "    cb_push_back(16, 8);\n"
                 "    tile_regs_release();\n"
                 "    cb_pop_front(0, 1); cb_pop_front(1, 1);\n"
                 "}\n",
                 args, 4, 8));
    CHECK(tile_is(2, engine_unary(A, TILE_SFPU_ERF, 0, 0), "erf"));
    CHECK(tile_is(3, engine_unary(A, TILE_SFPU_SIN, 0, 0), "sin"));
    CHECK(tile_is(4, engine_unary(A, TILE_SFPU_ELU, alpha, 0), "elu"));
    CHECK(tile_is(5, engine_unary(A, TILE_SFPU_SOFTPLUS, beta, thr), "softplus"));
    CHECK(tile_is(6, engine_binary(A, B, TILE_DST_BINARY_ATAN2), "atan2"));
    static float mn[1024];
    for (int i = 0; i < 1024; i++)
        mn[i] = A[i] < B[i] ? A[i] : B[i];
    CHECK(tile_is(7, mn, "where(lt)"));
    /* a few values against their definitions: the engine is right too */
    CHECK(fabs(OUT[2][4] - erf(0.05)) < 1e-8 && OUT[3][0] == 0.0f);
    CHECK(OUT[5][0] == (float)(log(2.0) / 2.0)); /* softplus(0), beta 2 */
    CHECK_OK(lm_device_close(dev));
}

/* The C++ dialect: 2026 header paths, templated and ckernel:: forms,
 * typecast_tile<IN, OUT>, where_tile<DataFormat>, round_tile without
 * decimals, power_tile's float exponent. */
static void test_cxx_kernel(void) {
    lm_device *dev = open_device();
    CHECK(dev);
    const uint32_t p = f2u(2.5f), scale = 0x3f867d5f, alpha = 0x3fd62d7d;
    const uint32_t args[] = {p, scale, alpha};
    CHECK(
        run_ok(dev, "sfpu_ops.cpp",
               "#include <cstdint>\n"
               "#include \"api/compute/compute_kernel_api.h\"\n"
               "#include \"api/compute/tile_move_copy.h\"\n"
               "#include \"api/compute/eltwise_unary/erf_erfc.h\"\n"
               "#include \"api/compute/eltwise_unary/trigonometry.h\"\n"
               "#include \"api/compute/eltwise_unary/selu.h\"\n"
               "#include \"api/compute/eltwise_unary/typecast.h\"\n"
               "#include \"api/compute/eltwise_unary/where.h\"\n"
               "#include \"api/compute/eltwise_unary/rounding.h\"\n"
               "#include \"api/compute/eltwise_binary_sfpu.h\"\n"
               "#include \"api/compute/binary_comp.h\"\n"
               "void kernel_main() {\n"
               "    const uint32_t p = get_arg_val<uint32_t>(0);\n"
               "    const uint32_t scale = get_arg_val<uint32_t>(1);\n"
               "    const uint32_t alpha = get_arg_val<uint32_t>(2);\n"
               "    constexpr auto in0 = tt::CBIndex::c_0, in1 = tt::CBIndex::c_1;\n"
               "    constexpr auto out = tt::CBIndex::c_16;\n"
               "    cb_wait_front(in0, 1); cb_wait_front(in1, 1);\n"
               "    tile_regs_acquire();\n"
               "    for (uint32_t i = 0; i < 8; i++) copy_tile(in0, 0, i);\n"
               "    copy_tile(in1, 0, 1);\n"
               "    ckernel::power_tile_init(); ckernel::power_tile<true>(2, p);\n"
               "    erfc_tile_init<false>(); erfc_tile<false>(3);\n"
               "    ckernel::tan_tile_init(); ckernel::tan_tile(4);\n"
               "    selu_tile_init(); selu_tile(5, scale, alpha);\n"
               "    typecast_tile_init();\n"
               "    typecast_tile<(uint32_t)DataFormat::Float32, (uint32_t)DataFormat::Int32>(6);\n"
               "    typecast_tile<DataFormat::Int32, DataFormat::Float16_b>(6);\n"
               "    ge_binary_tile_init(); ge_binary_tile(0, 1, 7);\n"
               "    where_tile_init(); where_tile<DataFormat::Float32>(7, 0, 1, 7);\n"
               "    abs_tile(0);\n"
               "    power_binary_tile_init(); power_binary_tile(0, 1, 0);\n"
               "    rounding_op_tile_init(); round_tile(1);\n"
               "    tile_regs_commit(); tile_regs_wait();\n"
               "    cb_reserve_back(out, 8);\n"
               "    for (uint32_t i = 0; i < 8; i++) ckernel::pack_tile(i, out);\n"
               "    cb_push_back(out, 8);\n"
               "    tile_regs_release();\n"
               "    cb_pop_front(in0, 1); cb_pop_front(in1, 1);\n"
               "}\n",
               args, 3, 8));
    static float absa[1024], want[1024];
    for (int i = 0; i < 1024; i++)
        absa[i] = fabsf(A[i]);
    CHECK(tile_is(0, engine_binary(absa, B, TILE_DST_BINARY_POWER), "power_binary(|A|, B)"));
    for (int i = 0; i < 1024; i++)
        want[i] = nearbyintf(B[i]);
    CHECK(tile_is(1, want, "round(B)"));
    CHECK(tile_is(2, engine_unary(A, TILE_SFPU_POWER, p, 0), "power 2.5"));
    CHECK(tile_is(3, engine_unary(A, TILE_SFPU_ERFC, 0, 0), "erfc"));
    CHECK(tile_is(4, engine_unary(A, TILE_SFPU_TAN, 0, 0), "tan"));
    CHECK(tile_is(5, engine_unary(A, TILE_SFPU_SELU, scale, alpha), "selu"));
    for (int i = 0; i < 1024; i++)
        want[i] = (float)(int32_t)A[i]; /* small integers: exact in bfloat16 */
    CHECK(tile_is(6, want, "typecast<Float32, Int32> then <Int32, Float16_b>"));
    for (int i = 0; i < 1024; i++)
        want[i] = A[i] >= B[i] ? A[i] : B[i];
    CHECK(tile_is(7, want, "where<Float32>(ge)"));
    CHECK(OUT[2][2] == (float)pow(2.5, 2.5) && OUT[0][2] == (float)pow(2.5, 2.5));
    CHECK(f2u(OUT[2][3]) == TILE_CANONICAL_NAN_BITS); /* (-2.5)^2.5 */
    CHECK_OK(lm_device_close(dev));
}

/* Parameters, op codes and element kinds an op cannot take fault, naming
 * the call; so do the new ops outside their place in the dst protocol. */
static void test_faults(void) {
    lm_device *dev = open_device();
    CHECK(dev);
#define KERNEL(body)                                                                               \
    "#include \"compute_kernel_api.h\"\n"                                                          \
    "void kernel_main(void) {\n"                                                                   \
    "    cb_wait_front(0, 1); cb_wait_front(1, 1);\n"                                              \
    "    tile_regs_acquire(); copy_tile(0, 0, 0);\n" body "\n"                                     \
    "}\n"
    CHECK(run_fails(dev, "hardtanh.c", KERNEL("hardtanh_tile(0, 0x40000000, 0x3f800000);"),
                    "hardtanh_tile: min 2 must not be above max 1"));
    CHECK(run_fails(dev, "softplus.c", KERNEL("softplus_tile(0, 0, 0, 0x41a00000);"),
                    "softplus_tile: beta 0 must be a nonzero number"));
    CHECK(run_fails(dev, "celu.c", KERNEL("celu_tile(0, 0x7fc00000, 0);"),
                    "celu_tile: alpha nan must be a nonzero number"));
    CHECK(run_fails(dev, "round.c", KERNEL("round_tile(0, -39);"),
                    "round_tile: decimals -39 out of range (-38..38 for float32)"));
    CHECK(run_fails(dev, "typecast.c", KERNEL("typecast_tile(0, LM_DF_FLOAT32, 9);"),
                    "typecast_tile: no cast from data format 1 to 9"));
    CHECK(run_fails(dev, "badop.c",
                    KERNEL("lm_compute_ecall(LM_ECALL_SFPU_TILE, 200, 0, 0, 0, 0);"),
                    "sfpu: unknown operation 200"));
    CHECK(run_fails(dev, "badbinary.c",
                    KERNEL("lm_compute_ecall(LM_ECALL_SFPU_BINARY, 99, 0, 0, 0, 0);"),
                    "binary SFPU: unknown operation 99"));
    CHECK(run_fails(dev, "badwhere.c",
                    KERNEL("lm_compute_ecall(LM_ECALL_SFPU_WHERE, 0, 0, 0, 0, 7);"),
                    "where_tile: unknown element kind 7"));
    CHECK(run_fails(dev, "where_index.c", KERNEL("where_int32_tile(0, 1, 2, 8);"),
                    "where_int32_tile: dst index 8 out of range (8 dst tiles with fp32 "
                    "accumulation on)"));
    CHECK(run_fails(dev, "atan2_index.c", KERNEL("atan2_binary_tile(0, 9, 0);"),
                    "atan2_binary_tile: dst index 9 out of range"));
    CHECK(run_fails(dev, "erf_index.c", KERNEL("erf_tile(8);"), "erf_tile: dst index 8"));
    CHECK(run_fails(dev, "protocol.c",
                    "#include \"compute_kernel_api.h\"\n"
                    "void kernel_main(void) { relu_max_tile(0, 0x40c00000); }\n",
                    "relu_max_tile outside its place in the dst protocol"));
    CHECK(run_fails(dev, "protocol_where.c",
                    "#include \"compute_kernel_api.h\"\n"
                    "void kernel_main(void) { where_int32_tile(0, 1, 2, 3); }\n",
                    "where_int32_tile outside its place in the dst protocol"));
#undef KERNEL
    CHECK_OK(lm_device_close(dev));
}

int main(void) {
    if (!make_inputs()) return 1;
    TEST_RUN(test_c_kernel_exact_ops);
    TEST_RUN(test_c_kernel_transcendentals);
    TEST_RUN(test_cxx_kernel);
    TEST_RUN(test_faults);
    return test_summary();
}
