/* crm_emu_dnn_dropout.c -- dropout on the emulated device: the descriptor functions
 * (common/crm_dnn_dropout_api.c.inc), the size queries and both passes.
 *
 * The generator's state in device memory is two 64-bit words, a key and a counter:
 * Set writes key = seed, counter = 0; each forward pass draws one number per element
 * from splitmix64(key, counter + element) and advances the counter by the element
 * count, so two passes differ and the same seed gives the same sequence again. An
 * element is kept when its draw (uniform in [0, 1)) is at least the rate, and then
 * scaled by 1 / (1 - rate); the reserve space holds one byte per element, 1 where
 * kept, which the backward pass applies to the gradient. A descriptor set without a
 * state (rate 0, PyTorch's "no dropout") copies x to y and draws nothing.
 */
#include <string.h>
#include "server/emu/crm_emu_dnn.h"

#define CRM__DROPOUT_STATE_BYTES 64 /* what cudnnDropoutGetStatesSize answers */

typedef struct crm__dropout_state {
    uint64_t key, counter;
} crm__dropout_state;

static int crm__dropout_handle(cudnnHandle_t h)
{
    return crm__dnn_handle_ok(h);
}

static cudnnStatus_t crm__dropout_seed(cudnnHandle_t h, const crm_dnn_ddesc *d)
{
    if (!crm__dnn_handle_ok(h))
        return CUDNN_STATUS_BAD_PARAM;
    if (d->states == 0)
        return CUDNN_STATUS_SUCCESS;
    if (d->state_bytes < CRM__DROPOUT_STATE_BYTES)
        return CUDNN_STATUS_BAD_PARAM;
    crm__dropout_state s = {.key = d->seed, .counter = 0};
    void *p = (void *)(uintptr_t)d->states;
    cudnnStatus_t st = CUDNN_STATUS_EXECUTION_FAILED;
    crm__emu_rdlock();
    if (crm__mem_range(p, CRM__DROPOUT_STATE_BYTES, NULL)) {
        memcpy(p, &s, sizeof s);
        st = CUDNN_STATUS_SUCCESS;
    }
    crm__emu_unlock();
    return st;
}

#include "common/crm_dnn_dropout_api.c.inc"

CRM_EXPORT cudnnStatus_t cudnnDropoutGetStatesSize(cudnnHandle_t handle, size_t *sizeInBytes)
{
    if (!crm__dnn_handle_ok(handle) || sizeInBytes == NULL)
        return CUDNN_STATUS_BAD_PARAM;
    *sizeInBytes = CRM__DROPOUT_STATE_BYTES;
    return CUDNN_STATUS_SUCCESS;
}

CRM_EXPORT cudnnStatus_t cudnnDropoutGetReserveSpaceSize(cudnnTensorDescriptor_t xdesc, size_t *sizeInBytes)
{
    if (xdesc == NULL || sizeInBytes == NULL || xdesc->d.nbdims == 0)
        return CUDNN_STATUS_BAD_PARAM;
    *sizeInBytes = (size_t)crm_dnn_tensor_elems(&xdesc->d);
    return CUDNN_STATUS_SUCCESS;
}

