/* Sharded L1 and DRAM buffers: each shard lands on its core (or DRAM bank) at
 * the buffer's address, host transfers see the pages in order, kernels
 * address pages through a sharded TensorAccessor, captures replay, and bad
 * specs get messages. */
#include <stdio.h>
#include <string.h>

#include "lightmetal/lightmetal.h"
#include "lm_test.h"
#include "lm_test_replay.h"

#define PAGE 64u

static lm_device *open_device(void) {
    lm_device_options o;
    lm_device_options_init(&o);
    o.grid_x = 4;
    o.grid_y = 4;
    o.dram_banks = 2;
    o.dram_bank_size = 16 << 20;
    o.num_threads = 2;
    lm_device *dev = NULL;
    return lm_device_open(&o, &dev) ? NULL : dev;
}

static lm_status sharded(lm_device *dev, lm_buffer_layout layout, uint32_t th, uint32_t tw,
                         uint32_t sh, uint32_t sw, lm_core_range_set cores, bool col_major,
                         lm_buffer *out) {
    lm_buffer_config c;
    lm_buffer_config_init(&c);
    c.type = LM_BUFFER_L1;
    c.layout = layout;
    c.size = (uint64_t)th * tw * PAGE;
    c.page_size = PAGE;
    c.shard = (lm_shard_spec){cores, sh, sw, th, tw, col_major};
    return lm_create_buffer(dev, &c, out);
}

/* Page p's bytes: p in every byte. Checks which core holds page p at local
 * slot `local`. */
static int page_on(lm_device *dev, lm_buffer b, uint32_t x, uint32_t y, uint32_t local,
                   uint8_t page) {
    uint64_t a = 0;
    uint8_t got[PAGE];
    if (lm_buffer_address(b, &a) ||
        lm_device_read_l1(dev, (lm_core){x, y}, a + local * PAGE, PAGE, got))
        return 0;
    for (uint32_t i = 0; i < PAGE; i++)
        if (got[i] != page) {
            printf("  core (%u,%u) slot %u holds page %u, want %u\n", x, y, local, got[i], page);
            return 0;
        }
    return 1;
}

static void fill_pages(uint8_t *v, uint32_t pages) {
    for (uint32_t p = 0; p < pages; p++)
        memset(v + p * PAGE, (int)p, PAGE);
}

static void test_placement(void) {
    lm_device *dev = open_device();
    CHECK(dev);
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    uint8_t v[16 * PAGE], back[16 * PAGE];
    fill_pages(v, 16);
    lm_buffer h, w, bl, bc;
    /* Height: 8x1 pages, shards of 2 rows on the cores of row 1. */
    CHECK_OK(sharded(dev, LM_BUFFER_HEIGHT_SHARDED, 8, 1, 2, 1, lm_core_range_set_of(0, 1, 3, 1),
                     false, &h));
    CHECK_OK(lm_enqueue_write_buffer(cq, h, v, true));
    CHECK(page_on(dev, h, 0, 1, 0, 0) && page_on(dev, h, 0, 1, 1, 1) &&
          page_on(dev, h, 3, 1, 1, 7));
    CHECK_OK(lm_enqueue_read_buffer(cq, h, back, true));
    CHECK(memcmp(back, v, 8 * PAGE) == 0);
    /* Width: 2x6 pages, shards of 3 columns, column-major over a 1x2 range. */
    CHECK_OK(sharded(dev, LM_BUFFER_WIDTH_SHARDED, 2, 6, 2, 3, lm_core_range_set_of(2, 2, 2, 3),
                     true, &w));
    CHECK_OK(lm_enqueue_write_buffer(cq, w, v, true));
    /* page 4 = row 0, col 4: shard 1 (core (2,3)), slot 1; page 9 = row 1 col 3: slot 3 */
    CHECK(page_on(dev, w, 2, 3, 1, 4) && page_on(dev, w, 2, 3, 3, 9) &&
          page_on(dev, w, 2, 2, 5, 8));
    /* Block: 4x4 pages, 2x2 shards on the rectangle (1,0)-(2,1); and
     * column-major, where shard (r, c) sits at (x0 + r, y0 + c). */
    CHECK_OK(sharded(dev, LM_BUFFER_BLOCK_SHARDED, 4, 4, 2, 2, lm_core_range_set_of(1, 0, 2, 1),
                     false, &bl));
    CHECK_OK(sharded(dev, LM_BUFFER_BLOCK_SHARDED, 4, 4, 2, 2, lm_core_range_set_of(1, 2, 2, 3),
                     true, &bc));
    CHECK_OK(lm_enqueue_write_buffer(cq, bl, v, true));
    CHECK_OK(lm_enqueue_write_buffer(cq, bc, v, true));
    /* page 6 = row 1, col 2: shard (0, 1); slot 1*2 + 0 = 2 */
    CHECK(page_on(dev, bl, 2, 0, 2, 6) && page_on(dev, bc, 1, 3, 2, 6));
    CHECK_OK(lm_enqueue_read_buffer(cq, bc, back, true));
    CHECK(memcmp(back, v, sizeof back) == 0);
    /* A region of a sharded buffer, across shards. */
    uint8_t patch[3 * PAGE], part[3 * PAGE];
    memset(patch, 0xEE, sizeof patch);
    CHECK_OK(lm_enqueue_write_buffer_region(cq, bl, 5 * PAGE + 7, sizeof patch, patch, true));
    CHECK_OK(lm_enqueue_read_buffer_region(cq, bl, 5 * PAGE + 7, sizeof part, part, true));
    CHECK(memcmp(part, patch, sizeof part) == 0);
    CHECK_OK(lm_device_close(dev));
}

