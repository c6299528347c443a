/* The ONNX conformance suite: ONNX's own backend tests (Debian's
 * libonnx-testdata) through `lightmetal compile` and `lightmetal run`.
 *
 * For every test directory under the data roots (each holding model.onnx and
 * test_data_set_0/{input,output}_N.pb), a worker process:
 *   1. reads the model's op types (protobuf-c) and its interface
 *      (lmfe_inspect_onnx): graph inputs that are not initializers, in
 *      order, and which of them decide shapes;
 *   2. reads input_N.pb (the N-th such input, or the input the tensor names)
 *      and output_N.pb (the N-th graph output);
 *   3. runs `lightmetal compile MODEL -o T/model.lmb --const NAME=input_N.pb`
 *      for the inputs that decide shapes (and `--input-shape NAME=DIMS` with
 *      the test data's dims for inputs whose declared shape is open;
 *      --pad-dynamic for a test named padded_*, whose expected outputs
 *      are padded as the binary's are), then
 *      `lightmetal run T/model.lmb --input NAME=T/in_N.npy ... --output
 *      NAME=T/out_N.npy ...` as child processes (stdout dropped, stderr
 *      captured, each killed with its process group after --timeout
 *      seconds). Every input not given with --const is given to the run
 *      as the test data has it; with --const-inputs every tensor input is
 *      given with --const, so the compiler folds what it can evaluate on
 *      the host and the same expected outputs check those folds;
 *   4. compares every output with ONNX's tolerance: |got - want| <= atol +
 *      rtol * |want| (rtol 1e-3, atol 1e-7), NaN equal to NaN, infinities
 *      equal only to themselves; integers and bool exactly. Shapes must be
 *      equal (a scalar output is written with shape ()).
 * Each test ends as "pass" or one failure class (class_of_message below) with
 * a one-line reason. Up to --jobs workers run at once; a worker that outlives
 * its tests' time limits is killed and the test reported as a timeout, and a
 * worker that crashes is a "harness crash", never the end of the run.
 *
 * Outputs: a summary on stdout ending in the line
 * `onnx_node_tests_passed: N` (the benchmark figure), and on request a TSV
 * (--tsv: set, test, op, expanded, result, reason; one row per test) and the
 * generated Markdown table (--md). Both are sorted and carry no times, so a
 * run that changes nothing regenerates them byte for byte.
 *
 * Exit status: 0 however many tests fail, unless --expect-file FILE is given:
 * then 1 when a test listed there (set/test, one per line, the tests that
 * passed when last recorded) does not pass or is missing; with
 * --update-expected the file is rewritten with the tests that pass (tests
 * this run left out keep their line). 2 for a usage error, 77 when no test
 * data is installed (ctest's skip code).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/file.h"
#include "lightmetal/frontend.h"
#include "lightmetal/lm_replay.h"
#include "lmt_npy.h"
#include "onnx.pb-c.h"

extern char **environ;

#ifndef LM_CLI_PATH
#define LM_CLI_PATH "lightmetal"
#endif
#ifndef LM_ONNX_TESTDATA
#define LM_ONNX_TESTDATA "/usr/share/libonnx-testdata/data"
#endif

#define RTOL 1e-3
#define ATOL 1e-7
#define MAX_ROOTS 16
#define REASON_MAX 400
#define EXIT_SKIP 77

/* The failure classes, in the order the tables list them. */
static const char *const classes[] = {
    "unsupported op", "unsupported attribute", "unsupported element type",
    "sequence/optional types", "data-dependent shape", "invalid model",
    "compile error", /* a compile failure none of the above describes */
    "run error", "mismatch",
    /* values differ in a model that draws random numbers: ONNX's data came
     * from NumPy's generator, which no other implementation reproduces */
    "random values", "timeout", "crash", /* compile or run killed by a signal */
    "test data error", /* the test directory is incomplete, unreadable or contradicts the model */
    "harness crash",   /* the worker process died: a bug of this program */
};
#define CLASS_COUNT (sizeof classes / sizeof classes[0])

typedef struct test_case {
    const char *set; /* the data root's base name: node, simple, ... */
    char *name;      /* the directory's name: test_abs */
    char *dir;
    /* Results. */
    bool done;
    bool pass;
    int cls; /* index into classes when !pass */
    char *reason;
    char *ops;   /* the model's distinct non-Constant op types, sorted, comma-separated */
    char *group; /* the op (or model) the tables list the test under */
    bool expanded;
    double seconds; /* wall time (not in the reports: they stay reproducible) */
} test_case;

typedef struct config {
    const char *roots[MAX_ROOTS];
    size_t root_count;
    const char *filter;
    const char *skip; /* tests whose set/name contains one of its comma-separated
                         parts are not run */
    const char *cli;
    const char *tsv, *md, *expect_file;
    bool update_expected, keep, verbose;
    bool all;          /* fail unless every test passes */
    bool const_inputs; /* every tensor input to compile as --const */
    bool trace;        /* compile with --trace */
    unsigned jobs;
    unsigned timeout; /* seconds per child process */
    double atol;      /* the absolute tolerance (ONNX's ATOL unless --atol) */
    /* Also within this fraction of the output's largest finite magnitude
     * (--scaled-atol; 0: off): the bfloat16 modes' error is relative to the
     * values summed, not to each result. */
    double scaled_atol;
    const char *dtype; /* compile's --dtype (fp32 unless --dtype) */
} config;

/* ------------------------------------------------------------- utilities */

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "onnx_conformance: out of memory\n");
        exit(2);
    }
    return p;
}

static char *xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}

static char *xprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xprintf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* Whether --skip leaves set/name `full` out: it contains one of the
 * comma-separated parts. */
static bool skipped(const config *cf, const char *full) {
    for (const char *p = cf->skip; p && *p;) {
        size_t len = strcspn(p, ",");
        for (const char *f = full; len && *f; f++)
            if (!strncmp(f, p, len)) return true;
        p += len + (p[len] == ',');
    }
    return false;
}

static bool is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Replaces every occurrence of `from` in s (in place, s has `cap` bytes). */
static void replace_all(char *s, size_t cap, const char *from, const char *to) {
    size_t fl = strlen(from), tl = strlen(to);
    if (!fl) return;
    for (char *p = strstr(s, from); p; p = strstr(p + tl, from)) {
        size_t rest = strlen(p + fl);
        if ((size_t)(p - s) + tl + rest + 1 > cap) return;
        memmove(p + tl, p + fl, rest + 1);
        memcpy(p, to, tl);
    }
}

/* One line: tabs and newlines become spaces; at most REASON_MAX bytes. */
static void one_line(char *s) {
    for (char *p = s; *p; p++)
        if (*p == '\t' || *p == '\n' || *p == '\r') *p = ' ';
    size_t n = strlen(s);
    while (n && s[n - 1] == ' ')
        s[--n] = '\0';
    if (n >= REASON_MAX) memcpy(s + REASON_MAX - 4, "...", 4);
}

/* ------------------------------------------------------- failure classes */

static int class_index(const char *name) {
    for (size_t i = 0; i < CLASS_COUNT; i++)
        if (!strcmp(classes[i], name)) return (int)i;
    return -1;
}

/* The class of a compile (or inspect) failure, from its message. */
static int class_of_message(const char *m) {
    if ((strstr(m, "sequence") || strstr(m, "optional") || strstr(m, "map ")) &&
        strstr(m, "types are not supported"))
        return class_index("sequence/optional types");
    const char *op = strstr(m, ": op ");
    if ((op && strstr(op, " is not supported")) || strstr(m, "ops of domain"))
        return class_index("unsupported op");
    if (strstr(m, "element type") || strstr(m, "string tensors") || strstr(m, "casting to") ||
        strstr(m, "casting from") || strstr(m, "string constants"))
        return class_index("unsupported element type");
    if (strstr(m, "data-dependent")) return class_index("data-dependent shape");
    if (strstr(m, "not supported")) return class_index("unsupported attribute");
    if (strstr(m, "invalid") || strstr(m, "malformed") || strstr(m, "truncated") ||
        strstr(m, "is not a") || strstr(m, "cannot parse") || strstr(m, "not a valid"))
        return class_index("invalid model");
    return class_index("compile error");
}

/* ------------------------------------------------------------ worker side
 * Everything below up to the scheduler runs in a forked worker process. */

typedef struct worker {
    const config *cf;
    const test_case *t;
    char tmp[PATH_MAX];
    /* The result. */
    int cls; /* -1: pass */
    char reason[2048];
    char ops[2048];
    bool random; /* the model draws random numbers (read_ops) */
} worker;

static void fail(worker *w, const char *cls, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail(worker *w, const char *cls, const char *fmt, ...) {
    w->cls = class_index(cls);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->reason, sizeof w->reason, fmt, ap);
    va_end(ap);
}

/* Whether node `n` draws random numbers: a generator, or a Dropout given a
 * training_mode input (the tests that give one set it). */
static bool draws_random(const Onnx__NodeProto *n) {
    static const char *const ops[] = {"Bernoulli",        "Multinomial",   "RandomNormal",
                                      "RandomNormalLike", "RandomUniform", "RandomUniformLike"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (n->op_type && !strcmp(n->op_type, ops[i])) return true;
    return n->op_type && !strcmp(n->op_type, "Dropout") && n->n_input >= 3 && n->input[2][0];
}

/* The model's distinct op types of the main graph (Constant included; the
 * grouping decides), sorted and comma-separated, and whether it draws
 * random numbers. Nothing when the file does not parse: the compile says
 * why. */
static void read_ops(worker *w, const char *model) {
    void *bytes;
    size_t size;
    w->ops[0] = '\0';
    w->random = false;
    if (file_read_all(model, &bytes, &size)) return;
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, size, bytes);
    free(bytes);
    if (!m) return;
    if (m->graph) {
        size_t n = m->graph->n_node, k = 0;
        const char **types = xmalloc(n * sizeof *types);
        for (size_t i = 0; i < n; i++) {
            const char *t = m->graph->node[i]->op_type;
            if (t && t[0]) types[k++] = t;
            w->random |= draws_random(m->graph->node[i]);
        }
        qsort(types, k, sizeof *types, cmp_str);
        size_t len = 0;
        for (size_t i = 0; i < k; i++) {
            if (i && !strcmp(types[i], types[i - 1])) continue;
            /* Op type names are identifiers; anything else is kept out of the TSV. */
            bool plain = true;
            for (const char *c = types[i]; *c; c++)
                plain &= isalnum((unsigned char)*c) || *c == '_';
            size_t tl = strlen(types[i]);
            if (!plain || len + tl + 2 >= sizeof w->ops) continue;
            if (len) w->ops[len++] = ',';
            memcpy(w->ops + len, types[i], tl + 1);
            len += tl;
        }
        free(types);
    }
    onnx__model_proto__free_unpacked(m, NULL);
}

