/* Trust in a replayed binary: what runs is what was captured (table digest,
 * blob hashes checked as data is used), a file that could not run the way it
 * was captured is refused before it starts (buffer geometry, overlapping
 * buffers), a failed run reads nothing back, and what the capture knew about
 * its device and its named buffers travels with the file. */
#include <stdlib.h>
#include <unistd.h>

#include "format/lmb.h"
#include "lightmetal/lightmetal.h"
#include "lightmetal/lm_version.h"
#include "lm_test.h"

enum { WORDS = 1024 };

/* out[i] = in[i] * 3 + 2 for every word, one page per core of a 2x2 grid;
 * then spins get_arg_val(2) times (to meet a watchdog on purpose). */
static const char *kernel_src = "#include \"dataflow_api.h\"\n"
                                "void kernel_main(void) {\n"
                                "    InterleavedAddrGenFast in = {.bank_base_address = "
                                "get_arg_val(0), .page_size = 1024, .is_dram = true};\n"
                                "    InterleavedAddrGenFast out = {.bank_base_address = "
                                "get_arg_val(1), .page_size = 1024, .is_dram = true};\n"
                                "    uint32_t page = my_y() * 2 + my_x(), l1 = 0x20000;\n"
                                "    noc_async_read_page(page, &in, l1);\n"
                                "    noc_async_read_barrier();\n"
                                "    volatile uint32_t *w = (volatile uint32_t *)l1;\n"
                                "    for (int i = 0; i < 256; i++) w[i] = w[i] * 3u + 2u;\n"
                                "    for (volatile uint32_t i = 0; i < get_arg_val(2); i++) {}\n"
                                "    noc_async_write_page(page, &out, l1);\n"
                                "    noc_async_write_barrier();\n"
                                "}\n";

static lm_device *open_device(uint64_t watchdog) {
    lm_device_options o;
    lm_device_options_init(&o);
    o.grid_x = 2;
    o.grid_y = 2;
    o.dram_banks = 2;
    o.dram_bank_size = 16 << 20;
    o.trace_region_size = 1 << 20;
    if (watchdog) o.watchdog_instructions = watchdog;
    lm_device *dev = NULL;
    return lm_device_open(&o, &dev) ? NULL : dev;
}

static void input_words(uint32_t *w) {
    for (int i = 0; i < WORDS; i++)
        w[i] = (uint32_t)i * 2654435761u + 11u;
}

/* The whole workload under capture: names "in" and "out", one golden.
 * `spin` iterations of busy work per core (0: none). A launch that faults
 * (the watchdog) is captured all the same, without the golden. With
 * `traced` the program runs as a metal trace, which then holds the only
 * reference to its kernel. */
static lm_status capture(lm_device *dev, uint32_t spin, bool traced, lm_binary **out_binary) {
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_buffer_config c;
    lm_buffer_config_init(&c);
    c.size = WORDS * 4;
    c.page_size = 1024;
    lm_buffer in = {0}, out = {0};
    lm_program prog;
    lm_kernel k;
    lm_kernel_config kc;
    lm_kernel_config_init(&kc, LM_PROCESSOR_DM0);
    lm_core_range_set all = lm_core_range_set_of(0, 0, 1, 1);
    static uint32_t data[WORDS], result[WORDS];
    input_words(data);
    lm_status st = lm_light_metal_begin_capture(dev, NULL);
    if (!st) st = lm_create_buffer(dev, &c, &in);
    if (!st) st = lm_create_buffer(dev, &c, &out);
    if (!st) st = lm_capture_name_buffer(in, "in");
    if (!st) st = lm_capture_name_buffer(out, "out");
    if (!st) st = lm_enqueue_write_buffer(cq, in, data, false);
    if (!st) st = lm_create_program(dev, &prog);
    if (!st) st = lm_create_kernel_from_string(prog, "scale", kernel_src, &all, &kc, &k);
    uint64_t ia = 0, oa = 0;
    lm_buffer_address(in, &ia);
    lm_buffer_address(out, &oa);
    uint32_t args[] = {(uint32_t)ia, (uint32_t)oa, spin};
    for (uint32_t y = 0; y < 2 && !st; y++)
        for (uint32_t x = 0; x < 2 && !st; x++)
            st = lm_set_runtime_args(prog, k, (lm_core){x, y}, args, 3);
    uint32_t trace;
    if (!st && traced) st = lm_begin_trace_capture(cq, &trace);
    if (!st) st = lm_enqueue_program(cq, prog, false);
    if (!st && traced) st = lm_end_trace_capture(cq, trace);
    if (!st && traced) st = lm_replay_trace(cq, trace, false);
    if (!st) st = lm_enqueue_read_buffer(cq, out, result, true);
    if (st == LM_ERR_DEVICE_FAULT)
        st = LM_OK;
    else if (!st)
        st = lm_capture_compare_to_capture(cq, out);
    lm_status end = lm_light_metal_end_capture(dev, out_binary);
    return st ? st : end;
}

