/* Light Metal end to end: capture a workload, replay it (from memory and from
 * a file) on fresh devices, goldens, named inputs and outputs, capture
 * beginning mid-workload, and the errors a bad binary or device gives. */
#include <stdlib.h>
#include <unistd.h>

#include "lightmetal/lightmetal.h"
#include "lm_test.h"

enum { WORDS = 1024 };

/* out[i] = in[i] * 5 + 1 for every word of 4 pages of `in` from page
 * get_arg_val(2) on, one page per core of a 2x2 grid. */
static const char *kernel_src = "#include \"dataflow_api.h\"\n"
                                "void kernel_main(void) {\n"
                                "    InterleavedAddrGenFast in = {.bank_base_address = "
                                "get_arg_val(0), .page_size = 1024, .is_dram = true};\n"
                                "    InterleavedAddrGenFast out = {.bank_base_address = "
                                "get_arg_val(1), .page_size = 1024, .is_dram = true};\n"
                                "    uint32_t page = my_y() * 2 + my_x(), l1 = 0x20000;\n"
                                "    noc_async_read_page(get_arg_val(2) + page, &in, l1);\n"
                                "    noc_async_read_barrier();\n"
                                "    volatile uint32_t *w = (volatile uint32_t *)l1;\n"
                                "    for (int i = 0; i < 256; i++) w[i] = w[i] * 5u + 1u;\n"
                                "    noc_async_write_page(page, &out, l1);\n"
                                "    noc_async_write_barrier();\n"
                                "}\n";

static lm_device *open_device(void) {
    lm_device_options o;
    lm_device_options_init(&o);
    o.grid_x = 2;
    o.grid_y = 2;
    o.dram_banks = 2;
    o.dram_bank_size = 16 << 20;
    o.trace_region_size = 1 << 20;
    lm_device *dev = NULL;
    return lm_device_open(&o, &dev) ? NULL : dev;
}

static void input_words(uint32_t *w, uint32_t seed) {
    for (int i = 0; i < WORDS; i++)
        w[i] = (uint32_t)i * 2654435761u + seed;
}

typedef struct workload {
    lm_buffer in, out;
} workload;

static lm_status make_buffers(lm_device *dev, workload *w) {
    lm_buffer_config c;
    lm_buffer_config_init(&c);
    c.size = WORDS * 4;
    c.page_size = 1024;
    lm_status st = lm_create_buffer(dev, &c, &w->in);
    return st ? st : lm_create_buffer(dev, &c, &w->out);
}

/* The scaling program over the workload's buffers, on all four cores,
 * reading `in` from page `first_page` on; its kernel in *out_kernel. */
static lm_status make_program_k(lm_device *dev, const workload *w, uint32_t first_page,
                                lm_program *out, lm_kernel *out_kernel) {
    lm_kernel k = {0};
    lm_kernel_config kc;
    lm_kernel_config_init(&kc, LM_PROCESSOR_DM0);
    lm_core_range_set all = lm_core_range_set_of(0, 0, 1, 1);
    uint64_t ia, oa;
    lm_buffer_address(w->in, &ia);
    lm_buffer_address(w->out, &oa);
    uint32_t args[] = {(uint32_t)ia, (uint32_t)oa, first_page};
    lm_status st = lm_create_program(dev, out);
    if (!st) st = lm_create_kernel_from_string(*out, "scale", kernel_src, &all, &kc, &k);
    for (uint32_t y = 0; y < 2 && !st; y++)
        for (uint32_t x = 0; x < 2 && !st; x++)
            st = lm_set_runtime_args(*out, k, (lm_core){x, y}, args, 3);
    *out_kernel = k;
    return st;
}

static lm_status make_program(lm_device *dev, const workload *w, uint32_t first_page,
                              lm_program *out) {
    lm_kernel k;
    return make_program_k(dev, w, first_page, out, &k);
}

/* Writes the input, runs the kernel, reads the output, checks it as golden. */
static lm_status run_workload(lm_device *dev, workload *w, uint32_t *result) {
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    uint32_t in[WORDS];
    input_words(in, 7);
    lm_program prog;
    lm_status st = lm_enqueue_write_buffer(cq, w->in, in, false);
    if (!st) st = make_program(dev, w, 0, &prog);
    if (!st) st = lm_enqueue_program(cq, prog, false);
    if (!st) st = lm_enqueue_read_buffer(cq, w->out, result, true);
    if (!st) st = lm_release_program(prog);
    return st;
}

