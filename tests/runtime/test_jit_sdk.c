/* Where the kernel build finds the SDK (jit_sdk_dir), with the JIT compiled
 * as an installed library is: both LM_KERNEL_SDK_DIR (the source tree) and
 * LM_KERNEL_SDK_INSTALL_DIR (the installed SDK) defined. */
#include <sys/stat.h>
#include <unistd.h>

#include "lm_test.h"
#include "runtime/jit.h"

static void test_lookup_order(void) {
    unsetenv("LM_KERNEL_SDK_DIR");
    rmdir(LM_KERNEL_SDK_INSTALL_DIR);
    /* No installed SDK (yet): the source tree's. */
    CHECK(!strcmp(jit_sdk_dir(), LM_KERNEL_SDK_DIR));
    CHECK(mkdir(LM_KERNEL_SDK_INSTALL_DIR, 0755) == 0);
    CHECK(!strcmp(jit_sdk_dir(), LM_KERNEL_SDK_INSTALL_DIR));
    /* The environment wins over both; empty counts as unset. */
    setenv("LM_KERNEL_SDK_DIR", "/elsewhere/sdk", 1);
    CHECK(!strcmp(jit_sdk_dir(), "/elsewhere/sdk"));
    setenv("LM_KERNEL_SDK_DIR", "", 1);
    CHECK(!strcmp(jit_sdk_dir(), LM_KERNEL_SDK_INSTALL_DIR));
    unsetenv("LM_KERNEL_SDK_DIR");
    CHECK(rmdir(LM_KERNEL_SDK_INSTALL_DIR) == 0);
    CHECK(!strcmp(jit_sdk_dir(), LM_KERNEL_SDK_DIR));
}

int main(void) {
    TEST_RUN(test_lookup_order);
    return test_summary();
}
