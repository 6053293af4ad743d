// The loader behind the stubs that tch's C API is linked to (see tch-lazy.sh): the first
// call through any stub loads libberyl_tch.so (tch's C API over libtorch) and fills in
// the address of every function, so a command that never runs a model never loads
// libtorch, whose 440 MB and static initialisers cost a quarter second at every start.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef BERYL_TCH_LIB
#define BERYL_TCH_LIB "libberyl_tch.so"
#endif

// Made by tch-lazy.sh: one slot per function (a stub jumps through it), the functions'
// names, and the addresses of the functions the library calls back (defined by tch in
// this program), which the library reaches through a table of its own.
extern void *beryl_tch_slots[];
extern const char *const beryl_tch_names[];
extern const unsigned beryl_tch_count;
extern void *const beryl_tch_callbacks[];
extern const unsigned beryl_tch_callback_count;

static pthread_once_t once = PTHREAD_ONCE_INIT;

// A stub cannot return an error through the signature it stands for: the command stops
// here with the reason, as it would have stopped at start when libtorch was linked.
static void fail(const char *path, const char *what) {
    fprintf(stderr,
            "beryl: libtorch could not be loaded from %s: %s\n"
            "  scripts/setup.sh builds it; BERYL_TCH_LIB names another copy.\n",
            path, what ? what : "unknown error");
    fflush(stderr);
    _exit(70);
}

static void load(void) {
    const char *path = getenv("BERYL_TCH_LIB");
    if (!path || !*path) path = BERYL_TCH_LIB;
    // DEEPBIND: libtorch's calls to functions it defines itself (its BLAS, `sgemm_`) stay
    // in it. Otherwise they would bind to the OpenBLAS that FAISS loaded at start, whose
    // products of a row change with the number of rows beside it, and a build's vectors
    // would depend on its batch sizes.
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (!lib) fail(path, dlerror());
    void **(*back)(void) = (void **(*)(void))dlsym(lib, "beryl_tch_back_table");
    if (!back) fail(path, "it has no beryl_tch_back_table: not built by tch-lazy.sh");
    void **table = back();
    for (unsigned i = 0; i < beryl_tch_callback_count; i++) table[i] = beryl_tch_callbacks[i];
    for (unsigned i = 0; i < beryl_tch_count; i++) {
        void *f = dlsym(lib, beryl_tch_names[i]);
        if (!f) fail(path, dlerror());
        // A stub on another thread reads its slot without the lock: the store is one
        // aligned word, so it sees the lazy entry or the function, never a torn value.
        __atomic_store_n(&beryl_tch_slots[i], f, __ATOMIC_RELEASE);
    }
}

// Called by the lazy entry of every stub (with the arguments saved), and by the program
// itself to load the library ahead of its first use.
void beryl_tch_load(void) { pthread_once(&once, load); }
