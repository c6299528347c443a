/* C++ kernels in tt-metal's dialects: they compile unmodified (the dataflow
 * API without an include, get_arg_val<T>, constexpr and named compile-time
 * args, InterleavedAddrGenFast<DRAM>, TensorAccessor, experimental::,
 * both print styles) and move the right bytes; compile errors name the file
 * and line, SFPI and misplaced TensorAccessorArgs get messages that say what
 * is wrong. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lightmetal/lightmetal.h"
#include "lm_test.h"
#include "lm_test_replay.h"

#define PAGE 2048u
#define TILES 6u

static lm_device *open_device(void (*print)(void *, uint32_t, uint32_t, const char *, const char *),
                              void *user) {
    lm_device_options o;
    lm_device_options_init(&o);
    o.grid_x = 2;
    o.grid_y = 2;
    o.dram_banks = 3;
    o.dram_bank_size = 16 << 20;
    o.num_threads = 2;
    o.print = print;
    o.print_user = user;
    lm_device *dev = NULL;
    return lm_device_open(&o, &dev) ? NULL : dev;
}

/* Reads TILES pages of the DRAM buffer at arg 0 into CB 0 in three ways
 * (address generator, TensorAccessor, experimental::Noc), one per page
 * modulo 3; no include: data movement kernels get the dataflow API. */
static const char *reader_2026 =
    "#include <cstdint>\n"
    "#include <type_traits>\n"
    "void kernel_main() {\n"
    "    const uint32_t src = get_arg_val<uint32_t>(0);\n"
    "    const uint32_t n = get_arg_val<uint32_t>(1);\n"
    "    constexpr uint32_t cb = get_compile_time_arg_val(0);\n"
    "    constexpr auto args = TensorAccessorArgs<1>();\n"
    "    static_assert(args.next_compile_time_args_offset() == 3);\n"
    "    static_assert(std::is_same_v<decltype(cb), const uint32_t>);\n"
    "    const uint32_t page = get_tile_size(cb);\n"
    "    const InterleavedAddrGenFast<true> gen = {\n"
    "        .bank_base_address = src, .page_size = page, .data_format = DataFormat::Float16_b};\n"
    "    const auto acc = TensorAccessor(args, src, page);\n"
    "    const auto acc2 = TensorAccessor(args, src); /* the page size from the args */\n"
    "    experimental::Noc noc;\n"
    "    experimental::CircularBuffer out(cb);\n"
    "    for (uint32_t i = 0; i < n; i++) {\n"
    "        out.reserve_back(1);\n"
    "        if (i % 3 == 0) noc_async_read_tile(i, gen, get_write_ptr(cb));\n"
    "        else if (i % 3 == 1) noc_async_read_page(i, acc, out.get_write_ptr());\n"
    "        else noc.async_read(acc2, out, page, {.page_id = i}, {.offset_bytes = 0});\n"
    "        noc.async_read_barrier();\n"
    "        out.push_back(1);\n"
    "    }\n"
    "}\n";

/* Writes CB 0 to the buffer at arg 0, in the late-2025 dialect: named
 * compile-time args, tt::CB names, InterleavedAddrGen, noc_async_write_tile. */
static const char *writer_2025 =
    "#include \"dataflow_api.h\"\n"
    "#include \"debug/dprint.h\"\n"
    "void kernel_main() {\n"
    "    uint32_t dst = get_arg_val<uint32_t>(0);\n"
    "    uint32_t n = get_arg_val<uint32_t>(1);\n"
    "    constexpr uint32_t cb = get_named_compile_time_arg_val(\"cb_out\");\n"
    "    static_assert(cb == tt::CB::c_in0);\n"
    "    const InterleavedAddrGen<true> gen = {.bank_base_address = dst,\n"
    "                                          .page_size = get_tile_size(cb)};\n"
    "    for (uint32_t i = 0; i < n; i++) {\n"
    "        cb_wait_front(cb, 1);\n"
    "        noc_async_write_tile(i, gen, get_read_ptr(cb));\n"
    "        noc_async_writes_flushed();\n"
    "        cb_pop_front(cb, 1);\n"
    "    }\n"
    "    noc_async_write_barrier();\n"
    "}\n";

