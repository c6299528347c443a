/* Tests of the RV32IM interpreter: the instruction set (isa.S), compiled C
 * (mix.c against the same code run natively), both dispatch styles, faults,
 * the instruction budget and the ecall protocol. */
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "lm_test.h"
#include "rv32/mix.c"
#include "rv32/iss_workload.c"
#include "rv32/rv_test_elf.h"
#include "sim/rv32/rv_hart.h"
#include "sim/rv32/rv_image.h"

#define L1_SIZE 4096u

typedef rv_stop (*run_fn)(rv_hart *, uint64_t, rv_ecall_fn, void *);

/* A hart with its own L1 and local memory, ready to run an image. */
typedef struct test_hart {
    rv_hart h;
    rv_image *img;
    uint8_t l1[L1_SIZE];
    uint8_t local[KMAP_LOCAL_SIZE];
    rv_local local_state;
} test_hart;

static lm_status load_file(const char *name, rv_image **out) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", RV32_PROGRAM_DIR, name);
    void *data;
    size_t size;
    lm_status st = file_read_all(path, &data, &size);
    if (st) return st;
    st = rv_image_load(data, size, out);
    free(data);
    return st;
}

static test_hart *hart_new(rv_image *img) {
    test_hart *t = calloc(1, sizeof *t);
    if (!t) abort();
    t->img = img;
    memset(t->local, 0xaa, sizeof t->local); /* init must clear the bss and stack */
    rv_local_init(&t->local_state, t->local, false);
    if (rv_hart_init(&t->h, img, t->l1, L1_SIZE, &t->local_state) != LM_OK) abort();
    return t;
}

static void hart_free(test_hart *t) {
    if (!t) return;
    rv_image_free(t->img);
    free(t);
}

/* Loads a hand-assembled program and prepares a hart for it. */
static test_hart *hart_code(const uint32_t *words, int n) {
    uint8_t elf[1024];
    size_t size = test_elf_code(elf, sizeof elf, words, n);
    rv_image *img;
    if (rv_image_load(elf, size, &img) != LM_OK) abort();
    return hart_new(img);
}

static void run_isa(run_fn run) {
    rv_image *img;
    CHECK_OK(load_file("isa.elf", &img));
    test_hart *t = hart_new(img);
    rv_stop s = run(&t->h, 1000000, NULL, NULL);
    char why[256];
    rv_fault_describe(&t->h, why, sizeof why);
    if (s != RV_STOP_EXIT) printf("  isa stopped with %d: %s\n", (int)s, why);
    uint32_t failed = t->h.x[10];
    hart_free(t);
    CHECK(s == RV_STOP_EXIT);
    CHECK_EQ_U64(failed, 0); /* else: number of the failing check in isa.S */
}

static void test_isa_goto(void) {
    run_isa(rv_run);
}
static void test_isa_switch(void) {
    run_isa(rv_run_switch);
}

static void test_init_sets_stack_and_clears_bss(void) {
    rv_image *img;
    CHECK_OK(load_file("mix.elf", &img));
    test_hart *t = hart_new(img);
    CHECK_EQ_U64(t->h.x[2], KMAP_LOCAL_BASE + KMAP_LOCAL_SIZE);
    CHECK_EQ_U64(t->h.x[1], RV_RETURN_ADDR);
    CHECK_EQ_U64(t->h.pc, img->entry);
    CHECK_EQ_U64(t->h.instret, 0);
    int dirty = 0;
    for (uint32_t i = img->data_size; i < KMAP_LOCAL_SIZE; i++)
        dirty |= t->local[i];
    CHECK(dirty == 0);
    CHECK(memcmp(t->local, img->data_bytes, img->data_size) == 0);
    hart_free(t);

    rv_hart h;
    uint8_t l1[16];
    rv_local local;
    rv_local_init(&local, NULL, true);
    CHECK_FAILS(rv_hart_init(&h, img, l1, 16, &local), LM_ERR_INVALID_ARGUMENT, "NULL");
    rv_local_init(&local, l1, false);
    CHECK_FAILS(rv_hart_init(&h, img, l1, 0x20000001u, &local), LM_ERR_INVALID_ARGUMENT,
                "overlaps local memory");
    CHECK_FAILS(rv_hart_init(&h, img, NULL, 16, &local), LM_ERR_INVALID_ARGUMENT, "NULL");
    CHECK_FAILS(rv_hart_init(&h, img, l1, 16, NULL), LM_ERR_INVALID_ARGUMENT, "NULL");
}

