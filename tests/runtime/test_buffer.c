/* Public buffer API: allocation rules, determinism, fixed addresses, handles. */
#include <sys/wait.h>
#include <unistd.h>

#include "lightmetal/lightmetal.h"
#include "lm_test.h"
#include "lm_test_child.h"

static lm_device *open_small(void) {
    lm_device_options o;
    lm_device_options_init(&o);
    o.grid_x = 2;
    o.grid_y = 2;
    o.l1_size = 256 * 1024;
    o.dram_banks = 4;
    o.dram_bank_size = 1 << 20;
    o.trace_region_size = 64 * 1024;
    lm_device *dev = NULL;
    if (lm_device_open(&o, &dev)) return NULL;
    return dev;
}

static lm_buffer_config config(lm_buffer_type type, uint64_t size, uint64_t page_size) {
    lm_buffer_config c;
    lm_buffer_config_init(&c);
    c.type = type;
    c.size = size;
    c.page_size = page_size;
    return c;
}

static void test_create_query_deallocate(void) {
    lm_device *dev = open_small();
    CHECK(dev);
    lm_buffer_config c = config(LM_BUFFER_DRAM, 4096, 1024);
    lm_buffer b;
    CHECK_OK(lm_create_buffer(dev, &c, &b));
    CHECK(b.id != 0);
    uint64_t addr, size;
    CHECK_OK(lm_buffer_address(b, &addr));
    CHECK_OK(lm_buffer_size(b, &size));
    CHECK_EQ_U64(addr, 0);
    CHECK_EQ_U64(size, 4096);
    lm_buffer_config got;
    CHECK_OK(lm_buffer_get_config(b, &got));
    CHECK(got.type == LM_BUFFER_DRAM && got.layout == LM_BUFFER_INTERLEAVED);
    CHECK(got.page_size == 1024 && got.address == addr);
    CHECK_OK(lm_deallocate_buffer(b));
    CHECK_OK(lm_device_close(dev));
}

static void test_bad_configs(void) {
    lm_device *dev = open_small();
    CHECK(dev);
    lm_buffer b = {77};
    lm_buffer_config c = config(LM_BUFFER_DRAM, 0, 64);
    CHECK_FAILS(lm_create_buffer(dev, &c, &b), LM_ERR_INVALID_ARGUMENT,
                "lm_create_buffer: size is 0");
    c = config(LM_BUFFER_DRAM, 64, 0);
    CHECK_FAILS(lm_create_buffer(dev, &c, &b), LM_ERR_INVALID_ARGUMENT, "page_size is 0");
    c = config(LM_BUFFER_DRAM, 1000, 64);
    CHECK_FAILS(lm_create_buffer(dev, &c, &b), LM_ERR_INVALID_ARGUMENT,
                "size 1000 is not a multiple of page_size 64");
    c = config((lm_buffer_type)7, 64, 64);
    CHECK_FAILS(lm_create_buffer(dev, &c, &b), LM_ERR_INVALID_ARGUMENT, "type 7 is not");
    c = config(LM_BUFFER_TYPE_INVALID, 64, 64);
    CHECK_FAILS(lm_create_buffer(dev, &c, &b), LM_ERR_INVALID_ARGUMENT, "type 0 is not");
    c = config(LM_BUFFER_DRAM, 64, 64);
    c.layout = LM_BUFFER_LAYOUT_INVALID;
    CHECK_FAILS(lm_create_buffer(dev, &c, &b), LM_ERR_INVALID_ARGUMENT, "layout 0 is not");
    c = config(LM_BUFFER_DRAM, 64, 64);
    CHECK_FAILS(lm_create_buffer(NULL, &c, &b), LM_ERR_INVALID_HANDLE, "device is NULL");
    CHECK_FAILS(lm_create_buffer(dev, NULL, &b), LM_ERR_INVALID_ARGUMENT, "cfg is NULL");
    CHECK_FAILS(lm_create_buffer(dev, &c, NULL), LM_ERR_INVALID_ARGUMENT, "out_buffer is NULL");
    CHECK(b.id == 77); /* outputs are written only on success */
    /* Nothing leaked into the allocator: the first buffer still lands at 0. */
    CHECK_OK(lm_create_buffer(dev, &c, &b));
    uint64_t addr;
    CHECK_OK(lm_buffer_address(b, &addr));
    CHECK_EQ_U64(addr, 0);
    CHECK_OK(lm_device_close(dev));
}

