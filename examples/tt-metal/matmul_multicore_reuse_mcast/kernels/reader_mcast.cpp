// Block matmul inputs with multicast: the first core of each grid row reads
// that row's A block from DRAM and multicasts it along the row; the first core
// of each grid column does the same with B down the column. Every other core
// only receives. Per K block, a receiver reserves room, tells the sender it
// is ready (a semaphore increment), and waits for the "valid" semaphore the
// sender multicasts after the data. Circular buffers sit at the same L1
// address on every core and advance in step, so the sender's write pointer is
// each receiver's. 2026 dialect.
#include <cstdint>

// Reads (sender) or receives one block into `cb`.
template <class Src>
static void block(bool sender, uint32_t cb, uint32_t tiles, uint32_t ready_sem, uint32_t valid_sem,
                  uint32_t sender_x, uint32_t sender_y, uint32_t x0, uint32_t y0, uint32_t x1,
                  uint32_t y1, uint32_t receivers, const uint32_t *pages, const Src &src) {
    const uint32_t tile = get_tile_size(cb);
    volatile tt_l1_ptr uint32_t *ready =
        reinterpret_cast<volatile tt_l1_ptr uint32_t *>(get_semaphore(ready_sem));
    volatile tt_l1_ptr uint32_t *valid =
        reinterpret_cast<volatile tt_l1_ptr uint32_t *>(get_semaphore(valid_sem));
    cb_reserve_back(cb, tiles);
    const uint32_t l1 = get_write_ptr(cb);
    if (sender) {
        for (uint32_t t = 0; t < tiles; t++)
            noc_async_read_tile(pages[t], src, l1 + t * tile);
        noc_async_read_barrier();
        if (receivers) {
            noc_semaphore_wait(ready, receivers);
            noc_semaphore_set(ready, 0);
            noc_async_write_multicast(l1, get_noc_multicast_addr(x0, y0, x1, y1, l1), tiles * tile,
                                      receivers);
            *valid = 1;
            noc_semaphore_set_multicast(
                get_semaphore(valid_sem),
                get_noc_multicast_addr(x0, y0, x1, y1, get_semaphore(valid_sem)), receivers);
            noc_async_write_barrier();
        }
    } else {
        noc_semaphore_set(valid, 0);
        noc_semaphore_inc(get_noc_addr(sender_x, sender_y, get_semaphore(ready_sem)), 1);
        noc_semaphore_wait(valid, 1);
    }
    cb_push_back(cb, tiles);
}

void kernel_main() {
    const uint32_t a_addr = get_arg_val<uint32_t>(0);
    const uint32_t b_addr = get_arg_val<uint32_t>(1);
    const uint32_t x = get_arg_val<uint32_t>(2), y = get_arg_val<uint32_t>(3);
    const uint32_t gx = get_arg_val<uint32_t>(4), gy = get_arg_val<uint32_t>(5);
    constexpr uint32_t Kt = get_compile_time_arg_val(0);
    constexpr uint32_t Nt = get_compile_time_arg_val(1);
    constexpr uint32_t PM = get_compile_time_arg_val(2);
    constexpr uint32_t PN = get_compile_time_arg_val(3);
    constexpr uint32_t BW = get_compile_time_arg_val(4);
    constexpr uint32_t a_ready = get_named_compile_time_arg_val("a_ready");
    constexpr uint32_t a_valid = get_named_compile_time_arg_val("a_valid");
    constexpr uint32_t b_ready = get_named_compile_time_arg_val("b_ready");
    constexpr uint32_t b_valid = get_named_compile_time_arg_val("b_valid");
    constexpr auto a_args = TensorAccessorArgs<5>();
    constexpr auto b_args = TensorAccessorArgs<a_args.next_compile_time_args_offset()>();
    constexpr uint32_t cb_a = tt::CBIndex::c_0, cb_b = tt::CBIndex::c_1;
    const auto a = TensorAccessor(a_args, a_addr, get_tile_size(cb_a));
    const auto b = TensorAccessor(b_args, b_addr, get_tile_size(cb_b));
    const uint32_t m0 = y * PM, n0 = x * PN;

    uint32_t pages[PM * BW > BW * PN ? PM * BW : BW * PN];
    for (uint32_t kb = 0; kb < Kt / BW; kb++) {
        for (uint32_t h = 0; h < PM; h++)
            for (uint32_t k = 0; k < BW; k++)
                pages[h * BW + k] = (m0 + h) * Kt + kb * BW + k;
        block(x == 0, cb_a, PM * BW, a_ready, a_valid, 0, y, 1, y, gx - 1, y, gx - 1, pages, a);
        for (uint32_t k = 0; k < BW; k++)
            for (uint32_t w = 0; w < PN; w++)
                pages[k * PN + w] = (kb * BW + k) * Nt + n0 + w;
        block(y == 0, cb_b, BW * PN, b_ready, b_valid, x, 0, x, 1, x, gy - 1, gy - 1, pages, b);
    }
}
