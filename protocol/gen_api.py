#!/usr/bin/env python3
"""gen_api.py -- expands the API spec files (protocol/*.api) into the wire format,
client stubs and server dispatch, so each remoted call is declared exactly once.

usage: gen_api.py [--cuda-include DIR] TEMPLATE_X OUTDIR SPEC...

Writes into OUTDIR: crm_api.x (TEMPLATE_X with the companion type files
SPECSTEM_types.x spliced in at `%%TYPES%%` and the generated types at `%%API%%`,
then compiled by rpcgen), crm_client_gen.[ch] (crm_rpc_NAME marshalling),
crm_interpose_gen.c (exported functions of client=auto rows), crm_server_gen.[ch]
(dispatch, handler prototypes, server=auto handlers), crm_rt_fns_gen.h (X-macro
CRM_RT_FN(LIBRARY, NAME) of the backend functions generated handlers call),
crm_api_names.c (number -> name, for logs), crm_iso_gen.[ch] (protocol/gen_iso.py:
every call that takes a session's objects, for the isolation test), and the three
layers of cuBLAS's `blas` rows, whose prototypes it reads from DIR's cublas_api.h:
crm_blas_gen.c, crm_h_blas_gen.c and crm_emu_blas_gen.c (protocol/gen_blas.py), and
the two of cuDNN's `dnn` rows, whose prototypes it reads from DIR's cudnn_ops.h,
cudnn_cnn.h and cudnn_adv.h: crm_dnn_gen.c and crm_h_dnn_gen.c (protocol/gen_dnn.py).

A spec file may start with directives:
  @library NAME        backend library its server=auto rows call (cudart, cublas, cudnn)
  @status TYPE OK LOST BADHANDLE UNSUPPORTED
                       status type of its calls, its success value, the value a lost
                       server turns into (TRANSPORT: the connection's cudaError_t),
                       the value for an unknown handle id, and for a backend function
                       the server cannot load
  @header FILE         header declaring its CUDA prototypes
"""
import os
import sys

from gen_blas import BlasRow, gen_blas_files, load_protos
from gen_dnn import DnnRow, gen_dnn_files
from gen_iso import gen_iso

# spec type -> (wire .x type, handler C type, CUDA C type)
SCALARS = {
    "int":    ("int",            "int",          "int"),
    "uint":   ("unsigned int",   "unsigned int", "unsigned int"),
    "i64":    ("hyper",          "int64_t",      "int64_t"),
    "u64":    ("unsigned hyper", "uint64_t",     "uint64_t"),
    "size":   ("unsigned hyper", "uint64_t",     "size_t"),
    "float":  ("float",          "float",        "float"),
    "double": ("double",         "double",       "double"),
    "devptr": ("unsigned hyper", "uint64_t",     "void *"),
    "stream": ("unsigned hyper", "uint64_t",     "cudaStream_t"),
    "event":  ("unsigned hyper", "uint64_t",     "cudaEvent_t"),
}
# bulk, struct and opaque types: (wire type, handler C type) -- handlers get a pointer
SPECIAL = {
    "prop":  ("crm_prop",     "crm_prop"),
    "h2d":   ("crm_h2d_args", "crm_h2d_args"),
    "d2h":   ("crm_d2h_res",  "crm_d2h_res"),
    "bytes": ("crm_bytes",    "crm_bytes"),
}


class Param:
    def __init__(self, text):
        parts = text.split()
        if len(parts) != 3 or parts[0] not in ("in", "out"):
            raise ValueError("bad parameter: %r" % text)
        self.dir, self.type, self.name = parts
        self.enum = self.handle = self.struct = None
        if self.type.startswith("enum:"):
            self.enum = self.type[5:]
        elif self.type.startswith("handle:"):
            self.handle = self.type[7:]
        elif self.type.startswith("struct:"):
            self.struct = self.type[7:]
        elif self.type not in SCALARS and self.type not in SPECIAL:
            raise ValueError("unknown type %r" % self.type)

    @property
    def special(self):
        return self.type in SPECIAL or self.struct is not None

    def wire(self):
        if self.enum:
            return "int"
        if self.handle:
            return "unsigned hyper"
        if self.struct:
            return self.struct
        return SPECIAL[self.type][0] if self.type in SPECIAL else SCALARS[self.type][0]

    def handler_c(self):
        if self.enum:
            return "int"
        if self.handle:
            return "uint64_t"
        if self.struct:
            return self.struct
        return SPECIAL[self.type][1] if self.type in SPECIAL else SCALARS[self.type][1]

    def cuda_c(self):
        if self.enum:
            return self.enum if self.enum.endswith("_t") else "enum " + self.enum
        if self.handle:
            return self.handle
        return SCALARS[self.type][2]


