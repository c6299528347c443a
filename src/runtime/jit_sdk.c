/* Where the kernel build finds the kernel SDK (jit_sdk_dir in jit.h): found
 * from where the library's code was loaded, so that an install works from
 * whatever prefix it was installed to, or moved to. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* dl_iterate_phdr */
#endif

#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/jit.h"

#ifndef LM_KERNEL_SDK_DIR
#error "the build must define LM_KERNEL_SDK_DIR"
#endif
/* The SDK's place relative to the installed library's directory and to the
 * installed executable's (empty when the install layout is not relative). */
#ifndef LM_KERNEL_SDK_FROM_LIBDIR
#define LM_KERNEL_SDK_FROM_LIBDIR ""
#endif
#ifndef LM_KERNEL_SDK_FROM_BINDIR
#define LM_KERNEL_SDK_FROM_BINDIR ""
#endif

#define SDK_PATH_MAX 4096

/* What is fixed for the process: the file holding this code and the SDK
 * place that follows from it, found once. */
static pthread_once_t module_once = PTHREAD_ONCE_INIT;
static char module_path[SDK_PATH_MAX]; /* "" when unknown */
static char module_sdk[SDK_PATH_MAX];  /* "" when none */
static bool module_in_build_tree;

/* Any object of this file: its address says which loaded file holds it. */
static const char anchor = 0;

typedef struct module_search {
    uintptr_t addr;
    char name[SDK_PATH_MAX]; /* "" for the main program */
    bool found;
} module_search;

static int find_module(struct dl_phdr_info *info, size_t size, void *arg) {
    (void)size;
    module_search *s = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start = (uintptr_t)info->dlpi_addr + (uintptr_t)ph->p_vaddr;
        if (ph->p_type != PT_LOAD || s->addr < start || s->addr - start >= ph->p_memsz) continue;
        snprintf(s->name, sizeof s->name, "%s", info->dlpi_name ? info->dlpi_name : "");
        s->found = true;
        return 1;
    }
    return 0;
}

static bool is_dir(const char *path) {
    struct stat st;
    return path[0] && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void find_module_sdk(void) {
    module_search s = {.addr = (uintptr_t)&anchor};
    dl_iterate_phdr(find_module, &s);
    /* The shared library, by the name it was loaded by (symlinks resolved:
     * the install's directory is where the real file is); else the program. */
    const char *from = LM_KERNEL_SDK_FROM_LIBDIR;
    char resolved[PATH_MAX];
    if (s.found && s.name[0] && realpath(s.name, resolved)) {
        snprintf(module_path, sizeof module_path, "%s", resolved);
    } else {
        ssize_t n = readlink("/proc/self/exe", module_path, sizeof module_path - 1);
        module_path[n > 0 ? n : 0] = '\0';
        from = LM_KERNEL_SDK_FROM_BINDIR;
    }
#ifdef LM_BUILD_TREE_DIR
    /* Compared with symlinks resolved on both sides, as module_path is. */
    const char *tree = realpath(LM_BUILD_TREE_DIR, resolved) ? resolved : LM_BUILD_TREE_DIR;
    size_t tree_len = strlen(tree);
    module_in_build_tree =
        tree_len && !strncmp(module_path, tree, tree_len) && module_path[tree_len] == '/';
#endif
    const char *slash = strrchr(module_path, '/');
    if (!slash || !from[0]) return;
    /* Each leading "../" takes a directory off (the path has no symlinks
     * left), so that messages name a plain path. */
    size_t dir_len = (size_t)(slash - module_path);
    while (!strncmp(from, "../", 3) && dir_len > 0) {
        while (dir_len > 0 && module_path[dir_len - 1] != '/')
            dir_len--;
        if (dir_len > 0) dir_len--; /* the slash */
        from += 3;
    }
    int n = snprintf(module_sdk, sizeof module_sdk, "%.*s/%s", (int)dir_len, module_path, from);
    if (n < 0 || n >= (int)sizeof module_sdk) module_sdk[0] = '\0';
}

const char *jit_sdk_dir(void) {
    const char *env = getenv("LM_KERNEL_SDK_DIR");
    if (env && *env) return env;
    pthread_once(&module_once, find_module_sdk);
    if (is_dir(module_sdk)) return module_sdk;
    /* A program of the build tree: the source tree's SDK, even when an
     * older install sits at the configured prefix. */
    if (module_in_build_tree && is_dir(LM_KERNEL_SDK_DIR)) return LM_KERNEL_SDK_DIR;
#ifdef LM_KERNEL_SDK_INSTALL_DIR
    if (is_dir(LM_KERNEL_SDK_INSTALL_DIR)) return LM_KERNEL_SDK_INSTALL_DIR;
#endif
    return LM_KERNEL_SDK_DIR;
}

void jit_sdk_searched(char *out, size_t size) {
    pthread_once(&module_once, find_module_sdk);
    int n = 0;
    if (module_sdk[0]) n = snprintf(out, size, "'%s' (next to '%s'), ", module_sdk, module_path);
    if (n < 0 || (size_t)n >= size) n = 0;
#ifdef LM_KERNEL_SDK_INSTALL_DIR
    snprintf(out + n, size - (size_t)n, "'%s' (the prefix configured at build time) and '%s'",
             LM_KERNEL_SDK_INSTALL_DIR, LM_KERNEL_SDK_DIR);
#else
    snprintf(out + n, size - (size_t)n, "'%s'", LM_KERNEL_SDK_DIR);
#endif
}
