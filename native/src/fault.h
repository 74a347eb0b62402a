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
 *   and optionally, after POINT, when:
 *          #N     from the Nth call at POINT on, counted in the process (hang@graph_compute#3:
 *                 a target that works for two computes, then never returns)
 *          /N     one call in N, at random (corrupt@tensor_get/50: a flaky target)
 *          =N     the Nth call in the process alone (corrupt@tensor_get=1: a target that misreads
 *                 once in each check's worker, so the failing example passes when replayed:
 *                 a flaky target, deterministically)
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
#include <unistd.h>

/* A random number from the clock and the process, fresh in every forked worker. */
static inline unsigned long ggspec_fault_random(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    unsigned long x = (unsigned long)ts.tv_nsec * 2654435761UL ^ (unsigned long)getpid() * 40503UL;
    x ^= x >> 13;
    x *= 0x5bd1e995UL;
    return x ^ (x >> 15);
}

/* Whether GGSPEC_FAULT asks for `kind` at `point` in this, the `calls`-th call there. */
static inline bool ggspec_fault_is(const char * kind, const char * point, unsigned long calls) {
    const char * spec = getenv("GGSPEC_FAULT");
    if (spec == NULL) {
        return false;
    }
    size_t n = strlen(kind);
    size_t m = strlen(point);
    if (strncmp(spec, kind, n) != 0 || spec[n] != '@' || strncmp(spec + n + 1, point, m) != 0) {
        return false;
    }
    const char * when = spec + n + 1 + m;
    unsigned long k = when[0] != '\0' ? strtoul(when + 1, NULL, 10) : 0;
    switch (when[0]) {
        case '\0': return true;
        case '#': return calls >= k;
        case '/': return k > 0 && ggspec_fault_random() % k == 0;
        case '=': return calls == k;
        default: return false;
    }
}

static inline void ggspec_fault_point(const char * point, unsigned long calls) {
    if (ggspec_fault_is("segfault", point, calls)) {
        raise(SIGSEGV);
    }
    if (ggspec_fault_is("abort", point, calls)) {
        fprintf(stderr, "ggspec fault injection: abort in %s\n", point);
        abort();
    }
    if (ggspec_fault_is("hang", point, calls)) {
        for (;;) {
            thrd_sleep(&(struct timespec){.tv_sec = 1}, NULL);
        }
    }
}

#define GGSPEC_FAULT_POINT(point)                                                \
    do {                                                                         \
        static unsigned long ggspec_fault_calls_;                                \
        ggspec_fault_point(#point, ++ggspec_fault_calls_);                       \
    } while (0)
#define GGSPEC_FAULT_CORRUPT(point, data, size)                                  \
    do {                                                                         \
        static unsigned long ggspec_fault_reads_;                                \
        ++ggspec_fault_reads_;                                                   \
        if ((size) > 0 && ggspec_fault_is("corrupt", #point, ggspec_fault_reads_)) { \
            ((unsigned char *)(data))[0] ^= 1;                                   \
        }                                                                        \
    } while (0)

#else

#define GGSPEC_FAULT_POINT(point) ((void)0)
#define GGSPEC_FAULT_CORRUPT(point, data, size) ((void)0)

#endif
