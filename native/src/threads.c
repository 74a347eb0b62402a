/*
 * threads.c - the CPU backend's worker pool (threads.h).
 */
#define _POSIX_C_SOURCE 200809L

#include "threads.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "assert.h"

/*
 * How long a thread busy-waits before it blocks: long enough that back-to-back graph_compute
 * calls (and the nodes of one graph) find the pool's threads still running, so a loaded
 * machine's scheduler is not asked to wake them every time; short enough that an idle pool
 * gives its cores back within a millisecond.
 */
#define SPIN_NS 1000000L

struct spin {
    struct timespec start;
    unsigned        rounds;
};

static void cpu_relax(void);

/* true while the spin that started with spin_init may go on (the clock is read every 256 rounds) */
static int spinning(struct spin * s) {
    cpu_relax();
    if ((++s->rounds & 255u) != 0) {
        return 1;
    }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - s->start.tv_sec) * 1000000000L + (now.tv_nsec - s->start.tv_nsec) < SPIN_NS;
}

static void spin_init(struct spin * s) {
    clock_gettime(CLOCK_MONOTONIC, &s->start);
    s->rounds = 0;
}

/* workers kept in the pool; a larger thread count starts its extra threads per call */
#define POOL_MAX_WORKERS 63

static void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* the pool */

struct pool {
    pid_t           pid;        /* the process that made it: a forked child makes its own */
    pthread_mutex_t in_use;     /* held by the run_parallel call using the pool */
    int             n_workers;  /* threads started (under in_use) */
    /* the current job: (sequence number << 32) | thread count, published in one store */
    _Atomic uint64_t job;
    void         (*task)(void *, int);
    void *          arg;
    atomic_int      pending;    /* shares 1 .. n-1 of the current job not yet done */
    /* share i is free to take while open[i] holds the current job word; taking it stores 0 */
    _Atomic uint64_t open[POOL_MAX_WORKERS + 1];
    pthread_mutex_t mutex;
    pthread_cond_t  start;      /* job changed */
    pthread_cond_t  done;       /* pending reached 0 */
};

struct worker {
    struct pool * pool;
    int           ith;
    uint64_t      seen; /* the job word when it was started: it waits for the next one */
};

static void share_done(struct pool * p) {
    if (atomic_fetch_sub(&p->pending, 1) == 1) {
        pthread_mutex_lock(&p->mutex);
        pthread_cond_signal(&p->done);
        pthread_mutex_unlock(&p->mutex);
    }
}

static void * worker_main(void * arg) {
    struct worker * w = arg;
    struct pool * p = w->pool;
    const int ith = w->ith;
    uint64_t seen = w->seen;
    free(w);

    for (;;) {
        uint64_t job = atomic_load(&p->job);
        struct spin sp;
        spin_init(&sp);
        while ((job >> 32) == (seen >> 32) && spinning(&sp)) {
            job = atomic_load(&p->job);
        }
        if ((job >> 32) == (seen >> 32)) {
            pthread_mutex_lock(&p->mutex);
            while (((job = atomic_load(&p->job)) >> 32) == (seen >> 32)) {
                pthread_cond_wait(&p->start, &p->mutex);
            }
            pthread_mutex_unlock(&p->mutex);
        }
        seen = job;
        /* only a thread that takes its share reads task and arg: they may already be a later job's */
        uint64_t expected = job;
        if (ith >= (int)(uint32_t)job || !atomic_compare_exchange_strong(&p->open[ith], &expected, (uint64_t)0)) {
            continue; /* not in this job, or the caller took the share (this thread came late) */
        }
        p->task(p->arg, ith);
        share_done(p);
    }
    return NULL;
}

static _Atomic(struct pool *) the_pool = NULL;

/* this process's pool (made at the first call, and again in a forked child) */
static struct pool * get_pool(void) {
    const pid_t self = getpid();
    for (;;) {
        struct pool * p = atomic_load(&the_pool);
        if (p != NULL && p->pid == self) {
            return p;
        }
        /* a pool inherited through fork has no threads in this process: it is left alone */
        struct pool * fresh = calloc(1, sizeof(*fresh));
        if (fresh == NULL) {
            return NULL;
        }
        fresh->pid = self;
        pthread_mutex_init(&fresh->in_use, NULL);
        pthread_mutex_init(&fresh->mutex, NULL);
        pthread_cond_init(&fresh->start, NULL);
        pthread_cond_init(&fresh->done, NULL);
        atomic_init(&fresh->job, (uint64_t)0);
        atomic_init(&fresh->pending, 0);
        if (atomic_compare_exchange_strong(&the_pool, &p, fresh)) {
            return fresh;
        }
        free(fresh); /* another thread made one first */
    }
}

