/* The host calls tt-metal programs port to: runtime args for many cores at
 * once and updated in place, buffer regions, work splitting, NoC
 * coordinates, direct L1 access -- each checked on the device, captured and
 * replayed, and fed bad arguments. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lightmetal/lightmetal.h"
#include "lm_test.h"
#include "lm_test_replay.h"

#define PAGE 64u
#define L1_SPOT 0x20000u /* in every core's unreserved L1 */

static lm_device *open_device(void) {
    lm_device_options o;
    lm_device_options_init(&o);
    o.grid_x = 4;
    o.grid_y = 2;
    o.dram_banks = 2;
    o.dram_bank_size = 16 << 20;
    o.num_threads = 2;
    lm_device *dev = NULL;
    return lm_device_open(&o, &dev) ? NULL : dev;
}

/* Writes this core's runtime args (arg 0 = how many follow) and the word at
 * L1_SPOT into page (y * 4 + x) of the DRAM buffer at common arg 0. */
static const char *dumper =
    "void kernel_main() {\n"
    "    const uint32_t n = get_arg_val<uint32_t>(0);\n"
    "    const uint32_t core = get_absolute_logical_y() * 4 + get_absolute_logical_x();\n"
    "    volatile uint32_t *scratch = reinterpret_cast<volatile uint32_t *>(0x30000);\n"
    "    for (uint32_t i = 0; i < 15; i++) scratch[i] = i < n ? get_arg_val<uint32_t>(1 + i) : 0;\n"
    "    scratch[15] = *reinterpret_cast<volatile uint32_t *>(0x20000);\n"
    "    const InterleavedAddrGen<true> out = {get_common_arg_val<uint32_t>(0), 64};\n"
    "    noc_async_write_page(core, out, 0x30000);\n"
    "    noc_async_write_barrier();\n"
    "}\n";

typedef struct setup {
    lm_device *dev;
    lm_command_queue *cq;
    lm_buffer out;
    lm_program prog;
    lm_kernel k;
} setup;

static int make(setup *s, bool capture) {
    memset(s, 0, sizeof *s);
    s->dev = open_device();
    if (!s->dev) return 0;
    s->cq = lm_device_command_queue(s->dev, 0);
    if (capture && lm_light_metal_begin_capture(s->dev, NULL)) return 0;
    lm_buffer_config bc;
    lm_buffer_config_init(&bc);
    bc.size = 8 * PAGE;
    bc.page_size = PAGE;
    lm_core_range_set all = lm_core_range_set_of(0, 0, 3, 1);
    lm_kernel_config cfg;
    lm_kernel_config_init(&cfg, LM_PROCESSOR_DM0);
    uint64_t a = 0;
    lm_status st = lm_create_buffer(s->dev, &bc, &s->out);
    if (!st && capture) st = lm_capture_name_buffer(s->out, "out");
    if (!st) st = lm_create_program(s->dev, &s->prog);
    if (!st) st = lm_create_kernel_from_string(s->prog, "dumper.cpp", dumper, &all, &cfg, &s->k);
    if (!st) st = lm_buffer_address(s->out, &a);
    uint32_t common[] = {(uint32_t)a};
    if (!st) st = lm_set_common_runtime_args(s->prog, s->k, common, 1);
    uint32_t zero[] = {0};
    if (!st) st = lm_set_runtime_args_range(s->prog, s->k, &all, zero, 1);
    if (st) printf("  set-up: %s\n", lm_last_error());
    return st == LM_OK;
}

/* Runs the program and reads the 8 pages. */
static int run(setup *s, uint32_t out[8][16]) {
    lm_status st = lm_enqueue_program(s->cq, s->prog, true);
    if (!st) st = lm_enqueue_read_buffer(s->cq, s->out, out, true);
    if (st) printf("  run: %s\n", lm_last_error());
    return st == LM_OK;
}