/* Captures the whole workload; names "in" and "out"; one golden. */
static lm_status capture(lm_binary **out_binary, uint32_t *live_result) {
    lm_device *dev = open_device();
    if (!dev) return LM_ERR_INTERNAL;
    workload w;
    lm_status st = lm_light_metal_begin_capture(dev, NULL);
    if (!st) st = make_buffers(dev, &w);
    if (!st) st = lm_capture_name_buffer(w.in, "in");
    if (!st) st = lm_capture_name_buffer(w.out, "out");
    if (!st) st = run_workload(dev, &w, live_result);
    if (!st) st = lm_capture_compare_to_capture(lm_device_command_queue(dev, 0), w.out);
    if (!st) st = lm_light_metal_end_capture(dev, out_binary);
    lm_device_close(dev);
    return st;
}

static void test_capture_then_replay(void) {
    static uint32_t live[WORDS], replayed[WORDS];
    lm_binary *bin;
    CHECK_OK(capture(&bin, live));
    uint32_t in[WORDS];
    input_words(in, 7);
    CHECK_EQ_U64(live[3], in[3] * 5u + 1u);
    const void *data;
    uint64_t size;
    CHECK_OK(lm_binary_data(bin, &data, &size));
    lm_replay *r;
    CHECK_OK(lm_replay_open(data, size, &r));
    lm_replay_report rep;
    CHECK_OK(lm_replay_run(r, NULL, NULL, &rep)); /* opens a matching device */
    CHECK_EQ_U64(rep.goldens_checked, 1);
    CHECK_EQ_U64(rep.goldens_failed, 0);
    CHECK_EQ_U64(rep.programs, 1);
    CHECK(rep.commands >= 10);
    /* One queue: the blocking read need not wait; the golden does. */
    CHECK_EQ_U64(rep.host_waits, 1);
    CHECK_OK(lm_replay_get_output(r, "out", replayed, sizeof replayed));
    CHECK(memcmp(live, replayed, sizeof live) == 0);
    /* Loops run the whole workload again on the same device. */
    lm_replay_options o;
    lm_replay_options_init(&o);
    o.loops = 3;
    CHECK_OK(lm_replay_run(r, NULL, &o, &rep));
    CHECK_EQ_U64(rep.goldens_checked, 3);
    lm_replay_close(r);

    /* Through a file, on a device the caller owns. */
    char path[64];
    snprintf(path, sizeof path, "capture_test_%d.lmb", (int)getpid());
    CHECK_OK(lm_binary_save(bin, path));
    lm_binary_free(bin);
    lm_device *dev = open_device();
    CHECK(dev);
    CHECK_OK(lm_replay_open_file(path, &r));
    CHECK_OK(lm_replay_run(r, dev, NULL, &rep));
    memset(replayed, 0, sizeof replayed);
    CHECK_OK(lm_replay_get_output(r, "out", replayed, sizeof replayed));
    CHECK(memcmp(live, replayed, sizeof live) == 0);
    lm_replay_close(r);
    CHECK_OK(lm_device_close(dev));
    unlink(path);
}

/* A blocking write on one queue orders the other queue after it, in a
 * replay as in the capture. The program on queue 0 reads the last pages of a
 * large buffer that queue 1 writes, the pages that land last: without the
 * order it would read them before they arrive. */
static void test_blocking_write_orders_queues(void) {
    enum { BIG_PAGES = 16384 }; /* 16 MiB of 1 KiB pages */
    static uint32_t live[WORDS], replayed[WORDS];
    lm_device *dev = open_device();
    CHECK(dev);
    lm_buffer_config c;
    lm_buffer_config_init(&c);
    c.size = (uint64_t)BIG_PAGES * 1024;
    c.page_size = 1024;
    uint32_t *big = malloc(c.size);
    CHECK(big);
    for (uint64_t i = 0; big && i < c.size / 4; i++)
        big[i] = (uint32_t)i * 2654435761u + 3;
    workload w;
    lm_program prog;
    lm_binary *bin;
    CHECK_OK(lm_light_metal_begin_capture(dev, NULL));
    CHECK_OK(lm_create_buffer(dev, &c, &w.in));
    c.size = WORDS * 4;
    CHECK_OK(lm_create_buffer(dev, &c, &w.out));
    CHECK_OK(lm_capture_name_buffer(w.out, "out"));
    CHECK_OK(make_program(dev, &w, BIG_PAGES - 4, &prog));
    CHECK_OK(lm_enqueue_write_buffer(lm_device_command_queue(dev, 1), w.in, big, true));
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    CHECK_OK(lm_enqueue_program(cq, prog, false));
    CHECK_OK(lm_enqueue_read_buffer(cq, w.out, live, true));
    CHECK_OK(lm_capture_compare_to_capture(cq, w.out));
    CHECK_OK(lm_release_program(prog));
    CHECK_OK(lm_light_metal_end_capture(dev, &bin));
    CHECK_OK(lm_device_close(dev));
    const uint32_t *tail = big + (uint64_t)(BIG_PAGES - 4) * 256;
    for (int i = 0; big && i < WORDS; i++)
        CHECK_EQ_U64(live[i], tail[i] * 5u + 1u);

    const void *data;
    uint64_t size;
    CHECK_OK(lm_binary_data(bin, &data, &size));
    lm_replay *r;
    CHECK_OK(lm_replay_open(data, size, &r));
    lm_replay_options o;
    lm_replay_options_init(&o);
    o.loops = 8;
    lm_replay_report rep;
    CHECK_OK(lm_replay_run(r, NULL, &o, &rep));
    CHECK_EQ_U64(rep.goldens_checked, 8);
    CHECK_EQ_U64(rep.goldens_failed, 0);
    CHECK_EQ_U64(rep.host_waits, 8 * 3); /* the write, the read, the golden */
    CHECK_OK(lm_replay_get_output(r, "out", replayed, sizeof replayed));
    CHECK(memcmp(live, replayed, sizeof live) == 0);
    lm_replay_close(r);
    lm_binary_free(bin);
    free(big);
}

