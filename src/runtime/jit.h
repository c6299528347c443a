/* Kernel build: C11 or C++17 source -> RV32IM ELF, with an on-disk cache.
 *
 * A kernel is compiled with clang (--target=riscv32 -march=rv32im) against the
 * kernel SDK and linked by lld with the SDK's crt0 and linker script. C++
 * kernels are freestanding (-fno-exceptions -fno-rtti, no thread-safe
 * statics) and find the SDK's minimal standard headers (<cstdint>,
 * <cstring>, <type_traits>, ...) in its include/c++ directory.
 *
 * Reproducible: the same kernel gives the same ELF bytes from any checkout,
 * working directory, cache state or process. The compiler runs in a private
 * scratch directory on a source file of a fixed name, every directory it is
 * given is mapped away (-ffile-prefix-map), and `__FILE__` in the kernel is
 * its file name without directories; no pid, temporary name or absolute path
 * reaches the ELF.
 *
 * The cache has two levels (see jit_manifest.h). A manifest is found by a key
 * over the source text, the flags, defines and compile-time arguments, the
 * kernel's file name and the SDK's identity (crt0, linker script and the
 * names of its headers) -- no absolute path. Its entries list every file the
 * compiler read (headers from its dependency output, and the files of
 * `.incbin` / `.include` directives found in the asm it assembles) with a
 * hash of their bytes. A warm build re-hashes those files and loads the ELF:
 * no process is started, and the compiler need not even exist. The compiler
 * is recognised by its path, size and mtime; when that changed, its
 * `--version` output decides (run once per process). Without any compiler,
 * the newest matching entry is used. A kernel whose asm reads a file in a way
 * the scan cannot follow is compiled every time and never cached.
 * Not noticed (as with other compiler caches): a header created later where
 * the compiler would have found it ahead of the one it read.
 *
 * Where things are found:
 *   compiler   LM_CLANG (a path, or a name looked up on PATH), else `clang`;
 *              the lookup is redone when LM_CLANG or PATH change or the file
 *              found is gone
 *   SDK        jit_sdk_dir() below
 *   cache      jit_request.cache_dir, else LM_CACHE_DIR, else
 *              $XDG_CACHE_HOME/lightmetal/kernels, else ~/.cache/lightmetal/kernels
 *
 * Errors: LM_ERR_COMPILE with the compiler's own messages (the whole output
 * kept for lm_last_compile_log; see jit_diag.h); LM_ERR_IO when the
 * compiler cannot be run, the SDK is missing or the cache cannot be written
 * (the message says which path); LM_ERR_INVALID_ARGUMENT for a bad request.
 * Thread-safety: any number of builds may run at once, in one process or in
 * several sharing a cache: entries and manifests are written to a private
 * directory and renamed into place, and a reader checks an ELF's hash before
 * using it, so a torn or stale file is rebuilt, never used. A build that
 * compiles also removes the scratch directories of killed builds (those over
 * an hour old).
 */
#ifndef LM_RUNTIME_JIT_H
#define LM_RUNTIME_JIT_H

#include <stddef.h>
#include <stdint.h>

#include "lightmetal/lm_status.h"

typedef struct jit_define {
    const char *name;  /* a C identifier */
    const char *value; /* NULL for a bare `#define name` */
} jit_define;

typedef enum jit_language {
    JIT_LANGUAGE_C = 0, /* C11 */
    JIT_LANGUAGE_CXX,   /* C++17 */
} jit_language;

/* A named compile-time argument: get_named_compile_time_arg_val("name"). */
typedef struct jit_named_arg {
    const char *name; /* letters, digits and '_', not starting with a digit */
    uint32_t value;
} jit_named_arg;

typedef struct jit_request {
    const char *source; /* kernel source text (NUL-terminated) */
    jit_language language;
    const char *source_name; /* shown in compiler messages; a path for file kernels */
    const char *include_dir; /* extra include directory (a file kernel's own), or NULL */
    const jit_define *defines;
    size_t define_count;
    const uint32_t *compile_args; /* get_compile_time_arg_val(i) */
    size_t compile_arg_count;
    const jit_named_arg *named_args; /* C++ kernels only */
    size_t named_arg_count;
    const char *prelude;   /* an SDK header included ahead of the source, or NULL */
    const char *cache_dir; /* NULL: the default described above */
} jit_request;

typedef struct jit_artifact {
    void *elf; /* malloc'ed; the caller frees it */
    size_t elf_size;
    uint64_t key;  /* names the ELF in the cache (a hash of all its inputs) */
    int cache_hit; /* 1 when no compiler ran for the ELF */
} jit_artifact;

lm_status jit_build(const jit_request *request, jit_artifact *out_artifact);

/* The kernel SDK directory builds use (jit_sdk.c), the first of:
 *   1. the environment variable LM_KERNEL_SDK_DIR, when set and not empty
 *      (used whether it exists or not);
 *   2. the SDK of the install this code runs from: the directory of the
 *      shared library holding it (symlinks resolved) joined with
 *      LM_KERNEL_SDK_FROM_LIBDIR, or, when it is linked into a program, the
 *      program's directory (/proc/self/exe) joined with
 *      LM_KERNEL_SDK_FROM_BINDIR ("../share/lightmetal/kernel-sdk" for the
 *      usual layout), if that directory exists. So an install finds its SDK
 *      from any prefix it was installed to or moved to;
 *   3. for a library or program inside the build tree (LM_BUILD_TREE_DIR),
 *      LM_KERNEL_SDK_DIR, the source tree's SDK, if it exists;
 *   4. LM_KERNEL_SDK_INSTALL_DIR, the SDK under the prefix configured at
 *      build time, if it exists (a program linked with the static library
 *      elsewhere has nothing else to go by);
 *   5. LM_KERNEL_SDK_DIR, the source tree's SDK, existing or not (then the
 *      build fails naming what was searched).
 * The macros are the build's definitions (src/runtime/CMakeLists.txt). The
 * library's place is found once per process. The string belongs to the
 * environment or to this module: do not free it. Thread-safe, as getenv. */
const char *jit_sdk_dir(void);

/* Where jit_sdk_dir() looks after the environment, for a message when no
 * SDK is found: "'DIR' (next to 'FILE'), 'DIR' (...) and 'DIR'". */
void jit_sdk_searched(char *out, size_t out_size);

#endif
