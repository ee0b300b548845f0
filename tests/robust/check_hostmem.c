/* check_hostmem.c -- the server's side of shared pinned host memory
 * (server/crm_h_hostmem.c) against a raw RPC client: a region is attached only
 * with its own name, size and cookie; copies are refused outside it, with
 * lengths that overflow, on unknown regions and wild device addresses; a good
 * copy moves the bytes both ways; a detached region is gone; a session that
 * ends with regions attached leaves the server healthy; and a client that shrinks
 * a region under the server loses its session, not the server's process. */
#include <check.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cuda_runtime_api.h>
#include "crm_api.h"
#include "protocol/crm_shm.h"
#include "tests/robust/raw_session.h"
#include "tests/unit/crm_check.h"

#define REGION_BYTES (1u << 20)

static int attach(CLIENT *c, uint64_t id, const char *name, uint64_t size, const unsigned char *cookie,
                  unsigned cookie_len)
{
    crm_call call = {.api = CRM_API_crm_host_attach};
    call.crm_call_u.crm_host_attach = (crm_args_crm_host_attach){
        .id = id, .size = size,
        .name = {.crm_bytes_len = (u_int)strlen(name), .crm_bytes_val = (char *)name},
        .cookie = {.crm_bytes_len = cookie_len, .crm_bytes_val = (char *)cookie},
    };
    return raw_call(c, &call);
}

static int copy(CLIENT *c, uint64_t region, uint64_t offset, uint64_t hpitch, uint64_t dev, uint64_t width,
                uint64_t height, int to_device)
{
    crm_call call = {.api = CRM_API_crm_memcpy_host};
    call.crm_call_u.crm_memcpy_host = (crm_args_crm_memcpy_host){
        .region = region, .offset = offset, .hpitch = hpitch, .dev = dev, .dpitch = width, .width = width,
        .height = height, .to_device = to_device,
    };
    return raw_call(c, &call);
}

static int detach(CLIENT *c, uint64_t id)
{
    crm_call call = {.api = CRM_API_crm_host_detach};
    call.crm_call_u.crm_host_detach.id = id;
    return raw_call(c, &call);
}

static uint64_t device_alloc(CLIENT *c, uint64_t size)
{
    crm_call call = {.api = CRM_API_cudaMalloc};
    crm_replies r;
    call.crm_call_u.cudaMalloc.size = size;
    ck_assert_int_eq(raw_exec(c, &call, 1, &r), RPC_SUCCESS);
    ck_assert_int_eq(r.crm_replies_val[0].crm_reply_u.cudaMalloc.err, cudaSuccess);
    uint64_t ptr = r.crm_replies_val[0].crm_reply_u.cudaMalloc.devPtr;
    xdr_free((xdrproc_t)xdr_crm_replies, (char *)&r);
    return ptr;
}

static CLIENT *session(int *fd)
{
    crm_hello_res h;
    *fd = raw_connect();
    CLIENT *c = raw_client(*fd);
    ck_assert_int_eq(raw_hello(c, CRM_PROTO_VERSION, &h), RPC_SUCCESS);
    ck_assert_int_eq(h.status, 0);
    xdr_free((xdrproc_t)xdr_crm_hello_res, (char *)&h);
    return c;
}

