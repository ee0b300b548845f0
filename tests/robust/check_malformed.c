/* check_malformed.c -- the server against malformed and hostile requests: garbage
 * bytes, calls before HELLO, a wrong protocol version, bad pointers, lengths and
 * handles inside well-formed calls, truncated messages, status requests from a
 * session that is no observer, calls from an observer. After each, the server
 * must still be alive and serve a fresh session correctly. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <cuda_runtime_api.h>
#include "common/crm_addr.h"
#include "crm_api.h"
#include "protocol/crm_chan.h"
#include "protocol/crm_chan_link.h"
#include "protocol/crm_wire.h"
#include "server/crm_session.h"
#include "tests/robust/raw_session.h"
#include "tests/unit/crm_check.h"

/* A fresh, well-behaved session: HELLO, cudaMalloc, cudaFree all succeed. */
/* An EXEC reply decoded into replies the caller preset (bulk destinations): the
 * posted-failure header, then the replies; the device output after them is left. */
static bool_t crm__xdr_exec_replies(XDR *xdrs, crm_replies *r)
{
    crm_posted_failure posted;
    return xdr_crm_posted_failure(xdrs, &posted) && xdr_crm_replies(xdrs, r);
}

static void crm__assert_server_healthy(void)
{
    int fd = raw_connect();
    CLIENT *c = raw_client(fd);
    crm_hello_res h;
    ck_assert_int_eq(raw_hello(c, CRM_PROTO_VERSION, &h), RPC_SUCCESS);
    ck_assert_int_eq(h.status, 0);
    ck_assert_int_ge(h.device_count, 1);
    xdr_free((xdrproc_t)xdr_crm_hello_res, (char *)&h);
    crm_call call = {.api = CRM_API_cudaMalloc};
    call.crm_call_u.cudaMalloc.size = 4096;
    crm_replies r;
    ck_assert_int_eq(raw_exec(c, &call, 1, &r), RPC_SUCCESS);
    ck_assert_int_eq(r.crm_replies_val[0].crm_reply_u.cudaMalloc.err, cudaSuccess);
    uint64_t ptr = r.crm_replies_val[0].crm_reply_u.cudaMalloc.devPtr;
    xdr_free((xdrproc_t)xdr_crm_replies, (char *)&r);
    call.api = CRM_API_cudaFree;
    call.crm_call_u.cudaFree.devPtr = ptr;
    ck_assert_int_eq(raw_exec(c, &call, 1, &r), RPC_SUCCESS);
    ck_assert_int_eq(r.crm_replies_val[0].crm_reply_u.cudaFree.err, cudaSuccess);
    xdr_free((xdrproc_t)xdr_crm_replies, (char *)&r);
    clnt_destroy(c);
    close(fd);
}

/* A session admitted with HELLO: its client, its socket in *fd. */
static CLIENT *crm__admitted(int *fd)
{
    crm_hello_res h;
    *fd = raw_connect();
    CLIENT *c = raw_client(*fd);
    ck_assert_int_eq(raw_hello(c, CRM_PROTO_VERSION, &h), RPC_SUCCESS);
    xdr_free((xdrproc_t)xdr_crm_hello_res, (char *)&h);
    return c;
}

START_TEST(test_garbage_bytes_end_only_that_session)
{
    raw_server_start("malformed");
    srand(1234);
    for (int round = 0; round < 20; round++) {
        char junk[4096];
        int fd = raw_connect();
        for (size_t i = 0; i < sizeof junk; i++)
            junk[i] = (char)rand();
        ssize_t sent = send(fd, junk, (size_t)(rand() % (int)sizeof junk) + 1, MSG_NOSIGNAL);
        ck_assert_int_gt(sent, 0);
        close(fd);
    }
    crm__assert_server_healthy();
    raw_server_stop();
}
END_TEST

START_TEST(test_exec_before_hello_is_refused)
{
    raw_server_start("malformed");
    int fd = raw_connect();
    CLIENT *c = raw_client(fd);
    crm_call call = {.api = CRM_API_cudaDeviceSynchronize};
    crm_replies r;
    ck_assert_int_ne(raw_exec(c, &call, 1, &r), RPC_SUCCESS);
    clnt_destroy(c);
    close(fd);
    crm__assert_server_healthy();
    raw_server_stop();
}
END_TEST

START_TEST(test_wrong_protocol_version_gets_clear_refusal)
{
    raw_server_start("malformed");
    int fd = raw_connect();
    CLIENT *c = raw_client(fd);
    crm_hello_res h;
    ck_assert_int_eq(raw_hello(c, CRM_PROTO_VERSION + 7, &h), RPC_SUCCESS);
    ck_assert_int_ne(h.status, 0);
    ck_assert_ptr_nonnull(strstr(h.message, "version"));
    ck_assert_uint_eq(h.proto_version, CRM_PROTO_VERSION);
    xdr_free((xdrproc_t)xdr_crm_hello_res, (char *)&h);
    clnt_destroy(c);
    close(fd);
    crm__assert_server_healthy();
    raw_server_stop();
}
END_TEST