/* Both binaries as `lightmetal dump` prints them (the shape flatc --json
 * gives): equal text means equal commands, blobs, names and descriptor. The
 * bytes may differ where the builder laid the same tables out in another
 * order, and with them the table digest. */
static int same_dump(const lm_binary *x, const lm_binary *y) {
    char cmd[1024];
    int pid = (int)getpid();
    snprintf(cmd, sizeof cmd, "recapture_%d_a.lmb", pid);
    if (lm_binary_save(x, cmd)) return 0;
    snprintf(cmd, sizeof cmd, "recapture_%d_b.lmb", pid);
    if (lm_binary_save(y, cmd)) return 0;
    snprintf(cmd, sizeof cmd,
             "'%s' dump recapture_%d_a.lmb | grep -v table_digest > recapture_%d_a.json && "
             "'%s' dump recapture_%d_b.lmb | grep -v table_digest > recapture_%d_b.json && "
             "cmp -s recapture_%d_a.json recapture_%d_b.json",
             LM_CLI, pid, pid, LM_CLI, pid, pid, pid, pid);
    int same = system(cmd) == 0;
    snprintf(cmd, sizeof cmd, "rm -f recapture_%d_a.* recapture_%d_b.*", pid, pid);
    return system(cmd) == 0 && same;
}

/* Capture -> replay under capture -> the same command stream. */
static void test_recapture_gives_same_binary(void) {
    static uint32_t live[WORDS];
    lm_binary *first, *second;
    CHECK_OK(capture(&first, live));
    const void *a, *b;
    uint64_t a_size, b_size;
    CHECK_OK(lm_binary_data(first, &a, &a_size));
    lm_replay *r;
    CHECK_OK(lm_replay_open(a, a_size, &r));
    lm_device *dev = open_device();
    CHECK(dev);
    CHECK_OK(lm_light_metal_begin_capture(dev, NULL));
    CHECK_OK(lm_replay_run(r, dev, NULL, NULL));
    CHECK_OK(lm_light_metal_end_capture(dev, &second));
    CHECK_OK(lm_device_close(dev));
    CHECK_OK(lm_binary_data(second, &b, &b_size));
    CHECK_EQ_U64(a_size, b_size);
    CHECK(same_dump(first, second));
    lm_replay_close(r);
    lm_binary_free(first);
    lm_binary_free(second);
}

static void test_inputs_and_goldens(void) {
    static uint32_t live[WORDS], other[WORDS], got[WORDS];
    lm_binary *bin;
    CHECK_OK(capture(&bin, live));
    const void *data;
    uint64_t size;
    CHECK_OK(lm_binary_data(bin, &data, &size));
    lm_replay *r;
    CHECK_OK(lm_replay_open(data, size, &r));
    input_words(other, 1000);
    CHECK_FAILS(lm_replay_set_input(r, "nope", other, sizeof other), LM_ERR_NOT_FOUND,
                "no buffer named 'nope'");
    CHECK_FAILS(lm_replay_set_input(r, "in", other, 12), LM_ERR_INVALID_ARGUMENT,
                "holds 4096 bytes, the input has 12");
    CHECK_FAILS(lm_replay_get_output(r, "out", got, sizeof got), LM_ERR_INVALID_STATE, "run first");
    CHECK_OK(lm_replay_set_input(r, "in", other, sizeof other));
    lm_replay_report rep;
    /* New input, same golden: the run reports the mismatch. */
    CHECK_FAILS(lm_replay_run(r, NULL, NULL, &rep), LM_ERR_MISMATCH, "golden mismatch at byte 0");
    CHECK_EQ_U64(rep.goldens_failed, 1);
    CHECK_OK(lm_replay_get_output(r, "out", got, sizeof got));
    for (int i = 0; i < WORDS; i++)
        CHECK_EQ_U64(got[i], other[i] * 5u + 1u);
    CHECK_FAILS(lm_replay_get_output(r, "out", got, 8), LM_ERR_INVALID_ARGUMENT, "not 8");
    lm_replay_close(r);
    lm_binary_free(bin);
}