static void test_out_of_memory(void) {
    lm_device *dev = open_small();
    CHECK(dev);
    lm_buffer b, keep;
    /* 4 banks of 1 MiB minus a 64 KiB trace region: 960 KiB per bank. */
    lm_buffer_config c = config(LM_BUFFER_DRAM, 4ull << 20, 1024);
    CHECK_FAILS(lm_create_buffer(dev, &c, &b), LM_ERR_OUT_OF_DEVICE_MEMORY,
                "DRAM buffer of 4194304 bytes: out of device memory: 1048576 bytes per bank "
                "requested, largest free range is 983040 bytes");
    c = config(LM_BUFFER_DRAM, 4 * 983040, 1024);
    CHECK_OK(lm_create_buffer(dev, &c, &keep)); /* exactly fills DRAM */
    c = config(LM_BUFFER_DRAM, 32, 32);
    CHECK_FAILS(lm_create_buffer(dev, &c, &b), LM_ERR_OUT_OF_DEVICE_MEMORY,
                "largest free range "
                "is 0 bytes");
    c = config(LM_BUFFER_L1, 4ull * 256 * 1024, 1024);
    CHECK_FAILS(lm_create_buffer(dev, &c, &b), LM_ERR_OUT_OF_DEVICE_MEMORY, "L1 buffer");
    c = config(LM_BUFFER_DRAM, UINT64_MAX - 10, UINT64_MAX - 10); /* stride overflows */
    CHECK_FAILS(lm_create_buffer(dev, &c, &b), LM_ERR_OUT_OF_DEVICE_MEMORY, "cannot fit any bank");
    /* After freeing, the space is usable again. */
    CHECK_OK(lm_deallocate_buffer(keep));
    c = config(LM_BUFFER_DRAM, 4 * 983040, 1024);
    CHECK_OK(lm_create_buffer(dev, &c, &keep));
    CHECK_OK(lm_device_close(dev));
}

static void test_l1_top_down_dram_bottom_up(void) {
    lm_device *dev = open_small();
    CHECK(dev);
    lm_device_info info;
    CHECK_OK(lm_device_get_info(dev, &info));
    lm_buffer a, b;
    lm_buffer_config c = config(LM_BUFFER_L1, 4 * 1024, 1024); /* one page per core */
    CHECK_OK(lm_create_buffer(dev, &c, &a));
    CHECK_OK(lm_create_buffer(dev, &c, &b));
    uint64_t aa, ba;
    CHECK_OK(lm_buffer_address(a, &aa));
    CHECK_OK(lm_buffer_address(b, &ba));
    CHECK_EQ_U64(aa, info.l1_size - 1024);
    CHECK_EQ_U64(ba, info.l1_size - 2048);
    /* Page size 100 is padded to the 16-byte L1 alignment: 112 bytes per page. */
    c = config(LM_BUFFER_L1, 800, 100);
    CHECK_OK(lm_create_buffer(dev, &c, &a));
    CHECK_OK(lm_buffer_address(a, &aa));
    CHECK_EQ_U64(aa, info.l1_size - 2048 - 2 * 112);
    c = config(LM_BUFFER_DRAM, 100, 100);
    CHECK_OK(lm_create_buffer(dev, &c, &a));
    CHECK_OK(lm_create_buffer(dev, &c, &b));
    CHECK_OK(lm_buffer_address(b, &ba));
    CHECK_EQ_U64(ba, 128); /* 100 rounded to the 32-byte DRAM alignment */
    CHECK_OK(lm_device_close(dev));
}

