"""gen_blas.py -- the cuBLAS rows marked `blas` in protocol/cublas.api: one row per
call gives everything the three layers need, and gen_api.py writes them all:

  crm_blas_gen.c     the shim's exported function: cuBLAS's argument rules, the
                     scalars by pointer mode, sent asynchronously unless a result
                     comes back to the host (interpose/crm_blas.h);
  crm_h_blas_gen.c   the server's handler: the same rules, every device operand
                     checked with its exact extent against the session's memory,
                     then the backend (server/crm_h_blas.h);
  crm_emu_blas_gen.c the emulated device's function: the same rules and extents
                     against its memory, then OpenBLAS's CBLAS
                     (server/emu/crm_emu_blas.h).

The C prototype comes from the toolkit's cublas_api.h; the row names only what the
prototype cannot say. Row syntax:

  NUM NAME blas [cblas=FN] [res=ret|sub|index|status] [invalid=EXPR]
                [unsupported=EXPR] [noop=EXPR]
                [zero=SCALAR,OPERAND] [unread=SCALAR,OPERAND,...] [batch=EXPR]
                : ANNOT...

ANNOT, one per pointer parameter (int, int64_t and enum parameters need none):
  P=scalar[(N)]       a scalar (or N of them) read by pointer mode (host value or
                      device address)
  P=inout[(N)]        the same, read and written back (rotg, rotmg): in host mode
                      the call waits for the new values
  P=result            a result written by pointer mode (host: comes back in the
                      reply, the call then waits; device: written on the server)
  P=vec(LEN,INC)      a vector of LEN elements INC apart (negative INC: reference
                      BLAS order)
  P=mat(ROWS,COLS,LD) a column-major matrix
  P=packed(N)         a packed triangle of order N (N(N+1)/2 elements)
  P=mats(ROWS,COLS,LD) a device array of `batch` device pointers, each to a
                      column-major matrix (the pointer-array batched calls); the
                      server reads the array, checks every pointer and hands the
                      backend its own copy of the array
  P=vecs(LEN,INC)     the same, each pointer to a vector
  P=smat(ROWS,COLS,LD,STRIDE)  `batch` matrices, each STRIDE elements after the
                      one before (the strided batched calls; STRIDE may be 0 or
                      negative): the whole span is checked
  P=svec(LEN,INC,STRIDE)       the same, of vectors
  P=info(EXPR)        a host int the call sets to EXPR, the status of its argument
                      checks (0, or minus the position of the first bad parameter,
                      LAPACK's numbering, handle not counted); nonzero: the call
                      answers CUBLAS_STATUS_INVALID_VALUE and does nothing. It stays
                      on the client: the call is still sent asynchronously
vec? is a vector that may be NULL: nothing is then checked or touched.
An annotation followed by @TYPE (a cudaDataType parameter) is of that data type,
for the void pointers of the Ex calls: its elements (or the scalars, or the result)
are crm_blas_type_size(TYPE) bytes each.

A row whose call has a twin with 64-bit integers in cublas_api.h (NAME_64) stands
for the twin too: the same annotations, wire number + 10000 (gen_api.py). On the
emulated device, whose CBLAS takes 32-bit integers, the twin answers
CUBLAS_STATUS_NOT_SUPPORTED for an integer argument outside int's range.
EXPR, LEN, ... are C expressions over the parameters, without spaces (and, in the
flags before the row's colon, without colons).
invalid: cuBLAS answers CUBLAS_STATUS_INVALID_VALUE (enum parameters are checked
too); unsupported: it answers CUBLAS_STATUS_NOT_SUPPORTED (a combination of data
types it does not compute); noop: the call touches nothing (a host result is then
0); zero: when SCALAR (beta) is 0 the emulated device clears OPERAND before CBLAS
runs, so that what it held (NaN included) is not read, as cuBLAS promises.
unread: pairs; when SCALAR is 0 (known at once: a host-mode scalar on the server)
OPERAND is neither read nor checked, and may be NULL (geam's A or B).
cblas: the CBLAS function the emulated device calls with the cuBLAS arguments in
order (handle and result left out, CblasColMajor first when a matrix is among
them, real scalars by value); with batch=, once per item, each mats/vecs operand
giving its item's pointer and each smat/svec one its item's address (the
STRIDE parameters are not CBLAS's); res says how it gives the result: returned, through
a last pointer argument (the _sub forms), or as a 0-based index (cuBLAS's is
1-based); res=status: the function (one of the emulated device's) returns the
call's cuBLAS status. A name starting crm_ is the emulated device's own function
of CBLAS's signature (server/emu/crm_emu_blas.h), where OpenBLAS falls short; with
batch=, it takes the whole batch (the arrays, then the count, info excluded).
"""
import os
import re
import sys