static void test_bad_specs(void) {
    lm_device *dev = open_device();
    CHECK(dev);
    lm_buffer b;
    lm_core_range_set row = lm_core_range_set_of(0, 0, 3, 0);
    lm_buffer_config c;
    lm_buffer_config_init(&c);
    c.layout = LM_BUFFER_HEIGHT_SHARDED;
    c.size = 8 * PAGE;
    c.page_size = PAGE;
    c.shard = (lm_shard_spec){row, 2, 1, 8, 1, false};
    /* In DRAM the shards go to banks (b, 0): this device has two. */
    CHECK_FAILS(lm_create_buffer(dev, &c, &b), LM_ERR_INVALID_ARGUMENT,
                "lm_create_buffer: shard.cores range 0 (0,0)-(3,0) is empty or outside the 2x1 "
                "grid");
    c.shard.cores = lm_core_range_set_of(0, 0, 1, 1);
    CHECK_FAILS(lm_create_buffer(dev, &c, &b), LM_ERR_INVALID_ARGUMENT, "outside the 2x1 grid");
    CHECK_FAILS(sharded(dev, LM_BUFFER_HEIGHT_SHARDED, 8, 2, 2, 1, row, false, &b),
                LM_ERR_INVALID_ARGUMENT,
                "shard.shard_width 1 must equal tensor_width 2 for height sharding");
    CHECK_FAILS(sharded(dev, LM_BUFFER_WIDTH_SHARDED, 2, 8, 1, 2, row, false, &b),
                LM_ERR_INVALID_ARGUMENT,
                "shard.shard_height 1 must equal tensor_height 2 for width sharding");
    CHECK_FAILS(sharded(dev, LM_BUFFER_HEIGHT_SHARDED, 10, 1, 2, 1, row, false, &b),
                LM_ERR_INVALID_ARGUMENT, "shard.cores has 4 cores for 5 shards");
    CHECK_FAILS(sharded(dev, LM_BUFFER_BLOCK_SHARDED, 4, 6, 2, 2, lm_core_range_set_of(0, 0, 1, 1),
                        false, &b),
                LM_ERR_INVALID_ARGUMENT,
                "shard.cores must be one rectangle of at least 3x2 cores for 3x2 block shards");
    lm_core_range_set twice = row;
    twice.ranges[twice.count++] = (lm_core_range){{2, 0}, {2, 0}};
    CHECK_FAILS(sharded(dev, LM_BUFFER_HEIGHT_SHARDED, 8, 1, 2, 1, twice, false, &b),
                LM_ERR_INVALID_ARGUMENT, "shard.cores lists core (2,0) twice");
    CHECK_FAILS(sharded(dev, LM_BUFFER_HEIGHT_SHARDED, 8, 1, 2, 1, lm_core_range_set_of(0, 0, 4, 0),
                        false, &b),
                LM_ERR_INVALID_ARGUMENT, "outside the 4x4 grid");
    lm_buffer_config_init(&c);
    c.type = LM_BUFFER_L1;
    c.layout = LM_BUFFER_HEIGHT_SHARDED;
    c.size = 8 * PAGE;
    c.page_size = PAGE;
    c.shard = (lm_shard_spec){row, 2, 1, 4, 1, false};
    CHECK_FAILS(lm_create_buffer(dev, &c, &b), LM_ERR_INVALID_ARGUMENT,
                "shard.tensor_height x tensor_width = 4x1 pages, the buffer has 8");
    c.layout = (lm_buffer_layout)9;
    CHECK_FAILS(lm_create_buffer(dev, &c, &b), LM_ERR_INVALID_ARGUMENT,
                "layout 9 is not INTERLEAVED or HEIGHT, WIDTH or BLOCK_SHARDED");
    CHECK_OK(lm_device_close(dev));
}

