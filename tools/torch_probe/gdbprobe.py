# gdbprobe.py -- a gdb (Python) script that watches a program running through the
# cudarem shim and records, without stopping it:
#   - every driver entry point asked for (the shim's crm_drv_proc: the name,
#     the CUDA version, the flags, the library that asked, found or not),
#   - every fatbinary registered (the shim's __cudaRegisterFatBinary: size,
#     entries with kind PTX/ELF, sm_XX, compression; the library registering),
#   - every dlopen the shim's dlopen interposer sees (name, calling library),
#   - in phases whose marker starts with "count:" (see step.py), every call into an
#     exported function of the shim from outside it (per function and calling
#     library), which API call each round trip (crm__send) and each queued call
#     (crm_queue_push) happened in (and, with PROBE_LT="fn ...", calls of those
#     functions of libraries whose symbols gdb loaded);
#   - at each "after ..." marker and "end", which functions the fallback handed to NVIDIA's
#     libraries (crm_fallback_is_nvidia) and which it answered "not supported".
# Phase markers are the program's calls of cudaremGetStats(buf) with the phase
# name in buf. Writes JSON to $PROBE_OUT when the program exits.
# Run through tools/torch_probe/probe.sh, which starts gdb with it.
import gdb
import json
import os
import re
import struct
import subprocess

SHIM = os.environ["PROBE_SHIM"]
OUT = os.environ.get("PROBE_OUT", "/tmp/gdbprobe.json")
inf = None
state = {"phase": "start", "counting": False}
data = {"procs": [], "fatbins": [], "dlopens": [], "phases": {}, "order": [], "lt_calls": {},
        "fallback": {}}
current_api = {}  # thread -> name of the API call in progress


def reg(name):
    return int(gdb.parse_and_eval("$" + name)) & 0xFFFFFFFFFFFFFFFF


def mem(addr, n):
    return bytes(inf.read_memory(addr, n))


def cstr(addr, limit=256):
    if addr == 0:
        return None
    b = mem(addr, limit)
    return b.split(b"\0", 1)[0].decode("latin-1")


def lib_of(pc):
    name = gdb.solib_name(pc)
    return os.path.basename(name) if name else "(program)"


def caller():  # at a function's first instruction the return address is at (%rsp)
    return struct.unpack("<Q", mem(reg("rsp"), 8))[0]


def ph():
    return data["phases"].setdefault(state["phase"], {"calls": {}, "round_trips": {}, "queued": {}})


class Marker(gdb.Breakpoint):
    def stop(self):
        name = cstr(reg("rdi"), 64)
        state["counting"] = name.startswith("count:")
        state["phase"] = name[6:] if state["counting"] else name
        data["order"].append(state["phase"])
        for b in api_bps:
            b.enabled = state["counting"]
        if name == "end" or name.startswith("after "):
            read_fallback()
        return False


class DrvProc(gdb.Breakpoint):
    def stop(self):
        # walk out of the shim to the library that asked
        f, who = gdb.newest_frame(), "?"
        while f is not None:
            lib = gdb.solib_name(f.pc())
            if lib is None or os.path.basename(lib) != os.path.basename(SHIM):
                who = lib_of(f.pc())
                break
            f = f.older()
        data["procs"].append({"phase": state["phase"], "name": cstr(reg("rdi")), "version": reg("rsi") & 0xFFFFFFFF,
                              "flags": reg("rdx"), "by": who})
        return False


class FatBin(gdb.Breakpoint):
    def stop(self):
        wrapper = reg("rdi")
        magic, version, ptr = struct.unpack("<IIQ", mem(wrapper, 16))
        rec = {"phase": state["phase"], "by": lib_of(caller()), "entries": []}
        hdr = mem(ptr, 16)
        fmagic, fver, hs, body = struct.unpack("<IHHQ", hdr)
        rec["size"] = hs + body
        off = hs
        while off < hs + body and len(rec["entries"]) < 4096:
            e = mem(ptr + off, 64)
            kind = struct.unpack_from("<H", e, 0)[0]
            ehs = struct.unpack_from("<I", e, 4)[0]
            stored = struct.unpack_from("<Q", e, 8)[0]
            arch = struct.unpack_from("<I", e, 28)[0]
            flags = struct.unpack_from("<Q", e, 40)[0]
            rec["entries"].append({"kind": {1: "ptx", 2: "elf"}.get(kind, str(kind)), "arch": arch,
                                   "stored": stored, "compressed": bool(flags & 0xA000)})
            if ehs == 0:
                break
            off += ehs + stored
        data["fatbins"].append(rec)
        return False


class Dlopen(gdb.Breakpoint):
    def stop(self):
        data["dlopens"].append({"phase": state["phase"], "name": cstr(reg("rdi")), "by": lib_of(caller())})
        return False