typedef struct prog_result {
    lm_status status;
    char message[1100];
} prog_result;

/* Runs reader + writer on core (0,0) with CB 0: in -> out. With `capture`,
 * names the buffers "in" and "out" and ends the device's capture while they
 * are alive, into *capture. */
static prog_result run_copy(lm_device *dev, const char *reader, const char *writer, const void *in,
                            void *out, lm_binary **capture) {
    prog_result r = {LM_OK, ""};
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_buffer_config bc;
    lm_buffer_config_init(&bc);
    bc.size = TILES * PAGE;
    bc.page_size = PAGE;
    lm_buffer src = {0}, dst = {0};
    lm_program prog = {0};
    lm_kernel kr, kw;
    lm_core_range_set core = lm_core_range_set_of(0, 0, 0, 0);
    lm_circular_buffer_config cb;
    lm_circular_buffer_config_init(&cb);
    cb.total_size = 2 * PAGE;
    cb.index_count = 1;
    cb.indices[0] = (lm_cb_index_config){0, LM_DATA_FORMAT_FLOAT16_B, PAGE};
    lm_circular_buffer h;
    lm_status st = lm_create_buffer(dev, &bc, &src);
    if (!st) st = lm_create_buffer(dev, &bc, &dst);
    if (!st && capture) st = lm_capture_name_buffer(src, "in");
    if (!st && capture) st = lm_capture_name_buffer(dst, "out");
    if (!st) st = lm_create_program(dev, &prog);
    if (!st) st = lm_create_circular_buffer(prog, &core, &cb, &h);
    uint32_t ct[8] = {0};
    uint32_t nct = 0;
    if (!st) st = lm_tensor_accessor_args(src, ct + 1, 7, &nct);
    lm_kernel_config rc, wc;
    lm_kernel_config_init(&rc, LM_PROCESSOR_DM0);
    lm_kernel_config_init(&wc, LM_PROCESSOR_DM1);
    rc.compile_args = ct;
    rc.compile_arg_count = 1 + nct;
    lm_named_compile_arg named[] = {{"cb_out", 0}};
    wc.named_compile_args = named;
    wc.named_compile_arg_count = 1;
    lm_kernel_define defs[] = {{"UNUSED_FLAG", NULL}, {"UNUSED_VALUE", "3"}};
    wc.defines = defs;
    wc.define_count = 2;
    if (!st) st = lm_create_kernel_from_string(prog, "reader.cpp", reader, &core, &rc, &kr);
    if (!st) st = lm_create_kernel_from_string(prog, "writer.cpp", writer, &core, &wc, &kw);
    uint64_t sa = 0, da = 0;
    if (!st) st = lm_buffer_address(src, &sa);
    if (!st) st = lm_buffer_address(dst, &da);
    uint32_t ra[] = {(uint32_t)sa, TILES}, wa[] = {(uint32_t)da, TILES};
    if (!st) st = lm_set_runtime_args(prog, kr, (lm_core){0, 0}, ra, 2);
    if (!st) st = lm_set_runtime_args(prog, kw, (lm_core){0, 0}, wa, 2);
    if (!st) st = lm_enqueue_write_buffer(cq, src, in, true);
    if (!st) st = lm_enqueue_program(cq, prog, true);
    if (!st) st = lm_enqueue_read_buffer(cq, dst, out, true);
    if (!st && capture) st = lm_light_metal_end_capture(dev, capture);
    r.status = st;
    snprintf(r.message, sizeof r.message, "%s", st ? lm_last_error() : "");
    if (prog.id) lm_release_program(prog);
    if (src.id) lm_deallocate_buffer(src);
    if (dst.id) lm_deallocate_buffer(dst);
    return r;
}