/* Local memory holds exactly the image's data, then zeros. */
static bool local_is_fresh(const test_hart *t, const rv_image *img) {
    if (memcmp(t->local, img->data_bytes, img->data_size) != 0) return false;
    for (uint32_t i = img->data_size; i < KMAP_LOCAL_SIZE; i++)
        if (t->local[i]) return false;
    return true;
}

/* An image whose data is `data_size` bytes of 0x55 and whose code stores
 * all-ones words at the top of the stack, in the middle of local memory, at
 * byte 14 (across the end of 16 bytes of data) and at byte 300. */
static rv_image *dirtying_image(uint32_t data_size) {
    static const uint8_t data[256] = {0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55,
                                      0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55};
    const uint32_t code[] = {
        enc_lui(5, KMAP_LOCAL_BASE >> 12),          /* t0 = local base */
        ADDI(6, 0, -1),                             /* t1 = ~0 */
        SW(2, 6, -4),                               /* top of the stack */
        enc_lui(7, (KMAP_LOCAL_BASE >> 12) + 0x10), /* t2 = local base + 64 KiB */
        SW(7, 6, 0),
        SW(5, 6, 14),
        SW(5, 6, 300),
        JALR(0, 1, 0),
    };
    test_seg segs[2] = {{0, KMAP_CODE_BASE, ELF_PF_R | ELF_PF_X, 0, code, sizeof code},
                        {0, KMAP_LOCAL_BASE, ELF_PF_R | ELF_PF_W, 0, data, data_size}};
    uint8_t elf[2048];
    size_t size = test_elf_build(elf, sizeof elf, KMAP_CODE_BASE, segs, 2);
    rv_image *img;
    if (rv_image_load(elf, size, &img) != LM_OK) abort();
    return img;
}

/* Each launch starts from the image's data and zeros, though init clears
 * only what may have been dirtied since the last one: the hart's stores
 * above its data (including one across the data's end), host writes, and
 * the old data beyond a smaller image's. */
static void test_init_clears_what_the_last_launch_dirtied(void) {
    rv_image *big = dirtying_image(256), *small = dirtying_image(16);
    test_hart *t = hart_new(big);
    CHECK(local_is_fresh(t, big));
    CHECK_EQ_U64(rv_run(&t->h, UINT64_MAX, NULL, NULL), RV_STOP_EXIT);
    CHECK_EQ_U64(t->local[KMAP_LOCAL_SIZE - 1], 0xff);
    memset(t->local + 5000, 0x77, 8); /* as the host would, through a hart's pointer */
    rv_local_wrote(&t->local_state, 5000, 8);
    CHECK_OK(rv_hart_init(&t->h, small, t->l1, L1_SIZE, &t->local_state));
    CHECK(local_is_fresh(t, small));
    for (int run = 0; run < 2; run++) {
        CHECK_EQ_U64(rv_run_switch(&t->h, UINT64_MAX, NULL, NULL), RV_STOP_EXIT);
        CHECK_EQ_U64(t->local[16] & t->local[17] & t->local[300] & t->local[0x10000], 0xff);
        CHECK_OK(rv_hart_init(&t->h, small, t->l1, L1_SIZE, &t->local_state));
        CHECK(local_is_fresh(t, small));
    }
    CHECK_OK(rv_hart_init(&t->h, big, t->l1, L1_SIZE, &t->local_state));
    CHECK(local_is_fresh(t, big));
    rv_image_free(small);
    hart_free(t);
}

static void test_compiled_c_matches_native(void) {
    uint32_t expect = mix_main(12345);
    for (int mode = 0; mode < 2; mode++) {
        rv_image *img;
        CHECK_OK(load_file("mix.elf", &img));
        test_hart *t = hart_new(img);
        t->h.x[10] = 12345;
        rv_stop s = (mode ? rv_run_switch : rv_run)(&t->h, 10000000, NULL, NULL);
        uint32_t got = t->h.x[10];
        uint32_t pc = t->h.pc;
        hart_free(t);
        CHECK(s == RV_STOP_EXIT);
        CHECK_EQ_U64(pc, RV_RETURN_ADDR);
        CHECK_EQ_U64(got, expect);
    }
}

