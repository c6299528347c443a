/* Data movement kernel API (tt-metal's dataflow_api.h, in C): NoC transfers,
 * interleaved address generation, semaphores, plus everything in
 * lm_kernel_common.h. Transfers complete when the call returns; the barriers
 * exist so kernels written for real hardware stay correct.
 *
 * C++ kernels (which get this header without an include, as in tt-metal)
 * also get tt-metal's C++ forms from lm/dataflow.hpp: the address generator
 * templates, TensorAccessor, the templated tile/page transfers, the noc
 * arguments, experimental::. The C address generator below is C-only.
 */
#ifndef LM_DATAFLOW_API_H
#define LM_DATAFLOW_API_H

#include "lm_kernel_common.h"

/* ---- NoC addresses ---- */
static inline uint64_t get_noc_addr(uint32_t x, uint32_t y, uint32_t addr) {
    return (uint64_t)y << (LM_NOC_ADDR_BITS + LM_NOC_COORD_BITS) | (uint64_t)x << LM_NOC_ADDR_BITS |
           addr;
}
/* This core's own address `addr`, as seen from the NoC. */
static inline uint64_t get_noc_addr_local(uint32_t addr) {
    return get_noc_addr(my_x(), my_y(), addr);
}

static inline uint64_t get_noc_multicast_addr(uint32_t x_start, uint32_t y_start, uint32_t x_end,
                                              uint32_t y_end, uint32_t addr) {
    return (uint64_t)y_start << 54 | (uint64_t)x_start << 48 |
           (uint64_t)y_end << (LM_NOC_ADDR_BITS + LM_NOC_COORD_BITS) |
           (uint64_t)x_end << LM_NOC_ADDR_BITS | addr;
}

/* ---- transfers ---- */
static inline void noc_async_read(uint64_t src_noc_addr, uint32_t dst_l1_addr, uint32_t size) {
    lm_ecall(LM_ECALL_NOC_READ, (uint32_t)src_noc_addr, (uint32_t)(src_noc_addr >> 32), dst_l1_addr,
             size, 0);
}
/* lightmetal's own (no tt-metal equivalent): `count` reads of `size` bytes,
 * read i from src_noc_addr + i * src_stride into dst_l1_addr + i * dst_stride
 * -- a gather of rows, or of the pixels of an image row -- made exactly as
 * the loop of noc_async_read calls would make them, in order, in one call.
 * A simulated kernel pays for each call (the call and the instructions
 * around it), so a kernel whose cost is many small transfers to or from one
 * bank or core runs several times faster with it. The whole source range
 * must lie in one bank's or core's memory and the whole destination range
 * in L1: otherwise the kernel faults, before anything moves. */
static inline void lm_noc_async_read_strided(uint64_t src_noc_addr, uint32_t src_stride,
                                             uint32_t dst_l1_addr, uint32_t dst_stride,
                                             uint32_t size, uint32_t count) {
    lm_ecall7(LM_ECALL_NOC_READ_STRIDED, (uint32_t)src_noc_addr, (uint32_t)(src_noc_addr >> 32),
              dst_l1_addr, size, count, src_stride, dst_stride);
}
/* The same for writes: write i from src_l1_addr + i * src_stride to
 * dst_noc_addr + i * dst_stride (a scatter of rows into one bank or core). */
static inline void lm_noc_async_write_strided(uint32_t src_l1_addr, uint32_t src_stride,
                                              uint64_t dst_noc_addr, uint32_t dst_stride,
                                              uint32_t size, uint32_t count) {
    lm_ecall7(LM_ECALL_NOC_WRITE_STRIDED, src_l1_addr, (uint32_t)dst_noc_addr,
              (uint32_t)(dst_noc_addr >> 32), size, count, src_stride, dst_stride);
}
static inline void noc_async_write(uint32_t src_l1_addr, uint64_t dst_noc_addr, uint32_t size) {
    lm_ecall(LM_ECALL_NOC_WRITE, src_l1_addr, (uint32_t)dst_noc_addr,
             (uint32_t)(dst_noc_addr >> 32), size, 0);
}
/* Writes to every core of the rectangle except the sender; num_dests must
 * equal that number of cores. */
static inline void noc_async_write_multicast(uint32_t src_l1_addr, uint64_t dst_mcast_addr,
                                             uint32_t size, uint32_t num_dests) {
    lm_ecall(LM_ECALL_NOC_MCAST, src_l1_addr, (uint32_t)dst_mcast_addr,
             (uint32_t)(dst_mcast_addr >> 32), size, num_dests);
}
static inline void noc_async_read_barrier(void) {
    lm_ecall(LM_ECALL_NOC_BARRIER, 0, 0, 0, 0, 0);
}
static inline void noc_async_write_barrier(void) {
    lm_ecall(LM_ECALL_NOC_BARRIER, 1, 0, 0, 0, 0);
}

