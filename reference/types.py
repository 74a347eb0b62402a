"""CORE-1: element types, their traits, and the op codes (ggml's enum values)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .checked import checked
from .clauses import implements

MAX_DIMS = 4
MAX_SRC = 10
MAX_NAME = 64
MAX_OP_PARAMS = 64
DEFAULT_N_THREADS = 4


class GGMLType(enum.IntEnum):
    """`enum ggml_type` (values as in rc.8's ggml.h)."""

    F32 = 0
    F16 = 1
    Q4_0 = 2
    Q4_1 = 3
    Q5_0 = 6
    Q5_1 = 7
    Q8_0 = 8
    Q8_1 = 9
    Q2_K = 10
    Q3_K = 11
    Q4_K = 12
    Q5_K = 13
    Q6_K = 14
    Q8_K = 15
    IQ2_XXS = 16
    IQ2_XS = 17
    I8 = 18
    I16 = 19
    I32 = 20


class Op(enum.IntEnum):
    """`enum ggml_op` (values as in rc.8's ggml.h)."""

    NONE = 0
    DUP = 1
    ADD = 2
    ADD1 = 3
    ACC = 4
    SUB = 5
    MUL = 6
    DIV = 7
    SQR = 8
    SQRT = 9
    LOG = 10
    SUM = 11
    SUM_ROWS = 12
    MEAN = 13
    ARGMAX = 14
    REPEAT = 15
    REPEAT_BACK = 16
    CONCAT = 17
    SILU_BACK = 18
    NORM = 19
    RMS_NORM = 20
    RMS_NORM_BACK = 21
    GROUP_NORM = 22
    MUL_MAT = 23
    MUL_MAT_ID = 24
    OUT_PROD = 25
    SCALE = 26
    SET = 27
    CPY = 28
    CONT = 29
    RESHAPE = 30
    VIEW = 31
    PERMUTE = 32
    TRANSPOSE = 33
    GET_ROWS = 34
    GET_ROWS_BACK = 35
    DIAG = 36
    DIAG_MASK_INF = 37
    DIAG_MASK_ZERO = 38
    SOFT_MAX = 39
    SOFT_MAX_BACK = 40
    ROPE = 41
    ROPE_BACK = 42
    ALIBI = 43
    CLAMP = 44
    CONV_TRANSPOSE_1D = 45
    IM2COL = 46
    CONV_TRANSPOSE_2D = 47
    POOL_1D = 48
    POOL_2D = 49
    UPSCALE = 50
    PAD = 51
    ARGSORT = 52
    LEAKY_RELU = 53
    FLASH_ATTN = 54
    FLASH_FF = 55
    FLASH_ATTN_BACK = 56
    WIN_PART = 57
    WIN_UNPART = 58
    GET_REL_POS = 59
    ADD_REL_POS = 60
    UNARY = 61
    MAP_UNARY = 62
    MAP_BINARY = 63
    MAP_CUSTOM1_F32 = 64
    MAP_CUSTOM2_F32 = 65
    MAP_CUSTOM3_F32 = 66
    MAP_CUSTOM1 = 67
    MAP_CUSTOM2 = 68
    MAP_CUSTOM3 = 69
    CROSS_ENTROPY_LOSS = 70
    CROSS_ENTROPY_LOSS_BACK = 71
    COUNT = 72


@dataclass(frozen=True)
class TypeTraits:
    """One row of ggml's type_traits table. rc.8 leaves vec_dot_type unset (0, that is F32)
    for Q8_K and the integer types."""

    name: str
    blck_size: int
    type_size: int
    is_quantized: bool
    vec_dot_type: GGMLType


_TRAITS: dict[GGMLType, TypeTraits] = {
    GGMLType.F32: TypeTraits("f32", 1, 4, False, GGMLType.F32),
    GGMLType.F16: TypeTraits("f16", 1, 2, False, GGMLType.F16),
    GGMLType.Q4_0: TypeTraits("q4_0", 32, 18, True, GGMLType.Q8_0),
    GGMLType.Q8_0: TypeTraits("q8_0", 32, 34, True, GGMLType.Q8_0),
    GGMLType.Q8_K: TypeTraits("q8_K", 256, 292, True, GGMLType.F32),
    GGMLType.IQ2_XXS: TypeTraits("iq2_xxs", 256, 66, True, GGMLType.Q8_K),
    GGMLType.IQ2_XS: TypeTraits("iq2_xs", 256, 74, True, GGMLType.Q8_K),
    GGMLType.I8: TypeTraits("i8", 1, 1, False, GGMLType.F32),
    GGMLType.I16: TypeTraits("i16", 1, 2, False, GGMLType.F32),
    GGMLType.I32: TypeTraits("i32", 1, 4, False, GGMLType.F32),
}

#: the types the model gives traits to
MODELLED_TYPES: tuple[GGMLType, ...] = tuple(_TRAITS)


@implements("CORE-1")
@checked
def traits(t: GGMLType) -> TypeTraits:
    """CORE-1: the traits of type `t`."""
    return _traits(t)


def _traits(t: GGMLType) -> TypeTraits:
    """`traits(t)` for a `t` its caller's own check has let through already as an int (the
    model's hottest lookup, from the size functions: not checked a second time)."""
    found = _TRAITS.get(t)  # an IntEnum hashes and compares as its int
    if found is not None:
        return found
    try:
        return _TRAITS[GGMLType(t)]
    except (KeyError, ValueError):
        raise ValueError(f"type {t!r} is not modelled by ggspec (modelled: {[x.name for x in _TRAITS]})") from None


@checked
def blck_size(t: GGMLType) -> int:
    return _traits(t).blck_size


@checked
def type_size(t: GGMLType) -> int:
    return _traits(t).type_size


@checked
def row_size(t: GGMLType, ne0: int) -> int:
    """Bytes of a contiguous row of `ne0` elements."""
    tr = _traits(t)
    return tr.type_size * ne0 // tr.blck_size
