/* ELF loading and predecoding of kernel images (see rv_image.h). */
#include "sim/rv32/rv_image.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/error.h"
#include "sim/kernel_map.h"

/* ELF constants used here (from the ELF and RISC-V psABI specifications). */
#define ELF_EHDR_SIZE 52u
#define ELF_PHDR_SIZE 32u
#define ELFCLASS32 1u
#define ELFDATA2LSB 1u
#define EV_CURRENT 1u
#define ET_EXEC 2u
#define EM_RISCV 243u
#define EF_RISCV_RVC 0x1u
#define EF_RISCV_FLOAT_ABI 0x6u
#define EF_RISCV_RVE 0x8u
#define PT_LOAD 1u
#define PT_DYNAMIC 2u
#define PT_INTERP 3u
#define PT_TLS 7u
#define PF_X 1u
#define PF_W 2u

/* Real kernels have two or three program headers; the cap bounds the
 * pairwise overlap check and the work a hostile file can ask for. */
#define RV_ELF_MAX_PHDRS 64u

typedef struct rv_segment {
    uint32_t vaddr, memsz, offset, filesz, flags;
} rv_segment;

static uint16_t rd16(const uint8_t *p) {
    return (uint16_t)(p[0] | p[1] << 8);
}
static uint32_t rd32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* One place for the common prefix keeps every message greppable. */
static lm_status bad(const char *fmt, ...) ERR_PRINTF(1, 2);
static lm_status bad(const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return err_set(LM_ERR_INVALID_FILE, "kernel ELF: %s", msg);
}

static bool in_region(uint32_t vaddr, uint32_t memsz, uint32_t base, uint32_t size) {
    return vaddr >= base && ck_range_within(vaddr - base, memsz, size);
}

static lm_status check_header(const uint8_t *e, size_t size, uint32_t *out_phoff,
                              uint32_t *out_phnum) {
    if (size < ELF_EHDR_SIZE)
        return bad("file of %zu bytes is shorter than the 52-byte ELF header", size);
    static const uint8_t magic[4] = {0x7f, 'E', 'L', 'F'};
    if (memcmp(e, magic, sizeof magic) != 0) return bad("not an ELF file (bad magic)");
    if (e[4] != ELFCLASS32) return bad("class %u is not ELFCLASS32 (kernels are rv32)", e[4]);
    if (e[5] != ELFDATA2LSB) return bad("data encoding %u is not little-endian", e[5]);
    if (e[6] != EV_CURRENT) return bad("identification version %u is not 1", e[6]);
    if (rd16(e + 16) != ET_EXEC)
        return bad("type %u is not ET_EXEC (a statically linked executable)", rd16(e + 16));
    if (rd16(e + 18) != EM_RISCV)
        return bad("machine %u is not EM_RISCV (%u)", rd16(e + 18), EM_RISCV);
    if (rd32(e + 20) != EV_CURRENT) return bad("version %u is not 1", rd32(e + 20));
    uint32_t flags = rd32(e + 36);
    if (flags & EF_RISCV_RVC)
        return bad("built for compressed instructions (flags 0x%x); kernels must be "
                   "rv32im",
                   flags);
    if (flags & EF_RISCV_FLOAT_ABI)
        return bad("built for a hardware floating-point ABI (flags 0x%x); kernels use "
                   "ilp32",
                   flags);
    if (flags & EF_RISCV_RVE) return bad("built for RV32E (flags 0x%x)", flags);

    uint32_t phoff = rd32(e + 28), phentsize = rd16(e + 42), phnum = rd16(e + 44);
    if (phnum == 0) return bad("no program headers");
    if (phnum > RV_ELF_MAX_PHDRS)
        return bad("%u program headers; at most %u are accepted", phnum, RV_ELF_MAX_PHDRS);
    if (phentsize != ELF_PHDR_SIZE)
        return bad("program header size %u is not %u", phentsize, ELF_PHDR_SIZE);
    if (!ck_range_within(phoff, (uint64_t)phnum * ELF_PHDR_SIZE, size))
        return bad("program headers at offset %u (%u of them) run past the end of the file", phoff,
                   phnum);
    *out_phoff = phoff;
    *out_phnum = phnum;
    return LM_OK;
}

static lm_status check_segment(const rv_segment *s, unsigned idx, size_t size) {
    if (!ck_range_within(s->offset, s->filesz, size))
        return bad("segment %u: file bytes at offset %u run past the end of the file", idx,
                   s->offset);
    if (s->filesz > s->memsz)
        return bad("segment %u: file size %u exceeds its memory size", idx, s->filesz);
    if ((uint64_t)s->vaddr + s->memsz > UINT32_MAX + 1ull)
        return bad("segment %u at 0x%x wraps around the 32-bit address space", idx, s->vaddr);
    bool in_code = in_region(s->vaddr, s->memsz, KMAP_CODE_BASE, KMAP_CODE_SIZE);
    bool in_local = in_region(s->vaddr, s->memsz, KMAP_LOCAL_BASE, KMAP_LOCAL_SIZE);
    if (s->flags & PF_X) {
        if (s->flags & PF_W) return bad("segment %u is both writable and executable", idx);
        if (!in_code)
            return bad("executable segment %u at 0x%x lies outside the code region", idx, s->vaddr);
        if (s->vaddr % 4 != 0)
            return bad("executable segment %u at 0x%x is not 4-byte aligned", idx, s->vaddr);
    } else if (s->flags & PF_W) {
        if (!in_local)
            return bad("writable segment %u at 0x%x lies outside the local region", idx, s->vaddr);
    } else if (!in_code && !in_local) {
        return bad("segment %u at 0x%x lies outside the code and local regions", idx, s->vaddr);
    }
    return LM_OK;
}

