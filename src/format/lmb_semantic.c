/* Semantic verifier: replays the command list symbolically, tracking which
 * ids exist, and checks every value against the device descriptor and the
 * device limits. Runs on a structurally verified file, so reads cannot fail;
 * each check that does fail names the command index, its type and the field. */
#include "format/lmb_semantic.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/error.h"
#include "base/idmap.h"
#include "base/shard.h"
#include "base/text.h"
#include "lightmetal/lm_device.h"
#include "format/lmb_enums.h"

#define LMB_CB_COUNT 32

void lmb_semantic_options_init(lmb_semantic_options *opts) {
    memset(opts, 0, sizeof *opts);
    opts->max_runtime_args = 341;
    opts->max_grid = 32;
    opts->max_compile_args = 64;
    opts->max_semaphores = 16;
    opts->max_core_ranges = 16;
}

/* ------------------------------------------------------------ id tables */

/* Id maps (base/idmap.h): a nonzero 32-bit id to a kind-specific value. */
typedef idmap sem_map;

static uint64_t *sem_find(const sem_map *m, uint32_t key) {
    return idmap_find(m, key);
}

static bool sem_put(sem_map *m, uint32_t key, uint64_t value) {
    return idmap_put(m, key, value);
}

static void sem_free(sem_map *m) {
    idmap_free(m);
}

/* Value layout: bit 63 = released; the rest is kind-specific. */
#define SEM_DEAD (1ull << 63)

/* A created buffer: what later commands check against. */
typedef struct sem_buffer {
    uint64_t size, page_size;
    uint64_t start, end; /* bytes [start, end) in each of its banks */
    bool l1;
} sem_buffer;

/* Per-bank ranges of the buffers alive now, sorted by start (they never
 * overlap, so the order is total): overlap checks in O(log n). */
typedef struct sem_span {
    uint64_t start, end;
    uint32_t id;
} sem_span;

typedef struct sem_spans {
    sem_span *v;
    size_t count, cap;
} sem_spans;

typedef struct sem {
    const lmb_semantic_options *opts;
    fb_table root;
    uint16_t grid_x, grid_y;
    uint32_t l1_size;
    uint32_t dram_banks;
    uint64_t dram_limit;  /* bank bytes below the trace region */
    uint32_t queues;      /* command queues the descriptor gives */
    uint32_t queues_used; /* bit q: some command names queue q */
    sem_buffer *bufs;     /* indexed by the buffers map's values */
    size_t buf_count, buf_cap;
    sem_spans live[2]; /* [0] DRAM, [1] L1 */
    sem_map buffers;   /* id -> index into bufs */
    sem_map programs;  /* id -> 0 */
    sem_map kernels;   /* id -> owning program */
    sem_map cbs;
    sem_map traces; /* id -> 1 captured/loaded, 2 capturing */
    sem_map events; /* id -> the queue it was recorded on */
    int64_t index;  /* current command, or -1 for file-level checks */
    const char *type;
    bool oom;
} sem;

static lm_status sem_fail(const sem *s, const char *field, const char *fmt, ...) ERR_PRINTF(3, 4);

static lm_status sem_fail(const sem *s, const char *field, const char *fmt, ...) {
    char detail[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    if (s->index >= 0)
        return err_set(LM_ERR_INVALID_FILE, "invalid binary: commands[%" PRId64 "] (%s).%s: %s",
                       s->index, s->type, field, detail);
    return err_set(LM_ERR_INVALID_FILE, "invalid binary: %s: %s", field, detail);
}

/* A C identifier of at most 255 characters, as the kernel build accepts. */
static bool sem_identifier(fb_str name) {
    if (!name.ptr || name.len == 0 || name.len > 255) return false;
    for (uint32_t i = 0; i < name.len; i++) {
        char ch = name.ptr[i];
        bool alpha = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
        if (!alpha && !(i > 0 && ch >= '0' && ch <= '9')) return false;
    }
    return true;
}

#define SEM_STR_(x) #x
#define SEM_STR(x) SEM_STR_(x)

const char *lmb_launch_label_problem(const char *label, size_t len) {
    if (len > LM_MAX_LAUNCH_LABEL) return "is longer than " SEM_STR(LM_MAX_LAUNCH_LABEL) " bytes";
    for (size_t i = 0, n; i < len; i += n)
        if ((n = text_char_len(label + i, len - i)) == 0)
            return "is not one line of printable UTF-8 (a control character or a malformed byte)";
    return NULL;
}

/* The defines and named compile-time args a kernel records (for inspection:
 * its binary embodies them): names are identifiers, values one line. */
static lm_status sem_kernel_names(const sem *s, fb_table cfg) {
    fb_vec defs = lmb_KernelConfig_defines(cfg), named = lmb_KernelConfig_named_compile_args(cfg);
    if (defs.len > s->opts->max_compile_args || named.len > s->opts->max_compile_args)
        return sem_fail(s, defs.len > named.len ? "config.defines" : "config.named_compile_args",
                        "%" PRIu32 " entries (limit %" PRIu32 ")",
                        defs.len > named.len ? defs.len : named.len, s->opts->max_compile_args);
    char f[64];
    for (uint32_t i = 0; i < defs.len; i++) {
        fb_table d = fb_vec_table(defs, i);
        fb_str name = lmb_KernelDefine_name(d), value = lmb_KernelDefine_value(d);
        snprintf(f, sizeof f, "config.defines[%" PRIu32 "]", i);
        if (!sem_identifier(name)) return sem_fail(s, f, "name is not a C identifier");
        if (value.ptr && (memchr(value.ptr, '\n', value.len) || memchr(value.ptr, '\r', value.len)))
            return sem_fail(s, f, "value contains a line break");
    }
    for (uint32_t i = 0; i < named.len; i++) {
        snprintf(f, sizeof f, "config.named_compile_args[%" PRIu32 "]", i);
        fb_str name = lmb_NamedCompileArg_name(fb_vec_table(named, i));
        if (!sem_identifier(name)) return sem_fail(s, f, "name is not an identifier");
        for (uint32_t j = 0; j < i; j++) {
            fb_str other = lmb_NamedCompileArg_name(fb_vec_table(named, j));
            if (other.len == name.len && !memcmp(other.ptr, name.ptr, name.len))
                return sem_fail(s, f, "name '%.*s' is given twice", (int)name.len, name.ptr);
        }
    }
    return LM_OK;
}

static lm_status sem_oom(void) {
    return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "lmb_verify_semantics: out of memory");
}