ENUM_RULES = {  # enum type -> (C check of value v, CBLAS conversion of v)
    "cublasOperation_t": ("crm_blas_op_ok(%s)",
                          "(%s == CUBLAS_OP_N ? CblasNoTrans : %s == CUBLAS_OP_T ? CblasTrans : CblasConjTrans)"),
    "cublasFillMode_t": ("crm_blas_fill_ok(%s)", "(%s == CUBLAS_FILL_MODE_LOWER ? CblasLower : CblasUpper)"),
    "cublasDiagType_t": ("crm_blas_diag_ok(%s)", "(%s == CUBLAS_DIAG_UNIT ? CblasUnit : CblasNonUnit)"),
    "cublasSideMode_t": ("crm_blas_side_ok(%s)", "(%s == CUBLAS_SIDE_LEFT ? CblasLeft : CblasRight)"),
    "cudaDataType": (None, "%s"),  # a row's unsupported= rules its types (NOT_SUPPORTED)
}
INTS = {"int": "int", "int64_t": "i64", "long long int": "i64"}
COMPLEX = {"cuComplex", "cuDoubleComplex"}
REAL_PART = {"float": "float", "double": "double", "cuComplex": "float", "cuDoubleComplex": "double"}
ANNOT = re.compile(r"^(\w+)=(scalar|inout|result|vec|mat|packed|mats|vecs|smat|svec|info)(\?)?(?:\((.*)\))?(?:@(\w+))?$")
OPERANDS = ("vec", "mat", "packed", "mats", "vecs", "smat", "svec")
ARRAYS = ("mats", "vecs")   # pointer-array batches
STRIDED = ("smat", "svec")  # strided batches
VECTORS = ("vec", "vecs", "svec")


def parse_params(text):
    """[(C type, name)] of a prototype's parameter list; an array parameter is a pointer."""
    ps = []
    for p in text.split(","):
        m = re.match(r"^(.*?)(\w+)\s*(\[\])?$", " ".join(p.split()))
        ps.append((m.group(1).replace(" *", "*").strip() + ("*" if m.group(3) else ""), m.group(2)))
    return ps


class BlasParam:
    def __init__(self, ctype, name, annot):
        self.ctype, self.name = ctype, name
        self.base = ctype.replace("const", "").replace("*", "").strip()
        self.kind, self.args, self.count, self.nullable, self.dtype = "value", [], 1, False, None
        if annot:
            self.kind, self.nullable, self.dtype = annot[0], bool(annot[1]), annot[3]
            self.args = split_args(annot[2]) if annot[2] else []
            if self.kind in ("scalar", "inout") and self.args:
                self.count = int(self.args[0])
        elif name == "handle":
            self.kind = "handle"
        elif ctype in ENUM_RULES:
            self.kind = "enum"
        elif ctype not in INTS:
            raise ValueError("parameter %s (%s) needs an annotation" % (name, ctype))

    def spec(self):
        """The parameter as gen_api.py's Param text (the wire and the handler)."""
        if self.kind == "handle":
            return "in handle:cublasHandle_t handle"
        if self.kind == "enum":
            return "in enum:%s %s" % (self.ctype, self.name)
        if self.kind == "value":
            return "in %s %s" % (INTS[self.ctype], self.name)
        if self.kind in ("scalar", "inout"):
            return "in struct:%s %s" % (self.wire_struct(), self.name)
        return "in devptr %s" % self.name  # operands; a result's device address (0: host mode)

    def wire_struct(self):
        return "crm_scalar" if self.count == 1 else "crm_scalars"

    def size(self):
        """Bytes of the scalar(s) or result, or of one element of an operand."""
        if self.dtype:
            size = "crm_blas_type_size(%s)" % self.dtype
            return "%d * %s" % (self.count, size) if self.count > 1 else size
        return "%d * sizeof(%s)" % (self.count, self.base) if self.count > 1 else "sizeof(%s)" % self.base

    def emu_decl(self):
        """The emulated device's local copy of a scalar or result."""
        if self.dtype:
            return "_Alignas(16) unsigned char v_%s[%d];" % (self.name, 16 * self.count)
        if self.kind == "result":
            return "%s v_%s;" % (self.base, self.name)
        return "%s v_%s[%d];" % (self.base, self.name, self.count)