/* The .npy dtype of an ONNX element type; LMT_NPY_INVALID when none. */
static lmt_npy_dtype npy_dtype_of(int32_t elem) {
    switch (elem) {
    case 1:
        return LMT_NPY_F4;
    case 2:
        return LMT_NPY_U1;
    case 3:
        return LMT_NPY_I1;
    case 4:
        return LMT_NPY_U2;
    case 5:
        return LMT_NPY_I2;
    case 6:
        return LMT_NPY_I4;
    case 7:
        return LMT_NPY_I8;
    case 9:
        return LMT_NPY_B1;
    case 10:
        return LMT_NPY_F2;
    case 11:
        return LMT_NPY_F8;
    case 12:
        return LMT_NPY_U4;
    case 13:
        return LMT_NPY_U8;
    case 16: /* bfloat16: its bit patterns, as `lightmetal run` reads and writes them */
        return LMT_NPY_U2;
    default:
        return LMT_NPY_INVALID;
    }
}

static bool elem_is_float(int32_t elem) {
    return elem == 1 || elem == 10 || elem == 11 || elem == 16;
}

static bool npy_is_float(lmt_npy_dtype d) {
    return d == LMT_NPY_F4 || d == LMT_NPY_F8 || d == LMT_NPY_F2;
}

static uint64_t count_of(uint32_t rank, const int64_t *dims) {
    uint64_t n = 1;
    for (uint32_t d = 0; d < rank; d++)
        n *= (uint64_t)dims[d];
    return n;
}

/* Writes `tv` as a .npy file. */
static bool write_npy(worker *w, const char *path, const lmfe_tensor_value *tv) {
    lmt_npy_dtype dt = npy_dtype_of(tv->elem_type);
    uint64_t shape[LMFE_MAX_RANK];
    for (uint32_t d = 0; d < tv->rank; d++)
        shape[d] = (uint64_t)tv->dims[d];
    char header[LMT_NPY_HEADER_MAX];
    size_t hl = lmt_npy_header(dt, tv->rank, shape, header);
    if (!hl) {
        fail(w, "test data error", "cannot write %s: no .npy header for this tensor", path);
        return false;
    }
    if (tv->size != count_of(tv->rank, tv->dims) * lmt_npy_dtype_size(dt)) {
        fail(w, "test data error", "input '%s': %" PRIu64 " bytes do not match its shape",
             tv->name ? tv->name : "?", tv->size);
        return false;
    }
    file_chunk chunks[2] = {{header, hl}, {tv->data, (size_t)tv->size}};
    if (file_save_atomic(path, chunks, 2)) {
        fail(w, "test data error", "cannot write %s: %s", path, lm_last_error());
        return false;
    }
    return true;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Runs argv (stdout to /dev/null, stderr to err_path) in its own process
 * group, killed with the group after cf->timeout seconds. Returns the wait
 * status, or -1 when it timed out, -2 when it could not start. */
/* The process group of the child a worker waits for, killed with it when
 * the worker is told to stop (SIGTERM from the scheduler). */
static volatile sig_atomic_t child_group;

static void worker_on_term(int sig) {
    (void)sig;
    if (child_group) kill(-(pid_t)child_group, SIGKILL);
    _exit(4);
}

static int run_child(worker *w, char **argv, const char *err_path) {
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&at, 0);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (rc) {
        fail(w, "harness crash", "cannot start %s: %s", argv[0], strerror(rc));
        return -2;
    }
    child_group = pid;
    double deadline = now_s() + w->cf->timeout;
    for (;;) {
        int status;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) {
            child_group = 0;
            return status;
        }
        if (r < 0 && errno != EINTR) {
            fail(w, "harness crash", "waitpid: %s", strerror(errno));
            kill(-pid, SIGKILL);
            child_group = 0;
            return -2;
        }
        if (now_s() > deadline) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            child_group = 0;
            return -1;
        }
        nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
    }
}

/* The first line of a child's stderr, without the "lightmetal CMD: " and
 * function prefixes, with the test's paths shortened. */
static void child_message(worker *w, const char *err_path, char *dst, size_t cap) {
    dst[0] = '\0';
    FILE *f = fopen(err_path, "r");
    if (!f) return;
    char line[4096] = "";
    /* The last line that looks like an error: the tool prints exactly one. */
    char buf[4096];
    while (fgets(buf, sizeof buf, f))
        if (!strncmp(buf, "lightmetal ", 11) || !line[0]) snprintf(line, sizeof line, "%s", buf);
    fclose(f);
    const char *p = line;
    static const char *const prefixes[] = {
        "lightmetal compile: ", "lightmetal run: ", "lmfe_compile_onnx: "};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (!strncmp(p, prefixes[i], strlen(prefixes[i]))) p += strlen(prefixes[i]);
    /* Cut to the caller's room (a long message keeps its start). */
    size_t len = strlen(p);
    if (len >= cap) len = cap - 1;
    memcpy(dst, p, len);
    dst[len] = '\0';
    char model[PATH_MAX + 16];
    snprintf(model, sizeof model, "%s/model.onnx: ", w->t->dir);
    replace_all(dst, cap, model, "");
    replace_all(dst, cap, w->tmp, "$TMP");
    replace_all(dst, cap, w->t->dir, "$TEST");
    one_line(dst);
}

/* Reads element i of a tensor of ONNX type `elem` as a double / an integer. */
static double elem_f(int32_t elem, const void *data, uint64_t i) {
    switch (elem) {
    case 1: {
        float v;
        memcpy(&v, (const char *)data + 4 * i, 4);
        return v;
    }
    case 11: {
        double v;
        memcpy(&v, (const char *)data + 8 * i, 8);
        return v;
    }
    case 10:
    case 16: {
        uint16_t h;
        memcpy(&h, (const char *)data + 2 * i, 2);
        uint32_t bits = elem == 10 ? lmt_half_to_float_bits(h) : (uint32_t)h << 16;
        float v;
        memcpy(&v, &bits, 4);
        return v;
    }
    default:
        return 0;
    }
}

static int64_t elem_i(int32_t elem, const void *data, uint64_t i) {
    const char *p = data;
    switch (elem) {
    case 2:
        return ((const uint8_t *)p)[i];
    case 9:
        return ((const uint8_t *)p)[i] != 0;
    case 3:
        return ((const int8_t *)p)[i];
    case 4: {
        uint16_t v;
        memcpy(&v, p + 2 * i, 2);
        return v;
    }
    case 5: {
        int16_t v;
        memcpy(&v, p + 2 * i, 2);
        return v;
    }
    case 6: {
        int32_t v;
        memcpy(&v, p + 4 * i, 4);
        return v;
    }
    case 12: {
        uint32_t v;
        memcpy(&v, p + 4 * i, 4);
        return v;
    }
    case 7:
    case 13: {
        int64_t v;
        memcpy(&v, p + 8 * i, 8);
        return v;
    }
    default:
        return 0;
    }
}

/* The ONNX element type of a .npy dtype (for reading both sides alike). */
static int32_t elem_of_npy(lmt_npy_dtype d) {
    for (int32_t e = 1; e <= 13; e++)
        if (npy_dtype_of(e) == d) return e;
    return 0;
}

static size_t elem_size(int32_t elem) {
    lmt_npy_dtype d = npy_dtype_of(elem);
    if (d) return lmt_npy_dtype_size(d);
    return elem == 16 ? 2 : 0;
}

static void format_dims(uint32_t rank, const int64_t *dims, char *dst, size_t cap) {
    uint64_t shape[LMFE_MAX_RANK];
    for (uint32_t d = 0; d < rank && d < LMFE_MAX_RANK; d++)
        shape[d] = (uint64_t)dims[d];
    lmt_npy_format_shape(rank, shape, dst, cap);
}