/* A captured binary as a private, writable copy. */
typedef struct file {
    uint8_t *data;
    uint64_t size;
} file;

static bool captured_as(uint32_t spin, uint64_t watchdog, bool traced, file *f) {
    lm_device *dev = open_device(watchdog);
    lm_binary *bin = NULL;
    const void *d;
    bool ok =
        dev && capture(dev, spin, traced, &bin) == LM_OK && lm_binary_data(bin, &d, &f->size) == 0;
    if (ok) {
        f->data = malloc(f->size);
        ok = f->data != NULL;
        if (ok) memcpy(f->data, d, f->size);
    }
    lm_binary_free(bin);
    lm_device_close(dev);
    return ok;
}

static bool captured(uint32_t spin, uint64_t watchdog, file *f) {
    return captured_as(spin, watchdog, false, f);
}

/* The first command of `type` in a (verified) file. */
static fb_table command(const file *f, lmb_Command type) {
    fb_vec cmds = lmb_LightMetalBinary_commands(lmb_root(f->data));
    for (uint32_t i = 0; i < cmds.len; i++) {
        fb_table e = fb_vec_table(cmds, i);
        if (lmb_CommandEntry_cmd_type(e) == type) return lmb_CommandEntry_cmd(e);
    }
    return NULL;
}

static uint8_t *blob(const file *f, lmb_BlobRef ref) {
    return (uint8_t *)lmb_blob_data(f->data, lmb_root(f->data), ref);
}

/* Runs a file with the given hash and golden checks; the report is
 * pre-filled so the test can see whether the run wrote it. */
static lm_status run(const file *f, bool hashes, bool goldens, uint64_t watchdog,
                     lm_replay_report *rep, lm_replay **out_r) {
    lm_replay *r;
    lm_status st = lm_replay_open(f->data, f->size, &r);
    if (st) return st;
    lm_replay_options o;
    lm_replay_options_init(&o);
    o.check_blob_hashes = hashes;
    o.check_goldens = goldens;
    o.watchdog_instructions = watchdog;
    memset(rep, 0xab, sizeof *rep);
    st = lm_replay_run(r, NULL, &o, rep);
    *out_r = r;
    return st;
}

static bool report_untouched(const lm_replay_report *rep) {
    const uint8_t *p = (const uint8_t *)rep;
    for (size_t i = 0; i < sizeof *rep; i++)
        if (p[i] != 0xab) return false;
    return true;
}

static void test_defaults(void) {
    lm_replay_options o;
    lm_replay_options_init(&o);
    CHECK(o.check_blob_hashes && o.check_goldens && o.loops == 1 && !o.watchdog_instructions);
}

/* The reproducer: a kernel ELF changed after capture ran with garbage. */
static void test_changed_kernel_is_refused(void) {
    file f;
    CHECK(captured(0, 0, &f));
    fb_table ck = command(&f, LMB_Command_CreateKernel);
    lmb_BlobRef ref;
    CHECK(lmb_find_kernel_binary(lmb_root(f.data), lmb_CreateKernel_binary_hash(ck), &ref));
    blob(&f, ref)[ref.size - 1] ^= 0x5a; /* outside the code: it would still run */
    lm_replay_report rep;
    lm_replay *r;
    CHECK_FAILS(run(&f, true, true, 0, &rep, &r), LM_ERR_INVALID_FILE, "blob-hash-mismatch");
    CHECK_ERROR_HAS("the kernel ELF");
    CHECK_ERROR_HAS("(CreateKernel)");
    CHECK(report_untouched(&rep));
    uint32_t out[WORDS];
    CHECK_FAILS(lm_replay_get_output(r, "out", out, sizeof out), LM_ERR_INVALID_STATE, "run first");
    lm_replay_close(r);
    /* Opting out runs it (the user says the file was checked before). */
    CHECK_OK(run(&f, false, true, 0, &rep, &r));
    lm_replay_close(r);
    free(f.data);
}

