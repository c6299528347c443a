#include "runtime/jit_deps.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

static lm_status oom(void) {
    return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
}

lm_status jit_strlist_add(jit_strlist *l, const char *s, size_t n) {
    if (l->count == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        char **grown = realloc(l->items, cap * sizeof *grown);
        if (!grown) return oom();
        l->items = grown;
        l->cap = cap;
    }
    char *copy = malloc(n + 1);
    if (!copy) return oom();
    memcpy(copy, s, n);
    copy[n] = '\0';
    l->items[l->count++] = copy;
    return LM_OK;
}

void jit_strlist_free(jit_strlist *l) {
    for (size_t i = 0; i < l->count; i++)
        free(l->items[i]);
    free(l->items);
    *l = (jit_strlist){0};
}

static bool is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Clang escapes a space or '#' in a name with a backslash and '$' as "$$";
 * a backslash before anything else (other than a line break) would be a
 * name we cannot tell apart from an escape, so it is refused. */
lm_status jit_deps_parse_make(const char *text, size_t size, const char *target, jit_strlist *out,
                              bool *out_ok) {
    *out_ok = false;
    size_t tl = strlen(target);
    if (size < tl + 1 || memcmp(text, target, tl) != 0 || text[tl] != ':') return LM_OK;
    char *name = malloc(size + 1);
    if (!name) return oom();
    const char *p = text + tl + 1, *end = text + size;
    lm_status st = LM_OK;
    bool ok = true;
    while (ok && !st) {
        while (p < end) {
            if (is_blank(*p))
                p++;
            else if (*p == '\\' && p + 1 < end && (p[1] == '\n' || p[1] == '\r'))
                p += 2;
            else
                break;
        }
        if (p == end) break;
        size_t n = 0;
        while (p < end && !is_blank(*p)) {
            if (*p == '\\') {
                if (p + 1 < end && (p[1] == ' ' || p[1] == '#')) {
                    name[n++] = p[1];
                    p += 2;
                    continue;
                }
                if (p + 1 < end && (p[1] == '\n' || p[1] == '\r')) break;
                ok = false;
                break;
            }
            if (*p == '$') {
                if (p + 1 < end && p[1] == '$') {
                    name[n++] = '$';
                    p += 2;
                    continue;
                }
                ok = false;
                break;
            }
            if (*p == ':') { /* a second rule: not what -MD -MT writes */
                ok = false;
                break;
            }
            name[n++] = *p++;
        }
        if (ok && n) st = jit_strlist_add(out, name, n);
    }
    free(name);
    if (!st) *out_ok = ok;
    return st;
}

static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* LLVM prints bytes outside printable ASCII, '"' and '\' as \XX in strings;
 * decoding every such sequence in the whole text is enough for a search. */
static char *decode_ir(const char *text, size_t size, size_t *out_size) {
    char *d = malloc(size + 1);
    if (!d) return NULL;
    size_t n = 0;
    for (size_t i = 0; i < size; i++) {
        int hi, lo;
        if (text[i] == '\\' && i + 2 < size && (hi = hex_value(text[i + 1])) >= 0 &&
            (lo = hex_value(text[i + 2])) >= 0) {
            d[n++] = (char)(hi << 4 | lo);
            i += 2;
        } else {
            d[n++] = text[i];
        }
    }
    d[n] = '\0';
    *out_size = n;
    return d;
}

static bool is_name_char(char c) {
    return isalnum((unsigned char)c) || c == '_' || c == '$' || c == '.';
}

static bool matches_nocase(const char *p, const char *end, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(end - p) < n) return false;
    for (size_t i = 0; i < n; i++)
        if (tolower((unsigned char)p[i]) != word[i]) return false;
    return true;
}

lm_status jit_deps_scan_asm(const char *text, size_t size, bool ir_escaped, jit_strlist *out_incbin,
                            jit_strlist *out_include, bool *out_ok) {
    *out_ok = false;
    size_t n = size;
    char *decoded = NULL;
    if (ir_escaped) {
        decoded = decode_ir(text, size, &n);
        if (!decoded) return oom();
        text = decoded;
    }
    const char *end = text + n;
    lm_status st = LM_OK;
    bool ok = true;
    for (const char *p = text; ok && !st && p < end; p++) {
        if (*p != '.') continue;
        jit_strlist *list;
        size_t len;
        if (matches_nocase(p + 1, end, "incbin")) {
            list = out_incbin;
            len = 7;
        } else if (matches_nocase(p + 1, end, "include")) {
            list = out_include;
            len = 8;
        } else {
            continue;
        }
        const char *q = p + len;
        if (q < end && is_name_char(*q)) continue; /* a longer name, e.g. ".includes" */
        while (q < end && (*q == ' ' || *q == '\t'))
            q++;
        if (q == end || *q != '"') {
            ok = false;
            break;
        }
        const char *start = ++q;
        while (q < end && *q != '"') {
            if (*q == '\\' || *q == '$' || (unsigned char)*q < 0x20) break;
            q++;
        }
        if (q == end || *q != '"' || q == start) {
            ok = false;
            break;
        }
        st = jit_strlist_add(list, start, (size_t)(q - start));
        p = q;
    }
    free(decoded);
    if (!st) *out_ok = ok;
    return st;
}
