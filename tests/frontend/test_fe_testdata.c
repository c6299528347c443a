/* Every model and tensor file of ONNX's backend test data (Debian's
 * libonnx-testdata) through the loader: each loads, or is refused with a
 * status and a message naming the file (sequence, map and optional types
 * are refused; string tensors load without data). Counts are printed.
 * Skipped when the data is not installed.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "frontend/fe_graph.h"
#include "lightmetal/frontend.h"
#include "lm_test.h"

typedef struct counts {
    unsigned models, models_ok, tensors, tensors_ok;
    unsigned unclean;
} counts;

static bool is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A refusal is clean when it has a known status and its message starts
 * with the file (or, for lmfe_read_tensor_pb, the function and the file). */
static void check_refusal(counts *c, lm_status st, const char *path, const char *prefix) {
    const char *msg = lm_last_error();
    char want[1200];
    snprintf(want, sizeof want, "%s%s: ", prefix, path);
    bool known = st == LM_ERR_INVALID_FILE || st == LM_ERR_UNSUPPORTED;
    if (!known || strncmp(msg, want, strlen(want)) != 0) {
        c->unclean++;
        printf("  UNCLEAN %s: %s: %s\n", path, lm_status_string(st), msg);
    } else if (getenv("LM_FE_VERBOSE")) {
        printf("  refused %s\n", msg);
    }
}

static void visit_case(counts *c, const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    c->models++;
    fe_graph *g = NULL;
    lm_status st = fe_onnx_load(path, &g);
    if (st == LM_OK) {
        c->models_ok++;
        fe_graph_free(g);
    } else {
        check_refusal(c, st, path, "");
    }
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "test_data_set_", 14) != 0) continue;
        char set[2048];
        snprintf(set, sizeof set, "%s/%s", dir, e->d_name);
        DIR *sd = opendir(set);
        if (!sd) continue;
        struct dirent *f;
        while ((f = readdir(sd))) {
            size_t n = strlen(f->d_name);
            if (n < 4 || strcmp(f->d_name + n - 3, ".pb") != 0) continue;
            snprintf(path, sizeof path, "%s/%s", set, f->d_name);
            c->tensors++;
            lmfe_tensor_value tv;
            st = lmfe_read_tensor_pb(path, &tv);
            if (st == LM_OK) {
                c->tensors_ok++;
                lmfe_tensor_value_free(&tv);
            } else {
                check_refusal(c, st, path, "lmfe_read_tensor_pb: ");
            }
        }
        closedir(sd);
    }
    closedir(d);
}

static void test_testdata(void) {
    static const char *const sets[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};
    if (!is_dir(LM_ONNX_TESTDATA)) {
        printf("  skipped: %s is not installed\n", LM_ONNX_TESTDATA);
        return;
    }
    counts total = {0};
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
        char root[512];
        snprintf(root, sizeof root, "%s/%s", LM_ONNX_TESTDATA, sets[s]);
        DIR *d = opendir(root);
        if (!d) continue;
        counts c = {0};
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            char dir[1024];
            snprintf(dir, sizeof dir, "%s/%s", root, e->d_name);
            if (is_dir(dir)) visit_case(&c, dir);
        }
        closedir(d);
        printf("  %-18s models %u/%u load, tensors %u/%u load\n", sets[s], c.models_ok, c.models,
               c.tensors_ok, c.tensors);
        total.models += c.models;
        total.models_ok += c.models_ok;
        total.tensors += c.tensors;
        total.tensors_ok += c.tensors_ok;
        total.unclean += c.unclean;
    }
    printf("  total: models %u/%u load, tensors %u/%u load, %u unclean refusals\n", total.models_ok,
           total.models, total.tensors_ok, total.tensors, total.unclean);
    CHECK(total.unclean == 0);
    CHECK(total.models > 0);
    /* Nearly every model is a plain tensor graph. */
    CHECK(total.models_ok * 10 >= total.models * 9);
}

int main(void) {
    TEST_RUN(test_testdata);
    return test_summary();
}
