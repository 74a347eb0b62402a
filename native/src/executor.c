/*
 * executor.c - the graph executor the CPU backend runs: ggspec_graph_plan (the work memory a
 * graph needs) and ggspec_graph_compute (its nodes in order, each node's shares on the CPU
 * backend's thread pool). What one node does is kernels.c's.
 */
#include "ggspec.h"

#include <string.h>

#include "assert.h"
#include "internal.h"
#include "threads.h"

/* the graph executor */

struct ggspec_cplan ggspec_graph_plan(const struct ggspec_cgraph * cgraph, int n_threads) {
    if (n_threads <= 0) {
        n_threads = GGSPEC_DEFAULT_N_THREADS;
    }
    size_t work = 0;
    for (int i = 0; i < cgraph->n_nodes; i++) {
        const size_t cur = ggspec_internal_work_size(cgraph->nodes[i], n_threads);
        work = cur > work ? cur : work;
    }
    if (work > 0) {
        /* room to put each thread's scratch on its own cache line */
        work += GGSPEC_CACHE_LINE_SIZE * (size_t)(n_threads - 1);
    }

    struct ggspec_cplan plan;
    memset(&plan, 0, sizeof(plan));
    plan.n_threads = n_threads;
    plan.work_size = work;
    plan.work_data = NULL;
    return plan;
}

/* one node's share for thread ith of nth (a pool job: shares never wait for each other) */
struct node_job {
    struct ggspec_tensor *      node;
    const struct ggspec_cplan * plan;
    int                         n_tasks;
};

static void compute_share(void * arg, int ith) {
    const struct node_job * job = arg;
    ggspec_internal_compute(job->node, ith, job->n_tasks, job->plan->work_data, job->plan->work_size);
}

/*
 * A graph whose whole work (multiply-adds of its products, elements of its other nodes) is
 * below this takes less time than waking a second thread: it runs on the calling thread alone.
 * Results are the same either way (rows are split, never reductions), and the work buffer
 * keeps the plan's size.
 */
#define SMALL_GRAPH_WORK (1 << 20)

static bool graph_is_small(const struct ggspec_cgraph * cgraph) {
    double work = 0.0;
    for (int i = 0; i < cgraph->n_nodes; i++) {
        const struct ggspec_tensor * node = cgraph->nodes[i];
        const double n = (double)ggspec_nelements(node);
        work += node->op == GGSPEC_OP_MUL_MAT ? n * (double)node->src[0]->ne[0] : n;
    }
    return work < (double)SMALL_GRAPH_WORK;
}

/*
 * The nodes in order, on the calling thread: the abort callback, the node's init phase, then
 * its n_tasks shares as one job of the CPU backend's thread pool (threads.h), which returns
 * when all shares are done; that return is the barrier between two nodes.
 */
int ggspec_graph_compute(struct ggspec_cgraph * cgraph, struct ggspec_cplan * cplan) {
    GGSPEC_ASSERT(cplan != NULL, "cplan");
    GGSPEC_ASSERT(cplan->n_threads > 0, "cplan->n_threads > 0");
    if (cplan->work_size > 0) {
        GGSPEC_ASSERT(cplan->work_data != NULL, "cplan->work_data"); /* CPU-20 */
    }

    const int n = graph_is_small(cgraph) ? 1 : cplan->n_threads;
    bool stopped = false;
    for (int i = 0; i < cgraph->n_nodes; i++) {
        struct ggspec_tensor * node = cgraph->nodes[i];
        if (cplan->abort_callback != NULL && cplan->abort_callback(cplan->abort_callback_data)) {
            stopped = true;
            break;
        }
        ggspec_internal_compute_init(node, cplan->work_data, cplan->work_size);
        struct node_job job = { .node = node, .plan = cplan, .n_tasks = ggspec_internal_n_tasks(node, n) };
        ggspec_internal_run_parallel(job.n_tasks, compute_share, &job);
    }

    cgraph->perf_runs++;
    return stopped ? GGSPEC_EXIT_ABORTED : GGSPEC_EXIT_SUCCESS;
}
