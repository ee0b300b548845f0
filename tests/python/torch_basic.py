#!/usr/bin/env python3
"""torch_basic.py -- the PyPI PyTorch wheel (CUDA 13 build) through the cudarem shim:
is_available, device_count, get_device_name, get_device_properties,
memory_allocated and mem_get_info, exact .cuda()/.cpu() round trips up to a few
MiB, torch.mm (cuBLAS), addmm and linear with a bias (cuBLASLt), conv2d forward and
backward (cuDNN), the step of
torch_step.py (bmm, linear backward, epilogues, one round trip per warm step), the
first kernels, CUDA graphs and torch.compile (torch_graphs.py), expandable
segments (torch_expandable.py), and examples/train_torch.py.

The wheel ships its kernels as machine code only (no PTX): with
CUDAREM_EXPECT_CUBIN=1 (a real GPU server) `x + 1` on the device must compute
right; otherwise (the emulated device) it must fail cleanly with a RuntimeError
that mentions CUDA, not crash or hang. Prints one line per check and
"PASS torch_basic"; exits 0 only when every check held. See fwcheck.py."""
import sys

import torch_graphs
import torch_step
from fwcheck import Checker, expect_kernels, random_bytes

ROUND_TRIP_SIZES = [1, 4097, 1 << 20, (4 << 20) + 3]


def body(c):
    torch = c.step("import torch", __import__, "torch", fatal=True)
    c.note("torch %s, built for CUDA %s" % (torch.__version__, torch.version.cuda))
    c.check(c.step("torch.cuda.is_available()", torch.cuda.is_available) is True, "CUDA is available")
    n = c.step("torch.cuda.device_count()", torch.cuda.device_count, fatal=True)
    c.check(n >= 1, "at least one device", "%d" % n)
    # The first call that needs the CUDA context: torch._C._cuda_init() underneath.
    c.step("torch.cuda.init()", torch.cuda.init, fatal=True)
    name = c.step("torch.cuda.get_device_name(0)", torch.cuda.get_device_name, 0)
    c.check(name is not None and name.strip() != "", "device name is not empty", repr(name))
    p = c.step("torch.cuda.get_device_properties(0)", torch.cuda.get_device_properties, 0)
    if p is not None:
        c.note("device 0: %s, compute capability %d.%d, %d bytes, %d SMs" % (
            p.name, p.major, p.minor, p.total_memory, p.multi_processor_count))
        c.check(p.name == name, "properties name == get_device_name")
        c.check(p.major >= 3 and p.total_memory > 0, "compute capability >= 3 and total_memory > 0")
    info = c.step("torch.cuda.mem_get_info()", torch.cuda.mem_get_info)
    if info is not None:
        free, total = info
        c.check(0 < free <= total, "mem_get_info: 0 < free <= total", "%d, %d" % (free, total))
        if p is not None:
            c.check(total == p.total_memory, "mem_get_info total == total_memory", "%d vs %d" % (total, p.total_memory))
    before = c.step("torch.cuda.memory_allocated()", torch.cuda.memory_allocated)

    for i, size in enumerate(ROUND_TRIP_SIZES):
        host = torch.from_numpy(random_bytes(size, 200 + i))
        dev = c.step(".cuda() of %d bytes" % size, host.cuda)
        if dev is None:
            continue
        c.check(dev.is_cuda and dev.device.index == 0, "the tensor is on cuda:0", str(dev.device))
        if i == len(ROUND_TRIP_SIZES) - 1 and before is not None:
            now = c.step("memory_allocated() with the tensor", torch.cuda.memory_allocated)
            c.check(now is not None and now - before >= size, "memory_allocated grew by the tensor",
                    "%r -> %r" % (before, now))
        back = c.step(".cpu() of %d bytes" % size, dev.cpu)
        if back is not None:
            c.check(torch.equal(back, host), "%d bytes came back exactly" % size)
        del dev
    floats = torch.randn(513, 129, dtype=torch.float64)
    back = c.step("float64 matrix .to('cuda').to('cpu')", lambda: floats.to("cuda").to("cpu"))
    c.check(back is not None and torch.equal(back, floats), "float64 matrix came back exactly")

    # torch.mm of float32 matrices is one cuBLAS GEMM (no torch kernel around it)
    gen = torch.Generator().manual_seed(3)
    a, b = torch.randn(67, 45, generator=gen), torch.randn(45, 33, generator=gen)
    got = c.step("torch.mm float32 (cuBLAS)", lambda: torch.mm(a.cuda(), b.cuda()).cpu())
    c.check(got is not None and torch.allclose(got, a @ b, rtol=1e-4, atol=1e-4), "torch.mm matches the CPU")

    # addmm with a bias vector and nn.functional.linear are one cublasLtMatmul with
    # the BIAS epilogue (torch passes its cuBLAS handle as the cuBLASLt handle);
    # half data runs with float compute
    x, w, bias = torch.randn(64, 45, generator=gen), torch.randn(33, 45, generator=gen), torch.randn(33, generator=gen)
    got = c.step("torch.addmm(b, x, w) float32 (cuBLASLt, bias epilogue)",
                 lambda: torch.addmm(bias.cuda(), x.cuda(), w.t().cuda()).cpu())
    c.check(got is not None and torch.allclose(got, torch.addmm(bias, x, w.t()), rtol=1e-4, atol=1e-4),
            "addmm with bias matches the CPU")
    got = c.step("nn.functional.linear with bias float32 (cuBLASLt)",
                 lambda: torch.nn.functional.linear(x.cuda(), w.cuda(), bias.cuda()).cpu())
    c.check(got is not None and torch.allclose(got, torch.nn.functional.linear(x, w, bias), rtol=1e-4, atol=1e-4),
            "linear with bias matches the CPU")
    got = c.step("torch.addmm(b, x, w) float16 (cuBLASLt, float compute)",
                 lambda: torch.addmm(bias.half().cuda(), x.half().cuda(), w.t().half().cuda()).cpu())
    c.check(got is not None and torch.allclose(got.float(), torch.addmm(bias, x, w.t()), rtol=2e-2, atol=5e-2),
            "float16 addmm with bias matches the CPU")

    torch_step.body(c, torch)

    def bias_grad():
        wd, bd = w.cuda().requires_grad_(), bias.cuda().requires_grad_()
        torch.nn.functional.linear(x.cuda(), wd, bd).backward(torch.ones(64, 33).cuda())
        return bd.grad.cpu()

    if expect_kernels("CUBIN"):
        got = c.step("bias gradient of linear (torch's reduction kernel)", bias_grad)
        c.check(got is not None and torch.allclose(got, torch.full((33,), 64.0)), "bias gradient computed right")
    else:
        # the gradient's reduction is a torch kernel, which the emulated device cannot run
        c.expect_error("bias gradient of linear fails with a RuntimeError mentioning CUDA (CUDAREM_EXPECT_CUBIN unset)",
                       bias_grad, lambda e: isinstance(e, RuntimeError) and "CUDA" in str(e))

    # a convolution goes through cuDNN's backend API, which the shim hands to NVIDIA's
    # cuDNN on the client, whose kernels reach the server through the driver layer:
    # cuDNN's fatbins carry PTX beside their machine code, so on the emulated device
    # its engine's kernels (layout transforms, the direct convolution) run on the
    # PTX engine, and on a GPU as machine code: either way the result is right
    def conv():
        x, w = torch.randn(1, 3, 8, 8, generator=gen), torch.randn(4, 3, 3, 3, generator=gen)
        y = torch.nn.functional.conv2d(x.cuda(), w.cuda()).cpu()
        return torch.allclose(y, torch.nn.functional.conv2d(x, w), rtol=1e-3, atol=1e-3)

    c.check(c.step("conv2d through cuDNN", conv) is True, "conv2d matches the CPU (cuDNN's own kernels)")

    # and backward: cuDNN's data and filter gradients (the incoming gradient is
    # copied, not made by a torch kernel, so the emulated device runs it too)
    def conv_backward():
        x, w = torch.randn(2, 3, 8, 8, generator=gen), torch.randn(4, 3, 3, 3, generator=gen)
        g = torch.randn(2, 4, 6, 6, generator=gen)
        xd, wd = x.cuda().requires_grad_(), w.cuda().requires_grad_()
        torch.nn.functional.conv2d(xd, wd).backward(g.cuda())
        xc, wc = x.clone().requires_grad_(), w.clone().requires_grad_()
        torch.nn.functional.conv2d(xc, wc).backward(g)
        return (torch.allclose(xd.grad.cpu(), xc.grad, rtol=1e-3, atol=1e-3) and
                torch.allclose(wd.grad.cpu(), wc.grad, rtol=1e-3, atol=1e-3))

    c.check(c.step("conv2d backward through cuDNN", conv_backward) is True,
            "conv2d's data and filter gradients match the CPU")

    def add_one():
        x = torch.arange(16, dtype=torch.float32, device="cuda")
        y = x + 1
        return y.cpu()

    want = torch.arange(16, dtype=torch.float32) + 1
    if expect_kernels("CUBIN"):
        got = c.step("kernel x + 1 on the device", add_one)
        c.check(got is not None and torch.equal(got, want), "x + 1 computed right")
    else:
        c.expect_error("kernel x + 1 fails with a RuntimeError mentioning CUDA (CUDAREM_EXPECT_CUBIN unset)",
                       add_one, lambda e: isinstance(e, RuntimeError) and "CUDA" in str(e))
    c.step("torch.cuda.device_count() after the kernel", torch.cuda.device_count)
    torch_graphs.body(c, torch)
    check_expandable_segments(c)
    check_train_example(c)