/* Compares output `name` (the run's .npy at path) with the expected tensor. */
static bool compare_output(worker *w, const char *name, const char *path,
                           const lmfe_tensor_value *want) {
    void *bytes;
    size_t size;
    lmt_npy got;
    if (file_read_all(path, &bytes, &size)) {
        fail(w, "run error", "output '%s' was not written: %s", name, lm_last_error());
        return false;
    }
    if (lmt_npy_parse(bytes, size, &got)) {
        fail(w, "run error", "output '%s': %s", name, lm_last_error());
        free(bytes);
        return false;
    }
    char gs[256], ws[256];
    lmt_npy_format_shape(got.rank, got.shape, gs, sizeof gs);
    format_dims(want->rank, want->dims, ws, sizeof ws);
    bool same = got.rank == want->rank;
    for (uint32_t d = 0; same && d < got.rank; d++)
        same = got.shape[d] == (uint64_t)want->dims[d];
    if (!same) {
        fail(w, "mismatch", "output '%s': shape %s, expected %s", name, gs, ws);
        free(bytes);
        return false;
    }
    int32_t we = want->elem_type;
    /* A bfloat16 output comes as '<u2' bit patterns. */
    bool bf16 = we == 16 && got.dtype == LMT_NPY_U2;
    int32_t ge = bf16 ? 16 : elem_of_npy(got.dtype);
    uint64_t n = got.count;
    if (!elem_size(we) || want->size != count_of(want->rank, want->dims) * elem_size(we)) {
        fail(w, "test data error", "output '%s': expected tensor of type %s is not comparable",
             name, lmfe_elem_type_name(we));
        free(bytes);
        return false;
    }
    if (elem_is_float(we) != (bf16 || npy_is_float(got.dtype))) {
        fail(w, "mismatch", "output '%s': dtype %s, expected %s", name,
             lmt_npy_dtype_descr(got.dtype), lmfe_elem_type_name(we));
        free(bytes);
        return false;
    }
    uint64_t bad = 0, first = 0, worst = 0;
    double max_abs = 0, max_rel = 0, worst_got = 0, worst_want = 0;
    double atol = w->cf->atol;
    if (w->cf->scaled_atol > 0 && elem_is_float(we)) {
        double top = 0;
        for (uint64_t i = 0; i < n; i++) {
            double v = fabs(elem_f(we, want->data, i));
            if (isfinite(v) && v > top) top = v;
        }
        atol += w->cf->scaled_atol * top;
    }
    for (uint64_t i = 0; i < n; i++) {
        bool ok;
        double g, v;
        if (elem_is_float(we)) {
            g = elem_f(ge, got.data, i);
            v = elem_f(we, want->data, i);
            if (isnan(v) || isnan(g))
                ok = isnan(v) && isnan(g);
            else if (isinf(v) || isinf(g))
                ok = g == v;
            else
                ok = fabs(g - v) <= atol + RTOL * fabs(v);
        } else {
            int64_t gi = elem_i(ge, got.data, i), vi = elem_i(we, want->data, i);
            ok = gi == vi;
            g = (double)gi;
            v = (double)vi;
        }
        if (ok) continue;
        if (!bad++) first = i;
        double a = fabs(g - v);
        if (isnan(a)) a = INFINITY;
        double r = v != 0 ? a / fabs(v) : INFINITY;
        if (a > max_abs || bad == 1) {
            max_abs = a;
            worst = i;
            worst_got = g;
            worst_want = v;
        }
        if (r > max_rel) max_rel = r;
    }
    free(bytes);
    if (!bad) return true;
    fail(w, w->random ? "random values" : "mismatch",
         "output '%s': %" PRIu64 " of %" PRIu64 " elements differ (first at %" PRIu64
         "); max abs err %.3g at %" PRIu64 " (got %.7g, want %.7g), max rel err %.3g",
         name, bad, n, first, max_abs, worst, worst_got, worst_want, max_rel);
    return false;
}

/* One tensor the binary takes or gives: a graph input or output, or one
 * element of a sequence (named NAME[i]). */
typedef struct item {
    lmfe_tensor_value tv;
    const lmfe_io_info *io; /* the graph input or output it belongs to */
    char *name;             /* the binary's name for it */
    size_t pb;              /* the input_N.pb / output_N.pb it came from */
} item;

static void items_free(item *items, size_t count) {
    for (size_t i = 0; items && i < count; i++) {
        lmfe_tensor_value_free(&items[i].tv);
        free(items[i].name);
    }
    free(items);
}

static item *item_add(item **items, size_t *count, size_t *cap) {
    if (*count == *cap) {
        size_t c = *cap ? 2 * *cap : 8;
        item *p = realloc(*items, c * sizeof *p);
        if (!p) return NULL;
        *items = p;
        *cap = c;
    }
    item *it = &(*items)[(*count)++];
    memset(it, 0, sizeof *it);
    return it;
}

