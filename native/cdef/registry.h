/* registry.h - cffi declarations: the backend registry (include/ggspec-backend.h,
   include/ggspec-backend-impl.h). ggspec_py_init_fn is an init function implemented in
   Python: define it with @ffi.def_extern() and register lib.ggspec_py_init_fn. */

typedef ggspec_backend_t (*ggspec_backend_init_fn)(const char * params, void * user_data);

void ggspec_backend_register(const char * name, ggspec_backend_init_fn init_fn, ggspec_backend_buffer_type_t default_buffer_type, void * user_data);

void                         ggspec_backend_reg_reset_for_tests(void);
size_t                       ggspec_backend_reg_get_count(void);
size_t                       ggspec_backend_reg_find_by_name(const char * name);
ggspec_backend_t             ggspec_backend_reg_init_backend_from_str(const char * backend_str);
const char *                 ggspec_backend_reg_get_name(size_t i);
ggspec_backend_t             ggspec_backend_reg_init_backend(size_t i, const char * params);
ggspec_backend_buffer_type_t ggspec_backend_reg_get_default_buffer_type(size_t i);
ggspec_backend_buffer_t      ggspec_backend_reg_alloc_buffer(size_t i, size_t size);

extern "Python" ggspec_backend_t ggspec_py_init_fn(const char *, void *);
