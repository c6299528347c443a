/* Programs end to end: validation at the API, kernels running on simulated
 * cores, circular buffers, semaphores, prints, and contained faults. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lightmetal/lightmetal.h"
#include "lm_test.h"

/* ---- helpers ---- */

typedef struct printed {
    pthread_mutex_t mutex;
    char text[8192];
    size_t len;
} printed;

static printed prints = {PTHREAD_MUTEX_INITIALIZER, "", 0};

static void capture_print(void *user, uint32_t x, uint32_t y, const char *proc, const char *line) {
    printed *p = user;
    pthread_mutex_lock(&p->mutex);
    int n =
        snprintf(p->text + p->len, sizeof p->text - p->len, "(%u,%u) %s: %s\n", x, y, proc, line);
    if (n > 0 && (size_t)n < sizeof p->text - p->len) p->len += (size_t)n;
    pthread_mutex_unlock(&p->mutex);
}

static lm_device *open_device(uint32_t threads, uint64_t watchdog) {
    lm_device_options o;
    lm_device_options_init(&o);
    o.grid_x = 4;
    o.grid_y = 4;
    o.dram_banks = 4;
    o.dram_bank_size = 64 << 20;
    o.num_threads = threads;
    if (watchdog) o.watchdog_instructions = watchdog;
    o.print = capture_print;
    o.print_user = &prints;
    lm_device *dev = NULL;
    return lm_device_open(&o, &dev) ? NULL : dev;
}

static lm_buffer make_buffer(lm_device *dev, lm_buffer_type type, uint64_t size, uint64_t page) {
    lm_buffer_config c;
    lm_buffer_config_init(&c);
    c.type = type;
    c.size = size;
    c.page_size = page;
    lm_buffer b = {0};
    lm_create_buffer(dev, &c, &b);
    return b;
}

static uint32_t address_of(lm_buffer b) {
    uint64_t a = 0;
    lm_buffer_address(b, &a);
    return (uint32_t)a;
}

static lm_status add_kernel(lm_program prog, const char *name, const char *src,
                            lm_core_range_set cores, lm_processor proc, lm_kernel *out) {
    lm_kernel_config kc;
    lm_kernel_config_init(&kc, proc);
    return lm_create_kernel_from_string(prog, name, src, &cores, &kc, out);
}

/* ---- validation ---- */

static const char *empty_kernel = "#include \"dataflow_api.h\"\nvoid kernel_main(void) {}\n";

