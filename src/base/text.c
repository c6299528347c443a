#include "base/text.h"

#include <stdint.h>
#include <string.h>

size_t text_char_len(const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    if (n == 0) return 0;
    if (u[0] < 0x80) return u[0] >= 0x20 && u[0] != 0x7f;
    size_t len = u[0] >= 0xf0 ? 4 : u[0] >= 0xe0 ? 3 : u[0] >= 0xc0 ? 2 : 0;
    if (len == 0 || len > n) return 0;
    uint32_t cp = u[0] & (0x7f >> len);
    for (size_t i = 1; i < len; i++) {
        if ((u[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (u[i] & 0x3f);
    }
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    if (cp >= 0x80 && cp < 0xa0) return 0; /* C1 controls */
    return len;
}

void text_clean(char *s) {
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        size_t len = text_char_len(s + i, n - i);
        if (len == 0) {
            s[i++] = '?';
            continue;
        }
        i += len;
    }
}
