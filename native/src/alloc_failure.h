/*
 * alloc_failure.h - allocation-failure injection, for the tests only (tests/native/test_alloc_failure.py).
 *
 * Not part of the normal build. A variant is built with
 *     extra_cflags  = ["-include", "native/src/alloc_failure.h"]
 *     extra_ldflags = ["-Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=aligned_alloc,--wrap=free"]
 * so that every allocation of the module goes through the wrappers below (the linker's --wrap
 * redirects the calls, the header gives every translation unit the same weak definitions).
 *
 *   ggspec_alloc_fail_at(n)  the n-th allocation from now returns NULL (n <= 0: none fails)
 *   ggspec_alloc_count()     allocations attempted so far
 *   ggspec_alloc_live()      blocks allocated and not yet freed (for leak checks)
 */
#pragma once

/* no #include here (size_t is __SIZE_TYPE__): this header comes first in every file, before
   the file's own feature-test macros */

void * __real_malloc(__SIZE_TYPE__ size);
void * __real_calloc(__SIZE_TYPE__ n, __SIZE_TYPE__ size);
void * __real_realloc(void * p, __SIZE_TYPE__ size);
void * __real_aligned_alloc(__SIZE_TYPE__ alignment, __SIZE_TYPE__ size);
void   __real_free(void * p);

__attribute__((weak)) long ggspec_alloc_calls  = 0;
__attribute__((weak)) long ggspec_alloc_target = 0;
__attribute__((weak)) long ggspec_alloc_blocks = 0;

__attribute__((weak)) void ggspec_alloc_fail_at(long n) {
    ggspec_alloc_target = n > 0 ? __atomic_load_n(&ggspec_alloc_calls, __ATOMIC_SEQ_CST) + n : 0;
}

__attribute__((weak)) long ggspec_alloc_count(void) {
    return __atomic_load_n(&ggspec_alloc_calls, __ATOMIC_SEQ_CST);
}

__attribute__((weak)) long ggspec_alloc_live(void) {
    return __atomic_load_n(&ggspec_alloc_blocks, __ATOMIC_SEQ_CST);
}

static inline int ggspec_alloc_fails(void) {
    const long k = __atomic_add_fetch(&ggspec_alloc_calls, 1, __ATOMIC_SEQ_CST);
    return ggspec_alloc_target > 0 && k == ggspec_alloc_target;
}

static inline void * ggspec_alloc_counted(void * p) {
    if (p != ((void *)0)) {
        __atomic_add_fetch(&ggspec_alloc_blocks, 1, __ATOMIC_SEQ_CST);
    }
    return p;
}

__attribute__((weak)) void * __wrap_malloc(__SIZE_TYPE__ size) {
    return ggspec_alloc_fails() ? ((void *)0) : ggspec_alloc_counted(__real_malloc(size));
}

__attribute__((weak)) void * __wrap_calloc(__SIZE_TYPE__ n, __SIZE_TYPE__ size) {
    return ggspec_alloc_fails() ? ((void *)0) : ggspec_alloc_counted(__real_calloc(n, size));
}

__attribute__((weak)) void * __wrap_aligned_alloc(__SIZE_TYPE__ alignment, __SIZE_TYPE__ size) {
    return ggspec_alloc_fails() ? ((void *)0) : ggspec_alloc_counted(__real_aligned_alloc(alignment, size));
}

__attribute__((weak)) void * __wrap_realloc(void * p, __SIZE_TYPE__ size) {
    if (ggspec_alloc_fails()) {
        return ((void *)0); /* as a failing realloc: p is left as it was */
    }
    void * q = __real_realloc(p, size);
    return p == ((void *)0) ? ggspec_alloc_counted(q) : q;
}

__attribute__((weak)) void __wrap_free(void * p) {
    if (p != ((void *)0)) {
        __atomic_sub_fetch(&ggspec_alloc_blocks, 1, __ATOMIC_SEQ_CST);
    }
    __real_free(p);
}
