/* Launch labels and profiles: launches timed by label in order of first
 * launch, profiling off by default and restarted when enabled, a trace
 * replay counted once, labels kept by a Light Metal capture and given back
 * by its replay's profile (also when replayed into a new capture), the
 * detail by (label, program), the kernels' instructions (the same on any
 * thread count, also when kernels block on each other), and the bad
 * arguments. */
#include <stdlib.h>

#include "lightmetal/lightmetal.h"
#include "lm_test.h"

/* A launch that does a little work on two cores. */
static const char *busy_kernel = "#include \"dataflow_api.h\"\n"
                                 "void kernel_main(void) {\n"
                                 "    volatile uint32_t *w = (volatile uint32_t *)0x20000;\n"
                                 "    for (uint32_t i = 0; i < 2000; i++) w[i % 64] += i;\n"
                                 "}\n";

/* A device of two cores simulated by `threads` host threads (0: one per
 * CPU). */
static lm_device *open_device_threads(uint32_t threads) {
    lm_device_options o;
    lm_device_options_init(&o);
    o.grid_x = 2;
    o.grid_y = 1;
    o.dram_banks = 1;
    o.dram_bank_size = 16 << 20;
    o.trace_region_size = 1 << 20;
    o.num_threads = threads;
    lm_device *dev = NULL;
    return lm_device_open(&o, &dev) ? NULL : dev;
}

static lm_device *open_device(void) {
    return open_device_threads(0);
}

static lm_status make_program(lm_device *dev, lm_program *out) {
    lm_core_range_set cores = lm_core_range_set_of(0, 0, 1, 0);
    lm_kernel_config kc;
    lm_kernel_config_init(&kc, LM_PROCESSOR_DM0);
    lm_kernel k;
    lm_status st = lm_create_program(dev, out);
    if (!st) st = lm_create_kernel_from_string(*out, "busy", busy_kernel, &cores, &kc, &k);
    return st;
}

/* Enqueues one launch under `label` (NULL: none). */
static lm_status launch(lm_device *dev, lm_program p, const char *label) {
    lm_status st = lm_device_set_launch_label(dev, label);
    return st ? st : lm_enqueue_program(lm_device_command_queue(dev, 0), p, false);
}

static void test_profile_by_label(void) {
    lm_device *dev = open_device();
    CHECK(dev);
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_program p;
    CHECK_OK(make_program(dev, &p));
    lm_profile_entry *e = NULL;
    size_t n = 7;
    /* Off by default: nothing is timed. */
    CHECK_OK(launch(dev, p, "first"));
    CHECK_OK(lm_finish(cq));
    CHECK_OK(lm_device_get_profile(dev, &e, &n));
    CHECK(e == NULL && n == 0);

    CHECK_OK(lm_device_set_profiling(dev, true));
    CHECK_OK(launch(dev, p, "MatMul /a"));
    CHECK_OK(launch(dev, p, "Relu /b"));
    CHECK_OK(launch(dev, p, "MatMul /a"));
    CHECK_OK(launch(dev, p, NULL));
    CHECK_OK(launch(dev, p, ""));
    CHECK_OK(lm_finish(cq));
    CHECK_OK(lm_device_get_profile(dev, &e, &n));
    CHECK_EQ_U64(n, 3);
    /* In order of first launch; the unlabelled ones under "". */
    CHECK(!strcmp(e[0].label, "MatMul /a") && e[0].launches == 2 && e[0].seconds > 0);
    CHECK(!strcmp(e[1].label, "Relu /b") && e[1].launches == 1 && e[1].seconds > 0);
    CHECK(!strcmp(e[2].label, "") && e[2].launches == 2 && e[2].seconds > 0);
    lm_profile_free(e);

    /* Stopping keeps what was measured; starting again clears it. */
    CHECK_OK(lm_device_set_profiling(dev, false));
    CHECK_OK(launch(dev, p, "Relu /b"));
    CHECK_OK(lm_finish(cq));
    CHECK_OK(lm_device_get_profile(dev, &e, &n));
    CHECK(n == 3 && e[1].launches == 1);
    lm_profile_free(e);
    CHECK_OK(lm_device_set_profiling(dev, true));
    CHECK_OK(lm_device_get_profile(dev, &e, &n));
    CHECK(e == NULL && n == 0);

    /* A trace replay is one launch, under the label current at the replay. */
    uint32_t id;
    CHECK_OK(lm_begin_trace_capture(cq, &id));
    CHECK_OK(launch(dev, p, "inside"));
    CHECK_OK(launch(dev, p, "inside"));
    CHECK_OK(lm_end_trace_capture(cq, id));
    CHECK_OK(lm_device_set_launch_label(dev, "the trace"));
    CHECK_OK(lm_replay_trace(cq, id, true));
    CHECK_OK(lm_device_get_profile(dev, &e, &n));
    CHECK(n == 1 && !strcmp(e[0].label, "the trace") && e[0].launches == 1);
    lm_profile_free(e);
    lm_profile_free(NULL);
    CHECK_OK(lm_release_trace(dev, id));
    CHECK_OK(lm_device_close(dev));
}

