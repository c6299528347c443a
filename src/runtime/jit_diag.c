#include "runtime/jit_diag.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "lightmetal/lm_program.h"

/* Room left in the message for the context callers prefix to it (a public
 * function's name, "lm_create_kernel_from_string: "), so that err_prefix
 * does not cut the note at its end. */
#define PREFIX_ROOM 96
/* The longest note about what was left out. */
#define NOTE_MAX 160

/* ---- the calling thread's last compile log ---- */

/* A pthread key rather than a _Thread_local pointer: its destructor frees a
 * thread's log when the thread ends. */
static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static pthread_key_t log_key;
static bool log_key_made;

static void log_key_make(void) {
    log_key_made = pthread_key_create(&log_key, free) == 0;
}

/* Replaces the thread's log with a copy of log[0, size); false when it could
 * not be kept (the log is then empty). */
static bool log_store(const char *log, size_t size) {
    pthread_once(&log_once, log_key_make);
    if (!log_key_made) return false;
    char *copy = malloc(size + 1);
    if (copy) {
        memcpy(copy, log, size);
        copy[size] = '\0';
    }
    free(pthread_getspecific(log_key));
    if (pthread_setspecific(log_key, copy) != 0) {
        free(copy);
        copy = NULL;
    }
    return copy != NULL;
}

/* Public (lightmetal/lm_program.h); defined here, with the log, as
 * lm_last_error is with its message. */
const char *lm_last_compile_log(void) {
    pthread_once(&log_once, log_key_make);
    const char *log = log_key_made ? pthread_getspecific(log_key) : NULL;
    return log ? log : "";
}

/* ---- SFPI evidence ---- */

static bool ident_char(char ch) {
    return isalnum((unsigned char)ch) || ch == '_';
}

static bool path_char(char ch) {
    return ident_char(ch) || ch == '/' || ch == '.' || ch == '-';
}

static bool starts(const char *w, size_t n, const char *prefix) {
    size_t p = strlen(prefix);
    return n >= p && !memcmp(w, prefix, p);
}

static bool is(const char *w, size_t n, const char *word) {
    return n == strlen(word) && !memcmp(w, word, n);
}

static bool contains(const char *w, size_t n, const char *part) {
    size_t p = strlen(part);
    for (size_t i = 0; i + p <= n; i++)
        if (!memcmp(w + i, part, p)) return true;
    return false;
}

typedef enum word_kind { WORD_NONE, WORD_NAME, WORD_HEADER } word_kind;

/* What the identifier t[i, j) is, given its neighbours within [lo, hi). */
static word_kind classify(const char *t, size_t lo, size_t hi, size_t i, size_t j) {
    static const char *const names[] = {"vFloat", "vInt",   "vUInt",    "dst_reg",
                                        "v_if",   "v_else", "v_elseif", "v_endif"};
    const char *w = t + i;
    size_t n = j - i;
    bool scope_after = j + 2 <= hi && t[j] == ':' && t[j + 1] == ':';
    bool scope_before = i >= lo + 2 && t[i - 1] == ':' && t[i - 2] == ':';
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (is(w, n, names[k])) return WORD_NAME;
    if (starts(w, n, "vConst") && n > 6) return WORD_NAME;
    if (is(w, n, "sfpi") && scope_after) return WORD_NAME;
    if (is(w, n, "sfpi") && j + 2 <= hi && t[j] == '.' && t[j + 1] == 'h') return WORD_HEADER;
    if (is(w, n, "sfpu") && (scope_after || scope_before)) return WORD_NAME;
    if (starts(w, n, "ckernel_sfpu")) return WORD_HEADER;
    if ((starts(w, n, "llk_") || starts(w, n, "_llk_")) && contains(w, n, "sfpu"))
        return WORD_HEADER; /* a header name, or an LLK SFPU function: either is SFPI */
    return WORD_NONE;
}

/* Writes the evidence for the word t[i, j): the whole header path around
 * it, or the qualified name. */
static void describe(const char *t, size_t lo, size_t hi, size_t i, size_t j, word_kind kind,
                     char *out, size_t out_size) {
    size_t a = i, b = j;
    if (kind == WORD_HEADER) {
        while (a > lo && path_char(t[a - 1]))
            a--;
        while (b < hi && path_char(t[b]))
            b++;
        bool path = memchr(t + a, '/', b - a) || (b - a > 2 && !memcmp(t + b - 2, ".h", 2));
        if (path) {
            snprintf(out, out_size, "includes '%.*s'", (int)(b - a), t + a);
            return;
        }
        a = i;
        b = j;
    }
    while (a > lo && (ident_char(t[a - 1]) || t[a - 1] == ':'))
        a--;
    while (b < hi && (ident_char(t[b]) || t[b] == ':'))
        b++;
    while (a < i && t[a] == ':')
        a++;
    while (b > j && t[b - 1] == ':')
        b--;
    snprintf(out, out_size, "uses '%.*s'", (int)(b - a), t + a);
}

/* Searches the identifiers of t[lo, hi); headers only when `headers_only`. */
static bool scan_words(const char *t, size_t lo, size_t hi, bool headers_only, char *out,
                       size_t out_size) {
    for (size_t i = lo; i < hi;) {
        if (!ident_char(t[i]) || (i > lo && ident_char(t[i - 1]))) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < hi && ident_char(t[j]))
            j++;
        word_kind kind = isdigit((unsigned char)t[i]) ? WORD_NONE : classify(t, lo, hi, i, j);
        if (kind == WORD_HEADER || (kind == WORD_NAME && !headers_only)) {
            describe(t, lo, hi, i, j, kind, out, out_size);
            return true;
        }
        i = j;
    }
    return false;
}

