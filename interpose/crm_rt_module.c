/* crm_rt_module.c -- the registration entry points every nvcc-built program calls
 * from its constructors (__cudaRegisterFatBinary and friends). The client keeps
 * each registered fatbinary; kernels themselves are not remoted yet, so functions,
 * variables and launches answer with the unsupported-call error. */
#include <stdlib.h>
#include "interpose/crm_export.h"

/* One fatbinary a program or library registered. */
typedef struct crm__module {
    void *fatbin;    /* the program's __fatDeviceText wrapper */
    void *handle;    /* what __cudaRegisterFatBinary returned: &handle */
} crm__module;

CRM_EXPORT void **__cudaRegisterFatBinary(void *fatCubin)
{
    crm__module *m = calloc(1, sizeof *m);
    if (m == NULL)
        return NULL;
    m->fatbin = fatCubin;
    m->handle = m;
    return &m->handle;
}

CRM_EXPORT void __cudaRegisterFatBinaryEnd(void **fatCubinHandle)
{
    (void)fatCubinHandle;
}

CRM_EXPORT void __cudaUnregisterFatBinary(void **fatCubinHandle)
{
    if (fatCubinHandle != NULL)
        free(*fatCubinHandle);
}

CRM_EXPORT char __cudaInitModule(void **fatCubinHandle)
{
    (void)fatCubinHandle;
    return 0;
}
