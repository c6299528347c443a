/* ONNX compiler benchmarks, on the Fashion-MNIST CNN of the ONNX test models
 * (scripts/make_onnx_models.py, target onnx_models) compiled for batch 64 in
 * fp32.
 *
 * onnx_cnn_vs_torch      images/s of the compiled CNN replayed (batch 64,
 *                        the simulator with N threads) / images/s of
 *                        PyTorch CPU on the same model with N threads
 *                        (scripts/bench_torch_cnn.py, run as a child
 *                        process); N = online CPUs. Goal >= 0.5
 * onnx_cnn_trace_vs_torch  the same with the CNN compiled with --trace
 *                        (the whole model one metal trace: one launch)
 * onnx_cnn_bf16_vs_torch  the same compiled in bf16 mode
 * onnx_cnn_bfp8_vs_torch  the same compiled in bfp8 mode (bfloat8_b weights)
 * onnx_cnn_images_per_s, onnx_cnn_trace_images_per_s, onnx_cnn_bf16_images_per_s,
 * onnx_cnn_bfp8_images_per_s,
 * onnx_torch_images_per_s  the rates behind those ratios, all of this run
 * onnx_compile_s         seconds of lmfe_compile_onnx of the CNN at batch 64,
 *                        kernel cache warm (one compile before). Goal < 10
 * onnx_replay_vs_live    one replay of the compiled binary / running the
 *                        model through the frontend live (lmfe_compile_onnx
 *                        of the same model, which parses, infers and runs
 *                        every op on the device), cache warm. Goal <= 0.2
 * onnx_trace_replay_vs_live  the same for the --trace binary
 * onnx_replay_vs_live_b1  the same ratio for the CNN compiled for one
 *                        image
 * onnx_cnn_kernel_instructions  RISC-V instructions the CNN's kernels run in
 *                        one replay (batch 64, fp32; the profile's count):
 *                        unlike the times, the same on every run, so a
 *                        change to a kernel shows exactly
 * onnx_replay_busy_vs_quiet  a replay with one busy process per CPU
 *                        competing / a replay with none: the median over
 *                        pairs. Sharing every CPU with one other process
 *                        makes about 2; more means the simulator's waiting
 *                        threads take CPU time from those doing the work
 * onnx_replay_vs_cold_live  the replay / a live run on a machine that has
 *                        never built the model's kernels (a new device and
 *                        an empty kernel cache: what the binary's
 *                        precompiled kernels spare a new machine); one run
 * onnx_decoder_step_ms   one step of the model zoo's fixed-cache decoder
 *                        (llama_static_cache: two sequences, a token each,
 *                        the cache handed back), compiled in fp32 and
 *                        replayed as examples/onnx_generate does
 * onnx_decoder_vs_torch  steps/s of that replay / steps/s of PyTorch CPU on
 *                        the same model with the same threads
 *                        (scripts/bench_torch_decoder.py): a model this
 *                        small is a few hundred tiny launches a step
 * onnx_decoder_trace_step_ms, onnx_decoder_trace_vs_torch  the same with
 *                        the decoder compiled with --trace (a step is one
 *                        trace launch)
 *
 * All times are medians, all on one device opened with N threads; a replay
 * is the whole binary (programs, buffers, the weights' upload, the input,
 * the launches, the output). Without the models or without PyTorch the
 * figures that need them are printed as skipped. */
#define _XOPEN_SOURCE 700 /* nftw, mkdtemp, setenv, kill */
#include <ftw.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "lightmetal/frontend.h"
#include "lightmetal/lightmetal.h"
#include "lmt_npy.h"

#define BATCH 64
#define PIXELS (28 * 28)
#define CLASSES 10
#define COMPILES 5
#define REPLAYS 15
#define TORCH_SECONDS "5"
#define BUSY_PAIRS 5
#define MAX_HOGS 64
#define DECODER_STEPS 31

static char cnn_path[2048];

