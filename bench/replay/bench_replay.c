/* Light Metal benchmarks, on a 512x512x512 bfloat16 matmul over the 8x8 grid
 * (examples/common/matmul.h) as the workload, plus a 1 GiB binary.
 *
 * capture_overhead_pct   live run with capture on vs off (no goldens), %: the
 *                        median over pairs run back to back in alternating
 *                        order (a noisy machine moves both halves of a pair)
 * capture_overhead_spread_pct  the middle half of those pairs (interquartile
 *                        range), to tell a change from noise
 * replay_vs_live_warm    replay time / live time, kernel cache warm
 * replay_vs_live_cold    replay time / live time with an empty kernel cache
 * load_vs_memcpy         memcpy of 1 GiB / (open + verify + replay that writes
 *                        the 1 GiB blob to device DRAM), hashes checked
 * replay_hash_overhead_pct  that load with hash checks vs without, %: the
 *                        median over pairs in alternating order
 * replay_hash_overhead_spread_pct  the middle half of those pairs
 * load_hashed_vs_memcpy  memcpy / open with every blob re-hashed at verify
 *                        (what `lightmetal verify` does)
 * replayer_static_kib    size of minimal_replay linked statically against musl
 * replayer_static_glibc_kib  the same against glibc (much of it glibc's own)
 * All times are medians; every run uses an already open device. */
#include <elf.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../examples/common/matmul.h"
#include "bench.h"
#include "format/lmb.h"

#define N 512
#define REPS 5
#define PAIRS 15

static uint16_t *ta, *tb;

/* The whole workload: buffers, program (kernels from the cache or compiled),
 * inputs, launch, output. */
static void workload(lm_device *dev) {
    ex_matmul mm = {N / 32,
                    N / 32,
                    N / 32,
                    LM_DATA_FORMAT_FLOAT16_B,
                    LM_DATA_FORMAT_FLOAT16_B,
                    LM_DATA_FORMAT_FLOAT16_B,
                    false,
                    true,
                    8,
                    8};
    static uint16_t out[N * N];
    lm_buffer a, b, c;
    lm_program prog;
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    if (ex_buffer(dev, LM_BUFFER_DRAM, 2u * N * N, 2048, &a) ||
        ex_buffer(dev, LM_BUFFER_DRAM, 2u * N * N, 2048, &b) ||
        ex_buffer(dev, LM_BUFFER_DRAM, 2u * N * N, 2048, &c) ||
        ex_matmul_program(dev, &mm, a, b, c, &prog) || lm_enqueue_write_buffer(cq, a, ta, false) ||
        lm_enqueue_write_buffer(cq, b, tb, false) || lm_enqueue_program(cq, prog, false) ||
        lm_enqueue_read_buffer(cq, c, out, true) || lm_release_program(prog) ||
        lm_deallocate_buffer(a) || lm_deallocate_buffer(b) || lm_deallocate_buffer(c))
        bench_die("workload");
}

static double timed_workload(lm_device *dev, lm_binary **capture) {
    double t0 = bench_now();
    if (capture && lm_light_metal_begin_capture(dev, NULL)) bench_die("begin capture");
    workload(dev);
    if (capture && lm_light_metal_end_capture(dev, capture)) bench_die("end capture");
    return bench_now() - t0;
}

