/* Reads, for each output tile [first, first + count) of a broadcasting
 * element-wise op, the matching tile of each input (the tensors at common
 * arguments 0 .. n_in - 1) into circular buffers 0 .. n_in - 1.
 *
 * The output is out_ht x out_wt tiles per matrix, matrices indexed by up to
 * NN_BIN_OUTER outer dims (row-major). An input's tile for output tile (outer
 * index o, tile row tr, tile column tc) is
 *   sum_d o[d] * stride[d] * ht * wt + (ht == 1 ? 0 : tr) * wt + (wt == 1 ? 0 : tc)
 * where stride[d] (in matrices) is 0 along dims the input broadcasts: an
 * input with one tile row or column is broadcast along it (or has the
 * output's single one). Broadcasting inside a tile is the compute kernel's.
 * The walk keeps counters instead of dividing per tile.
 *
 * Compile-time args: n_in.
 * Runtime args: first, count, out_ht, out_wt, n_outer, outer dims[NN_BIN_OUTER],
 * then per input: where its accessor words start (a runtime arg index), ht,
 * wt, strides[NN_BIN_OUTER]; then the inputs' accessor words
 * (lm_tensor_accessor_args: interleaved or sharded). All runtime, so one
 * compiled kernel serves every shape, buffer and broadcast pattern. */
#include "dataflow_api.h"

#define NN_BIN_OUTER 6
#define ARG(i) get_arg_val(2 + (i))
#define IN_ARG(i, k) ARG(3 + NN_BIN_OUTER + (i) * (3 + NN_BIN_OUTER) + (k))

void kernel_main(void) {
    uint32_t first = get_arg_val(0), count = get_arg_val(1);
    uint32_t n_in = get_compile_time_arg_val(0);
    uint32_t out_ht = ARG(0), out_wt = ARG(1), n_outer = ARG(2);
    nn_accessor acc[3];
    uint32_t wt[3], row_fixed[3], base[3], step[3][NN_BIN_OUTER], idx[NN_BIN_OUTER];
    uint32_t dim[NN_BIN_OUTER];
    uint32_t tc = first % out_wt, tr = first / out_wt % out_ht, m = first / out_wt / out_ht;
    for (uint32_t d = n_outer; d-- > 0;) {
        dim[d] = ARG(3 + d);
        idx[d] = m % dim[d];
        m /= dim[d];
    }
    for (uint32_t i = 0; i < n_in; i++) {
        nn_accessor_init(&acc[i], IN_ARG(i, 0), get_common_arg_val(i), get_tile_size(i));
        uint32_t ht = IN_ARG(i, 1);
        wt[i] = IN_ARG(i, 2);
        row_fixed[i] = ht == 1;
        base[i] = 0;
        for (uint32_t d = 0; d < n_outer; d++) {
            step[i][d] = IN_ARG(i, 3 + d) * ht * wt[i]; /* tiles per step of dim d */
            base[i] += idx[d] * step[i][d];
        }
    }
    for (uint32_t t = 0; t < count; t++) {
        for (uint32_t i = 0; i < n_in; i++) {
            uint32_t id = base[i] + (row_fixed[i] ? 0 : tr * wt[i]) + (wt[i] == 1 ? 0 : tc);
            cb_reserve_back(i, 1);
            noc_async_read(nn_accessor_addr(&acc[i], id, 0), get_write_ptr(i), acc[i].page);
        }
        noc_async_read_barrier();
        for (uint32_t i = 0; i < n_in; i++)
            cb_push_back(i, 1);
        if (++tc < out_wt) continue;
        tc = 0;
        if (++tr < out_ht) continue;
        tr = 0;
        for (uint32_t d = n_outer; d-- > 0;) {
            uint32_t wrap = ++idx[d] == dim[d];
            for (uint32_t i = 0; i < n_in; i++)
                base[i] = wrap ? base[i] - (dim[d] - 1) * step[i][d] : base[i] + step[i][d];
            if (!wrap) break;
            idx[d] = 0;
        }
    }
}