/* Bad pointers, regions and handles in well-formed calls: CUDA errors, session goes on. */
START_TEST(test_bad_pointers_and_handles_get_cuda_errors)
{
    raw_server_start("malformed");
    int fd;
    CLIENT *c = crm__admitted(&fd);

    crm_call calls[6];
    memset(calls, 0, sizeof calls);
    calls[0].api = CRM_API_cudaFree;                         /* never allocated */
    calls[0].crm_call_u.cudaFree.devPtr = 0x1234;
    calls[1].api = CRM_API_crm_memcpy_d2h;                   /* wild source */
    calls[1].crm_call_u.crm_memcpy_d2h = (crm_args_crm_memcpy_d2h){.src = 0x7fff0000, .spitch = 64,
                                                                   .width = 64, .height = 4};
    calls[2].api = CRM_API_crm_memset;                       /* pitch * height overflows */
    calls[2].crm_call_u.crm_memset = (crm_args_crm_memset){.dst = 0x1000, .pitch = UINT64_MAX / 2,
                                                           .width = 8, .height = 8};
    calls[3].api = CRM_API_cudaStreamSynchronize;            /* unknown stream id */
    calls[3].crm_call_u.cudaStreamSynchronize.stream = 99;
    calls[4].api = CRM_API_cudaEventElapsedTime;             /* unknown event ids */
    calls[4].crm_call_u.cudaEventElapsedTime = (crm_args_cudaEventElapsedTime){.start = 5, .end = 6};
    static const char payload[100];
    calls[5].api = CRM_API_crm_memcpy_h2d;                   /* wild destination, payload follows */
    calls[5].crm_call_u.crm_memcpy_h2d.data = (crm_h2d_args){.dst = 0x42, .dpitch = 100, .width = 100,
                                                             .height = 1, .src = payload, .spitch = 100};
    crm_replies r;
    ck_assert_int_eq(raw_exec(c, calls, 6, &r), RPC_SUCCESS);
    ck_assert_uint_eq(r.crm_replies_len, 6);
    ck_assert_int_eq(r.crm_replies_val[0].crm_reply_u.cudaFree.err, cudaErrorInvalidValue);
    ck_assert_int_eq(r.crm_replies_val[1].crm_reply_u.crm_memcpy_d2h.err, cudaErrorInvalidValue);
    ck_assert_uint_eq(r.crm_replies_val[1].crm_reply_u.crm_memcpy_d2h.data.len, 0);
    ck_assert_int_eq(r.crm_replies_val[2].crm_reply_u.crm_memset.err, cudaErrorInvalidValue);
    ck_assert_int_eq(r.crm_replies_val[3].crm_reply_u.cudaStreamSynchronize.err, cudaErrorInvalidResourceHandle);
    ck_assert_int_eq(r.crm_replies_val[4].crm_reply_u.cudaEventElapsedTime.err, cudaErrorInvalidResourceHandle);
    ck_assert_int_eq(r.crm_replies_val[5].crm_reply_u.crm_memcpy_h2d.err, cudaErrorInvalidValue);
    xdr_free((xdrproc_t)xdr_crm_replies, (char *)&r);
    /* The skipped payload left the stream in sync: the session still works. */
    calls[0].api = CRM_API_cudaDeviceSynchronize;
    ck_assert_int_eq(raw_exec(c, calls, 1, &r), RPC_SUCCESS);
    ck_assert_int_eq(r.crm_replies_val[0].crm_reply_u.cudaDeviceSynchronize.err, cudaSuccess);
    xdr_free((xdrproc_t)xdr_crm_replies, (char *)&r);
    /* More memory than any device holds (beyond INT64_MAX, found by fuzz_request):
     * refused as a full device would, charging nothing. */
    memset(calls, 0, sizeof calls);
    calls[0].api = CRM_API_cudaMalloc;
    calls[0].crm_call_u.cudaMalloc.size = (1ull << 63) + 4096;
    ck_assert_int_eq(raw_exec(c, calls, 1, &r), RPC_SUCCESS);
    ck_assert_int_eq(r.crm_replies_val[0].crm_reply_u.cudaMalloc.err, cudaErrorMemoryAllocation);
    xdr_free((xdrproc_t)xdr_crm_replies, (char *)&r);
    clnt_destroy(c);
    close(fd);
    crm__assert_server_healthy();
    raw_server_stop();
}
END_TEST

/* Ends a test's session, then checks the server is well and stops it. */
static void crm__finish(CLIENT *c, int fd)
{
    clnt_destroy(c);
    close(fd);
    crm__assert_server_healthy();
    raw_server_stop();
}

/* One call of a session: returns its reply (caller frees r). */
static crm_reply *crm__one(CLIENT *c, crm_call *call, crm_replies *r)
{
    ck_assert_int_eq(raw_exec(c, call, 1, r), RPC_SUCCESS);
    ck_assert_uint_eq(r->crm_replies_len, 1);
    return &r->crm_replies_val[0];
}

static uint64_t crm__malloc(CLIENT *c, uint64_t size)
{
    crm_call call = {.api = CRM_API_cudaMalloc};
    crm_replies r;
    call.crm_call_u.cudaMalloc.size = size;
    uint64_t ptr = crm__one(c, &call, &r)->crm_reply_u.cudaMalloc.devPtr;
    xdr_free((xdrproc_t)xdr_crm_replies, (char *)&r);
    return ptr;
}

/* A host-to-device call whose payload says "on the data channel". */
static crm_call crm__h2d_call(uint64_t dst, const char *src, uint64_t n)
{
    crm_call call = {.api = CRM_API_crm_memcpy_h2d};
    call.crm_call_u.crm_memcpy_h2d.data = (crm_h2d_args){.dst = dst, .dpitch = n, .width = n, .height = 1,
                                                         .src = src, .spitch = n, .level = CRM_LEVEL_CHANNEL};
    return call;
}

