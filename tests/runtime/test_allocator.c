/* runtime/allocator: first fit, both directions, fixed addresses, exhaustion;
 * the placement policy against a reference model (addresses are recorded in
 * captured files, so they must never change). */
#include "lm_test.h"
#include "runtime/allocator.h"

#define MODEL_MAX 4096

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

/* ---- reference model: the placement policy in its plainest form, a sorted
 * array of blocks scanned from one end (first fit over the holes) ---- */

typedef struct model {
    uint64_t base, end, alignment;
    bool top_down;
    uint64_t addr[MODEL_MAX], size[MODEL_MAX];
    int count;
} model;

static void model_init(model *m, uint64_t base, uint64_t end, uint64_t alignment, bool top_down) {
    m->alignment = alignment;
    m->base = (base + alignment - 1) / alignment * alignment;
    m->end = end / alignment * alignment;
    if (m->end < m->base) m->end = m->base;
    m->top_down = top_down;
    m->count = 0;
}

/* The hole before block i (i == count: after the last block). */
static void model_hole(const model *m, int i, uint64_t *start, uint64_t *end) {
    *start = i == 0 ? m->base : m->addr[i - 1] + m->size[i - 1];
    *end = i == m->count ? m->end : m->addr[i];
}

static void model_insert(model *m, int i, uint64_t address, uint64_t size) {
    memmove(&m->addr[i + 1], &m->addr[i], (size_t)(m->count - i) * sizeof m->addr[0]);
    memmove(&m->size[i + 1], &m->size[i], (size_t)(m->count - i) * sizeof m->size[0]);
    m->addr[i] = address;
    m->size[i] = size;
    m->count++;
}

/* Returns the address, or UINT64_MAX when nothing fits. */
static uint64_t model_take(model *m, uint64_t need) {
    for (int k = 0; k <= m->count; k++) {
        int i = m->top_down ? m->count - k : k;
        uint64_t start, end;
        model_hole(m, i, &start, &end);
        if (end - start < need) continue;
        uint64_t address = m->top_down ? end - need : start;
        model_insert(m, i, address, need);
        return address;
    }
    return UINT64_MAX;
}

/* Returns -1 when taken, else the index of the block in the way. */
static int model_take_at(model *m, uint64_t address, uint64_t need) {
    int i = 0;
    while (i < m->count && m->addr[i] < address)
        i++;
    uint64_t start, end;
    model_hole(m, i, &start, &end);
    if (address < start) return i - 1;
    if (address + need > end) return i;
    model_insert(m, i, address, need);
    return -1;
}

static bool model_give_back(model *m, uint64_t address) {
    for (int i = 0; i < m->count; i++)
        if (m->addr[i] == address) {
            memmove(&m->addr[i], &m->addr[i + 1], (size_t)(m->count - i - 1) * sizeof m->addr[0]);
            memmove(&m->size[i], &m->size[i + 1], (size_t)(m->count - i - 1) * sizeof m->size[0]);
            m->count--;
            return true;
        }
    return false;
}

static uint64_t model_used(const model *m) {
    uint64_t used = 0;
    for (int i = 0; i < m->count; i++)
        used += m->size[i];
    return used;
}

static uint64_t model_largest_free(const model *m) {
    uint64_t best = 0;
    for (int i = 0; i <= m->count; i++) {
        uint64_t start, end;
        model_hole(m, i, &start, &end);
        if (end - start > best) best = end - start;
    }
    return best;
}

