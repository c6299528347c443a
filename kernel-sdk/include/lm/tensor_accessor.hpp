// TensorAccessorArgs / TensorAccessor: a buffer's layout from compile-time
// arguments the host appended (lm_tensor_accessor_args), so a kernel reads
// and writes pages by id without knowing where the buffer lives: interleaved
// over DRAM banks or L1, or sharded (height, width or block) over cores or
// DRAM banks. The first argument carries a marker, so arguments taken from
// the wrong offset fail to compile with a message instead of addressing
// garbage, and a sharded geometry that does not add up fails to compile too.
//
// Layout of the arguments at CTA_OFFSET: see LM_TA_* in lm_kernel_abi.h.
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

    static constexpr uint32_t cta_offset = CTA_OFFSET;
    static constexpr uint32_t arg(uint32_t i) { return get_compile_time_arg_val(CTA_OFFSET + i); }
    static_assert(CTA_OFFSET + LM_TA_PAGE_WORDS <= lm::compile_time_arg_count,
                  "TensorAccessorArgs: the buffer's arguments are cut short (append all of "
                  "lm_tensor_accessor_args' words to the kernel's compile-time args)");
    // tt-metal's name: the page size rounded up to the buffer's alignment, the
    // page size of a TensorAccessor made without one.
    static constexpr uint32_t AlignedPageSize =
        CTA_OFFSET + LM_TA_PAGE_WORDS <= lm::compile_time_arg_count ? arg(1) : 0;
    // The sharded geometry (0 for interleaved buffers), read only when the
    // kernel was given all of it.
    static constexpr bool has_head = CTA_OFFSET + LM_TA_SHARD_WORDS <= lm::compile_time_arg_count;
    static_assert(!is_sharded || has_head,
                  "TensorAccessorArgs: a sharded buffer's arguments are cut short (append all of "
                  "lm_tensor_accessor_args' words to the kernel's compile-time args)");
    static constexpr bool geometry = is_sharded && has_head;
    static constexpr uint32_t layout = geometry ? arg(LM_TA_PAGE_WORDS) : 0;
    static constexpr uint32_t shard_h = geometry ? arg(LM_TA_PAGE_WORDS + 1) : 0;
    static constexpr uint32_t shard_w = geometry ? arg(LM_TA_PAGE_WORDS + 2) : 0;
    static constexpr uint32_t tensor_w = geometry ? arg(LM_TA_PAGE_WORDS + 3) : 0;
    static constexpr uint32_t shard_cols = geometry ? arg(LM_TA_PAGE_WORDS + 4) : 0;
    static constexpr uint32_t shards = geometry ? arg(LM_TA_PAGE_WORDS + 5) : 0;
    static_assert(!is_sharded || (layout >= LM_TA_HEIGHT && layout <= LM_TA_BLOCK),
                  "TensorAccessorArgs: sharded arguments with an unknown layout (the arguments "
                  "are not lm_tensor_accessor_args' for this buffer)");
    static_assert(!is_sharded || (shard_h && shard_w && tensor_w && shard_cols && shards &&
                                  shards <= LM_MAX_SHARDS_IN_ARGS),
                  "TensorAccessorArgs: sharded arguments with an empty or impossible geometry "
                  "(the arguments are not lm_tensor_accessor_args' for this buffer)");

    constexpr TensorAccessorArgs() = default;
    static constexpr uint32_t num_compile_time_args() {
        return is_sharded ? LM_TA_SHARD_WORDS + (shards + 1) / 2 : LM_TA_PAGE_WORDS;
    }
    static constexpr uint32_t next_compile_time_args_offset() {
        return CTA_OFFSET + num_compile_time_args();
    }
    static_assert(!geometry || CTA_OFFSET + num_compile_time_args() <= lm::compile_time_arg_count,
                  "TensorAccessorArgs: a sharded buffer's arguments are cut short (append all of "
                  "lm_tensor_accessor_args' words to the kernel's compile-time args)");
    static constexpr uint32_t num_common_runtime_args() { return 0; }
    static constexpr uint32_t next_common_runtime_args_offset() { return CRTA_OFFSET; }
};

template <class Args> struct TensorAccessor {
    static constexpr uint32_t CTA_OFFSET_OF = Args::cta_offset;
    uint32_t bank_base_address;
    uint32_t page_size;

    constexpr TensorAccessor(const Args &, uint32_t address, uint32_t page_size_)
        : bank_base_address(address), page_size(page_size_) {}
    // The page size from the arguments (the buffer's, aligned).
    constexpr TensorAccessor(const Args &args, uint32_t address)
        : TensorAccessor(args, address, Args::AlignedPageSize) {
        static_assert(Args::AlignedPageSize != 0,
                      "TensorAccessor(args, address): the arguments' page size is 0 (they are not "
                      "lm_tensor_accessor_args' words for a buffer)");
    }

    // The NoC address of byte `offset` of page `page_id`.
    FORCE_INLINE uint64_t get_noc_addr(uint32_t page_id, uint32_t offset = 0,
                                       uint8_t noc = noc_index) const {
        (void)noc;
        if constexpr (Args::is_sharded) {
            const uint32_t r = page_id / Args::tensor_w, c = page_id % Args::tensor_w;
            const uint32_t sr = r / Args::shard_h, sc = c / Args::shard_w;
            const uint32_t s = Args::layout == LM_TA_HEIGHT  ? sr
                               : Args::layout == LM_TA_WIDTH ? sc
                                                             : sr * Args::shard_cols + sc;
            // A runtime index: read the table itself (the class checked the
            // words are there).
            const uint32_t word = lm::compile_time_args[CTA_OFFSET_OF + LM_TA_SHARD_WORDS + s / 2];
            const uint32_t xy = s % 2 ? word >> 16 : word & 0xFFFF;
            const uint32_t stride = get_aligned_page_size();
            const uint32_t local = (r % Args::shard_h) * Args::shard_w + c % Args::shard_w;
            const uint32_t addr = bank_base_address + local * stride + offset;
            // A DRAM shard's place is its bank, (bank, 0).
            if constexpr (Args::is_dram) return lm_bank_noc_addr(true, xy & 0xFF, addr);
            return ::get_noc_addr(xy & 0xFF, xy >> 8, addr);
        } else {
            return lm_interleaved_noc_addr(Args::is_dram, bank_base_address, page_size, page_id,
                                           offset);
        }
    }
    // The page size rounded up to the buffer's alignment: a page's room.
    FORCE_INLINE uint32_t get_aligned_page_size() const {
        const uint32_t align = lm_l1_word(
            LM_L1_CORE_INFO)[Args::is_dram ? LM_CORE_INFO_DRAM_ALIGN : LM_CORE_INFO_L1_ALIGN];
        return (page_size + align - 1) / align * align;
    }
    // The sharded geometry, for kernels that walk their own shard.
    static constexpr uint32_t shard_pages() { return Args::shard_h * Args::shard_w; }
};
template <class Args> TensorAccessor(const Args &, uint32_t, uint32_t) -> TensorAccessor<Args>;
template <class Args> TensorAccessor(const Args &, uint32_t) -> TensorAccessor<Args>;