/* Defines a new id in `m`; fails if it is 0 or was ever defined before. */
static lm_status sem_define(sem *s, sem_map *m, const char *field, const char *kind, uint32_t id,
                            uint64_t value) {
    if (id == 0) return sem_fail(s, field, "%s id 0 is reserved", kind);
    if (sem_find(m, id)) return sem_fail(s, field, "%s %" PRIu32 " is defined twice", kind, id);
    return sem_put(m, id, value) ? LM_OK : sem_oom();
}

/* Looks up a live id; *out_value receives its value. A failure returns the
 * constant LM_ERR_INVALID_FILE (what sem_fail returns) so that the compiler
 * sees callers never read *out_value after one. */
static lm_status sem_use(const sem *s, const sem_map *m, const char *field, const char *kind,
                         uint32_t id, uint64_t *out_value) {
    const uint64_t *v = sem_find(m, id);
    if (!v) {
        sem_fail(s, field, "%s %" PRIu32 " is used before it is defined", kind, id);
        return LM_ERR_INVALID_FILE;
    }
    if (*v & SEM_DEAD) {
        sem_fail(s, field, "%s %" PRIu32 " is used after its release", kind, id);
        return LM_ERR_INVALID_FILE;
    }
    if (out_value) *out_value = *v;
    return LM_OK;
}

static lm_status sem_release(sem *s, sem_map *m, const char *field, const char *kind, uint32_t id) {
    lm_status st = sem_use(s, m, field, kind, id, NULL);
    if (st) return st;
    *sem_find(m, id) |= SEM_DEAD;
    return LM_OK;
}

/* ------------------------------------------------------------ values */

static lm_status sem_core(const sem *s, const char *field, lmb_CoreCoord c) {
    if (c.x >= s->grid_x || c.y >= s->grid_y)
        return sem_fail(s, field, "core (%u,%u) is outside the %ux%u grid", c.x, c.y, s->grid_x,
                        s->grid_y);
    return LM_OK;
}

static lm_status sem_core_ranges(const sem *s, const char *field, fb_vec ranges) {
    char f[64];
    if (ranges.len == 0) return sem_fail(s, field, "no cores");
    if (ranges.len > s->opts->max_core_ranges)
        return sem_fail(s, field, "%" PRIu32 " core ranges (at most %" PRIu32 ")", ranges.len,
                        s->opts->max_core_ranges);
    for (uint32_t i = 0; i < ranges.len; i++) {
        lmb_CoreRange r = lmb_vec_CoreRange_at(ranges, i);
        snprintf(f, sizeof f, "%s[%" PRIu32 "]", field, i);
        if (r.start.x > r.end.x || r.start.y > r.end.y)
            return sem_fail(s, f, "core range (%u,%u)-(%u,%u) is reversed", r.start.x, r.start.y,
                            r.end.x, r.end.y);
        if (r.end.x >= s->grid_x || r.end.y >= s->grid_y)
            return sem_fail(s, f, "core range (%u,%u)-(%u,%u) is outside the %ux%u grid", r.start.x,
                            r.start.y, r.end.x, r.end.y, s->grid_x, s->grid_y);
    }
    return LM_OK;
}

static lm_status sem_args(const sem *s, const char *field, fb_vec args) {
    if (args.len > s->opts->max_runtime_args)
        return sem_fail(s, field, "%" PRIu32 " runtime args (limit %" PRIu32 ")", args.len,
                        s->opts->max_runtime_args);
    return LM_OK;
}

/* The program must be live and the kernel one of its kernels. */
static lm_status sem_kernel_of(const sem *s, uint32_t program, uint32_t kernel) {
    lm_status st = sem_use(s, &s->programs, "program_id", "program", program, NULL);
    uint64_t owner = 0;
    if (!st) st = sem_use(s, &s->kernels, "kernel_id", "kernel", kernel, &owner);
    if (!st && owner != program)
        st = sem_fail(s, "kernel_id",
                      "kernel %" PRIu32 " belongs to program %" PRIu64 ", not %" PRIu32, kernel,
                      owner, program);
    return st;
}

/* A live buffer's record. */
static lm_status sem_buffer_use(const sem *s, const char *field, uint32_t id,
                                const sem_buffer **out) {
    uint64_t index = 0;
    lm_status st = sem_use(s, &s->buffers, field, "buffer", id, &index);
    if (!st) *out = &s->bufs[index];
    return st;
}

/* Writes and goldens cover their buffer exactly: a shorter blob would leave
 * part of the buffer unchecked or stale without saying so. */
