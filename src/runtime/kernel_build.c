/* Kernels from C source: the JIT build, then placement as for any ELF. Kept
 * apart from program.c so that a program that only replays binaries links no
 * compiler driver. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "lm_kernel_abi.h"
#include "runtime/jit.h"
#include "runtime/program.h"

/* Whether `name` ends in one of the C++ source extensions. */
static bool is_cxx_name(const char *name) {
    static const char *const ext[] = {".cpp", ".cc", ".cxx"};
    size_t n = name ? strlen(name) : 0;
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        size_t e = strlen(ext[i]);
        if (n > e && !strcmp(name + n - e, ext[i])) return true;
    }
    return false;
}

/* The defines the kernel build adds to the user's: the processor (also as
 * tt-metal's build names it, which single-source kernels test: the compute
 * processor is the math TRISC, as TRISC_MATH says), and the compute
 * configuration the compute API reads. */
lm_status rt_kernel_build(const char *name, const char *path, const char *source,
                          const lm_kernel_config *cfg, jit_artifact *out) {
    enum { OWN = 5 };
    uint32_t proc = (uint32_t)cfg->processor - 1;
    uint32_t n = cfg->define_count;
    jit_define *defs = malloc((n + OWN) * sizeof *defs);
    if (!defs) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    for (uint32_t i = 0; i < n; i++)
        defs[i] = (jit_define){cfg->defines[i].name, cfg->defines[i].value};
    static const char *const digits[] = {"0", "1", "2", "3", "4"};
    defs[n++] = (jit_define){"LM_PROCESSOR", digits[proc]};
    defs[n++] = proc == LM_PROC_DM0   ? (jit_define){"COMPILE_FOR_BRISC", NULL}
                : proc == LM_PROC_DM1 ? (jit_define){"COMPILE_FOR_NCRISC", NULL}
                                      : (jit_define){"COMPILE_FOR_TRISC", digits[1]};
    if (proc == LM_PROC_COMPUTE) {
        defs[n++] = (jit_define){"MATH_FIDELITY", digits[cfg->math_fidelity]};
        defs[n++] = (jit_define){"FP32_DEST_ACC_EN", digits[cfg->fp32_dest_acc_en]};
        defs[n++] = (jit_define){"MATH_APPROX_MODE", digits[cfg->math_approx_mode]};
    }
    /* A file kernel's own directory joins the include path ("." for a bare
     * file name: the kernel build runs elsewhere). */
    char dir[4096] = "";
    const char *slash = path ? strrchr(path, '/') : NULL;
    if (path && !slash) {
        snprintf(dir, sizeof dir, ".");
    } else if (slash == path) {
        snprintf(dir, sizeof dir, "/");
    } else if (slash && (size_t)(slash - path) < sizeof dir) {
        memcpy(dir, path, (size_t)(slash - path));
        dir[slash - path] = '\0';
    }
    jit_language lang = cfg->language == LM_KERNEL_LANGUAGE_CXX ? JIT_LANGUAGE_CXX
                        : cfg->language == LM_KERNEL_LANGUAGE_C ? JIT_LANGUAGE_C
                        : is_cxx_name(path ? path : name)       ? JIT_LANGUAGE_CXX
                                                                : JIT_LANGUAGE_C;
    uint32_t nn = cfg->named_compile_arg_count;
    jit_named_arg *named = nn ? malloc(nn * sizeof *named) : NULL;
    if (nn && !named) {
        free(defs);
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    }
    for (uint32_t i = 0; i < nn; i++)
        named[i] =
            (jit_named_arg){cfg->named_compile_args[i].name, cfg->named_compile_args[i].value};
    jit_request req = {
        .source = source,
        .language = lang,
        /* As in tt-metal, C++ data movement kernels get the dataflow API
         * without an include. */
        .prelude = lang == JIT_LANGUAGE_CXX && proc != LM_PROC_COMPUTE ? "dataflow_api.h" : NULL,
        .named_args = named,
        .named_arg_count = nn,
        .source_name = path ? path : name,
        .include_dir = dir[0] ? dir : NULL,
        .defines = defs,
        .define_count = n,
        .compile_args = cfg->compile_args,
        .compile_arg_count = cfg->compile_arg_count,
    };
    lm_status st = jit_build(&req, out);
    free(named);
    free(defs);
    return st;
}

lm_status rt_kernel_create(lm_program program, const char *name, const char *path,
                           const char *source, const lm_core_range_set *cores,
                           const lm_kernel_config *cfg, lm_kernel *out_kernel) {
    /* Check the placement first: a doomed kernel is not worth compiling. */
    lm_status st = rt_kernel_check_placement(program, cores, cfg);
    jit_artifact art = {0};
    if (!st) st = rt_kernel_build(name, path, source, cfg, &art);
    if (!st)
        st = rt_kernel_create_from_elf(program, name, art.elf, art.elf_size, 0, source, cores, cfg,
                                       out_kernel);
    free(art.elf);
    return st;
}
