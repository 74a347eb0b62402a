/*
 * threads.h - the CPU backend's worker threads (threads.c): a process-wide pool of threads that
 * are started once and then reused by every graph_compute, and the barrier the executor waits
 * on between nodes. Both wait the same way: spin briefly (a node or a graph that follows at
 * once is picked up without a system call), then block on a condition variable (an idle pool or
 * a thread waiting for a descheduled peer on a busy machine costs no CPU).
 */
#pragma once

#include <pthread.h>
#include <stdatomic.h>

struct ggspec_barrier {
    int              n;
    atomic_int       arrived;
    atomic_uint      phase;   /* +1 each time all n have arrived */
    pthread_mutex_t  mutex;
    pthread_cond_t   cond;
};

void ggspec_internal_barrier_init(struct ggspec_barrier * b, int n);
void ggspec_internal_barrier_destroy(struct ggspec_barrier * b);
/* returns once all n threads have called it (for this phase) */
void ggspec_internal_barrier_wait(struct ggspec_barrier * b);

/*
 * Runs task(arg, ith) for ith = 0 .. n-1, ith 0 on the calling thread, the others on pool
 * threads, and returns when all have returned. A pool in use by another thread of the process
 * (or a process forked from one that had a pool) is not waited for: fresh threads are started.
 */
void ggspec_internal_run_parallel(int n, void (*task)(void * arg, int ith), void * arg);
