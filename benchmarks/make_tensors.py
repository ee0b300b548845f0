#!/usr/bin/env python3
"""make_tensors.py -- real float32 tensors for `make bench`'s compression data kinds:
trains a small multi-layer perceptron with PyTorch on the CPU (a fixed random
teacher network labels Gaussian inputs; Adam, 150 steps, fixed seeds) and writes
what a training loop moves between host and device, as raw little-endian float32:

    weights.f32      every parameter after training (5.3 MB)
    activations.f32  the first hidden layer's ReLU output for a batch of 1024 (4 MiB)
    gradients.f32    every parameter's gradient at the last step (5.3 MB)

    make_tensors.py OUTDIR

Needs torch (the framework environment of tools/python-env.sh has it); exits 2
without it, and run-bench.py then leaves these kinds out and says why.
"""
import os
import sys

try:
    import torch
except ImportError:
    sys.stderr.write("make_tensors.py: no torch in %s\n" % sys.executable)
    sys.exit(2)

IN, HIDDEN, OUT, BATCH, STEPS = 256, 1024, 10, 128, 150


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(7)
    teacher = torch.nn.Sequential(torch.nn.Linear(IN, 64), torch.nn.Tanh(), torch.nn.Linear(64, OUT))
    model = torch.nn.Sequential(torch.nn.Linear(IN, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, HIDDEN),
                                torch.nn.ReLU(), torch.nn.Linear(HIDDEN, OUT))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss = None
    for _ in range(STEPS):
        x = torch.randn(BATCH, IN)
        with torch.no_grad():
            y = teacher(x).argmax(dim=1)
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    with torch.no_grad():
        act = model[1](model[0](torch.randn(1024, IN)))
    tensors = {
        "weights.f32": torch.cat([p.detach().flatten() for p in model.parameters()]),
        "activations.f32": act.flatten(),
        "gradients.f32": torch.cat([p.grad.flatten() for p in model.parameters()]),
    }
    for name, t in tensors.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(t.to(torch.float32).contiguous().numpy().tobytes())
    print("make_tensors.py: final loss %.3f; wrote %s" % (loss.item(), ", ".join(tensors)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
