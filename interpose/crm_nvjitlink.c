/* crm_nvjitlink.c -- nvJitLink for programs that load it by name (cuda.core's
 * linker, numba-cuda): a link of one PTX input keeps the PTX as its result, so
 * the module the program then loads carries PTX, which a GPU server compiles for
 * its own GPU and the emulated device's PTX engine runs (machine code linked on
 * the client would be opaque to it). Every other link (LTO-IR, cubins, fatbins,
 * objects, several inputs) is handed, inputs and options replayed, to NVIDIA's
 * nvJitLink on the client (interpose/crm_fallback.c finds it); without it such a
 * link fails with NVJITLINK_ERROR_INTERNAL and says why in its error log.
 * dlopen of libnvJitLink.so* returns the shim (interpose/crm_dlopen.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The toolkit's header defines each call as a static inline wrapper of a
 * versioned symbol; its types are used, its wrappers renamed out of the way. */
#define nvJitLinkCreate crm__hdr_create
#define nvJitLinkDestroy crm__hdr_destroy
#define nvJitLinkAddData crm__hdr_add_data
#define nvJitLinkAddFile crm__hdr_add_file
#define nvJitLinkComplete crm__hdr_complete
#define nvJitLinkGetLinkedCubinSize crm__hdr_cubin_size
#define nvJitLinkGetLinkedCubin crm__hdr_cubin
#define nvJitLinkGetLinkedPtxSize crm__hdr_ptx_size
#define nvJitLinkGetLinkedPtx crm__hdr_ptx
#define nvJitLinkGetErrorLogSize crm__hdr_error_size
#define nvJitLinkGetErrorLog crm__hdr_error
#define nvJitLinkGetInfoLogSize crm__hdr_info_size
#define nvJitLinkGetInfoLog crm__hdr_info
#include <nvJitLink.h>
#undef nvJitLinkCreate
#undef nvJitLinkDestroy
#undef nvJitLinkAddData
#undef nvJitLinkAddFile
#undef nvJitLinkComplete
#undef nvJitLinkGetLinkedCubinSize
#undef nvJitLinkGetLinkedCubin
#undef nvJitLinkGetLinkedPtxSize
#undef nvJitLinkGetLinkedPtx
#undef nvJitLinkGetErrorLogSize
#undef nvJitLinkGetErrorLog
#undef nvJitLinkGetInfoLogSize
#undef nvJitLinkGetInfoLog

#include "common/crm_log.h"
#include "interpose/crm_export.h"
#include "interpose/crm_fallback.h"

typedef struct crm__input {
    nvJitLinkInputType type;
    char *data;                   /* its bytes (a file's, read at AddFile) */
    size_t size;
    char *name;
} crm__input;

/* A link: its options and inputs until it completes, then its result: the PTX
 * kept (ptx), or NVIDIA's link it was handed to (real). */
typedef struct crm__link {
    char **options;
    uint32_t noptions;
    crm__input *inputs;
    size_t ninputs;
    nvJitLinkHandle real;
    char *ptx;                    /* NUL-terminated */
    size_t ptx_size;              /* with the NUL */
    char error[256];
} crm__link;

typedef nvJitLinkResult (*crm__create_fn)(nvJitLinkHandle *, uint32_t, const char **);
typedef nvJitLinkResult (*crm__add_fn)(nvJitLinkHandle, nvJitLinkInputType, const void *, size_t, const char *);
typedef nvJitLinkResult (*crm__one_fn)(nvJitLinkHandle);
typedef nvJitLinkResult (*crm__ptr_fn)(nvJitLinkHandle *);
typedef nvJitLinkResult (*crm__size_fn)(nvJitLinkHandle, size_t *);
typedef nvJitLinkResult (*crm__get_fn)(nvJitLinkHandle, void *);

static void *crm__real(const char *name)
{
    return crm_fallback_symbol(CRM_FALLBACK_NVJITLINK, name);
}

static crm__link *crm__of(nvJitLinkHandle h)
{
    return (crm__link *)(void *)h;
}

CRM_EXPORT nvJitLinkResult nvJitLinkDestroy(nvJitLinkHandle *handle);