class Lib:
    """The directives of one spec file."""
    def __init__(self):
        self.library = "cudart"
        self.status, self.ok, self.lost = "cudaError_t", "cudaSuccess", "TRANSPORT"
        self.badhandle, self.unsupported = "cudaErrorInvalidResourceHandle", "cudaErrorNotSupported"
        self.header = "cuda_runtime_api.h"


class Fn:
    def __init__(self, num, name, flags, params, lib):
        self.num, self.name, self.params, self.lib = num, name, params, lib
        self.client = flags.get("client", "manual")
        self.server = flags.get("server", "manual")
        self.ptsz = flags.get("ptsz") or flags.get("ptds")
        self.async_ = "async" in flags   # queued: its failure is reported later
        self.sync = "sync" in flags      # synchronising: reports queued failures
        self.queueable = "queueable" in flags  # also crm_rpc_NAME_queued, for checked arguments
        if (self.async_ or self.queueable) and [p for p in params if p.dir == "out"]:
            raise ValueError("%s: an async or queueable call cannot have out parameters" % name)
        self.ins = [p for p in params if p.dir == "in"]
        self.outs = [p for p in params if p.dir == "out"]


TWIN64_OFFSET = 10000  # wire number of a blas row's _64 twin: the row's + this


def parse(path, protos):
    fns, lib = [], Lib()
    for raw in open(path):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("@"):
            words = line[1:].split()
            if words[0] == "library":
                lib.library = words[1]
            elif words[0] == "status":
                lib.status, lib.ok, lib.lost, lib.badhandle, lib.unsupported = words[1:6]
            elif words[0] == "header":
                lib.header = words[1]
            else:
                sys.exit("%s: unknown directive %s" % (path, words[0]))
            continue
        head, _, tail = line.partition(":")
        words = head.split()
        flags = {}
        for w in words[2:]:
            k, _, v = w.partition("=")
            flags[k] = v or k
        if "blas" in flags:
            fns.append(blas_fn(int(words[0]), words[1], flags, tail, lib, protos))
            twin = words[1] + "_64"  # the 64-bit-integer twin (gen_blas.py): the same row
            if twin in protos("cublas"):
                fns.append(blas_fn(int(words[0]) + TWIN64_OFFSET, twin, flags, tail, lib, protos))
            continue
        if "dnn" in flags:
            fns.append(dnn_fn(int(words[0]), words[1], flags, tail, lib, protos))
            continue
        params = [Param(p.strip()) for p in tail.split(",") if p.strip()]
        fns.append(Fn(int(words[0]), words[1], flags, params, lib))
    return fns


def blas_fn(num, name, flags, tail, lib, protos):
    """A `blas` row (protocol/gen_blas.py): its wire parameters follow from the
    prototype and the annotations; its three layers are generated apart."""
    try:
        row = BlasRow(name, flags, tail, protos("cublas"))
    except ValueError as e:
        sys.exit("gen_api.py: %s" % e)
    flags = dict(flags, client="blas", server="blas")
    f = Fn(num, name, flags, [Param(p) for p in row.specs()], lib)
    f.blas = row
    return f


def dnn_fn(num, name, flags, tail, lib, protos):
    """A `dnn` row (protocol/gen_dnn.py): wire parameters from the prototype."""
    try:
        row = DnnRow(name, tail, protos("cudnn"))
    except ValueError as e:
        sys.exit("gen_api.py: %s" % e)
    f = Fn(num, name, dict(flags, client="dnn", server="dnn"), [Param(p) for p in row.specs()], lib)
    f.dnn = row
    return f