/* The same for a kernel only a metal trace names: refused as the trace
 * loads, before anything runs. */
static void test_changed_trace_kernel_is_refused(void) {
    file f;
    CHECK(captured_as(0, 0, true, &f));
    CHECK(command(&f, LMB_Command_CreateKernel) == NULL); /* the trace holds the launch */
    fb_vec bins = lmb_LightMetalBinary_kernel_binaries(lmb_root(f.data));
    CHECK_EQ_U64(bins.len, 1);
    lmb_BlobRef ref = lmb_vec_BlobRef_at(bins, 0);
    lm_replay_report rep;
    lm_replay *r;
    CHECK_OK(run(&f, true, true, 0, &rep, &r)); /* as captured, it runs */
    lm_replay_close(r);
    blob(&f, ref)[ref.size - 1] ^= 0x5a;
    CHECK_FAILS(run(&f, true, true, 0, &rep, &r), LM_ERR_INVALID_FILE, "blob-hash-mismatch");
    CHECK_ERROR_HAS("(LoadTrace)");
    CHECK_ERROR_HAS("a kernel ELF of");
    CHECK(report_untouched(&rep));
    lm_replay_close(r);
    CHECK_OK(run(&f, false, true, 0, &rep, &r)); /* opted out: runs */
    lm_replay_close(r);
    free(f.data);
}

/* A changed data blob fails the write, before the launch that would use it;
 * nothing is read back and the report is not written. */
static void test_changed_data_is_refused(void) {
    file f;
    CHECK(captured(0, 0, &f));
    lmb_BlobRef ref = lmb_EnqueueWriteBuffer_data(command(&f, LMB_Command_EnqueueWriteBuffer));
    blob(&f, ref)[100] ^= 1;
    lm_replay_report rep;
    lm_replay *r;
    CHECK_FAILS(run(&f, true, true, 0, &rep, &r), LM_ERR_INVALID_FILE, "blob-hash-mismatch");
    CHECK_ERROR_HAS("4096 bytes written");
    CHECK(report_untouched(&rep));
    uint32_t out[WORDS];
    CHECK_FAILS(lm_replay_get_output(r, "out", out, sizeof out), LM_ERR_INVALID_STATE, "run first");
    lm_replay_close(r);
    /* Without hash checks the changed input reaches the golden. */
    CHECK_FAILS(run(&f, false, true, 0, &rep, &r), LM_ERR_MISMATCH, "golden mismatch");
    CHECK_EQ_U64(rep.goldens_failed, 1);
    /* Outputs are kept after a mismatch: they show what differs. */
    CHECK_OK(lm_replay_get_output(r, "out", out, sizeof out));
    lm_replay_close(r);
    /* ...and without golden checks the run succeeds. */
    CHECK_OK(run(&f, false, false, 0, &rep, &r));
    CHECK_EQ_U64(rep.goldens_checked, 0);
    lm_replay_close(r);
    free(f.data);
}

/* A changed golden is a damaged file, not a mismatch of the device's work. */
static void test_changed_golden_is_refused(void) {
    file f;
    CHECK(captured(0, 0, &f));
    lmb_BlobRef ref = lmb_CompareToGolden_golden(command(&f, LMB_Command_CompareToGolden));
    blob(&f, ref)[7] ^= 0x80;
    lm_replay_report rep;
    lm_replay *r;
    CHECK_FAILS(run(&f, true, true, 0, &rep, &r), LM_ERR_INVALID_FILE, "the golden's 4096 bytes");
    CHECK(report_untouched(&rep));
    lm_replay_close(r);
    CHECK_FAILS(run(&f, false, true, 0, &rep, &r), LM_ERR_MISMATCH, "golden mismatch at byte 7");
    lm_replay_close(r);
    free(f.data);
}