/* One protobuf varint at *p (advanced past it). */
static bool pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *out) {
    uint64_t v = 0;
    for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

/* Fails the test for a value file the tools could not read. */
static void unreadable(worker *w) {
    char msg[1200];
    snprintf(msg, sizeof msg, "%s", lm_last_error()); /* names the file */
    fail(w,
         class_of_message(msg) == class_index("unsupported element type")
             ? "unsupported element type"
             : "test data error",
         "%s", msg);
}

/* A protobuf message's fields, one at a time: *field, *wire, and for a
 * length-delimited field its bytes (*data, *len); for a varint, *len is
 * the value. False at the end or on malformed bytes (*bad). */
static bool pb_field(const uint8_t **p, const uint8_t *end, unsigned *field, unsigned *wire,
                     const uint8_t **data, uint64_t *len, bool *bad) {
    uint64_t key = 0;
    if (*p >= end) return false;
    *bad = !pb_varint(p, end, &key);
    *field = (unsigned)(key >> 3);
    *wire = (unsigned)(key & 7);
    *data = NULL;
    if (!*bad && *wire == 0) {
        *bad = !pb_varint(p, end, len);
        return !*bad;
    }
    if (!*bad && (*wire == 1 || *wire == 5))
        *len = *wire == 1 ? 8 : 4;
    else if (!*bad && *wire == 2)
        *bad = !pb_varint(p, end, len);
    else
        *bad = true;
    if (*bad || *len > (uint64_t)(end - *p)) {
        *bad = true;
        return false;
    }
    *data = *p;
    *p += *len;
    return true;
}

/* The tensor in serialized TensorProto `bytes` as item `name` (written to
 * a file of its own, then read as the tools read one). */
static bool tensor_item(worker *w, const uint8_t *bytes, size_t size, const lmfe_io_info *io,
                        const char *name, size_t pb, size_t j, bool input, item **items,
                        size_t *count, size_t *cap) {
    char piece[PATH_MAX + 64];
    snprintf(piece, sizeof piece, "%s/%s_%zu_%zu.pb", w->tmp, input ? "in" : "out", pb, j);
    item *it = item_add(items, count, cap);
    if (!it) {
        fail(w, "harness crash", "out of memory");
        return false;
    }
    file_chunk chunk = {bytes, size};
    it->pb = pb;
    it->io = io;
    it->name = xprintf("%s", name);
    if (file_save_atomic(piece, &chunk, 1) || lmfe_read_tensor_pb(piece, &it->tv)) {
        unreadable(w);
        return false;
    }
    return true;
}

/* ONNX's SequenceProto (onnx-data.proto, which the compiler's schema does
 * not include): name = 1, elem_type = 2 (1: tensors), tensor_values = 3.
 * Its tensors become items NAME[i]; *out_len counts them. */
static bool sequence_items(worker *w, const uint8_t *p, const uint8_t *end, const char *path,
                           const lmfe_io_info *io, size_t pb, bool input, item **items,
                           size_t *count, size_t *cap, size_t *out_len) {
    unsigned field, wire;
    const uint8_t *data;
    uint64_t len, elem_type = 1;
    bool bad = false;
    size_t j = 0;
    while (pb_field(&p, end, &field, &wire, &data, &len, &bad)) {
        if (field == 2 && wire == 0) elem_type = len;
        if (field != 3 || wire != 2) continue;
        char name[300];
        snprintf(name, sizeof name, "%s[%zu]", io->name, j);
        if (!tensor_item(w, data, (size_t)len, io, name, pb, j, input, items, count, cap))
            return false;
        j++;
    }
    if (bad) {
        fail(w, "test data error", "%s: not a SequenceProto", path);
        return false;
    }
    if (elem_type != 1) {
        fail(w, "sequence/optional types", "%s: a sequence of non-tensors (elem_type %d)", path,
             (int)elem_type);
        return false;
    }
    *out_len = j;
    return true;
}

/* A graph input or output's length in the data: absent (an empty optional). */
#define ABSENT ((size_t)-2)

/* Reads value file `path`, the pb-th input or output (`ios`, io_count of
 * them; a tensor naming another goes to that one), as items: a TensorProto;
 * for a declared sequence a SequenceProto; for an optional an
 * OptionalProto (name = 1, elem_type = 2, tensor_value = 3,
 * sequence_value = 5), empty or holding one of those. lengths[k] records a
 * sequence's length, or ABSENT. */
static bool read_items(worker *w, const char *path, bool input, const lmfe_io_info *ios,
                       size_t io_count, size_t pb, item **items, size_t *count, size_t *cap,
                       size_t *lengths) {
    const lmfe_io_info *io = &ios[pb];
    if (!io->sequence && !io->optional) {
        item *it = item_add(items, count, cap);
        if (!it) {
            fail(w, "harness crash", "out of memory");
            return false;
        }
        it->pb = pb;
        if (lmfe_read_tensor_pb(path, &it->tv)) {
            unreadable(w);
            return false;
        }
        for (size_t k = 0; it->tv.name && k < io_count; k++)
            if (!strcmp(it->tv.name, ios[k].name) && !ios[k].sequence && !ios[k].optional)
                io = &ios[k];
        it->io = io;
        it->name = xprintf("%s", io->name);
        return true;
    }
    void *bytes;
    size_t size;
    if (file_read_all(path, &bytes, &size)) {
        fail(w, "test data error", "%s", lm_last_error());
        return false;
    }
    const uint8_t *p = bytes, *end = p + size, *data, *held = NULL;
    unsigned field, wire, held_field = 0;
    uint64_t len, held_len = 0, elem_type = 0;
    bool bad = false, ok = true;
    /* The name first: it says which input or output this is. */
    while (pb_field(&p, end, &field, &wire, &data, &len, &bad)) {
        if (field == 1 && wire == 2)
            for (size_t k = 0; k < io_count; k++)
                if (strlen(ios[k].name) == len && !memcmp(ios[k].name, data, len)) io = &ios[k];
        if (io->optional && field == 2 && wire == 0) elem_type = len;
        if (io->optional && (field == 3 || field == 5) && wire == 2) {
            held = data;
            held_len = len;
            held_field = field;
        }
    }
    size_t k = (size_t)(io - ios);
    if (bad) {
        fail(w, "test data error", "%s: not a %s", path,
             io->optional ? "OptionalProto" : "SequenceProto");
        ok = false;
    } else if (!io->optional) {
        ok = sequence_items(w, bytes, end, path, io, pb, input, items, count, cap, &lengths[k]);
    } else if (!held) {
        if (elem_type > 1 && elem_type != 3) {
            fail(w, "sequence/optional types", "%s: an optional of elem_type %d", path,
                 (int)elem_type);
            ok = false;
        }
        lengths[k] = ABSENT;
    } else if (held_field == 3) {
        ok = tensor_item(w, held, (size_t)held_len, io, io->name, pb, 0, input, items, count, cap);
    } else {
        ok = sequence_items(w, held, held + held_len, path, io, pb, input, items, count, cap,
                            &lengths[k]);
    }
    free(bytes);
    return ok;
}

/* Runs one test; the result in w->cls / w->reason. */
/* Whether input `io` goes to compile as a constant (--const), not to the run:
 * an input that decides shapes (or whose padded form --pad-dynamic would
 * give: the tests expect the exact-size result), or any tensor input with
 * --const-inputs. */
static bool given_const(const config *cf, const lmfe_io_info *io) {
    return io->needs_value || io->padded_size ||
           (cf->const_inputs && !io->sequence && !io->optional);
}

static void run_test(worker *w) {
    const config *cf = w->cf;
    const test_case *t = w->t;
    char model[PATH_MAX], data[PATH_MAX], path[PATH_MAX + 64];
    snprintf(model, sizeof model, "%s/model.onnx", t->dir);
    snprintf(data, sizeof data, "%s/test_data_set_0", t->dir);
    read_ops(w, model);
    if (!is_file(model)) {
        fail(w, "test data error", "no model.onnx");
        return;
    }
    if (!is_dir(data)) {
        fail(w, "test data error", "no test_data_set_0 directory");
        return;
    }
    lmfe_model_info info;
    if (lmfe_inspect_onnx(model, &info)) {
        char msg[2048];
        snprintf(msg, sizeof msg, "%s", lm_last_error());
        const char *p = msg;
        if (!strncmp(p, "lmfe_inspect_onnx: ", 19)) p += 19;
        snprintf(w->reason, sizeof w->reason, "%s", p);
        snprintf(path, sizeof path, "%s: ", model);
        replace_all(w->reason, sizeof w->reason, path, "");
        w->cls = class_of_message(w->reason);
        return;
    }
    /* The expected inputs and outputs, as the binary's tensors: a sequence
     * (its declared type says so) is one tensor per element, NAME[i]. */
    item *ins = NULL, *outs = NULL;
    /* Per graph input or output that is a sequence: its length in the data. */
    size_t *in_len = calloc(info.input_count + 1, sizeof *in_len),
           *out_len = calloc(info.output_count + 1, sizeof *out_len);
    size_t nin = 0, nout = 0, npb_in = 0, npb_out = 0, cap_in = 0, cap_out = 0;
    char **argv = NULL, **owned = NULL;
    size_t owned_count = 0;
    if (!in_len || !out_len) {
        fail(w, "harness crash", "out of memory");
        goto done;
    }
    for (size_t k = 0; k < info.input_count; k++)
        in_len[k] = SIZE_MAX;
    for (;; npb_in++) {
        snprintf(path, sizeof path, "%s/input_%zu.pb", data, npb_in);
        if (!is_file(path)) break;
        if (npb_in == info.input_count) {
            fail(w, "test data error", "input_%zu.pb: the model has only %zu inputs", npb_in,
                 info.input_count);
            goto done;
        }
        /* ONNX's order: the N-th input that is not an initializer; a value
         * naming one of the inputs goes to that one. */
        if (!read_items(w, path, true, info.inputs, info.input_count, npb_in, &ins, &nin, &cap_in,
                        in_len))
            goto done;
    }
    for (;; npb_out++) {
        snprintf(path, sizeof path, "%s/output_%zu.pb", data, npb_out);
        if (!is_file(path)) break;
        if (npb_out == info.output_count) {
            fail(w, "test data error", "output_%zu.pb: the model has only %zu outputs", npb_out,
                 info.output_count);
            goto done;
        }
        if (!read_items(w, path, false, info.outputs, info.output_count, npb_out, &outs, &nout,
                        &cap_out, out_len))
            goto done;
    }
    if (npb_out < info.output_count) {
        fail(w, "test data error", "output_%zu.pb is missing (model outputs: %zu)", npb_out,
             info.output_count);
        goto done;
    }
    for (size_t i = 0; i < info.output_count; i++)
        if (!npy_dtype_of(info.outputs[i].elem_type) && info.outputs[i].elem_type != 0 &&
            !info.outputs[i].sequence && !info.outputs[i].optional) {
            fail(w, "unsupported element type", "output '%s': element type %s",
                 info.outputs[i].name, lmfe_elem_type_name(info.outputs[i].elem_type));
            goto done;
        }
    argv = calloc(4 * (nin + nout) + 4 * info.input_count + 20, sizeof *argv);
    owned = calloc(2 * (nin + nout) + 2 * info.input_count + 4, sizeof *owned);
    if (!argv || !owned) {
        fail(w, "harness crash", "out of memory");
        goto done;
    }

    /* Compile. */
    size_t ac = 0;
    argv[ac++] = (char *)cf->cli;
    argv[ac++] = "compile";
    argv[ac++] = model;
    argv[ac++] = "-q";
    argv[ac++] = "--dtype"; /* conformance is fp32, said here */
    argv[ac++] = (char *)cf->dtype;
    if (cf->trace) argv[ac++] = "--trace";
    /* A model whose outputs are padded (a detector's selections): its
     * expected outputs are padded as the binary's are, NaN or -1. */
    if (strstr(t->name, "padded_")) argv[ac++] = "--pad-dynamic";
    argv[ac++] = "-o";
    char lmb[PATH_MAX + 16];
    snprintf(lmb, sizeof lmb, "%s/model.lmb", w->tmp);
    argv[ac++] = lmb;
    for (size_t k = 0; k < info.input_count; k++) {
        if (in_len[k] == ABSENT) {
            argv[ac++] = "--absent";
            argv[ac++] = (char *)info.inputs[k].name;
            continue;
        }
        if (!info.inputs[k].sequence || in_len[k] == SIZE_MAX) continue;
        argv[ac++] = "--sequence";
        argv[ac++] = owned[owned_count++] = xprintf("%s=%zu", info.inputs[k].name, in_len[k]);
    }
    for (size_t i = 0; i < nin; i++) {
        const lmfe_io_info *io = ins[i].io;
        const lmfe_tensor_value *tv = &ins[i].tv;
        if (given_const(cf, io)) {
            argv[ac++] = "--const";
            argv[ac++] = owned[owned_count++] =
                xprintf("%s=%s/input_%zu.pb", ins[i].name, data, ins[i].pb);
            continue;
        }
        /* Dims the model leaves open (symbolic or unknown) are the test
         * data's. */
        bool open = io->rank < 0;
        for (int32_t d = 0; !open && d < io->rank; d++)
            open = io->dims[d] < 0;
        bool expressible = tv->rank > 0 && (io->rank < 0 || io->rank == (int32_t)tv->rank);
        for (uint32_t d = 0; d < tv->rank; d++)
            expressible &= tv->dims[d] >= 0;
        /* A shape the model fixes and the test data contradicts: the test
         * cannot pass as written (a scalar goes as (1,) where that is
         * declared). */
        bool contradicts = !open && io->rank != (int32_t)tv->rank &&
                           !(io->rank == 1 && io->dims[0] == 1 && tv->rank == 0);
        for (int32_t d = 0; !open && !contradicts && d < io->rank; d++)
            contradicts = io->dims[d] != tv->dims[d];
        if (contradicts) {
            char ds[128], gs[128];
            format_dims((uint32_t)io->rank, io->dims, ds, sizeof ds);
            format_dims(tv->rank, tv->dims, gs, sizeof gs);
            fail(w, "test data error",
                 "input_%zu.pb: the model declares input '%s' of shape %s, the test data has %s",
                 ins[i].pb, ins[i].name, ds, gs);
            goto done;
        }
        if (open && expressible) {
            char dims[256] = "";
            size_t dl = 0;
            for (uint32_t d = 0; d < tv->rank && dl < sizeof dims - 24; d++)
                dl += (size_t)snprintf(dims + dl, sizeof dims - dl, "%s%" PRId64, d ? "x" : "",
                                       tv->dims[d]);
            argv[ac++] = "--input-shape";
            argv[ac++] = owned[owned_count++] = xprintf("%s=%s", ins[i].name, dims);
        }
    }
    argv[ac] = NULL;
    char err_path[PATH_MAX + 16];
    snprintf(err_path, sizeof err_path, "%s/compile.err", w->tmp);
    int st = run_child(w, argv, err_path);
    char msg[2048];
    if (st == -2) goto done;
    if (st == -1) {
        fail(w, "timeout", "lightmetal compile ran longer than %u s", cf->timeout);
        goto done;
    }
    if (WIFSIGNALED(st)) {
        fail(w, "crash", "lightmetal compile killed by signal %d", WTERMSIG(st));
        goto done;
    }
    if (WEXITSTATUS(st) != 0) {
        child_message(w, err_path, msg, sizeof msg);
        w->cls = class_of_message(msg);
        snprintf(w->reason, sizeof w->reason, "%s", msg[0] ? msg : "failed with no message");
        goto done;
    }

    /* Run: every input that was not folded in, as the test data has it
     * (a compiled binary takes each declared input, and `lightmetal run`
     * takes a scalar for a one-element buffer), and every output. */
    ac = 0;
    argv[ac++] = (char *)cf->cli;
    argv[ac++] = "run";
    argv[ac++] = lmb;
    for (size_t i = 0; i < nin; i++) {
        if (given_const(cf, ins[i].io)) continue;
        if (!npy_dtype_of(ins[i].tv.elem_type)) {
            fail(w, "unsupported element type", "input '%s': element type %s has no .npy form",
                 ins[i].name, lmfe_elem_type_name(ins[i].tv.elem_type));
            goto done;
        }
        snprintf(path, sizeof path, "%s/in_%zu.npy", w->tmp, i);
        if (!write_npy(w, path, &ins[i].tv)) goto done;
        argv[ac++] = "--input";
        argv[ac++] = owned[owned_count++] = xprintf("%s=%s", ins[i].name, path);
    }
    for (size_t i = 0; i < nout; i++) {
        argv[ac++] = "--output";
        argv[ac++] = owned[owned_count++] = xprintf("%s=%s/out_%zu.npy", outs[i].name, w->tmp, i);
    }
    argv[ac] = NULL;
    snprintf(err_path, sizeof err_path, "%s/run.err", w->tmp);
    st = run_child(w, argv, err_path);
    if (st == -2) goto done;
    if (st == -1) {
        fail(w, "timeout", "lightmetal run ran longer than %u s", cf->timeout);
        goto done;
    }
    if (WIFSIGNALED(st)) {
        fail(w, "crash", "lightmetal run killed by signal %d", WTERMSIG(st));
        goto done;
    }
    if (WEXITSTATUS(st) != 0) {
        child_message(w, err_path, msg, sizeof msg);
        fail(w, "run error", "%s", msg[0] ? msg : "failed with no message");
        goto done;
    }

    /* Compare: as many outputs as expected (a sequence's length too), each
     * equal. */
    lm_replay *r = NULL;
    if (lm_replay_open_file(lmb, &r)) {
        fail(w, "run error", "%s", lm_last_error());
        goto done;
    }
    size_t given = 0;
    for (uint32_t i = 0; i < lm_replay_buffer_count(r); i++) {
        lm_replay_buffer_info bi;
        given += !lm_replay_buffer_info_at(r, i, &bi) && bi.role == LM_BUFFER_ROLE_OUTPUT;
    }
    lm_replay_close(r);
    if (given != nout) {
        fail(w, "mismatch", "the binary gives %zu outputs, the test expects %zu", given, nout);
        goto done;
    }
    for (size_t i = 0; i < nout; i++) {
        snprintf(path, sizeof path, "%s/out_%zu.npy", w->tmp, i);
        if (!compare_output(w, outs[i].name, path, &outs[i].tv)) break;
    }

done:
    items_free(ins, nin);
    items_free(outs, nout);
    free(in_len);
    free(out_len);
    for (size_t i = 0; i < owned_count; i++)
        free(owned[i]);
    free(argv);
    free(owned);
    lmfe_model_info_free(&info);
}

static void remove_tree(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char path[PATH_MAX + 300];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

/* The worker's entry: runs the test, writes "ops\tclass\treason\n" to fd. */
static void worker_main(const config *cf, const test_case *t, int fd) {
    signal(SIGTERM, worker_on_term);
    signal(SIGINT, SIG_IGN); /* the scheduler decides; it sends SIGTERM */
    worker *w = calloc(1, sizeof *w);
    if (!w) _exit(3);
    w->cf = cf;
    w->t = t;
    w->cls = -1;
    const char *tmpdir = getenv("TMPDIR");
    snprintf(w->tmp, sizeof w->tmp, "%s/lm-onnx-conf.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    if (!mkdtemp(w->tmp)) {
        fail(w, "harness crash", "cannot make a temporary directory: %s", strerror(errno));
        w->tmp[0] = '\0';
    } else {
        run_test(w);
        char prefix[PATH_MAX + 64];
        snprintf(prefix, sizeof prefix, "lmfe_read_tensor_pb: %s/test_data_set_0/", t->dir);
        replace_all(w->reason, sizeof w->reason, prefix, "");
        replace_all(w->reason, sizeof w->reason, w->tmp, "$TMP");
        replace_all(w->reason, sizeof w->reason, t->dir, "$TEST");
        if (!cf->keep)
            remove_tree(w->tmp);
        else if (cf->verbose)
            fprintf(stderr, "%s/%s: kept %s\n", t->set, t->name, w->tmp);
    }
    one_line(w->reason);
    char *line = xprintf("%s\t%s\t%s\n", w->ops, w->cls < 0 ? "pass" : classes[w->cls], w->reason);
    size_t n = strlen(line), off = 0;
    while (off < n) {
        ssize_t k = write(fd, line + off, n - off);
        if (k <= 0 && errno != EINTR) break;
        if (k > 0) off += (size_t)k;
    }
    _exit(0);
}

/* ------------------------------------------------------------- scheduler */

typedef struct slot {
    pid_t pid;
    int fd;
    size_t test;
    double started, deadline;
    char *buf;
    size_t len, cap;
} slot;

static void slot_read(slot *s) {
    for (;;) {
        if (s->len + 512 > s->cap) {
            s->cap = s->cap ? 2 * s->cap : 4096;
            char *nb = realloc(s->buf, s->cap);
            if (!nb) return;
            s->buf = nb;
        }
        ssize_t k = read(s->fd, s->buf + s->len, s->cap - s->len - 1);
        if (k > 0) {
            s->len += (size_t)k;
            continue;
        }
        if (k < 0 && errno == EINTR) continue;
        break;
    }
    if (s->buf) s->buf[s->len] = '\0';
}

static void record(test_case *t, const char *line, int status, bool timed_out, unsigned timeout) {
    t->done = true;
    char *copy = xstrdup(line ? line : "");
    char *tab1 = strchr(copy, '\t'), *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
    if (tab2) {
        *tab1 = *tab2 = '\0';
        char *nl = strchr(tab2 + 1, '\n');
        if (nl) *nl = '\0';
        t->ops = xstrdup(copy);
        t->pass = !strcmp(tab1 + 1, "pass");
        t->cls = class_index(tab1 + 1);
        t->reason = xstrdup(tab2 + 1);
        if (!t->pass && t->cls < 0) {
            t->cls = class_index("harness crash");
            free(t->reason);
            t->reason = xprintf("unknown result '%s'", tab1 + 1);
        }
    } else {
        t->ops = xstrdup("");
        t->pass = false;
        if (timed_out) {
            t->cls = class_index("timeout");
            t->reason = xprintf("the test ran longer than %u s", 2 * timeout + 60);
        } else {
            t->cls = class_index("harness crash");
            t->reason = WIFSIGNALED(status)
                            ? xprintf("worker killed by signal %d", WTERMSIG(status))
                            : xprintf("worker exited with status %d", WEXITSTATUS(status));
        }
    }
    free(copy);
}

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig) {
    stop_requested = sig;
}

/* Runs the tests in up to cf->jobs workers. Returns false when interrupted
 * (SIGINT, SIGTERM): the workers and their tools are stopped first. */
static bool run_all(const config *cf, test_case *tests, size_t n) {
    signal(SIGINT, on_stop);
    signal(SIGTERM, on_stop);
    slot *slots = calloc(cf->jobs, sizeof *slots);
    if (!slots) exit(2);
    for (unsigned j = 0; j < cf->jobs; j++)
        slots[j].pid = 0;
    size_t next = 0, finished = 0, passed = 0;
    unsigned running = 0;
    double t0 = now_s();
    fflush(stdout);
    fflush(stderr);
    while ((next < n || running) && !stop_requested) {
        for (unsigned j = 0; j < cf->jobs && next < n; j++) {
            if (slots[j].pid) continue;
            int fds[2];
            if (pipe(fds)) {
                perror("onnx_conformance: pipe");
                exit(2);
            }
            pid_t pid = fork();
            if (pid < 0) {
                perror("onnx_conformance: fork");
                exit(2);
            }
            if (pid == 0) {
                close(fds[0]);
                worker_main(cf, &tests[next], fds[1]);
            }
            close(fds[1]);
            /* The read buffer stays with the slot from test to test. */
            slots[j].pid = pid;
            slots[j].fd = fds[0];
            slots[j].test = next++;
            slots[j].started = now_s();
            slots[j].deadline = slots[j].started + 2.0 * cf->timeout + 60;
            slots[j].len = 0;
            running++;
        }
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        bool timed_out = false;
        unsigned j = 0;
        if (pid <= 0) {
            double now = now_s();
            for (j = 0; j < cf->jobs; j++)
                if (slots[j].pid && now > slots[j].deadline) break;
            if (j == cf->jobs) {
                nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
                continue;
            }
            kill(slots[j].pid, SIGKILL);
            waitpid(slots[j].pid, &status, 0);
            timed_out = true;
        } else {
            for (j = 0; j < cf->jobs; j++)
                if (slots[j].pid == pid) break;
            if (j == cf->jobs) continue;
        }
        slot *s = &slots[j];
        slot_read(s);
        close(s->fd);
        test_case *t = &tests[s->test];
        record(t, s->buf, status, timed_out, cf->timeout);
        t->seconds = now_s() - s->started;
        s->pid = 0;
        s->len = 0;
        running--;
        finished++;
        passed += t->pass;
        if (cf->verbose || (!t->pass && t->cls == class_index("harness crash")))
            printf("%s/%s: %s%s%s\n", t->set, t->name, t->pass ? "pass" : classes[t->cls],
                   t->pass ? "" : ": ", t->pass ? "" : t->reason);
        if (finished % 100 == 0 || finished == n)
            printf("[%zu/%zu] %zu passed, %.0f s\n", finished, n, passed, now_s() - t0);
        fflush(stdout);
    }
    bool stopped = stop_requested != 0;
    for (unsigned j = 0; j < cf->jobs; j++) {
        if (slots[j].pid) {
            kill(slots[j].pid, SIGTERM);
            waitpid(slots[j].pid, NULL, 0);
            close(slots[j].fd);
        }
        free(slots[j].buf);
    }
    free(slots);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    return !stopped;
}

/* ------------------------------------------------------------- grouping */

/* Lowercase, without underscores. */
static void squash(const char *s, char *dst, size_t cap) {
    size_t k = 0;
    for (; *s && k + 1 < cap; s++)
        if (*s != '_') dst[k++] = (char)tolower((unsigned char)*s);
    dst[k] = '\0';
}

/* Test-name words of ops whose name does not appear in their tests' names. */
static const char *const aliases[][2] = {
    {"sce", "SoftmaxCrossEntropyLoss"},   {"nllloss", "NegativeLogLikelihoodLoss"},
    {"mvn", "MeanVarianceNormalization"}, {"greaterequal", "GreaterOrEqual"},
    {"lessequal", "LessOrEqual"},
};

/* The op a test belongs to: its one non-Constant op type; for a test of
 * several ops (a function's "_expanded" decomposition, or a model) the op
 * whose name is the longest prefix of the test's name (in any case, without
 * underscores) among the ops that have single-op tests; else the test's
 * own name (a model). */
static void assign_groups(test_case *tests, size_t n) {
    const char **known = xmalloc((n + 1) * sizeof *known);
    size_t nk = 0;
    for (size_t i = 0; i < n; i++) {
        test_case *t = &tests[i];
        t->expanded = strstr(t->name, "_expanded") != NULL;
        const char *ops = t->ops ? t->ops : "";
        /* Count non-Constant op types. */
        char buf[2048];
        snprintf(buf, sizeof buf, "%s", ops);
        size_t count = 0;
        const char *only = NULL;
        bool has_constant = false;
        for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
            if (!strcmp(tok, "Constant")) {
                has_constant = true;
                continue;
            }
            count++;
            only = ops + (tok - buf);
        }
        if (!t->expanded && count == 1) {
            size_t len = strcspn(only, ",");
            t->group = xmalloc(len + 1);
            memcpy(t->group, only, len);
            t->group[len] = '\0';
            known[nk++] = t->group;
        } else if (!t->expanded && count == 0 && has_constant) {
            t->group = xstrdup("Constant");
        }
    }
    for (size_t i = 0; i < n; i++) {
        test_case *t = &tests[i];
        if (t->group) continue;
        const char *name = t->name;
        if (!strncmp(name, "test_", 5)) name += 5;
        if (!strncmp(name, "operator_", 9)) name += 9;
        char sq[512], ko[256];
        squash(name, sq, sizeof sq);
        const char *best = NULL;
        size_t best_len = 0;
        for (size_t k = 0; k < nk; k++) {
            squash(known[k], ko, sizeof ko);
            size_t l = strlen(ko);
            if (l > best_len && !strncmp(sq, ko, l)) {
                best = known[k];
                best_len = l;
            }
        }
        for (size_t a = 0; a < sizeof aliases / sizeof aliases[0]; a++) {
            size_t l = strlen(aliases[a][0]);
            if (l > best_len && !strncmp(sq, aliases[a][0], l)) {
                best = aliases[a][1];
                best_len = l;
            }
        }
        t->group = best ? xstrdup(best) : xstrdup(t->name);
    }
    free(known);
}