START_TEST(test_attach_checks_name_size_and_cookie)
{
    char name[CRM_SHM_NAME_MAX];
    unsigned char cookie[CRM_SHM_COOKIE], wrong[CRM_SHM_COOKIE];
    crm_shm_region region;
    int fd;
    raw_server_start("hostmem");
    CLIENT *c = session(&fd);
    ck_assert_int_eq(crm_shm_region_create(&region, REGION_BYTES, name, cookie), 0);
    memcpy(wrong, cookie, sizeof wrong);
    wrong[3] ^= 1;
    ck_assert_int_eq(attach(c, 1, name, REGION_BYTES, wrong, CRM_SHM_COOKIE), cudaErrorInvalidValue);
    ck_assert_int_eq(attach(c, 1, name, REGION_BYTES, cookie, CRM_SHM_COOKIE - 1), cudaErrorInvalidValue);
    ck_assert_int_eq(attach(c, 1, name, REGION_BYTES + 4096, cookie, CRM_SHM_COOKIE), cudaErrorInvalidValue);
    ck_assert_int_eq(attach(c, 0, name, REGION_BYTES, cookie, CRM_SHM_COOKIE), cudaErrorInvalidValue);
    ck_assert_int_eq(attach(c, 1, "/etc-passwd", REGION_BYTES, cookie, CRM_SHM_COOKIE), cudaErrorInvalidValue);
    ck_assert_int_eq(attach(c, 1, "/cudarem-/../../etc/passwd", REGION_BYTES, cookie, CRM_SHM_COOKIE),
                     cudaErrorInvalidValue);
    ck_assert_int_eq(attach(c, 1, "", REGION_BYTES, cookie, CRM_SHM_COOKIE), cudaErrorInvalidValue);
    ck_assert_int_eq(attach(c, 1, name, REGION_BYTES, cookie, CRM_SHM_COOKIE), cudaSuccess);
    /* attached: the name is gone, and the id is taken */
    ck_assert_int_eq(attach(c, 2, name, REGION_BYTES, cookie, CRM_SHM_COOKIE), cudaErrorInvalidValue);
    ck_assert_int_eq(attach(c, 1, name, REGION_BYTES, cookie, CRM_SHM_COOKIE), cudaErrorInvalidValue);
    clnt_destroy(c);
    close(fd); /* the session ends with the region attached */
    crm_shm_region_unmap(&region);
    c = session(&fd);
    ck_assert_int_eq(detach(c, 1), cudaErrorInvalidValue); /* another session's id means nothing here */
    clnt_destroy(c);
    close(fd);
    ck_assert(raw_server_alive());
    raw_server_stop();
}
END_TEST

START_TEST(test_copies_stay_inside_the_region)
{
    char name[CRM_SHM_NAME_MAX];
    unsigned char cookie[CRM_SHM_COOKIE];
    crm_shm_region region;
    int fd;
    raw_server_start("hostmem");
    CLIENT *c = session(&fd);
    uint64_t dev = device_alloc(c, REGION_BYTES);
    ck_assert_int_eq(crm_shm_region_create(&region, REGION_BYTES, name, cookie), 0);
    ck_assert_int_eq(attach(c, 5, name, REGION_BYTES, cookie, CRM_SHM_COOKIE), cudaSuccess);
    for (unsigned i = 0; i < 65536; i++)
        region.data[i] = (char)(i * 7 + 3);
    /* a good copy in, and back at another offset */
    ck_assert_int_eq(copy(c, 5, 0, 65536, dev, 65536, 1, 1), cudaSuccess);
    ck_assert_int_eq(copy(c, 5, REGION_BYTES - 65536, 65536, dev, 65536, 1, 0), cudaSuccess);
    ck_assert(memcmp(region.data, region.data + REGION_BYTES - 65536, 65536) == 0);
    /* the very last byte of the region is inside; one more is not */
    ck_assert_int_eq(copy(c, 5, REGION_BYTES - 1, 1, dev, 1, 1, 0), cudaSuccess);
    ck_assert_int_eq(copy(c, 5, REGION_BYTES - 1, 2, dev, 2, 1, 0), cudaErrorInvalidValue);
    ck_assert_int_eq(copy(c, 5, REGION_BYTES, 1, dev, 1, 1, 1), cudaErrorInvalidValue);
    ck_assert_int_eq(copy(c, 5, UINT64_MAX - 10, 64, dev, 64, 1, 1), cudaErrorInvalidValue);
    ck_assert_int_eq(copy(c, 5, 0, UINT64_MAX / 2, dev, 64, 4, 0), cudaErrorInvalidValue);
    ck_assert_int_eq(copy(c, 5, 0, 32, dev, 64, 2, 0), cudaErrorInvalidValue); /* pitch under width */
    ck_assert_int_eq(copy(c, 5, 0, 64, dev, 0, 1, 0), cudaErrorInvalidValue);
    /* rows that fit the region but not the device allocation; a wild device address */
    ck_assert_int_eq(copy(c, 5, 0, 4096, dev + 4096, 4096, 256, 1), cudaErrorInvalidValue);
    ck_assert_int_eq(copy(c, 5, 0, 64, 0x7fff0000, 64, 1, 0), cudaErrorInvalidValue);
    ck_assert_int_eq(copy(c, 6, 0, 64, dev, 64, 1, 0), cudaErrorInvalidValue); /* unknown region */
    /* detached: gone */
    ck_assert_int_eq(detach(c, 5), cudaSuccess);
    ck_assert_int_eq(copy(c, 5, 0, 64, dev, 64, 1, 0), cudaErrorInvalidValue);
    ck_assert_int_eq(detach(c, 5), cudaErrorInvalidValue);
    crm_shm_region_unmap(&region);
    clnt_destroy(c);
    close(fd);
    ck_assert(raw_server_alive());
    raw_server_stop();
}
END_TEST