/* Capture begins after the buffers exist and hold data: they are snapshotted. */
/* Replays `bin` (then freed) on a new device: its "out" must be `live`. */
static void check_replay_out(lm_binary *bin, const uint32_t *live) {
    static uint32_t replayed[WORDS];
    const void *data;
    uint64_t size;
    lm_replay *r = NULL;
    lm_status st = lm_binary_data(bin, &data, &size);
    if (!st) st = lm_replay_open(data, size, &r);
    if (!st) st = lm_replay_run(r, NULL, NULL, NULL);
    if (!st) st = lm_replay_get_output(r, "out", replayed, sizeof replayed);
    if (r) lm_replay_close(r);
    lm_binary_free(bin);
    CHECK_OK(st);
    CHECK(memcmp(live, replayed, sizeof replayed) == 0);
}

static void test_capture_mid_workload(void) {
    static uint32_t live[WORDS];
    lm_device *dev = open_device();
    CHECK(dev);
    workload w;
    CHECK_OK(make_buffers(dev, &w));
    uint32_t junk[WORDS];
    input_words(junk, 99);
    CHECK_OK(lm_enqueue_write_buffer(lm_device_command_queue(dev, 0), w.out, junk, true));
    CHECK_OK(lm_light_metal_begin_capture(dev, NULL));
    CHECK_OK(lm_capture_name_buffer(w.out, "out"));
    CHECK_OK(run_workload(dev, &w, live));
    lm_binary *bin;
    CHECK_OK(lm_light_metal_end_capture(dev, &bin));
    CHECK_OK(lm_device_close(dev));
    check_replay_out(bin, live);
}

/* Programs (kernels, arguments, circular buffers, semaphores) alive when the
 * capture begins are snapshotted, so the binary replays on its own. */
static void test_capture_snapshots_programs(void) {
    static uint32_t live[WORDS], replayed[WORDS];
    lm_device *dev = open_device();
    CHECK(dev);
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    workload w;
    CHECK_OK(make_buffers(dev, &w));
    lm_program prog;
    uint32_t id;
    lm_core_range_set all = lm_core_range_set_of(0, 0, 1, 1);
    CHECK_OK(make_program(dev, &w, 0, &prog));
    lm_circular_buffer_config cc;
    lm_circular_buffer_config_init(&cc);
    cc.total_size = 4096;
    cc.index_count = 1;
    cc.indices[0] = (lm_cb_index_config){3, LM_DATA_FORMAT_FLOAT16_B, 2048};
    lm_circular_buffer cb;
    lm_core_range_set corner = lm_core_range_set_of(1, 1, 1, 1);
    CHECK_OK(lm_create_circular_buffer(prog, &corner, &cc, &cb));
    CHECK_OK(lm_create_semaphore(prog, &all, 5, &id));
    CHECK_OK(lm_create_semaphore(prog, &corner, 9, &id));
    CHECK_EQ_U64(id, 1);

    CHECK_OK(lm_light_metal_begin_capture(dev, NULL));
    uint32_t in[WORDS];
    input_words(in, 3);
    CHECK_OK(lm_enqueue_write_buffer(cq, w.in, in, false));
    CHECK_OK(lm_enqueue_program(cq, prog, false));
    CHECK_OK(lm_enqueue_read_buffer(cq, w.out, live, true));
    CHECK_OK(lm_capture_name_buffer(w.out, "out"));
    CHECK_OK(lm_capture_compare_to_capture(cq, w.out));
    lm_binary *bin;
    CHECK_OK(lm_light_metal_end_capture(dev, &bin));
    CHECK_OK(lm_release_program(prog));
    CHECK_OK(lm_device_close(dev));
    /* Closing the device released what was left: the handle is stale. */
    CHECK_FAILS(lm_release_program(prog), LM_ERR_INVALID_HANDLE, "stale");

    const void *data;
    uint64_t size;
    CHECK_OK(lm_binary_data(bin, &data, &size));
    lm_replay *r;
    CHECK_OK(lm_replay_open(data, size, &r));
    lm_replay_report rep;
    CHECK_OK(lm_replay_run(r, NULL, NULL, &rep));
    CHECK_EQ_U64(rep.goldens_checked, 1);
    CHECK_OK(lm_replay_get_output(r, "out", replayed, sizeof replayed));
    CHECK(memcmp(live, replayed, sizeof live) == 0);
    CHECK_EQ_U64(live[5], in[5] * 5u + 1u);
    lm_replay_close(r);
    lm_binary_free(bin);
}

