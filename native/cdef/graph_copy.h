/* graph_copy.h - cffi declarations: graph_copy and compare_graph_backend
   (include/ggspec-backend.h). ggspec_py_eval_callback is a comparison callback implemented in
   Python: define it with @ffi.def_extern() and pass lib.ggspec_py_eval_callback. */

struct ggspec_backend_graph_copy {
    ggspec_backend_buffer_t buffer;
    struct ggspec_context * ctx_allocated;
    struct ggspec_context * ctx_unallocated;
    struct ggspec_cgraph * graph;
};

typedef bool (*ggspec_backend_eval_callback)(int node_index, struct ggspec_tensor * t1, struct ggspec_tensor * t2, void * user_data);

struct ggspec_backend_graph_copy ggspec_backend_graph_copy(ggspec_backend_t backend, struct ggspec_cgraph * graph);
void ggspec_backend_graph_copy_free(struct ggspec_backend_graph_copy copy);
bool ggspec_backend_compare_graph_backend(ggspec_backend_t backend1, ggspec_backend_t backend2, struct ggspec_cgraph * graph,
                                          ggspec_backend_eval_callback callback, void * user_data);

extern "Python" bool ggspec_py_eval_callback(int, struct ggspec_tensor *, struct ggspec_tensor *, void *);