/* The reproducer: one byte of the commands vector's length. */
static void test_changed_table_is_refused(void) {
    file f;
    CHECK(captured(0, 0, &f));
    fb_vec cmds = lmb_LightMetalBinary_commands(lmb_root(f.data));
    f.data[(size_t)(cmds.data - f.data) - 4] -= 1;
    lm_replay *r;
    CHECK_FAILS(lm_replay_open(f.data, f.size, &r), LM_ERR_INVALID_FILE, "table-digest-mismatch");
    CHECK_ERROR_HAS("lm_replay_open: ");
    free(f.data);
}

/* The reproducer: a CreateBuffer size of about 4 GiB. It fits the device's
 * DRAM in total, but not its banks at that address (and overlaps a buffer
 * recorded later when it does fit): refused before anything runs. */
static void test_impossible_buffers_are_refused(void) {
    file f;
    CHECK(captured(0, 0, &f));
    fb_table cb = command(&f, LMB_Command_CreateBuffer);
    uint8_t *size = (uint8_t *)cb + fb_field_offset(cb, LMB_ID_CreateBuffer_size);
    fb_wr_u64(size, 4294966272ull); /* 4 GiB - 1 KiB: 4,194,303 pages */
    CHECK_OK(lmb_reseal(f.data, f.size));
    lm_replay *r;
    CHECK_FAILS(lm_replay_open(f.data, f.size, &r), LM_ERR_INVALID_FILE, "does not fit");
    CHECK_ERROR_HAS("commands[0] (CreateBuffer).size");
    /* Twice its size: fits the banks, overlaps the buffer created next. */
    fb_wr_u64(size, 2 * WORDS * 4);
    CHECK_OK(lmb_reseal(f.data, f.size));
    CHECK_FAILS(lm_replay_open(f.data, f.size, &r), LM_ERR_INVALID_FILE, "overlaps buffer 1");
    CHECK_ERROR_HAS("which is still alive");
    free(f.data);
}

/* The device options the capture ran with come along: a workload that
 * faulted under its watchdog faults on replay too, and the caller may
 * override the watchdog. A failed run reports the first error. */
static void test_watchdog_travels(void) {
    file f;
    CHECK(captured(200000, 150000, &f)); /* the launch faults live; capture goes on */
    fb_table sys = lmb_LightMetalBinary_system(lmb_root(f.data));
    CHECK_EQ_U64(lmb_SystemDescriptor_watchdog_instructions(sys), 150000);
    CHECK_EQ_U64(lmb_SystemDescriptor_num_command_queues(sys), 2);
    CHECK_EQ_U64(lmb_SystemDescriptor_trace_region_size(sys), 1 << 20);
    /* The producer is this build, at its one version. */
    lmb_Version pv = lmb_LightMetalBinary_producer_version(lmb_root(f.data));
    CHECK(pv.major == LM_VERSION_MAJOR && pv.minor == LM_VERSION_MINOR &&
          pv.patch == LM_VERSION_PATCH);
    lm_replay_report rep;
    lm_replay *r;
    CHECK_FAILS(run(&f, true, true, 0, &rep, &r), LM_ERR_DEVICE_FAULT, "watchdog");
    CHECK(report_untouched(&rep));
    uint32_t out[WORDS];
    CHECK_FAILS(lm_replay_get_output(r, "out", out, sizeof out), LM_ERR_INVALID_STATE, "run first");
    lm_replay_close(r);
    CHECK_OK(run(&f, true, true, 100000000, &rep, &r));
    CHECK_OK(lm_replay_get_output(r, "out", out, sizeof out));
    uint32_t in[WORDS];
    input_words(in);
    CHECK_EQ_U64(out[5], in[5] * 3u + 2u);
    /* A later failed run drops the outputs of the earlier one. */
    lm_replay_options o;
    lm_replay_options_init(&o);
    CHECK_FAILS(lm_replay_run(r, NULL, &o, &rep), LM_ERR_DEVICE_FAULT, "watchdog");
    CHECK_FAILS(lm_replay_get_output(r, "out", out, sizeof out), LM_ERR_INVALID_STATE, "run first");
    lm_replay_close(r);
    free(f.data);
}

