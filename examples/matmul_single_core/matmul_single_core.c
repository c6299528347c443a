/* matmul_single_core: C = A x B, 256x256x256 in bfloat16 with float32
 * accumulation, on one core (reader/writer, weights and compute kernels from
 * examples/common). Tolerance: see common/matmul_check.h. Prints PASS or FAIL. */
#include "../common/matmul_check.h"

int main(int argc, char **argv) {
    int outside = ex_matmul_check(256, 256, 256, 1, 1, ex_capture_path(argc, argv));
    printf("%s\n", outside == 0 ? "PASS" : "FAIL");
    return outside != 0;
}