static void test_validation(void) {
    lm_device *dev = open_device(2, 0);
    CHECK(dev);
    lm_program prog, other;
    lm_kernel k, k2;
    CHECK_FAILS(lm_create_program(NULL, &prog), LM_ERR_INVALID_HANDLE, "device is NULL");
    CHECK_OK(lm_create_program(dev, &prog));
    CHECK_OK(lm_create_program(dev, &other));
    CHECK_FAILS(
        add_kernel(prog, "k", empty_kernel, lm_core_range_set_of(0, 0, 4, 0), LM_PROCESSOR_DM0, &k),
        LM_ERR_INVALID_ARGUMENT, "(0,0)-(4,0) is outside the 4x4 grid");
    CHECK_FAILS(
        add_kernel(prog, "k", empty_kernel, lm_core_range_set_of(2, 0, 1, 0), LM_PROCESSOR_DM0, &k),
        LM_ERR_INVALID_ARGUMENT, "start (2,0) is not before end (1,0)");
    CHECK_FAILS(add_kernel(prog, "k", empty_kernel, lm_core_range_set_of(0, 0, 0, 0),
                           LM_PROCESSOR_INVALID, &k),
                LM_ERR_INVALID_ARGUMENT, "processor 0 is not DM0, DM1 or COMPUTE");
    lm_core_range_set none = {0};
    lm_kernel_config kc;
    lm_kernel_config_init(&kc, LM_PROCESSOR_DM0);
    CHECK_FAILS(lm_create_kernel_from_string(prog, "k", empty_kernel, &none, &kc, &k),
                LM_ERR_INVALID_ARGUMENT, "cores has 0 ranges");
    CHECK_FAILS(lm_create_kernel_from_string(prog, "k", NULL, &none, &kc, &k),
                LM_ERR_INVALID_ARGUMENT, "source is NULL");
    CHECK_FAILS(lm_create_kernel(prog, "no/such/kernel.c", &none, &kc, &k), LM_ERR_INVALID_ARGUMENT,
                "cores has 0 ranges");
    lm_core_range_set c00 = lm_core_range_set_of(0, 0, 0, 0);
    CHECK_FAILS(lm_create_kernel(prog, "no/such/kernel.c", &c00, &kc, &k), LM_ERR_IO,
                "cannot open 'no/such/kernel.c'");

    CHECK_OK(add_kernel(prog, "first", empty_kernel, lm_core_range_set_of(0, 0, 1, 1),
                        LM_PROCESSOR_DM0, &k));
    CHECK_FAILS(add_kernel(prog, "second", empty_kernel, lm_core_range_set_of(1, 1, 2, 2),
                           LM_PROCESSOR_DM0, &k2),
                LM_ERR_INVALID_ARGUMENT, "core (1,1) already runs kernel 'first' on processor DM0");
    CHECK_OK(add_kernel(prog, "second", empty_kernel, lm_core_range_set_of(1, 1, 2, 2),
                        LM_PROCESSOR_DM1, &k2));

    uint32_t args[400] = {0};
    lm_core core = {0, 0}, outside = {3, 3};
    CHECK_FAILS(lm_set_runtime_args(prog, k, core, args, 342), LM_ERR_INVALID_ARGUMENT,
                "342 arguments (at most 341)");
    CHECK_OK(lm_set_runtime_args(prog, k, core, args, 341));
    CHECK_FAILS(lm_set_runtime_args(prog, k, outside, args, 1), LM_ERR_INVALID_ARGUMENT,
                "kernel 'first' does not run on core (3,3)");
    CHECK_FAILS(lm_set_runtime_args(other, k, core, args, 1), LM_ERR_INVALID_ARGUMENT,
                "kernel 'first' belongs to another program");
    CHECK_FAILS(lm_set_common_runtime_args(prog, k, NULL, 2), LM_ERR_INVALID_ARGUMENT,
                "args is NULL");

    lm_circular_buffer cb;
    lm_circular_buffer_config cc;
    lm_circular_buffer_config_init(&cc);
    cc.total_size = 4096;
    cc.index_count = 1;
    cc.indices[0] = (lm_cb_index_config){32, LM_DATA_FORMAT_FLOAT16_B, 2048};
    CHECK_FAILS(lm_create_circular_buffer(prog, &c00, &cc, &cb), LM_ERR_INVALID_ARGUMENT,
                "indices[0].index 32 (must be 0..31)");
    cc.indices[0] = (lm_cb_index_config){0, LM_DATA_FORMAT_FLOAT16_B, 1000};
    CHECK_FAILS(lm_create_circular_buffer(prog, &c00, &cc, &cb), LM_ERR_INVALID_ARGUMENT,
                "total_size 4096 is not a multiple of indices[0].page_size 1000");
    cc.indices[0] = (lm_cb_index_config){0, LM_DATA_FORMAT_INVALID, 2048};
    CHECK_FAILS(lm_create_circular_buffer(prog, &c00, &cc, &cb), LM_ERR_INVALID_ARGUMENT,
                "format 0 is not a data format");
    cc.index_count = 2;
    cc.indices[0] = cc.indices[1] = (lm_cb_index_config){3, LM_DATA_FORMAT_FLOAT16_B, 2048};
    CHECK_FAILS(lm_create_circular_buffer(prog, &c00, &cc, &cb), LM_ERR_INVALID_ARGUMENT,
                "index 3 is listed twice");
    cc.index_count = 1;
    CHECK_OK(lm_create_circular_buffer(prog, &c00, &cc, &cb));
    CHECK_FAILS(lm_create_circular_buffer(prog, &c00, &cc, &cb), LM_ERR_INVALID_ARGUMENT,
                "circular buffer index 3 is already used on core (0,0)");
    cc.indices[0].index = 4;
    cc.indices[0].page_size = 1 << 20;
    cc.total_size = 2 << 20;
    CHECK_FAILS(lm_create_circular_buffer(prog, &c00, &cc, &cb), LM_ERR_OUT_OF_DEVICE_MEMORY,
                "beyond the 1499136 bytes of L1");

    uint32_t id;
    for (int i = 0; i < 16; i++) {
        CHECK_OK(lm_create_semaphore(prog, &c00, 0, &id));
        CHECK_EQ_U64(id, (uint64_t)i);
    }
    CHECK_FAILS(lm_create_semaphore(prog, &c00, 0, &id), LM_ERR_INVALID_ARGUMENT,
                "too many semaphores: at most 16 per core");

    CHECK_FAILS(add_kernel(prog, "broken", "void kernel_main(void) { nope(); }", c00,
                           LM_PROCESSOR_DM1, &k2),
                LM_ERR_COMPILE, "kernel 'broken' failed to compile");
    CHECK_ERROR_HAS("nope");

    CHECK_OK(lm_release_program(prog));
    CHECK_FAILS(lm_release_program(prog), LM_ERR_INVALID_HANDLE, "program handle is stale");
    CHECK_FAILS(lm_set_runtime_args(prog, k, core, args, 1), LM_ERR_INVALID_HANDLE,
                "program handle is stale");
    CHECK_FAILS(lm_enqueue_program(lm_device_command_queue(dev, 0), prog, true),
                LM_ERR_INVALID_HANDLE, "lm_enqueue_program: program handle is stale");
    CHECK_OK(lm_release_program(other));
    CHECK_OK(lm_device_close(dev));
}