static void test_data_movement_dialects(void) {
    static uint8_t in[TILES * PAGE], out[TILES * PAGE];
    for (size_t i = 0; i < sizeof in; i++)
        in[i] = (uint8_t)(i * 131 + i / 7);
    lm_device *dev = open_device(NULL, NULL);
    CHECK(dev);
    prog_result r = run_copy(dev, reader_2026, writer_2025, in, out, NULL);
    if (r.status) printf("  %s\n", r.message);
    CHECK_OK(r.status);
    CHECK(memcmp(in, out, sizeof in) == 0);
    CHECK_OK(lm_device_close(dev));
}

/* The C++ kernels' program captured, verified and replayed: the same bytes. */
static void test_capture_and_replay(void) {
    static uint8_t in[TILES * PAGE], out[TILES * PAGE], replayed[TILES * PAGE];
    for (size_t i = 0; i < sizeof in; i++)
        in[i] = (uint8_t)(i * 7 + 3);
    lm_device *dev = open_device(NULL, NULL);
    CHECK(dev);
    CHECK_OK(lm_light_metal_begin_capture(dev, NULL));
    lm_binary *bin = NULL;
    prog_result r = run_copy(dev, reader_2026, writer_2025, in, out, &bin);
    if (r.status) printf("  %s\n", r.message);
    CHECK_OK(r.status);
    CHECK_OK(lm_device_close(dev));
    lm_replay *rp = NULL;
    REPLAY_RUN(bin, rp);
    CHECK_OK(lm_replay_get_output(rp, "out", replayed, sizeof replayed));
    CHECK(memcmp(in, replayed, sizeof in) == 0);
    CHECK(memcmp(out, replayed, sizeof out) == 0);
    lm_replay_close(rp);
    lm_binary_free(bin);
}

typedef struct lines {
    char text[4096];
} lines;

static void collect(void *user, uint32_t x, uint32_t y, const char *proc, const char *line) {
    lines *l = user;
    size_t n = strlen(l->text);
    snprintf(l->text + n, sizeof l->text - n, "(%u,%u) %s: %s\n", x, y, proc, line);
}

/* Both print styles, SETPRECISION, HEX, 64-bit values, and the C style. */
static const char *printer =
    "#include \"api/debug/dprint.h\"\n"
    "void kernel_main() {\n"
    "    uint32_t v = get_arg_val<uint32_t>(0);\n"
    "    DPRINT << \"v=\" << v << \" neg=\" << -5 << \" f=\" << SETPRECISION(2) << 1.25f\n"
    "           << \" c=\" << 'x' << ENDL();\n"
    "    DPRINT << HEX() << v << DEC() << \" big=\" << 12345678901ull << ENDL();\n"
    "    DEVICE_PRINT(\"fmt {} and {} {{ok}}\\n\", v + 1, \"text\");\n"
    "    DPRINT_DATA0(DPRINT << \"only on dm0\" << ENDL());\n"
    "    DPRINT_DATA1(DPRINT << \"never here\" << ENDL());\n"
    "    DeviceZoneScopedN(\"zone\");\n"
    "    DPRINT(\"c style %u\\n\", v);\n"
    "}\n";

static void test_prints(void) {
    lines got = {""};
    lm_device *dev = open_device(collect, &got);
    CHECK(dev);
    lm_program prog;
    lm_kernel k;
    lm_core_range_set core = lm_core_range_set_of(1, 0, 1, 0);
    lm_kernel_config cfg;
    lm_kernel_config_init(&cfg, LM_PROCESSOR_DM0);
    CHECK_OK(lm_create_program(dev, &prog));
    CHECK_OK(lm_create_kernel_from_string(prog, "printer.cpp", printer, &core, &cfg, &k));
    uint32_t a[] = {42};
    CHECK_OK(lm_set_runtime_args(prog, k, (lm_core){1, 0}, a, 1));
    CHECK_OK(lm_enqueue_program(lm_device_command_queue(dev, 0), prog, true));
    CHECK_OK(lm_device_close(dev));
    const char *want = "(1,0) DM0: v=42 neg=-5 f=1.25 c=x\n"
                       "(1,0) DM0: 2a big=12345678901\n"
                       "(1,0) DM0: fmt 43 and text {ok}\n"
                       "(1,0) DM0: only on dm0\n"
                       "(1,0) DM0: c style 42\n";
    if (strcmp(got.text, want)) printf("  got:\n%s", got.text);
    CHECK(strcmp(got.text, want) == 0);
}