/* One capture of the scaling workload on a device holding program `prog`
 * (made before the capture) and, with `others`, two more programs: one
 * released during the capture, one never touched. */
static lm_status capture_with(bool others, lm_binary **out_binary, uint32_t *live) {
    lm_device *dev = open_device();
    if (!dev) return LM_ERR_INTERNAL;
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    workload w;
    lm_program prog, released = {0}, untouched = {0};
    uint32_t in[WORDS];
    input_words(in, 11);
    lm_status st = make_buffers(dev, &w);
    if (!st && others) st = make_program(dev, &w, 0, &released);
    if (!st) st = make_program(dev, &w, 0, &prog);
    if (!st && others) st = make_program(dev, &w, 0, &untouched);
    if (!st) st = lm_light_metal_begin_capture(dev, NULL);
    if (!st && others) st = lm_release_program(released);
    if (!st) st = lm_enqueue_write_buffer(cq, w.in, in, false);
    if (!st) st = lm_enqueue_program(cq, prog, false);
    if (!st) st = lm_enqueue_read_buffer(cq, w.out, live, true);
    if (!st) st = lm_capture_name_buffer(w.out, "out");
    if (!st) st = lm_light_metal_end_capture(dev, out_binary);
    lm_device_close(dev);
    return st;
}

/* A program alive when the capture begins is recorded when the workload
 * first uses it, as it is then: programs it never uses (a warm program
 * cache's) stay out of the binary, which is byte for byte the one of a
 * device that never had them; one changed during the capture (new
 * arguments, a new circular buffer) is recorded once, with the change. */
static void test_capture_records_programs_used(void) {
    static uint32_t live[WORDS], live2[WORDS];
    lm_binary *alone, *among;
    CHECK_OK(capture_with(false, &alone, live));
    CHECK_OK(capture_with(true, &among, live2));
    const void *d1, *d2;
    uint64_t s1, s2;
    CHECK_OK(lm_binary_data(alone, &d1, &s1));
    CHECK_OK(lm_binary_data(among, &d2, &s2));
    CHECK_EQ_U64(s2, s1);
    CHECK(memcmp(d1, d2, s1) == 0);
    CHECK(memcmp(live, live2, sizeof live) == 0);
    lm_binary_free(alone);
    lm_binary_free(among);

    /* Changed during the capture: its output buffer, and a circular
     * buffer added. */
    lm_device *dev = open_device();
    CHECK(dev);
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    workload w, w2;
    CHECK_OK(make_buffers(dev, &w));
    CHECK_OK(make_buffers(dev, &w2));
    lm_program prog;
    lm_kernel k;
    CHECK_OK(make_program_k(dev, &w, 0, &prog, &k));
    CHECK_OK(lm_light_metal_begin_capture(dev, NULL));
    uint32_t in[WORDS];
    input_words(in, 5);
    CHECK_OK(lm_enqueue_write_buffer(cq, w.in, in, false));
    lm_circular_buffer_config cc;
    lm_circular_buffer_config_init(&cc);
    cc.total_size = 4096;
    cc.index_count = 1;
    cc.indices[0] = (lm_cb_index_config){2, LM_DATA_FORMAT_FLOAT32, 4096};
    lm_circular_buffer cb;
    lm_core_range_set all = lm_core_range_set_of(0, 0, 1, 1);
    CHECK_OK(lm_create_circular_buffer(prog, &all, &cc, &cb));
    uint64_t ia, oa;
    lm_buffer_address(w.in, &ia);
    lm_buffer_address(w2.out, &oa);
    uint32_t args[] = {(uint32_t)ia, (uint32_t)oa, 0};
    CHECK_OK(lm_set_runtime_args_range(prog, k, &all, args, 3));
    CHECK_OK(lm_enqueue_program(cq, prog, false));
    CHECK_OK(lm_enqueue_read_buffer(cq, w2.out, live, true));
    CHECK_OK(lm_capture_name_buffer(w2.out, "out"));
    lm_binary *bin;
    CHECK_OK(lm_light_metal_end_capture(dev, &bin));
    CHECK_OK(lm_device_close(dev));
    CHECK_EQ_U64(live[5], in[5] * 5u + 1u);
    check_replay_out(bin, live);
}

