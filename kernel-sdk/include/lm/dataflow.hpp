// tt-metal's C++ data movement API over the C one in dataflow_api.h: address
// generators, TensorAccessor, templated page and tile transfers, the forms
// with a NoC argument, and the experimental:: object API. Each name is a thin
// inline wrapper; the transfers themselves are the C functions' ecalls.
//
// The simulated chip has two identical NoCs and transfers complete when the
// call returns, so the NoC index arguments are accepted and ignored, and the
// barriers and flushes only keep the kernel's shape.
#pragma once

#include <stddef.h>
#include <stdint.h>

// VALID and INVALID, as tt-metal's dataflow API gives them.
#include "hostdevcommon/common_values.hpp"

// The NoC a data movement kernel uses by default (the host's choice).
inline constexpr uint8_t noc_index = LM_PROCESSOR == LM_PROC_DM1 ? 1 : 0;

// ---- NoC addresses ----
FORCE_INLINE uint64_t get_noc_addr(uint32_t x, uint32_t y, uint32_t addr, uint8_t noc) {
    (void)noc;
    return get_noc_addr(x, y, addr);
}
// This core's own L1 address as seen from the NoC.
FORCE_INLINE uint64_t get_noc_addr(uint32_t addr) {
    return get_noc_addr_local(addr);
}
FORCE_INLINE uint64_t get_noc_multicast_addr(uint32_t x_start, uint32_t y_start, uint32_t x_end,
                                             uint32_t y_end, uint32_t addr, uint8_t noc) {
    (void)noc;
    return get_noc_multicast_addr(x_start, y_start, x_end, y_end, addr);
}
// Address `offset` in DRAM bank `bank_id` (DRAM = true) or in the L1 of the
// worker core that is L1 bank `bank_id`.
template <bool DRAM>
FORCE_INLINE uint64_t get_noc_addr_from_bank_id(uint32_t bank_id, uint32_t offset,
                                                uint8_t noc = noc_index) {
    (void)noc;
    return lm_bank_noc_addr(DRAM, bank_id, offset);
}

// ---- interleaved address generators ----
template <bool DRAM> struct InterleavedAddrGen {
    uint32_t bank_base_address;
    uint32_t page_size;
    FORCE_INLINE uint64_t get_noc_addr(uint32_t id, uint32_t offset = 0,
                                       uint8_t noc = noc_index) const {
        (void)noc;
        return lm_interleaved_noc_addr(DRAM, bank_base_address, page_size, id, offset);
    }
};
template <bool DRAM, uint32_t TILE_HW = 1024> struct InterleavedAddrGenFast {
    uint32_t bank_base_address;
    uint32_t page_size;
    DataFormat data_format;
    FORCE_INLINE uint64_t get_noc_addr(uint32_t id, uint32_t offset = 0,
                                       uint8_t noc = noc_index) const {
        (void)noc;
        return lm_interleaved_noc_addr(DRAM, bank_base_address, page_size, id, offset);
    }
};
template <bool DRAM> struct InterleavedPow2AddrGen {
    uint32_t bank_base_address;
    uint32_t log_base_2_of_page_size;
    FORCE_INLINE uint64_t get_noc_addr(uint32_t id, uint32_t offset = 0,
                                       uint8_t noc = noc_index) const {
        (void)noc;
        return lm_interleaved_noc_addr(DRAM, bank_base_address, 1u << log_base_2_of_page_size, id,
                                       offset);
    }
};
template <bool DRAM> struct InterleavedPow2AddrGenFast {
    uint32_t bank_base_address;
    uint32_t log_base_2_of_page_size;
    FORCE_INLINE uint64_t get_noc_addr(uint32_t id, uint32_t offset = 0,
                                       uint8_t noc = noc_index) const {
        (void)noc;
        return lm_interleaved_noc_addr(DRAM, bank_base_address, 1u << log_base_2_of_page_size, id,
                                       offset);
    }
};

namespace lm {
template <class G> FORCE_INLINE uint32_t page_size_of(const G &g) {
    return g.page_size;
}
template <bool D> FORCE_INLINE uint32_t page_size_of(const InterleavedPow2AddrGen<D> &g) {
    return 1u << g.log_base_2_of_page_size;
}
template <bool D> FORCE_INLINE uint32_t page_size_of(const InterleavedPow2AddrGenFast<D> &g) {
    return 1u << g.log_base_2_of_page_size;
}
} // namespace lm

// Page `id` of the buffer an address generator or TensorAccessor describes.
template <class AddrGen, class = decltype(&AddrGen::get_noc_addr)>
FORCE_INLINE uint64_t get_noc_addr(uint32_t id, const AddrGen &s, uint32_t offset = 0,
                                   uint8_t noc = noc_index) {
    return s.get_noc_addr(id, offset, noc);
}