/* The XDR of calls[0..n) back to back, as a graph program holds them; its length. */
static size_t crm__records(crm_call *calls, int n, char *buf, size_t cap)
{
    XDR x;
    xdrmem_create(&x, buf, (u_int)cap, XDR_ENCODE);
    for (int i = 0; i < n; i++)
        ck_assert(xdr_crm_call(&x, &calls[i]));
    size_t len = xdr_getpos(&x);
    xdr_destroy(&x);
    return len;
}

/* Uploads bytes[0..len) as the piece of program id at offset. */
static int crm__upload_at(CLIENT *c, uint64_t id, uint64_t offset, char *bytes, size_t len)
{
    crm_call call = {.api = CRM_API_crm_graph_upload};
    crm_replies r;
    call.crm_call_u.crm_graph_upload = (crm_args_crm_graph_upload){id, offset, {(u_int)len, bytes}};
    int err = crm__one(c, &call, &r)->crm_reply_u.crm_graph_upload.err;
    xdr_free((xdrproc_t)xdr_crm_replies, (char *)&r);
    return err;
}

static int crm__upload(CLIENT *c, uint64_t id, char *bytes, size_t len)
{
    return crm__upload_at(c, id, 0, bytes, len);
}

static int crm__run(CLIENT *c, uint64_t id, uint64_t stream)
{
    crm_call call = {.api = CRM_API_crm_graph_run};
    crm_replies r;
    call.crm_call_u.crm_graph_run = (crm_args_crm_graph_run){id, stream};
    int err = crm__one(c, &call, &r)->crm_reply_u.crm_graph_run.err;
    xdr_free((xdrproc_t)xdr_crm_replies, (char *)&r);
    return err;
}

/* Graph programs hold device work only, each call decoding whole; a run names a
 * program and stream the session has; each call in it is checked as it runs. */
START_TEST(test_hostile_graph_programs)
{
    static char buf[4096], payload[64];
    raw_server_start("malformed");
    int fd;
    CLIENT *c = crm__admitted(&fd);
    uint64_t dev = crm__malloc(c, 4096);
    crm_call work[2];
    memset(work, 0, sizeof work);
    memset(buf, 0x5a, sizeof buf);
    ck_assert_int_eq(crm__upload(c, 7, buf, 100), cudaErrorInvalidValue);          /* garbage */
    work[0] = crm__h2d_call(dev, payload, sizeof payload);                          /* moves host data */
    work[0].crm_call_u.crm_memcpy_h2d.data.level = 0;
    ck_assert_int_eq(crm__upload(c, 7, buf, crm__records(work, 1, buf, sizeof buf)), cudaErrorInvalidValue);
    work[0] = (crm_call){.api = CRM_API_cudaMalloc};                                /* not device work */
    work[0].crm_call_u.cudaMalloc.size = 64;
    ck_assert_int_eq(crm__upload(c, 7, buf, crm__records(work, 1, buf, sizeof buf)), cudaErrorInvalidValue);
    work[0] = (crm_call){.api = CRM_API_crm_graph_run};                             /* a program in a program */
    work[0].crm_call_u.crm_graph_run = (crm_args_crm_graph_run){7, 0};
    ck_assert_int_eq(crm__upload(c, 7, buf, crm__records(work, 1, buf, sizeof buf)), cudaErrorInvalidValue);
    work[0] = (crm_call){.api = CRM_API_crm_memset};
    work[0].crm_call_u.crm_memset = (crm_args_crm_memset){.dst = dev, .pitch = 64, .value = 0x33, .width = 64,
                                                          .height = 1, .async = 1};
    work[1] = work[0];
    work[1].crm_call_u.crm_memset.dst = 0x10;                                       /* wild, found at the run */
    size_t one = crm__records(work, 1, buf, sizeof buf), two = crm__records(work, 2, buf, sizeof buf);
    ck_assert_int_eq(crm__upload(c, 7, buf, one - 1), cudaErrorInvalidValue);         /* truncated */
    ck_assert_int_eq(crm__upload(c, 0, buf, one), cudaErrorInvalidValue);             /* id 0 */
    ck_assert_int_eq(crm__upload_at(c, 9, one, buf, one), cudaErrorInvalidValue); /* its first piece refused */
    ck_assert_int_eq(crm__upload(c, 7, buf, one), cudaSuccess);
    ck_assert_int_eq(crm__upload(c, 7, buf, one), cudaErrorInvalidValue);           /* not at its end */
    ck_assert_int_eq(crm__upload(c, 8, buf, one), cudaSuccess);
    ck_assert_int_eq(crm__upload_at(c, 8, one, buf + one, two - one), cudaSuccess);  /* the second piece */
    ck_assert_int_eq(crm__run(c, 9, 0), cudaErrorInvalidValue);                      /* no such program */
    ck_assert_int_eq(crm__run(c, 7, 12345), cudaErrorInvalidResourceHandle);         /* no such stream */
    ck_assert_int_eq(crm__run(c, 7, 0), cudaSuccess);
    ck_assert_int_eq(crm__run(c, 8, 0), cudaErrorInvalidValue);
    crm_call back = {.api = CRM_API_crm_memcpy_d2h};
    back.crm_call_u.crm_memcpy_d2h = (crm_args_crm_memcpy_d2h){.src = dev, .spitch = 64, .width = 64, .height = 1};
    crm_replies r;
    crm_reply *got = crm__one(c, &back, &r);
    ck_assert_int_eq(got->crm_reply_u.crm_memcpy_d2h.err, cudaSuccess);
    ck_assert_uint_eq(got->crm_reply_u.crm_memcpy_d2h.data.len, 64);
    const unsigned char *bytes = (const unsigned char *)got->crm_reply_u.crm_memcpy_d2h.data.owned;
    ck_assert(bytes != NULL && bytes[0] == 0x33 && bytes[63] == 0x33);
    xdr_free((xdrproc_t)xdr_crm_replies, (char *)&r);
    crm_call drop = {.api = CRM_API_crm_graph_drop};
    drop.crm_call_u.crm_graph_drop.id = 7;
    ck_assert_int_eq(crm__one(c, &drop, &r)->crm_reply_u.crm_graph_drop.err, cudaSuccess);
    xdr_free((xdrproc_t)xdr_crm_replies, (char *)&r);
    ck_assert_int_eq(crm__one(c, &drop, &r)->crm_reply_u.crm_graph_drop.err, cudaErrorInvalidValue);
    xdr_free((xdrproc_t)xdr_crm_replies, (char *)&r);
    ck_assert_int_eq(crm__run(c, 7, 0), cudaErrorInvalidValue);
    crm__finish(c, fd);
}
END_TEST

