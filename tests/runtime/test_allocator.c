/* runtime/allocator: first fit, both directions, fixed addresses, exhaustion. */
#include "lm_test.h"
#include "runtime/allocator.h"

static void test_bottom_up(void) {
    allocator a;
    alloc_init(&a, 100, 1100, 32, false); /* aligned range: [128, 1088) */
    uint64_t x, y, z;
    CHECK_OK(alloc_take(&a, 10, &x));
    CHECK_OK(alloc_take(&a, 64, &y));
    CHECK_EQ_U64(x, 128);
    CHECK_EQ_U64(y, 160);
    CHECK(alloc_give_back(&a, x));
    CHECK_OK(alloc_take(&a, 32, &z)); /* first fit reuses the hole */
    CHECK_EQ_U64(z, 128);
    CHECK(!alloc_give_back(&a, 999));
    CHECK_EQ_U64(alloc_used(&a), 96);
    alloc_destroy(&a);
}

static void test_top_down(void) {
    allocator a;
    alloc_init(&a, 0, 1024, 16, true);
    uint64_t x, y;
    CHECK_OK(alloc_take(&a, 100, &x));
    CHECK_OK(alloc_take(&a, 16, &y));
    CHECK_EQ_U64(x, 1024 - 112);
    CHECK_EQ_U64(y, 1024 - 128);
    alloc_destroy(&a);
}

static void test_take_at(void) {
    allocator a;
    alloc_init(&a, 0, 4096, 32, false);
    CHECK_OK(alloc_take_at(&a, 1024, 100));
    CHECK_FAILS(alloc_take_at(&a, 1056, 32), LM_ERR_OUT_OF_DEVICE_MEMORY,
                "overlaps the allocated block [0x400, +128)");
    CHECK_FAILS(alloc_take_at(&a, 992, 64), LM_ERR_OUT_OF_DEVICE_MEMORY, "[0x400, +128)");
    CHECK_FAILS(alloc_take_at(&a, 33, 32), LM_ERR_INVALID_ARGUMENT, "not aligned to 32 bytes");
    CHECK_FAILS(alloc_take_at(&a, 4064, 64), LM_ERR_INVALID_ARGUMENT, "outside the allocatable");
    CHECK_FAILS(alloc_take_at(&a, UINT64_MAX - 31, 64), LM_ERR_INVALID_ARGUMENT, "outside");
    CHECK_OK(alloc_take_at(&a, 992, 32)); /* exactly fits before the block */
    uint64_t x;
    CHECK_OK(alloc_take(&a, 32, &x));
    CHECK_EQ_U64(x, 0);
    CHECK_OK(alloc_take(&a, 2000, &x));
    CHECK_EQ_U64(x, 1152);
    alloc_destroy(&a);
}

static void test_exhaustion(void) {
    allocator a;
    alloc_init(&a, 0, 1024, 32, false);
    uint64_t x;
    CHECK_OK(alloc_take(&a, 512, &x));
    CHECK_FAILS(alloc_take(&a, 1024, &x), LM_ERR_OUT_OF_DEVICE_MEMORY,
                "1024 bytes per bank requested, largest free range is 512 bytes");
    CHECK_FAILS(alloc_take(&a, UINT64_MAX, &x), LM_ERR_OUT_OF_DEVICE_MEMORY, "cannot allocate");
    CHECK_EQ_U64(alloc_largest_free(&a), 512);
    CHECK_OK(alloc_take(&a, 512, &x)); /* the failures changed nothing */
    CHECK_EQ_U64(alloc_largest_free(&a), 0);
    alloc_destroy(&a);
}

/* The same call sequence always gives the same addresses. */
static void run_sequence(uint64_t *out, int n) {
    allocator a;
    alloc_init(&a, 0, 1 << 20, 32, false);
    uint32_t s = 12345;
    for (int i = 0; i < n; i++) {
        s = s * 1103515245u + 12345u;
        if (i % 3 == 2) alloc_give_back(&a, out[i - 2]);
        if (alloc_take(&a, (s >> 8) % 4000 + 1, &out[i])) out[i] = UINT64_MAX;
    }
    alloc_destroy(&a);
}

static void test_deterministic(void) {
    uint64_t a[300], b[300];
    run_sequence(a, 300);
    run_sequence(b, 300);
    CHECK(memcmp(a, b, sizeof a) == 0);
}

int main(void) {
    TEST_RUN(test_bottom_up);
    TEST_RUN(test_top_down);
    TEST_RUN(test_take_at);
    TEST_RUN(test_exhaustion);
    TEST_RUN(test_deterministic);
    return test_summary();
}