static void test_runtime_args_many_cores(void) {
    setup s;
    CHECK(make(&s, false));
    /* A range: the same args on (1,0)-(2,1). */
    uint32_t three[] = {2, 11, 22};
    lm_core_range_set mid = lm_core_range_set_of(1, 0, 2, 1);
    CHECK_OK(lm_set_runtime_args_range(s.prog, s.k, &mid, three, 3));
    /* Each: per-core vectors. */
    lm_core cores[] = {{0, 0}, {3, 1}};
    uint32_t a0[] = {1, 100}, a1[] = {3, 7, 8, 9};
    const uint32_t *args[] = {a0, a1};
    uint32_t counts[] = {2, 4};
    CHECK_OK(lm_set_runtime_args_each(s.prog, s.k, cores, 2, args, counts));
    uint32_t out[8][16];
    CHECK(run(&s, out));
    CHECK(out[0][0] == 100 && out[0][1] == 0);
    CHECK(out[1][0] == 11 && out[1][1] == 22 && out[6][0] == 11 && out[6][1] == 22);
    CHECK(out[7][0] == 7 && out[7][1] == 8 && out[7][2] == 9);
    CHECK(out[3][0] == 0 && out[4][0] == 0); /* untouched cores kept {0} */

    /* In place (GetRuntimeArgs): the next launch sees the new words. */
    uint32_t *w = NULL, n = 0;
    CHECK_OK(lm_get_runtime_args(s.prog, s.k, (lm_core){3, 1}, &w, &n));
    CHECK(n == 4 && w[1] == 7);
    w[1] = 70;
    w[3] = 90;
    CHECK(run(&s, out));
    CHECK(out[7][0] == 70 && out[7][1] == 8 && out[7][2] == 90);
    /* Setting the same count keeps the array: the pointer stays good. */
    uint32_t again[] = {3, 1, 2, 3};
    CHECK_OK(lm_set_runtime_args(s.prog, s.k, (lm_core){3, 1}, again, 4));
    CHECK(w[1] == 1);

    /* Bad arguments: nothing changes when one core is wrong. */
    lm_core_range_set outside = lm_core_range_set_of(0, 0, 0, 0);
    outside.ranges[outside.count++] = (lm_core_range){{3, 0}, {4, 0}};
    CHECK_FAILS(lm_set_runtime_args_range(s.prog, s.k, &outside, three, 3), LM_ERR_INVALID_ARGUMENT,
                "kernel 'dumper.cpp' does not run on core (4,0)");
    CHECK(run(&s, out));
    CHECK(out[0][0] == 100); /* (0,0) was first in the set: not changed */
    lm_core_range_set empty = lm_core_range_set_of(2, 0, 1, 0);
    CHECK_FAILS(lm_set_runtime_args_range(s.prog, s.k, &empty, three, 3), LM_ERR_INVALID_ARGUMENT,
                "lm_set_runtime_args_range: range 0 is empty");
    CHECK_FAILS(lm_set_runtime_args_range(s.prog, s.k, NULL, three, 3), LM_ERR_INVALID_ARGUMENT,
                "lm_set_runtime_args_range: cores is NULL");
    CHECK_FAILS(lm_set_runtime_args_range(s.prog, s.k, &mid, NULL, 3), LM_ERR_INVALID_ARGUMENT,
                "args is NULL");
    uint32_t big = 400;
    CHECK_FAILS(lm_set_runtime_args_each(s.prog, s.k, cores, 2, args, (uint32_t[]){2, big}),
                LM_ERR_INVALID_ARGUMENT, "lm_set_runtime_args_each: core 1: 400 arguments");
    lm_core bad[] = {{0, 0}, {0, 2}};
    CHECK_FAILS(lm_set_runtime_args_each(s.prog, s.k, bad, 2, args, counts),
                LM_ERR_INVALID_ARGUMENT,
                "lm_set_runtime_args_each: core 1: kernel 'dumper.cpp' "
                "does not run on core (0,2)");
    CHECK_FAILS(lm_set_runtime_args_each(s.prog, s.k, NULL, 2, args, counts),
                LM_ERR_INVALID_ARGUMENT, "cores is NULL");
    CHECK_FAILS(lm_get_runtime_args(s.prog, s.k, (lm_core){0, 0}, NULL, &n),
                LM_ERR_INVALID_ARGUMENT, "lm_get_runtime_args: out_args is NULL");
    CHECK_FAILS(lm_get_runtime_args(s.prog, s.k, (lm_core){5, 0}, &w, &n), LM_ERR_INVALID_ARGUMENT,
                "does not run on core (5,0)");
    CHECK_OK(lm_device_close(s.dev));
}

/* Ranges, per-core vectors, in-place updates and an L1 write, captured: the
 * replay gives the live run's output. */
