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

void kernel_main(void) {
    uint32_t first = get_arg_val(0), count = get_arg_val(1), page = get_arg_val(2);
    uint32_t chunk = get_arg_val(3), batch = get_arg_val(4);
    nn_accessor in, out;
    uint32_t next = nn_accessor_init(&in, 5, get_common_arg_val(0), page);
    nn_accessor_init(&out, next, get_common_arg_val(1), page);
    if (batch > MAX_BATCH) batch = MAX_BATCH;
    cb_reserve_back(0, batch);
    uint32_t buf = get_write_ptr(0);
    uint32_t held_page[MAX_BATCH], held_off[MAX_BATCH], held_len[MAX_BATCH], n = 0;
    for (uint32_t p = first; p < first + count; p++) {
        for (uint32_t off = 0; off < page; off += chunk) {
            uint32_t len = page - off < chunk ? page - off : chunk;
            noc_async_read(nn_accessor_addr(&in, p, off), buf + n * chunk, len);
            held_page[n] = p;
            held_off[n] = off;
            held_len[n] = len;
            if (++n < batch && !(p + 1 == first + count && off + len == page)) continue;
            noc_async_read_barrier();
            for (uint32_t i = 0; i < n; i++)
                noc_async_write(buf + i * chunk, nn_accessor_addr(&out, held_page[i], held_off[i]),
                                held_len[i]);
            noc_async_write_barrier();
            n = 0;
        }
    }
}