/* The workload of the interpreter benchmark, run in one go and in small
 * slices, with both dispatch styles: all four must agree on everything. */
static void test_dispatch_styles_agree(void) {
    test_hart *t[4];
    for (int i = 0; i < 4; i++) {
        rv_image *img;
        CHECK_OK(load_file("workload.elf", &img));
        t[i] = hart_new(img);
        t[i]->h.x[10] = 3;
        run_fn run = i % 2 ? rv_run_switch : rv_run;
        uint64_t slice = i < 2 ? UINT64_MAX : 997;
        rv_stop s;
        int slices = 0;
        while ((s = run(&t[i]->h, slice, NULL, NULL)) == RV_STOP_BUDGET)
            slices++;
        CHECK(s == RV_STOP_EXIT);
        CHECK(i < 2 ? slices == 0 : slices > 100);
    }
    CHECK(t[0]->h.instret > 100000);
    CHECK_EQ_U64(t[0]->h.x[10], iss_workload(3)); /* same code, run natively */
    for (int i = 1; i < 4; i++) {
        CHECK_EQ_U64(t[i]->h.instret, t[0]->h.instret);
        CHECK(memcmp(t[i]->h.x, t[0]->h.x, sizeof t[0]->h.x) == 0);
        CHECK_EQ_U64(t[i]->h.pc, t[0]->h.pc);
        CHECK(memcmp(t[i]->local, t[0]->local, KMAP_LOCAL_SIZE) == 0);
    }
    for (int i = 0; i < 4; i++)
        hart_free(t[i]);
}

/* Runs a hand-assembled program that must fault; returns its description. */
static rv_stop run_code(const uint32_t *words, int n, rv_hart *out, char *why, size_t why_size) {
    test_hart *t = hart_code(words, n);
    t->h.x[R_A1] = 0x5555;
    rv_stop s = rv_run(&t->h, 1000, NULL, NULL);
    rv_fault_describe(&t->h, why, why_size);
    *out = t->h;
    hart_free(t);
    return s;
}

#define CHECK_FAULT(words, cause_, pc_off, needle)                                                 \
    do {                                                                                           \
        rv_hart h_;                                                                                \
        char why_[256];                                                                            \
        CHECK(run_code(words, (int)(sizeof words / sizeof words[0]), &h_, why_, sizeof why_) ==    \
              RV_STOP_FAULT);                                                                      \
        if (!strstr(why_, needle)) printf("  fault said: %s\n", why_);                             \
        CHECK(h_.fault.cause == (cause_));                                                         \
        CHECK_EQ_U64(h_.fault.pc, KMAP_CODE_BASE + (pc_off));                                      \
        CHECK_EQ_U64(h_.pc, KMAP_CODE_BASE + (pc_off));                                            \
        CHECK_EQ_U64(h_.instret, (pc_off) / 4);                                                    \
        CHECK_EQ_U64(h_.x[R_A1], 0x5555); /* traps write no registers */                           \
        CHECK(strstr(why_, needle) != NULL);                                                       \
    } while (0)

