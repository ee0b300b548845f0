/* check_isolation.c -- one session handed another's objects. Session A holds one of
 * each object a client can name (device memory, a stream, an event, cuBLAS, cuDNN
 * and cuBLASLt handles, a module and its function, a physical allocation); then,
 * for every call of the protocol that takes such objects (the generated list,
 * crm_iso_gen.h), a fresh session B, holding its own objects under other ids,
 * makes the call once per object parameter with A's object in that place and its
 * own everywhere else, and last with its own objects only. Each call with A's
 * object must fail, with the error a local GPU gives for an invalid object of that
 * kind when B's own call succeeds; nothing may crash; and A's memory and objects
 * must be as they were. A kernel launch and a host-to-device copy, whose objects
 * travel inside structures, are checked by hand. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include "crm_api.h"
#include "crm_iso_gen.h"
#include "protocol/crm_wire.h"
#include "tests/robust/raw_session.h"
#include "tests/unit/crm_check.h"

#define BUF_BYTES (1u << 20)
#define PATTERN 0x5a
#define VMM_BYTES (2u << 20)

static const char kernel_ptx[] = ".version 8.0\n.target sm_80\n.address_size 64\n"
                                 ".visible .entry k(.param .u64 p)\n{\n ret;\n}\n";

/* One session's objects: its buffer and the ids it created its objects under. */
typedef struct objects {
    uint64_t buf, stream, event, blas, dnn, lt, module, func, phys;
} objects;

typedef struct session {
    int fd;
    CLIENT *c;
    objects o;
} session;

static int call1(session *s, crm_call *call)
{
    return raw_call(s->c, call);
}

static uint64_t alloc(session *s, uint64_t size)
{
    crm_call call = {.api = CRM_API_cudaMalloc};
    crm_replies r;
    call.crm_call_u.cudaMalloc.size = size;
    ck_assert_int_eq(raw_exec(s->c, &call, 1, &r), RPC_SUCCESS);
    ck_assert_int_eq(r.crm_replies_val[0].crm_reply_u.cudaMalloc.err, cudaSuccess);
    uint64_t p = r.crm_replies_val[0].crm_reply_u.cudaMalloc.devPtr;
    xdr_free((xdrproc_t)xdr_crm_replies, (char *)&r);
    return p;
}

/* Creates call `api` with the single u64 id argument every creating call starts with. */
static void create(session *s, crm_call *call, const char *what)
{
    int err = call1(s, call);
    ck_assert_msg(err == 0, "%s: status %d", what, err);
}

static void open_session(session *s, uint64_t base, int skip_first_block)
{
    crm_hello_res h;
    crm_call call;
    s->fd = raw_connect();
    s->c = raw_client(s->fd);
    ck_assert_int_eq(raw_hello(s->c, CRM_PROTO_VERSION, &h), RPC_SUCCESS);
    ck_assert_int_eq(h.status, 0);
    xdr_free((xdrproc_t)xdr_crm_hello_res, (char *)&h);
    if (skip_first_block)
        (void)alloc(s, BUF_BYTES); /* A's buffer lies where B's does not */
    s->o.buf = alloc(s, BUF_BYTES);
    memset(&call, 0, sizeof call);
    call.api = CRM_API_crm_memset;
    call.crm_call_u.crm_memset = (crm_args_crm_memset){.dst = s->o.buf, .pitch = BUF_BYTES, .value = PATTERN,
                                                       .width = BUF_BYTES, .height = 1};
    create(s, &call, "memset");
    s->o = (objects){s->o.buf, base + 1, base + 2, base + 3, base + 4, base + 5, base + 6, base + 7, base + 8};
    memset(&call, 0, sizeof call);
    call.api = CRM_API_crm_stream_create;
    call.crm_call_u.crm_stream_create.id = s->o.stream;
    create(s, &call, "stream");
    call.api = CRM_API_crm_event_create;
    call.crm_call_u.crm_event_create = (crm_args_crm_event_create){.id = s->o.event};
    create(s, &call, "event");
    call.api = CRM_API_cublasCreate_v2;
    call.crm_call_u.cublasCreate_v2.id = s->o.blas;
    create(s, &call, "cublas");
    call.api = CRM_API_crm_dnn_create;
    call.crm_call_u.crm_dnn_create.id = s->o.dnn;
    create(s, &call, "cudnn");
    call.api = CRM_API_cublasLtCreate;
    call.crm_call_u.cublasLtCreate.id = s->o.lt;
    create(s, &call, "cublasLt");
    memset(&call, 0, sizeof call);
    call.api = CRM_API_crm_module_load;
    call.crm_call_u.crm_module_load.id = s->o.module;
    call.crm_call_u.crm_module_load.image.data.data_len = sizeof kernel_ptx;
    call.crm_call_u.crm_module_load.image.data.data_val = (char *)kernel_ptx;
    create(s, &call, "module");
    memset(&call, 0, sizeof call);
    call.api = CRM_API_crm_function_get;
    call.crm_call_u.crm_function_get = (crm_args_crm_function_get){.module = s->o.module, .id = s->o.func,
                                                                   .name = {"k"}};
    create(s, &call, "function");
    memset(&call, 0, sizeof call);
    call.api = CRM_API_crm_vmm_create;
    call.crm_call_u.crm_vmm_create = (crm_args_crm_vmm_create){.id = s->o.phys, .size = VMM_BYTES};
    create(s, &call, "physical allocation");
}