/* Copies every page of a sharded buffer to an interleaved DRAM one. */
static const char *gather =
    "void kernel_main() {\n"
    "    constexpr auto in_args = TensorAccessorArgs<0>();\n"
    "    constexpr auto out_args = TensorAccessorArgs<in_args.next_compile_time_args_offset()>();\n"
    "    static_assert(in_args.is_sharded && !out_args.is_sharded);\n"
    "    const auto in = TensorAccessor(in_args, get_arg_val<uint32_t>(0), 64);\n"
    "    const auto out = TensorAccessor(out_args, get_arg_val<uint32_t>(1), 64);\n"
    "    for (uint32_t p = 0; p < get_arg_val<uint32_t>(2); p++) {\n"
    "        noc_async_read_page(p, in, 0x60000);\n"
    "        noc_async_read_barrier();\n"
    "        noc_async_write_page(p, out, 0x60000);\n"
    "        noc_async_write_barrier();\n"
    "    }\n"
    "}\n";

static void test_kernel_access_and_replay(void) {
    lm_device *dev = open_device();
    CHECK(dev);
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    CHECK_OK(lm_light_metal_begin_capture(dev, NULL));
    uint8_t v[24 * PAGE], back[24 * PAGE];
    fill_pages(v, 24);
    lm_buffer in, out;
    CHECK_OK(sharded(dev, LM_BUFFER_BLOCK_SHARDED, 4, 6, 2, 3, lm_core_range_set_of(1, 1, 3, 3),
                     false, &in));
    lm_buffer_config oc;
    lm_buffer_config_init(&oc);
    oc.size = sizeof v;
    oc.page_size = PAGE;
    CHECK_OK(lm_create_buffer(dev, &oc, &out));
    CHECK_OK(lm_capture_name_buffer(out, "out"));
    CHECK_OK(lm_enqueue_write_buffer(cq, in, v, true));
    uint32_t ct[2 * LM_TENSOR_ACCESSOR_MAX_ARGS], n = 0, m = 0;
    CHECK_OK(lm_tensor_accessor_args(in, ct, LM_TENSOR_ACCESSOR_MAX_ARGS, &n));
    CHECK(n == 8 + 2);
    CHECK_OK(lm_tensor_accessor_args(out, ct + n, LM_TENSOR_ACCESSOR_MAX_ARGS, &m));
    uint32_t small = 0;
    CHECK_FAILS(lm_tensor_accessor_args(in, ct, 3, &small), LM_ERR_INVALID_ARGUMENT,
                "capacity is 3, the buffer needs 10 words");
    lm_program prog;
    lm_kernel k;
    lm_core_range_set core = lm_core_range_set_of(0, 0, 0, 0);
    lm_kernel_config cfg;
    lm_kernel_config_init(&cfg, LM_PROCESSOR_DM0);
    cfg.compile_args = ct;
    cfg.compile_arg_count = n + m;
    CHECK_OK(lm_create_program(dev, &prog));
    CHECK_OK(lm_create_kernel_from_string(prog, "gather.cpp", gather, &core, &cfg, &k));
    uint64_t ia = 0, oa = 0;
    CHECK_OK(lm_buffer_address(in, &ia));
    CHECK_OK(lm_buffer_address(out, &oa));
    CHECK_OK(lm_set_runtime_args(prog, k, (lm_core){0, 0},
                                 (uint32_t[]){(uint32_t)ia, (uint32_t)oa, 24}, 3));
    CHECK_OK(lm_enqueue_program(cq, prog, true));
    CHECK_OK(lm_enqueue_read_buffer(cq, out, back, true));
    CHECK(memcmp(back, v, sizeof v) == 0);
    lm_binary *bin = NULL;
    CHECK_OK(lm_light_metal_end_capture(dev, &bin));

    /* Too few arguments for the sharded accessor: a compile error. */
    lm_kernel k2;
    cfg.compile_arg_count = 5;
    lm_core_range_set other = lm_core_range_set_of(0, 3, 0, 3);
    CHECK_FAILS(lm_create_kernel_from_string(prog, "short.cpp", gather, &other, &cfg, &k2),
                LM_ERR_COMPILE, "a sharded buffer's arguments are cut short");
    CHECK_OK(lm_device_close(dev));

    lm_replay *r = NULL;
    REPLAY_RUN(bin, r);
    memset(back, 0, sizeof back);
    CHECK_OK(lm_replay_get_output(r, "out", back, sizeof back));
    CHECK(memcmp(back, v, sizeof v) == 0);
    lm_replay_close(r);
    lm_binary_free(bin);
}