/* ----------------------------------------------------------- discovery */

static int cmp_test(const void *a, const void *b) {
    const test_case *x = a, *y = b;
    int c = strcmp(x->set, y->set);
    return c ? c : strcmp(x->name, y->name);
}

static test_case *discover(const config *cf, size_t *out_n) {
    size_t n = 0, cap = 0;
    test_case *tests = NULL;
    for (size_t r = 0; r < cf->root_count; r++) {
        const char *root = cf->roots[r];
        const char *base = strrchr(root, '/');
        base = base && base[1] ? base + 1 : root;
        DIR *d = opendir(root);
        if (!d) {
            fprintf(stderr, "onnx_conformance: cannot read %s: %s\n", root, strerror(errno));
            continue;
        }
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            char *dir = xprintf("%s/%s", root, e->d_name);
            char *full = xprintf("%s/%s", base, e->d_name);
            bool keep =
                is_dir(dir) && (!cf->filter || strstr(full, cf->filter)) && !skipped(cf, full);
            free(full);
            if (!keep) {
                free(dir);
                continue;
            }
            if (n == cap) {
                cap = cap ? 2 * cap : 256;
                tests = realloc(tests, cap * sizeof *tests);
                if (!tests) exit(2);
            }
            tests[n++] = (test_case){.set = base, .name = xstrdup(e->d_name), .dir = dir};
        }
        closedir(d);
    }
    if (n) qsort(tests, n, sizeof *tests, cmp_test);
    *out_n = n;
    return tests;
}

