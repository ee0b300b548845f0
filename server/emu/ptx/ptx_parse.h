/* ptx_parse.h -- PTX text into a prepared module (ptx_ir.h). Internal to
 * server/emu/ptx/. */
#ifndef PTX_PARSE_H
#define PTX_PARSE_H

#include "ptx_ir.h"

/* Parses the module; 0 and *out, or -1 with the reason (and its line) in err. An
 * instruction the engine does not execute does not fail the parse: its function's
 * `unsupported` names it. */
int ptx_parse(const char *text, size_t len, ptx_module **out, char *err, size_t errlen);
void ptx_module_free(ptx_module *m);
/* The kernel (.entry) `name`, or NULL. */
const ptx_func *ptx_module_func(const ptx_module *m, const char *name);

#endif