static void light_metal_figures(void) {
    float *m = malloc(sizeof(float) * N * N);
    ta = malloc(2u * N * N);
    tb = malloc(2u * N * N);
    if (!m || !ta || !tb) bench_die("out of memory");
    ex_random(m, (size_t)N * N, 1, -1, 1);
    lm_tilize(m, N, N, LM_DATA_FORMAT_FLOAT16_B, ta, 2u * N * N);
    ex_random(m, (size_t)N * N, 2, -1, 1);
    lm_tilize(m, N, N, LM_DATA_FORMAT_FLOAT16_B, tb, 2u * N * N);
    free(m);

    lm_device *dev;
    if (lm_device_open(NULL, &dev)) bench_die("open");
    workload(dev); /* warm the kernel cache and the device memory */
    double off[PAIRS], overhead[PAIRS], replay[REPS], cold[REPS];
    lm_binary *bin = NULL;
    for (int p = 0; p < PAIRS; p++) {
        double t_on, t_off;
        lm_binary_free(bin);
        bin = NULL;
        if (p % 2) {
            t_off = timed_workload(dev, NULL);
            t_on = timed_workload(dev, &bin);
        } else {
            t_on = timed_workload(dev, &bin);
            t_off = timed_workload(dev, NULL);
        }
        off[p] = t_off;
        overhead[p] = (t_on - t_off) / t_off * 100.0;
    }
    const void *data;
    uint64_t size;
    lm_replay *rp;
    if (lm_binary_data(bin, &data, &size) || lm_replay_open(data, size, &rp)) bench_die("open");
    for (int r = 0; r < REPS; r++) {
        double t0 = bench_now();
        if (lm_replay_run(rp, dev, NULL, NULL)) bench_die("replay");
        replay[r] = bench_now() - t0;
    }
    /* Cold: every live run compiles its kernels into a fresh cache. */
    char dir[64];
    for (int r = 0; r < 3; r++) {
        snprintf(dir, sizeof dir, "bench_cold_cache_%d_%d", (int)getpid(), r);
        setenv("LM_CACHE_DIR", dir, 1);
        cold[r] = timed_workload(dev, NULL);
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        if (system(cmd) != 0) bench_die("clean cold cache");
    }
    unsetenv("LM_CACHE_DIR");
    double t_off = bench_median(off, PAIRS);
    double t_replay = bench_median(replay, REPS), t_cold = bench_median(cold, 3);
    bench_report("capture_overhead_pct", bench_median(overhead, PAIRS)); /* sorts it */
    bench_report("capture_overhead_spread_pct", overhead[PAIRS * 3 / 4] - overhead[PAIRS / 4]);
    bench_report("replay_vs_live_warm", t_replay / t_off);
    bench_report("replay_vs_live_cold", t_replay / t_cold);
    lm_replay_close(rp);
    lm_binary_free(bin);
    lm_device_close(dev);
    free(ta);
    free(tb);
}

/* Open, verify and replay a binary on `dev`: the time until its data is on
 * the device. */
static double timed_load(const char *path, lm_device *dev, bool hashes) {
    lm_replay_options o;
    lm_replay_options_init(&o);
    o.check_blob_hashes = hashes;
    double t0 = bench_now();
    lm_replay *rp;
    if (lm_replay_open_file(path, &rp) || lm_replay_run(rp, dev, &o, NULL)) bench_die("load");
    double t = bench_now() - t0;
    lm_replay_close(rp);
    return t;
}