static uint64_t rng_state;
static uint64_t rng(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* One random session: takes, takes at an address (free, taken, misaligned or
 * out of range), give-backs of live and random addresses; after every step the
 * allocator and the model must agree on the outcome and on the queries. */
static void random_session(uint64_t seed, int steps) {
    static model m;
    allocator a;
    rng_state = seed;
    uint64_t alignment = 1ull << (rng() % 7);
    uint64_t base = rng() % 512, end = base + (rng() % 2 ? 4096 : 1 << 20) + rng() % 1000;
    bool top_down = rng() % 2;
    /* Small or large requests, so the memory is sometimes full, sometimes
     * riddled with holes. */
    uint64_t max_size = rng() % 2 ? 64 : 1 + rng() % 40000;
    alloc_init(&a, base, end, alignment, top_down);
    model_init(&m, base, end, alignment, top_down);
    char want[128];
    for (int s = 0; s < steps; s++) {
        uint64_t r = rng() % 16;
        if (r < 7 && m.count < MODEL_MAX) {
            uint64_t size = rng() % max_size, need = (size + alignment - 1) / alignment * alignment;
            uint64_t got = UINT64_MAX, expect = size ? model_take(&m, need) : UINT64_MAX;
            lm_status st = alloc_take(&a, size, &got);
            if (expect == UINT64_MAX) {
                CHECK_STATUS(st, LM_ERR_OUT_OF_DEVICE_MEMORY);
            } else {
                CHECK_OK(st);
                CHECK_EQ_U64(got, expect);
            }
        } else if (r < 10 && m.count < MODEL_MAX) {
            uint64_t address = base + rng() % (m.end - base + 64);
            if (rng() % 8) address = address / alignment * alignment;
            if (rng() % 2 && m.count) address = m.addr[rng() % m.count] + rng() % 3 * alignment;
            uint64_t size = 1 + rng() % max_size,
                     need = (size + alignment - 1) / alignment * alignment;
            lm_status st = alloc_take_at(&a, address, size);
            if (address % alignment) {
                CHECK_FAILS(st, LM_ERR_INVALID_ARGUMENT, "is not aligned");
            } else if (address < m.base || address + need > m.end) {
                CHECK_FAILS(st, LM_ERR_INVALID_ARGUMENT, "outside the allocatable range");
            } else {
                int in_way = model_take_at(&m, address, need);
                if (in_way < 0) {
                    CHECK_OK(st);
                } else {
                    snprintf(want, sizeof want, "overlaps the allocated block [0x%llx, +%llu)",
                             (unsigned long long)m.addr[in_way],
                             (unsigned long long)m.size[in_way]);
                    CHECK_FAILS(st, LM_ERR_OUT_OF_DEVICE_MEMORY, want);
                }
            }
        } else {
            uint64_t address = m.count && rng() % 8 ? m.addr[rng() % m.count] : rng() % m.end;
            CHECK(alloc_give_back(&a, address) == model_give_back(&m, address));
        }
        CHECK_EQ_U64(alloc_used(&a), model_used(&m));
        CHECK_EQ_U64(alloc_largest_free(&a), model_largest_free(&m));
        CHECK_EQ_U64(alloc_lowest(&a), m.count ? m.addr[0] : m.end);
    }
    alloc_destroy(&a);
}

static void test_matches_reference_model(void) {
    for (uint64_t seed = 1; seed <= 40; seed++) {
        int before = test_current_failed_;
        random_session(seed * 0x9e3779b97f4a7c15ull, 3000);
        if (!before && test_current_failed_) printf("  (seed %llu)\n", (unsigned long long)seed);
        CHECK(!test_current_failed_);
    }
}

/* Many live blocks: every address as first fit gives it, holes refilled in
 * address order, everything given back merges into one free range. */
static void test_20000_live_blocks(void) {
    enum { N = 20000 };
    static uint64_t at[N];
    for (int dir = 0; dir < 2; dir++) {
        bool top_down = dir == 1;
        allocator a;
        alloc_init(&a, 0, (uint64_t)N * 64 + 4096, 32, top_down);
        uint64_t end = (uint64_t)N * 64 + 4096;
        for (int i = 0; i < N; i++) {
            CHECK_OK(alloc_take(&a, 64, &at[i]));
            CHECK_EQ_U64(at[i], top_down ? end - (uint64_t)(i + 1) * 64 : (uint64_t)i * 64);
        }
        CHECK_EQ_U64(alloc_used(&a), (uint64_t)N * 64);
        CHECK_EQ_U64(alloc_largest_free(&a), 4096);
        /* Free every other block: 10,000 holes of 64 bytes. */
        for (int i = 0; i < N; i += 2)
            CHECK(alloc_give_back(&a, at[i]));
        CHECK_EQ_U64(alloc_largest_free(&a), 4096);
        /* 128 bytes fit no hole: they go to the remaining free range. */
        uint64_t x;
        CHECK_OK(alloc_take(&a, 128, &x));
        CHECK_EQ_U64(x, top_down ? 4096 - 128 : (uint64_t)N * 64);
        CHECK(alloc_give_back(&a, x));
        /* 32 bytes go to the first hole from the allocator's end, twice. */
        for (int k = 0; k < 2; k++) {
            CHECK_OK(alloc_take(&a, 32, &x));
            CHECK_EQ_U64(x, top_down ? at[0] + 32 - (uint64_t)k * 32 : at[0] + (uint64_t)k * 32);
        }
        CHECK(alloc_give_back(&a, at[0]));
        CHECK(alloc_give_back(&a, at[0] + 32));
        /* Fixed addresses inside holes and across blocks. */
        CHECK_OK(alloc_take_at(&a, at[N / 2], 64));
        CHECK_FAILS(alloc_take_at(&a, at[N / 2 + 1] + 32, 32), LM_ERR_OUT_OF_DEVICE_MEMORY,
                    "overlaps the allocated block");
        CHECK(alloc_give_back(&a, at[N / 2]));
        for (int i = 1; i < N; i += 2)
            CHECK(alloc_give_back(&a, at[i]));
        CHECK(!alloc_give_back(&a, at[1]));
        CHECK_EQ_U64(alloc_used(&a), 0);
        CHECK_EQ_U64(alloc_largest_free(&a), end);
        CHECK_EQ_U64(alloc_lowest(&a), end);
        alloc_destroy(&a);
    }
}

int main(void) {
    TEST_RUN(test_bottom_up);
    TEST_RUN(test_top_down);
    TEST_RUN(test_take_at);
    TEST_RUN(test_exhaustion);
    TEST_RUN(test_deterministic);
    TEST_RUN(test_matches_reference_model);
    TEST_RUN(test_20000_live_blocks);
    return test_summary();
}
