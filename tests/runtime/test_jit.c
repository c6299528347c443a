/* runtime/jit: kernel builds, the two-level cache (what invalidates an entry,
 * what a warm build needs), reproducible ELFs, compiler errors, bad
 * requests. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lm_test.h"
#include "lm_test_child.h"
#include "runtime/jit.h"

#define PATH_LEN 1024

static char work[PATH_LEN];  /* absolute scratch area of this run */
static char cache[PATH_LEN]; /* the cache most tests share */

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

/* ---- file helpers ---- */

/* snprintf for paths (a helper, so no call site is a truncation warning). */
static void pathf(char *out, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void pathf(char *out, size_t size, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, size, fmt, ap);
    va_end(ap);
}

static int write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f) return 0;
    int ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

static int copy_file(const char *from, const char *to) {
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    int ok = in && out;
    char buf[4096];
    size_t n;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0)
        ok = fwrite(buf, 1, n, out) == n;
    if (in) fclose(in);
    if (out && fclose(out) != 0) ok = 0;
    return ok;
}

/* Copies the SDK the library uses (crt0, linker script, headers) to `to`. */
static int copy_sdk(const char *to) {
    char from[PATH_LEN], a[PATH_LEN], b[PATH_LEN];
    pathf(from, sizeof from, "%s", jit_sdk_dir());
    pathf(a, sizeof a, "%s/include", to);
    if (mkdir(to, 0755) != 0 || mkdir(a, 0755) != 0) return 0;
    static const char *const files[] = {"crt0.S", "link.ld"};
    for (int i = 0; i < 2; i++) {
        pathf(a, sizeof a, "%s/%s", from, files[i]);
        pathf(b, sizeof b, "%s/%s", to, files[i]);
        if (!copy_file(a, b)) return 0;
    }
    pathf(a, sizeof a, "%s/include", from);
    DIR *d = opendir(a);
    struct dirent *e;
    int ok = d != NULL;
    while (ok && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        pathf(a, sizeof a, "%s/include/%s", from, e->d_name);
        pathf(b, sizeof b, "%s/include/%s", to, e->d_name);
        ok = copy_file(a, b);
    }
    if (d) closedir(d);
    return ok;
}

static void remove_tree(const char *path) {
    DIR *d = opendir(path);
    if (!d) {
        unlink(path);
        return;
    }
    struct dirent *e;
    char sub[PATH_LEN];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        pathf(sub, sizeof sub, "%s/%s", path, e->d_name);
        remove_tree(sub);
    }
    closedir(d);
    rmdir(path);
}

/* Counts the entries of `dir` whose names end with `suffix` ("" for all). */
static int count_files(const char *dir, const char *suffix) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    struct dirent *e;
    int n = 0;
    size_t sl = strlen(suffix);
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (e->d_name[0] != '.' && l >= sl && !strcmp(e->d_name + l - sl, suffix)) n++;
    }
    closedir(d);
    return n;
}

static int contains(const void *hay, size_t n, const char *needle) {
    size_t m = strlen(needle);
    for (size_t i = 0; m && i + m <= n; i++)
        if (!memcmp((const char *)hay + i, needle, m)) return 1;
    return 0;
}

/* ---- builds and the cache ---- */

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

/* A header the kernel includes is part of the key, even an unchanged source;
 * going back to an earlier header finds the earlier build again. */
static void test_key_covers_headers(void) {
    char dir[PATH_LEN], header[PATH_LEN + 16];
    pathf(dir, sizeof dir, "%s/inc", work);
    mkdir(dir, 0700);
    pathf(header, sizeof header, "%s/value.h", dir);
    jit_request r = {.source = "#include \"value.h\"\nvolatile int x;\n"
                               "void kernel_main(void) { x = VALUE; }\n",
                     .source_name = "k.c",
                     .include_dir = dir,
                     .cache_dir = cache};
    jit_artifact a, b, c;
    CHECK(write_text(header, "#define VALUE 1\n"));
    CHECK_OK(jit_build(&r, &a));
    CHECK(write_text(header, "#define VALUE 2\n"));
    CHECK_OK(jit_build(&r, &b));
    CHECK(a.key != b.key && !b.cache_hit);
    CHECK(write_text(header, "#define VALUE 1\n"));
    CHECK_OK(jit_build(&r, &c));
    CHECK(c.cache_hit && c.key == a.key);
    CHECK(c.elf_size == a.elf_size && !memcmp(c.elf, a.elf, a.elf_size));
    free(a.elf);
    free(b.elf);
    free(c.elf);
}

