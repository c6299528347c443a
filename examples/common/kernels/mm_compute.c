/* C block = A rows x B block, accumulated in dst over K: each A tile is used
 * for all Nb output tiles of its row, and B stays in circular buffer 1 for the
 * whole launch. With RELU defined, relu is applied before packing.
 * Runtime args: Mb, Kt, Nb (Nb <= 8 with fp32 accumulation, else 16). */
#include "compute_kernel_api.h"

void kernel_main(void) {
    uint32_t mb = get_arg_val(0), kt = get_arg_val(1), nb = get_arg_val(2);
    mm_init(0, 1, 16);
    cb_wait_front(1, kt * nb);
    for (uint32_t m = 0; m < mb; m++) {
        tile_regs_acquire();
        for (uint32_t k = 0; k < kt; k++) {
            cb_wait_front(0, 1);
            for (uint32_t n = 0; n < nb; n++)
                matmul_tiles(0, 1, 0, k * nb + n, n, 0);
            cb_pop_front(0, 1);
        }
#ifdef RELU
        for (uint32_t n = 0; n < nb; n++)
            relu_tile(n);
#endif
        tile_regs_commit();
        tile_regs_wait();
        cb_reserve_back(16, nb);
        for (uint32_t n = 0; n < nb; n++)
            pack_tile(n, 16);
        cb_push_back(16, nb);
        tile_regs_release();
    }
    cb_pop_front(1, kt * nb);
}
