/* lm_create_kernel_from_elf: a prebuilt kernel (from our own build, built
 * by hand, or by another toolchain) runs and is captured like a compiled
 * one; hostile ELFs are refused with the field that is wrong named. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lightmetal/lightmetal.h"
#include "lm_test.h"
#include "runtime/program.h"

extern char **environ;

enum { WORDS = 1024 };

/* out[i] = in[i] * 5 + 1, one 1 KiB page per core of a 2x2 grid. */
static const char *scale_src = "#include \"dataflow_api.h\"\n"
                               "void kernel_main(void) {\n"
                               "    InterleavedAddrGenFast in = {.bank_base_address = "
                               "get_arg_val(0), .page_size = 1024, .is_dram = true};\n"
                               "    InterleavedAddrGenFast out = {.bank_base_address = "
                               "get_arg_val(1), .page_size = 1024, .is_dram = true};\n"
                               "    uint32_t page = my_y() * 2 + my_x(), l1 = 0x20000;\n"
                               "    noc_async_read_page(page, &in, l1);\n"
                               "    noc_async_read_barrier();\n"
                               "    volatile uint32_t *w = (volatile uint32_t *)l1;\n"
                               "    for (int i = 0; i < 256; i++) w[i] = w[i] * 5u + 1u;\n"
                               "    noc_async_write_page(page, &out, l1);\n"
                               "    noc_async_write_barrier();\n"
                               "}\n";

static lm_device *open_device(void) {
    lm_device_options o;
    lm_device_options_init(&o);
    o.grid_x = 2;
    o.grid_y = 2;
    o.dram_banks = 2;
    o.dram_bank_size = 16 << 20;
    lm_device *dev = NULL;
    return lm_device_open(&o, &dev) ? NULL : dev;
}

static void input_words(uint32_t *w) {
    for (int i = 0; i < WORDS; i++)
        w[i] = (uint32_t)i * 2654435761u + 7u;
}

/* The scale kernel built by the JIT, as bytes. */
static lm_status our_elf(void **out_elf, size_t *out_size) {
    lm_kernel_config kc;
    lm_kernel_config_init(&kc, LM_PROCESSOR_DM0);
    jit_artifact art;
    lm_status st = rt_kernel_build("scale", NULL, scale_src, &kc, &art);
    if (st) return st;
    *out_elf = art.elf;
    *out_size = art.elf_size;
    return LM_OK;
}

/* Runs the scale workload with the kernel given as an ELF, reading the
 * output into result; while capturing, the output buffer is named "out". */
static lm_status run_scale(lm_device *dev, const void *elf, size_t size, bool capturing,
                           uint32_t *result) {
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_buffer_config c;
    lm_buffer_config_init(&c);
    c.size = WORDS * 4;
    c.page_size = 1024;
    lm_buffer in, out;
    lm_status st = lm_create_buffer(dev, &c, &in);
    if (!st) st = lm_create_buffer(dev, &c, &out);
    uint32_t words[WORDS];
    input_words(words);
    if (!st) st = lm_enqueue_write_buffer(cq, in, words, true);
    uint64_t ia = 0, oa = 0;
    if (!st) st = lm_buffer_address(in, &ia);
    if (!st) st = lm_buffer_address(out, &oa);
    lm_program prog = {0};
    lm_kernel k;
    lm_kernel_config kc;
    lm_kernel_config_init(&kc, LM_PROCESSOR_DM0);
    lm_core_range_set all = lm_core_range_set_of(0, 0, 1, 1);
    uint32_t args[] = {(uint32_t)ia, (uint32_t)oa};
    if (!st) st = lm_create_program(dev, &prog);
    if (!st) st = lm_create_kernel_from_elf(prog, elf, size, &all, &kc, &k);
    for (uint32_t y = 0; y < 2 && !st; y++)
        for (uint32_t x = 0; x < 2 && !st; x++)
            st = lm_set_runtime_args(prog, k, (lm_core){x, y}, args, 2);
    if (!st) st = lm_enqueue_program(cq, prog, true);
    if (!st) st = lm_enqueue_read_buffer(cq, out, result, true);
    if (!st && capturing) st = lm_capture_name_buffer(out, "out");
    if (prog.id) lm_release_program(prog);
    return st;
}

static int scaled_correctly(const uint32_t *result) {
    uint32_t in[WORDS];
    input_words(in);
    for (int i = 0; i < WORDS; i++)
        if (result[i] != in[i] * 5u + 1u) return 0;
    return 1;
}