static void test_capture_and_replay(void) {
    setup s;
    CHECK(make(&s, true));
    uint32_t mark = 0xC0FFEE;
    CHECK_OK(lm_device_write_l1(s.dev, (lm_core){2, 1}, L1_SPOT, 4, &mark));
    uint32_t three[] = {2, 5, 6};
    lm_core_range_set row = lm_core_range_set_of(0, 1, 3, 1);
    CHECK_OK(lm_set_runtime_args_range(s.prog, s.k, &row, three, 3));
    uint32_t out[8][16], live[8][16];
    CHECK(run(&s, out));
    uint32_t *w = NULL, n = 0;
    CHECK_OK(lm_get_runtime_args(s.prog, s.k, (lm_core){1, 1}, &w, &n));
    w[2] = 66;
    CHECK(run(&s, live));
    CHECK(live[5][1] == 66 && live[4][1] == 6 && live[6][15] == 0xC0FFEE);
    lm_binary *bin = NULL;
    CHECK_OK(lm_light_metal_end_capture(s.dev, &bin));
    CHECK_OK(lm_device_close(s.dev));
    lm_replay *r = NULL;
    REPLAY_RUN(bin, r);
    uint32_t replayed[8][16];
    CHECK_OK(lm_replay_get_output(r, "out", replayed, sizeof replayed));
    CHECK(memcmp(replayed, live, sizeof live) == 0);
    lm_replay_close(r);
    lm_binary_free(bin);
}

static void test_buffer_regions(void) {
    lm_device *dev = open_device();
    CHECK(dev);
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_buffer_config bc;
    lm_buffer_config_init(&bc);
    bc.size = 10 * PAGE;
    bc.page_size = PAGE;
    lm_buffer b;
    CHECK_OK(lm_create_buffer(dev, &bc, &b));
    CHECK_OK(lm_light_metal_begin_capture(dev, NULL));
    CHECK_OK(lm_capture_name_buffer(b, "b"));
    uint8_t all[10 * PAGE], patch[150], got[10 * PAGE], part[150];
    for (size_t i = 0; i < sizeof all; i++)
        all[i] = (uint8_t)(i * 3);
    for (size_t i = 0; i < sizeof patch; i++)
        patch[i] = (uint8_t)(0xF0 ^ i);
    CHECK_OK(lm_enqueue_write_buffer(cq, b, all, false));
    /* Across pages and banks, not page-aligned. */
    CHECK_OK(lm_enqueue_write_buffer_region(cq, b, 100, sizeof patch, patch, true));
    CHECK_OK(lm_enqueue_read_buffer(cq, b, got, true));
    memcpy(all + 100, patch, sizeof patch);
    CHECK(memcmp(got, all, sizeof all) == 0);
    CHECK_OK(lm_enqueue_read_buffer_region(cq, b, 90, sizeof part, part, true));
    CHECK(memcmp(part, all + 90, sizeof part) == 0);
    lm_binary *bin = NULL;
    CHECK_OK(lm_light_metal_end_capture(dev, &bin));
    /* Bad regions. */
    CHECK_FAILS(lm_enqueue_write_buffer_region(cq, b, 600, 41, patch, true),
                LM_ERR_INVALID_ARGUMENT,
                "lm_enqueue_write_buffer_region: region of 41 bytes at offset 600 exceeds the "
                "buffer's 640 bytes");
    CHECK_FAILS(lm_enqueue_read_buffer_region(cq, b, 0, 0, part, true), LM_ERR_INVALID_ARGUMENT,
                "lm_enqueue_read_buffer_region: size is 0");
    CHECK_FAILS(lm_enqueue_read_buffer_region(cq, b, UINT64_MAX, 2, part, true),
                LM_ERR_INVALID_ARGUMENT, "exceeds the buffer's 640 bytes");
    CHECK_FAILS(lm_enqueue_write_buffer_region(cq, b, 0, 4, NULL, true), LM_ERR_INVALID_ARGUMENT,
                "lm_enqueue_write_buffer_region: src is NULL");
    CHECK_OK(lm_device_close(dev));
    /* The replay writes the region too. */
    lm_replay *r = NULL;
    REPLAY_RUN(bin, r);
    CHECK_OK(lm_replay_get_output(r, "b", got, sizeof got));
    CHECK(memcmp(got, all, sizeof all) == 0);
    lm_replay_close(r);
    lm_binary_free(bin);
}

