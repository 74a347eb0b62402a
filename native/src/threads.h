/*
 * threads.h - the CPU backend's worker threads (threads.c): a process-wide pool of threads that
 * are started once and then reused by every graph_compute, one job per node. A thread waiting
 * (a worker for the next job, the caller for the workers' shares) spins for up to a millisecond
 * (a node or a graph that follows at once is picked up without a system call), then blocks on a
 * condition variable (an idle pool costs no CPU); the caller does the shares no worker has
 * started, so a worker that does not get a CPU on a busy machine delays nothing.
 */
#pragma once

/*
 * Runs task(arg, ith) for ith = 0 .. n-1, ith 0 on the calling thread, the others on pool
 * threads, and returns when all have returned. A share no pool thread has started by the time
 * the caller is done with its own is run by the caller, so shares must not wait for each other.
 * A pool in use by another thread of the process (or a process forked from one that had a
 * pool) is not waited for: fresh threads are started.
 */
void ggspec_internal_run_parallel(int n, void (*task)(void * arg, int ith), void * arg);