static void close_session(session *s)
{
    clnt_destroy(s->c);
    close(s->fd);
}

/* Which object parameter gets A's object (-1: none), and both sessions' objects. */
typedef struct picker {
    int foreign;
    const objects *mine, *theirs;
} picker;

static uint64_t pick(void *ctx, int index, enum crm_iso_kind kind, const char *handle)
{
    const picker *p = ctx;
    const objects *o = index == p->foreign ? p->theirs : p->mine;
    switch (kind) {
    case CRM_ISO_DEVPTR: return o->buf;
    case CRM_ISO_STREAM: return o->stream;
    case CRM_ISO_EVENT: return o->event;
    default: break;
    }
    if (strcmp(handle, "cublasHandle_t") == 0)
        return o->blas;
    if (strcmp(handle, "cudnnHandle_t") == 0)
        return o->dnn;
    if (strcmp(handle, "cublasLtHandle_t") == 0)
        return o->lt;
    if (strcmp(handle, "kernel_module") == 0)
        return o->module;
    if (strcmp(handle, "kernel_func") == 0)
        return o->func;
    if (strcmp(handle, "vmm_phys") == 0)
        return o->phys;
    ck_abort_msg("no object for handle kind %s", handle);
    return 0;
}

/* The generated fill leaves structures zeroed; a kernel or symbol name must be a
 * string to be sent, and is the one the modules hold. */
static void fill(const crm_iso_case *c, crm_call *call, crm_iso_object_fn object, void *ctx)
{
    c->fill(call, object, ctx);
    if (call->api == CRM_API_crm_function_get)
        call->crm_call_u.crm_function_get.name.name = "k";
    if (call->api == CRM_API_crm_symbol_get)
        call->crm_call_u.crm_symbol_get.name.name = "k";
}

/* The kinds of a case's object parameters, as its fill function asks for them. */
typedef struct probe {
    enum crm_iso_kind kind[8];
    const char *handle[8];
} probe;

static uint64_t record(void *ctx, int index, enum crm_iso_kind kind, const char *handle)
{
    probe *p = ctx;
    if (index < 8) {
        p->kind[index] = kind;
        p->handle[index] = handle;
    }
    return 0;
}

static const char *kind_name(enum crm_iso_kind k, const char *handle)
{
    return k == CRM_ISO_DEVPTR ? "devptr" : k == CRM_ISO_STREAM ? "stream" : k == CRM_ISO_EVENT ? "event" : handle;
}

/* The status a call of `library` gives for another session's object of `kind`,
 * when the same call with the session's own objects succeeds; -1: none fixed. A
 * local GPU gives these for an invalid object of that kind (cuBLAS and cuDNN take
 * any pointer and fault later; the server refuses a foreign one at once with the
 * library's invalid-value status). */
