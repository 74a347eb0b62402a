/* webgpu.h - cffi declarations: the WebGPU device backend (include/ggspec-webgpu.h) */

ggspec_backend_t             ggspec_webgpu_init(const char * lib_path, char * reason, size_t reason_size);
bool                         ggspec_backend_is_webgpu(ggspec_backend_t b);
ggspec_backend_buffer_type_t ggspec_webgpu_buffer_type(ggspec_backend_t b);
bool                         ggspec_webgpu_compiled(void);
const char *                 ggspec_webgpu_adapter_name(void);
size_t                       ggspec_webgpu_pending(ggspec_backend_t b);
