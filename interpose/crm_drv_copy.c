/* crm_drv_copy.c -- driver copies and memsets (every cuMemcpy and cuMemset form
 * with device and host memory: 1D, 2D, 3D, peer, sync and async, and their
 * per-thread default stream twins), each one call into the runtime layer's copy
 * path, so batching, the data channel and compression serve both layers alike.
 * CUDA arrays are not remoted: those forms answer CUDA_ERROR_NOT_SUPPORTED. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "interpose/crm_drv.h"
#include "interpose/crm_export.h"

/* The shim's per-thread default stream copy and memset functions. */
cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                                 cudaStream_t stream);
cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                              size_t height, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                   size_t height, enum cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaMemset2D_ptds(void *devPtr, size_t pitch, int value, size_t width, size_t height);
cudaError_t cudaMemset2DAsync_ptsz(void *devPtr, size_t pitch, int value, size_t width, size_t height,
                                   cudaStream_t stream);

#define CRM__PTR(d) ((void *)(uintptr_t)(d))

/* How a driver copy is issued: synchronous or on a stream, legacy or per-thread. */
typedef struct crm__how {
    int async;
    int ptds;
    CUstream stream;
} crm__how;

#define CRM__SYNC ((crm__how){0, 0, NULL})
#define CRM__SYNC_PTDS ((crm__how){0, 1, NULL})
#define CRM__ASYNC(s) ((crm__how){1, 0, (s)})
#define CRM__ASYNC_PTSZ(s) ((crm__how){1, 1, (s)})

/* A pitched copy through the runtime layer's one 2D path. */
static CUresult crm__copy2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                            enum cudaMemcpyKind kind, crm__how how)
{
    CUresult rc = crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    cudaStream_t s = (cudaStream_t)how.stream;
    if (how.async)
        return how.ptds ? CRM_DRV_RT(cudaMemcpy2DAsync_ptsz(dst, dpitch, src, spitch, width, height, kind, s))
                        : CRM_DRV_RT(cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, s));
    return how.ptds ? CRM_DRV_RT(cudaMemcpy2D_ptds(dst, dpitch, src, spitch, width, height, kind))
                    : CRM_DRV_RT(cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind));
}

static CUresult crm__copy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, crm__how how)
{
    CUresult rc = crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    cudaStream_t s = (cudaStream_t)how.stream;
    if (how.async)
        return how.ptds ? CRM_DRV_RT(cudaMemcpyAsync_ptsz(dst, src, n, kind, s))
                        : CRM_DRV_RT(cudaMemcpyAsync(dst, src, n, kind, s));
    return how.ptds ? CRM_DRV_RT(cudaMemcpy_ptds(dst, src, n, kind)) : CRM_DRV_RT(cudaMemcpy(dst, src, n, kind));
}

/* ---- 1D copies: each ABI symbol is a thin wrapper ----------------------------------- */

#define CRM__H2D cudaMemcpyHostToDevice
#define CRM__D2H cudaMemcpyDeviceToHost
#define CRM__D2D cudaMemcpyDeviceToDevice
#define CRM__ANY cudaMemcpyDefault

CRM_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{ return crm__copy(CRM__PTR(dst), src, n, CRM__H2D, CRM__SYNC); }
CRM_EXPORT CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void *src, size_t n)
{ return crm__copy(CRM__PTR(dst), src, n, CRM__H2D, CRM__SYNC_PTDS); }
CRM_EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{ return crm__copy(dst, CRM__PTR(src), n, CRM__D2H, CRM__SYNC); }
CRM_EXPORT CUresult cuMemcpyDtoH_v2_ptds(void *dst, CUdeviceptr src, size_t n)
{ return crm__copy(dst, CRM__PTR(src), n, CRM__D2H, CRM__SYNC_PTDS); }
CRM_EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{ return crm__copy(CRM__PTR(dst), CRM__PTR(src), n, CRM__D2D, CRM__SYNC); }
CRM_EXPORT CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n)
{ return crm__copy(CRM__PTR(dst), CRM__PTR(src), n, CRM__D2D, CRM__SYNC_PTDS); }
CRM_EXPORT CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{ return crm__copy(CRM__PTR(dst), CRM__PTR(src), n, CRM__ANY, CRM__SYNC); }
CRM_EXPORT CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n)
{ return crm__copy(CRM__PTR(dst), CRM__PTR(src), n, CRM__ANY, CRM__SYNC_PTDS); }

