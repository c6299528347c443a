/* runtime/jit: kernel builds, the cache, compiler errors, bad requests. */
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lm_test.h"
#include "runtime/jit.h"

static char cache[256];

static const char *kernel_src = "#include <stdint.h>\n"
                                "volatile uint32_t out[4];\n"
                                "void kernel_main(void) { out[0] = VALUE; }\n";

static jit_request request(const char *value) {
    static jit_define defs[1];
    defs[0] = (jit_define){"VALUE", value};
    return (jit_request){
        .source = kernel_src,
        .source_name = "kernels/simple.c",
        .defines = defs,
        .define_count = 1,
        .cache_dir = cache,
    };
}

static void test_build_then_cache_hit(void) {
    jit_request r = request("7");
    jit_artifact a, b;
    CHECK_OK(jit_build(&r, &a));
    CHECK(a.elf_size > 52 && memcmp(a.elf,
                                    "\x7f"
                                    "ELF",
                                    4) == 0);
    CHECK(((uint8_t *)a.elf)[4] == 1);    /* ELFCLASS32 */
    CHECK(((uint8_t *)a.elf)[18] == 243); /* EM_RISCV */
    CHECK(!a.cache_hit);
    CHECK_OK(jit_build(&r, &b));
    CHECK(b.cache_hit);
    CHECK(a.key == b.key && a.elf_size == b.elf_size && memcmp(a.elf, b.elf, a.elf_size) == 0);
    free(a.elf);
    free(b.elf);
}

/* Anything that changes the output changes the key. */
static void test_key_covers_inputs(void) {
    jit_request r = request("7");
    jit_artifact base, other;
    CHECK_OK(jit_build(&r, &base));
    r = request("8");
    CHECK_OK(jit_build(&r, &other));
    CHECK(other.key != base.key);
    free(other.elf);
    r = request("7");
    uint32_t args[] = {1, 2};
    r.compile_args = args;
    r.compile_arg_count = 2;
    CHECK_OK(jit_build(&r, &other));
    CHECK(other.key != base.key);
    free(other.elf);
    free(base.elf);
}

/* A header the kernel includes is part of the key, even an unchanged source. */
static void test_key_covers_headers(void) {
    char dir[300], header[320];
    snprintf(dir, sizeof dir, "%s/inc", cache);
    mkdir(dir, 0700);
    snprintf(header, sizeof header, "%s/value.h", dir);
    jit_request r = {.source = "#include \"value.h\"\nvolatile int x;\n"
                               "void kernel_main(void) { x = VALUE; }\n",
                     .source_name = "k.c",
                     .include_dir = dir,
                     .cache_dir = cache};
    jit_artifact a, b;
    FILE *f = fopen(header, "w");
    CHECK(f);
    fputs("#define VALUE 1\n", f);
    fclose(f);
    CHECK_OK(jit_build(&r, &a));
    f = fopen(header, "w");
    CHECK(f);
    fputs("#define VALUE 2\n", f);
    fclose(f);
    CHECK_OK(jit_build(&r, &b));
    CHECK(a.key != b.key && !b.cache_hit);
    free(a.elf);
    free(b.elf);
    unlink(header);
    rmdir(dir);
}

static void test_compile_error_has_compiler_messages(void) {
    jit_request r = {.source = "void kernel_main(void) { undeclared_thing = 1; }\n",
                     .source_name = "kernels/broken.c",
                     .cache_dir = cache};
    jit_artifact a = {0};
    CHECK_FAILS(jit_build(&r, &a), LM_ERR_COMPILE,
                "kernel 'kernels/broken.c' failed to compile:\nkernels/broken.c:1:");
    CHECK_ERROR_HAS("undeclared_thing");
    CHECK(a.elf == NULL);
    r.source = "void not_the_entry(void) {}\n"; /* link error: no kernel_main */
    CHECK_FAILS(jit_build(&r, &a), LM_ERR_COMPILE, "kernel_main");
}

static void test_bad_requests(void) {
    jit_artifact a;
    jit_request r = request("1");
    r.source = NULL;
    CHECK_FAILS(jit_build(&r, &a), LM_ERR_INVALID_ARGUMENT, "kernel source is NULL");
    jit_define bad[] = {{"1abc", "x"}};
    r = request("1");
    r.defines = bad;
    CHECK_FAILS(jit_build(&r, &a), LM_ERR_INVALID_ARGUMENT, "'1abc' is not a C identifier");
    jit_define nl[] = {{"X", "1\n#include <evil>"}};
    r.defines = nl;
    CHECK_FAILS(jit_build(&r, &a), LM_ERR_INVALID_ARGUMENT, "value contains a line break");
    r = request("1");
    r.defines = NULL;
    CHECK_FAILS(jit_build(&r, &a), LM_ERR_INVALID_ARGUMENT, "defines is NULL");
    r = request("1");
    r.compile_arg_count = 3;
    CHECK_FAILS(jit_build(&r, &a), LM_ERR_INVALID_ARGUMENT, "compile_args is NULL");
    CHECK_FAILS(jit_build(NULL, &a), LM_ERR_INVALID_ARGUMENT, "NULL argument");
}

static void test_missing_compiler(void) {
    setenv("LM_CLANG", "lightmetal-no-such-compiler", 1);
    jit_request r = request("1");
    jit_artifact a;
    lm_status st = jit_build(&r, &a);
    unsetenv("LM_CLANG");
    CHECK_STATUS(st, LM_ERR_IO);
    CHECK_ERROR_HAS("cannot run the kernel compiler 'lightmetal-no-such-compiler'");
}

static void test_unwritable_cache(void) {
    jit_request r = request("1");
    r.cache_dir = "/proc/lightmetal-cache";
    jit_artifact a;
    CHECK_FAILS(jit_build(&r, &a), LM_ERR_IO, "cannot create kernel cache directory");
}

/* Only the .elf entries remain: scratch files are always cleaned up. */
static void test_no_scratch_left(void) {
    DIR *d = opendir(cache);
    CHECK(d);
    struct dirent *e;
    int stray = 0;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.' && !strstr(e->d_name, ".elf")) stray++;
    closedir(d);
    CHECK(stray == 0);
}

static void remove_cache(void) {
    DIR *d = opendir(cache);
    struct dirent *e;
    char path[600];
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", cache, e->d_name);
        unlink(path);
    }
    if (d) closedir(d);
    rmdir(cache);
}

int main(void) {
    snprintf(cache, sizeof cache, "test_jit_cache_%d", (int)getpid());
    TEST_RUN(test_build_then_cache_hit);
    TEST_RUN(test_key_covers_inputs);
    TEST_RUN(test_key_covers_headers);
    TEST_RUN(test_compile_error_has_compiler_messages);
    TEST_RUN(test_bad_requests);
    TEST_RUN(test_missing_compiler);
    TEST_RUN(test_unwritable_cache);
    TEST_RUN(test_no_scratch_left);
    remove_cache();
    return test_summary();
}
