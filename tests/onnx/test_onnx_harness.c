/* The conformance program itself (onnx_conformance) on made-up test
 * directories built here: a correct Relu test passes; a wrong expected value
 * and a wrong expected shape are mismatches; a missing expected output, a
 * missing test_data_set_0, an unreadable expected input and an unreadable
 * model are reported as such (not a crash, not a pass); an unknown op is
 * "unsupported op"; a symbolic dim takes the test data's value. Then the
 * regression guard: --expect-file fails for a listed test that does not pass
 * or does not exist, passes otherwise, and --update-expected rewrites the
 * list keeping the lines of tests the run left out; --all fails for any
 * test that does not pass, naming it. A hanging tool is killed
 * after the time limit ("timeout"), one killed by a signal is a "crash".
 * --const-inputs gives the inputs to compile as constants. --dtype goes to
 * compile, --scaled-atol widens the tolerance by the output's largest
 * magnitude, and --skip leaves tests out (any of a comma-separated list);
 * a test named padded_* compiles with --pad-dynamic.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lm_test.h"
#include "onnx_build.h"

static char root[300]; /* <tmp>/fake: the data root, set "fake" */
static char base[256]; /* <tmp> */

static void write_file(const char *path, const void *data, size_t size) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f)) {
        fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
}

static void write_tensor(const char *path, const char *name, const int64_t *dims, int rank,
                         const float *data) {
    Onnx__TensorProto *t = ob_tensor(name, 1, rank, dims);
    size_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= (size_t)dims[i];
    ob_raw(t, data, n * sizeof *data);
    size_t size = onnx__tensor_proto__get_packed_size(t);
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf) abort();
    onnx__tensor_proto__pack(t, buf);
    write_file(path, buf, size);
    free(buf);
}

/* A test directory with a one-node model `op` (x float[2,3] -> y float[2,3];
 * `symbolic`: x float[n,3]); `want` NULL: no output_0.pb; `with_data` false:
 * no test_data_set_0. */
static void make_test_ex(const char *name, const char *op, const float *want,
                         const int64_t *want_dims, bool with_data, bool symbolic) {
    static const float x[6] = {-1, 2, -3, 4, -5, 6};
    static const int64_t dims[2] = {2, 3}, sym_dims[2] = {-1, 3};
    static const char *const syms[2] = {"n", NULL};
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/%s", root, name);
    mkdir(dir, 0755);
    Onnx__GraphProto *g = ob_graph("g");
    ob_input(g, ob_vi("x", ob_tensor_type(1, 2, symbolic ? sym_dims : dims, syms)));
    ob_output(g, ob_vi("y", ob_tensor_type(1, 2, symbolic ? sym_dims : dims, syms)));
    ob_node(g, op, "n", (const char *const[]){"x", NULL}, (const char *const[]){"y", NULL});
    size_t size;
    uint8_t *bytes = ob_pack(ob_model(g), &size);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    write_file(path, bytes, size);
    free(bytes);
    if (!with_data) return;
    snprintf(path, sizeof path, "%s/test_data_set_0", dir);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/test_data_set_0/input_0.pb", dir);
    write_tensor(path, "x", dims, 2, x);
    if (want) {
        snprintf(path, sizeof path, "%s/test_data_set_0/output_0.pb", dir);
        write_tensor(path, "y", want_dims ? want_dims : dims, 2, want);
    }
}

static void make_test(const char *name, const char *op, const float *want, const int64_t *want_dims,
                      bool with_data) {
    make_test_ex(name, op, want, want_dims, with_data, false);
}

static void make_all(void) {
    static const float relu[6] = {0, 2, 0, 4, 0, 6}, wrong[6] = {0, 2, 0, 4, 0, 7};
    static const int64_t transposed[2] = {3, 2};
    make_test("test_relu_ok", "Relu", relu, NULL, true);
    make_test("test_relu_wrong", "Relu", wrong, NULL, true);
    make_test("test_relu_shape", "Relu", relu, transposed, true);
    make_test("test_relu_no_output", "Relu", NULL, NULL, true);
    make_test("test_relu_no_data", "Relu", relu, NULL, false);
    make_test("test_unknown_op", "NoSuchOpAnywhere", relu, NULL, true);
    /* Compiled with --pad-dynamic (its name). */
    make_test("test_padded_neg", "Relu", relu, NULL, true);
    /* An unreadable model with valid test data. */
    make_test("test_garbage", "Relu", relu, NULL, true);
    char path[600];
    snprintf(path, sizeof path, "%s/test_garbage/model.onnx", root);
    write_file(path, "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f garbage", 20);
    /* The batch dim is the test data's (--input-shape). */
    make_test_ex("test_relu_symbolic", "Relu", relu, NULL, true, true);
    /* An expected input that is not a TensorProto. */
    make_test("test_bad_input", "Relu", relu, NULL, true);
    snprintf(path, sizeof path, "%s/test_bad_input/test_data_set_0/input_0.pb", root);
    write_file(path, "\x0a\xff\xff", 3);
    /* A plain file among the test directories is not a test. */
    snprintf(path, sizeof path, "%s/README", root);
    write_file(path, "not a test\n", 11);
    ob_free_all();
}

