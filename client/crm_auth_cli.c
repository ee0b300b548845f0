/* crm_auth_cli.c -- the token exchange on the client (client/crm_auth_cli.h). */
#include <errno.h>
#include <openssl/crypto.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "client/crm_auth_cli.h"
#include "client/crm_link.h"
#include "protocol/crm_chan.h"

/* The token text: CUDAREM_TOKEN, else the first line of CUDAREM_TOKEN_FILE (which
 * only its owner may read). 1 with text set, 0 when neither is set, -1 on error. */
static int crm__token_text(char *text, size_t len, char *err, size_t errlen)
{
    const char *t = getenv("CUDAREM_TOKEN"), *path = getenv("CUDAREM_TOKEN_FILE");
    struct stat st;
    if (t != NULL && *t != '\0') {
        snprintf(text, len, "%s", t);
        return 1;
    }
    if (path == NULL || *path == '\0')
        return 0;
    FILE *f = fopen(path, "re");
    if (f == NULL) {
        snprintf(err, errlen, "cannot read CUDAREM_TOKEN_FILE %s: %s", path, strerror(errno));
        return -1;
    }
    int rc = 1;
    if (fstat(fileno(f), &st) == 0 && (st.st_mode & 0077)) {
        snprintf(err, errlen, "CUDAREM_TOKEN_FILE %s may be read by others: make it private (chmod 600)", path);
        rc = -1;
    } else if (fgets(text, (int)len, f) == NULL) {
        snprintf(err, errlen, "CUDAREM_TOKEN_FILE %s is empty", path);
        rc = -1;
    }
    fclose(f);
    return rc;
}

static void crm__login_name(char *name, size_t len)
{
    struct passwd pw, *found = NULL;
    char buf[1024];
    if (getpwuid_r(getuid(), &pw, buf, sizeof buf, &found) == 0 && found != NULL)
        snprintf(name, len, "%s", pw.pw_name);
    else
        snprintf(name, len, "uid%d", (int)getuid());
}

/* CRM_AUTH: the server's nonce, salt and iterations into res. 0 or -1. */
static int crm__ask(crm_rpc *rpc, crm_auth_cli *a, unsigned char *cnonce, crm_auth_res *res, char *err,
                    size_t errlen)
{
    crm_auth_args args = {.user = a->user};
    if (crm_auth_random(cnonce, CRM_AUTH_NONCE_LEN) != 0) {
        snprintf(err, errlen, "libcrypto's random generator failed");
        return -1;
    }
    memcpy(args.client_nonce, cnonce, CRM_AUTH_NONCE_LEN);
    enum clnt_stat st =
        crm_rpc_call(rpc, CRM_AUTH, (xdrproc_t)xdr_crm_auth_args, &args, (xdrproc_t)xdr_crm_auth_res, res);
    if (st == RPC_PROCUNAVAIL) {
        snprintf(err, errlen, "the server does not know tokens (an older cudarem-server): unset CUDAREM_TOKEN");
        return -1;
    }
    if (st != RPC_SUCCESS) {
        snprintf(err, errlen, "authentication failed: %s", clnt_sperrno(st));
        return -1;
    }
    if (res->status != 0) {
        snprintf(err, errlen, "server refused the session: %s", res->message ? res->message : "");
        return res->status == CRM_REFUSED_BUSY ? CRM_LINK_BUSY : -1;
    }
    return 0;
}

int crm_auth_cli_begin(crm_rpc *rpc, crm_auth_cli *a, crm_hello_args *args, char *err, size_t errlen)
{
    char text[CRM_AUTH_USER_MAX + CRM_AUTH_SECRET_MAX + 8], secret[CRM_AUTH_SECRET_MAX + 1], login[256];
    unsigned char cnonce[CRM_AUTH_NONCE_LEN], client_key[CRM_AUTH_KEY_LEN];
    crm_auth_res res;
    memset(a, 0, sizeof *a);
    int have = crm__token_text(text, sizeof text, err, errlen);
    if (have <= 0)
        return have;
    crm__login_name(login, sizeof login);
    if (crm_auth_token_parse(text, login, a->user, secret, err, errlen) != 0)
        return -1;
    memset(&res, 0, sizeof res);
    int rc = crm__ask(rpc, a, cnonce, &res, err, errlen);
    if (rc == 0 && (crm_auth_derive(secret, (unsigned char *)res.salt, res.iterations, &a->keys, client_key) != 0 ||
                    crm_auth_transcript(a->user, cnonce, (unsigned char *)res.server_nonce, a->transcript) != 0 ||
                    crm_auth_client_proof(client_key, a->keys.stored_key, a->transcript, a->proof) != 0)) {
        snprintf(err, errlen, "cannot compute the token's proof (iterations %u)", res.iterations);
        rc = -1;
    }
    OPENSSL_cleanse(secret, sizeof secret);
    OPENSSL_cleanse(text, sizeof text);
    OPENSSL_cleanse(client_key, sizeof client_key);
    xdr_free((xdrproc_t)xdr_crm_auth_res, (char *)&res);
    if (rc != 0)
        return rc;
    a->have_token = 1;
    args->auth_proof.auth_proof_len = CRM_AUTH_KEY_LEN;
    args->auth_proof.auth_proof_val = (char *)a->proof;
    return 0;
}

int crm_auth_cli_finish(crm_auth_cli *a, crm_hello_res *res, char *err, size_t errlen)
{
    unsigned char want[CRM_AUTH_KEY_LEN];
    if (!a->have_token)
        return 0;
    if (res->auth_signature.auth_signature_len != CRM_AUTH_KEY_LEN ||
        crm_auth_server_signature(a->keys.server_key, a->transcript, want) != 0 ||
        !crm_auth_equal(want, res->auth_signature.auth_signature_val, sizeof want)) {
        snprintf(err, errlen,
                 "the server did not prove it knows user '%s': it is not the server the token is for, or "
                 "it runs --insecure without that user (unset CUDAREM_TOKEN for it)",
                 a->user);
        return -1;
    }
    _Static_assert(CRM_CHAN_TOKEN == CRM_AUTH_CHAN_TOKEN_LEN, "the derived token fits the channel");
    return crm_auth_chan_token(a->keys.stored_key, a->transcript, (unsigned char *)res->chan_token);
}