/* ---- running kernels ---- */

/* Each core writes what it sees into its slot of a DRAM buffer. */
static const char *report_kernel =
    "#include \"dataflow_api.h\"\n"
    "void kernel_main(void) {\n"
    "    uint32_t out = get_arg_val(0), l1 = get_arg_val(1);\n"
    "    volatile uint32_t *w = (volatile uint32_t *)l1;\n"
    "    w[0] = my_x(); w[1] = my_y(); w[2] = get_arg_val(2);\n"
    "    w[3] = get_common_arg_val(0); w[4] = get_compile_time_arg_val(1); w[5] = SCALE * 2;\n"
    "    InterleavedAddrGenFast g = {.bank_base_address = out, .page_size = 32, .is_dram = true};\n"
    "    noc_async_write_page(my_y() * 4 + my_x(), &g, l1);\n"
    "    noc_async_write_barrier();\n"
    "}\n";

static void test_args_reach_every_core(void) {
    lm_device *dev = open_device(2, 0);
    CHECK(dev);
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_buffer out = make_buffer(dev, LM_BUFFER_DRAM, 16 * 32, 32);
    lm_buffer scratch = make_buffer(dev, LM_BUFFER_L1, 16 * 32, 32); /* one page per core */
    lm_program prog;
    lm_kernel k;
    CHECK_OK(lm_create_program(dev, &prog));
    lm_kernel_config kc;
    lm_kernel_config_init(&kc, LM_PROCESSOR_DM1);
    uint32_t ct[] = {5, 77};
    lm_kernel_define defs[] = {{"SCALE", "21"}};
    kc.compile_args = ct;
    kc.compile_arg_count = 2;
    kc.defines = defs;
    kc.define_count = 1;
    lm_core_range_set all = lm_core_range_set_of(0, 0, 3, 3);
    CHECK_OK(lm_create_kernel_from_string(prog, "report", report_kernel, &all, &kc, &k));
    for (uint32_t y = 0; y < 4; y++)
        for (uint32_t x = 0; x < 4; x++) {
            /* Page p of the L1 buffer is on core p: this core's own page. */
            uint32_t args[] = {address_of(out), address_of(scratch), 1000 + y * 4 + x};
            CHECK_OK(lm_set_runtime_args(prog, k, (lm_core){x, y}, args, 3));
        }
    uint32_t common[] = {4242};
    CHECK_OK(lm_set_common_runtime_args(prog, k, common, 1));
    CHECK_OK(lm_enqueue_program(cq, prog, true));
    uint32_t got[16 * 8];
    CHECK_OK(lm_enqueue_read_buffer(cq, out, got, true));
    for (uint32_t i = 0; i < 16; i++) {
        const uint32_t *w = &got[i * 8];
        CHECK_EQ_U64(w[0], i % 4);
        CHECK_EQ_U64(w[1], i / 4);
        CHECK_EQ_U64(w[2], 1000 + i);
        CHECK_EQ_U64(w[3], 4242);
        CHECK_EQ_U64(w[4], 77);
        CHECK_EQ_U64(w[5], 42);
    }
    /* New runtime args take effect on the next launch only. */
    uint32_t args[] = {address_of(out), address_of(scratch), 7};
    CHECK_OK(lm_enqueue_program(cq, prog, false));
    CHECK_OK(lm_set_runtime_args(prog, k, (lm_core){0, 0}, args, 3));
    CHECK_OK(lm_enqueue_program(cq, prog, false));
    CHECK_OK(lm_finish(cq));
    CHECK_OK(lm_enqueue_read_buffer(cq, out, got, true));
    CHECK_EQ_U64(got[2], 7);
    CHECK_OK(lm_release_program(prog));
    CHECK_OK(lm_device_close(dev));
}

/* A reader and a writer on one core pass pages through a small circular buffer. */
static const char *producer = "#include \"dataflow_api.h\"\n"
                              "void kernel_main(void) {\n"
                              "    InterleavedAddrGenFast s = {.bank_base_address = "
                              "get_arg_val(0), .page_size = 64, .is_dram = true};\n"
                              "    for (uint32_t p = 0; p < get_arg_val(1); p++) {\n"
                              "        cb_reserve_back(0, 1);\n"
                              "        noc_async_read_page(p, &s, get_write_ptr(0));\n"
                              "        noc_async_read_barrier();\n"
                              "        cb_push_back(0, 1);\n"
                              "    }\n"
                              "}\n";