/* A kernel whose asm pulls in a file (.incbin directly, or .incbin inside a
 * .include'd asm file): editing that file rebuilds, with the new bytes. */
static void test_incbin_files_are_dependencies(void) {
    char dir[PATH_LEN], data[PATH_LEN + 16], asm_file[PATH_LEN + 16], more[PATH_LEN + 16];
    pathf(dir, sizeof dir, "%s/blobs", work);
    mkdir(dir, 0700);
    pathf(data, sizeof data, "%s/data.bin", dir);
    pathf(asm_file, sizeof asm_file, "%s/more.s", dir);
    pathf(more, sizeof more, "%s/more.bin", dir);
    CHECK(write_text(data, "FIRST-BLOB-BYTES"));
    CHECK(write_text(asm_file, ".section .rodata\n.globl more\nmore: .INCBIN \"more.bin\"\n"));
    CHECK(write_text(more, "MORE-ONE"));
    jit_request r = {.source = "__asm__(\".section .rodata\\n.globl blob\\nblob: .incbin "
                               "\\\"data.bin\\\"\\n.previous\\n\");\n"
                               "__asm__(\".include \\\"more.s\\\"\\n.previous\\n\");\n"
                               "extern const char blob[16], more[8];\n"
                               "volatile const char *p, *q;\n"
                               "void kernel_main(void) { p = blob; q = more; }\n",
                     .source_name = "blob.c",
                     .include_dir = dir,
                     .cache_dir = cache};
    jit_artifact a, b, c, d;
    CHECK_OK(jit_build(&r, &a));
    CHECK(contains(a.elf, a.elf_size, "FIRST-BLOB-BYTES") &&
          contains(a.elf, a.elf_size, "MORE-ONE"));
    CHECK_OK(jit_build(&r, &b));
    CHECK(b.cache_hit);
    CHECK(write_text(data, "OTHER-BLOB-BYTES"));
    CHECK_OK(jit_build(&r, &c));
    CHECK(!c.cache_hit && c.key != a.key);
    CHECK(contains(c.elf, c.elf_size, "OTHER-BLOB-BYTES"));
    CHECK(write_text(more, "MORE-TWO"));
    CHECK_OK(jit_build(&r, &d));
    CHECK(!d.cache_hit && contains(d.elf, d.elf_size, "MORE-TWO"));
    free(a.elf);
    free(b.elf);
    free(c.elf);
    free(d.elf);
}

/* asm that reads a file in a way the scan cannot follow (a macro argument
 * as the name) is compiled every time, never served stale. */
static void test_unfollowable_asm_is_not_cached(void) {
    char dir[PATH_LEN], data[PATH_LEN + 16];
    pathf(dir, sizeof dir, "%s/macro", work);
    mkdir(dir, 0700);
    pathf(data, sizeof data, "%s/m.bin", dir);
    CHECK(write_text(data, "MACRO-ONE"));
    jit_request r = {.source = "__asm__(\".macro pull f\\n.incbin \\\"\\\\f\\\"\\n.endm\\n"
                               ".section .rodata\\n.globl blob\\nblob: pull m.bin\\n"
                               ".previous\\n\");\n"
                               "extern const char blob[9];\n"
                               "volatile const char *p;\n"
                               "void kernel_main(void) { p = blob; }\n",
                     .source_name = "macro.c",
                     .include_dir = dir,
                     .cache_dir = cache};
    jit_artifact a, b;
    CHECK_OK(jit_build(&r, &a));
    CHECK(contains(a.elf, a.elf_size, "MACRO-ONE"));
    CHECK(write_text(data, "MACRO-TWO"));
    CHECK_OK(jit_build(&r, &b));
    CHECK(!b.cache_hit && contains(b.elf, b.elf_size, "MACRO-TWO"));
    free(a.elf);
    free(b.elf);
}

