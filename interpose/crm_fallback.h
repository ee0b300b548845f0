/* crm_fallback.h -- calls of the CUDA runtime that cudarem does not remote at API
 * level are handed to NVIDIA's own runtime when the client has it: that library
 * then runs on the shim's driver layer, so whatever the driver layer serves works
 * (cudaMemcpy3D becomes cuMemcpy3D, say). Without it, or with CUDAREM_FALLBACK=off,
 * such a call answers cudaErrorNotSupported and logs its name once.
 *
 * Each such export is an assembler trampoline (generated from interpose/cudart13.syms by
 * tools/gen_fallback.py): it jumps to its cached target, and on its first call asks
 * crm_fallback_resolve for one, with every argument register preserved, so the
 * real function receives the arguments untouched. x86-64 System V only. */
#ifndef CRM_FALLBACK_H
#define CRM_FALLBACK_H

#include <stdint.h>

#define CRM_FALLBACK_MAX 1024
#define CRM_HIDDEN __attribute__((visibility("hidden")))

/* Per forwardable function: its name, its target once resolved, and the function
 * that answers "not supported" for it (tables generated with the trampolines). */
extern CRM_HIDDEN const char *const crm_fallback_names[];
extern CRM_HIDDEN void *crm_fallback_slots[];
extern CRM_HIDDEN void *const crm_fallback_unsupported[];
extern CRM_HIDDEN const unsigned crm_fallback_count;
/* 1 for the functions NVIDIA's runtime answers: their trampolines count calls. */
extern CRM_HIDDEN unsigned char crm_fallback_is_nvidia[CRM_FALLBACK_MAX];

/* Calls answered by NVIDIA's runtime so far (CUDAREM_STATS reports it). */
extern CRM_HIDDEN uint64_t crm_fallback_calls;

/* The target of function idx: NVIDIA's, when its runtime can be loaded and exports
 * the name, else the "not supported" answer. Cached in crm_fallback_slots. */
CRM_HIDDEN void *crm_fallback_resolve(unsigned idx);

/* Path of NVIDIA's runtime that answers, or NULL when none (loads it if needed). */
const char *crm_fallback_library(void);

#endif
