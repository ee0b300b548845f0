/* crm_scrub.c -- zeroing device memory before it is given back (server/crm_scrub.h). */
#include "common/crm_log.h"
#include "server/crm_backend.h"
#include "server/crm_scrub.h"

int crm_scrub_on;

void crm_scrub(crm_session *s, int device, uint64_t base, uint64_t size)
{
    int cur = crm_session_device();
    if (!crm_scrub_on || size == 0)
        return;
    cudaError_t err = device == cur ? cudaSuccess : crm_rt.cudaSetDevice(device);
    if (err == cudaSuccess)
        err = crm_rt.cudaMemset((void *)(uintptr_t)base, 0, size);
    if (err == cudaSuccess)
        err = crm_rt.cudaDeviceSynchronize();
    if (device != cur)
        crm_rt.cudaSetDevice(cur);
    if (err == cudaSuccess) {
        s->scrubbed += size;
    } else {
        crm_rt.cudaGetLastError();
        crm_warn("session %llu: could not zero %llu bytes before freeing them (CUDA error %d)",
                 (unsigned long long)s->id, (unsigned long long)size, (int)err);
    }
}