static void test_named_buffers(void) {
    lm_device *dev = open_device(0);
    CHECK(dev);
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_buffer_config c;
    lm_buffer_config_init(&c);
    c.size = 4096;
    c.page_size = 1024;
    lm_buffer b[5];
    CHECK_FAILS(lm_capture_name_buffer((lm_buffer){0}, "x"), LM_ERR_INVALID_HANDLE,
                "lm_capture_name_buffer: ");
    CHECK_OK(lm_light_metal_begin_capture(dev, NULL));
    for (int i = 0; i < 5; i++)
        CHECK_OK(lm_create_buffer(dev, &c, &b[i]));
    CHECK_OK(lm_capture_name_buffer(b[0], "written"));
    CHECK_FAILS(lm_capture_name_buffer(b[1], "written"), LM_ERR_INVALID_ARGUMENT,
                "the name 'written' is already given to buffer 1");
    CHECK_FAILS(lm_capture_name_buffer(b[0], "again"), LM_ERR_INVALID_ARGUMENT,
                "already named 'written' (asked for 'again')");
    CHECK_FAILS(lm_capture_name_buffer(b[1], ""), LM_ERR_INVALID_ARGUMENT, "1..127 characters");
    CHECK_FAILS(lm_capture_name_buffer(b[1], "a b"), LM_ERR_INVALID_ARGUMENT, "character 1 (0x20)");
    CHECK_FAILS(lm_capture_name_buffer(b[1], "a=b"), LM_ERR_INVALID_ARGUMENT, "character 1");
    lm_buffer_name_options o;
    lm_buffer_name_options_init(&o);
    o.format = LM_DATA_FORMAT_FLOAT32;
    o.rank = 2;
    o.shape[0] = 32;
    o.shape[1] = 16;
    CHECK_FAILS(lm_capture_name_buffer_ex(b[1], "t", &o), LM_ERR_INVALID_ARGUMENT,
                "the shape covers 2048 bytes, the buffer has 4096");
    o.shape[0] = o.shape[1] = 65536;
    o.shape[2] = UINT32_MAX;
    o.rank = 3;
    CHECK_FAILS(lm_capture_name_buffer_ex(b[1], "t", &o), LM_ERR_INVALID_ARGUMENT,
                "shape[2] = 4294967295 (each dimension 0..4294967295, the product at most 2^64 "
                "bytes)");
    o.shape[2] = (uint64_t)UINT32_MAX + 1;
    CHECK_FAILS(lm_capture_name_buffer_ex(b[1], "t", &o), LM_ERR_INVALID_ARGUMENT, "shape[2] = ");
    o.rank = 2;
    o.shape[0] = 32;
    o.shape[1] = 32;
    o.format = LM_DATA_FORMAT_BFP8_B;
    CHECK_FAILS(lm_capture_name_buffer_ex(b[1], "t", &o), LM_ERR_INVALID_ARGUMENT, "a shape needs");
    o.format = LM_DATA_FORMAT_FLOAT32;
    o.rank = 9;
    CHECK_FAILS(lm_capture_name_buffer_ex(b[1], "t", &o), LM_ERR_INVALID_ARGUMENT, "rank 9");
    o.rank = 2;
    o.role = (lm_buffer_role)7;
    CHECK_FAILS(lm_capture_name_buffer_ex(b[1], "t", &o), LM_ERR_INVALID_ARGUMENT, "role 7");
    o.role = LM_BUFFER_ROLE_AUTO;
    CHECK_OK(lm_capture_name_buffer_ex(b[1], "read", &o)); /* a 32x32 float32 tensor */
    CHECK_OK(lm_capture_name_buffer(b[2], "both"));
    CHECK_OK(lm_capture_name_buffer(b[3], "untouched"));
    lm_buffer_name_options_init(&o);
    o.role = LM_BUFFER_ROLE_OUTPUT;
    CHECK_OK(lm_capture_name_buffer_ex(b[4], "explicit", &o));
    static uint8_t bytes[4096];
    CHECK_OK(lm_enqueue_write_buffer(cq, b[0], bytes, false));
    CHECK_OK(lm_enqueue_write_buffer(cq, b[2], bytes, false));
    CHECK_OK(lm_enqueue_write_buffer(cq, b[4], bytes, false));
    CHECK_OK(lm_enqueue_read_buffer(cq, b[1], bytes, true));
    CHECK_OK(lm_capture_compare_to_capture(cq, b[2]));
    lm_binary *bin;
    CHECK_OK(lm_light_metal_end_capture(dev, &bin));
    CHECK_FAILS(lm_capture_name_buffer(b[3], "late"), LM_ERR_INVALID_STATE, "no capture");
    const void *data;
    uint64_t size;
    CHECK_OK(lm_binary_data(bin, &data, &size));
    lm_replay *r;
    CHECK_OK(lm_replay_open(data, size, &r));
    CHECK_EQ_U64(lm_replay_buffer_count(r), 5);
    static const struct {
        const char *name;
        lm_buffer_role role;
    } want[] = {{"written", LM_BUFFER_ROLE_INPUT},
                {"read", LM_BUFFER_ROLE_OUTPUT},
                {"both", LM_BUFFER_ROLE_INPUT_OUTPUT},
                {"untouched", LM_BUFFER_ROLE_INPUT_OUTPUT},
                {"explicit", LM_BUFFER_ROLE_OUTPUT}};
    for (uint32_t i = 0; i < 5; i++) {
        lm_replay_buffer_info info;
        CHECK_OK(lm_replay_buffer_info_at(r, i, &info));
        CHECK(!strcmp(info.name, want[i].name));
        CHECK_EQ_U64(info.role, want[i].role);
        CHECK_EQ_U64(info.size, 4096);
        if (i == 1)
            CHECK(info.format == LM_DATA_FORMAT_FLOAT32 && info.rank == 2 && info.shape[0] == 32 &&
                  info.shape[1] == 32);
        else
            CHECK(info.format == LM_DATA_FORMAT_INVALID && info.rank == 0);
    }
    lm_replay_buffer_info info;
    CHECK_FAILS(lm_replay_buffer_info_at(r, 5, &info), LM_ERR_INVALID_ARGUMENT,
                "index 5, the binary names 5 buffers");
    CHECK_FAILS(lm_replay_buffer_info_at(r, 0, NULL), LM_ERR_INVALID_ARGUMENT, "NULL");
    CHECK_EQ_U64(lm_replay_buffer_count(NULL), 0);
    lm_replay_close(r);
    lm_binary_free(bin);
    CHECK_OK(lm_device_close(dev));
}