struct spawned {
    void (*task)(void *, int);
    void * arg;
    int    ith;
};

static void * spawned_main(void * arg) {
    const struct spawned * s = arg;
    s->task(s->arg, s->ith);
    return NULL;
}

/* threads 0 .. n-1, 1 .. n-1 as fresh threads joined before returning */
static void run_with_fresh_threads(int n, void (*task)(void *, int), void * arg) {
    pthread_t * threads = calloc((size_t)n, sizeof(*threads));
    struct spawned * s = calloc((size_t)n, sizeof(*s));
    GGSPEC_ASSERT(threads != NULL && s != NULL, "out of memory for compute threads");
    for (int j = 1; j < n; j++) {
        s[j] = (struct spawned) { .task = task, .arg = arg, .ith = j };
        const int rc = pthread_create(&threads[j], NULL, spawned_main, &s[j]);
        GGSPEC_ASSERT(rc == 0, "rc == 0");
    }
    task(arg, 0);
    for (int j = 1; j < n; j++) {
        const int rc = pthread_join(threads[j], NULL);
        GGSPEC_ASSERT(rc == 0, "rc == 0");
    }
    free(threads);
    free(s);
}

/* threads 0 .. n-1 with 1 .. n-1 from the pool (p->in_use held), returning when all are done */
static void run_pooled(struct pool * p, int n, void (*task)(void *, int), void * arg) {
    while (p->n_workers < n - 1) {
        struct worker * w = malloc(sizeof(*w));
        GGSPEC_ASSERT(w != NULL, "out of memory for compute threads");
        *w = (struct worker) { .pool = p, .ith = p->n_workers + 1, .seen = atomic_load(&p->job) };
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_t t;
        const int rc = pthread_create(&t, &attr, worker_main, w);
        pthread_attr_destroy(&attr);
        GGSPEC_ASSERT(rc == 0, "rc == 0");
        p->n_workers++;
    }

    p->task = task;
    p->arg  = arg;
    atomic_store(&p->pending, n - 1);
    const uint64_t job = (((atomic_load(&p->job) >> 32) + 1) << 32) | (uint32_t)n;
    for (int i = 1; i < n; i++) {
        atomic_store(&p->open[i], job);
    }
    pthread_mutex_lock(&p->mutex);
    atomic_store(&p->job, job);
    pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->mutex);

    task(arg, 0);
    /*
     * Shares no worker has taken yet are done here: on a loaded machine a worker may not get a
     * CPU for a scheduler slice, and the job need not wait for it (a share computes the same
     * bits on any thread).
     */
    for (int i = 1; i < n; i++) {
        uint64_t expected = job;
        if (atomic_compare_exchange_strong(&p->open[i], &expected, (uint64_t)0)) {
            task(arg, i);
            share_done(p);
        }
    }

    struct spin sp;
    spin_init(&sp);
    while (atomic_load(&p->pending) != 0 && spinning(&sp)) {
    }
    if (atomic_load(&p->pending) != 0) {
        pthread_mutex_lock(&p->mutex);
        while (atomic_load(&p->pending) != 0) {
            pthread_cond_wait(&p->done, &p->mutex);
        }
        pthread_mutex_unlock(&p->mutex);
    }
}

void ggspec_internal_run_parallel(int n, void (*task)(void * arg, int ith), void * arg) {
    if (n <= 1) {
        task(arg, 0);
        return;
    }
    struct pool * p = get_pool();
    if (p == NULL || n - 1 > POOL_MAX_WORKERS || pthread_mutex_trylock(&p->in_use) != 0) {
        run_with_fresh_threads(n, task, arg);
        return;
    }
    run_pooled(p, n, task, arg);
    pthread_mutex_unlock(&p->in_use);
}