static void test_illegal_instructions(void) {
    const uint32_t zero[] = {NOP, 0x00000000u};
    CHECK_FAULT(zero, RV_FAULT_ILLEGAL, 4, "illegal instruction 0x00000000 (pc 0x40000004)");
    const uint32_t compressed[] = {0x00004505u}; /* c.li a0, 1 */
    CHECK_FAULT(compressed, RV_FAULT_ILLEGAL, 0, "illegal instruction 0x00004505");
    const uint32_t csr[] = {0xc00025f3u}; /* csrr a1, cycle */
    CHECK_FAULT(csr, RV_FAULT_ILLEGAL, 0, "illegal instruction 0xc00025f3");
    const uint32_t csrw[] = {NOP, NOP, 0x34059073u}; /* csrw mscratch, a1 */
    CHECK_FAULT(csrw, RV_FAULT_ILLEGAL, 8, "illegal");
    const uint32_t fence_i[] = {0x0000100fu};
    CHECK_FAULT(fence_i, RV_FAULT_ILLEGAL, 0, "illegal");
    const uint32_t slli32[] = {0x02059593u}; /* slli a1, a1, 32: reserved on RV32 */
    CHECK_FAULT(slli32, RV_FAULT_ILLEGAL, 0, "illegal");
    const uint32_t mret[] = {0x30200073u};
    CHECK_FAULT(mret, RV_FAULT_ILLEGAL, 0, "illegal");
    const uint32_t ebreak[] = {NOP, EBREAK};
    CHECK_FAULT(ebreak, RV_FAULT_BREAKPOINT, 4, "ebreak (pc 0x40000004)");
    const uint32_t fence[] = {0x0ff0000fu, ADDI(R_A0, 0, 7), RET};
    test_hart *t = hart_code(fence, 3);
    CHECK(rv_run(&t->h, 100, NULL, NULL) == RV_STOP_EXIT);
    CHECK_EQ_U64(t->h.x[R_A0], 7);
    CHECK_EQ_U64(t->h.instret, 3);
    hart_free(t);
}

static void test_memory_faults(void) {
    const uint32_t load_hole[] = {enc_lui(R_A0, 0x30000), LW(R_A1, R_A0, 4)};
    CHECK_FAULT(load_hole, RV_FAULT_LOAD, 4,
                "4-byte load at 0x30000004 outside the hart's memory (pc 0x40000004)");
    /* an access that starts inside local memory but ends past it */
    const uint32_t load_straddle[] = {enc_lui(R_A0, 0x20020), LW(R_A1, R_A0, -2)};
    CHECK_FAULT(load_straddle, RV_FAULT_LOAD, 4, "at 0x2001fffe");
    const uint32_t load_l1_end[] = {ADDI(R_A0, 0, 2047), LW(R_A1, R_A0, (int32_t)L1_SIZE - 2049)};
    CHECK_FAULT(load_l1_end, RV_FAULT_LOAD, 4, "at 0x00000ffe");
    /* the last word of L1 is fine, unaligned accesses inside a region too */
    const uint32_t l1_last[] = {ADDI(R_A0, 0, 2047), SW(R_A0, R_A0, (int32_t)L1_SIZE - 2051),
                                LW(R_A1, R_A0, (int32_t)L1_SIZE - 2051), LW(12, 0, 1), RET};
    test_hart *t = hart_code(l1_last, 5);
    CHECK(rv_run(&t->h, 100, NULL, NULL) == RV_STOP_EXIT);
    CHECK_EQ_U64(t->h.x[R_A1], 2047);
    CHECK_EQ_U64(t->h.x[12], 0);
    hart_free(t);
    const uint32_t load_past_code[] = {enc_lui(R_A0, 0x40000), LW(R_A1, R_A0, 8)};
    CHECK_FAULT(load_past_code, RV_FAULT_LOAD, 4, "at 0x40000008");
    const uint32_t store_code[] = {enc_lui(R_A0, 0x40000), SW(R_A0, R_A0, 0)};
    CHECK_FAULT(store_code, RV_FAULT_STORE, 4, "code is read-only");
    const uint32_t store_hole[] = {enc_lui(R_A0, 0x10000), SB(R_A0, R_A0, -1)};
    CHECK_FAULT(store_hole, RV_FAULT_STORE, 4, "1-byte store at 0x0fffffff");
}

