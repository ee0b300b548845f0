"""gen_dnn.py -- the cuDNN rows marked `dnn` in protocol/cudnn.api: one row per call
gives what the shim and the server need, and gen_api.py writes both:

  crm_dnn_gen.c    the shim's exported function: the handle's id, each descriptor's
                   contents, the scaling factors read by their data type, sent
                   asynchronously (interpose/crm_dnn.h);
  crm_h_dnn_gen.c  the server's handler: backend descriptors built from the
                   contents after the same checks, every device pointer checked
                   with the exact footprint its descriptor gives, then the
                   backend's function (server/crm_h_dnn.h).

The emulated device implements cuDNN's own functions (server/emu/crm_emu_dnn*.c),
so nothing is generated for it. The C prototype comes from the toolkit's
cudnn_ops.h, cudnn_cnn.h and cudnn_adv.h; the row names only what the prototype
cannot say.
Row syntax:

  NUM NAME dnn : ANNOT, ...

ANNOT, one per `void *` parameter (handles, descriptors, enums, int, double and
size_t parameters need none; a `size_t *` is a result: the call then waits for the
server's answer, one round trip):
  P=data(DESC)   device data laid out by tensor or filter descriptor DESC: the
                 server checks [P, P + footprint) lies in one allocation
  P=data?(DESC)  the same, or NULL (0 on the wire), which is then passed on
  P=scale(DESC)  a host scaling factor: double for DESC's double data, float
                 otherwise (it travels as double)
  P=bytes(SIZE)  a device workspace of SIZE bytes (a size parameter); size 0
                 passes NULL
  P=theta(DESC)  a spatial transformer's affine parameters (N x 2 x 3) or its
  P=grid(DESC)   sampling grid (N x H x W x 2), DESC's data type, packed
A convolution algorithm query's results (cudnnConvolution*AlgoPerf_t *P with an
int *returned count beside it) come back in the reply, so the call waits:
  P=perfs(REQ)   at most REQ (an int parameter, at least 1) results, and at most
                 CRM_DNN_ALGO_MAX, written to P and their number to the int *
A descriptor parameter may be annotated too:
  D=desc?        the descriptor may be NULL (cuDNN's optional operands): it travels
                 with a flag D_set, the server passes NULL, and every pointer D
                 lays out must then be NULL too
A call without a handle (cudnnDropoutGetReserveSpaceSize) needs no live handle on
the server either. A descriptor becomes a backend descriptor once per call; each of the session's
calls borrows the handler's scratch descriptors (crm_h_dnn.h), so a row may use at
most CRM_H_DNN_TENSORS tensor descriptors, one filter and CRM_H_DNN_SCALARS scales.
"""
import re

# descriptor type -> (wire struct, shim's wire builder, server's builder suffix)
DESCRIPTORS = {
    "cudnnTensorDescriptor_t": ("crm_dnn_tensor", "tensor"),
    "cudnnFilterDescriptor_t": ("crm_dnn_filter", "filter"),
    "cudnnConvolutionDescriptor_t": ("crm_dnn_conv", "conv"),
    "cudnnPoolingDescriptor_t": ("crm_dnn_pool", "pool"),
    "cudnnActivationDescriptor_t": ("crm_dnn_act", "act"),
    "cudnnOpTensorDescriptor_t": ("crm_dnn_optensor", "op"),
    "cudnnLRNDescriptor_t": ("crm_dnn_lrn", "lrn"),
    "cudnnReduceTensorDescriptor_t": ("crm_dnn_reduce", "reduce"),
    "cudnnDropoutDescriptor_t": ("crm_dnn_dropout", "dropout"),
    "cudnnSpatialTransformerDescriptor_t": ("crm_dnn_st", "st"),
    "cudnnCTCLossDescriptor_t": ("crm_dnn_ctc", "ctc"),
}
DATA_DESCRIPTORS = ("tensor", "filter")  # the ones that lay out device data
ST_ARRAYS = {"theta": "CRM_DNN_ST_THETA", "grid": "CRM_DNN_ST_GRID"}  # a spatial transformer's
POINTERS = ("data", "data?", "bytes") + tuple(ST_ARRAYS)  # kinds that travel as a devptr
VALUES = {"int": "int", "unsigned": "uint", "double": "double", "float": "float", "size_t": "size"}
MAX_TENSORS, MAX_SCALARS = 8, 4  # crm_h_dnn.h's CRM_H_DNN_TENSORS, CRM_H_DNN_SCALARS