CRM_EXPORT nvJitLinkResult nvJitLinkCreate(nvJitLinkHandle *handle, uint32_t numOptions, const char **options)
{
    if (handle == NULL || (numOptions > 0 && options == NULL))
        return NVJITLINK_ERROR_NULL_INPUT;
    crm__link *l = calloc(1, sizeof *l);
    if (l == NULL || (numOptions > 0 && (l->options = calloc(numOptions, sizeof *l->options)) == NULL)) {
        free(l);
        return NVJITLINK_ERROR_INTERNAL;
    }
    *handle = (nvJitLinkHandle)(void *)l;
    for (uint32_t i = 0; i < numOptions; i++)
        if (options[i] != NULL && (l->options[l->noptions++] = strdup(options[i])) == NULL) {
            nvJitLinkDestroy(handle);
            return NVJITLINK_ERROR_INTERNAL;
        }
    return NVJITLINK_SUCCESS;
}

static nvJitLinkResult crm__keep(crm__link *l, nvJitLinkInputType type, const void *data, size_t size,
                                 const char *name)
{
    crm__input *in = realloc(l->inputs, (l->ninputs + 1) * sizeof *in);
    if (in == NULL)
        return NVJITLINK_ERROR_INTERNAL;
    l->inputs = in;
    in = &l->inputs[l->ninputs];
    in->type = type;
    in->size = size;
    in->data = malloc(size ? size : 1);
    in->name = strdup(name != NULL ? name : "");
    if (in->data == NULL || in->name == NULL) {
        free(in->data);
        free(in->name);
        return NVJITLINK_ERROR_INTERNAL;
    }
    memcpy(in->data, data, size);
    l->ninputs++;
    return NVJITLINK_SUCCESS;
}

CRM_EXPORT nvJitLinkResult nvJitLinkAddData(nvJitLinkHandle handle, nvJitLinkInputType inputType, const void *data,
                                            size_t size, const char *name)
{
    crm__link *l = crm__of(handle);
    if (l == NULL || data == NULL)
        return NVJITLINK_ERROR_NULL_INPUT;
    if (l->real != NULL || l->ptx != NULL)
        return NVJITLINK_ERROR_INVALID_INPUT;
    return crm__keep(l, inputType, data, size, name);
}

CRM_EXPORT nvJitLinkResult nvJitLinkAddFile(nvJitLinkHandle handle, nvJitLinkInputType inputType, const char *fileName)
{
    crm__link *l = crm__of(handle);
    if (l == NULL || fileName == NULL)
        return NVJITLINK_ERROR_NULL_INPUT;
    FILE *f = fopen(fileName, "rb");
    if (f == NULL)
        return NVJITLINK_ERROR_INVALID_INPUT;
    char *buf = NULL;
    size_t size = 0, cap = 0, got;
    do {
        char *grown = size == cap ? realloc(buf, cap = cap ? cap * 2 : 65536) : buf;
        if (grown == NULL)
            break;
        buf = grown;
        got = fread(buf + size, 1, cap - size, f);
        size += got;
    } while (got > 0);
    fclose(f);
    nvJitLinkResult rc = buf != NULL ? crm__keep(l, inputType, buf, size, fileName) : NVJITLINK_ERROR_INTERNAL;
    free(buf);
    return rc;
}

/* The one input is PTX (given as such, or ANY whose text declares .version), and no
 * option asks for link-time optimisation. */
static int crm__ptx_only(const crm__link *l)
{
    if (l->ninputs != 1)
        return 0;
    for (uint32_t i = 0; i < l->noptions; i++)
        if (strncmp(l->options[i], "-lto", 4) == 0)
            return 0;
    const crm__input *in = &l->inputs[0];
    return in->type == NVJITLINK_INPUT_PTX ||
           (in->type == NVJITLINK_INPUT_ANY && in->size > 8 && memmem(in->data, in->size, ".version", 8) != NULL);
}

