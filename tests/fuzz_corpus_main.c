/* Runs the fuzz target over every file of the regression corpus (argv[1],
 * or the committed corpus by default), so every build, with any compiler
 * and under the sanitizers, replays past fuzz findings. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/file.h"
#include "lightmetal/lm_status.h"

/* The fuzz target this runner is linked with. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv) {
    const char *corpus = argc > 1 ? argv[1] : LM_FUZZ_CORPUS_DIR;
    DIR *dir = opendir(corpus);
    if (!dir) {
        printf("FAIL fuzz_corpus: cannot open %s\n", corpus);
        return 1;
    }
    int files = 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        if (e->d_name[0] == '.') continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", corpus, e->d_name);
        void *data;
        size_t size;
        if (file_read_all(path, &data, &size) != LM_OK) {
            printf("FAIL fuzz_corpus: cannot read %s: %s\n", path, lm_last_error());
            closedir(dir);
            return 1;
        }
        LLVMFuzzerTestOneInput(data, size);
        free(data);
        files++;
    }
    closedir(dir);
    printf("%s fuzz_corpus (%d files)\n", files > 0 ? "PASS" : "FAIL", files);
    return files > 0 ? 0 : 1;
}
