/* crm_drv.h -- what the driver-layer files of the shim (interpose/crm_drv_*.c)
 * share: the CUresult of a runtime-layer result, contexts, and the entry points the
 * export tables and cuGetProcAddress hand out.
 *
 * The driver layer (libcuda.so.1 ABI) stands on the same client objects as the
 * runtime layer: a CUstream is a cudaStream_t, a CUdeviceptr a device pointer of
 * the same session, a CUfunction or CUkernel a crm_kfunc of client/crm_modules.h,
 * and a device's primary context is the context the runtime layer uses. A driver
 * call that the runtime layer already implements is one function call into it. */
#ifndef CRM_DRV_H
#define CRM_DRV_H

#include <cuda.h>
#include <cuda_runtime_api.h>
#include "client/crm_handles.h"

/* The driver's code for a runtime-layer result (they share most values). */
CUresult crm_drv_err(cudaError_t err);

/* Calls a runtime-layer function for a driver call and gives its result as a
 * CUresult, leaving the runtime's last error as it was: driver calls never show in
 * cudaGetLastError. */
#define CRM_DRV_RT(call)                                   \
    __extension__({                                        \
        cudaError_t crm__saved = crm_peek_error();         \
        cudaError_t crm__got = (call);                     \
        crm_put_error(crm__saved);                         \
        crm_drv_err(crm__got);                             \
    })

/* Returns runtime call `call` as a driver call, made once the thread has a context
 * (CUDA_ERROR_INVALID_CONTEXT without one): its error becomes the driver's, the
 * runtime's last error stays as it was. */
#define CRM_DRV_IN_CTX(call)                                           \
    do {                                                               \
        CUresult crm__ctx_rc = crm_drv_need_ctx();                     \
        return crm__ctx_rc != CUDA_SUCCESS ? crm__ctx_rc : CRM_DRV_RT(call); \
    } while (0)

/* CUDA_ERROR_NOT_INITIALIZED until cuInit succeeded, else CUDA_SUCCESS. */
CUresult crm_drv_check_init(void);

/* Opens the session if needed and checks `dev`; CUDA_ERROR_INVALID_DEVICE when
 * the session has no such device. */
CUresult crm_drv_check_device(CUdevice dev);

/* ---- contexts (interpose/crm_drv_ctx.c) ------------------------------------------ */

/* The calling thread's current context, or NULL. */
CUcontext crm_drv_ctx_current(void);
/* The primary context of dev (not retained), or NULL for a bad device. */
CUcontext crm_drv_primary(CUdevice dev);
/* 1 when ctx is a live context of this process. */
int crm_drv_ctx_valid(CUcontext ctx);
/* Device of a live context. */
CUdevice crm_drv_ctx_device(CUcontext ctx);
/* CUDA_SUCCESS when the thread has a current context (its device is then the
 * thread's device for every call), else CUDA_ERROR_INVALID_CONTEXT. */
CUresult crm_drv_need_ctx(void);

/* The runtime layer's binding to the driver, as NVIDIA's runtime makes it: the
 * first runtime call of a thread that needs a context makes the primary context of
 * the thread's device current (retained once per device) and counts as cuInit;
 * cudaSetDevice makes that device's primary context current. */
void crm_drv_runtime_bind(void);
void crm_drv_runtime_set_device(int device);
/* Marks the driver initialised (cuInit, or the runtime's first call). */
void crm_drv_mark_init(void);

/* Context-local storage (the runtime's per-context state; export table
 * C693336E-...): put, get and delete a value under a key. */
typedef void (*crm_drv_cls_dtor)(CUcontext ctx, void *key, void *value);
CUresult crm_drv_cls_put(CUcontext ctx, void *key, void *value, crm_drv_cls_dtor dtor);
CUresult crm_drv_cls_get(void **value, CUcontext ctx, void *key);
CUresult crm_drv_cls_delete(CUcontext ctx, void *key);

/* A device allocation of the thread's device, as cudaMalloc makes it but without
 * its check against a capture under way: for allocations that are stream-ordered
 * or a graph's own (interpose/crm_rt_memory.c). */
cudaError_t crm_device_alloc(void **ptr, size_t size);

/* Per-thread default stream twins, for the runtime's _ptsz calls. */
CUresult cuLaunchHostFunc_ptsz(CUstream s, CUhostFn fn, void *userData);
CUresult cuStreamAddCallback_ptsz(CUstream s, CUstreamCallback cb, void *userData, unsigned int flags);

/* ---- modules (interpose/crm_drv_module.c) ---------------------------------------- */

/* Loads device code (a fatbinary, an nvcc fatbinary wrapper, a cubin or PTX text)
 * as a module; the bytes are copied unless `in_image` says they live as long as
 * the process (a program's own registered fatbinaries). Nothing crosses the wire
 * until one of its kernels is used. A library (context-independent) needs no
 * current context; a module does. */
CUresult crm_drv_module_load(CUmodule *out, const void *image, int in_image, int library);

/* ---- cuGetProcAddress (interpose/crm_drv_proc.c) --------------------------------- */

/* The entry point of driver function `name` as CUDA version `version` defines it
 * (per-thread default stream variant when flags asks for it); NULL when unknown or
 * newer than `version`, and *status says which. */
void *crm_drv_proc(const char *name, int version, cuuint64_t flags, CUdriverProcAddressQueryResult *status);

#endif