/* One capture of the scaling workload run as a metal trace of program
 * `prog`, made before the capture or (`during`) in it; with `during`, also
 * a program made in the capture, changed and never enqueued. */
static lm_status capture_traced(bool during, lm_binary **out_binary, uint32_t *live) {
    lm_device *dev = open_device();
    if (!dev) return LM_ERR_INTERNAL;
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    workload w;
    lm_program prog, idle;
    lm_kernel k;
    uint32_t in[WORDS], trace, args[3] = {0, 0, 0};
    input_words(in, 13);
    lm_core_range_set all = lm_core_range_set_of(0, 0, 1, 1);
    lm_status st = make_buffers(dev, &w);
    if (!st && !during) st = make_program(dev, &w, 0, &prog);
    if (!st) st = lm_light_metal_begin_capture(dev, NULL);
    if (!st && during) st = make_program(dev, &w, 0, &prog);
    if (!st && during) st = make_program_k(dev, &w, 0, &idle, &k);
    if (!st && during) st = lm_set_runtime_args_range(idle, k, &all, args, 3);
    if (!st) st = lm_enqueue_write_buffer(cq, w.in, in, false);
    if (!st) st = lm_begin_trace_capture(cq, &trace);
    if (!st) st = lm_enqueue_program(cq, prog, false);
    if (!st) st = lm_end_trace_capture(cq, trace);
    if (!st) st = lm_replay_trace(cq, trace, false);
    if (!st) st = lm_enqueue_read_buffer(cq, w.out, live, true);
    if (!st) st = lm_capture_name_buffer(w.out, "out");
    if (!st) st = lm_light_metal_end_capture(dev, out_binary);
    lm_device_close(dev);
    return st;
}

/* A program that runs only inside a metal trace is not in the binary, made
 * during the capture or before it: the trace holds its launches. So is one
 * made during the capture and never enqueued. Both binaries are byte for
 * byte the same, and replay the workload. */
static void test_capture_leaves_out_programs_run_only_in_traces(void) {
    static uint32_t live[WORDS], live2[WORDS], in[WORDS];
    lm_binary *before, *during;
    CHECK_OK(capture_traced(false, &before, live));
    CHECK_OK(capture_traced(true, &during, live2));
    CHECK(memcmp(live, live2, sizeof live) == 0);
    input_words(in, 13);
    CHECK_EQ_U64(live[3], in[3] * 5u + 1u);
    const void *d1, *d2;
    uint64_t s1, s2;
    CHECK_OK(lm_binary_data(before, &d1, &s1));
    CHECK_OK(lm_binary_data(during, &d2, &s2));
    CHECK_EQ_U64(s2, s1);
    CHECK(memcmp(d1, d2, s1) == 0);
    lm_replay *r;
    lm_replay_report rep;
    CHECK_OK(lm_replay_open(d2, s2, &r));
    CHECK_OK(lm_replay_run(r, NULL, NULL, &rep));
    CHECK_EQ_U64(rep.programs, 1); /* the trace */
    lm_replay_close(r);
    lm_binary_free(before);
    check_replay_out(during, live);
}

/* A program made during the capture, run first inside a trace and then, on
 * new input, as a program: recorded at that enqueue, as it is then, and the
 * binary replays both runs. */