/* A conditional node's record with bodies[0..n) (n may be anything but what
 * fits 8 ids). */
static crm_call crm__cond_run(uint64_t cell, int type, const uint64_t *bodies, unsigned bytes)
{
    crm_call call = {.api = CRM_API_crm_graph_cond_run};
    call.crm_call_u.crm_graph_cond_run = (crm_args_crm_graph_cond_run){cell, type, {bytes, (char *)bodies}};
    return call;
}

/* Conditional nodes a client can make up: run outside a program, on a wild
 * handle, of an unknown type or shape, naming no program, or running itself for
 * ever: each fails with cudaErrorInvalidValue, and the server goes on. */
START_TEST(test_hostile_conditional_nodes)
{
    static char buf[4096];
    raw_server_start("malformed");
    int fd;
    CLIENT *c = crm__admitted(&fd);
    uint64_t dev = crm__malloc(c, 4096), self[1] = {20}, none[1] = {999}, two[2] = {0, 0};
    crm_call work[2], set = {.api = CRM_API_crm_graph_cond_set};
    crm_replies r;
    set.crm_call_u.crm_graph_cond_set = (crm_args_crm_graph_cond_set){dev, 1};
    work[0] = crm__cond_run(dev, cudaGraphCondTypeIf, two, 8);
    ck_assert_int_eq(crm__one(c, &work[0], &r)->crm_reply_u.crm_graph_cond_run.err, cudaErrorInvalidValue);
    xdr_free((xdrproc_t)xdr_crm_replies, (char *)&r);                           /* outside a program */
    set.crm_call_u.crm_graph_cond_set.cell = 0x10;
    ck_assert_int_ne(crm__one(c, &set, &r)->crm_reply_u.crm_graph_cond_set.err, cudaSuccess);
    xdr_free((xdrproc_t)xdr_crm_replies, (char *)&r);                           /* a wild handle */
    set.crm_call_u.crm_graph_cond_set.cell = dev;
    work[0] = set;
    work[1] = crm__cond_run(dev, cudaGraphCondTypeWhile, self, 8);              /* itself, for ever */
    ck_assert_int_eq(crm__upload(c, 20, buf, crm__records(work, 2, buf, sizeof buf)), cudaSuccess);
    ck_assert_int_eq(crm__run(c, 20, 0), cudaErrorInvalidValue);
    work[1] = crm__cond_run(dev, cudaGraphCondTypeIf, none, 8);                 /* no such body */
    ck_assert_int_eq(crm__upload(c, 21, buf, crm__records(work, 2, buf, sizeof buf)), cudaSuccess);
    ck_assert_int_eq(crm__run(c, 21, 0), cudaErrorInvalidValue);
    work[1] = crm__cond_run(dev, cudaGraphCondTypeIf, two, 7);                  /* a broken id list */
    ck_assert_int_eq(crm__upload(c, 22, buf, crm__records(work, 2, buf, sizeof buf)), cudaSuccess);
    ck_assert_int_eq(crm__run(c, 22, 0), cudaErrorInvalidValue);
    work[1] = crm__cond_run(dev, cudaGraphCondTypeWhile, two, 16);              /* a while of two bodies */
    ck_assert_int_eq(crm__upload(c, 23, buf, crm__records(work, 2, buf, sizeof buf)), cudaSuccess);
    ck_assert_int_eq(crm__run(c, 23, 0), cudaErrorInvalidValue);
    work[1] = crm__cond_run(dev, 9, two, 8);                                    /* no such type */
    ck_assert_int_eq(crm__upload(c, 24, buf, crm__records(work, 2, buf, sizeof buf)), cudaSuccess);
    ck_assert_int_eq(crm__run(c, 24, 0), cudaErrorInvalidValue);
    work[1] = crm__cond_run(0x10, cudaGraphCondTypeIf, two, 8);                 /* a wild handle */
    ck_assert_int_eq(crm__upload(c, 25, buf, crm__records(&work[1], 1, buf, sizeof buf)), cudaSuccess);
    ck_assert_int_eq(crm__run(c, 25, 0), cudaErrorInvalidValue);
    work[1] = crm__cond_run(dev, cudaGraphCondTypeIf, two, 16);                 /* empty bodies: fine */
    ck_assert_int_eq(crm__upload(c, 26, buf, crm__records(work, 2, buf, sizeof buf)), cudaSuccess);
    ck_assert_int_eq(crm__run(c, 26, 0), cudaSuccess);
    crm__finish(c, fd);
}
END_TEST

