/* crm_digest.c -- SHA-256 through libcrypto's EVP interface. */
#include <openssl/evp.h>
#include <stdio.h>
#include "common/crm_digest.h"

int crm_sha256(const void *data, size_t len, unsigned char out[CRM_DIGEST_LEN])
{
    unsigned int n = 0;
    if (EVP_Digest(data, len, out, &n, EVP_sha256(), NULL) != 1 || n != CRM_DIGEST_LEN)
        return -1;
    return 0;
}

void crm_sha256_hex(const unsigned char d[CRM_DIGEST_LEN], char *hex)
{
    for (int i = 0; i < CRM_DIGEST_LEN; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
}
