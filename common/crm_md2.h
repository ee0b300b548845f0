/* crm_md2.h -- MD2 (RFC 1319) and HMAC-MD2 (RFC 2104 over MD2's 16-byte block).
 * Not for security: NVIDIA's runtime checks its driver with an HMAC-MD2 of a few
 * process facts (interpose/crm_drv_export.c), and this is what answers it. */
#ifndef CRM_MD2_H
#define CRM_MD2_H

#include <stddef.h>

typedef struct crm_md2 {
    unsigned char x[48];        /* the state: digest, block, and their xor */
    unsigned char sum[16];      /* the running checksum */
    unsigned char buf[16];      /* bytes of the block being filled */
    size_t used;                /* how many */
} crm_md2;

void crm_md2_init(crm_md2 *c);
void crm_md2_update(crm_md2 *c, const void *data, size_t len);
void crm_md2_final(crm_md2 *c, unsigned char digest[16]);

/* HMAC-MD2 of msg under a key of at most 16 bytes. */
void crm_hmac_md2(const unsigned char *key, size_t keylen, const void *msg, size_t len, unsigned char mac[16]);

#endif
