/* crm_symbol_copy.c -- copies to and from a program's __device__ variables, named
 * by their host addresses (cudaMemcpyToSymbol and kin, cudaGetSymbolAddress and
 * cudaGetSymbolSize), over the linking library's crm_nvcc_rt_symbol and its copies. */
#include <stdint.h>
#include "common/crm_nvcc_rt.h"

#define CRM__EXPORT __attribute__((visibility("default")))

/* The per-thread default stream's copies (the library's own). */
cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                                 cudaStream_t stream);

enum { CRM__SYNC = 0, CRM__ASYNC = 1, CRM__PTDS = 2 };

/* Device address of symbol + offset for count bytes; cudaErrorInvalidSymbol for an
 * unknown symbol, cudaErrorInvalidValue when the range passes its end. */
static cudaError_t crm__symbol_at(const void *symbol, size_t count, size_t offset, void **out)
{
    void *addr = NULL;
    size_t size = 0;
    cudaError_t err = crm_nvcc_rt_symbol(symbol, 1, &addr, &size);
    if (err != cudaSuccess)
        return err;
    if (offset > size || count > size - offset)
        return cudaErrorInvalidValue;
    *out = (char *)addr + offset;
    return cudaSuccess;
}

static cudaError_t crm__copy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream,
                             int how)
{
    if (how & CRM__ASYNC)
        return how & CRM__PTDS ? cudaMemcpyAsync_ptsz(dst, src, count, kind, stream)
                               : cudaMemcpyAsync(dst, src, count, kind, stream);
    return how & CRM__PTDS ? cudaMemcpy_ptds(dst, src, count, kind) : cudaMemcpy(dst, src, count, kind);
}

/* Copies count bytes between symbol + offset and mem: to the symbol from host or
 * device memory when to, else from it (cudaMemcpyDefault decides from mem). */
static cudaError_t crm__symbol_copy(int to, const void *symbol, void *mem, size_t count, size_t offset,
                                    enum cudaMemcpyKind kind, cudaStream_t stream, int how)
{
    void *at;
    enum cudaMemcpyKind plain = to ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    if (kind != plain && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
        return crm_nvcc_rt_error(cudaErrorInvalidMemcpyDirection);
    cudaError_t err = crm__symbol_at(symbol, count, offset, &at);
    if (err != cudaSuccess)
        return crm_nvcc_rt_error(err);
    return to ? crm__copy(at, mem, count, kind, stream, how) : crm__copy(mem, at, count, kind, stream, how);
}

/* The source of a copy to a symbol: only read. */
static cudaError_t crm__to_symbol(const void *symbol, const void *src, size_t count, size_t offset,
                                  enum cudaMemcpyKind kind, cudaStream_t stream, int how)
{
    return crm__symbol_copy(1, symbol, (void *)(uintptr_t)src, count, offset, kind, stream, how);
}

static cudaError_t crm__from_symbol(void *dst, const void *symbol, size_t count, size_t offset,
                                    enum cudaMemcpyKind kind, cudaStream_t stream, int how)
{
    return crm__symbol_copy(0, symbol, dst, count, offset, kind, stream, how);
}

CRM__EXPORT cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset,
                                           enum cudaMemcpyKind kind)
{
    return crm__to_symbol(symbol, src, count, offset, kind, NULL, CRM__SYNC);
}

CRM__EXPORT cudaError_t cudaMemcpyToSymbol_ptds(const void *symbol, const void *src, size_t count, size_t offset,
                                                enum cudaMemcpyKind kind)
{
    return crm__to_symbol(symbol, src, count, offset, kind, NULL, CRM__PTDS);
}

CRM__EXPORT cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count, size_t offset,
                                                enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return crm__to_symbol(symbol, src, count, offset, kind, stream, CRM__ASYNC);
}

CRM__EXPORT cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void *symbol, const void *src, size_t count,
                                                     size_t offset, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return crm__to_symbol(symbol, src, count, offset, kind, stream, CRM__ASYNC | CRM__PTDS);
}

CRM__EXPORT cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset,
                                             enum cudaMemcpyKind kind)
{
    return crm__from_symbol(dst, symbol, count, offset, kind, NULL, CRM__SYNC);
}

CRM__EXPORT cudaError_t cudaMemcpyFromSymbol_ptds(void *dst, const void *symbol, size_t count, size_t offset,
                                                  enum cudaMemcpyKind kind)
{
    return crm__from_symbol(dst, symbol, count, offset, kind, NULL, CRM__PTDS);
}

CRM__EXPORT cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count, size_t offset,
                                                  enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return crm__from_symbol(dst, symbol, count, offset, kind, stream, CRM__ASYNC);
}

CRM__EXPORT cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *symbol, size_t count, size_t offset,
                                                       enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return crm__from_symbol(dst, symbol, count, offset, kind, stream, CRM__ASYNC | CRM__PTDS);
}

CRM__EXPORT cudaError_t cudaGetSymbolAddress(void **devPtr, const void *symbol)
{
    if (devPtr == NULL)
        return crm_nvcc_rt_error(cudaErrorInvalidValue);
    return crm_nvcc_rt_error(crm__symbol_at(symbol, 0, 0, devPtr));
}

/* The size the program registered: the module need not be loaded. */
CRM__EXPORT cudaError_t cudaGetSymbolSize(size_t *size, const void *symbol)
{
    if (size == NULL)
        return crm_nvcc_rt_error(cudaErrorInvalidValue);
    return crm_nvcc_rt_error(crm_nvcc_rt_symbol(symbol, 0, NULL, size));
}
