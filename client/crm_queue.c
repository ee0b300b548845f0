/* crm_queue.c -- a growable buffer of XDR-encoded calls. */
#include <stdlib.h>
#include <string.h>
#include "client/crm_queue.h"

static int crm__reserve(crm_queue *q, size_t more)
{
    if (q->cap - q->len >= more)
        return 0;
    size_t cap = q->cap ? q->cap : 65536;
    while (cap - q->len < more)
        cap *= 2;
    char *buf = realloc(q->buf, cap);
    if (buf == NULL)
        return -1;
    q->buf = buf;
    q->cap = cap;
    return 0;
}

static int crm__note_api(crm_queue *q, int api, uint64_t owner)
{
    if (q->count == q->apis_cap) {
        unsigned cap = q->apis_cap ? q->apis_cap * 2 : 256;
        int *apis = realloc(q->apis, cap * sizeof *apis);
        if (apis != NULL)
            q->apis = apis;
        uint64_t *owners = apis != NULL ? realloc(q->owners, cap * sizeof *owners) : NULL;
        if (owners == NULL)
            return -1;
        q->owners = owners;
        q->apis_cap = cap;
    }
    q->apis[q->count] = api;
    q->owners[q->count] = owner;
    return 0;
}

int crm_queue_push(crm_queue *q, crm_call *call, uint64_t owner)
{
    XDR x;
    size_t size = xdr_sizeof((xdrproc_t)xdr_crm_call, call);
    if (size == 0 || crm__reserve(q, size) != 0 || crm__note_api(q, call->api, owner) != 0)
        return -1;
    xdrmem_create(&x, q->buf + q->len, (u_int)size, XDR_ENCODE);
    int ok = xdr_crm_call(&x, call) && xdr_getpos(&x) == size;
    xdr_destroy(&x);
    if (!ok)
        return -1;
    q->len += size;
    q->count++;
    return 0;
}

bool_t crm_queue_put(XDR *xdrs, const crm_queue *q)
{
    size_t done = 0;
    while (done < q->len) {
        size_t piece = q->len - done > (1u << 30) ? (1u << 30) : q->len - done;
        if (!XDR_PUTBYTES(xdrs, q->buf + done, (u_int)piece))
            return FALSE;
        done += piece;
    }
    return TRUE;
}

void crm_queue_clear(crm_queue *q)
{
    q->len = 0;
    q->count = 0;
}

void crm_queue_free(crm_queue *q)
{
    free(q->buf);
    free(q->apis);
    free(q->owners);
    memset(q, 0, sizeof *q);
}
