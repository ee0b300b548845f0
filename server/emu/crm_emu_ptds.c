/* crm_emu_ptds.c -- the per-thread default stream entry points (_ptds/_ptsz) of the
 * emulated device, used by programs built with --default-stream per-thread.
 *
 * The emulator runs all work when it is enqueued, so the per-thread default stream
 * behaves exactly like the legacy one: each entry point calls its plain CUDA name.
 * With CUDA_API_PER_THREAD_DEFAULT_STREAM the header declares the _ptds/_ptsz
 * prototypes, so the compiler checks these definitions against them; the plain
 * implementations are reached through asm labels.
 */
#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1
#include "server/emu/crm_emu.h"

/* Declares crm__plain_PLAIN: the symbol PLAIN, typed like the per-thread PT. */
#define CRM__PLAIN(pt, plain) extern __typeof__(pt) crm__plain_##plain __asm__(#plain)

CRM__PLAIN(cudaMemcpy_ptds, cudaMemcpy);
CRM__PLAIN(cudaMemcpy2D_ptds, cudaMemcpy2D);
CRM__PLAIN(cudaMemset_ptds, cudaMemset);
CRM__PLAIN(cudaMemset2D_ptds, cudaMemset2D);
CRM__PLAIN(cudaMemcpyAsync_ptsz, cudaMemcpyAsync);
CRM__PLAIN(cudaMemcpy2DAsync_ptsz, cudaMemcpy2DAsync);
CRM__PLAIN(cudaMemsetAsync_ptsz, cudaMemsetAsync);
CRM__PLAIN(cudaMemset2DAsync_ptsz, cudaMemset2DAsync);
CRM__PLAIN(cudaStreamQuery_ptsz, cudaStreamQuery);
CRM__PLAIN(cudaStreamSynchronize_ptsz, cudaStreamSynchronize);
CRM__PLAIN(cudaStreamGetFlags_ptsz, cudaStreamGetFlags);
CRM__PLAIN(cudaStreamGetPriority_ptsz, cudaStreamGetPriority);
CRM__PLAIN(cudaStreamWaitEvent_ptsz, cudaStreamWaitEvent);
CRM__PLAIN(cudaEventRecord_ptsz, cudaEventRecord);
CRM__PLAIN(cudaEventRecordWithFlags_ptsz, cudaEventRecordWithFlags);

CRM_EXPORT cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count,
                                       enum cudaMemcpyKind kind)
{
    return crm__plain_cudaMemcpy(dst, src, count, kind);
}

CRM_EXPORT cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src,
                                         size_t spitch, size_t width, size_t height,
                                         enum cudaMemcpyKind kind)
{
    return crm__plain_cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind);
}

CRM_EXPORT cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count)
{
    return crm__plain_cudaMemset(devPtr, value, count);
}

CRM_EXPORT cudaError_t cudaMemset2D_ptds(void *devPtr, size_t pitch, int value, size_t width,
                                         size_t height)
{
    return crm__plain_cudaMemset2D(devPtr, pitch, value, width, height);
}

CRM_EXPORT cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
                                            enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return crm__plain_cudaMemcpyAsync(dst, src, count, kind, stream);
}

CRM_EXPORT cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src,
                                              size_t spitch, size_t width, size_t height,
                                              enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return crm__plain_cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, stream);
}

CRM_EXPORT cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count,
                                            cudaStream_t stream)
{
    return crm__plain_cudaMemsetAsync(devPtr, value, count, stream);
}

CRM_EXPORT cudaError_t cudaMemset2DAsync_ptsz(void *devPtr, size_t pitch, int value,
                                              size_t width, size_t height, cudaStream_t stream)
{
    return crm__plain_cudaMemset2DAsync(devPtr, pitch, value, width, height, stream);
}

CRM_EXPORT cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream)
{
    return crm__plain_cudaStreamQuery(stream);
}

CRM_EXPORT cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream)
{
    return crm__plain_cudaStreamSynchronize(stream);
}

CRM_EXPORT cudaError_t cudaStreamGetFlags_ptsz(cudaStream_t hStream, unsigned int *flags)
{
    return crm__plain_cudaStreamGetFlags(hStream, flags);
}

CRM_EXPORT cudaError_t cudaStreamGetPriority_ptsz(cudaStream_t hStream, int *priority)
{
    return crm__plain_cudaStreamGetPriority(hStream, priority);
}

CRM_EXPORT cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event,
                                                unsigned int flags)
{
    return crm__plain_cudaStreamWaitEvent(stream, event, flags);
}

CRM_EXPORT cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream)
{
    return crm__plain_cudaEventRecord(event, stream);
}

CRM_EXPORT cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream,
                                                     unsigned int flags)
{
    return crm__plain_cudaEventRecordWithFlags(event, stream, flags);
}