bool jit_sfpi_evidence(const char *t, size_t n, bool is_source, char *out, size_t out_size) {
    if (!is_source) return scan_words(t, 0, n, false, out, out_size);
    /* The source: code runs between comments and literals. */
    size_t code = 0;
    for (size_t i = 0; i < n;) {
        size_t skip_to = 0;
        bool literal = false;
        if (t[i] == '/' && i + 1 < n && t[i + 1] == '/') {
            const char *nl = memchr(t + i, '\n', n - i);
            skip_to = nl ? (size_t)(nl - t) : n;
        } else if (t[i] == '/' && i + 1 < n && t[i + 1] == '*') {
            size_t k = i + 2;
            while (k + 1 < n && !(t[k] == '*' && t[k + 1] == '/'))
                k++;
            skip_to = k + 1 < n ? k + 2 : n;
        } else if ((t[i] == '"' || t[i] == '\'') &&
                   !(i > 0 && ident_char(t[i - 1]) && t[i] == '\'')) { /* not 1'000 */
            size_t k = i + 1;
            while (k < n && t[k] != t[i] && t[k] != '\n')
                k += t[k] == '\\' && k + 1 < n ? 2 : 1;
            literal = true;
            skip_to = k < n ? k + 1 : n;
        } else {
            i++;
            continue;
        }
        if (scan_words(t, code, i, false, out, out_size)) return true;
        /* Inside a literal, only a header name (#include "...") counts. */
        if (literal &&
            scan_words(t, i + 1, skip_to > i + 1 ? skip_to - 1 : i + 1, true, out, out_size))
            return true;
        i = code = skip_to;
    }
    return scan_words(t, code, n, false, out, out_size);
}

/* ---- the message ---- */

/* A line of only a caret and its range ("    ^~~~"): it and the source line
 * above it quote the code a diagnostic is about. */
static bool caret_line(const char *line, size_t n) {
    bool mark = false;
    for (size_t i = 0; i < n; i++) {
        if (line[i] == '^' || line[i] == '~')
            mark = true;
        else if (line[i] != ' ' && line[i] != '\t')
            return false;
    }
    return mark;
}

/* The length of the line at `p` (up to `end`), without its newline. */
static size_t line_len(const char *p, const char *end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    return nl ? (size_t)(nl - p) : (size_t)(end - p);
}

/* Appends to `out` (room for `cap` bytes) the log's diagnostics themselves
 * -- no "In file included from" chains, no quoted source lines and their
 * carets -- as many whole lines as fit; counts the log's lines and those
 * appended. Returns the length written. */
static size_t digest(const char *log, size_t size, char *out, size_t cap, size_t *out_total,
                     size_t *out_shown) {
    const char *p = log, *end = log + size;
    size_t len = 0, total = 0, shown = 0;
    bool full = false;
    while (p < end) {
        size_t n = line_len(p, end);
        const char *next = p + n + (p + n < end ? 1 : 0);
        bool quote = next < end && caret_line(next, line_len(next, end));
        bool keep = !quote && !caret_line(p, n) && !starts(p, n, "In file included from ");
        total++;
        if (keep && !full && len + n + 1 <= cap) {
            memcpy(out + len, p, n);
            out[len + n] = '\n';
            len += n + 1;
            shown++;
        } else if (keep) {
            full = true; /* in order: nothing after a line left out */
        }
        p = next;
    }
    *out_total = total;
    *out_shown = shown;
    return len;
}

lm_status jit_compile_error(const char *name, const char *source, const char *log,
                            size_t log_size) {
    while (log_size && isspace((unsigned char)log[log_size - 1]))
        log_size--;
    bool kept = log_store(log, log_size);

    char evidence[256], head[ERR_MESSAGE_MAX];
    bool sfpi =
        (source && jit_sfpi_evidence(source, strlen(source), true, evidence, sizeof evidence)) ||
        jit_sfpi_evidence(log, log_size, false, evidence, sizeof evidence);
    if (sfpi)
        snprintf(head, sizeof head,
                 "kernel '%s' failed to compile: SFPI intrinsics (vFloat, dst_reg, v_if, ...) are "
                 "out of scope for lightmetal (the kernel %s): use the compute API's SFPU tile "
                 "operations (exp_tile, add_binary_tile, ...) instead",
                 name, evidence);
    else
        snprintf(head, sizeof head, "kernel '%s' failed to compile:", name);
    if (log_size == 0) return err_set(LM_ERR_COMPILE, "%s\n(the compiler printed nothing)", head);

    size_t limit = ERR_MESSAGE_MAX - 1 - PREFIX_ROOM, head_len = strlen(head);
    if (head_len + 1 + log_size <= limit)
        return err_set(LM_ERR_COMPILE, "%s\n%.*s", head, (int)log_size, log);
    /* Too long: the diagnostic lines first, as many as fit, then a note. */
    char body[ERR_MESSAGE_MAX];
    size_t room = limit > head_len + 1 + NOTE_MAX ? limit - head_len - 1 - NOTE_MAX : 0;
    size_t total = 0, shown = 0;
    size_t len =
        digest(log, log_size, body, room < sizeof body ? room : sizeof body, &total, &shown);
    char note[NOTE_MAX];
    if (kept)
        snprintf(note, sizeof note,
                 "[%zu of %zu lines of compiler output shown (source quotes and include chains "
                 "left out): lm_last_compile_log() returns all of it]",
                 shown, total);
    else
        snprintf(note, sizeof note,
                 "[%zu of %zu lines of compiler output shown; the rest is lost (no host memory)]",
                 shown, total);
    return err_set(LM_ERR_COMPILE, "%s\n%.*s%s", head, (int)len, body, note);
}