CRM_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{ return crm__copy(CRM__PTR(dst), src, n, CRM__H2D, CRM__ASYNC(s)); }
CRM_EXPORT CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{ return crm__copy(CRM__PTR(dst), src, n, CRM__H2D, CRM__ASYNC_PTSZ(s)); }
CRM_EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s)
{ return crm__copy(dst, CRM__PTR(src), n, CRM__D2H, CRM__ASYNC(s)); }
CRM_EXPORT CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t n, CUstream s)
{ return crm__copy(dst, CRM__PTR(src), n, CRM__D2H, CRM__ASYNC_PTSZ(s)); }
CRM_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{ return crm__copy(CRM__PTR(dst), CRM__PTR(src), n, CRM__D2D, CRM__ASYNC(s)); }
CRM_EXPORT CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{ return crm__copy(CRM__PTR(dst), CRM__PTR(src), n, CRM__D2D, CRM__ASYNC_PTSZ(s)); }
CRM_EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{ return crm__copy(CRM__PTR(dst), CRM__PTR(src), n, CRM__ANY, CRM__ASYNC(s)); }
CRM_EXPORT CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{ return crm__copy(CRM__PTR(dst), CRM__PTR(src), n, CRM__ANY, CRM__ASYNC_PTSZ(s)); }

/* Peer copies: a session's devices share one address space on the server. */
CRM_EXPORT CUresult cuMemcpyPeer(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n)
{
    if (!crm_drv_ctx_valid(dctx) || !crm_drv_ctx_valid(sctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    return crm__copy(CRM__PTR(dst), CRM__PTR(src), n, CRM__D2D, CRM__SYNC);
}

CRM_EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n,
                                      CUstream s)
{
    if (!crm_drv_ctx_valid(dctx) || !crm_drv_ctx_valid(sctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    return crm__copy(CRM__PTR(dst), CRM__PTR(src), n, CRM__D2D, CRM__ASYNC(s));
}

/* ---- 2D and 3D copies ------------------------------------------------------------- */

/* Start address of one side of a CUDA_MEMCPY2D/3D: host or device memory only. */
static CUresult crm__side(CUmemorytype type, const void *host, CUdeviceptr dev, size_t x, size_t y, size_t z,
                          size_t pitch, size_t height, const char **out, int *on_device)
{
    size_t off = x + pitch * (y + height * z);
    switch (type) {
    case CU_MEMORYTYPE_HOST:
        *out = (const char *)host + off;
        *on_device = 0;
        return CUDA_SUCCESS;
    case CU_MEMORYTYPE_DEVICE:
    case CU_MEMORYTYPE_UNIFIED:
        *out = (const char *)CRM__PTR(dev) + off;
        *on_device = type == CU_MEMORYTYPE_DEVICE ? 1 : -1;
        return CUDA_SUCCESS;
    case CU_MEMORYTYPE_ARRAY:
        return CUDA_ERROR_NOT_SUPPORTED; /* CUDA arrays are not remoted */
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

static enum cudaMemcpyKind crm__kind(int src_dev, int dst_dev)
{
    if (src_dev < 0 || dst_dev < 0)
        return cudaMemcpyDefault;
    return src_dev ? (dst_dev ? CRM__D2D : CRM__D2H) : (dst_dev ? CRM__H2D : cudaMemcpyHostToHost);
}

static CUresult crm__memcpy3d(const CUDA_MEMCPY3D *p, crm__how how)
{
    const char *src, *dst;
    int sdev, ddev;
    if (p == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    size_t depth = p->Depth ? p->Depth : 1;
    for (size_t z = 0; z < depth; z++) {
        CUresult rc = crm__side(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcXInBytes, p->srcY, p->srcZ + z,
                                p->srcPitch, p->srcHeight, &src, &sdev);
        if (rc == CUDA_SUCCESS)
            rc = crm__side(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstXInBytes, p->dstY, p->dstZ + z,
                           p->dstPitch, p->dstHeight, &dst, &ddev);
        if (rc == CUDA_SUCCESS)
            rc = crm__copy2d((void *)dst, p->dstPitch ? p->dstPitch : p->WidthInBytes, src,
                             p->srcPitch ? p->srcPitch : p->WidthInBytes, p->WidthInBytes, p->Height,
                             crm__kind(sdev, ddev), how);
        if (rc != CUDA_SUCCESS)
            return rc;
    }
    return CUDA_SUCCESS;
}

/* A 2D copy is a 3D copy of depth 1 with its fields laid out alike. */
static CUresult crm__memcpy2d(const CUDA_MEMCPY2D *p, crm__how how)
{
    if (p == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_MEMCPY3D q = {
        .srcXInBytes = p->srcXInBytes, .srcY = p->srcY, .srcMemoryType = p->srcMemoryType, .srcHost = p->srcHost,
        .srcDevice = p->srcDevice, .srcArray = p->srcArray, .srcPitch = p->srcPitch,
        .dstXInBytes = p->dstXInBytes, .dstY = p->dstY, .dstMemoryType = p->dstMemoryType, .dstHost = p->dstHost,
        .dstDevice = p->dstDevice, .dstArray = p->dstArray, .dstPitch = p->dstPitch,
        .WidthInBytes = p->WidthInBytes, .Height = p->Height, .Depth = 1,
    };
    return crm__memcpy3d(&q, how);
}

CRM_EXPORT CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *p) { return crm__memcpy2d(p, CRM__SYNC); }
CRM_EXPORT CUresult cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *p) { return crm__memcpy2d(p, CRM__SYNC_PTDS); }
CRM_EXPORT CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *p) { return crm__memcpy2d(p, CRM__SYNC); }
CRM_EXPORT CUresult cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D *p) { return crm__memcpy2d(p, CRM__SYNC_PTDS); }
CRM_EXPORT CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *p, CUstream s) { return crm__memcpy2d(p, CRM__ASYNC(s)); }
CRM_EXPORT CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *p, CUstream s)
{ return crm__memcpy2d(p, CRM__ASYNC_PTSZ(s)); }
CRM_EXPORT CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D *p) { return crm__memcpy3d(p, CRM__SYNC); }
CRM_EXPORT CUresult cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D *p) { return crm__memcpy3d(p, CRM__SYNC_PTDS); }
CRM_EXPORT CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *p, CUstream s) { return crm__memcpy3d(p, CRM__ASYNC(s)); }
CRM_EXPORT CUresult cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D *p, CUstream s)
{ return crm__memcpy3d(p, CRM__ASYNC_PTSZ(s)); }

