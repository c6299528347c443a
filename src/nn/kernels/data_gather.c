/* PyTorch's gather on row-major tensors: out (index's shape) [..., k] =
 * a[... with dim `dim` replaced by index[..., k] ...]. Each unit is a chunk
 * of one output row: its indices are read at once; along the last dim the
 * source row is staged in L1 (when it fits) and picked from, along another
 * dim every element is its own NoC read. An index >= a.dims[dim] (negative
 * int32 ones too, unless flag 16 counts those from the end) gives zero and
 * is counted.
 * Common args: a, out, index, counter (0 when unused). Runtime args: first
 * unit, units, flags (1 a in DRAM, 2 out in DRAM, 4 index in DRAM, 8 count,
 * 16 negative indices from the end),
 * esize, rank, dim, a's row width, out's row width, chunk, chunks per row,
 * staged row width (0: none), then per dim: out size, a's size, a's row
 * stride (rows; the last dim's unused). Circular buffers: 16 the output
 * chunk, 1 the indices, 0 the staged row. */
#include "dataflow_api.h"

#define MAX_DIMS 8

static void copy_elem(uint32_t dst, uint32_t src, uint32_t esize) {
    if (esize == 4)
        *(volatile uint32_t *)(uintptr_t)dst = *(volatile uint32_t *)(uintptr_t)src;
    else if (esize == 2)
        *(volatile uint16_t *)(uintptr_t)dst = *(volatile uint16_t *)(uintptr_t)src;
    else
        *(volatile uint8_t *)(uintptr_t)dst = *(volatile uint8_t *)(uintptr_t)src;
}

void kernel_main(void) {
    uint32_t first = get_arg_val(0), units = get_arg_val(1), flags = get_arg_val(2);
    const bool wrap = (flags & 16) != 0;
    uint32_t esize = get_arg_val(3), rank = get_arg_val(4), dim = get_arg_val(5);
    uint32_t a_w = get_arg_val(6), out_w = get_arg_val(7), chunk = get_arg_val(8);
    uint32_t nchunks = get_arg_val(9), stage_w = get_arg_val(10);
    uint32_t osize[MAX_DIMS], asize[MAX_DIMS], astride[MAX_DIMS];
    for (uint32_t d = 0; d < rank; d++) {
        osize[d] = get_arg_val(11 + 3 * d);
        asize[d] = get_arg_val(12 + 3 * d);
        astride[d] = get_arg_val(13 + 3 * d);
    }
    InterleavedAddrGenFast a = {get_common_arg_val(0), a_w * esize, (flags & 1) != 0};
    InterleavedAddrGenFast out = {get_common_arg_val(1), out_w * esize, (flags & 2) != 0};
    InterleavedAddrGenFast idx = {get_common_arg_val(2), out_w * 4, (flags & 4) != 0};
    cb_reserve_back(16, 1);
    cb_reserve_back(1, 1);
    uint32_t buf = get_write_ptr(16), ibuf = get_write_ptr(1), stage = 0;
    if (stage_w) {
        cb_reserve_back(0, 1);
        stage = get_write_ptr(0);
    }
    uint32_t cur = 0xffffffffu, base = 0, staged = 0xffffffffu, invalid = 0;
    uint32_t width = osize[rank - 1];
    for (uint32_t u = first; u < first + units; u++) {
        uint32_t row = u / nchunks, c0 = u % nchunks * chunk;
        uint32_t n = width - c0 < chunk ? width - c0 : chunk;
        if (row != cur) {
            /* a's row for this output row, without dim's share */
            uint32_t rest = row;
            base = 0;
            for (int32_t d = (int32_t)rank - 2; d >= 0; d--) {
                uint32_t o = rest % osize[d];
                rest /= osize[d];
                if ((uint32_t)d != dim) base += o * astride[d];
            }
            cur = row;
        }
        noc_async_read(get_noc_addr_interleaved(row, &idx, c0 * 4), ibuf, n * 4);
        noc_async_read_barrier();
        const volatile uint32_t *ix = (const volatile uint32_t *)(uintptr_t)ibuf;
        uint32_t n_dim = asize[dim];
        if (dim == rank - 1 && stage_w) {
            if (base != staged) {
                noc_async_read(get_noc_addr_interleaved(base, &a, 0), stage, a_w * esize);
                noc_async_read_barrier();
                staged = base;
            }
            for (uint32_t k = 0; k < n; k++) {
                uint32_t s = ix[k];
                if (wrap && (int32_t)s < 0) s += n_dim;
                if (s < n_dim) {
                    copy_elem(buf + k * esize, stage + s * esize, esize);
                } else {
                    nn_zero(buf + k * esize, esize);
                    invalid++;
                }
            }
        } else {
            for (uint32_t k = 0; k < n; k++) {
                uint32_t s = ix[k], arow = base, col = c0 + k;
                if (wrap && (int32_t)s < 0) s += n_dim;
                if (s >= n_dim) {
                    nn_zero(buf + k * esize, esize);
                    invalid++;
                    continue;
                }
                if (dim == rank - 1)
                    col = s;
                else
                    arow += s * astride[dim];
                noc_async_read(get_noc_addr_interleaved(arow, &a, col * esize), buf + k * esize,
                               esize);
            }
            noc_async_read_barrier();
        }
        noc_async_write(buf, get_noc_addr_interleaved(row, &out, c0 * esize), n * esize);
        noc_async_write_barrier();
    }
    if ((flags & 8) && invalid)
        noc_semaphore_inc(lm_bank_noc_addr(false, 0, get_common_arg_val(3)), invalid);
}