def gen_x(fns, template, types):
    out = ["enum crm_api {"]
    out.append(",\n".join("    CRM_API_%s = %d" % (f.name, f.num) for f in fns))
    out.append("};\n")
    for f in fns:
        if f.ins:
            out.append("struct crm_args_%s {" % f.name)
            out += ["    %s %s;" % (p.wire(), p.name) for p in f.ins]
            out.append("};")
        out.append("struct crm_res_%s {\n    int err;" % f.name)
        out += ["    %s %s;" % (p.wire(), p.name) for p in f.outs]
        out.append("};\n")
    out.append("union crm_call switch (crm_api api) {")
    for f in fns:
        arm = ("crm_args_%s %s;" % (f.name, f.name)) if f.ins else "void;"
        out.append("case CRM_API_%s:\n    %s" % (f.name, arm))
    out.append("};\n")
    out.append("union crm_reply switch (crm_api api) {")
    for f in fns:
        out.append("case CRM_API_%s:\n    crm_res_%s %s;" % (f.name, f.name, f.name))
    out.append("};")
    # Only the markers standing alone on a line: the template's comment names them too.
    return template.replace("\n%%TYPES%%\n", "\n%s\n" % types).replace(
        "\n%%API%%\n", "\n%s\n" % "\n".join(out))


def rpc_params(f):
    ps = ["%s %s" % (p.handler_c(), p.name) if not p.special
          else "const %s *%s" % (p.handler_c(), p.name) for p in f.ins]
    ps += ["%s *%s" % (p.handler_c(), p.name) for p in f.outs]
    return ", ".join(ps) or "void"


def headers(fns):
    seen = []
    for f in fns:
        if f.lib.header not in seen:
            seen.append(f.lib.header)
    return ["#include <%s>" % h for h in seen]


def fill_call(f):
    """The lines that fill a crm_call named `call` with f's in parameters."""
    lines = ["    call.api = CRM_API_%s;" % f.name]
    for p in f.ins:
        val = "*" + p.name if p.special else p.name
        lines.append("    call.crm_call_u.%s.%s = %s;" % (f.name, p.name, val))
    return lines


def gen_client(fns):
    h = ["/* crm_client_gen.h -- generated by protocol/gen_api.py; do not edit. */",
         "#ifndef CRM_CLIENT_GEN_H", "#define CRM_CLIENT_GEN_H"] + headers(fns) + \
        ['#include "crm_api.h"', ""]
    c = ["/* crm_client_gen.c -- generated by protocol/gen_api.py; do not edit.",
         " * One marshalling function per remoted call: fill the union arm, run it",
         " * through the connection, copy the results out. */",
         "#include <string.h>", '#include "crm_client_gen.h"',
         '#include "client/crm_conn.h"', '#include "client/crm_graph.h"',
         '#include "client/crm_handles.h"', ""]
    for f in fns:
        proto = "%s crm_rpc_%s(%s)" % (f.lib.status, f.name, rpc_params(f))
        h.append(proto + ";")
        c.append(proto + "\n{")
        if f.sync and f.lib.status == "cudaError_t":  # a wait: refused on capturing work
            c.append("    cudaError_t refused = crm_capture_refuse_sync(%s, %s);\n"
                     "    if (refused != cudaSuccess)\n        return refused;" % (first_of(f, "stream"), first_of(f, "event")))
        c.append("    crm_call call;\n    crm_reply reply;")
        c.append("    memset(&call, 0, sizeof call);\n    memset(&reply, 0, sizeof reply);")
        c += fill_call(f)
        for p in f.outs:
            if p.special:  # caller presets where decoded bulk data must land
                c.append("    reply.crm_reply_u.%s.%s = *%s;" % (f.name, p.name, p.name))
        lost = "transport" if f.lib.lost == "TRANSPORT" else f.lib.lost
        if f.async_:
            c.append("    cudaError_t transport = %s;" % async_send(f))
            c.append("    %s err = transport != cudaSuccess ? %s : %s;" % (f.lib.status, lost, f.lib.ok))
        else:
            c.append("    cudaError_t transport = crm_conn_exec(&call, &reply, 1);")
            c.append("    %s err = transport != cudaSuccess ? %s : (%s)reply.crm_reply_u.%s.err;"
                     % (f.lib.status, lost, f.lib.status, f.name))
        if f.outs:
            c.append("    if (err == %s) {" % f.lib.ok)
            for p in f.outs:
                c.append("        *%s = reply.crm_reply_u.%s.%s;" % (p.name, f.name, p.name))
            if any(p.special for p in f.outs):
                c.append("        memset(&reply.crm_reply_u.%s, 0, sizeof reply.crm_reply_u.%s);"
                         % (f.name, f.name))
            c.append("    }")
        c.append("    crm_conn_reply_free(&reply);\n    return err;\n}\n")
        if f.queueable:
            gen_queued(f, h, c)
    gen_route(fns, h, c)
    h += ["", "#endif"]
    return "\n".join(h) + "\n", "\n".join(c) + "\n"


