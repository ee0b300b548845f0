"""torch_graphs.py -- what torch builds on top of streams, for torch_basic.py: CUDA
graphs (torch.cuda.graph) and torch.compile, whose Triton kernels reach the server
through the driver layer's module API (cuModuleLoadData, cuLaunchKernel).

A graph captured with torch.cuda.graph (cuBLAS and cuBLASLt calls, a linear layer
with its bias) must replay right with new inputs each time, as on a GPU. A Triton
kernel is GPU machine code: with CUDAREM_EXPECT_CUBIN=1 (a GPU server) the
compiled function must compute right; on the emulated device its launch must fail
with the CUDA error, as an exception, never a crash or a hang."""
from fwcheck import expect_kernels


def check_graphs(c, torch):
    b, w = torch.randn(16, 16).cuda(), torch.randn(16, 16).cuda()
    lin = torch.nn.Linear(16, 8).cuda()
    static_in = torch.zeros(16, 16).cuda()
    g = torch.cuda.CUDAGraph()

    def capture():
        with torch.no_grad():
            lin(static_in)  # warm up outside the capture, as torch asks
            torch.cuda.synchronize()
            with torch.cuda.graph(g):
                chain = (static_in @ b) @ w
                layer = lin(static_in)
        return chain, layer

    outs = c.step("torch.cuda.graph captures matmuls and a linear layer", capture)
    if outs is None:
        return
    for i in range(3):
        x = torch.randn(16, 16)
        static_in.copy_(x.cuda())
        g.replay()
        got = c.step("replay %d" % i, lambda: (outs[0].cpu(), outs[1].cpu()))
        with torch.no_grad():
            want_chain = (x @ b.cpu()) @ w.cpu()
            want_layer = x @ lin.weight.cpu().t() + lin.bias.cpu()
        c.check(got is not None and torch.allclose(got[0], want_chain, rtol=1e-4, atol=1e-4) and
                torch.allclose(got[1], want_layer, rtol=1e-4, atol=1e-4),
                "replay %d of the captured graph computes the new input's result" % i)
    got = c.step("torch.mm after the graph", lambda: (b @ w).cpu())
    c.check(got is not None and torch.allclose(got, b.cpu() @ w.cpu(), rtol=1e-4, atol=1e-4),
            "torch computes eagerly after the graph")


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