class DnnParam:
    """One C parameter of the prototype, classified."""
    def __init__(self, text, annot):
        text = " ".join(text.split())
        m = re.match(r"(.*?)(\w+)$", text)
        if not m:
            raise ValueError("unreadable parameter %r" % text)
        self.decl, self.name = text, m.group(2)
        ctype = m.group(1).replace("const ", "").strip()
        self.kind, self.arg, self.optional = "value", None, False
        if ctype == "cudnnHandle_t":
            self.kind = "handle"
        elif ctype in DESCRIPTORS:
            self.kind, (self.struct, self.builder) = "desc", DESCRIPTORS[ctype]
            self.optional = annot == "desc?"
            if annot is not None and not self.optional:
                raise ValueError("bad annotation %s=%s" % (self.name, annot))
            annot = None
        elif ctype == "size_t *":
            self.kind = "size_out"
        elif ctype == "int *":
            self.kind = "count_out"
        elif re.match(r"cudnnConvolution\w+AlgoPerf_t \*$", ctype):
            m = re.match(r"perfs\((\w+)\)$", annot or "")
            if not m:
                raise ValueError("%s needs perfs(REQUESTED)" % self.name)
            self.kind, self.arg, annot = "perfs", m.group(1), None
        elif ctype == "void *":
            if annot is None:
                raise ValueError("pointer %s needs an annotation" % self.name)
            m = re.match(r"(data\??|scale|bytes|theta|grid)\((\w+)\)$", annot)
            if not m:
                raise ValueError("bad annotation %s=%s" % (self.name, annot))
            self.kind, self.arg = m.group(1), m.group(2)
        elif ctype in VALUES:
            self.spec = VALUES[ctype]
        elif re.match(r"cudnn\w+_t$", ctype):
            self.spec = "enum:" + ctype
        else:
            raise ValueError("parameter %s of type %r is not carried" % (self.name, ctype))
        self.ctype = ctype
        if annot is not None and self.kind not in POINTERS + ("scale",):
            raise ValueError("%s takes no annotation" % self.name)

    def wire_specs(self):
        if self.kind == "count_out":  # the perf list's count
            return []
        if self.kind == "desc" and self.optional:
            return ["in int %s_set" % self.name, self.wire_spec()]
        return [self.wire_spec()]

    def wire_spec(self):
        if self.kind == "handle":
            return "in handle:cudnnHandle_t %s" % self.name
        if self.kind == "desc":
            return "in struct:%s %s" % (self.struct, self.name)
        if self.kind == "scale":
            return "in double %s" % self.name
        if self.kind in POINTERS:
            return "in devptr %s" % self.name
        if self.kind == "size_out":
            return "out size %s" % self.name
        if self.kind == "perfs":
            return "out struct:crm_dnn_perfs %s" % self.name
        return "in %s %s" % (self.spec, self.name)


