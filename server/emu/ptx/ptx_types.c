/* ptx_types.c -- sizes and kinds of PTX value types. */
#include "ptx_ir.h"

unsigned ptx_type_size(enum ptx_type t)
{
    switch (t) {
    case PTX_T_PRED: case PTX_T_B8: case PTX_T_U8: case PTX_T_S8: return 1;
    case PTX_T_B16: case PTX_T_U16: case PTX_T_S16: case PTX_T_F16: case PTX_T_BF16: return 2;
    case PTX_T_B32: case PTX_T_U32: case PTX_T_S32: case PTX_T_F32: case PTX_T_F16X2: return 4;
    case PTX_T_B64: case PTX_T_U64: case PTX_T_S64: case PTX_T_F64: return 8;
    default: return 0;
    }
}

int ptx_type_is_float(enum ptx_type t)
{
    return t == PTX_T_F16 || t == PTX_T_F16X2 || t == PTX_T_BF16 || t == PTX_T_F32 || t == PTX_T_F64;
}

int ptx_type_is_signed(enum ptx_type t)
{
    return t == PTX_T_S8 || t == PTX_T_S16 || t == PTX_T_S32 || t == PTX_T_S64;
}

const char *ptx_type_name(enum ptx_type t)
{
    static const char *const names[] = {"none", "pred", "b8", "b16", "b32", "b64", "u8", "u16", "u32", "u64",
                                        "s8", "s16", "s32", "s64", "f16", "f16x2", "bf16", "f32", "f64"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}
