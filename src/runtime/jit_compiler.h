/* The kernel compiler, for the kernel build (jit.c): found and recognised
 * without running it, its version, and running it in a directory of the
 * build's own.
 *
 * Errors: LM_ERR_IO naming the path or the program that failed.
 * Thread-safety: every function may be called from any thread; the lookup
 * and the version are remembered per process under a lock.
 */
#ifndef LM_RUNTIME_JIT_COMPILER_H
#define LM_RUNTIME_JIT_COMPILER_H

#include <stdbool.h>
#include <stdint.h>

#include "lightmetal/lm_status.h"

#define JIT_PATH_MAX 4096

typedef struct jit_compiler {
    const char *name; /* as configured: LM_CLANG, else "clang" */
    bool found;
    char path[JIT_PATH_MAX]; /* absolute, symlinks kept */
    uint64_t stat_id;        /* its path, size, mtime and inode, hashed */
} jit_compiler;

/* Looks LM_CLANG (a path, or a name on PATH) or `clang` up without running
 * it. Not finding it is not an error (found = false): a warm build needs no
 * compiler. The lookup is remembered while LM_CLANG and PATH stay the same
 * and the file is still there. */
lm_status jit_compiler_find(jit_compiler *c);

/* A hash of the compiler's `--version` output without the lines that say
 * where it was run from (clang's "InstalledDir:"), so the same compiler
 * reached through a symlink or a wrapper is the same. Runs it (in `dir`, its
 * output in `log_path`) unless the version of a compiler with this stat_id
 * is already known. */
lm_status jit_compiler_version(const jit_compiler *c, const char *dir, const char *log_path,
                               uint64_t *out_hash);

/* Runs argv (argv[0] an absolute path) with `dir` as its working directory,
 * so that nothing it resolves depends on the caller's, and stdout and stderr
 * in `log_path`. *out_exit is the exit status, -1 after a signal. */
lm_status jit_run(const char *dir, char *const argv[], const char *log_path, int *out_exit);

/* An absolute form of `path` in out[JIT_PATH_MAX]: cwd-prefixed when
 * relative, symlinks kept, trailing slashes dropped. */
lm_status jit_absolute(const char *path, char *out);

#endif