/* Patches of a stored program: of no program, past its end, empty, or cutting its
 * calls into garbage (found when it next runs) fail with cudaErrorInvalidValue;
 * a good one changes what the next run does. */
START_TEST(test_hostile_graph_patches)
{
    static char buf[4096];
    raw_server_start("malformed");
    int fd;
    CLIENT *c = crm__admitted(&fd);
    uint64_t dev = crm__malloc(c, 4096);
    crm_call work = {.api = CRM_API_crm_memset}, patch = {.api = CRM_API_crm_graph_patch};
    crm_replies r;
    work.crm_call_u.crm_memset = (crm_args_crm_memset){.dst = dev, .pitch = 64, .value = 0x33, .width = 64,
                                                       .height = 1, .async = 1};
    size_t len = crm__records(&work, 1, buf, sizeof buf);
    ck_assert_int_eq(crm__upload(c, 30, buf, len), cudaSuccess);
    char good[sizeof buf], junk[16];
    work.crm_call_u.crm_memset.value = 0x44;
    ck_assert_uint_eq(crm__records(&work, 1, good, sizeof good), len);
    memset(junk, 0xee, sizeof junk);
    struct { uint64_t id, offset; u_int len; char *bytes; int want; } cases[] = {
        {31, 0, (u_int)len, good, cudaErrorInvalidValue},          /* no such program */
        {30, len, 1, junk, cudaErrorInvalidValue},                 /* past its end */
        {30, 1, (u_int)len, good, cudaErrorInvalidValue},          /* running over its end */
        {30, 0, 0, junk, cudaErrorInvalidValue},                   /* nothing */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        patch.crm_call_u.crm_graph_patch = (crm_args_crm_graph_patch){cases[i].id, cases[i].offset,
                                                                      {cases[i].len, cases[i].bytes}};
        ck_assert_int_eq(crm__one(c, &patch, &r)->crm_reply_u.crm_graph_patch.err, cases[i].want);
        xdr_free((xdrproc_t)xdr_crm_replies, (char *)&r);
    }
    patch.crm_call_u.crm_graph_patch = (crm_args_crm_graph_patch){30, 0, {sizeof junk, junk}};
    ck_assert_int_eq(crm__one(c, &patch, &r)->crm_reply_u.crm_graph_patch.err, cudaSuccess);
    xdr_free((xdrproc_t)xdr_crm_replies, (char *)&r);
    ck_assert_int_eq(crm__run(c, 30, 0), cudaErrorInvalidValue);  /* garbage now: refused, not run */
    ck_assert_int_eq(crm__run(c, 30, 0), cudaErrorInvalidValue);
    patch.crm_call_u.crm_graph_patch = (crm_args_crm_graph_patch){30, 0, {(u_int)len, good}};
    ck_assert_int_eq(crm__one(c, &patch, &r)->crm_reply_u.crm_graph_patch.err, cudaSuccess);
    xdr_free((xdrproc_t)xdr_crm_replies, (char *)&r);
    ck_assert_int_eq(crm__run(c, 30, 0), cudaSuccess);
    crm_call back = {.api = CRM_API_crm_memcpy_d2h};
    back.crm_call_u.crm_memcpy_d2h = (crm_args_crm_memcpy_d2h){.src = dev, .spitch = 64, .width = 64, .height = 1};
    crm_reply *got = crm__one(c, &back, &r);
    const unsigned char *bytes = (const unsigned char *)got->crm_reply_u.crm_memcpy_d2h.data.owned;
    ck_assert(bytes != NULL && bytes[0] == 0x44 && bytes[63] == 0x44);
    xdr_free((xdrproc_t)xdr_crm_replies, (char *)&r);
    crm__finish(c, fd);
}
END_TEST


/* Payloads that claim a data channel the session never opened: the device-to-host
 * one comes back inline, the host-to-device one is a decoding error of that
 * message only. */
START_TEST(test_channel_claims_without_a_channel)
{
    raw_server_start("malformed");
    int fd = raw_connect(), sv[2];
    CLIENT *c = raw_client(fd);
    crm_hello_res h;
    ck_assert_int_eq(raw_hello(c, CRM_PROTO_VERSION, &h), RPC_SUCCESS);
    ck_assert(!(h.capabilities & CRM_CAP_CHANNEL));
    xdr_free((xdrproc_t)xdr_crm_hello_res, (char *)&h);
    uint64_t dev = crm__malloc(c, 4096);
    static char host[4096];
    crm_d2h_res back = {.dst = host, .dpitch = 4096, .width = 4096, .height = 1};
    crm_call call = {.api = CRM_API_crm_memcpy_d2h};
    call.crm_call_u.crm_memcpy_d2h = (crm_args_crm_memcpy_d2h){.src = dev, .spitch = 4096, .width = 4096,
                                                               .height = 1, .level = CRM_LEVEL_CHANNEL};
    crm_replies r = {.crm_replies_len = 1, .crm_replies_val = &(crm_reply){.api = CRM_API_crm_memcpy_d2h}};
    r.crm_replies_val[0].crm_reply_u.crm_memcpy_d2h.data = back;
    crm_calls batch = {.crm_calls_len = 1, .crm_calls_val = &call};
    ck_assert_int_eq(clnt_call(c, CRM_EXEC, (xdrproc_t)xdr_crm_calls, (char *)&batch, (xdrproc_t)crm__xdr_exec_replies,
                               (char *)&r, raw_timeout), RPC_SUCCESS);
    ck_assert_int_eq(r.crm_replies_val[0].crm_reply_u.crm_memcpy_d2h.err, cudaSuccess);
    /* A channel only this process knows of makes the encoder send "on the channel". */
    static crm_chan fake;
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ck_assert_int_eq(crm_chan_init(&fake, sv[0], 1), 0);
    crm_chan_current = &fake;
    call = crm__h2d_call(dev, host, 4096);
    crm_replies r2;
    ck_assert_int_ne(raw_exec(c, &call, 1, &r2), RPC_SUCCESS);
    crm_chan_current = NULL;
    crm_chan_close(&fake);
    close(sv[1]);
    crm__finish(c, fd);
}
END_TEST