static lm_status sem_blob_matches(const sem *s, const char *field, uint32_t buffer,
                                  lmb_BlobRef ref) {
    const sem_buffer *b;
    lm_status st = sem_buffer_use(s, "buffer_id", buffer, &b);
    if (!st && ref.size != b->size)
        st = sem_fail(s, field, "%" PRIu64 " bytes for buffer %" PRIu32 " of %" PRIu64 " bytes",
                      ref.size, buffer, b->size);
    return st;
}

/* A region of `size` bytes at `offset` lies inside the buffer. */
static lm_status sem_region(const sem *s, const char *field, uint32_t buffer, uint64_t offset,
                            uint64_t size) {
    const sem_buffer *b;
    lm_status st = sem_buffer_use(s, "buffer_id", buffer, &b);
    if (!st && (size == 0 || offset > b->size || size > b->size - offset))
        st = sem_fail(s, field,
                      "region of %" PRIu64 " bytes at offset %" PRIu64 " for buffer %" PRIu32
                      " of %" PRIu64 " bytes",
                      size, offset, buffer, b->size);
    return st;
}

/* A circular buffer's size, formats and (optional) L1 buffer. */
static lm_status sem_cb_config(const sem *s, uint32_t total, fb_vec fm, uint32_t global) {
    lm_status st;
    char f[64];
    if (total == 0 || total > s->l1_size)
        return sem_fail(s, "total_size", "%" PRIu32 " bytes (L1 holds %" PRIu32 ")", total,
                        s->l1_size);
    if (fm.len == 0) return sem_fail(s, "formats", "no CB index configured");
    uint32_t seen = 0;
    for (uint32_t i = 0; i < fm.len; i++) {
        lmb_CBFormat cf = lmb_vec_CBFormat_at(fm, i);
        snprintf(f, sizeof f, "formats[%" PRIu32 "]", i);
        if (cf.index >= LMB_CB_COUNT)
            return sem_fail(s, f, "CB index %u (must be < %d)", cf.index, LMB_CB_COUNT);
        if (seen & (1u << cf.index)) return sem_fail(s, f, "CB index %u appears twice", cf.index);
        seen |= 1u << cf.index;
        if (cf.format == LMB_DataFormat_Invalid || cf.format > LMB_DataFormat_MAX)
            return sem_fail(s, f, "data format %u is not valid", cf.format);
        if (cf.page_size == 0 || total % cf.page_size)
            return sem_fail(s, f, "page size %" PRIu32 " does not divide total size %" PRIu32,
                            cf.page_size, total);
    }
    if (global) {
        const sem_buffer *b;
        if ((st = sem_buffer_use(s, "global_buffer_id", global, &b))) return st;
        if (!b->l1)
            return sem_fail(s, "global_buffer_id",
                            "buffer %" PRIu32 " is in DRAM; a circular buffer needs L1", global);
        if (b->end - b->start < total)
            return sem_fail(s, "global_buffer_id",
                            "buffer %" PRIu32 " holds %" PRIu64
                            " bytes per core, the circular buffer needs %" PRIu32,
                            global, b->end - b->start, total);
    }
    return LM_OK;
}

static lm_status sem_queue(sem *s, uint8_t cq_id) {
    if (cq_id >= s->queues)
        return sem_fail(s, "cq_id", "command queue %u (the device has %" PRIu32 ")", cq_id,
                        s->queues);
    s->queues_used |= 1u << cq_id;
    return LM_OK;
}

/* ------------------------------------------------------------ buffers */

/* Index of the first live span that ends after `start`. */
static size_t sem_span_find(const sem_spans *sp, uint64_t start) {
    size_t lo = 0, hi = sp->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sp->v[mid].end <= start)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static lm_status sem_span_add(sem *s, sem_spans *sp, uint32_t id, const sem_buffer *b) {
    size_t at = sem_span_find(sp, b->start);
    if (at < sp->count && sp->v[at].start < b->end)
        return sem_fail(s, "address",
                        "%s buffer %" PRIu32 " at [0x%" PRIx64 ", 0x%" PRIx64
                        ") of each bank overlaps buffer %" PRIu32 " at [0x%" PRIx64 ", 0x%" PRIx64
                        "), which is still alive",
                        b->l1 ? "L1" : "DRAM", id, b->start, b->end, sp->v[at].id, sp->v[at].start,
                        sp->v[at].end);
    if (sp->count == sp->cap) {
        size_t cap = sp->cap ? sp->cap * 2 : 64;
        sem_span *v = realloc(sp->v, cap * sizeof *v);
        if (!v) return sem_oom();
        sp->v = v;
        sp->cap = cap;
    }
    memmove(&sp->v[at + 1], &sp->v[at], (sp->count - at) * sizeof *sp->v);
    sp->v[at] = (sem_span){b->start, b->end, id};
    sp->count++;
    return LM_OK;
}

static void sem_span_remove(sem_spans *sp, const sem_buffer *b) {
    size_t at = sem_span_find(sp, b->start);
    if (at < sp->count && sp->v[at].start == b->start) {
        memmove(&sp->v[at], &sp->v[at + 1], (sp->count - at - 1) * sizeof *sp->v);
        sp->count--;
    }
}

/* Checks a CreateBuffer against the descriptor's geometry and the buffers
 * alive now, then defines it. */