/* Hands the link to NVIDIA's nvJitLink: its options and inputs, then its Complete. */
static nvJitLinkResult crm__hand_over(crm__link *l)
{
    crm__create_fn create = (crm__create_fn)crm__real("nvJitLinkCreate");
    crm__add_fn add = (crm__add_fn)crm__real("nvJitLinkAddData");
    crm__one_fn complete = (crm__one_fn)crm__real("nvJitLinkComplete");
    if (create == NULL || add == NULL || complete == NULL) {
        snprintf(l->error, sizeof l->error, "cudarem: this link needs NVIDIA's nvJitLink, which this client lacks");
        crm_warn("%s", l->error);
        return NVJITLINK_ERROR_INTERNAL;
    }
    nvJitLinkResult rc = create(&l->real, l->noptions, (const char **)l->options);
    for (size_t i = 0; rc == NVJITLINK_SUCCESS && i < l->ninputs; i++)
        rc = add(l->real, l->inputs[i].type, l->inputs[i].data, l->inputs[i].size, l->inputs[i].name);
    return rc == NVJITLINK_SUCCESS ? complete(l->real) : rc;
}

CRM_EXPORT nvJitLinkResult nvJitLinkComplete(nvJitLinkHandle handle)
{
    crm__link *l = crm__of(handle);
    if (l == NULL)
        return NVJITLINK_ERROR_NULL_INPUT;
    if (l->real != NULL || l->ptx != NULL)
        return NVJITLINK_SUCCESS;
    if (!crm__ptx_only(l))
        return crm__hand_over(l);
    const crm__input *in = &l->inputs[0];
    size_t len = strnlen(in->data, in->size);
    if ((l->ptx = malloc(len + 1)) == NULL)
        return NVJITLINK_ERROR_INTERNAL;
    memcpy(l->ptx, in->data, len);
    l->ptx[len] = '\0';
    l->ptx_size = len + 1;
    return NVJITLINK_SUCCESS;
}

/* A size query: NVIDIA's answer for a handed-over link, else what was kept. */
static nvJitLinkResult crm__size(nvJitLinkHandle handle, const char *real_name, size_t *size, size_t kept)
{
    crm__link *l = crm__of(handle);
    if (l == NULL || size == NULL)
        return NVJITLINK_ERROR_NULL_INPUT;
    if (l->real != NULL) {
        crm__size_fn f = (crm__size_fn)crm__real(real_name);
        return f != NULL ? f(l->real, size) : NVJITLINK_ERROR_INTERNAL;
    }
    *size = kept;
    return NVJITLINK_SUCCESS;
}

static nvJitLinkResult crm__copy(nvJitLinkHandle handle, const char *real_name, void *out, const char *kept,
                                 size_t size)
{
    crm__link *l = crm__of(handle);
    if (l == NULL || out == NULL)
        return NVJITLINK_ERROR_NULL_INPUT;
    if (l->real != NULL) {
        crm__get_fn f = (crm__get_fn)crm__real(real_name);
        return f != NULL ? f(l->real, out) : NVJITLINK_ERROR_INTERNAL;
    }
    memcpy(out, kept, size);
    return NVJITLINK_SUCCESS;
}

/* The kept PTX is the linked "cubin": the module the program loads from it carries PTX. */
CRM_EXPORT nvJitLinkResult nvJitLinkGetLinkedCubinSize(nvJitLinkHandle handle, size_t *size)
{
    crm__link *l = crm__of(handle);
    if (l != NULL && l->real == NULL && l->ptx == NULL)
        return NVJITLINK_ERROR_INVALID_INPUT; /* not completed */
    return crm__size(handle, "nvJitLinkGetLinkedCubinSize", size, l != NULL ? l->ptx_size : 0);
}

CRM_EXPORT nvJitLinkResult nvJitLinkGetLinkedCubin(nvJitLinkHandle handle, void *cubin)
{
    crm__link *l = crm__of(handle);
    if (l != NULL && l->real == NULL && l->ptx == NULL)
        return NVJITLINK_ERROR_INVALID_INPUT;
    return crm__copy(handle, "nvJitLinkGetLinkedCubin", cubin, l != NULL ? l->ptx : NULL, l != NULL ? l->ptx_size : 0);
}

