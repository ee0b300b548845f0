#!/usr/bin/env python3
"""step.py -- one small training step of the torch wheel, phase by phase, for
probing through the shim: import torch, torch.cuda.init(), moving a tiny MLP
(16 -> 32 -> ReLU -> 4) and a batch to the device, forward, MSE loss, backward,
an SGD step, loss.item(); then single ops (env STEP_OPS) that a step is made of (cuBLAS mm, a
bias add, ReLU, a conv2d forward) each on its own, since on the emulated device
every torch kernel fails and a phase stops at its first one.

Each phase is announced by calling the shim's cudaremGetStats with a buffer that
holds the phase name (the shim overwrites it with its counters, read back here), so
a debugger (gdbprobe.py) can split what it sees by phase. A name starting with
"count:" asks the debugger to count API calls in that phase. Prints per phase:
round trips, calls carried, bulk bytes, wall seconds, and the exception if it
raised ("stopped"). A phase after a failed one it depends on is "not reached".
Usage: LD_PRELOAD=$PWD/build/libcudarem.so CUDAREM_SERVER=unix:/tmp/x.sock \
           ~/.cache/cudarem/pyenv/bin/python tools/torch_probe/step.py [--no-count]"""
import ctypes
import os
import sys
import time

COUNT = "--no-count" not in sys.argv
_stats = ctypes.CDLL(None).cudaremGetStats
_stats.argtypes = [ctypes.c_char_p]


def marker(name):
    buf = ctypes.create_string_buffer(name.encode(), 64)
    _stats(buf)
    return [int.from_bytes(buf.raw[i * 8:i * 8 + 8], "little") for i in range(4)]


rows = []


def phase(name, fn, count=True):
    before = marker(("count:" if COUNT and count else "") + name)
    t0 = time.perf_counter()
    err, result = None, None
    try:
        result = fn()
    except Exception as e:
        err = "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:160])
    dt = time.perf_counter() - t0
    after = marker("after " + name)
    d = [a - b for a, b in zip(after, before)]
    rows.append((name, d, dt, err))
    return err is None, result


S = {}
phase("import torch", lambda: S.setdefault("torch", __import__("torch")), count=False)
torch = S["torch"]
phase("torch.cuda.init()", torch.cuda.init)
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
opt_model = {}
ok, _ = phase("model.cuda()", lambda: opt_model.setdefault("m", model.cuda()))
x, y = torch.randn(8, 16), torch.randn(8, 4)
ok2, xy = phase("batch .cuda()", lambda: (x.cuda(), y.cuda()))
reached = ok and ok2
if reached:
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    xd, yd = xy
    steps = [("forward", lambda: S.setdefault("out", model(xd))),
             ("loss", lambda: S.setdefault("loss", torch.nn.functional.mse_loss(S["out"], yd))),
             ("backward", lambda: S["loss"].backward()),
             ("sgd step", opt.step),
             ("zero_grad", opt.zero_grad),
             ("loss.item()", lambda: S["loss"].item())]
    for name, fn in steps:
        if reached:
            reached, _ = phase(name, fn)
        else:
            rows.append((name, None, 0.0, "not reached"))
# single ops, each on its own (STEP_OPS, comma-separated; conv2d crashes inside
# NVIDIA's cuDNN on the emulated device, so it comes last and "end" is marked first)
OPS = os.environ.get("STEP_OPS", "mm,addmm,relu,sync").split(",")
a, b = torch.randn(8, 16).cuda(), torch.randn(16, 32).cuda()
if "mm" in OPS:
    phase("op torch.mm (cuBLAS)", lambda: torch.mm(a, b))
if "addmm" in OPS:
    phase("op addmm (Linear with bias)", lambda: torch.addmm(torch.zeros(32).cuda(), a, b))
if "relu" in OPS:
    phase("op relu", lambda: torch.relu(a))
if "sync" in OPS:
    phase("op torch.cuda.synchronize()", torch.cuda.synchronize)
marker("end")
if "conv2d" in OPS:
    phase("op conv2d forward", lambda: torch.nn.functional.conv2d(torch.randn(2, 3, 8, 8).cuda(),
                                                                 torch.randn(4, 3, 3, 3).cuda()))
print("%-28s %6s %6s %10s %10s %8s  %s" % ("phase", "rtrips", "calls", "bytes_h2d", "bytes_d2h", "seconds", "outcome"))
for name, d, dt, err in rows:
    if d is None:
        print("%-28s %6s %6s %10s %10s %8s  %s" % (name, "-", "-", "-", "-", "-", err))
    else:
        print("%-28s %6d %6d %10d %10d %8.3f  %s" % (name, d[0], d[1], d[2], d[3], dt, err or "ok"))