class Api(gdb.Breakpoint):
    def __init__(self, addr, names):
        super().__init__("*0x%x" % addr, internal=True)
        self.names = names
        self.enabled = False

    def stop(self):
        who = lib_of(caller())
        if who == os.path.basename(SHIM):
            return False  # the shim calling itself
        name = self.names[0]
        if name == "cudaremGetStats":
            return False
        current_api[gdb.selected_thread().ptid[1]] = name
        c = ph()["calls"].setdefault(name, {"n": 0, "by": {}})
        c["n"] += 1
        c["by"][who] = c["by"].get(who, 0) + 1
        return False


class Wire(gdb.Breakpoint):
    def __init__(self, spec, key):
        super().__init__(spec, internal=True)
        self.key = key

    def stop(self):
        if state["counting"]:
            name = current_api.get(gdb.selected_thread().ptid[1], "?")
            d = ph()[self.key]
            d[name] = d.get(name, 0) + 1
        return False


class LtCall(gdb.Breakpoint):
    def __init__(self, spec):
        super().__init__(spec, internal=True)
        self.fname = spec

    def stop(self):
        if state["counting"]:
            k = "%s|%s" % (state["phase"], self.fname)
            rec = data["lt_calls"].setdefault(k, {"n": 0, "first_arg": "0x%x" % reg("rdi"), "by": lib_of(caller())})
            rec["n"] += 1
        return False


def read_fallback():
    try:
        n = int(gdb.parse_and_eval("crm_fallback_count"))
        for i in range(n):
            slot = int(gdb.parse_and_eval("(unsigned long)crm_fallback_slots[%d]" % i))
            if slot == 0:
                continue
            name = gdb.parse_and_eval("crm_fallback_names[%d]" % i).string()
            nv = int(gdb.parse_and_eval("crm_fallback_is_nvidia[%d]" % i))
            data["fallback"][name] = "nvidia" if nv else "not supported"
        data["fallback_calls"] = int(gdb.parse_and_eval("crm_fallback_calls"))
    except gdb.error as e:
        data["fallback_error"] = str(e)


api_bps = []


def setup():
    gdb.execute("sharedlibrary %s" % os.path.basename(SHIM), to_string=True)
    # exported functions of the shim, by address (aliases share one breakpoint)
    nm = subprocess.run(["nm", "-D", "--defined-only", SHIM], capture_output=True, text=True).stdout
    by_addr, stats_off = {}, None
    for line in nm.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "TWi":
            name = p[2].split("@")[0]
            by_addr.setdefault(int(p[0], 16), []).append(name)
            if name == "cudaremGetStats":
                stats_off = int(p[0], 16)
    base = int(gdb.parse_and_eval("(unsigned long)&cudaremGetStats")) - stats_off
    for off, names in by_addr.items():
        if re.match(r"^(cu|nvml|__cuda)", names[0]) and names[0] != "cudaremGetStats":
            api_bps.append(Api(base + off, sorted(set(names), key=len)))
    Marker("cudaremGetStats", internal=True)
    DrvProc("crm_drv_proc", internal=True)
    FatBin("*0x%x" % (base + [o for o, n in by_addr.items() if "__cudaRegisterFatBinary" in n][0]), internal=True)
    Dlopen("*0x%x" % int(gdb.parse_and_eval("(unsigned long)&crm_dlopen")), internal=True)
    Wire("crm__send", "round_trips")
    Wire("crm_queue_push", "queued")
    for fn in os.environ.get("PROBE_LT", "").split():
        LtCall(fn)


gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("set breakpoint pending on")
gdb.execute("set startup-with-shell off")
gdb.execute("set auto-solib-add off")
gdb.execute("set print thread-events off")
gdb.execute("set stop-on-solib-events 1")
for sig in ("SIGPIPE", "SIGUSR1", "SIGUSR2", "SIGCHLD"):
    gdb.execute("handle %s nostop noprint pass" % sig, to_string=True)
gdb.execute("run", to_string=True)
inf = gdb.selected_inferior()
while SHIM not in gdb.execute("info sharedlibrary", to_string=True):
    gdb.execute("continue", to_string=True)
setup()
gdb.execute("set stop-on-solib-events 0")
# continue until exit; a signal stop (a crash) is reported with a backtrace
while True:
    try:
        gdb.execute("continue")
    except gdb.error as e:
        break
    if not inf.is_valid() or inf.pid == 0:
        break
    data.setdefault("stops", []).append(gdb.execute("bt 6", to_string=True))
    if len(data["stops"]) > 3:
        gdb.execute("kill")
        break
with open(OUT, "w") as f:
    json.dump(data, f, indent=1)
print("gdbprobe: wrote", OUT)
