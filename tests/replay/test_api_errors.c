/* Public API failures name their function exactly once: lm_last_error()
 * starts with "<function>: " and that prefix never comes back later in the
 * message, whether the failure was found by the function itself, by a helper
 * given its name, or by a layer below. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lightmetal/lightmetal.h"
#include "lm_test.h"

/* The failed call's message starts with "<fn>: " and holds it only once. */
#define CHECK_NAMED_ONCE(expr, fn)                                                                 \
    do {                                                                                           \
        lm_status st_ = (expr);                                                                    \
        CHECK(st_ != LM_OK);                                                                       \
        char prefix_[128];                                                                         \
        snprintf(prefix_, sizeof prefix_, "%s: ", (fn));                                           \
        const char *msg_ = lm_last_error();                                                        \
        if (strncmp(msg_, prefix_, strlen(prefix_)) != 0 ||                                        \
            strstr(msg_ + strlen(prefix_), prefix_) != NULL) {                                     \
            char m_[1400];                                                                         \
            snprintf(m_, sizeof m_, "%s: message \"%s\" does not name %s exactly once", #expr,     \
                     msg_, (fn));                                                                  \
            test_fail_(__FILE__, __LINE__, m_);                                                    \
            return;                                                                                \
        }                                                                                          \
    } while (0)

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

static void test_replay_errors(void) {
    static const char garbage[256] = "this is not a Light Metal binary";
    lm_replay *r;
    CHECK_NAMED_ONCE(lm_replay_open(garbage, sizeof garbage, &r), "lm_replay_open");
    CHECK_NAMED_ONCE(lm_replay_open(NULL, 0, &r), "lm_replay_open");
    CHECK_NAMED_ONCE(lm_replay_open_file("no/such/file.lmb", &r), "lm_replay_open_file");
    char path[64];
    snprintf(path, sizeof path, "test_api_errors_%d.lmb", (int)getpid());
    FILE *f = fopen(path, "wb");
    CHECK(f);
    fwrite(garbage, 1, sizeof garbage, f);
    fclose(f);
    lm_status st = lm_replay_open_file(path, &r);
    unlink(path);
    CHECK_NAMED_ONCE(st, "lm_replay_open_file");
    CHECK_NAMED_ONCE(lm_replay_run(NULL, NULL, NULL, NULL), "lm_replay_run");
}

static void test_buffer_errors(void) {
    lm_device *dev = open_device();
    CHECK(dev);
    lm_buffer_config c;
    lm_buffer_config_init(&c);
    lm_buffer b = {0};
    CHECK_NAMED_ONCE(lm_create_buffer(dev, &c, &b), "lm_create_buffer"); /* size 0 */
    c.size = 1ull << 40;
    c.page_size = 1024;
    CHECK_NAMED_ONCE(lm_create_buffer(dev, &c, &b), "lm_create_buffer"); /* too large */
    CHECK_NAMED_ONCE(lm_create_buffer(NULL, &c, &b), "lm_create_buffer");
    CHECK_NAMED_ONCE(lm_deallocate_buffer((lm_buffer){12345}), "lm_deallocate_buffer");
    uint64_t addr;
    CHECK_NAMED_ONCE(lm_buffer_address((lm_buffer){0}, &addr), "lm_buffer_address");
    CHECK_OK(lm_device_close(dev));
}

static void test_queue_and_trace_errors(void) {
    lm_device *dev = open_device();
    CHECK(dev);
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_buffer_config c;
    lm_buffer_config_init(&c);
    c.size = 2048;
    c.page_size = 1024;
    lm_buffer b;
    CHECK_OK(lm_create_buffer(dev, &c, &b));
    char host[2048] = {0};
    CHECK_NAMED_ONCE(lm_enqueue_write_buffer(cq, b, NULL, true), "lm_enqueue_write_buffer");
    CHECK_NAMED_ONCE(lm_enqueue_read_buffer(NULL, b, host, true), "lm_enqueue_read_buffer");
    CHECK_NAMED_ONCE(lm_enqueue_read_buffer(cq, (lm_buffer){999}, host, true),
                     "lm_enqueue_read_buffer");
    CHECK_NAMED_ONCE(lm_enqueue_program(NULL, (lm_program){0}, true), "lm_enqueue_program");
    CHECK_NAMED_ONCE(lm_enqueue_program(cq, (lm_program){0}, true), "lm_enqueue_program");
    /* Transfers while the queue captures a trace are refused by a helper that
     * is given the function's name. */
    uint32_t trace;
    CHECK_OK(lm_begin_trace_capture(cq, &trace));
    CHECK_NAMED_ONCE(lm_enqueue_write_buffer(cq, b, host, true), "lm_enqueue_write_buffer");
    CHECK_NAMED_ONCE(lm_enqueue_read_buffer(cq, b, host, true), "lm_enqueue_read_buffer");
    CHECK_NAMED_ONCE(lm_finish(cq), "lm_finish");
    uint32_t again;
    CHECK_NAMED_ONCE(lm_begin_trace_capture(cq, &again), "lm_begin_trace_capture");
    CHECK_OK(lm_end_trace_capture(cq, trace));
    CHECK_NAMED_ONCE(lm_replay_trace(cq, 77, true), "lm_replay_trace");
    CHECK_NAMED_ONCE(lm_load_trace(cq, host, sizeof host, &again), "lm_load_trace");
    CHECK_OK(lm_device_close(dev));
}