static void test_jump_faults(void) {
    const uint32_t jalr_far[] = {enc_lui(R_A0, 0x50000), JALR(R_A1, R_A0, 0)};
    CHECK_FAULT(jalr_far, RV_FAULT_JUMP, 4, "jump to non-code address 0x50000000 (pc 0x40000004)");
    const uint32_t jalr_mis[] = {enc_lui(R_A0, 0x40000), JALR(R_A1, R_A0, 2)};
    CHECK_FAULT(jalr_mis, RV_FAULT_JUMP, 4, "misaligned address 0x40000002");
    const uint32_t jal_out[] = {NOP, JAL(R_A1, 0x1000)};
    CHECK_FAULT(jal_out, RV_FAULT_JUMP, 4, "non-code address 0x40001004");
    const uint32_t beq_out[] = {BEQ(0, 0, -8)};
    CHECK_FAULT(beq_out, RV_FAULT_JUMP, 0, "non-code address 0x3ffffff8");
    const uint32_t off_end[] = {NOP, NOP};
    CHECK_FAULT(off_end, RV_FAULT_FETCH, 8, "non-code address 0x40000008");
    /* an untaken branch to nowhere is harmless */
    const uint32_t bne_out[] = {BNE(0, 0, 0x800), ADDI(R_A0, 0, 3), RET};
    test_hart *t = hart_code(bne_out, 3);
    CHECK(rv_run(&t->h, 100, NULL, NULL) == RV_STOP_EXIT);
    CHECK_EQ_U64(t->h.x[R_A0], 3);
    hart_free(t);
}

/* Data that looks like code must not run: a jump into a read-only segment
 * of the code region faults at the target. */
static void test_jump_into_rodata_faults(void) {
    uint32_t code[] = {enc_lui(R_A0, 0x40001), JALR(R_A1, R_A0, 0)};
    uint32_t rodata[] = {RET};
    test_seg segs[2] = {{0, KMAP_CODE_BASE, ELF_PF_R | ELF_PF_X, 0, code, sizeof code},
                        {0, KMAP_CODE_BASE + 0x1000, ELF_PF_R, 0, rodata, sizeof rodata}};
    uint8_t elf[512];
    size_t size = test_elf_build(elf, sizeof elf, KMAP_CODE_BASE, segs, 2);
    rv_image *img;
    CHECK_OK(rv_image_load(elf, size, &img));
    test_hart *t = hart_new(img);
    CHECK(rv_run(&t->h, 100, NULL, NULL) == RV_STOP_FAULT);
    CHECK(t->h.fault.cause == RV_FAULT_FETCH);
    CHECK_EQ_U64(t->h.fault.pc, KMAP_CODE_BASE + 0x1000);
    hart_free(t);
}

static void test_budget_and_resume(void) {
    /* loop: four adds and a jump back, 5 instructions per block */
    const uint32_t loop[] = {ADDI(R_A0, R_A0, 1), ADDI(R_A0, R_A0, 1), ADDI(R_A0, R_A0, 1),
                             ADDI(R_A0, R_A0, 1), JAL(0, -16)};
    test_hart *t = hart_code(loop, 5);
    CHECK(rv_run(&t->h, 0, NULL, NULL) == RV_STOP_BUDGET);
    CHECK_EQ_U64(t->h.instret, 0);
    CHECK_EQ_U64(t->h.pc, KMAP_CODE_BASE);
    uint64_t total = 0;
    for (int i = 0; i < 5; i++) {
        CHECK(rv_run(&t->h, 1003, NULL, NULL) == RV_STOP_BUDGET);
        uint64_t ran = t->h.instret - total;
        total = t->h.instret;
        CHECK(ran >= 1003 && ran < 1003 + 5); /* overshoot < one block */
        CHECK_EQ_U64(t->h.pc, KMAP_CODE_BASE);
        CHECK_EQ_U64(t->h.x[R_A0], total / 5 * 4);
    }
    hart_free(t);
    /* a one-instruction loop stops exactly on the budget */
    const uint32_t spin[] = {JAL(0, 0)};
    t = hart_code(spin, 1);
    CHECK(rv_run(&t->h, 12345, NULL, NULL) == RV_STOP_BUDGET);
    CHECK_EQ_U64(t->h.instret, 12345);
    hart_free(t);
}

/* Fused pairs (rv_fuse) keep the semantics of the two instructions: a jump
 * into the second runs it alone, and a trap in the second leaves the first's
 * result written and counted. */
