/* copy.h - cffi declarations: tensor copies (include/ggspec-backend.h, ggspec-backend-impl.h) */

void ggspec_backend_tensor_copy(struct ggspec_tensor * src, struct ggspec_tensor * dst);
void ggspec_backend_tensor_copy_async(ggspec_backend_t backend, struct ggspec_tensor * src, struct ggspec_tensor * dst);
bool ggspec_backend_buffer_copy_tensor(const struct ggspec_tensor * src, struct ggspec_tensor * dst);
