/* crm_auth_srv.c -- admission of sessions: the auth file's verifiers, peer uids on
 * Unix sockets, --insecure, and the session's side of the token exchange. */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/crm_addr.h"
#include "common/crm_auth.h"
#include "common/crm_log.h"
#include "protocol/crm_chan.h"
#include "server/crm_auth_srv.h"

_Static_assert(CRM_CHAN_TOKEN == CRM_AUTH_CHAN_TOKEN_LEN, "the derived data channel token fits the channel");

#define CRM__MAX_USERS 4096

static crm_auth_policy crm__policy;
static crm_auth_verifier *crm__users; /* the auth file's lines */
static int crm__nusers;
static unsigned char crm__decoy_key[CRM_AUTH_KEY_LEN]; /* salts of users that do not exist */

/* The session's exchange (one session per process). */
static struct {
    int begun;                                  /* CRM_AUTH answered */
    int admitted_by_token;
    char user[CRM_AUTH_USER_MAX + 1];
    unsigned char transcript[CRM_AUTH_KEY_LEN];
    const crm_auth_verifier *verifier;          /* NULL: unknown user */
} crm__ex;

/* Reads every line of f into a new table: 0, or -1 with err set. */
static int crm__read_users(FILE *f, const char *path, crm_auth_verifier **out, int *count, char *err,
                           size_t errlen)
{
    char line[CRM_AUTH_LINE_MAX + 2], why[160];
    crm_auth_verifier *users = calloc(CRM__MAX_USERS, sizeof *users);
    int n = 0, lineno = 0;
    while (users != NULL && fgets(line, sizeof line, f) != NULL) {
        size_t len = strlen(line);
        lineno++;
        if (len > 0 && line[len - 1] == '\n')
            line[--len] = '\0';
        else if (!feof(f)) {
            snprintf(err, errlen, "%s:%d: line too long", path, lineno);
            goto fail;
        }
        if (len == 0 || line[0] == '#')
            continue;
        if (n == CRM__MAX_USERS || crm_auth_verifier_parse(line, &users[n], why, sizeof why) != 0) {
            snprintf(err, errlen, "%s:%d: %s", path, lineno, n == CRM__MAX_USERS ? "too many users" : why);
            goto fail;
        }
        for (int i = 0; i < n; i++)
            if (strcmp(users[i].user, users[n].user) == 0) {
                snprintf(err, errlen, "%s:%d: user '%s' appears twice", path, lineno, users[n].user);
                goto fail;
            }
        n++;
    }
    if (users == NULL) {
        snprintf(err, errlen, "out of memory reading %s", path);
        return -1;
    }
    *out = users;
    *count = n;
    return 0;
fail:
    free(users);
    return -1;
}

static int crm__load_file(const char *path, char *err, size_t errlen)
{
    struct stat st;
    FILE *f = fopen(path, "re");
    if (f == NULL) {
        snprintf(err, errlen, "cannot read the auth file %s: %s", path, strerror(errno));
        return -1;
    }
    if (fstat(fileno(f), &st) == 0 && (st.st_mode & 0022))
        crm_warn("the auth file %s is writable by others than its owner: anyone who can write it can add users",
                 path);
    crm_auth_verifier *users = NULL;
    int n = 0, rc = crm__read_users(f, path, &users, &n, err, errlen);
    fclose(f);
    if (rc == 0) {
        free(crm__users);
        crm__users = users;
        crm__nusers = n;
    }
    return rc;
}

int crm_auth_srv_load(const crm_auth_policy *p, char *err, size_t errlen)
{
    static int keyed;
    crm__policy = *p;
    if (!keyed && (keyed = crm_auth_random(crm__decoy_key, sizeof crm__decoy_key) == 0) == 0) {
        snprintf(err, errlen, "libcrypto's random generator failed");
        return -1;
    }
    return p->auth_file ? crm__load_file(p->auth_file, err, errlen) : 0;
}

int crm_auth_srv_users(void)
{
    return crm__nusers;
}

/* Whether path (when it exists) already names user: 1, 0, or -1 when unreadable. */
static int crm__file_has_user(const char *path, const char *user)
{
    char err[256];
    if (access(path, F_OK) != 0)
        return 0;
    if (crm__load_file(path, err, sizeof err) != 0) {
        fprintf(stderr, "cudarem-server: %s\n", err);
        return -1;
    }
    for (int i = 0; i < crm__nusers; i++)
        if (strcmp(crm__users[i].user, user) == 0)
            return 1;
    return 0;
}