static void test_fused_pairs(void) {
    const uint32_t into_pair[] = {JAL(0, 8), enc_lui(R_A0, 0x12345), ADDI(R_A0, R_A0, 0x10), RET};
    test_hart *t = hart_code(into_pair, 4);
    CHECK(rv_insn_op(&t->img->insns[1]) == RV_OP_LI2);
    CHECK(rv_run(&t->h, 100, NULL, NULL) == RV_STOP_EXIT);
    CHECK_EQ_U64(t->h.x[R_A0], 0x10);
    CHECK_EQ_U64(t->h.instret, 3);
    hart_free(t);

    const uint32_t pair[] = {enc_lui(R_A0, 0x12345), ADDI(R_A0, R_A0, -1), RET};
    t = hart_code(pair, 3);
    CHECK(rv_run(&t->h, 100, NULL, NULL) == RV_STOP_EXIT);
    CHECK_EQ_U64(t->h.x[R_A0], 0x12344fff);
    CHECK_EQ_U64(t->h.instret, 3);
    hart_free(t);

    /* add + lw, the lw faulting */
    const uint32_t add_lw[] = {enc_lui(R_A0, 0x30000), 0x00a505b3u /* add a1, a0, a0 */,
                               LW(12, R_A1, 4)};
    t = hart_code(add_lw, 3);
    CHECK(rv_insn_op(&t->img->insns[1]) == RV_OP_ADD_LW);
    CHECK(rv_run(&t->h, 100, NULL, NULL) == RV_STOP_FAULT);
    CHECK(t->h.fault.cause == RV_FAULT_LOAD);
    CHECK_EQ_U64(t->h.fault.pc, KMAP_CODE_BASE + 8);
    CHECK_EQ_U64(t->h.fault.addr, 0x60000004);
    CHECK_EQ_U64(t->h.x[R_A1], 0x60000000);
    CHECK_EQ_U64(t->h.instret, 2);
    hart_free(t);

    /* an add and an lw not based on its result stay apart */
    const uint32_t add_other[] = {0x00a505b3u /* add a1, a0, a0 */, LW(12, R_A0, 0), RET};
    t = hart_code(add_other, 3);
    CHECK(rv_insn_op(&t->img->insns[0]) == RV_OP_ADD);
    hart_free(t);

    /* slli + add + lw, the lw faulting */
    const uint32_t shadd_lw[] = {enc_lui(R_A0, 0x30000), enc_i(0x13, 1, R_A1, R_A0, 1),
                                 0x00a585b3u /* add a1, a1, a0 */, LW(12, R_A1, 0)};
    t = hart_code(shadd_lw, 4);
    CHECK(rv_insn_op(&t->img->insns[1]) == RV_OP_SHADD_LW);
    CHECK(rv_run(&t->h, 100, NULL, NULL) == RV_STOP_FAULT);
    CHECK_EQ_U64(t->h.fault.pc, KMAP_CODE_BASE + 12);
    CHECK_EQ_U64(t->h.fault.addr, 0x90000000);
    CHECK_EQ_U64(t->h.x[R_A1], 0x90000000);
    CHECK_EQ_U64(t->h.instret, 3);
    hart_free(t);

    /* auipc + jalr: a call to code is fused; a "call" to the return address
     * is not (its target is not code) and still ends the run */
    const uint32_t call[] = {
        0x00000097u /* auipc ra, 0 */,     JALR(R_RA, R_RA, 12), EBREAK, ADDI(R_A0, R_RA, 0),
        0x00100097u /* auipc ra, 0x100 */, JALR(R_RA, R_RA, -16)};
    t = hart_code(call, 6);
    CHECK(rv_insn_op(&t->img->insns[0]) == RV_OP_CALL);
    CHECK(rv_insn_op(&t->img->insns[4]) == RV_OP_LI);
    CHECK(rv_run(&t->h, 100, NULL, NULL) == RV_STOP_EXIT);
    CHECK_EQ_U64(t->h.x[R_A0], KMAP_CODE_BASE + 8);
    CHECK_EQ_U64(t->h.pc, RV_RETURN_ADDR);
    CHECK_EQ_U64(t->h.instret, 5);
    hart_free(t);

    /* addi + branch: a loop counting down */
    const uint32_t loop[] = {ADDI(R_A0, 0, 10), ADDI(R_A1, R_A1, 3), ADDI(R_A0, R_A0, -1),
                             BNE(R_A0, 0, -8), RET};
    t = hart_code(loop, 5);
    CHECK(rv_insn_op(&t->img->insns[2]) == RV_OP_ADDI_BNE);
    t->h.x[R_A1] = 0;
    CHECK(rv_run(&t->h, 1000, NULL, NULL) == RV_STOP_EXIT);
    CHECK_EQ_U64(t->h.x[R_A1], 30);
    CHECK_EQ_U64(t->h.instret, 1 + 3 * 10 + 1);
    CHECK(rv_insn_op(&t->img->insns[1]) == RV_OP_ADDI_ADDI);
    hart_free(t);

    /* lw + addi and sw + addi: the addi runs after the access, on its own
     * registers; a faulting access stops before it */
    const uint32_t mem_addi[] = {enc_lui(R_A0, KMAP_LOCAL_BASE >> 12),
                                 ADDI(R_A1, 0, 7),
                                 SW(R_A0, R_A1, 0),
                                 ADDI(R_A0, R_A0, 4),
                                 LW(12, R_A0, -4),
                                 ADDI(R_A1, R_A1, 1),
                                 RET};
    t = hart_code(mem_addi, 7);
    CHECK(rv_insn_op(&t->img->insns[2]) == RV_OP_SW_ADDI);
    CHECK(rv_insn_op(&t->img->insns[4]) == RV_OP_LW_ADDI);
    CHECK(rv_run(&t->h, 100, NULL, NULL) == RV_STOP_EXIT);
    CHECK_EQ_U64(t->h.x[12], 7);
    CHECK_EQ_U64(t->h.x[R_A0], KMAP_LOCAL_BASE + 4);
    CHECK_EQ_U64(t->h.x[R_A1], 8);
    CHECK_EQ_U64(t->h.instret, 7);
    hart_free(t);
    for (int store = 0; store < 2; store++) {
        const uint32_t bad[] = {enc_lui(R_A0, 0x30000), store ? SW(R_A0, R_A1, 0) : LW(12, R_A0, 0),
                                ADDI(R_A1, R_A1, 1), RET};
        t = hart_code(bad, 4);
        CHECK(rv_insn_op(&t->img->insns[1]) == (store ? RV_OP_SW_ADDI : RV_OP_LW_ADDI));
        CHECK(rv_run(&t->h, 100, NULL, NULL) == RV_STOP_FAULT);
        CHECK(t->h.fault.cause == (store ? RV_FAULT_STORE : RV_FAULT_LOAD));
        CHECK_EQ_U64(t->h.fault.pc, KMAP_CODE_BASE + 4);
        CHECK_EQ_U64(t->h.x[R_A1], 0);
        CHECK_EQ_U64(t->h.instret, 1);
        hart_free(t);
    }

    /* li + branch: a compare with a constant, taken and not */
    for (uint32_t a0 = 4; a0 <= 6; a0 += 2) {
        const uint32_t li_blt[] = {ADDI(R_A1, 0, 5), enc_b(4, R_A0, R_A1, 8), ADDI(R_A0, 0, 1),
                                   RET};
        t = hart_code(li_blt, 4);
        CHECK(rv_insn_op(&t->img->insns[0]) == RV_OP_LI_BLT);
        t->h.x[R_A0] = a0;
        CHECK(rv_run(&t->h, 100, NULL, NULL) == RV_STOP_EXIT);
        CHECK_EQ_U64(t->h.x[R_A1], 5);
        CHECK_EQ_U64(t->h.x[R_A0], a0 < 5 ? a0 : 1);
        CHECK_EQ_U64(t->h.instret, a0 < 5 ? 3 : 4);
        hart_free(t);
    }
}