static const char *consumer = "#include \"dataflow_api.h\"\n"
                              "void kernel_main(void) {\n"
                              "    InterleavedAddrGenFast d = {.bank_base_address = "
                              "get_arg_val(0), .page_size = 64, .is_dram = true};\n"
                              "    for (uint32_t p = 0; p < get_arg_val(1); p++) {\n"
                              "        cb_wait_front(0, 1);\n"
                              "        uint32_t at = get_read_ptr(0);\n"
                              "        volatile uint32_t *w = (volatile uint32_t *)at;\n"
                              "        for (int i = 0; i < 16; i++) w[i] += 1;\n"
                              "        noc_async_write_page(p, &d, at);\n"
                              "        noc_async_write_barrier();\n"
                              "        cb_pop_front(0, 1);\n"
                              "    }\n"
                              "    DPRINT(\"moved %u pages, last %s\", get_arg_val(1), \"ok\");\n"
                              "}\n";

static void test_circular_buffer_between_processors(void) {
    lm_device *dev = open_device(2, 0);
    CHECK(dev);
    prints.len = 0;
    lm_command_queue *cq = lm_device_command_queue(dev, 1);
    enum { PAGES = 50 };
    uint32_t in[PAGES * 16], out[PAGES * 16];
    for (int i = 0; i < PAGES * 16; i++)
        in[i] = (uint32_t)i * 3;
    lm_buffer src = make_buffer(dev, LM_BUFFER_DRAM, sizeof in, 64);
    lm_buffer dst = make_buffer(dev, LM_BUFFER_DRAM, sizeof out, 64);
    CHECK_OK(lm_enqueue_write_buffer(cq, src, in, true));
    lm_program prog;
    lm_kernel r, w;
    CHECK_OK(lm_create_program(dev, &prog));
    lm_core_range_set c = lm_core_range_set_of(2, 1, 2, 1);
    lm_circular_buffer cb;
    lm_circular_buffer_config cc;
    lm_circular_buffer_config_init(&cc);
    cc.total_size = 3 * 64; /* three pages: the reader often waits for room */
    cc.index_count = 1;
    cc.indices[0] = (lm_cb_index_config){0, LM_DATA_FORMAT_UINT32, 64};
    CHECK_OK(lm_create_circular_buffer(prog, &c, &cc, &cb));
    CHECK_OK(add_kernel(prog, "producer", producer, c, LM_PROCESSOR_DM0, &r));
    CHECK_OK(add_kernel(prog, "consumer", consumer, c, LM_PROCESSOR_DM1, &w));
    uint32_t ra[] = {address_of(src), PAGES}, wa[] = {address_of(dst), PAGES};
    CHECK_OK(lm_set_runtime_args(prog, r, (lm_core){2, 1}, ra, 2));
    CHECK_OK(lm_set_runtime_args(prog, w, (lm_core){2, 1}, wa, 2));
    CHECK_OK(lm_enqueue_program(cq, prog, true));
    CHECK_OK(lm_enqueue_read_buffer(cq, dst, out, true));
    for (int i = 0; i < PAGES * 16; i++)
        CHECK_EQ_U64(out[i], in[i] + 1);
    CHECK(strstr(prints.text, "(2,1) DM1: moved 50 pages, last ok\n") != NULL);
    CHECK_OK(lm_release_program(prog));
    CHECK_OK(lm_device_close(dev));
}

/* ---- faults ---- */

/* Runs `src` on core (1,2) DM0 and expects a device fault naming `needle`;
 * then checks the device still runs a good program. */
static lm_status fault_case(lm_device *dev, const char *name, const char *src, const char *needle,
                            int *ok) {
    *ok = 0;
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_program prog;
    lm_kernel k;
    lm_status st = lm_create_program(dev, &prog);
    if (!st)
        st = add_kernel(prog, name, src, lm_core_range_set_of(1, 2, 1, 2), LM_PROCESSOR_DM0, &k);
    if (st) return st;
    st = lm_enqueue_program(cq, prog, true);
    char message[1100];
    snprintf(message, sizeof message, "%s", lm_last_error());
    lm_release_program(prog);
    if (st != LM_ERR_DEVICE_FAULT || !strstr(message, needle) ||
        !strstr(message, "core (1,2) DM0 kernel '")) {
        printf("  %s: got %s: %s\n", name, lm_status_string(st), message);
        return LM_OK;
    }
    /* The device is still usable. */
    if (lm_create_program(dev, &prog)) return LM_ERR_INTERNAL;
    st = add_kernel(prog, "fine", empty_kernel, lm_core_range_set_of(0, 0, 3, 3), LM_PROCESSOR_DM0,
                    &k);
    if (!st) st = lm_enqueue_program(cq, prog, true);
    lm_release_program(prog);
    *ok = st == LM_OK;
    return LM_OK;
}

