#!/usr/bin/env python3
"""torch_pool.py -- the PyPI PyTorch wheel over a pool of cudarem servers
(CUDAREM_SERVER lists them): torch sees every pooled device, in order
(POOL_MEM_MIB gives each one's total memory in MiB, which says which server it is
on); a tensor makes the round trip to every device exactly; .to() copies it
between every pair of devices, across servers too, exactly; torch.mm (cuBLAS)
on every device matches the CPU's; mem_get_info asks each device's own server.
Prints one line per check and "PASS torch_pool"; exits 0 only when every check
held. See fwcheck.py."""
import os
import sys

from fwcheck import Checker

N = (1 << 20) + 3


def body(c):
    torch = c.step("import torch", __import__, "torch", fatal=True)
    want = [int(m) for m in os.environ.get("POOL_MEM_MIB", "").split(",") if m]
    n = c.step("torch.cuda.device_count()", torch.cuda.device_count, fatal=True)
    c.check(n == len(want), "torch sees every pooled device", "%d, expected %d" % (n, len(want)))
    n = min(n, len(want))
    for d in range(n):
        p = torch.cuda.get_device_properties(d)
        c.check(p.total_memory >> 20 == want[d], "cuda:%d is on the expected server" % d,
                "%d MiB, expected %d" % (p.total_memory >> 20, want[d]))
        free, total = torch.cuda.mem_get_info(d)
        c.check(total >> 20 == want[d] and 0 < free <= total, "mem_get_info(%d) from its own server" % d,
                "%d of %d" % (free, total))
    host = torch.arange(N, dtype=torch.float32)
    on = [c.step("tensor to cuda:%d" % d, host.to, "cuda:%d" % d, fatal=True) for d in range(n)]
    for d in range(n):
        c.check(torch.equal(on[d].cpu(), host), "cuda:%d round trip is exact" % d)
        for e in range(n):
            if e != d:
                moved = c.step("cuda:%d -> cuda:%d" % (d, e), on[d].to, "cuda:%d" % e)
                c.check(moved is not None and moved.device.index == e and torch.equal(moved.cpu(), host),
                        "cuda:%d -> cuda:%d is exact" % (d, e))
    a, b = torch.randn(96, 64), torch.randn(64, 80)
    want_mm = a @ b
    for d in range(n):
        dev = "cuda:%d" % d
        got = c.step("torch.mm on %s" % dev, lambda: (a.to(dev) @ b.to(dev)).cpu())
        c.check(got is not None and torch.allclose(got, want_mm, atol=1e-4), "torch.mm on %s matches the CPU" % dev)


if __name__ == "__main__":
    sys.exit(Checker("torch_pool").run(body))
