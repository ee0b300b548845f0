/* crm_auth_cli.h -- the client's side of the token exchange (common/crm_auth.h):
 * the token from CUDAREM_TOKEN or CUDAREM_TOKEN_FILE, CRM_AUTH before HELLO, the
 * proof in HELLO, and the check of the server's signature in its reply. Without a
 * token nothing is sent and HELLO goes alone (Unix-socket uid or --insecure
 * servers admit such clients). */
#ifndef CRM_AUTH_CLI_H
#define CRM_AUTH_CLI_H

#include <stddef.h>
#include "client/crm_rpc.h"
#include "common/crm_auth.h"
#include "crm_api.h"

typedef struct crm_auth_cli {
    int have_token;                             /* the exchange ran */
    char user[CRM_AUTH_USER_MAX + 1];
    unsigned char transcript[CRM_AUTH_KEY_LEN];
    unsigned char proof[CRM_AUTH_KEY_LEN];
    crm_auth_verifier keys;                     /* derived from the secret */
} crm_auth_cli;

/* Runs CRM_AUTH when a token is configured and sets args' proof (pointing into a).
 * 0, or -1 with err set (bad token setting, refused, transport failure), or
 * CRM_LINK_BUSY (client/crm_link.h) when refused for a while. */
int crm_auth_cli_begin(crm_rpc *rpc, crm_auth_cli *a, crm_hello_args *args, char *err, size_t errlen);
/* After an accepted HELLO: checks the server's signature and puts the derived data
 * channel token into res. 0, or -1 with err set. */
int crm_auth_cli_finish(crm_auth_cli *a, crm_hello_res *res, char *err, size_t errlen);

#endif