def check_expandable_segments(c):
    """torch_expandable.py in a process of its own: the allocator setting is read once."""
    import os
    import subprocess
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_expandable.py")
    r = subprocess.run([sys.executable, script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=600)
    fails = [line for line in r.stdout.splitlines() if line.startswith(("FAIL", "STOP"))]
    c.check(r.returncode == 0 and "PASS torch_expandable" in r.stdout,
            "expandable segments (the driver's virtual memory calls) work", " | ".join(fails[:3]) or r.stdout[-300:])


def check_train_example(c):
    """examples/train_torch.py, as a user runs it (this process's environment, so the
    same shim and server): on a GPU server it must reach its accuracy target (exit
    0); on the emulated device it must stop at torch's first kernel with the CUDA
    error and exit 2, not crash or hang."""
    import os
    import subprocess
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "train_torch.py")
    want = 0 if expect_kernels("CUBIN") else 2
    args = [sys.executable, script] + ([] if want == 0 else ["--epochs", "1"])
    try:
        r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        c.check(False, "examples/train_torch.py finishes", "timed out after 900 s")
        return
    tail = " | ".join(r.stdout.strip().splitlines()[-4:])
    c.check(r.returncode == want, "examples/train_torch.py exits %d" % want, "exit %d: %s" % (r.returncode, tail))
    if want == 2:
        c.check("no kernel image" in r.stdout and "cannot run on the server's device" in r.stdout,
                "train_torch.py names the CUDA error and the kernel", tail)
    else:
        c.check("PASS: test accuracy" in r.stdout, "train_torch.py reached its accuracy target", tail)


if __name__ == "__main__":
    sys.exit(Checker("torch_basic").run(body))