static lm_status sem_create_buffer(sem *s, fb_table c) {
    uint32_t id = lmb_CreateBuffer_buffer_id(c);
    uint64_t size = lmb_CreateBuffer_size(c), page = lmb_CreateBuffer_page_size(c);
    uint64_t address = lmb_CreateBuffer_address(c);
    lmb_BufferType bt = lmb_CreateBuffer_type(c);
    if (bt != LMB_BufferType_DRAM && bt != LMB_BufferType_L1)
        return sem_fail(s, "type", "buffer type %u is not DRAM or L1", bt);
    lmb_BufferLayout layout = lmb_CreateBuffer_layout(c);
    if (layout < LMB_BufferLayout_Interleaved || layout > LMB_BufferLayout_MAX)
        return sem_fail(s, "layout", "layout %u is not a buffer layout", layout);
    if (page == 0) return sem_fail(s, "page_size", "page size 0");
    if (size == 0 || size % page)
        return sem_fail(s, "size",
                        "size %" PRIu64 " is not a nonzero multiple of page size %" PRIu64, size,
                        page);
    /* Sharded: the geometry as the API checks it, and a whole shard per core
     * (or DRAM bank). */
    uint64_t shard_pages = 0;
    if (layout != LMB_BufferLayout_Interleaved) {
        lm_shard_spec spec;
        shard_geometry g;
        uint32_t gx, gy;
        if (!lmb_CreateBuffer_shard(c)) return sem_fail(s, "shard", "no shard spec");
        lmb_buffer_layout(c, &spec);
        shard_grid(bt == LMB_BufferType_DRAM, s->grid_x, s->grid_y, s->dram_banks, &gx, &gy);
        if (shard_geometry_make((lm_buffer_layout)layout, &spec, size / page, gx, gy, &g))
            return sem_fail(s, "shard", "%s", lm_last_error());
        shard_pages = (uint64_t)g.shard_h * g.shard_w;
    }
    const lmb_memory_map *mm = &s->opts->memory_map;
    bool l1 = bt == LMB_BufferType_L1;
    uint32_t align = l1 ? mm->l1_alignment : mm->dram_alignment;
    uint64_t banks = l1 ? (uint64_t)s->grid_x * s->grid_y : s->dram_banks;
    uint64_t lo = l1 ? mm->l1_base : 0, hi = l1 ? s->l1_size : s->dram_limit;
    uint64_t stride = page, per_bank, end;
    if ((align && !ck_align_up_u64(page, align, &stride)) ||
        !ck_mul_u64(shard_pages ? shard_pages : ck_div_ceil_u64(size / page, banks), stride,
                    &per_bank) ||
        !ck_add_u64(address, per_bank, &end) || address < lo || end > hi)
        return sem_fail(s, "size",
                        "%s buffer of %" PRIu64 " bytes in pages of %" PRIu64 " at 0x%" PRIx64
                        " does not fit [0x%" PRIx64 ", 0x%" PRIx64 ") of its %" PRIu64 " banks",
                        l1 ? "L1" : "DRAM", size, page, address, lo, hi, banks);
    if (align && address % align)
        return sem_fail(s, "address", "0x%" PRIx64 " is not a multiple of %" PRIu32, address,
                        align);
    if (s->buf_count == s->buf_cap) {
        size_t cap = s->buf_cap ? s->buf_cap * 2 : 64;
        sem_buffer *v = realloc(s->bufs, cap * sizeof *v);
        if (!v) return sem_oom();
        s->bufs = v;
        s->buf_cap = cap;
    }
    sem_buffer b = {size, page, address, end, l1};
    lm_status st = sem_define(s, &s->buffers, "buffer_id", "buffer", id, s->buf_count);
    if (!st) st = sem_span_add(s, &s->live[l1], id, &b);
    if (!st) s->bufs[s->buf_count++] = b;
    return st;
}

static lm_status sem_deallocate_buffer(sem *s, uint32_t id) {
    const sem_buffer *b;
    lm_status st = sem_buffer_use(s, "buffer_id", id, &b);
    if (st) return st;
    sem_span_remove(&s->live[b->l1], b);
    return sem_release(s, &s->buffers, "buffer_id", "buffer", id);
}

/* ------------------------------------------------------------ kernel ELFs */

#define ELF_EM_RISCV 243
#define ELF_ET_EXEC 2
#define ELF_PT_LOAD 1
#define ELF_PF_X 1
#define ELF_PF_W 2

static bool elf_in(uint64_t base, uint64_t size, uint64_t addr, uint64_t len) {
    return addr >= base && ck_range_within(addr - base, len, size);
}