/* The data channel end to end at the wire level: both connections reach the
 * session through the daemon; a stranger with a wrong token is turned away, the
 * client with the right one is served, and its payload lands. */
START_TEST(test_channel_token_and_payload)
{
    raw_server_start("malformed");
    int fd = raw_connect();
    CLIENT *c = raw_client(fd);
    crm_hello_res h;
    ck_assert_int_eq(raw_hello_caps(c, CRM_PROTO_VERSION, CRM_CAP_CHANNEL, &h), RPC_SUCCESS);
    ck_assert(h.capabilities & CRM_CAP_CHANNEL);
    unsigned char wrong[CRM_CHAN_TOKEN];
    memcpy(wrong, h.chan_token, sizeof wrong);
    wrong[0] ^= 1;
    /* Both greet through the server's own address, as clients do. */
    int stranger = raw_connect(), cfd = raw_connect();
    ck_assert_int_eq(crm_chan_greet(stranger, h.chan_path, wrong, NULL), 0);
    ck_assert_int_eq(crm_chan_greet(cfd, h.chan_path, (const unsigned char *)h.chan_token, NULL), 0);
    xdr_free((xdrproc_t)xdr_crm_hello_res, (char *)&h);
    static crm_chan chan;
    ck_assert_int_eq(crm_chan_init(&chan, cfd, 1), 0);
    ck_assert_int_eq(crm_chan_start_sender(&chan), 0);
    crm_chan_current = &chan;
    size_t n = 3u << 20;
    char *src = malloc(n), *got = calloc(1, n);
    for (size_t i = 0; i < n; i++)
        src[i] = (char)(i * 13);
    uint64_t dev = crm__malloc(c, n);
    crm_call call = crm__h2d_call(dev, src, n);
    crm_replies r;
    ck_assert_int_eq(crm__one(c, &call, &r)->crm_reply_u.crm_memcpy_h2d.err, cudaSuccess);
    ck_assert(crm_chan_wait(&chan));
    xdr_free((xdrproc_t)xdr_crm_replies, (char *)&r);
    ck_assert_uint_ge(chan.moved, n);
    /* Read back inline (no channel flag) and compare. */
    crm_chan_current = NULL;
    call = (crm_call){.api = CRM_API_crm_memcpy_d2h};
    call.crm_call_u.crm_memcpy_d2h = (crm_args_crm_memcpy_d2h){.src = dev, .spitch = n, .width = n, .height = 1};
    crm_replies r2 = {.crm_replies_len = 1, .crm_replies_val = &(crm_reply){.api = CRM_API_crm_memcpy_d2h}};
    r2.crm_replies_val[0].crm_reply_u.crm_memcpy_d2h.data = (crm_d2h_res){.dst = got, .dpitch = n, .width = n,
                                                                          .height = 1};
    crm_calls batch = {.crm_calls_len = 1, .crm_calls_val = &call};
    ck_assert_int_eq(clnt_call(c, CRM_EXEC, (xdrproc_t)xdr_crm_calls, (char *)&batch, (xdrproc_t)crm__xdr_exec_replies,
                               (char *)&r2, raw_timeout), RPC_SUCCESS);
    ck_assert_int_eq(memcmp(got, src, n), 0);
    free(src);
    free(got);
    crm_chan_close(&chan);
    close(stranger);
    crm__finish(c, fd);
}
END_TEST

/* Data channel greetings that lead nowhere: an unknown session, a name of the
 * wrong shape, a length past the limit, a greeting cut short. The daemon's
 * process for each gives up; the server goes on serving. */
START_TEST(test_bad_channel_greetings)
{
    raw_server_start("malformed");
    static const unsigned char token[CRM_CHAN_TOKEN];
    int fd = raw_connect();
    ck_assert_int_eq(crm_chan_greet(fd, "cudarem-chan-1-0000000000000000", token, NULL), 0);
    close(fd);
    fd = raw_connect();
    ck_assert_int_eq(crm_chan_greet(fd, "../../etc/passwd", token, NULL), 0);
    close(fd);
    uint32_t head[2] = {htonl(CRM_CHAN_MAGIC), htonl(100000)};
    fd = raw_connect();
    ck_assert_int_eq(send(fd, head, sizeof head, MSG_NOSIGNAL), (ssize_t)sizeof head);
    close(fd);
    fd = raw_connect();
    ck_assert_int_eq(send(fd, head, 4, MSG_NOSIGNAL), 4); /* the magic, then nothing */
    close(fd);
    crm__assert_server_healthy();
    raw_server_stop();
}
END_TEST

