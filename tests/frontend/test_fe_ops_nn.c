/* The neural-network and reduction ops of the ONNX compiler against ONNX's
 * own node tests (Debian's libonnx-testdata): each test model is compiled
 * with lmfe_compile_onnx (fp32, no golden inputs: the graph inputs are zeros
 * while compiling), then replayed with its test_data_set_0 inputs and its
 * outputs compared with the expected ones at ONNX's tolerance (rtol 1e-3,
 * atol 1e-7).
 *
 * Integer inputs are given as compile-time constants (the Reduce* axes
 * input decides the output shape); every other input is a named input of
 * the binary, so a value baked in at compile time would fail the compare.
 *
 * A test passes, or is refused at compile time with LM_ERR_UNSUPPORTED and
 * a message naming the node (an op or attribute this compiler does not
 * implement). Anything else -- a wrong answer, another error -- fails. The
 * per-op counts are printed (LM_FE_VERBOSE=1 prints every test). Skipped when
 * the data is not installed. LM_FE_ONLY=<substring> runs the matching tests.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lightmetal/frontend.h"
#include "lightmetal/lm_replay.h"
#include "lm_test.h"

#ifndef LM_ONNX_TESTDATA
#define LM_ONNX_TESTDATA "/usr/share/libonnx-testdata/data"
#endif

/* Node test name prefixes per op; a test belongs to the op with the longest
 * matching prefix. */
typedef struct op_tests {
    const char *op;
    const char *prefix;
    unsigned total, passed, refused;
} op_tests;

static op_tests ops[] = {
    {"ReduceSum", "test_reduce_sum_", 0, 0, 0},
    {"ReduceSumSquare", "test_reduce_sum_square_", 0, 0, 0},
    {"ReduceMean", "test_reduce_mean_", 0, 0, 0},
    {"ReduceMax", "test_reduce_max_", 0, 0, 0},
    {"ReduceMin", "test_reduce_min_", 0, 0, 0},
    {"ReduceProd", "test_reduce_prod_", 0, 0, 0},
    {"ReduceL1", "test_reduce_l1_", 0, 0, 0},
    {"ReduceL2", "test_reduce_l2_", 0, 0, 0},
    {"ReduceLogSum", "test_reduce_log_sum", 0, 0, 0},
    {"ReduceLogSumExp", "test_reduce_log_sum_exp", 0, 0, 0},
    {"ArgMax", "test_argmax_", 0, 0, 0},
    {"ArgMin", "test_argmin_", 0, 0, 0},
    {"Softmax", "test_softmax_", 0, 0, 0},
    {"LogSoftmax", "test_logsoftmax_", 0, 0, 0},
    {"Hardmax", "test_hardmax_", 0, 0, 0},
    {"MatMul", "test_matmul_", 0, 0, 0},
    {"Gemm", "test_gemm_", 0, 0, 0},
    {"Conv", "test_basic_conv_", 0, 0, 0},
    {"Conv", "test_conv_with_", 0, 0, 0},
    {"ConvTranspose", "test_convtranspose", 0, 0, 0},
    {"MaxPool", "test_maxpool_", 0, 0, 0},
    {"AveragePool", "test_averagepool_", 0, 0, 0},
    {"GlobalAveragePool", "test_globalaveragepool", 0, 0, 0},
    {"GlobalMaxPool", "test_globalmaxpool", 0, 0, 0},
    {"BatchNormalization", "test_batchnorm_", 0, 0, 0},
    {"InstanceNormalization", "test_instancenorm_", 0, 0, 0},
    {"LayerNormalization", "test_layer_normalization_", 0, 0, 0},
    {"MeanVarianceNormalization", "test_mvn", 0, 0, 0},
    {"Dropout", "test_dropout_", 0, 0, 0},
    {"DepthToSpace", "test_depthtospace_", 0, 0, 0},
    {"SpaceToDepth", "test_spacetodepth", 0, 0, 0},
};
#define OP_COUNT (sizeof ops / sizeof ops[0])

static unsigned bad; /* wrong answers and unclean failures */

static op_tests *op_of(const char *name) {
    op_tests *best = NULL;
    for (size_t i = 0; i < OP_COUNT; i++) {
        size_t k = strlen(ops[i].prefix);
        if (strncmp(name, ops[i].prefix, k) == 0 && (!best || k > strlen(best->prefix)))
            best = &ops[i];
    }
    return best;
}

static bool is_int_type(int32_t e) {
    return e == 2 || e == 3 || e == 4 || e == 5 || e == 6 || e == 7 || e == 12 || e == 13;
}

