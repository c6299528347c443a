/* What the kernel compiler read, recovered from its own outputs.
 *
 * The preprocessor's dependency file (-MD) lists every header, but not the
 * files the assembler reads for `.incbin` and `.include` directives in inline
 * or file-scope asm. Those are found by scanning the asm text the compiler
 * hands to its assembler (the strings of the unoptimised LLVM IR, or a raw
 * assembler file pulled in by `.include`).
 *
 * Both readers are strict: a name they cannot read without guessing (an
 * escape they do not know, a directive whose operand is not a plain quoted
 * path) makes them report *out_ok = false, and the caller then does not cache
 * the build. A build is never cached on a partial list.
 *
 * Errors: LM_ERR_OUT_OF_HOST_MEMORY only. Thread-safety: pure functions.
 */
#ifndef LM_RUNTIME_JIT_DEPS_H
#define LM_RUNTIME_JIT_DEPS_H

#include <stdbool.h>
#include <stddef.h>

#include "lightmetal/lm_status.h"

/* A growable list of malloc'ed strings. Start zeroed; free with
 * jit_strlist_free. */
typedef struct jit_strlist {
    char **items;
    size_t count, cap;
} jit_strlist;

/* Appends a copy of s[0, n). */
lm_status jit_strlist_add(jit_strlist *list, const char *s, size_t n);
void jit_strlist_free(jit_strlist *list);

/* Reads a Make-format dependency file whose one rule has the target `target`
 * (the compiler's -MT), appending each prerequisite in order. */
lm_status jit_deps_parse_make(const char *text, size_t size, const char *target, jit_strlist *out,
                              bool *out_ok);

/* Appends the operand of every `.incbin` to out_incbin and of every `.include`
 * to out_include (directive names in any case, as the assembler accepts).
 * With `ir_escaped`, the text is LLVM IR whose strings escape bytes as \XX;
 * they are decoded first. Any other occurrence of either directive name that
 * is not followed by a plain quoted path (no backslash, '$' or control
 * character in it) sets *out_ok = false. */
lm_status jit_deps_scan_asm(const char *text, size_t size, bool ir_escaped, jit_strlist *out_incbin,
                            jit_strlist *out_include, bool *out_ok);

#endif
