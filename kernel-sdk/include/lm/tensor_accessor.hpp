// TensorAccessorArgs / TensorAccessor: a buffer's layout from compile-time
// arguments the host appended (lm_tensor_accessor_args), so a kernel reads
// and writes pages by id without knowing whether the buffer is in DRAM or
// L1. The first argument carries a marker, so arguments taken from the wrong
// offset fail to compile with a message instead of addressing garbage.
//
// Layout of the arguments at CTA_OFFSET (see lm_kernel_abi.h): one word,
// LM_TA_MAGIC | flags (LM_TA_DRAM for a DRAM buffer, else L1). Interleaved
// buffers only: sharded ones are refused at compile time.
#pragma once

#include <stddef.h>
#include <stdint.h>

template <uint32_t CTA_OFFSET, uint32_t CRTA_OFFSET = 0> struct TensorAccessorArgs {
    static constexpr uint32_t config = get_compile_time_arg_val(CTA_OFFSET);
    static_assert((config & LM_TA_MAGIC_MASK) == LM_TA_MAGIC,
                  "TensorAccessorArgs<CTA_OFFSET>: the compile-time argument at CTA_OFFSET is not "
                  "the first word of tensor accessor arguments (append them on the host with "
                  "lm_tensor_accessor_args, and start TensorAccessorArgs at that index)");
    static_assert((config & ~(LM_TA_MAGIC_MASK | LM_TA_FLAG_MASK)) == 0,
                  "TensorAccessorArgs: unknown flags in the first argument");
    static constexpr bool is_dram = (config & LM_TA_DRAM) != 0;
    static constexpr bool is_sharded = (config & LM_TA_SHARDED) != 0;
    static_assert(!is_sharded, "TensorAccessorArgs: sharded buffers are not supported yet");

    constexpr TensorAccessorArgs() = default;
    static constexpr uint32_t num_compile_time_args() { return 1; }
    static constexpr uint32_t next_compile_time_args_offset() {
        return CTA_OFFSET + num_compile_time_args();
    }
    static constexpr uint32_t num_common_runtime_args() { return 0; }
    static constexpr uint32_t next_common_runtime_args_offset() { return CRTA_OFFSET; }
    static constexpr uint32_t arg(uint32_t i) { return get_compile_time_arg_val(CTA_OFFSET + i); }
};

template <class Args> struct TensorAccessor {
    uint32_t bank_base_address;
    uint32_t page_size;

    constexpr TensorAccessor(const Args &, uint32_t address, uint32_t page_size_)
        : bank_base_address(address), page_size(page_size_) {}

    // The NoC address of byte `offset` of page `page_id`.
    FORCE_INLINE uint64_t get_noc_addr(uint32_t page_id, uint32_t offset = 0,
                                       uint8_t noc = noc_index) const {
        (void)noc;
        return lm_interleaved_noc_addr(Args::is_dram, bank_base_address, page_size, page_id,
                                       offset);
    }
};
template <class Args> TensorAccessor(const Args &, uint32_t, uint32_t) -> TensorAccessor<Args>;
