#!/usr/bin/env python3
"""cupy_pool.py -- the cupy-cuda13x wheel over a pool of cudarem servers
(CUDAREM_SERVER lists them): CuPy sees every pooled device in order (POOL_MEM_MIB
gives each one's total memory in MiB, which says which server it is on); on each
device an elementwise kernel (compiled to PTX by NVRTC on the client, run by the
server's device) computes right; cupy.asarray moves the result to every other
device, across servers too, and a kernel there computes on it right; a float64
matmul (cuBLAS) on each device matches NumPy's. Prints one line per check and
"PASS cupy_pool"; exits 0 only when every check held. See fwcheck.py."""
import os
import sys

os.environ["CUPY_COMPILE_WITH_PTX"] = "1"
from fwcheck import Checker  # noqa: E402

N = 100003


def body(c):
    cp = c.step("import cupy", __import__, "cupy", fatal=True)
    import numpy as np
    want = [int(m) for m in os.environ.get("POOL_MEM_MIB", "").split(",") if m]
    n = c.step("getDeviceCount()", cp.cuda.runtime.getDeviceCount, fatal=True)
    c.check(n == len(want), "CuPy sees every pooled device", "%d, expected %d" % (n, len(want)))
    n = min(n, len(want))
    base = np.arange(N, dtype=np.float32)
    made = []
    for d in range(n):
        with cp.cuda.Device(d):
            total = cp.cuda.runtime.getDeviceProperties(d)["totalGlobalMem"]
            c.check(total >> 20 == want[d], "device %d is on the expected server" % d, "%d MiB" % (total >> 20))
            a = c.step("kernel on device %d" % d, lambda: cp.asarray(base) * (d + 1) + 1)
            ok = a is not None and np.array_equal(cp.asnumpy(a), base * (d + 1) + 1)
            c.check(ok, "an elementwise kernel on device %d computes right" % d)
            made.append(a)
    for d in range(n):
        for e in range(n):
            if e == d or made[d] is None:
                continue
            with cp.cuda.Device(e):
                moved = c.step("device %d -> %d" % (d, e), cp.asarray, made[d])
                ok = moved is not None and moved.device.id == e and \
                    np.array_equal(cp.asnumpy(moved * 2), (base * (d + 1) + 1) * 2)
                c.check(ok, "device %d -> %d, then a kernel on %d, computes right" % (d, e, e))
    a, b = np.random.rand(64, 48), np.random.rand(48, 32)
    for d in range(n):
        with cp.cuda.Device(d):
            got = c.step("matmul on device %d" % d, lambda: cp.asnumpy(cp.asarray(a) @ cp.asarray(b)))
            c.check(got is not None and np.allclose(got, a @ b), "float64 matmul on device %d matches NumPy" % d)


if __name__ == "__main__":
    sys.exit(Checker("cupy_pool").run(body))
