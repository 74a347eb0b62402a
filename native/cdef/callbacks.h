/* callbacks.h - the hand-written part of the cdef: functions implemented in Python, which no
   header declares. Everything else cffi is given comes from native/include/*.h (see
   native/build.py, read_cdef). Define each with @ffi.def_extern() and pass lib.<name>. */

/* a backend init function for the registry (ggspec_backend_init_fn, ggspec-backend-impl.h) */
extern "Python" ggspec_backend_t ggspec_py_init_fn(const char *, void *);

/* the scheduler's eval callback (ggspec_backend_sched_eval_callback, ggspec-backend.h) */
extern "Python" bool ggspec_py_sched_eval_callback(struct ggspec_tensor *, bool, void *);

/* compare_graph_backend's comparison callback (ggspec_backend_eval_callback, ggspec-backend.h) */
extern "Python" bool ggspec_py_eval_callback(int, struct ggspec_tensor *, struct ggspec_tensor *, void *);
