/* C++ kernels in tt-metal's dialects: they compile unmodified (the dataflow
 * API without an include, get_arg_val<T>, constexpr and named compile-time
 * args, kernel_compile_time_args, VALID/INVALID, InterleavedAddrGenFast<DRAM>,
 * TensorAccessor, experimental:: and the 2026 Noc/CircularBuffer, tt-metal's
 * header paths, the print styles -- DPRINT with {} fields prints as
 * DEVICE_PRINT, TileSlice in a field) and move the right bytes; a failed
 * ASSERT prints and faults; compile errors name the file and line, SFPI and
 * misplaced TensorAccessorArgs get messages that say what is wrong. */
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
    "    static_assert(VALID == 1 && INVALID == 0); /* with the dataflow API */\n"
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

/* The same reads with tt-metal's 2026 Device 2.0 objects outside
 * experimental:: (Noc, CircularBuffer, use<>(), NocOptions with NocOptVals,
 * the "with state" reads), from their own headers, and
 * kernel_compile_time_args; ASSERTs that hold. */
static const char *reader_device2 =
    "#include \"api/dataflow/noc.h\"\n"
    "#include \"api/dataflow/circular_buffer.h\"\n"
    "#include \"api/tensor/noc_traits.h\"\n"
    "#include \"debug/assert.h\"\n"
    "void kernel_main() {\n"
    "    const uint32_t src = get_arg_val<uint32_t>(0);\n"
    "    const uint32_t n = get_arg_val<uint32_t>(1);\n"
    "    constexpr uint32_t cb = kernel_compile_time_args[0];\n"
    "    constexpr auto args = TensorAccessorArgs<1>();\n"
    "    static_assert(kernel_compile_time_args.size() == args.next_compile_time_args_offset());\n"
    "    const auto acc = TensorAccessor(args, src, get_tile_size(cb));\n"
    "    Noc noc;\n"
    "    CircularBuffer out(cb);\n"
    "    ASSERT(noc.is_local_bank(my_x(), my_y()));\n"
    "    ASSERT(out.get_cb_id() == cb, \"the circular buffer's id\");\n"
    "    const uint32_t page = out.get_tile_size();\n"
    "    for (uint32_t i = 0; i < n; i++) {\n"
    "        out.reserve_back(1);\n"
    "        if (i % 3 == 1) {\n"
    "            noc.async_read(acc, out, page, {.page_id = i}, {.offset_bytes = 0});\n"
    "            noc.async_read_barrier();\n"
    "        } else if (i % 3 == 2) {\n"
    "            noc.set_async_read_state(acc, page, {.page_id = i});\n"
    "            noc.async_read_with_state(acc, out, 0, {.page_id = i}, {.offset_bytes = 0});\n"
    "            noc.async_read_barrier();\n"
    "        } else {\n"
    "            constexpr auto opts = NocOptions::TXN_ID | NocOptions::CUSTOM_VC;\n"
    "            static_assert(has_flag(opts, NocOptions::CUSTOM_VC));\n"
    "            const auto back = use<CircularBuffer::AddrSelector::WRITE_PTR>(out);\n"
    "            noc.async_read<opts>(acc, back, page, {.page_id = i}, {.offset_bytes = 0},\n"
    "                                 {.vc = 2, .trid = 3});\n"
    "            noc.async_read_barrier<NocOptions::TXN_ID>({.trid = 3});\n"
    "        }\n"
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
    memset(out, 0, sizeof out);
    r = run_copy(dev, reader_device2, writer_2025, in, out, NULL);
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
    "    DPRINT(\"2026 v={} hex={:#x} [{:>4}] [{:<4}] [{:*^7}] {:+d} {:.3f} {}\\n\", v, v, 7,\n"
    "           \"ab\", \"mid\", 5, 1.5f, true);\n"
    "    DPRINT(\"indexed {1} {0} {1:b} {0:03o} neg {2:x} [{3:5d}] [{3:<5}]\\n\", 3u, 5u, -255, "
    "-3);\n"
    "    DPRINT(\"braces {{{}}} and 100%\\n\", v);\n"
    "    DPRINT(\"text only {{ok}}\\n\");\n"
    "    DPRINT(\"percent %u%% and {{}}\\n\", v);\n"
    "    DEVICE_PRINT(\"{:>6.2f}|{:<6}|{:c}{}\\n\", 2.5f, \"s\", 'x', 'y');\n"
    "    DPRINT << \"stream \" << true << ENDL();\n"
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
                       "(1,0) DM0: c style 42\n"
                       "(1,0) DM0: 2026 v=42 hex=0x2a [   7] [ab  ] [**mid**] +5 1.500 true\n"
                       "(1,0) DM0: indexed 5 3 101 003 neg -ff [   -3] [-3   ]\n"
                       "(1,0) DM0: braces {42} and 100%\n"
                       "(1,0) DM0: text only {ok}\n"
                       "(1,0) DM0: percent 42% and {{}}\n"
                       "(1,0) DM0:   2.50|s     |xy\n"
                       "(1,0) DM0: stream 1\n";
    if (strcmp(got.text, want)) printf("  got:\n%s", got.text);
    CHECK(strcmp(got.text, want) == 0);
}

