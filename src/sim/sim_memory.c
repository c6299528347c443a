/* MAP_ANONYMOUS and MAP_NORESERVE are outside POSIX 2008. */
#define _DEFAULT_SOURCE 1

#include "sim/sim_memory.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/checked.h"
#include "base/error.h"
#include "base/hash.h"
#include "base/shard.h"

#ifndef MAP_NORESERVE
#define MAP_NORESERVE 0
#endif

/* MAP_NORESERVE: device memory is sparse by nature; do not charge the whole
 * reservation against the host's commit limit up front. */
static lm_status reserve(size_t bytes, const char *what, uint8_t **out) {
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED)
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY,
                       "cannot reserve %zu bytes of host address space for %s: %s", bytes, what,
                       strerror(errno));
    *out = p;
    return LM_OK;
}

lm_status sim_memory_create(const sim_geometry *g, sim_memory **out_memory) {
    uint64_t cores = (uint64_t)g->grid_x * g->grid_y;
    uint64_t l1_bytes, dram_bytes;
    if (!ck_mul_u64(cores, g->l1_size, &l1_bytes) ||
        !ck_mul_u64(g->dram_banks, g->dram_bank_size, &dram_bytes) || l1_bytes > SIZE_MAX ||
        dram_bytes > SIZE_MAX)
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "device memory does not fit this host's address "
                                                  "space");
    sim_memory *m = calloc(1, sizeof *m);
    if (!m) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    m->geometry = *g;
    m->num_cores = (uint32_t)cores;
    m->l1_bytes = (size_t)l1_bytes;
    m->dram_bytes = (size_t)dram_bytes;
    lm_status st = reserve(m->l1_bytes, "L1", &m->l1);
    if (!st) st = reserve(m->dram_bytes, "DRAM", &m->dram);
    if (st) {
        sim_memory_destroy(m);
        return st;
    }
    *out_memory = m;
    return LM_OK;
}

void sim_memory_destroy(sim_memory *m) {
    if (!m) return;
    if (m->l1) munmap(m->l1, m->l1_bytes);
    if (m->dram) munmap(m->dram, m->dram_bytes);
    free(m);
}

static uint8_t *bank_base(const sim_memory *m, sim_mem_kind kind, uint32_t bank) {
    return kind == SIM_MEM_DRAM ? sim_dram(m, bank) : sim_l1(m, bank);
}

/* The device bytes of buffer bytes [at, at + n) lie in one page. */
static uint8_t *span_at(const sim_memory *m, const sim_pages *pg, uint64_t at, uint64_t *n) {
    uint64_t page = at / pg->page_size, off = at % pg->page_size;
    if (*n > pg->page_size - off) *n = pg->page_size - off;
    if (pg->shard) {
        uint32_t core;
        uint64_t local;
        shard_locate(pg->shard, page, &core, &local);
        return bank_base(m, pg->kind, core) + pg->address + local * pg->page_stride + off;
    }
    return bank_base(m, pg->kind, (uint32_t)(page % pg->num_banks)) + pg->address +
           (page / pg->num_banks) * pg->page_stride + off;
}

void sim_memory_move_pages(const sim_memory *m, const sim_pages *pg, uint8_t *host, bool to_device,
                           uint32_t part, uint32_t parts) {
    if (pg->offset || pg->shard) { /* a region or shards: page by page */
        uint64_t from = pg->size * part / parts, end = pg->size * (part + 1) / parts;
        while (from < end) {
            uint64_t n = end - from;
            uint8_t *dev = span_at(m, pg, pg->offset + from, &n);
            if (to_device)
                memcpy(dev, host + from, n);
            else
                memcpy(host + from, dev, n);
            from += n;
        }
        return;
    }
    /* A row is one page in every bank: part p takes a contiguous run of rows,
     * so each part streams through its own stretch of host memory. */
    uint64_t row_bytes = pg->page_size * pg->num_banks;
    uint64_t rows = ck_div_ceil_u64(pg->size, row_bytes);
    uint64_t first = rows * part / parts, last = rows * (part + 1) / parts;
    uint64_t done = first * row_bytes;
    for (uint64_t row = first; row < last && done < pg->size; row++) {
        uint64_t offset = pg->address + row * pg->page_stride;
        for (uint32_t bank = 0; bank < pg->num_banks && done < pg->size; bank++) {
            uint64_t n = pg->size - done < pg->page_size ? pg->size - done : pg->page_size;
            uint8_t *dev = bank_base(m, pg->kind, bank) + offset;
            if (to_device)
                memcpy(dev, host + done, n);
            else
                memcpy(host + done, dev, n);
            done += n;
        }
    }
}

/* Copies source bytes [from, from + n) to where they belong in the pages,
 * feeding them to `h` in the same pass. */
static void write_span_hashed(const sim_memory *m, const sim_pages *pg, const uint8_t *src,
                              uint64_t from, uint64_t n, hash64_state *h) {
    while (n) {
        uint64_t len = n;
        uint8_t *dev = span_at(m, pg, pg->offset + from, &len);
        hash64_update_copy(h, dev, src + from, (size_t)len);
        from += len;
        n -= len;
    }
}

void sim_memory_write_pieces_hashed(const sim_memory *m, const sim_pages *pg, const void *src,
                                    uint32_t part, uint32_t parts, uint64_t *pieces) {
    uint64_t count = ck_div_ceil_u64(pg->size, HASH64_PIECE);
    uint64_t first = count * part / parts, last = count * (part + 1) / parts;
    for (uint64_t i = first; i < last; i++) {
        uint64_t at = i * HASH64_PIECE,
                 end = at + HASH64_PIECE < pg->size ? at + HASH64_PIECE : pg->size;
        hash64_state h;
        hash64_begin(&h, 0);
        write_span_hashed(m, pg, src, at, end - at, &h);
        pieces[i] = hash64_end(&h);
    }
}

void sim_memory_write_pages(sim_memory *m, const sim_pages *pages, const void *src) {
    sim_memory_move_pages(m, pages, (uint8_t *)src, true, 0, 1);
}

void sim_memory_read_pages(const sim_memory *m, const sim_pages *pages, void *dst) {
    sim_memory_move_pages(m, pages, dst, false, 0, 1);
}
