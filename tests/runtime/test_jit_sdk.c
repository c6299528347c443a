/* Where the kernel build finds the SDK (jit_sdk_dir), with the JIT compiled
 * as the library is, its places pointed at directories the test creates and
 * removes: the source tree's SDK (LM_KERNEL_SDK_DIR), the one under the
 * configured prefix (LM_KERNEL_SDK_INSTALL_DIR), and the one relative to the
 * program holding the code (LM_KERNEL_SDK_FROM_BINDIR, from this test's
 * directory) -- the test runs inside the build tree (LM_BUILD_TREE_DIR). */
#include <sys/stat.h>
#include <unistd.h>

#include "lm_test.h"
#include "runtime/jit.h"

static char relative_sdk[4096];

static void remove_all(void) {
    rmdir(LM_KERNEL_SDK_DIR);
    rmdir(LM_KERNEL_SDK_INSTALL_DIR);
    rmdir(relative_sdk);
}

static void test_lookup_order(void) {
    unsetenv("LM_KERNEL_SDK_DIR");
    remove_all();
    /* None there: the source tree's, to name in the error. */
    CHECK(!strcmp(jit_sdk_dir(), LM_KERNEL_SDK_DIR));
    /* A program of the build tree without its source tree: the configured
     * prefix's. */
    CHECK(mkdir(LM_KERNEL_SDK_INSTALL_DIR, 0755) == 0);
    CHECK(!strcmp(jit_sdk_dir(), LM_KERNEL_SDK_INSTALL_DIR));
    /* The source tree's is preferred by a program of the build tree. */
    CHECK(mkdir(LM_KERNEL_SDK_DIR, 0755) == 0);
    CHECK(!strcmp(jit_sdk_dir(), LM_KERNEL_SDK_DIR));
    /* The SDK next to the program (as in an install) before both. */
    CHECK(mkdir(relative_sdk, 0755) == 0);
    CHECK(!strcmp(jit_sdk_dir(), relative_sdk));
    /* The environment wins over all; empty counts as unset. */
    setenv("LM_KERNEL_SDK_DIR", "/elsewhere/sdk", 1);
    CHECK(!strcmp(jit_sdk_dir(), "/elsewhere/sdk"));
    setenv("LM_KERNEL_SDK_DIR", "", 1);
    CHECK(!strcmp(jit_sdk_dir(), relative_sdk));
    unsetenv("LM_KERNEL_SDK_DIR");
    /* The places searched, for the message when none is there. */
    char where[3 * 4096];
    jit_sdk_searched(where, sizeof where);
    CHECK(strstr(where, relative_sdk));
    CHECK(strstr(where, "/test_jit_sdk'), "));
    CHECK(strstr(where, LM_KERNEL_SDK_INSTALL_DIR "' (the prefix configured at build time)"));
    CHECK(strstr(where, "and '" LM_KERNEL_SDK_DIR "'"));
    remove_all();
    CHECK(!strcmp(jit_sdk_dir(), LM_KERNEL_SDK_DIR));
}

int main(void) {
    /* Where the program is: jit_sdk.c finds it in /proc/self/exe too. */
    char exe[2048];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 1;
    exe[n] = '\0';
    *strrchr(exe, '/') = '\0'; /* its directory, then ".." of LM_KERNEL_SDK_FROM_BINDIR */
    *strrchr(exe, '/') = '\0';
    snprintf(relative_sdk, sizeof relative_sdk, "%s/test_jit_sdk_relative", exe);
    TEST_RUN(test_lookup_order);
    return test_summary();
}