static void test_capture_records_program_first_run_after_trace(void) {
    static uint32_t live[WORDS], in[WORDS], in2[WORDS];
    lm_device *dev = open_device();
    CHECK(dev);
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    workload w;
    lm_program prog;
    lm_kernel k;
    uint32_t trace;
    input_words(in, 3);
    input_words(in2, 17);
    CHECK_OK(make_buffers(dev, &w));
    CHECK_OK(lm_light_metal_begin_capture(dev, NULL));
    CHECK_OK(make_program_k(dev, &w, 0, &prog, &k));
    CHECK_OK(lm_enqueue_write_buffer(cq, w.in, in, false));
    CHECK_OK(lm_begin_trace_capture(cq, &trace));
    CHECK_OK(lm_enqueue_program(cq, prog, false));
    CHECK_OK(lm_end_trace_capture(cq, trace));
    CHECK_OK(lm_replay_trace(cq, trace, false));
    CHECK_OK(lm_enqueue_read_buffer(cq, w.out, live, true));
    CHECK_EQ_U64(live[7], in[7] * 5u + 1u);
    CHECK_OK(lm_enqueue_write_buffer(cq, w.in, in2, false));
    CHECK_OK(lm_enqueue_program(cq, prog, false));
    CHECK_OK(lm_enqueue_read_buffer(cq, w.out, live, true));
    CHECK_EQ_U64(live[7], in2[7] * 5u + 1u);
    CHECK_OK(lm_capture_name_buffer(w.out, "out"));
    lm_binary *bin;
    CHECK_OK(lm_light_metal_end_capture(dev, &bin));
    CHECK_OK(lm_device_close(dev));
    const void *data;
    uint64_t size;
    lm_replay *r;
    lm_replay_report rep;
    CHECK_OK(lm_binary_data(bin, &data, &size));
    CHECK_OK(lm_replay_open(data, size, &r));
    CHECK_OK(lm_replay_run(r, NULL, NULL, &rep));
    CHECK_EQ_U64(rep.programs, 2); /* the trace, then the program */
    lm_replay_close(r);
    check_replay_out(bin, live);
}

/* Metal traces inside a Light Metal capture: one captured during it, one
 * that existed before it began; the binary replays both. */
static void test_capture_with_traces(void) {
    static uint32_t live[WORDS], replayed[WORDS];
    lm_device *dev = open_device();
    CHECK(dev);
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    workload w;
    CHECK_OK(make_buffers(dev, &w));
    lm_program prog;
    uint32_t before, during;
    CHECK_OK(make_program(dev, &w, 0, &prog));
    CHECK_OK(lm_begin_trace_capture(cq, &before));
    CHECK_OK(lm_enqueue_program(cq, prog, false));
    CHECK_OK(lm_end_trace_capture(cq, before));

    CHECK_OK(lm_light_metal_begin_capture(dev, NULL));
    uint32_t in[WORDS];
    input_words(in, 11);
    CHECK_OK(lm_enqueue_write_buffer(cq, w.in, in, true));
    CHECK_OK(lm_begin_trace_capture(cq, &during));
    CHECK_OK(lm_enqueue_program(cq, prog, false)); /* into the trace, not a command */
    CHECK_OK(lm_enqueue_program(cq, prog, false));
    CHECK_OK(lm_end_trace_capture(cq, during));
    CHECK_OK(lm_replay_trace(cq, before, true));
    CHECK_OK(lm_replay_trace(cq, during, true));
    CHECK_OK(lm_enqueue_read_buffer(cq, w.out, live, true));
    CHECK_OK(lm_capture_name_buffer(w.out, "out"));
    CHECK_OK(lm_capture_compare_to_capture(cq, w.out));
    CHECK_OK(lm_release_trace(dev, during));
    lm_binary *bin;
    CHECK_OK(lm_light_metal_end_capture(dev, &bin));
    CHECK_OK(lm_device_close(dev));
    CHECK_EQ_U64(live[9], in[9] * 5u + 1u);

    const void *data;
    uint64_t size;
    CHECK_OK(lm_binary_data(bin, &data, &size));
    lm_replay *r;
    CHECK_OK(lm_replay_open(data, size, &r));
    lm_replay_report rep;
    CHECK_OK(lm_replay_run(r, NULL, NULL, &rep));
    CHECK_EQ_U64(rep.goldens_checked, 1);
    CHECK_EQ_U64(rep.programs, 2); /* the two trace replays; no loose launches */
    CHECK_OK(lm_replay_get_output(r, "out", replayed, sizeof replayed));
    CHECK(memcmp(live, replayed, sizeof live) == 0);
    lm_replay_close(r);
    lm_binary_free(bin);
}