/* Copies a DRAM width-sharded buffer's pages to an interleaved one twice:
 * through its TensorAccessor (out 0) and through bank addresses computed
 * here from the documented placement (out 1), so both must agree with where
 * the host's writes put the pages. */
static const char *dram_gather =
    "void kernel_main() {\n"
    "    constexpr auto in_args = TensorAccessorArgs<0>();\n"
    "    constexpr auto out_args = TensorAccessorArgs<in_args.next_compile_time_args_offset()>();\n"
    "    static_assert(in_args.is_sharded && in_args.is_dram);\n"
    "    const uint32_t base = get_arg_val<uint32_t>(0), pages = get_arg_val<uint32_t>(3);\n"
    "    const auto in = TensorAccessor(in_args, base, 64);\n"
    "    const auto out0 = TensorAccessor(out_args, get_arg_val<uint32_t>(1), 64);\n"
    "    const auto out1 = TensorAccessor(out_args, get_arg_val<uint32_t>(2), 64);\n"
    "    for (uint32_t p = 0; p < pages; p++) {\n"
    "        noc_async_read_page(p, in, 0x60000);\n"
    "        noc_async_read_barrier();\n"
    "        noc_async_write_page(p, out0, 0x60000);\n"
    "        // 2x4 pages in 2x2 shards: column c on bank c / 2, slot r * 2 + c % 2.\n"
    "        const uint32_t r = p / 4, c = p % 4;\n"
    "        noc_async_read(get_noc_addr_from_bank_id<true>(c / 2, base + (r * 2 + c % 2) * 64),\n"
    "                       0x60000, 64);\n"
    "        noc_async_read_barrier();\n"
    "        noc_async_write_page(p, out1, 0x60000);\n"
    "        noc_async_write_barrier();\n"
    "    }\n"
    "}\n";