/* splitmix64 of key and n, as a uniform draw in [0, 1) (its top 53 bits). */
static double crm__dropout_draw(uint64_t key, uint64_t n)
{
    uint64_t z = key + (n + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

/* The argument rules both passes share: tensors of one shape and type, and a
 * reserve space of one byte per element. */
static cudnnStatus_t crm__dropout_args(cudnnHandle_t h, const cudnnDropoutDescriptor_t dd,
                                       const cudnnTensorDescriptor_t a, const cudnnTensorDescriptor_t b,
                                       const void *reserve, size_t reserve_bytes)
{
    if (!crm__dnn_handle_ok(h) || dd == NULL || a == NULL || b == NULL || reserve == NULL ||
        crm_dnn_dropout_check(&dd->d) != CUDNN_STATUS_SUCCESS || !crm__dnn_same_dims(&a->d, &b->d) ||
        a->d.dtype != b->d.dtype || a->d.nbdims == 0 || reserve_bytes < (size_t)crm_dnn_tensor_elems(&a->d))
        return CUDNN_STATUS_BAD_PARAM;
    return CUDNN_STATUS_SUCCESS;
}

/* Binds in and out and checks the reserve space's range; caller holds the lock. */
static cudnnStatus_t crm__dropout_bind(crm__dview *vin, const cudnnTensorDescriptor_t din, const void *in,
                                       crm__dview *vout, const cudnnTensorDescriptor_t dout, void *out,
                                       const void *reserve)
{
    cudnnStatus_t st;
    if ((st = crm__dnn_bind(vin, &din->d, in)) || (st = crm__dnn_bind(vout, &dout->d, out)))
        return st;
    return crm__mem_range(reserve, (size_t)crm_dnn_tensor_elems(&din->d), NULL) ? CUDNN_STATUS_SUCCESS
                                                                             : CUDNN_STATUS_EXECUTION_FAILED;
}

static double crm__dropout_scale(float rate)
{
    return rate < 1.0f ? 1.0 / (1.0 - (double)rate) : 0.0;
}

CRM_EXPORT cudnnStatus_t cudnnDropoutForward(cudnnHandle_t handle, const cudnnDropoutDescriptor_t dropoutDesc,
                                             const cudnnTensorDescriptor_t xdesc, const void *x,
                                             const cudnnTensorDescriptor_t ydesc, void *y, void *reserveSpace,
                                             size_t reserveSpaceSizeInBytes)
{
    crm__dview vx, vy;
    cudnnStatus_t st = crm__dropout_args(handle, dropoutDesc, xdesc, ydesc, reserveSpace, reserveSpaceSizeInBytes);
    if (st == CUDNN_STATUS_SUCCESS && dropoutDesc->d.states == 0 && dropoutDesc->d.rate != 0.0f)
        st = CUDNN_STATUS_BAD_PARAM; /* nothing to draw from: only a rate of 0 runs without a state */
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    crm__dropout_state *gen = (crm__dropout_state *)(uintptr_t)dropoutDesc->d.states;
    double rate = dropoutDesc->d.rate, scale = crm__dropout_scale(dropoutDesc->d.rate);
    crm__emu_rdlock();
    st = crm__dropout_bind(&vx, xdesc, x, &vy, ydesc, y, reserveSpace);
    if (st == CUDNN_STATUS_SUCCESS && gen != NULL && !crm__mem_range(gen, sizeof *gen, NULL))
        st = CUDNN_STATUS_EXECUTION_FAILED;
    if (st == CUDNN_STATUS_SUCCESS) {
        crm__dropout_state s = gen != NULL ? *gen : (crm__dropout_state){0, 0};
        uint8_t *mask = reserveSpace;
        int idx[CRM_DNN_MAXDIM] = {0};
        uint64_t n = 0;
        do {
            int keep = crm__dropout_draw(s.key, s.counter + n) >= rate;
            double v = keep ? crm__dnn_load(&vx, crm__dnn_off(vx.d, idx)) * scale : 0.0;
            crm__dnn_store(&vy, crm__dnn_off(vy.d, idx), v);
            mask[n++] = (uint8_t)keep;
        } while (crm__dnn_next(vx.d->nbdims, vx.d->dims, idx));
        if (gen != NULL)
            gen->counter = s.counter + n;
    }
    crm__emu_unlock();
    return st;
}

CRM_EXPORT cudnnStatus_t cudnnDropoutBackward(cudnnHandle_t handle, const cudnnDropoutDescriptor_t dropoutDesc,
                                              const cudnnTensorDescriptor_t dydesc, const void *dy,
                                              const cudnnTensorDescriptor_t dxdesc, void *dx, void *reserveSpace,
                                              size_t reserveSpaceSizeInBytes)
{
    crm__dview vdy, vdx;
    cudnnStatus_t st = crm__dropout_args(handle, dropoutDesc, dydesc, dxdesc, reserveSpace, reserveSpaceSizeInBytes);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    double scale = crm__dropout_scale(dropoutDesc->d.rate);
    crm__emu_rdlock();
    st = crm__dropout_bind(&vdy, dydesc, dy, &vdx, dxdesc, dx, reserveSpace);
    if (st == CUDNN_STATUS_SUCCESS) {
        const uint8_t *mask = reserveSpace;
        int idx[CRM_DNN_MAXDIM] = {0};
        uint64_t n = 0;
        do {
            double g = mask[n++] ? crm__dnn_load(&vdy, crm__dnn_off(vdy.d, idx)) * scale : 0.0;
            crm__dnn_store(&vdx, crm__dnn_off(vdx.d, idx), g);
        } while (crm__dnn_next(vdy.d->nbdims, vdy.d->dims, idx));
    }
    crm__emu_unlock();
    return st;
}
