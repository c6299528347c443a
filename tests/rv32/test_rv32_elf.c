/* Tests of the kernel ELF loader: a valid image and every rejection, each
 * produced by changing one thing in a valid ELF, plus truncations and
 * corruptions that must never crash. */
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "lm_test.h"
#include "rv32/rv_test_elf.h"
#include "sim/rv32/rv_image.h"
#include "sim/rv32/rv_image_cache.h"

static const uint32_t code[] = {0x00000513u /* li a0, 0 */, 0x00008067u /* ret */};
static const uint8_t data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
static const uint32_t rodata[] = {0xdeadbeefu};

/* A valid kernel: code, read-only data after it, data + bss in local memory. */
static size_t valid_elf(uint8_t *elf, size_t cap) {
    test_seg segs[3] = {
        {0, KMAP_CODE_BASE, ELF_PF_R | ELF_PF_X, 0, code, sizeof code},
        {0, KMAP_CODE_BASE + 0x100, ELF_PF_R, 0, rodata, sizeof rodata},
        {0, KMAP_LOCAL_BASE, ELF_PF_R | ELF_PF_W, 64, data, sizeof data},
    };
    return test_elf_build(elf, cap, KMAP_CODE_BASE, segs, 3);
}

static lm_status load(const uint8_t *elf, size_t size) {
    rv_image *img = NULL;
    lm_status st = rv_image_load(elf, size, &img);
    rv_image_free(img);
    return st;
}

static void test_valid_image(void) {
    uint8_t elf[512];
    size_t size = valid_elf(elf, sizeof elf);
    rv_image *img;
    CHECK_OK(rv_image_load(elf, size, &img));
    CHECK_EQ_U64(img->entry, KMAP_CODE_BASE);
    CHECK_EQ_U64(img->code_size, 0x104);
    CHECK_EQ_U64(img->data_size, 64);
    CHECK(memcmp(img->data_bytes, data, sizeof data) == 0);
    CHECK_EQ_U64(img->data_bytes[8], 0);
    CHECK(memcmp(img->code_bytes + 0x100, rodata, 4) == 0);
    CHECK_EQ_U64(rv_insn_op(&img->insns[0]), RV_OP_LI);
    CHECK_EQ_U64(img->insns[0].block_len, 2);
    CHECK_EQ_U64(rv_insn_op(&img->insns[1]), RV_OP_JALR);
    CHECK_EQ_U64(rv_insn_op(&img->insns[2]), RV_OP_NOEXEC); /* gap between code and rodata */
    CHECK_EQ_U64(rv_insn_op(&img->insns[0x100 / 4]), RV_OP_NOEXEC);
    CHECK_EQ_U64(rv_insn_op(&img->insns[0x104 / 4]), RV_OP_NOEXEC); /* the sentinel */
    rv_image_free(img);
}

#define EXPECT_REJECT(mutation, needle)                                                            \
    do {                                                                                           \
        uint8_t e[512];                                                                            \
        size_t size = valid_elf(e, sizeof e);                                                      \
        (void)size;                                                                                \
        mutation;                                                                                  \
        CHECK_FAILS(load(e, size), LM_ERR_INVALID_FILE, needle);                                   \
        CHECK_ERROR_HAS("kernel ELF: ");                                                           \
    } while (0)

static void test_rejects_bad_header(void) {
    EXPECT_REJECT(size = 51, "file of 51 bytes is shorter than the 52-byte ELF header");
    EXPECT_REJECT(size = 0, "file of 0 bytes");
    EXPECT_REJECT(e[1] = 'X', "not an ELF file");
    EXPECT_REJECT(e[4] = 2, "class 2 is not ELFCLASS32");
    EXPECT_REJECT(e[5] = 2, "data encoding 2 is not little-endian");
    EXPECT_REJECT(e[6] = 0, "identification version 0");
    EXPECT_REJECT(put16(e + EH_TYPE, 3), "type 3 is not ET_EXEC");
    EXPECT_REJECT(put16(e + EH_MACHINE, 62), "machine 62 is not EM_RISCV");
    EXPECT_REJECT(put32(e + 20, 2), "version 2 is not 1");
    EXPECT_REJECT(put32(e + EH_FLAGS, 1), "compressed instructions");
    EXPECT_REJECT(put32(e + EH_FLAGS, 4), "hardware floating-point ABI");
    EXPECT_REJECT(put32(e + EH_FLAGS, 8), "RV32E");
    EXPECT_REJECT(put16(e + EH_PHNUM, 0), "no program headers");
    EXPECT_REJECT(put16(e + EH_PHNUM, 65), "65 program headers; at most 64");
    EXPECT_REJECT(put16(e + EH_PHENTSIZE, 40), "program header size 40 is not 32");
    EXPECT_REJECT(put32(e + EH_PHOFF, 0xfffffff0u), "program headers at offset 4294967280");
    EXPECT_REJECT(size = 52 + 32 * 2, "program headers at offset 52 (3 of them) run past");
}