static int expected(const char *library, enum crm_iso_kind kind, const char *handle)
{
    static const struct {
        const char *library;
        int kind;            /* enum crm_iso_kind */
        const char *handle;  /* for CRM_ISO_HANDLE */
        int status;
    } table[] = {
        {"cudart", CRM_ISO_DEVPTR, NULL, cudaErrorInvalidValue},
        {"cudart", CRM_ISO_STREAM, NULL, cudaErrorInvalidResourceHandle},
        {"cudart", CRM_ISO_EVENT, NULL, cudaErrorInvalidResourceHandle},
        {"cudart", CRM_ISO_HANDLE, "kernel_module", cudaErrorInvalidResourceHandle},
        {"cudart", CRM_ISO_HANDLE, "kernel_func", cudaErrorInvalidDeviceFunction},
        {"cublas", CRM_ISO_DEVPTR, NULL, CUBLAS_STATUS_INVALID_VALUE},
        {"cublas", CRM_ISO_STREAM, NULL, CUBLAS_STATUS_NOT_INITIALIZED},
        {"cublas", CRM_ISO_HANDLE, "cublasHandle_t", CUBLAS_STATUS_NOT_INITIALIZED},
        {"cublasLt", CRM_ISO_HANDLE, "cublasLtHandle_t", CUBLAS_STATUS_NOT_INITIALIZED},
        {"cudnn", CRM_ISO_DEVPTR, NULL, CUDNN_STATUS_BAD_PARAM},
        {"cudnn", CRM_ISO_STREAM, NULL, CUDNN_STATUS_BAD_PARAM},
        {"cudnn", CRM_ISO_HANDLE, "cudnnHandle_t", CUDNN_STATUS_BAD_PARAM},
        {"cuda", CRM_ISO_DEVPTR, NULL, CUDA_ERROR_INVALID_VALUE},
        {"cuda", CRM_ISO_HANDLE, "vmm_phys", CUDA_ERROR_INVALID_VALUE},
    };
    for (size_t i = 0; i < sizeof table / sizeof *table; i++)
        if (strcmp(table[i].library, library) == 0 && table[i].kind == (int)kind &&
            (kind != CRM_ISO_HANDLE || strcmp(table[i].handle, handle) == 0))
            return table[i].status;
    return -1;
}

static session a;

static void setup(void)
{
    raw_server_start("isolation");
    open_session(&a, 0, 1);
}

static void teardown(void)
{
    raw_server_kill();
}

/* A's buffer still holds its pattern and A's objects still work. */
static void assert_a_intact(void)
{
    crm_call call;
    crm_replies r;
    memset(&call, 0, sizeof call);
    call.api = CRM_API_crm_memcpy_d2h;
    call.crm_call_u.crm_memcpy_d2h = (crm_args_crm_memcpy_d2h){.src = a.o.buf, .spitch = BUF_BYTES,
                                                               .width = BUF_BYTES, .height = 1};
    ck_assert_int_eq(raw_exec(a.c, &call, 1, &r), RPC_SUCCESS);
    crm_res_crm_memcpy_d2h *d = &r.crm_replies_val[0].crm_reply_u.crm_memcpy_d2h;
    ck_assert_int_eq(d->err, cudaSuccess);
    ck_assert_uint_eq(d->data.len, BUF_BYTES);
    int intact = 1;
    for (uint32_t i = 0; i < BUF_BYTES && intact; i++)
        intact = (unsigned char)d->data.owned[i] == PATTERN;
    xdr_free((xdrproc_t)xdr_crm_replies, (char *)&r);
    ck_assert_msg(intact, "session A's memory changed");
    memset(&call, 0, sizeof call);
    call.api = CRM_API_cudaStreamSynchronize;
    call.crm_call_u.cudaStreamSynchronize.stream = a.o.stream;
    ck_assert_int_eq(call1(&a, &call), cudaSuccess);
    call.api = CRM_API_cublasGetVersion_v2;
    call.crm_call_u.cublasGetVersion_v2.handle = a.o.blas;
    ck_assert_int_eq(call1(&a, &call), 0);
}