def split_args(text):
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    return out + [cur]


class BlasRow:
    def __init__(self, name, flags, tail, protos):
        if name not in protos:
            raise ValueError("%s: not declared in cublas_api.h" % name)
        annots = {}
        for word in tail.split():
            m = ANNOT.match(word)
            if not m:
                raise ValueError("%s: bad annotation %r" % (name, word))
            annots[m.group(1)] = (m.group(2), m.group(3), m.group(4), m.group(5))
        self.params = [BlasParam(t, n, annots.pop(n, None)) for t, n in parse_params(protos[name])]
        if annots:
            raise ValueError("%s: no parameter %s" % (name, ", ".join(annots)))
        self.cblas = flags.get("cblas")
        self.res = flags.get("res", "ret")
        self.invalid = flags.get("invalid")
        self.unsupported = flags.get("unsupported")
        self.noop = flags.get("noop")
        self.zero = flags["zero"].split(",") if "zero" in flags else None
        pairs = flags["unread"].split(",") if "unread" in flags else []
        self.unread = dict(zip(pairs[1::2], pairs[0::2]))  # operand -> its scalar
        self.result = next((p for p in self.params if p.kind == "result"), None)
        self.scalars = [p for p in self.params if p.kind in ("scalar", "inout")]
        self.inouts = [p for p in self.params if p.kind == "inout"]
        self.operands = [p for p in self.params if p.kind in OPERANDS]
        self.arrays = [p for p in self.params if p.kind in ARRAYS]
        self.strided = [p for p in self.params if p.kind in STRIDED]
        self.info = next((p for p in self.params if p.kind == "info"), None)
        self.batch = flags.get("batch")
        if any(p.nullable and p.kind != "vec" for p in self.params):
            raise ValueError("%s: only a vec may be NULL" % name)
        if bool(self.arrays or self.strided) != bool(self.batch) or len(self.arrays) > 3:
            raise ValueError("%s: mats/vecs operands (at most 3) or smat/svec ones go with batch=" % name)
        if self.arrays and self.strided:
            raise ValueError("%s: a batch is of pointer arrays or strided, not both" % name)

    def specs(self):
        out = [p.spec() for p in self.params[:1]]
        if self.scalars or self.result:
            out.append("in int pmode")
        out += [p.spec() for p in self.params[1:] if p.kind != "info"]
        if self.result:
            out.append("out struct:crm_scalar value")
        out += ["out struct:%s %s_out" % (p.wire_struct(), p.name) for p in self.inouts]
        return out

    def per_item(self):
        """A batch the emulated device runs item by item with a CBLAS call (a crm_
        function takes the whole batch)."""
        return bool(self.batch) and not self.cblas.startswith("crm_")

    def invalid_expr(self):
        checks = ["!" + ENUM_RULES[p.ctype][0] % p.name for p in self.params
                  if p.kind == "enum" and ENUM_RULES[p.ctype][0]]
        if self.invalid:
            checks.append("(%s)" % self.invalid)
        return " || ".join(checks)

    def cprototype(self, name):
        ps = ", ".join("%s %s" % (t, n) for t, n in ((p.ctype, p.name) for p in self.params))
        return "cublasStatus_t %s(%s)" % (name, ps)


def extent(p, elem):
    """C call computing operand p's bytes into crm_n (0, or -1 on overflow / bad shape)."""
    if p.kind in VECTORS:
        return "crm_blas_vec_bytes(%s, %s, %s, &crm_n)" % (p.args[0], p.args[1], elem)
    if p.kind in ("mat", "mats", "smat"):
        return "crm_blas_mat_bytes(%s, %s, %s, %s, &crm_n)" % (p.args[0], p.args[1], p.args[2], elem)
    return "crm_blas_packed_bytes(%s, %s, &crm_n)" % (p.args[0], elem)