/* Runs one kernel, `name` holding `src`, on core (0,0) for `proc`, with a
 * one-page UInt32 circular buffer 0, compile-time args ct and runtime arg
 * `arg`. */
static prog_result run_one(lm_device *dev, lm_processor proc, const char *name, const char *src,
                           const uint32_t *ct, uint32_t nct, uint32_t arg) {
    prog_result r = {LM_OK, ""};
    lm_program prog = {0};
    lm_kernel k;
    lm_core_range_set core = lm_core_range_set_of(0, 0, 0, 0);
    lm_circular_buffer_config cb;
    lm_circular_buffer_config_init(&cb);
    cb.total_size = 4096;
    cb.index_count = 1;
    cb.indices[0] = (lm_cb_index_config){0, LM_DATA_FORMAT_UINT32, 4096};
    lm_circular_buffer h;
    lm_kernel_config cfg;
    lm_kernel_config_init(&cfg, proc);
    cfg.compile_args = ct;
    cfg.compile_arg_count = nct;
    lm_status st = lm_create_program(dev, &prog);
    if (!st) st = lm_create_circular_buffer(prog, &core, &cb, &h);
    if (!st) st = lm_create_kernel_from_string(prog, name, src, &core, &cfg, &k);
    if (!st) st = lm_set_runtime_args(prog, k, (lm_core){0, 0}, &arg, 1);
    if (!st) st = lm_enqueue_program(lm_device_command_queue(dev, 0), prog, true);
    r.status = st;
    snprintf(r.message, sizeof r.message, "%s", st ? lm_last_error() : "");
    if (prog.id) lm_release_program(prog);
    return r;
}

/* tt-metal's header paths and the names they bring: VALID/INVALID (with the
 * dataflow API alone too), tt::constants, kernel_compile_time_args,
 * tt::DstMode, tt::CBIndex; a semaphore handshake with VALID. */