static double elem_f64(const lmfe_tensor_value *t, uint64_t i) {
    const void *p = t->data;
    switch (t->elem_type) {
    case 1:
        return ((const float *)p)[i];
    case 11:
        return ((const double *)p)[i];
    case 2:
        return ((const uint8_t *)p)[i];
    case 3:
        return ((const int8_t *)p)[i];
    case 4:
        return ((const uint16_t *)p)[i];
    case 5:
        return ((const int16_t *)p)[i];
    case 6:
        return ((const int32_t *)p)[i];
    case 7:
        return (double)((const int64_t *)p)[i];
    case 9:
        return ((const uint8_t *)p)[i];
    case 12:
        return ((const uint32_t *)p)[i];
    case 13:
        return (double)((const uint64_t *)p)[i];
    default:
        return NAN;
    }
}

static uint64_t elem_count(const lmfe_tensor_value *t) {
    uint64_t n = 1;
    for (uint32_t d = 0; d < t->rank; d++)
        n *= (uint64_t)t->dims[d];
    return n;
}

/* Reads test_data_set_0/<kind>_<i>.pb for i = 0.. into vals (at most max). */
static unsigned read_set(const char *dir, const char *kind, lmfe_tensor_value *vals, unsigned max) {
    unsigned k = 0;
    for (; k < max; k++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/test_data_set_0/%s_%u.pb", dir, kind, k);
        struct stat sb;
        if (stat(path, &sb) != 0) break;
        if (lmfe_read_tensor_pb(path, &vals[k]) != LM_OK) break;
    }
    return k;
}

static bool has_buffer(lm_replay *r, const char *name, lm_replay_buffer_info *out) {
    uint32_t n = lm_replay_buffer_count(r);
    for (uint32_t i = 0; i < n; i++) {
        lm_replay_buffer_info info;
        if (lm_replay_buffer_info_at(r, i, &info) == LM_OK && strcmp(info.name, name) == 0) {
            *out = info;
            return true;
        }
    }
    return false;
}

/* "pass", "refused: ...", or a failure description into msg; returns 0 pass,
 * 1 refused, 2 bad. */
