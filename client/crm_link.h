/* crm_link.h -- opening a connection to a cudarem server: the socket, with a time
 * limit; TLS when CUDAREM_TLS=on over TCP (checked against CUDAREM_TLS_CA); the RPC
 * stream; then HELLO with its token proof (client/crm_auth_cli.h). The shim's
 * connection (client/crm_conn.h) and cudarem-smi's observer connections
 * (client/crm_observe.h) both open theirs here. */
#ifndef CRM_LINK_H
#define CRM_LINK_H

#include <stddef.h>
#include <sys/time.h>
#include "client/crm_rpc.h"
#include "common/crm_addr.h"
#include "crm_api.h"

/* The host the server's certificate must name when TLS is asked for over TCP,
 * else NULL (a Unix socket's peer is local and known: no TLS there). */
const char *crm_link_tls_host(const crm_addr *addr);

/* Connects to addr, sets timeout on the socket, starts TLS when asked and the
 * RPC stream over it: 0 with *fd and rpc ready, or -1 with err set and nothing
 * left open (*fd is -1). */
int crm_link_open(const crm_addr *addr, struct timeval timeout, int *fd, crm_rpc *rpc, char *err, size_t errlen);

/* What crm_link_hello returns when the server refused because it, or the user's
 * quota, is full, or the peer must wait (CRM_REFUSED_BUSY): the CUDA calls then
 * fail with cudaErrorDevicesUnavailable rather than cudaErrorNoDevice. */
#define CRM_LINK_BUSY (-2)

/* HELLO on rpc with args, whose capabilities and shared window the caller set:
 * fills in the protocol version, property size, pid and host, runs the token
 * exchange around it, and checks the answer (status, protocol version, the
 * server's signature). 0 with *res to free (xdr_crm_hello_res), or -1 (or
 * CRM_LINK_BUSY) with err set and nothing to free. */
int crm_link_hello(crm_rpc *rpc, crm_hello_args *args, crm_hello_res *res, char *err, size_t errlen);

#endif
