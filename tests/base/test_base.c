/* base/: status strings, error messages, checked arithmetic, handles, files. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* O_TMPFILE, to know whether the scratch file system has it */
#endif
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/checked.h"
#include "base/error.h"
#include "base/file.h"
#include "base/handle.h"
#include "base/idmap.h"
#include "base/text.h"
#include "lm_test.h"
#include "lm_test_child.h"

static void test_status_strings(void) {
    CHECK(strcmp(lm_status_string(LM_OK), "LM_OK") == 0);
    CHECK(strcmp(lm_status_string(LM_ERR_DEVICE_FAULT), "LM_ERR_DEVICE_FAULT") == 0);
    for (int s = 0; s < LM_STATUS_COUNT_; s++)
        CHECK(strncmp(lm_status_string(s), "LM_", 3) == 0);
    CHECK(strcmp(lm_status_string((lm_status)999), "LM_ERR_UNKNOWN") == 0);
    CHECK(strcmp(lm_status_string((lm_status)-1), "LM_ERR_UNKNOWN") == 0);
}

static void test_error_messages(void) {
    err_clear();
    CHECK(strcmp(lm_last_error(), "") == 0);
    CHECK(err_set(LM_ERR_IO, "step %d failed", 3) == LM_ERR_IO);
    CHECK(strcmp(lm_last_error(), "step 3 failed") == 0);
    CHECK(err_prefix(LM_ERR_IO, "saving '%s'", "x") == LM_ERR_IO);
    CHECK(strcmp(lm_last_error(), "saving 'x': step 3 failed") == 0);
    char copy[8];
    err_copy(copy, sizeof copy);
    CHECK(strcmp(copy, "saving ") == 0);
}

/* A context the message already starts with is not added again (a helper
 * given the caller's name recorded it); any other context is. */
static void test_error_prefix_not_repeated(void) {
    err_set(LM_ERR_INVALID_STATE, "lm_x: not now");
    CHECK(err_prefix(LM_ERR_INVALID_STATE, "%s", "lm_x") == LM_ERR_INVALID_STATE);
    CHECK(strcmp(lm_last_error(), "lm_x: not now") == 0);
    err_prefix(LM_ERR_INVALID_STATE, "lm_xy");
    CHECK(strcmp(lm_last_error(), "lm_xy: lm_x: not now") == 0);
    err_set(LM_ERR_INVALID_STATE, "lm_xy");
    err_prefix(LM_ERR_INVALID_STATE, "lm_x");
    CHECK(strcmp(lm_last_error(), "lm_x: lm_xy") == 0);
}

static void test_error_truncation(void) {
    char big[3000];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    err_set(LM_ERR_INTERNAL, "%s", big);
    size_t n = strlen(lm_last_error());
    CHECK_EQ_U64(n, ERR_MESSAGE_MAX - 1);
    CHECK(strcmp(lm_last_error() + n - 3, "...") == 0);
}

static void *other_thread(void *arg) {
    err_set(LM_ERR_IO, "from the other thread");
    *(int *)arg = strcmp(lm_last_error(), "from the other thread") == 0;
    return NULL;
}

static void test_error_is_per_thread(void) {
    err_set(LM_ERR_NOT_FOUND, "mine");
    int ok = 0;
    pthread_t t;
    CHECK(pthread_create(&t, NULL, other_thread, &ok) == 0);
    pthread_join(t, NULL);
    CHECK(ok);
    CHECK(strcmp(lm_last_error(), "mine") == 0);
}

static void test_checked_arithmetic(void) {
    uint64_t r;
    CHECK(ck_add_u64(1, 2, &r) && r == 3);
    CHECK(!ck_add_u64(UINT64_MAX, 1, &r));
    CHECK(ck_mul_u64(1ull << 31, 1ull << 31, &r) && r == 1ull << 62);
    CHECK(!ck_mul_u64(1ull << 32, 1ull << 32, &r));
    size_t z;
    CHECK(!ck_add_size(SIZE_MAX, 1, &z));
    CHECK(!ck_mul_size(SIZE_MAX / 2 + 1, 2, &z));
    uint32_t w;
    CHECK(!ck_add_u32(UINT32_MAX, 1, &w));
    CHECK(ck_align_up_u64(33, 32, &r) && r == 64);
    CHECK(ck_align_up_u64(64, 32, &r) && r == 64);
    CHECK(!ck_align_up_u64(UINT64_MAX - 3, 32, &r));
    CHECK(ck_range_within(0, 10, 10));
    CHECK(!ck_range_within(1, 10, 10));
    CHECK(!ck_range_within(11, 0, 10));
    CHECK(!ck_range_within(5, UINT64_MAX, 10));
    CHECK(ck_div_ceil_u64(UINT64_MAX, 2) == (UINT64_MAX / 2) + 1);
    CHECK(ck_is_pow2_u64(64) && !ck_is_pow2_u64(0) && !ck_is_pow2_u64(96));
}

