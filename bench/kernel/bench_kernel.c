/* Kernel creation from the kernel cache.
 *
 *   kernel_create_warm_us      median µs of lm_create_kernel for a kernel
 *                              already in the cache (a file kernel including
 *                              the SDK's dataflow_api.h): the manifest, the
 *                              re-hash of every file the compiler read, the
 *                              ELF load and the placement; no process starts
 *   kernel_create_from_elf_us  the reference: lm_create_kernel_from_elf of
 *                              the same ELF (placement alone), same run
 *   kernel_cache_overhead_us   the difference: what the cache lookup costs
 *   kernel_create_cold_ms      median ms of the same lm_create_kernel into an
 *                              empty cache (the compiler runs)
 *   kcc_cxx_cold_ms            the same for a typical C++ data movement kernel
 *                              in tt-metal's dialect (TensorAccessor, address
 *                              generator template, experimental::Noc)
 *   kcc_cxx_warm_ms            that kernel from the cache
 *   kcc_cxx_vs_c_cold          kcc_cxx_cold_ms / kernel_create_cold_ms, cold
 *                              runs of the two alternating (goal <= 1.5)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "lightmetal/lightmetal.h"
#include "runtime/program.h"

#define WARM 200
#define COLD 5

static const char *kernel_src =
    "#include \"dataflow_api.h\"\n"
    "void kernel_main(void) {\n"
    "    InterleavedAddrGenFast g = {.bank_base_address = get_arg_val(0), .page_size = 64,\n"
    "                                .is_dram = true};\n"
    "    noc_async_read_page(get_arg_val(1), &g, 0x20000);\n"
    "    noc_async_read_barrier();\n"
    "}\n";

static const char *kernel_cxx_src =
    "#include <cstdint>\n"
    "void kernel_main() {\n"
    "    const uint32_t src = get_arg_val<uint32_t>(0);\n"
    "    const uint32_t n = get_arg_val<uint32_t>(1);\n"
    "    constexpr uint32_t cb = tt::CBIndex::c_0;\n"
    "    constexpr auto args = TensorAccessorArgs<0>();\n"
    "    const uint32_t page = get_tile_size(cb);\n"
    "    const auto acc = TensorAccessor(args, src, page);\n"
    "    const InterleavedAddrGenFast<true> gen = {\n"
    "        .bank_base_address = src, .page_size = page, .data_format = DataFormat::Float16_b};\n"
    "    experimental::Noc noc;\n"
    "    for (uint32_t i = 0; i < n; i++) {\n"
    "        cb_reserve_back(cb, 1);\n"
    "        if (i & 1) noc_async_read_tile(i, acc, get_write_ptr(cb));\n"
    "        else noc_async_read_tile(i, gen, get_write_ptr(cb));\n"
    "        noc.async_read_barrier();\n"
    "        cb_push_back(cb, 1);\n"
    "    }\n"
    "}\n";

static lm_device *dev;
static lm_kernel_config kc;
static lm_core_range_set cores;

/* Seconds one lm_create_kernel takes (in a program of its own). */
static double create_once(const char *path, void **out_elf, size_t *out_size) {
    lm_program prog;
    lm_kernel k;
    if (lm_create_program(dev, &prog)) bench_die("program");
    double t0 = bench_now();
    if (lm_create_kernel(prog, path, &cores, &kc, &k)) bench_die("lm_create_kernel");
    double t = bench_now() - t0;
    if (out_elf) {
        rt_kernel_desc d;
        if (rt_kernel_describe(prog, k, &d)) bench_die("describe");
        *out_elf = malloc(d.elf_size);
        if (!*out_elf) bench_die("malloc");
        memcpy(*out_elf, d.elf, d.elf_size);
        *out_size = d.elf_size;
    }
    lm_release_program(prog);
    return t;
}

static double create_from_elf_once(const void *elf, size_t size) {
    lm_program prog;
    lm_kernel k;
    if (lm_create_program(dev, &prog)) bench_die("program");
    double t0 = bench_now();
    if (lm_create_kernel_from_elf(prog, elf, size, &cores, &kc, &k))
        bench_die("lm_create_kernel_from_elf");
    double t = bench_now() - t0;
    lm_release_program(prog);
    return t;
}