static int ranges_are(const lm_core_range_set *s, uint32_t n, const uint32_t *coords) {
    if (s->count != n) {
        printf("  %u ranges, want %u\n", s->count, n);
        return 0;
    }
    for (uint32_t i = 0; i < n; i++) {
        const lm_core_range *r = &s->ranges[i];
        const uint32_t *c = coords + 4 * i;
        if (r->start.x != c[0] || r->start.y != c[1] || r->end.x != c[2] || r->end.y != c[3]) {
            printf("  range %u: (%u,%u)-(%u,%u)\n", i, r->start.x, r->start.y, r->end.x, r->end.y);
            return 0;
        }
    }
    return 1;
}

static void test_split_work(void) {
    lm_work_split w;
    /* Fewer units than cores: one each, one group. */
    CHECK_OK(lm_split_work_to_cores((lm_core){8, 8}, 20, true, &w));
    CHECK(w.num_cores == 20 && w.units_per_core_group_1 == 1 && w.units_per_core_group_2 == 0);
    CHECK(ranges_are(&w.core_group_1, 2, (uint32_t[]){0, 0, 7, 1, 0, 2, 3, 2}));
    CHECK(w.core_group_2.count == 0);
    /* More: 36 cores take 2, 28 take 1. */
    CHECK_OK(lm_split_work_to_cores((lm_core){8, 8}, 100, true, &w));
    CHECK(w.num_cores == 64 && w.units_per_core_group_1 == 2 && w.units_per_core_group_2 == 1);
    CHECK(ranges_are(&w.core_group_1, 2, (uint32_t[]){0, 0, 7, 3, 0, 4, 3, 4}));
    CHECK(ranges_are(&w.core_group_2, 2, (uint32_t[]){4, 4, 7, 4, 0, 5, 7, 7}));
    CHECK(ranges_are(&w.all_cores, 1, (uint32_t[]){0, 0, 7, 7}));
    /* Column-major, an even split. */
    CHECK_OK(lm_split_work_to_cores((lm_core){3, 4}, 24, false, &w));
    CHECK(w.num_cores == 12 && w.units_per_core_group_1 == 2 && w.core_group_2.count == 0);
    CHECK(ranges_are(&w.core_group_1, 1, (uint32_t[]){0, 0, 2, 3}));
    CHECK_OK(lm_split_work_to_cores((lm_core){3, 4}, 5, false, &w));
    CHECK(ranges_are(&w.core_group_1, 2, (uint32_t[]){0, 0, 0, 3, 1, 0, 1, 0}));
    /* No work, and bad arguments. */
    CHECK_OK(lm_split_work_to_cores((lm_core){2, 2}, 0, true, &w));
    CHECK(w.num_cores == 0 && w.all_cores.count == 0);
    CHECK_FAILS(lm_split_work_to_cores((lm_core){0, 2}, 5, true, &w), LM_ERR_INVALID_ARGUMENT,
                "lm_split_work_to_cores: grid of 0x2 cores is empty");
    CHECK_FAILS(lm_split_work_to_cores((lm_core){2, 2}, 5, true, NULL), LM_ERR_INVALID_ARGUMENT,
                "out_split is NULL");
}

