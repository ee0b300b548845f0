/* crm_observe.c -- the observer's connection (client/crm_observe.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "client/crm_link.h"
#include "client/crm_observe.h"
#include "common/crm_addr.h"
#include "protocol/crm_tls.h"
#include "protocol/crm_wire.h"

#define CRM_OBSERVE_TIMEOUT_S 30

int crm_observe_open(const char *addr, crm_observer *o, char *err, size_t errlen)
{
    crm_addr a;
    crm_hello_args args;
    crm_hello_res res;
    struct timeval limit = {.tv_sec = CRM_OBSERVE_TIMEOUT_S};
    o->fd = -1;
    if (crm_addr_parse(addr, &a, err, errlen) != 0 || crm_link_open(&a, limit, &o->fd, &o->rpc, err, errlen) != 0)
        return -1;
    memset(&args, 0, sizeof args);
    args.capabilities = CRM_CAP_OBSERVE;
    args.shm_name = "";
    if (crm_link_hello(&o->rpc, &args, &res, err, errlen) != 0) {
        crm_observe_close(o);
        return -1;
    }
    int observing = (res.capabilities & CRM_CAP_OBSERVE) != 0;
    xdr_free((xdrproc_t)xdr_crm_hello_res, (char *)&res);
    if (!observing) {
        snprintf(err, errlen, "the server does not take observers (it is older than this tool)");
        crm_observe_close(o);
        return -1;
    }
    return 0;
}

int crm_observe_status(crm_observer *o, crm_status_res *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    enum clnt_stat st = crm_rpc_call(&o->rpc, CRM_STATUS, (xdrproc_t)(void (*)(void))xdr_void, NULL,
                                     (xdrproc_t)xdr_crm_status_res, res);
    if (st != RPC_SUCCESS) {
        snprintf(err, errlen, "status request failed: %s", clnt_sperrno(st));
        return -1;
    }
    if (res->status != 0) {
        snprintf(err, errlen, "%s", res->message);
        xdr_free((xdrproc_t)xdr_crm_status_res, (char *)res);
        return -1;
    }
    return 0;
}

int crm_observe_end(crm_observer *o, uint64_t id, char *err, size_t errlen)
{
    crm_end_args args = {.session_id = id};
    crm_end_res res;
    memset(&res, 0, sizeof res);
    enum clnt_stat st = crm_rpc_call(&o->rpc, CRM_END, (xdrproc_t)xdr_crm_end_args, &args,
                                     (xdrproc_t)xdr_crm_end_res, &res);
    if (st != RPC_SUCCESS) {
        snprintf(err, errlen, "end request failed: %s", clnt_sperrno(st));
        return -1;
    }
    int rc = res.status == 0 ? 0 : -1;
    if (rc != 0)
        snprintf(err, errlen, "%s", res.message);
    xdr_free((xdrproc_t)xdr_crm_end_res, (char *)&res);
    return rc;
}

void crm_observe_close(crm_observer *o)
{
    if (o->fd < 0)
        return;
    crm_rpc_fini(&o->rpc);
    crm_tls_drop(o->fd);
    close(o->fd);
    o->fd = -1;
}
