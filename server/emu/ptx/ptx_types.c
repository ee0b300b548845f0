/* ptx_types.c -- sizes and kinds of PTX value types. */
#include "ptx_ir.h"

/* In enum ptx_type's order: none pred b8 b16 b32 b64 u8 u16 u32 u64 s8 s16 s32 s64
 * f16 f16x2 bf16 f32 f64. */
const uint8_t ptx_type_sizes[PTX_T_F64 + 1] = {0, 1, 1, 2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 2, 4, 8};

#define F PTX__TK_FLOAT
#define S PTX__TK_SIGNED
const uint8_t ptx_type_kinds[PTX_T_F64 + 1] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, S, S, S, S, F, F, F, F, F};
#undef F
#undef S

const char *ptx_type_name(enum ptx_type t)
{
    static const char *const names[] = {"none", "pred", "b8", "b16", "b32", "b64", "u8", "u16", "u32", "u64",
                                        "s8", "s16", "s32", "s64", "f16", "f16x2", "bf16", "f32", "f64"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}