typedef struct ecall_log {
    int calls;
    int block_first; /* how many calls to answer BLOCK first */
    rv_ecall_result then;
    uint32_t seen_a7, seen_pc;
    uint64_t seen_instret;
} ecall_log;

static rv_ecall_result on_ecall(void *ctx, rv_hart *hart) {
    ecall_log *log = ctx;
    log->calls++;
    log->seen_a7 = hart->x[R_A7];
    log->seen_pc = hart->pc;
    log->seen_instret = hart->instret;
    hart->x[R_A0] *= 2; /* kept only for CONTINUE and EXIT */
    if (log->block_first-- > 0) return RV_ECALL_BLOCK;
    if (log->then == RV_ECALL_FAULT)
        snprintf(hart->fault.detail, sizeof hart->fault.detail, "bad argument a0=%u",
                 hart->x[R_A0] / 2);
    return log->then;
}

/* a7 = 5, a0 = 10, ecall, a0 += 1, return */
#define ECALL_PROG                                                                                 \
    { ADDI(R_A7, 0, 5), ADDI(R_A0, 0, 10), ECALL, ADDI(R_A0, R_A0, 1), RET }

static void test_ecall_continue_and_block(void) {
    const uint32_t ecall_prog[] = ECALL_PROG;
    test_hart *t = hart_code(ecall_prog, 5);
    ecall_log log = {.block_first = 2, .then = RV_ECALL_CONTINUE};
    for (int i = 0; i < 2; i++) {
        CHECK(rv_run(&t->h, 100, on_ecall, &log) == RV_STOP_BLOCK);
        CHECK_EQ_U64(t->h.pc, KMAP_CODE_BASE + 8); /* parked at the ecall */
        CHECK_EQ_U64(t->h.x[R_A0], 10);            /* the callback's write was dropped */
        CHECK_EQ_U64(t->h.instret, 2);
    }
    CHECK(rv_run(&t->h, 100, on_ecall, &log) == RV_STOP_EXIT);
    CHECK_EQ_U64(log.calls, 3);
    CHECK_EQ_U64(log.seen_a7, 5);
    CHECK_EQ_U64(log.seen_pc, KMAP_CODE_BASE + 8);
    CHECK_EQ_U64(log.seen_instret, 2);
    CHECK_EQ_U64(t->h.x[R_A0], 21);
    CHECK_EQ_U64(t->h.instret, 5);
    /* a finished hart stays finished */
    CHECK(rv_run(&t->h, 100, on_ecall, &log) == RV_STOP_EXIT);
    CHECK_EQ_U64(t->h.instret, 5);
    hart_free(t);
}