static void test_dram_shards(void) {
    lm_device *dev = open_device();
    CHECK(dev);
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    CHECK_OK(lm_light_metal_begin_capture(dev, NULL));
    uint8_t v[8 * PAGE], back[8 * PAGE];
    fill_pages(v, 8);
    lm_buffer_config c;
    lm_buffer_config_init(&c);
    c.layout = LM_BUFFER_WIDTH_SHARDED;
    c.size = sizeof v;
    c.page_size = PAGE;
    c.shard = (lm_shard_spec){lm_core_range_set_of(0, 0, 1, 0), 2, 2, 2, 4, false};
    lm_buffer in, out[2];
    CHECK_OK(lm_create_buffer(dev, &c, &in));
    lm_buffer_config oc;
    lm_buffer_config_init(&oc);
    oc.size = sizeof v;
    oc.page_size = PAGE;
    CHECK_OK(lm_create_buffer(dev, &oc, &out[0]));
    CHECK_OK(lm_create_buffer(dev, &oc, &out[1]));
    CHECK_OK(lm_capture_name_buffer(out[0], "by_accessor"));
    CHECK_OK(lm_capture_name_buffer(out[1], "by_bank"));
    CHECK_OK(lm_enqueue_write_buffer(cq, in, v, true));
    /* Host reads see the pages in order, also across a shard edge. */
    CHECK_OK(lm_enqueue_read_buffer(cq, in, back, true));
    CHECK(memcmp(back, v, sizeof v) == 0);
    uint8_t part[PAGE + 9];
    CHECK_OK(lm_enqueue_read_buffer_region(cq, in, 1 * PAGE + 60, sizeof part, part, true));
    CHECK(memcmp(part, v + PAGE + 60, sizeof part) == 0);

    uint32_t ct[2 * LM_TENSOR_ACCESSOR_MAX_ARGS], n = 0, m = 0;
    CHECK_OK(lm_tensor_accessor_args(in, ct, LM_TENSOR_ACCESSOR_MAX_ARGS, &n));
    CHECK(n == 8 + 1);
    CHECK(ct[1] == PAGE);            /* the aligned page */
    CHECK(ct[8] == (0u | 1u << 16)); /* shard 0 on bank (0,0), shard 1 on (1,0) */
    CHECK_OK(lm_tensor_accessor_args(out[0], ct + n, LM_TENSOR_ACCESSOR_MAX_ARGS, &m));
    lm_program prog;
    lm_kernel k;
    lm_core_range_set core = lm_core_range_set_of(2, 1, 2, 1);
    lm_kernel_config cfg;
    lm_kernel_config_init(&cfg, LM_PROCESSOR_DM1);
    cfg.compile_args = ct;
    cfg.compile_arg_count = n + m;
    CHECK_OK(lm_create_program(dev, &prog));
    CHECK_OK(lm_create_kernel_from_string(prog, "dram_gather.cpp", dram_gather, &core, &cfg, &k));
    uint64_t ia = 0, oa0 = 0, oa1 = 0;
    CHECK_OK(lm_buffer_address(in, &ia));
    CHECK_OK(lm_buffer_address(out[0], &oa0));
    CHECK_OK(lm_buffer_address(out[1], &oa1));
    CHECK_OK(lm_set_runtime_args(prog, k, (lm_core){2, 1},
                                 (uint32_t[]){(uint32_t)ia, (uint32_t)oa0, (uint32_t)oa1, 8}, 4));
    CHECK_OK(lm_enqueue_program(cq, prog, true));
    for (int i = 0; i < 2; i++) {
        memset(back, 0, sizeof back);
        CHECK_OK(lm_enqueue_read_buffer(cq, out[i], back, true));
        CHECK(memcmp(back, v, sizeof v) == 0);
    }
    lm_binary *bin = NULL;
    CHECK_OK(lm_light_metal_end_capture(dev, &bin));
    CHECK_OK(lm_device_close(dev));

    /* The capture records the DRAM shard spec; replay places pages the same. */
    lm_replay *r = NULL;
    REPLAY_RUN(bin, r);
    const char *names[] = {"by_accessor", "by_bank"};
    for (int i = 0; i < 2; i++) {
        memset(back, 0, sizeof back);
        CHECK_OK(lm_replay_get_output(r, names[i], back, sizeof back));
        CHECK(memcmp(back, v, sizeof v) == 0);
    }
    lm_replay_close(r);
    lm_binary_free(bin);
}

/* Interleaved buffers: the marker, then the page size rounded up to the
 * memory's alignment (DRAM 32, L1 16 bytes). */
static void test_accessor_args(void) {
    lm_device *dev = open_device();
    CHECK(dev);
    lm_buffer_config c;
    lm_buffer_config_init(&c);
    c.size = 4 * 100;
    c.page_size = 100;
    lm_buffer dram, l1;
    CHECK_OK(lm_create_buffer(dev, &c, &dram));
    c.type = LM_BUFFER_L1;
    CHECK_OK(lm_create_buffer(dev, &c, &l1));
    uint32_t a[LM_TENSOR_ACCESSOR_MAX_ARGS], n = 0;
    CHECK_OK(lm_tensor_accessor_args(dram, a, LM_TENSOR_ACCESSOR_MAX_ARGS, &n));
    CHECK(n == 2 && a[0] == 0x7A500001u && a[1] == 128);
    CHECK_OK(lm_tensor_accessor_args(l1, a, 2, &n));
    CHECK(n == 2 && a[0] == 0x7A500000u && a[1] == 112);
    CHECK_FAILS(lm_tensor_accessor_args(l1, a, 1, &n), LM_ERR_INVALID_ARGUMENT,
                "lm_tensor_accessor_args: capacity is 1, the buffer needs 2 words");
    CHECK_FAILS(lm_tensor_accessor_args(l1, NULL, 2, &n), LM_ERR_INVALID_ARGUMENT,
                "lm_tensor_accessor_args: out_args is NULL");
    CHECK_OK(lm_deallocate_buffer(l1));
    CHECK_FAILS(lm_tensor_accessor_args(l1, a, 2, &n), LM_ERR_INVALID_HANDLE,
                "lm_tensor_accessor_args");
    CHECK_OK(lm_device_close(dev));
}

int main(void) {
    TEST_RUN(test_placement);
    TEST_RUN(test_bad_specs);
    TEST_RUN(test_kernel_access_and_replay);
    TEST_RUN(test_dram_shards);
    TEST_RUN(test_accessor_args);
    return test_summary();
}