static void test_our_elf_runs(void) {
    void *elf;
    size_t size;
    CHECK_OK(our_elf(&elf, &size));
    lm_device *dev = open_device();
    CHECK(dev);
    static uint32_t result[WORDS];
    lm_status st = run_scale(dev, elf, size, false, result);
    lm_device_close(dev);
    free(elf);
    CHECK_OK(st);
    CHECK(scaled_correctly(result));
}

/* Captured like any kernel: the replay runs the same ELF and gives the same
 * output. */
static void test_elf_kernel_capture_replay(void) {
    void *elf;
    size_t size;
    CHECK_OK(our_elf(&elf, &size));
    lm_device *dev = open_device();
    CHECK(dev);
    static uint32_t live[WORDS], replayed[WORDS];
    lm_binary *bin = NULL;
    lm_status st = lm_light_metal_begin_capture(dev, NULL);
    if (!st) st = run_scale(dev, elf, size, true, live);
    if (!st) st = lm_light_metal_end_capture(dev, &bin);
    lm_device_close(dev);
    free(elf);
    CHECK_OK(st);
    CHECK(scaled_correctly(live));
    const void *data;
    uint64_t bytes;
    CHECK_OK(lm_binary_data(bin, &data, &bytes));
    lm_replay *r;
    CHECK_OK(lm_replay_open(data, bytes, &r));
    lm_status rs = lm_replay_run(r, NULL, NULL, NULL);
    if (!rs) rs = lm_replay_get_output(r, "out", replayed, sizeof replayed);
    lm_replay_close(r);
    lm_binary_free(bin);
    CHECK_OK(rs);
    CHECK(memcmp(live, replayed, sizeof live) == 0);
}

/* ---- a kernel ELF built by hand: two segments, entry at the first word ---- */

enum { EHDR = 52, PHDR = 32, CODE_OFF = EHDR + 2 * PHDR, HAND_SIZE = CODE_OFF + 12 };

