/* crm_auth.h -- the token proof both ends compute: a salted challenge-response over
 * HMAC-SHA256 (libcrypto) in the manner of SCRAM-SHA-256 (RFC 5802, RFC 7677).
 *
 * A user's token is "USER:SECRET". The server keeps only a verifier per user (the
 * auth file's line USER:cudarem-sha256:ITERATIONS:SALT:STOREDKEY:SERVERKEY, hex, and
 * optionally ":admin", the role that may see and end every session):
 *   salted     = PBKDF2-HMAC-SHA256(SECRET, SALT, ITERATIONS)
 *   client_key = HMAC(salted, "Client Key")    stored_key = SHA-256(client_key)
 *   server_key = HMAC(salted, "Server Key")
 * Reading the file is not enough to log in: the proof needs client_key, which only
 * the token gives. The exchange binds both nonces and the user name (transcript T):
 *   client -> server: proof = client_key XOR HMAC(stored_key, T)
 *   server checks SHA-256(proof XOR HMAC(stored_key, T)) == stored_key (constant time)
 *   server -> client: HMAC(server_key, T), so the client knows it reached a server
 *                     that holds its verifier
 * Neither token nor key crosses the wire; the session's data channel token is
 * HMAC(stored_key, "data channel" T), which both ends derive. */
#ifndef CRM_AUTH_H
#define CRM_AUTH_H

#include <stddef.h>
#include <stdint.h>

#define CRM_AUTH_KEY_LEN 32      /* SHA-256 sizes */
#define CRM_AUTH_NONCE_LEN 32
#define CRM_AUTH_SALT_LEN 16
#define CRM_AUTH_CHAN_TOKEN_LEN 16
#define CRM_AUTH_USER_MAX 64     /* a user name's characters, at most */
#define CRM_AUTH_SECRET_MAX 512
#define CRM_AUTH_ITERATIONS 4096 /* PBKDF2 rounds for new verifiers */
#define CRM_AUTH_LINE_MAX 320    /* an auth file line, with its newline */
#define CRM_AUTH_ROLE_ADMIN "admin" /* the role an auth file line may end with */

/* What the server keeps of a user's token. */
typedef struct crm_auth_verifier {
    char user[CRM_AUTH_USER_MAX + 1];
    uint32_t iterations;
    unsigned char salt[CRM_AUTH_SALT_LEN];
    unsigned char stored_key[CRM_AUTH_KEY_LEN];
    unsigned char server_key[CRM_AUTH_KEY_LEN];
    int admin;                   /* the line ends in ":admin": may see and end all sessions */
} crm_auth_verifier;

/* 1 when name is 1..CRM_AUTH_USER_MAX of [A-Za-z0-9._-]. */
int crm_auth_user_valid(const char *name);
/* Splits a token "USER:SECRET" (trailing white space ignored) into user and secret;
 * when it holds no ':', user is default_user. 0, or -1 with err set. */
int crm_auth_token_parse(const char *token, const char *default_user, char *user, char *secret, char *err,
                         size_t errlen);

/* Keys of `secret` under salt and iterations: v's keys, and client_key when not
 * NULL. 0, or -1 when libcrypto fails. v->user is left as it is. */
int crm_auth_derive(const char *secret, const unsigned char *salt, uint32_t iterations, crm_auth_verifier *v,
                    unsigned char *client_key);
/* A new verifier for user with secret (fresh random salt). 0 or -1. */
int crm_auth_verifier_new(const char *user, const char *secret, crm_auth_verifier *v);
/* The auth file line of v, with its newline, into line (CRM_AUTH_LINE_MAX bytes). */
void crm_auth_verifier_format(const crm_auth_verifier *v, char *line);
/* Parses one auth file line (no newline). 0, or -1 with err set. */
int crm_auth_verifier_parse(const char *line, crm_auth_verifier *v, char *err, size_t errlen);

/* T, the digest of what both ends must agree on. */
int crm_auth_transcript(const char *user, const unsigned char *client_nonce, const unsigned char *server_nonce,
                        unsigned char *t);
/* Client: its proof for transcript t. 0 or -1. */
int crm_auth_client_proof(const unsigned char *client_key, const unsigned char *stored_key, const unsigned char *t,
                          unsigned char *proof);
/* Server: 1 when proof shows knowledge of v's token for transcript t, else 0. */
int crm_auth_check_proof(const crm_auth_verifier *v, const unsigned char *t, const unsigned char *proof);
/* Server's signature of t; the client compares it in constant time. 0 or -1. */
int crm_auth_server_signature(const unsigned char *server_key, const unsigned char *t, unsigned char *sig);
/* The data channel token both ends derive for the session. 0 or -1. */
int crm_auth_chan_token(const unsigned char *stored_key, const unsigned char *t, unsigned char *token);
/* Constant-time equality of n bytes: 1 when equal. */
int crm_auth_equal(const void *a, const void *b, size_t n);
/* n random bytes from libcrypto's generator. 0 or -1. */
int crm_auth_random(unsigned char *out, size_t n);

#endif