lm_status lmb_check_kernel_elf(const uint8_t *elf, uint64_t size, const lmb_kernel_map *map,
                               const char *what) {
#define ELF_FAIL(...)                                                                              \
    err_prefix(err_set(LM_ERR_INVALID_FILE, __VA_ARGS__), "invalid binary: %s", what)
    if (size < 52 || memcmp(elf, "\177ELF", 4) != 0) return ELF_FAIL("not an ELF file");
    if (elf[4] != 1 || elf[5] != 1) return ELF_FAIL("not a 32-bit little-endian ELF");
    if (fb_rd_u16(elf + 16) != ELF_ET_EXEC)
        return ELF_FAIL("not an executable (e_type %u)", fb_rd_u16(elf + 16));
    if (fb_rd_u16(elf + 18) != ELF_EM_RISCV)
        return ELF_FAIL("not a RISC-V ELF (e_machine %u)", fb_rd_u16(elf + 18));
    uint32_t entry = fb_rd_u32(elf + 24), phoff = fb_rd_u32(elf + 28);
    uint16_t phentsize = fb_rd_u16(elf + 42), phnum = fb_rd_u16(elf + 44);
    if (phnum == 0) return ELF_FAIL("no program headers");
    if (phentsize != 32) return ELF_FAIL("program header size %u (expected 32)", phentsize);
    if (!ck_range_within(phoff, (uint64_t)phnum * 32, size))
        return ELF_FAIL("program headers [%" PRIu32 ", +%u) outside the %" PRIu64 "-byte file",
                        phoff, phnum * 32u, size);
    bool has_map = map && (map->code_size || map->local_size);
    bool entry_ok = false;
    for (uint16_t i = 0; i < phnum; i++) {
        const uint8_t *ph = elf + phoff + 32u * i;
        if (fb_rd_u32(ph) != ELF_PT_LOAD) continue;
        uint32_t off = fb_rd_u32(ph + 4), vaddr = fb_rd_u32(ph + 8), filesz = fb_rd_u32(ph + 16);
        uint32_t memsz = fb_rd_u32(ph + 20), flags = fb_rd_u32(ph + 24);
        if (!ck_range_within(off, filesz, size))
            return ELF_FAIL("segment %u: file bytes [%" PRIu32 ", +%" PRIu32 ") outside the file",
                            i, off, filesz);
        if (filesz > memsz)
            return ELF_FAIL("segment %u: file size %" PRIu32 " exceeds memory size %" PRIu32, i,
                            filesz, memsz);
        if (has_map) {
            bool writable = flags & ELF_PF_W;
            uint64_t base = writable ? map->local_base : map->code_base;
            uint64_t limit = writable ? map->local_size : map->code_size;
            if (!elf_in(base, limit, vaddr, memsz))
                return ELF_FAIL("segment %u: %s [0x%08" PRIx32 ", +0x%" PRIx32
                                ") outside [0x%08" PRIx64 ", +0x%" PRIx64 ")",
                                i, writable ? "writable" : "code", vaddr, memsz, base, limit);
        }
        if ((flags & ELF_PF_X) && entry >= vaddr && entry - vaddr < memsz) entry_ok = true;
    }
    if (!entry_ok)
        return ELF_FAIL("entry point 0x%08" PRIx32 " is not in an executable segment", entry);
    return LM_OK;
#undef ELF_FAIL
}

/* ------------------------------------------------------------ commands */

