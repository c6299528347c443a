/* Copies pages [first, first + count) of the tensor at common argument 0 to
 * the same pages of the tensor at common argument 1. Each side is addressed
 * through its tensor accessor words (lm_tensor_accessor_args: interleaved or
 * height, width or block sharded, in L1 or DRAM), so one kernel serves every
 * pair of memory configs. Circular buffer 0 is scratch: `batch` slots of
 * `chunk` bytes; a page longer than a slot moves in pieces.
 * Runtime args: first, count, page size, chunk, batch, then the input's
 * accessor words, then the output's (each as lm_tensor_accessor_args gives
 * them; their first word says how many follow). */
#include "dataflow_api.h"

#define MAX_BATCH 8

/* tt-metal's TensorAccessor over runtime-arg words: page p's NoC address. */
typedef struct nn_accessor {
    uint32_t base, page, stride;
    bool dram, sharded;
    uint32_t layout, shard_h, shard_w, tensor_w, shard_cols;
    uint32_t cores; /* runtime arg index of the shard core table */
} nn_accessor;

/* Reads the words at runtime arg `arg`; returns the index after them. */
static uint32_t accessor_init(nn_accessor *a, uint32_t arg, uint32_t base, uint32_t page) {
    uint32_t cfg = get_arg_val(arg);
    a->base = base;
    a->page = page;
    a->dram = (cfg & LM_TA_DRAM) != 0;
    a->sharded = (cfg & LM_TA_SHARDED) != 0;
    a->stride = get_arg_val(arg + 1);
    if (!a->sharded) return arg + LM_TA_PAGE_WORDS;
    a->layout = get_arg_val(arg + LM_TA_PAGE_WORDS);
    a->shard_h = get_arg_val(arg + LM_TA_PAGE_WORDS + 1);
    a->shard_w = get_arg_val(arg + LM_TA_PAGE_WORDS + 2);
    a->tensor_w = get_arg_val(arg + LM_TA_PAGE_WORDS + 3);
    a->shard_cols = get_arg_val(arg + LM_TA_PAGE_WORDS + 4);
    uint32_t shards = get_arg_val(arg + LM_TA_PAGE_WORDS + 5);
    a->cores = arg + LM_TA_SHARD_WORDS;
    return a->cores + (shards + 1) / 2;
}

static uint64_t accessor_addr(const nn_accessor *a, uint32_t p, uint32_t offset) {
    if (!a->sharded) return lm_interleaved_noc_addr(a->dram, a->base, a->page, p, offset);
    uint32_t r = p / a->tensor_w, c = p % a->tensor_w;
    uint32_t sr = r / a->shard_h, sc = c / a->shard_w;
    uint32_t s = a->layout == LM_TA_HEIGHT  ? sr
                 : a->layout == LM_TA_WIDTH ? sc
                                            : sr * a->shard_cols + sc;
    uint32_t word = get_arg_val(a->cores + s / 2);
    uint32_t xy = s % 2 ? word >> 16 : word & 0xFFFF;
    uint32_t local = (r % a->shard_h) * a->shard_w + c % a->shard_w;
    uint32_t addr = a->base + local * a->stride + offset;
    /* A DRAM shard's place is its bank, (bank, 0). */
    if (a->dram) return lm_bank_noc_addr(true, xy & 0xFF, addr);
    return get_noc_addr(xy & 0xFF, xy >> 8, addr);
}

void kernel_main(void) {
    uint32_t first = get_arg_val(0), count = get_arg_val(1), page = get_arg_val(2);
    uint32_t chunk = get_arg_val(3), batch = get_arg_val(4);
    nn_accessor in, out;
    uint32_t next = accessor_init(&in, 5, get_common_arg_val(0), page);
    accessor_init(&out, next, get_common_arg_val(1), page);
    if (batch > MAX_BATCH) batch = MAX_BATCH;
    cb_reserve_back(0, batch);
    uint32_t buf = get_write_ptr(0);
    uint32_t held_page[MAX_BATCH], held_off[MAX_BATCH], held_len[MAX_BATCH], n = 0;
    for (uint32_t p = first; p < first + count; p++) {
        for (uint32_t off = 0; off < page; off += chunk) {
            uint32_t len = page - off < chunk ? page - off : chunk;
            noc_async_read(accessor_addr(&in, p, off), buf + n * chunk, len);
            held_page[n] = p;
            held_off[n] = off;
            held_len[n] = len;
            if (++n < batch && !(p + 1 == first + count && off + len == page)) continue;
            noc_async_read_barrier();
            for (uint32_t i = 0; i < n; i++)
                noc_async_write(buf + i * chunk, accessor_addr(&out, held_page[i], held_off[i]),
                                held_len[i]);
            noc_async_write_barrier();
            n = 0;
        }
    }
}