class DnnRow:
    def __init__(self, name, tail, protos):
        if name not in protos:
            raise ValueError("%s: not declared in cudnn_ops.h, cudnn_cnn.h or cudnn_adv.h" % name)
        annots = {}
        for a in (x.strip() for x in tail.split(",") if x.strip()):
            k, _, v = a.partition("=")
            annots[k] = v
        texts = [t for t in protos[name].split(",") if t.strip()]
        self.name = name
        self.params = [DnnParam(t, annots.pop(re.search(r"(\w+)\s*$", t).group(1), None)) for t in texts]
        if annots:
            raise ValueError("%s: annotations for unknown parameters %s" % (name, sorted(annots)))
        self.check()

    def by_name(self, n):
        p = next((p for p in self.params if p.name == n), None)
        if p is None:
            raise ValueError("%s: no parameter %s" % (self.name, n))
        return p

    def check(self):
        if any(p.kind == "handle" for p in self.params[1:]):
            raise ValueError("%s: the handle must come first" % self.name)
        if not any(p.kind in ("handle", "desc") for p in self.params):
            raise ValueError("%s: a call without a handle needs a descriptor" % self.name)
        for p in self.params:
            if p.kind in ("data", "data?", "scale"):
                d = self.by_name(p.arg)
                if d.kind != "desc" or d.builder not in DATA_DESCRIPTORS:
                    raise ValueError("%s: %s must name a tensor or filter descriptor" % (self.name, p.name))
            if p.kind in ST_ARRAYS and self.by_name(p.arg).builder != "st":
                raise ValueError("%s: %s must name a spatial transformer descriptor" % (self.name, p.name))
            if p.kind == "bytes" and self.by_name(p.arg).ctype != "size_t":
                raise ValueError("%s: %s must name a size_t parameter" % (self.name, p.name))
        perfs = [p for p in self.params if p.kind == "perfs"]
        counts = [p for p in self.params if p.kind == "count_out"]
        if len(perfs) != len(counts) or len(perfs) > 1 or (perfs and self.by_name(perfs[0].arg).ctype != "int"):
            raise ValueError("%s: a perf list goes with one int * count and an int request" % self.name)
        descs = [p for p in self.params if p.kind == "desc"]
        for d in descs:
            if d.builder == "filter" and len(self.pointers(d)) > 1:
                raise ValueError("%s: one pointer per filter descriptor" % self.name)
        if len([d for d in descs if d.builder == "tensor"]) > MAX_TENSORS or \
           len([d for d in descs if d.builder == "filter"]) > 1 or \
           len([p for p in self.params if p.kind == "scale"]) > MAX_SCALARS:
            raise ValueError("%s: more descriptors or scales than a call borrows" % self.name)

    def pointers(self, desc):
        return [p for p in self.params if p.kind in ("data", "data?") and p.arg == desc.name]

    def specs(self):
        return [s for p in self.params for s in p.wire_specs()]


