/* crm_h_blas.c -- cuBLAS handles of a session (created under the client's ids,
 * destroyed with it), workspace setting, and the checking helpers every cuBLAS
 * handler uses before the backend touches device memory. */
#include <stdlib.h>
#include <string.h>
#include "server/crm_h_blas.h"

/* --- helpers ------------------------------------------------------------------------ */

cublasStatus_t crm_hblas_begin(crm_session *s, uint64_t id, int pmode, int have_fn, cublasHandle_t *h)
{
    void *v;
    if (!have_fn || crm_rt.cublasSetPointerMode_v2 == NULL)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if (crm_session_handle(s, CRM_HANDLE_cublasHandle_t, id, &v) != 0)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    *h = v;
    if (pmode == CRM_HBLAS_NO_MODE)
        return CUBLAS_STATUS_SUCCESS;
    if (pmode != CUBLAS_POINTER_MODE_HOST && pmode != CUBLAS_POINTER_MODE_DEVICE)
        return CUBLAS_STATUS_INVALID_VALUE;
    return crm_rt.cublasSetPointerMode_v2(*h, (cublasPointerMode_t)pmode);
}

cublasStatus_t crm_hblas_scalar_in(crm_session *s, int pmode, uint64_t word, size_t size, crm_hblas_scalar *out)
{
    if (pmode != CUBLAS_POINTER_MODE_DEVICE && size != 2 && size != 4 && size != 8) {
        memset(out, 0, sizeof *out);
        return CUBLAS_STATUS_NOT_SUPPORTED; /* a word carries halves, floats and doubles only */
    }
    return crm_hblas_scalar_bytes(s, pmode, &word, size, out);
}