static void skip_all(const char *why) {
    printf("onnx_cnn_vs_torch: skipped (%s)\n", why);
    printf("onnx_compile_s: skipped (%s)\n", why);
    printf("onnx_cnn_kernel_instructions: skipped (%s)\n", why);
    printf("onnx_replay_vs_live: skipped (%s)\n", why);
    printf("onnx_replay_vs_live_b1: skipped (%s)\n", why);
    printf("onnx_replay_busy_vs_quiet: skipped (%s)\n", why);
    printf("onnx_replay_vs_cold_live: skipped (%s)\n", why);
    printf("onnx_decoder_step_ms: skipped (%s)\n", why);
    printf("onnx_decoder_vs_torch: skipped (%s)\n", why);
    printf("onnx_decoder_trace_step_ms: skipped (%s)\n", why);
    printf("onnx_decoder_trace_vs_torch: skipped (%s)\n", why);
}

/* Reads the first BATCH test images into dst; false when they cannot be read. */
static bool read_images(float *dst) {
    char path[2048];
    snprintf(path, sizeof path, "%s/cnn_test_images.npy", LM_ONNX_MODELS_DIR);
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    bool ok = false;
    if (fseek(f, 0, SEEK_END) == 0) {
        long len = ftell(f);
        uint8_t *bytes = len > 0 ? malloc((size_t)len) : NULL;
        lmt_npy npy;
        if (bytes && fseek(f, 0, SEEK_SET) == 0 && fread(bytes, 1, (size_t)len, f) == (size_t)len &&
            lmt_npy_parse(bytes, (uint64_t)len, &npy) == LM_OK && npy.dtype == LMT_NPY_F4 &&
            npy.count >= (uint64_t)BATCH * PIXELS) {
            memcpy(dst, npy.data, (size_t)BATCH * PIXELS * sizeof(float));
            ok = true;
        }
        free(bytes);
    }
    fclose(f);
    return ok;
}

static lm_binary *compile_cnn(lm_device *dev, uint32_t batch, lmfe_dtype_mode dtype, bool trace,
                              double *seconds) {
    lmfe_compile_options opts;
    lmfe_compile_options_init(&opts);
    lmfe_dim_binding dim = {"batch", batch};
    opts.dims = &dim;
    opts.dim_count = 1;
    opts.device = dev;
    opts.trace = trace;
    opts.dtype = dtype;
    lm_binary *bin = NULL;
    double t0 = bench_now();
    if (lmfe_compile_onnx(cnn_path, &opts, &bin, NULL) != LM_OK) bench_die("lmfe_compile_onnx");
    *seconds = bench_now() - t0;
    return bin;
}

/* The median time of a replay of `bin` (compiled for `batch` images) on
 * `images` (after an untimed one, profiled when `out_instructions` is not
 * NULL: the kernels' instructions, summed). */
static double replay_median(lm_device *dev, const lm_binary *bin, uint32_t batch,
                            const float *images, uint64_t *out_instructions) {
    const void *data;
    uint64_t size;
    lm_replay *rp;
    if (lm_binary_data(bin, &data, &size) != LM_OK || lm_replay_open(data, size, &rp) != LM_OK)
        bench_die("lm_replay_open");
    if (lm_replay_set_input(rp, "image", images, (uint64_t)batch * PIXELS * sizeof(float)) != LM_OK)
        bench_die("lm_replay_set_input");
    static float logits[BATCH * CLASSES];
    double replay_s[REPLAYS];
    lm_replay_options profiled;
    lm_replay_options_init(&profiled);
    profiled.profile = true;
    for (int i = -1; i < REPLAYS; i++) {
        double t0 = bench_now();
        bool profile = i < 0 && out_instructions;
        if (lm_replay_run(rp, dev, profile ? &profiled : NULL, NULL) != LM_OK)
            bench_die("lm_replay_run");
        if (profile) {
            const lm_profile_entry *e;
            size_t n;
            if (lm_replay_get_profile(rp, &e, &n) != LM_OK) bench_die("lm_replay_get_profile");
            *out_instructions = 0;
            for (size_t k = 0; k < n; k++)
                *out_instructions += e[k].instructions;
        }
        if (lm_replay_get_output(rp, "logits", logits, (uint64_t)batch * CLASSES * sizeof(float)) !=
            LM_OK)
            bench_die("lm_replay_get_output");
        if (i >= 0) replay_s[i] = bench_now() - t0;
    }
    lm_replay_close(rp);
    return bench_median(replay_s, REPLAYS);
}