static void put16(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static void put32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Code: li a7, 1 (exit); ecall. Data: one word, plus bss. */
static void hand_elf(uint8_t *e) {
    memset(e, 0, HAND_SIZE);
    memcpy(e,
           "\x7f"
           "ELF",
           4);
    e[4] = 1; /* ELFCLASS32 */
    e[5] = 1; /* little-endian */
    e[6] = 1;
    put16(e + 16, 2);   /* ET_EXEC */
    put16(e + 18, 243); /* EM_RISCV */
    put32(e + 20, 1);
    put32(e + 24, 0x40000000); /* entry */
    put32(e + 28, EHDR);       /* phoff */
    put16(e + 40, EHDR);
    put16(e + 42, PHDR);
    put16(e + 44, 2); /* phnum */
    uint8_t *ph = e + EHDR;
    put32(ph, 1); /* PT_LOAD: code */
    put32(ph + 4, CODE_OFF);
    put32(ph + 8, 0x40000000);
    put32(ph + 16, 8);
    put32(ph + 20, 8);
    put32(ph + 24, 5); /* R X */
    ph += PHDR;
    put32(ph, 1); /* PT_LOAD: data */
    put32(ph + 4, CODE_OFF + 8);
    put32(ph + 8, 0x20000000);
    put32(ph + 16, 4);
    put32(ph + 20, 16);
    put32(ph + 24, 6); /* R W */
    put32(e + CODE_OFF, 0x00100893);
    put32(e + CODE_OFF + 4, 0x00000073);
    put32(e + CODE_OFF + 8, 0x12345678);
}

static lm_status place(lm_program prog, const void *elf, size_t size, lm_kernel_config *kc) {
    lm_core_range_set one = lm_core_range_set_of(0, 0, 0, 0);
    lm_kernel k;
    return lm_create_kernel_from_elf(prog, elf, size, &one, kc, &k);
}

static void test_hand_built_elf_runs(void) {
    uint8_t e[HAND_SIZE];
    hand_elf(e);
    lm_device *dev = open_device();
    CHECK(dev);
    lm_program prog;
    lm_kernel_config kc;
    lm_kernel_config_init(&kc, LM_PROCESSOR_DM1);
    lm_status st = lm_create_program(dev, &prog);
    if (!st) st = place(prog, e, sizeof e, &kc);
    if (!st) st = lm_enqueue_program(lm_device_command_queue(dev, 0), prog, true);
    lm_device_close(dev);
    CHECK_OK(st);
}

typedef struct hostile {
    const char *what;
    uint32_t offset; /* a 32-bit field to overwrite (UINT32_MAX: none) */
    uint32_t value;
    size_t size; /* bytes handed over (0: all) */
    const char *message;
    uint32_t offset2, value2; /* a second field (offset 0: none) */
} hostile;

static void test_hostile_elfs(void) {
    const hostile cases[] = {
        {"truncated header", UINT32_MAX, 0, 40,
         "file of 40 bytes is shorter than the 52-byte ELF header", 0, 0},
        {"truncated segment", UINT32_MAX, 0, CODE_OFF + 4,
         "segment 0: file bytes at offset 116 run past the end of the file", 0, 0},
        {"not an ELF", 0, 0x464c457e, 0, "not an ELF file (bad magic)", 0, 0},
        {"ELFCLASS64", 4, 0x00010102, 0, "class 2 is not ELFCLASS32", 0, 0},
        {"big-endian", 4, 0x00010201, 0, "data encoding 2 is not little-endian", 0, 0},
        {"x86-64", 16, 0x003e0002, 0, "machine 62 is not EM_RISCV (243)", 0, 0},
        {"shared object", 16, 0x00f30003, 0, "type 3 is not ET_EXEC", 0, 0},
        {"compressed", 36, 1, 0, "built for compressed instructions", 0, 0},
        {"hard float", 36, 4, 0, "built for a hardware floating-point ABI", 0, 0},
        {"code outside the map", EHDR + 8, 0x10000000, 0,
         "executable segment 0 at 0x10000000 lies outside the code region", 0, 0},
        {"code past the region", EHDR + 8, 0x400ffffc, 0,
         "executable segment 0 at 0x400ffffc lies outside the code region", 0, 0},
        {"data outside the map", EHDR + PHDR + 8, 0x00001000, 0,
         "writable segment 1 at 0x1000 lies outside the local region", 0, 0},
        {"huge segment", EHDR + PHDR + 20, 0xfffffff0, 0, "segment 1 at 0x20000000", 0, 0},
        {"entry in data", 24, 0x20000000, 0,
         "entry point 0x20000000 is not inside an executable segment", 0, 0},
        {"entry past the code", 24, 0x40000008, 0,
         "entry point 0x40000008 is not inside an executable segment", 0, 0},
        {"misaligned entry", 24, 0x40000002, 0, "entry point 0x40000002 is not 4-byte aligned", 0,
         0},
        {"huge phnum", 44, 0x0000ffff, 0, "65535 program headers; at most 64 are accepted", 0, 0},
        {"headers past the end", 28, 0x7ffffff0, 0, "program headers at offset 2147483632", 0, 0},
        {"overlapping segments", EHDR + PHDR + 8, 0x40000004, 0,
         "segment 1 at 0x40000004 overlaps an earlier segment", EHDR + PHDR + 24, 4},
        {"writable code", EHDR + 24, 7, 0, "segment 0 is both writable and executable", 0, 0},
        {"TLS segment", EHDR + PHDR, 7, 0, "segment 1 has type 7", 0, 0},
    };
    lm_device *dev = open_device();
    CHECK(dev);
    lm_program prog;
    CHECK_OK(lm_create_program(dev, &prog));
    lm_kernel_config kc;
    lm_kernel_config_init(&kc, LM_PROCESSOR_DM0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const hostile *h = &cases[i];
        uint8_t e[HAND_SIZE];
        hand_elf(e);
        if (h->offset != UINT32_MAX) {
            if (h->offset == 44) /* a 16-bit field; keep phentsize */
                put16(e + 44, h->value);
            else
                put32(e + h->offset, h->value);
        }
        if (h->offset2) put32(e + h->offset2, h->value2);
        lm_status st = place(prog, e, h->size ? h->size : sizeof e, &kc);
        if (st != LM_ERR_INVALID_FILE || !strstr(lm_last_error(), h->message) ||
            !strstr(lm_last_error(), "lm_create_kernel_from_elf: kernel 'elf-")) {
            printf("  case '%s': %s: %s\n", h->what, lm_status_string(st), lm_last_error());
            CHECK(0);
        }
    }
    /* Arguments that are wrong before any byte is read. */
    uint8_t e[HAND_SIZE];
    hand_elf(e);
    lm_core_range_set one = lm_core_range_set_of(0, 0, 0, 0);
    lm_kernel k;
    CHECK_FAILS(lm_create_kernel_from_elf(prog, NULL, 10, &one, &kc, &k), LM_ERR_INVALID_ARGUMENT,
                "lm_create_kernel_from_elf: elf is NULL");
    CHECK_FAILS(lm_create_kernel_from_elf(prog, e, 0, &one, &kc, &k), LM_ERR_INVALID_ARGUMENT,
                "lm_create_kernel_from_elf: size is 0");
    CHECK_FAILS(lm_create_kernel_from_elf(prog, e, sizeof e, &one, &kc, NULL),
                LM_ERR_INVALID_ARGUMENT, "out_kernel is NULL");
    CHECK_FAILS(lm_create_kernel_from_elf(prog, e, sizeof e, NULL, &kc, &k),
                LM_ERR_INVALID_ARGUMENT, "cores is NULL");
    lm_kernel_define defs[] = {{"X", "1"}};
    kc.defines = defs;
    kc.define_count = 1;
    CHECK_FAILS(lm_create_kernel_from_elf(prog, e, sizeof e, &one, &kc, &k),
                LM_ERR_INVALID_ARGUMENT, "cfg has 0 compile args and 1 defines");
    lm_kernel_config_init(&kc, LM_PROCESSOR_INVALID);
    CHECK_FAILS(lm_create_kernel_from_elf(prog, e, sizeof e, &one, &kc, &k),
                LM_ERR_INVALID_ARGUMENT, "processor 0 is not DM0, DM1 or COMPUTE");
    lm_kernel_config_init(&kc, LM_PROCESSOR_DM0);
    lm_core_range_set outside = lm_core_range_set_of(0, 0, 5, 0);
    CHECK_FAILS(lm_create_kernel_from_elf(prog, e, sizeof e, &outside, &kc, &k),
                LM_ERR_INVALID_ARGUMENT, "outside the 2x2 grid");
    CHECK_FAILS(lm_create_kernel_from_elf((lm_program){0}, e, sizeof e, &one, &kc, &k),
                LM_ERR_INVALID_HANDLE, "program handle");
    /* The core is still free: nothing above placed a kernel. */
    CHECK_OK(lm_create_kernel_from_elf(prog, e, sizeof e, &one, &kc, &k));
    lm_release_program(prog);
    lm_device_close(dev);
}

/* ---- another toolchain ---- */

static int run_argv(char *const argv[]) {
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        execve(argv[0], argv, environ);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A kernel built by Debian's riscv64-unknown-elf-gcc against the SDK's
 * headers, crt0 and linker script (see docs/kernel-abi.md) runs. */
static void test_gcc_built_kernel_runs(void) {
    const char *gcc = LM_RISCV_GCC;
    if (!*gcc) {
        printf("  SKIP: riscv64-unknown-elf-gcc not found (Debian package "
               "gcc-riscv64-unknown-elf)\n");
        return;
    }
    char src[64], out[64], inc[4200], ld[4200], crt0[4200];
    snprintf(src, sizeof src, "test_kernel_elf_%d.c", (int)getpid());
    snprintf(out, sizeof out, "test_kernel_elf_%d.elf", (int)getpid());
    const char *sdk = jit_sdk_dir();
    snprintf(inc, sizeof inc, "-I%s/include", sdk);
    snprintf(ld, sizeof ld, "-Wl,-T,%s/link.ld", sdk);
    snprintf(crt0, sizeof crt0, "%s/crt0.S", sdk);
    FILE *f = fopen(src, "w");
    CHECK(f);
    fputs(scale_src, f);
    CHECK(fclose(f) == 0);
    char *argv[] = {(char *)gcc,
                    "-march=rv32im",
                    "-mabi=ilp32",
                    "-O2",
                    "-ffreestanding",
                    "-nostdlib",
                    "-std=c11",
                    "--param=min-pagesize=0",
                    "-fno-delete-null-pointer-checks",
                    "-DLM_PROCESSOR=0",
                    inc,
                    ld,
                    "-Wl,--gc-sections",
                    crt0,
                    src,
                    "-o",
                    out,
                    NULL};
    int rc = run_argv(argv);
    unlink(src);
    CHECK(rc == 0);
    void *elf = NULL;
    long size = 0;
    f = fopen(out, "rb");
    if (f && fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
        elf = malloc((size_t)size);
        if (elf && fread(elf, 1, (size_t)size, f) != (size_t)size) size = 0;
    }
    if (f) fclose(f);
    unlink(out);
    CHECK(elf && size > 0);
    lm_device *dev = open_device();
    CHECK(dev);
    static uint32_t result[WORDS];
    lm_status st = run_scale(dev, elf, (size_t)size, false, result);
    lm_device_close(dev);
    free(elf);
    CHECK_OK(st);
    CHECK(scaled_correctly(result));
}

int main(void) {
    setenv("LM_CACHE_DIR", "test_kernel_elf_cache", 0);
    TEST_RUN(test_our_elf_runs);
    TEST_RUN(test_elf_kernel_capture_replay);
    TEST_RUN(test_hand_built_elf_runs);
    TEST_RUN(test_hostile_elfs);
    TEST_RUN(test_gcc_built_kernel_runs);
    return test_summary();
}
