/* Metal traces: replay equals eager execution bit for bit, several traces,
 * id reuse, capture-time rules, region overflow, and a corrupted stream. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lightmetal/lightmetal.h"
#include "lm_test.h"
#include "lm_test_child.h"

enum { WORDS = 512 };

static lm_device *open_device(uint64_t trace_region) {
    lm_device_options o;
    lm_device_options_init(&o);
    o.grid_x = 4;
    o.grid_y = 2;
    o.dram_banks = 2;
    o.dram_bank_size = 16 << 20;
    o.trace_region_size = trace_region;
    lm_device *dev = NULL;
    return lm_device_open(&o, &dev) ? NULL : dev;
}

/* dst[i] = src[i] * 3 + k on every core's slice (one 64-word page per core). */
static const char *step_kernel =
    "#include \"dataflow_api.h\"\n"
    "void kernel_main(void) {\n"
    "    InterleavedAddrGenFast s = {.bank_base_address = get_arg_val(0), .page_size = 256, "
    ".is_dram = true};\n"
    "    InterleavedAddrGenFast d = {.bank_base_address = get_arg_val(1), .page_size = 256, "
    ".is_dram = true};\n"
    "    uint32_t page = my_y() * 4 + my_x(), l1 = 0x20000;\n"
    "    noc_async_read_page(page, &s, l1);\n"
    "    noc_async_read_barrier();\n"
    "    volatile uint32_t *w = (volatile uint32_t *)l1;\n"
    "    for (int i = 0; i < 64; i++) w[i] = w[i] * 3u + get_common_arg_val(0);\n"
    "    noc_async_write_page(page, &d, l1);\n"
    "    noc_async_write_barrier();\n"
    "}\n";

typedef struct chain {
    lm_device *dev;
    lm_command_queue *cq;
    lm_buffer x, y;
    lm_program prog[2]; /* x -> y and y -> x */
    lm_kernel kernel[2];
} chain;

static int chain_init(chain *c, lm_device *dev) {
    c->dev = dev;
    c->cq = lm_device_command_queue(dev, 0);
    lm_buffer_config b;
    lm_buffer_config_init(&b);
    b.size = WORDS * 4;
    b.page_size = 256;
    if (lm_create_buffer(dev, &b, &c->x) || lm_create_buffer(dev, &b, &c->y)) return 0;
    uint64_t xa, ya;
    lm_buffer_address(c->x, &xa);
    lm_buffer_address(c->y, &ya);
    lm_core_range_set all = lm_core_range_set_of(0, 0, 3, 1);
    lm_kernel_config kc;
    lm_kernel_config_init(&kc, LM_PROCESSOR_DM0);
    for (int i = 0; i < 2; i++) {
        if (lm_create_program(dev, &c->prog[i]) ||
            lm_create_kernel_from_string(c->prog[i], "step", step_kernel, &all, &kc, &c->kernel[i]))
            return 0;
        uint32_t args[] = {(uint32_t)(i ? ya : xa), (uint32_t)(i ? xa : ya)};
        for (uint32_t y = 0; y < 2; y++)
            for (uint32_t x = 0; x < 4; x++)
                if (lm_set_runtime_args(c->prog[i], c->kernel[i], (lm_core){x, y}, args, 2))
                    return 0;
    }
    return 1;
}

static lm_status set_k(chain *c, int which, uint32_t k) {
    return lm_set_common_runtime_args(c->prog[which], c->kernel[which], &k, 1);
}

static lm_status reset_input(chain *c) {
    uint32_t in[WORDS];
    for (int i = 0; i < WORDS; i++)
        in[i] = (uint32_t)i * 2654435761u;
    return lm_enqueue_write_buffer(c->cq, c->x, in, true);
}

/* Enqueues `n` steps: step s uses program s % 2 with k = s. */
static lm_status enqueue_steps(chain *c, int n) {
    for (int s = 0; s < n; s++) {
        lm_status st = set_k(c, s % 2, (uint32_t)s);
        if (!st) st = lm_enqueue_program(c->cq, c->prog[s % 2], false);
        if (st) return st;
    }
    return LM_OK;
}