/* ---- memsets ---------------------------------------------------------------------- */

/* Fills height rows of width elements of `size` bytes, pitch bytes apart. Byte
 * patterns go through the runtime layer's memset; wider patterns whose bytes differ
 * become a copy of the filled rows (the bytes cross the wire once). */
static CUresult crm__memset(CUdeviceptr dst, size_t pitch, uint32_t value, unsigned size, size_t width,
                            size_t height, crm__how how)
{
    CUresult rc = crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    if ((size > 1 && dst % size != 0) || (height > 1 && pitch < width * size))
        return CUDA_ERROR_INVALID_VALUE;
    unsigned char b[4];
    memcpy(b, &value, sizeof b);
    int uniform = size == 1 || (b[0] == b[1] && (size == 2 || (b[1] == b[2] && b[2] == b[3])));
    cudaStream_t s = (cudaStream_t)how.stream;
    if (uniform) {
        if (how.async)
            return how.ptds ? CRM_DRV_RT(cudaMemset2DAsync_ptsz(CRM__PTR(dst), pitch, b[0], width * size, height, s))
                            : CRM_DRV_RT(cudaMemset2DAsync(CRM__PTR(dst), pitch, b[0], width * size, height, s));
        return how.ptds ? CRM_DRV_RT(cudaMemset2D_ptds(CRM__PTR(dst), pitch, b[0], width * size, height))
                        : CRM_DRV_RT(cudaMemset2D(CRM__PTR(dst), pitch, b[0], width * size, height));
    }
    size_t row = width * size;
    size_t total = row * height;
    unsigned char *fill = malloc(total > 0 ? total : 1);
    if (fill == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; i < total; i += size)
        memcpy(fill + i, b, size);
    /* Copies of host memory are captured before they return: fill can go. */
    rc = crm__copy2d(CRM__PTR(dst), pitch, fill, row, row, height, CRM__H2D, how);
    free(fill);
    return rc;
}