#define KERNEL(body) "#include \"dataflow_api.h\"\nvoid kernel_main(void) {" body "}\n"

static void test_faults_are_contained(void) {
    lm_device *dev = open_device(2, 2000000);
    CHECK(dev);
    int ok;
    CHECK_OK(fault_case(dev, "illegal", KERNEL("__asm__ volatile(\".word 0\");"),
                        "illegal instruction", &ok));
    CHECK(ok);
    CHECK_OK(fault_case(dev, "wild_store", KERNEL("*(volatile uint32_t *)0x30000000 = 1;"),
                        "0x30000000", &ok));
    CHECK(ok);
    CHECK_OK(fault_case(dev, "bad_ecall", KERNEL("lm_ecall(999, 0, 0, 0, 0, 0);"),
                        "unknown ecall 999", &ok));
    CHECK(ok);
    CHECK_OK(fault_case(dev, "bad_noc",
                        KERNEL("noc_async_read(get_noc_addr(9, 9, 0), 0x20000, 64);"),
                        "noc_async_read: NoC access of 64 bytes at core (9,9)", &ok));
    CHECK(ok);
    CHECK_OK(fault_case(dev, "strided_dst",
                        KERNEL("lm_noc_async_read_strided(get_noc_addr(0, 0, 0x20000), 4, "
                               "0x20000, 1u << 20, 4, 8);"),
                        "lm_noc_async_read_strided: destination [0x20000, +7340036) (8 transfers "
                        "of 4 bytes 1048576 apart) is outside L1",
                        &ok));
    CHECK(ok);
    CHECK_OK(fault_case(dev, "strided_src",
                        KERNEL("lm_noc_async_write_strided(0x100000, 0x10000, "
                               "get_noc_addr(0, 0, 0x20000), 0, 64, 8);"),
                        "lm_noc_async_write_strided: source [0x100000, +458816) (8 transfers of "
                        "64 bytes 65536 apart) is outside L1",
                        &ok));
    CHECK(ok);
    CHECK_OK(fault_case(dev, "strided_span",
                        KERNEL("lm_noc_async_read_strided(get_noc_addr(0, 0, 0), 0x80000000u, "
                               "0x20000, 4, 4, 3);"),
                        "lm_noc_async_read_strided: 3 transfers of 4 bytes 2147483648 apart span "
                        "4294967300 bytes, more than any memory",
                        &ok));
    CHECK(ok);
    CHECK_OK(fault_case(dev, "strided_far",
                        KERNEL("lm_noc_async_read_strided(get_noc_addr(0, 0, 0x16e000), 0x100, "
                               "0x20000, 4, 4, 16);"),
                        "lm_noc_async_read_strided: NoC access of 3844 bytes at core (0,0) "
                        "address 0x16e000 is outside the 4x4 grid's L1",
                        &ok));
    CHECK(ok);
    CHECK_OK(fault_case(dev, "bad_cb", KERNEL("cb_wait_front(5, 1);"),
                        "circular buffer 5 is not configured on this core", &ok));
    CHECK(ok);
    CHECK_OK(fault_case(dev, "spin", KERNEL("for (;;) { __asm__ volatile(\"\"); }"),
                        "watchdog: more than 2000000 instructions", &ok));
    CHECK(ok);
    CHECK_OK(fault_case(dev, "waiter",
                        KERNEL("noc_semaphore_wait((volatile uint32_t *)get_semaphore(0), 1);"),
                        "deadlock: every running kernel is blocked; core (1,2) DM0 kernel "
                        "'waiter' at pc 0x",
                        &ok));
    CHECK(ok);
    CHECK_ERROR_HAS("noc_semaphore_wait(0x100, 1): semaphore is 0");
    CHECK_OK(lm_device_close(dev));
}

/* ---- strided transfers (lightmetal's own) ---- */

/* Gathers ten 8-byte pieces 40 bytes apart from `in` into L1 12 bytes apart,
 * smears a word over the next five by overlapping local reads (in order, as
 * the loop of single reads would), makes a strided call of no transfers at
 * an address that would fault, then scatters the gathered pieces 20 bytes
 * apart into `out` and writes the L1 region after them. */
