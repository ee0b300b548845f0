/* crm_auth.c -- token verifiers, proofs and signatures of the token exchange
 * (common/crm_auth.h), over libcrypto's HMAC-SHA256, SHA-256 and PBKDF2. */
#include <ctype.h>
#include <inttypes.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/crm_auth.h"

#define CRM__SCHEME "cudarem-sha256"
#define CRM__TRANSCRIPT_LABEL "cudarem-auth-1"

int crm_auth_user_valid(const char *name)
{
    size_t n = 0;
    for (; name[n] != '\0'; n++)
        if (!isalnum((unsigned char)name[n]) && name[n] != '.' && name[n] != '_' && name[n] != '-')
            return 0;
    return n >= 1 && n <= CRM_AUTH_USER_MAX;
}

int crm_auth_token_parse(const char *token, const char *default_user, char *user, char *secret, char *err,
                         size_t errlen)
{
    const char *colon = strchr(token, ':');
    const char *s = colon ? colon + 1 : token;
    size_t ulen = colon ? (size_t)(colon - token) : strlen(default_user ? default_user : "");
    size_t slen = strlen(s);
    while (slen > 0 && isspace((unsigned char)s[slen - 1]))
        slen--;
    if (ulen > CRM_AUTH_USER_MAX) {
        snprintf(err, errlen, "the token's user name is longer than %d characters", CRM_AUTH_USER_MAX);
        return -1;
    }
    memcpy(user, colon ? token : default_user, ulen);
    user[ulen] = '\0';
    if (!crm_auth_user_valid(user)) {
        snprintf(err, errlen, "the token's user name '%s' is not 1-%d of A-Z a-z 0-9 . _ -", user,
                 CRM_AUTH_USER_MAX);
        return -1;
    }
    if (slen == 0 || slen > CRM_AUTH_SECRET_MAX) {
        snprintf(err, errlen, "the token's secret (after 'USER:') is %s", slen ? "too long" : "empty");
        return -1;
    }
    memcpy(secret, s, slen);
    secret[slen] = '\0';
    return 0;
}

static int crm__hmac(const unsigned char *key, size_t keylen, const void *data, size_t len, unsigned char *out)
{
    unsigned int n = 0;
    return HMAC(EVP_sha256(), key, (int)keylen, data, len, out, &n) != NULL && n == CRM_AUTH_KEY_LEN ? 0 : -1;
}

static int crm__sha256(const void *data, size_t len, unsigned char *out)
{
    unsigned int n = 0;
    return EVP_Digest(data, len, out, &n, EVP_sha256(), NULL) == 1 && n == CRM_AUTH_KEY_LEN ? 0 : -1;
}

int crm_auth_derive(const char *secret, const unsigned char *salt, uint32_t iterations, crm_auth_verifier *v,
                    unsigned char *client_key)
{
    unsigned char salted[CRM_AUTH_KEY_LEN], ck[CRM_AUTH_KEY_LEN];
    int rc = -1;
    if (iterations >= 1 && iterations <= 10000000 &&
        PKCS5_PBKDF2_HMAC(secret, (int)strlen(secret), salt, CRM_AUTH_SALT_LEN, (int)iterations, EVP_sha256(),
                          CRM_AUTH_KEY_LEN, salted) == 1 &&
        crm__hmac(salted, sizeof salted, "Client Key", 10, ck) == 0 &&
        crm__hmac(salted, sizeof salted, "Server Key", 10, v->server_key) == 0 &&
        crm__sha256(ck, sizeof ck, v->stored_key) == 0) {
        v->iterations = iterations;
        memcpy(v->salt, salt, CRM_AUTH_SALT_LEN);
        if (client_key != NULL)
            memcpy(client_key, ck, sizeof ck);
        rc = 0;
    }
    OPENSSL_cleanse(salted, sizeof salted);
    OPENSSL_cleanse(ck, sizeof ck);
    return rc;
}