/* A program of kernels named `names` on DM0 and DM1 (one or two). */
static lm_status make_named_program(lm_device *dev, const char *const *names, int count,
                                    lm_program *out) {
    lm_core_range_set cores = lm_core_range_set_of(0, 0, 1, 0);
    lm_status st = lm_create_program(dev, out);
    for (int i = 0; i < count && !st; i++) {
        lm_kernel_config kc;
        lm_kernel_config_init(&kc, i ? LM_PROCESSOR_DM1 : LM_PROCESSOR_DM0);
        lm_kernel k;
        st = lm_create_kernel_from_string(*out, names[i], busy_kernel, &cores, &kc, &k);
    }
    return st;
}

/* The profile by (label, program): the kernels' names joined, made
 * printable and cut; pairs in order of first launch, adding up to the
 * labels' entries; a trace replay as "trace". */
static void test_profile_by_program(void) {
    lm_device *dev = open_device();
    CHECK(dev);
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    static const char *const one[] = {"reader.c"};
    static const char *const two[] = {"reader.c", "red\x1b[31m.c"};
    char long_name[1500];
    memset(long_name, 'k', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = 0;
    const char *const cut[] = {long_name};
    lm_program p1, p2, p3;
    CHECK_OK(make_named_program(dev, one, 1, &p1));
    CHECK_OK(make_named_program(dev, two, 2, &p2));
    CHECK_OK(make_named_program(dev, cut, 1, &p3));
    lm_profile_program_entry *e = NULL;
    size_t n = 5;
    CHECK_OK(lm_device_get_program_profile(dev, &e, &n)); /* off: nothing */
    CHECK(e == NULL && n == 0);

    CHECK_OK(lm_device_set_profiling(dev, true));
    CHECK_OK(launch(dev, p1, "Conv /a"));
    CHECK_OK(launch(dev, p2, "Conv /a"));
    CHECK_OK(launch(dev, p1, "Relu /b"));
    CHECK_OK(launch(dev, p1, "Conv /a"));
    CHECK_OK(launch(dev, p3, NULL));
    CHECK_OK(lm_finish(cq));
    CHECK_OK(lm_device_get_program_profile(dev, &e, &n));
    CHECK_EQ_U64(n, 4);
    CHECK(!strcmp(e[0].label, "Conv /a") && !strcmp(e[0].program, "reader.c") &&
          e[0].launches == 2 && e[0].seconds > 0);
    /* The escape byte of a kernel's name is not printed to a terminal. */
    CHECK(!strcmp(e[1].label, "Conv /a") && !strcmp(e[1].program, "reader.c + red?[31m.c") &&
          e[1].launches == 1);
    CHECK(!strcmp(e[2].label, "Relu /b") && !strcmp(e[2].program, "reader.c"));
    CHECK(!strcmp(e[3].label, "") && strlen(e[3].program) == LM_MAX_LAUNCH_LABEL &&
          e[3].program[0] == 'k');
    /* The labels' entries are the sums of their programs'. */
    lm_profile_entry *l;
    size_t ln;
    CHECK_OK(lm_device_get_profile(dev, &l, &ln));
    CHECK(ln == 3 && !strcmp(l[0].label, "Conv /a") && l[0].launches == 3);
    CHECK(l[0].seconds == e[0].seconds + e[1].seconds);
    CHECK(l[1].launches == 1 && l[2].launches == 1 && l[2].seconds == e[3].seconds);
    lm_profile_free(l);
    lm_profile_program_free(e);

    /* Enabling again clears; a trace replay is one launch of "trace". */
    CHECK_OK(lm_device_set_profiling(dev, true));
    uint32_t id;
    CHECK_OK(lm_begin_trace_capture(cq, &id));
    CHECK_OK(launch(dev, p2, "inside"));
    CHECK_OK(lm_end_trace_capture(cq, id));
    CHECK_OK(lm_device_set_launch_label(dev, "the trace"));
    CHECK_OK(lm_replay_trace(cq, id, true));
    CHECK_OK(lm_device_get_program_profile(dev, &e, &n));
    CHECK(n == 1 && !strcmp(e[0].label, "the trace") && !strcmp(e[0].program, "trace") &&
          e[0].launches == 1);
    lm_profile_program_free(e);
    lm_profile_program_free(NULL);
    CHECK_OK(lm_release_trace(dev, id));
    CHECK_OK(lm_device_close(dev));
}

/* DM0 pushes `n` (runtime arg 0) pages of circular buffer 0 one at a time,
 * after a loop of n steps, then raises the other core's semaphore; DM1
 * waits for each page and pops it, then waits for its semaphore. DM1 blocks
 * in cb_wait_front and noc_semaphore_wait for as long as the scheduling
 * makes it (the other core may run before, after or beside this one). */
static const char *producer = "#include \"dataflow_api.h\"\n"
                              "void kernel_main(void) {\n"
                              "    uint32_t n = get_arg_val(0);\n"
                              "    volatile uint32_t *w = (volatile uint32_t *)0x20000;\n"
                              "    for (uint32_t i = 0; i < n; i++) w[i % 64] += i;\n"
                              "    for (uint32_t i = 0; i < n; i++) {\n"
                              "        cb_reserve_back(0, 1);\n"
                              "        *(volatile uint32_t *)get_write_ptr(0) = i;\n"
                              "        cb_push_back(0, 1);\n"
                              "    }\n"
                              "    noc_semaphore_inc(get_noc_addr(1 - my_x(), my_y(), "
                              "get_semaphore(0)), 1);\n"
                              "}\n";
static const char *consumer = "#include \"dataflow_api.h\"\n"
                              "void kernel_main(void) {\n"
                              "    uint32_t n = get_arg_val(0);\n"
                              "    for (uint32_t i = 0; i < n; i++) {\n"
                              "        cb_wait_front(0, 1);\n"
                              "        cb_pop_front(0, 1);\n"
                              "    }\n"
                              "    noc_semaphore_wait((volatile uint32_t *)get_semaphore(0), 1);\n"
                              "}\n";

/* Instructions of one launch of the producer and consumer on both cores, n
 * pages each, under a device of `threads` threads; the second element is
 * the instructions of a trace of two such launches. */
static void pipeline_instructions(uint32_t threads, uint32_t n, uint64_t out[2]) {
    out[0] = out[1] = 0;
    lm_device *dev = open_device_threads(threads);
    CHECK(dev);
    if (!dev) return;
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_core_range_set cores = lm_core_range_set_of(0, 0, 1, 0);
    lm_program p;
    CHECK_OK(lm_create_program(dev, &p));
    lm_circular_buffer_config cb;
    lm_circular_buffer_config_init(&cb);
    cb.total_size = 2 * 64;
    cb.index_count = 1;
    cb.indices[0] = (lm_cb_index_config){0, LM_DATA_FORMAT_FLOAT32, 64};
    lm_circular_buffer h;
    CHECK_OK(lm_create_circular_buffer(p, &cores, &cb, &h));
    uint32_t sem;
    CHECK_OK(lm_create_semaphore(p, &cores, 0, &sem));
    lm_kernel_config dm0, dm1;
    lm_kernel_config_init(&dm0, LM_PROCESSOR_DM0);
    lm_kernel_config_init(&dm1, LM_PROCESSOR_DM1);
    lm_kernel kp, kc;
    CHECK_OK(lm_create_kernel_from_string(p, "producer", producer, &cores, &dm0, &kp));
    CHECK_OK(lm_create_kernel_from_string(p, "consumer", consumer, &cores, &dm1, &kc));
    CHECK_OK(lm_set_runtime_args_range(p, kp, &cores, &n, 1));
    CHECK_OK(lm_set_runtime_args_range(p, kc, &cores, &n, 1));
    CHECK_OK(lm_device_set_profiling(dev, true));
    CHECK_OK(launch(dev, p, "direct"));
    uint32_t id;
    CHECK_OK(lm_begin_trace_capture(cq, &id));
    CHECK_OK(launch(dev, p, NULL));
    CHECK_OK(launch(dev, p, NULL));
    CHECK_OK(lm_end_trace_capture(cq, id));
    CHECK_OK(lm_device_set_launch_label(dev, "trace"));
    CHECK_OK(lm_replay_trace(cq, id, true));
    lm_profile_entry *e;
    size_t count;
    CHECK_OK(lm_device_get_profile(dev, &e, &count));
    CHECK(count == 2 && !strcmp(e[0].label, "direct") && !strcmp(e[1].label, "trace"));
    out[0] = count == 2 ? e[0].instructions : 0;
    out[1] = count == 2 ? e[1].instructions : 0;
    lm_profile_free(e);
    /* The labels' counts are the sums of their programs'. */
    lm_profile_program_entry *pe;
    CHECK_OK(lm_device_get_program_profile(dev, &pe, &count));
    CHECK(count == 2 && pe[0].instructions == out[0] && pe[1].instructions == out[1]);
    lm_profile_program_free(pe);
    CHECK_OK(lm_release_trace(dev, id));
    CHECK_OK(lm_device_close(dev));
}

static void test_profile_instructions(void) {
    uint64_t one[2], four[2], longer[2], longest[2];
    pipeline_instructions(1, 40, one);
    pipeline_instructions(4, 40, four);
    CHECK(one[0] > 2 * 40 * 4); /* at least a few instructions a step, on each core */
    /* The same on any thread count, though DM1 blocks differently. */
    CHECK_EQ_U64(four[0], one[0]);
    CHECK_EQ_U64(four[1], one[1]);
    /* A trace of two launches counts both. */
    CHECK_EQ_U64(one[1], 2 * one[0]);
    /* Each step costs the same: the count grows linearly with n. */
    pipeline_instructions(2, 80, longer);
    pipeline_instructions(2, 120, longest);
    CHECK(longer[0] > one[0]);
    CHECK_EQ_U64(longest[0] - longer[0], longer[0] - one[0]);
}

static void test_bad_arguments(void) {
    lm_profile_entry *e;
    size_t n;
    CHECK_FAILS(lm_device_set_launch_label(NULL, "x"), LM_ERR_INVALID_HANDLE,
                "lm_device_set_launch_label: device is NULL");
    CHECK_FAILS(lm_device_set_profiling(NULL, true), LM_ERR_INVALID_HANDLE,
                "lm_device_set_profiling: device is NULL");
    CHECK_FAILS(lm_device_get_profile(NULL, &e, &n), LM_ERR_INVALID_HANDLE,
                "lm_device_get_profile: device is NULL");
    lm_device *dev = open_device();
    CHECK(dev);
    CHECK_FAILS(lm_device_get_profile(dev, NULL, &n), LM_ERR_INVALID_ARGUMENT,
                "lm_device_get_profile: out_entries is NULL");
    CHECK_FAILS(lm_device_get_profile(dev, &e, NULL), LM_ERR_INVALID_ARGUMENT,
                "lm_device_get_profile: out_count is NULL");
    lm_profile_program_entry *pe;
    CHECK_FAILS(lm_device_get_program_profile(NULL, &pe, &n), LM_ERR_INVALID_HANDLE,
                "lm_device_get_program_profile: device is NULL");
    CHECK_FAILS(lm_device_get_program_profile(dev, NULL, &n), LM_ERR_INVALID_ARGUMENT,
                "lm_device_get_program_profile: out_entries is NULL");
    CHECK_FAILS(lm_device_get_program_profile(dev, &pe, NULL), LM_ERR_INVALID_ARGUMENT,
                "lm_device_get_program_profile: out_count is NULL");
    char long_label[LM_MAX_LAUNCH_LABEL + 2];
    memset(long_label, 'x', sizeof long_label);
    long_label[LM_MAX_LAUNCH_LABEL + 1] = 0;
    CHECK_FAILS(lm_device_set_launch_label(dev, long_label), LM_ERR_INVALID_ARGUMENT,
                "lm_device_set_launch_label: the label is longer than 1024 bytes");
    long_label[LM_MAX_LAUNCH_LABEL] = 0; /* exactly the limit */
    CHECK_OK(lm_device_set_launch_label(dev, long_label));
    CHECK_FAILS(lm_device_set_launch_label(dev, "two\nlines"), LM_ERR_INVALID_ARGUMENT,
                "lm_device_set_launch_label: the label is not one line of printable UTF-8");
    /* Each fails: a tab, DEL, a C1 control (U+009B, a terminal's CSI), a
     * lone continuation byte, a cut sequence, an overlong '/', a surrogate,
     * beyond U+10FFFF. */
    static const char *const bad[] = {"tab\there",    "del\x7f",         "csi\xc2\x9b[2J",
                                      "x\x80y",       "cut\xe2\x82",     "\xc0\xaf",
                                      "\xed\xa0\x80", "\xf4\x90\x80\x80"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_FAILS(lm_device_set_launch_label(dev, bad[i]), LM_ERR_INVALID_ARGUMENT,
                    "printable UTF-8");
    /* UTF-8 of one to four bytes is fine. */
    CHECK_OK(lm_device_set_launch_label(
        dev, "Conv /\xc3\xa9tage/\xe5\x8d\xb7\xe7\xa7\xaf/\xf0\x9f\x94\xa5"));
    CHECK_OK(lm_device_close(dev));
}

/* Many distinct labels: the interning table grows and finds each again. */
static void test_many_labels(void) {
    lm_device *dev = open_device();
    CHECK(dev);
    lm_program p;
    CHECK_OK(make_program(dev, &p));
    CHECK_OK(lm_device_set_profiling(dev, true));
    char label[32];
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 300; i++) {
            snprintf(label, sizeof label, "op %d", i);
            CHECK_OK(lm_device_set_launch_label(dev, label));
            if (i % 50 == 0)
                CHECK_OK(lm_enqueue_program(lm_device_command_queue(dev, 0), p, false));
        }
    CHECK_OK(lm_finish(lm_device_command_queue(dev, 0)));
    lm_profile_entry *e;
    size_t n;
    CHECK_OK(lm_device_get_profile(dev, &e, &n));
    CHECK_EQ_U64(n, 6);
    for (size_t i = 0; i < n; i++) {
        snprintf(label, sizeof label, "op %d", (int)i * 50);
        CHECK(!strcmp(e[i].label, label) && e[i].launches == 2);
    }
    lm_profile_free(e);
    CHECK_OK(lm_device_close(dev));
}

/* The labels travel in the binary: a replay profiles under them, and a
 * replay captured again keeps them. */
static void test_capture_and_replay(void) {
    lm_device *dev = open_device();
    CHECK(dev);
    CHECK_OK(lm_light_metal_begin_capture(dev, NULL));
    lm_program p;
    CHECK_OK(make_program(dev, &p));
    CHECK_OK(launch(dev, p, "Conv /stem"));
    CHECK_OK(launch(dev, p, "Add /res"));
    CHECK_OK(launch(dev, p, NULL));
    CHECK_OK(launch(dev, p, "Conv /stem"));
    CHECK_OK(lm_finish(lm_device_command_queue(dev, 0)));
    lm_binary *bin = NULL;
    CHECK_OK(lm_light_metal_end_capture(dev, &bin));
    CHECK_OK(lm_device_close(dev));

    const void *data;
    uint64_t size;
    CHECK_OK(lm_binary_data(bin, &data, &size));
    lm_replay *r;
    CHECK_OK(lm_replay_open(data, size, &r));
    const lm_profile_entry *e = (const lm_profile_entry *)1;
    size_t n = 9;
    CHECK_OK(lm_replay_run(r, NULL, NULL, NULL));
    CHECK_OK(lm_replay_get_profile(r, &e, &n)); /* not asked for */
    CHECK(e == NULL && n == 0);
    const lm_profile_program_entry *none = (const lm_profile_program_entry *)1;
    CHECK_OK(lm_replay_get_program_profile(r, &none, &n));
    CHECK(none == NULL && n == 0);
    lm_replay_options o;
    lm_replay_options_init(&o);
    o.profile = true;
    o.loops = 3;
    CHECK_OK(lm_replay_run(r, NULL, &o, NULL));
    CHECK_OK(lm_replay_get_profile(r, &e, &n));
    CHECK_EQ_U64(n, 3);
    CHECK(!strcmp(e[0].label, "Conv /stem") && e[0].launches == 6);
    CHECK(!strcmp(e[1].label, "Add /res") && e[1].launches == 3);
    CHECK(!strcmp(e[2].label, "") && e[2].launches == 3);
    CHECK_FAILS(lm_replay_get_profile(NULL, &e, &n), LM_ERR_INVALID_ARGUMENT,
                "lm_replay_get_profile: replay is NULL");
    CHECK_FAILS(lm_replay_get_profile(r, NULL, &n), LM_ERR_INVALID_ARGUMENT,
                "lm_replay_get_profile: out_entries is NULL");
    /* The programs by the kernels' names the binary recorded. */
    const lm_profile_program_entry *pe;
    CHECK_OK(lm_replay_get_program_profile(r, &pe, &n));
    CHECK(n == 3 && !strcmp(pe[0].label, "Conv /stem") && !strcmp(pe[0].program, "busy") &&
          pe[0].launches == 6 && !strcmp(pe[2].program, "busy"));
    CHECK_FAILS(lm_replay_get_program_profile(NULL, &pe, &n), LM_ERR_INVALID_ARGUMENT,
                "lm_replay_get_program_profile: replay is NULL");
    CHECK_FAILS(lm_replay_get_program_profile(r, &pe, NULL), LM_ERR_INVALID_ARGUMENT,
                "lm_replay_get_program_profile: out_count is NULL");

    /* Replayed on the caller's device inside a capture: the new binary has
     * the labels too, and the device is left unlabelled with profiling off. */
    lm_device *again = open_device();
    CHECK(again);
    CHECK_OK(lm_light_metal_begin_capture(again, NULL));
    o.loops = 1;
    CHECK_OK(lm_replay_run(r, again, &o, NULL));
    lm_binary *bin2 = NULL;
    CHECK_OK(lm_light_metal_end_capture(again, &bin2));
    lm_program q;
    CHECK_OK(make_program(again, &q));
    CHECK_OK(lm_enqueue_program(lm_device_command_queue(again, 0), q, false));
    CHECK_OK(lm_finish(lm_device_command_queue(again, 0)));
    lm_profile_entry *left;
    size_t left_count;
    CHECK_OK(lm_device_get_profile(again, &left, &left_count));
    CHECK(left_count == 3 && left[0].launches == 2); /* this run's, nothing after */
    lm_profile_free(left);
    CHECK_OK(lm_device_close(again));
    lm_replay_close(r);

    CHECK_OK(lm_binary_data(bin2, &data, &size));
    CHECK_OK(lm_replay_open(data, size, &r));
    CHECK_OK(lm_replay_run(r, NULL, &o, NULL));
    CHECK_OK(lm_replay_get_profile(r, &e, &n));
    CHECK(n == 3 && !strcmp(e[0].label, "Conv /stem") && !strcmp(e[1].label, "Add /res"));
    lm_replay_close(r);
    lm_binary_free(bin2);
    lm_binary_free(bin);
}

int main(void) {
    TEST_RUN(test_profile_by_label);
    TEST_RUN(test_profile_by_program);
    TEST_RUN(test_profile_instructions);
    TEST_RUN(test_bad_arguments);
    TEST_RUN(test_many_labels);
    TEST_RUN(test_capture_and_replay);
    return test_summary();
}
