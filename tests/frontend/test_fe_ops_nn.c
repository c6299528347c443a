/* The neural-network and reduction ops of the ONNX compiler against ONNX's
 * own node tests (Debian's libonnx-testdata): each test model is compiled
 * with lmfe_compile_onnx (fp32, no golden inputs: the graph inputs are zeros
 * while compiling), then replayed with its test_data_set_0 inputs and its
 * outputs compared with the expected ones at ONNX's tolerance (rtol 1e-3,
 * atol 1e-7).
 *
 * Small integer vectors and every scalar are given as compile-time constants
 * (the Reduce* axes, Trilu's k, Dropout's ratio and training_mode decide
 * the output); every other input is
 * a named input of the binary, so a value baked in at compile time would
 * fail the compare.
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

/* Test name prefixes per op and data set; a test belongs to the entry with
 * the longest matching prefix. The pytorch sets' models hold a few other ops
 * around the one named. */
typedef struct op_tests {
    const char *op;
    const char *set; /* the test data set: node, pytorch-converted, ... */
    const char *prefix;
    unsigned total, passed, refused;
} op_tests;

static op_tests ops[] = {
    {"ReduceSum", "node", "test_reduce_sum_", 0, 0, 0},
    {"ReduceSumSquare", "node", "test_reduce_sum_square_", 0, 0, 0},
    {"ReduceMean", "node", "test_reduce_mean_", 0, 0, 0},
    {"ReduceMax", "node", "test_reduce_max_", 0, 0, 0},
    {"ReduceMin", "node", "test_reduce_min_", 0, 0, 0},
    {"ReduceProd", "node", "test_reduce_prod_", 0, 0, 0},
    {"ReduceL1", "node", "test_reduce_l1_", 0, 0, 0},
    {"ReduceL2", "node", "test_reduce_l2_", 0, 0, 0},
    {"ReduceLogSum", "node", "test_reduce_log_sum", 0, 0, 0},
    {"ReduceLogSumExp", "node", "test_reduce_log_sum_exp", 0, 0, 0},
    {"ArgMax", "node", "test_argmax_", 0, 0, 0},
    {"ArgMin", "node", "test_argmin_", 0, 0, 0},
    {"Softmax", "node", "test_softmax_", 0, 0, 0},
    {"LogSoftmax", "node", "test_logsoftmax_", 0, 0, 0},
    {"Hardmax", "node", "test_hardmax_", 0, 0, 0},
    {"MatMul", "node", "test_matmul_", 0, 0, 0},
    {"Gemm", "node", "test_gemm_", 0, 0, 0},
    {"MatMulInteger", "node", "test_matmulinteger", 0, 0, 0},
    {"QLinearMatMul", "node", "test_qlinearmatmul_", 0, 0, 0},
    {"QLinearConv", "node", "test_qlinearconv", 0, 0, 0},
    {"ConvInteger", "node", "test_basic_convinteger", 0, 0, 0},
    {"ConvInteger", "node", "test_convinteger_", 0, 0, 0},
    {"Conv", "node", "test_basic_conv_", 0, 0, 0},
    {"Conv", "node", "test_conv_with_", 0, 0, 0},
    {"ConvTranspose", "node", "test_convtranspose", 0, 0, 0},
    {"MaxPool", "node", "test_maxpool_", 0, 0, 0},
    {"AveragePool", "node", "test_averagepool_", 0, 0, 0},
    {"MaxUnpool", "node", "test_maxunpool_", 0, 0, 0},
    {"GlobalAveragePool", "node", "test_globalaveragepool", 0, 0, 0},
    {"GlobalMaxPool", "node", "test_globalmaxpool", 0, 0, 0},
    {"BatchNormalization", "node", "test_batchnorm_", 0, 0, 0},
    {"InstanceNormalization", "node", "test_instancenorm_", 0, 0, 0},
    {"LayerNormalization", "node", "test_layer_normalization_", 0, 0, 0},
    {"MeanVarianceNormalization", "node", "test_mvn", 0, 0, 0},
    {"LRN", "node", "test_lrn", 0, 0, 0},
    {"Dropout", "node", "test_dropout_", 0, 0, 0},
    {"Dropout", "node", "test_training_dropout", 0, 0, 0},
    {"DepthToSpace", "node", "test_depthtospace_", 0, 0, 0},
    {"SpaceToDepth", "node", "test_spacetodepth", 0, 0, 0},
    {"Trilu", "node", "test_tril", 0, 0, 0},
    {"Trilu", "node", "test_triu", 0, 0, 0},
    {"Einsum", "node", "test_einsum_", 0, 0, 0},
    {"Resize", "node", "test_resize_", 0, 0, 0},
    {"Upsample", "node", "test_upsample_", 0, 0, 0},
    {"RNN", "node", "test_simple_rnn_", 0, 0, 0},
    {"RNN", "node", "test_rnn_", 0, 0, 0},
    {"GRU", "node", "test_gru_", 0, 0, 0},
    {"LSTM", "node", "test_lstm_", 0, 0, 0},
    {"GatherND", "node", "test_gathernd_", 0, 0, 0},
    {"ScatterND", "node", "test_scatternd", 0, 0, 0},
    {"ScatterElements", "node", "test_scatter_elements_", 0, 0, 0},
    {"Scatter", "node", "test_scatter_with", 0, 0, 0},
    {"QuantizeLinear", "node", "test_quantizelinear", 0, 0, 0},
    {"DequantizeLinear", "node", "test_dequantizelinear", 0, 0, 0},
    {"DynamicQuantizeLinear", "node", "test_dynamicquantizelinear", 0, 0, 0},
    {"TopK", "node", "test_top_k", 0, 0, 0},
    {"ReverseSequence", "node", "test_reversesequence", 0, 0, 0},
    {"HannWindow", "node", "test_hannwindow", 0, 0, 0},
    {"HammingWindow", "node", "test_hammingwindow", 0, 0, 0},
    {"BlackmanWindow", "node", "test_blackmanwindow", 0, 0, 0},
    {"DFT", "node", "test_dft", 0, 0, 0},
    {"STFT", "node", "test_stft", 0, 0, 0},
    {"MelWeightMatrix", "node", "test_melweightmatrix", 0, 0, 0},
    {"GridSample", "node", "test_gridsample", 0, 0, 0},
    {"RoiAlign", "node", "test_roialign", 0, 0, 0},
    {"Det", "node", "test_det", 0, 0, 0},
    {"AveragePool", "pytorch-converted", "test_AvgPool", 0, 0, 0},
    {"BatchNormalization", "pytorch-converted", "test_BatchNorm", 0, 0, 0},
    {"Conv", "pytorch-converted", "test_Conv", 0, 0, 0},
    {"ConvTranspose", "pytorch-converted", "test_ConvTranspose", 0, 0, 0},
    {"Gemm", "pytorch-converted", "test_Linear", 0, 0, 0},
    {"LogSoftmax", "pytorch-converted", "test_LogSoftmax", 0, 0, 0},
    {"LogSoftmax", "pytorch-converted", "test_log_softmax_", 0, 0, 0},
    {"MaxPool", "pytorch-converted", "test_MaxPool", 0, 0, 0},
    {"Softmax", "pytorch-converted", "test_Softmax", 0, 0, 0},
    {"Softmax", "pytorch-converted", "test_Softmin", 0, 0, 0},
    {"Softmax", "pytorch-converted", "test_softmax_", 0, 0, 0},
    {"DepthToSpace", "pytorch-converted", "test_PixelShuffle", 0, 0, 0},
    {"Gemm", "pytorch-operator", "test_operator_addmm", 0, 0, 0},
    {"Conv", "pytorch-operator", "test_operator_conv", 0, 0, 0},
    {"ConvTranspose", "pytorch-operator", "test_operator_convtranspose", 0, 0, 0},
    {"MaxPool", "pytorch-operator", "test_operator_maxpool", 0, 0, 0},
    {"MatMul", "pytorch-operator", "test_operator_mm", 0, 0, 0},
    {"ReduceMean", "pytorch-operator", "test_operator_reduced_mean", 0, 0, 0},
    {"ReduceSum", "pytorch-operator", "test_operator_reduced_sum", 0, 0, 0},
};
#define OP_COUNT (sizeof ops / sizeof ops[0])