static void test_replay_equals_eager(void) {
    lm_device *dev = open_device(1 << 20);
    chain c;
    CHECK(dev && chain_init(&c, dev));
    uint32_t eager[WORDS], traced[WORDS], again[WORDS];
    CHECK_OK(reset_input(&c));
    CHECK_OK(enqueue_steps(&c, 20));
    CHECK_OK(lm_finish(c.cq));
    CHECK_OK(lm_enqueue_read_buffer(c.cq, c.x, eager, true));

    uint32_t id;
    CHECK_OK(reset_input(&c));
    CHECK_OK(lm_begin_trace_capture(c.cq, &id));
    CHECK_EQ_U64(id, 1);
    CHECK_OK(enqueue_steps(&c, 20)); /* recorded, not run */
    CHECK_OK(lm_end_trace_capture(c.cq, id));
    uint32_t untouched[WORDS];
    CHECK_OK(lm_enqueue_read_buffer(c.cq, c.x, untouched, true));
    CHECK(untouched[1] == 2654435761u); /* nothing ran during capture */
    CHECK_OK(lm_replay_trace(c.cq, id, true));
    CHECK_OK(lm_enqueue_read_buffer(c.cq, c.x, traced, true));
    CHECK(memcmp(eager, traced, sizeof eager) == 0);
    /* Replaying again from the same input gives the same again. */
    CHECK_OK(reset_input(&c));
    CHECK_OK(lm_replay_trace(c.cq, id, false));
    CHECK_OK(lm_finish(c.cq));
    CHECK_OK(lm_enqueue_read_buffer(c.cq, c.x, again, true));
    CHECK(memcmp(eager, again, sizeof eager) == 0);
    /* The programs may go: the trace keeps what it needs. */
    CHECK_OK(lm_release_program(c.prog[0]));
    CHECK_OK(lm_release_program(c.prog[1]));
    CHECK_OK(reset_input(&c));
    CHECK_OK(lm_replay_trace(c.cq, id, true));
    CHECK_OK(lm_enqueue_read_buffer(c.cq, c.x, again, true));
    CHECK(memcmp(eager, again, sizeof eager) == 0);
    CHECK_OK(lm_release_trace(dev, id));
    CHECK_OK(lm_device_close(dev));
}

/* Two traces with different runtime args, interleaved with eager launches;
 * released ids are reused. */
static void test_several_traces_and_id_reuse(void) {
    lm_device *dev = open_device(1 << 20);
    chain c;
    CHECK(dev && chain_init(&c, dev));
    uint32_t t1, t2, t3, a[WORDS], b[WORDS];
    CHECK_OK(set_k(&c, 0, 5));
    CHECK_OK(lm_begin_trace_capture(c.cq, &t1));
    CHECK_OK(lm_enqueue_program(c.cq, c.prog[0], false));
    CHECK_OK(lm_end_trace_capture(c.cq, t1));
    CHECK_OK(set_k(&c, 0, 9));
    CHECK_OK(lm_begin_trace_capture(c.cq, &t2));
    CHECK_OK(lm_enqueue_program(c.cq, c.prog[0], false));
    CHECK_OK(lm_end_trace_capture(c.cq, t2));
    CHECK(t1 == 1 && t2 == 2);

    CHECK_OK(reset_input(&c));
    CHECK_OK(lm_replay_trace(c.cq, t1, true));
    CHECK_OK(lm_enqueue_read_buffer(c.cq, c.y, a, true));
    CHECK_OK(lm_enqueue_program(c.cq, c.prog[0], true)); /* eager, k = 9 now */
    CHECK_OK(lm_enqueue_read_buffer(c.cq, c.y, b, true));
    CHECK(a[7] + 4 == b[7]);
    CHECK_OK(lm_replay_trace(c.cq, t2, true));
    CHECK_OK(lm_enqueue_read_buffer(c.cq, c.y, a, true));
    CHECK(memcmp(a, b, sizeof a) == 0);

    CHECK_OK(lm_release_trace(dev, t1));
    CHECK_FAILS(lm_replay_trace(c.cq, t1, true), LM_ERR_NOT_FOUND,
                "lm_replay_trace: trace 1 does not exist");
    CHECK_FAILS(lm_release_trace(dev, t1), LM_ERR_NOT_FOUND, "trace 1 does not exist");
    CHECK_OK(lm_begin_trace_capture(c.cq, &t3));
    CHECK_EQ_U64(t3, 1);                      /* reused */
    CHECK_OK(lm_end_trace_capture(c.cq, t3)); /* an empty trace is fine */
    CHECK_OK(lm_replay_trace(c.cq, t3, true));
    CHECK_OK(lm_device_close(dev)); /* releases the remaining traces */
}

