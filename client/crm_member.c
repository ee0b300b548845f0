/* crm_member.c -- opening and closing one server's connection (client/crm_member.h). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "client/crm_dataconn.h"
#include "client/crm_link.h"
#include "client/crm_member.h"
#include "protocol/crm_shm.h"
#include "protocol/crm_tls.h"
#include "protocol/crm_wire.h"

static int crm__hello(crm_member *m, unsigned slot, int offer_window, struct timeval timeout, char *err,
                      size_t errlen)
{
    crm_hello_args args;
    char shm_name[64] = "";
    memset(&args, 0, sizeof args);
    args.capabilities = CRM_CAP_BATCH | CRM_CAP_BULK2D;
    args.address_slot = slot;
    args.shm_name = shm_name;
    if (offer_window)
        crm_dataconn_offer_shm(m->fd, &args, shm_name);
    crm_dataconn_ask(&args);
    int rc = crm_link_hello(&m->rpc, &args, &m->hello, err, errlen);
    if (shm_name[0] != '\0')
        crm_shm_unlink(shm_name); /* attached or refused: the name has served */
    m->window = shm_name[0] != '\0' && rc == 0 && (m->hello.capabilities & CRM_CAP_SHM);
    if (shm_name[0] != '\0' && !m->window)
        crm_dataconn_drop_window();
    if (rc != 0)
        return rc;
    m->hello_kept = 1;
    m->chan_open = crm_dataconn_open(&m->chan, &m->server, &m->hello, timeout, crm_link_tls_host(&m->server));
    return 0;
}

int crm_member_open(crm_member *m, const char *addr, unsigned slot, int offer_window, struct timeval timeout,
                    char *err, size_t errlen)
{
    m->fd = -1;
    snprintf(m->addr, sizeof m->addr, "%s", addr);
    m->srv_device = 0;
    if (crm_addr_parse(addr, &m->server, err, errlen) != 0)
        return -1;
    if (crm_link_open(&m->server, timeout, &m->fd, &m->rpc, err, errlen) != 0)
        return -1;
    m->rpc_open = 1;
    int rc = crm__hello(m, slot, offer_window, timeout, err, errlen);
    if (rc != 0) {
        crm_member_drop(m);
        return rc;
    }
    m->state = CRM_MEMBER_OPEN;
    return 0;
}

void crm_member_release_hello(crm_member *m)
{
    if (m->hello_kept)
        xdr_free((xdrproc_t)xdr_crm_hello_res, (char *)&m->hello);
    m->hello_kept = 0;
}

void crm_member_drop(crm_member *m)
{
    if (m->chan_open)
        crm_dataconn_close(&m->chan);
    if (m->window)
        crm_dataconn_drop_window();
    if (m->rpc_open)
        crm_rpc_fini(&m->rpc);
    if (m->fd >= 0) {
        crm_tls_drop(m->fd);
        close(m->fd);
    }
    crm_member_release_hello(m);
    m->chan_open = m->window = m->rpc_open = 0;
    m->fd = -1;
    crm_idle_forget(&m->idle);
}

void crm_member_forget(crm_member *m)
{
    if (m->fd >= 0) {
        crm_tls_forget(m->fd);
        close(m->fd);
    }
    if (m->chan_open)
        crm_dataconn_forget(&m->chan);
    if (m->rpc_open)
        crm_rpc_fini(&m->rpc); /* our copy of the parent's buffers */
    m->rpc_open = m->chan_open = m->window = 0;
    m->fd = -1;
    m->state = CRM_MEMBER_NONE;
    crm_queue_clear(&m->queue); /* the parent's calls, not ours */
}