static const char *strided_kernel =
    "#include \"dataflow_api.h\"\n"
    "void kernel_main(void) {\n"
    "    uint32_t in = get_arg_val(0), out = get_arg_val(1), l1 = 0x20000;\n"
    "    volatile uint32_t *w = (volatile uint32_t *)l1;\n"
    "    for (int i = 0; i < 64; i++) w[i] = 0xaaaaaaaau;\n"
    "    lm_noc_async_read_strided(lm_bank_noc_addr(true, 0, in + 8), 40, l1, 12, 8, 10);\n"
    "    w[40] = 77u;\n"
    "    lm_noc_async_read_strided(get_noc_addr_local(l1 + 160), 4, l1 + 164, 4, 4, 5);\n"
    "    lm_noc_async_read_strided(get_noc_addr(9, 9, 0), 4, 0x7fffffffu, 4, 4, 0);\n"
    "    noc_async_read_barrier();\n"
    "    lm_noc_async_write_strided(l1, 12, lm_bank_noc_addr(true, 0, out + 4), 20, 8, 10);\n"
    "    noc_async_write(l1 + 160, lm_bank_noc_addr(true, 0, out + 512), 32);\n"
    "    noc_async_write_barrier();\n"
    "}\n";

static lm_status run_on_core(lm_device *dev, const char *name, const char *src, uint32_t in,
                             uint32_t out) {
    lm_program prog;
    lm_kernel k;
    lm_status st = lm_create_program(dev, &prog);
    if (st) return st;
    uint32_t args[] = {in, out};
    st = add_kernel(prog, name, src, lm_core_range_set_of(1, 2, 1, 2), LM_PROCESSOR_DM0, &k);
    if (!st) st = lm_set_runtime_args(prog, k, (lm_core){1, 2}, args, 2);
    if (!st) st = lm_enqueue_program(lm_device_command_queue(dev, 0), prog, true);
    lm_release_program(prog);
    return st;
}

static void test_strided_transfers(void) {
    lm_device *dev = open_device(2, 0);
    CHECK(dev);
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    /* One page each, so each lies in bank 0 in one piece. */
    lm_buffer in = make_buffer(dev, LM_BUFFER_DRAM, 1024, 1024);
    lm_buffer out = make_buffer(dev, LM_BUFFER_DRAM, 1024, 1024);
    uint8_t src[1024], zeros[1024] = {0}, got[1024], want[1024] = {0};
    for (uint32_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)(i * 7 + 3);
    CHECK_OK(lm_enqueue_write_buffer(cq, in, src, true));
    CHECK_OK(lm_enqueue_write_buffer(cq, out, zeros, true));
    CHECK_OK(run_on_core(dev, "strided", strided_kernel, address_of(in), address_of(out)));
    CHECK_OK(lm_enqueue_read_buffer(cq, out, got, true));
    for (uint32_t i = 0; i < 10; i++)
        memcpy(&want[4 + 20 * i], &src[8 + 40 * i], 8);
    uint32_t smear[8] = {77, 77, 77, 77, 77, 77, 0xaaaaaaaau, 0xaaaaaaaau};
    memcpy(&want[512], smear, sizeof smear);
    CHECK(memcmp(got, want, sizeof want) == 0);

    /* A scatter whose last write would land past its bank faults before the
     * first one is made: `out` keeps its zeros. */
    CHECK_OK(lm_enqueue_write_buffer(cq, out, zeros, true));
    const char *past =
        "#include \"dataflow_api.h\"\n"
        "void kernel_main(void) {\n"
        "    lm_noc_async_write_strided(0x20000, 0, lm_bank_noc_addr(true, 0, get_arg_val(1)), "
        "1u << 20, 4, 100);\n"
        "}\n";
    CHECK_FAILS(run_on_core(dev, "past", past, 0, address_of(out)), LM_ERR_DEVICE_FAULT,
                "lm_noc_async_write_strided: NoC access of 103809028 bytes at DRAM bank 0");
    CHECK_OK(lm_enqueue_read_buffer(cq, out, got, true));
    CHECK(memcmp(got, zeros, sizeof zeros) == 0);
    CHECK_OK(lm_device_close(dev));
}