def gen_client(f, row):
    outs = [p for p in row.params if p.kind == "size_out"]
    perfs = next((p for p in row.params if p.kind == "perfs"), None)
    count = next((p for p in row.params if p.kind == "count_out"), None)
    c = ["CRM_EXPORT cudnnStatus_t %s(%s)\n{" % (f.name, ", ".join(p.decl for p in row.params)),
         "    crm_call call = {.api = CRM_API_%s};" % f.name,
         "    crm_args_%s *a = &call.crm_call_u.%s;" % (f.name, f.name),
         "    cudnnStatus_t st;"]
    if outs or perfs:
        c.append("    crm_reply reply;")
        bad = [p.name + " == NULL" for p in outs]
        if perfs:
            bad += [perfs.name + " == NULL", count.name + " == NULL", perfs.arg + " < 1"]
        c.append("    if (%s)\n        return CUDNN_STATUS_BAD_PARAM;" % " || ".join(bad))
    checks = []
    for p in row.params:
        if p.kind == "handle":
            checks.append("(st = crm_dnn_handle_id(%s, &a->%s))" % (p.name, p.name))
        elif p.kind == "desc" and p.optional:
            c.append("    a->%s_set = %s != NULL;" % (p.name, p.name))
            checks.append("(%s != NULL && (st = crm_dnn_wire_%s(%s, &a->%s)))" % (p.name, p.builder, p.name, p.name))
        elif p.kind == "desc":
            checks.append("(st = crm_dnn_wire_%s(%s, &a->%s))" % (p.builder, p.name, p.name))
    for p in row.params:  # after the descriptors, whose data types they follow
        if p.kind == "scale":
            checks.append("(st = crm_dnn_scalar(%s, a->%s.dtype, &a->%s))" % (p.name, p.arg, p.name))
    c.append("    if (%s)\n        return st;" % " ||\n        ".join(checks))
    for p in row.params:
        if p.kind in POINTERS:
            c.append("    a->%s = crm_dnn_ptr(%s);" % (p.name, p.name))
        elif p.kind == "value":
            c.append("    a->%s = %s;" % (p.name, p.name))
    if not outs and not perfs:
        c.append("    return crm_dnn_work(&call, handle);\n}\n")
        return c
    if f.name.startswith("cudnnFind"):  # runs and times the algorithms on the device: not in a capture
        hname = [p.name for p in row.params if p.kind == "handle"][0]
        c.append("    if ((st = crm_dnn_refuse_in_capture(%s)) != CUDNN_STATUS_SUCCESS)\n        return st;" % hname)
    c.append("    if ((st = crm_dnn_sync(&call, &reply)) == CUDNN_STATUS_SUCCESS) {")
    c += ["        *%s = (size_t)reply.crm_reply_u.%s.%s;" % (p.name, f.name, p.name) for p in outs]
    if perfs:
        c.append("        crm_dnn_perf_out(&reply.crm_reply_u.%s.%s, %s, %s, (cudnnConvolutionFwdAlgoPerf_t *)%s);"
                 % (f.name, perfs.name, perfs.arg, count.name, perfs.name))
    c.append("    }\n    crm_conn_reply_free(&reply);\n    return st;\n}\n")
    return c


def server_build(row, d):
    """The checks that turn descriptor d (and the pointers it lays out) into backend
    objects; an optional one absent: NULL, and its pointers must be NULL."""
    if d.optional:
        present = " ||\n        ".join(server_present(row, d))
        ptrs = " | ".join(p.name for p in row.pointers(d))
        absent = "(%s) != 0 ? CUDNN_STATUS_BAD_PARAM : CUDNN_STATUS_SUCCESS" % ptrs if ptrs else "CUDNN_STATUS_SUCCESS"
        return ["(%s_set ? (%s) : (st = %s))" % (d.name, present, absent)]
    return server_present(row, d)


def server_present(row, d):
    ptrs = row.pointers(d)
    if d.builder not in DATA_DESCRIPTORS:
        return ["(st = crm_h_dnn_%s(&c, %s, &d_%s))" % (d.builder, d.name, d.name)]
    if not ptrs:
        return ["(st = crm_h_dnn_%s(&c, %s, 0, 1, &d_%s, NULL))" % (d.builder, d.name, d.name)]
    first, rest = ptrs[0], ptrs[1:]
    out = ["(st = crm_h_dnn_%s(&c, %s, %s, %d, &d_%s, &p_%s))"
           % (d.builder, d.name, first.name, first.kind == "data?", d.name, first.name)]
    out += ["(st = crm_h_dnn_tensor_ptr(&c, %s, %s, %d, &p_%s))" % (d.name, p.name, p.kind == "data?", p.name)
            for p in rest]
    return out


