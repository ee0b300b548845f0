#!/usr/bin/env python3
"""gpu-check-report.py -- the figures tools/gpu-check.sh prints: a local run beside
the same run through the shim, read from the JSON the programs wrote.

  gpu-check-report.py copy LOCAL REMOTE    bench_cuda copy: GB/s by size and direction
  gpu-check-report.py sgemm LOCAL REMOTE   bench_cuda sgemm: GFLOP/s by N
  gpu-check-report.py train LOCAL REMOTE   train_torch.py --json: step time, accuracy,
                                           round trips per warm step

LOCAL is "-" when there was no local run (no GPU): the remote figures are printed
alone. Exits 1 when a file cannot be read, 0 otherwise: the figures are reported,
not judged, except `train`, which prints PASS/MISS against the goals beside them."""
import json
import statistics
import sys


def load(path):
    if path == "-":
        return None
    with open(path) as f:
        text = f.read().strip()
    return json.loads(text.splitlines()[-1]) if text else None


def ratio(remote, local):
    return "%.2f" % (remote / local) if local and remote is not None else "-"


def copy(local, remote):
    sizes = remote["sizes"]
    keys = [k for k in remote if k.endswith("_GBps")]
    print("%-22s %10s %10s %10s %8s" % ("direction", "size", "local GB/s", "remote", "ratio"))
    for k in keys:
        for i, size in enumerate(sizes):
            lv = local[k][i] if local and k in local else None
            rv = remote[k][i]
            print("%-22s %10s %10s %10.2f %8s" % (k[:-5], human(size), "%.2f" % lv if lv else "-", rv,
                                                  ratio(rv, lv)))
    print("verified: local %s, remote %s" % (local.get("verified") if local else "-", remote.get("verified")))


def human(n):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return "%g %s" % (n / (1 << shift), unit)
    return "%d B" % n


def sgemm(local, remote):
    keys = [k for k in remote if isinstance(remote[k], list) and k != "n"]
    print("%-8s %-28s %12s %12s %8s" % ("N", "figure", "local", "remote", "ratio"))
    for k in keys:
        for i, n in enumerate(remote["n"]):
            lv = local[k][i] if local and k in local else None
            rv = remote[k][i]
            print("%-8d %-28s %12s %12.2f %8s" % (n, k, "%.2f" % lv if lv else "-", rv, ratio(rv, lv)))


def train(local, remote):
    trips = remote.get("round_trips_per_step") or [0]
    print("accuracy: local %s, remote %.4f" % ("%.4f" % local["accuracy"] if local else "-", remote["accuracy"]))
    if local:
        r = remote["median_step_s"] / local["median_step_s"]
        print("step: local %.2f ms, remote %.2f ms, ratio %.3f (goal <= 1.10): %s" % (
            local["median_step_s"] * 1e3, remote["median_step_s"] * 1e3, r, "PASS" if r <= 1.10 else "MISS"))
    else:
        print("step: remote %.2f ms (no local run)" % (remote["median_step_s"] * 1e3))
    print("round trips per warm step: median %d, max %d (goal 1): %s" % (
        statistics.median(trips), max(trips), "PASS" if max(trips) <= 1 else "MISS"))
    print("round trips by call: %s" % remote.get("round_trips_by_call"))


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("copy", "sgemm", "train"):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        local, remote = load(sys.argv[2]), load(sys.argv[3])
    except (OSError, ValueError) as e:
        print("gpu-check-report: %s" % e, file=sys.stderr)
        return 1
    if remote is None:
        print("gpu-check-report: %s holds no figures" % sys.argv[3], file=sys.stderr)
        return 1
    globals()[sys.argv[1]](local, remote)
    return 0


if __name__ == "__main__":
    sys.exit(main())
