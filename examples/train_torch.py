#!/usr/bin/env python3
"""train_torch.py -- a small CNN on scikit-learn's digits with stock PyTorch: the
program a user runs unchanged, on a local GPU or through cudarem.

    LD_PRELOAD=build/libcudarem.so CUDAREM_SERVER=gpuhost:7470 python examples/train_torch.py

The 1,797 8x8 images are split 80/20 with a fixed seed and put on the device once;
each step indexes a shuffled batch there, so the step's only host synchronisation is
`loss.item()`. Prints per epoch the loss, the test accuracy, the median step time
and, through the shim, the round trips per step (cudaremGetStats); at the end the
round trips by the call each waited for. Exits 0 when the test accuracy reaches
--target (default 0.95), 1 when it does not, 2 when the device cannot run the
model: the emulated device cannot run torch's own kernels (the PyPI wheel carries
machine code for GPUs, no PTX), so there it stops at the first kernel with the
CUDA error, not a crash. --json PATH writes the figures for tools/gpu-check.sh.

--graph captures the whole training step (forward, backward, Adam's update) once
into a CUDA graph (torch.cuda.CUDAGraph) and replays it at each step, the batch's
indices copied in first; --compile runs the model through torch.compile with
mode="reduce-overhead" (its kernels compiled by Triton and replayed as CUDA graphs)."""
import argparse
import ctypes
import json
import statistics
import sys
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.003)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cuda", help="cuda (default) or cpu")
    p.add_argument("--target", type=float, default=0.95, help="test accuracy to reach")
    p.add_argument("--graph", action="store_true", help="capture the training step into a CUDA graph and replay it")
    p.add_argument("--compile", action="store_true", help='torch.compile(mode="reduce-overhead") the model')
    p.add_argument("--json", metavar="PATH", help="write the figures there as JSON")
    p.add_argument("--data", metavar="NPZ", help="the digits from a file --save-data wrote (no scikit-learn needed)")
    p.add_argument("--save-data", metavar="NPZ", help="write scikit-learn's digits to NPZ and exit")
    args = p.parse_args()
    if args.graph and (args.compile or args.device == "cpu"):
        p.error("--graph captures CUDA work on its own: not with --compile or --device cpu")
    return args


class ShimCounters:
    """The shim's round-trip counters when the program runs through cudarem."""

    def __init__(self):
        me = ctypes.CDLL(None)
        self.stats = getattr(me, "cudaremGetStats", None)
        self.by_call = getattr(me, "cudaremGetRoundTripsByCall", None)
        if self.by_call is not None:
            self.by_call.restype = ctypes.c_size_t

    def round_trips(self):
        if self.stats is None:
            return None
        out = (ctypes.c_ulonglong * 4)()
        self.stats(out)
        return out[0]

    def where(self):
        if self.by_call is None:
            return None
        buf = ctypes.create_string_buffer(4096)
        self.by_call(buf, ctypes.c_size_t(len(buf)))
        return buf.value.decode()


def digits_arrays(path):
    """(images, labels) as numpy arrays: from PATH (an .npz --save-data wrote) or
    from scikit-learn."""
    if path:
        import numpy
        with numpy.load(path) as f:
            return f["images"], f["target"]
    try:
        from sklearn.datasets import load_digits as sk_digits
    except ImportError:
        sys.exit("train_torch.py needs scikit-learn for the digits data (pip install scikit-learn), "
                 "or --data with a file --save-data wrote")
    d = sk_digits()
    return d.images, d.target


def load_digits(torch, seed, path):
    images, target = digits_arrays(path)
    x = (torch.tensor(images, dtype=torch.float32).unsqueeze(1) - 4.9) / 6.0  # pixels 0..16, mean 4.9, sd 6
    y = torch.tensor(target, dtype=torch.int64)
    order = torch.randperm(len(y), generator=torch.Generator().manual_seed(seed))
    cut = int(0.8 * len(y))
    return x[order[:cut]], y[order[:cut]], x[order[cut:]], y[order[cut:]]


def make_model(torch):
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 4 * 4, 64), nn.ReLU(), nn.Linear(64, 10))


def accuracy(torch, model, x, y):
    with torch.no_grad():
        return (model(x).argmax(1) == y).sum().item() / len(y)