static lm_status sem_command(sem *s, lmb_Command type, fb_table c) {
    lm_status st = LM_OK;
    char f[64];
    switch (type) {
    case LMB_Command_CreateBuffer:
        return sem_create_buffer(s, c);
    case LMB_Command_DeallocateBuffer:
        return sem_deallocate_buffer(s, lmb_DeallocateBuffer_buffer_id(c));
    case LMB_Command_EnqueueWriteBuffer:
        if ((st = sem_queue(s, lmb_EnqueueWriteBuffer_cq_id(c)))) return st;
        if (!lmb_EnqueueWriteBuffer_region(c) && lmb_EnqueueWriteBuffer_offset(c))
            return sem_fail(s, "offset", "an offset on a whole-buffer write");
        if (lmb_EnqueueWriteBuffer_region(c))
            return sem_region(s, "data", lmb_EnqueueWriteBuffer_buffer_id(c),
                              lmb_EnqueueWriteBuffer_offset(c),
                              lmb_EnqueueWriteBuffer_data(c).size);
        return sem_blob_matches(s, "data", lmb_EnqueueWriteBuffer_buffer_id(c),
                                lmb_EnqueueWriteBuffer_data(c));
    case LMB_Command_EnqueueReadBuffer:
        if ((st = sem_queue(s, lmb_EnqueueReadBuffer_cq_id(c)))) return st;
        if (lmb_EnqueueReadBuffer_size(c))
            return sem_region(s, "size", lmb_EnqueueReadBuffer_buffer_id(c),
                              lmb_EnqueueReadBuffer_offset(c), lmb_EnqueueReadBuffer_size(c));
        if (lmb_EnqueueReadBuffer_offset(c))
            return sem_fail(s, "offset", "an offset on a whole-buffer read");
        return sem_use(s, &s->buffers, "buffer_id", "buffer", lmb_EnqueueReadBuffer_buffer_id(c),
                       NULL);
    case LMB_Command_WriteDeviceL1: {
        if ((st = sem_queue(s, lmb_WriteDeviceL1_cq_id(c)))) return st;
        if ((st = sem_core(s, "core", lmb_WriteDeviceL1_core(c)))) return st;
        uint64_t at = lmb_WriteDeviceL1_address(c), size = lmb_WriteDeviceL1_data(c).size;
        uint64_t lo = s->opts->memory_map.l1_base;
        if (size == 0 || at < lo || at > s->l1_size || size > s->l1_size - at)
            return sem_fail(s, "data",
                            "%" PRIu64 " bytes at L1 0x%" PRIx64 " do not fit [0x%" PRIx64
                            ", 0x%" PRIx32 ")",
                            size, at, lo, s->l1_size);
        return LM_OK;
    }
    case LMB_Command_EnqueueRecordEvent:
        if ((st = sem_queue(s, lmb_EnqueueRecordEvent_cq_id(c)))) return st;
        return sem_define(s, &s->events, "event_id", "event", lmb_EnqueueRecordEvent_event_id(c),
                          lmb_EnqueueRecordEvent_cq_id(c));
    case LMB_Command_EnqueueWaitForEvent:
        if ((st = sem_queue(s, lmb_EnqueueWaitForEvent_cq_id(c)))) return st;
        return sem_use(s, &s->events, "event_id", "event", lmb_EnqueueWaitForEvent_event_id(c),
                       NULL);
    case LMB_Command_EventSynchronize:
        return sem_use(s, &s->events, "event_id", "event", lmb_EventSynchronize_event_id(c), NULL);
    case LMB_Command_CompareToGolden:
        if ((st = sem_queue(s, lmb_CompareToGolden_cq_id(c)))) return st;
        return sem_blob_matches(s, "golden", lmb_CompareToGolden_buffer_id(c),
                                lmb_CompareToGolden_golden(c));
    case LMB_Command_FinishQueue:
        return sem_queue(s, lmb_FinishQueue_cq_id(c));
    case LMB_Command_CreateProgram:
        return sem_define(s, &s->programs, "program_id", "program", lmb_CreateProgram_program_id(c),
                          0);
    case LMB_Command_ReleaseProgram:
        return sem_release(s, &s->programs, "program_id", "program",
                           lmb_ReleaseProgram_program_id(c));
    case LMB_Command_CreateKernel: {
        uint32_t program = lmb_CreateKernel_program_id(c);
        lmb_BlobRef elf;
        if ((st = sem_use(s, &s->programs, "program_id", "program", program, NULL))) return st;
        if (!lmb_find_kernel_binary(s->root, lmb_CreateKernel_binary_hash(c), &elf))
            return sem_fail(s, "binary_hash", "no kernel binary with hash %016" PRIx64,
                            lmb_CreateKernel_binary_hash(c));
        if ((st = sem_core_ranges(s, "cores", lmb_CreateKernel_cores(c)))) return st;
        fb_table cfg = lmb_CreateKernel_config(c);
        if (lmb_KernelConfig_processor(cfg) == LMB_Processor_Invalid)
            return sem_fail(s, "config.processor", "processor is Invalid");
        if (lmb_KernelConfig_compile_args(cfg).len > s->opts->max_compile_args)
            return sem_fail(s, "config.compile_args",
                            "%" PRIu32 " compile args (limit %" PRIu32 ")",
                            lmb_KernelConfig_compile_args(cfg).len, s->opts->max_compile_args);
        if ((st = sem_kernel_names(s, cfg))) return st;
        return sem_define(s, &s->kernels, "kernel_id", "kernel", lmb_CreateKernel_kernel_id(c),
                          program);
    }
    case LMB_Command_SetRuntimeArgs:
        if ((st = sem_kernel_of(s, lmb_SetRuntimeArgs_program_id(c),
                                lmb_SetRuntimeArgs_kernel_id(c))))
            return st;
        if ((st = sem_core(s, "core", lmb_SetRuntimeArgs_core(c)))) return st;
        return sem_args(s, "args", lmb_SetRuntimeArgs_args(c));
    case LMB_Command_SetRuntimeArgsMulti: {
        if ((st = sem_kernel_of(s, lmb_SetRuntimeArgsMulti_program_id(c),
                                lmb_SetRuntimeArgsMulti_kernel_id(c))))
            return st;
        fb_vec per = lmb_SetRuntimeArgsMulti_per_core(c);
        for (uint32_t i = 0; i < per.len; i++) {
            fb_table pc = fb_vec_table(per, i);
            snprintf(f, sizeof f, "per_core[%" PRIu32 "].core", i);
            if ((st = sem_core(s, f, lmb_CoreArgs_core(pc)))) return st;
            snprintf(f, sizeof f, "per_core[%" PRIu32 "].args", i);
            if ((st = sem_args(s, f, lmb_CoreArgs_args(pc)))) return st;
        }
        return LM_OK;
    }
    case LMB_Command_SetCommonRuntimeArgs:
        if ((st = sem_kernel_of(s, lmb_SetCommonRuntimeArgs_program_id(c),
                                lmb_SetCommonRuntimeArgs_kernel_id(c))))
            return st;
        return sem_args(s, "args", lmb_SetCommonRuntimeArgs_args(c));
    case LMB_Command_CreateCircularBuffer: {
        if ((st = sem_use(s, &s->programs, "program_id", "program",
                          lmb_CreateCircularBuffer_program_id(c), NULL)) ||
            (st = sem_core_ranges(s, "cores", lmb_CreateCircularBuffer_cores(c))))
            return st;
        if ((st = sem_cb_config(s, lmb_CreateCircularBuffer_total_size(c),
                                lmb_CreateCircularBuffer_formats(c),
                                lmb_CreateCircularBuffer_global_buffer_id(c))))
            return st;
        return sem_define(s, &s->cbs, "cb_id", "circular buffer", lmb_CreateCircularBuffer_cb_id(c),
                          lmb_CreateCircularBuffer_program_id(c));
    }
    case LMB_Command_UpdateCircularBuffer: {
        uint64_t owner = 0;
        uint32_t program = lmb_UpdateCircularBuffer_program_id(c);
        if ((st = sem_use(s, &s->programs, "program_id", "program", program, NULL)) ||
            (st = sem_use(s, &s->cbs, "cb_id", "circular buffer", lmb_UpdateCircularBuffer_cb_id(c),
                          &owner)))
            return st;
        if (owner != program)
            return sem_fail(s, "cb_id", "circular buffer %" PRIu32 " belongs to program %" PRIu64,
                            lmb_UpdateCircularBuffer_cb_id(c), owner);
        return sem_cb_config(s, lmb_UpdateCircularBuffer_total_size(c),
                             lmb_UpdateCircularBuffer_formats(c),
                             lmb_UpdateCircularBuffer_global_buffer_id(c));
    }
    case LMB_Command_CreateSemaphore:
        if ((st = sem_use(s, &s->programs, "program_id", "program",
                          lmb_CreateSemaphore_program_id(c), NULL)) ||
            (st = sem_core_ranges(s, "cores", lmb_CreateSemaphore_cores(c))))
            return st;
        /* A semaphore id is its index on the program's cores (0-based, as the
         * device numbers them), not a capture-wide object id. */
        if (lmb_CreateSemaphore_semaphore_id(c) >= s->opts->max_semaphores)
            return sem_fail(s, "semaphore_id",
                            "semaphore %" PRIu32 " is beyond the %" PRIu32 " semaphores of a core",
                            lmb_CreateSemaphore_semaphore_id(c), s->opts->max_semaphores);
        return LM_OK;
    case LMB_Command_EnqueueProgram: {
        if ((st = sem_queue(s, lmb_EnqueueProgram_cq_id(c)))) return st;
        fb_str label = lmb_EnqueueProgram_label(c);
        const char *problem = lmb_launch_label_problem(label.ptr, label.len);
        if (problem) return sem_fail(s, "label", "the label %s", problem);
        return sem_use(s, &s->programs, "program_id", "program", lmb_EnqueueProgram_program_id(c),
                       NULL);
    }
    case LMB_Command_BeginTraceCapture:
        if ((st = sem_queue(s, lmb_BeginTraceCapture_cq_id(c)))) return st;
        return sem_define(s, &s->traces, "trace_id", "trace", lmb_BeginTraceCapture_trace_id(c), 2);
    case LMB_Command_EndTraceCapture: {
        uint32_t id = lmb_EndTraceCapture_trace_id(c);
        uint64_t state = 0;
        if ((st = sem_queue(s, lmb_EndTraceCapture_cq_id(c)))) return st;
        if ((st = sem_use(s, &s->traces, "trace_id", "trace", id, &state))) return st;
        if (state != 2)
            return sem_fail(s, "trace_id", "trace %" PRIu32 " is not being captured", id);
        *sem_find(&s->traces, id) = 1;
        return LM_OK;
    }
    case LMB_Command_LoadTrace: {
        uint32_t id = lmb_LoadTrace_trace_id(c);
        lmb_BlobRef ref;
        if ((st = sem_queue(s, lmb_LoadTrace_cq_id(c)))) return st;
        if (!lmb_find_trace(s->root, id, &ref))
            return sem_fail(s, "trace_id", "trace %" PRIu32 " is not in the file's traces", id);
        return sem_define(s, &s->traces, "trace_id", "trace", id, 1);
    }
    case LMB_Command_ReplayTrace: {
        uint32_t id = lmb_ReplayTrace_trace_id(c);
        uint64_t state = 0;
        if ((st = sem_queue(s, lmb_ReplayTrace_cq_id(c)))) return st;
        if ((st = sem_use(s, &s->traces, "trace_id", "trace", id, &state))) return st;
        if (state != 1)
            return sem_fail(s, "trace_id", "trace %" PRIu32 " is still being captured", id);
        return LM_OK;
    }
    case LMB_Command_ReleaseTrace:
        return sem_release(s, &s->traces, "trace_id", "trace", lmb_ReleaseTrace_trace_id(c));
    default:
        return sem_fail(s, "cmd", "unknown command type %u", type);
    }
}