CRM_EXPORT nvJitLinkResult nvJitLinkGetLinkedPtxSize(nvJitLinkHandle handle, size_t *size)
{
    crm__link *l = crm__of(handle);
    if (l != NULL && l->real == NULL)
        return nvJitLinkGetLinkedCubinSize(handle, size);
    return crm__size(handle, "nvJitLinkGetLinkedPtxSize", size, 0);
}

CRM_EXPORT nvJitLinkResult nvJitLinkGetLinkedPtx(nvJitLinkHandle handle, char *ptx)
{
    crm__link *l = crm__of(handle);
    if (l != NULL && l->real == NULL)
        return nvJitLinkGetLinkedCubin(handle, ptx);
    return crm__copy(handle, "nvJitLinkGetLinkedPtx", ptx, NULL, 0);
}

CRM_EXPORT nvJitLinkResult nvJitLinkGetErrorLogSize(nvJitLinkHandle handle, size_t *size)
{
    crm__link *l = crm__of(handle);
    return crm__size(handle, "nvJitLinkGetErrorLogSize", size, l != NULL ? strlen(l->error) + 1 : 0);
}

CRM_EXPORT nvJitLinkResult nvJitLinkGetErrorLog(nvJitLinkHandle handle, char *log)
{
    crm__link *l = crm__of(handle);
    return crm__copy(handle, "nvJitLinkGetErrorLog", log, l != NULL ? l->error : NULL,
                     l != NULL ? strlen(l->error) + 1 : 0);
}

CRM_EXPORT nvJitLinkResult nvJitLinkGetInfoLogSize(nvJitLinkHandle handle, size_t *size)
{
    return crm__size(handle, "nvJitLinkGetInfoLogSize", size, 1);
}

CRM_EXPORT nvJitLinkResult nvJitLinkGetInfoLog(nvJitLinkHandle handle, char *log)
{
    return crm__copy(handle, "nvJitLinkGetInfoLog", log, "", 1);
}

CRM_EXPORT nvJitLinkResult nvJitLinkGetLinkedLTOIRSize(nvJitLinkHandle handle, size_t *size)
{
    crm__link *l = crm__of(handle);
    return l != NULL && l->real == NULL ? NVJITLINK_ERROR_LTO_NOT_ENABLED
                                        : crm__size(handle, "nvJitLinkGetLinkedLTOIRSize", size, 0);
}

CRM_EXPORT nvJitLinkResult nvJitLinkGetLinkedLTOIR(nvJitLinkHandle handle, void *ltoir)
{
    crm__link *l = crm__of(handle);
    return l != NULL && l->real == NULL ? NVJITLINK_ERROR_LTO_NOT_ENABLED
                                        : crm__copy(handle, "nvJitLinkGetLinkedLTOIR", ltoir, NULL, 0);
}

CRM_EXPORT nvJitLinkResult nvJitLinkDestroy(nvJitLinkHandle *handle)
{
    if (handle == NULL || *handle == NULL)
        return NVJITLINK_ERROR_NULL_INPUT;
    crm__link *l = crm__of(*handle);
    crm__ptr_fn destroy = l->real != NULL ? (crm__ptr_fn)crm__real("nvJitLinkDestroy") : NULL;
    if (destroy != NULL)
        destroy(&l->real);
    for (uint32_t i = 0; i < l->noptions; i++)
        free(l->options[i]);
    for (size_t i = 0; i < l->ninputs; i++) {
        free(l->inputs[i].data);
        free(l->inputs[i].name);
    }
    free(l->options);
    free(l->inputs);
    free(l->ptx);
    free(l);
    *handle = NULL;
    return NVJITLINK_SUCCESS;
}

/* NVIDIA's version when it is here (callers check it for the inputs they make),
 * else the toolkit's this shim was built with. */
CRM_EXPORT nvJitLinkResult nvJitLinkVersion(unsigned int *major, unsigned int *minor)
{
    typedef nvJitLinkResult (*version_fn)(unsigned int *, unsigned int *);
    version_fn real = (version_fn)crm__real("nvJitLinkVersion");
    if (major == NULL || minor == NULL)
        return NVJITLINK_ERROR_NULL_INPUT;
    if (real != NULL)
        return real(major, minor);
    *major = 13;
    *minor = 0;
    return NVJITLINK_SUCCESS;
}