cublasStatus_t crm_hblas_scalar_bytes(crm_session *s, int pmode, const void *bytes, size_t size,
                                      crm_hblas_scalar *out)
{
    memset(out, 0, sizeof *out);
    if (size == 0 || size > sizeof out->v.raw)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if (pmode == CUBLAS_POINTER_MODE_DEVICE) {
        memcpy(&out->dev, bytes, sizeof out->dev);
        return crm_hblas_region(s, out->dev, size);
    }
    out->host = 1;
    memcpy(out->v.raw, bytes, size);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t crm_hblas_result_in(crm_session *s, int pmode, uint64_t dev, size_t size, crm_hblas_scalar *out)
{
    memset(out, 0, sizeof *out);
    if (size == 0 || size > sizeof out->v.raw)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if (pmode == CUBLAS_POINTER_MODE_DEVICE) {
        out->dev = dev;
        return crm_hblas_region(s, dev, size);
    }
    out->host = 1;
    return CUBLAS_STATUS_SUCCESS;
}

void crm_hblas_result_out(const crm_hblas_scalar *sc, size_t size, void *bytes, size_t cap)
{
    memset(bytes, 0, cap);
    if (sc->host && size <= cap && size <= sizeof sc->v.raw)
        memcpy(bytes, sc->v.raw, size);
}

void *crm_hblas_ptr(crm_hblas_scalar *sc)
{
    return sc->host ? (void *)sc->v.raw : (void *)(uintptr_t)sc->dev;
}

int crm_hblas_is_zero(const crm_hblas_scalar *sc, size_t size, size_t part)
{
    if (!sc->host || size > sizeof sc->v.raw)
        return 0;
    for (size_t at = 0; at + part <= size; at += part) {
        double v;
        float f;
        if (part == sizeof f) {
            memcpy(&f, sc->v.raw + at, sizeof f);
            v = f;
        } else {
            memcpy(&v, sc->v.raw + at, sizeof v);
        }
        if (v != 0.0)
            return 0;
    }
    return 1;
}

cublasStatus_t crm_hblas_region(crm_session *s, uint64_t addr, uint64_t bytes)
{
    if (bytes == 0)
        return CUBLAS_STATUS_SUCCESS;
    return crm_session_check_region(s, addr, bytes, bytes, 1) == cudaSuccess ? CUBLAS_STATUS_SUCCESS
                                                                              : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t crm_hblas_regions(crm_session *s, const uint64_t addr[], const uint64_t bytes[], int n)
{
    for (int i = 0; i < n; i++)
        if (crm_hblas_region(s, addr[i], bytes[i]) != CUBLAS_STATUS_SUCCESS)
            return CUBLAS_STATUS_INVALID_VALUE;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t crm_hblas_strided(crm_session *s, uint64_t addr, uint64_t one, int64_t stride, int batch, size_t elem)
{
    int64_t first;
    uint64_t bytes;
    if (crm_blas_strided_span(one, stride, batch, elem, &first, &bytes) != 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    uint64_t back = (uint64_t)0 - (uint64_t)first; /* first <= 0 */
    if (bytes > 0 && back > addr)
        return CUBLAS_STATUS_INVALID_VALUE;
    return crm_hblas_region(s, addr - back, bytes);
}

/* Reads the `batch` pointers at device address arr into dst (host memory). */
static cublasStatus_t crm__read_ptrs(uint64_t arr, int batch, cudaStream_t stream, uint64_t *dst)
{
    size_t bytes = (size_t)batch * sizeof(uint64_t);
    if (crm_rt.cudaMemcpy2DAsync(dst, bytes, (const void *)(uintptr_t)arr, bytes, bytes, 1, cudaMemcpyDeviceToHost,
                                 stream) != cudaSuccess ||
        crm_rt.cudaStreamSynchronize(stream) != cudaSuccess) {
        crm_rt.cudaGetLastError();
        return CUBLAS_STATUS_EXECUTION_FAILED;
    }
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t crm_hblas_ptr_arrays(crm_session *s, cublasHandle_t h, int n, const uint64_t arr[],
                                    const uint64_t one[], int batch, crm_hblas_arrays *out)
{
    uint64_t *host;
    size_t each = (size_t)batch * sizeof(uint64_t);
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    memset(out, 0, sizeof *out);
    if (n < 1 || n > 3 || batch < 1)
        return CUBLAS_STATUS_INVALID_VALUE;
    for (int i = 0; i < n; i++)
        if (crm_hblas_region(s, arr[i], each) != CUBLAS_STATUS_SUCCESS)
            return CUBLAS_STATUS_INVALID_VALUE;
    if ((st = crm_rt.cublasGetStream_v2(h, &out->stream)) != CUBLAS_STATUS_SUCCESS)
        return st;
    if ((host = malloc((size_t)n * each)) == NULL)
        return CUBLAS_STATUS_ALLOC_FAILED;
    for (int i = 0; i < n && st == CUBLAS_STATUS_SUCCESS; i++) {
        st = crm__read_ptrs(arr[i], batch, out->stream, host + (size_t)i * (size_t)batch);
        for (int b = 0; b < batch && st == CUBLAS_STATUS_SUCCESS; b++)
            st = crm_hblas_region(s, host[(size_t)i * (size_t)batch + (size_t)b], one[i]);
    }
    if (st == CUBLAS_STATUS_SUCCESS && crm_rt.cudaMalloc(&out->dev, (size_t)n * each) != cudaSuccess) {
        crm_rt.cudaGetLastError();
        out->dev = NULL;
        st = CUBLAS_STATUS_ALLOC_FAILED;
    }
    if (st == CUBLAS_STATUS_SUCCESS &&
        crm_rt.cudaMemcpy2DAsync(out->dev, (size_t)n * each, host, (size_t)n * each, (size_t)n * each, 1,
                                 cudaMemcpyHostToDevice, out->stream) != cudaSuccess) {
        crm_rt.cudaGetLastError();
        st = CUBLAS_STATUS_EXECUTION_FAILED;
    }
    free(host); /* a pageable source is consumed before the copy call returns */
    for (int i = 0; i < n && out->dev != NULL; i++)
        out->out[i] = (void **)((char *)out->dev + (size_t)i * each);
    if (st != CUBLAS_STATUS_SUCCESS)
        crm_hblas_ptr_arrays_free(out);
    return st;
}

void crm_hblas_ptr_arrays_free(crm_hblas_arrays *a)
{
    if (a->dev == NULL)
        return;
    crm_rt.cudaStreamSynchronize(a->stream); /* the backend may still read them */
    crm_rt.cudaFree(a->dev);
    crm_rt.cudaGetLastError();
    a->dev = NULL;
}

/* --- handles -------------------------------------------------------------------------- */

static void crm__destroy(void *handle)
{
    if (crm_rt.cublasDestroy_v2 != NULL)
        crm_rt.cublasDestroy_v2(handle);
}

/* The client chose the id; a taken id (or 0) is refused, never replaced. */
cublasStatus_t crm_srv_cublasCreate_v2(crm_session *s, uint64_t id)
{
    cublasHandle_t h;
    void *old;
    if (crm_rt.cublasCreate_v2 == NULL || crm_rt.cublasDestroy_v2 == NULL)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if (id == 0 || crm_idmap_get(&s->handles, id, &old) == 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (crm_session_room(s, CRM_LIMIT_HANDLES, 1) != 0)
        return CUBLAS_STATUS_ALLOC_FAILED;
    cublasStatus_t st = crm_rt.cublasCreate_v2(&h);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    if (crm_session_handle_add(s, CRM_HANDLE_cublasHandle_t, id, h, crm__destroy) != 0) {
        crm_rt.cublasDestroy_v2(h);
        return CUBLAS_STATUS_ALLOC_FAILED;
    }
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t crm_srv_cublasDestroy_v2(crm_session *s, uint64_t handle)
{
    void *h;
    if (crm_rt.cublasDestroy_v2 == NULL)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if (crm_session_handle_del(s, CRM_HANDLE_cublasHandle_t, handle, &h) != 0)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    return crm_rt.cublasDestroy_v2(h);
}

/* The workspace must be the client's device memory. */
cublasStatus_t crm_srv_cublasSetWorkspace_v2(crm_session *s, uint64_t handle, uint64_t workspace,
                                             uint64_t workspaceSizeInBytes)
{
    cublasHandle_t h;
    cublasStatus_t st =
        crm_hblas_begin(s, handle, CRM_HBLAS_NO_MODE, crm_rt.cublasSetWorkspace_v2 != NULL, &h);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = crm_hblas_region(s, workspace, workspaceSizeInBytes);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = crm_rt.cublasSetWorkspace_v2(h, (void *)(uintptr_t)workspace, (size_t)workspaceSizeInBytes);
    return st;
}
