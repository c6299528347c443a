/* sim/sim_memory: geometry, zero fill, tt-metal's interleaved page mapping. */
#include "lm_test.h"
#include "sim/sim_memory.h"

static const sim_geometry small = {
    .grid_x = 2, .grid_y = 3, .l1_size = 1 << 20, .dram_banks = 3, .dram_bank_size = 1 << 22};

static void test_create_and_zero(void) {
    sim_memory *m;
    CHECK_OK(sim_memory_create(&small, &m));
    CHECK_EQ_U64(m->num_cores, 6);
    CHECK(sim_l1(m, 5) == m->l1 + 5 * (1 << 20));
    CHECK(sim_dram(m, 2) == m->dram + 2 * (1 << 22));
    CHECK(sim_l1(m, 5)[(1 << 20) - 1] == 0);
    CHECK(sim_dram(m, 2)[(1 << 22) - 1] == 0);
    sim_memory_destroy(m);
    sim_memory_destroy(NULL);
}

static void test_refuses_impossible_geometry(void) {
    sim_memory *m;
    sim_geometry g = small;
    g.dram_banks = 64;
    g.dram_bank_size = UINT64_MAX / 32;
    CHECK_FAILS(sim_memory_create(&g, &m), LM_ERR_OUT_OF_HOST_MEMORY, "address space");
}

/* Page p goes to bank p % banks at address + (p / banks) * stride. */
static void test_interleaved_mapping(void) {
    sim_memory *m;
    CHECK_OK(sim_memory_create(&small, &m));
    enum { PAGE = 40, STRIDE = 64, PAGES = 7 };
    uint8_t src[PAGE * PAGES], back[PAGE * PAGES];
    for (int i = 0; i < PAGE * PAGES; i++)
        src[i] = (uint8_t)(i * 7 + 1);
    sim_pages dram = {SIM_MEM_DRAM, 3, 4096, 0, sizeof src, PAGE, STRIDE, NULL};
    sim_memory_write_pages(m, &dram, src);
    for (int p = 0; p < PAGES; p++) {
        const uint8_t *at = sim_dram(m, p % 3) + 4096 + (p / 3) * STRIDE;
        CHECK(memcmp(at, src + p * PAGE, PAGE) == 0);
        CHECK(at[PAGE] == 0); /* the stride padding stays untouched */
    }
    sim_memory_read_pages(m, &dram, back);
    CHECK(memcmp(src, back, sizeof src) == 0);

    sim_pages l1 = {SIM_MEM_L1, 6, 0x10000, 0, sizeof src, PAGE, STRIDE, NULL};
    sim_memory_write_pages(m, &l1, src);
    for (int p = 0; p < PAGES; p++)
        CHECK(memcmp(sim_l1(m, p % 6) + 0x10000 + (p / 6) * STRIDE, src + p * PAGE, PAGE) == 0);

    /* Regions: any byte range, across pages and banks, in one or three parts;
     * the bytes around it stay. */
    uint8_t patch[PAGE * 3], expect[PAGE * PAGES];
    for (int i = 0; i < (int)sizeof patch; i++)
        patch[i] = (uint8_t)(0xA0 ^ i);
    for (uint32_t parts = 1; parts <= 3; parts += 2) {
        sim_memory_write_pages(m, &dram, src);
        sim_pages region = dram;
        region.offset = PAGE - 3; /* starts 3 bytes before page 1 */
        region.size = PAGE * 2 + 7;
        for (uint32_t part = 0; part < parts; part++)
            sim_memory_move_pages(m, &region, patch, true, part, parts);
        memcpy(expect, src, sizeof src);
        memcpy(expect + region.offset, patch, region.size);
        sim_memory_read_pages(m, &dram, back);
        CHECK(memcmp(back, expect, sizeof back) == 0);
        uint8_t got[PAGE * 3] = {0};
        sim_memory_move_pages(m, &region, got, false, 0, 1);
        CHECK(memcmp(got, patch, region.size) == 0);
    }
    sim_memory_destroy(m);
}

/* Parts of a transfer cover it exactly once, whatever the number of parts. */
static void test_parts_cover_once(void) {
    sim_memory *m;
    CHECK_OK(sim_memory_create(&small, &m));
    enum { PAGE = 96, STRIDE = 96, PAGES = 41 };
    static uint8_t src[PAGE * PAGES], back[PAGE * PAGES];
    for (int i = 0; i < PAGE * PAGES; i++)
        src[i] = (uint8_t)(i * 13 + 5);
    sim_pages pg = {SIM_MEM_DRAM, 3, 8192, 0, sizeof src, PAGE, STRIDE, NULL};
    for (uint32_t parts = 1; parts <= 7; parts++) {
        memset(sim_dram(m, 0) + 8192, 0, 4096);
        memset(sim_dram(m, 1) + 8192, 0, 4096);
        memset(sim_dram(m, 2) + 8192, 0, 4096);
        for (uint32_t p = 0; p < parts; p++)
            sim_memory_move_pages(m, &pg, src, true, p, parts);
        memset(back, 0, sizeof back);
        for (uint32_t p = parts; p-- > 0;)
            sim_memory_move_pages(m, &pg, back, false, p, parts);
        CHECK(memcmp(src, back, sizeof src) == 0);
        sim_memory_read_pages(m, &pg, back);
        CHECK(memcmp(src, back, sizeof src) == 0);
    }
    sim_memory_destroy(m);
}

int main(void) {
    TEST_RUN(test_create_and_zero);
    TEST_RUN(test_refuses_impossible_geometry);
    TEST_RUN(test_interleaved_mapping);
    TEST_RUN(test_parts_cover_once);
    return test_summary();
}
