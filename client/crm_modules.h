/* crm_modules.h -- the client's table of device code a program registered (one
 * module per fatbinary, its kernels by host stub, its __device__/__constant__
 * variables by host shadow), and their state in the current session: a module is
 * shipped (or found in the server's cache by digest) at its first use, a kernel
 * is named to the server at its first launch, a symbol's address is asked once per
 * device. Registration itself never touches the connection. Locked. */
#ifndef CRM_MODULES_H
#define CRM_MODULES_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>
#include "common/crm_fatbin.h"
#include "crm_api.h"

typedef struct crm_kmodule crm_kmodule;
typedef struct crm_kfunc crm_kfunc;
typedef struct crm_kvar crm_kvar;

/* A kernel ready to launch in this session. */
typedef struct crm_kready {
    uint64_t id;                   /* the function's wire id */
    uint32_t nparams;              /* its parameters */
    const crm_kparam *params;      /* offsets and sizes, in wire form */
    uint32_t param_bytes;          /* size of the parameter buffer */
} crm_kready;

/* Registers the fatbinary behind an nvcc __fatDeviceText wrapper; NULL when it is
 * not one (the module is then unusable, as with the real runtime). */
crm_kmodule *crm_modules_register(const void *wrapper);
/* Loads device code the driver API was given (a fatbinary, nvcc's wrapper of
 * one, a cubin or PTX text) as a module, copying it unless in_image says it lives
 * as long as the process. Nothing crosses the wire until it is used. NULL and *err
 * (cudaErrorInvalidKernelImage: not such an image) on failure. */
crm_kmodule *crm_modules_load(const void *image, int in_image, cudaError_t *err);
/* 1 when m is a live module of this process. */
int crm_modules_valid(const crm_kmodule *m);
/* Forgets a module, its kernels and variables (unloading it on the server when it
 * was loaded in this session). */
void crm_modules_unregister(crm_kmodule *m);
/* Records kernel deviceName of m, launched through host stub hostFun. */
void crm_modules_add_function(crm_kmodule *m, const void *hostFun, const char *deviceName);
/* Records variable deviceName of m (size bytes), named by its host shadow hostVar. */
void crm_modules_add_var(crm_kmodule *m, const void *hostVar, const char *deviceName, size_t size);

/* The kernel of a host stub or of a handle crm_modules_kernel_handle gave; NULL when unknown. */
crm_kfunc *crm_modules_func(const void *func);
/* The handle (cudaKernel_t) of a kernel; never contacts the server. */
cudaKernel_t crm_modules_kernel_handle(crm_kfunc *f);
/* Makes f launchable in this session (module shipped, function named). Returns
 * cudaSuccess and fills *out, or the error the load or lookup gave. */
cudaError_t crm_modules_prepare(crm_kfunc *f, crm_kready *out);

/* The variable whose host shadow is symbol, or NULL. */
crm_kvar *crm_modules_var(const void *symbol);
/* Registered size of a variable. */
size_t crm_modules_var_size(const crm_kvar *v);
/* Device address and size of v on the current device (registered with the
 * pointer table as device memory). */
cudaError_t crm_modules_var_resolve(crm_kvar *v, uint64_t *addr, size_t *size);

/* 1 when the server's device is the emulated one, whose PTX engine runs a module's
 * PTX where no CPU implementation of a kernel is given (opens the session). */
int crm_modules_server_runs_ptx(void);

/* ---- lookups by name (the driver API) --------------------------------------------- */

/* The kernel `name` of m (one handle per module and name), found in the module's
 * own contents without a round trip: cudaErrorSymbolNotFound when it has none. */
cudaError_t crm_modules_get_function(crm_kmodule *m, const char *name, crm_kfunc **out);
/* Device address and size of global `name` of m on the current device (loads the
 * module); cudaErrorSymbolNotFound when it has none. */
cudaError_t crm_modules_get_global(crm_kmodule *m, const char *name, uint64_t *addr, size_t *size);
/* The module, mangled name, and parameter i's offset and size of a kernel. */
crm_kmodule *crm_modules_func_module(const crm_kfunc *f);
const char *crm_modules_func_name(const crm_kfunc *f);
cudaError_t crm_modules_func_param(crm_kfunc *f, size_t index, size_t *offset, size_t *size);
/* 1 when f has been made launchable in this session. */
int crm_modules_func_loaded(const crm_kfunc *f);
/* The kernel names of m (*names malloc'd, pointing into the module; NULL skips). */
cudaError_t crm_modules_kernel_names(crm_kmodule *m, const char ***names, size_t *count);

#endif
