/* raw_session.h -- a real cudarem-server on a private Unix socket, and sessions to
 * it spoken in raw ONC RPC (libtirpc's clnt_vc), without the shim: the robustness
 * suites build every call themselves, well-formed or not. */
#ifndef RAW_SESSION_H
#define RAW_SESSION_H

#include <stdint.h>
#include <rpc/rpc.h>
#include "crm_api.h"

/* Starts the server (--insecure, emulated device) on a socket named after tag. */
void raw_server_start(const char *tag);
/* The next raw_server_start logs warnings too, into the file at path. */
void raw_server_log_to(const char *path);
/* Stops it with SIGTERM; it must exit with status 0. */
void raw_server_stop(void);
/* Kills it if it still runs (after a failed check). */
void raw_server_kill(void);
/* 1 while it runs. */
int raw_server_alive(void);

/* A new connection to the server, and an RPC client over it. */
int raw_connect(void);
CLIENT *raw_client(int fd);
/* HELLO with the given protocol version and capabilities. */
enum clnt_stat raw_hello_caps(CLIENT *c, unsigned version, uint64_t caps, crm_hello_res *res);
enum clnt_stat raw_hello(CLIENT *c, unsigned version, crm_hello_res *res);
/* One batch; its replies in *out (the device's printed output is dropped). */
enum clnt_stat raw_exec(CLIENT *c, crm_call *calls, unsigned n, crm_replies *out);
/* How long a raw call waits for its answer. */
extern const struct timeval raw_timeout;
/* One call; the status it returned (every reply starts with its int status), or -1
 * when the RPC failed. */
int raw_call(CLIENT *c, crm_call *call);

#endif