/* An empty tensor (a 0 in its shape) names a buffer of any size: it takes
 * and gives 0 bytes, and a run still gives it contents. */
static void test_empty_named_tensor(void) {
    lm_device *dev = open_device(0);
    CHECK(dev);
    lm_buffer_config c;
    lm_buffer_config_init(&c);
    c.size = 1024;
    c.page_size = 1024;
    lm_buffer in, out;
    CHECK_OK(lm_light_metal_begin_capture(dev, NULL));
    CHECK_OK(lm_create_buffer(dev, &c, &in));
    CHECK_OK(lm_create_buffer(dev, &c, &out));
    lm_buffer_name_options o;
    lm_buffer_name_options_init(&o);
    o.format = LM_DATA_FORMAT_INT32;
    o.rank = 2;
    o.shape[0] = 0;
    o.shape[1] = 7;
    o.role = LM_BUFFER_ROLE_INPUT;
    CHECK_OK(lm_capture_name_buffer_ex(in, "none", &o));
    o.role = LM_BUFFER_ROLE_OUTPUT;
    o.shape[0] = 3;
    o.shape[1] = 0;
    CHECK_OK(lm_capture_name_buffer_ex(out, "nothing", &o));
    static uint8_t bytes[1024];
    CHECK_OK(lm_enqueue_write_buffer(lm_device_command_queue(dev, 0), in, bytes, true));
    lm_binary *bin;
    CHECK_OK(lm_light_metal_end_capture(dev, &bin));
    CHECK_OK(lm_deallocate_buffer(in)); /* the replay allocates them again */
    CHECK_OK(lm_deallocate_buffer(out));
    const void *data;
    uint64_t size;
    CHECK_OK(lm_binary_data(bin, &data, &size));
    lm_replay *r;
    CHECK_OK(lm_replay_open(data, size, &r));
    lm_replay_buffer_info info;
    CHECK_OK(lm_replay_buffer_info_at(r, 1, &info));
    CHECK(!strcmp(info.name, "nothing") && info.size == 0 && info.rank == 2 && info.shape[0] == 3 &&
          info.shape[1] == 0);
    CHECK_FAILS(lm_replay_set_input(r, "none", bytes, 4), LM_ERR_INVALID_ARGUMENT,
                "buffer 'none' holds 0 bytes, the input has 4");
    CHECK_FAILS(lm_replay_set_input(r, "none", NULL, 4), LM_ERR_INVALID_ARGUMENT, "NULL");
    CHECK_OK(lm_replay_set_input(r, "none", NULL, 0));
    CHECK_FAILS(lm_replay_get_output(r, "nothing", NULL, 0), LM_ERR_INVALID_STATE,
                "no contents yet");
    CHECK_OK(lm_replay_run(r, dev, NULL, NULL));
    CHECK_OK(lm_replay_get_output(r, "nothing", NULL, 0));
    CHECK_FAILS(lm_replay_get_output(r, "nothing", bytes, 4), LM_ERR_INVALID_ARGUMENT,
                "buffer 'nothing' holds 0 bytes, not 4");
    lm_replay_close(r);
    lm_binary_free(bin);
    CHECK_OK(lm_device_close(dev));
}