/* A warm build starts no process: it works with the compiler gone, whether
 * LM_CLANG names a missing file or PATH holds no clang, or broken. */
static void test_warm_build_needs_no_compiler(void) {
    jit_request r = request("41");
    jit_artifact a, b, c;
    CHECK_OK(jit_build(&r, &a));
    const char *old_path = getenv("PATH");
    char saved_path[4096];
    pathf(saved_path, sizeof saved_path, "%s", old_path ? old_path : "");
    setenv("LM_CLANG", "/nonexistent/lightmetal/clang", 1);
    lm_status sb = jit_build(&r, &b);
    setenv("LM_CLANG", "/bin/false", 1); /* there, but not a compiler */
    jit_artifact e;
    lm_status se = jit_build(&r, &e);
    unsetenv("LM_CLANG");
    setenv("PATH", "/nonexistent/lightmetal", 1);
    lm_status sc = jit_build(&r, &c);
    jit_request cold = request("42"); /* never built: needs the compiler */
    jit_artifact d;
    lm_status sd = jit_build(&cold, &d);
    setenv("PATH", saved_path, 1);
    CHECK_OK(sb);
    CHECK_OK(sc);
    CHECK_OK(se);
    CHECK(b.cache_hit && c.cache_hit && e.cache_hit);
    CHECK(e.elf_size == a.elf_size && !memcmp(e.elf, a.elf, a.elf_size));
    free(e.elf);
    CHECK(b.elf_size == a.elf_size && !memcmp(b.elf, a.elf, a.elf_size));
    CHECK(c.elf_size == a.elf_size && !memcmp(c.elf, a.elf, a.elf_size));
    CHECK_STATUS(sd, LM_ERR_IO);
    free(a.elf);
    free(b.elf);
    free(c.elf);
}

/* A different compiler binary with the same version output reuses the
 * entries; one reporting another version builds anew. */
static void test_compiler_identity(void) {
    char same[PATH_LEN + 16], other[PATH_LEN + 16];
    pathf(same, sizeof same, "%s/clang-same", work);
    pathf(other, sizeof other, "%s/clang-other", work);
    CHECK(write_text(same, "#!/bin/sh\nexec clang \"$@\"\n"));
    CHECK(write_text(other, "#!/bin/sh\n"
                            "if [ \"$1\" = --version ]; then echo 'another clang 99'; exit 0; fi\n"
                            "exec clang \"$@\"\n"));
    CHECK(chmod(same, 0755) == 0 && chmod(other, 0755) == 0);
    jit_request r = request("43");
    jit_artifact a, b, c, d;
    CHECK_OK(jit_build(&r, &a));
    setenv("LM_CLANG", same, 1);
    lm_status sb = jit_build(&r, &b);
    setenv("LM_CLANG", other, 1);
    lm_status sc = jit_build(&r, &c);
    lm_status sd = jit_build(&r, &d);
    unsetenv("LM_CLANG");
    CHECK_OK(sb);
    CHECK_OK(sc);
    CHECK_OK(sd);
    CHECK(b.cache_hit && b.key == a.key);
    CHECK(!c.cache_hit && c.key != a.key);
    CHECK(d.cache_hit && d.key == c.key);
    CHECK(c.elf_size == a.elf_size && !memcmp(c.elf, a.elf, a.elf_size)); /* same clang inside */
    free(a.elf);
    free(b.elf);
    free(c.elf);
    free(d.elf);
}

/* A damaged cache is rebuilt, never used: a truncated ELF, a garbage
 * manifest. */