static void test_program_errors(void) {
    lm_device *dev = open_device();
    CHECK(dev);
    lm_program p;
    CHECK_OK(lm_create_program(dev, &p));
    lm_kernel_config kc;
    lm_kernel_config_init(&kc, LM_PROCESSOR_DM0);
    lm_core_range_set cores = lm_core_range_set_of(0, 0, 1, 1);
    lm_kernel k;
    CHECK_NAMED_ONCE(lm_create_kernel(p, "no/such/kernel.c", &cores, &kc, &k), "lm_create_kernel");
    CHECK_NAMED_ONCE(lm_create_kernel(p, "k.c", NULL, &kc, &k), "lm_create_kernel");
    CHECK_NAMED_ONCE(lm_set_runtime_args((lm_program){1}, (lm_kernel){1}, (lm_core){0, 0}, NULL, 0),
                     "lm_set_runtime_args");
    CHECK_NAMED_ONCE(lm_release_program((lm_program){5}), "lm_release_program");
    CHECK_OK(lm_release_program(p));
    CHECK_OK(lm_device_close(dev));
}

static void test_capture_errors(void) {
    lm_device *dev = open_device();
    CHECK(dev);
    lm_binary *bin;
    CHECK_NAMED_ONCE(lm_capture_name_buffer((lm_buffer){4242}, "x"), "lm_capture_name_buffer");
    CHECK_NAMED_ONCE(lm_capture_name_buffer((lm_buffer){4242}, ""), "lm_capture_name_buffer");
    CHECK_NAMED_ONCE(lm_light_metal_end_capture(dev, &bin), "lm_light_metal_end_capture");
    CHECK_OK(lm_light_metal_begin_capture(dev, NULL));
    CHECK_NAMED_ONCE(lm_light_metal_begin_capture(dev, NULL), "lm_light_metal_begin_capture");
    CHECK_OK(lm_light_metal_end_capture(dev, &bin));
    CHECK_NAMED_ONCE(lm_binary_save(bin, "no/such/dir/x.lmb"), "lm_binary_save");
    uint64_t size = 0;
    const void *data;
    uint64_t data_size = 0;
    CHECK_NAMED_ONCE(lm_binary_size(NULL, &size), "lm_binary_size");
    CHECK_NAMED_ONCE(lm_binary_size(bin, NULL), "lm_binary_size");
    CHECK_OK(lm_binary_size(bin, &size));
    CHECK_OK(lm_binary_data(bin, &data, &data_size));
    CHECK(size > 0 && size == data_size);
    lm_binary_free(bin);
    lm_device_options o;
    lm_device_options_init(&o);
    o.grid_x = 0;
    lm_device *bad;
    CHECK_NAMED_ONCE(lm_device_open(&o, &bad), "lm_device_open");
    CHECK_OK(lm_device_close(dev));
}

/* A captured workload whose golden does not match what replay computes. */
static lm_status capture_mismatching(lm_device *dev, lm_binary **out) {
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_buffer_config c;
    lm_buffer_config_init(&c);
    c.size = 2048;
    c.page_size = 1024;
    static char data[2048], other[2048];
    memset(data, 1, sizeof data);
    memset(other, 2, sizeof other);
    lm_buffer b;
    lm_status st = lm_light_metal_begin_capture(dev, NULL);
    if (!st) st = lm_create_buffer(dev, &c, &b);
    if (!st) st = lm_enqueue_write_buffer(cq, b, data, true);
    if (!st) st = lm_capture_name_buffer(b, "data");
    if (!st) st = lm_capture_compare_to_golden(cq, b, other, sizeof other);
    if (!st) st = lm_light_metal_end_capture(dev, out);
    return st;
}

static void test_replay_run_errors(void) {
    lm_device *dev = open_device();
    CHECK(dev);
    lm_binary *bin;
    CHECK_OK(capture_mismatching(dev, &bin));
    const void *data;
    uint64_t size;
    CHECK_OK(lm_binary_data(bin, &data, &size));
    lm_replay *r;
    CHECK_OK(lm_replay_open(data, size, &r));
    char buf[2048];
    CHECK_NAMED_ONCE(lm_replay_set_input(r, "nope", buf, sizeof buf), "lm_replay_set_input");
    CHECK_NAMED_ONCE(lm_replay_get_output(r, "data", buf, sizeof buf), "lm_replay_get_output");
    lm_replay_options opts;
    lm_replay_options_init(&opts);
    opts.loops = 0;
    CHECK_NAMED_ONCE(lm_replay_run(r, NULL, &opts, NULL), "lm_replay_run");
    lm_device_options o;
    lm_device_options_init(&o); /* 8x8: not the captured 2x2 */
    lm_device *other;
    CHECK_OK(lm_device_open(&o, &other));
    CHECK_NAMED_ONCE(lm_replay_run(r, other, NULL, NULL), "lm_replay_run");
    CHECK_OK(lm_device_close(other));
    lm_replay_report report;
    CHECK_STATUS(lm_replay_run(r, NULL, NULL, &report), LM_ERR_MISMATCH);
    CHECK_NAMED_ONCE(LM_ERR_MISMATCH, "lm_replay_run");
    lm_replay_close(r);
    lm_binary_free(bin);
    CHECK_OK(lm_device_close(dev));
}

int main(void) {
    TEST_RUN(test_replay_errors);
    TEST_RUN(test_buffer_errors);
    TEST_RUN(test_queue_and_trace_errors);
    TEST_RUN(test_program_errors);
    TEST_RUN(test_capture_errors);
    TEST_RUN(test_replay_run_errors);
    return test_summary();
}
