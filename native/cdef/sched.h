/* sched.h - cffi declarations: the backend scheduler and its test hooks
   (include/ggspec-backend.h). ggspec_py_sched_eval_callback is an eval callback implemented in
   Python: define it with @ffi.def_extern() and pass lib.ggspec_py_sched_eval_callback. */

typedef struct ggspec_backend_sched * ggspec_backend_sched_t;

typedef bool (*ggspec_backend_sched_eval_callback)(struct ggspec_tensor * t, bool ask, void * user_data);

ggspec_backend_sched_t  ggspec_backend_sched_new(ggspec_backend_t * backends, ggspec_backend_buffer_type_t * bufts, int n_backends, size_t graph_size);
void                    ggspec_backend_sched_free(ggspec_backend_sched_t sched);
void                    ggspec_backend_sched_init_measure(ggspec_backend_sched_t sched, struct ggspec_cgraph * measure_graph);
int                     ggspec_backend_sched_get_n_splits(ggspec_backend_sched_t sched);
ggspec_tallocr_t        ggspec_backend_sched_get_tallocr(ggspec_backend_sched_t sched, ggspec_backend_t backend);
ggspec_backend_buffer_t ggspec_backend_sched_get_buffer(ggspec_backend_sched_t sched, ggspec_backend_t backend);
void                    ggspec_backend_sched_set_node_backend(ggspec_backend_sched_t sched, struct ggspec_tensor * node, ggspec_backend_t backend);
ggspec_backend_t        ggspec_backend_sched_get_node_backend(ggspec_backend_sched_t sched, struct ggspec_tensor * node);
void                    ggspec_backend_sched_graph_compute(ggspec_backend_sched_t sched, struct ggspec_cgraph * graph);
void                    ggspec_backend_sched_reset(ggspec_backend_sched_t sched);
void                    ggspec_backend_sched_set_eval_callback(ggspec_backend_sched_t sched, ggspec_backend_sched_eval_callback callback, void * user_data);

int                    ggspec_backend_sched_debug_n_splits(ggspec_backend_sched_t sched);
int                    ggspec_backend_sched_debug_split_backend(ggspec_backend_sched_t sched, int k);
int                    ggspec_backend_sched_debug_split_i_start(ggspec_backend_sched_t sched, int k);
int                    ggspec_backend_sched_debug_split_i_end(ggspec_backend_sched_t sched, int k);
int                    ggspec_backend_sched_debug_split_n_inputs(ggspec_backend_sched_t sched, int k);
struct ggspec_tensor * ggspec_backend_sched_debug_split_input(ggspec_backend_sched_t sched, int k, int j);
int                    ggspec_backend_sched_debug_tensor_backend(ggspec_backend_sched_t sched, struct ggspec_tensor * t);
const char *           ggspec_backend_sched_debug_tensor_cause(ggspec_backend_sched_t sched, struct ggspec_tensor * t);
struct ggspec_tensor * ggspec_backend_sched_debug_tensor_copy(ggspec_backend_sched_t sched, struct ggspec_tensor * t, int backend_index);
bool                   ggspec_backend_sched_debug_is_reset(ggspec_backend_sched_t sched);
struct ggspec_cgraph * ggspec_backend_sched_debug_alloc_graph(ggspec_backend_sched_t sched);

extern "Python" bool ggspec_py_sched_eval_callback(struct ggspec_tensor *, bool, void *);
