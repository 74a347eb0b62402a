/* cpu.h - cffi declarations: the CPU backend (include/ggspec-backend.h) */

ggspec_backend_t             ggspec_backend_cpu_init(void);
bool                         ggspec_backend_is_cpu(ggspec_backend_t backend);
void                         ggspec_backend_cpu_set_n_threads(ggspec_backend_t backend_cpu, int n_threads);
int                          ggspec_backend_cpu_get_n_threads(ggspec_backend_t backend_cpu);
ggspec_backend_buffer_t      ggspec_backend_cpu_buffer_from_ptr(void * ptr, size_t size);
ggspec_backend_buffer_type_t ggspec_backend_cpu_buffer_type(void);