int crm_auth_verifier_new(const char *user, const char *secret, crm_auth_verifier *v)
{
    unsigned char salt[CRM_AUTH_SALT_LEN];
    if (!crm_auth_user_valid(user) || crm_auth_random(salt, sizeof salt) != 0)
        return -1;
    snprintf(v->user, sizeof v->user, "%s", user);
    v->admin = 0;
    return crm_auth_derive(secret, salt, CRM_AUTH_ITERATIONS, v, NULL);
}

static void crm__hex(const unsigned char *b, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
}

void crm_auth_verifier_format(const crm_auth_verifier *v, char *line)
{
    char salt[2 * CRM_AUTH_SALT_LEN + 1], stored[2 * CRM_AUTH_KEY_LEN + 1], server[2 * CRM_AUTH_KEY_LEN + 1];
    crm__hex(v->salt, sizeof v->salt, salt);
    crm__hex(v->stored_key, sizeof v->stored_key, stored);
    crm__hex(v->server_key, sizeof v->server_key, server);
    snprintf(line, CRM_AUTH_LINE_MAX, "%s:" CRM__SCHEME ":%" PRIu32 ":%s:%s:%s%s\n", v->user, v->iterations, salt,
             stored, server, v->admin ? ":" CRM_AUTH_ROLE_ADMIN : "");
}