/* Per-bank statistics: what is taken now, the peak, and a reset of it. */
static void test_memory_stats(void) {
    lm_device *dev = open_small();
    CHECK(dev);
    lm_device_info info;
    CHECK_OK(lm_device_get_info(dev, &info));
    lm_memory_stats ms;
    CHECK_OK(lm_device_get_memory_stats(dev, LM_BUFFER_DRAM, &ms));
    CHECK_EQ_U64(ms.banks, 4);
    CHECK_EQ_U64(ms.total_allocatable_bytes, info.trace_region_base - info.dram_unreserved_base);
    CHECK_EQ_U64(ms.total_allocated_bytes, 0);
    CHECK_EQ_U64(ms.peak_allocated_bytes, 0);
    CHECK_EQ_U64(ms.largest_free_block_bytes, ms.total_allocatable_bytes);
    lm_buffer a, b;
    lm_buffer_config c = config(LM_BUFFER_DRAM, 8 * 1024, 1024); /* 2 pages per bank */
    CHECK_OK(lm_create_buffer(dev, &c, &a));
    c = config(LM_BUFFER_DRAM, 4 * 1024, 1024);
    CHECK_OK(lm_create_buffer(dev, &c, &b));
    CHECK_OK(lm_deallocate_buffer(a));
    CHECK_OK(lm_device_get_memory_stats(dev, LM_BUFFER_DRAM, &ms));
    CHECK_EQ_U64(ms.total_allocated_bytes, 1024);
    CHECK_EQ_U64(ms.peak_allocated_bytes, 3 * 1024);
    CHECK_EQ_U64(ms.total_free_bytes, ms.total_allocatable_bytes - 1024);
    CHECK_OK(lm_device_reset_memory_peak(dev, LM_BUFFER_DRAM));
    CHECK_OK(lm_device_get_memory_stats(dev, LM_BUFFER_DRAM, &ms));
    CHECK_EQ_U64(ms.peak_allocated_bytes, 1024);
    /* L1: a bank per core; its statistics are its own. */
    c = config(LM_BUFFER_L1, 4 * 2048, 2048);
    CHECK_OK(lm_create_buffer(dev, &c, &a));
    CHECK_OK(lm_device_get_memory_stats(dev, LM_BUFFER_L1, &ms));
    CHECK_EQ_U64(ms.banks, 4);
    CHECK_EQ_U64(ms.total_allocated_bytes, 2048);
    CHECK_EQ_U64(ms.peak_allocated_bytes, 2048);
    CHECK_FAILS(lm_device_get_memory_stats(NULL, LM_BUFFER_DRAM, &ms), LM_ERR_INVALID_HANDLE,
                "lm_device_get_memory_stats: device is NULL");
    CHECK_FAILS(lm_device_get_memory_stats(dev, (lm_buffer_type)7, &ms), LM_ERR_INVALID_ARGUMENT,
                "type 7 is not LM_BUFFER_DRAM (1) or LM_BUFFER_L1 (2)");
    CHECK_FAILS(lm_device_get_memory_stats(dev, LM_BUFFER_L1, NULL), LM_ERR_INVALID_ARGUMENT,
                "out_stats is NULL");
    CHECK_FAILS(lm_device_reset_memory_peak(dev, LM_BUFFER_TYPE_INVALID), LM_ERR_INVALID_ARGUMENT,
                "lm_device_reset_memory_peak: type 0");
    CHECK_OK(lm_device_close(dev));
}