/* Starts n processes that only spin, into pids. Each also stops when this
 * process is gone (a benchmark that dies between start and stop_hogs). */
static void start_hogs(pid_t *pids, int n) {
    pid_t parent = getpid();
    for (int i = 0; i < n; i++) {
        pids[i] = fork();
        if (pids[i] < 0) bench_die("fork");
        if (pids[i] == 0)
            for (volatile unsigned long spin = 0;; spin++)
                if ((spin & 0xfffff) == 0 && getppid() != parent) _exit(0);
    }
}

static void stop_hogs(const pid_t *pids, int n) {
    for (int i = 0; i < n; i++) {
        kill(pids[i], SIGKILL);
        waitpid(pids[i], NULL, 0);
    }
}

/* The median over pairs of (replay with `cpus` busy processes running) /
 * (replay without). */
static double busy_vs_quiet(lm_device *dev, const lm_binary *bin, uint32_t batch,
                            const float *images, unsigned cpus) {
    int hogs = cpus > MAX_HOGS ? MAX_HOGS : (int)cpus;
    pid_t pids[MAX_HOGS];
    double ratio[BUSY_PAIRS];
    for (int p = 0; p < BUSY_PAIRS; p++) {
        double quiet = replay_median(dev, bin, batch, images, NULL);
        start_hogs(pids, hogs);
        double busy = replay_median(dev, bin, batch, images, NULL);
        stop_hogs(pids, hogs);
        ratio[p] = busy / quiet;
    }
    return bench_median(ratio, BUSY_PAIRS);
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

/* Seconds of a live compile of the CNN at batch 64 on a new device with an
 * empty kernel cache (LM_CACHE_DIR pointed at a new directory, removed
 * after). */
static double cold_compile_s(const lm_device_options *dopts) {
    char dir[] = "/tmp/lm-bench-cache-XXXXXX";
    if (!mkdtemp(dir)) bench_die("mkdtemp");
    const char *old = getenv("LM_CACHE_DIR");
    char *saved = old ? strdup(old) : NULL;
    setenv("LM_CACHE_DIR", dir, 1);
    lm_device *dev;
    if (lm_device_open(dopts, &dev) != LM_OK) bench_die("lm_device_open");
    double s;
    lm_binary_free(compile_cnn(dev, BATCH, LMFE_DTYPE_FP32, false, &s));
    lm_device_close(dev);
    if (saved)
        setenv("LM_CACHE_DIR", saved, 1);
    else
        unsetenv("LM_CACHE_DIR");
    free(saved);
    nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    return s;
}

/* The rate a PyTorch script prints as "<key>: <value>" when run as `cmd`,
 * or a negative value with the reason in `why`. */
static double script_rate(const char *cmd, const char *key, char *why, size_t why_size) {
    FILE *p = popen(cmd, "r");
    if (!p) {
        snprintf(why, why_size, "could not run %s", cmd);
        return -1;
    }
    char line[1024], last[1024] = "";
    double rate = -1;
    size_t klen = strlen(key);
    while (fgets(line, sizeof line, p)) {
        if (!strncmp(line, key, klen) && !strncmp(line + klen, ": ", 2))
            rate = strtod(line + klen + 2, NULL);
        else if (line[0] != '\n')
            snprintf(last, sizeof last, "%s", line);
    }
    int rc = pclose(p);
    if (rc != 0 || !(rate > 0)) {
        last[strcspn(last, "\n")] = 0;
        snprintf(why, why_size, "PyTorch could not run: %s", last[0] ? last : "no rate printed");
        return -1;
    }
    return rate;
}

/* PyTorch's images/s of the CNN with `threads` threads (or < 0, see
 * script_rate). */
static double torch_rate(unsigned threads, char *why, size_t why_size) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "'%s' '%s' --state '%s/cnn_state.pt' --threads %u --batch %d --seconds %s 2>&1",
             LM_PYTHON3, LM_TORCH_SCRIPT, LM_ONNX_MODELS_DIR, threads, BATCH, TORCH_SECONDS);
    return script_rate(cmd, "images_per_s", why, why_size);
}

