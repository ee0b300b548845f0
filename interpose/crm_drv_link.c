/* crm_drv_link.c -- the driver's linker (cuLinkCreate, cuLinkAddData/File,
 * cuLinkComplete, cuLinkDestroy) on a client that has no device to link for.
 *
 * Inputs are kept as they are given; the result of linking one input is that input
 * (PTX stays PTX, a cubin or fatbinary stays one), which cuModuleLoadData then ships
 * to the server, whose driver compiles it for its device. Linking several inputs
 * together (relocatable device code, libcudadevrt) needs a device linker and answers
 * CUDA_ERROR_NOT_SUPPORTED with a log line naming what was asked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/crm_image.h"
#include "common/crm_log.h"
#include "interpose/crm_drv.h"
#include "interpose/crm_export.h"

struct CUlinkState_st {
    unsigned magic;
    unsigned char *input;     /* the one input so far (owned), NULL when none */
    size_t len;
    int inputs;               /* how many were added */
    unsigned char *output;    /* what cuLinkComplete handed out (owned) */
};

#define CRM__LINK_MAGIC 0x4c696e6bu

static int crm__valid(CUlinkState s)
{
    return s != NULL && s->magic == CRM__LINK_MAGIC;
}

static CUresult crm__create(CUlinkState *state)
{
    CUresult rc = crm_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (state == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUlinkState_st *s = calloc(1, sizeof *s);
    if (s == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    s->magic = CRM__LINK_MAGIC;
    *state = s;
    return CUDA_SUCCESS;
}

/* JIT options tune the server's compiler; they are not forwarded. */
CRM_EXPORT CUresult cuLinkCreate_v2(unsigned int numOptions, CUjit_option *options, void **optionValues,
                                    CUlinkState *stateOut)
{
    (void)numOptions, (void)options, (void)optionValues;
    return crm__create(stateOut);
}

static CUresult crm__add(CUlinkState s, CUjitInputType type, const void *data, size_t size, const char *name)
{
    if (!crm__valid(s) || data == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (type != CU_JIT_INPUT_PTX && type != CU_JIT_INPUT_CUBIN && type != CU_JIT_INPUT_FATBINARY) {
        crm_warn("cuLinkAddData: input %s of type %d (object, library or NVVM) needs a device linker; not "
                 "supported by cudarem", name ? name : "?", (int)type);
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    if (s->inputs++ > 0) {
        crm_warn("cuLinkAddData: linking several inputs (%s is the second) needs a device linker; not "
                 "supported by cudarem", name ? name : "?");
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    if (type == CU_JIT_INPUT_PTX && (size == 0 || ((const char *)data)[size - 1] != '\0'))
        size = strnlen(data, size ? size : CRM_IMAGE_BYTES_MAX) + 1; /* the NUL belongs to PTX */
    const void *inner;
    if (type != CU_JIT_INPUT_PTX && size == 0)
        size = crm_image_size(data, CRM_IMAGE_BYTES_MAX, &inner);
    if (size == 0 || (s->input = malloc(size)) == NULL)
        return size == 0 ? CUDA_ERROR_INVALID_IMAGE : CUDA_ERROR_OUT_OF_MEMORY;
    memcpy(s->input, data, size);
    if (type == CU_JIT_INPUT_PTX)
        s->input[size - 1] = '\0';
    s->len = size;
    return CUDA_SUCCESS;
}

CRM_EXPORT CUresult cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void *data, size_t size,
                                     const char *name, unsigned int numOptions, CUjit_option *options,
                                     void **optionValues)
{
    (void)numOptions, (void)options, (void)optionValues;
    return crm__add(state, type, data, size, name);
}

CRM_EXPORT CUresult cuLinkAddFile_v2(CUlinkState state, CUjitInputType type, const char *path,
                                     unsigned int numOptions, CUjit_option *options, void **optionValues)
{
    (void)numOptions, (void)options, (void)optionValues;
    if (path == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return CUDA_ERROR_FILE_NOT_FOUND;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = len >= 0 ? malloc((size_t)len + 1) : NULL;
    CUresult rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (buf != NULL && fread(buf, 1, (size_t)len, f) == (size_t)len) {
        buf[len] = '\0';
        rc = crm__add(state, type, buf, type == CU_JIT_INPUT_PTX ? (size_t)len + 1 : (size_t)len, path);
    }
    free(buf);
    fclose(f);
    return rc;
}

CRM_EXPORT CUresult cuLinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut)
{
    if (!crm__valid(state) || cubinOut == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (state->input == NULL)
        return CUDA_ERROR_INVALID_VALUE; /* nothing to link */
    free(state->output);
    state->output = state->input; /* owned by the state until cuLinkDestroy */
    state->input = NULL;
    *cubinOut = state->output;
    if (sizeOut != NULL)
        *sizeOut = state->len;
    return CUDA_SUCCESS;
}

CRM_EXPORT CUresult cuLinkDestroy(CUlinkState state)
{
    if (!crm__valid(state))
        return CUDA_ERROR_INVALID_VALUE;
    state->magic = 0;
    free(state->input);
    free(state->output);
    free(state);
    return CUDA_SUCCESS;
}

/* The CUDA 5.5 forms: the same arguments. */
#undef cuLinkCreate
#undef cuLinkAddData
#undef cuLinkAddFile

CRM_EXPORT CUresult cuLinkCreate(unsigned int numOptions, CUjit_option *options, void **optionValues,
                                 CUlinkState *stateOut)
{
    return cuLinkCreate_v2(numOptions, options, optionValues, stateOut);
}

CRM_EXPORT CUresult cuLinkAddData(CUlinkState state, CUjitInputType type, void *data, size_t size, const char *name,
                                  unsigned int numOptions, CUjit_option *options, void **optionValues)
{
    return cuLinkAddData_v2(state, type, data, size, name, numOptions, options, optionValues);
}

CRM_EXPORT CUresult cuLinkAddFile(CUlinkState state, CUjitInputType type, const char *path, unsigned int numOptions,
                                  CUjit_option *options, void **optionValues)
{
    return cuLinkAddFile_v2(state, type, path, numOptions, options, optionValues);
}