static void test_handles(void) {
    handle_table t = HANDLE_TABLE_INIT;
    int a, b;
    void *obj;
    uint64_t ha, hb;
    handle_table_lock(&t);
    CHECK_OK(handle_alloc_locked(&t, 1, &a, &ha));
    CHECK_OK(handle_alloc_locked(&t, 2, &b, &hb));
    CHECK(ha != 0 && hb != 0 && ha != hb);
    CHECK(handle_get_locked(&t, ha, 1, &obj) == HANDLE_OK && obj == &a);
    CHECK(handle_get_locked(&t, ha, 2, &obj) == HANDLE_WRONG_TYPE && obj == NULL);
    CHECK(handle_get_locked(&t, 0, 1, &obj) == HANDLE_NULL);
    CHECK(handle_get_locked(&t, ha + 100, 1, &obj) == HANDLE_UNKNOWN);
    handle_free_locked(&t, ha);
    CHECK(handle_get_locked(&t, ha, 1, &obj) == HANDLE_STALE);
    /* The slot is reused under a new generation; the old handle stays stale. */
    uint64_t hc;
    CHECK_OK(handle_alloc_locked(&t, 1, &b, &hc));
    CHECK(hc != ha);
    CHECK(handle_get_locked(&t, ha, 1, &obj) == HANDLE_STALE);
    CHECK(handle_get_locked(&t, hc, 1, &obj) == HANDLE_OK && obj == &b);
    /* Many handles: the table grows and every one resolves. */
    uint64_t many[1000];
    for (int i = 0; i < 1000; i++)
        CHECK_OK(handle_alloc_locked(&t, 3, &many[i], &many[i]));
    for (int i = 0; i < 1000; i++)
        CHECK(handle_get_locked(&t, many[i], 3, &obj) == HANDLE_OK);
    handle_table_unlock(&t);
    CHECK(strstr(handle_check_string(HANDLE_STALE), "stale"));
    free(t.slots);
}

/* A per-process scratch directory under the build tree's working directory. */
static char scratch[256];

static void make_scratch(void) {
    snprintf(scratch, sizeof scratch, "test_base_scratch_%d", (int)getpid());
    mkdir(scratch, 0700);
}

static int count_entries(const char *dir) {
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.') n++;
    if (d) closedir(d);
    return n;
}

static void test_file_save_and_map(void) {
    char path[300];
    snprintf(path, sizeof path, "%s/a.bin", scratch);
    file_chunk chunks[] = {{"hello ", 6}, {"", 0}, {"world", 5}};
    CHECK_OK(file_save_atomic(path, chunks, 3));
    file_mapping m;
    CHECK_OK(file_map(path, &m));
    CHECK(m.size == 11 && memcmp(m.data, "hello world", 11) == 0);
    file_unmap(&m);
    CHECK(m.data == NULL && m.size == 0);
    void *data;
    size_t size;
    CHECK_OK(file_read_all(path, &data, &size));
    CHECK(size == 11 && strcmp(data, "hello world") == 0);
    free(data);
    /* Overwrite is atomic and leaves no temporary behind. */
    file_chunk again = {"x", 1};
    CHECK_OK(file_save_atomic(path, &again, 1));
    CHECK_OK(file_map(path, &m));
    CHECK(m.size == 1 && memcmp(m.data, "x", 1) == 0);
    file_unmap(&m);
    CHECK(count_entries(scratch) == 1);
    unlink(path);
}

static void test_file_empty(void) {
    char path[300];
    snprintf(path, sizeof path, "%s/empty.bin", scratch);
    CHECK_OK(file_save_atomic(path, NULL, 0));
    file_mapping m;
    CHECK_OK(file_map(path, &m));
    CHECK(m.data == NULL && m.size == 0);
    unlink(path);
}