static int run_case(const char *dir, char *msg, size_t msg_size) {
    char path[2048];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    lmfe_tensor_value ins[16], outs[16];
    memset(ins, 0, sizeof ins);
    memset(outs, 0, sizeof outs);
    unsigned nin = read_set(dir, "input", ins, 16), nout = read_set(dir, "output", outs, 16);
    lmfe_tensor_value consts[16];
    size_t nconst = 0;
    for (unsigned i = 0; i < nin; i++)
        if (is_int_type(ins[i].elem_type) && ins[i].name) consts[nconst++] = ins[i];
    lmfe_compile_options o;
    lmfe_compile_options_init(&o);
    o.constants = consts;
    o.constant_count = nconst;
    lm_binary *bin = NULL;
    lm_replay *rp = NULL;
    int result = 2;
    void *buf = NULL, *inbuf[16] = {0};
    uint64_t compared = 0;
    if (nout == 0) {
        snprintf(msg, msg_size, "no expected outputs could be read");
        goto done;
    }
    lm_status st = lmfe_compile_onnx(path, &o, &bin, NULL);
    if (st) {
        snprintf(msg, msg_size, "%s: %s", lm_status_string(st), lm_last_error());
        result = st == LM_ERR_UNSUPPORTED && strstr(lm_last_error(), "node ") ? 1 : 2;
        goto done;
    }
    const void *data;
    uint64_t size;
    if ((st = lm_binary_data(bin, &data, &size)) || (st = lm_replay_open(data, size, &rp))) {
        snprintf(msg, msg_size, "replay open: %s", lm_last_error());
        goto done;
    }
    for (unsigned i = 0; i < nin; i++) {
        lm_replay_buffer_info info;
        if (!ins[i].name || !has_buffer(rp, ins[i].name, &info)) continue;
        uint64_t n = elem_count(&ins[i]);
        if (info.size != n * 4) {
            snprintf(msg, msg_size, "input %s: buffer of %llu bytes for %llu elements", ins[i].name,
                     (unsigned long long)info.size, (unsigned long long)n);
            goto done;
        }
        inbuf[i] = malloc(n * 4 + 4);
        for (uint64_t j = 0; j < n; j++) {
            double v = elem_f64(&ins[i], j);
            if (info.format == LM_DATA_FORMAT_FLOAT32)
                ((float *)inbuf[i])[j] = (float)v;
            else if (info.format == LM_DATA_FORMAT_UINT32)
                ((uint32_t *)inbuf[i])[j] = (uint32_t)v;
            else
                ((int32_t *)inbuf[i])[j] = (int32_t)v;
        }
        if ((st = lm_replay_set_input(rp, ins[i].name, inbuf[i], n * 4))) {
            snprintf(msg, msg_size, "set input %s: %s", ins[i].name, lm_last_error());
            goto done;
        }
    }
    if ((st = lm_replay_run(rp, NULL, NULL, NULL))) {
        snprintf(msg, msg_size, "replay: %s", lm_last_error());
        goto done;
    }
    for (unsigned i = 0; i < nout; i++) {
        lm_replay_buffer_info info;
        if (!outs[i].name || !has_buffer(rp, outs[i].name, &info)) {
            snprintf(msg, msg_size, "output %u has no named buffer", i);
            goto done;
        }
        uint64_t n = elem_count(&outs[i]);
        if (info.size != n * 4) {
            snprintf(msg, msg_size, "output %s: %llu bytes, expected %llu elements", outs[i].name,
                     (unsigned long long)info.size, (unsigned long long)n);
            goto done;
        }
        free(buf);
        buf = malloc(n * 4 + 4);
        if ((st = lm_replay_get_output(rp, outs[i].name, buf, n * 4))) {
            snprintf(msg, msg_size, "get output: %s", lm_last_error());
            goto done;
        }
        for (uint64_t j = 0; j < n; j++) {
            double want = elem_f64(&outs[i], j), got;
            if (info.format == LM_DATA_FORMAT_FLOAT32)
                got = ((float *)buf)[j];
            else if (info.format == LM_DATA_FORMAT_UINT32)
                got = ((uint32_t *)buf)[j];
            else
                got = ((int32_t *)buf)[j];
            bool ok = (isnan(want) && isnan(got)) || got == want ||
                      fabs(got - want) <= 1e-7 + 1e-3 * fabs(want);
            if (!ok) {
                snprintf(msg, msg_size, "WRONG output %s[%llu]: got %.9g, expected %.9g",
                         outs[i].name, (unsigned long long)j, got, want);
                goto done;
            }
            compared++;
        }
    }
    snprintf(msg, msg_size, "pass (%llu values)", (unsigned long long)compared);
    result = 0;
done:
    free(buf);
    for (unsigned i = 0; i < 16; i++)
        free(inbuf[i]);
    lm_replay_close(rp);
    lm_binary_free(bin);
    for (unsigned i = 0; i < nin; i++)
        lmfe_tensor_value_free(&ins[i]);
    for (unsigned i = 0; i < nout; i++)
        lmfe_tensor_value_free(&outs[i]);
    return result;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void test_node_tests(void) {
    char root[512];
    snprintf(root, sizeof root, "%s/node", LM_ONNX_TESTDATA);
    DIR *d = opendir(root);
    if (!d) {
        printf("  skipped: %s is not installed\n", root);
        return;
    }
    const char *only = getenv("LM_FE_ONLY");
    bool verbose = getenv("LM_FE_VERBOSE") != NULL;
    char **names = NULL;
    size_t count = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!op_of(e->d_name)) continue;
        if (only && !strstr(e->d_name, only)) continue;
        if (count == cap) {
            cap = cap ? cap * 2 : 256;
            names = realloc(names, cap * sizeof *names);
        }
        names[count++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, count, sizeof *names, cmp_str);
    for (size_t i = 0; i < count; i++) {
        char dir[1024], msg[1024];
        snprintf(dir, sizeof dir, "%s/%s", root, names[i]);
        op_tests *op = op_of(names[i]);
        int r = run_case(dir, msg, sizeof msg);
        op->total++;
        if (r == 0)
            op->passed++;
        else if (r == 1)
            op->refused++;
        else
            bad++;
        if (verbose || r == 2)
            printf("  %-60s %s\n", names[i], msg);
        else if (r == 1)
            printf("  %-60s refused: %.160s\n", names[i], msg);
        free(names[i]);
    }
    free(names);
    unsigned total = 0, passed = 0;
    printf("  %-26s %s\n", "op", "passed / total (refused)");
    for (size_t i = 0; i < OP_COUNT; i++) {
        if (!ops[i].total) continue;
        printf("  %-26s %u / %u (%u)\n", ops[i].op, ops[i].passed, ops[i].total, ops[i].refused);
        total += ops[i].total;
        passed += ops[i].passed;
    }
    printf("  all: %u / %u passed, %u wrong or failed\n", passed, total, bad);
    CHECK(bad == 0);
}

int main(void) {
    TEST_RUN(test_node_tests);
    return test_summary();
}
