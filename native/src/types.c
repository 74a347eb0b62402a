/*
 * types.c - element type traits: block size (elements per block), type size (bytes per
 * block), name, whether the type is quantized, and the type a matrix product converts its
 * second operand to (vec_dot_type).
 */
#include "ggspec.h"

struct type_traits {
    const char *     name;
    int              blck_size;
    size_t           type_size;
    bool             is_quantized;
    enum ggspec_type vec_dot_type;
};

/*
 * Block layouts, in bytes: q4_0 = f16 scale + 16 nibble bytes; q4_1 = two f16 + 16;
 * q5_0 = f16 + 4 high bits + 16; q5_1 = two f16 + 4 + 16; q8_0 = f16 + 32; q8_1 = two f32
 * + 32. The K and IQ2 families use 256-element super-blocks: q2_K 2*2+16+64, q3_K
 * 2+64+32+12, q4_K 2*2+12+128, q5_K 2*2+12+128+32, q6_K 2+16+128+64, q8_K 4+256+32,
 * iq2_xxs 2+64, iq2_xs 2+64+8.
 *
 * Types without an explicit vec_dot_type get 0 (F32), as in rc.8 (Q8_K and the integer types:
 * CORE-1).
 */
static const struct type_traits traits[GGSPEC_TYPE_COUNT] = {
    [GGSPEC_TYPE_F32]     = { "f32",     1,   4,   false, GGSPEC_TYPE_F32  },
    [GGSPEC_TYPE_F16]     = { "f16",     1,   2,   false, GGSPEC_TYPE_F16  },
    [GGSPEC_TYPE_Q4_0]    = { "q4_0",    32,  18,  true,  GGSPEC_TYPE_Q8_0 },
    [GGSPEC_TYPE_Q4_1]    = { "q4_1",    32,  20,  true,  GGSPEC_TYPE_Q8_1 },
    [4]                   = { "DEPRECATED", 0, 0,  false, GGSPEC_TYPE_COUNT },
    [5]                   = { "DEPRECATED", 0, 0,  false, GGSPEC_TYPE_COUNT },
    [GGSPEC_TYPE_Q5_0]    = { "q5_0",    32,  22,  true,  GGSPEC_TYPE_Q8_0 },
    [GGSPEC_TYPE_Q5_1]    = { "q5_1",    32,  24,  true,  GGSPEC_TYPE_Q8_1 },
    [GGSPEC_TYPE_Q8_0]    = { "q8_0",    32,  34,  true,  GGSPEC_TYPE_Q8_0 },
    [GGSPEC_TYPE_Q8_1]    = { "q8_1",    32,  40,  true,  GGSPEC_TYPE_Q8_1 },
    [GGSPEC_TYPE_Q2_K]    = { "q2_K",    256, 84,  true,  GGSPEC_TYPE_Q8_K },
    [GGSPEC_TYPE_Q3_K]    = { "q3_K",    256, 110, true,  GGSPEC_TYPE_Q8_K },
    [GGSPEC_TYPE_Q4_K]    = { "q4_K",    256, 144, true,  GGSPEC_TYPE_Q8_K },
    [GGSPEC_TYPE_Q5_K]    = { "q5_K",    256, 176, true,  GGSPEC_TYPE_Q8_K },
    [GGSPEC_TYPE_Q6_K]    = { "q6_K",    256, 210, true,  GGSPEC_TYPE_Q8_K },
    [GGSPEC_TYPE_Q8_K]    = { "q8_K",    256, 292, true,  GGSPEC_TYPE_F32 },
    [GGSPEC_TYPE_IQ2_XXS] = { "iq2_xxs", 256, 66,  true,  GGSPEC_TYPE_Q8_K },
    [GGSPEC_TYPE_IQ2_XS]  = { "iq2_xs",  256, 74,  true,  GGSPEC_TYPE_Q8_K },
    [GGSPEC_TYPE_I8]      = { "i8",      1,   1,   false, GGSPEC_TYPE_F32  },
    [GGSPEC_TYPE_I16]     = { "i16",     1,   2,   false, GGSPEC_TYPE_F32  },
    [GGSPEC_TYPE_I32]     = { "i32",     1,   4,   false, GGSPEC_TYPE_F32  },
};

int ggspec_blck_size(enum ggspec_type type) {
    return traits[type].blck_size;
}

size_t ggspec_type_size(enum ggspec_type type) {
    return traits[type].type_size;
}

/* bytes of ne consecutive elements (ne a multiple of the block size) */
size_t ggspec_row_size(enum ggspec_type type, int64_t ne) {
    return ggspec_type_size(type) * (size_t)ne / (size_t)ggspec_blck_size(type);
}

const char * ggspec_type_name(enum ggspec_type type) {
    return traits[type].name;
}

bool ggspec_is_quantized(enum ggspec_type type) {
    return traits[type].is_quantized;
}

enum ggspec_type ggspec_vec_dot_type(enum ggspec_type type) {
    return traits[type].vec_dot_type;
}