static const char *headers =
    "#include \"hostdevcommon/common_values.hpp\"\n"
    "#include \"hostdevcommon/kernel_structs.h\"\n"
    "#include \"hostdevcommon/dprint_common.h\"\n"
    "#include \"api/debug/device_print.h\"\n"
    "#include \"api/debug/dprint_tile.h\"\n"
    "#include <tt-metalium/constants.hpp>\n"
    "#include \"api/compile_time_args.h\"\n"
    "#include \"debug/assert.h\"\n"
    "#include \"api/debug/assert.h\"\n"
    "#include \"dataflow_api_common.h\"\n"
    "#include \"accessor/tensor_accessor.h\"\n"
    "#include \"api/dataflow/noc.h\"\n"
    "#include \"api/dataflow/circular_buffer.h\"\n"
    "#include \"api/dataflow/endpoints.h\"\n"
    "#include \"api/tensor/noc_traits.h\"\n"
    "using namespace tt::constants;\n"
    "static_assert(VALID == 1 && INVALID == 0);\n"
    "static_assert(TILE_HEIGHT == 32 && TILE_WIDTH == 32 && TILE_HW == 1024);\n"
    "static_assert(FACE_HEIGHT == 16 && FACE_WIDTH == 16 && FACE_HW == 256);\n"
    "static_assert(BFLOAT8_B_TILE_HW == 1088 && BFLOAT4_B_TILE_HW == 576);\n"
    "static_assert(kernel_compile_time_args.size() == 3 && kernel_compile_time_args[2] == 9);\n"
    "static_assert(get_ct_arg<1>() == 8 && get_compile_time_arg_val(0) == 7);\n"
    "static_assert(tt::DstMode::Half == 1 && tt::Full == 0 && tt::CBIndex::c_16 == 16);\n"
    "void kernel_main() {\n"
    "    volatile tt_l1_ptr uint32_t *sem =\n"
    "        reinterpret_cast<volatile tt_l1_ptr uint32_t *>(get_semaphore(0));\n"
    "    noc_semaphore_set(sem, INVALID);\n"
    "    ASSERT(*sem == INVALID);\n"
    "    noc_semaphore_set(sem, VALID);\n"
    "    noc_semaphore_wait(sem, VALID);\n"
    "    uint32_t sum = 0;\n"
    "    for (uint32_t i = 0; i < kernel_compile_time_args.size(); i++)\n"
    "        sum += kernel_compile_time_args[i];\n"
    "    DPRINT(\"sem {} tile {}x{} args {} sum {}\\n\", *sem, TILE_HEIGHT, TILE_WIDTH,\n"
    "           kernel_compile_time_args.size(), sum);\n"
    "}\n";

/* Fills tile 0 of CB 0 (UInt32) so that element (h, w) holds h * 100 + w,
 * in the tile's layout (four 16x16 faces), then prints slices of it in
 * every style. */
static const char *slicer =
    "#include \"api/debug/dprint.h\"\n"
    "#include \"api/debug/dprint_tile.h\"\n"
    "void kernel_main() {\n"
    "    cb_reserve_back(0, 1);\n"
    "    volatile tt_l1_ptr uint32_t *t =\n"
    "        reinterpret_cast<volatile tt_l1_ptr uint32_t *>(get_write_ptr(0));\n"
    "    for (uint32_t h = 0; h < 32; h++)\n"
    "        for (uint32_t w = 0; w < 32; w++)\n"
    "            t[(h / 16 * 2 + w / 16) * 256 + h % 16 * 16 + w % 16] = h * 100 + w;\n"
    "    SliceRange sr = SliceRange{.h0 = static_cast<uint8_t>(0), .h1 = "
    "static_cast<uint8_t>(32),\n"
    "                               .hs = 16, .w0 = 1, .w1 = 32, .ws = 16};\n"
    "    DPRINT(\"slice:\\n{}\", TileSlice(0, 0, sr, TSLICE_INPUT_CB, TSLICE_WR_PTR, true, "
    "false));\n"
    "    DEVICE_PRINT(\"row {}: {}\", 31, TSLICE(0, 0, SliceRange{31, 32, 1, 30, 32, 1},\n"
    "                 TSLICE_INPUT_CB, TSLICE_WR_PTR));\n"
    "    DPRINT << \"stream \" << TSLICE(0, 0, SliceRange{17, 18, 1, 0, 2, 1}, TSLICE_INPUT_CB,\n"
    "                                  TSLICE_WR_PTR);\n"
    "    cb_push_back(0, 1);\n"
    "}\n";

