/* Simulated device memory: one L1 SRAM per worker core and the DRAM banks.
 *
 * Both live in anonymous host mappings reserved up front and committed by the
 * host OS page by page on first write, so untouched device memory costs no
 * host memory (a default device reserves ~12 GiB of address space and commits
 * almost none). Fresh memory reads as zero, which makes runs reproducible.
 *
 * Addresses here are bank-local byte offsets; callers have validated them
 * (sim_memory performs no checks on the hot path beyond what the inline
 * helpers document).
 *
 * Thread-safety: the memory is plain bytes; concurrent accesses to disjoint
 * ranges are safe, overlapping ones race as they would on hardware.
 */
#ifndef LM_SIM_MEMORY_H
#define LM_SIM_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lightmetal/lm_status.h"

typedef struct sim_geometry {
    uint32_t grid_x, grid_y;
    uint64_t l1_size;
    uint32_t dram_banks;
    uint64_t dram_bank_size;
} sim_geometry;

typedef struct sim_memory {
    sim_geometry geometry;
    uint32_t num_cores;
    uint8_t *l1;   /* num_cores * l1_size bytes, core-major */
    uint8_t *dram; /* dram_banks * dram_bank_size bytes, bank-major */
    size_t l1_bytes, dram_bytes;
} sim_memory;

/* Reserves the memory. LM_ERR_OUT_OF_HOST_MEMORY when the host refuses the
 * address space (the message says how much was asked for). */
lm_status sim_memory_create(const sim_geometry *geometry, sim_memory **out_memory);

/* Releases everything; NULL is accepted. */
void sim_memory_destroy(sim_memory *memory);

/* Base of core `core`'s L1 (row-major core index, < num_cores). */
static inline uint8_t *sim_l1(const sim_memory *m, uint32_t core) {
    return m->l1 + (size_t)core * m->geometry.l1_size;
}

/* Base of DRAM bank `bank` (< dram_banks). */
static inline uint8_t *sim_dram(const sim_memory *m, uint32_t bank) {
    return m->dram + (size_t)bank * m->geometry.dram_bank_size;
}

/* Interleaved page movement, the dispatcher's data path. Page p of a buffer
 * at bank-local `address` lives in bank p % num_banks at
 * address + (p / num_banks) * page_stride; the last page may be partial when
 * `size` is not a multiple of page_size. The caller guarantees every page is
 * inside its bank. */
typedef enum sim_mem_kind { SIM_MEM_DRAM = 1, SIM_MEM_L1 = 2 } sim_mem_kind;

/* An interleaved buffer's pages: page p in bank p % num_banks at address +
 * (p / num_banks) * page_stride. A transfer moves `size` bytes starting
 * `offset` bytes into the buffer (0 and the whole size for all of it). */
typedef struct sim_pages {
    sim_mem_kind kind;
    uint32_t num_banks;
    uint64_t address, offset, size, page_size, page_stride;
    const struct shard_geometry *shard; /* sharded (base/shard.h): page p on its core */
} sim_pages;

void sim_memory_write_pages(sim_memory *m, const sim_pages *pages, const void *src);

/* Part `part` of `parts` of a transfer (a write when `to_device`): the parts
 * cover the transfer exactly once, so several threads can share a big one. */
void sim_memory_move_pages(const sim_memory *m, const sim_pages *pages, uint8_t *host,
                           bool to_device, uint32_t part, uint32_t parts);
void sim_memory_read_pages(const sim_memory *m, const sim_pages *pages, void *dst);

/* Part `part` of `parts` of a write that hashes its source (base/hash.h,
 * seed 0) as it copies it: the part takes a run of the source's
 * HASH64_PIECE-byte pieces and stores piece i's hash in pieces[i]; the
 * bytes are hashed as they are copied (hash64_update_copy), so the data is
 * read from memory once. hash64_combine() of all pieces is the source's hash. */
void sim_memory_write_pieces_hashed(const sim_memory *m, const sim_pages *pages, const void *src,
                                    uint32_t part, uint32_t parts, uint64_t *pieces);

#endif
