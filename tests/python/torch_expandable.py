#!/usr/bin/env python3
"""torch_expandable.py -- torch's caching allocator with expandable segments
(PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, set here before torch starts):
its segments grow by mapping physical chunks into one reserved range with the
driver's virtual memory calls (cuMemAddressReserve, cuMemCreate, cuMemMap,
cuMemSetAccess), which cudarem remotes. Exact copies that end up spanning chunks,
a matmul, growth past the first chunks, and empty_cache() giving the chunks back.
Run by torch_basic.py in a process of its own; prints "PASS torch_expandable"."""
import os
import sys

os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"

from fwcheck import Checker  # noqa: E402

MIB = 1 << 20


def body(c):
    import torch
    gen = torch.Generator().manual_seed(5)
    a, b = torch.randn(300, 200, generator=gen), torch.randn(200, 100, generator=gen)
    got = c.step("torch.mm in an expandable segment", lambda: torch.mm(a.cuda(), b.cuda()).cpu())
    c.check(got is not None and torch.allclose(got, a @ b, rtol=1e-4, atol=1e-4), "mm matches the CPU")
    host = [torch.randn(MIB + 1000 * i, generator=gen) for i in range(12)]  # ~4 MiB each: they span chunks
    dev = c.step("12 tensors of ~4 MiB to the device", lambda: [t.cuda() for t in host])
    if dev is not None:
        c.check(all(torch.equal(d.cpu(), h) for d, h in zip(dev, host)), "every tensor came back exactly")
        grown = torch.cuda.memory_reserved()
        c.check(grown >= 48 * MIB, "the segment grew to hold them", "%d bytes reserved" % grown)
        del dev
        torch.cuda.empty_cache()
        shrunk = torch.cuda.memory_reserved()
        c.check(shrunk < grown, "empty_cache() unmapped the free chunks", "%d -> %d bytes" % (grown, shrunk))
    got = c.step("torch.mm after the segment shrank", lambda: torch.mm(a.cuda(), b.cuda()).cpu())
    c.check(got is not None and torch.allclose(got, a @ b, rtol=1e-4, atol=1e-4), "mm still matches")


if __name__ == "__main__":
    sys.exit(Checker("torch_expandable").run(body))