static void test_damaged_cache_is_rebuilt(void) {
    char dir[PATH_LEN + 16], path[2 * PATH_LEN];
    pathf(dir, sizeof dir, "%s/damaged", work);
    jit_request r = request("44");
    r.cache_dir = dir;
    jit_artifact a, b, c;
    CHECK_OK(jit_build(&r, &a));
    pathf(path, sizeof path, "%s/%016llx.elf", dir, (unsigned long long)a.key);
    CHECK(write_text(path, "\x7f"
                           "ELF"));
    CHECK_OK(jit_build(&r, &b));
    CHECK(!b.cache_hit && b.elf_size == a.elf_size && !memcmp(b.elf, a.elf, a.elf_size));
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!strstr(e->d_name, ".manifest")) continue;
        pathf(path, sizeof path, "%s/%s", dir, e->d_name);
        CHECK(write_text(path, "lightmetal-kernel-manifest 1\nentry zz\n"));
    }
    if (d) closedir(d);
    CHECK_OK(jit_build(&r, &c));
    CHECK(!c.cache_hit && c.elf_size == a.elf_size && !memcmp(c.elf, a.elf, a.elf_size));
    free(a.elf);
    free(b.elf);
    free(c.elf);
}

/* ---- reproducible builds ---- */

static int compare_names(const void *a, const void *b) {
    return strcmp(a, b);
}

typedef struct repro_ctx {
    const char *cwd, *sdk, *cache, *inc, *source_name, *elf_out;
} repro_ctx;

typedef struct repro_result {
    uint64_t key;
    int cache_hit;
} repro_result;

/* In a child: build from another working directory and SDK copy, save the
 * ELF. */
static int repro_build(void *p, void *out) {
    const repro_ctx *x = p;
    if (chdir(x->cwd) != 0) return 0;
    setenv("LM_KERNEL_SDK_DIR", x->sdk, 1);
    jit_request r = {.source = "#include \"dataflow_api.h\"\n#include \"value.h\"\n"
                               "static const char where[] = __FILE__;\n"
                               "void kernel_main(void) {\n"
                               "    DPRINT(\"%s %u\", where, VALUE + get_arg_val(0));\n}\n",
                     .source_name = x->source_name,
                     .include_dir = x->inc,
                     .defines = (jit_define[]){{"LM_PROCESSOR", "0"}},
                     .define_count = 1,
                     .cache_dir = x->cache};
    jit_artifact a;
    if (jit_build(&r, &a) != LM_OK) {
        printf("  child build failed: %s\n", lm_last_error());
        return 0;
    }
    FILE *f = fopen(x->elf_out, "wb");
    int ok = f && fwrite(a.elf, 1, a.elf_size, f) == a.elf_size;
    if (f && fclose(f) != 0) ok = 0;
    *(repro_result *)out = (repro_result){a.key, a.cache_hit};
    free(a.elf);
    return ok;
}

/* The same kernel built in two processes, from two checkouts (SDK copies and
 * kernel directories at different paths), two working directories and two
 * empty caches: the same ELF bytes, the same cache names, and no trace of a
 * path, a scratch name or a process in the ELF. */