/* ------------------------------------------------------------- reports */

static void write_tsv(const char *path, const test_case *tests, size_t n) {
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "onnx_conformance: cannot write %s: %s\n", path, strerror(errno));
        return;
    }
    fprintf(f, "set\ttest\top\texpanded\tresult\treason\n");
    for (size_t i = 0; i < n; i++) {
        const test_case *t = &tests[i];
        fprintf(f, "%s\t%s\t%s\t%d\t%s\t%s\n", t->set, t->name, t->group, t->expanded,
                t->pass ? "pass" : classes[t->cls], t->pass ? "" : t->reason);
    }
    fclose(f);
}

/* Markdown-safe in a table cell: '|', '<', '*' and '`' escaped ('_' inside
 * words is no emphasis in GitHub's Markdown); at most `max` bytes. */
static void md_text(FILE *f, const char *s, size_t max) {
    size_t k = 0;
    for (; *s && k < max; s++, k++) {
        if (*s == '|')
            fputs("\\|", f);
        else if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '*' || *s == '`')
            fprintf(f, "\\%c", *s);
        else
            fputc(*s, f);
    }
    if (*s) fputs("...", f);
}

/* The op a failure of class "unsupported op" names ("op X is not supported",
 * or "ops of domain 'D'" as "domain D"), into dst. */
static void missing_op(const char *reason, char *dst, size_t cap) {
    const char *p = strstr(reason, ": op "), *e;
    if (p && (e = strstr(p + 5, " is not supported")) && e - (p + 5) < (ptrdiff_t)cap) {
        memcpy(dst, p + 5, (size_t)(e - (p + 5)));
        dst[e - (p + 5)] = '\0';
    } else if ((p = strstr(reason, "ops of domain '")) && (e = strchr(p + 15, '\'')) &&
               e - (p + 15) + 8 < (ptrdiff_t)cap) {
        snprintf(dst, cap, "domain %.*s", (int)(e - (p + 15)), p + 15);
    } else {
        snprintf(dst, cap, "?");
    }
}

typedef struct missing_row {
    char name[128];
    unsigned node, other;
} missing_row;

