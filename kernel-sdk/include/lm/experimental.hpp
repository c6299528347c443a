// tt-metal's experimental (Device 2.0) data movement objects: Noc,
// CircularBuffer, CoreLocalMem, Semaphore and the endpoints, over the same
// calls as the rest of the API. A transfer names its source and destination
// by object plus an argument struct whose fields depend on the object:
//   UnicastEndpoint     {noc_x, noc_y, addr}      remote; as a local side, addr
//   MulticastEndpoint   {noc_x_start, noc_y_start, noc_x_end, noc_y_end, addr}
//   CoreLocalMem<T>     {offset_bytes}            local L1
//   CircularBuffer      {noc_x_start, noc_y_start, noc_x_end, noc_y_end, offset_bytes}
//                       local: the write pointer as a read's destination,
//                       the read pointer as a write's source (use<>() picks);
//                       as a multicast destination, the same address on the
//                       cores of the rectangle
//   TensorAccessor      {page_id, offset_bytes}   remote pages
//   AllocatorBank<T>    {bank_id, addr}           remote
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace experimental {

struct UnicastEndpoint {
    struct args_t {
        uint32_t noc_x, noc_y, addr;
    };
};
struct MulticastEndpoint {
    struct args_t {
        uint32_t noc_x_start, noc_y_start, noc_x_end, noc_y_end, addr;
    };
};
enum class AllocatorBankType : uint8_t { DRAM, L1 };
template <AllocatorBankType T> struct AllocatorBank {
    struct args_t {
        uint32_t bank_id, addr;
    };
};

template <class T> class CoreLocalMem {
  public:
    struct args_t {
        uint32_t offset_bytes;
    };
    explicit CoreLocalMem(uint32_t address) : p_(reinterpret_cast<volatile T *>(address)) {}
    uint32_t get_address() const { return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p_)); }
    volatile T &operator[](uint32_t i) const { return p_[i]; }
    volatile T &operator*() const { return *p_; }
    volatile T *operator->() const { return p_; }
    CoreLocalMem &operator++() { return ++p_, *this; }
    CoreLocalMem operator++(int) {
        CoreLocalMem old = *this;
        ++p_;
        return old;
    }
    CoreLocalMem &operator+=(int32_t n) { return p_ += n, *this; }
    CoreLocalMem operator+(int32_t n) const { return CoreLocalMem(get_address() + n * sizeof(T)); }
    int32_t operator-(const CoreLocalMem &o) const { return static_cast<int32_t>(p_ - o.p_); }
    bool operator<(const CoreLocalMem &o) const { return p_ < o.p_; }
    bool operator==(const CoreLocalMem &o) const { return p_ == o.p_; }
    bool operator!=(const CoreLocalMem &o) const { return p_ != o.p_; }

  private:
    volatile T *p_;
};

class CircularBuffer {
  public:
    enum class AddrSelector : uint8_t { READ_PTR, WRITE_PTR };
    struct args_t {
        uint32_t noc_x_start, noc_y_start, noc_x_end, noc_y_end, offset_bytes;
    };
    explicit CircularBuffer(uint32_t cb_id) : id_(cb_id) {}
    uint32_t get_cb_id() const { return id_; }
    void reserve_back(uint32_t n) const { cb_reserve_back(id_, n); }
    void push_back(uint32_t n) const { cb_push_back(id_, n); }
    void wait_front(uint32_t n) const { cb_wait_front(id_, n); }
    void pop_front(uint32_t n) const { cb_pop_front(id_, n); }
    bool pages_available_at_front(uint32_t n) const { return cb_pages_available_at_front(id_, n); }
    bool pages_reservable_at_back(uint32_t n) const { return cb_pages_reservable_at_back(id_, n); }
    uint32_t get_write_ptr() const { return ::get_write_ptr(id_); }
    uint32_t get_read_ptr() const { return ::get_read_ptr(id_); }
    uint32_t get_tile_size() const { return ::get_tile_size(id_); }
    DataFormat get_dataformat() const { return ::get_dataformat(id_); }

  private:
    uint32_t id_;
};

// A circular buffer seen through one of its pointers.
template <CircularBuffer::AddrSelector S> struct CircularBufferView {
    using args_t = CircularBuffer::args_t;
    const CircularBuffer &cb;
};
template <CircularBuffer::AddrSelector S> CircularBufferView<S> use(const CircularBuffer &cb) {
    return {cb};
}