/* The named buffer's size (0 when there is none); its dim `d` in *dim. */
static uint64_t buffer_size(const lm_replay *rp, const char *name, uint32_t d, uint64_t *dim) {
    lm_replay_buffer_info info;
    for (uint32_t i = 0; i < lm_replay_buffer_count(rp); i++)
        if (lm_replay_buffer_info_at(rp, i, &info) == LM_OK && !strcmp(info.name, name)) {
            if (dim) *dim = d < info.rank ? info.shape[d] : 0;
            return info.size;
        }
    return 0;
}

/* Seconds of one step of the zoo's fixed-cache decoder compiled with or
 * without --trace, the median of DECODER_STEPS (after an untimed one), each
 * step given the last one's cache and a token and position for each
 * sequence; or < 0 with the reason in `why`. Compiled on a device of its
 * own and replayed on another, opened once for all steps, as
 * examples/onnx_generate runs it. */
static double decoder_step_s(const lm_device_options *dopts, bool trace, char *why,
                             size_t why_size) {
    char path[2048];
    snprintf(path, sizeof path, "%s/zoo/llama_static_cache/model.onnx", LM_ONNX_MODELS_DIR);
    lmfe_compile_options opts;
    lmfe_compile_options_init(&opts);
    opts.trace = trace;
    lm_binary *bin = NULL;
    const void *data;
    uint64_t size;
    lm_replay *rp = NULL;
    lm_device *dev = NULL;
    bool made = lm_device_open(dopts, &opts.device) == LM_OK &&
                lmfe_compile_onnx(path, &opts, &bin, NULL) == LM_OK;
    lm_device_close(opts.device);
    if (!made || lm_device_open(dopts, &dev) != LM_OK ||
        lm_binary_data(bin, &data, &size) != LM_OK || lm_replay_open(data, size, &rp) != LM_OK) {
        snprintf(why, why_size, "%s", lm_last_error());
        lm_device_close(dev);
        lm_binary_free(bin);
        return -1;
    }
    uint64_t positions = 0, ids_size = buffer_size(rp, "ids", 0, NULL);
    uint64_t cache_size = buffer_size(rp, "cache_k", 3, &positions);
    uint64_t logits_size = buffer_size(rp, "logits", 0, NULL);
    int32_t *ids = calloc(1, ids_size + 1), *pos = calloc(1, ids_size + 1);
    float *cache = calloc(2, cache_size + 1), *logits = calloc(1, logits_size + 1);
    double step_s[DECODER_STEPS];
    bool ok = ids && pos && cache && logits && ids_size && cache_size && logits_size && positions;
    lm_replay_options ro;
    lm_replay_options_init(&ro);
    ro.check_goldens = false;
    float *cache_v = cache + cache_size / sizeof(float);
    for (int s = -1; ok && s < DECODER_STEPS; s++) {
        for (uint64_t r = 0; r < ids_size / sizeof(int32_t); r++)
            pos[r] = (int32_t)((uint64_t)(s + 1) % positions);
        double t0 = bench_now();
        ok = lm_replay_set_input(rp, "ids", ids, ids_size) == LM_OK &&
             lm_replay_set_input(rp, "pos", pos, ids_size) == LM_OK &&
             lm_replay_set_input(rp, "cache_k", cache, cache_size) == LM_OK &&
             lm_replay_set_input(rp, "cache_v", cache_v, cache_size) == LM_OK &&
             lm_replay_run(rp, dev, &ro, NULL) == LM_OK &&
             lm_replay_get_output(rp, "cache_k_out", cache, cache_size) == LM_OK &&
             lm_replay_get_output(rp, "cache_v_out", cache_v, cache_size) == LM_OK &&
             lm_replay_get_output(rp, "logits", logits, logits_size) == LM_OK;
        if (s >= 0) step_s[s] = bench_now() - t0;
    }
    if (!ok) snprintf(why, why_size, "the decoder's replay: %s", lm_last_error());
    free(ids);
    free(pos);
    free(cache);
    free(logits);
    lm_replay_close(rp);
    lm_binary_free(bin);
    lm_device_close(dev);
    return ok ? bench_median(step_s, DECODER_STEPS) : -1;
}