/* A scalar (a rank-0 tensor) names a buffer of exactly one element; replay
 * reports it as such and takes and gives its 4 bytes. */
static void test_scalar_named_tensor(void) {
    lm_device *dev = open_device(0);
    CHECK(dev);
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_buffer_config c;
    lm_buffer_config_init(&c);
    c.size = 4;
    c.page_size = 4;
    lm_buffer s, big;
    CHECK_OK(lm_light_metal_begin_capture(dev, NULL));
    CHECK_OK(lm_create_buffer(dev, &c, &s));
    c.size = c.page_size = 1024;
    CHECK_OK(lm_create_buffer(dev, &c, &big));
    lm_buffer_name_options o;
    lm_buffer_name_options_init(&o);
    o.format = LM_DATA_FORMAT_FLOAT32;
    o.scalar = true;
    o.rank = 2;
    o.shape[0] = o.shape[1] = 1;
    CHECK_FAILS(lm_capture_name_buffer_ex(s, "x", &o), LM_ERR_INVALID_ARGUMENT,
                "lm_capture_name_buffer: a scalar has rank 0, the options give rank 2");
    o.rank = 0;
    CHECK_FAILS(lm_capture_name_buffer_ex(big, "x", &o), LM_ERR_INVALID_ARGUMENT,
                "a scalar of Float32 is 4 bytes, the buffer has 1024");
    o.format = LM_DATA_FORMAT_BFP8_B;
    CHECK_FAILS(lm_capture_name_buffer_ex(s, "x", &o), LM_ERR_INVALID_ARGUMENT,
                "a scalar needs FLOAT32, FLOAT16_B, UINT32 or INT32 elements");
    o.format = LM_DATA_FORMAT_FLOAT32;
    o.role = LM_BUFFER_ROLE_INPUT_OUTPUT;
    CHECK_OK(lm_capture_name_buffer_ex(s, "x", &o));
    float v = 1.0f;
    CHECK_OK(lm_enqueue_write_buffer(cq, s, &v, false));
    CHECK_OK(lm_enqueue_read_buffer(cq, s, &v, true));
    lm_binary *bin;
    CHECK_OK(lm_light_metal_end_capture(dev, &bin));
    CHECK_OK(lm_deallocate_buffer(s));
    CHECK_OK(lm_deallocate_buffer(big));
    const void *data;
    uint64_t size;
    CHECK_OK(lm_binary_data(bin, &data, &size));
    lm_replay *r;
    CHECK_OK(lm_replay_open(data, size, &r));
    lm_replay_buffer_info info;
    CHECK_OK(lm_replay_buffer_info_at(r, 0, &info));
    CHECK(!strcmp(info.name, "x") && info.scalar && info.rank == 0 && info.size == 4 &&
          info.format == LM_DATA_FORMAT_FLOAT32);
    float in = -2.5f, out = 0.0f;
    CHECK_OK(lm_replay_set_input(r, "x", &in, sizeof in));
    CHECK_OK(lm_replay_run(r, dev, NULL, NULL));
    CHECK_OK(lm_replay_get_output(r, "x", &out, sizeof out));
    CHECK(out == -2.5f);
    lm_replay_close(r);
    lm_binary_free(bin);
    CHECK_OK(lm_device_close(dev));
}

