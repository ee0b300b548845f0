/* crm_session_chan.c -- the data channel of a session process. */
#include <string.h>
#include <unistd.h>
#include "common/crm_log.h"
#include "protocol/crm_chan_link.h"
#include "protocol/crm_shm.h"
#include "server/crm_session_chan.h"

#ifndef CRM_CHAN_ACCEPT_MS
#define CRM_CHAN_ACCEPT_MS 10000 /* the fuzz build waits less for a client that never comes */
#endif

static crm_chan crm__chan;
static int crm__listen_fd = -1;
static unsigned char crm__token[CRM_CHAN_TOKEN];
static int crm__tls; /* the channel comes over TLS, as the session did */

/* Accepts the client on first use; the ring comes with it when the window is there. */
static int crm__open(crm_chan *c)
{
    c->fd = crm_chan_accept(crm__listen_fd, crm__token, CRM_CHAN_ACCEPT_MS, crm__tls);
    crm__listen_fd = -1;
    if (c->fd < 0) {
        crm_warn("the client did not open its data channel");
        return -1;
    }
    crm_chan_set_ring(c, crm_shm_data, crm_shm_data_size);
    return 0;
}

int crm_session_chan_offer(char *name, unsigned char *token, int tls)
{
    crm__tls = tls;
    if (crm_chan_current != NULL)
        return -1; /* one channel per session */
    crm__listen_fd = crm_chan_listen(name, crm__token);
    if (crm__listen_fd < 0)
        return -1;
    if (crm_chan_init(&crm__chan, -1, 0) != 0) {
        close(crm__listen_fd);
        crm__listen_fd = -1;
        return -1;
    }
    crm__chan.open = crm__open;
    memcpy(token, crm__token, CRM_CHAN_TOKEN);
    crm_chan_current = &crm__chan;
    return 0;
}

void crm_session_chan_open_now(void)
{
    if (crm_chan_current != NULL)
        crm_chan_ready(crm_chan_current);
}

void crm_session_chan_set_token(const unsigned char *token)
{
    memcpy(crm__token, token, CRM_CHAN_TOKEN);
}

int crm_session_chan_after_reply(void)
{
    if (crm_chan_current == NULL || crm_chan_current->job_count == 0)
        return 0;
    if (crm_chan_run(crm_chan_current))
        return 0;
    crm_warn("data channel broken while sending to the client");
    return -1;
}

void crm_session_chan_discard(void)
{
    if (crm_chan_current != NULL)
        crm_chan_discard(crm_chan_current);
}

void crm_session_chan_close(void)
{
    if (crm_chan_current != NULL)
        crm_chan_close(crm_chan_current);
    crm_chan_current = NULL;
    if (crm__listen_fd >= 0)
        close(crm__listen_fd);
    crm__listen_fd = -1;
}
