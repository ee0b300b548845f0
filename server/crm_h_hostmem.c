/* crm_h_hostmem.c -- handlers of the client's shared pinned host memory
 * (client/crm_hostmem.h): attaching a region the client created, copying between
 * it and device memory with no bytes on the wire, and letting it go. Every region
 * a session attached is unmapped when the session ends. */
#include <stdlib.h>
#include <string.h>
#include "common/crm_log.h"
#include "crm_server_gen.h"
#include "protocol/crm_shm.h"
#include "server/crm_backend.h"
#include "server/crm_session.h"


typedef struct crm__hostmem {
    crm_shm_region shm;
    int registered;  /* page-locked with the backend (cudaHostRegister) */
} crm__hostmem;

static void crm__hostmem_free(crm__hostmem *h)
{
    if (h->registered)
        crm_rt.cudaHostUnregister(h->shm.data);
    crm_shm_region_unmap(&h->shm);
    free(h);
}

cudaError_t crm_srv_crm_host_attach(crm_session *s, uint64_t id, const crm_bytes *name, uint64_t size,
                                    const crm_bytes *cookie)
{
    char path[CRM_SHM_NAME_MAX];
    void *old;
    if (id == 0 || crm_idmap_get(&s->hostmem, id, &old) == 0)
        return cudaErrorInvalidValue;
    if (crm_session_room(s, CRM_LIMIT_PINNED, 1) != 0) /* --session-limits pinned: each is a mapping of ours */
        return cudaErrorMemoryAllocation;
    if (name->crm_bytes_len == 0 || name->crm_bytes_len >= sizeof path || cookie->crm_bytes_len != CRM_SHM_COOKIE)
        return cudaErrorInvalidValue;
    memcpy(path, name->crm_bytes_val, name->crm_bytes_len);
    path[name->crm_bytes_len] = '\0';
    crm__hostmem *h = calloc(1, sizeof *h);
    if (h == NULL)
        return cudaErrorMemoryAllocation;
    if (crm_shm_region_attach(&h->shm, path, size, (const unsigned char *)cookie->crm_bytes_val) != 0) {
        free(h);
        return cudaErrorInvalidValue; /* not on this machine, or not the client's */
    }
    /* a GPU copies page-locked memory by DMA; the emulated device just records it */
    h->registered = crm_rt.cudaHostRegister(h->shm.data, h->shm.size, cudaHostRegisterPortable) == cudaSuccess;
    if (!h->registered)
        crm_rt.cudaGetLastError(); /* pageable copies still work; forget the failure */
    if (crm_idmap_put(&s->hostmem, id, h) != 0) {
        crm__hostmem_free(h);
        return cudaErrorMemoryAllocation;
    }
    return cudaSuccess;
}

cudaError_t crm_srv_crm_host_detach(crm_session *s, uint64_t id)
{
    void *v;
    if (crm_idmap_get(&s->hostmem, id, &v) != 0)
        return cudaErrorInvalidValue;
    /* as cudaFreeHost does: no copy still running may touch the memory after this */
    cudaError_t err = crm_rt.cudaDeviceSynchronize();
    crm_idmap_del(&s->hostmem, id, &v);
    crm__hostmem_free(v);
    return err;
}

/* The host side of a copy, *at, when the pitched rows lie inside region `id`. */
static cudaError_t crm__host_rows(crm_session *s, uint64_t id, uint64_t offset, uint64_t pitch, uint64_t width,
                                  uint64_t height, char **at)
{
    void *v;
    if (crm_idmap_get(&s->hostmem, id, &v) != 0)
        return cudaErrorInvalidValue;
    const crm__hostmem *h = v;
    if (width == 0 || height == 0 || (height > 1 && pitch < width))
        return cudaErrorInvalidValue;
    if (height > 1 && pitch > (UINT64_MAX - width) / (height - 1))
        return cudaErrorInvalidValue;
    uint64_t extent = pitch * (height - 1) + width;
    if (offset > h->shm.size || extent > h->shm.size - offset)
        return cudaErrorInvalidValue;
    *at = h->shm.data + offset;
    return cudaSuccess;
}

cudaError_t crm_srv_crm_memcpy_host(crm_session *s, uint64_t region, uint64_t offset, uint64_t hpitch,
                                    uint64_t dev, uint64_t dpitch, uint64_t width, uint64_t height, int to_device,
                                    uint64_t stream, int async)
{
    char *host;
    cudaStream_t h;
    cudaError_t err = crm__host_rows(s, region, offset, hpitch, width, height, &host);
    if (err == cudaSuccess)
        err = crm_session_check_region(s, dev, dpitch, width, height);
    if (err == cudaSuccess)
        err = crm_session_stream(s, stream, &h);
    if (err != cudaSuccess)
        return err;
    void *d = (void *)(uintptr_t)dev;
    void *dst = to_device ? d : host;
    const void *src = to_device ? (const void *)host : d;
    uint64_t dst_pitch = to_device ? dpitch : hpitch, src_pitch = to_device ? hpitch : dpitch;
    enum cudaMemcpyKind kind = to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    if (to_device)
        s->bytes_pinned_in += width * height;
    else
        s->bytes_pinned_out += width * height;
    return async ? crm_rt.cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, height, kind, h)
                 : crm_rt.cudaMemcpy2D(dst, dst_pitch, src, src_pitch, width, height, kind);
}

static void crm__hostmem_collect(uint64_t id, void *value, void *arg)
{
    (void)value;
    uint64_t **next = arg;
    *(*next)++ = id;
}

void crm_session_hostmem_release(crm_session *s)
{
    if (s->hostmem.used == 0)
        return;
    crm_rt.cudaDeviceSynchronize(); /* copies in flight finish before the memory goes */
    uint64_t *ids = malloc(s->hostmem.used * sizeof *ids), *next = ids;
    if (ids == NULL)
        return; /* the process is ending: its mappings go with it */
    crm_idmap_each(&s->hostmem, crm__hostmem_collect, &next);
    for (uint64_t *id = ids; id < next; id++) {
        void *v;
        crm_idmap_del(&s->hostmem, *id, &v);
        crm__hostmem_free(v);
    }
    free(ids);
}
