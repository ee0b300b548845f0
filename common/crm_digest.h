/* crm_digest.h -- SHA-256 of a device code image (libcrypto), the key of the
 * server's module cache; both ends compute it the same way. */
#ifndef CRM_DIGEST_H
#define CRM_DIGEST_H

#include <stddef.h>

#define CRM_DIGEST_LEN 32

/* Hashes data[0..len) into out; 0, or -1 when libcrypto fails. */
int crm_sha256(const void *data, size_t len, unsigned char out[CRM_DIGEST_LEN]);
/* Lower-case hex of a digest into hex (2 * CRM_DIGEST_LEN + 1 bytes). */
void crm_sha256_hex(const unsigned char d[CRM_DIGEST_LEN], char *hex);

#endif
