#include "lmt_json.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

void lmt_json_init(lmt_json *j, FILE *out) {
    memset(j, 0, sizeof *j);
    j->out = out;
}

static void indent(lmt_json *j) {
    for (uint32_t i = 0; i < j->depth; i++)
        fputs("  ", j->out);
}

/* Starts a value: separator, newline and indent from the enclosing
 * container, then the key when inside an object. */
static void value_start(lmt_json *j, const char *key) {
    if (j->depth == 0) return;
    uint32_t d = j->depth - 1;
    if (j->level[d].array) {
        if (j->level[d].count > 0) fputs(",\n", j->out);
    } else {
        if (j->level[d].count > 0) fputc(',', j->out);
        fputc('\n', j->out);
    }
    j->level[d].count++;
    indent(j);
    if (key && !j->level[d].array) {
        lmt_json_write_string(j->out, key, strlen(key));
        fputs(": ", j->out);
    }
}

static void value_end(lmt_json *j) {
    if (j->depth == 0) fputc('\n', j->out);
}

static void begin(lmt_json *j, const char *key, bool array) {
    value_start(j, key);
    fputs(array ? "[\n" : "{", j->out);
    if (j->depth < LMT_JSON_MAX_DEPTH) {
        j->level[j->depth].array = array;
        j->level[j->depth].count = 0;
        j->depth++;
    }
}

static void end(lmt_json *j, bool array) {
    if (j->depth == 0) return;
    j->depth--;
    fputc('\n', j->out);
    indent(j);
    fputc(array ? ']' : '}', j->out);
    value_end(j);
}

void lmt_json_begin_object(lmt_json *j, const char *key) {
    begin(j, key, false);
}
void lmt_json_end_object(lmt_json *j) {
    end(j, false);
}
void lmt_json_begin_array(lmt_json *j, const char *key) {
    begin(j, key, true);
}
void lmt_json_end_array(lmt_json *j) {
    end(j, true);
}

void lmt_json_u64(lmt_json *j, const char *key, uint64_t v) {
    value_start(j, key);
    fprintf(j->out, "%" PRIu64, v);
    value_end(j);
}

void lmt_json_double(lmt_json *j, const char *key, double v) {
    value_start(j, key);
    /* JSON has no NaN or infinity. */
    if (isfinite(v))
        fprintf(j->out, "%.9g", v);
    else
        fputs("null", j->out);
    value_end(j);
}

void lmt_json_bool(lmt_json *j, const char *key, bool v) {
    value_start(j, key);
    fputs(v ? "true" : "false", j->out);
    value_end(j);
}

void lmt_json_string(lmt_json *j, const char *key, const char *s, size_t len) {
    value_start(j, key);
    lmt_json_write_string(j->out, s, len);
    value_end(j);
}

void lmt_json_cstr(lmt_json *j, const char *key, const char *s) {
    lmt_json_string(j, key, s, strlen(s));
}

/* Decodes one UTF-8 sequence at s[0..len); returns its length, or 0 when it
 * is not valid (overlong, surrogate, beyond U+10FFFF or truncated). */
static size_t utf8_decode(const unsigned char *s, size_t len, uint32_t *out_cp) {
    size_t n;
    uint32_t cp, min;
    if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        n = 4, cp = s[0] & 0x07u, min = 0x10000;
    } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
        n = 3, cp = s[0] & 0x0fu, min = 0x800;
    } else if (s[0] >= 0xc2 && s[0] <= 0xdf) {
        n = 2, cp = s[0] & 0x1fu, min = 0x80;
    } else {
        return 0;
    }
    if (n > len) return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3fu);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    *out_cp = cp;
    return n;
}

void lmt_json_write_string(FILE *out, const char *str, size_t len) {
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', out);
    for (size_t i = 0; i < len;) {
        unsigned char c = s[i];
        switch (c) {
        case '"':
            fputs("\\\"", out);
            i++;
            continue;
        case '\\':
            fputs("\\\\", out);
            i++;
            continue;
        case '\b':
            fputs("\\b", out);
            i++;
            continue;
        case '\f':
            fputs("\\f", out);
            i++;
            continue;
        case '\n':
            fputs("\\n", out);
            i++;
            continue;
        case '\r':
            fputs("\\r", out);
            i++;
            continue;
        case '\t':
            fputs("\\t", out);
            i++;
            continue;
        default:
            break;
        }
        if (c >= 0x20 && c < 0x80) {
            fputc(c, out);
            i++;
            continue;
        }
        uint32_t cp;
        size_t n = c < 0x80 ? 0 : utf8_decode(s + i, len - i, &cp);
        if (n == 0) {
            fprintf(out, "\\u%04X", (unsigned)c);
            i++;
        } else if (cp < 0x10000) {
            fprintf(out, "\\u%04X", (unsigned)cp);
            i += n;
        } else {
            cp -= 0x10000;
            fprintf(out, "\\u%04X\\u%04X", (unsigned)(0xd800 + (cp >> 10)),
                    (unsigned)(0xdc00 + (cp & 0x3ff)));
            i += n;
        }
    }
    fputc('"', out);
}
