/* crm_dataconn.c -- opening and closing the client's data channel and window. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "client/crm_dataconn.h"
#include "common/crm_log.h"
#include "protocol/crm_chan_link.h"
#include "protocol/crm_shm.h"
#include "protocol/crm_tls.h"
#include "protocol/crm_wire.h"

#define CRM_CHAN_CONNECT_MS 5000

static int crm__loopback(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
    if (ss->ss_family != AF_INET6)
        return 0;
    const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
}

/* The server shares this machine: a Unix socket, a loopback peer, or a peer whose
 * address is our own. Opening the window is the real test; this only avoids
 * offering one to a server that surely cannot see it. */
static int crm__server_is_local(int fd)
{
    struct sockaddr_storage peer, self;
    socklen_t plen = sizeof peer, slen = sizeof self;
    if (getpeername(fd, (struct sockaddr *)&peer, &plen) != 0 || peer.ss_family == AF_UNIX)
        return 1;
    if (crm__loopback(&peer))
        return 1;
    if (getsockname(fd, (struct sockaddr *)&self, &slen) != 0 || self.ss_family != peer.ss_family)
        return 0;
    if (peer.ss_family == AF_INET)
        return ((struct sockaddr_in *)&peer)->sin_addr.s_addr == ((struct sockaddr_in *)&self)->sin_addr.s_addr;
    return memcmp(&((struct sockaddr_in6 *)&peer)->sin6_addr, &((struct sockaddr_in6 *)&self)->sin6_addr,
                  sizeof(struct in6_addr)) == 0;
}

static int crm__channel_off(void)
{
    const char *v = getenv("CUDAREM_CHANNEL");
    return v != NULL && strcmp(v, "off") == 0;
}

void crm_dataconn_offer_shm(int rpc_fd, crm_hello_args *args, char *name)
{
    const char *v = getenv("CUDAREM_SHM"), *size = getenv("CUDAREM_SHM_SIZE");
    uint64_t bytes = size ? strtoull(size, NULL, 10) : CRM_SHM_DEFAULT_SIZE;
    name[0] = '\0';
    args->shm_name = name;
    if (v != NULL && strcmp(v, "off") == 0)
        return;
    if ((v == NULL || strcmp(v, "on") != 0) && !crm__server_is_local(rpc_fd))
        return;
    if (bytes < (1u << 20) || crm__channel_off())
        return; /* the window is the channel's ring: no channel, no window */
    if (crm_shm_create(bytes, name, (unsigned char *)args->shm_cookie) == 0)
        args->shm_size = bytes;
    else
        name[0] = '\0';
}

void crm_dataconn_ask(crm_hello_args *args)
{
    if (!crm__channel_off())
        args->capabilities |= CRM_CAP_CHANNEL;
}

int crm_dataconn_open(crm_chan *chan, const crm_addr *server, const crm_hello_res *res, struct timeval timeout,
                      const char *tls_host)
{
    char err[256] = "";
    if (!(res->capabilities & CRM_CAP_CHANNEL))
        return 0;
    int fd = crm_addr_connect(server, CRM_CHAN_CONNECT_MS, err, sizeof err);
    if (fd >= 0) { /* the greeting's TLS handshake must not wait forever either */
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    }
    if (fd >= 0 &&
        crm_chan_greet(fd, res->chan_path ? res->chan_path : "", (const unsigned char *)res->chan_token, tls_host) != 0) {
        snprintf(err, sizeof err, "%s", strerror(errno));
        close(fd);
        fd = -1;
    }
    if (fd >= 0) { /* a server that stops mid-payload fails the call, as on the RPC socket */
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    }
    if (fd < 0 || crm_chan_init(chan, fd, 1) != 0) {
        if (fd >= 0)
            close(fd);
        crm_warn("cannot open the data channel (%s): bulk data goes through the RPC stream", err);
        return 0;
    }
    if (res->capabilities & CRM_CAP_SHM)
        crm_chan_set_ring(chan, crm_shm_data, crm_shm_data_size);
    chan->lazy_acks = 1;
    if (crm_chan_start_sender(chan) != 0) {
        crm_chan_close(chan);
        return 0;
    }
    return 1;
}

void crm_dataconn_close(crm_chan *chan)
{
    if (crm_chan_current == chan)
        crm_chan_current = NULL;
    crm_chan_close(chan);
}

void crm_dataconn_drop_window(void)
{
    crm_shm_detach();
}

void crm_dataconn_forget(crm_chan *chan)
{
    if (chan->fd >= 0) {
        crm_tls_forget(chan->fd);
        close(chan->fd);
    }
    if (crm_chan_current == chan)
        crm_chan_current = NULL; /* its thread and buffers belong to the parent */
}

int crm_dataconn_settle(int rpc_failed)
{
    crm_chan *c = crm_chan_current;
    if (c == NULL)
        return 0;
    if (rpc_failed)
        crm_chan_abort(c);
    return crm_chan_wait(c) ? 0 : -1;
}
