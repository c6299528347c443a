/* base/: status strings, error messages, checked arithmetic, handles, files. */
#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/checked.h"
#include "base/error.h"
#include "base/file.h"
#include "base/handle.h"
#include "lm_test.h"

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

int main(void) {
    make_scratch();
    TEST_RUN(test_status_strings);
    TEST_RUN(test_error_messages);
    TEST_RUN(test_error_truncation);
    TEST_RUN(test_error_is_per_thread);
    TEST_RUN(test_checked_arithmetic);
    TEST_RUN(test_handles);
    TEST_RUN(test_file_save_and_map);
    TEST_RUN(test_file_empty);
    TEST_RUN(test_file_errors);
    TEST_RUN(test_file_save_failure_keeps_old_file);
    rmdir(scratch);
    return test_summary();
}