static void test_rejects_bad_segments(void) {
    EXPECT_REJECT(put32(e + PH(0) + PH_OFFSET, 0xffffffffu),
                  "segment 0: file bytes at offset 4294967295 run past the end");
    EXPECT_REJECT(put32(e + PH(2) + PH_FILESZ, 400), "segment 2: file bytes at offset");
    EXPECT_REJECT(size -= 1, "segment 2: file bytes at offset");
    EXPECT_REJECT(put32(e + PH(2) + PH_MEMSZ, 4), "segment 2: file size 8 exceeds its memory size");
    EXPECT_REJECT((put32(e + PH(1) + PH_VADDR, 0xfffffffcu), put32(e + PH(1) + PH_MEMSZ, 8)),
                  "segment 1 at 0xfffffffc wraps around");
    EXPECT_REJECT(put32(e + PH(0) + PH_FLAGS, 7), "segment 0 is both writable and executable");
    EXPECT_REJECT(put32(e + PH(0) + PH_VADDR, KMAP_LOCAL_BASE + 0x1000),
                  "executable segment 0 at 0x20001000 lies outside the code region");
    EXPECT_REJECT(put32(e + PH(0) + PH_MEMSZ, KMAP_CODE_SIZE + 4),
                  "executable segment 0 at 0x40000000 lies outside the code region");
    EXPECT_REJECT(put32(e + PH(0) + PH_VADDR, KMAP_CODE_BASE + 2),
                  "executable segment 0 at 0x40000002 is not 4-byte aligned");
    EXPECT_REJECT(put32(e + PH(2) + PH_VADDR, KMAP_CODE_BASE + 0x200),
                  "writable segment 2 at 0x40000200 lies outside the local region");
    EXPECT_REJECT(put32(e + PH(2) + PH_VADDR, KMAP_LOCAL_BASE + KMAP_LOCAL_SIZE - 32),
                  "writable segment 2 at 0x2001ffe0 lies outside the local region");
    EXPECT_REJECT(put32(e + PH(2) + PH_MEMSZ, 0xffffffffu), "segment 2 at 0x20000000 wraps");
    EXPECT_REJECT(put32(e + PH(1) + PH_VADDR, 0x1000),
                  "segment 1 at 0x1000 lies outside the code and local regions");
    EXPECT_REJECT(put32(e + PH(1) + PH_VADDR, KMAP_CODE_BASE + 4),
                  "segment 1 at 0x40000004 overlaps an earlier segment");
    EXPECT_REJECT(put32(e + PH(1) + PH_TYPE, 2), "segment 1 has type 2 (dynamic linking");
    EXPECT_REJECT(put32(e + PH(1) + PH_TYPE, 3), "segment 1 has type 3");
    EXPECT_REJECT(put32(e + PH(1) + PH_TYPE, 7), "segment 1 has type 7");
}

static void test_rejects_bad_entry(void) {
    EXPECT_REJECT(put32(e + EH_ENTRY, KMAP_CODE_BASE + 2), "entry point 0x40000002 is not 4-byte");
    EXPECT_REJECT(put32(e + EH_ENTRY, KMAP_CODE_BASE + 8),
                  "entry point 0x40000008 is not inside an executable segment");
    EXPECT_REJECT(put32(e + EH_ENTRY, KMAP_CODE_BASE + 0x100), "not inside an executable");
    EXPECT_REJECT(put32(e + EH_ENTRY, KMAP_LOCAL_BASE), "entry point 0x20000000");
    EXPECT_REJECT(put32(e + EH_ENTRY, 0), "entry point 0x0 is not inside");
}

static void test_ignores_other_segment_types(void) {
    uint8_t e[512];
    size_t size = valid_elf(e, sizeof e);
    put32(e + PH(1) + PH_TYPE, 0x6474e551u); /* PT_GNU_STACK */
    CHECK_OK(load(e, size));
    put32(e + PH(1) + PH_TYPE, 0x70000003u); /* PT_RISCV_ATTRIBUTES */
    CHECK_OK(load(e, size));
}

/* Every prefix of a valid file, and every single-byte corruption of its
 * headers, either loads or fails cleanly (the sanitizers watch for the rest). */