/* Every generated case, in a fresh session B per case. */
START_TEST(test_foreign_objects_refused)
{
    int checked = 0, attributable = 0;
    for (int i = 0; i < crm_iso_ncases; i++) {
        const crm_iso_case *c = &crm_iso_cases[i];
        session b;
        probe kinds;
        crm_call call;
        open_session(&b, 1000, 0);
        ck_assert_msg(b.o.buf != a.o.buf, "both sessions' buffers at one address: the test proves nothing");
        fill(c, &call, record, &kinds);
        int err1[8];
        for (int k = 0; k < c->nobjects && k < 8; k++) {
            picker p = {k, &b.o, &a.o};
            fill(c, &call, pick, &p);
            err1[k] = call1(&b, &call);
            checked++;
        }
        picker own = {-1, &b.o, &a.o};
        fill(c, &call, pick, &own);
        int err0 = call1(&b, &call);
        attributable += err0 == 0;
        close_session(&b);
        ck_assert_msg(raw_server_alive(), "the server died at %s", c->name);
        for (int k = 0; k < c->nobjects && k < 8; k++) {
            const char *kname = kind_name(kinds.kind[k], kinds.handle[k]);
            int want = err0 == 0 ? expected(c->library, kinds.kind[k], kinds.handle[k]) : -1;
            ck_assert_msg(err1[k] > 0, "%s with session A's %s: status %d, expected a refusal", c->name, kname,
                          err1[k]);
            ck_assert_msg(want < 0 || err1[k] == want, "%s with session A's %s: status %d, expected %d", c->name,
                          kname, err1[k], want);
        }
    }
    printf("isolation: %d cases, %d foreign-object calls, %d cases whose own call succeeded\n", crm_iso_ncases,
           checked, attributable);
    assert_a_intact();
    raw_server_stop();
}
END_TEST

/* The objects inside structures: a launch of A's function, or of B's on A's stream,
 * and a host-to-device copy into A's memory. */
START_TEST(test_launch_and_copy_with_foreign_objects)
{
    session b;
    crm_call call;
    static const char bytes[16] = "not for A, 16 B";
    open_session(&b, 1000, 0);
    for (int foreign = 0; foreign < 2; foreign++) {
        crm_kparam param = {0, 8};
        memset(&call, 0, sizeof call);
        call.api = CRM_API_crm_launch;
        crm_launch *l = &call.crm_call_u.crm_launch.launch;
        l->func = foreign == 0 ? a.o.func : b.o.func;
        l->stream = foreign == 1 ? a.o.stream : b.o.stream;
        for (int d = 0; d < 3; d++)
            l->grid[d] = l->block[d] = 1;
        l->params.params_len = 1;
        l->params.params_val = &param;
        l->blob.blob_len = 8;
        l->blob.blob_val = (char *)&b.o.buf;
        ck_assert_int_eq(call1(&b, &call), foreign == 0 ? cudaErrorInvalidDeviceFunction
                                                        : cudaErrorInvalidResourceHandle);
    }
    memset(&call, 0, sizeof call);
    call.api = CRM_API_crm_memcpy_h2d;
    call.crm_call_u.crm_memcpy_h2d.data = (crm_h2d_args){.dst = a.o.buf, .dpitch = 16, .width = 16, .height = 1,
                                                         .src = bytes, .spitch = 16};
    ck_assert_int_eq(call1(&b, &call), cudaErrorInvalidValue);
    call.crm_call_u.crm_memcpy_h2d.data.dst = b.o.buf; /* the same copy into its own memory works */
    ck_assert_int_eq(call1(&b, &call), cudaSuccess);
    close_session(&b);
    assert_a_intact();
    raw_server_stop();
}
END_TEST

static Suite *isolation_suite(void)
{
    Suite *s = suite_create("isolation");
    TCase *tc = tcase_create("objects");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_foreign_objects_refused);
    tcase_add_test(tc, test_launch_and_copy_with_foreign_objects);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(isolation_suite)
