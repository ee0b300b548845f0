/* crm_md2.c -- MD2 as RFC 1319 describes it, and HMAC over it (crm_md2.h). */
#include <string.h>
#include "common/crm_md2.h"

/* RFC 1319's permutation of 0..255, built from the digits of pi. */
static const unsigned char crm__pi_subst[256] = {
    41,  46,  67,  201, 162, 216, 124, 1,   61,  54,  84,  161, 236, 240, 6,   19,  98,  167, 5,   243, 192, 199,
    115, 140, 152, 147, 43,  217, 188, 76,  130, 202, 30,  155, 87,  60,  253, 212, 224, 22,  103, 66,  111, 24,
    138, 23,  229, 18,  190, 78,  196, 214, 218, 158, 222, 73,  160, 251, 245, 142, 187, 47,  238, 122, 169, 104,
    121, 145, 21,  178, 7,   63,  148, 194, 16,  137, 11,  34,  95,  33,  128, 127, 93,  154, 90,  144, 50,  39,
    53,  62,  204, 231, 191, 247, 151, 3,   255, 25,  48,  179, 72,  165, 181, 209, 215, 94,  146, 42,  172, 86,
    170, 198, 79,  184, 56,  210, 150, 164, 125, 182, 118, 252, 107, 226, 156, 116, 4,   241, 69,  157, 112, 89,
    100, 113, 135, 32,  134, 91,  207, 101, 230, 45,  168, 2,   27,  96,  37,  173, 174, 176, 185, 246, 28,  70,
    97,  105, 52,  64,  126, 15,  85,  71,  163, 35,  221, 81,  175, 58,  195, 92,  249, 206, 186, 197, 234, 38,
    44,  83,  13,  110, 133, 40,  132, 9,   211, 223, 205, 244, 65,  129, 77,  82,  106, 220, 55,  200, 108, 193,
    171, 250, 36,  225, 123, 8,   12,  189, 177, 74,  120, 136, 149, 139, 227, 99,  232, 109, 233, 203, 213, 254,
    59,  0,   29,  57,  242, 239, 183, 14,  102, 88,  208, 228, 166, 119, 114, 248, 235, 117, 75,  10,  49,  68,
    80,  180, 143, 237, 31,  26,  219, 153, 141, 51,  159, 17,  131, 20,
};

void crm_md2_init(crm_md2 *c)
{
    memset(c, 0, sizeof *c);
}

/* Mixes one 16-byte block into the state and the checksum. */
static void crm__block(crm_md2 *c, const unsigned char *m)
{
    unsigned char t = 0;
    for (int j = 0; j < 16; j++) {
        c->x[16 + j] = m[j];
        c->x[32 + j] = (unsigned char)(m[j] ^ c->x[j]);
    }
    for (int round = 0; round < 18; round++) {
        for (int k = 0; k < 48; k++)
            t = c->x[k] ^= crm__pi_subst[t];
        t = (unsigned char)(t + round);
    }
    unsigned char l = c->sum[15];
    for (int j = 0; j < 16; j++)
        l = c->sum[j] ^= crm__pi_subst[m[j] ^ l];
}

void crm_md2_update(crm_md2 *c, const void *data, size_t len)
{
    const unsigned char *p = data;
    while (len > 0) {
        size_t n = 16 - c->used < len ? 16 - c->used : len;
        memcpy(c->buf + c->used, p, n);
        c->used += n, p += n, len -= n;
        if (c->used == 16) {
            crm__block(c, c->buf);
            c->used = 0;
        }
    }
}

void crm_md2_final(crm_md2 *c, unsigned char digest[16])
{
    unsigned char pad[16], sum[16];
    size_t n = 16 - c->used; /* 1 to 16 bytes of value n */
    memset(pad, (int)n, n);
    crm_md2_update(c, pad, n);
    memcpy(sum, c->sum, 16);
    crm__block(c, sum);
    memcpy(digest, c->x, 16);
}

void crm_hmac_md2(const unsigned char *key, size_t keylen, const void *msg, size_t len, unsigned char mac[16])
{
    unsigned char k[16] = {0}, pad[16], inner[16];
    crm_md2 c;
    memcpy(k, key, keylen < 16 ? keylen : 16);
    for (int i = 0; i < 16; i++)
        pad[i] = (unsigned char)(k[i] ^ 0x36);
    crm_md2_init(&c);
    crm_md2_update(&c, pad, 16);
    crm_md2_update(&c, msg, len);
    crm_md2_final(&c, inner);
    for (int i = 0; i < 16; i++)
        pad[i] = (unsigned char)(k[i] ^ 0x5c);
    crm_md2_init(&c);
    crm_md2_update(&c, pad, 16);
    crm_md2_update(&c, inner, 16);
    crm_md2_final(&c, mac);
}
