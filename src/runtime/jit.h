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
 * Errors: LM_ERR_COMPILE with the compiler's own messages; LM_ERR_IO when the
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

/* The kernel SDK directory builds use, in this order:
 *   1. the environment variable LM_KERNEL_SDK_DIR, when set and not empty;
 *   2. LM_KERNEL_SDK_INSTALL_DIR, when the library was configured for
 *      installation (the build defines it) and that directory exists;
 *   3. LM_KERNEL_SDK_DIR, the SDK of the source tree the library was built
 *      from (the build always defines it).
 * The string is the environment's or a constant: do not free it. */
const char *jit_sdk_dir(void);

#endif