static void test_cores_and_l1(void) {
    lm_device *dev = open_device();
    CHECK(dev);
    lm_core noc;
    CHECK_OK(lm_worker_core_from_logical_core(dev, (lm_core){3, 1}, &noc));
    CHECK(noc.x == 3 && noc.y == 1);
    CHECK_FAILS(lm_worker_core_from_logical_core(dev, (lm_core){4, 1}, &noc),
                LM_ERR_INVALID_ARGUMENT, "core (4,1) is outside the 4x2 grid");
    CHECK_FAILS(lm_worker_core_from_logical_core(NULL, (lm_core){0, 0}, &noc),
                LM_ERR_INVALID_ARGUMENT, "device is NULL");
    uint8_t w[100], r[100];
    for (int i = 0; i < 100; i++)
        w[i] = (uint8_t)(i + 1);
    CHECK_OK(lm_device_write_l1(dev, (lm_core){1, 1}, L1_SPOT + 3, sizeof w, w));
    CHECK_OK(lm_device_read_l1(dev, (lm_core){1, 1}, L1_SPOT + 3, sizeof r, r));
    CHECK(memcmp(w, r, sizeof w) == 0);
    CHECK_OK(lm_device_read_l1(dev, (lm_core){0, 1}, L1_SPOT + 3, sizeof r, r));
    CHECK(memcmp(w, r, sizeof w) != 0); /* another core's L1 */
    CHECK_FAILS(lm_device_write_l1(dev, (lm_core){1, 1}, 0x100, 4, w), LM_ERR_INVALID_ARGUMENT,
                "lm_device_write_l1: L1 range of 4 bytes at 0x100 is not inside the unreserved "
                "L1 [0x10000, ");
    CHECK_FAILS(lm_device_read_l1(dev, (lm_core){1, 2}, L1_SPOT, 4, r), LM_ERR_INVALID_ARGUMENT,
                "lm_device_read_l1: core (1,2) is outside the 4x2 grid");
    CHECK_FAILS(lm_device_read_l1(dev, (lm_core){1, 1}, L1_SPOT, 0, r), LM_ERR_INVALID_ARGUMENT,
                "L1 range of 0 bytes");
    CHECK_FAILS(lm_device_read_l1(dev, (lm_core){1, 1}, UINT64_MAX - 1, 4, r),
                LM_ERR_INVALID_ARGUMENT, "is not inside the unreserved L1");
    CHECK_FAILS(lm_device_write_l1(dev, (lm_core){1, 1}, L1_SPOT, 4, NULL), LM_ERR_INVALID_ARGUMENT,
                "lm_device_write_l1: src is NULL");
    CHECK_OK(lm_device_close(dev));
}

/* Queue 1 runs a slow writer; queue 0 waits for its event before reading. */
static const char *slow_writer =
    "void kernel_main() {\n"
    "    volatile uint32_t *v = reinterpret_cast<volatile uint32_t *>(0x30000);\n"
    "    v[0] = 0;\n"
    "    for (uint32_t i = 0; i < 200000; i++) v[0] = v[0] + 1;\n"
    "    const InterleavedAddrGen<true> out = {get_arg_val<uint32_t>(0), 64};\n"
    "    noc_async_write_page(0, out, 0x30000);\n"
    "    noc_async_write_barrier();\n"
    "}\n";

static void test_events(void) {
    lm_device *dev = open_device();
    CHECK(dev);
    lm_command_queue *q0 = lm_device_command_queue(dev, 0), *q1 = lm_device_command_queue(dev, 1);
    lm_buffer_config bc;
    lm_buffer_config_init(&bc);
    bc.size = 2 * PAGE;
    bc.page_size = PAGE;
    lm_buffer b;
    lm_program prog;
    lm_kernel k;
    lm_core_range_set one = lm_core_range_set_of(0, 0, 0, 0);
    lm_kernel_config cfg;
    lm_kernel_config_init(&cfg, LM_PROCESSOR_DM0);
    CHECK_OK(lm_create_buffer(dev, &bc, &b));
    lm_event early;
    CHECK_OK(lm_enqueue_record_event(q1, &early)); /* before the capture */
    CHECK_OK(lm_light_metal_begin_capture(dev, NULL));
    CHECK_OK(lm_capture_name_buffer(b, "b"));
    uint8_t zero[2 * PAGE] = {0};
    CHECK_OK(lm_enqueue_write_buffer(q0, b, zero, true));
    CHECK_OK(lm_create_program(dev, &prog));
    CHECK_OK(lm_create_kernel_from_string(prog, "slow.cpp", slow_writer, &one, &cfg, &k));
    uint64_t a = 0;
    CHECK_OK(lm_buffer_address(b, &a));
    uint32_t args[] = {(uint32_t)a};
    CHECK_OK(lm_set_runtime_args(prog, k, (lm_core){0, 0}, args, 1));
    CHECK_OK(lm_enqueue_wait_for_event(q0, early)); /* long past: not recorded */
    CHECK_OK(lm_enqueue_program(q1, prog, false));
    lm_event done;
    CHECK_OK(lm_enqueue_record_event(q1, &done));
    CHECK_OK(lm_enqueue_wait_for_event(q0, done));
    uint32_t got[2 * PAGE / 4];
    CHECK_OK(lm_enqueue_read_buffer(q0, b, got, true));
    CHECK(got[0] == 200000);
    CHECK_OK(lm_event_synchronize(done));
    bool finished = false;
    CHECK_OK(lm_event_query(done, &finished));
    CHECK(finished);
    CHECK_OK(lm_enqueue_wait_for_event(q1, done)); /* its own queue: nothing to wait for */
    lm_binary *bin = NULL;
    CHECK_OK(lm_light_metal_end_capture(dev, &bin));
    /* Bad events and queues. */
    lm_event none = {0};
    CHECK_FAILS(lm_enqueue_wait_for_event(q0, none), LM_ERR_INVALID_ARGUMENT,
                "lm_enqueue_wait_for_event: the event was not recorded");
    CHECK_FAILS(lm_event_synchronize(none), LM_ERR_INVALID_ARGUMENT,
                "lm_event_synchronize: the event was not recorded");
    CHECK_FAILS(lm_event_query(done, NULL), LM_ERR_INVALID_ARGUMENT, "out_done is NULL");
    CHECK_FAILS(lm_enqueue_record_event(NULL, &none), LM_ERR_INVALID_HANDLE, "cq is NULL");
    CHECK_FAILS(lm_enqueue_record_event(q0, NULL), LM_ERR_INVALID_ARGUMENT, "out_event is NULL");
    CHECK_OK(lm_device_close(dev));

    lm_replay *r = NULL;
    REPLAY_RUN(bin, r);
    uint32_t replayed[2 * PAGE / 4];
    CHECK_OK(lm_replay_get_output(r, "b", replayed, sizeof replayed));
    CHECK(replayed[0] == 200000);
    lm_replay_close(r);
    lm_binary_free(bin);
}

