/* crm_fallback.h -- calls that cudarem does not remote at API level are handed to
 * NVIDIA's own library when the client has it: the runtime (libcudart.so.13),
 * cuBLAS (libcublas.so.13), and the cuDNN and cuBLASLt calls that take no
 * descriptor of the shim's own (cuDNN's backend API: libcudnn.so.9;
 * libcublasLt.so.13). That library then runs on the shim's driver layer, so
 * whatever the driver layer serves works (cudaMemcpy3D becomes cuMemcpy3D, say),
 * and its kernels are launched through it. A cuBLAS, cuDNN or cuBLASLt call gets, in place of
 * the shim's handle, the handle NVIDIA's library made for it, with the same stream
 * (and, for cuBLAS, pointer mode, math mode and workspace). Without the library, or with
 * CUDAREM_FALLBACK=off, such a call answers its library's "not supported" status
 * and logs its name once.
 *
 * Each such export is an assembler trampoline (generated from the libraries' name
 * lists by tools/gen_fallback.py): it jumps to its cached target, and asks
 * crm_fallback_resolve for one on its first call (a handle-taking cuBLAS call asks
 * crm_fallback_translate on every call), with every argument register preserved, so
 * the real function receives the arguments untouched. x86-64 System V only. */
#ifndef CRM_FALLBACK_H
#define CRM_FALLBACK_H

#include <stdint.h>

#define CRM_FALLBACK_MAX 2048
#define CRM_HIDDEN __attribute__((visibility("hidden")))

enum crm_fallback_lib {
    CRM_FALLBACK_CUDART = 0,
    CRM_FALLBACK_CUBLAS = 1,
    CRM_FALLBACK_CUDNN = 2,
    CRM_FALLBACK_CUBLASLT = 3,
    CRM_FALLBACK_NLIBS
};
/* The library of a name that is never handed over (a cuDNN call taking the shim's
 * own descriptors): it answers "not supported". */
#define CRM_FALLBACK_NEVER 255

/* Per forwardable function: its name, its library, its target once resolved, and
 * the function that answers "not supported" for it (generated tables). */
extern CRM_HIDDEN const char *const crm_fallback_names[];
extern CRM_HIDDEN const unsigned char crm_fallback_lib_of[];
extern CRM_HIDDEN void *crm_fallback_slots[];
extern CRM_HIDDEN void *const crm_fallback_unsupported[];
extern CRM_HIDDEN const unsigned crm_fallback_count;
/* 1 for the functions NVIDIA's library answers: their trampolines count calls. */
extern CRM_HIDDEN unsigned char crm_fallback_is_nvidia[CRM_FALLBACK_MAX];

/* Calls answered by NVIDIA's libraries so far (CUDAREM_STATS reports it). */
extern CRM_HIDDEN uint64_t crm_fallback_calls;

/* The target of function idx: NVIDIA's, when its library can be loaded and exports
 * the name, else the "not supported" answer. Cached in crm_fallback_slots. */
CRM_HIDDEN void *crm_fallback_resolve(unsigned idx);

/* What a handle-translating trampoline jumps to, and its first argument. */
typedef struct crm_fallback_call {
    void *fn;
    void *arg0;
} crm_fallback_call;
CRM_HIDDEN crm_fallback_call crm_fallback_translate(unsigned idx, void *arg0);

/* Path of NVIDIA's library `lib` that answers, or NULL when none (loads it). */
const char *crm_fallback_library(enum crm_fallback_lib lib);
/* 1 when NVIDIA's library `lib` has been looked for and loaded (looks for nothing). */
int crm_fallback_loaded(enum crm_fallback_lib lib);
/* A function of NVIDIA's library `lib`, or NULL. */
void *crm_fallback_symbol(enum crm_fallback_lib lib, const char *name);

#endif