def first_of(f, kind):
    """The wire value of f's first in parameter of type kind, else CRM_WIRE_BAD_HANDLE."""
    names = [p.name for p in f.ins if p.type == kind]
    return names[0] if names else "CRM_WIRE_BAD_HANDLE"


def async_send(f):
    """How an async or queued call travels: work on a stream is captured into a graph
    while that stream is capturing (client/crm_graph.h)."""
    stream = first_of(f, "stream")
    return "crm_conn_async(&call)" if stream == "CRM_WIRE_BAD_HANDLE" else "crm_conn_async_on(&call, %s)" % stream


def gen_queued(f, h, c):
    """crm_rpc_NAME_queued: the call queued like an async one, for a caller that has
    checked what a GPU would refuse; a failure the server still finds is reported at
    the next synchronising call."""
    proto = "%s crm_rpc_%s_queued(%s)" % (f.lib.status, f.name, rpc_params(f))
    h.append(proto + ";")
    c.append(proto + "\n{")
    c.append("    crm_call call;")
    c.append("    memset(&call, 0, sizeof call);")
    c += fill_call(f)
    lost = "transport" if f.lib.lost == "TRANSPORT" else f.lib.lost
    c.append("    cudaError_t transport = %s;" % async_send(f))
    c.append("    return transport != cudaSuccess ? %s : %s;\n}\n" % (lost, f.lib.ok))


def route_key(f):
    """The first argument that says which device a call is about: a device address
    (a bulk host-to-device copy's destination) or an object id chosen by the client."""
    for p in f.ins:
        if p.type == "devptr":
            return "CRM_ROUTE_DEVPTR", p.name
        if p.type == "h2d":
            return "CRM_ROUTE_DEVPTR", p.name + ".dst"
        if p.type in ("stream", "event") or p.handle:
            return "CRM_ROUTE_OBJECT", p.name
    return None


def gen_route(fns, h, c):
    h += ["", "/* What routes a call to one server of a pool (client/crm_pool.h): the first",
          " * device address or object id among its arguments, in *key. */",
          "enum { CRM_ROUTE_NONE, CRM_ROUTE_DEVPTR, CRM_ROUTE_OBJECT };",
          "int crm_call_route(const crm_call *call, uint64_t *key);"]
    c += ["int crm_call_route(const crm_call *call, uint64_t *key)\n{", "    switch (call->api) {"]
    for f in fns:
        rk = route_key(f)
        if rk:
            c.append("    case CRM_API_%s:\n        *key = call->crm_call_u.%s.%s;\n        return %s;"
                     % (f.name, f.name, rk[1], rk[0]))
    c += ["    default:\n        *key = 0;\n        return CRM_ROUTE_NONE;\n    }\n}"]


def wire_of(p, ptds):
    if p.type == "stream":
        return "crm_stream_wire(%s, %s)" % (p.name, ptds)
    if p.type == "event":
        return "crm_event_wire(%s)" % p.name
    if p.type == "devptr" or p.handle:
        return "(uint64_t)(uintptr_t)%s" % p.name
    if p.enum:
        return "(int)%s" % p.name
    return p.name


# Runtime calls that work before a context exists (the primary context's flags are
# set before it is made current): every other cudart row binds it, as NVIDIA's does.
NO_CONTEXT_CALLS = {"cudaSetDeviceFlags", "cudaGetDeviceFlags"}