# --- the shim -------------------------------------------------------------------------

def gen_client(fn, row):
    c = ["CRM_EXPORT " + row.cprototype(fn.name) + "\n{",
         "    crm_blas_state bst;", "    crm_call bcall;",
         "    cublasStatus_t brc = crm_blas_get(handle, &bst);",
         "    if (brc != CUBLAS_STATUS_SUCCESS)\n        return brc;"]
    if row.info:
        c += info_check(row.info, "CUBLAS_STATUS_INVALID_VALUE")
    inv = row.invalid_expr()
    if inv:
        c.append("    if (%s)\n        return CUBLAS_STATUS_INVALID_VALUE;" % inv)
    if row.unsupported:
        c.append("    if (%s)\n        return CUBLAS_STATUS_NOT_SUPPORTED;" % row.unsupported)
    r = row.result
    if r:
        c.append("    if (%s == NULL)\n        return CUBLAS_STATUS_INVALID_VALUE;" % r.name)
    if row.noop:
        keep = " && bst.pmode == CUBLAS_POINTER_MODE_HOST" if r else ""
        c.append("    if ((%s)%s) {" % (row.noop, keep))
        if r:
            c.append("        memset(%s, 0, %s);" % (r.name, r.size()))
        c.append("        return CUBLAS_STATUS_SUCCESS;\n    }")
    c.append("    memset(&bcall, 0, sizeof bcall);\n    bcall.api = CRM_API_%s;" % fn.name)
    c.append("    crm_args_%s *ba = &bcall.crm_call_u.%s;" % (fn.name, fn.name))
    c.append("    ba->handle = bst.id;")
    if row.scalars or r:
        c.append("    ba->pmode = (int)bst.pmode;")
    for p in row.params[1:]:
        if p.kind in ("value", "enum"):
            c.append("    ba->%s = %s;" % (p.name, p.name if p.kind == "value" else "(int)" + p.name))
        elif p.kind in ("scalar", "inout"):
            c.append("    if ((brc = crm_blas_scalar(bst.pmode, %s, %s, ba->%s.bytes, sizeof ba->%s.bytes)) !="
                     "\n        CUBLAS_STATUS_SUCCESS)\n        return brc;" % (p.name, p.size(), p.name, p.name))
        elif p.kind not in ("result", "info"):
            c.append("    ba->%s = CRM_BLAS_DEV(%s);" % (p.name, p.name))
    # what comes back to host memory: (pointer, bytes, reply member)
    outs = ([(r.name, r.size(), "value")] if r else []) + \
        [(p.name, p.size(), p.name + "_out") for p in row.inouts]
    if not outs:
        c.append("    return crm_blas_work(&bcall, crm_stream_wire(bst.stream, CRM_PTDS_OFF));\n}\n")
        return c
    c.append("    if (bst.pmode == CUBLAS_POINTER_MODE_DEVICE) {")
    if r:
        c.append("        ba->%s = CRM_BLAS_DEV(%s);" % (r.name, r.name))
    c.append("        return crm_blas_work(&bcall, crm_stream_wire(bst.stream, CRM_PTDS_OFF));\n    }")
    c.append("    crm_reply breply;\n    memset(&breply, 0, sizeof breply);")
    # a result read back to the host waits for the stream: not in a capture
    c.append("    if ((brc = crm_blas_refuse_in_capture(crm_stream_wire(bst.stream, CRM_PTDS_OFF))) != "
             "CUBLAS_STATUS_SUCCESS)\n        return brc;")
    c.append("    if (crm_blas_exec(&bcall, &breply) != cudaSuccess)\n        return CUBLAS_STATUS_INTERNAL_ERROR;")
    c.append("    crm_res_%s *bres = &breply.crm_reply_u.%s;" % (fn.name, fn.name))
    c.append("    brc = (cublasStatus_t)bres->err;")
    for ptr, size, member in outs:
        c.append("    if (brc == CUBLAS_STATUS_SUCCESS)")
        c.append("        brc = crm_blas_result(%s, %s, bres->%s.bytes, sizeof bres->%s.bytes);" % (ptr, size, member, member))
    c.append("    crm_conn_reply_free(&breply);\n    return brc;\n}\n")
    return c


