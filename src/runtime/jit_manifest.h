/* The kernel cache's manifests: the first of its two levels.
 *
 * A manifest is named by the hash of everything known before compiling (the
 * source, flags, defines, compile-time arguments, SDK identity). It lists up
 * to JIT_MANIFEST_MAX_ENTRIES builds, newest first. Each entry names the
 * compiler that made it and every file that compiler read (headers and the
 * files of `.incbin` / `.include`) with a hash of the file's bytes; an entry
 * matches when all those files still hash the same, and the ELF it leads to
 * is the second level.
 *
 * Paths in an entry are relative to the SDK ("$SDK/...") or to the kernel's
 * own include directory ("$INC/...") when they lie there, so a manifest
 * written from one checkout serves another; other paths (the compiler's own
 * headers) are absolute.
 *
 * The file is text, one record a line:
 *   lightmetal-kernel-manifest 1
 *   entry <compiler-stat> <compiler-version> <elf-hash> <dep-count>
 *   dep <hash> <path>            (dep-count of these after each entry)
 * with every number as 16 lowercase hex digits (dep-count in decimal).
 *
 * Errors: LM_ERR_OUT_OF_HOST_MEMORY only; a malformed file is not an error
 * (*out_ok = false: the cache treats it as empty and rewrites it).
 * Thread-safety: pure functions on caller-owned values.
 */
#ifndef LM_RUNTIME_JIT_MANIFEST_H
#define LM_RUNTIME_JIT_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lightmetal/lm_status.h"

#define JIT_MANIFEST_MAX_ENTRIES 8
#define JIT_MANIFEST_MAX_DEPS 4096

typedef struct jit_dep {
    char *path;    /* "$SDK/...", "$INC/..." or absolute; malloc'ed */
    uint64_t hash; /* hash64 of the file's bytes */
} jit_dep;

typedef struct jit_entry {
    uint64_t compiler_stat;    /* the compiler's path, size and mtime, hashed */
    uint64_t compiler_version; /* hash of its `--version` output */
    uint64_t elf_hash;         /* hash64 of the ELF this entry leads to */
    jit_dep *deps;             /* malloc'ed */
    uint32_t dep_count;
} jit_entry;

typedef struct jit_manifest {
    jit_entry entries[JIT_MANIFEST_MAX_ENTRIES];
    uint32_t count;
} jit_manifest;

/* Parses text[0, size) into *out (which the caller frees with
 * jit_manifest_free, whatever the outcome). */
lm_status jit_manifest_parse(const char *text, size_t size, jit_manifest *out, bool *out_ok);

/* The text of m; *out_text is malloc'ed. */
lm_status jit_manifest_format(const jit_manifest *m, char **out_text, size_t *out_size);

/* Makes *e the newest entry (m takes its deps; *e is zeroed), dropping an
 * older entry of the same compiler version and file hashes, and the oldest
 * entry beyond the limit. */
void jit_manifest_put(jit_manifest *m, jit_entry *e);

void jit_entry_free(jit_entry *e);
void jit_manifest_free(jit_manifest *m);

#endif