static void test_ecall_exit_and_fault(void) {
    const uint32_t ecall_prog[] = ECALL_PROG;
    test_hart *t = hart_code(ecall_prog, 5);
    ecall_log log = {.then = RV_ECALL_EXIT};
    CHECK(rv_run(&t->h, 100, on_ecall, &log) == RV_STOP_EXIT);
    CHECK_EQ_U64(t->h.x[R_A0], 20);
    CHECK_EQ_U64(t->h.pc, KMAP_CODE_BASE + 8);
    CHECK_EQ_U64(t->h.instret, 3);
    hart_free(t);

    t = hart_code(ecall_prog, 5);
    log = (ecall_log){.then = RV_ECALL_FAULT};
    CHECK(rv_run(&t->h, 100, on_ecall, &log) == RV_STOP_FAULT);
    char why[256];
    rv_fault_describe(&t->h, why, sizeof why);
    CHECK(t->h.fault.cause == RV_FAULT_ECALL);
    CHECK_EQ_U64(t->h.x[R_A0], 10);
    CHECK_EQ_U64(t->h.instret, 2);
    CHECK(strstr(why, "ecall 5 failed: bad argument a0=10 (pc 0x40000008)") != NULL);
    hart_free(t);

    t = hart_code(ecall_prog, 5);
    CHECK(rv_run(&t->h, 100, NULL, NULL) == RV_STOP_FAULT);
    rv_fault_describe(&t->h, why, sizeof why);
    CHECK(strstr(why, "no ecall handler") != NULL);
    hart_free(t);
}

int main(void) {
    TEST_RUN(test_isa_goto);
    TEST_RUN(test_isa_switch);
    TEST_RUN(test_init_sets_stack_and_clears_bss);
    TEST_RUN(test_init_clears_what_the_last_launch_dirtied);
    TEST_RUN(test_compiled_c_matches_native);
    TEST_RUN(test_dispatch_styles_agree);
    TEST_RUN(test_illegal_instructions);
    TEST_RUN(test_memory_faults);
    TEST_RUN(test_jump_faults);
    TEST_RUN(test_jump_into_rodata_faults);
    TEST_RUN(test_budget_and_resume);
    TEST_RUN(test_fused_pairs);
    TEST_RUN(test_ecall_continue_and_block);
    TEST_RUN(test_ecall_exit_and_fault);
    return test_summary();
}