def info_check(p, fail):
    """An info parameter: set to its expression; nonzero fails the call."""
    return ["    if (%s == NULL)\n        return %s;" % (p.name, fail),
            "    if ((*%s = %s) != 0)\n        return %s;" % (p.name, p.args[0], fail)]


def unread_guard(row, p, zero_test):
    """An operand left unread when its scalar is 0: checked only otherwise."""
    if p.name not in row.unread:
        return ""
    sc = next(q for q in row.scalars if q.name == row.unread[p.name])
    return "!" + zero_test % (sc.name, sc.size(), REAL_PART[sc.base]) + " && "


def null_guard(p):
    return "%s != 0 && " % p.name if p.nullable else ""


# --- the server -----------------------------------------------------------------------

def gen_server(fn, row, proto):
    r = row.result
    c = [proto + "\n{", "    cublasHandle_t crm_h;", "    uint64_t crm_n = 0;"]
    if row.info:
        c.append("    int crm_info = 0;")
    if row.arrays:
        c.append("    crm_hblas_arrays crm_arr;\n    uint64_t crm_one[%d];" % len(row.arrays))
    for p in row.scalars:
        c.append("    crm_hblas_scalar s_%s;" % p.name)
    if r:
        c.append("    crm_hblas_scalar s_%s;" % r.name)
    mode = "pmode" if row.scalars or r else "CRM_HBLAS_NO_MODE"
    c.append("    cublasStatus_t crm_st = crm_hblas_begin(session, handle, %s, crm_rt.%s != NULL, &crm_h);" % (mode, fn.name))
    c.append("    if (crm_st != CUBLAS_STATUS_SUCCESS)\n        return crm_st;")
    if row.info:
        c.append("    if ((%s) != 0)\n        return CUBLAS_STATUS_INVALID_VALUE;" % row.info.args[0])
    inv = row.invalid_expr()
    if inv:
        c.append("    if (%s)\n        return CUBLAS_STATUS_INVALID_VALUE;" % inv)
    if row.unsupported:
        c.append("    if (%s)\n        return CUBLAS_STATUS_NOT_SUPPORTED;" % row.unsupported)
    if r:
        c.append("    if ((crm_st = crm_hblas_result_in(session, pmode, %s, %s, &s_%s)) != CUBLAS_STATUS_SUCCESS)"
                 "\n        return crm_st;" % (r.name, r.size(), r.name))
    noop = "(%s)" % row.noop if row.noop else "0"
    if not r and row.noop:
        c.append("    if (%s)\n        return CUBLAS_STATUS_SUCCESS;" % noop)
    for p in row.scalars:
        c.append("    if ((crm_st = crm_hblas_scalar_bytes(session, pmode, %s->bytes, %s, &s_%s)) != CUBLAS_STATUS_SUCCESS)"
                 "\n        return crm_st;" % (p.name, p.size(), p.name))
    if row.operands:
        guard = "!%s && " % noop if r and row.noop else ""
        if row.strided:
            c += batch_in_int(row)
        for p in row.operands:
            if p.kind in STRIDED:
                c.append("    if (%s != 0 ||\n        crm_hblas_strided(session, %s, crm_n, %s, %s, %s) != CUBLAS_STATUS_SUCCESS)"
                         "\n        return CUBLAS_STATUS_INVALID_VALUE;"
                         % (extent(p, p.size()), p.name, p.args[-1], row.batch, p.size()))
            elif p.kind not in ARRAYS:
                c.append("    if (%s%s%s(%s != 0 || crm_hblas_region(session, %s, crm_n) != CUBLAS_STATUS_SUCCESS))"
                         "\n        return CUBLAS_STATUS_INVALID_VALUE;"
                         % (guard, null_guard(p), unread_guard(row, p, "crm_hblas_is_zero(&s_%s, %s, sizeof(%s))"),
                            extent(p, p.size()), p.name))
    if row.arrays:
        c += server_arrays(row)
    args = []
    for p in row.params:
        if p.kind == "handle":
            args.append("crm_h")
        elif p.kind == "enum":
            args.append("(%s)%s" % (p.ctype, p.name))
        elif p.kind in ("scalar", "inout", "result"):
            args.append("(%s)crm_hblas_ptr(&s_%s)" % (p.ctype, p.name))
        elif p.kind in ARRAYS:
            args.append("(%s)crm_arr.out[%d]" % (p.ctype, row.arrays.index(p)))
        elif p.kind == "info":
            args.append("&crm_info")
        elif p.kind == "value":
            args.append(p.name)
        else:
            args.append("(%s)(uintptr_t)%s" % (p.ctype, p.name))
    c.append("    (void)crm_n;")
    c.append("    crm_st = crm_rt.%s(%s);" % (fn.name, ", ".join(args)))
    if row.arrays:
        c.append("    crm_hblas_ptr_arrays_free(&crm_arr);")
    if r:
        c.append("    crm_hblas_result_out(&s_%s, %s, value->bytes, sizeof value->bytes);" % (r.name, r.size()))
    for p in row.inouts:
        c.append("    crm_hblas_result_out(&s_%s, %s, %s_out->bytes, sizeof %s_out->bytes);" % (p.name, p.size(), p.name, p.name))
    c.append("    return crm_st;\n}\n")
    return c


