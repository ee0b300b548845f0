/* crm_auth_srv.h -- who may open a session: the policy the daemon loads at start
 * (the auth file's verifiers, the uids admitted on Unix sockets, --insecure), which
 * every session process inherits, and the session's side of the token exchange
 * (CRM_AUTH, then the proof in HELLO; common/crm_auth.h). */
#ifndef CRM_AUTH_SRV_H
#define CRM_AUTH_SRV_H

#include <stddef.h>
#include <sys/types.h>
#include "crm_api.h"
#include "server/crm_session.h"
#include "server/crm_srv_rpc.h"

#define CRM_AUTH_MAX_UIDS 32

typedef struct crm_auth_policy {
    const char *auth_file;              /* --auth-file, NULL when none */
    int insecure;                       /* --insecure: anyone is admitted */
    uid_t allow_uid[CRM_AUTH_MAX_UIDS]; /* --allow-uid: Unix-socket peers admitted */
    int nallow;
} crm_auth_policy;

/* Daemon: takes the policy and loads the auth file (again on SIGHUP). 0, or -1 with
 * err naming the file and line; a failed reload keeps the users already loaded. */
int crm_auth_srv_load(const crm_auth_policy *p, char *err, size_t errlen);
/* --add-user: adds a verifier of a fresh token for user (an administrator when
 * admin) to the auth file at path (made 0600 when new) and prints the token on
 * stdout. The exit status. */
int crm_auth_srv_add_user(const char *path, const char *user, int admin);
/* Number of users loaded from the auth file. */
int crm_auth_srv_users(void);

/* Session: forgets any exchange of a session served before in this process. */
void crm_auth_srv_session_reset(void);
/* Session: answers CRM_AUTH (refusing it with `refuse` when not NULL). */
void crm_auth_srv_begin(crm_srv_rpc *x, crm_session *s, const char *refuse);
/* Session, at HELLO: 1 when the client may open the session, with s->user set and,
 * after a token proof, res's signature and the derived data channel token; else 0
 * with why set. */
int crm_auth_srv_admit(crm_session *s, const crm_hello_args *args, crm_hello_res *res, char *why, size_t whylen);
/* Session, once admitted: 1 when its user may see and end every session: a token
 * whose auth file line has the admin role, or, without a token, a Unix-socket peer
 * running as root or as the server's own user. */
int crm_auth_srv_is_admin(const crm_session *s);
/* A token USER:SECRET given whole (the dashboard's Authorization header, over a
 * connection the operator chose): 1 when it is an administrator's, 0 another
 * user's, with the user in user (ulen bytes); -1 when it is no valid token. */
int crm_auth_srv_check_token(const char *token, char *user, size_t ulen);
/* Session: after admission by token, the data channel token both ends derived. 0,
 * or -1 when the session was not admitted by token. */
int crm_auth_srv_chan_token(unsigned char *token);

#endif