/* onnx_decoder<kind>_step_ms and onnx_decoder<kind>_vs_torch from a step's
 * seconds (< 0: skipped for `why`) and PyTorch's steps/s (< 0: skipped for
 * `torch_why`). */
static void report_decoder(const char *kind, double step_s, const char *why, double torch_steps,
                           const char *torch_why) {
    char step[64], vs[64];
    snprintf(step, sizeof step, "onnx_decoder%s_step_ms", kind);
    snprintf(vs, sizeof vs, "onnx_decoder%s_vs_torch", kind);
    if (step_s <= 0) {
        printf("%s: skipped (%s)\n", step, why);
        printf("%s: skipped (%s)\n", vs, why);
        return;
    }
    bench_report(step, 1e3 * step_s);
    if (torch_steps > 0)
        bench_report(vs, 1.0 / step_s / torch_steps);
    else
        printf("%s: skipped (%s)\n", vs, torch_why);
}

int main(void) {
    snprintf(cnn_path, sizeof cnn_path, "%s/cnn.onnx", LM_ONNX_MODELS_DIR);
    static float images[BATCH * PIXELS];
    if (access(cnn_path, R_OK) != 0 || !read_images(images)) {
        skip_all("no ONNX test models: build the target onnx_models, which needs python3-torch");
        return 0;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned threads = cpus > 0 ? (unsigned)cpus : 1;

    lm_device_options dopts;
    lm_device_options_init(&dopts);
    dopts.num_threads = threads;
    lm_device *dev;
    if (lm_device_open(&dopts, &dev) != LM_OK) bench_die("lm_device_open");

    /* Compile time and the live run: the first compile fills the kernel
     * cache; the others are timed. */
    double compile_s[COMPILES];
    lm_binary *bin = compile_cnn(dev, BATCH, LMFE_DTYPE_FP32, false, &compile_s[0]);
    for (int i = 0; i < COMPILES; i++) {
        lm_binary_free(bin);
        bin = compile_cnn(dev, BATCH, LMFE_DTYPE_FP32, false, &compile_s[i]);
    }
    double compile_med = bench_median(compile_s, COMPILES);

    uint64_t cnn_instructions = 0;
    double replay_med = replay_median(dev, bin, BATCH, images, &cnn_instructions);
    double busy = busy_vs_quiet(dev, bin, BATCH, images, threads);
    lm_binary_free(bin);
    /* The same at one image: compile (live) and replay. */
    double compile1_s[COMPILES];
    bin = compile_cnn(dev, 1, LMFE_DTYPE_FP32, false, &compile1_s[0]);
    for (int i = 0; i < COMPILES; i++) {
        lm_binary_free(bin);
        bin = compile_cnn(dev, 1, LMFE_DTYPE_FP32, false, &compile1_s[i]);
    }
    double compile1_med = bench_median(compile1_s, COMPILES);
    double replay1_med = replay_median(dev, bin, 1, images, NULL);
    lm_binary_free(bin);
    /* The bf16 mode, the one meant for speed. */
    double unused;
    bin = compile_cnn(dev, BATCH, LMFE_DTYPE_BF16, false, &unused);
    double bf16_med = replay_median(dev, bin, BATCH, images, NULL);
    lm_binary_free(bin);
    bin = compile_cnn(dev, BATCH, LMFE_DTYPE_BFP8, false, &unused);
    double bfp8_med = replay_median(dev, bin, BATCH, images, NULL);
    lm_binary_free(bin);
    /* The same model compiled with --trace: one launch per replay. Replayed
     * on a device of its own: a traced compile leaves its trace's buffers on
     * the device it ran on, where the binary's recorded addresses are taken. */
    bin = compile_cnn(dev, BATCH, LMFE_DTYPE_FP32, true, &compile_s[0]);
    lm_device_close(dev);
    if (lm_device_open(&dopts, &dev) != LM_OK) bench_die("lm_device_open");
    double trace_med = replay_median(dev, bin, BATCH, images, NULL);
    lm_binary_free(bin);
    lm_device_close(dev);
    /* The decoder, each way compiled. */
    char decoder_why[1200], decoder_trace_why[1200];
    double decoder_s = decoder_step_s(&dopts, false, decoder_why, sizeof decoder_why);
    double decoder_trace_s =
        decoder_step_s(&dopts, true, decoder_trace_why, sizeof decoder_trace_why);

    double rate = BATCH / replay_med;
    char why[1200];
    double torch = torch_rate(threads, why, sizeof why);
    double trace_rate = BATCH / trace_med;
    if (torch > 0) {
        bench_report("onnx_cnn_vs_torch", rate / torch);
        bench_report("onnx_cnn_trace_vs_torch", trace_rate / torch);
        bench_report("onnx_cnn_bf16_vs_torch", BATCH / bf16_med / torch);
        bench_report("onnx_cnn_bfp8_vs_torch", BATCH / bfp8_med / torch);
        bench_report("onnx_torch_images_per_s", torch);
    } else {
        printf("onnx_cnn_vs_torch: skipped (%s)\n", why);
        printf("onnx_cnn_trace_vs_torch: skipped (%s)\n", why);
        printf("onnx_cnn_bf16_vs_torch: skipped (%s)\n", why);
        printf("onnx_cnn_bfp8_vs_torch: skipped (%s)\n", why);
    }
    bench_report("onnx_cnn_images_per_s", rate);
    bench_report("onnx_cnn_trace_images_per_s", trace_rate);
    bench_report("onnx_cnn_bf16_images_per_s", BATCH / bf16_med);
    bench_report("onnx_cnn_bfp8_images_per_s", BATCH / bfp8_med);
    bench_report("onnx_compile_s", compile_med);
    bench_report("onnx_cnn_kernel_instructions", (double)cnn_instructions);
    bench_report("onnx_replay_vs_live", replay_med / compile_med);
    bench_report("onnx_trace_replay_vs_live", trace_med / compile_med);
    bench_report("onnx_replay_vs_live_b1", replay1_med / compile1_med);
    bench_report("onnx_replay_busy_vs_quiet", busy);
    bench_report("onnx_replay_vs_cold_live", replay_med / cold_compile_s(&dopts));
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' '%s' --threads %u --seconds %s 2>&1", LM_PYTHON3,
             LM_TORCH_DECODER_SCRIPT, threads, TORCH_SECONDS);
    double torch_steps = decoder_s > 0 || decoder_trace_s > 0
                             ? script_rate(cmd, "steps_per_s", why, sizeof why)
                             : -1;
    report_decoder("", decoder_s, decoder_why, torch_steps, why);
    report_decoder("_trace", decoder_trace_s, decoder_trace_why, torch_steps, why);
    return 0;
}