def server_arrays(row):
    """The pointer arrays: each item's extent, then crm_hblas_ptr_arrays checks every
    pointer and copies the arrays where the client cannot change them."""
    b = row.batch
    c = ["    if ((%s) <= 0)\n        return (%s) < 0 ? CUBLAS_STATUS_INVALID_VALUE : CUBLAS_STATUS_SUCCESS;" % (b, b)]
    c += batch_in_int(row)
    for i, p in enumerate(row.arrays):
        c.append("    if (%s != 0)\n        return CUBLAS_STATUS_INVALID_VALUE;\n    crm_one[%d] = crm_n;"
                 % (extent(p, p.size()), i))
    c.append("    const uint64_t crm_addr[%d] = {%s};" % (len(row.arrays), ", ".join(p.name for p in row.arrays)))
    c.append("    if ((crm_st = crm_hblas_ptr_arrays(session, crm_h, %d, crm_addr, crm_one, %s, &crm_arr)) !="
             "\n        CUBLAS_STATUS_SUCCESS)\n        return crm_st;" % (len(row.arrays), b))
    return c


def batch_in_int(row):
    """A _64 twin's batch count beyond int (what the server's batch checks take)."""
    if any(p.name == row.batch and p.ctype == "int64_t" for p in row.params):
        return ["    if ((%s) > INT_MAX)\n        return CUBLAS_STATUS_NOT_SUPPORTED;" % row.batch]
    return []


# --- the emulated device ----------------------------------------------------------------

def cblas_arg(p, per_item):
    if p.kind == "enum":
        conv = ENUM_RULES[p.ctype][1]
        return conv % ((p.name,) * conv.count("%s"))
    if p.kind in ("scalar", "inout"):  # v_NAME is an array: real single inputs go by value
        by_value = p.kind == "scalar" and p.count == 1 and p.base not in COMPLEX and not p.dtype
        return "v_%s%s" % (p.name, "[0]" if by_value else "")
    if p.kind in ARRAYS:
        return "(void *)(uintptr_t)" + p.name + ("[crm_b]" if per_item else "")
    if p.kind in STRIDED:
        return item_ptr(p)
    if p.kind in ("vec", "mat", "packed"):
        return "(void *)(uintptr_t)" + p.name if p.ctype.startswith("const") else p.name
    return p.name


def cblas_call(row):
    per_item = row.per_item()
    matrix = ("mat", "packed", "mats", "smat") if per_item else ("mat", "packed", "smat")
    args = ["CblasColMajor"] if any(p.kind in matrix for p in row.params) else []
    strides = {p.args[-1] for p in row.strided}  # in the item pointers, not CBLAS's arguments
    args += [cblas_arg(p, per_item) for p in row.params
             if p.kind not in ("handle", "result", "info") and not (per_item and p.name == row.batch)
             and p.name not in strides]
    fn = row.cblas if row.cblas.startswith("crm_") else "cblas_" + row.cblas
    call = "%s(%s" % (fn, ", ".join(args))
    r = row.result
    if row.res == "status":
        return "crm_st = %s);" % call
    if not r:
        return call + ");"
    if row.res == "sub":
        return call + ", &v_%s);" % r.name
    if row.res == "index":
        return "v_%s = (%s)%s) + 1;" % (r.name, r.base, call)
    return "v_%s = %s);" % (r.name, call)


