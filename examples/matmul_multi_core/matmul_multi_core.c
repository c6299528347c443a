/* matmul_multi_core: C = A x B, 512x512x512 in bfloat16 with float32
 * accumulation, output tiles split over the 8x8 grid. Each grid column's
 * block of B is read once and multicast down the column; each A tile is
 * reused for all output tiles of its row. Tolerance: see
 * common/matmul_check.h. Prints PASS or FAIL. */
#include "../common/matmul_check.h"

int main(int argc, char **argv) {
    int outside = ex_matmul_check(512, 512, 512, 8, 8, ex_capture_path(argc, argv));
    printf("%s\n", outside == 0 ? "PASS" : "FAIL");
    return outside != 0;
}