static void test_headers_and_tile_slices(void) {
    lines got = {""};
    lm_device *dev = open_device(collect, &got);
    CHECK(dev);
    static const uint32_t ct[] = {7, 8, 9};
    prog_result r = run_one(dev, LM_PROCESSOR_DM1, "headers.cpp", headers, ct, 3, 0);
    if (r.status) printf("  %s\n", r.message);
    CHECK_OK(r.status);
    r = run_one(dev, LM_PROCESSOR_DM0, "slicer.cpp", slicer, NULL, 0, 0);
    if (r.status) printf("  %s\n", r.message);
    CHECK_OK(r.status);
    CHECK_OK(lm_device_close(dev));
    const char *want = "(0,0) DM1: sem 1 tile 32x32 args 3 sum 24\n"
                       "(0,0) DM0: slice:\n"
                       "(0,0) DM0: 1 17\n"
                       "(0,0) DM0: 1601 1617\n"
                       "(0,0) DM0: row 31: 3130 3131\n"
                       "(0,0) DM0: stream 1700 1701\n";
    if (strcmp(got.text, want)) printf("  got:\n%s", got.text);
    CHECK(strcmp(got.text, want) == 0);
}

/* A failed ASSERT prints what failed and where, then faults the kernel, in
 * C++ and in C kernels. */
static void test_assert_faults(void) {
    lines got = {""};
    lm_device *dev = open_device(collect, &got);
    CHECK(dev);
    static const char *cxx = "#include \"debug/assert.h\"\n"
                             "void kernel_main() {\n"
                             "    const uint32_t v = get_arg_val<uint32_t>(0);\n"
                             "    ASSERT(v != 0);\n"
                             "    ASSERT(v == 7, \"arg 0 must be 7\");\n"
                             "    DPRINT(\"v is {}\\n\", v);\n"
                             "}\n";
    CHECK_OK(run_one(dev, LM_PROCESSOR_DM0, "assert.cpp", cxx, NULL, 0, 7).status);
    prog_result r = run_one(dev, LM_PROCESSOR_DM0, "assert.cpp", cxx, NULL, 0, 5);
    CHECK(r.status == LM_ERR_DEVICE_FAULT);
    CHECK(strstr(r.message, "core (0,0) DM0 kernel 'assert.cpp': ebreak"));
    if (r.status != LM_ERR_DEVICE_FAULT) printf("  %s\n", r.message);
    static const char *c = "#include \"api/debug/assert.h\"\n"
                           "void kernel_main(void) { ASSERT(get_arg_val(0) > 9); }\n";
    r = run_one(dev, LM_PROCESSOR_DM1, "assert.c", c, NULL, 0, 3);
    CHECK(r.status == LM_ERR_DEVICE_FAULT && strstr(r.message, "DM1 kernel 'assert.c': ebreak"));
    CHECK_OK(lm_device_close(dev));
    const char *want = "(0,0) DM0: v is 7\n"
                       "(0,0) DM0: ASSERT failed: v == 7 (assert.cpp:5): arg 0 must be 7\n"
                       "(0,0) DM1: ASSERT failed: get_arg_val(0) > 9 (assert.c:2)\n";
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
    /* Accessor words cut short (one word, as hand-written args might give),
     * and a page size of 0 for the two-argument TensorAccessor. */
    static const char *two_arg = "void kernel_main() {\n"
                                 "    constexpr auto args = TensorAccessorArgs<0>();\n"
                                 "    const auto a = TensorAccessor(args, 0);\n"
                                 "    (void)a;\n"
                                 "}\n";
    static const uint32_t one_word[] = {0x7A500001u}, zero_page[] = {0x7A500001u, 0};
    CHECK(compile_fails(LM_PROCESSOR_DM0, "short.cpp", two_arg, one_word, 1,
                        "the buffer's arguments are cut short", "short.cpp:2:"));
    CHECK(compile_fails(LM_PROCESSOR_DM0, "zero.cpp", two_arg, zero_page, 2,
                        "TensorAccessor(args, address): the arguments' page size is 0",
                        "zero.cpp:3:"));
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
    TEST_RUN(test_headers_and_tile_slices);
    TEST_RUN(test_assert_faults);
    TEST_RUN(test_bad_kernels);
    TEST_RUN(test_static_constructors);
    return test_summary();
}
