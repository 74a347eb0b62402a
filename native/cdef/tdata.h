/* tdata.h - cffi declarations: tensor data access and placement (include/ggspec-backend.h) */

void ggspec_backend_tensor_set(struct ggspec_tensor * tensor, const void * data, size_t offset, size_t size);
void ggspec_backend_tensor_get(const struct ggspec_tensor * tensor, void * data, size_t offset, size_t size);
void ggspec_backend_tensor_set_async(ggspec_backend_t backend, struct ggspec_tensor * tensor, const void * data, size_t offset, size_t size);
void ggspec_backend_tensor_get_async(ggspec_backend_t backend, const struct ggspec_tensor * tensor, void * data, size_t offset, size_t size);

void ggspec_backend_tensor_alloc(ggspec_backend_buffer_t buffer, struct ggspec_tensor * tensor, void * addr);
void ggspec_backend_view_init(ggspec_backend_buffer_t buffer, struct ggspec_tensor * tensor);
