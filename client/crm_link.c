/* crm_link.c -- opening a connection and saying HELLO (client/crm_link.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cuda_runtime_api.h>
#include "client/crm_auth_cli.h"
#include "client/crm_link.h"
#include "protocol/crm_tls.h"

#define CRM_LINK_CONNECT_MS 10000

const char *crm_link_tls_host(const crm_addr *addr)
{
    const char *v = getenv("CUDAREM_TLS");
    return v && strcmp(v, "on") == 0 && addr->kind == CRM_ADDR_TCP ? addr->host : NULL;
}

/* TLS on fd when asked for. 0, or -1 with err set. */
static int crm__start_tls(int fd, const crm_addr *addr, char *err, size_t errlen)
{
    const char *host = crm_link_tls_host(addr), *ca = getenv("CUDAREM_TLS_CA");
    char why[300];
    if (host == NULL)
        return 0;
    if (crm_tls_client_setup(ca && *ca ? ca : NULL, why, sizeof why) != 0 ||
        crm_tls_connect(fd, host, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    return 0;
}

int crm_link_open(const crm_addr *addr, struct timeval timeout, int *fd, crm_rpc *rpc, char *err, size_t errlen)
{
    *fd = crm_addr_connect(addr, CRM_LINK_CONNECT_MS, err, errlen);
    if (*fd < 0)
        return -1;
    setsockopt(*fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout); /* the handshake too */
    setsockopt(*fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    int rc = crm__start_tls(*fd, addr, err, errlen);
    if (rc == 0 && crm_rpc_init(rpc, *fd, timeout) != 0) {
        snprintf(err, errlen, "cannot set up RPC over the connection: %s", strerror(errno));
        rc = -1;
    }
    if (rc != 0) {
        crm_tls_drop(*fd);
        close(*fd);
        *fd = -1;
    }
    return rc;
}

int crm_link_hello(crm_rpc *rpc, crm_hello_args *args, crm_hello_res *res, char *err, size_t errlen)
{
    crm_auth_cli auth;
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    memset(res, 0, sizeof *res);
    int rc = crm_auth_cli_begin(rpc, &auth, args, err, errlen);
    if (rc != 0)
        return rc;
    args->proto_version = CRM_PROTO_VERSION;
    args->prop_size = sizeof(struct cudaDeviceProp);
    args->pid = (unsigned)getpid();
    args->host = host;
    enum clnt_stat st = crm_rpc_call(rpc, CRM_HELLO, (xdrproc_t)xdr_crm_hello_args, args,
                                     (xdrproc_t)xdr_crm_hello_res, res);
    args->host = NULL;
    if (st != RPC_SUCCESS) {
        snprintf(err, errlen, "handshake failed: %s", clnt_sperrno(st));
        return -1;
    }
    if (res->status != 0) {
        snprintf(err, errlen, "server refused the session: %s", res->message);
        rc = res->status == CRM_REFUSED_BUSY ? CRM_LINK_BUSY : -1;
    } else if (res->proto_version != CRM_PROTO_VERSION) {
        snprintf(err, errlen, "protocol version mismatch: client %d, server %u", CRM_PROTO_VERSION,
                 res->proto_version);
        rc = -1;
    } else if (crm_auth_cli_finish(&auth, res, err, errlen) != 0) {
        rc = -1;
    }
    if (rc != 0)
        xdr_free((xdrproc_t)xdr_crm_hello_res, (char *)res);
    return rc;
}