/* A 1 GiB binary: one DRAM buffer written with 1 GiB of data. */
static void load_figures(void) {
    const uint64_t size = 1ull << 30;
    uint8_t *blob = malloc(size), *copy = malloc(size);
    if (!blob || !copy) bench_die("out of memory");
    for (uint64_t i = 0; i < size; i += 4096)
        blob[i] = (uint8_t)(i >> 12);
    memset(copy, 1, size);
    lmb_writer *w;
    lmb_BlobRef ref;
    if (lmb_writer_create(&w) || lmb_writer_add_blob(w, blob, size, false, &ref))
        bench_die("writer");
    fb_builder *b = lmb_writer_builder(w);
    lmb_CreateBuffer_start(b);
    lmb_CreateBuffer_add_buffer_id(b, 1);
    lmb_CreateBuffer_add_type(b, LMB_BufferType_DRAM);
    lmb_CreateBuffer_add_layout(b, LMB_BufferLayout_Interleaved);
    lmb_CreateBuffer_add_size(b, size);
    lmb_CreateBuffer_add_page_size(b, 1 << 20);
    if (lmb_writer_add_command(w, LMB_Command_CreateBuffer, lmb_CreateBuffer_end(b)))
        bench_die("command");
    lmb_EnqueueWriteBuffer_start(b);
    lmb_EnqueueWriteBuffer_add_buffer_id(b, 1);
    lmb_EnqueueWriteBuffer_add_data(b, &ref);
    lmb_EnqueueWriteBuffer_add_blocking(b, true);
    if (lmb_writer_add_command(w, LMB_Command_EnqueueWriteBuffer, lmb_EnqueueWriteBuffer_end(b)))
        bench_die("command");
    lmb_header hdr;
    lmb_header_init(&hdr);
    hdr.grid_x = hdr.grid_y = 8;
    hdr.l1_size = 1499136;
    hdr.dram_banks = 12;
    hdr.dram_bank_size = 1ull << 30;
    char path[64];
    snprintf(path, sizeof path, "bench_load_%d.lmb", (int)getpid());
    if (lmb_writer_finish(w, &hdr) || lmb_writer_save(w, path)) bench_die("save");
    lmb_writer_destroy(w);

    lm_device *dev;
    if (lm_device_open(NULL, &dev)) bench_die("open device");
    double t_memcpy[REPS], t_verify[REPS], t_load[PAIRS], overhead[PAIRS];
    for (int r = -1; r < REPS; r++) { /* r = -1: warms the caches */
        double t0 = bench_now();
        memcpy(copy, blob, size);
        double t1 = bench_now();
        file_mapping m;
        lmb_verify_options vo;
        lmb_verify_options_init(&vo);
        vo.check_blob_hashes = true;
        if (file_map(path, &m) || lmb_verify(m.data, m.size, &vo, NULL)) bench_die("verify");
        double t2 = bench_now();
        file_unmap(&m);
        if (r < 0) continue;
        t_memcpy[r] = t1 - t0;
        t_verify[r] = t2 - t1;
    }
    /* Hashed and plain loads in pairs, alternating which goes first, after
     * one load that commits the device's DRAM. */
    timed_load(path, dev, false);
    for (int p = 0; p < PAIRS; p++) {
        double hashed, plain;
        if (p % 2) {
            plain = timed_load(path, dev, false);
            hashed = timed_load(path, dev, true);
        } else {
            hashed = timed_load(path, dev, true);
            plain = timed_load(path, dev, false);
        }
        t_load[p] = hashed;
        overhead[p] = (hashed - plain) / plain * 100.0;
    }
    lm_device_close(dev);
    unlink(path);
    double mc = bench_median(t_memcpy, REPS), load = bench_median(t_load, PAIRS);
    bench_report("load_vs_memcpy", mc / load);
    bench_report("replay_hash_overhead_pct", bench_median(overhead, PAIRS)); /* sorts it */
    bench_report("replay_hash_overhead_spread_pct", overhead[PAIRS * 3 / 4] - overhead[PAIRS / 4]);
    bench_report("load_hashed_vs_memcpy", mc / bench_median(t_verify, REPS));
    free(blob);
    free(copy);
}

/* True when the executable at `path` needs a dynamic loader. */
static int is_dynamic(const char *path) {
    FILE *f = fopen(path, "rb");
    Elf64_Ehdr eh;
    int dynamic = 0;
    if (f && fread(&eh, sizeof eh, 1, f) == 1)
        for (int i = 0; i < eh.e_phnum; i++) {
            Elf64_Phdr ph;
            if (fseek(f, (long)(eh.e_phoff + (uint64_t)i * eh.e_phentsize), SEEK_SET) ||
                fread(&ph, sizeof ph, 1, f) != 1)
                break;
            dynamic |= ph.p_type == PT_INTERP || ph.p_type == PT_DYNAMIC;
        }
    if (f) fclose(f);
    return dynamic;
}

/* Sizes of the static replayers, and whether they need a dynamic loader. */
static void replayer_figures(void) {
    struct stat st;
    int dynamic = 0;
    if (stat(LM_MUSL_REPLAYER, &st) == 0) {
        bench_report("replayer_static_kib", (double)st.st_size / 1024.0);
        dynamic |= is_dynamic(LM_MUSL_REPLAYER);
    } else {
        printf("replayer_static_kib: not built (musl-tools missing)\n");
    }
    if (stat(LM_STATIC_REPLAYER, &st) != 0) bench_die("the static replayer is missing");
    bench_report("replayer_static_glibc_kib", (double)st.st_size / 1024.0);
    dynamic |= is_dynamic(LM_STATIC_REPLAYER);
    printf("replayer_dynamic_deps: %s\n", dynamic ? "yes (see ldd)"
                                                  : "none (libc, libm, "
                                                    "pthreads linked in)");
}

/* With an argument, only that group: capture, load or replayer. */
int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : NULL;
    if (!only || !strcmp(only, "capture")) light_metal_figures();
    if (!only || !strcmp(only, "load")) load_figures();
    if (!only || !strcmp(only, "replayer")) replayer_figures();
    return 0;
}