static void test_capture_rules(void) {
    lm_device *dev = open_device(1 << 20);
    chain c;
    CHECK(dev && chain_init(&c, dev));
    lm_command_queue *other = lm_device_command_queue(dev, 1);
    uint32_t id, id2, data[WORDS] = {0};
    CHECK_FAILS(lm_end_trace_capture(c.cq, 1), LM_ERR_INVALID_STATE,
                "command queue 0 is not capturing a trace");
    CHECK_OK(lm_begin_trace_capture(c.cq, &id));
    CHECK_FAILS(lm_begin_trace_capture(c.cq, &id2), LM_ERR_INVALID_STATE,
                "command queue 0 is already capturing trace 1");
    CHECK_FAILS(lm_enqueue_write_buffer(c.cq, c.x, data, true), LM_ERR_INVALID_STATE,
                "lm_enqueue_write_buffer: not allowed while command queue 0 is capturing a trace");
    CHECK_FAILS(lm_enqueue_read_buffer(c.cq, c.x, data, false), LM_ERR_INVALID_STATE,
                "capturing a trace");
    CHECK_FAILS(lm_finish(c.cq), LM_ERR_INVALID_STATE, "lm_finish: not allowed");
    lm_buffer_config b;
    lm_buffer_config_init(&b);
    b.size = b.page_size = 64;
    lm_buffer nb;
    CHECK_FAILS(lm_replay_trace(c.cq, id, true), LM_ERR_INVALID_STATE, "capturing a trace");
    CHECK_FAILS(lm_replay_trace(other, id, true), LM_ERR_INVALID_STATE,
                "trace 1 is still being captured");
    CHECK_FAILS(lm_release_trace(dev, id), LM_ERR_INVALID_STATE, "still being captured");
    CHECK_FAILS(lm_end_trace_capture(c.cq, 7), LM_ERR_INVALID_ARGUMENT, "capturing trace 1, not 7");
    /* The other queue works normally meanwhile. */
    CHECK_OK(lm_enqueue_read_buffer(other, c.x, data, true));
    CHECK_OK(lm_enqueue_program(c.cq, c.prog[0], false));
    CHECK_OK(lm_end_trace_capture(c.cq, id));
    CHECK_OK(lm_create_buffer(dev, &b, &nb));
    CHECK_FAILS(lm_begin_trace_capture(NULL, &id), LM_ERR_INVALID_HANDLE, "cq is NULL");
    CHECK_FAILS(lm_begin_trace_capture(c.cq, NULL), LM_ERR_INVALID_ARGUMENT, "out_trace_id");
    CHECK_FAILS(lm_replay_trace(c.cq, 0, true), LM_ERR_NOT_FOUND, "trace 0 does not exist");
    CHECK_FAILS(lm_replay_trace(c.cq, 9999, true), LM_ERR_NOT_FOUND, "trace 9999");
    CHECK_FAILS(lm_release_trace(NULL, id), LM_ERR_INVALID_HANDLE, "device is NULL");
    CHECK_OK(lm_device_close(dev));
}

/* Buffers made and freed while a trace is captured (a model's intermediate
 * results): the freed one's memory stays taken until the trace is released,
 * so no later buffer lands where the trace's launches write. */
static void test_buffers_during_capture(void) {
    lm_device *dev = open_device(1 << 20);
    chain c;
    CHECK(dev && chain_init(&c, dev));
    lm_buffer_config b;
    lm_buffer_config_init(&b);
    b.size = b.page_size = 4096;
    lm_buffer tmp, later, again;
    uint64_t tmp_addr, later_addr, again_addr;
    uint32_t id;
    CHECK_OK(lm_begin_trace_capture(c.cq, &id));
    CHECK_OK(lm_create_buffer(dev, &b, &tmp));
    CHECK_OK(lm_buffer_address(tmp, &tmp_addr));
    CHECK_OK(lm_enqueue_program(c.cq, c.prog[0], false));
    CHECK_OK(lm_deallocate_buffer(tmp));
    CHECK_FAILS(lm_buffer_address(tmp, &tmp_addr), LM_ERR_INVALID_HANDLE, "stale");
    CHECK_OK(lm_end_trace_capture(c.cq, id));
    CHECK_OK(lm_create_buffer(dev, &b, &later));
    CHECK_OK(lm_buffer_address(later, &later_addr));
    CHECK(later_addr != tmp_addr); /* still held by the trace */
    CHECK_OK(lm_replay_trace(c.cq, id, true));
    CHECK_OK(lm_release_trace(dev, id));
    CHECK_OK(lm_create_buffer(dev, &b, &again));
    CHECK_OK(lm_buffer_address(again, &again_addr));
    CHECK(again_addr == tmp_addr); /* given back with the trace */
    /* A capture still open when the device closes gives its buffers back. */
    CHECK_OK(lm_begin_trace_capture(c.cq, &id));
    CHECK_OK(lm_deallocate_buffer(again));
    CHECK_OK(lm_device_close(dev));
}