def gen_interpose(fns):
    c = ["/* crm_interpose_gen.c -- generated by protocol/gen_api.py; do not edit.",
         " * The exported functions of client=auto rows. */",
         "#include <stdint.h>"] + headers(fns) + [
         '#include "crm_client_gen.h"', '#include "client/crm_conn.h"', '#include "client/crm_handles.h"',
         '#include "interpose/crm_drv.h"', '#include "interpose/crm_export.h"', ""]
    for f in fns:
        if f.client != "auto":
            continue
        st = f.lib.status
        cudart = st == "cudaError_t"
        bad = "cudaErrorInvalidValue" if cudart else f.lib.badhandle
        ret = "crm_set_error(%s)" if cudart else "%s"
        cparams = ", ".join("%s%s %s" % (p.cuda_c(), " *" if p.dir == "out" else "", p.name)
                            for p in f.params) or "void"
        cargs = ", ".join(p.name for p in f.params)
        c.append("static %s crm__%s(%s%sint ptds)\n{" % (st, f.name, cparams if f.params else "",
                                                       ", " if f.params else ""))
        c.append("    (void)ptds;")
        if cudart and f.name not in NO_CONTEXT_CALLS:
            c.append("    crm_drv_runtime_bind(); /* the thread's first such call makes the primary context current */")
        for p in f.outs:
            c.append("    if (%s == NULL)\n        return %s;" % (p.name, ret % bad))
        for p in f.outs:
            c.append("    %s o_%s;" % (p.handler_c(), p.name))
        args = [wire_of(p, "ptds") for p in f.ins] + ["&o_" + p.name for p in f.outs]
        c.append("    %s err = crm_rpc_%s(%s);" % (st, f.name, ", ".join(args)))
        if f.outs:
            c.append("    if (err == %s) {" % f.lib.ok)
            for p in f.outs:
                c.append("        *%s = (%s)o_%s;" % (p.name, p.cuda_c(), p.name))
            c.append("    }")
        if f.sync and cudart:
            c.append("    err = crm_conn_sync_status(err);")
        c.append("    return %s;\n}\n" % (ret % "err"))
        c.append("CRM_EXPORT %s %s(%s)\n{\n    return crm__%s(%s%sCRM_PTDS_OFF);\n}\n"
                 % (st, f.name, cparams, f.name, cargs, ", " if cargs else ""))
        if f.ptsz:
            c.append("CRM_EXPORT %s %s_%s(%s)\n{\n    return crm__%s(%s%sCRM_PTDS_ON);\n}\n"
                     % (st, f.name, f.ptsz, cparams, f.name, cargs, ", " if cargs else ""))
    return "\n".join(c)


def server_proto(f):
    generated = getattr(f, "blas", None) or getattr(f, "dnn", None)
    session = "session" if generated else "s"  # a library's parameter may be named s
    return "%s crm_srv_%s(crm_session *%s%s%s)" % (
        f.lib.status, f.name, session, ", " if f.params else "", rpc_params(f) if f.params else "")


def gen_server(fns):
    h = ["/* crm_server_gen.h -- generated by protocol/gen_api.py; do not edit.",
         " * One handler per remoted call; server=manual ones are hand-written in server/. */",
         "#ifndef CRM_SERVER_GEN_H", "#define CRM_SERVER_GEN_H"] + headers(fns) + [
         '#include "crm_api.h"', "",
         "typedef struct crm_session crm_session;", "",
         "/* Runs one decoded call and fills its reply arm (reply->api included). */",
         "void crm_dispatch_call(crm_session *s, crm_call *call, crm_reply *reply);", ""]
    c = ["/* crm_server_gen.c -- generated by protocol/gen_api.py; do not edit. */",
         '#include "crm_server_gen.h"', '#include "server/crm_session.h"',
         '#include "server/crm_backend.h"', ""]
    for f in fns:
        proto = server_proto(f)
        h.append(proto + ";")
        if f.server == "auto":
            c += gen_auto_handler(f, proto)
    c.append("void crm_dispatch_call(crm_session *s, crm_call *call, crm_reply *reply)\n{")
    c.append("    reply->api = call->api;\n    switch (call->api) {")
    for f in fns:
        args = ["s"]
        args += [("&a->%s" if p.special else "a->%s") % p.name for p in f.ins]
        args += ["&r->%s" % p.name for p in f.outs]
        c.append("    case CRM_API_%s: {" % f.name)
        if f.ins:
            c.append("        crm_args_%s *a = &call->crm_call_u.%s;" % (f.name, f.name))
        c.append("        crm_res_%s *r = &reply->crm_reply_u.%s;" % (f.name, f.name))
        c.append("        r->err = (int)crm_srv_%s(%s);\n        break;\n    }" % (f.name, ", ".join(args)))
    c.append("    }\n}")
    h += ["", "#endif"]
    return "\n".join(h) + "\n", "\n".join(c) + "\n"


