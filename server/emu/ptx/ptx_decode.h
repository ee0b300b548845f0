/* ptx_decode.h -- a dotted PTX opcode into an instruction's fields. Internal to
 * server/emu/ptx/. */
#ifndef PTX_DECODE_H
#define PTX_DECODE_H

#include "ptx_ir.h"

/* Fills in->op, type, type2 (cvt's source), space, vec, sub and mods from opcode
 * (`ld.global.v2.f32`). Returns 0, or -1 when the opcode or one of its suffixes is
 * one the engine does not execute. */
int ptx_decode_opcode(const char *opcode, ptx_insn *in);

#endif