static void test_reproducible_across_checkouts(void) {
    char root[PATH_LEN + 16], d[2][PATH_LEN + 64], sdk[2][PATH_LEN + 64], inc[2][PATH_LEN + 64];
    char caches[2][PATH_LEN + 64], elf[2][PATH_LEN + 64], name[2][PATH_LEN + 64];
    pathf(root, sizeof root, "%s/repro", work);
    CHECK(mkdir(root, 0755) == 0);
    for (int i = 0; i < 2; i++) {
        pathf(d[i], sizeof d[i], "%s/%s", root, i ? "second-checkout-with-a-longer-name" : "one");
        pathf(sdk[i], sizeof sdk[i], "%s/kernel-sdk", d[i]);
        pathf(inc[i], sizeof inc[i], "%s/kernels", d[i]);
        pathf(caches[i], sizeof caches[i], "%s/cache", d[i]);
        pathf(elf[i], sizeof elf[i], "%s/out.elf", root);
        elf[i][strlen(elf[i]) - 5] = (char)('0' + i);
        CHECK(mkdir(d[i], 0755) == 0 && mkdir(inc[i], 0755) == 0);
        CHECK(copy_sdk(sdk[i]));
        char header[PATH_LEN + 128];
        pathf(header, sizeof header, "%s/value.h", inc[i]);
        CHECK(write_text(header, "#define VALUE 5\n"));
    }
    /* One names the kernel by an absolute path, the other by a relative one. */
    pathf(name[0], sizeof name[0], "%s/reader.c", inc[0]);
    pathf(name[1], sizeof name[1], "kernels/reader.c");
    repro_result res[2];
    for (int i = 0; i < 2; i++) {
        repro_ctx x = {d[i], sdk[i], caches[i], i ? "kernels" : inc[i], name[i], elf[i]};
        CHECK(test_in_child(repro_build, &x, &res[i], sizeof res[i]));
        CHECK(!res[i].cache_hit);
    }
    CHECK(res[0].key == res[1].key);
    void *bytes[2] = {NULL, NULL};
    long size[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        FILE *f = fopen(elf[i], "rb");
        CHECK(f);
        fseek(f, 0, SEEK_END);
        size[i] = ftell(f);
        rewind(f);
        bytes[i] = malloc((size_t)size[i]);
        CHECK(bytes[i] && fread(bytes[i], 1, (size_t)size[i], f) == (size_t)size[i]);
        fclose(f);
    }
    CHECK(size[0] == size[1] && !memcmp(bytes[0], bytes[1], (size_t)size[0]));
    CHECK(contains(bytes[0], (size_t)size[0], "reader.c")); /* __FILE__: the bare name */
    const char *absent[] = {root, "kernels/", "tmp-", "kernel-sdk", "one/", "checkout"};
    for (size_t i = 0; i < sizeof absent / sizeof absent[0]; i++)
        CHECK(!contains(bytes[0], (size_t)size[0], absent[i]));
    /* Both caches hold the same names: the keys carry no path. */
    char listing[2][4096];
    for (int i = 0; i < 2; i++) {
        listing[i][0] = '\0';
        DIR *dir = opendir(caches[i]);
        CHECK(dir);
        struct dirent *e;
        char names[16][64];
        int n = 0;
        while ((e = readdir(dir)) && n < 16)
            if (e->d_name[0] != '.') pathf(names[n++], sizeof names[0], "%s", e->d_name);
        closedir(dir);
        qsort(names, (size_t)n, sizeof names[0], compare_names);
        for (int k = 0; k < n; k++)
            strcat(strcat(listing[i], names[k]), " ");
    }
    CHECK(!strcmp(listing[0], listing[1]));
    CHECK(count_files(caches[0], ".elf") == 1 && count_files(caches[0], ".manifest") == 1);
    free(bytes[0]);
    free(bytes[1]);
}

/* A warm manifest written from one checkout is used by another (same bytes,
 * no compile); the other checkout's own header decides, not the first's. */