static void test_region_overflow(void) {
    lm_device *dev = open_device(4096); /* room for a few launches only */
    chain c;
    CHECK(dev && chain_init(&c, dev));
    uint32_t id;
    CHECK_OK(lm_begin_trace_capture(c.cq, &id));
    CHECK_OK(enqueue_steps(&c, 50));
    CHECK_FAILS(lm_end_trace_capture(c.cq, id), LM_ERR_OUT_OF_DEVICE_MEMORY, "trace 1 of ");
    CHECK_ERROR_HAS("does not fit the trace region");
    /* The failed trace is gone and the queue works. */
    CHECK_FAILS(lm_replay_trace(c.cq, id, true), LM_ERR_NOT_FOUND, "does not exist");
    CHECK_OK(reset_input(&c));
    CHECK_OK(lm_begin_trace_capture(c.cq, &id));
    CHECK_OK(enqueue_steps(&c, 1));
    CHECK_OK(lm_end_trace_capture(c.cq, id));
    CHECK_OK(lm_replay_trace(c.cq, id, true));
    CHECK_OK(lm_device_close(dev));
}

/* A kernel that scribbles over the trace region: the next replay stops with a
 * device fault instead of trusting the stream; the device stays usable. */
static void test_corrupted_stream(void) {
    lm_device *dev = open_device(1 << 20);
    chain c;
    CHECK(dev && chain_init(&c, dev));
    lm_device_info info;
    CHECK_OK(lm_device_get_info(dev, &info));
    uint32_t id;
    CHECK_OK(lm_begin_trace_capture(c.cq, &id));
    CHECK_OK(enqueue_steps(&c, 2));
    CHECK_OK(lm_end_trace_capture(c.cq, id));
    char src[512];
    snprintf(src, sizeof src,
             "#include \"dataflow_api.h\"\n"
             "void kernel_main(void) {\n"
             "    volatile uint32_t *w = (volatile uint32_t *)0x20000;\n"
             "    for (int i = 0; i < 16; i++) w[i] = 0xFFFFFFFFu;\n"
             "    noc_async_write(0x20000, get_noc_addr(0, 63, 0x%llxu), 64);\n"
             "}\n",
             (unsigned long long)info.trace_region_base);
    lm_program vandal;
    lm_kernel k;
    lm_kernel_config kc;
    lm_kernel_config_init(&kc, LM_PROCESSOR_DM1);
    lm_core_range_set one = lm_core_range_set_of(0, 0, 0, 0);
    CHECK_OK(lm_create_program(dev, &vandal));
    CHECK_OK(lm_create_kernel_from_string(vandal, "vandal", src, &one, &kc, &k));
    CHECK_OK(lm_enqueue_program(c.cq, vandal, true));
    CHECK_FAILS(lm_replay_trace(c.cq, id, true), LM_ERR_DEVICE_FAULT,
                "trace launch 0: trace stream corrupt at word 0: bad header");
    CHECK_OK(lm_enqueue_program(c.cq, c.prog[0], true));
    CHECK_OK(lm_release_program(vandal));
    CHECK_OK(lm_device_close(dev));
}

/* In a fresh process: a fresh device with the same buffers (same addresses:
 * allocation is deterministic), the input, then only the loaded trace. */