def gen_emu(fn, row):
    r = row.result
    c = ["CRM_EXPORT " + row.cprototype(fn.name) + "\n{", "    uint64_t crm_n = 0;"]
    for p in row.scalars:
        c.append("    " + p.emu_decl())
    if r:
        c.append("    %s\n    memset(&v_%s, 0, sizeof v_%s);" % (r.emu_decl(), r.name, r.name))
    c.append("    cublasStatus_t crm_st = crm__blas_begin(handle);")
    c.append("    if (crm_st != CUBLAS_STATUS_SUCCESS)\n        return crm_st;")
    if row.info:
        c += info_check(row.info, "crm__blas_end(CUBLAS_STATUS_INVALID_VALUE)")
    inv = row.invalid_expr()
    if inv:
        c.append("    if (%s)\n        return crm__blas_end(CUBLAS_STATUS_INVALID_VALUE);" % inv)
    if row.unsupported:
        c.append("    if (%s)\n        return crm__blas_end(CUBLAS_STATUS_NOT_SUPPORTED);" % row.unsupported)
    if row.noop:
        c.append("    if (%s)" % row.noop)
        if r:
            c.append("        return crm__blas_end(crm__blas_put_result(handle, %s, &v_%s, %s));"
                     % (r.name, r.name, r.size()))
        else:
            c.append("        return crm__blas_end(CUBLAS_STATUS_SUCCESS);")
    for p in row.scalars:
        c.append("    if ((crm_st = crm__blas_get_scalar(handle, %s, %s, v_%s)) != CUBLAS_STATUS_SUCCESS)"
                 "\n        return crm__blas_end(crm_st);" % (p.name, p.size(), p.name))
    for p in row.operands:
        if p.kind in ARRAYS:
            c += emu_array(row, p)
            continue
        if p.kind in STRIDED:
            c.append("    if (%s != 0 || crm__blas_strided(%s, crm_n, %s, %s, %s) != CUBLAS_STATUS_SUCCESS)"
                     "\n        return crm__blas_end(CUBLAS_STATUS_INVALID_VALUE);"
                     % (extent(p, p.size()), p.name, p.args[-1], row.batch, p.size()))
            continue
        c.append("    if (%s%s(%s != 0 || crm__blas_dev(%s, crm_n) != CUBLAS_STATUS_SUCCESS))"
                 "\n        return crm__blas_end(CUBLAS_STATUS_INVALID_VALUE);"
                 % (null_guard(p), unread_guard(row, p, "crm__blas_is_zero(v_%s, %s, sizeof(%s))"), extent(p, p.size()),
                    p.name))
    wide = [p.name for p in row.params if p.kind == "value" and p.ctype == "int64_t"]
    if wide:
        c.append("    if (%s)\n        return crm__blas_end(CUBLAS_STATUS_NOT_SUPPORTED); /* CBLAS takes int */"
                 % " || ".join("%s < INT_MIN || %s > INT_MAX" % (n, n) for n in wide))
    c.append("    (void)crm_n;")
    if row.per_item():
        c.append("    double crm_deadline = crm__blas_deadline();")
        c.append("    for (int crm_b = 0; crm_b < (%s); crm_b++) {" % row.batch)
        c.append("        if (crm__blas_overdue(crm_deadline))\n            return crm__blas_end(CUBLAS_STATUS_EXECUTION_FAILED);")
        c += ["    " + line for line in (clear_if_zero(row) if row.zero else [])]
        c.append("        " + cblas_call(row) + "\n    }")
    else:
        c += clear_if_zero(row) if row.zero else []
        c.append("    " + cblas_call(row))
    for p in row.inouts:
        c.append("    if (crm_st == CUBLAS_STATUS_SUCCESS)\n        crm_st = crm__blas_put_result(handle, %s, v_%s, %s);"
                 % (p.name, p.name, p.size()))
    if r:
        c.append("    return crm__blas_end(crm__blas_put_result(handle, %s, &v_%s, %s));"
                 % (r.name, r.name, r.size()))
    elif row.inouts:
        c.append("    return crm__blas_end(crm_st);")
    else:
        c.append("    return crm__blas_end(%s);" % ("crm_st" if row.res == "status" else "CUBLAS_STATUS_SUCCESS"))
    c.append("}\n")
    return c