static void test_cache_shared_between_checkouts(void) {
    char root[PATH_LEN + 16], sdk[2][PATH_LEN + 64], inc[2][PATH_LEN + 64], shared[PATH_LEN + 32];
    pathf(root, sizeof root, "%s/shared", work);
    pathf(shared, sizeof shared, "%s/cache", root);
    CHECK(mkdir(root, 0755) == 0);
    for (int i = 0; i < 2; i++) {
        char d[PATH_LEN + 48], header[PATH_LEN + 96];
        pathf(d, sizeof d, "%s/c%d", root, i);
        pathf(sdk[i], sizeof sdk[i], "%s/sdk", d);
        pathf(inc[i], sizeof inc[i], "%s/k", d);
        CHECK(mkdir(d, 0755) == 0 && mkdir(inc[i], 0755) == 0 && copy_sdk(sdk[i]));
        pathf(header, sizeof header, "%s/value.h", inc[i]);
        CHECK(write_text(header, "#define VALUE 9\n"));
    }
    jit_request r = {.source = "#include \"value.h\"\nvolatile int x;\n"
                               "void kernel_main(void) { x = VALUE; }\n",
                     .source_name = "v.c",
                     .cache_dir = shared};
    jit_artifact a, b, c;
    setenv("LM_KERNEL_SDK_DIR", sdk[0], 1);
    r.include_dir = inc[0];
    lm_status sa = jit_build(&r, &a);
    setenv("LM_KERNEL_SDK_DIR", sdk[1], 1);
    r.include_dir = inc[1];
    lm_status sb = jit_build(&r, &b);
    char header[PATH_LEN + 96];
    pathf(header, sizeof header, "%s/value.h", inc[1]);
    int edited = write_text(header, "#define VALUE 10\n");
    lm_status sc = jit_build(&r, &c);
    unsetenv("LM_KERNEL_SDK_DIR");
    CHECK_OK(sa);
    CHECK_OK(sb);
    CHECK_OK(sc);
    CHECK(edited);
    CHECK(!a.cache_hit && b.cache_hit && b.key == a.key);
    CHECK(!c.cache_hit && c.key != a.key);
    free(a.elf);
    free(b.elf);
    free(c.elf);
}

typedef struct race_ctx {
    const char *cache;
} race_ctx;

static int race_build(void *p, void *out) {
    jit_request r = request("45");
    r.cache_dir = ((race_ctx *)p)->cache;
    jit_artifact a;
    if (jit_build(&r, &a) != LM_OK) return 0;
    *(uint64_t *)out = a.key;
    free(a.elf);
    return 1;
}

/* Processes building the same kernel into one cache at once all succeed,
 * agree, and leave one entry and no scratch behind. */
static void test_concurrent_processes(void) {
    char dir[PATH_LEN + 16];
    pathf(dir, sizeof dir, "%s/race", work);
    race_ctx x = {dir};
    enum { N = 3 };
    int fds[N];
    pid_t pids[N];
    for (int i = 0; i < N; i++) {
        int p[2];
        CHECK(pipe(p) == 0);
        pids[i] = fork();
        CHECK(pids[i] >= 0);
        if (pids[i] == 0) {
            close(p[0]);
            uint64_t key = 0;
            int ok = race_build(&x, &key) && write(p[1], &key, sizeof key) == sizeof key;
            _exit(ok ? 0 : 1);
        }
        close(p[1]);
        fds[i] = p[0];
    }
    uint64_t keys[N] = {0};
    int ok = 1;
    for (int i = 0; i < N; i++) {
        int status;
        ok &= read(fds[i], &keys[i], sizeof keys[i]) == sizeof keys[i];
        close(fds[i]);
        waitpid(pids[i], &status, 0);
        ok &= WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    CHECK(ok);
    CHECK(keys[0] == keys[1] && keys[1] == keys[2]);
    CHECK(count_files(dir, ".elf") == 1 && count_files(dir, ".manifest") == 1);
    CHECK(count_files(dir, "") == 2);
}

/* ---- errors ---- */

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
    CHECK_ERROR_HAS("cannot run the kernel compiler 'lightmetal-no-such-compiler': not found on "
                    "PATH");
}

static void test_missing_sdk(void) {
    setenv("LM_KERNEL_SDK_DIR", "/nonexistent/lightmetal-sdk", 1);
    jit_request r = request("1");
    jit_artifact a;
    lm_status st = jit_build(&r, &a);
    unsetenv("LM_KERNEL_SDK_DIR");
    CHECK_STATUS(st, LM_ERR_IO);
    CHECK_ERROR_HAS("kernel SDK '/nonexistent/lightmetal-sdk' not found (set LM_KERNEL_SDK_DIR)");
}