static int replay_blob_elsewhere(const void *blob, uint64_t size, uint32_t *out) {
    lm_device *dev = open_device(1 << 20);
    if (!dev) return 0;
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_buffer_config b;
    lm_buffer_config_init(&b);
    b.size = WORDS * 4;
    b.page_size = 256;
    chain c = {.dev = dev, .cq = cq};
    uint32_t id;
    int ok = !lm_create_buffer(dev, &b, &c.x) && !lm_create_buffer(dev, &b, &c.y) &&
             !reset_input(&c) && !lm_load_trace(cq, blob, size, &id) &&
             !lm_replay_trace(cq, id, true) && !lm_enqueue_read_buffer(cq, c.x, out, true);
    if (!ok) printf("  elsewhere: %s\n", lm_last_error());
    return !lm_device_close(dev) && ok;
}

typedef struct blob_view {
    const void *data;
    uint64_t size;
} blob_view;

static int replay_in_child(void *ctx, void *out) {
    const blob_view *v = ctx;
    return replay_blob_elsewhere(v->data, v->size, out);
}

static void test_collect_and_load(void) {
    lm_device *dev = open_device(1 << 20);
    chain c;
    CHECK(dev && chain_init(&c, dev));
    uint32_t id, loaded, original[WORDS], again[WORDS], theirs[WORDS];
    CHECK_OK(lm_begin_trace_capture(c.cq, &id));
    CHECK_OK(enqueue_steps(&c, 6));
    CHECK_OK(lm_end_trace_capture(c.cq, id));
    CHECK_OK(reset_input(&c));
    CHECK_OK(lm_replay_trace(c.cq, id, true));
    CHECK_OK(lm_enqueue_read_buffer(c.cq, c.x, original, true));

    lm_binary *blob;
    const void *data;
    uint64_t size;
    CHECK_OK(lm_collect_trace(dev, id, &blob));
    CHECK_OK(lm_binary_data(blob, &data, &size));
    /* Loaded next to the original: a new id, the same results. */
    CHECK_OK(lm_load_trace(c.cq, data, size, &loaded));
    CHECK(loaded != id);
    CHECK_OK(reset_input(&c));
    CHECK_OK(lm_replay_trace(c.cq, loaded, true));
    CHECK_OK(lm_enqueue_read_buffer(c.cq, c.x, again, true));
    CHECK(memcmp(original, again, sizeof again) == 0);

    /* In another process that never compiled anything. */
    blob_view view = {data, size};
    CHECK(test_in_child(replay_in_child, &view, theirs, sizeof theirs));
    CHECK(memcmp(original, theirs, sizeof theirs) == 0);

    /* Corrupt and mismatched blobs are refused; nothing crashes. */
    uint8_t *bad = malloc(size);
    CHECK(bad);
    CHECK_FAILS(lm_load_trace(c.cq, data, size / 2, &loaded), LM_ERR_INVALID_FILE, "lm_load_trace");
    for (uint64_t at = 8; at < size; at += size / 97 + 1) {
        memcpy(bad, data, size);
        bad[at] ^= 0x5A;
        lm_status st = lm_load_trace(c.cq, bad, size, &loaded);
        if (st == LM_OK)
            CHECK_OK(lm_release_trace(dev, loaded)); /* harmless flip */
        else
            CHECK(st == LM_ERR_INVALID_FILE);
    }
    free(bad);
    CHECK_FAILS(lm_load_trace(c.cq, NULL, size, &loaded), LM_ERR_INVALID_ARGUMENT, "NULL");
    lm_device_options o;
    lm_device_options_init(&o);
    o.grid_x = 2;
    o.grid_y = 2;
    lm_device *other;
    CHECK_OK(lm_device_open(&o, &other));
    CHECK_FAILS(lm_load_trace(lm_device_command_queue(other, 0), data, size, &loaded),
                LM_ERR_INVALID_ARGUMENT, "the trace was made for a 4x2 device");
    CHECK_OK(lm_device_close(other));
    CHECK_FAILS(lm_collect_trace(dev, 77, &blob), LM_ERR_NOT_FOUND, "trace 77 does not exist");
    lm_binary_free(blob);
    CHECK_OK(lm_device_close(dev));
}

int main(void) {
    setenv("LM_CACHE_DIR", "test_trace_cache", 0);
    TEST_RUN(test_replay_equals_eager);
    TEST_RUN(test_several_traces_and_id_reuse);
    TEST_RUN(test_capture_rules);
    TEST_RUN(test_buffers_during_capture);
    TEST_RUN(test_region_overflow);
    TEST_RUN(test_corrupted_stream);
    TEST_RUN(test_collect_and_load);
    return test_summary();
}