static void test_at_address(void) {
    lm_device *dev = open_small();
    CHECK(dev);
    lm_buffer a, b;
    lm_buffer_config c = config(LM_BUFFER_DRAM, 8192, 1024);
    c.at_address = true;
    c.address = 0x8000;
    CHECK_OK(lm_create_buffer(dev, &c, &a));
    uint64_t addr;
    CHECK_OK(lm_buffer_address(a, &addr));
    CHECK_EQ_U64(addr, 0x8000);
    CHECK_FAILS(lm_create_buffer(dev, &c, &b), LM_ERR_OUT_OF_DEVICE_MEMORY,
                "overlaps the allocated block [0x8000, +2048)");
    c.address = 0x8010;
    CHECK_FAILS(lm_create_buffer(dev, &c, &b), LM_ERR_INVALID_ARGUMENT, "not aligned");
    c.address = 983040 - 1024; /* would run into the trace region */
    CHECK_FAILS(lm_create_buffer(dev, &c, &b), LM_ERR_INVALID_ARGUMENT, "outside the allocatable");
    /* A normal allocation skips around the fixed one. */
    lm_buffer_config n = config(LM_BUFFER_DRAM, 4 * 0x8000, 1024);
    CHECK_OK(lm_create_buffer(dev, &n, &b));
    CHECK_OK(lm_buffer_address(b, &addr));
    CHECK_EQ_U64(addr, 0);
    CHECK_OK(lm_create_buffer(dev, &n, &b));
    CHECK_OK(lm_buffer_address(b, &addr));
    CHECK_EQ_U64(addr, 0x8000 + 2048);
    CHECK_OK(lm_device_close(dev));
}

/* 20,000 live buffers through the public API: first-fit addresses, holes
 * refilled lowest first, stale handles caught, and everything given back
 * merges into one free range again. */
static void test_20000_live_buffers(void) {
    enum { N = 20000 };
    static lm_buffer bufs[N];
    lm_device *dev = open_small();
    CHECK(dev);
    lm_buffer_config c = config(LM_BUFFER_DRAM, 4 * 32, 32); /* 32 bytes in each bank */
    uint64_t addr;
    for (int i = 0; i < N; i++) {
        CHECK_OK(lm_create_buffer(dev, &c, &bufs[i]));
        CHECK_OK(lm_buffer_address(bufs[i], &addr));
        CHECK_EQ_U64(addr, (uint64_t)i * 32);
    }
    for (int i = 0; i < N; i += 2)
        CHECK_OK(lm_deallocate_buffer(bufs[i]));
    CHECK_FAILS(lm_buffer_address(bufs[N / 2], &addr), LM_ERR_INVALID_HANDLE, "stale");
    for (int i = 0; i < N; i += 2) {
        CHECK_OK(lm_create_buffer(dev, &c, &bufs[i]));
        CHECK_OK(lm_buffer_address(bufs[i], &addr));
        CHECK_EQ_U64(addr, (uint64_t)i * 32);
    }
    for (int i = 0; i < N; i++) {
        CHECK_OK(lm_buffer_address(bufs[i], &addr));
        CHECK_EQ_U64(addr, (uint64_t)i * 32);
        CHECK_OK(lm_deallocate_buffer(bufs[i]));
    }
    lm_buffer all;
    c = config(LM_BUFFER_DRAM, 4 * 983040, 1024); /* the whole of DRAM, in one range */
    CHECK_OK(lm_create_buffer(dev, &c, &all));
    CHECK_OK(lm_buffer_address(all, &addr));
    CHECK_EQ_U64(addr, 0);
    CHECK_OK(lm_device_close(dev));
}