// ---- transfers ----
FORCE_INLINE void noc_async_read(uint64_t src_noc_addr, uint32_t dst_l1_addr, uint32_t size,
                                 uint8_t noc) {
    (void)noc;
    noc_async_read(src_noc_addr, dst_l1_addr, size);
}
FORCE_INLINE void noc_async_read_one_packet(uint64_t src_noc_addr, uint32_t dst_l1_addr,
                                            uint32_t size, uint8_t noc = noc_index) {
    noc_async_read(src_noc_addr, dst_l1_addr, size, noc);
}
FORCE_INLINE void noc_async_write(uint32_t src_l1_addr, uint64_t dst_noc_addr, uint32_t size,
                                  uint8_t noc) {
    (void)noc;
    noc_async_write(src_l1_addr, dst_noc_addr, size);
}
FORCE_INLINE void noc_async_write_one_packet(uint32_t src_l1_addr, uint64_t dst_noc_addr,
                                             uint32_t size, uint8_t noc = noc_index) {
    noc_async_write(src_l1_addr, dst_noc_addr, size, noc);
}
FORCE_INLINE void noc_async_write_multicast(uint32_t src_l1_addr, uint64_t dst_mcast_addr,
                                            uint32_t size, uint32_t num_dests, bool linked,
                                            uint8_t noc = noc_index) {
    (void)linked, (void)noc;
    noc_async_write_multicast(src_l1_addr, dst_mcast_addr, size, num_dests);
}
FORCE_INLINE void noc_async_read_barrier(uint8_t noc) {
    (void)noc;
    noc_async_read_barrier();
}
FORCE_INLINE void noc_async_write_barrier(uint8_t noc) {
    (void)noc;
    noc_async_write_barrier();
}
FORCE_INLINE void noc_async_writes_flushed(uint8_t noc = noc_index) {
    noc_async_write_barrier(noc);
}
FORCE_INLINE void noc_async_posted_writes_flushed(uint8_t noc = noc_index) {
    noc_async_write_barrier(noc);
}
// Semaphore increments complete when they return: nothing to wait for.
FORCE_INLINE void noc_async_atomic_barrier(uint8_t noc = noc_index) {
    (void)noc;
}
FORCE_INLINE void noc_async_full_barrier(uint8_t noc = noc_index) {
    noc_async_read_barrier(noc);
    noc_async_write_barrier(noc);
}

template <class AddrGen>
FORCE_INLINE void noc_async_read_page(uint32_t id, const AddrGen &s, uint32_t dst_l1_addr,
                                      uint32_t offset = 0, uint8_t noc = noc_index) {
    noc_async_read(s.get_noc_addr(id, offset, noc), dst_l1_addr, lm::page_size_of(s) - offset);
}
template <class AddrGen>
FORCE_INLINE void noc_async_read_tile(uint32_t id, const AddrGen &s, uint32_t dst_l1_addr,
                                      uint32_t offset = 0, uint8_t noc = noc_index) {
    noc_async_read_page(id, s, dst_l1_addr, offset, noc);
}
template <class AddrGen>
FORCE_INLINE void noc_async_write_page(uint32_t id, const AddrGen &s, uint32_t src_l1_addr,
                                       uint32_t size = 0, uint32_t offset = 0,
                                       uint8_t noc = noc_index) {
    noc_async_write(src_l1_addr, s.get_noc_addr(id, offset, noc),
                    size ? size : lm::page_size_of(s) - offset);
}
template <class AddrGen>
FORCE_INLINE void noc_async_write_tile(uint32_t id, const AddrGen &s, uint32_t src_l1_addr,
                                       uint8_t noc = noc_index) {
    noc_async_write_page(id, s, src_l1_addr, 0, 0, noc);
}

// ---- semaphores ----
enum class ProgrammableCoreType : uint8_t { TENSIX, ACTIVE_ETH, IDLE_ETH };
template <ProgrammableCoreType T = ProgrammableCoreType::TENSIX>
FORCE_INLINE uint32_t get_semaphore(uint32_t id) {
    static_assert(T == ProgrammableCoreType::TENSIX, "the simulated chip has worker cores only");
    return LM_L1_SEMAPHORES + id * LM_SEMAPHORE_STRIDE;
}
FORCE_INLINE void noc_semaphore_inc(uint64_t addr, uint32_t incr, uint8_t noc) {
    (void)noc;
    noc_semaphore_inc(addr, incr);
}
FORCE_INLINE void noc_semaphore_set_multicast(uint32_t src_l1_addr, uint64_t dst_mcast_addr,
                                              uint32_t num_dests, bool linked,
                                              uint8_t noc = noc_index) {
    (void)linked, (void)noc;
    noc_semaphore_set_multicast(src_l1_addr, dst_mcast_addr, num_dests);
}

#include "lm/tensor_accessor.hpp"
#include "lm/experimental.hpp"