static int cmp_missing(const void *a, const void *b) {
    const missing_row *x = a, *y = b;
    unsigned nx = x->node + x->other, ny = y->node + y->other;
    if (nx != ny) return nx > ny ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The ops whose absence fails tests, most tests first. Returns the count;
 * *out is malloc'ed. */
static size_t missing_ops(const test_case *tests, size_t n, missing_row **out) {
    missing_row *rows = xmalloc((n + 1) * sizeof *rows);
    size_t nr = 0;
    int unsupported = class_index("unsupported op");
    for (size_t i = 0; i < n; i++) {
        if (tests[i].pass || tests[i].cls != unsupported) continue;
        char name[128];
        missing_op(tests[i].reason, name, sizeof name);
        size_t r = 0;
        while (r < nr && strcmp(rows[r].name, name))
            r++;
        if (r == nr) {
            memset(&rows[nr], 0, sizeof rows[nr]);
            snprintf(rows[nr++].name, sizeof rows[0].name, "%s", name);
        }
        if (!strcmp(tests[i].set, "node"))
            rows[r].node++;
        else
            rows[r].other++;
    }
    if (nr) qsort(rows, nr, sizeof *rows, cmp_missing);
    *out = rows;
    return nr;
}

typedef struct group_row {
    const char *name;
    unsigned pass, total, xpass, xtotal, opass, ototal; /* node, node expanded, other sets */
    unsigned cls_count[CLASS_COUNT];
    const test_case *example[CLASS_COUNT];
} group_row;

static int cmp_group_row(const void *a, const void *b) {
    return strcmp(((const group_row *)a)->name, ((const group_row *)b)->name);
}

/* Failures whose cause was checked by hand: expected values that disagree
 * with the ONNX spec or with the model they come with, or a limit of this
 * compiler. The report says why under "Failures explained"; they still count
 * as failures.
 * A test matches an entry whose text begins its set/name. */
static const struct {
    const char *test, *why;
} explained[] = {
    {"node/test_adam_multiple",
     "The expected X1_new and X2_new were made with epsilon 0.01 (x - r * v_new / "
     "(sqrt(h_new) + 0.01)), but the node has no epsilon attribute, so the spec's default "
     "1e-6 applies; V and H, which do not use epsilon, match, and so do X1_new and X2_new "
     "computed by hand with 1e-6."},
    {"node/test_cast_FLOAT_to_BFLOAT16",
     "The expected values are float32 truncated to bfloat16; this compiler rounds to "
     "nearest even. The differing elements are exactly those where the two disagree, each "
     "by one unit in the last place."},
    {"pytorch-operator/test_operator_add",
     "float64 models: the device computes float64 values in float32 (the compiler says so "
     "when compiling), and these tests' values, far beyond float32's range (up to 1e224), "
     "become infinities."},
};

/* The "Failures explained" section: each entry of `explained` that a failing
 * test matches, with the tests it covers. */
static void write_explained(FILE *f, const test_case *tests, size_t n) {
    bool heading = false;
    for (size_t e = 0; e < sizeof explained / sizeof explained[0]; e++) {
        size_t shown = 0;
        for (size_t i = 0; i < n; i++) {
            const test_case *t = &tests[i];
            char full[512];
            snprintf(full, sizeof full, "%s/%s", t->set, t->name);
            if (t->pass || strncmp(full, explained[e].test, strlen(explained[e].test))) continue;
            if (!heading)
                fprintf(f, "\n## Failures explained\n\n"
                           "Failing tests whose cause was checked by hand: expected values that "
                           "disagree with\nthe ONNX spec or with the model they come with, or a "
                           "limit of this compiler.\nThey count as failures above.\n\n");
            heading = true;
            fprintf(f, "%s%s", shown++ ? ", " : "- ", full);
        }
        if (shown) fprintf(f, ": %s\n", explained[e].why);
    }
}

static void write_md(const char *path, const config *cf, const test_case *tests, size_t n) {
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "onnx_conformance: cannot write %s: %s\n", path, strerror(errno));
        return;
    }
    fprintf(f,
            "# ONNX conformance\n\n"
            "Generated by `make onnx-conformance` (tests/onnx/onnx_conformance.c); do not edit.\n\n"
            "The test data is ONNX 1.12.0's backend test suite as Debian's `libonnx-testdata`\n"
            "ships it. Each test's model is compiled with `lightmetal compile` in %s mode\n"
            "(inputs that decide shapes are given with `--const`), replayed with\n"
            "`lightmetal run` on test_data_set_0's inputs, and every output is compared with\n"
            "the expected one at ONNX's tolerance: |got - want| <= %g + %g * |want|, NaN\n"
            "equal to NaN, infinities equal to themselves; integers and bool exactly. Shapes\n"
            "must be equal.\n\n"
            "Inputs whose shape the model leaves open get the test data's shape\n"
            "(`--input-shape`); every other input goes to `lightmetal run` as the test data\n"
            "has it. Failure classes come from the tools' messages:\n"
            "\"compile error\" is a compile failure no other class describes, \"crash\" a tool\n"
            "killed by a signal, \"test data error\" a test directory this program cannot use\n"
            "(or whose inputs contradict the shapes the model declares), \"random values\"\n"
            "values that differ in a model drawing random numbers (shapes and types agree;\n"
            "ONNX's expected values came from NumPy's generator, which its own spec says\n"
            "other implementations do not reproduce).\n\n"
            "To regenerate: `make onnx-conformance`. It fails when a test listed in\n"
            "tests/onnx/expected_pass.txt (the regression guard CI runs) no longer passes;\n"
            "`make onnx-conformance ONNX_ARGS=--update-expected` records the tests that pass.\n\n",
            cf->dtype, cf->atol, RTOL);
    if (cf->scaled_atol > 0)
        fprintf(f, "Floats may also differ by %g times their output's largest magnitude.\n\n",
                cf->scaled_atol);
    if (cf->filter) fprintf(f, "Only the tests whose name contains `%s`.\n\n", cf->filter);
    if (cf->skip) fprintf(f, "Not the tests whose name contains `%s`.\n\n", cf->skip);

    /* Totals per set. */
    fprintf(f, "## Totals\n\n| set | passed | total |\n|---|---:|---:|\n");
    unsigned all_pass = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        unsigned p = 0;
        for (; j < n && !strcmp(tests[j].set, tests[i].set); j++)
            p += tests[j].pass;
        fprintf(f, "| %s | %u | %zu |\n", tests[i].set, p, j - i);
        all_pass += p;
        i = j;
    }
    fprintf(f, "| all | %u | %zu |\n\n", all_pass, n);

    /* Failure classes. */
    fprintf(f, "## Failure classes\n\n| class | tests |\n|---|---:|\n");
    for (size_t c = 0; c < CLASS_COUNT; c++) {
        unsigned k = 0;
        for (size_t i = 0; i < n; i++)
            k += !tests[i].pass && tests[i].cls == (int)c;
        if (k) fprintf(f, "| %s | %u |\n", classes[c], k);
    }

    /* What to implement next. */
    missing_row *missing;
    size_t nm = missing_ops(tests, n, &missing);
    fprintf(f,
            "\n## Unsupported ops, by tests they fail\n\n"
            "The op named by each \"unsupported op\" failure (for an `_expanded` test, an op of\n"
            "the decomposition).\n\n");
    if (nm)
        fprintf(f, "| op | node tests | other tests |\n|---|---:|---:|\n");
    else
        fprintf(f, "No test fails for an unsupported op.\n");
    for (size_t i = 0; i < nm; i++) {
        fprintf(f, "| ");
        md_text(f, missing[i].name, 100);
        fprintf(f, " | %u | %u |\n", missing[i].node, missing[i].other);
    }
    free(missing);

    /* Per op. */
    group_row *rows = calloc(n + 1, sizeof *rows);
    size_t nr = 0;
    if (!rows) exit(2);
    for (size_t i = 0; i < n; i++) {
        const test_case *t = &tests[i];
        size_t r = 0;
        while (r < nr && strcmp(rows[r].name, t->group))
            r++;
        if (r == nr) rows[nr++].name = t->group;
        group_row *g = &rows[r];
        if (strcmp(t->set, "node")) {
            g->ototal++;
            g->opass += t->pass;
        } else if (t->expanded) {
            g->xtotal++;
            g->xpass += t->pass;
        } else {
            g->total++;
            g->pass += t->pass;
        }
        if (!t->pass) {
            if (!g->cls_count[t->cls]++) g->example[t->cls] = t;
        }
    }
    qsort(rows, nr, sizeof *rows, cmp_group_row);
    fprintf(
        f,
        "\n## Per op\n\nA test counts under the op of its model's one node type (Constant aside);\n"
        "a function's `_expanded` test (its decomposition into other ops) counts under the\n"
        "function's op, in its own column; a model of several ops that names no op counts\n"
        "under its own name. \"node\" counts the node tests, \"models\" the tests of the\n"
        "other sets.\n\n"
        "| op | node | node, expanded | models | failures (count, one example) |\n"
        "|---|---:|---:|---:|---|\n");
    for (size_t r = 0; r < nr; r++) {
        const group_row *g = &rows[r];
        fprintf(f, "| ");
        md_text(f, g->name, 100);
        const unsigned cols[3][2] = {
            {g->pass, g->total}, {g->xpass, g->xtotal}, {g->opass, g->ototal}};
        for (size_t c = 0; c < 3; c++) {
            if (cols[c][1])
                fprintf(f, " | %u / %u", cols[c][0], cols[c][1]);
            else
                fprintf(f, " | -");
        }
        fprintf(f, " | ");
        bool first = true;
        for (size_t c = 0; c < CLASS_COUNT; c++) {
            if (!g->cls_count[c]) continue;
            fprintf(f, "%s%s x%u (%s: ", first ? "" : "<br>", classes[c], g->cls_count[c],
                    g->example[c]->name);
            md_text(f, g->example[c]->reason, 160);
            fprintf(f, ")");
            first = false;
        }
        fprintf(f, " |\n");
    }
    free(rows);

    /* Failing tests. */
    fprintf(f, "\n## Failing tests\n\n| test | class | reason |\n|---|---|---|\n");
    for (size_t i = 0; i < n; i++) {
        const test_case *t = &tests[i];
        if (t->pass) continue;
        fprintf(f, "| %s/", t->set);
        md_text(f, t->name, 200);
        fprintf(f, " | %s | ", classes[t->cls]);
        md_text(f, t->reason, REASON_MAX);
        fprintf(f, " |\n");
    }
    write_explained(f, tests, n);
    fclose(f);
}

/* ------------------------------------------------------ expected passes */

typedef struct name_list {
    char **v;
    size_t n, cap;
} name_list;

static void list_add(name_list *l, const char *s) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 256;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        if (!l->v) exit(2);
    }
    l->v[l->n++] = xstrdup(s);
}

/* Reads set/test lines ('#' comments and blank lines skipped). A missing
 * file is an empty list when `may_be_missing`. */
static bool read_expected(const char *path, name_list *l, bool may_be_missing) {
    FILE *f = fopen(path, "r");
    if (!f) {
        if (may_be_missing && errno == ENOENT) return true;
        fprintf(stderr, "onnx_conformance: cannot read %s: %s\n", path, strerror(errno));
        return false;
    }
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        char *p = line;
        while (*p == ' ')
            p++;
        if (!*p || *p == '#') continue;
        list_add(l, p);
    }
    fclose(f);
    return true;
}

static const test_case *find_test(const test_case *tests, size_t n, const char *full) {
    const char *slash = strchr(full, '/');
    if (!slash) return NULL;
    size_t sl = (size_t)(slash - full);
    for (size_t i = 0; i < n; i++)
        if (strlen(tests[i].set) == sl && !strncmp(tests[i].set, full, sl) &&
            !strcmp(tests[i].name, slash + 1))
            return &tests[i];
    return NULL;
}

/* A listed test this run was asked to run: its set is one of the roots and
 * it matches the filter. */
static bool in_scope(const config *cf, const char *full) {
    if ((cf->filter && !strstr(full, cf->filter)) || skipped(cf, full)) return false;
    for (size_t r = 0; r < cf->root_count; r++) {
        const char *base = strrchr(cf->roots[r], '/');
        base = base && base[1] ? base + 1 : cf->roots[r];
        size_t bl = strlen(base);
        if (!strncmp(full, base, bl) && full[bl] == '/') return true;
    }
    return false;
}

/* Returns the number of regressions (listed tests that did not pass). */
static unsigned check_expected(const config *cf, const test_case *tests, size_t n,
                               const name_list *l) {
    unsigned bad = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (!in_scope(cf, l->v[i])) continue;
        const test_case *t = find_test(tests, n, l->v[i]);
        if (!t) {
            printf("REGRESSION %s: listed in %s but not found\n", l->v[i], cf->expect_file);
            bad++;
        } else if (!t->pass) {
            printf("REGRESSION %s: %s: %s\n", l->v[i], classes[t->cls], t->reason);
            bad++;
        }
    }
    return bad;
}

static bool update_expected(const config *cf, const test_case *tests, size_t n,
                            const name_list *old) {
    name_list l = {0};
    for (size_t i = 0; i < old->n; i++)
        if (!in_scope(cf, old->v[i])) list_add(&l, old->v[i]);
    for (size_t i = 0; i < n; i++)
        if (tests[i].pass) {
            char *full = xprintf("%s/%s", tests[i].set, tests[i].name);
            list_add(&l, full);
            free(full);
        }
    if (l.n) qsort(l.v, l.n, sizeof *l.v, cmp_str);
    char *tmp = xprintf("%s.tmp", cf->expect_file);
    FILE *f = fopen(tmp, "w");
    bool ok = f != NULL;
    if (f) {
        fprintf(f,
                "# ONNX backend tests that pass (set/test); tests/onnx/onnx_conformance.c fails\n"
                "# when one of them does not. Rewritten by --update-expected.\n");
        for (size_t i = 0; i < l.n; i++)
            if (!i || strcmp(l.v[i], l.v[i - 1])) fprintf(f, "%s\n", l.v[i]);
        ok = fclose(f) == 0 && rename(tmp, cf->expect_file) == 0;
    }
    if (!ok)
        fprintf(stderr, "onnx_conformance: cannot write %s: %s\n", cf->expect_file,
                strerror(errno));
    free(tmp);
    for (size_t i = 0; i < l.n; i++)
        free(l.v[i]);
    free(l.v);
    return ok;
}

/* ----------------------------------------------------------------- main */