static void test_sdk_dir_lookup(void) {
    setenv("LM_KERNEL_SDK_DIR", "/some/sdk", 1);
    CHECK(!strcmp(jit_sdk_dir(), "/some/sdk"));
    setenv("LM_KERNEL_SDK_DIR", "", 1); /* empty counts as unset */
    CHECK(strcmp(jit_sdk_dir(), "") != 0);
    unsetenv("LM_KERNEL_SDK_DIR");
    char include[PATH_LEN];
    pathf(include, sizeof include, "%s/include/dataflow_api.h", jit_sdk_dir());
    CHECK(access(include, R_OK) == 0);
}

static void test_unwritable_cache(void) {
    jit_request r = request("1");
    r.cache_dir = "/proc/lightmetal-cache";
    jit_artifact a;
    CHECK_FAILS(jit_build(&r, &a), LM_ERR_IO, "cannot create kernel cache directory");
}

/* Scratch directories a killed build left (over an hour old) are swept by
 * the next build that compiles; recent ones (a build running now) stay. */
static void test_stale_scratch_swept(void) {
    char stale[PATH_LEN + 32], fresh[PATH_LEN + 32], file[PATH_LEN + 64];
    pathf(stale, sizeof stale, "%s/tmp-killed", cache);
    pathf(fresh, sizeof fresh, "%s/tmp-running", cache);
    pathf(file, sizeof file, "%s/kernel.c", stale);
    CHECK(mkdir(stale, 0700) == 0 && mkdir(fresh, 0700) == 0);
    CHECK(write_text(file, "void kernel_main(void) {}\n"));
    struct timespec old[2] = {{.tv_sec = time(NULL) - 7200}, {.tv_sec = time(NULL) - 7200}};
    CHECK(utimensat(AT_FDCWD, stale, old, 0) == 0);
    jit_request r = request("46");
    jit_artifact a;
    CHECK_OK(jit_build(&r, &a));
    free(a.elf);
    CHECK(access(stale, F_OK) != 0);
    CHECK(access(fresh, F_OK) == 0);
    CHECK(rmdir(fresh) == 0);
}

/* Only entries remain: scratch directories are always cleaned up. */
static void test_no_scratch_left(void) {
    int all = count_files(cache, "");
    CHECK(all > 0);
    CHECK(all == count_files(cache, ".elf") + count_files(cache, ".manifest"));
}

int main(void) {
    char cwd[PATH_LEN / 2];
    if (!getcwd(cwd, sizeof cwd)) return 1;
    pathf(work, sizeof work, "%s/test_jit_work_%d", cwd, (int)getpid());
    pathf(cache, sizeof cache, "%s/cache", work);
    unsetenv("LM_KERNEL_SDK_DIR");
    unsetenv("LM_CLANG");
    if (mkdir(work, 0700) != 0) return 1;
    TEST_RUN(test_build_then_cache_hit);
    TEST_RUN(test_key_covers_inputs);
    TEST_RUN(test_key_covers_headers);
    TEST_RUN(test_incbin_files_are_dependencies);
    TEST_RUN(test_unfollowable_asm_is_not_cached);
    TEST_RUN(test_warm_build_needs_no_compiler);
    TEST_RUN(test_compiler_identity);
    TEST_RUN(test_damaged_cache_is_rebuilt);
    TEST_RUN(test_reproducible_across_checkouts);
    TEST_RUN(test_cache_shared_between_checkouts);
    TEST_RUN(test_concurrent_processes);
    TEST_RUN(test_compile_error_has_compiler_messages);
    TEST_RUN(test_bad_requests);
    TEST_RUN(test_missing_compiler);
    TEST_RUN(test_missing_sdk);
    TEST_RUN(test_sdk_dir_lookup);
    TEST_RUN(test_unwritable_cache);
    TEST_RUN(test_stale_scratch_swept);
    TEST_RUN(test_no_scratch_left);
    remove_tree(work);
    return test_summary();
}