def eager_step(torch, model, opt, x, y):
    """The training step as written: step(idx) trains on x[idx], returns the loss."""
    loss_fn = torch.nn.functional.cross_entropy

    def step(idx):
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x[idx]), y[idx])
        loss.backward()
        opt.step()
        return loss
    return step


def graphed_step(torch, model, opt, x, y, batch):
    """The same step captured once into a CUDA graph, as PyTorch's documentation
    captures a whole network: three warm-up steps on a side stream, then the
    capture; each step copies the batch's indices into the graph's input and
    replays it."""
    loss_fn = torch.nn.functional.cross_entropy
    static_idx = torch.arange(batch, device=x.device)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            loss_fn(model(x[static_idx]), y[static_idx]).backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        static_loss = loss_fn(model(x[static_idx]), y[static_idx])
        static_loss.backward()
        opt.step()

    def step(idx):
        static_idx.copy_(idx)
        graph.replay()
        return static_loss
    return step


def run_epoch(step, order, batch, counters):
    """One pass over the training set in `order`; returns (mean loss, step seconds,
    round trips per step)."""
    losses, times, trips = [], [], []
    for start in range(0, len(order) - batch + 1, batch):
        t0, r0 = time.perf_counter(), counters.round_trips()
        loss = step(order[start:start + batch])
        losses.append(loss.item())  # the step's one host synchronisation
        times.append(time.perf_counter() - t0)
        if r0 is not None:
            trips.append(counters.round_trips() - r0)
    return sum(losses) / len(losses), times, trips


def train(torch, args, counters):
    torch.manual_seed(args.seed)
    dev = torch.device(args.device)
    xtr, ytr, xte, yte = (t.to(dev) for t in load_digits(torch, args.seed, args.data))
    model = make_model(torch).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, capturable=args.graph)
    mode = "graph" if args.graph else "compile" if args.compile else "eager"
    if args.graph:
        step = graphed_step(torch, model, opt, xtr, ytr, args.batch)
    else:
        step = eager_step(torch, torch.compile(model, mode="reduce-overhead") if args.compile else model, opt, xtr, ytr)
    figures = {"device": str(dev), "mode": mode, "epochs": [], "step_s": [], "round_trips_per_step": []}
    for epoch in range(args.epochs):
        order = torch.randperm(len(ytr), device=dev)
        loss, times, trips = run_epoch(step, order, args.batch, counters)
        acc = accuracy(torch, model, xte, yte)
        warm = times[1:] if epoch == 0 else times  # the first step loads modules
        line = "epoch %d  loss %.4f  test accuracy %.4f  step %.2f ms" % (
            epoch + 1, loss, acc, 1e3 * statistics.median(warm))
        if trips:
            line += "  round trips per step %d (min %d, max %d)" % (
                statistics.median(trips), min(trips), max(trips))
        print(line, flush=True)
        figures["epochs"].append({"loss": loss, "accuracy": acc})
        figures["step_s"] += warm
        figures["round_trips_per_step"] += trips[1:] if epoch == 0 else trips
    figures["accuracy"] = acc
    figures["median_step_s"] = statistics.median(figures["step_s"])
    return figures


def main():
    args = parse_args()
    if args.save_data:
        import numpy
        images, target = digits_arrays(None)
        numpy.savez_compressed(args.save_data, images=images, target=target)
        return 0
    import torch
    counters = ShimCounters()
    print("torch %s, device %s%s%s" % (torch.__version__, args.device,
                                      ", through cudarem" if counters.stats else "",
                                      ", step captured in a CUDA graph" if args.graph else
                                      ", torch.compile reduce-overhead" if args.compile else ""), flush=True)
    try:
        figures = train(torch, args, counters)
    except RuntimeError as e:
        first = str(e).strip().splitlines()[0]
        print("the device could not run the model: %s" % first, file=sys.stderr)
        if "no kernel image" in str(e) or "cuDNN" in str(e) or "CUDNN" in str(e):
            print("(the emulated device cannot run torch's own kernels: the PyPI wheel carries "
                  "GPU machine code, no PTX; run cudarem-server on a GPU host)", file=sys.stderr)
        return 2
    where = counters.where()
    if where is not None:
        print("round trips by call, whole run: %s" % where)
        figures["round_trips_by_call"] = where
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f)
    ok = figures["accuracy"] >= args.target
    print("%s: test accuracy %.4f (target %.2f)" % ("PASS" if ok else "FAIL", figures["accuracy"], args.target))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
