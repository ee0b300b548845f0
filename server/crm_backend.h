/* crm_backend.h -- the execution backend of a session: the real CUDA runtime
 * (libcudart.so.13) or the CPU-emulated device (libcudarem-emu.so), loaded with
 * dlopen and called through one table of CUDA runtime functions. */
#ifndef CRM_BACKEND_H
#define CRM_BACKEND_H

#include <stddef.h>
#include "crm_server_gen.h" /* the headers of every remoted library */

enum crm_backend_kind { CRM_BACKEND_CUDA, CRM_BACKEND_EMU };

/* Every library function the server calls: generated (server=auto rows) + manual.
 * Functions of libraries other than the CUDA runtime are NULL when the library
 * cannot be loaded; handlers then answer "not supported". */
typedef struct crm_rt_table {
#define CRM_RT_FN(lib, name) __typeof__(name) *name;
#include "crm_rt_fns_gen.h"
#include "server/crm_rt_manual.def"
#include "server/crm_rt_kernels.def"
#include "server/crm_rt_blas.def"
#include "server/crm_rt_dnn.def"
#include "server/crm_rt_lt.def"
#include "server/crm_rt_vmm.def"
#include "server/crm_rt_graph.def"
#undef CRM_RT_FN
} crm_rt_table;

extern crm_rt_table crm_rt;

/* Loads the backend into this process; 0, or -1 with a reason in err. */
int crm_backend_load(enum crm_backend_kind kind, char *err, size_t errlen);
/* Kind of the loaded backend. */
enum crm_backend_kind crm_backend_kind(void);
/* "cuda" or "emu". */
const char *crm_backend_name(enum crm_backend_kind kind);
/* Whether a real GPU is usable, asked in a short-lived child process so that this
 * process never initialises CUDA before forking sessions. Fills why when not. */
int crm_backend_probe_cuda(int gpu, char *why, size_t whylen);
/* Device memory is addressable as host memory in this process (emulated device). */
int crm_backend_host_addressable(void);

#endif
