/*
 * registry.c - the process-wide table of backends that can be created by name.
 *
 * The CPU backend enters the table lazily, on the first query (any ggspec_backend_reg_*
 * function), not on ggspec_backend_register itself: entries registered before the first
 * query come before it.
 */
#include "ggspec-backend-impl.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "assert.h"

#define REGISTRY_CAPACITY 16
#define REGISTRY_NAME_LEN 128

struct registry_entry {
    char                         name[REGISTRY_NAME_LEN];
    ggspec_backend_init_fn       init_fn;
    ggspec_backend_buffer_type_t default_buffer_type;
    void *                       user_data;
};

static struct registry_entry registry[REGISTRY_CAPACITY];
static size_t                registry_count = 0;

static ggspec_backend_t cpu_init_from_registry(const char * params, void * user_data) {
    GGSPEC_UNUSED(params);
    GGSPEC_UNUSED(user_data);
    return ggspec_backend_cpu_init();
}

static bool registry_initialized = false;

static void registry_init(void) {
    if (registry_initialized) {
        return;
    }
    registry_initialized = true;
    ggspec_backend_register("CPU", cpu_init_from_registry, ggspec_backend_cpu_buffer_type(), NULL);
}

/* enforces REG-2, REG-3, REG-12 */
void ggspec_backend_register(const char * name, ggspec_backend_init_fn init_fn,
                             ggspec_backend_buffer_type_t default_buffer_type, void * user_data) {
    GGSPEC_ASSERT(registry_count < REGISTRY_CAPACITY, "ggml_backend_registry_count < GGML_MAX_BACKENDS_REG"); /* REG-2 */

    struct registry_entry * e = &registry[registry_count];
    /* names longer than the field are cut to REGISTRY_NAME_LEN - 1 characters */
    snprintf(e->name, sizeof(e->name), "%s", name);
    e->init_fn             = init_fn;
    e->default_buffer_type = default_buffer_type;
    e->user_data           = user_data;

    registry_count++;
}

size_t ggspec_backend_reg_get_count(void) {
    registry_init();
    return registry_count;
}

size_t ggspec_backend_reg_find_by_name(const char * name) {
    registry_init();
    for (size_t i = 0; i < registry_count; i++) {
        if (strcmp(registry[i].name, name) == 0) {
            return i;
        }
    }
    return SIZE_MAX;
}

ggspec_backend_t ggspec_backend_reg_init_backend_from_str(const char * backend_str) {
    registry_init();

    /* "name" or "name:params"; the name is cut to REGISTRY_NAME_LEN - 1 characters */
    char name[REGISTRY_NAME_LEN];
    const char * params = strchr(backend_str, ':');
    if (params == NULL) {
        snprintf(name, sizeof(name), "%s", backend_str);
        params = "";
    } else {
        snprintf(name, sizeof(name), "%.*s", (int)(params - backend_str), backend_str);
        params++;
    }

    const size_t i = ggspec_backend_reg_find_by_name(name);
    if (i == SIZE_MAX) {
        fprintf(stderr, "%s: backend %s not found\n", __func__, name);
        return NULL;
    }
    return ggspec_backend_reg_init_backend(i, params);
}

const char * ggspec_backend_reg_get_name(size_t i) {
    registry_init();
    GGSPEC_ASSERT(i < registry_count, "i < ggml_backend_registry_count");
    return registry[i].name;
}

ggspec_backend_t ggspec_backend_reg_init_backend(size_t i, const char * params) {
    registry_init();
    GGSPEC_ASSERT(i < registry_count, "i < ggml_backend_registry_count");
    return registry[i].init_fn(params, registry[i].user_data);
}

ggspec_backend_buffer_type_t ggspec_backend_reg_get_default_buffer_type(size_t i) {
    registry_init();
    GGSPEC_ASSERT(i < registry_count, "i < ggml_backend_registry_count");
    return registry[i].default_buffer_type;
}

ggspec_backend_buffer_t ggspec_backend_reg_alloc_buffer(size_t i, size_t size) {
    registry_init();
    GGSPEC_ASSERT(i < registry_count, "i < ggml_backend_registry_count");
    return ggspec_backend_buft_alloc_buffer(registry[i].default_buffer_type, size);
}

/* Test hook (not part of the ggml API): forget every entry, as in a fresh process, so that the
   conformance suite can check the registry's rules example after example. */
void ggspec_backend_reg_reset_for_tests(void) {
    memset(registry, 0, sizeof(registry));
    registry_count = 0;
    registry_initialized = false;
}