def gen_auto_handler(f, proto):
    lib = f.lib
    c = [proto + "\n{", "    %s err = %s;" % (lib.status, lib.ok)]
    c.append("    if (crm_rt.%s == NULL)\n        return %s;" % (f.name, lib.unsupported))
    for p in f.ins:
        if p.type in ("stream", "event"):
            c.append("    %s h_%s;" % ("cudaStream_t" if p.type == "stream" else "cudaEvent_t", p.name))
            c.append("    if (crm_session_%s(s, %s, &h_%s) != cudaSuccess)\n        return %s;"
                     % (p.type, p.name, p.name,
                        "cudaErrorInvalidResourceHandle" if lib.status == "cudaError_t" else lib.badhandle))
        elif p.handle:
            c.append("    void *h_%s;" % p.name)
            c.append("    if (crm_session_handle(s, CRM_HANDLE_%s, %s, &h_%s) != 0)\n        return %s;"
                     % (p.handle, p.name, p.name, lib.badhandle))
    for p in f.outs:
        c.append("    %s o_%s = 0;" % (p.cuda_c(), p.name))
    args = []
    for p in f.params:
        if p.dir == "out":
            args.append("&o_" + p.name)
        elif p.type in ("stream", "event"):
            args.append("h_" + p.name)
        elif p.handle:
            args.append("(%s)h_%s" % (p.handle, p.name))
        elif p.enum:
            args.append("(%s)%s" % (p.cuda_c(), p.name))
        elif p.type == "devptr":
            args.append("(void *)(uintptr_t)%s" % p.name)
        else:
            args.append(p.name)
    c.append("    (void)s;")
    c.append("    err = crm_rt.%s(%s);" % (f.name, ", ".join(args)))
    for p in f.outs:
        c.append("    *%s = (%s)o_%s;" % (p.name, p.handler_c(), p.name))
    c.append("    return err;\n}\n")
    return c


def main():
    args = sys.argv[1:]
    include = "/usr/local/cuda/include"
    if args[:1] == ["--cuda-include"]:
        include, args = args[1], args[2:]
    template, outdir, specs = args[0], args[1], args[2:]
    fns, types, loaded = [], [], {}

    proto_headers = {"cublas": "cublas_api.h", "cudnn": "cudnn_ops.h,cudnn_cnn.h,cudnn_adv.h"}

    def protos(lib):
        if lib not in loaded:
            loaded[lib] = load_protos(",".join(include + "/" + h for h in proto_headers[lib].split(",")))
        return loaded[lib]
    for spec in specs:
        fns += parse(spec, protos)
        companion = spec[:-len(".api")] + "_types.x"
        if os.path.exists(companion):
            types.append(open(companion).read())
    nums = [f.num for f in fns]
    dup = {n for n in nums if nums.count(n) > 1}
    if dup:
        sys.exit("gen_api.py: duplicate procedure numbers %s" % sorted(dup))
    write(outdir + "/crm_api.x", gen_x(fns, open(template).read(), "\n".join(types)))
    ch, cc = gen_client(fns)
    write(outdir + "/crm_client_gen.h", ch)
    write(outdir + "/crm_client_gen.c", cc)
    write(outdir + "/crm_interpose_gen.c", gen_interpose(fns))
    sh, sc = gen_server(fns)
    write(outdir + "/crm_server_gen.h", sh)
    write(outdir + "/crm_server_gen.c", sc)
    write(outdir + "/crm_rt_fns_gen.h",
          "/* crm_rt_fns_gen.h -- generated; backend functions of server=auto, blas and dnn rows. */\n"
          + "".join("CRM_RT_FN(%s, %s)\n" % (f.lib.library, f.name) for f in fns
                    if f.server in ("auto", "blas", "dnn")))
    bc, bs, be = gen_blas_files(fns, server_proto)
    write(outdir + "/crm_blas_gen.c", bc)
    write(outdir + "/crm_h_blas_gen.c", bs)
    write(outdir + "/crm_emu_blas_gen.c", be)
    dc, ds = gen_dnn_files(fns, server_proto)
    write(outdir + "/crm_dnn_gen.c", dc)
    write(outdir + "/crm_h_dnn_gen.c", ds)
    names = ["/* crm_api_names.c -- generated by protocol/gen_api.py; do not edit. */",
             '#include "protocol/crm_wire.h"', "",
             "const char *crm_api_name(int num)\n{\n    switch (num) {"]
    names += ['    case %d: return "%s";' % (f.num, f.name) for f in fns]
    names.append('    default: return "unknown";\n    }\n}')
    write(outdir + "/crm_api_names.c", "\n".join(names) + "\n")
    ih, ic = gen_iso(fns, headers(fns))
    write(outdir + "/crm_iso_gen.h", ih)
    write(outdir + "/crm_iso_gen.c", ic)


def write(path, text):
    # Leave unchanged files alone so make does not rebuild what depends on them.
    if os.path.exists(path) and open(path).read() == text:
        return
    with open(path, "w") as fh:
        fh.write(text)


if __name__ == "__main__":
    main()