/* ---- banks ----
 * DRAM bank b is at NoC (b, LM_NOC_DRAM_Y); L1 bank b is worker core b in
 * row-major order. */
static inline uint64_t lm_bank_noc_addr(bool is_dram, uint32_t bank, uint32_t addr) {
    if (is_dram) return get_noc_addr(bank, LM_NOC_DRAM_Y, addr);
    uint32_t gx = lm_l1_word(LM_L1_CORE_INFO)[LM_CORE_INFO_GRID_X];
    return get_noc_addr(bank % gx, bank / gx, addr);
}

/* ---- interleaved buffers ----
 * Page `id` of an interleaved buffer lives in bank id % banks at
 * base + (id / banks) * (page_size rounded up to the alignment). */
static inline uint64_t lm_interleaved_noc_addr(bool is_dram, uint32_t base, uint32_t page_size,
                                               uint32_t id, uint32_t offset) {
    const volatile uint32_t *info = lm_l1_word(LM_L1_CORE_INFO);
    uint32_t banks = is_dram ? info[LM_CORE_INFO_DRAM_BANKS]
                             : info[LM_CORE_INFO_GRID_X] * info[LM_CORE_INFO_GRID_Y];
    uint32_t align = is_dram ? info[LM_CORE_INFO_DRAM_ALIGN] : info[LM_CORE_INFO_L1_ALIGN];
    uint32_t stride = (page_size + align - 1) / align * align;
    return lm_bank_noc_addr(is_dram, id % banks, base + (id / banks) * stride + offset);
}

#ifndef __cplusplus
/* tt-metal's InterleavedAddrGen / InterleavedAddrGenFast, as a C struct. */
typedef struct InterleavedAddrGenFast {
    uint32_t bank_base_address;
    uint32_t page_size;
    bool is_dram; /* false: an L1 buffer, one bank per worker core */
} InterleavedAddrGenFast;
typedef InterleavedAddrGenFast InterleavedAddrGen;

static inline uint64_t get_noc_addr_interleaved(uint32_t id, const InterleavedAddrGenFast *s,
                                                uint32_t offset) {
    return lm_interleaved_noc_addr(s->is_dram, s->bank_base_address, s->page_size, id, offset);
}
static inline void noc_async_read_page(uint32_t id, const InterleavedAddrGenFast *s,
                                       uint32_t dst_l1_addr) {
    noc_async_read(get_noc_addr_interleaved(id, s, 0), dst_l1_addr, s->page_size);
}
static inline void noc_async_write_page(uint32_t id, const InterleavedAddrGenFast *s,
                                        uint32_t src_l1_addr) {
    noc_async_write(src_l1_addr, get_noc_addr_interleaved(id, s, 0), s->page_size);
}
#define noc_async_read_tile noc_async_read_page
#define noc_async_write_tile noc_async_write_page
#endif

/* ---- semaphores ---- */
static inline uint32_t get_semaphore(uint32_t id) {
    return LM_L1_SEMAPHORES + id * LM_SEMAPHORE_STRIDE;
}
static inline void noc_semaphore_set(volatile uint32_t *sem_addr, uint32_t value) {
    lm_ecall(LM_ECALL_SEM_SET, (uint32_t)(uintptr_t)sem_addr, value, 0, 0, 0);
}
static inline void noc_semaphore_wait(volatile uint32_t *sem_addr, uint32_t value) {
    lm_ecall(LM_ECALL_SEM_WAIT, (uint32_t)(uintptr_t)sem_addr, value, 0, 0, 0);
}
static inline void noc_semaphore_wait_min(volatile uint32_t *sem_addr, uint32_t value) {
    lm_ecall(LM_ECALL_SEM_WAIT_MIN, (uint32_t)(uintptr_t)sem_addr, value, 0, 0, 0);
}
static inline void noc_semaphore_inc(uint64_t sem_noc_addr, uint32_t incr) {
    lm_ecall(LM_ECALL_SEM_INC, (uint32_t)sem_noc_addr, (uint32_t)(sem_noc_addr >> 32), incr, 0, 0);
}
static inline void noc_semaphore_set_remote(uint32_t src_l1_addr, uint64_t dst_noc_addr) {
    lm_ecall(LM_ECALL_SEM_SET_REMOTE, src_l1_addr, (uint32_t)dst_noc_addr,
             (uint32_t)(dst_noc_addr >> 32), 0, 0);
}
static inline void noc_semaphore_set_multicast(uint32_t src_l1_addr, uint64_t dst_mcast_addr,
                                               uint32_t num_dests) {
    lm_ecall(LM_ECALL_SEM_SET_MCAST, src_l1_addr, (uint32_t)dst_mcast_addr,
             (uint32_t)(dst_mcast_addr >> 32), num_dests, 0);
}

#ifdef __cplusplus
#include "lm/dataflow.hpp"
#endif

#endif