static unsigned bad; /* wrong answers and unclean failures */

static op_tests *op_of(const char *set, const char *name) {
    op_tests *best = NULL;
    for (size_t i = 0; i < OP_COUNT; i++) {
        size_t k = strlen(ops[i].prefix);
        if (strcmp(ops[i].set, set) != 0) continue;
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

/* The named buffer `name`, or when the test file names none (the pytorch
 * sets) the `index`-th buffer of `role` (graph inputs and outputs in order). */
static bool find_buffer(lm_replay *r, const char *name, lm_buffer_role role, unsigned index,
                        lm_replay_buffer_info *out) {
    uint32_t n = lm_replay_buffer_count(r);
    unsigned seen = 0;
    bool named = name && name[0];
    for (uint32_t i = 0; i < n; i++) {
        lm_replay_buffer_info info;
        if (lm_replay_buffer_info_at(r, i, &info) != LM_OK) continue;
        if (named ? strcmp(info.name, name) == 0 : info.role == role && seen++ == index) {
            *out = info;
            return true;
        }
    }
    return false;
}

/* "pass", "refused: ...", or a failure description into msg; returns 0 pass,
 * 1 refused, 2 bad. */
/* How a case compiles and compares. */
typedef struct case_opts {
    bool trace;
    lmfe_dtype_mode dtype;
    double rtol, atol;
    bool pad_dynamic;
    const char *note; /* NULL, or text the compile's report notes must hold */
} case_opts;

static const case_opts fp32_opts = {false, LMFE_DTYPE_FP32, 1e-3, 1e-7, false, NULL};

static int run_case(const char *dir, const case_opts *co, char *msg, size_t msg_size) {
    char path[2048];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    lmfe_tensor_value ins[16], outs[16];
    memset(ins, 0, sizeof ins);
    memset(outs, 0, sizeof outs);
    unsigned nin = read_set(dir, "input", ins, 16), nout = read_set(dir, "output", outs, 16);
    lmfe_tensor_value consts[16];
    size_t nconst = 0;
    for (unsigned i = 0; i < nin; i++)
        if (ins[i].name &&
            ((is_int_type(ins[i].elem_type) && ins[i].rank <= 1 && elem_count(&ins[i]) <= 8) ||
             ins[i].rank == 0))
            consts[nconst++] = ins[i];
    lmfe_compile_options o;
    lmfe_compile_options_init(&o);
    o.constants = consts;
    o.constant_count = nconst;
    o.trace = co->trace;
    o.pad_dynamic = co->pad_dynamic;
    o.dtype = co->dtype;
    lm_binary *bin = NULL;
    lm_replay *rp = NULL;
    int result = 2;
    void *buf = NULL, *inbuf[16] = {0};
    uint64_t compared = 0;
    lmfe_report report;
    memset(&report, 0, sizeof report);
    lm_status st = lmfe_compile_onnx(path, &o, &bin, co->note ? &report : NULL);
    if (st) {
        snprintf(msg, msg_size, "%s: %s", lm_status_string(st), lm_last_error());
        result = st == LM_ERR_UNSUPPORTED ? 1 : 2;
        goto done;
    }
    if (co->note) {
        bool noted = report.notes && strstr(report.notes, co->note);
        if (!noted)
            snprintf(msg, msg_size, "the report's notes lack \"%s\": %s", co->note,
                     report.notes ? report.notes : "(none)");
        lmfe_report_free(&report);
        if (!noted) goto done;
    }
    if (nout == 0) {
        snprintf(msg, msg_size, "no expected outputs could be read");
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
        if (!find_buffer(rp, ins[i].name, LM_BUFFER_ROLE_INPUT, i, &info)) continue;
        uint64_t n = elem_count(&ins[i]);
        if (info.size != n * 4) {
            snprintf(msg, msg_size, "input %s: buffer of %llu bytes for %llu elements", info.name,
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
        if ((st = lm_replay_set_input(rp, info.name, inbuf[i], n * 4))) {
            snprintf(msg, msg_size, "set input %s: %s", info.name, lm_last_error());
            goto done;
        }
    }
    if ((st = lm_replay_run(rp, NULL, NULL, NULL))) {
        snprintf(msg, msg_size, "replay: %s", lm_last_error());
        goto done;
    }
    for (unsigned i = 0; i < nout; i++) {
        lm_replay_buffer_info info;
        if (!find_buffer(rp, outs[i].name, LM_BUFFER_ROLE_OUTPUT, i, &info)) {
            snprintf(msg, msg_size, "output %u has no named buffer", i);
            goto done;
        }
        uint64_t n = elem_count(&outs[i]);
        if (info.size != n * 4) {
            snprintf(msg, msg_size, "output %s: %llu bytes, expected %llu elements", info.name,
                     (unsigned long long)info.size, (unsigned long long)n);
            goto done;
        }
        /* The recorded shape (a scalar is named as one, with rank 0). */
        bool same = info.rank == outs[i].rank && info.scalar == (outs[i].rank == 0);
        for (uint32_t d = 0; same && d < outs[i].rank; d++)
            same = info.shape[d] == (uint64_t)outs[i].dims[d];
        if (!same) {
            snprintf(msg, msg_size, "output %s: recorded rank %u shape (%llu, ...) differs",
                     info.name, info.rank, (unsigned long long)info.shape[0]);
            goto done;
        }
        free(buf);
        buf = malloc(n * 4 + 4);
        if ((st = lm_replay_get_output(rp, info.name, buf, n * 4))) {
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
                      fabs(got - want) <= co->atol + co->rtol * fabs(want);
            if (!ok) {
                snprintf(msg, msg_size, "WRONG output %s[%llu]: got %.9g, expected %.9g", info.name,
                         (unsigned long long)j, got, want);
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

typedef struct case_name {
    const char *set;
    char *name;
} case_name;

static int cmp_case(const void *a, const void *b) {
    const case_name *x = a, *y = b;
    int r = strcmp(x->set, y->set);
    return r ? r : strcmp(x->name, y->name);
}

static void test_node_tests(void) {
    static const char *const sets[] = {"node", "pytorch-converted", "pytorch-operator"};
    const char *only = getenv("LM_FE_ONLY");
    bool verbose = getenv("LM_FE_VERBOSE") != NULL;
    case_name *names = NULL;
    size_t count = 0, cap = 0;
    for (size_t k = 0; k < sizeof sets / sizeof sets[0]; k++) {
        char root[512];
        snprintf(root, sizeof root, "%s/%s", LM_ONNX_TESTDATA, sets[k]);
        DIR *d = opendir(root);
        if (!d) {
            printf("  skipped: %s is not installed\n", root);
            continue;
        }
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!op_of(sets[k], e->d_name)) continue;
            if (only && !strstr(e->d_name, only)) continue;
            if (count == cap) {
                cap = cap ? cap * 2 : 256;
                names = realloc(names, cap * sizeof *names);
                CHECK(names != NULL);
            }
            names[count++] = (case_name){sets[k], strdup(e->d_name)};
        }
        closedir(d);
    }
    if (count) qsort(names, count, sizeof *names, cmp_case);
    for (size_t i = 0; i < count; i++) {
        char dir[1024], msg[1024];
        snprintf(dir, sizeof dir, "%s/%s/%s", LM_ONNX_TESTDATA, names[i].set, names[i].name);
        op_tests *op = op_of(names[i].set, names[i].name);
        int r = run_case(dir, &fp32_opts, msg, sizeof msg);
        op->total++;
        /* Training-mode dropout draws random numbers: ONNX's values came
         * from NumPy's generator and cannot match (test_fe_compile checks
         * the draws). */
        bool random = r == 2 && strstr(names[i].name, "training_dropout");
        if (r == 0)
            op->passed++;
        else if (r == 1 || random)
            op->refused++;
        else
            bad++;
        if (random)
            printf("  %-60s random values: %.200s\n", names[i].name, msg);
        else if (verbose || r == 2)
            printf("  %-60s %s\n", names[i].name, msg);
        else if (r == 1)
            printf("  %-60s refused: %.200s\n", names[i].name, msg);
        free(names[i].name);
    }
    free(names);
    unsigned total = 0, passed = 0;
    printf("  %-26s %-18s %s\n", "op", "set", "passed / total (refused)");
    for (size_t i = 0; i < OP_COUNT; i++) {
        if (!ops[i].total) continue;
        printf("  %-26s %-18s %u / %u (%u)\n", ops[i].op, ops[i].set, ops[i].passed, ops[i].total,
               ops[i].refused);
        total += ops[i].total;
        passed += ops[i].passed;
    }
    printf("  all: %u / %u passed, %u wrong or failed\n", passed, total, bad);
    CHECK(bad == 0);
}

/* The text of file `name` in `dir` into buf ("" when there is none). */
static void read_text(const char *dir, const char *name, char *buf, size_t size) {
    char path[1100];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    buf[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f) return;
    size_t k = fread(buf, 1, size - 1, f);
    buf[k] = 0;
    fclose(f);
}

/* The cases make_nn_cases.py builds (opset < 13 forms, constant weights,
 * refusals, a traced compile): each passes, or for refuse_* is refused with
 * the message in its expect.txt, or for invalid_* fails LM_ERR_INVALID_FILE
 * with that message (any other case with an expect.txt must
 * report that note when compiled). Cases named trace_* compile with a metal
 * trace, those with padded_ in their name with pad_dynamic; one with an
 * atol.txt compares at that absolute tolerance; one named *_fp32 (a
 * selection that depends on the values' precision) runs in float32 only. */
static void test_built_cases(void) {
    if (system("/usr/bin/python3 -c 'import onnx, torch' 2>/dev/null") != 0) {
        printf("  skipped: /usr/bin/python3 with onnx and torch is not installed\n");
        return;
    }
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && /usr/bin/python3 '%s' '%s'", LM_FE_CASES_DIR,
             LM_FE_CASES_SCRIPT, LM_FE_CASES_DIR);
    CHECK(system(cmd) == 0);
    DIR *d = opendir(LM_FE_CASES_DIR);
    CHECK(d != NULL);
    struct dirent *e;
    unsigned total = 0, good = 0;
    const char *only = getenv("LM_FE_ONLY");
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || (only && !strstr(e->d_name, only))) continue;
        char dir[1024], msg[1024], expect[256] = "", atol[32] = "";
        snprintf(dir, sizeof dir, "%s/%s", LM_FE_CASES_DIR, e->d_name);
        bool refuse = strncmp(e->d_name, "refuse_", 7) == 0;
        bool invalid = strncmp(e->d_name, "invalid_", 8) == 0;
        read_text(dir, "expect.txt", expect, sizeof expect);
        read_text(dir, "atol.txt", atol, sizeof atol);
        case_opts co = fp32_opts;
        if (atol[0]) co.atol = strtod(atol, NULL);
        co.trace = strncmp(e->d_name, "trace_", 6) == 0;
        co.pad_dynamic = strstr(e->d_name, "padded_") != NULL;
        /* A case that is not refused may name a note its compile reports. */
        if (!refuse && !invalid && expect[0]) co.note = expect;
        int r = run_case(dir, &co, msg, sizeof msg);
        bool ok = refuse    ? r == 1 && expect[0] && strstr(msg, expect)
                  : invalid ? r == 2 && expect[0] && strstr(msg, expect) &&
                                  strstr(msg, "LM_ERR_INVALID_FILE")
                            : r == 0;
        /* The lower-precision modes compile and run every case too
         * (bfloat16 math: a loose comparison, catching a wrong op rather
         * than rounding). */
        bool fp32_only = strstr(e->d_name, "_fp32") != NULL;
        for (int m = 1; ok && !refuse && !invalid && !fp32_only && m <= 2; m++) {
            case_opts lo = {co.trace, (lmfe_dtype_mode)m, 0.1, 0.1, co.pad_dynamic, NULL};
            int k = snprintf(msg, sizeof msg, "%s mode: ", m == 1 ? "bf16" : "bfp8");
            if (run_case(dir, &lo, msg + k, sizeof msg - (size_t)k) != 0) ok = false;
        }
        total++;
        good += ok;
        if (!ok || getenv("LM_FE_VERBOSE"))
            printf("  %-44s %s%s\n", e->d_name, ok ? "" : "FAILED: ", msg);
    }
    closedir(d);
    printf("  built cases: %u / %u as expected\n", good, total);
    CHECK(total > 0);
    CHECK(good == total);
}

int main(void) {
    TEST_RUN(test_node_tests);
    TEST_RUN(test_built_cases);
    return test_summary();
}