/* Reads, checks and collects the PT_LOAD segments with a nonzero size. */
static lm_status collect_segments(const uint8_t *e, size_t size, rv_segment *segs,
                                  uint32_t *out_count) {
    uint32_t phoff = 0, phnum = 0, n = 0;
    lm_status st = check_header(e, size, &phoff, &phnum);
    if (st) return st;
    for (uint32_t i = 0; i < phnum; i++) {
        const uint8_t *ph = e + phoff + (size_t)i * ELF_PHDR_SIZE;
        uint32_t type = rd32(ph);
        if (type == PT_DYNAMIC || type == PT_INTERP || type == PT_TLS)
            return bad("segment %u has type %u (dynamic linking and TLS are not supported)", i,
                       type);
        if (type != PT_LOAD) continue;
        rv_segment s = {.offset = rd32(ph + 4),
                        .vaddr = rd32(ph + 8),
                        .filesz = rd32(ph + 16),
                        .memsz = rd32(ph + 20),
                        .flags = rd32(ph + 24)};
        if (s.memsz == 0 && s.filesz == 0) continue;
        if ((st = check_segment(&s, i, size))) return st;
        for (uint32_t j = 0; j < n; j++) {
            if (s.vaddr < segs[j].vaddr + segs[j].memsz && segs[j].vaddr < s.vaddr + s.memsz)
                return bad("segment %u at 0x%x overlaps an earlier segment", i, s.vaddr);
        }
        segs[n++] = s;
    }
    *out_count = n;
    return LM_OK;
}

static lm_status check_entry(uint32_t entry, const rv_segment *segs, uint32_t n) {
    if (entry % 4 != 0) return bad("entry point 0x%x is not 4-byte aligned", entry);
    for (uint32_t i = 0; i < n; i++) {
        if ((segs[i].flags & PF_X) && entry >= segs[i].vaddr &&
            entry - segs[i].vaddr < segs[i].memsz)
            return LM_OK;
    }
    return bad("entry point 0x%x is not inside an executable segment", entry);
}

/* Decodes every word of the code extent, computes the block lengths
 * backwards (a word's run ends where the next block-ending operation is),
 * fuses common pairs, then spreads the words over the handler copies. */
static void predecode(rv_insn *insns, uint32_t code_size, const uint8_t *code,
                      const rv_segment *segs, uint32_t n) {
    uint32_t count = code_size / 4;
    for (uint32_t i = 0; i <= count; i++)
        insns[i] = (rv_insn){.op = RV_OP_NOEXEC};
    for (uint32_t s = 0; s < n; s++) {
        if (!(segs[s].flags & PF_X)) continue;
        uint32_t first = (segs[s].vaddr - KMAP_CODE_BASE) / 4;
        uint32_t last = (segs[s].vaddr - KMAP_CODE_BASE + segs[s].memsz + 3) / 4;
        for (uint32_t i = first; i < last; i++)
            insns[i] = rv_decode(rd32(code + 4 * (size_t)i), KMAP_CODE_BASE + 4 * i, KMAP_CODE_BASE,
                                 KMAP_CODE_BASE + code_size);
    }
    insns[count].block_len = 1;
    for (uint32_t i = count; i-- > 0;)
        insns[i].block_len = rv_op_ends_block((rv_op)insns[i].op) ? 1 : insns[i + 1].block_len + 1;
    rv_fuse(insns, count, KMAP_CODE_BASE, KMAP_CODE_BASE + code_size);
    rv_spread(insns, count);
}

lm_status rv_image_load(const void *elf, size_t size, rv_image **out_image) {
    *out_image = NULL;
    if (elf == NULL && size != 0)
        return err_set(LM_ERR_INVALID_ARGUMENT, "rv_image_load: elf is NULL");
    const uint8_t *e = elf;
    rv_segment segs[RV_ELF_MAX_PHDRS];
    uint32_t n = 0;
    lm_status st = collect_segments(e, size, segs, &n);
    if (st) return st;
    if ((st = check_entry(rd32(e + 24), segs, n))) return st;

    uint32_t code_size = 0, data_size = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t end = segs[i].vaddr + segs[i].memsz;
        if (segs[i].vaddr >= KMAP_CODE_BASE) {
            uint32_t ext = (end - KMAP_CODE_BASE + 3) & ~3u;
            if (ext > code_size) code_size = ext;
        } else if (end - KMAP_LOCAL_BASE > data_size) {
            data_size = end - KMAP_LOCAL_BASE;
        }
    }
    /* Sizes are bounded by the 1 MiB code and 128 KiB local regions. */
    size_t insn_bytes = ((size_t)code_size / 4 + 1) * sizeof(rv_insn);
    rv_image *img = calloc(1, sizeof *img + insn_bytes + code_size + data_size);
    if (!img)
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "rv_image_load: no memory for a %u-byte image",
                       code_size);
    rv_insn *insns = (rv_insn *)(img + 1);
    uint8_t *code = (uint8_t *)insns + insn_bytes;
    uint8_t *data = code + code_size;
    for (uint32_t i = 0; i < n; i++) {
        const rv_segment *s = &segs[i];
        uint8_t *dst = s->vaddr >= KMAP_CODE_BASE ? code + (s->vaddr - KMAP_CODE_BASE)
                                                  : data + (s->vaddr - KMAP_LOCAL_BASE);
        if (s->filesz) memcpy(dst, e + s->offset, s->filesz);
    }
    predecode(insns, code_size, code, segs, n);
    img->entry = rd32(e + 24);
    img->code_size = code_size;
    img->code_bytes = code;
    img->insns = insns;
    img->data_size = data_size;
    img->data_bytes = data;
    *out_image = img;
    return LM_OK;
}

void rv_image_free(rv_image *image) {
    free(image);
}