// How each object is addressed: as the local side of a transfer (an L1
// address) and as the remote side (a NoC address).
template <class T, class = void> struct noc_traits {
    static_assert(sizeof(T) == 0, "NoC transactions are not supported for this type");
};
template <class T> struct noc_traits<CoreLocalMem<T>> {
    using args_t = typename CoreLocalMem<T>::args_t;
    static uint32_t local(const CoreLocalMem<T> &m, const args_t &a, bool) {
        return m.get_address() + a.offset_bytes;
    }
};
template <> struct noc_traits<CircularBuffer> {
    using args_t = CircularBuffer::args_t;
    // A read fills the back; a write sends the front.
    static uint32_t local(const CircularBuffer &cb, const args_t &a, bool is_read_dst) {
        return (is_read_dst ? cb.get_write_ptr() : cb.get_read_ptr()) + a.offset_bytes;
    }
    static uint64_t mcast(const CircularBuffer &cb, const args_t &a) {
        return get_noc_multicast_addr(a.noc_x_start, a.noc_y_start, a.noc_x_end, a.noc_y_end,
                                      cb.get_write_ptr() + a.offset_bytes);
    }
};
template <CircularBuffer::AddrSelector S> struct noc_traits<CircularBufferView<S>> {
    using args_t = CircularBuffer::args_t;
    static uint32_t local(const CircularBufferView<S> &v, const args_t &a, bool) {
        return (S == CircularBuffer::AddrSelector::WRITE_PTR ? v.cb.get_write_ptr()
                                                             : v.cb.get_read_ptr()) +
               a.offset_bytes;
    }
};
template <> struct noc_traits<UnicastEndpoint> {
    using args_t = UnicastEndpoint::args_t;
    static uint32_t local(const UnicastEndpoint &, const args_t &a, bool) { return a.addr; }
    static uint64_t remote(const UnicastEndpoint &, const args_t &a) {
        return ::get_noc_addr(a.noc_x, a.noc_y, a.addr);
    }
};
template <> struct noc_traits<MulticastEndpoint> {
    using args_t = MulticastEndpoint::args_t;
    static uint64_t mcast(const MulticastEndpoint &, const args_t &a) {
        return get_noc_multicast_addr(a.noc_x_start, a.noc_y_start, a.noc_x_end, a.noc_y_end,
                                      a.addr);
    }
};
template <AllocatorBankType B> struct noc_traits<AllocatorBank<B>> {
    using args_t = typename AllocatorBank<B>::args_t;
    static uint64_t remote(const AllocatorBank<B> &, const args_t &a) {
        return lm_bank_noc_addr(B == AllocatorBankType::DRAM, a.bank_id, a.addr);
    }
};
template <class A> struct noc_traits<TensorAccessor<A>> {
    struct args_t {
        uint32_t page_id, offset_bytes;
    };
    static uint64_t remote(const TensorAccessor<A> &t, const args_t &a) {
        return t.get_noc_addr(a.page_id, a.offset_bytes);
    }
};

template <class T> using noc_args_t = typename noc_traits<T>::args_t;

class Noc {
  public:
    enum class McastMode : uint8_t { EXCLUDE_SRC, INCLUDE_SRC };
    enum class ResponseMode : uint8_t { NON_POSTED, POSTED };
    enum class TxnIdMode : uint8_t { DISABLED, ENABLED };
    enum class BarrierMode : uint8_t { FULL, TXN_ID };

    explicit Noc(uint8_t noc = noc_index) : noc_(noc) {}
    uint8_t get_noc_id() const { return noc_; }

    template <TxnIdMode T = TxnIdMode::DISABLED, class Src, class Dst>
    void async_read(const Src &src, const Dst &dst, uint32_t size, const noc_args_t<Src> &sa,
                    const noc_args_t<Dst> &da, uint32_t vc = 0, uint32_t trid = 0) const {
        (void)vc, (void)trid;
        noc_async_read(noc_traits<Src>::remote(src, sa), noc_traits<Dst>::local(dst, da, true),
                       size);
    }
    template <ResponseMode R = ResponseMode::NON_POSTED, TxnIdMode T = TxnIdMode::DISABLED,
              class Src, class Dst>
    void async_write(const Src &src, const Dst &dst, uint32_t size, const noc_args_t<Src> &sa,
                     const noc_args_t<Dst> &da, uint32_t vc = 0, uint32_t trid = 0) const {
        (void)vc, (void)trid;
        noc_async_write(noc_traits<Src>::local(src, sa, false), noc_traits<Dst>::remote(dst, da),
                        size);
    }
    // num_dests counts the receiving cores (the sender too with INCLUDE_SRC,
    // which also writes the sender's own copy).
    template <McastMode M = McastMode::EXCLUDE_SRC, class Src, class Dst>
    void async_write_multicast(const Src &src, const Dst &dst, uint32_t size, uint32_t num_dests,
                               const noc_args_t<Src> &sa, const noc_args_t<Dst> &da,
                               bool linked = false) const {
        (void)linked;
        uint32_t from = noc_traits<Src>::local(src, sa, false);
        uint64_t to = noc_traits<Dst>::mcast(dst, da);
        if constexpr (M == McastMode::INCLUDE_SRC) {
            noc_async_write(from, get_noc_addr_local(static_cast<uint32_t>(to) & 0xFFFFFFFFu),
                            size);
            if (num_dests > 1) noc_async_write_multicast(from, to, size, num_dests - 1);
        } else {
            noc_async_write_multicast(from, to, size, num_dests);
        }
    }