static void remove_dir(const char *dir) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) bench_die("clean up");
}

int main(void) {
    char dir[64], path[128], cache[128];
    snprintf(dir, sizeof dir, "bench_kernel_%d", (int)getpid());
    snprintf(path, sizeof path, "%s/reader.c", dir);
    if (mkdir(dir, 0755) != 0) bench_die("mkdir");
    FILE *f = fopen(path, "w");
    if (!f || fputs(kernel_src, f) < 0 || fclose(f) != 0) bench_die("write the kernel");
    char cxx_path[128];
    snprintf(cxx_path, sizeof cxx_path, "%s/reader.cpp", dir);
    f = fopen(cxx_path, "w");
    if (!f || fputs(kernel_cxx_src, f) < 0 || fclose(f) != 0) bench_die("write the kernel");
    lm_device_options o;
    lm_device_options_init(&o);
    o.grid_x = 2;
    o.grid_y = 2;
    if (lm_device_open(&o, &dev)) bench_die("open");
    lm_kernel_config_init(&kc, LM_PROCESSOR_DM0);
    cores = lm_core_range_set_of(0, 0, 1, 1);

    /* The C++ kernel's compile-time args: a DRAM buffer's accessor. */
    lm_buffer_config bc;
    lm_buffer_config_init(&bc);
    bc.size = 4096;
    bc.page_size = 2048;
    lm_buffer buf;
    uint32_t ta[LM_TENSOR_ACCESSOR_MAX_ARGS], nta = 0;
    if (lm_create_buffer(dev, &bc, &buf) ||
        lm_tensor_accessor_args(buf, ta, LM_TENSOR_ACCESSOR_MAX_ARGS, &nta))
        bench_die("tensor accessor args");
    double cold[COLD], cxx_cold[COLD], cxx_warm[WARM];
    for (int r = 0; r < COLD; r++) { /* alternating: both see the same machine */
        snprintf(cache, sizeof cache, "%s/cold%d", dir, r);
        setenv("LM_CACHE_DIR", cache, 1);
        cold[r] = create_once(path, NULL, NULL);
        snprintf(cache, sizeof cache, "%s/cxx%d", dir, r);
        setenv("LM_CACHE_DIR", cache, 1);
        kc.compile_args = ta;
        kc.compile_arg_count = nta;
        cxx_cold[r] = create_once(cxx_path, NULL, NULL);
        kc.compile_args = NULL;
        kc.compile_arg_count = 0;
    }
    kc.compile_args = ta; /* the last C++ cache is now warm */
    kc.compile_arg_count = nta;
    for (int i = 0; i < WARM; i++)
        cxx_warm[i] = create_once(cxx_path, NULL, NULL);
    kc.compile_args = NULL;
    kc.compile_arg_count = 0;
    snprintf(cache, sizeof cache, "%s/cold%d", dir, COLD - 1);
    setenv("LM_CACHE_DIR", cache, 1);
    void *elf;
    size_t size;
    create_once(path, &elf, &size); /* the last cold cache is now warm */
    double warm[WARM], placed[WARM];
    for (int i = 0; i < WARM; i++) { /* interleaved, so both see the same machine */
        warm[i] = create_once(path, NULL, NULL);
        placed[i] = create_from_elf_once(elf, size);
    }
    double w = bench_median(warm, WARM) * 1e6, p = bench_median(placed, WARM) * 1e6;
    bench_report("kernel_create_warm_us", w);
    bench_report("kernel_create_from_elf_us", p);
    bench_report("kernel_cache_overhead_us", w - p);
    double c_cold = bench_median(cold, COLD), x_cold = bench_median(cxx_cold, COLD);
    bench_report("kernel_create_cold_ms", c_cold * 1e3);
    bench_report("kcc_cxx_cold_ms", x_cold * 1e3);
    bench_report("kcc_cxx_warm_ms", bench_median(cxx_warm, WARM) * 1e3);
    bench_report("kcc_cxx_vs_c_cold", x_cold / c_cold);
    free(elf);
    lm_device_close(dev);
    unsetenv("LM_CACHE_DIR");
    remove_dir(dir);
    return 0;
}
