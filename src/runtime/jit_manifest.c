#include "runtime/jit_manifest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

#define MAGIC "lightmetal-kernel-manifest 1"

void jit_entry_free(jit_entry *e) {
    for (uint32_t i = 0; i < e->dep_count; i++)
        free(e->deps[i].path);
    free(e->deps);
    *e = (jit_entry){0};
}

void jit_manifest_free(jit_manifest *m) {
    for (uint32_t i = 0; i < m->count; i++)
        jit_entry_free(&m->entries[i]);
    m->count = 0;
}

/* A cursor over the lines of the text. */
typedef struct reader {
    const char *p, *end;
} reader;

/* The next line without its '\n'; false at the end or for a last line
 * without one (a torn write). */
static bool next_line(reader *r, const char **out, size_t *out_len) {
    const char *nl = r->p < r->end ? memchr(r->p, '\n', (size_t)(r->end - r->p)) : NULL;
    if (!nl) return false;
    *out = r->p;
    *out_len = (size_t)(nl - r->p);
    r->p = nl + 1;
    return true;
}

/* Exactly 16 lowercase hex digits. */
static bool read_hex64(const char *s, uint64_t *out) {
    uint64_t v = 0;
    for (int i = 0; i < 16; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) return false;
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return true;
}

static bool valid_path(const char *s, size_t n) {
    if (n == 0) return false;
    if (!(s[0] == '/' || (n > 5 && (!memcmp(s, "$SDK/", 5) || !memcmp(s, "$INC/", 5)))))
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '\0') return false;
    return true;
}

/* "entry H H H N" */
static bool parse_entry_line(const char *s, size_t n, jit_entry *e, uint32_t *out_count) {
    if (n < 6 + 3 * 17 + 1 || memcmp(s, "entry ", 6) != 0) return false;
    s += 6;
    n -= 6;
    uint64_t v[3];
    for (int i = 0; i < 3; i++) {
        if (!read_hex64(s, &v[i]) || s[16] != ' ') return false;
        s += 17;
        n -= 17;
    }
    uint32_t count = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9' || count > JIT_MANIFEST_MAX_DEPS) return false;
        count = count * 10 + (uint32_t)(s[i] - '0');
    }
    if (count > JIT_MANIFEST_MAX_DEPS) return false;
    e->compiler_stat = v[0];
    e->compiler_version = v[1];
    e->elf_hash = v[2];
    *out_count = count;
    return true;
}

lm_status jit_manifest_parse(const char *text, size_t size, jit_manifest *out, bool *out_ok) {
    *out = (jit_manifest){0};
    *out_ok = false;
    reader r = {text, text + size};
    const char *line;
    size_t len;
    if (!next_line(&r, &line, &len) || len != strlen(MAGIC) || memcmp(line, MAGIC, len) != 0)
        return LM_OK;
    while (r.p < r.end) {
        if (out->count == JIT_MANIFEST_MAX_ENTRIES || !next_line(&r, &line, &len)) return LM_OK;
        jit_entry *e = &out->entries[out->count];
        uint32_t count;
        if (!parse_entry_line(line, len, e, &count)) return LM_OK;
        out->count++; /* from here on, freed with the manifest */
        e->deps = count ? calloc(count, sizeof *e->deps) : NULL;
        if (count && !e->deps) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        for (uint32_t i = 0; i < count; i++) {
            if (!next_line(&r, &line, &len) || len < 4 + 17 || memcmp(line, "dep ", 4) != 0 ||
                !read_hex64(line + 4, &e->deps[i].hash) || line[20] != ' ' ||
                !valid_path(line + 21, len - 21))
                return LM_OK;
            e->deps[i].path = malloc(len - 21 + 1);
            if (!e->deps[i].path) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
            memcpy(e->deps[i].path, line + 21, len - 21);
            e->deps[i].path[len - 21] = '\0';
            e->dep_count = i + 1;
        }
    }
    *out_ok = true;
    return LM_OK;
}

lm_status jit_manifest_format(const jit_manifest *m, char **out_text, size_t *out_size) {
    size_t cap = sizeof MAGIC + 1;
    for (uint32_t i = 0; i < m->count; i++) {
        cap += 6 + 3 * 17 + 12;
        for (uint32_t d = 0; d < m->entries[i].dep_count; d++)
            cap += 4 + 17 + strlen(m->entries[i].deps[d].path) + 1;
    }
    char *s = malloc(cap + 1);
    if (!s) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    size_t n = (size_t)snprintf(s, cap + 1, "%s\n", MAGIC);
    for (uint32_t i = 0; i < m->count; i++) {
        const jit_entry *e = &m->entries[i];
        n += (size_t)snprintf(s + n, cap + 1 - n, "entry %016llx %016llx %016llx %u\n",
                              (unsigned long long)e->compiler_stat,
                              (unsigned long long)e->compiler_version,
                              (unsigned long long)e->elf_hash, e->dep_count);
        for (uint32_t d = 0; d < e->dep_count; d++)
            n += (size_t)snprintf(s + n, cap + 1 - n, "dep %016llx %s\n",
                                  (unsigned long long)e->deps[d].hash, e->deps[d].path);
    }
    *out_text = s;
    *out_size = n;
    return LM_OK;
}

static bool same_build(const jit_entry *a, const jit_entry *b) {
    if (a->compiler_version != b->compiler_version || a->dep_count != b->dep_count) return false;
    for (uint32_t i = 0; i < a->dep_count; i++)
        if (a->deps[i].hash != b->deps[i].hash || strcmp(a->deps[i].path, b->deps[i].path) != 0)
            return false;
    return true;
}

void jit_manifest_put(jit_manifest *m, jit_entry *e) {
    for (uint32_t i = 0; i < m->count; i++) {
        if (same_build(&m->entries[i], e)) {
            jit_entry_free(&m->entries[i]);
            memmove(&m->entries[i], &m->entries[i + 1], (m->count - i - 1) * sizeof *e);
            m->count--;
            break;
        }
    }
    if (m->count == JIT_MANIFEST_MAX_ENTRIES) jit_entry_free(&m->entries[--m->count]);
    memmove(&m->entries[1], &m->entries[0], m->count * sizeof *e);
    m->entries[0] = *e;
    m->count++;
    *e = (jit_entry){0};
}