/* A fault reported by lm_finish for a non-blocking launch; later launches run. */
static void test_fault_reported_by_finish(void) {
    lm_device *dev = open_device(1, 0);
    CHECK(dev);
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_program bad, good;
    lm_kernel k;
    CHECK_OK(lm_create_program(dev, &bad));
    CHECK_OK(add_kernel(bad, "bad", KERNEL("__asm__ volatile(\"ebreak\");"),
                        lm_core_range_set_of(0, 0, 0, 0), LM_PROCESSOR_DM1, &k));
    CHECK_OK(lm_create_program(dev, &good));
    CHECK_OK(add_kernel(good, "good", empty_kernel, lm_core_range_set_of(0, 0, 0, 0),
                        LM_PROCESSOR_DM1, &k));
    CHECK_OK(lm_enqueue_program(cq, bad, false));
    CHECK_OK(lm_enqueue_program(cq, good, false));
    CHECK_OK(lm_release_program(bad)); /* the queued launch keeps what it needs */
    CHECK_FAILS(lm_finish(cq), LM_ERR_DEVICE_FAULT, "core (0,0) DM1 kernel 'bad'");
    CHECK_ERROR_HAS("(1 later command on queue 0 skipped)");
    CHECK_OK(lm_enqueue_program(cq, good, true));
    CHECK_OK(lm_release_program(good));
    CHECK_OK(lm_device_close(dev));
}

/* ---- many cores, semaphores, and thread counts ---- */

/* Core (0,0) multicasts a block to all other cores, then signals them with a
 * multicast semaphore; each receiver adds its index and writes the block
 * back to DRAM, then increments a counter semaphore on the sender, which
 * waits for all of them. */
static const char *sender =
    "#include \"dataflow_api.h\"\n"
    "void kernel_main(void) {\n"
    "    uint32_t block = get_arg_val(0), n = get_arg_val(1);\n"
    "    volatile uint32_t *go = (volatile uint32_t *)get_semaphore(0);\n"
    "    volatile uint32_t *done = (volatile uint32_t *)get_semaphore(1);\n"
    "    volatile uint32_t *b = (volatile uint32_t *)block;\n"
    "    for (int i = 0; i < 64; i++) b[i] = 1000u + (uint32_t)i;\n"
    "    noc_async_write_multicast(block, get_noc_multicast_addr(0, 0, 3, 3, block), 256, n);\n"
    "    noc_async_write_barrier();\n"
    "    noc_semaphore_set(go, 1);\n"
    "    noc_semaphore_set_multicast(get_semaphore(0), get_noc_multicast_addr(0, 0, 3, 3, "
    "get_semaphore(0)), n);\n"
    "    noc_semaphore_wait(done, n);\n"
    "}\n";
static const char *receiver =
    "#include \"dataflow_api.h\"\n"
    "void kernel_main(void) {\n"
    "    uint32_t block = get_arg_val(0), out = get_arg_val(2);\n"
    "    noc_semaphore_wait((volatile uint32_t *)get_semaphore(0), 1);\n"
    "    volatile uint32_t *b = (volatile uint32_t *)block;\n"
    "    uint32_t me = my_y() * 4 + my_x();\n"
    "    for (int i = 0; i < 64; i++) b[i] += me;\n"
    "    noc_async_write(block, get_noc_addr(me % 4, 63, out + (me / 4) * 256), 256);\n"
    "    noc_async_write_barrier();\n"
    "    noc_semaphore_inc(get_noc_addr(0, 0, get_semaphore(1)), 1);\n"
    "}\n";

static int run_multicast(uint32_t threads, uint32_t *out_words) {
    lm_device *dev = open_device(threads, 0);
    if (!dev) return 0;
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_buffer block = make_buffer(dev, LM_BUFFER_L1, 16 * 256, 256); /* same address on all cores */
    lm_program prog;
    lm_kernel s, r;
    uint32_t sem;
    int ok = !lm_create_program(dev, &prog);
    lm_core_range_set all = lm_core_range_set_of(0, 0, 3, 3);
    lm_core_range_set rest = {.count = 2};
    rest.ranges[0] = (lm_core_range){{1, 0}, {3, 0}};
    rest.ranges[1] = (lm_core_range){{0, 1}, {3, 3}};
    ok = ok && !lm_create_semaphore(prog, &all, 0, &sem) && sem == 0;
    ok = ok && !lm_create_semaphore(prog, &all, 0, &sem) && sem == 1;
    ok = ok && !add_kernel(prog, "sender", sender, lm_core_range_set_of(0, 0, 0, 0),
                           LM_PROCESSOR_DM0, &s);
    ok = ok && !add_kernel(prog, "receiver", receiver, rest, LM_PROCESSOR_DM0, &r);
    /* DRAM bank b holds rows of 4 cores' blocks: 4 banks * 4 blocks of 256 B. */
    uint32_t sargs[] = {address_of(block), 15};
    ok = ok && !lm_set_runtime_args(prog, s, (lm_core){0, 0}, sargs, 2);
    for (uint32_t i = 1; i < 16 && ok; i++) {
        uint32_t rargs[] = {address_of(block), 0, 4096};
        ok = !lm_set_runtime_args(prog, r, (lm_core){i % 4, i / 4}, rargs, 3);
    }
    ok = ok && !lm_enqueue_program(cq, prog, true);
    if (!ok) printf("  multicast with %u threads: %s\n", threads, lm_last_error());
    /* Read the 4 KiB region at bank-local 4096 of every bank. */
    lm_buffer_config c;
    lm_buffer_config_init(&c);
    c.size = 4 * 1024;
    c.page_size = 1024;
    c.at_address = true;
    c.address = 4096;
    lm_buffer view;
    ok = ok && !lm_create_buffer(dev, &c, &view) &&
         !lm_enqueue_read_buffer(cq, view, out_words, true);
    lm_release_program(prog);
    ok = ok && !lm_device_close(dev);
    return ok;
}

