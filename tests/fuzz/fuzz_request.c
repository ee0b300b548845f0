/* fuzz_request.c -- libFuzzer harness over everything a client sends on its session
 * connection: the input is the byte stream of that connection (record-marked ONC
 * RPC calls: NULL, AUTH, HELLO, EXEC batches with their bulk payloads), which the
 * server's own session code (server/crm_session.c: RPC framing, XDR decoding,
 * dispatch, handlers) serves on the emulated device in this process, as a session
 * process would. A thread feeds the input and drains the replies; the session ends
 * at the input's end and frees what it was given. Seeds: sessions recorded from
 * the test programs (tests/fuzz/seeds/request, tests/fuzz/record.py). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
#include "tests/fuzz/fuzz_feed.h"
#include "common/crm_log.h"
#include "server/crm_auth_srv.h"
#include "server/crm_backend.h"
#include "server/crm_session.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    char err[512];
    crm_auth_policy open_door = {.insecure = 1};
    (void)argc;
    (void)argv;
    setenv("CUDAREM_EMU_MEM", "256M", 0);      /* a fuzzed cudaMalloc stays small */
    setenv("CUDAREM_EMU_THREADS", "1", 0);
    setenv("CUDAREM_EMU_KERNEL_TIMEOUT", "0.05", 0);
    setenv("CUDAREM_CACHE_DIR", "off", 0);     /* no module cache on disk */
    crm_log_init("fuzz-request", CRM_LOG_ERROR);
    if (crm_auth_srv_load(&open_door, err, sizeof err) != 0 ||
        crm_backend_load(CRM_BACKEND_EMU, err, sizeof err) != 0) {
        fprintf(stderr, "fuzz_request: %s (set CUDAREM_EMU_LIB to build/libcudarem-emu.so)\n", err);
        exit(1);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int sv[2];
    pthread_t t;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return 0;
    feeder f = {sv[0], data, size};
    if (pthread_create(&t, NULL, feed, &f) != 0) {
        close(sv[0]);
        close(sv[1]);
        return 0;
    }
    crm_session_run(1, sv[1], "fuzz", NULL, 0); /* closes sv[1] */
    pthread_join(t, NULL);
    close(sv[0]);
    return 0;
}