static void test_truncations_and_corruptions_never_crash(void) {
    uint8_t e[512];
    size_t size = valid_elf(e, sizeof e);
    for (size_t n = 0; n < size; n++) {
        uint8_t *copy = malloc(n ? n : 1);
        CHECK(copy != NULL);
        memcpy(copy, e, n);
        lm_status st = load(copy, n);
        free(copy);
        CHECK(st == LM_ERR_INVALID_FILE || st == LM_OK);
    }
    for (size_t i = 0; i < 52 + 3 * 32; i++) {
        static const uint8_t values[] = {0x00, 0x01, 0x7f, 0x80, 0xff};
        for (size_t v = 0; v < sizeof values; v++) {
            uint8_t m[512];
            memcpy(m, e, size);
            m[i] = values[v];
            lm_status st = load(m, size);
            CHECK(st == LM_ERR_INVALID_FILE || st == LM_OK);
        }
    }
}

/* The image cache: equal bytes share one image, and one copy of the bytes,
 * while held, found by the hash given or computed; different bytes (one
 * changed) get their own, also when given the other's hash; a bad ELF is
 * refused as rv_image_load refuses it; images nothing holds are kept up to
 * `keep`, then dropped. */
static void test_image_cache(void) {
    uint8_t a[512], b[512];
    size_t size = valid_elf(a, sizeof a);
    memcpy(b, a, size);
    b[size - 1] ^= 1; /* one byte of the data segment */
    rv_image_cache *c;
    CHECK_OK(rv_image_cache_create(1, &c));
    const rv_image *ia, *ia2, *ib, *bad = NULL;
    const void *ea, *ea2, *eb;
    CHECK_OK(rv_image_cache_get(c, a, size, 0, &ia, &ea));
    CHECK(ea != (const void *)a && !memcmp(ea, a, size));
    CHECK_OK(rv_image_cache_get(c, a, size, hash64(a, size, 0), &ia2, &ea2));
    CHECK(ia == ia2 && ea2 == ea);
    CHECK_OK(rv_image_cache_get(c, b, size, hash64(a, size, 0), &ib, &eb)); /* a's hash */
    CHECK(ib != ia && eb != ea && !memcmp(eb, b, size));
    CHECK_EQ_U64(ib->data_bytes[7] ^ ia->data_bytes[7], 1);
    uint8_t e[512];
    memcpy(e, a, size);
    e[0] = 0; /* not an ELF */
    CHECK_FAILS(rv_image_cache_get(c, e, size, 0, &bad, NULL), LM_ERR_INVALID_FILE, "kernel ELF: ");
    CHECK(bad == NULL);
    rv_image_cache_put(c, ia);
    rv_image_cache_put(c, ia2); /* a unheld, kept (keep 1) */
    rv_image_cache_put(c, ib);  /* b unheld too: a, the older, is dropped */
    rv_image_cache_put(c, NULL);
    const rv_image *ib2;
    CHECK_OK(rv_image_cache_get(c, b, size, 0, &ib2, NULL));
    CHECK(ib2 == ib); /* kept */
    rv_image_cache_put(c, ib2);
    rv_image_cache_destroy(c);
    rv_image_cache_destroy(NULL);
}

/* A hold is one more get of an image already held: with nothing kept
 * unheld (keep 0), the image outlives one put per get but not one more. */
static void test_image_cache_hold(void) {
    uint8_t a[512], b[512];
    size_t size = valid_elf(a, sizeof a);
    memcpy(b, a, size);
    b[size - 1] ^= 1;
    rv_image_cache *c;
    CHECK_OK(rv_image_cache_create(0, &c));
    const rv_image *ia, *ia2, *ib;
    const void *ea, *ea2;
    CHECK_OK(rv_image_cache_get(c, a, size, 0, &ia, &ea));
    rv_image_cache_hold(c, ia);
    rv_image_cache_put(c, ia); /* held once more: stays */
    CHECK_OK(rv_image_cache_get(c, b, size, 0, &ib, NULL));
    rv_image_cache_put(c, ib); /* b unheld and dropped; a still held */
    CHECK_EQ_U64(ia->data_bytes[7], a[size - 1]);
    CHECK_OK(rv_image_cache_get(c, a, size, 0, &ia2, &ea2));
    CHECK(ia2 == ia && ea2 == ea);
    rv_image_cache_put(c, ia2);
    rv_image_cache_put(c, ia); /* the hold's put: now dropped */
    rv_image_cache_destroy(c);
}

int main(void) {
    TEST_RUN(test_valid_image);
    TEST_RUN(test_image_cache);
    TEST_RUN(test_image_cache_hold);
    TEST_RUN(test_rejects_bad_header);
    TEST_RUN(test_rejects_bad_segments);
    TEST_RUN(test_rejects_bad_entry);
    TEST_RUN(test_ignores_other_segment_types);
    TEST_RUN(test_truncations_and_corruptions_never_crash);
    return test_summary();
}