def emu_array(row, p):
    """A pointer array: the array itself, then every matrix it points to."""
    b = row.batch
    first = ["    if ((%s) <= 0)\n        return crm__blas_end((%s) < 0 ? CUBLAS_STATUS_INVALID_VALUE"
             " : CUBLAS_STATUS_SUCCESS);" % (b, b)] if p is row.arrays[0] else []
    return first + [
            "    if (%s != 0 || crm__blas_dev(%s, (uint64_t)(%s) * sizeof *%s) != CUBLAS_STATUS_SUCCESS)"
            "\n        return crm__blas_end(CUBLAS_STATUS_INVALID_VALUE);"
            % (extent(p, p.size()), p.name, b, p.name),
            "    for (int crm_b = 0; crm_b < (%s); crm_b++)" % b,
            "        if (crm__blas_dev(%s[crm_b], crm_n) != CUBLAS_STATUS_SUCCESS)"
            "\n            return crm__blas_end(CUBLAS_STATUS_INVALID_VALUE);" % p.name]


def item_ptr(p):
    """Item crm_b of a strided operand."""
    return "(void *)((char *)(uintptr_t)%s + (ptrdiff_t)crm_b * (ptrdiff_t)(%s) * (ptrdiff_t)(%s))" % (
        p.name, p.args[-1], p.size())


def clear_if_zero(row):
    scalar, operand = row.zero
    sc = next(p for p in row.scalars if p.name == scalar)
    op = next(p for p in row.operands if p.name == operand)
    test = "crm__blas_is_zero(v_%s, sizeof v_%s, sizeof(%s))" % (sc.name, sc.name, REAL_PART[sc.base])
    # a batch's operand: the item's
    target = op.name + "[crm_b]" if op.kind in ARRAYS else item_ptr(op) if op.kind in STRIDED else op.name
    vector = op.kind in VECTORS
    shape = ", ".join(op.args[:2 if vector else 3] + [op.size()])
    clear = "crm__blas_clear_%s(%s, %s)" % ("vec" if vector else "mat", target, shape)
    return ["    if (%s)\n        %s;" % (test, clear)]


CLIENT_HEAD = """/* crm_blas_gen.c -- generated by protocol/gen_blas.py from protocol/cublas.api; do
 * not edit. The shim's cuBLAS calls of the `blas` rows. */
#include <string.h>
#include "client/crm_conn.h"
#include "client/crm_handles.h"
#include "crm_client_gen.h"
#include "interpose/crm_blas.h"
#include "interpose/crm_export.h"
"""
SERVER_HEAD = """/* crm_h_blas_gen.c -- generated by protocol/gen_blas.py from protocol/cublas.api; do
 * not edit. The server's handlers of the `blas` rows. */
#include <limits.h>
#include "server/crm_h_blas.h"
"""
EMU_HEAD = """/* crm_emu_blas_gen.c -- generated by protocol/gen_blas.py from protocol/cublas.api;
 * do not edit. The emulated device's cuBLAS calls of the `blas` rows, on CBLAS. */
#include <limits.h>
#include <stddef.h>
#include <string.h>
#include <cblas.h>
#include "server/emu/crm_emu_blas.h"
"""


def gen_blas_files(fns, server_proto):
    """(client, server, emu) C sources of every `blas` row in fns."""
    client, server, emu = [CLIENT_HEAD], [SERVER_HEAD], [EMU_HEAD]
    for f in fns:
        row = getattr(f, "blas", None)
        if row is None:
            continue
        client += gen_client(f, row)
        server += gen_server(f, row, server_proto(f))
        if row.cblas:
            emu += gen_emu(f, row)
    return "\n".join(client) + "\n", "\n".join(server) + "\n", "\n".join(emu) + "\n"


def load_protos(headers):
    """{name: parameter text} of the functions the headers (comma-separated paths)
    declare (the header reader tools/gen_fallback.py uses for its trampolines)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
    from gen_fallback import prototypes
    try:
        return prototypes(headers)
    except OSError as e:
        sys.exit("gen_blas.py: %s" % e)