/* Compiles `src` as a C++ kernel for `proc`; expects a compile error whose
 * message holds every needle. */
static int compile_fails(lm_processor proc, const char *name, const char *src, const uint32_t *ct,
                         uint32_t nct, const char *n1, const char *n2) {
    lm_device *dev = open_device(NULL, NULL);
    lm_program prog;
    lm_kernel k;
    lm_core_range_set core = lm_core_range_set_of(0, 0, 0, 0);
    lm_kernel_config cfg;
    lm_kernel_config_init(&cfg, proc);
    cfg.compile_args = ct;
    cfg.compile_arg_count = nct;
    int ok = dev && !lm_create_program(dev, &prog);
    lm_status st = ok ? lm_create_kernel_from_string(prog, name, src, &core, &cfg, &k) : LM_OK;
    const char *msg = lm_last_error();
    ok = ok && st == LM_ERR_COMPILE && strstr(msg, n1) && (!n2 || strstr(msg, n2));
    if (!ok) printf("  got %s: %.600s\n", lm_status_string(st), msg);
    if (dev) lm_device_close(dev);
    return ok;
}

static void test_bad_kernels(void) {
    /* A compile error names the file and line, with the compiler's message. */
    CHECK(compile_fails(LM_PROCESSOR_DM0, "broken.cpp",
                        "void kernel_main() {\n    uint32_t x = undeclared_thing;\n}\n", NULL, 0,
                        "broken.cpp:2:", "undeclared_thing"));
    /* SFPI is out of scope, and says so. */
    CHECK(compile_fails(LM_PROCESSOR_COMPUTE, "sfpi.cpp",
                        "#include \"compute_kernel_api/common.h\"\n"
                        "namespace NAMESPACE { void MAIN {\n"
                        "    vFloat a = dst_reg[0];\n"
                        "} }\n",
                        NULL, 0, "SFPI intrinsics (vFloat, dst_reg, v_if, ...) are out of scope",
                        "sfpi.cpp:3:"));
    /* TensorAccessorArgs pointed at an argument that is not one. */
    static const uint32_t wrong[] = {0, 16};
    CHECK(compile_fails(LM_PROCESSOR_DM0, "acc.cpp",
                        "void kernel_main() {\n"
                        "    constexpr auto args = TensorAccessorArgs<1>();\n"
                        "    const auto a = TensorAccessor(args, 0, 2048);\n"
                        "    (void)a;\n"
                        "}\n",
                        wrong, 2, "is not the first word of tensor accessor arguments",
                        "acc.cpp:2:"));
    /* A compile-time argument index past the ones given. */
    CHECK(compile_fails(LM_PROCESSOR_DM1, "cta.cpp",
                        "void kernel_main() {\n"
                        "    constexpr uint32_t x = get_compile_time_arg_val(2);\n"
                        "    (void)x;\n"
                        "}\n",
                        wrong, 2, "compile_time_arg_index_is_out_of_range_for_this_kernel",
                        "cta.cpp:2:"));
    /* Named compile-time args need C++: a C kernel gets them refused. */
    lm_device *dev = open_device(NULL, NULL);
    lm_program prog;
    lm_kernel k;
    lm_core_range_set core = lm_core_range_set_of(0, 0, 0, 0);
    lm_kernel_config cfg;
    lm_kernel_config_init(&cfg, LM_PROCESSOR_DM0);
    lm_named_compile_arg named[] = {{"a", 1}, {"a", 2}};
    cfg.named_compile_args = named;
    cfg.named_compile_arg_count = 1;
    CHECK_OK(lm_create_program(dev, &prog));
    CHECK_FAILS(
        lm_create_kernel_from_string(prog, "k.c", "void kernel_main(void) {}\n", &core, &cfg, &k),
        LM_ERR_INVALID_ARGUMENT, "named compile-time arguments need a C++ kernel");
    cfg.named_compile_arg_count = 2;
    CHECK_FAILS(
        lm_create_kernel_from_string(prog, "k.cpp", "void kernel_main() {}\n", &core, &cfg, &k),
        LM_ERR_INVALID_ARGUMENT, "named compile-time argument 'a' is given twice");
    named[1].name = "1bad";
    CHECK_FAILS(
        lm_create_kernel_from_string(prog, "k.cpp", "void kernel_main() {}\n", &core, &cfg, &k),
        LM_ERR_INVALID_ARGUMENT, "'1bad' is not an identifier");
    cfg.named_compile_arg_count = 0;
    cfg.language = (lm_kernel_language)7;
    CHECK_FAILS(
        lm_create_kernel_from_string(prog, "k.cpp", "void kernel_main() {}\n", &core, &cfg, &k),
        LM_ERR_INVALID_ARGUMENT, "language 7 is not AUTO, C or CXX");
    /* An explicit language overrides the name. */
    cfg.language = LM_KERNEL_LANGUAGE_CXX;
    CHECK_OK(lm_create_kernel_from_string(
        prog, "no_extension", "#include <cstdint>\nvoid kernel_main() {}\n", &core, &cfg, &k));
    CHECK_OK(lm_device_close(dev));
}

