/* crm_emu_blas.c -- emulated cuBLAS handles and their settings (stream, pointer
 * mode, math mode, workspace), the per-call frame shared by the emulated BLAS
 * functions, and the half / bfloat16 conversions they use. */
#include "server/emu/crm_emu_blas.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>
#include "server/emu/crm_emu_watchdog.h"

static crm__registry crm__blas_handles; /* live struct cublasContext * */

int crm__blas_live(cublasHandle_t h)
{
    return h != NULL && crm__registry_has(&crm__blas_handles, h);
}

cublasStatus_t crm__blas_begin(cublasHandle_t h)
{
    crm__emu_rdlock();
    if (!crm__blas_live(h)) {
        crm__emu_unlock();
        return CUBLAS_STATUS_NOT_INITIALIZED;
    }
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t crm__blas_end(cublasStatus_t st)
{
    crm__emu_unlock();
    return st;
}

cublasStatus_t crm__blas_dev(const void *p, uint64_t bytes)
{
    if (bytes == 0)
        return CUBLAS_STATUS_SUCCESS;
    if (p == NULL || bytes > SIZE_MAX || !crm__mem_range(p, (size_t)bytes, NULL))
        return CUBLAS_STATUS_INVALID_VALUE;
    return CUBLAS_STATUS_SUCCESS;
}

double crm__blas_deadline(void)
{
    return crm_emu_now() + crm_emu_watchdog_limit();
}

int crm__blas_overdue(double deadline)
{
    return crm_emu_now() > deadline;
}

cublasStatus_t crm__blas_strided(const void *X, uint64_t one, int64_t stride, int64_t batch, size_t elem)
{
    int64_t first;
    uint64_t bytes;
    if (crm_blas_strided_span(one, stride, batch, elem, &first, &bytes) != 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    uintptr_t lo = (uintptr_t)X - (uintptr_t)(uint64_t)(-first);
    if (bytes > 0 && lo > (uintptr_t)X)
        return CUBLAS_STATUS_INVALID_VALUE;
    return crm__blas_dev((const void *)lo, bytes);
}

cublasStatus_t crm__blas_get_scalar(cublasHandle_t h, const void *p, size_t size, void *out)
{
    if (p == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (h->pmode == CUBLAS_POINTER_MODE_DEVICE && crm__blas_dev(p, size) != CUBLAS_STATUS_SUCCESS)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(out, p, size);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t crm__blas_put_result(cublasHandle_t h, void *p, const void *value, size_t size)
{
    if (p == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (h->pmode == CUBLAS_POINTER_MODE_DEVICE && crm__blas_dev(p, size) != CUBLAS_STATUS_SUCCESS)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(p, value, size);
    return CUBLAS_STATUS_SUCCESS;
}

int crm__blas_is_zero(const void *v, size_t size, size_t part)
{
    for (size_t at = 0; at + part <= size; at += part) {
        double d = 0;
        float f = 0;
        if (part == sizeof f)
            memcpy(&f, (const char *)v + at, sizeof f);
        else
            memcpy(&d, (const char *)v + at, sizeof d);
        if ((part == sizeof f ? (double)f : d) != 0.0)
            return 0;
    }
    return 1;
}

void crm__blas_clear_vec(void *v, int64_t n, int64_t inc, size_t elem)
{
    size_t step = (size_t)(inc < 0 ? -inc : inc) * elem;
    for (int64_t i = 0; i < n; i++)
        memset((char *)v + (size_t)i * step, 0, elem);
}

void crm__blas_clear_mat(void *a, int64_t rows, int64_t cols, int64_t ld, size_t elem)
{
    for (int64_t j = 0; j < cols && rows > 0; j++)
        memset((char *)a + (size_t)j * (size_t)ld * elem, 0, (size_t)rows * elem);
}

int crm__blas_trans(int op)
{
    return op == CUBLAS_OP_N ? CblasNoTrans : CblasTrans;
}

/* --- handles --------------------------------------------------------------------- */

/* The CPU BLAS runs single-threaded: session processes are forked, and the emulated
 * device is for correctness, not speed. */
CRM_EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
    if (handle == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    struct cublasContext *h = calloc(1, sizeof *h);
    if (h == NULL)
        return CUBLAS_STATUS_ALLOC_FAILED;
    h->pmode = CUBLAS_POINTER_MODE_HOST;
    h->math = CUBLAS_DEFAULT_MATH;
    openblas_set_num_threads(1);
    crm__emu_wrlock();
    int rc = crm__registry_add(&crm__blas_handles, h);
    crm__emu_unlock();
    if (rc != 0) {
        free(h);
        return CUBLAS_STATUS_ALLOC_FAILED;
    }
    *handle = h;
    return CUBLAS_STATUS_SUCCESS;
}

CRM_EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
{
    crm__emu_wrlock();
    int rc = handle == NULL ? -1 : crm__registry_remove(&crm__blas_handles, handle);
    crm__emu_unlock();
    if (rc != 0)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    free(handle);
    return CUBLAS_STATUS_SUCCESS;
}

CRM_EXPORT cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int *version)
{
    cublasStatus_t st = crm__blas_begin(handle);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    if (version == NULL)
        return crm__blas_end(CUBLAS_STATUS_INVALID_VALUE);
    *version = CUBLAS_VERSION;
    return crm__blas_end(CUBLAS_STATUS_SUCCESS);
}

CRM_EXPORT cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t streamId)
{
    cublasStatus_t st = crm__blas_begin(handle);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    if (crm__stream_check(streamId, NULL) != cudaSuccess)
        return crm__blas_end(CUBLAS_STATUS_INVALID_VALUE);
    handle->stream = streamId;
    return crm__blas_end(CUBLAS_STATUS_SUCCESS);
}

CRM_EXPORT cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t *streamId)
{
    cublasStatus_t st = crm__blas_begin(handle);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    if (streamId == NULL)
        return crm__blas_end(CUBLAS_STATUS_INVALID_VALUE);
    *streamId = handle->stream;
    return crm__blas_end(CUBLAS_STATUS_SUCCESS);
}

CRM_EXPORT cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode)
{
    cublasStatus_t st = crm__blas_begin(handle);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    if (mode != CUBLAS_POINTER_MODE_HOST && mode != CUBLAS_POINTER_MODE_DEVICE)
        return crm__blas_end(CUBLAS_STATUS_INVALID_VALUE);
    handle->pmode = mode;
    return crm__blas_end(CUBLAS_STATUS_SUCCESS);
}

CRM_EXPORT cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t *mode)
{
    cublasStatus_t st = crm__blas_begin(handle);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    if (mode == NULL)
        return crm__blas_end(CUBLAS_STATUS_INVALID_VALUE);
    *mode = handle->pmode;
    return crm__blas_end(CUBLAS_STATUS_SUCCESS);
}