#define CRM__MEMSET_1D(NAME, T, SIZE, HOW)                                     \
    CRM_EXPORT CUresult NAME(CUdeviceptr d, T v, size_t n)                     \
    { return crm__memset(d, n * SIZE, v, SIZE, n, 1, HOW); }
#define CRM__MEMSET_1D_ASYNC(NAME, T, SIZE, HOW)                               \
    CRM_EXPORT CUresult NAME(CUdeviceptr d, T v, size_t n, CUstream s)         \
    { return crm__memset(d, n * SIZE, v, SIZE, n, 1, HOW(s)); }
#define CRM__MEMSET_2D(NAME, T, SIZE, HOW)                                     \
    CRM_EXPORT CUresult NAME(CUdeviceptr d, size_t p, T v, size_t w, size_t h) \
    { return crm__memset(d, p, v, SIZE, w, h, HOW); }
#define CRM__MEMSET_2D_ASYNC(NAME, T, SIZE, HOW)                                           \
    CRM_EXPORT CUresult NAME(CUdeviceptr d, size_t p, T v, size_t w, size_t h, CUstream s) \
    { return crm__memset(d, p, v, SIZE, w, h, HOW(s)); }

CRM__MEMSET_1D(cuMemsetD8_v2, unsigned char, 1, CRM__SYNC)
CRM__MEMSET_1D(cuMemsetD8_v2_ptds, unsigned char, 1, CRM__SYNC_PTDS)
CRM__MEMSET_1D(cuMemsetD16_v2, unsigned short, 2, CRM__SYNC)
CRM__MEMSET_1D(cuMemsetD16_v2_ptds, unsigned short, 2, CRM__SYNC_PTDS)
CRM__MEMSET_1D(cuMemsetD32_v2, unsigned int, 4, CRM__SYNC)
CRM__MEMSET_1D(cuMemsetD32_v2_ptds, unsigned int, 4, CRM__SYNC_PTDS)
CRM__MEMSET_1D_ASYNC(cuMemsetD8Async, unsigned char, 1, CRM__ASYNC)
CRM__MEMSET_1D_ASYNC(cuMemsetD8Async_ptsz, unsigned char, 1, CRM__ASYNC_PTSZ)
CRM__MEMSET_1D_ASYNC(cuMemsetD16Async, unsigned short, 2, CRM__ASYNC)
CRM__MEMSET_1D_ASYNC(cuMemsetD16Async_ptsz, unsigned short, 2, CRM__ASYNC_PTSZ)
CRM__MEMSET_1D_ASYNC(cuMemsetD32Async, unsigned int, 4, CRM__ASYNC)
CRM__MEMSET_1D_ASYNC(cuMemsetD32Async_ptsz, unsigned int, 4, CRM__ASYNC_PTSZ)
CRM__MEMSET_2D(cuMemsetD2D8_v2, unsigned char, 1, CRM__SYNC)
CRM__MEMSET_2D(cuMemsetD2D8_v2_ptds, unsigned char, 1, CRM__SYNC_PTDS)
CRM__MEMSET_2D(cuMemsetD2D16_v2, unsigned short, 2, CRM__SYNC)
CRM__MEMSET_2D(cuMemsetD2D16_v2_ptds, unsigned short, 2, CRM__SYNC_PTDS)
CRM__MEMSET_2D(cuMemsetD2D32_v2, unsigned int, 4, CRM__SYNC)
CRM__MEMSET_2D(cuMemsetD2D32_v2_ptds, unsigned int, 4, CRM__SYNC_PTDS)
CRM__MEMSET_2D_ASYNC(cuMemsetD2D8Async, unsigned char, 1, CRM__ASYNC)
CRM__MEMSET_2D_ASYNC(cuMemsetD2D8Async_ptsz, unsigned char, 1, CRM__ASYNC_PTSZ)
CRM__MEMSET_2D_ASYNC(cuMemsetD2D16Async, unsigned short, 2, CRM__ASYNC)
CRM__MEMSET_2D_ASYNC(cuMemsetD2D16Async_ptsz, unsigned short, 2, CRM__ASYNC_PTSZ)
CRM__MEMSET_2D_ASYNC(cuMemsetD2D32Async, unsigned int, 4, CRM__ASYNC)
CRM__MEMSET_2D_ASYNC(cuMemsetD2D32Async_ptsz, unsigned int, 4, CRM__ASYNC_PTSZ)
