"""torch_step.py -- torch's cuBLAS and cuBLASLt work as a training step drives it,
for torch_basic.py: bmm, nn.functional.linear forward and backward (weight and
input gradients through autograd), the ReLU and GELU epilogues of
torch._addmm_activation, each against the CPU; then the round trips of a step.

A step whose data and parameters are on the device and whose only host
synchronisation is `.item()` must cost exactly one synchronous round trip once
warm (allocator segments cached, handles made): its GEMMs are queued, the copy
behind `.item()` is the round trip, and the cudaStreamSynchronize torch issues
after it is answered by the client (client/crm_idle.h). Counted with the shim's
cudaremGetStats; where the round trips went comes from cudaremGetRoundTripsByCall.
None of these needs one of torch's own kernels, so they run on the emulated device."""
import ctypes

STEPS = 4  # the first warms the allocator and the handles; the rest are counted


def shim_counters():
    """(round trips, calls, bytes sent, bytes received) so far."""
    out = (ctypes.c_ulonglong * 4)()
    ctypes.CDLL(None).cudaremGetStats(out)
    return list(out)


def round_trips_by_call():
    fn = ctypes.CDLL(None).cudaremGetRoundTripsByCall
    fn.restype = ctypes.c_size_t
    buf = ctypes.create_string_buffer(4096)
    fn(buf, ctypes.c_size_t(len(buf)))
    return buf.value.decode()


def close(torch, got, want, tol=1e-4):
    return got is not None and torch.allclose(got, want, rtol=tol, atol=tol)


def check_ops(c, torch, gen):
    a, b = torch.randn(6, 17, 9, generator=gen), torch.randn(6, 9, 13, generator=gen)
    got = c.step("torch.bmm float32 (cuBLAS strided batched)", lambda: torch.bmm(a.cuda(), b.cuda()).cpu())
    c.check(close(torch, got, torch.bmm(a, b)), "bmm matches the CPU")

    x, w, bias = torch.randn(32, 24, generator=gen), torch.randn(40, 24, generator=gen), torch.randn(40, generator=gen)
    for gelu in (False, True):
        name = "GELU" if gelu else "ReLU"
        got = c.step("torch._addmm_activation %s (cuBLASLt %s_BIAS epilogue)" % (name, name.upper()),
                     lambda: torch._addmm_activation(bias.cuda(), x.cuda(), w.t().cuda(), use_gelu=gelu).cpu())
        lin = torch.addmm(bias, x, w.t())
        # cuBLASLt's GELU epilogue is the tanh approximation, as torch's CUDA path is
        want = torch.nn.functional.gelu(lin, approximate="tanh") if gelu else torch.relu(lin)
        c.check(close(torch, got, want), "%s epilogue matches the CPU" % name)


def make_step(torch, x, w, bias, grad_out):
    """One step: linear forward (cuBLASLt, bias epilogue), its backward through
    autograd (two GEMMs; the bias needs no gradient), then `.item()`."""
    def step():
        x.grad = None
        w.grad = None
        torch.nn.functional.linear(x, w, bias).backward(grad_out)
        return w.grad[0, 0].item()
    return step


def check_step(c, torch, gen):
    xc, wc = torch.randn(64, 45, generator=gen), torch.randn(33, 45, generator=gen)
    bc, gc = torch.randn(33, generator=gen), torch.randn(64, 33, generator=gen)
    x, w = xc.cuda().requires_grad_(), wc.cuda().requires_grad_()
    step = make_step(torch, x, w, bc.cuda(), gc.cuda())
    costs = []
    for i in range(STEPS):
        before = shim_counters()
        if c.step("training step %d (linear forward and backward, .item())" % i, step) is None:
            return
        after = shim_counters()
        costs.append([b - a for a, b in zip(before, after)])
    xr, wr = xc.clone().requires_grad_(), wc.clone().requires_grad_()
    torch.nn.functional.linear(xr, wr, bc).backward(gc)
    c.check(close(torch, w.grad.cpu(), wr.grad), "weight gradient matches the CPU")
    c.check(close(torch, x.grad.cpu(), xr.grad), "input gradient matches the CPU")
    c.note("per step (round trips, calls, bytes sent, bytes received): %s" % costs)
    c.note("round trips by call, whole run so far: %s" % round_trips_by_call())
    warm = costs[1:]
    c.check(all(k[0] == 1 for k in warm), "a warm step costs exactly one round trip",
            "round trips per warm step: %s" % [k[0] for k in warm])
    c.check(all(k[1] >= 4 and k[2] == 0 for k in warm),
            "a warm step carries its GEMMs and copy (>= 4 calls) and sends no bulk bytes",
            "calls, bytes sent: %s" % [(k[1], k[2]) for k in warm])


def check_pinned_step(c, torch, gen):
    """The DataLoader pattern: each step's batch is pinned (pin_memory()) and copied
    with non_blocking=True, so torch records an event for the pinned block and its
    allocator queries the events of freed blocks; the warm step still costs one
    round trip (the events' records are known done, or still queued: not ready)."""
    w = torch.randn(33, 45, generator=gen).cuda()
    batches = [torch.randn(64, 45, generator=gen) for _ in range(STEPS)]
    trips, got = [], []
    for xb in batches:
        before = shim_counters()
        xd = xb.pin_memory().cuda(non_blocking=True)
        got.append(torch.nn.functional.linear(xd, w)[0, 0].item())
        trips.append(shim_counters()[0] - before[0])
    want = [torch.nn.functional.linear(xb, w.cpu())[0, 0].item() for xb in batches]
    c.check(all(abs(a - b) < 1e-4 for a, b in zip(got, want)), "pinned non_blocking batches computed right")
    c.check(all(t == 1 for t in trips[1:]), "a warm step with a pinned non_blocking batch costs one round trip",
            "round trips per step: %s" % trips)


def body(c, torch):
    gen = torch.Generator().manual_seed(11)
    check_ops(c, torch, gen)
    check_step(c, torch, gen)
    check_pinned_step(c, torch, gen)
