/*
 * assert.h - GGSPEC_ASSERT, the checked precondition of the native implementation.
 *
 * On failure it prints "GGML_ASSERT: <file>:<line>: <message>" on stderr, the line the
 * conformance suite matches against rc.8's, and aborts. It is always on (NDEBUG does not
 * remove it). Included as "assert.h" from this directory only; <assert.h> is untouched.
 */
#pragma once

#include <stdio.h>
#include <stdlib.h>

#define GGSPEC_ASSERT(cond, message)                                                  \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fflush(stdout);                                                           \
            fprintf(stderr, "GGML_ASSERT: %s:%d: %s\n", __FILE__, __LINE__, message); \
            abort();                                                                  \
        }                                                                             \
    } while (0)

/* marks a parameter an interface entry must take but does not need */
#define GGSPEC_UNUSED(x) (void)(x)