/* Reports CB 0's write pointer, page size and fifo size into page 0 of the
 * DRAM buffer at arg 0. */
static const char *cb_probe =
    "void kernel_main() {\n"
    "    volatile uint32_t *v = reinterpret_cast<volatile uint32_t *>(0x40000);\n"
    "    v[0] = get_write_ptr(0);\n"
    "    v[1] = get_tile_size(0);\n"
    "    v[2] = lm_l1_word(LM_L1_CB_CONFIG)[1];\n"
    "    const InterleavedAddrGen<true> out = {get_arg_val<uint32_t>(0), 64};\n"
    "    noc_async_write_page(0, out, 0x40000);\n"
    "    noc_async_write_barrier();\n"
    "}\n";

static void test_dynamic_circular_buffers(void) {
    lm_device *dev = open_device();
    CHECK(dev);
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_buffer_config bc;
    lm_buffer_config_init(&bc);
    lm_buffer out, l1a, l1b;
    bc.size = PAGE;
    bc.page_size = PAGE;
    CHECK_OK(lm_create_buffer(dev, &bc, &out));
    bc.type = LM_BUFFER_L1;
    bc.size = 8 * 4096; /* one 4 KiB page per core of the 4x2 grid */
    bc.page_size = 4096;
    CHECK_OK(lm_create_buffer(dev, &bc, &l1a));
    CHECK_OK(lm_create_buffer(dev, &bc, &l1b));
    CHECK_OK(lm_light_metal_begin_capture(dev, NULL));
    CHECK_OK(lm_capture_name_buffer(out, "out"));
    lm_program prog;
    lm_kernel k;
    lm_core_range_set one = lm_core_range_set_of(0, 0, 0, 0);
    lm_kernel_config cfg;
    lm_kernel_config_init(&cfg, LM_PROCESSOR_DM0);
    CHECK_OK(lm_create_program(dev, &prog));
    lm_circular_buffer_config cc;
    lm_circular_buffer_config_init(&cc);
    cc.total_size = 2048;
    cc.index_count = 1;
    cc.indices[0] = (lm_cb_index_config){0, LM_DATA_FORMAT_FLOAT16_B, 1024};
    cc.globally_allocated = l1a;
    lm_circular_buffer dyn, own;
    CHECK_OK(lm_create_circular_buffer(prog, &one, &cc, &dyn));
    CHECK_OK(lm_create_kernel_from_string(prog, "probe.cpp", cb_probe, &one, &cfg, &k));
    uint64_t a = 0, aa = 0, ab = 0;
    CHECK_OK(lm_buffer_address(out, &a));
    CHECK_OK(lm_buffer_address(l1a, &aa));
    CHECK_OK(lm_buffer_address(l1b, &ab));
    CHECK_OK(lm_set_runtime_args(prog, k, (lm_core){0, 0}, (uint32_t[]){(uint32_t)a}, 1));
    uint32_t got[PAGE / 4];
    uint32_t seen[3][3];
    CHECK_OK(lm_enqueue_program(cq, prog, true));
    CHECK_OK(lm_enqueue_read_buffer(cq, out, got, true));
    memcpy(seen[0], got, sizeof seen[0]);
    CHECK(got[0] == aa && got[1] == 1024 && got[2] == 2048);
    /* Another buffer, a bigger total, a smaller page. */
    CHECK_OK(lm_update_dynamic_circular_buffer_address(prog, dyn, l1b));
    CHECK_OK(lm_update_circular_buffer_total_size(prog, dyn, 4096));
    CHECK_OK(lm_update_circular_buffer_page_size(prog, dyn, 0, 512));
    CHECK_OK(lm_enqueue_program(cq, prog, true));
    CHECK_OK(lm_enqueue_read_buffer(cq, out, got, true));
    CHECK(got[0] == ab && got[1] == 512 && got[2] == 4096);
    memcpy(seen[1], got, sizeof seen[1]);
    lm_binary *bin = NULL;
    CHECK_OK(lm_light_metal_end_capture(dev, &bin));

    /* The rules. */
    CHECK_FAILS(lm_update_circular_buffer_total_size(prog, dyn, 8192), LM_ERR_INVALID_ARGUMENT,
                "buffer must be an L1 buffer of this device holding at least total_size (8192)");
    CHECK_FAILS(lm_update_circular_buffer_total_size(prog, dyn, 1000), LM_ERR_INVALID_ARGUMENT,
                "total_size 1000 is not a multiple of indices[0].page_size 512");
    CHECK_FAILS(lm_update_circular_buffer_page_size(prog, dyn, 3, 512), LM_ERR_INVALID_ARGUMENT,
                "lm_update_circular_buffer_page_size: the circular buffer has no index 3");
    CHECK_FAILS(lm_update_dynamic_circular_buffer_address(prog, dyn, out), LM_ERR_INVALID_ARGUMENT,
                "must be an L1 buffer");
    CHECK_FAILS(lm_update_dynamic_circular_buffer_address(prog, dyn, (lm_buffer){0}),
                LM_ERR_INVALID_ARGUMENT, "buffer is {0}");
    lm_core_range_set other = lm_core_range_set_of(1, 0, 1, 0);
    cc.globally_allocated = (lm_buffer){0};
    cc.total_size = 4096;
    CHECK_OK(lm_create_circular_buffer(prog, &other, &cc, &own));
    CHECK_OK(lm_update_circular_buffer_total_size(prog, own, 2048));
    CHECK_FAILS(lm_update_circular_buffer_total_size(prog, own, 8192), LM_ERR_INVALID_ARGUMENT,
                "total size 8192 exceeds the 4096 bytes placed for the circular buffer");
    CHECK_FAILS(lm_update_dynamic_circular_buffer_address(prog, own, l1a), LM_ERR_INVALID_ARGUMENT,
                "only a circular buffer created in an L1 buffer's space (globally_allocated) can "
                "move to another");
    CHECK_FAILS(lm_update_circular_buffer_total_size(prog, (lm_circular_buffer){12345}, 2048),
                LM_ERR_INVALID_HANDLE, "is not one of this program's");
    CHECK_OK(lm_device_close(dev));

    /* The replay sees the same pointers and sizes as the live run's last launch. */
    lm_replay *r = NULL;
    REPLAY_RUN(bin, r);
    CHECK_OK(lm_replay_get_output(r, "out", got, sizeof got));
    CHECK(got[0] == seen[1][0] && got[1] == 512 && got[2] == 4096);
    lm_replay_close(r);
    lm_binary_free(bin);
}

int main(void) {
    TEST_RUN(test_dynamic_circular_buffers);
    TEST_RUN(test_events);
    TEST_RUN(test_runtime_args_many_cores);
    TEST_RUN(test_capture_and_replay);
    TEST_RUN(test_buffer_regions);
    TEST_RUN(test_split_work);
    TEST_RUN(test_cores_and_l1);
    return test_summary();
}