/* A global object with a constructor: crt0 runs the static constructors. */
static void test_static_constructors(void) {
    lines got = {""};
    lm_device *dev = open_device(collect, &got);
    lm_program prog;
    lm_kernel k;
    lm_core_range_set core = lm_core_range_set_of(0, 1, 0, 1);
    lm_kernel_config cfg;
    lm_kernel_config_init(&cfg, LM_PROCESSOR_DM1);
    CHECK_OK(lm_create_program(dev, &prog));
    CHECK_OK(lm_create_kernel_from_string(
        prog, "ctor.cpp",
        "#include <cstring>\n"
        "struct Counter { uint32_t v; Counter() : v(get_arg_val<uint32_t>(0) * 2) {} };\n"
        "Counter counter;\n"
        "void kernel_main() {\n"
        "    uint8_t a[40], b[40];\n"
        "    for (int i = 0; i < 40; i++) a[i] = (uint8_t)i;\n"
        "    std::memcpy(b, a + 1, 39);\n"
        "    std::memmove(a + 2, a, 30);\n"
        "    std::memset(a + 35, 7, 5);\n"
        "    DPRINT << counter.v << \" \" << (uint32_t)b[0] << \" \" << (uint32_t)a[2] << \" \"\n"
        "           << (uint32_t)a[31] << \" \" << (uint32_t)a[39] << ENDL();\n"
        "}\n",
        &core, &cfg, &k));
    uint32_t a[] = {21};
    CHECK_OK(lm_set_runtime_args(prog, k, (lm_core){0, 1}, a, 1));
    CHECK_OK(lm_enqueue_program(lm_device_command_queue(dev, 0), prog, true));
    CHECK_OK(lm_device_close(dev));
    if (strcmp(got.text, "(0,1) DM1: 42 1 0 29 7\n")) printf("  got: %s", got.text);
    CHECK(strcmp(got.text, "(0,1) DM1: 42 1 0 29 7\n") == 0);
}

int main(void) {
    TEST_RUN(test_data_movement_dialects);
    TEST_RUN(test_capture_and_replay);
    TEST_RUN(test_prints);
    TEST_RUN(test_bad_kernels);
    TEST_RUN(test_static_constructors);
    return test_summary();
}
