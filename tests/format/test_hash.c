/* base/hash: pinned known answers, streaming equals one-shot, sensitivity. */
#include <stdint.h>
#include <string.h>

#include "base/hash.h"
#include "base/hash_stream.h"
#include "lm_test.h"

/* Inputs: bytes i*31+7 (mod 256) for i < len. Values computed once with this
 * implementation and pinned: a change here changes every stored file. */
static void kat_input(uint8_t *buf, size_t len) {
    for (size_t i = 0; i < len; i++)
        buf[i] = (uint8_t)(i * 31 + 7);
}

static void test_known_answers(void) {
    static const struct {
        size_t len;
        uint64_t seed;
        uint64_t want;
    } kat[] = {
#include "hash_kat.inc"
    };
    static uint8_t buf[3 * 1048576 + 5];
    for (size_t i = 0; i < sizeof kat / sizeof kat[0]; i++) {
        kat_input(buf, kat[i].len);
        uint64_t got = hash64(kat[i].len ? buf : NULL, kat[i].len, kat[i].seed);
        if (got != kat[i].want)
            printf("  len %zu seed %llu: got 0x%016llx\n", kat[i].len,
                   (unsigned long long)kat[i].seed, (unsigned long long)got);
        CHECK_EQ_U64(got, kat[i].want);
    }
}

/* Across piece boundaries: streaming in odd steps and combining piece
 * hashes (as parallel writers do) both give the one-shot value. */
static void test_pieces(void) {
    enum { SIZE = 2 * 1048576 + 777 };
    static uint8_t buf[SIZE];
    kat_input(buf, SIZE);
    static const size_t sizes[] = {1048575, 1048576, 1048577, 2097152, SIZE};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        uint64_t want = hash64(buf, n, 3);
        hash64_state st;
        hash64_begin(&st, 3);
        for (size_t at = 0; at < n; at += 65537)
            hash64_update(&st, buf + at, n - at < 65537 ? n - at : 65537);
        CHECK_EQ_U64(hash64_end(&st), want);
        CHECK_EQ_U64(hash64_end(&st), want); /* end leaves the state as it was */
        uint64_t pieces[3];
        size_t count = 0;
        for (size_t at = 0; at < n; at += HASH64_PIECE)
            pieces[count++] = hash64(buf + at, n - at < HASH64_PIECE ? n - at : HASH64_PIECE, 3);
        CHECK_EQ_U64(hash64_combine(pieces, count, n, 3), want);
    }
    CHECK_EQ_U64(hash64_combine(NULL, 0, 0, 0), hash64(NULL, 0, 0));
}

static void test_streaming_matches_one_shot(void) {
    uint8_t buf[1000];
    kat_input(buf, sizeof buf);
    uint64_t want = hash64(buf, sizeof buf, 5);
    static const size_t steps[] = {1, 3, 63, 64, 65, 200};
    for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
        hash64_state st;
        hash64_begin(&st, 5);
        for (size_t at = 0; at < sizeof buf; at += steps[s]) {
            size_t n = sizeof buf - at < steps[s] ? sizeof buf - at : steps[s];
            hash64_update(&st, buf + at, n);
        }
        CHECK_EQ_U64(hash64_end(&st), want);
    }
}

/* The streaming form, with and without a copy, against xxHash's one-shot
 * function, over lengths around every rule boundary (short inputs, stripes,
 * blocks of stripes, pieces) and splits of every size. */
static void test_stream_any_split(void) {
    enum { MAX = 1048576 + 3000 };
    static uint8_t buf[MAX], copy[MAX];
    kat_input(buf, MAX);
    static const size_t lens[] = {0,    1,    16,   17,   128,  129,   239,    240,     241,
                                  255,  256,  257,  1023, 1024, 1025,  1087,   1088,    1089,
                                  2048, 2049, 4095, 5000, 9999, 65536, 100003, 1048576, MAX};
    uint32_t rng = 12345;
    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
        size_t n = lens[l];
        for (uint64_t seed = 0; seed < 2; seed++) {
            uint64_t want = hash64(n ? buf : NULL, n, seed);
            for (int trial = 0; trial < 6; trial++) {
                hash64_state a, b;
                hash64_begin(&a, seed);
                hash64_begin(&b, seed);
                memset(copy, 0, n);
                for (size_t at = 0; at < n;) {
                    rng = rng * 1103515245u + 12345u;
                    /* Steps from 1 byte to a few blocks, some on stripe bounds. */
                    size_t step = trial == 0    ? 1 + n
                                  : (trial & 1) ? 64u << (rng >> 29)
                                                : 1 + (rng >> 16) % 700;
                    if (step > n - at) step = n - at;
                    hash64_update(&a, buf + at, step);
                    hash64_update_copy(&b, copy + at, buf + at, step);
                    at += step;
                }
                CHECK_EQ_U64(hash64_end(&a), want);
                CHECK_EQ_U64(hash64_end(&b), want);
                CHECK(memcmp(copy, buf, n) == 0);
            }
        }
    }
}

/* The baseline build of the streaming update gives the values the CPU's
 * widest one gives (only one of them runs in a given process otherwise). */
static void test_stream_portable(void) {
    enum { N = 70001 };
    static uint8_t buf[N], copy[N];
    kat_input(buf, N);
    for (uint64_t seed = 0; seed < 2; seed++) {
        hash_stream s;
        hash_stream_begin(&s, seed);
        for (size_t at = 0; at < N; at += 999)
            hash_stream_update_portable(&s, copy + at, buf + at, N - at < 999 ? N - at : 999);
        CHECK_EQ_U64(hash_stream_end(&s), hash64(buf, N, seed));
        CHECK(memcmp(copy, buf, N) == 0);
    }
}

static void test_every_bit_matters(void) {
    uint8_t buf[300];
    kat_input(buf, sizeof buf);
    uint64_t base = hash64(buf, sizeof buf, 0);
    for (size_t bit = 0; bit < sizeof buf * 8; bit++) {
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        uint64_t h = hash64(buf, sizeof buf, 0);
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        CHECK(h != base);
        /* Avalanche: a one-bit change flips about half of the output bits. */
        int flipped = __builtin_popcountll(h ^ base);
        CHECK(flipped > 12 && flipped < 52);
    }
}

static void test_trailing_zeros_and_seed_matter(void) {
    uint8_t zeros[130] = {0};
    for (size_t n = 0; n < 129; n++)
        CHECK(hash64(zeros, n, 0) != hash64(zeros, n + 1, 0));
    CHECK(hash64(zeros, 10, 0) != hash64(zeros, 10, 1));
    /* Swapping two 8-byte words (different lanes) changes the hash. */
    uint8_t a[64] = {1}, b[64] = {0};
    b[8] = 1;
    CHECK(hash64(a, 64, 0) != hash64(b, 64, 0));
}

int main(void) {
    TEST_RUN(test_known_answers);
    TEST_RUN(test_pieces);
    TEST_RUN(test_streaming_matches_one_shot);
    TEST_RUN(test_stream_any_split);
    TEST_RUN(test_stream_portable);
    TEST_RUN(test_every_bit_matters);
    TEST_RUN(test_trailing_zeros_and_seed_matter);
    return test_summary();
}
