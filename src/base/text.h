/* One-line text: what labels and names that tools print must be.
 *
 * Thread-safety: pure functions of their arguments.
 */
#ifndef LM_BASE_TEXT_H
#define LM_BASE_TEXT_H

#include <stddef.h>

/* The length in bytes of the character at s (n bytes left) when it is a
 * printable character of valid UTF-8: not a C0 or C1 control, not DEL,
 * encoded in the fewest bytes, not a surrogate, at most U+10FFFF; 0
 * otherwise. */
size_t text_char_len(const char *s, size_t n);

/* Makes s (NUL-terminated) one line of printable UTF-8 in place: each byte
 * that does not start a printable character (text_char_len) becomes '?'. */
void text_clean(char *s);

#endif