int crm_auth_srv_add_user(const char *path, const char *user, int admin)
{
    unsigned char raw[32];
    char secret[2 * sizeof raw + 1], line[CRM_AUTH_LINE_MAX];
    crm_auth_verifier v;
    if (!crm_auth_user_valid(user)) {
        fprintf(stderr, "cudarem-server: --add-user: a user name is 1-%d of A-Z a-z 0-9 . _ -\n", CRM_AUTH_USER_MAX);
        return 2;
    }
    int has = crm__file_has_user(path, user);
    if (has != 0) {
        if (has > 0)
            fprintf(stderr, "cudarem-server: %s already has user '%s'; remove its line to replace it\n", path, user);
        return 1;
    }
    if (crm_auth_random(raw, sizeof raw) != 0)
        return 1;
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(secret + 2 * i, 3, "%02x", raw[i]);
    if (crm_auth_verifier_new(user, secret, &v) != 0)
        return 1;
    v.admin = admin;
    crm_auth_verifier_format(&v, line);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, line, strlen(line)) != (ssize_t)strlen(line) || close(fd) != 0) {
        fprintf(stderr, "cudarem-server: cannot add to %s: %s\n", path, strerror(errno));
        return 1;
    }
    printf("%s:%s\n", user, secret);
    fprintf(stderr, "cudarem-server: added %suser '%s' to %s. Give the client the token above as\n"
                    "CUDAREM_TOKEN, or in a file only it can read as CUDAREM_TOKEN_FILE; it is shown\n"
                    "only now (the file keeps a verifier). A running server reads the file on SIGHUP.\n",
            admin ? "administrator " : "", user, path);
    return 0;
}

static const crm_auth_verifier *crm__find(const char *user)
{
    for (int i = 0; i < crm__nusers; i++)
        if (strcmp(crm__users[i].user, user) == 0)
            return &crm__users[i];
    return NULL;
}

int crm_auth_srv_check_token(const char *token, char *user, size_t ulen)
{
    char name[CRM_AUTH_USER_MAX + 1], secret[CRM_AUTH_SECRET_MAX + 1], err[128];
    crm_auth_verifier derived;
    if (crm_auth_token_parse(token, "", name, secret, err, sizeof err) != 0 || name[0] == '\0')
        return -1;
    const crm_auth_verifier *v = crm__find(name);
    int ok = v != NULL && crm_auth_derive(secret, v->salt, v->iterations, &derived, NULL) == 0 &&
             crm_auth_equal(derived.stored_key, v->stored_key, sizeof derived.stored_key);
    memset(secret, 0, sizeof secret);
    if (!ok)
        return -1;
    snprintf(user, ulen, "%s", name);
    return v->admin ? 1 : 0;
}

/* An unknown user gets a salt that looks like any other and stays the same. */
static void crm__decoy_salt(const char *user, unsigned char *salt)
{
    crm_auth_verifier v;
    memset(&v, 0, sizeof v);
    if (crm_auth_derive(user, crm__decoy_key, 1, &v, NULL) == 0)
        memcpy(salt, v.stored_key, CRM_AUTH_SALT_LEN);
}

void crm_auth_srv_session_reset(void)
{
    memset(&crm__ex, 0, sizeof crm__ex);
}

void crm_auth_srv_begin(crm_srv_rpc *x, crm_session *s, const char *refuse)
{
    crm_auth_args args;
    crm_auth_res res;
    memset(&args, 0, sizeof args);
    memset(&res, 0, sizeof res);
    res.message = "";
    if (!crm_srv_rpc_getargs(x, (xdrproc_t)xdr_crm_auth_args, &args)) {
        xdr_free((xdrproc_t)xdr_crm_auth_args, (char *)&args);
        crm_srv_rpc_error(x, GARBAGE_ARGS);
        return;
    }
    const crm_auth_verifier *v = crm_auth_user_valid(args.user) ? crm__find(args.user) : NULL;
    if (refuse != NULL || crm__ex.begun || s->hello_done || !crm_auth_user_valid(args.user) ||
        crm_auth_random((unsigned char *)res.server_nonce, sizeof res.server_nonce) != 0) {
        res.status = refuse ? s->refuse_status : CRM_REFUSED;
        res.message = refuse ? (char *)refuse : crm__ex.begun || s->hello_done ? "CRM_AUTH sent twice"
                                                                               : "bad user name";
    } else {
        crm__ex.begun = 1;
        crm__ex.verifier = v;
        snprintf(crm__ex.user, sizeof crm__ex.user, "%s", args.user);
        res.iterations = v ? v->iterations : CRM_AUTH_ITERATIONS;
        if (v)
            memcpy(res.salt, v->salt, sizeof res.salt);
        else
            crm__decoy_salt(args.user, (unsigned char *)res.salt);
        if (crm_auth_transcript(args.user, (unsigned char *)args.client_nonce, (unsigned char *)res.server_nonce,
                                crm__ex.transcript) != 0)
            crm__ex.begun = 0;
    }
    crm_srv_rpc_reply(x, (xdrproc_t)xdr_crm_auth_res, &res);
    xdr_free((xdrproc_t)xdr_crm_auth_args, (char *)&args);
}

