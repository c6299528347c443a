/* Reproducible captures: the same workload captured in two processes, each
 * with an empty kernel cache, its own working directory, its own copy of the
 * kernel SDK and of the kernel's directory (named by an absolute path in one,
 * a relative one in the other), gives byte-identical Light Metal binaries. */
#include <dirent.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lightmetal/lightmetal.h"
#include "lm_test.h"
#include "lm_test_child.h"
#include "runtime/jit.h"

#define PATH_LEN 1024
enum { WORDS = 1024 };

static const char *kernel_src = "#include \"dataflow_api.h\"\n"
                                "#include \"scale.h\"\n"
                                "void kernel_main(void) {\n"
                                "    InterleavedAddrGenFast in = {.bank_base_address = "
                                "get_arg_val(0), .page_size = 1024, .is_dram = true};\n"
                                "    InterleavedAddrGenFast out = {.bank_base_address = "
                                "get_arg_val(1), .page_size = 1024, .is_dram = true};\n"
                                "    uint32_t page = my_y() * 2 + my_x(), l1 = 0x20000;\n"
                                "    noc_async_read_page(page, &in, l1);\n"
                                "    noc_async_read_barrier();\n"
                                "    volatile uint32_t *w = (volatile uint32_t *)l1;\n"
                                "    for (int i = 0; i < 256; i++) w[i] = w[i] * SCALE + 1u;\n"
                                "    noc_async_write_page(page, &out, l1);\n"
                                "    noc_async_write_barrier();\n"
                                "}\n";

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

static int copy_sdk(const char *from, const char *to) {
    char a[PATH_LEN], b[PATH_LEN];
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

typedef struct checkout {
    char dir[PATH_LEN], sdk[PATH_LEN], kernel[PATH_LEN], lmb[PATH_LEN];
} checkout;

/* In a child: capture the workload from this checkout, save the binary. */
static int capture_in(void *p, void *out) {
    const checkout *c = p;
    char cache[PATH_LEN];
    pathf(cache, sizeof cache, "%s/cache", c->dir);
    if (chdir(c->dir) != 0) return 0;
    setenv("LM_KERNEL_SDK_DIR", c->sdk, 1);
    setenv("LM_CACHE_DIR", cache, 1);
    lm_device_options o;
    lm_device_options_init(&o);
    o.grid_x = 2;
    o.grid_y = 2;
    o.dram_banks = 2;
    o.dram_bank_size = 16 << 20;
    lm_device *dev;
    if (lm_device_open(&o, &dev)) return 0;
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_capture_options co;
    lm_capture_options_init(&co);
    co.include_kernel_sources = true;
    lm_buffer_config bc;
    lm_buffer_config_init(&bc);
    bc.size = WORDS * 4;
    bc.page_size = 1024;
    lm_buffer in, outb;
    uint32_t words[WORDS];
    for (int i = 0; i < WORDS; i++)
        words[i] = (uint32_t)i * 2654435761u;
    lm_program prog;
    lm_kernel k;
    lm_kernel_config kc;
    lm_kernel_config_init(&kc, LM_PROCESSOR_DM0);
    lm_core_range_set all = lm_core_range_set_of(0, 0, 1, 1);
    uint64_t ia = 0, oa = 0;
    lm_binary *bin = NULL;
    lm_status st = lm_light_metal_begin_capture(dev, &co);
    if (!st) st = lm_create_buffer(dev, &bc, &in);
    if (!st) st = lm_create_buffer(dev, &bc, &outb);
    if (!st) st = lm_enqueue_write_buffer(cq, in, words, true);
    if (!st) st = lm_buffer_address(in, &ia);
    if (!st) st = lm_buffer_address(outb, &oa);
    if (!st) st = lm_create_program(dev, &prog);
    if (!st) st = lm_create_kernel(prog, c->kernel, &all, &kc, &k);
    uint32_t args[2] = {(uint32_t)ia, (uint32_t)oa};
    for (uint32_t i = 0; !st && i < 4; i++)
        st = lm_set_runtime_args(prog, k, (lm_core){i % 2, i / 2}, args, 2);
    if (!st) st = lm_enqueue_program(cq, prog, true);
    if (!st) st = lm_capture_name_buffer(outb, "out");
    if (!st) st = lm_capture_compare_to_capture(cq, outb);
    if (!st) st = lm_light_metal_end_capture(dev, &bin);
    if (!st) st = lm_binary_save(bin, c->lmb);
    if (st) printf("  child: %s\n", lm_last_error());
    lm_binary_free(bin);
    lm_device_close(dev);
    *(int *)out = 1;
    return st == LM_OK;
}

static long read_all(const char *path, char **out) {
    FILE *f = fopen(path, "rb");
    long n = -1;
    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
        *out = malloc((size_t)n);
        if (!*out || fread(*out, 1, (size_t)n, f) != (size_t)n) n = -1;
    }
    if (f) fclose(f);
    return n;
}

static void test_capture_reproducible(void) {
    char cwd[PATH_LEN / 2], root[PATH_LEN], sdk[PATH_LEN];
    CHECK(getcwd(cwd, sizeof cwd));
    pathf(root, sizeof root, "%s/test_capture_repro_%d", cwd, (int)getpid());
    pathf(sdk, sizeof sdk, "%s", jit_sdk_dir());
    CHECK(mkdir(root, 0755) == 0);
    checkout co[2];
    for (int i = 0; i < 2; i++) {
        checkout *c = &co[i];
        char kdir[PATH_LEN], file[PATH_LEN];
        pathf(file, sizeof file, "%s/second", root);
        if (i) CHECK(mkdir(file, 0755) == 0);
        pathf(c->dir, sizeof c->dir, "%s/%s", root, i ? "second/nested-checkout" : "one");
        CHECK(mkdir(c->dir, 0755) == 0);
        pathf(c->sdk, sizeof c->sdk, "%s/sdk", c->dir);
        CHECK(copy_sdk(sdk, c->sdk));
        pathf(kdir, sizeof kdir, "%s/kernels", c->dir);
        CHECK(mkdir(kdir, 0755) == 0);
        pathf(file, sizeof file, "%s/scale.c", kdir);
        CHECK(write_text(file, kernel_src));
        pathf(file, sizeof file, "%s/scale.h", kdir);
        CHECK(write_text(file, "#define SCALE 5u\n"));
        if (i)
            pathf(c->kernel, sizeof c->kernel, "kernels/scale.c");
        else
            pathf(c->kernel, sizeof c->kernel, "%s/scale.c", kdir);
        pathf(c->lmb, sizeof c->lmb, "%s/%d.lmb", root, i);
        int done = 0;
        CHECK(test_in_child(capture_in, c, &done, sizeof done));
    }
    char *bytes[2] = {NULL, NULL};
    long size[2] = {read_all(co[0].lmb, &bytes[0]), read_all(co[1].lmb, &bytes[1])};
    CHECK(size[0] > 0 && size[0] == size[1]);
    CHECK(memcmp(bytes[0], bytes[1], (size_t)size[0]) == 0);
    free(bytes[0]);
    free(bytes[1]);
    char cmd[PATH_LEN + 16];
    pathf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK(system(cmd) == 0);
}

int main(void) {
    unsetenv("LM_KERNEL_SDK_DIR");
    TEST_RUN(test_capture_reproducible);
    return test_summary();
}
