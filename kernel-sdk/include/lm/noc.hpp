// tt-metal's 2026 ("Device 2.0") data movement objects outside namespace
// experimental: Noc, CircularBuffer (and use<>()), UnicastEndpoint,
// MulticastEndpoint, AllocatorBank, with NocOptions / NocOptVals for a
// transfer's options. They are lm/experimental.hpp's objects under their
// newer names; Noc forwards each call to experimental::Noc, and a source or
// destination takes the same argument structs ({.page_id = i} for a
// TensorAccessor, {.offset_bytes = 0} for a CircularBuffer, ...).
//
// Transfers complete when the call returns and the two NoCs are identical, so
// the options (transaction ids, posted writes, virtual channels) are accepted
// and change nothing, except NocOptions::MCAST_INCL_SRC, which writes the
// sender's own copy of a multicast too. Not here: inline_dw_write (the NoC
// writes from L1, and the SDK reserves no L1 word to stage the value in) and
// async_write_zeros.
#pragma once

#include <stddef.h>
#include <stdint.h>

// The largest transfer tt-metal sends as one NoC packet (Wormhole's); only a
// template argument here.
#ifndef NOC_MAX_BURST_SIZE
#define NOC_MAX_BURST_SIZE 8192u
#endif

enum class NocOptions : uint32_t {
    DEFAULT = 0,
    TXN_ID = 1u << 0,
    POSTED = 1u << 1,
    CUSTOM_VC = 1u << 2,
    MCAST_INCL_SRC = 1u << 3,
    INLINE_L1 = 1u << 4,
    INLINE_REG = 1u << 5,
};
constexpr NocOptions operator|(NocOptions a, NocOptions b) noexcept {
    return static_cast<NocOptions>(static_cast<uint32_t>(a) | static_cast<uint32_t>(b));
}
constexpr bool has_flag(NocOptions opts, NocOptions flag) noexcept {
    return (static_cast<uint32_t>(opts) & static_cast<uint32_t>(flag)) != 0;
}
// The values some options take: the virtual channel (CUSTOM_VC) and the
// transaction id (TXN_ID).
struct NocOptVals {
    uint32_t vc = 0;
    uint32_t trid = 0;
};

using CircularBuffer = experimental::CircularBuffer;
template <CircularBuffer::AddrSelector S>
using CircularBufferView = experimental::CircularBufferView<S>;
using experimental::use;
using UnicastEndpoint = experimental::UnicastEndpoint;
using MulticastEndpoint = experimental::MulticastEndpoint;
using AllocatorBankType = experimental::AllocatorBankType;
template <AllocatorBankType T> using AllocatorBank = experimental::AllocatorBank<T>;

class Noc : public experimental::Noc {
    using base = experimental::Noc;
    template <class T> using args_t = experimental::noc_args_t<T>;

  public:
    enum class AddressType : uint8_t { NOC, LOCAL_L1 };
    static constexpr uint32_t INVALID_TXN_ID = 0xFFFFFFFFu;

    Noc() : base(noc_index) {}
    explicit Noc(uint8_t noc) : base(noc) {}

    // Whether a NoC location or address is this core.
    bool is_local_bank(uint32_t x, uint32_t y) const { return x == my_x() && y == my_y(); }
    bool is_local_addr(uint64_t noc_addr) const {
        return is_local_bank(noc_addr >> LM_NOC_ADDR_BITS & LM_NOC_COORD_MASK,
                             noc_addr >> (LM_NOC_ADDR_BITS + LM_NOC_COORD_BITS) &
                                 LM_NOC_COORD_MASK);
    }

