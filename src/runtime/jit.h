/* Kernel build: C source -> RV32IM ELF, with an on-disk cache.
 *
 * A kernel is compiled with clang (--target=riscv32 -march=rv32im) against the
 * kernel SDK and linked by lld with the SDK's crt0 and linker script. The
 * cache key is a hash of everything that changes the output: the preprocessed
 * source (so every included header counts, wherever it lives), the defines and
 * compile-time arguments, the flags, and the compiler's version text. A second
 * build of the same kernel reads the ELF from the cache without compiling.
 *
 * Where things are found (each overridable by an environment variable):
 *   compiler   LM_CLANG, else `clang` on PATH
 *   SDK        LM_KERNEL_SDK, else the SDK of the source tree this library was
 *              built from
 *   cache      jit_request.cache_dir, else LM_CACHE_DIR, else
 *              $XDG_CACHE_HOME/lightmetal/kernels, else ~/.cache/lightmetal/kernels
 *
 * Errors: LM_ERR_COMPILE with the compiler's own messages; LM_ERR_IO when the
 * compiler cannot be run or the cache cannot be written (the message says
 * which path); LM_ERR_INVALID_ARGUMENT for a bad request.
 * Thread-safety: any number of builds may run at once, in one process or
 * several sharing a cache (cache entries are written atomically).
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

typedef struct jit_request {
    const char *source;      /* kernel C source text (NUL-terminated) */
    const char *source_name; /* shown in compiler messages; a path for file kernels */
    const char *include_dir; /* extra include directory (a file kernel's own), or NULL */
    const jit_define *defines;
    size_t define_count;
    const uint32_t *compile_args; /* get_compile_time_arg_val(i) */
    size_t compile_arg_count;
    const char *cache_dir; /* NULL: the default described above */
} jit_request;

typedef struct jit_artifact {
    void *elf; /* malloc'ed; the caller frees it */
    size_t elf_size;
    uint64_t key;  /* the cache key */
    int cache_hit; /* 1 when no compiler ran for the ELF */
} jit_artifact;

lm_status jit_build(const jit_request *request, jit_artifact *out_artifact);

#endif
