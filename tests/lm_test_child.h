/* Runs work in a forked child process and brings its result back, for tests
 * that must show something holds "in another process". */
#ifndef LM_TEST_CHILD_H
#define LM_TEST_CHILD_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* Calls fn(ctx, out) in a child; fn fills `size` bytes of out and returns 1 on
 * success. Returns 1 when the child succeeded and all bytes arrived in out. */
static inline int test_in_child(int (*fn)(void *ctx, void *out), void *ctx, void *out,
                                size_t size) {
    int fds[2];
    if (pipe(fds) != 0) return 0;
    pid_t pid = fork();
    if (pid < 0) return 0;
    if (pid == 0) {
        close(fds[0]);
        int ok = fn(ctx, out) && write(fds[1], out, size) == (ssize_t)size;
        _exit(ok ? 0 : 1);
    }
    close(fds[1]);
    size_t got = 0;
    while (got < size) {
        ssize_t n = read(fds[0], (char *)out + got, size - got);
        if (n <= 0) break;
        got += (size_t)n;
    }
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 && got == size;
}

/* Runs fn(ctx) in a forked child that exits 0 when fn returns, for work that
 * may end the process (a signal). Returns the child's wait status (inspect it
 * with WIFSIGNALED, WTERMSIG...), or -1 when the child could not be run. */
static inline int test_child_status(void (*fn)(void *ctx), void *ctx) {
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        fn(ctx);
        _exit(0);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid) return -1;
    return status;
}

#endif