static void test_multicast_same_with_any_thread_count(void) {
    static uint32_t one[1024], four[1024];
    CHECK(run_multicast(1, one));
    CHECK(run_multicast(4, four));
    CHECK(memcmp(one, four, sizeof one) == 0);
    /* Receiver i's block is at bank i % 4, row i / 4: word j = 1000 + j + i. */
    for (uint32_t i = 1; i < 16; i++)
        for (uint32_t j = 0; j < 64; j++)
            CHECK_EQ_U64(one[(i % 4) * 256 + (i / 4) * 64 + j], 1000 + j + i);
}

/* ---- unequal cores ---- */

/* Core i runs get_arg_val(1) steps of a linear congruential generator from
 * its index and writes the result to DRAM page i. */
static const char *stepper =
    KERNEL("uint32_t v = my_y() * 4 + my_x();"
           "for (uint32_t i = 0; i < get_arg_val(1); i++) v = v * 1664525u + 1013904223u;"
           "volatile uint32_t *w = (volatile uint32_t *)get_arg_val(2);"
           "w[0] = v;"
           "InterleavedAddrGenFast g = {.bank_base_address = get_arg_val(0), .page_size = 32, "
           ".is_dram = true};"
           "noc_async_write_page(my_y() * 4 + my_x(), &g, get_arg_val(2));"
           "noc_async_write_barrier();");

/* Two cores of one thread's share (0 and 2 are thread 0's of two) work long
 * and the rest finish at once: a thread with nothing left of its own takes
 * the other's ready core, or waits for it to finish -- which is the end of
 * the launch, not a deadlock. Every thread count gives the same results. */
static void test_unequal_cores(void) {
    for (uint32_t threads = 1; threads <= 4; threads++) {
        lm_device *dev = open_device(threads, 0);
        CHECK(dev);
        if (!dev) return;
        lm_command_queue *cq = lm_device_command_queue(dev, 0);
        lm_buffer out = make_buffer(dev, LM_BUFFER_DRAM, 16 * 32, 32);
        lm_buffer scratch = make_buffer(dev, LM_BUFFER_L1, 16 * 32, 32);
        lm_program prog;
        lm_kernel k;
        CHECK_OK(lm_create_program(dev, &prog));
        CHECK_OK(add_kernel(prog, "stepper", stepper, lm_core_range_set_of(0, 0, 3, 3),
                            LM_PROCESSOR_DM0, &k));
        uint32_t steps[16] = {[0] = 200000, [2] = 150000, [7] = 3};
        for (uint32_t i = 0; i < 16; i++) {
            uint32_t args[] = {address_of(out), steps[i], address_of(scratch)};
            CHECK_OK(lm_set_runtime_args(prog, k, (lm_core){i % 4, i / 4}, args, 3));
        }
        for (int rep = 0; rep < 3; rep++)
            CHECK_OK(lm_enqueue_program(cq, prog, false));
        CHECK_OK(lm_finish(cq));
        uint32_t got[16 * 8];
        CHECK_OK(lm_enqueue_read_buffer(cq, out, got, true));
        for (uint32_t i = 0; i < 16; i++) {
            uint32_t v = i;
            for (uint32_t n = 0; n < steps[i]; n++)
                v = v * 1664525u + 1013904223u;
            CHECK_EQ_U64(got[i * 8], v);
        }
        CHECK_OK(lm_release_program(prog));
        CHECK_OK(lm_device_close(dev));
    }
}

int main(void) {
    char cache[64];
    snprintf(cache, sizeof cache, "test_program_cache");
    setenv("LM_CACHE_DIR", cache, 0);
    TEST_RUN(test_validation);
    TEST_RUN(test_args_reach_every_core);
    TEST_RUN(test_circular_buffer_between_processors);
    TEST_RUN(test_faults_are_contained);
    TEST_RUN(test_strided_transfers);
    TEST_RUN(test_fault_reported_by_finish);
    TEST_RUN(test_multicast_same_with_any_thread_count);
    TEST_RUN(test_unequal_cores);
    return test_summary();
}