def gen_server(f, row, proto):
    outs = [p for p in row.params if p.kind == "size_out"]
    perfs = next((p for p in row.params if p.kind == "perfs"), None)
    c = [proto + "\n{", "    crm_h_dnn_call c;", "    cudnnStatus_t st;"]
    for p in row.params:
        if p.kind == "size_out":
            c.append("    size_t o_%s = 0;" % p.name)
        if p.kind == "perfs":
            c.append("    %s o_%s[CRM_DNN_ALGO_MAX];" % (p.ctype.replace(" *", ""), p.name))
        if p.kind == "count_out":
            c.append("    int o_%s = 0;" % p.name)
        if p.kind == "desc":
            c.append("    %s d_%s%s;" % (p.ctype, p.name, " = NULL" if p.optional else ""))
        elif p.kind in POINTERS:
            c.append("    void *p_%s = NULL;" % p.name)
    c.append("    if (crm_rt.%s == NULL)\n        return CUDNN_STATUS_NOT_SUPPORTED;" % f.name)
    if perfs:
        c.append("    if (%s < 1)\n        return CUDNN_STATUS_BAD_PARAM;" % perfs.arg)
    if row.params and row.params[0].kind == "handle":
        checks = ["(st = crm_h_dnn_begin(&c, session, handle))"]
    else:
        checks = ["(st = crm_h_dnn_start(&c, session))"]
    for p in row.params:
        if p.kind == "desc":
            checks += server_build(row, p)
        elif p.kind == "bytes":
            checks.append("(st = crm_h_dnn_workspace(&c, %s, %s, &p_%s))" % (p.name, p.arg, p.name))
        elif p.kind in ST_ARRAYS:
            checks.append("(st = crm_h_dnn_st_ptr(&c, %s, %s, %s, &p_%s))" % (p.arg, p.name, ST_ARRAYS[p.kind], p.name))
    c.append("    if (%s)\n        return st;" % " ||\n        ".join(checks))
    args = []
    for p in row.params:
        if p.kind == "handle":
            args.append("c.h")
        elif p.kind == "desc":
            args.append("d_" + p.name)
        elif p.kind in POINTERS:
            args.append("p_" + p.name)
        elif p.kind == "scale":
            args.append("crm_h_dnn_scalar(&c, %s, %s->dtype)" % (p.name, p.arg))
        elif p.kind in ("size_out", "count_out", "perfs"):
            args.append("%so_%s" % ("" if p.kind == "perfs" else "&", p.name))
        elif perfs and p.name == perfs.arg:
            args.append("%s < CRM_DNN_ALGO_MAX ? %s : CRM_DNN_ALGO_MAX" % (p.name, p.name))
        elif p.spec.startswith("enum:"):
            args.append("(%s)%s" % (p.ctype, p.name))
        else:
            args.append(p.name)
    if not outs and not perfs:
        c.append("    return crm_rt.%s(%s);\n}\n" % (f.name, ", ".join(args)))
        return c
    c.append("    st = crm_rt.%s(%s);" % (f.name, ", ".join(args)))
    c += ["    *%s = o_%s;" % (p.name, p.name) for p in outs]
    if perfs:
        count = next(p for p in row.params if p.kind == "count_out")
        c.append("    if (st == CUDNN_STATUS_SUCCESS)\n        crm_h_dnn_perfs(%s, (const cudnnConvolutionFwdAlgoPerf_t *)o_%s, o_%s);"
                 % (perfs.name, perfs.name, count.name))
    c.append("    return st;\n}\n")
    return c


CLIENT_HEAD = """/* crm_dnn_gen.c -- generated by protocol/gen_dnn.py from protocol/cudnn.api; do
 * not edit. The shim's cuDNN calls of the `dnn` rows. */
#include "client/crm_conn.h"
#include "interpose/crm_dnn.h"
#include "interpose/crm_export.h"
"""
SERVER_HEAD = """/* crm_h_dnn_gen.c -- generated by protocol/gen_dnn.py from protocol/cudnn.api; do
 * not edit. The server's handlers of the `dnn` rows. */
#include "server/crm_backend.h"
#include "server/crm_h_dnn.h"
"""


def gen_dnn_files(fns, server_proto):
    """(client, server) C sources of every `dnn` row in fns."""
    client, server = [CLIENT_HEAD], [SERVER_HEAD]
    for f in fns:
        row = getattr(f, "dnn", None)
        if row is not None:
            client += gen_client(f, row)
            server += gen_server(f, row, server_proto(f))
    return "\n".join(client) + "\n", "\n".join(server) + "\n"