/* Bytes per element of the formats a shape may describe; 0 for the rest. */
static uint32_t sem_element_size(lmb_DataFormat f) {
    switch (f) {
    case LMB_DataFormat_Float32:
    case LMB_DataFormat_UInt32:
    case LMB_DataFormat_Int32:
        return 4;
    case LMB_DataFormat_Float16_b:
    case LMB_DataFormat_UInt16:
        return 2;
    case LMB_DataFormat_UInt8:
        return 1;
    default:
        return 0;
    }
}

/* A named buffer's role, format and shape agree with the buffer. */
static lm_status sem_name(const sem *s, const char *field, fb_table n) {
    lmb_BufferRole role = lmb_BufferName_role(n);
    if (role == LMB_BufferRole_Invalid || role > LMB_BufferRole_MAX)
        return sem_fail(s, field, "role %u is not Input, Output or InputOutput", role);
    const sem_buffer *b = &s->bufs[*sem_find(&s->buffers, lmb_BufferName_buffer_id(n)) & ~SEM_DEAD];
    lmb_DataFormat format = lmb_BufferName_format(n);
    lmb_ElementType et = lmb_BufferName_element_type(n);
    /* Both enums are in range (the structural verifier saw to it). */
    if (!lmb_element_type_fits(et, format))
        return sem_fail(s, field, "element type %s needs data format %s, the name records %s",
                        lmb_enum_name("ElementType", et), lmb_element_type_storage_text(et),
                        format ? lmb_enum_name("DataFormat", format) : "none");
    fb_vec shape = lmb_BufferName_shape(n);
    bool scalar = lmb_BufferName_scalar(n);
    if (scalar && shape.len)
        return sem_fail(s, field, "a scalar has no shape, the name records rank %" PRIu32,
                        shape.len);
    if (!shape.len && !scalar) return LM_OK;
    uint32_t esize = sem_element_size(format);
    if (!esize)
        return sem_fail(s, field, "a %s needs an element format (data format %u has none)",
                        scalar ? "scalar" : "shape", format);
    if (scalar && esize != b->size)
        return sem_fail(s, field, "a scalar of %s is %" PRIu32 " bytes, the buffer has %" PRIu64,
                        lmb_enum_name("DataFormat", format), esize, b->size);
    if (shape.len > 8) return sem_fail(s, field, "rank %" PRIu32 " (at most 8)", shape.len);
    uint64_t bytes = esize;
    for (uint32_t i = 0; i < shape.len; i++)
        if (!ck_mul_u64(bytes, fb_vec_u32(shape, i), &bytes))
            return sem_fail(s, field, "the shape overflows at dimension %" PRIu32, i);
    /* Format 2.2: a 0 dimension names an empty tensor; its buffer is only a
     * placeholder (buffers are never empty). */
    if (bytes != 0 && bytes != b->size)
        return sem_fail(s, field,
                        "shape and format give %" PRIu64 " bytes, the buffer has %" PRIu64, bytes,
                        b->size);
    return LM_OK;
}