CRM_EXPORT cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
    cublasStatus_t st = crm__blas_begin(handle);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    if (!crm_blas_math_ok((int)mode))
        return crm__blas_end(CUBLAS_STATUS_INVALID_VALUE);
    handle->math = mode;
    return crm__blas_end(CUBLAS_STATUS_SUCCESS);
}

CRM_EXPORT cublasStatus_t cublasSetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t mode)
{
    cublasStatus_t st = crm__blas_begin(handle);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    if (mode != CUBLAS_ATOMICS_NOT_ALLOWED && mode != CUBLAS_ATOMICS_ALLOWED)
        return crm__blas_end(CUBLAS_STATUS_INVALID_VALUE);
    handle->atomics = mode;
    return crm__blas_end(CUBLAS_STATUS_SUCCESS);
}

/* 0 (all) up to the emulated device's multiprocessor count. */
CRM_EXPORT cublasStatus_t cublasSetSmCountTarget(cublasHandle_t handle, int smCountTarget)
{
    int sms = 0;
    cublasStatus_t st = crm__blas_begin(handle);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) != cudaSuccess || smCountTarget < 0 ||
        smCountTarget > sms)
        return crm__blas_end(CUBLAS_STATUS_INVALID_VALUE);
    handle->sm_target = smCountTarget;
    return crm__blas_end(CUBLAS_STATUS_SUCCESS);
}

CRM_EXPORT cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t *mode)
{
    cublasStatus_t st = crm__blas_begin(handle);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    if (mode == NULL)
        return crm__blas_end(CUBLAS_STATUS_INVALID_VALUE);
    *mode = handle->math;
    return crm__blas_end(CUBLAS_STATUS_SUCCESS);
}

/* A workspace must be device memory; size 0 returns to the library's own. */
CRM_EXPORT cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace, size_t workspaceSizeInBytes)
{
    cublasStatus_t st = crm__blas_begin(handle);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    if (workspaceSizeInBytes > 0 && crm__blas_dev(workspace, workspaceSizeInBytes) != CUBLAS_STATUS_SUCCESS)
        return crm__blas_end(CUBLAS_STATUS_INVALID_VALUE);
    handle->workspace = workspaceSizeInBytes > 0 ? workspace : NULL;
    handle->workspace_size = workspaceSizeInBytes;
    return crm__blas_end(CUBLAS_STATUS_SUCCESS);
}

/* --- half and bfloat16 ------------------------------------------------------------- */

float crm__half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else if (exp == 0 && mant == 0) {
        bits = sign;
    } else if (exp == 0) { /* subnormal: normalise into a float exponent */
        uint32_t e = 113;
        while (!(mant & 0x400u)) {
            mant <<= 1;
            e--;
        }
        bits = sign | (e << 23) | ((mant & 0x3ffu) << 13);
    } else {
        bits = sign | ((exp + 112) << 23) | (mant << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Drops `shift` low bits of v, rounding to nearest, ties to even. */
static uint32_t crm__round_shift(uint32_t v, unsigned shift)
{
    uint32_t kept = v >> shift, rem = v & ((1u << shift) - 1), half = 1u << (shift - 1);
    return kept + (rem > half || (rem == half && (kept & 1u)));
}

uint16_t crm__float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint32_t sign = (x >> 16) & 0x8000u, exp = (x >> 23) & 0xffu, mant = x & 0x7fffffu;
    if (exp == 0xff) /* infinity, or NaN kept quiet */
        return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u | (mant >> 13) : 0));
    int e = (int)exp - 112; /* half exponent field */
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) { /* half subnormal (or zero): value = M * 2^(e - 14) in units of 2^-24 */
        if (e < -10)
            return (uint16_t)sign;
        return (uint16_t)(sign | crm__round_shift(mant | 0x800000u, (unsigned)(14 - e)));
    }
    /* a carry out of the mantissa correctly bumps the exponent (up to infinity) */
    return (uint16_t)(sign | crm__round_shift(((uint32_t)e << 23) | mant, 13));
}

float crm__bf16_to_float(uint16_t b)
{
    uint32_t bits = (uint32_t)b << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

uint16_t crm__float_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu) != 0)
        return (uint16_t)((x >> 16) | 0x40u); /* quiet NaN */
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16); /* nearest, ties to even */
}

double crm__scale_value(const void *p, size_t size, int is_half)
{
    uint16_t h;
    float f;
    double d;
    if (size == 2) {
        memcpy(&h, p, 2);
        return is_half ? crm__half_to_float(h) : crm__bf16_to_float(h);
    }
    if (size == 4) {
        memcpy(&f, p, 4);
        return f;
    }
    memcpy(&d, p, 8);
    return d;
}
