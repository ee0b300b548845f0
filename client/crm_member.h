/* crm_member.h -- the client's connection to one server of its pool: the socket,
 * the RPC stream, HELLO with the address slot, the data channel, and what is
 * queued for that server. client/crm_conn.c routes each call to one member. */
#ifndef CRM_MEMBER_H
#define CRM_MEMBER_H

#include <stddef.h>
#include <sys/time.h>
#include "client/crm_idle.h"
#include "client/crm_pool.h"
#include "client/crm_deferred.h"
#include "client/crm_queue.h"
#include "client/crm_rpc.h"
#include "common/crm_addr.h"
#include "crm_api.h"
#include "protocol/crm_chan.h"

enum crm_member_state { CRM_MEMBER_NONE, CRM_MEMBER_OPEN, CRM_MEMBER_LOST };

typedef struct crm_member {
    enum crm_member_state state;
    char addr[CRM_POOL_ADDR_MAX]; /* as the user wrote it, for messages */
    crm_addr server;              /* parsed: the data channel connects there too */
    int fd;                       /* the socket, owned; -1 when closed */
    crm_rpc rpc;                  /* RPC calls over fd */
    int rpc_open;
    crm_chan chan;                /* bulk payloads, when chan_open */
    int chan_open;
    int window;                   /* this server attached the shared window */
    crm_hello_res hello;          /* its answer, until the pool is built */
    int hello_kept;
    int srv_device;               /* device selected on the server */
    crm_queue queue;              /* asynchronous calls for the next message */
    crm_owner_set posted;         /* threads whose calls were posted since its last answer */
    crm_idle idle;                /* what the last message drained there */
} crm_member;

/* Connects to addr and says HELLO asking for address slot `slot`, offering the
 * shared window when offer_window and the server is on this machine; opens the
 * data channel it offers. 0 with m open and m->hello kept, or -1 with err set and
 * nothing left open. */
int crm_member_open(crm_member *m, const char *addr, unsigned slot, int offer_window, struct timeval timeout,
                    char *err, size_t errlen);
/* Frees what HELLO brought (after the pool is built). */
void crm_member_release_hello(crm_member *m);
/* Closes everything m holds; its queue is kept for the caller to clear. */
void crm_member_drop(crm_member *m);
/* In a forked child: lets go of the parent's connection without touching it. */
void crm_member_forget(crm_member *m);

#endif
