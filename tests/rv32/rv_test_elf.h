/* Test support: builds small RV32 ELF executables in memory (so each loader
 * rejection can be produced by patching one field) and encodes the few
 * instructions the fault and ecall tests need. */
#ifndef LM_TESTS_RV32_RV_TEST_ELF_H
#define LM_TESTS_RV32_RV_TEST_ELF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sim/kernel_map.h"

#define ELF_PF_X 1u
#define ELF_PF_W 2u
#define ELF_PF_R 4u

typedef struct test_seg {
    uint32_t type; /* 0 means PT_LOAD */
    uint32_t vaddr;
    uint32_t flags;
    uint32_t memsz; /* 0 means filesz */
    const void *bytes;
    uint32_t filesz;
} test_seg;

static inline void put32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
static inline void put16(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

/* Offsets of fields patched by the tests. */
#define EH_TYPE 16
#define EH_MACHINE 18
#define EH_ENTRY 24
#define EH_PHOFF 28
#define EH_FLAGS 36
#define EH_PHENTSIZE 42
#define EH_PHNUM 44
#define PH(i) (52 + 32 * (i))
#define PH_TYPE 0
#define PH_OFFSET 4
#define PH_VADDR 8
#define PH_FILESZ 16
#define PH_MEMSZ 20
#define PH_FLAGS 24

/* Writes an ELF with the given segments into out (cap bytes, enough for the
 * caller's data); returns its size. */
static inline size_t test_elf_build(uint8_t *out, size_t cap, uint32_t entry, const test_seg *segs,
                                    int n) {
    memset(out, 0, cap);
    memcpy(out,
           "\x7f"
           "ELF",
           4);
    out[4] = 1; /* ELFCLASS32 */
    out[5] = 1; /* little-endian */
    out[6] = 1;
    put16(out + EH_TYPE, 2);      /* ET_EXEC */
    put16(out + EH_MACHINE, 243); /* EM_RISCV */
    put32(out + 20, 1);
    put32(out + EH_ENTRY, entry);
    put32(out + EH_PHOFF, 52);
    put16(out + 40, 52);
    put16(out + EH_PHENTSIZE, 32);
    put16(out + EH_PHNUM, (uint32_t)n);
    size_t off = 52 + 32 * (size_t)n;
    for (int i = 0; i < n; i++) {
        uint8_t *ph = out + PH(i);
        off = (off + 3) & ~(size_t)3;
        put32(ph + PH_TYPE, segs[i].type ? segs[i].type : 1);
        put32(ph + PH_OFFSET, (uint32_t)off);
        put32(ph + PH_VADDR, segs[i].vaddr);
        put32(ph + 12, segs[i].vaddr);
        put32(ph + PH_FILESZ, segs[i].filesz);
        put32(ph + PH_MEMSZ, segs[i].memsz ? segs[i].memsz : segs[i].filesz);
        put32(ph + PH_FLAGS, segs[i].flags);
        put32(ph + 28, 4);
        if (segs[i].filesz && off + segs[i].filesz <= cap)
            memcpy(out + off, segs[i].bytes, segs[i].filesz);
        off += segs[i].filesz;
    }
    return off;
}

/* One code segment at KMAP_CODE_BASE holding `words`, entry at its start. */
static inline size_t test_elf_code(uint8_t *out, size_t cap, const uint32_t *words, int n) {
    test_seg s = {0, KMAP_CODE_BASE, ELF_PF_R | ELF_PF_X, 0, words, (uint32_t)(4 * n)};
    return test_elf_build(out, cap, KMAP_CODE_BASE, &s, 1);
}

/* Instruction encoders (RV32I formats). */
static inline uint32_t enc_i(uint32_t opc, uint32_t f3, uint32_t rd, uint32_t rs1, int32_t imm) {
    return ((uint32_t)imm & 0xfff) << 20 | rs1 << 15 | f3 << 12 | rd << 7 | opc;
}
static inline uint32_t enc_lui(uint32_t rd, uint32_t imm20) {
    return imm20 << 12 | rd << 7 | 0x37;
}
static inline uint32_t enc_s(uint32_t f3, uint32_t rs1, uint32_t rs2, int32_t imm) {
    uint32_t u = (uint32_t)imm;
    return (u >> 5 & 0x7f) << 25 | rs2 << 20 | rs1 << 15 | f3 << 12 | (u & 31) << 7 | 0x23;
}
static inline uint32_t enc_b(uint32_t f3, uint32_t rs1, uint32_t rs2, int32_t imm) {
    uint32_t u = (uint32_t)imm;
    return (u >> 12 & 1) << 31 | (u >> 5 & 0x3f) << 25 | rs2 << 20 | rs1 << 15 | f3 << 12 |
           (u >> 1 & 0xf) << 8 | (u >> 11 & 1) << 7 | 0x63;
}
static inline uint32_t enc_j(uint32_t rd, int32_t imm) {
    uint32_t u = (uint32_t)imm;
    return (u >> 20 & 1) << 31 | (u >> 1 & 0x3ff) << 21 | (u >> 11 & 1) << 20 |
           (u >> 12 & 0xff) << 12 | rd << 7 | 0x6f;
}
#define ADDI(rd, rs1, imm) enc_i(0x13, 0, rd, rs1, imm)
#define LW(rd, rs1, imm) enc_i(0x03, 2, rd, rs1, imm)
#define SW(rs1, rs2, imm) enc_s(2, rs1, rs2, imm)
#define SB(rs1, rs2, imm) enc_s(0, rs1, rs2, imm)
#define JALR(rd, rs1, imm) enc_i(0x67, 0, rd, rs1, imm)
#define BEQ(rs1, rs2, imm) enc_b(0, rs1, rs2, imm)
#define BNE(rs1, rs2, imm) enc_b(1, rs1, rs2, imm)
#define JAL(rd, imm) enc_j(rd, imm)
#define RET 0x00008067u
#define ECALL 0x00000073u
#define EBREAK 0x00100073u
#define NOP ADDI(0, 0, 0)
#define R_RA 1
#define R_A0 10
#define R_A1 11
#define R_A7 17

#endif
