#!/usr/bin/env python3
"""loads.py -- which shared libraries the torch wheel maps at each phase: import
torch, torch.cuda.init(), the first CUDA tensor, a cuBLAS matmul, a conv2d (cuDNN).
After each phase it prints the libraries newly in /proc/self/maps (one line each,
"+ path"), and writes a marker line "=== PHASE" to stderr first, so that the
dynamic loader's own trace (LD_DEBUG=files, also on stderr) can be read phase by
phase: its "dynamically loaded by" lines are dlopen calls, "needed by" DT_NEEDED.
A phase that raises prints the exception and the script goes on.
Usage (through the shim; without LD_PRELOAD for the wheel alone):
  LD_DEBUG=files LD_PRELOAD=$PWD/build/libcudarem.so CUDAREM_SERVER=unix:/tmp/x.sock \
      ~/.cache/cudarem/pyenv/bin/python tools/torch_probe/loads.py 2>&1 | tools/torch_probe/loads-summary.sh"""
import os
import sys


def mapped():
    out = set()
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) == 6 and ".so" in parts[5]:
                out.add(parts[5].strip())
    return out


seen = mapped()


def phase(name, fn):
    global seen
    os.write(2, ("=== %s\n" % name).encode())
    try:
        fn()
    except Exception as e:  # a phase may fail on the emulated device
        os.write(2, ("phase raised %s: %s\n" % (type(e).__name__, str(e).splitlines()[0][:200])).encode())
    now = mapped()
    for p in sorted(now - seen):
        os.write(2, ("+ %s\n" % p).encode())
    seen = now


mods = {}
phase("import torch", lambda: mods.setdefault("torch", __import__("torch")))
torch = mods["torch"]
phase("torch.cuda.is_available()", torch.cuda.is_available)
phase("torch.cuda.init()", torch.cuda.init)
phase("first CUDA tensor", lambda: torch.ones(4, device="cuda"))
phase("torch.mm (cuBLAS)", lambda: torch.mm(torch.randn(8, 8).cuda(), torch.randn(8, 8).cuda()).cpu())
phase("conv2d (cuDNN)", lambda: torch.nn.functional.conv2d(torch.randn(1, 1, 8, 8).cuda(),
                                                          torch.randn(1, 1, 3, 3).cuda()).cpu())
phase("end", lambda: None)