/* A record claiming a huge batch, an oversized bulk length, then a cut-off stream. */
START_TEST(test_lying_lengths_and_truncation_end_only_that_session)
{
    raw_server_start("malformed");
    /* RPC call header of CRM_EXEC (xid, CALL, rpcvers 2, prog, vers, proc, null auth x2). */
    uint32_t words[] = {7, 0, 2, CRM_PROG, CRM_VERS, CRM_EXEC, 0, 0, 0, 0, 0xffffffffu};
    uint32_t bulk[] = {7, 0, 2, CRM_PROG, CRM_VERS, CRM_EXEC, 0, 0, 0, 0, 1, CRM_API_crm_memcpy_h2d,
                       0, 0x1000, 0, 1, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0, 0, 0, 0};
    const uint32_t *msgs[] = {words, bulk};
    size_t lens[] = {sizeof words, sizeof bulk};
    for (int m = 0; m < 2; m++) {
        for (int cut = 0; cut < 2; cut++) {
            int fd = raw_connect();
            uint32_t buf[64];
            size_t n = lens[m] / 4;
            buf[0] = htonl(0x80000000u | (uint32_t)(cut ? lens[m] + 4096 : lens[m]));
            for (size_t i = 0; i < n; i++)
                buf[i + 1] = htonl(msgs[m][i]);
            send(fd, buf, (n + 1) * 4, MSG_NOSIGNAL);
            usleep(50000);
            close(fd);
        }
    }
    crm__assert_server_healthy();
    raw_server_stop();
}
END_TEST

/* Loads image (len bytes) as module id; returns the call's status and *loaded. */
static int crm__module_load(CLIENT *c, uint64_t id, const void *image, unsigned len, int *loaded)
{
    crm_call call = {.api = CRM_API_crm_module_load};
    crm_replies r;
    call.crm_call_u.crm_module_load.id = id;
    call.crm_call_u.crm_module_load.image.data.data_len = len;
    call.crm_call_u.crm_module_load.image.data.data_val = (char *)image;
    crm_reply *rep = crm__one(c, &call, &r);
    int err = rep->crm_reply_u.crm_module_load.err;
    *loaded = rep->crm_reply_u.crm_module_load.loaded;
    xdr_free((xdrproc_t)xdr_crm_replies, (char *)&r);
    return err;
}

/* Device code images from the wire are checked before anything reads them: a
 * wrapper (whose pointer means nothing here), a truncated or lying ELF, PTX with
 * no end, a fatbinary header claiming more than it has. Each is refused with a
 * CUDA error, and the session and server go on. */