static void test_capture_errors(void) {
    lm_device *dev = open_device();
    CHECK(dev);
    lm_binary *bin;
    CHECK_FAILS(lm_light_metal_end_capture(dev, &bin), LM_ERR_INVALID_STATE,
                "no Light Metal capture is active");
    CHECK_FAILS(lm_light_metal_begin_capture(NULL, NULL), LM_ERR_INVALID_HANDLE, "device is NULL");
    lm_program prog;
    CHECK_OK(lm_create_program(dev, &prog));
    CHECK_OK(lm_light_metal_begin_capture(dev, NULL));
    CHECK_FAILS(lm_light_metal_begin_capture(dev, NULL), LM_ERR_INVALID_STATE,
                "already being captured");
    CHECK_OK(lm_light_metal_end_capture(dev, &bin));
    lm_binary_free(bin);
    lm_buffer_config c;
    lm_buffer_config_init(&c);
    c.size = c.page_size = 64;
    lm_buffer b;
    CHECK_OK(lm_create_buffer(dev, &c, &b));
    CHECK_FAILS(lm_capture_name_buffer(b, "x"), LM_ERR_INVALID_STATE, "no capture is active");
    CHECK_FAILS(lm_capture_compare_to_capture(lm_device_command_queue(dev, 0), b),
                LM_ERR_INVALID_STATE, "no capture is active");
    CHECK_OK(lm_light_metal_begin_capture(dev, NULL));
    CHECK_FAILS(lm_capture_name_buffer(b, ""), LM_ERR_INVALID_ARGUMENT, "1..127 characters");
    uint8_t small[8] = {0};
    CHECK_FAILS(lm_capture_compare_to_golden(lm_device_command_queue(dev, 0), b, small, 8),
                LM_ERR_INVALID_ARGUMENT, "size 8 is not the buffer's size 64");
    CHECK_OK(lm_capture_name_buffer(b, "b"));
    CHECK_OK(lm_light_metal_end_capture(dev, &bin));
    lm_binary_free(bin);
    lm_release_program(prog);
    CHECK_OK(lm_device_close(dev));
}

static void test_replay_errors(void) {
    static uint32_t live[WORDS];
    lm_binary *bin;
    CHECK_OK(capture(&bin, live));
    const void *data;
    uint64_t size;
    CHECK_OK(lm_binary_data(bin, &data, &size));
    lm_replay *r;
    /* Corrupt: truncated, and one flipped byte in the table area. */
    CHECK_FAILS(lm_replay_open(data, 40, &r), LM_ERR_INVALID_FILE, "lm_replay_open");
    uint8_t *copy = malloc(size);
    CHECK(copy);
    memcpy(copy, data, size);
    copy[4] ^= 0xFF; /* the file identifier */
    CHECK_FAILS(lm_replay_open(copy, size, &r), LM_ERR_INVALID_FILE, "lm_replay_open");
    free(copy);
    CHECK_FAILS(lm_replay_open_file("no/such/file.lmb", &r), LM_ERR_IO, "cannot open");
    CHECK_FAILS(lm_replay_open(NULL, 0, &r), LM_ERR_INVALID_ARGUMENT, "must not be NULL");

    CHECK_OK(lm_replay_open(data, size, &r));
    /* A device of another shape is refused before anything runs. */
    lm_device *big;
    CHECK_OK(lm_device_open(NULL, &big));
    CHECK_FAILS(lm_replay_run(r, big, NULL, NULL), LM_ERR_INVALID_ARGUMENT,
                "does not match the binary's (2x2");
    CHECK_OK(lm_device_close(big));
    /* The recorded address is taken: a clear error naming it. */
    lm_device *dev = open_device();
    CHECK(dev);
    lm_buffer_config c;
    lm_buffer_config_init(&c);
    c.size = 1 << 20;
    c.page_size = 1024;
    lm_buffer squatter;
    CHECK_OK(lm_create_buffer(dev, &c, &squatter));
    CHECK_FAILS(lm_replay_run(r, dev, NULL, NULL), LM_ERR_OUT_OF_DEVICE_MEMORY,
                "at its recorded address 0x0");
    CHECK_OK(lm_deallocate_buffer(squatter));
    CHECK_OK(lm_replay_run(r, dev, NULL, NULL)); /* and works once it is free */
    lm_replay_options o;
    lm_replay_options_init(&o);
    o.loops = 0;
    CHECK_FAILS(lm_replay_run(r, dev, &o, NULL), LM_ERR_INVALID_ARGUMENT, "loops is 0");
    CHECK_OK(lm_device_close(dev));
    lm_replay_close(r);
    lm_binary_free(bin);
}

int main(void) {
    setenv("LM_CACHE_DIR", "test_replay_cache", 0);
    TEST_RUN(test_capture_then_replay);
    TEST_RUN(test_blocking_write_orders_queues);
    TEST_RUN(test_recapture_gives_same_binary);
    TEST_RUN(test_inputs_and_goldens);
    TEST_RUN(test_capture_mid_workload);
    TEST_RUN(test_capture_snapshots_programs);
    TEST_RUN(test_capture_records_programs_used);
    TEST_RUN(test_capture_with_traces);
    TEST_RUN(test_capture_leaves_out_programs_run_only_in_traces);
    TEST_RUN(test_capture_records_program_first_run_after_trace);
    TEST_RUN(test_capture_errors);
    TEST_RUN(test_replay_errors);
    return test_summary();
}