static int crm__nibble(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Exactly 2 * n hex digits of field into out: 0 or -1. */
static int crm__unhex(const char *field, size_t flen, unsigned char *out, size_t n)
{
    if (flen != 2 * n)
        return -1;
    for (size_t i = 0; i < n; i++) {
        int hi = crm__nibble(field[2 * i]), lo = crm__nibble(field[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        out[i] = (unsigned char)(hi << 4 | lo);
    }
    return 0;
}

int crm_auth_verifier_parse(const char *line, crm_auth_verifier *v, char *err, size_t errlen)
{
    const char *f[6];
    size_t len[6];
    const char *p = line, *role = NULL;
    for (int i = 0; i < 6; i++) {
        const char *end = strchr(p, ':');
        if (i == 5 && end != NULL)
            role = end + 1; /* the optional seventh field */
        else if (i == 5)
            end = p + strlen(p);
        if (end == NULL) {
            snprintf(err, errlen, "expected USER:" CRM__SCHEME ":ITERATIONS:SALT:STOREDKEY:SERVERKEY[:" CRM_AUTH_ROLE_ADMIN "]");
            return -1;
        }
        f[i] = p;
        len[i] = (size_t)(end - p);
        p = end + 1;
    }
    if (role != NULL && strcmp(role, CRM_AUTH_ROLE_ADMIN) != 0) {
        snprintf(err, errlen, "unknown role '%.32s' (the only one is '" CRM_AUTH_ROLE_ADMIN "')", role);
        return -1;
    }
    v->admin = role != NULL;
    char num[16];
    char *end;
    if (len[0] > CRM_AUTH_USER_MAX || len[1] != strlen(CRM__SCHEME) || memcmp(f[1], CRM__SCHEME, len[1]) != 0) {
        snprintf(err, errlen, "unknown scheme or over-long user name (expected USER:" CRM__SCHEME ":...)");
        return -1;
    }
    memcpy(v->user, f[0], len[0]);
    v->user[len[0]] = '\0';
    snprintf(num, sizeof num, "%.*s", (int)(len[2] < 15 ? len[2] : 15), f[2]);
    unsigned long iter = strtoul(num, &end, 10);
    if (!crm_auth_user_valid(v->user)) {
        snprintf(err, errlen, "user name '%s' is not 1-%d of A-Z a-z 0-9 . _ -", v->user, CRM_AUTH_USER_MAX);
        return -1;
    }
    if (len[2] == 0 || len[2] > 8 || *end != '\0' || iter < 1 || iter > 10000000) {
        snprintf(err, errlen, "bad iteration count");
        return -1;
    }
    v->iterations = (uint32_t)iter;
    if (crm__unhex(f[3], len[3], v->salt, sizeof v->salt) != 0 ||
        crm__unhex(f[4], len[4], v->stored_key, sizeof v->stored_key) != 0 ||
        crm__unhex(f[5], len[5], v->server_key, sizeof v->server_key) != 0) {
        snprintf(err, errlen, "salt and keys must be %d, %d and %d hex digits", 2 * CRM_AUTH_SALT_LEN,
                 2 * CRM_AUTH_KEY_LEN, 2 * CRM_AUTH_KEY_LEN);
        return -1;
    }
    return 0;
}

int crm_auth_transcript(const char *user, const unsigned char *client_nonce, const unsigned char *server_nonce,
                        unsigned char *t)
{
    unsigned char buf[sizeof CRM__TRANSCRIPT_LABEL + CRM_AUTH_USER_MAX + 1 + 2 * CRM_AUTH_NONCE_LEN];
    size_t ulen = strlen(user), n = 0;
    if (ulen > CRM_AUTH_USER_MAX)
        return -1;
    memcpy(buf, CRM__TRANSCRIPT_LABEL, sizeof CRM__TRANSCRIPT_LABEL); /* with its NUL */
    n += sizeof CRM__TRANSCRIPT_LABEL;
    memcpy(buf + n, user, ulen + 1);
    n += ulen + 1;
    memcpy(buf + n, client_nonce, CRM_AUTH_NONCE_LEN);
    n += CRM_AUTH_NONCE_LEN;
    memcpy(buf + n, server_nonce, CRM_AUTH_NONCE_LEN);
    n += CRM_AUTH_NONCE_LEN;
    return crm__sha256(buf, n, t);
}

int crm_auth_client_proof(const unsigned char *client_key, const unsigned char *stored_key, const unsigned char *t,
                          unsigned char *proof)
{
    unsigned char sig[CRM_AUTH_KEY_LEN];
    if (crm__hmac(stored_key, CRM_AUTH_KEY_LEN, t, CRM_AUTH_KEY_LEN, sig) != 0)
        return -1;
    for (int i = 0; i < CRM_AUTH_KEY_LEN; i++)
        proof[i] = client_key[i] ^ sig[i];
    return 0;
}

int crm_auth_check_proof(const crm_auth_verifier *v, const unsigned char *t, const unsigned char *proof)
{
    unsigned char sig[CRM_AUTH_KEY_LEN], ck[CRM_AUTH_KEY_LEN], stored[CRM_AUTH_KEY_LEN];
    if (crm__hmac(v->stored_key, sizeof v->stored_key, t, CRM_AUTH_KEY_LEN, sig) != 0)
        return 0;
    for (int i = 0; i < CRM_AUTH_KEY_LEN; i++)
        ck[i] = proof[i] ^ sig[i];
    int ok = crm__sha256(ck, sizeof ck, stored) == 0 && crm_auth_equal(stored, v->stored_key, sizeof stored);
    OPENSSL_cleanse(ck, sizeof ck);
    return ok;
}

int crm_auth_server_signature(const unsigned char *server_key, const unsigned char *t, unsigned char *sig)
{
    return crm__hmac(server_key, CRM_AUTH_KEY_LEN, t, CRM_AUTH_KEY_LEN, sig);
}

int crm_auth_chan_token(const unsigned char *stored_key, const unsigned char *t, unsigned char *token)
{
    unsigned char data[12 + CRM_AUTH_KEY_LEN], mac[CRM_AUTH_KEY_LEN];
    memcpy(data, "data channel", 12);
    memcpy(data + 12, t, CRM_AUTH_KEY_LEN);
    if (crm__hmac(stored_key, CRM_AUTH_KEY_LEN, data, sizeof data, mac) != 0)
        return -1;
    memcpy(token, mac, CRM_AUTH_CHAN_TOKEN_LEN);
    return 0;
}

int crm_auth_equal(const void *a, const void *b, size_t n)
{
    return CRYPTO_memcmp(a, b, n) == 0;
}

int crm_auth_random(unsigned char *out, size_t n)
{
    return RAND_bytes(out, (int)n) == 1 ? 0 : -1;
}
