/* Interpreter benchmarks.
 *
 *   iss_mips          millions of RV32IM instructions per second of rv_run on
 *                     the workload of iss_workload.c, one host thread
 *   iss_switch_mips   the same with the portable switch dispatch
 *   iss_qemu_mips     the same workload, built as a static Linux rv32 program,
 *                     under qemu-riscv32 (user mode, a JIT)
 *   iss_vs_qemu       iss_mips / iss_qemu_mips
 *
 * Both programs run iss_workload() with the same round count from the same
 * object code, so both rates use our exact instruction count. Times are CPU
 * times (the machine may be busy with other work). qemu's is its CPU time
 * minus that of the same program with zero rounds (process start and exit),
 * so the ratio compares execution speed only, JIT translation included.
 * Each figure is the median of 7 runs.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>

#include "base/file.h"
#include "sim/rv32/rv_hart.h"
#include "sim/rv32/rv_image.h"

#define REPS 7

extern char **environ;

/* CPU time, not wall time: the machine may be shared, and CPU time is what
 * each side spends on the work whatever else runs. */
static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double tv_secs(struct timeval tv) {
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

/* One simulated run; returns seconds, the instruction count and the result. */
static double run_sim(const rv_image *img, uint8_t *local,
                      rv_stop (*run)(rv_hart *, uint64_t, rv_ecall_fn, void *),
                      uint64_t *out_instret, uint32_t *out_result) {
    static uint8_t l1[4096];
    rv_hart h;
    rv_local ls;
    rv_local_init(&ls, local, false);
    if (rv_hart_init(&h, img, l1, sizeof l1, &ls) != LM_OK) return -1;
    h.x[10] = ISS_ROUNDS;
    double t0 = cpu_now();
    rv_stop s = run(&h, UINT64_MAX, NULL, NULL);
    double t = cpu_now() - t0;
    if (s != RV_STOP_EXIT) {
        char why[256];
        rv_fault_describe(&h, why, sizeof why);
        fprintf(stderr, "iss_bench: workload stopped (%d): %s\n", (int)s, why);
        return -1;
    }
    *out_instret = h.instret;
    *out_result = h.x[10];
    return t;
}

/* Runs qemu on one program; returns its CPU seconds (user + system, all its
 * threads), or -1. */
static double run_qemu(const char *elf, int *out_exit) {
    char *argv[] = {(char *)LM_QEMU_RISCV32, (char *)elf, NULL};
    pid_t pid;
    if (posix_spawn(&pid, LM_QEMU_RISCV32, NULL, NULL, argv, environ) != 0) return -1;
    struct rusage before, after;
    getrusage(RUSAGE_CHILDREN, &before);
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
    getrusage(RUSAGE_CHILDREN, &after);
    *out_exit = WEXITSTATUS(status);
    return tv_secs(after.ru_utime) + tv_secs(after.ru_stime) - tv_secs(before.ru_utime) -
           tv_secs(before.ru_stime);
}

int main(void) {
    void *bytes;
    size_t size;
    rv_image *img;
    if (file_read_all(ISS_SIM_ELF, &bytes, &size) != LM_OK ||
        rv_image_load(bytes, size, &img) != LM_OK) {
        fprintf(stderr, "iss_bench: cannot load %s: %s\n", ISS_SIM_ELF, lm_last_error());
        return 1;
    }
    free(bytes);
    uint8_t *local = malloc(KMAP_LOCAL_SIZE);
    if (!local) return 1;

    /* The four measurements alternate so that a busy machine slows all of
     * them alike. */
    double sim[REPS], sw[REPS], full[REPS], empty[REPS];
    uint64_t instret = 0;
    uint32_t result = 0;
    int code_full = -1, code_empty = -1, have_qemu = 1;
    for (int i = 0; i < REPS; i++) {
        sim[i] = run_sim(img, local, rv_run, &instret, &result);
        sw[i] = run_sim(img, local, rv_run_switch, &instret, &result);
        if (sim[i] < 0 || sw[i] < 0) return 1;
        if (!have_qemu) continue;
        full[i] = run_qemu(ISS_QEMU_ELF, &code_full);
        empty[i] = run_qemu(ISS_QEMU_EMPTY_ELF, &code_empty);
        if (full[i] < 0 || empty[i] < 0) have_qemu = 0;
    }
    double mips = (double)instret / median(sim, REPS) / 1e6;
    printf("iss_instructions: %llu\n", (unsigned long long)instret);
    printf("iss_mips: %.1f\n", mips);
    printf("iss_switch_mips: %.1f\n", (double)instret / median(sw, REPS) / 1e6);
    free(local);
    rv_image_free(img);
    if (!have_qemu) {
        printf("iss_vs_qemu: skipped (could not run %s)\n", LM_QEMU_RISCV32);
        return 0;
    }
    if (code_full != (int)(result & 0xff)) {
        fprintf(stderr, "iss_bench: qemu's result %d differs from ours %u\n", code_full,
                result & 0xff);
        return 1;
    }
    double qemu_mips = (double)instret / (median(full, REPS) - median(empty, REPS)) / 1e6;
    printf("iss_qemu_mips: %.1f\n", qemu_mips);
    printf("iss_vs_qemu: %.3f\n", mips / qemu_mips);
    return 0;
}