/* tt-metal's set_globally_allocated_address: a circular buffer over an L1
 * buffer. Captured and replayed; what the kernel pushed lands in the buffer. */
static const char *cb_kernel_src = "#include \"dataflow_api.h\"\n"
                                   "void kernel_main(void) {\n"
                                   "    cb_reserve_back(0, 1);\n"
                                   "    volatile uint32_t *w = (volatile uint32_t *)"
                                   "get_write_ptr(0);\n"
                                   "    for (int i = 0; i < 256; i++) w[i] = 0xc0de0000u + i;\n"
                                   "    cb_push_back(0, 1);\n"
                                   "}\n";

static void test_global_circular_buffer(void) {
    lm_device *dev = open_device(0);
    CHECK(dev);
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_buffer_config c;
    lm_buffer_config_init(&c);
    c.type = LM_BUFFER_L1;
    c.size = 4 * 1024; /* one 1 KiB page on each of the 4 cores */
    c.page_size = 1024;
    lm_buffer g;
    lm_program prog;
    lm_kernel k;
    lm_kernel_config kc;
    lm_kernel_config_init(&kc, LM_PROCESSOR_DM0);
    lm_core_range_set all = lm_core_range_set_of(0, 0, 1, 1);
    lm_circular_buffer_config cc;
    lm_circular_buffer_config_init(&cc);
    cc.total_size = 1024;
    cc.index_count = 1;
    cc.indices[0] = (lm_cb_index_config){0, LM_DATA_FORMAT_FLOAT32, 1024};
    lm_circular_buffer cb;
    static uint32_t live[WORDS], replayed[WORDS];
    CHECK_OK(lm_light_metal_begin_capture(dev, NULL));
    CHECK_OK(lm_create_buffer(dev, &c, &g));
    CHECK_OK(lm_capture_name_buffer(g, "g"));
    cc.globally_allocated = g;
    CHECK_OK(lm_create_program(dev, &prog));
    CHECK_OK(lm_create_circular_buffer(prog, &all, &cc, &cb));
    CHECK_OK(lm_create_kernel_from_string(prog, "fill", cb_kernel_src, &all, &kc, &k));
    CHECK_OK(lm_enqueue_program(cq, prog, false));
    CHECK_OK(lm_enqueue_read_buffer(cq, g, live, true));
    CHECK_OK(lm_capture_compare_to_capture(cq, g));
    lm_binary *bin;
    CHECK_OK(lm_light_metal_end_capture(dev, &bin));
    for (int i = 0; i < WORDS; i++)
        CHECK_EQ_U64(live[i], 0xc0de0000u + (uint32_t)(i % 256));
    const void *data;
    uint64_t size;
    CHECK_OK(lm_binary_data(bin, &data, &size));
    lm_replay *r;
    CHECK_OK(lm_replay_open(data, size, &r));
    lm_replay_report rep;
    CHECK_OK(lm_replay_run(r, NULL, NULL, &rep));
    CHECK_EQ_U64(rep.goldens_checked, 1);
    CHECK_OK(lm_replay_get_output(r, "g", replayed, sizeof replayed));
    CHECK(!memcmp(live, replayed, sizeof live));
    lm_replay_close(r);
    lm_binary_free(bin);
    CHECK_OK(lm_device_close(dev));
}

int main(void) {
    setenv("LM_CACHE_DIR", "test_replay_cache", 0);
    TEST_RUN(test_defaults);
    TEST_RUN(test_changed_kernel_is_refused);
    TEST_RUN(test_changed_trace_kernel_is_refused);
    TEST_RUN(test_changed_data_is_refused);
    TEST_RUN(test_changed_golden_is_refused);
    TEST_RUN(test_changed_table_is_refused);
    TEST_RUN(test_impossible_buffers_are_refused);
    TEST_RUN(test_watchdog_travels);
    TEST_RUN(test_named_buffers);
    TEST_RUN(test_empty_named_tensor);
    TEST_RUN(test_scalar_named_tensor);
    TEST_RUN(test_global_circular_buffer);
    return test_summary();
}