/* Runs the program with `args`; returns its exit status (-1: abnormal). */
static int conformance(const char *args) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' --data '%s' --jobs 2 --timeout 120 %s >'%s/log' 2>&1",
             LM_CONFORMANCE_PATH, root, args, base);
    int st = system(cmd);
    if (st == -1 || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

static char *read_text(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* The TSV row of `test` ("fake\ttest\t..."), copied into row. */
static bool find_row(const char *tsv, const char *test, char *row, size_t cap) {
    char key[256];
    snprintf(key, sizeof key, "\nfake\t%s\t", test);
    const char *p = strstr(tsv, key);
    if (!p) return false;
    p++;
    size_t n = strcspn(p, "\n");
    if (n >= cap) n = cap - 1;
    memcpy(row, p, n);
    row[n] = '\0';
    return true;
}

static void show_log(void) {
    char path[300];
    snprintf(path, sizeof path, "%s/log", base);
    const char *log = read_text(path);
    printf("--- onnx_conformance output:\n%s---\n", log ? log : "(none)");
}

static void test_classes(void) {
    char args[600], path[300], row[1024];
    snprintf(path, sizeof path, "%s/out.tsv", base);
    snprintf(args, sizeof args, "--tsv '%s'", path);
    int rc = conformance(args);
    if (rc != 0) show_log();
    CHECK(rc == 0); /* failures alone do not fail the run */
    char *tsv = read_text(path);
    CHECK(tsv);
    CHECK(!strncmp(tsv, "set\ttest\top\texpanded\tresult\treason\n", 35));
    CHECK(!strstr(tsv, "README"));
    CHECK(find_row(tsv, "test_relu_ok", row, sizeof row));
    CHECK(!strcmp(row, "fake\ttest_relu_ok\tRelu\t0\tpass\t"));
    CHECK(find_row(tsv, "test_relu_symbolic", row, sizeof row));
    CHECK(!strcmp(row, "fake\ttest_relu_symbolic\tRelu\t0\tpass\t"));
    CHECK(find_row(tsv, "test_bad_input", row, sizeof row));
    printf("  %s\n", row);
    CHECK(strstr(row, "\ttest data error\tinput_0.pb: "));
    CHECK(find_row(tsv, "test_relu_wrong", row, sizeof row));
    printf("  %s\n", row);
    CHECK(strstr(row, "\tmismatch\toutput 'y': 1 of 6 elements differ"));
    CHECK(strstr(row, "got 6, want 7"));
    CHECK(find_row(tsv, "test_relu_shape", row, sizeof row));
    printf("  %s\n", row);
    CHECK(strstr(row, "\tmismatch\toutput 'y': shape (2, 3), expected (3, 2)"));
    CHECK(find_row(tsv, "test_relu_no_output", row, sizeof row));
    printf("  %s\n", row);
    CHECK(strstr(row, "\ttest data error\toutput_0.pb is missing (model outputs: 1)"));
    CHECK(find_row(tsv, "test_relu_no_data", row, sizeof row));
    printf("  %s\n", row);
    CHECK(strstr(row, "\ttest data error\tno test_data_set_0 directory"));
    CHECK(find_row(tsv, "test_unknown_op", row, sizeof row));
    printf("  %s\n", row);
    CHECK(strstr(row, "\tNoSuchOpAnywhere\t0\tunsupported op\t"));
    CHECK(strstr(row, "NoSuchOpAnywhere"));
    CHECK(find_row(tsv, "test_garbage", row, sizeof row));
    printf("  %s\n", row);
    CHECK(!strstr(row, "\tpass\t") && !strstr(row, "harness crash"));
    /* Sorted by name: garbage, relu_no_data, ..., unknown_op. */
    CHECK(strstr(tsv, "test_garbage") < strstr(tsv, "test_relu_ok"));
    CHECK(strstr(tsv, "test_relu_wrong") < strstr(tsv, "test_unknown_op"));
}

static void test_expected(void) {
    char args[800], list[300];
    snprintf(list, sizeof list, "%s/expected.txt", base);
    snprintf(args, sizeof args, "--filter relu_ok --expect-file '%s'", list);
    write_file(list, "# comment\nfake/test_relu_ok\n", 27);
    CHECK(conformance(args) == 0);
    write_file(list, "fake/test_relu_ok\nfake/test_relu_wrong\n", 39);
    snprintf(args, sizeof args, "--filter relu_wrong --expect-file '%s'", list);
    CHECK(conformance(args) == 1);
    write_file(list, "fake/test_relu_gone\n", 20);
    snprintf(args, sizeof args, "--filter relu --expect-file '%s'", list);
    CHECK(conformance(args) == 1);
    /* Out of scope (another set, or not matching the filter): not checked. */
    write_file(list, "other/test_x\nfake/test_unknown_op\n", 34);
    snprintf(args, sizeof args, "--filter relu_ok --expect-file '%s'", list);
    CHECK(conformance(args) == 0);
    /* The update keeps the lines of tests not run and records the passes. */
    snprintf(args, sizeof args, "--filter relu --expect-file '%s' --update-expected", list);
    CHECK(conformance(args) == 0);
    char *text = read_text(list);
    CHECK(text);
    const char *body = strstr(text, "fake/");
    CHECK(body);
    printf("  %s", body);
    CHECK(!strcmp(
        body, "fake/test_relu_ok\nfake/test_relu_symbolic\nfake/test_unknown_op\nother/test_x\n"));
}

/* --all: every test must pass; the ones that do not are listed. */
static void test_all(void) {
    char log[300];
    snprintf(log, sizeof log, "%s/log", base);
    CHECK(conformance("--filter relu_ok --all") == 0);
    CHECK(conformance("--filter relu_ --all") == 1);
    const char *text = read_text(log);
    CHECK(text && strstr(text, "FAILED fake/test_relu_wrong: output 'y': 1 of 6 elements differ"));
    CHECK(text && !strstr(text, "FAILED fake/test_relu_ok"));
}

/* A tool that hangs is killed after --timeout; one that dies of a signal is
 * a crash (fake tools: shell scripts in place of lightmetal). */
static void test_hang_and_crash(void) {
    static const struct {
        const char *script, *want;
    } cases[] = {
        {"#!/bin/sh\nexec sleep 30\n", "\ttimeout\tlightmetal compile ran longer than 1 s"},
        {"#!/bin/sh\nkill -SEGV $$\n", "\tcrash\tlightmetal compile killed by signal 11"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char tool[300], tsv[300], args[900], row[1024];
        snprintf(tool, sizeof tool, "%s/fake-tool-%zu", base, i);
        snprintf(tsv, sizeof tsv, "%s/fake-%zu.tsv", base, i);
        write_file(tool, cases[i].script, strlen(cases[i].script));
        CHECK(chmod(tool, 0755) == 0);
        snprintf(args, sizeof args, "--filter relu_ok --timeout 1 --cli '%s' --tsv '%s'", tool,
                 tsv);
        int rc = conformance(args);
        if (rc != 0) show_log();
        CHECK(rc == 0);
        char *text = read_text(tsv);
        CHECK(text && find_row(text, "test_relu_ok", row, sizeof row));
        printf("  %s\n", row);
        CHECK(strstr(row, cases[i].want));
    }
}

/* The command lines the conformance program, run on relu_ok with options
 * `extra`, gives its tool: a fake tool logs them (and fails). "" when it
 * did not run the tool. */
static const char *tool_calls(const char *extra) {
    char tool[300], calls[300], args[900], script[700];
    snprintf(tool, sizeof tool, "%s/fake-tool-args", base);
    snprintf(calls, sizeof calls, "%s/calls", base);
    snprintf(script, sizeof script, "#!/bin/sh\necho \"$@\" >> '%s'\nexit 1\n", calls);
    write_file(tool, script, strlen(script));
    remove(calls);
    snprintf(args, sizeof args, "--filter relu_ok --cli '%s' %s", tool, extra);
    if (chmod(tool, 0755) != 0 || conformance(args) != 0) return "";
    const char *text = read_text(calls);
    return text && strstr(text, "compile ") ? text : "";
}

/* --const-inputs: the inputs go to compile as constants, and the outputs
 * are still compared (the real tool). */
static void test_const_inputs(void) {
    const char *plain = tool_calls("");
    CHECK(strstr(plain, "compile ") && !strstr(plain, "--const x="));
    CHECK(strstr(tool_calls("--const-inputs"), "--const x="));
    CHECK(conformance("--filter relu_ok --const-inputs --all") == 0);
    CHECK(conformance("--filter relu_wrong --const-inputs --all") == 1);
}

/* --skip, --scaled-atol, --dtype and --trace. */
static void test_modes(void) {
    char tsv[300], skip[700];
    snprintf(tsv, sizeof tsv, "%s/skip.tsv", base);
    snprintf(skip, sizeof skip, "--filter relu_ --skip relu_wrong --tsv '%s'", tsv);
    conformance(skip);
    const char *rows = read_text(tsv);
    CHECK(rows && strstr(rows, "test_relu_ok") && !strstr(rows, "test_relu_wrong"));
    snprintf(skip, sizeof skip, "--filter test_ --skip nothing,relu_wrong,,relu_sh --tsv '%s'",
             tsv);
    conformance(skip);
    rows = read_text(tsv);
    CHECK(rows && strstr(rows, "test_relu_ok") && !strstr(rows, "test_relu_wrong") &&
          !strstr(rows, "test_relu_shape") && strstr(rows, "test_padded_neg"));
    CHECK(conformance("--filter relu_wrong --all") == 1);
    /* relu_wrong's 7 for 6: within 0.2 of 7, not within 0.1. */
    CHECK(conformance("--filter relu_wrong --all --scaled-atol 0.2") == 0);
    CHECK(conformance("--filter relu_wrong --all --scaled-atol 0.1") == 1);
    const char *plain = tool_calls("");
    CHECK(strstr(plain, "compile ") && strstr(plain, "--dtype fp32 ") && !strstr(plain, "--trace"));
    CHECK(strstr(tool_calls("--dtype bfp8"), "--dtype bfp8 "));
    CHECK(strstr(tool_calls("--trace"), "--trace"));
    CHECK(!strstr(plain, "--pad-dynamic"));
    CHECK(strstr(tool_calls("--filter padded_neg"), "--pad-dynamic"));
    CHECK(conformance("--filter padded_neg --all") == 0);
    CHECK(conformance("--filter relu_ok --dtype bf16 --all") == 0);
    CHECK(conformance("--filter relu_ok --trace --all") == 0);
}

static void test_usage(void) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "'%s' --jobs 0 >/dev/null 2>&1", LM_CONFORMANCE_PATH);
    int st = system(cmd);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2);
    snprintf(cmd, sizeof cmd, "'%s' --update-expected >/dev/null 2>&1", LM_CONFORMANCE_PATH);
    st = system(cmd);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2);
    const char *atols[] = {"-1", "2", "1e-5x", "nan"};
    for (int i = 0; i < 4; i++) {
        snprintf(cmd, sizeof cmd, "'%s' --atol %s >/dev/null 2>&1", LM_CONFORMANCE_PATH, atols[i]);
        st = system(cmd);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2);
        snprintf(cmd, sizeof cmd, "'%s' --scaled-atol %s >/dev/null 2>&1", LM_CONFORMANCE_PATH,
                 atols[i]);
        st = system(cmd);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2);
    }
    const char *bad[] = {"--dtype fp16", "--dtype", "--skip"};
    for (int i = 0; i < 3; i++) {
        snprintf(cmd, sizeof cmd, "'%s' %s >/dev/null 2>&1", LM_CONFORMANCE_PATH, bad[i]);
        st = system(cmd);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2);
    }
}

int main(void) {
    /* onnx_build.h's constructors this test has no use for. */
    (void)ob_import;
    (void)ob_attr;
    (void)ob_init;
    (void)ob_value_info;
    const char *tmp = getenv("TMPDIR");
    snprintf(base, sizeof base, "%s/lm-onnx-harness.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(base)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(root, sizeof root, "%s/fake", base);
    mkdir(root, 0755);
    make_all();
    TEST_RUN(test_classes);
    TEST_RUN(test_expected);
    TEST_RUN(test_all);
    TEST_RUN(test_hang_and_crash);
    TEST_RUN(test_const_inputs);
    TEST_RUN(test_modes);
    TEST_RUN(test_usage);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", base);
    return test_summary();
}