    // The "with state" forms: the state names the remote core and size once
    // (the NoC's registers on the chip, so setting it is const as there);
    // each transfer then gives the address on that core (the low bits of its
    // remote side's NoC address, as in tt-metal) and a size, 0 for the
    // state's.
    template <class Src>
    void set_async_read_state(const Src &src, uint32_t size, const noc_args_t<Src> &sa) const {
        state_ = noc_traits<Src>::remote(src, sa);
        state_size_ = size;
    }
    template <class Src, class Dst>
    void async_read_with_state(const Src &src, const Dst &dst, uint32_t size,
                               const noc_args_t<Src> &sa, const noc_args_t<Dst> &da) const {
        noc_async_read(rebase(state_, static_cast<uint32_t>(noc_traits<Src>::remote(src, sa))),
                       noc_traits<Dst>::local(dst, da, true), size ? size : state_size_);
    }
    template <ResponseMode R = ResponseMode::NON_POSTED, class Dst>
    void set_async_write_state(const Dst &dst, uint32_t size, const noc_args_t<Dst> &da) const {
        state_ = noc_traits<Dst>::remote(dst, da);
        state_size_ = size;
    }
    template <ResponseMode R = ResponseMode::NON_POSTED, class Src, class Dst>
    void async_write_with_state(const Src &src, const Dst &dst, uint32_t size,
                                const noc_args_t<Src> &sa, const noc_args_t<Dst> &da) const {
        noc_async_write(noc_traits<Src>::local(src, sa, false),
                        rebase(state_, static_cast<uint32_t>(noc_traits<Dst>::remote(dst, da))),
                        size ? size : state_size_);
    }

    template <BarrierMode B = BarrierMode::FULL> void async_read_barrier(uint32_t trid = 0) const {
        (void)trid;
        noc_async_read_barrier();
    }
    template <BarrierMode B = BarrierMode::FULL> void async_write_barrier(uint32_t trid = 0) const {
        (void)trid;
        noc_async_write_barrier();
    }
    void async_writes_flushed() const { noc_async_write_barrier(); }
    void async_posted_writes_flushed() const { noc_async_write_barrier(); }
    void async_atomic_barrier() const {}
    void async_full_barrier() const {
        noc_async_read_barrier();
        noc_async_write_barrier();
    }

  private:
    static uint64_t rebase(uint64_t noc_addr, uint32_t addr) {
        return (noc_addr >> LM_NOC_ADDR_BITS << LM_NOC_ADDR_BITS) | addr;
    }
    uint8_t noc_;
    mutable uint64_t state_ = 0;
    mutable uint32_t state_size_ = 0;
};

template <ProgrammableCoreType T = ProgrammableCoreType::TENSIX> class Semaphore {
  public:
    explicit Semaphore(uint32_t id) : addr_(get_semaphore<T>(id)) {}
    uint32_t get_address() const { return addr_; }
    volatile uint32_t *ptr() const { return reinterpret_cast<volatile uint32_t *>(addr_); }
    void set(uint32_t v) const { noc_semaphore_set(ptr(), v); }
    void wait(uint32_t v) const { noc_semaphore_wait(ptr(), v); }
    void wait_min(uint32_t v) const { noc_semaphore_wait_min(ptr(), v); }
    // Local increment, and blocking decrement (waits until it can subtract).
    void up(uint32_t v) const { noc_semaphore_inc(get_noc_addr_local(addr_), v); }
    void down(uint32_t v) const {
        noc_semaphore_wait_min(ptr(), v);
        noc_semaphore_inc(get_noc_addr_local(addr_), 0u - v);
    }
    void up(const Noc &noc, uint32_t x, uint32_t y, uint32_t v) const {
        (void)noc;
        noc_semaphore_inc(::get_noc_addr(x, y, addr_), v);
    }
    template <Noc::McastMode M = Noc::McastMode::EXCLUDE_SRC>
    void set_multicast(const Noc &noc, uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1,
                       uint32_t num_dests, bool linked = false) const {
        (void)noc, (void)linked;
        uint64_t to = get_noc_multicast_addr(x0, y0, x1, y1, addr_);
        if constexpr (M == Noc::McastMode::INCLUDE_SRC) {
            if (num_dests > 1) noc_semaphore_set_multicast(addr_, to, num_dests - 1);
        } else {
            noc_semaphore_set_multicast(addr_, to, num_dests);
        }
    }

  private:
    uint32_t addr_;
};

} // namespace experimental