lm_status lmb_verify_semantics(const void *file, uint64_t size, const lmb_semantic_options *opts,
                               lmb_semantic_facts *out_facts) {
    lmb_semantic_options defaults;
    if (!opts) {
        lmb_semantic_options_init(&defaults);
        opts = &defaults;
    }
    sem s;
    memset(&s, 0, sizeof s);
    s.opts = opts;
    s.root = lmb_root(file);
    s.index = -1;
    fb_table sys = lmb_LightMetalBinary_system(s.root);
    s.grid_x = lmb_SystemDescriptor_grid_x(sys);
    s.grid_y = lmb_SystemDescriptor_grid_y(sys);
    s.l1_size = lmb_SystemDescriptor_l1_size(sys);
    lm_status st = LM_OK;
    if (s.grid_x == 0 || s.grid_y == 0 || s.grid_x > opts->max_grid || s.grid_y > opts->max_grid)
        return sem_fail(&s, "system", "grid %ux%u (each side must be 1..%" PRIu32 ")", s.grid_x,
                        s.grid_y, opts->max_grid);
    if (s.l1_size == 0) return sem_fail(&s, "system.l1_size", "L1 size 0");
    s.dram_banks = lmb_SystemDescriptor_dram_banks(sys);
    uint64_t bank = lmb_SystemDescriptor_dram_bank_size(sys);
    uint64_t trace_region = lmb_SystemDescriptor_trace_region_size(sys);
    if (s.dram_banks == 0 || bank == 0) return sem_fail(&s, "system.dram_banks", "no DRAM");
    if (trace_region >= bank)
        return sem_fail(&s, "system.trace_region_size",
                        "%" PRIu64 " bytes of a %" PRIu64 "-byte DRAM bank", trace_region, bank);
    s.dram_limit = bank - trace_region;
    s.queues = lmb_SystemDescriptor_num_command_queues(sys);
    if (s.queues == 0) s.queues = 1; /* a file that does not say has one queue */
    if (opts->memory_map.max_command_queues && s.queues > opts->memory_map.max_command_queues)
        return sem_fail(&s, "system.num_command_queues", "%" PRIu32 " (at most %" PRIu32 ")",
                        s.queues, opts->memory_map.max_command_queues);
    fb_vec df = lmb_SystemDescriptor_data_formats(sys);
    for (uint32_t i = 0; i < df.len; i++)
        if (fb_vec_u8(df, i) == LMB_DataFormat_Invalid)
            return sem_fail(&s, "system.data_formats", "entry %" PRIu32 " is Invalid", i);

    fb_vec kb = lmb_LightMetalBinary_kernel_binaries(s.root);
    for (uint32_t i = 0; i < kb.len; i++) {
        lmb_BlobRef r = lmb_vec_BlobRef_at(kb, i);
        char what[64];
        snprintf(what, sizeof what, "kernel_binaries[%" PRIu32 "]", i);
        st = lmb_check_kernel_elf(lmb_blob_data(file, s.root, r), r.size, &opts->kernel_map, what);
        if (st) return st;
    }

    fb_vec cmds = lmb_LightMetalBinary_commands(s.root);
    for (uint32_t i = 0; i < cmds.len && !st; i++) {
        fb_table e = fb_vec_table(cmds, i);
        lmb_Command type = lmb_CommandEntry_cmd_type(e);
        s.index = i;
        s.type = lmb_command_name(type) ? lmb_command_name(type) : "?";
        st = sem_command(&s, type, lmb_CommandEntry_cmd(e));
    }
    s.index = -1;
    fb_vec names = lmb_LightMetalBinary_buffer_names(s.root);
    for (uint32_t i = 0; i < names.len && !st; i++) {
        fb_table n = fb_vec_table(names, i);
        char field[64];
        snprintf(field, sizeof field, "buffer_names[%" PRIu32 "]", i);
        if (!sem_find(&s.buffers, lmb_BufferName_buffer_id(n)))
            st = sem_fail(&s, field, "buffer %" PRIu32 " is never created",
                          lmb_BufferName_buffer_id(n));
        else if (lmb_BufferName_name(n).len == 0)
            st = sem_fail(&s, field, "empty name");
        else
            st = sem_name(&s, field, n);
        for (uint32_t j = 0; j < i && !st; j++) {
            fb_str a = lmb_BufferName_name(fb_vec_table(names, j)), b = lmb_BufferName_name(n);
            if (a.len == b.len && !memcmp(a.ptr, b.ptr, a.len))
                st = sem_fail(&s, field, "name \"%s\" is used twice", b.ptr);
        }
    }
    free(s.bufs);
    free(s.live[0].v);
    free(s.live[1].v);
    sem_free(&s.buffers);
    sem_free(&s.programs);
    sem_free(&s.kernels);
    sem_free(&s.cbs);
    sem_free(&s.traces);
    sem_free(&s.events);
    if (!st && out_facts) *out_facts = (lmb_semantic_facts){.queues_used = s.queues_used};
    return st;
}