/* 1 when the file at path holds needle. */
static int log_holds(const char *path, const char *needle)
{
    static char text[1 << 16];
    FILE *f = fopen(path, "r");
    size_t n = f != NULL ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f != NULL)
        fclose(f);
    text[n] = '\0';
    return strstr(text, needle) != NULL;
}

START_TEST(test_a_shrunk_region_ends_the_session_not_the_server)
{
    char name[CRM_SHM_NAME_MAX], log[64];
    unsigned char cookie[CRM_SHM_COOKIE];
    crm_shm_region region;
    int fd;
    signal(SIGPIPE, SIG_IGN); /* the server closes this session under our calls */
    snprintf(log, sizeof log, "/tmp/crm-hostmem-%d.log", (int)getpid());
    raw_server_log_to(log);
    raw_server_start("hostmem");
    CLIENT *c = session(&fd);
    uint64_t dev = device_alloc(c, REGION_BYTES);
    ck_assert_int_eq(crm_shm_region_create(&region, REGION_BYTES, name, cookie), 0);
    ck_assert_int_eq(attach(c, 3, name, REGION_BYTES, cookie, CRM_SHM_COOKIE), cudaSuccess);
    ck_assert_int_eq(copy(c, 3, 0, REGION_BYTES, dev, REGION_BYTES, 1, 1), cudaSuccess);
    ck_assert_int_eq(ftruncate(region.fd, 0), 0); /* the pages the server reads from are gone */
    copy(c, 3, 0, REGION_BYTES, dev, REGION_BYTES, 1, 1); /* answered or not: the session is over */
    ck_assert_int_eq(copy(c, 3, 0, 64, dev, 64, 1, 0), -1);
    clnt_destroy(c);
    close(fd);
    crm_shm_region_unmap(&region);
    c = session(&fd); /* the server serves the next client */
    ck_assert_uint_ne(device_alloc(c, 4096), 0);
    clnt_destroy(c);
    close(fd);
    ck_assert(raw_server_alive());
    raw_server_stop();
    ck_assert_msg(log_holds(log, "shrank shared memory the server was using"), "no line saying why, in %s", log);
    ck_assert_msg(!log_holds(log, "died of signal"), "the session process crashed (%s)", log);
    unlink(log);
}
END_TEST

static Suite *hostmem_suite(void)
{
    Suite *s = suite_create("hostmem");
    TCase *tc = tcase_create("server");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_attach_checks_name_size_and_cookie);
    tcase_add_test(tc, test_copies_stay_inside_the_region);
    tcase_add_test(tc, test_a_shrunk_region_ends_the_session_not_the_server);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(hostmem_suite)
