/* crm_h_blas.h -- helpers shared by the cuBLAS handlers (server/crm_h_blas*.c): the
 * backend handle of a client id with the call's pointer mode set, scalars by
 * pointer mode, and the checks of device ranges (plain, strided, pointer arrays)
 * every handler runs before the backend touches memory. */
#ifndef CRM_H_BLAS_H
#define CRM_H_BLAS_H

#include <stdint.h>
#include "crm_server_gen.h"
#include "protocol/cublas_shape.h"
#include "server/crm_backend.h"
#include "server/crm_session.h"

#define CRM_HBLAS_NO_MODE (-1) /* the call takes no scalars: leave the pointer mode */

/* A scalar argument or result: its value (host pointer mode) or device address. */
typedef struct crm_hblas_scalar {
    union {
        double d;
        float f;
        int i;
        unsigned char raw[40];  /* up to five doubles (rotm's parameters) */
    } v;            /* host pointer mode: the value */
    uint64_t dev;   /* device pointer mode: the checked device address */
    int host;       /* 1 in host pointer mode */
} crm_hblas_scalar;

/* Starts a call: NOT_SUPPORTED when the backend lacks the function (!have_fn),
 * NOT_INITIALIZED for an unknown handle id, INVALID_VALUE for a bad pointer mode;
 * else SUCCESS with *h the backend handle in pointer mode `pmode` (unchanged for
 * CRM_HBLAS_NO_MODE). */
cublasStatus_t crm_hblas_begin(crm_session *s, uint64_t id, int pmode, int have_fn, cublasHandle_t *h);

/* Decodes scalar word `word` of `size` bytes: the value in host mode, a checked
 * device address in device mode. INVALID_VALUE when outside the session's memory,
 * NOT_SUPPORTED for a size the wire cannot carry by value. */
cublasStatus_t crm_hblas_scalar_in(crm_session *s, int pmode, uint64_t word, size_t size, crm_hblas_scalar *out);
/* The same for scalars of the generated rows (protocol/cublas_types.x): `size`
 * bytes of wire form at `bytes` (at most 40). */
cublasStatus_t crm_hblas_scalar_bytes(crm_session *s, int pmode, const void *bytes, size_t size,
                                      crm_hblas_scalar *out);
/* A result of `size` bytes: host mode, room for it (the word carries nothing);
 * device mode, the checked address `dev`. */
cublasStatus_t crm_hblas_result_in(crm_session *s, int pmode, uint64_t dev, size_t size, crm_hblas_scalar *out);
/* A host-mode result or updated scalar of `size` bytes into the cap bytes of the
 * reply at `bytes` (zero in device mode). */
void crm_hblas_result_out(const crm_hblas_scalar *sc, size_t size, void *bytes, size_t cap);
/* Where the backend reads (or writes) the scalar. */
void *crm_hblas_ptr(crm_hblas_scalar *sc);
/* 1 when a host-mode scalar of `size` bytes is zero: each of its parts (`part`
 * bytes: float or double, two of them for a complex scalar). Device mode: never
 * known, 0. */
int crm_hblas_is_zero(const crm_hblas_scalar *sc, size_t size, size_t part);

/* SUCCESS when [addr, addr + bytes) lies in one allocation of the session (bytes 0:
 * nothing touched), else INVALID_VALUE. */
cublasStatus_t crm_hblas_region(crm_session *s, uint64_t addr, uint64_t bytes);
/* Regions of each of n operands. */
cublasStatus_t crm_hblas_regions(crm_session *s, const uint64_t addr[], const uint64_t bytes[], int n);
/* A strided batch: `batch` items of `one` bytes, `stride` elements of `elem` bytes apart. */
cublasStatus_t crm_hblas_strided(crm_session *s, uint64_t addr, uint64_t one, int64_t stride, int batch, size_t elem);

/* Batched calls with device arrays of device pointers. crm_hblas_ptr_arrays reads
 * the `batch` (> 0) pointers of each of the n (1 to 3) arrays arr[i] (after the
 * work queued on the handle's stream), checks each pointer for one[i] bytes, and
 * copies the checked pointers into device memory the server owns (out[i]): the
 * backend then never reads an array the client could change between the check and
 * the use. Free with crm_hblas_ptr_arrays_free after the backend call (it waits for
 * the stream). */
typedef struct crm_hblas_arrays {
    void *dev;            /* server-owned device copy of the n arrays */
    cudaStream_t stream;  /* the handle's stream */
    void **out[3];        /* the arrays to pass to the backend */
} crm_hblas_arrays;

cublasStatus_t crm_hblas_ptr_arrays(crm_session *s, cublasHandle_t h, int n, const uint64_t arr[],
                                    const uint64_t one[], int batch, crm_hblas_arrays *out);
void crm_hblas_ptr_arrays_free(crm_hblas_arrays *a);

#endif
