/*
 * fault.h - fault injection, for the suite's tests of its own harness (tests/test_faults.py).
 *
 * Compiled in only by a variant built with -DGGSPEC_FAULT_INJECTION (native.build.build_variant);
 * the default build has none of it. In such a variant the environment variable
 * GGSPEC_FAULT="KIND@POINT" makes the call at POINT misbehave:
 *
 *   KIND   segfault  raise SIGSEGV
 *          abort     print a line and abort (no GGML_ASSERT message)
 *          hang      sleep forever
 *          corrupt   flip the low bit of the first byte a read returns (POINT tensor_get only)
 *   POINT  load           the library's constructor (runs when it is loaded)
 *          init           ggspec_init (every target makes a context first)
 *          tensor_set, tensor_get, graph_compute   the API calls of those names
 *
 * Without the variable, or for another point, the variant behaves as the default build.
 */
#pragma once

#ifdef GGSPEC_FAULT_INJECTION

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <time.h>

static inline bool ggspec_fault_is(const char * kind, const char * point) {
    const char * spec = getenv("GGSPEC_FAULT");
    if (spec == NULL) {
        return false;
    }
    size_t n = strlen(kind);
    return strncmp(spec, kind, n) == 0 && spec[n] == '@' && strcmp(spec + n + 1, point) == 0;
}

static inline void ggspec_fault_point(const char * point) {
    if (ggspec_fault_is("segfault", point)) {
        raise(SIGSEGV);
    }
    if (ggspec_fault_is("abort", point)) {
        fprintf(stderr, "ggspec fault injection: abort in %s\n", point);
        abort();
    }
    if (ggspec_fault_is("hang", point)) {
        for (;;) {
            thrd_sleep(&(struct timespec){.tv_sec = 1}, NULL);
        }
    }
}

#define GGSPEC_FAULT_POINT(point) ggspec_fault_point(#point)
#define GGSPEC_FAULT_CORRUPT(point, data, size)                                  \
    do {                                                                         \
        if ((size) > 0 && ggspec_fault_is("corrupt", #point)) {                  \
            ((unsigned char *)(data))[0] ^= 1;                                   \
        }                                                                        \
    } while (0)

#else

#define GGSPEC_FAULT_POINT(point) ((void)0)
#define GGSPEC_FAULT_CORRUPT(point, data, size) ((void)0)

#endif
