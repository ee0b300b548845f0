#!/usr/bin/env python3
"""summarise.py -- turns the JSON gdbprobe.py wrote into the tables of
docs/pytorch.md: fatbins registered (count, bytes, architectures, PTX), driver
entry points asked for (per phase and library, the distinct names), dlopen
calls of CUDA libraries, and per counted phase each API function called from
outside the shim with its calls, the round trips and queued calls made inside
it; then what the fallback handed to NVIDIA's libraries.
Usage: summarise.py PROBE.json [--names]   (--names lists every entry point name)"""
import collections
import json
import sys

d = json.load(open(sys.argv[1]))
fb = d["fatbins"]
archs, kinds, comp = collections.Counter(), collections.Counter(), 0
by = collections.Counter()
for f in fb:
    by[f["by"]] += 1
    for e in f["entries"]:
        kinds[e["kind"]] += 1
        archs["%s sm_%d" % (e["kind"], e["arch"])] += 1
        comp += e["compressed"]
total = sum(f["size"] for f in fb)
print("## fatbins registered: %d, %d bytes (%.1f MB), entries %d (%d compressed)" % (
    len(fb), total, total / 1e6, sum(kinds.values()), comp))
print("   by library:", dict(by))
print("   entries by kind/arch:", dict(sorted(archs.items())))
print("   fatbins carrying PTX:", sum(1 for f in fb if any(e["kind"] == "ptx" for e in f["entries"])))
procs = d["procs"]
print("\n## driver entry points asked for: %d requests, %d distinct names" % (
    len(procs), len({p["name"] for p in procs})))
c = collections.Counter((p["phase"], p["by"]) for p in procs)
for (ph, who), n in sorted(c.items()):
    names = sorted({p["name"] for p in procs if p["phase"] == ph and p["by"] == who})
    vers = sorted({p["version"] for p in procs if p["phase"] == ph and p["by"] == who})
    print("   %-28s %-28s %4d requests, %3d names, versions %s" % (ph, who, n, len(names), vers))
    if "--names" in sys.argv:
        print("      " + " ".join(names))
print("\n## dlopen of CUDA/NVIDIA names (the shim's interposer saw them)")
for x in d["dlopens"]:
    n = x["name"] or "(NULL)"
    if any(k in n for k in ("cuda", "nvidia", "nvrtc", "cudnn", "cublas", "nvml", "caffe2", "triton")) \
            and "/bindings/" not in n:
        print("   %-22s %-40s by %s" % (x["phase"], n.split("site-packages/")[-1], x["by"]))
for ph in d["order"]:
    if ph not in d["phases"]:
        continue
    p = d["phases"][ph]
    calls = p["calls"]
    rts = sum(p["round_trips"].values())
    print("\n## phase %s: %d API calls from outside the shim, %d round trips, %d queued" % (
        ph, sum(c["n"] for c in calls.values()), rts, sum(p["queued"].values())))
    print("   %-36s %6s %6s %6s  %s" % ("function", "calls", "rtrips", "queued", "called by"))
    for name, c in sorted(calls.items(), key=lambda kv: -kv[1]["n"]):
        print("   %-36s %6d %6d %6d  %s" % (name, c["n"], p["round_trips"].get(name, 0), p["queued"].get(name, 0),
                                           ", ".join("%s %d" % kv for kv in c["by"].items())))
    other = {k: v for k, v in list(p["round_trips"].items()) + list(p["queued"].items()) if k not in calls}
    if other:
        print("   (round trips/queued attributed to no counted call: %s)" % other)
if d.get("fallback"):
    print("\n## fallback targets resolved by the end:", d.get("fallback_calls"), "calls handed to NVIDIA")
    for k, v in sorted(d["fallback"].items()):
        print("   %-40s %s" % (k, v))
for k, v in d.get("lt_calls", {}).items():
    print("cuBLASLt", k, v)
for s in d.get("stops", []):
    print("\n## the program stopped on a signal:\n" + s)
