/* crm_bulk.c -- XDR for bulk payloads: raw rows after a header, no staging copy. */
#include <stdlib.h>
#include <string.h>
#include "protocol/crm_bulk.h"

crm_h2d_sink_fn crm_h2d_sink = NULL;
crm_payload_stats crm_bulk_sent, crm_bulk_received;

#define CRM_BULK_PIECE (1u << 30)   /* XDR_GETBYTES/PUTBYTES take a u_int */

bool_t crm_bulk_size(uint64_t width, uint64_t height, uint64_t *bytes)
{
    if (width != 0 && height > CRM_BULK_MAX / width)
        return FALSE;
    *bytes = width * height;
    return TRUE;
}

static bool_t crm__get(XDR *xdrs, char *dst, uint64_t n)
{
    while (n > 0) {
        u_int piece = n > CRM_BULK_PIECE ? CRM_BULK_PIECE : (u_int)n;
        if (!XDR_GETBYTES(xdrs, dst, piece))
            return FALSE;
        dst += piece;
        n -= piece;
    }
    return TRUE;
}

static bool_t crm__put(XDR *xdrs, const char *src, uint64_t n)
{
    while (n > 0) {
        u_int piece = n > CRM_BULK_PIECE ? CRM_BULK_PIECE : (u_int)n;
        if (!XDR_PUTBYTES(xdrs, src, piece))
            return FALSE;
        src += piece;
        n -= piece;
    }
    return TRUE;
}

bool_t crm_bulk_get_rows(XDR *xdrs, char *dst, uint64_t pitch, uint64_t width, uint64_t height)
{
    if (pitch == width)
        return crm__get(xdrs, dst, width * height);
    for (uint64_t row = 0; row < height; row++)
        if (!crm__get(xdrs, dst + row * pitch, width))
            return FALSE;
    return TRUE;
}

bool_t crm_bulk_put_rows(XDR *xdrs, const char *src, uint64_t pitch, uint64_t width, uint64_t height)
{
    if (pitch == width)
        return crm__put(xdrs, src, width * height);
    for (uint64_t row = 0; row < height; row++)
        if (!crm__put(xdrs, src + row * pitch, width))
            return FALSE;
    return TRUE;
}

bool_t crm_bulk_skip(XDR *xdrs, uint64_t n)
{
    char scratch[16384];
    while (n > 0) {
        uint64_t piece = n > sizeof scratch ? sizeof scratch : n;
        if (!XDR_GETBYTES(xdrs, scratch, (u_int)piece))
            return FALSE;
        n -= piece;
    }
    return TRUE;
}

static bool_t crm__h2d_header(XDR *xdrs, crm_h2d_args *a)
{
    return xdr_uint64_t(xdrs, &a->dst) && xdr_uint64_t(xdrs, &a->dpitch) &&
           xdr_uint64_t(xdrs, &a->width) && xdr_uint64_t(xdrs, &a->height) &&
           xdr_uint64_t(xdrs, &a->stream) && xdr_int32_t(xdrs, &a->async);
}

/* Decodes the payload through the server's sink, or into an owned buffer. */
static bool_t crm__h2d_decode(XDR *xdrs, crm_h2d_args *a, uint64_t bytes)
{
    crm_rows_writer rw;
    a->status = 0;
    a->data = NULL;
    if (crm_h2d_sink != NULL)
        return crm_h2d_sink(xdrs, a);
    if (bytes > 0 && (a->data = malloc(bytes)) == NULL)
        return FALSE;
    crm_rows_writer_init(&rw, a->data, a->width, a->width, a->height);
    return crm_payload_get(xdrs, bytes, &rw.w, &crm_bulk_received);
}

bool_t xdr_crm_h2d_args(XDR *xdrs, crm_h2d_args *a)
{
    uint64_t bytes;
    if (xdrs->x_op == XDR_FREE) {
        free(a->data);
        a->data = NULL;
        return TRUE;
    }
    if (!crm__h2d_header(xdrs, a) || !crm_bulk_size(a->width, a->height, &bytes))
        return FALSE;
    if (xdrs->x_op == XDR_ENCODE)
        return crm_payload_put(xdrs, a->src, a->spitch, a->width, a->height, a->level, &crm_bulk_sent);
    return crm__h2d_decode(xdrs, a, bytes);
}

/* Decodes into the preset destination rows, checking the length first. */
static bool_t crm__d2h_decode(XDR *xdrs, crm_d2h_res *r)
{
    crm_rows_writer rw;
    if (r->dst == NULL) {
        if (r->len > CRM_BULK_MAX)
            return FALSE;
        if (r->len == 0)
            return TRUE;
        if ((r->owned = malloc(r->len)) == NULL)
            return FALSE;
        crm_rows_writer_init(&rw, r->owned, r->len, r->len, r->len ? 1 : 0);
        return crm_payload_get(xdrs, r->len, &rw.w, &crm_bulk_received);
    }
    uint64_t expected;
    if (!crm_bulk_size(r->width, r->height, &expected) || (r->len != expected && r->len != 0))
        return FALSE;
    if (r->len == 0)
        return TRUE;
    crm_rows_writer_init(&rw, r->dst, r->dpitch, r->width, r->height);
    return crm_payload_get(xdrs, r->len, &rw.w, &crm_bulk_received);
}

bool_t xdr_crm_d2h_res(XDR *xdrs, crm_d2h_res *r)
{
    if (xdrs->x_op == XDR_FREE) {
        free(r->owned);
        r->owned = NULL;
        return TRUE;
    }
    if (!xdr_uint64_t(xdrs, &r->len))
        return FALSE;
    if (xdrs->x_op == XDR_ENCODE && r->len > 0 && r->produce != NULL)
        return crm_payload_put_produced(xdrs, r->len, r->produce, r->produce_ctx, r->level, &crm_bulk_sent);
    if (xdrs->x_op == XDR_ENCODE)
        return r->len == 0 || crm_payload_put(xdrs, r->src, r->len, r->len, 1, r->level, &crm_bulk_sent);
    return crm__d2h_decode(xdrs, r);
}
