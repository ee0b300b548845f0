/* crm_blas.h -- internal interface of the shim's cuBLAS (interpose/crm_blas*.c): the
 * client's table of cuBLAS handles and their settings, scalars by pointer mode,
 * and sending calls with cuBLAS statuses.
 *
 * A cublasHandle_t given to the program is the wire id chosen by the client
 * (crm_handle_new_id), so it is never a valid host pointer. The settings a Get*
 * call reads (pointer mode, stream, math mode, workspace) live here and are
 * answered locally; a Set* call that changes what the server must know is sent
 * asynchronously, and only when the value changes.
 */
#ifndef CRM_BLAS_H
#define CRM_BLAS_H

#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <cublas_v2.h>
#include "crm_api.h"
#include "common/crm_idmap.h"
#include "protocol/cublas_shape.h"

/* What the client keeps of a handle. */
typedef struct crm_blas_state {
    uint64_t id;                 /* wire id, also the handle's value */
    cublasPointerMode_t pmode;   /* where scalars and results live */
    int math;                    /* last cublasMath_t set */
    cudaStream_t stream;         /* last stream set (0: default stream) */
    void *workspace;             /* last workspace set, NULL: library's own */
    size_t workspace_size;
    int atomics;                 /* last cublasAtomicsMode_t set */
    int sm_target;               /* last SM count target set (0: all) */
    void *real;                  /* NVIDIA's handle for calls it answers, or NULL */
    struct crm_blas_applied {    /* the settings last given to it */
        cublasPointerMode_t pmode;
        int math;
        cudaStream_t stream;
        void *workspace;
        size_t workspace_size;
        int atomics;
        int sm_target;
    } applied;
} crm_blas_state;

/* Copies the state of handle h into *out: SUCCESS, or NOT_INITIALIZED for a NULL
 * or unknown handle. */
/* Makes a library handle on the server, synchronously: sends call (a create whose
 * reply status is the int at byte status_at of the reply) and, when the server
 * succeeds, files state under id in handles (guarded by lock). A server that cannot
 * be reached is NOT_INITIALIZED. cuBLAS and cuBLASLt make their handles so. */
cublasStatus_t crm_blas_create_remote(crm_call *call, size_t status_at, pthread_mutex_t *lock,
                                      crm_idmap *handles, uint64_t id, void *state);
cublasStatus_t crm_blas_get(cublasHandle_t h, crm_blas_state *out);
/* Runs fn on the state of h under the handles' lock; fn returns the status.
 * NOT_INITIALIZED for an unknown handle. */
cublasStatus_t crm_blas_with(cublasHandle_t h, cublasStatus_t (*fn)(crm_blas_state *, const void *), const void *arg);

/* Sends a call that returns nothing to the host (crm_conn_async): SUCCESS, or
 * INTERNAL_ERROR when the server cannot take it. Failures of the call itself on
 * the server are reported later, as a GPU reports asynchronous errors. */
cublasStatus_t crm_blas_async(crm_call *call);
/* crm_blas_async of a compute call on wire stream `stream` (the handle's): while
 * that stream is capturing, it becomes a node of the capture's graph. */
cublasStatus_t crm_blas_work(crm_call *call, uint64_t stream);
/* CUBLAS_STATUS_NOT_SUPPORTED (logged once, the capture invalidated) when wire stream
 * `stream` is capturing: a call whose result comes back to the host waits for its
 * stream, which a capture forbids; else CUBLAS_STATUS_SUCCESS. */
cublasStatus_t crm_blas_refuse_in_capture(uint64_t stream);
/* Sends a call whose reply the caller reads (crm_conn_exec, waiting); the same
 * status as crm_conn_exec. */
cudaError_t crm_blas_exec(crm_call *call, crm_reply *reply);

/* Logs that the call numbered api is sent, when cuBLAS's logger is on
 * (crm_blas_log.c). */
void crm_blas_log_call(int api);

/* The scalar word of the scalar at p (`size` bytes): its bytes in host pointer
 * mode, its address in device mode. INVALID_VALUE for NULL or for a device
 * address in host mode; NOT_SUPPORTED for a host value wider than 8 bytes. */
cublasStatus_t crm_blas_word(int pmode, const void *p, size_t size, uint64_t *word);

/* The wire form (protocol/cublas_types.x) of the `size` bytes of scalars at p by
 * pointer mode, into the cap bytes at out: INVALID_VALUE for NULL, for a device
 * address in host mode, or for more than cap bytes. */
cublasStatus_t crm_blas_scalar(int pmode, const void *p, size_t size, void *out, size_t cap);
/* Stores a host-mode result or updated scalar of `size` bytes that came back as
 * the cap bytes at value, at p: INVALID_VALUE when p is device memory. */
cublasStatus_t crm_blas_result(void *p, size_t size, const void *value, size_t cap);


#define CRM_BLAS_DEV(p) ((uint64_t)(uintptr_t)(p))

/* 1 when each of the n values fits in int: a _64 call narrowing to its 32-bit
 * form (the GEMM family travels in 32 bits) answers NOT_SUPPORTED otherwise. */
static inline int crm_blas_fit_int(int n, const int64_t v[])
{
    for (int i = 0; i < n; i++)
        if (v[i] < INT_MIN || v[i] > INT_MAX)
            return 0;
    return 1;
}
#define CRM_BLAS_FIT_INT(...) \
    crm_blas_fit_int((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__})

#endif