static void test_file_errors(void) {
    file_mapping m;
    CHECK_FAILS(file_map("no/such/file.bin", &m), LM_ERR_IO, "cannot open 'no/such/file.bin'");
    CHECK_ERROR_HAS("No such file");
    CHECK_FAILS(file_map(".", &m), LM_ERR_IO, "not a regular file");
    file_chunk c = {"x", 1};
    CHECK_FAILS(file_save_atomic("no/such/dir/out.bin", &c, 1), LM_ERR_IO,
                "cannot create a temporary file to save 'no/such/dir/out.bin'");
    /* Renaming onto a directory fails after the data was written: the
     * temporary must be removed and the directory left alone. */
    char dir[300];
    snprintf(dir, sizeof dir, "%s/isdir", scratch);
    mkdir(dir, 0700);
    CHECK_FAILS(file_save_atomic(dir, &c, 1), LM_ERR_IO, "cannot rename");
    CHECK(count_entries(scratch) == 1);
    rmdir(dir);
    void *data;
    size_t size;
    CHECK_FAILS(file_read_all("no/such/file.bin", &data, &size), LM_ERR_IO, "cannot open");
}

/* A real write failure (file size limit): the old file survives intact and no
 * temporary file is left. */
static void test_file_save_failure_keeps_old_file(void) {
    char path[300];
    snprintf(path, sizeof path, "%s/keep.bin", scratch);
    file_chunk old = {"old content", 11};
    CHECK_OK(file_save_atomic(path, &old, 1));

    static char big[1 << 16];
    memset(big, 7, sizeof big);
    file_chunk chunks[] = {{big, sizeof big}, {big, sizeof big}};
    struct rlimit saved, lim;
    getrlimit(RLIMIT_FSIZE, &saved);
    lim = saved;
    lim.rlim_cur = 4096;
    signal(SIGXFSZ, SIG_IGN);
    CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    lm_status st = file_save_atomic(path, chunks, 2);
    setrlimit(RLIMIT_FSIZE, &saved);
    CHECK_STATUS(st, LM_ERR_IO);
    CHECK_ERROR_HAS("cannot write");
    CHECK_ERROR_HAS("keep.bin");

    file_mapping m;
    CHECK_OK(file_map(path, &m));
    CHECK(m.size == 11 && memcmp(m.data, "old content", 11) == 0);
    file_unmap(&m);
    CHECK(count_entries(scratch) == 1);
    unlink(path);
}

/* ---- saves that are interrupted: nothing may be left behind ---- */

/* Whether saves in the scratch directory get unnamed temporary files; where
 * they do not, the tests that need them say so and pass. */
