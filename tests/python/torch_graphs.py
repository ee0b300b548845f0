"""torch_graphs.py -- what torch builds on top of streams, for torch_basic.py: CUDA
graphs (torch.cuda.graph) and torch.compile, whose Triton kernels reach the server
through the driver layer's module API (cuModuleLoadData, cuLaunchKernel).

cudarem does not remote stream capture yet: a capture must fail with the CUDA
error ("operation not supported") and a log line, and leave torch working. A
Triton kernel is GPU machine code: with CUDAREM_EXPECT_CUBIN=1 (a GPU server) the
compiled function must compute right; on the emulated device its launch must fail
with the CUDA error, as an exception, never a crash or a hang."""
from fwcheck import expect_kernels


def check_graphs(c, torch):
    a, b = torch.randn(16, 16).cuda(), torch.randn(16, 16).cuda()

    def capture():
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            out = a @ b
        g.replay()
        return out

    c.expect_error("torch.cuda.graph capture fails with the CUDA error (stream capture is not remoted)", capture,
                   lambda e: "operation not supported" in str(e))
    got = c.step("torch.mm after the failed capture", lambda: (a @ b).cpu())
    c.check(got is not None and torch.allclose(got, a.cpu() @ b.cpu(), rtol=1e-4, atol=1e-4),
            "torch still computes after the failed capture")


def check_compile(c, torch):
    def f(x):
        return torch.sin(x) * 2 + 1

    x = torch.randn(64)
    run = lambda: torch.compile(f)(x.cuda()).cpu()  # noqa: E731
    if expect_kernels("CUBIN"):
        got = c.step("torch.compile (Triton kernel) on the device", run)
        c.check(got is not None and torch.allclose(got, f(x), rtol=1e-4, atol=1e-4), "the Triton kernel computed right")
    else:
        c.expect_error("torch.compile's Triton kernel fails with the CUDA error (CUDAREM_EXPECT_CUBIN unset)", run,
                       lambda e: "no kernel image" in str(e))


def body(c, torch):
    check_graphs(c, torch)
    check_compile(c, torch)