    template <NocOptions opts = NocOptions::DEFAULT,
              uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, bool enable_noc_tracing = true,
              class Src, class Dst>
    void async_read(const Src &src, const Dst &dst, uint32_t size_bytes,
                    const args_t<Src> &src_args, const args_t<Dst> &dst_args,
                    const NocOptVals &noc_opts = {}) const {
        (void)noc_opts;
        base::async_read(src, dst, size_bytes, src_args, dst_args);
    }
    template <NocOptions opts = NocOptions::DEFAULT,
              uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, bool enable_noc_tracing = true,
              class Src, class Dst>
    void async_write(const Src &src, const Dst &dst, uint32_t size_bytes,
                     const args_t<Src> &src_args, const args_t<Dst> &dst_args,
                     const NocOptVals &noc_opts = {}) const {
        (void)noc_opts;
        base::async_write(src, dst, size_bytes, src_args, dst_args);
    }
    // num_dsts counts the receiving cores (the sender too with
    // MCAST_INCL_SRC).
    template <NocOptions opts = NocOptions::DEFAULT,
              uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, bool enable_noc_tracing = true,
              class Src, class Dst>
    void async_write_multicast(const Src &src, const Dst &dst, uint32_t size_bytes,
                               uint32_t num_dsts, const args_t<Src> &src_args,
                               const args_t<Dst> &dst_args, bool linked = false) const {
        static_assert(!has_flag(opts, NocOptions::TXN_ID),
                      "multicasts with a transaction id are not supported (as in tt-metal)");
        static_assert(!has_flag(opts, NocOptions::POSTED),
                      "posted multicasts are not supported (as in tt-metal)");
        if constexpr (has_flag(opts, NocOptions::MCAST_INCL_SRC))
            base::async_write_multicast<McastMode::INCLUDE_SRC>(src, dst, size_bytes, num_dsts,
                                                                src_args, dst_args, linked);
        else
            base::async_write_multicast(src, dst, size_bytes, num_dsts, src_args, dst_args, linked);
    }
    template <NocOptions opts = NocOptions::DEFAULT,
              uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, class Src>
    void set_async_read_state(const Src &src, uint32_t size_bytes, const args_t<Src> &src_args,
                              const NocOptVals &noc_opts = {}) const {
        (void)noc_opts;
        base::set_async_read_state(src, size_bytes, src_args);
    }
    template <NocOptions opts = NocOptions::DEFAULT,
              uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, class Src, class Dst>
    void async_read_with_state(const Src &src, const Dst &dst, uint32_t size_bytes,
                               const args_t<Src> &src_args, const args_t<Dst> &dst_args,
                               const NocOptVals &noc_opts = {}) const {
        (void)noc_opts;
        base::async_read_with_state(src, dst, size_bytes, src_args, dst_args);
    }
    template <NocOptions opts = NocOptions::DEFAULT,
              uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, class Dst>
    void set_async_write_state(const Dst &dst, uint32_t size_bytes, const args_t<Dst> &dst_args,
                               const NocOptVals &noc_opts = {}) const {
        static_assert(!has_flag(opts, NocOptions::TXN_ID),
                      "NocOptions::TXN_ID is not supported for set_async_write_state (as in "
                      "tt-metal); use async_write<NocOptions::TXN_ID>");
        (void)noc_opts;
        base::set_async_write_state(dst, size_bytes, dst_args);
    }
    template <NocOptions opts = NocOptions::DEFAULT,
              uint32_t max_page_size = NOC_MAX_BURST_SIZE + 1, class Src, class Dst>
    void async_write_with_state(const Src &src, const Dst &dst, uint32_t size_bytes,
                                const args_t<Src> &src_args, const args_t<Dst> &dst_args,
                                const NocOptVals &noc_opts = {}) const {
        static_assert(!has_flag(opts, NocOptions::TXN_ID),
                      "NocOptions::TXN_ID is not supported for async_write_with_state (as in "
                      "tt-metal); use async_write<NocOptions::TXN_ID>");
        (void)noc_opts;
        base::async_write_with_state(src, dst, size_bytes, src_args, dst_args);
    }
    bool is_read_trid_flushed(uint32_t trid) const {
        (void)trid;
        return true;
    }

    template <NocOptions opts = NocOptions::DEFAULT>
    void async_read_barrier(const NocOptVals &noc_opts = {}) const {
        (void)noc_opts;
        base::async_read_barrier();
    }
    template <NocOptions opts = NocOptions::DEFAULT>
    void async_write_barrier(const NocOptVals &noc_opts = {}) const {
        (void)noc_opts;
        base::async_write_barrier();
    }
    template <NocOptions opts = NocOptions::DEFAULT>
    void async_writes_flushed(const NocOptVals &noc_opts = {}) const {
        (void)noc_opts;
        base::async_writes_flushed();
    }
};
