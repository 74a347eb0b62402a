/* graph.h - cffi declarations: computation graphs, their hash sets, and computing them on the
   CPU (include/ggspec.h) */

#define GGSPEC_DEFAULT_GRAPH_SIZE 2048
#define GGSPEC_HASHTABLE_FULL ...
#define GGSPEC_HASHTABLE_ALREADY_EXISTS ...
#define GGSPEC_EXIT_SUCCESS 0
#define GGSPEC_EXIT_ABORTED 1

enum ggspec_cgraph_eval_order {
    GGSPEC_CGRAPH_EVAL_ORDER_LEFT_TO_RIGHT = 0,
    GGSPEC_CGRAPH_EVAL_ORDER_RIGHT_TO_LEFT,
    GGSPEC_CGRAPH_EVAL_ORDER_COUNT
};

struct ggspec_hash_set {
    size_t size;
    struct ggspec_tensor ** keys;
};

struct ggspec_cgraph {
    int size;
    int n_nodes;
    int n_leafs;
    struct ggspec_tensor ** nodes;
    struct ggspec_tensor ** grads;
    struct ggspec_tensor ** leafs;
    struct ggspec_hash_set visited_hash_table;
    enum ggspec_cgraph_eval_order order;
    int perf_runs;
    int64_t perf_cycles;
    int64_t perf_time_us;
};

struct ggspec_cplan {
    size_t work_size;
    uint8_t * work_data;
    int n_threads;
    bool (*abort_callback)(void * data);
    void * abort_callback_data;
};

void                   ggspec_build_forward_expand(struct ggspec_cgraph * cgraph, struct ggspec_tensor * tensor);
struct ggspec_cgraph * ggspec_new_graph(struct ggspec_context * ctx);
struct ggspec_cgraph * ggspec_new_graph_custom(struct ggspec_context * ctx, size_t size, bool grads);
struct ggspec_cgraph * ggspec_graph_dup(struct ggspec_context * ctx, struct ggspec_cgraph * cgraph);
struct ggspec_cgraph   ggspec_graph_view(struct ggspec_cgraph * cgraph, int i0, int i1);
void                   ggspec_graph_cpy(struct ggspec_cgraph * src, struct ggspec_cgraph * dst);
void                   ggspec_graph_clear(struct ggspec_cgraph * cgraph);
struct ggspec_tensor * ggspec_graph_get_tensor(struct ggspec_cgraph * cgraph, const char * name);
size_t                 ggspec_graph_overhead(void);
size_t                 ggspec_graph_overhead_custom(size_t size, bool grads);

struct ggspec_hash_set ggspec_hash_set_new(size_t size);
bool   ggspec_hash_contains(const struct ggspec_hash_set hash_set, struct ggspec_tensor * key);
size_t ggspec_hash_find(const struct ggspec_hash_set hash_set, struct ggspec_tensor * key);
size_t ggspec_hash_insert(struct ggspec_hash_set hash_set, struct ggspec_tensor * key);
size_t ggspec_hash_find_or_insert(struct ggspec_hash_set hash_set, struct ggspec_tensor * key);
size_t ggspec_hash_size(size_t min_sz);
void   ggspec_hash_set_free(struct ggspec_hash_set hash_set);

struct ggspec_cplan ggspec_graph_plan(const struct ggspec_cgraph * cgraph, int n_threads);
int                 ggspec_graph_compute(struct ggspec_cgraph * cgraph, struct ggspec_cplan * cplan);

ggspec_backend_graph_plan_t ggspec_backend_graph_plan_create(ggspec_backend_t backend, struct ggspec_cgraph * cgraph);
void                        ggspec_backend_graph_plan_free(ggspec_backend_t backend, ggspec_backend_graph_plan_t plan);
void                        ggspec_backend_graph_plan_compute(ggspec_backend_t backend, ggspec_backend_graph_plan_t plan);
bool                        ggspec_backend_graph_compute(ggspec_backend_t backend, struct ggspec_cgraph * cgraph);

size_t ggspec_backend_cpu_work_size(ggspec_backend_t backend_cpu);
void * ggspec_backend_cpu_work_data(ggspec_backend_t backend_cpu);
size_t ggspec_backend_cpu_plan_work_size(ggspec_backend_graph_plan_t plan);
int    ggspec_backend_cpu_plan_n_threads(ggspec_backend_graph_plan_t plan);
/* the compute kernels in use: "portable", "avx2" or "avx512" (native/src/simd.h: GGSPEC_NATIVE_PORTABLE=1 forces portable, GGSPEC_NATIVE_KERNELS caps the choice) */
const char * ggspec_backend_cpu_kernels(void);
size_t ggspec_vdev_graphs_run(ggspec_backend_t b);
