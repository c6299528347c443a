/* Tilize, reader: for each unit (nn_row_block), the block's 32 rows of the
 * row-major tensor at common argument 0, zero-padded to the block's width and
 * below the last row, as `tiles` pages of circular buffer 0.
 * Compile-time args: is_dram_in, is_dram_out, esize. Runtime args: first
 * unit, units, h, w, ht, wt, block (runtime, so that one compiled kernel
 * serves every shape).
 *
 * With NN_TILIZE_GATHER, the reader of a product whose A is row-major
 * (nn_matmul.c's gathered form, matmul_compute.c tilizing): its units go
 * into circular buffer 7 (NN_MM_CB_ROWS), and the core takes every
 * step-th unit (runtime arg 7) from `first` on, not `units` in a row. */
#include "dataflow_api.h"

#ifdef NN_TILIZE_GATHER
#define CB_ROWS 7
#else
#define CB_ROWS 0
#endif

/* With one column block every unit fills the same columns of its slot of
 * the ring, so the ring is zeroed once and the columns past the valid ones
 * stay zero; below its rows a unit zeroes only the rows the unit before it
 * in the same slot filled (a [S, 1, C] tensor's units fill one row each,
 * every tile of a [B, 16, 8] one the same 16: nothing to zero). The slots
 * are told apart by their address: up to SLOTS of them, any other taken as
 * filled throughout. Zeroing every unit's padding instead costs a few
 * thousand interpreted instructions a tile (row by row, a fill per row). */
#define SLOTS 4
static uint32_t slot_at[SLOTS], slot_rows[SLOTS];

static uint32_t *filled_rows(uint32_t base) {
    static uint32_t unknown;
    for (uint32_t i = 0; i < SLOTS; i++) {
        if (slot_at[i] == base) return &slot_rows[i];
        if (!slot_at[i]) {
            slot_at[i] = base;
            slot_rows[i] = 0; /* zeroed with the ring */
            return &slot_rows[i];
        }
    }
    unknown = 32;
    return &unknown;
}

void kernel_main(void) {
    uint32_t first = get_arg_val(0), units = get_arg_val(1);
    uint32_t esize = get_compile_time_arg_val(2), h = get_arg_val(2);
    uint32_t w = get_arg_val(3), ht = get_arg_val(4);
    uint32_t wt = get_arg_val(5), block = get_arg_val(6);
#ifdef NN_TILIZE_GATHER
    uint32_t step = get_arg_val(7);
#else
    uint32_t step = 1;
#endif
    /* Every unit moves `room` pages, however many it fills, so no unit
     * wraps around the end of a circular buffer (2 * room pages). */
    uint32_t room = block < wt ? block : wt;
    InterleavedAddrGenFast in = {.bank_base_address = get_common_arg_val(0),
                                 .page_size = w * esize,
                                 .is_dram = get_compile_time_arg_val(0)};
    bool once = wt <= block;
    if (once && units) {
        const volatile uint32_t *cb = lm_l1_word(LM_L1_CB_CONFIG + CB_ROWS * LM_CB_CONFIG_STRIDE);
        cb_reserve_back(CB_ROWS, cb[3]); /* the whole ring, before anything is pushed */
        nn_zero(get_write_ptr(CB_ROWS), cb[1]);
    }
    for (uint32_t i = 0, u = first; i < units; i++, u += step) {
        nn_row_block rb = nn_row_block_of(u, ht, wt, block);
        uint32_t col0 = rb.bk * block * 32, width = rb.tiles * 32;
        uint32_t valid = w - col0 < width ? w - col0 : width;
        cb_reserve_back(CB_ROWS, room);
        uint32_t base = get_write_ptr(CB_ROWS);
        if (once) {
            uint32_t pitch = width * esize, rows = h - rb.tr * 32 < 32 ? h - rb.tr * 32 : 32;
            uint32_t page = rb.b * h + rb.tr * 32, off = col0 * esize, bytes = valid * esize;
            for (uint32_t r = 0; r < rows; r++)
                noc_async_read(get_noc_addr_interleaved(page + r, &in, off), base + r * pitch,
                               bytes);
            uint32_t *filled = filled_rows(base);
            if (*filled > rows) nn_zero(base + rows * pitch, (*filled - rows) * pitch);
            *filled = rows;
            noc_async_read_barrier();
            cb_push_back(CB_ROWS, room);
            continue;
        }
        for (uint32_t r = 0; r < 32; r++) {
            uint32_t row = rb.tr * 32 + r, dst = base + r * width * esize;
            if (row >= h) {
                /* The rows below the last are one run: zeroed at once (a
                 * [S, 1, C] tensor's tiles hold one row each). */
                nn_zero(dst, (32 - r) * width * esize);
                break;
            }
            noc_async_read(get_noc_addr_interleaved(rb.b * h + row, &in, col0 * esize), dst,
                           valid * esize);
            nn_zero(dst + valid * esize, (width - valid) * esize);
        }
        noc_async_read_barrier();
        cb_push_back(CB_ROWS, room);
    }
}