START_TEST(test_hostile_module_images)
{
    char cache[64] = "/tmp/crm-malformed-cache-XXXXXX", cmd[128];
    ck_assert_ptr_nonnull(mkdtemp(cache));
    setenv("CUDAREM_CACHE_DIR", cache, 1); /* read by the server: nothing refused may be kept */
    raw_server_start("malformed");
    unsetenv("CUDAREM_CACHE_DIR");
    int fd;
    CLIENT *c = crm__admitted(&fd);
    unsigned char wrapper[24] = {0xb1, 0x43, 0x62, 0x46, 1, 0, 0, 0, 0xef, 0xbe, 0xad, 0xde, 0xef, 0xbe, 0xad, 0xde};
    unsigned char elf[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
    elf[40] = 0xff, elf[41] = 0xff, elf[42] = 0xff, elf[43] = 0x7f; /* section headers far away */
    elf[58] = 64, elf[60] = 0xff, elf[61] = 0xff;                   /* 65535 of them */
    char ptx[] = ".version 8.0\n.target sm_90\n.visible .entry k(.param .u64 p"; /* cut, no NUL sent */
    unsigned char fatbin[16] = {0x50, 0xed, 0x55, 0xba, 1, 0, 16, 0, 0xff, 0xff, 0xff, 0x0f};
    struct { const void *bytes; unsigned len; } images[] = {
        {wrapper, sizeof wrapper}, {elf, sizeof elf}, {ptx, sizeof ptx - 1}, {fatbin, sizeof fatbin}, {elf, 7},
    };
    for (unsigned i = 0; i < sizeof images / sizeof images[0]; i++) {
        int loaded = -1;
        int err = crm__module_load(c, 1000 + i, images[i].bytes, images[i].len, &loaded);
        ck_assert_msg(err == cudaErrorInvalidKernelImage && loaded == 0, "image %u: error %d, loaded %d", i, err,
                      loaded);
    }
    crm_call call = {.api = CRM_API_cudaDeviceSynchronize};
    crm_replies r;
    ck_assert_int_eq(crm__one(c, &call, &r)->crm_reply_u.cudaDeviceSynchronize.err, cudaSuccess);
    xdr_free((xdrproc_t)xdr_crm_replies, (char *)&r);
    clnt_destroy(c);
    close(fd);
    crm__assert_server_healthy();
    raw_server_stop();
    snprintf(cmd, sizeof cmd, "test -z \"$(find %s -name '*.fatbin')\"", cache);
    int nothing_kept = system(cmd) == 0;
    snprintf(cmd, sizeof cmd, "rm -rf %s", cache);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_msg(nothing_kept, "the module cache kept an image the server refused");
}
END_TEST

/* A session that makes the server warn on every call (1,000 images refused) cannot
 * fill the log: its process writes CRM_SESSION_LOG_BURST lines at once and
 * CRM_SESSION_LOG_PER_SECOND a second after them, then says how many it left out. */
START_TEST(test_a_session_cannot_fill_the_log)
{
    char log_path[64] = "/tmp/crm-malformed-log-XXXXXX";
    int log_fd = mkstemp(log_path);
    ck_assert_int_ge(log_fd, 0);
    close(log_fd);
    raw_server_log_to(log_path);
    raw_server_start("logflood");
    int fd;
    CLIENT *c = crm__admitted(&fd);
    unsigned char garbage[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < 1000; i++) {
        int loaded = -1;
        ck_assert_int_eq(crm__module_load(c, 5000 + (uint64_t)i, garbage, 7, &loaded), cudaErrorInvalidKernelImage);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    clnt_destroy(c);
    close(fd);
    crm__assert_server_healthy();
    raw_server_stop();
    double seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    FILE *f = fopen(log_path, "r");
    char line[1024];
    int rejected = 0, summary = 0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        rejected += strstr(line, "rejected a device code module") != NULL;
        summary += strstr(line, "lines of this process not logged") != NULL;
    }
    if (f != NULL)
        fclose(f);
    unlink(log_path);
    int allowed = CRM_SESSION_LOG_BURST + (int)(CRM_SESSION_LOG_PER_SECOND * (seconds + 1.0));
    ck_assert_msg(rejected >= CRM_SESSION_LOG_BURST / 2 && rejected <= allowed,
                  "%d refusals logged in %.1f s, expected %d to %d", rejected, seconds, CRM_SESSION_LOG_BURST, allowed);
    ck_assert_msg(summary >= 1, "the session did not say how many lines it left out");
}
END_TEST

/* STATUS and END from a session that is no observer, before HELLO and after it,
 * and calls from an observer: refused with a reason, never answered with data. */
START_TEST(test_status_needs_an_observer)
{
    struct timeval limit = {10, 0};
    raw_server_start("malformed");
    for (int after_hello = 0; after_hello < 2; after_hello++) {
        int fd = raw_connect();
        CLIENT *c = raw_client(fd);
        if (after_hello) {
            crm_hello_res h;
            ck_assert_int_eq(raw_hello(c, CRM_PROTO_VERSION, &h), RPC_SUCCESS);
            xdr_free((xdrproc_t)xdr_crm_hello_res, (char *)&h);
        }
        crm_status_res st;
        memset(&st, 0, sizeof st);
        ck_assert_int_eq(clnt_call(c, CRM_STATUS, (xdrproc_t)(void (*)(void))xdr_void, NULL,
                                   (xdrproc_t)xdr_crm_status_res, (char *)&st, limit),
                         RPC_SUCCESS);
        ck_assert_int_ne(st.status, 0);
        ck_assert_ptr_nonnull(strstr(st.message, "observer"));
        ck_assert_uint_eq(st.sessions.sessions_len, 0);
        xdr_free((xdrproc_t)xdr_crm_status_res, (char *)&st);
        crm_end_args end = {.session_id = 1};
        crm_end_res er;
        memset(&er, 0, sizeof er);
        ck_assert_int_eq(clnt_call(c, CRM_END, (xdrproc_t)xdr_crm_end_args, (char *)&end, (xdrproc_t)xdr_crm_end_res,
                                   (char *)&er, limit),
                         RPC_SUCCESS);
        ck_assert_int_ne(er.status, 0);
        xdr_free((xdrproc_t)xdr_crm_end_res, (char *)&er);
        clnt_destroy(c);
        close(fd);
    }
    /* an observer may not run CUDA calls */
    int fd = raw_connect();
    CLIENT *c = raw_client(fd);
    crm_hello_res h;
    ck_assert_int_eq(raw_hello_caps(c, CRM_PROTO_VERSION, CRM_CAP_OBSERVE, &h), RPC_SUCCESS);
    ck_assert_int_eq(h.status, 0);
    ck_assert(h.capabilities & CRM_CAP_OBSERVE);
    ck_assert_int_eq(h.device_count, 0);
    xdr_free((xdrproc_t)xdr_crm_hello_res, (char *)&h);
    crm_call call = {.api = CRM_API_cudaMalloc};
    call.crm_call_u.cudaMalloc.size = 4096;
    crm_replies r;
    ck_assert_int_ne(raw_exec(c, &call, 1, &r), RPC_SUCCESS);
    crm__finish(c, fd);
}
END_TEST

static Suite *crm_malformed_suite(void)
{
    Suite *s = suite_create("malformed");
    TCase *tc = tcase_create("server");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_garbage_bytes_end_only_that_session);
    tcase_add_test(tc, test_exec_before_hello_is_refused);
    tcase_add_test(tc, test_wrong_protocol_version_gets_clear_refusal);
    tcase_add_test(tc, test_bad_pointers_and_handles_get_cuda_errors);
    tcase_add_test(tc, test_lying_lengths_and_truncation_end_only_that_session);
    tcase_add_test(tc, test_channel_claims_without_a_channel);
    tcase_add_test(tc, test_channel_token_and_payload);
    tcase_add_test(tc, test_bad_channel_greetings);
    tcase_add_test(tc, test_hostile_module_images);
    tcase_add_test(tc, test_hostile_graph_programs);
    tcase_add_test(tc, test_hostile_conditional_nodes);
    tcase_add_test(tc, test_hostile_graph_patches);
    tcase_add_test(tc, test_status_needs_an_observer);
    tcase_add_test(tc, test_a_session_cannot_fill_the_log);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(crm_malformed_suite)
