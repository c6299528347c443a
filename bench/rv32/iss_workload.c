/* The interpreter benchmark's workload: control-heavy integer code of the
 * kind kernels spend their scalar time on (bookkeeping, not tile math).
 * Each round
 *   1. fills an array of 256 words from a xorshift generator,
 *   2. sorts it with a recursive quicksort that falls back to insertion sort
 *      on short ranges (calls, returns, stack traffic, data-dependent branches),
 *   3. checksums the sorted words with a table-driven CRC-32 (the table is
 *      built once per call; dependent loads),
 *   4. runs a small tokenizer state machine over bytes derived from the data
 *      (a switch compiled to a jump table: loads from read-only data and
 *      indirect jumps),
 * and folds everything into one checksum, returned so that the work cannot
 * be optimized away and both runs can be compared.
 *
 * Freestanding: no library calls, no large initializers (which a compiler
 * may turn into memset/memcpy calls).
 */
#include <stdint.h>

#define ISS_N 256

uint32_t iss_workload(uint32_t rounds);

static uint32_t xorshift(uint32_t *s) {
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

static void insertion_sort(uint32_t *a, int lo, int hi) {
    for (int i = lo + 1; i <= hi; i++) {
        uint32_t v = a[i];
        int j = i - 1;
        while (j >= lo && a[j] > v) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = v;
    }
}

static void quicksort(uint32_t *a, int lo, int hi) {
    while (hi - lo > 12) {
        uint32_t pivot = a[lo + (hi - lo) / 2];
        int i = lo, j = hi;
        while (i <= j) {
            while (a[i] < pivot)
                i++;
            while (a[j] > pivot)
                j--;
            if (i <= j) {
                uint32_t t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                j--;
            }
        }
        /* Recurse into the smaller side to bound the stack. */
        if (j - lo < hi - i) {
            quicksort(a, lo, j);
            lo = i;
        } else {
            quicksort(a, i, hi);
            hi = j;
        }
    }
    insertion_sort(a, lo, hi);
}

static void crc32_init(uint32_t *table) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
        table[i] = c;
    }
}

static uint32_t crc32(const uint32_t *table, const uint32_t *a, int n) {
    uint32_t crc = 0xffffffffu;
    for (int i = 0; i < n; i++) {
        uint32_t w = a[i];
        for (int b = 0; b < 4; b++)
            crc = table[(crc ^ (w >> (8 * b))) & 0xff] ^ (crc >> 8);
    }
    return ~crc;
}

enum { S_SPACE, S_WORD, S_NUMBER, S_PUNCT, S_STRING, S_ESCAPE };

/* Counts tokens of a made-up language over bytes derived from the data. */
static uint32_t tokenize(const uint32_t *a, int n) {
    int state = S_SPACE;
    uint32_t tokens = 0, hash = 0;
    for (int i = 0; i < 4 * n; i++) {
        uint32_t c = (a[i / 4] >> (8 * (i % 4))) & 0x7f;
        switch (state) {
        case S_SPACE:
            if (c < 32) break;
            tokens++;
            state = c >= '0' && c <= '9' ? S_NUMBER
                    : c == '"'           ? S_STRING
                    : c >= 'A'           ? S_WORD
                                         : S_PUNCT;
            break;
        case S_WORD:
            if (c < 'A') state = c < 32 ? S_SPACE : S_PUNCT;
            hash = hash * 31 + c;
            break;
        case S_NUMBER:
            if (c < '0' || c > '9') state = c < 32 ? S_SPACE : S_PUNCT;
            hash += c;
            break;
        case S_PUNCT:
            state = c < 32 ? S_SPACE : c >= 'A' ? S_WORD : S_PUNCT;
            hash ^= c << (i & 15);
            break;
        case S_STRING:
            if (c == '\\')
                state = S_ESCAPE;
            else if (c == '"')
                state = S_SPACE;
            break;
        case S_ESCAPE:
            state = S_STRING;
            hash += 7;
            break;
        }
    }
    return tokens * 2654435761u + hash;
}

uint32_t iss_workload(uint32_t rounds) {
    uint32_t data[ISS_N], table[256];
    uint32_t seed = 2463534242u, sum = 0;
    crc32_init(table);
    for (uint32_t r = 0; r < rounds; r++) {
        for (int i = 0; i < ISS_N; i++)
            data[i] = xorshift(&seed);
        quicksort(data, 0, ISS_N - 1);
        sum = sum * 33 + crc32(table, data, ISS_N);
        sum ^= tokenize(data, ISS_N);
    }
    return sum;
}