static const char usage[] =
    "usage: onnx_conformance [options]\n"
    "  --data DIR          a data root of test directories (repeatable; default:\n"
    "                      " LM_ONNX_TESTDATA "/{node,pytorch-converted,pytorch-operator,simple})\n"
    "  --filter TEXT       only the tests whose set/name contains TEXT\n"
    "  --skip TEXT[,TEXT]  not the tests whose set/name contains one of the TEXTs\n"
    "  --jobs N            tests run in N processes at once (default 2)\n"
    "  --timeout S         seconds each compile and each run may take (default 120)\n"
    "  --atol X            the absolute tolerance of float comparisons (default ONNX's\n"
    "                      1e-7; the relative one is always 1e-3)\n"
    "  --scaled-atol X     floats may also differ by X times the largest magnitude of\n"
    "                      their output (0 to 1; for the bfloat16 modes)\n"
    "  --dtype MODE        compile in MODE: fp32 (default), bf16 or bfp8\n"
    "  --trace             compile each model as one metal trace (--trace)\n"
    "  --cli PATH          the lightmetal tool (default: the one built with this program)\n"
    "  --tsv FILE          write one row per test\n"
    "  --md FILE           write the Markdown report\n"
    "  --expect-file FILE  fail when a test listed in FILE does not pass\n"
    "  --update-expected   rewrite --expect-file with the tests that pass\n"
    "  --all               fail unless every test passes (listing the ones that do not)\n"
    "  --const-inputs      compile with every tensor input as a constant (--const),\n"
    "                      checking the compiler's constant folding\n"
    "  --keep              keep each test's temporary directory\n"
    "  -v, --verbose       a line per test\n";

static bool parse_uint(const char *opt, const char *v, unsigned lo, unsigned hi, unsigned *out) {
    char *end;
    errno = 0;
    unsigned long x = v ? strtoul(v, &end, 10) : 0;
    if (!v || !*v || *end || errno || x < lo || x > hi) {
        fprintf(stderr, "onnx_conformance: %s takes a number from %u to %u\n", opt, lo, hi);
        return false;
    }
    *out = (unsigned)x;
    return true;
}

int main(int argc, char **argv) {
    config cf = {.cli = LM_CLI_PATH, .jobs = 2, .timeout = 120, .atol = ATOL, .dtype = "fp32"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = true;
        if (!strcmp(a, "--data")) {
            if (!v || cf.root_count == MAX_ROOTS) goto bad;
            cf.roots[cf.root_count++] = v;
        } else if (!strcmp(a, "--filter")) {
            if (!v) goto bad;
            cf.filter = v;
        } else if (!strcmp(a, "--skip")) {
            if (!v) goto bad;
            cf.skip = v;
        } else if (!strcmp(a, "--jobs")) {
            if (!parse_uint(a, v, 1, 256, &cf.jobs)) return 2;
        } else if (!strcmp(a, "--timeout")) {
            if (!parse_uint(a, v, 1, 86400, &cf.timeout)) return 2;
        } else if (!strcmp(a, "--atol")) {
            char *end;
            cf.atol = v ? strtod(v, &end) : -1;
            if (!v || !*v || *end || !(cf.atol >= 0 && cf.atol <= 1)) {
                fprintf(stderr, "onnx_conformance: --atol takes a number from 0 to 1\n");
                return 2;
            }
        } else if (!strcmp(a, "--scaled-atol")) {
            char *end;
            cf.scaled_atol = v ? strtod(v, &end) : -1;
            if (!v || !*v || *end || !(cf.scaled_atol >= 0 && cf.scaled_atol <= 1)) {
                fprintf(stderr, "onnx_conformance: --scaled-atol takes a number from 0 to 1\n");
                return 2;
            }
        } else if (!strcmp(a, "--dtype")) {
            if (!v || (strcmp(v, "fp32") && strcmp(v, "bf16") && strcmp(v, "bfp8"))) {
                fprintf(stderr, "onnx_conformance: --dtype takes fp32, bf16 or bfp8\n");
                return 2;
            }
            cf.dtype = v;
        } else if (!strcmp(a, "--cli")) {
            if (!v) goto bad;
            cf.cli = v;
        } else if (!strcmp(a, "--tsv")) {
            if (!v) goto bad;
            cf.tsv = v;
        } else if (!strcmp(a, "--md")) {
            if (!v) goto bad;
            cf.md = v;
        } else if (!strcmp(a, "--expect-file")) {
            if (!v) goto bad;
            cf.expect_file = v;
        } else {
            takes = false;
            if (!strcmp(a, "--update-expected"))
                cf.update_expected = true;
            else if (!strcmp(a, "--keep"))
                cf.keep = true;
            else if (!strcmp(a, "--all"))
                cf.all = true;
            else if (!strcmp(a, "--const-inputs"))
                cf.const_inputs = true;
            else if (!strcmp(a, "--trace"))
                cf.trace = true;
            else if (!strcmp(a, "-v") || !strcmp(a, "--verbose"))
                cf.verbose = true;
            else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
                fputs(usage, stdout);
                return 0;
            } else {
                fprintf(stderr, "onnx_conformance: unknown option '%s'\n%s", a, usage);
                return 2;
            }
        }
        if (takes) i++;
        continue;
    bad:
        fprintf(stderr, "onnx_conformance: %s needs a value\n%s", a, usage);
        return 2;
    }
    if (cf.update_expected && !cf.expect_file) {
        fprintf(stderr, "onnx_conformance: --update-expected needs --expect-file FILE\n");
        return 2;
    }
    if (access(cf.cli, X_OK)) {
        fprintf(stderr, "onnx_conformance: %s is not an executable (--cli)\n", cf.cli);
        return 2;
    }
    static const char *const sets[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};
    char *default_roots[4] = {0};
    if (!cf.root_count) {
        for (size_t s = 0; s < 4; s++) {
            default_roots[s] = xprintf("%s/%s", LM_ONNX_TESTDATA, sets[s]);
            if (is_dir(default_roots[s])) cf.roots[cf.root_count++] = default_roots[s];
        }
        if (!cf.root_count) {
            printf("onnx_conformance: no test data under %s (Debian package libonnx-testdata): "
                   "skipped\n",
                   LM_ONNX_TESTDATA);
            return EXIT_SKIP;
        }
    }
    for (size_t r = 0; r < cf.root_count; r++) {
        /* Set names come from the roots' base names: no trailing slash. */
        size_t l = strlen(cf.roots[r]);
        while (l > 1 && cf.roots[r][l - 1] == '/') {
            char *c = xstrdup(cf.roots[r]);
            c[l - 1] = '\0';
            cf.roots[r] = c;
            l--;
        }
    }
    /* A relative --cli stays valid in the workers (they do not chdir), but
     * posix_spawn takes a path, not a command name. */
    if (!strchr(cf.cli, '/')) {
        fprintf(stderr, "onnx_conformance: --cli needs a path (with a '/')\n");
        return 2;
    }
    name_list expected = {0};
    if (cf.expect_file && !read_expected(cf.expect_file, &expected, cf.update_expected)) return 2;

    size_t n;
    test_case *tests = discover(&cf, &n);
    printf("onnx_conformance: %zu tests, %u jobs, %s\n", n, cf.jobs, cf.cli);
    if (!run_all(&cf, tests, n)) {
        fprintf(stderr, "onnx_conformance: interrupted; nothing written\n");
        return 130;
    }
    assign_groups(tests, n);
    if (cf.tsv) write_tsv(cf.tsv, tests, n);
    if (cf.md) write_md(cf.md, &cf, tests, n);

    /* Summary. */
    printf("\n");
    unsigned node_pass = 0, node_total = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        unsigned p = 0;
        for (; j < n && !strcmp(tests[j].set, tests[i].set); j++)
            p += tests[j].pass;
        printf("%-20s %4u / %zu passed\n", tests[i].set, p, j - i);
        if (!strcmp(tests[i].set, "node")) {
            node_pass = p;
            node_total = (unsigned)(j - i);
        }
        i = j;
    }
    printf("failure classes:\n");
    for (size_t c = 0; c < CLASS_COUNT; c++) {
        unsigned k = 0;
        for (size_t i = 0; i < n; i++)
            k += !tests[i].pass && tests[i].cls == (int)c;
        if (k) printf("  %-26s %u\n", classes[c], k);
    }
    missing_row *missing;
    size_t nm = missing_ops(tests, n, &missing);
    printf("unsupported ops failing the most tests:");
    for (size_t i = 0; i < nm && i < 12; i++)
        printf("%s %s (%u)", i ? "," : "", missing[i].name, missing[i].node + missing[i].other);
    printf("\n");
    free(missing);
    /* The slowest tests, to keep the suite's time in view. */
    size_t slow[5], ns = 0;
    for (; ns < 5 && ns < n; ns++) {
        size_t best = SIZE_MAX;
        for (size_t i = 0; i < n; i++) {
            bool taken = false;
            for (size_t k = 0; k < ns; k++)
                taken |= slow[k] == i;
            if (!taken && (best == SIZE_MAX || tests[i].seconds > tests[best].seconds)) best = i;
        }
        slow[ns] = best;
    }
    printf("slowest tests:");
    for (size_t i = 0; i < ns; i++)
        printf("%s %s/%s %.1f s", i ? "," : "", tests[slow[i]].set, tests[slow[i]].name,
               tests[slow[i]].seconds);
    printf("\n");
    int rc = 0;
    if (cf.expect_file) {
        unsigned bad = check_expected(&cf, tests, n, &expected);
        if (bad) {
            printf("%u listed test%s in %s did not pass\n", bad, bad == 1 ? "" : "s",
                   cf.expect_file);
            if (!cf.update_expected) rc = 1;
        }
        if (cf.update_expected) {
            if (!update_expected(&cf, tests, n, &expected))
                rc = 2;
            else
                printf("wrote %s\n", cf.expect_file);
        }
    }
    if (cf.all) {
        for (size_t i = 0; i < n; i++)
            if (!tests[i].pass) {
                printf("FAILED %s/%s: %s\n", tests[i].set, tests[i].name,
                       tests[i].reason ? tests[i].reason : "");
                rc = 1;
            }
    }
    if (node_total) printf("onnx_node_tests_passed: %u\n", node_pass);

    for (size_t i = 0; i < expected.n; i++)
        free(expected.v[i]);
    free(expected.v);
    for (size_t i = 0; i < n; i++) {
        free(tests[i].name);
        free(tests[i].dir);
        free(tests[i].reason);
        free(tests[i].ops);
        free(tests[i].group);
    }
    free(tests);
    for (size_t s = 0; s < 4; s++)
        free(default_roots[s]);
    return rc;
}
