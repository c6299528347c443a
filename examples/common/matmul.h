/* Builds a matmul program C = A x B (optionally relu(C)) over a grid of cores,
 * from the kernels in common/kernels: core (x, y) computes the block of C tile
 * rows y*Mb.. and tile columns x*Nb.. (Nb = Nt / grid_x, Mb = Mt / grid_y
 * rounded up). The B block of a grid column is read once, by the column's top
 * core, and multicast to the others; each A tile is reused for all Nb
 * outputs of its row. A, B and C are interleaved DRAM buffers of tiles, row
 * major over tiles. */
#ifndef LM_EXAMPLE_MATMUL_H
#define LM_EXAMPLE_MATMUL_H

#include "example.h"

typedef struct ex_matmul {
    uint32_t mt, kt, nt; /* sizes in tiles */
    lm_data_format a_format, b_format, c_format;
    bool relu;
    bool fp32_acc;
    uint32_t grid_x, grid_y; /* nt % grid_x == 0; nt / grid_x <= 8 */
} ex_matmul;

static inline lm_status ex_matmul_program(lm_device *dev, const ex_matmul *mm, lm_buffer a,
                                          lm_buffer b, lm_buffer c, lm_program *out) {
    uint32_t nb = mm->nt / mm->grid_x, mb = (mm->mt + mm->grid_y - 1) / mm->grid_y;
    lm_core_range_set cores = lm_core_range_set_of(0, 0, mm->grid_x - 1, mm->grid_y - 1);
    lm_program prog;
    lm_kernel rw, weights, compute;
    uint32_t sem;
    lm_kernel_config dm0, dm1, cc;
    lm_kernel_config_init(&dm0, LM_PROCESSOR_DM0);
    lm_kernel_config_init(&dm1, LM_PROCESSOR_DM1);
    lm_kernel_config_init(&cc, LM_PROCESSOR_COMPUTE);
    lm_kernel_define relu = {"RELU", NULL};
    cc.defines = &relu;
    cc.define_count = mm->relu ? 1 : 0;
    cc.fp32_dest_acc_en = mm->fp32_acc;
    lm_status st = lm_create_program(dev, &prog);
    if (!st) st = ex_cb(prog, &cores, 0, mm->a_format, 2);
    if (!st) st = ex_cb(prog, &cores, 1, mm->b_format, mm->kt * nb);
    if (!st) st = ex_cb(prog, &cores, 16, mm->c_format, nb);
    if (!st) st = lm_create_semaphore(prog, &cores, 0, &sem);
    if (!st)
        st = lm_create_kernel(prog, LM_EXAMPLE_DIR "/../common/kernels/mm_reader_writer.c", &cores,
                              &dm0, &rw);
    if (!st)
        st = lm_create_kernel(prog, LM_EXAMPLE_DIR "/../common/kernels/mm_weights.c", &cores, &dm1,
                              &weights);
    if (!st)
        st = lm_create_kernel(prog, LM_EXAMPLE_DIR "/../common/kernels/mm_compute.c", &cores, &cc,
                              &compute);
    for (uint32_t y = 0; y < mm->grid_y && !st; y++)
        for (uint32_t x = 0; x < mm->grid_x && !st; x++) {
            uint32_t m_start = y * mb;
            uint32_t rows = m_start >= mm->mt ? 0 : mm->mt - m_start < mb ? mm->mt - m_start : mb;
            uint32_t role = mm->grid_y == 1 ? 0 : y == 0 ? 1 : 2;
            uint32_t rw_args[] = {ex_address(a), ex_address(c), mm->kt, mm->nt,
                                  m_start,       rows,          x * nb, nb};
            uint32_t w_args[] = {ex_address(b),  mm->kt,        mm->nt, x * nb, nb, role, x, 1, x,
                                 mm->grid_y - 1, mm->grid_y - 1};
            uint32_t c_args[] = {rows, mm->kt, nb};
            lm_core core = {x, y};
            st = lm_set_runtime_args(prog, rw, core, rw_args, 8);
            if (!st) st = lm_set_runtime_args(prog, weights, core, w_args, 11);
            if (!st) st = lm_set_runtime_args(prog, compute, core, c_args, 3);
        }
    if (st) {
        lm_release_program(prog);
        return st;
    }
    *out = prog;
    return LM_OK;
}

#endif
