/* crm_h_graph_cond.c -- handlers of conditional graph nodes (protocol/cudart.api,
 * 904-905). A conditional handle is the device address of a 32-bit value
 * (client/crm_graph_cond.h): kernels set it with cudaGraphSetConditional (the PTX
 * engine's store, server/emu/ptx/ptx_devrt.c), cond_set stores its default, and
 * cond_run, one record of a running program, reads it once the work before it is
 * done and runs the body programs it picks: if, if/else, while, switch, as a GPU's
 * graph does. A body runs inside its program's launch, on its stream, and may hold
 * conditional nodes itself, CRM_GRAPH_DEPTH_MAX deep. A while loop is bounded by
 * the emulated device's watchdog, as a kernel is. */
#include <string.h>
#include "crm_server_gen.h"
#include "server/crm_backend.h"
#include "server/crm_h_graph.h"
#include "server/crm_session.h"
#include "server/emu/crm_emu_watchdog.h"

int crm_graph_cond_supported(void)
{
    return crm_backend_host_addressable();
}

cudaError_t crm_srv_crm_graph_cond_set(crm_session *s, uint64_t cell, unsigned value)
{
    cudaStream_t on;
    cudaError_t err = crm_session_check_region(s, cell, sizeof value, sizeof value, 1);
    if (err == cudaSuccess) /* the launch's stream inside a program, else the legacy stream (wire id 0) */
        err = s->replaying ? (on = s->replay_stream, cudaSuccess) : crm_session_stream(s, 0, &on);
    if (err != cudaSuccess)
        return err;
    return crm_rt.cudaMemcpy2DAsync((void *)(uintptr_t)cell, sizeof value, &value, sizeof value, sizeof value, 1,
                                    cudaMemcpyHostToDevice, on);
}

/* The value at cell once the work before it has run. */
static cudaError_t crm__read(crm_session *s, uint64_t cell, unsigned *value)
{
    cudaError_t err = crm_rt.cudaMemcpy2DAsync(value, sizeof *value, (const void *)(uintptr_t)cell, sizeof *value,
                                               sizeof *value, 1, cudaMemcpyDeviceToHost, s->replay_stream);
    return err != cudaSuccess ? err : crm_rt.cudaStreamSynchronize(s->replay_stream);
}

/* The body `value` picks among n: if picks the first when nonzero, else the
 * second (when it has one); while the first when nonzero; switch the value-th.
 * -1: none, the node is done. */
static long crm__pick(int type, unsigned value, size_t n)
{
    switch (type) {
    case cudaGraphCondTypeIf: return value != 0 ? 0 : (n == 2 ? 1 : -1);
    case cudaGraphCondTypeWhile: return value != 0 ? 0 : -1;
    default: return value < n ? (long)value : -1;
    }
}

/* 1 when a node of type may have n bodies. */
static int crm__shape_ok(int type, size_t n)
{
    switch (type) {
    case cudaGraphCondTypeIf: return n == 1 || n == 2;
    case cudaGraphCondTypeWhile: return n == 1;
    case cudaGraphCondTypeSwitch: return n >= 1;
    default: return 0;
    }
}

static uint64_t crm__body(const crm_bytes *bodies, long k)
{
    uint64_t id = 0;
    const unsigned char *p = (const unsigned char *)bodies->crm_bytes_val + 8 * k;
    for (int i = 7; i >= 0; i--)
        id = id << 8 | p[i];
    return id;
}

cudaError_t crm_srv_crm_graph_cond_run(crm_session *s, uint64_t cell, int type, const crm_bytes *bodies)
{
    size_t n = bodies->crm_bytes_len / 8;
    if (!s->replaying || bodies->crm_bytes_len % 8 != 0 || !crm__shape_ok(type, n))
        return cudaErrorInvalidValue;
    if (!crm_graph_cond_supported())
        return cudaErrorNotSupported;
    cudaError_t err = crm_session_check_region(s, cell, 4, 4, 1);
    if (err != cudaSuccess)
        return err;
    if (s->replay_depth >= CRM_GRAPH_DEPTH_MAX)
        return cudaErrorInvalidValue;
    double deadline = crm_emu_now() + crm_emu_watchdog_limit();
    unsigned value;
    long k;
    s->replay_depth++;
    while (err == cudaSuccess && (err = crm__read(s, cell, &value)) == cudaSuccess &&
           (k = crm__pick(type, value, n)) >= 0) {
        err = crm_graph_program_run(s, crm__body(bodies, k));
        if (type != cudaGraphCondTypeWhile)
            break;
        if (err == cudaSuccess && crm_emu_now() > deadline)
            err = cudaErrorLaunchTimeout;
    }
    s->replay_depth--;
    return err;
}