static void test_stale_handles(void) {
    lm_device *dev = open_small();
    CHECK(dev);
    lm_buffer_config c = config(LM_BUFFER_DRAM, 1024, 1024);
    lm_buffer b, other;
    CHECK_OK(lm_create_buffer(dev, &c, &b));
    CHECK_OK(lm_deallocate_buffer(b));
    CHECK_FAILS(lm_deallocate_buffer(b), LM_ERR_INVALID_HANDLE,
                "lm_deallocate_buffer: buffer handle is stale");
    uint64_t v;
    CHECK_FAILS(lm_buffer_address(b, &v), LM_ERR_INVALID_HANDLE,
                "lm_buffer_address: buffer "
                "handle is stale");
    CHECK_FAILS(lm_buffer_size(b, &v), LM_ERR_INVALID_HANDLE, "stale");
    uint8_t data[1024] = {0};
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    CHECK_FAILS(lm_enqueue_write_buffer(cq, b, data, true), LM_ERR_INVALID_HANDLE,
                "lm_enqueue_write_buffer: buffer handle is stale");
    CHECK_FAILS(lm_enqueue_read_buffer(cq, b, data, false), LM_ERR_INVALID_HANDLE, "stale");
    /* A new buffer reuses the slot; the old handle stays stale. */
    CHECK_OK(lm_create_buffer(dev, &c, &other));
    CHECK(other.id != b.id);
    CHECK_FAILS(lm_buffer_size(b, &v), LM_ERR_INVALID_HANDLE, "stale");
    CHECK_OK(lm_buffer_size(other, &v));
    lm_buffer zero = {0}, junk = {0xdeadbeefcafeull};
    CHECK_FAILS(lm_buffer_size(zero, &v), LM_ERR_INVALID_HANDLE, "is null");
    CHECK_FAILS(lm_buffer_size(junk, &v), LM_ERR_INVALID_HANDLE, "buffer handle");
    CHECK_FAILS(lm_buffer_size(other, NULL), LM_ERR_INVALID_ARGUMENT, "out_size is NULL");
    CHECK_FAILS(lm_buffer_address(other, NULL), LM_ERR_INVALID_ARGUMENT, "out_address is NULL");
    CHECK_FAILS(lm_buffer_get_config(other, NULL), LM_ERR_INVALID_ARGUMENT, "out_cfg is NULL");
    /* Closing the device makes its buffers' handles stale. */
    CHECK_OK(lm_device_close(dev));
    CHECK_FAILS(lm_buffer_size(other, &v), LM_ERR_INVALID_HANDLE, "stale");
    CHECK_FAILS(lm_deallocate_buffer(other), LM_ERR_INVALID_HANDLE, "stale");
}

/* A fixed sequence of creates and frees; returns the addresses in order. */
static int address_sequence(uint64_t *out, int n) {
    lm_device *dev = open_small();
    if (!dev) return -1;
    lm_buffer live[64] = {{0}};
    uint32_t s = 99;
    for (int i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        int slot = (int)(s >> 26);
        if (live[slot].id) {
            lm_deallocate_buffer(live[slot]);
            live[slot].id = 0;
        }
        lm_buffer_config c =
            config(s & 1 ? LM_BUFFER_L1 : LM_BUFFER_DRAM, ((s >> 8) % 16 + 1) * 256, 256);
        out[i] = UINT64_MAX;
        if (!lm_create_buffer(dev, &c, &live[slot])) lm_buffer_address(live[slot], &out[i]);
    }
    return lm_device_close(dev) ? -1 : 0;
}

static int sequence_in_child(void *ctx, void *out) {
    (void)ctx;
    return address_sequence(out, 400) == 0;
}

static void test_deterministic_across_processes(void) {
    enum { N = 400 };
    uint64_t mine[N], again[N], theirs[N];
    CHECK(address_sequence(mine, N) == 0);
    CHECK(address_sequence(again, N) == 0);
    CHECK(memcmp(mine, again, sizeof mine) == 0);
    CHECK(test_in_child(sequence_in_child, NULL, theirs, sizeof theirs));
    CHECK(memcmp(mine, theirs, sizeof mine) == 0);
}

int main(void) {
    TEST_RUN(test_create_query_deallocate);
    TEST_RUN(test_bad_configs);
    TEST_RUN(test_out_of_memory);
    TEST_RUN(test_l1_top_down_dram_bottom_up);
    TEST_RUN(test_at_address);
    TEST_RUN(test_memory_stats);
    TEST_RUN(test_stale_handles);
    TEST_RUN(test_20000_live_buffers);
    TEST_RUN(test_deterministic_across_processes);
    return test_summary();
}
