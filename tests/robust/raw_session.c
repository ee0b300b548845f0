/* raw_session.c -- the server and raw RPC sessions of the robustness suites
 * (tests/robust/raw_session.h). */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cuda_runtime_api.h>
#include "common/crm_addr.h"
#include "protocol/crm_wire.h"
#include "tests/robust/raw_session.h"

const struct timeval raw_timeout = {20, 0};
static pid_t raw__server;
static char raw__sock[108];
static char raw__log[256]; /* where the next server writes its log; empty: stderr, errors only */

void raw_server_log_to(const char *path)
{
    snprintf(raw__log, sizeof raw__log, "%s", path);
}

void raw_server_start(const char *tag)
{
    char listen[160];
    snprintf(raw__sock, sizeof raw__sock, "/tmp/crm-%s-%d.sock", tag, (int)getpid());
    snprintf(listen, sizeof listen, "unix:%s", raw__sock);
    raw__server = fork();
    if (raw__server == 0) {
        int logged = raw__log[0] != '\0' && freopen(raw__log, "w", stderr) != NULL;
        execl(CRM_TEST_SERVER, CRM_TEST_SERVER, "--device", "emu", "--listen", listen, "--insecure", "--log-level",
              logged ? "warn" : "error", (char *)NULL);
        _exit(127);
    }
    raw__log[0] = '\0';
    for (int i = 0; i < 200 && access(raw__sock, F_OK) != 0; i++)
        usleep(20000);
}

void raw_server_stop(void)
{
    int status = 0;
    kill(raw__server, SIGTERM);
    waitpid(raw__server, &status, 0);
    raw__server = 0;
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "server did not exit cleanly: %d", status);
}

void raw_server_kill(void)
{
    if (raw__server > 0) {
        kill(raw__server, SIGKILL);
        waitpid(raw__server, NULL, 0);
        raw__server = 0;
    }
}

int raw_server_alive(void)
{
    return raw__server > 0 && waitpid(raw__server, NULL, WNOHANG) == 0;
}

int raw_connect(void)
{
    crm_addr a = {.kind = CRM_ADDR_UNIX};
    char err[128];
    snprintf(a.path, sizeof a.path, "%s", raw__sock);
    int fd = crm_addr_connect(&a, 5000, err, sizeof err);
    ck_assert_msg(fd >= 0, "connect: %s", err);
    return fd;
}

CLIENT *raw_client(int fd)
{
    static struct sockaddr_un peer;
    struct netbuf raddr = {.maxlen = sizeof peer, .len = sizeof peer, .buf = &peer};
    peer.sun_family = AF_UNIX;
    snprintf(peer.sun_path, sizeof peer.sun_path, "%s", raw__sock);
    CLIENT *c = clnt_vc_create(fd, &raddr, CRM_PROG, CRM_VERS, CRM_RPC_BUFSZ, CRM_RPC_BUFSZ);
    ck_assert_ptr_nonnull(c);
    return c;
}

enum clnt_stat raw_hello_caps(CLIENT *c, unsigned version, uint64_t caps, crm_hello_res *res)
{
    crm_hello_args args = {.proto_version = version, .prop_size = sizeof(struct cudaDeviceProp), .host = "t",
                           .shm_name = "", .capabilities = caps};
    memset(res, 0, sizeof *res);
    return clnt_call(c, CRM_HELLO, (xdrproc_t)xdr_crm_hello_args, (char *)&args, (xdrproc_t)xdr_crm_hello_res,
                     (char *)res, raw_timeout);
}

enum clnt_stat raw_hello(CLIENT *c, unsigned version, crm_hello_res *res)
{
    return raw_hello_caps(c, version, 0, res);
}

enum clnt_stat raw_exec(CLIENT *c, crm_call *calls, unsigned n, crm_replies *out)
{
    crm_calls batch = {.crm_calls_len = n, .crm_calls_val = calls};
    crm_exec_res res;
    memset(&res, 0, sizeof res);
    enum clnt_stat st = clnt_call(c, CRM_EXEC, (xdrproc_t)xdr_crm_calls, (char *)&batch,
                                  (xdrproc_t)xdr_crm_exec_res, (char *)&res, raw_timeout);
    *out = res.replies;
    free(res.device_output.device_output_val);
    return st;
}

int raw_call(CLIENT *c, crm_call *call)
{
    crm_replies r;
    memset(&r, 0, sizeof r);
    if (raw_exec(c, call, 1, &r) != RPC_SUCCESS || r.crm_replies_len != 1) {
        xdr_free((xdrproc_t)xdr_crm_replies, (char *)&r);
        return -1;
    }
    int status = *(int *)&r.crm_replies_val[0].crm_reply_u; /* every reply starts with its int err */
    xdr_free((xdrproc_t)xdr_crm_replies, (char *)&r);
    return status;
}