/* The peer's uid when fd is a Unix socket, else -1. */
static long crm__peer_uid(int fd)
{
    crm_peer p;
    crm_addr_peer(fd, &p);
    return p.is_unix ? p.uid : -1;
}

static void crm__uid_name(uid_t uid, char *name, size_t len)
{
    struct passwd pw, *found = NULL;
    char buf[1024];
    if (getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found != NULL && crm_auth_user_valid(pw.pw_name))
        snprintf(name, len, "%s", pw.pw_name);
    else
        snprintf(name, len, "uid%ld", (long)uid);
}

static int crm__admit_by_token(crm_session *s, const crm_hello_args *args, crm_hello_res *res, char *why,
                               size_t whylen)
{
    static char sig[CRM_AUTH_KEY_LEN];
    const crm_auth_verifier *v = crm__ex.verifier;
    if (args->auth_proof.auth_proof_len != CRM_AUTH_KEY_LEN || v == NULL ||
        !crm_auth_check_proof(v, crm__ex.transcript, (const unsigned char *)args->auth_proof.auth_proof_val)) {
        if (crm__policy.insecure) { /* admitted anyway, unsigned: the client decides */
            snprintf(s->user, sizeof s->user, "anonymous");
            return 1;
        }
        snprintf(why, whylen, "authentication failed for user '%s': wrong token or unknown user", crm__ex.user);
        return 0;
    }
    if (crm_auth_server_signature(v->server_key, crm__ex.transcript, (unsigned char *)sig) != 0) {
        snprintf(why, whylen, "the server cannot sign its answer (libcrypto failed)");
        return 0;
    }
    res->auth_signature.auth_signature_len = CRM_AUTH_KEY_LEN;
    res->auth_signature.auth_signature_val = sig;
    crm__ex.admitted_by_token = 1;
    snprintf(s->user, sizeof s->user, "%s", crm__ex.user);
    return 1;
}

int crm_auth_srv_admit(crm_session *s, const crm_hello_args *args, crm_hello_res *res, char *why, size_t whylen)
{
    if (crm__ex.begun)
        return crm__admit_by_token(s, args, res, why, whylen);
    long uid = crm__peer_uid(s->fd);
    for (int i = 0; uid >= 0 && i < crm__policy.nallow; i++)
        if (crm__policy.allow_uid[i] == (uid_t)uid) {
            crm__uid_name((uid_t)uid, s->user, sizeof s->user);
            return 1;
        }
    if (crm__policy.insecure) {
        if (uid >= 0)
            crm__uid_name((uid_t)uid, s->user, sizeof s->user);
        else
            snprintf(s->user, sizeof s->user, "anonymous");
        return 1;
    }
    snprintf(why, whylen,
             "this server admits only clients with a token: set CUDAREM_TOKEN=USER:SECRET or CUDAREM_TOKEN_FILE%s",
             uid >= 0 ? " (your uid is not among those it admits on this socket)" : "");
    return 0;
}

int crm_auth_srv_is_admin(const crm_session *s)
{
    if (crm__ex.admitted_by_token)
        return crm__ex.verifier != NULL && crm__ex.verifier->admin;
    long uid = crm__peer_uid(s->fd);
    return uid == 0 || (uid > 0 && (uid_t)uid == geteuid());
}

int crm_auth_srv_chan_token(unsigned char *token)
{
    if (!crm__ex.admitted_by_token || crm__ex.verifier == NULL)
        return -1;
    return crm_auth_chan_token(crm__ex.verifier->stored_key, crm__ex.transcript, token);
}