static bool scratch_has_unnamed_files(void) {
#ifdef O_TMPFILE
    int fd = open(scratch, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (fd >= 0) close(fd);
    return fd >= 0;
#else
    return false;
#endif
}

/* Removes everything in the scratch directory (cleanup before the checks). */
static void empty_scratch(void) {
    DIR *d = opendir(scratch);
    struct dirent *e;
    char path[600];
    while (d && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(path, sizeof path, "%s/%s", scratch, e->d_name);
        unlink(path);
    }
    if (d) closedir(d);
}

static bool file_is(const char *path, const char *content) {
    void *data;
    size_t size;
    if (file_read_all(path, &data, &size)) return false;
    bool same = size == strlen(content) && memcmp(data, content, size) == 0;
    free(data);
    return same;
}

static char killed_path[300];

/* 1 MiB, then the process kills itself mid-save. */
static lm_status write_then_die(void *ctx, file_sink *sink) {
    (void)ctx;
    static char block[1 << 16];
    memset(block, 'n', sizeof block);
    for (int i = 0; i < 16; i++) {
        lm_status st = file_sink_write(sink, block, sizeof block);
        if (st) return st;
    }
    raise(SIGKILL);
    return LM_OK;
}

static void save_and_die(void *ctx) {
    int how = *(const int *)ctx;
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    if (how == SIGXFSZ) {
        /* A 1 MiB save under a 64 KiB file size limit: the kernel kills the
         * process at the write that crosses it. */
        static char big[1 << 20];
        file_chunk c = {big, sizeof big};
        struct rlimit lim;
        getrlimit(RLIMIT_FSIZE, &lim);
        lim.rlim_cur = 1 << 16;
        signal(SIGXFSZ, SIG_DFL);
        if (setrlimit(RLIMIT_FSIZE, &lim) == 0) file_save_atomic(killed_path, &c, 1);
    } else {
        file_save_atomic_with(killed_path, write_then_die, NULL);
    }
}

/* Kills a save (new file, or replacing one) by `how` in a child; true when the
 * child died by that signal and left the directory as it was. */
static bool killed_save_leaves_nothing(int how, bool existing, bool named) {
    snprintf(killed_path, sizeof killed_path, "%s/killed.bin", scratch);
    file_chunk old = {"old content", 11};
    if (existing && file_save_atomic(killed_path, &old, 1)) return false;
    int before = count_entries(scratch);
    file_force_named_temp(named);
    int status = test_child_status(save_and_die, &how);
    file_force_named_temp(false);
    bool ok = status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == how &&
              count_entries(scratch) == before &&
              (existing ? file_is(killed_path, "old content") : access(killed_path, F_OK) != 0);
    empty_scratch();
    return ok;
}

static void test_file_save_killed_leaves_nothing(void) {
    if (!scratch_has_unnamed_files()) {
        printf("  (the scratch file system has no O_TMPFILE: nothing to check)\n");
        return;
    }
    CHECK(killed_save_leaves_nothing(SIGXFSZ, false, false));
    CHECK(killed_save_leaves_nothing(SIGXFSZ, true, false));
    CHECK(killed_save_leaves_nothing(SIGKILL, false, false));
    CHECK(killed_save_leaves_nothing(SIGKILL, true, false));
    /* The fallback cannot promise that: its named temporary stays (this is
     * also what every save did before unnamed files were used). */
    CHECK(!killed_save_leaves_nothing(SIGKILL, false, true));
}

/* Checks from inside a save: the target still holds what it held before, and
 * the directory shows `extra` more entries than `before` (a named temporary
 * file, or none). */
typedef struct midway {
    const char *path, *old_content;
    int before, extra;
    bool target_ok, entries_ok;
} midway;

static lm_status look_midway(void *ctx, file_sink *sink) {
    midway *m = ctx;
    lm_status st = file_sink_write(sink, "new ", 4);
    m->target_ok = m->old_content ? file_is(m->path, m->old_content) : access(m->path, F_OK) != 0;
    m->entries_ok = count_entries(scratch) == m->before + m->extra;
    return st ? st : file_sink_write(sink, "content", 7);
}

static lm_status give_up(void *ctx, file_sink *sink) {
    (void)ctx;
    lm_status st = file_sink_write(sink, "partial", 7);
    return st ? st : err_set(LM_ERR_INVALID_STATE, "the producer gave up");
}

static bool mode_is_0644(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && (st.st_mode & 0777) == 0644;
}

/* Both schemes: a new file appears and an existing one is replaced whole,
 * never seen half-written; a producer failure leaves everything as it was. */
static void check_save_scheme(bool named) {
    char path[300];
    snprintf(path, sizeof path, "%s/doc.bin", scratch);
    file_force_named_temp(named);
    int extra = named ? 1 : 0;
    midway m = {path, NULL, count_entries(scratch), extra, false, false};
    lm_status created = file_save_atomic_with(path, look_midway, &m);
    bool created_ok = !created && m.target_ok && m.entries_ok && file_is(path, "new content") &&
                      mode_is_0644(path);
    file_chunk old = {"old content", 11};
    lm_status reset = file_save_atomic(path, &old, 1);
    midway r = {path, "old content", count_entries(scratch), extra, false, false};
    lm_status replaced = file_save_atomic_with(path, look_midway, &r);
    bool replaced_ok = !replaced && r.target_ok && r.entries_ok && file_is(path, "new content") &&
                       mode_is_0644(path) && count_entries(scratch) == 1;
    lm_status given_up = file_save_atomic_with(path, give_up, NULL);
    char message[200];
    snprintf(message, sizeof message, "%s", lm_last_error());
    bool kept = file_is(path, "new content") && count_entries(scratch) == 1;
    file_force_named_temp(false);
    empty_scratch();
    CHECK_OK(created);
    CHECK(created_ok);
    CHECK_OK(reset);
    CHECK_OK(replaced);
    CHECK(replaced_ok);
    CHECK(given_up == LM_ERR_INVALID_STATE && strcmp(message, "the producer gave up") == 0);
    CHECK(kept);
}

static void test_file_save_unnamed(void) {
    if (!scratch_has_unnamed_files()) {
        printf("  (the scratch file system has no O_TMPFILE: nothing to check)\n");
        return;
    }
    check_save_scheme(false);
}

static void test_file_save_named_fallback(void) {
    check_save_scheme(true);
    /* The failures of the fallback leave nothing either. */
    file_force_named_temp(true);
    test_file_errors();
    test_file_save_failure_keeps_old_file();
    file_force_named_temp(false);
}

/* idmap against a plain array: random puts, removes (which shift entries
 * back, across the table's wrap-around too) and finds, then iteration.
 * Random 64-bit keys (handles) collide in the table; dense small ids hardly
 * do, so they would not exercise the shifting. */
/* Printable UTF-8: each character's length, 0 for what is not one. */
static void test_text(void) {
    static const struct {
        const char *s;
        size_t len;
    } cases[] = {
        {"a", 1},
        {" ", 1},
        {"~", 1},
        {"\x7f", 0},
        {"\t", 0},
        {"\xc3\xa9", 2},
        {"\xc2\xa0", 2},
        {"\xc2\x9f", 0},
        {"\xc2\x80", 0},
        {"\xc1\xbf", 0},
        {"\xe2\x82\xac", 3},
        {"\xe0\x9f\xbf", 0},
        {"\xed\x9f\xbf", 3},
        {"\xed\xa0\x80", 0},
        {"\xef\xbf\xbd", 3},
        {"\xf0\x9f\x94\xa5", 4},
        {"\xf0\x8f\xbf\xbf", 0},
        {"\xf4\x8f\xbf\xbf", 4},
        {"\xf4\x90\x80\x80", 0},
        {"\xf8\x88\x80\x80", 0},
        {"\x80", 0},
        {"\xc3", 0},
        {"\xe2\x82", 0},
        {"\xc3(", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        CHECK_EQ_U64(text_char_len(cases[i].s, strlen(cases[i].s)), cases[i].len);
    CHECK_EQ_U64(text_char_len("ab", 0), 0);
    char s[] = "ok \xc3\xa9 \x1b[2J \xe2\x82";
    text_clean(s);
    CHECK(!strcmp(s, "ok \xc3\xa9 ?[2J ??"));
}

static void test_idmap(void) {
    enum { KEYS = 600 };
    static uint64_t want[KEYS + 1], keys[KEYS + 1]; /* want 0 = absent */
    memset(want, 0, sizeof want);
    uint64_t x = 88172645463325252ull;
    for (int k = 1; k <= KEYS; k++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        keys[k] = x | 1;
    }
    idmap m = IDMAP_INIT;
    CHECK(idmap_find(&m, 5) == NULL && !idmap_remove(&m, 5));
    for (int step = 0; step < 200000; step++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t key = 1 + x % KEYS, value = x >> 8 | 1;
        if ((x >> 40) % 3 == 0) { /* bits independent of the key's */
            CHECK(idmap_remove(&m, keys[key]) == (want[key] != 0));
            want[key] = 0;
        } else {
            CHECK(idmap_put(&m, keys[key], value));
            want[key] = value;
        }
        for (int k = 1; k <= KEYS; k += 37) {
            const uint64_t *v = idmap_find(&m, keys[k]);
            CHECK(want[k] ? v && *v == want[k] : v == NULL);
        }
    }
    size_t n = 0, at = 0;
    uint64_t key, value;
    while (idmap_next(&m, &at, &key, &value)) {
        int k = 1;
        while (k <= KEYS && keys[k] != key)
            k++;
        CHECK(k <= KEYS && want[k] == value);
        n++;
    }
    size_t live = 0;
    for (int k = 1; k <= KEYS; k++)
        live += want[k] != 0;
    CHECK_EQ_U64(n, live);
    CHECK_EQ_U64(m.count, live);
    CHECK(idmap_find(&m, 0) == NULL);
    idmap_free(&m);
    CHECK(m.keys == NULL && m.count == 0);
}

int main(void) {
    make_scratch();
    TEST_RUN(test_idmap);
    TEST_RUN(test_text);
    TEST_RUN(test_status_strings);
    TEST_RUN(test_error_messages);
    TEST_RUN(test_error_prefix_not_repeated);
    TEST_RUN(test_error_truncation);
    TEST_RUN(test_error_is_per_thread);
    TEST_RUN(test_checked_arithmetic);
    TEST_RUN(test_handles);
    TEST_RUN(test_file_save_and_map);
    TEST_RUN(test_file_empty);
    TEST_RUN(test_file_errors);
    TEST_RUN(test_file_save_failure_keeps_old_file);
    TEST_RUN(test_file_save_killed_leaves_nothing);
    TEST_RUN(test_file_save_unnamed);
    TEST_RUN(test_file_save_named_fallback);
    rmdir(scratch);
    return test_summary();
}
