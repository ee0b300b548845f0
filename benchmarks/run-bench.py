#!/usr/bin/env python3
"""run-bench.py -- the driver of `make bench`: runs the benchmark programs that make
built (bench_raw, bench_cuda, bench_kernel) locally, through the shim against a
cudarem-server on loopback (TCP and a Unix socket), beside a raw-socket baseline on
the same transports, and over shaped links between two network namespaces; prints
a table per section and writes bench.json, bench.md and PNG plots into --out.

Speed is only ever compared inside one run (remote vs raw, remote vs local), and
round trips are counted (CUDAREM_STATS), never timed. The issue's goals are checked
and printed as PASS / MISS / n/a lines by the default profile, whose measurements
are repeated (best of several rounds, with the spread of the rounds shown); the
quick and smoke profiles print the same figures without judging them. A MISS does
not fail the run. The exit
status is 1 only when a benchmark program fails unexpectedly (or crashes).

Profiles: default (~5 minutes on 2 cores), --quick (~1 minute, BENCH_QUICK=1),
--smoke (seconds: checks that every program runs), --full (adds SGEMM 4096/8192).
Every program runs with a timeout; servers and namespaces are removed on exit,
also after an error or a signal.
"""
import argparse
import atexit
import datetime
import json
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

KIB, MIB = 1 << 10, 1 << 20

# What each profile runs. Sizes are bytes; counts are calls.
PROFILES = {
    "smoke": dict(lat_n=50, lat_rounds=1, async_n=400, async_batch=200, burst_n=0,
                  kernel_n=100, copy_sizes=[4 * KIB, 1 * MIB], copy_batches=1, copy_rounds=1,
                  sgemm_n=[128], sgemm_reps=1, train=False, train_timeout=0, ptx_elements=4096,
                  shaped_rates=["1gbit"], shaped_size=2 * MIB, shaped_data=["zeros", "random"],
                  shaped_batches=1, shaped_rounds=1, load_clients=4, load_seconds=3, graph_steps=2),
    "quick": dict(lat_n=500, lat_rounds=2, async_n=4000, async_batch=1000, burst_n=10000,
                  kernel_n=2000, copy_sizes=[4 * KIB, 1 * MIB, 64 * MIB], copy_batches=2, copy_rounds=1,
                  sgemm_n=[256, 1024], sgemm_reps=2, train=True, train_timeout=120, ptx_elements=1 << 18,
                  shaped_rates=["1gbit"], shaped_size=16 * MIB, shaped_data=["zeros", "random"],
                  shaped_batches=1, shaped_rounds=1, load_clients=16, load_seconds=10, graph_steps=10),
    "default": dict(lat_n=2000, lat_rounds=3, async_n=20000, async_batch=2000, burst_n=10000,
                    kernel_n=20000, copy_sizes=[4 * KIB, 64 * KIB, 256 * KIB, 1 * MIB, 4 * MIB, 16 * MIB, 64 * MIB,
                                                  256 * MIB],
                    copy_batches=3, copy_rounds=3, sgemm_n=[256, 512, 1024, 2048], sgemm_reps=3, train=True,
                    ptx_elements=1 << 20,
                    train_timeout=300, shaped_rates=["1gbit", "10gbit"], shaped_size=32 * MIB,
                    shaped_data=["zeros", "sparse", "lowentropy", "random"], shaped_batches=3, tensors=True,
                    shaped_rounds=5, shaped_min_seconds=0.3,
                    load_clients=32, load_seconds=30, graph_steps=20),
}
RATE_GBPS = {"1gbit": 0.125, "10gbit": 1.25}   # link rate in GB/s (10^9 bytes)
NS_PREFIX = "crmbench"                        # namespaces: crmbench-<pid>-srv / -cli
NS_NET = ("10.231.0.1", "10.231.0.2")         # addresses only inside those namespaces
NS_PORT_CRM, NS_PORT_RAW = 7470, 7471
GOAL_SYNC_RATIO = 1.2
GOAL_STATIC_RATIO = 1.05   # static-runtime build vs shared build, sync call p50
GOAL_COPY_FRACTION = 0.90
GOAL_SHM_FRACTION = 0.50
GOAL_MEDIUM_FRACTION = 0.80
GOAL_COMPRESS_X = 3.0
GOAL_INCOMPRESSIBLE_LOSS = 0.05
GOAL_AUTO_OF_BEST = 0.95   # compression auto vs the better of on and off
SHAPED_MODES = ("auto", "on", "off")
SECTIONS = ("latency", "async", "graph", "managed", "copy", "sgemm", "ptx", "load", "tls", "pool", "train", "shaped")
GRAPH_SIZES = (10, 100, 1000)   # kernels per step, eager or graphed
GOAL_SGEMM_RATIO = 1.05
GOAL_TRAIN_RT = 2.0
GOAL_PTX_RATE = 200e6      # PTX engine lane-instructions per second per core


class BenchError(Exception):
    """A benchmark program failed in a way that is not 'feature not available'."""


def log(msg):
    print(msg, flush=True)


def fmt_size(n):
    return "%d MiB" % (n // MIB) if n >= MIB else "%d KiB" % (n // KIB)


def table(title, header, rows):
    """Prints rows (lists of cells) under header, columns aligned."""
    cells = [header] + [[str(c) for c in r] for r in rows]
    width = [max(len(r[i]) for r in cells) for i in range(len(header))]
    log("\n== %s" % title)
    for k, r in enumerate(cells):
        log("  " + "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, width))))
        if k == 0:
            log("  " + "  ".join("-" * w for w in width))


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def ratio(a, b):
    return a / b if a is not None and b else None


def f2(x, spec="%.2f"):
    return "n/a" if x is None else spec % x


# --------------------------------------------------------------------------------
# Processes: every child has a timeout; servers are stopped by their own pid.

class Procs:
    """The long-running processes this run started (servers); stopped at exit."""

    def __init__(self):
        self.procs = []

    def start(self, argv, log_path, env=None):
        f = open(log_path, "w")
        p = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        f.close()
        self.procs.append(p)
        return p

    def stop(self, p):
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=5)
        if p in self.procs:
            self.procs.remove(p)

    def stop_all(self):
        for p in list(self.procs):
            self.stop(p)


def wait_for_line(path, pattern, proc, timeout=10.0):
    """Waits (bounded) until the log at path contains pattern; False if the process
    died or the time ran out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(path) as f:
                if pattern in f.read():
                    return True
        except OSError:
            pass
        if proc.poll() is not None:
            return False
        time.sleep(0.02)
    return False


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_json(argv, env=None, timeout=120, ok_codes=(0,)):
    """Runs a benchmark program; returns (exit status, parsed JSON of its last
    stdout line or None, stderr text). Raises BenchError on a timeout or a crash."""
    try:
        r = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise BenchError("%s timed out after %d s" % (" ".join(argv[:3]), timeout))
    if r.returncode < 0:
        raise BenchError("%s died with signal %d: %s" % (" ".join(argv[:3]), -r.returncode, r.stderr[-500:]))
    data = None
    lines = [l for l in r.stdout.splitlines() if l.startswith("{")]
    if lines:
        try:
            data = json.loads(lines[-1])
        except ValueError:
            data = None
    if r.returncode in ok_codes and data is None and r.returncode == 0:
        raise BenchError("%s printed no result: %s" % (" ".join(argv[:3]), r.stderr[-500:]))
    return r.returncode, data, r.stderr


def best_of(results):
    """Per size, the highest rate each list of GB/s figures reached over several
    runs (None when a run failed): load from elsewhere only ever slows a run."""
    results = [r for r in results if r]
    if not results:
        return None
    best = dict(results[0])
    for key, v in best.items():
        if key.endswith("_GBps"):
            best[key] = [max(r[key][i] for r in results) for i in range(len(v))]
    return best


def spread_of(results):
    """Per key ending in _GBps, (highest - lowest) / highest of each figure over the
    runs: how far one run can be from the best on this machine."""
    results = [r for r in results if r]
    out = {}
    for key, v in (results[0].items() if results else ()):
        if key.endswith("_GBps"):
            out[key] = [(max(r[key][i] for r in results) - min(r[key][i] for r in results)) /
                        max(max(r[key][i] for r in results), 1e-12) for i in range(len(v))]
    return out


def symbol_strong(lib, name):
    """True when lib defines name as a strong (T) dynamic symbol."""
    try:
        out = subprocess.run(["nm", "-D", "--defined-only", lib], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return re.search(r"^\S+ T %s(@|$)" % re.escape(name), out, re.M) is not None


# --------------------------------------------------------------------------------

class Bench:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build)
        self.out = os.path.abspath(args.out)
        self.bin = os.path.join(self.build, "bench", "bin")
        self.shim = os.path.join(self.build, "libcudarem.so")
        self.emu = os.path.join(self.build, "libcudarem-emu.so")
        self.server = os.path.join(self.build, "cudarem-server")
        self.profile_name = "smoke" if args.smoke else "quick" if args.quick else "default"
        self.p = dict(PROFILES[self.profile_name])
        self.tmp = tempfile.mkdtemp(prefix="cudarem-bench.")
        self.procs = Procs()
        self._tensors = None
        self.namespaces = []
        self.failures = []
        self.res = {"profile": self.profile_name, "started": datetime.datetime.now().isoformat(timespec="seconds")}
        self.goals = []
        self.machine = self.describe_machine()
        self.res["machine"] = self.machine
        self.gpu = bool(self.machine["gpus"])
        if args.full or self.gpu:
            self.p["sgemm_n"] = self.p["sgemm_n"] + ([4096, 8192] if self.profile_name == "default" else [])

    # ---- environment -------------------------------------------------------------

    def describe_machine(self):
        cpu = platform.processor() or "unknown"
        try:
            with open("/proc/cpuinfo") as f:
                m = re.search(r"^model name\s*:\s*(.+)$", f.read(), re.M)
                cpu = m.group(1).strip() if m else cpu
        except OSError:
            pass
        mem = 0
        try:
            with open("/proc/meminfo") as f:
                mem = int(re.search(r"MemTotal:\s+(\d+)", f.read()).group(1)) * 1024
        except (OSError, AttributeError):
            pass
        gpus = []
        if shutil.which("nvidia-smi"):
            try:
                r = subprocess.run(["nvidia-smi", "-L"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                   text=True, timeout=20)
                if r.returncode == 0:
                    gpus = [l.strip() for l in r.stdout.splitlines() if l.strip()]
            except (OSError, subprocess.TimeoutExpired):
                pass
        return {"cpu": cpu, "cores": os.cpu_count(), "memory_GiB": round(mem / 2**30, 1),
                "kernel": platform.release(), "gpus": gpus,
                "gpu_used": bool(gpus)}

    def env(self, server=None, stats=None, local=False, extra=None):
        """Environment of a benchmark program: through the shim to server, or local
        (the emulated device in process, or the real libraries on a GPU host)."""
        e = dict(os.environ)
        for k in ("LD_PRELOAD", "CUDAREM_SERVER", "CUDAREM_STATS"):
            e.pop(k, None)
        if local:
            if not self.gpu:
                e["LD_PRELOAD"] = self.emu
        else:
            e["LD_PRELOAD"] = self.shim
            e["CUDAREM_SERVER"] = server
            if stats:
                e["CUDAREM_STATS"] = stats
        e.update(extra or {})
        return e

    def prog(self, name):
        return os.path.join(self.bin, name)

    def check(self, label, rc, data, err, ok_codes=(0,)):
        """Records an unexpected failure; returns data or None."""
        if rc not in ok_codes or data is None:
            self.failures.append("%s: exit %d: %s" % (label, rc, err.strip()[-300:]))
            log("  ! %s failed (exit %d): %s" % (label, rc, err.strip()[-300:]))
            return None
        return data

    def start_servers(self):
        self.port = free_port()
        self.addr = {"tcp": "tcp:127.0.0.1:%d" % self.port, "unix": "unix:%s/cudarem.sock" % self.tmp}
        log_path = os.path.join(self.tmp, "server.log")
        srv = self.procs.start([self.server, "--insecure", "--listen", self.addr["tcp"], "--listen", self.addr["unix"],
                                "--log-level", "info"], log_path)
        if not wait_for_line(log_path, "serving the", srv):
            raise BenchError("cudarem-server did not start: %s" % open(log_path).read()[-500:])
        self.raw = {}
        for t, a in (("tcp", "tcp:127.0.0.1:%d" % free_port()), ("unix", "unix:%s/raw.sock" % self.tmp)):
            lp = os.path.join(self.tmp, "raw-%s.log" % t)
            p = self.procs.start([self.prog("bench_raw"), "serve", a], lp)
            if not wait_for_line(lp, "listening", p):
                raise BenchError("bench_raw serve %s did not start: %s" % (a, open(lp).read()[-300:]))
            self.raw[t] = a
        rc, info, err = run_json([self.prog("bench_cuda"), "info"], env=self.env(self.addr["unix"]), timeout=60)
        self.res["remote_device"] = self.check("bench_cuda info (remote)", rc, info, err)
        rc, info, err = run_json([self.prog("bench_cuda"), "info"], env=self.env(local=True), timeout=60)
        self.res["local_device"] = self.check("bench_cuda info (local)", rc, info, err)
        self.res["local_mode"] = "real CUDA libraries" if self.gpu else "emulated device in process (LD_PRELOAD=%s)" % os.path.basename(self.emu)

    # ---- 1: synchronous call latency -----------------------------------------------

    @staticmethod
    def pin(cpu):
        """Command prefix running a program on one CPU (nothing without taskset)."""
        return ["taskset", "-c", cpu] if shutil.which("taskset") else []

    def latency_servers(self):
        """A cudarem-server and a raw echo server pinned to CPU 0, so that client
        placement (same core or another core) is the same for both: on a VM a
        wake-up across cores costs several times a same-core round trip, and which
        one a run gets would otherwise be luck."""
        addr = {"tcp": "tcp:127.0.0.1:%d" % free_port(), "unix": "unix:%s/lat.sock" % self.tmp}
        raw = {"tcp": "tcp:127.0.0.1:%d" % free_port(), "unix": "unix:%s/lat-raw.sock" % self.tmp}
        lp = os.path.join(self.tmp, "lat-server.log")
        pin = self.pin("0")
        srv = self.procs.start(pin + [self.server, "--insecure", "--listen", addr["tcp"], "--listen", addr["unix"]], lp)
        if not wait_for_line(lp, "serving the", srv):
            raise BenchError("pinned cudarem-server did not start: %s" % open(lp).read()[-500:])
        for t in ("tcp", "unix"):
            rl = os.path.join(self.tmp, "lat-raw-%s.log" % t)
            p = self.procs.start(pin + [self.prog("bench_raw"), "serve", raw[t]], rl)
            if not wait_for_line(rl, "listening", p):
                raise BenchError("pinned bench_raw did not start: %s" % open(rl).read()[-300:])
        return addr, raw

    def sec_latency(self):
        n, rounds = self.p["lat_n"], self.p["lat_rounds"]
        out = {"call": "cudaMemGetInfo", "n": n, "rounds": rounds, "servers_on_cpu": 0}
        addr, raw_addr = self.latency_servers()
        if not self.pin("0"):
            placements = [("unpinned", None)]
        else:
            placements = [("same core", "0")] + ([("other core", str(os.cpu_count() - 1))] if (os.cpu_count() or 1) > 1 else [])
        for t in ("tcp", "unix"):
            for place, cpu in placements:
                pin = self.pin(cpu) if cpu is not None else []
                raw, rem, rem_static = [], [], []
                for _ in range(rounds):   # alternate, so drift hits all alike
                    rc, d, err = run_json(pin + [self.prog("bench_raw"), "ping", raw_addr[t], str(n)], timeout=120)
                    d = self.check("bench_raw ping %s" % t, rc, d, err)
                    raw += [d] if d else []
                    rc, d, err = run_json(pin + [self.prog("bench_cuda"), "latency", str(n)], env=self.env(addr[t]),
                                          timeout=300)
                    d = self.check("bench_cuda latency %s" % t, rc, d, err)
                    rem += [d] if d else []
                    # the static-runtime build: NVIDIA's runtime on the shim's driver layer
                    rc, d, err = run_json(pin + [self.prog("bench_cuda_static"), "latency", str(n)],
                                          env=self.env(addr[t]), timeout=300)
                    d = self.check("bench_cuda_static latency %s" % t, rc, d, err)
                    rem_static += [d] if d else []
                if not raw or not rem:
                    continue
                # The round with the lowest p50 on each side: other load on the machine
                # only ever slows a round down.
                best_raw = min(raw, key=lambda d: d["p50_us"])
                best_rem = min(rem, key=lambda d: d["sync_call"]["p50_us"])
                o = {"raw_p50_us": best_raw["p50_us"], "raw_p99_us": best_raw["p99_us"], "placement": place}
                for call in ("sync_call", "event_query", "memcpy_d2h_4"):
                    o[call + "_p50_us"] = best_rem[call]["p50_us"]
                    o[call + "_p99_us"] = best_rem[call]["p99_us"]
                o["ratio_p50"] = o["sync_call_p50_us"] / o["raw_p50_us"]
                per_round = [m["sync_call"]["p50_us"] / r["p50_us"] for m, r in zip(rem, raw) if r["p50_us"] > 0]
                o["ratio_range"] = [min(per_round), max(per_round)] if per_round else None
                if rem_static:
                    best_static = min(rem_static, key=lambda d: d["sync_call"]["p50_us"])
                    o["static_sync_call_p50_us"] = best_static["sync_call"]["p50_us"]
                    o["static_ratio_p50"] = o["static_sync_call_p50_us"] / o["sync_call_p50_us"]
                out.setdefault(t + "_placements", []).append(o)
            if out.get(t + "_placements"):   # the figure the plots and README show: the same-core one
                out[t] = out[t + "_placements"][0]
        rc, d, err = run_json([self.prog("bench_cuda"), "latency", str(n)], env=self.env(local=True), timeout=120)
        d = self.check("bench_cuda latency local", rc, d, err)
        if d:
            out["local"] = {c + "_p50_us": d[c]["p50_us"] for c in ("sync_call", "event_query", "memcpy_d2h_4")}
        self.res["latency"] = out
        rows = []
        for t in ("tcp", "unix"):
            for o in out.get(t + "_placements", []):
                rows.append([t, o["placement"], f2(o["raw_p50_us"]), f2(o["raw_p99_us"]), f2(o["sync_call_p50_us"]),
                             f2(o["sync_call_p99_us"]), f2(o["event_query_p50_us"]),
                             f2(o["memcpy_d2h_4_p50_us"]), f2(o["ratio_p50"]) + "x",
                             f2(o.get("static_sync_call_p50_us")),
                             f2(o["static_ratio_p50"]) + "x" if "static_ratio_p50" in o else "n/a"])
        if "local" in out:
            l = out["local"]
            rows.append(["local", "-", "-", "-", f2(l["sync_call_p50_us"]), "-", f2(l["event_query_p50_us"]),
                         f2(l["memcpy_d2h_4_p50_us"]), "-", "-", "-"])
        table("1. synchronous call latency, us (%d calls, best of %d rounds; servers pinned to CPU 0, the client on the same core or another; remote = cudaMemGetInfo through the shim, raw = 8-byte ping-pong)" % (n, rounds),
              ["transport", "client", "raw p50", "raw p99", "remote p50", "remote p99", "eventQuery p50", "memcpy 4B p50", "remote/raw",
               "static-runtime p50", "static/shared"], rows)
        for t in ("tcp", "unix"):
            ps = out.get(t + "_placements", [])
            worst = max((o["ratio_p50"] for o in ps), default=None)
            self.goal("sync call p50 within %.1fx of raw round trip (%s, every placement)" % (GOAL_SYNC_RATIO, t),
                      None if worst is None else worst <= GOAL_SYNC_RATIO,
                      ", ".join("%s %sx (rounds %s-%sx)" % (o["placement"], f2(o["ratio_p50"]),
                                                            f2(o["ratio_range"][0]) if o.get("ratio_range") else "?",
                                                            f2(o["ratio_range"][1]) if o.get("ratio_range") else "?")
                                for o in ps) or "n/a")
            st = [o["static_ratio_p50"] for o in ps if "static_ratio_p50" in o]
            self.goal("static-runtime build's sync call p50 within %d %% of the shared build's (%s)" %
                      (round(100 * (GOAL_STATIC_RATIO - 1)), t),
                      None if not st else max(st) <= GOAL_STATIC_RATIO,
                      ", ".join("%s %sx" % (o["placement"], f2(o["static_ratio_p50"])) for o in ps
                                if "static_ratio_p50" in o) or "n/a")

    # ---- 2: asynchronous calls and kernel launches -------------------------------------

    def stats_run(self, argv, label, timeout=300):
        """Runs argv through the shim over TCP with CUDAREM_STATS; (data, stats)."""
        path = os.path.join(self.tmp, "stats-%d.json" % len(os.listdir(self.tmp)))
        rc, d, err = run_json(argv, env=self.env(self.addr["tcp"], stats=path), timeout=timeout)
        d = self.check(label, rc, d, err)
        try:
            with open(path) as f:
                st = json.load(f)
        except (OSError, ValueError):
            st = None
        return d, st

    def sec_async(self):
        n, batch = self.p["async_n"], self.p["async_batch"]
        out = {"n": n, "batch": batch, "transport": "tcp"}
        base, st0 = self.stats_run([self.prog("bench_cuda"), "async", "0", str(batch)], "bench_cuda async 0")
        d, st = self.stats_run([self.prog("bench_cuda"), "async", str(n), str(batch)], "bench_cuda async")
        if d and st and st0:
            out["remote"] = d
            out["round_trips_total"] = st["round_trips"]
            out["round_trips_setup"] = st0["round_trips"]
            out["queued_round_trips"] = st["round_trips"] - st0["round_trips"] - d["synchronises"]
        if self.p["burst_n"]:
            b = self.p["burst_n"]
            d2, st2 = self.stats_run([self.prog("bench_cuda"), "async", str(b), str(b)], "bench_cuda async burst")
            if d2 and st2 and st0:
                out["burst"] = {"n": b, "extra_round_trips": st2["round_trips"] - st0["round_trips"] - d2["synchronises"]}
        rc, dl, err = run_json([self.prog("bench_cuda"), "async", str(n), str(batch)], env=self.env(local=True), timeout=300)
        out["local"] = self.check("bench_cuda async local", rc, dl, err)
        out["kernels"] = self.kernel_launches()
        self.res["async"] = out
        rows = []
        r, l = out.get("remote"), out.get("local")
        q = out.get("queued_round_trips")
        if r:
            rows.append(["cudaMemsetAsync", f2(r["memset_us_per_call"], "%.3f"), "%.0f" % r["memset_calls_per_s"],
                         f2(l["memset_us_per_call"], "%.3f") if l else "n/a", q])
            rows.append(["cudaEventRecord", f2(r["event_us_per_call"], "%.3f"), "%.0f" % r["event_calls_per_s"],
                         f2(l["event_us_per_call"], "%.3f") if l else "n/a", q])
        k = out["kernels"]
        if k.get("available"):
            rows.append(["<<<>>> launch", f2(k["remote"]["launch_us_per_call"], "%.3f"),
                         "%.0f" % k["remote"]["launches_per_s"],
                         f2(k["local"]["launch_us_per_call"], "%.3f") if k.get("local") else "n/a",
                         k.get("queued_round_trips", "n/a")])
        else:
            rows.append(["<<<>>> launch", "n/a (kernel launches not available)", "", "", ""])
        table("2. asynchronous calls (%d calls in batches of %d, each batch + cudaStreamSynchronize; remote over TCP)" % (n, batch),
              ["call", "remote us/call", "remote calls/s (incl. sync)", "local us/call", "round trips besides syncs"], rows)
        log("   round trips besides syncs: the measured run's, less those of the same program making no such call "
            "(its set-up: allocation, module load) and one per cudaStreamSynchronize; 0: every call travelled "
            "inside the synchronising round trips")
        # a count other than 0 is what a reader would ask about: say which calls differ
        if isinstance(q, int) and q != 0 and st0 and st:
            log("   cudaMemsetAsync/cudaEventRecord: %d round trips besides syncs; by call, set-up run: %s; "
                "measured run: %s" % (q, st0.get("round_trips_by_call"), st.get("round_trips_by_call")))
        kq, by_call = k.get("queued_round_trips"), k.get("round_trips_by_call", {})
        if isinstance(kq, int) and kq != 0:
            log("   <<<>>> launch: %d round trips besides syncs; by call, set-up run: %s; measured run: %s" % (
                kq, by_call.get("setup"), by_call.get("launches")))
        if k.get("local_reason"):
            log("  <<<>>> launch, local: n/a: %s" % k["local_reason"])
        if k.get("available") and k.get("queued_round_trips", 0) != 0:   # which call made the difference
            log("  launch round trips by call: setup run (0 launches): %s; %d launches: %s"
                % (k["round_trips_by_call"]["setup"], k["remote"]["n"], k["round_trips_by_call"]["launches"]))
        if "round_trips_total" in out:
            log("  round trips: %d in all = %d setup/teardown + %d synchronises + %d for %d queued calls"
                % (out["round_trips_total"], out["round_trips_setup"], r["synchronises"], q, 2 * n))
        if "burst" in out:
            log("  one burst of %d memsets + %d event records with no synchronise between: %d extra round trips "
                "(the client's queue is sent when it holds 4096 calls or 4 MiB)"
                % (out["burst"]["n"], out["burst"]["n"], out["burst"]["extra_round_trips"]))
        self.goal("zero round trips for queued calls (besides the final synchronise)",
                  None if q is None else q == 0, "%s round trips for %d queued calls" % (q, 2 * n))

    def kernel_launches(self):
        """Launch cost when `<<<>>>` launches work through the shim (else a reason)."""
        shim_ok = symbol_strong(self.shim, "__cudaLaunchKernel") or symbol_strong(self.shim, "cudaLaunchKernel")
        try:
            helptext = subprocess.run([self.server, "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True, timeout=10).stdout
        except (OSError, subprocess.TimeoutExpired):
            helptext = ""
        if not shim_ok:
            return {"available": False, "reason": "the shim does not implement __cudaLaunchKernel yet"}
        if not self.gpu and "--emu-kernels" not in helptext:
            return {"available": False, "reason": "cudarem-server has no --emu-kernels option yet"}
        if not self.gpu and not os.path.exists(self.prog("bench_kernel_emu.so")):
            return {"available": False, "reason": "bench_kernel_emu.so was not built (no server/emu/cudarem_emu_kernel.h)"}
        n = self.p["kernel_n"]
        argv = [self.prog("bench_kernel"), str(n), str(self.p["async_batch"])]
        srv = None
        try:
            addr = self.addr["tcp"]
            if not self.gpu:   # a server of its own, with the kernel's CPU twin
                port = free_port()
                addr = "tcp:127.0.0.1:%d" % port
                lp = os.path.join(self.tmp, "server-kernels.log")
                srv = self.procs.start([self.server, "--insecure", "--listen", addr, "--emu-kernels",
                                        self.prog("bench_kernel_emu.so")], lp)
                if not wait_for_line(lp, "serving the", srv):
                    return {"available": False, "reason": "cudarem-server --emu-kernels did not start"}
            # The set-up run (no launch) twice: the first loads the module into the
            # server's module cache (a miss costs a second round trip), so the second
            # and the measured run pay the same for their set-up.
            stats, by_call = [], []
            for i, (k, a) in enumerate(((0, argv[:1] + ["0"] + argv[2:]), (0, argv[:1] + ["0"] + argv[2:]), (n, argv))):
                path = os.path.join(self.tmp, "stats-kernel-%d.json" % i)
                rc, d, err = run_json(a, env=self.env(addr, stats=path), timeout=300, ok_codes=(0, 4))
                if rc != 0 or d is None:
                    return {"available": False, "reason": "launch failed: %s" % err.strip()[-200:]}
                try:
                    with open(path) as f:
                        st = json.load(f)
                    stats.append(st["round_trips"])
                    by_call.append(st.get("round_trips_by_call", ""))
                except (OSError, ValueError, KeyError):
                    stats.append(None)
            out = {"available": True, "remote": d}
            if None not in stats:   # beyond setup (n = 0) and one synchronise per batch
                out["queued_round_trips"] = stats[2] - stats[1] - d["synchronises"]
                out["round_trips_by_call"] = {"setup": by_call[1], "launches": by_call[2]}
            # In process, the emulated device finds the CPU twin through CUDAREM_EMU_KERNELS.
            local_env = self.env(local=True, extra=None if self.gpu else {"CUDAREM_EMU_KERNELS": self.prog("bench_kernel_emu.so")})
            rc, dl, err = run_json(argv, env=local_env, timeout=300, ok_codes=(0, 1, 4))
            out["local"] = dl if rc == 0 else None
            if rc != 0:
                out["local_reason"] = "the local run failed (exit %d%s): %s" % (
                    rc, ", the counter the kernel bumps did not move" if dl and not dl.get("verified") else "",
                    err.strip()[-200:])
            return out
        finally:
            if srv is not None:
                self.procs.stop(srv)

    # ---- 2b: CUDA graphs -----------------------------------------------------------------

    def graph_run(self, mode, n, steps):
        """bench_graph MODE N STEPS through the shim over TCP: (data, stats)."""
        return self.stats_run([self.prog("bench_graph"), mode, str(n), str(steps)], "bench_graph %s %d" % (mode, n))

    def sec_graph(self):
        """A step of N tiny kernels, eager or one CUDA graph, R steps then one
        synchronise: the round trips and queued bytes the steps add to a set-up run
        of the same program (R = 0), and the client's time per step."""
        steps = self.p["graph_steps"]
        out = {"steps": steps, "transport": "tcp", "rows": []}
        rows = []
        for n in GRAPH_SIZES:
            row = {"n": n}
            for mode in ("eager", "graph", "update"):
                # the set-up run twice: the first puts the module in the server's cache
                # (a miss costs a second round trip), so the second pays what the measured run does
                self.graph_run(mode, n, 0)
                base, st0 = self.graph_run(mode, n, 0)
                d, st = self.graph_run(mode, n, steps)
                if not (base and st0 and d and st):
                    continue
                row[mode] = {"client_us_per_step": d["client_us_per_step"], "ms_per_step": d["total_ms_per_step"],
                             "round_trips_per_step": (st["round_trips"] - st0["round_trips"]) / float(steps),
                             "queued_bytes_per_step": (st.get("queued_bytes", 0) - st0.get("queued_bytes", 0))
                             / float(steps), "verified": d["verified"]}
            rc, dl, err = run_json([self.prog("bench_graph"), "graph", str(n), str(steps)],
                                   env=self.env(local=True), timeout=300)
            row["local_graph"] = dl if rc == 0 else None
            if rc != 0:
                out["local_reason"] = ("no GPU: the emulated device in process has no graph API (capture is the "
                                       "shim's)" if not self.gpu else "the local run failed: %s" % err.strip()[-200:])
            out["rows"].append(row)
            e, g, u, lg = row.get("eager"), row.get("graph"), row.get("update"), row.get("local_graph")
            rows.append([n, f2(e["round_trips_per_step"]) if e else "n/a", f2(g["round_trips_per_step"]) if g else "n/a",
                         "%.0f" % e["queued_bytes_per_step"] if e else "n/a",
                         "%.0f" % g["queued_bytes_per_step"] if g else "n/a",
                         "%.0f" % u["queued_bytes_per_step"] if u else "n/a",
                         f2(e["client_us_per_step"], "%.1f") if e else "n/a",
                         f2(g["client_us_per_step"], "%.1f") if g else "n/a",
                         f2(u["client_us_per_step"], "%.1f") if u else "n/a",
                         f2(lg["client_us_per_step"], "%.1f") if lg else "n/a",
                         f2(e["ms_per_step"], "%.2f") if e else "n/a", f2(g["ms_per_step"], "%.2f") if g else "n/a"])
        self.res["graph"] = out
        table("2b. A step of N kernels, eager vs one CUDA graph (%d steps, then one cudaStreamSynchronize; "
              "remote over TCP)" % steps,
              ["N", "eager RT/step", "graph RT/step", "eager queued B/step", "graph queued B/step",
               "updated graph queued B/step", "eager client us/step", "graph client us/step",
               "updated graph client us/step", "local graph client us/step",
               "eager ms/step", "graph ms/step"], rows)
        log("   RT/step and bytes/step: the run's less those of the same program with no step (its set-up, the "
            "capture and instantiation included), over the steps; the one synchronisation after the steps is a "
            "round trip the set-up run answers locally (1/%d per step); ms/step includes the device's work (the "
            "emulated device's, on the CPU, when there is no GPU); an updated graph's step changes the first "
            "kernel's argument (cudaGraphExecKernelNodeSetParams) before its launch" % steps)
        if out.get("local_reason"):
            log("   local graph: n/a: %s" % out["local_reason"])
        graph_rows = [r["graph"] for r in out["rows"] if "graph" in r]
        flat = len(graph_rows) == len(GRAPH_SIZES) and len(set(r["queued_bytes_per_step"] for r in graph_rows)) == 1
        self.goal("a graph replay costs 0 round trips (besides the final synchronisation) and the same bytes "
                  "whatever its size",
                  None if len(graph_rows) != len(GRAPH_SIZES) else
                  flat and all(r["round_trips_per_step"] * steps <= 1 for r in graph_rows),
                  "; ".join("N=%d: %s RT, %.0f B" % (n, f2(r["round_trips_per_step"]), r["queued_bytes_per_step"])
                            for n, r in zip(GRAPH_SIZES, graph_rows)))

    # ---- 2c: managed memory -------------------------------------------------------------

    def sec_managed(self):
        """Each access pattern of bench_managed over a 16 MiB managed buffer: the round
        trips, faults and bytes it adds to the same program's set-up (R = the pattern
        on a 1 MiB buffer is not subtracted: the counts are the whole run's), beside
        one explicit cudaMemcpy of the same bytes."""
        mib = 4 if self.profile_name == "smoke" else 16
        out = {"mib": mib, "transport": "tcp", "rows": []}
        rows = []
        for pattern in ("write", "read", "sparse", "prefetch", "copy"):
            d, st = self.stats_run([self.prog("bench_managed"), pattern, str(mib)], "bench_managed %s" % pattern)
            if not (d and st):
                continue
            row = {"pattern": pattern, "ms": d["ms"], "verified": d["verified"], "round_trips": st["round_trips"],
                   "faults": st.get("managed_faults", 0), "fetches": st.get("managed_fetches", 0),
                   "fetched_bytes": st.get("managed_fetched_bytes", 0), "pushes": st.get("managed_pushes", 0),
                   "pushed_bytes": st.get("managed_pushed_bytes", 0), "bytes_d2h": st["bytes_d2h"]}
            out["rows"].append(row)
            rows.append([pattern, row["round_trips"], row["faults"], row["fetches"], fmt_size(row["fetched_bytes"]),
                         row["pushes"], fmt_size(row["pushed_bytes"]), f2(row["ms"], "%.1f")])
        self.res["managed"] = out
        table("2c. Managed memory: one access pattern over %d MiB (remote over TCP; whole program's counts)" % mib,
              ["pattern", "RT", "faults", "fetches", "fetched", "pushes", "pushed", "ms"], rows)
        log("   write: the host writes every int, a kernel sums them; read: the host reads every int after a kernel "
            "wrote them (read-ahead doubles from 64 KiB to 4 MiB); sparse: one int per MiB (one 64 KiB block each); "
            "prefetch: cudaMemPrefetchAsync to the host, then the reads; copy: cudaMalloc and one cudaMemcpy, the "
            "explicit baseline. ms is the pattern alone, the device's work included")
        by = {r["pattern"]: r for r in out["rows"]}
        if "read" in by and "sparse" in by:
            self.goal("managed memory moves only the blocks touched: a sparse read fetches one 64 KiB block per "
                      "touch, a full read each byte once",
                      by["sparse"]["fetched_bytes"] == mib * 64 * 1024 and
                      by["read"]["fetched_bytes"] == mib << 20,
                      "sparse: %s in %d fetches; read: %s in %d fetches" %
                      (fmt_size(by["sparse"]["fetched_bytes"]), by["sparse"]["fetches"],
                       fmt_size(by["read"]["fetched_bytes"]), by["read"]["fetches"]))

    # ---- 3 + 4: copy bandwidth, local vs remote ---------------------------------------

    def copy_run(self, env, label, data="random", sizes=None, batches=None, dirs="all", argv_prefix=(), timeout=600):
        sizes = sizes or self.p["copy_sizes"]
        argv = list(argv_prefix) + [self.prog("bench_cuda"), "copy", data, str(batches or self.p["copy_batches"]),
                                    dirs] + [str(s) for s in sizes]
        rc, d, err = run_json(argv, env=env, timeout=timeout)
        return self.check(label, rc, d, err)

    def raw_stream(self, addr, label, sizes=None, batches=None, argv_prefix=()):
        sizes = sizes or self.p["copy_sizes"]
        argv = list(argv_prefix) + [self.prog("bench_raw"), "stream", addr, str(batches or self.p["copy_batches"])]
        rc, d, err = run_json(argv + [str(s) for s in sizes], timeout=600)
        return self.check(label, rc, d, err)

    # Bulk paths: the data channel's socket on each transport; shared memory (the
    # default when the server runs on this machine), where pinned memory is shared
    # with the server and pageable copies go through the channel's ring; and the
    # ring alone, pinned memory private (CUDAREM_SHARED_PINNED=off).
    COPY_PATHS = (("tcp", "tcp", {"CUDAREM_SHM": "off"}), ("unix", "unix", {"CUDAREM_SHM": "off"}),
                  ("shm", "unix", {"CUDAREM_SHM": "on"}),
                  ("ring", "unix", {"CUDAREM_SHM": "on", "CUDAREM_SHARED_PINNED": "off"}))

    def sec_copy(self):
        sizes = self.p["copy_sizes"]
        rounds = self.p["copy_rounds"]
        out = {"sizes": sizes, "data": "random", "batches": self.p["copy_batches"], "rounds": rounds}
        runs = {}
        for _ in range(rounds):   # raw, remote and local alternate, so drift hits them alike
            for t in ("tcp", "unix"):
                runs.setdefault((t, "raw"), []).append(self.raw_stream(self.raw[t], "bench_raw stream %s" % t))
            for path, t, extra in self.COPY_PATHS:
                runs.setdefault((path, "remote"), []).append(
                    self.copy_run(self.env(self.addr[t], extra=extra), "bench_cuda copy %s" % path))
            runs.setdefault(("local", ""), []).append(self.copy_run(self.env(local=True), "bench_cuda copy local"))
        for path, t, _ in self.COPY_PATHS:
            out[path] = {"raw": best_of(runs[(t, "raw")]) if t == path else None,
                         "remote": best_of(runs[(path, "remote")])}
            if t == path:   # remote / raw round by round: how far one round's ratio strays
                out[path]["ratio_range"] = self.round_ratios(runs[(path, "remote")], runs[(t, "raw")])
        out["local"] = best_of(runs[("local", "")])
        self.res["copy"] = out
        big = [i for i, s in enumerate(sizes) if s >= 64 * MIB]
        for t in ("tcp", "unix"):
            self.copy_table(t, out[t]["raw"], out[t]["remote"], rounds)
        for direction, key, rkey in (("H2D", "h2d_pinned_GBps", "write_GBps"), ("D2H", "d2h_pinned_GBps", "read_GBps")):
            raw, rem = out["tcp"]["raw"], out["tcp"]["remote"]
            fr = [rem[key][i] / raw[rkey][i] for i in big] if raw and rem else []
            self.goal("copy bandwidth >= %d%% of raw TCP for >= 64 MiB (%s)" % (GOAL_COPY_FRACTION * 100, direction),
                      min(fr) >= GOAL_COPY_FRACTION if fr else None,
                      ", ".join("%s %.0f%%" % (fmt_size(sizes[i]), f * 100) for i, f in zip(big, fr)) or "no size >= 64 MiB in this profile")
            loc, shm = out["local"], out["shm"]["remote"]
            fr = [shm[key][i] / loc[key][i] for i in big] if loc and shm else []
            self.goal("same-host copies >= %d%% of the same copy in process for >= 64 MiB (%s)" % (GOAL_SHM_FRACTION * 100, direction),
                      min(fr) >= GOAL_SHM_FRACTION if fr else None,
                      ", ".join("%s %.0f%%" % (fmt_size(sizes[i]), f * 100) for i, f in zip(big, fr)) or "no size >= 64 MiB in this profile")
        self.medium_copy_goals(out, sizes)
        self.local_copy_table(out, sizes)

    def medium_copy_goals(self, out, sizes):
        """The sizes of tensors and batches: 64 KiB to 4 MiB against the raw stream on
        each transport, and the ring against the copy in process from 1 MiB up."""
        medium = [i for i, s in enumerate(sizes) if 64 * KIB <= s <= 4 * MIB]
        for t in ("tcp", "unix"):
            raw, rem = out[t]["raw"], out[t]["remote"]
            fr = [(rem[key][i] / raw[rkey][i], "%s %s" % (d, fmt_size(sizes[i]))) for i in medium
                  for d, key, rkey in (("H2D", "h2d_pinned_GBps", "write_GBps"), ("D2H", "d2h_pinned_GBps", "read_GBps"))
                  ] if raw and rem else []
            worst = min(fr) if fr else None
            self.goal("copies of 64 KiB-4 MiB >= %d%% of the raw stream (%s, both directions)" % (GOAL_MEDIUM_FRACTION * 100, t),
                      None if worst is None else worst[0] >= GOAL_MEDIUM_FRACTION,
                      "worst %s %.0f%%; %d of %d" % (worst[1], worst[0] * 100, sum(f >= GOAL_MEDIUM_FRACTION for f, _ in fr),
                                                     len(fr)) if worst else "n/a")
        loc = out["local"]
        big = [i for i, s in enumerate(sizes) if s >= MIB]
        for path, what in (("shm", "same-host copies"), ("ring", "same-host copies through the ring (pinned memory private)")):
            shm = out[path]["remote"]
            fr = [(shm[key][i] / loc[key][i], "%s %s" % (d, fmt_size(sizes[i]))) for i in big
                  for d, key in (("H2D", "h2d_pinned_GBps"), ("D2H", "d2h_pinned_GBps"))] if loc and shm else []
            worst = min(fr) if fr else None
            self.goal("%s >= %d%% of the same copy in process from 1 MiB up" % (what, GOAL_SHM_FRACTION * 100),
                      None if worst is None else worst[0] >= GOAL_SHM_FRACTION,
                      "worst %s %.0f%%" % (worst[1], worst[0] * 100) if worst else "n/a")

    @staticmethod
    def round_ratios(rems, raws):
        """Per direction and size, [lowest, highest] of remote / raw over the rounds."""
        out = {}
        for d, key, rkey in (("h2d", "h2d_pinned_GBps", "write_GBps"), ("d2h", "d2h_pinned_GBps", "read_GBps")):
            pairs = [(m, r) for m, r in zip(rems, raws) if m and r]
            if pairs:
                n = len(pairs[0][0][key])
                rs = [[m[key][i] / r[rkey][i] for m, r in pairs if r[rkey][i] > 0] for i in range(n)]
                out[d] = [[min(x), max(x)] if x else None for x in rs]
        return out

    def copy_table(self, t, raw, rem, rounds):
        if not raw or not rem:
            return
        rng = self.res["copy"][t].get("ratio_range", {})

        def span(d, i):
            r = rng.get(d, [None] * (i + 1))[i]
            return "%.0f-%.0f%%" % (r[0] * 100, r[1] * 100) if r else "n/a"

        rows = []
        for i, s in enumerate(self.p["copy_sizes"]):
            rows.append([fmt_size(s), f2(raw["write_GBps"][i]), f2(rem["h2d_pinned_GBps"][i]),
                         f2(rem["h2d_pageable_GBps"][i]), f2(ratio(rem["h2d_pinned_GBps"][i], raw["write_GBps"][i]) * 100, "%.0f%%"),
                         span("h2d", i), f2(raw["read_GBps"][i]), f2(rem["d2h_pinned_GBps"][i]),
                         f2(ratio(rem["d2h_pinned_GBps"][i], raw["read_GBps"][i]) * 100, "%.0f%%"), span("d2h", i)])
        table("3. copy bandwidth over %s, GB/s (cudaMemcpy through the shim vs raw socket stream, random data; best of %d "
              "rounds; rounds: remote/raw of each round, lowest-highest)" % (t, rounds),
              ["size", "raw write", "H2D pinned", "H2D pageable", "pinned/raw", "rounds", "raw read", "D2H pinned", "D2H/raw",
               "rounds"], rows)

    def local_copy_table(self, out, sizes):
        loc = out["local"]
        rows = []
        for i, s in enumerate(sizes):
            row = [fmt_size(s)]
            for key in ("h2d_pinned_GBps", "h2d_pageable_GBps", "d2h_pinned_GBps"):
                lv = loc[key][i] if loc else None
                row.append(f2(lv))
                for path, _, _ in self.COPY_PATHS:
                    rem = out[path]["remote"]
                    row.append(f2(ratio(rem[key][i], lv) * 100 if rem and lv else None, "%.0f%%"))
            rows.append(row)
        table("4a. local vs remote copies: local GB/s (%s) and remote as %% of local" % self.res["local_mode"],
              ["size"] + [h for col in ("H2D pinned", "H2D pageable", "D2H")
                          for h in [col] + [p for p, _, _ in self.COPY_PATHS]],
              rows)

    def sec_sgemm(self):
        ns, reps = self.p["sgemm_n"], self.p["sgemm_reps"]
        out = {"n": ns, "reps": reps}
        local_lib = "libcublas.so.13" if self.gpu else self.emu
        if not symbol_strong(self.shim, "cublasSgemm_v2"):
            out.update(available=False, reason="the shim has no cublasSgemm_v2 yet (weak stand-in)")
        elif not self.gpu and not symbol_strong(self.emu, "cublasSgemm_v2"):
            out.update(available=False, reason="libcudarem-emu.so exports no cublasSgemm_v2 yet")
        else:
            argv = lambda lib: [self.prog("bench_cuda"), "sgemm", lib, str(reps)] + [str(n) for n in ns]
            rc, loc, err = run_json(argv(local_lib), env=self.env(local=True), timeout=900, ok_codes=(0, 3))
            loc = self.check("bench_cuda sgemm local", rc, loc, err) if rc != 3 else None
            rc2, rem, err2 = run_json(argv("libcublas.so.13"), env=self.env(self.addr["unix"]), timeout=900,
                                      ok_codes=(0, 3))
            rem = self.check("bench_cuda sgemm remote", rc2, rem, err2) if rc2 != 3 else None
            if loc and rem:
                out.update(available=True, local=loc, remote=rem, transport="unix")
            else:
                out.update(available=False, reason="cuBLAS not usable: %s" % (err if rc == 3 else err2).strip()[-200:])
        self.res["sgemm"] = out
        if not out["available"]:
            table("4b. cuBLAS SGEMM, local vs remote", ["N", "result"], [["-", "n/a (%s)" % out["reason"]]])
            self.goal("data-resident SGEMM remote/local within %.2f for N >= 1024" % GOAL_SGEMM_RATIO, None, out["reason"])
            return
        loc, rem = out["local"], out["remote"]
        rows, worst = [], None
        for i, n in enumerate(ns):
            rr = ratio(loc["resident_GFLOPs"][i], rem["resident_GFLOPs"][i])   # time remote / time local
            rc = ratio(loc["with_copies_GFLOPs"][i], rem["with_copies_GFLOPs"][i])
            if n >= 1024:
                worst = rr if worst is None else max(worst, rr)
            rows.append([n, f2(loc["resident_GFLOPs"][i], "%.1f"), f2(rem["resident_GFLOPs"][i], "%.1f"), f2(rr, "%.3f"),
                         f2(loc["with_copies_GFLOPs"][i], "%.1f"), f2(rem["with_copies_GFLOPs"][i], "%.1f"), f2(rc, "%.3f")])
        table("4b. cuBLAS SGEMM GFLOP/s, local (%s) vs remote (unix socket); ratio = remote time / local time" % self.res["local_mode"],
              ["N", "local resident", "remote resident", "ratio", "local w/ copies", "remote w/ copies", "ratio"], rows)
        self.goal("data-resident SGEMM remote/local within %.2f for N >= 1024" % GOAL_SGEMM_RATIO,
                  None if worst is None else worst <= GOAL_SGEMM_RATIO, "worst %sx" % f2(worst, "%.3f"))

    # ---- 4c: the emulated device's PTX engine ---------------------------------------

    def ptx_run(self, threads):
        """bench_ptx's JSON lines with CUDAREM_EMU_THREADS=threads (None: one per core)."""
        env = dict(os.environ)
        env.pop("CUDAREM_EMU_THREADS", None)
        if threads is not None:
            env["CUDAREM_EMU_THREADS"] = str(threads)
        argv = [self.prog("bench_ptx"), self.prog("bench_ptx_kernels.ptx"), str(self.p["ptx_elements"])]
        try:
            r = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
        except subprocess.TimeoutExpired:
            raise BenchError("bench_ptx timed out")
        if r.returncode != 0:
            raise BenchError("bench_ptx failed (exit %d): %s" % (r.returncode, r.stderr.strip()[-300:]))
        return [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]

    def sec_ptx(self):
        """Lane-instructions per second of the PTX engine on one core and on all,
        for an elementwise kernel, a shared-memory reduction and a warp-shuffle
        scan, and its saxpy's time against the hand-written CPU saxpy."""
        one, all_cores = self.ptx_run(1), self.ptx_run(None)
        self.res["ptx"] = {"one_core": one, "all_cores": all_cores}
        by = lambda runs: {r["kernel"]: r for r in runs}
        a, b = by(one), by(all_cores)
        rows = []
        for k in ("saxpy", "reduce_shared", "scan_warp"):
            rows.append([k, f2(a[k]["lane_insns_per_s"] / 1e6, "%.1f"), f2(b[k]["lane_insns_per_s"] / 1e6, "%.1f"),
                         f2(a[k]["seconds"], "%.3f"), f2(b[k]["seconds"], "%.3f")])
        cpu = a["saxpy (hand-written CPU)"]["seconds"]
        rows.append(["saxpy, hand-written CPU kernel", "-", "-", f2(cpu, "%.4f"), "-"])
        table("4c. PTX engine (emulated device), %d elements: M lane-instructions/s and seconds, one core vs all" %
              a["saxpy"]["elements"], ["kernel", "M/s one core", "M/s all cores", "s one core", "s all cores"], rows)
        rate = a["saxpy"]["lane_insns_per_s"]
        self.goal("PTX engine >= %.0f M lane-instructions/s per core (saxpy)" % (GOAL_PTX_RATE / 1e6),
                  rate >= GOAL_PTX_RATE, "%.1f M/s; the hand-written CPU saxpy is %.0fx faster" % (
                      rate / 1e6, a["saxpy"]["seconds"] / cpu if cpu > 0 else 0))

    # ---- 4d: under load -----------------------------------------------------------------

    def load_probe(self, until):
        """While the load runs: short sessions (meminfo: connect, HELLO, two calls,
        exit) completed per second, and the sync-call latency rounds measured."""
        sessions, lat, t0 = 0, [], time.monotonic()
        meminfo = os.path.join(self.build, "cuda", "meminfo")
        while time.monotonic() < until or len(lat) < 3:
            r = subprocess.run([meminfo], env=self.env(self.addr["tcp"]), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, timeout=120)
            sessions += r.returncode == 0
            if len(lat) < 3:
                rc, d, err = run_json([self.prog("bench_cuda"), "latency", str(self.p["lat_n"])],
                                      env=self.env(self.addr["unix"]), timeout=300)
                d = self.check("bench_cuda latency under load", rc, d, err)
                lat += [d] if d else []
        return sessions / max(time.monotonic() - t0, 1e-9), lat

    def sec_load(self):
        """Clients running tests/load/loadmix (checked copies of 1-64 MiB, memsets,
        GEMMs, launches) at once; meanwhile short sessions per second and the p99
        of a synchronous call (a 4-byte copy back), against the same figures on the
        idle server."""
        n, secs = self.p["load_clients"], self.p["load_seconds"]
        loadmix = os.path.join(self.build, "load", "loadmix")
        idle_sessions, idle_lat = self.load_probe(time.monotonic() + 3)  # best of the same rounds as loaded
        idle = min(idle_lat, key=lambda d: d["memcpy_d2h_4"]["p99_us"]) if idle_lat else None
        clients = []
        for i in range(n):
            lp = os.path.join(self.tmp, "load-%d.log" % i)
            addr = self.addr["unix" if i % 2 else "tcp"]
            clients.append((lp, self.procs.start([loadmix, str(secs), str(1000 + i)], lp, env=self.env(addr))))
        busy_sessions, lat = self.load_probe(time.monotonic() + secs)
        ops = errors = wrong = 0
        worst_p99 = 0.0
        for lp, p in clients:
            p.wait(timeout=secs + 300)
            m = re.search(r"ops (\d+) errors (\d+) wrong (\d+) p50_us \S+ p99_us (\S+)", open(lp).read())
            if not m or p.returncode != 0:
                errors += 1 if not m else int(m.group(2))
                self.failures.append("loadmix: %s" % open(lp).read()[-300:])
                continue
            ops += int(m.group(1))
            wrong += int(m.group(3))
            worst_p99 = max(worst_p99, float(m.group(4)))
        best = min(lat, key=lambda d: d["memcpy_d2h_4"]["p99_us"]) if lat else None
        out = {"clients": n, "seconds": secs, "operations": ops, "errors": errors, "wrong_bytes": wrong,
               "worst_client_op_p99_ms": worst_p99 / 1000, "sessions_per_s_idle": idle_sessions,
               "sessions_per_s_loaded": busy_sessions}
        if idle and best:
            for k, d in (("idle", idle), ("loaded", best)):
                out["memcpy_d2h_4_p50_us_" + k] = d["memcpy_d2h_4"]["p50_us"]
                out["memcpy_d2h_4_p99_us_" + k] = d["memcpy_d2h_4"]["p99_us"]
        self.res["load"] = out
        rows = [["clients running loadmix", n], ["operations (all clients)", ops],
                ["errors / wrong bytes", "%d / %d" % (errors, wrong)],
                ["worst client's p99 per operation, ms", f2(worst_p99 / 1000, "%.0f")],
                ["short sessions per second, idle", f2(idle_sessions, "%.1f")],
                ["short sessions per second, under load", f2(busy_sessions, "%.1f")]]
        if "memcpy_d2h_4_p99_us_loaded" in out:   # a 4-byte copy back: one round trip per call
            rows += [["4-byte cudaMemcpy D2H p50 / p99 us, idle", "%s / %s" % (
                         f2(out["memcpy_d2h_4_p50_us_idle"]), f2(out["memcpy_d2h_4_p99_us_idle"]))],
                     ["4-byte cudaMemcpy D2H p50 / p99 us, under load", "%s / %s" % (
                         f2(out["memcpy_d2h_4_p50_us_loaded"]), f2(out["memcpy_d2h_4_p99_us_loaded"]))]]
        table("4d. under load: %d clients for %d s (copies of 1-64 MiB, memsets, GEMMs, launches, all checked)" %
              (n, secs), ["figure", "value"], rows)
        self.goal("load: 0 errors and 0 wrong bytes", errors == 0 and wrong == 0,
                  "%d operations, %d errors, %d wrong" % (ops, errors, wrong))

    # ---- 4e: TLS -------------------------------------------------------------------------

    def tls_server(self):
        """A second server on TCP with a fresh self-signed certificate; its address
        and the certificate, or None when openssl(1) is missing."""
        cert, key = os.path.join(self.tmp, "tls-cert.pem"), os.path.join(self.tmp, "tls-key.pem")
        r = subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                            "-nodes", "-keyout", key, "-out", cert, "-subj", "/CN=localhost", "-addext",
                            "subjectAltName=IP:127.0.0.1", "-days", "2"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        if r.returncode != 0:
            return None, None
        addr = "tcp:127.0.0.1:%d" % free_port()
        lp = os.path.join(self.tmp, "server-tls.log")
        p = self.procs.start([self.server, "--insecure", "--tls-cert", cert, "--tls-key", key, "--listen", addr], lp)
        if not wait_for_line(lp, "serving the", p):
            raise BenchError("the TLS server did not start: %s" % open(lp).read()[-300:])
        return addr, cert

    def sec_tls(self):
        """What TLS costs against plain TCP on the same machine: a round-trip call's
        p50 and copy bandwidth, both through the data channel."""
        addr, cert = self.tls_server()
        if addr is None:
            self.res["tls"] = {"available": False, "reason": "openssl(1) is missing"}
            return
        tls_env = {"CUDAREM_TLS": "on", "CUDAREM_TLS_CA": cert, "CUDAREM_SHM": "off"}
        sizes = [s for s in self.p["copy_sizes"] if s >= MIB] or self.p["copy_sizes"]
        out = {"sizes": sizes, "rounds": 3}
        lat, copies = {"plain": [], "tls": []}, {"plain": [], "tls": []}
        for _ in range(3):   # alternate, so drift and idle wake-ups hit both alike; keep the best
            for name, a, extra in (("plain", self.addr["tcp"], {"CUDAREM_SHM": "off"}), ("tls", addr, tls_env)):
                rc, d, err = run_json([self.prog("bench_cuda"), "latency", str(self.p["lat_n"])],
                                      env=self.env(a, extra=extra), timeout=300)
                d = self.check("bench_cuda latency %s" % name, rc, d, err)
                lat[name] += [d["memcpy_d2h_4"]["p50_us"]] if d else []
                c = self.copy_run(self.env(a, extra=extra), "bench_cuda copy %s" % name, sizes=sizes,
                                  dirs="h2d_pinned,d2h_pinned")
                copies[name] += [c] if c else []
        for name in ("plain", "tls"):
            out[name] = {"memcpy_d2h_4_p50_us": min(lat[name]) if lat[name] else None,
                         "copy": best_of(copies[name]) if copies[name] else None}
        self.res["tls"] = out
        rows = [["4-byte cudaMemcpy D2H p50, us", f2(out["plain"]["memcpy_d2h_4_p50_us"]),
                 f2(out["tls"]["memcpy_d2h_4_p50_us"])]]
        for i, size in enumerate(sizes):
            for key, label in (("h2d_pinned_GBps", "H2D"), ("d2h_pinned_GBps", "D2H")):
                pc, tc = out["plain"]["copy"], out["tls"]["copy"]
                rows.append(["%s %s, GB/s" % (label, fmt_size(size)), f2(pc[key][i] if pc else None),
                             f2(tc[key][i] if tc else None)])
        table("4e. TLS against plain TCP, same machine (CUDAREM_TLS=on; random data, data channel; best of 3 alternating rounds)",
              ["figure", "plain TCP", "TLS"], rows)

    # ---- 4f: a pool of two servers ---------------------------------------------------

    def sec_pool(self):
        """Copies between the devices of two servers pooled by one client
        (CUDAREM_SERVER=A,B): no server sees both, so the client reads from one and
        writes to the other. Measured beside the two halves on the same servers."""
        second = "unix:%s/pool-b.sock" % self.tmp
        lp = os.path.join(self.tmp, "server-pool-b.log")
        srv = self.procs.start([self.server, "--insecure", "--listen", second], lp)
        if not wait_for_line(lp, "serving the", srv):
            self.res["pool"] = {"available": False, "reason": "a second cudarem-server did not start"}
            return
        sizes = [s for s in self.p["copy_sizes"] if MIB <= s <= 64 * MIB] or self.p["copy_sizes"]
        pool = "%s,%s" % (self.addr["unix"], second)
        runs = []
        for _ in range(3):   # best of 3: load from elsewhere only slows a run
            rc, d, err = run_json([self.prog("bench_cuda"), "peer", str(self.p["copy_batches"])] + [str(s) for s in sizes],
                                  env=self.env(pool), timeout=600)
            runs.append(self.check("bench_cuda peer (pool of 2 servers)", rc, d, err))
        self.procs.stop(srv)
        best = best_of(runs)
        self.res["pool"] = {"available": best is not None, "servers": pool, "sizes": sizes, "copy": best}
        if best is None:
            return
        rows = [[fmt_size(s)] + [f2(x) for x in self.pool_row(best, i)] for i, s in enumerate(sizes)]
        table("4f. Copies between two pooled servers (CUDAREM_SERVER=A,B on Unix sockets; GB/s; best of 3)",
              ["size", "peer A->B", "D2H from A", "H2D to B", "halves in turn", "peer / halves"], rows)

    @staticmethod
    def pool_row(copy, i):
        """peer, D2H, H2D, the two halves one after the other, and peer over that."""
        peer, d2h, h2d = copy["peer_GBps"][i], copy["d2h_first_GBps"][i], copy["h2d_last_GBps"][i]
        halves = 1.0 / (1.0 / d2h + 1.0 / h2d) if d2h and h2d else None
        return [peer, d2h, h2d, halves, peer / halves if halves else None]

    # ---- 5: train.py -----------------------------------------------------------------

    def sec_train(self):
        script = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples", "train.py")
        out = {}
        missing = [s for s in ("cublasSgemm_v2", "cudnnConvolutionForward") if not symbol_strong(self.shim, s)]
        if not self.p["train"]:
            out.update(available=False, reason="not run in this profile")
        elif not os.path.exists(script):
            out.update(available=False, reason="examples/train.py does not exist yet")
        elif missing:
            out.update(available=False, reason="the shim does not implement %s yet" % ", ".join(missing))
        else:
            first = self.train_run(script, 1)
            if first["rc"] == 0 and first["per_step"] is not None:
                out.update(available=True, round_trips_per_step=first["per_step"], calls_per_step=first["calls_per_step"],
                           source="train.py's own per-step counter", steps=first["steps"], stats=first["stats"])
            elif first["rc"] == 0 and first["stats"] and first["steps"]:
                # No per-step figure printed: one more epoch, counted by CUDAREM_STATS.
                second = self.train_run(script, 2)
                if second["rc"] == 0 and second["stats"]:
                    d_rt = second["stats"]["round_trips"] - first["stats"]["round_trips"]
                    d_calls = second["stats"]["calls"] - first["stats"]["calls"]
                    out.update(available=True, round_trips_per_step=d_rt / first["steps"],
                               calls_per_step=d_calls / first["steps"], steps=first["steps"], stats=second["stats"],
                               source="CUDAREM_STATS of 2 epochs minus 1 epoch, per step (includes the epoch's upload and loss readback)")
                else:
                    out.update(available=False, reason="train.py --epochs 2 failed (exit %d): %s" % (second["rc"], second["text"]))
            else:
                out.update(available=False, reason="train.py failed (exit %d): %s" % (first["rc"], first["text"]))
            if not out["available"]:
                self.failures.append("train.py: %s" % out["reason"])
        self.res["train"] = out
        if out["available"]:
            table("5. examples/train.py through the shim (unix socket)", ["round trips/step", "calls/step", "steps/epoch", "round trips in all"],
                  [[f2(out["round_trips_per_step"]), f2(out["calls_per_step"], "%.1f"), out.get("steps") or "n/a",
                    out["stats"]["round_trips"] if out.get("stats") else "n/a"]])
            log("  per-step figure from %s" % out["source"])
            self.goal("train.py at most %d round trips per step" % GOAL_TRAIN_RT,
                      out["round_trips_per_step"] <= GOAL_TRAIN_RT, "%s per step" % f2(out["round_trips_per_step"]))
        else:
            table("5. examples/train.py through the shim", ["result"], [["n/a (%s)" % out["reason"]]])
            self.goal("train.py at most %d round trips per step" % GOAL_TRAIN_RT, None, out["reason"])

    def train_run(self, script, epochs):
        """Runs train.py for `epochs` epochs through the shim (unix socket) with
        CUDAREM_STATS; returns rc, its per-step figures if it printed them, its steps
        per epoch, the stats and the output's tail."""
        stats = os.path.join(self.tmp, "stats-train-%d.json" % epochs)
        argv = [sys.executable, script, "--epochs", str(epochs), "--min-accuracy", "0"]
        try:
            r = subprocess.run(argv, env=self.env(self.addr["unix"], stats=stats), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=self.p["train_timeout"] * epochs)
            text, rc = r.stdout, r.returncode
        except subprocess.TimeoutExpired:
            text, rc = "timed out after %d s" % (self.p["train_timeout"] * epochs), -1
        m = re.search(r"round trips/step ([0-9.]+) \(calls/step ([0-9.]+)\)", text)
        s = re.search(r"(\d+) steps/epoch", text)
        try:
            with open(stats) as f:
                st = json.load(f)
        except (OSError, ValueError):
            st = None
        return {"rc": rc, "per_step": float(m.group(1)) if m else None, "calls_per_step": float(m.group(2)) if m else None,
                "steps": int(s.group(1)) if s else None, "stats": st, "text": text.strip()[-300:]}

    # ---- 6: shaped links -----------------------------------------------------------------

    def ns_cleanup(self):
        """Deletes this run's namespaces after stopping what runs in them."""
        for ns in list(self.namespaces):
            try:
                pids = subprocess.run(["ip", "netns", "pids", ns], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                      text=True, timeout=10).stdout.split()
                for pid in pids:   # only processes this run started inside its own namespace
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except (OSError, ValueError):
                        pass
                subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL, timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                pass
            self.namespaces.remove(ns)

    @staticmethod
    def stale_namespaces():
        """Deletes namespaces left by an earlier run of this script that was killed."""
        try:
            names = subprocess.run(["ip", "netns", "list"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                   text=True, timeout=10).stdout.split("\n")
        except (OSError, subprocess.TimeoutExpired):
            return
        for line in names:
            m = re.match(r"(%s-(\d+)-(srv|cli))\b" % NS_PREFIX, line.strip())
            if m and not os.path.exists("/proc/%s" % m.group(2)):
                subprocess.run(["ip", "netns", "del", m.group(1)], stderr=subprocess.DEVNULL, timeout=10)

    def sh(self, *argv):
        r = subprocess.run(list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=20)
        if r.returncode != 0:
            raise OSError("%s: %s" % (" ".join(argv), r.stdout.strip()))

    def ns_setup(self):
        """Two namespaces joined by a veth pair; returns (srv, cli) names."""
        self.stale_namespaces()
        srv, cli = "%s-%d-srv" % (NS_PREFIX, os.getpid()), "%s-%d-cli" % (NS_PREFIX, os.getpid())
        for ns in (srv, cli):
            self.sh("ip", "netns", "add", ns)
            self.namespaces.append(ns)
        self.sh("ip", "link", "add", "crmb0", "netns", srv, "type", "veth", "peer", "name", "crmb1", "netns", cli)
        for ns, dev, a in ((srv, "crmb0", NS_NET[0]), (cli, "crmb1", NS_NET[1])):
            self.sh("ip", "-n", ns, "addr", "add", a + "/24", "dev", dev)
            self.sh("ip", "-n", ns, "link", "set", dev, "up")
            self.sh("ip", "-n", ns, "link", "set", "lo", "up")
        return srv, cli

    def ns_shape(self, srv, cli, rate):
        """Token-bucket shaping of both directions to rate (netem may be missing)."""
        burst = max(int(RATE_GBPS[rate] * 1e9 * 0.004), 256 * KIB)
        for ns, dev in ((srv, "crmb0"), (cli, "crmb1")):
            self.sh("ip", "netns", "exec", ns, "tc", "qdisc", "replace", "dev", dev, "root", "tbf",
                    "rate", rate, "burst", str(burst), "latency", "50ms")

    def sec_shaped(self):
        out = {"size": self.p["shaped_size"], "batches": self.p["shaped_batches"], "rounds": self.p["shaped_rounds"],
               "min_seconds": self.p.get("shaped_min_seconds", 0),
               "rates": {}}
        self.res["shaped"] = out
        try:
            srv, cli = self.ns_setup()
        except (OSError, subprocess.TimeoutExpired) as e:
            self.ns_cleanup()
            out.update(skipped=True, reason=str(e))
            log("\n== 6. shaped links\n  shaped links: skipped (needs root and network namespaces): %s" % e)
            for g in ("compressible data >= 3x link rate on 1 Gbit/s", "incompressible data loses < 5% with compression auto"):
                self.goal(g, None, "skipped")
            return
        try:
            self.shaped_measure(srv, cli, out)
        finally:
            self.ns_cleanup()
        self.shaped_report(out)

    def ns_server(self, srv, argv, log_path, env, pattern):
        p = self.procs.start(["ip", "netns", "exec", srv] + argv, log_path, env=env)
        if not wait_for_line(log_path, pattern, p):
            self.procs.stop(p)
            raise BenchError("%s in namespace did not start: %s" % (argv[0], open(log_path).read()[-300:]))
        return p

    def tensor_kinds(self):
        """The real float32 tensors (benchmarks/make_tensors.py, PyTorch on the CPU) as
        data kinds: {kind: "file:PATH"}; empty, with the reason logged, without torch."""
        if self._tensors is not None:
            return self._tensors
        self._tensors = {}
        if not self.p.get("tensors"):
            return self._tensors
        here = os.path.dirname(os.path.abspath(__file__))
        env = os.environ.get("CUDAREM_PYENV") or os.path.join(
            os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "cudarem", "pyenv")
        py = os.path.join(env, "bin", "python")
        dest = os.path.join(self.out, "tensors")
        names = ("weights", "activations", "gradients")
        if not all(os.path.exists(os.path.join(dest, n + ".f32")) for n in names):
            if not os.path.exists(py):
                log("  real tensors: n/a (no framework environment at %s: tools/python-env.sh makes it)" % env)
                return self._tensors
            r = subprocess.run([py, os.path.join(here, "make_tensors.py"), dest], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=600)
            if r.returncode != 0:
                log("  real tensors: n/a (make_tensors.py: %s)" % r.stdout.strip()[-300:])
                return self._tensors
        self._tensors = {n: "file:" + os.path.join(dest, n + ".f32") for n in names}
        return self._tensors

    def shaped_kinds(self):
        kinds = {d: d for d in self.p["shaped_data"]}
        kinds.update(self.tensor_kinds())
        return kinds

    def shaped_measure(self, srv, cli, out):
        size, batches = self.p["shaped_size"], self.p["shaped_batches"]
        in_cli = ["ip", "netns", "exec", cli]
        raw_addr = "tcp:%s:%d" % (NS_NET[0], NS_PORT_RAW)
        crm_addr = "tcp:%s:%d" % (NS_NET[0], NS_PORT_CRM)
        kinds = self.shaped_kinds()
        out["data"] = list(kinds)
        rawp = self.ns_server(srv, [self.prog("bench_raw"), "serve", raw_addr], os.path.join(self.tmp, "ns-raw.log"),
                              None, "listening")
        try:
            for rate in self.p["shaped_rates"]:
                self.ns_shape(srv, cli, rate)
                o = {"link_GBps": RATE_GBPS[rate]}
                o["raw"] = self.raw_stream(raw_addr, "bench_raw stream %s" % rate, sizes=[size], batches=batches,
                                           argv_prefix=in_cli)
                runs = {}
                lp = os.path.join(self.tmp, "ns-server-%s.log" % rate)
                sp = self.ns_server(srv, [self.server, "--insecure", "--listen", crm_addr, "--log-level", "info"], lp,
                                    None, "serving the")
                try:   # the client chooses the compression; the modes alternate, so drift hits them alike
                    for kind, data in kinds.items():
                        for _ in range(self.p["shaped_rounds"]):
                            for mode in SHAPED_MODES:
                                extra = {"CUDAREM_COMPRESS": mode,
                                         "BENCH_MIN_SECONDS": str(self.p.get("shaped_min_seconds", 0))}
                                d = self.copy_run(self.env(crm_addr, extra=extra),
                                                  "bench_cuda copy %s %s %s" % (rate, mode, kind), data=data,
                                                  sizes=[size], batches=batches, dirs="h2d_pinned,d2h_pinned",
                                                  argv_prefix=in_cli)
                                runs.setdefault((mode, kind), []).append(d)
                finally:
                    self.procs.stop(sp)
                for (mode, kind), ds in runs.items():
                    best = best_of(ds)
                    if best:
                        best["spread"] = spread_of(ds)
                        best["per_round"] = {k: [d[k][0] if d else None for d in ds]
                                             for k in ("h2d_pinned_GBps", "d2h_pinned_GBps")}
                    o.setdefault(mode, {})[kind] = best
                out["rates"][rate] = o
        finally:
            self.procs.stop(rawp)

    @staticmethod
    def shaped_rate(o, mode, kind, direction):
        d = o.get(mode, {}).get(kind)
        return d["%s_pinned_GBps" % direction][0] if d else None

    @staticmethod
    def auto_vs_better(o, kind, direction):
        """auto / the better of on and off, round by round (the modes take turns within
        a round, so drift hits the three alike): (median, lowest, highest), or None.
        The ratio of the best rounds would favour whichever mode varies most."""
        key = "%s_pinned_GBps" % direction
        per = [o.get(m, {}).get(kind, {}).get("per_round", {}).get(key, []) for m in SHAPED_MODES]
        ratios = sorted(a / max(on, off) for a, on, off in zip(*per) if a and on and off)
        if not ratios:
            return None
        n = len(ratios)
        return ((ratios[n // 2] + ratios[(n - 1) // 2]) / 2, ratios[0], ratios[-1])

    def shaped_report(self, out):
        rows = []
        g1, g2 = {}, None   # compressible kind -> worst direction / link rate; incompressible loss
        worst = []          # (auto / better of on and off: median over rounds, lowest, highest, where)
        for rate, o in out["rates"].items():
            raw = o.get("raw")
            rows.append([rate, "raw socket", "random", f2(raw["write_GBps"][0]) if raw else "n/a",
                         f2(raw["read_GBps"][0]) if raw else "n/a", "-", "-"])
            for kind in out.get("data", []):
                for mode in SHAPED_MODES:
                    h, d = self.shaped_rate(o, mode, kind, "h2d"), self.shaped_rate(o, mode, kind, "d2h")
                    if h is not None:
                        sp = o[mode][kind].get("spread", {})
                        rows.append([rate, "CUDAREM_COMPRESS=%s" % mode, kind, f2(h), f2(d), f2(h / o["link_GBps"]) + "x",
                                     "%s / %s" % tuple(f2(100 * sp.get("%s_pinned_GBps" % k, [0])[0], "%.0f%%")
                                                       for k in ("h2d", "d2h"))])
                for direction in ("h2d", "d2h"):
                    r = self.auto_vs_better(o, kind, direction)
                    if r:
                        worst.append(r + ("%s %s %s" % (rate, kind, direction.upper()),))
                a = o.get("auto", {}).get(kind)
                f = o.get("off", {}).get(kind)
                if rate == "1gbit" and kind in ("zeros", "sparse", "lowentropy") and a:
                    g1[kind] = min(a["h2d_pinned_GBps"][0], a["d2h_pinned_GBps"][0]) / o["link_GBps"]
                if rate == "1gbit" and kind == "random" and a and f:
                    g2 = 1 - min(a["h2d_pinned_GBps"][0] / f["h2d_pinned_GBps"][0],
                                 a["d2h_pinned_GBps"][0] / f["d2h_pinned_GBps"][0])
        out["auto_vs_best"] = [{"where": w, "ratio": r, "rounds": [lo, hi]} for r, lo, hi, w in worst]
        table("6. shaped links (veth between two network namespaces, tbf both ways), %s copies, GB/s, best of %d rounds, "
              "each the median of %d copies or more, repeated for at least %.1f s; "
              "x = H2D / link rate; spread = (best - worst) / best over the rounds"
              % (fmt_size(out["size"]), out.get("rounds", 1), out.get("batches", 1), out.get("min_seconds", 0)), ["link", "path", "data", "H2D pinned", "D2H pinned", "x link",
                                                                 "spread H2D / D2H"], rows)
        self.goal("compressible data (%s) >= %.0fx link rate on 1 Gbit/s (auto)" % (", ".join(g1) or "none", GOAL_COMPRESS_X),
                  min(g1.values()) >= GOAL_COMPRESS_X if g1 else None,
                  ", ".join("%s %sx" % (k, f2(v)) for k, v in g1.items()) or "n/a")
        self.goal("incompressible data loses < %d%% with compression auto vs off (1 Gbit/s)" % (GOAL_INCOMPRESSIBLE_LOSS * 100),
                  None if g2 is None else g2 < GOAL_INCOMPRESSIBLE_LOSS, "%s loss" % f2(g2 * 100 if g2 is not None else None, "%.1f%%"))
        low = min(worst) if worst else None
        self.goal("compression auto within %d%% of the better of on and off (every link, data kind, direction; "
                  "median over the rounds of auto / the better in the same round)"
                  % round(100 * (1 - GOAL_AUTO_OF_BEST)), None if low is None else low[0] >= GOAL_AUTO_OF_BEST,
                  "worst %s of the better (%s; rounds %s-%s); %d of %d within" % (
                      f2(low[0] * 100, "%.0f%%"), low[3], f2(low[1] * 100, "%.0f"), f2(low[2] * 100, "%.0f%%"),
                      sum(r[0] >= GOAL_AUTO_OF_BEST for r in worst), len(worst))
                  if low else "n/a")

    # ---- outputs -----------------------------------------------------------------------

    def judged(self):
        """Only the default profile repeats its measurements enough to judge a goal;
        the quick and smoke ones report the figures alone."""
        return self.profile_name == "default"

    def goal(self, text, ok, detail):
        status = "n/a" if ok is None else "-" if not self.judged() else "PASS" if ok else "MISS"
        self.goals.append({"goal": text, "status": status, "detail": detail})

    def print_goals(self):
        if self.judged():
            log("\n== goals (from the issue; a MISS is reported, not failed)")
        else:
            log("\n== the figures the goals are judged on (%s profile: too short to judge them; `make bench` does)"
                % self.profile_name)
        for g in self.goals:
            log("  %-4s %s: %s" % (g["status"], g["goal"], g["detail"]))

    def plots(self):
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            log("\nplots: skipped (matplotlib is not installed: run tools/install-deps.sh)")
            return []
        made = []
        c = self.res.get("copy", {})
        if c:
            fig, axes = plt.subplots(2, 3, figsize=(15, 8), sharex=True)
            sizes = [s / MIB for s in c["sizes"]]
            for col, t in enumerate(("tcp", "unix", "shm")):
                for row, (key, rkey, title) in enumerate((("h2d_pinned_GBps", "write_GBps", "host to device"),
                                                         ("d2h_pinned_GBps", "read_GBps", "device to host"))):
                    ax = axes[row][col]
                    raw, rem, loc = c[t].get("raw"), c[t]["remote"], c.get("local")
                    if raw:
                        ax.plot(sizes, raw[rkey], "o-", label="raw socket")
                    if rem:
                        ax.plot(sizes, rem[key], "s-", label="remote (pinned)")
                        if row == 0:
                            ax.plot(sizes, rem["h2d_pageable_GBps"], "^-", label="remote (pageable)")
                    if loc:
                        ax.plot(sizes, loc[key], "x--", label="local")
                    ax.set_xscale("log", base=2)
                    ax.set_yscale("log")
                    ax.set_title("%s, %s" % (title, t))
                    ax.set_ylabel("GB/s")
                    ax.grid(True, alpha=0.3)
                    ax.legend(fontsize=8)
            for ax in axes[1]:
                ax.set_xlabel("copy size (MiB)")
            fig.suptitle("cudaMemcpy bandwidth: remote vs raw socket vs local")
            fig.tight_layout()
            made.append(self.save(fig, plt, "bandwidth.png"))
        lat = self.res.get("latency", {})
        ts = [t for t in ("tcp", "unix") if t in lat]
        if ts:
            fig, ax = plt.subplots(figsize=(7, 4))
            x = range(len(ts))
            ax.bar([i - 0.2 for i in x], [lat[t]["raw_p50_us"] for t in ts], 0.4, label="raw 8-byte round trip")
            ax.bar([i + 0.2 for i in x], [lat[t]["sync_call_p50_us"] for t in ts], 0.4, label="cudaMemGetInfo (remote)")
            ax.set_xticks(list(x))
            ax.set_xticklabels(ts)
            ax.set_ylabel("p50 latency (us)")
            ax.legend()
            ax.set_title("synchronous call latency")
            fig.tight_layout()
            made.append(self.save(fig, plt, "latency.png"))
        sg = self.res.get("sgemm", {})
        if sg.get("available"):
            fig, ax = plt.subplots(figsize=(7, 4.5))
            for who, style in (("local", "--"), ("remote", "-")):
                ax.plot(sg["n"], sg[who]["resident_GFLOPs"], "o" + style, label="%s, data resident" % who)
                ax.plot(sg["n"], sg[who]["with_copies_GFLOPs"], "s" + style, label="%s, with copies" % who)
            ax.set_xscale("log", base=2)
            ax.set_xlabel("N")
            ax.set_ylabel("GFLOP/s")
            ax.legend(fontsize=8)
            ax.set_title("cuBLAS SGEMM: local vs remote")
            ax.grid(True, alpha=0.3)
            fig.tight_layout()
            made.append(self.save(fig, plt, "sgemm.png"))
        sh = self.res.get("shaped", {})
        if sh.get("rates"):
            labels, bars = [], {m: [] for m in SHAPED_MODES}
            for rate, o in sh["rates"].items():
                for kind in sh.get("data", []):
                    labels.append("%s\n%s" % (rate, kind))
                    for m in SHAPED_MODES:
                        v = self.shaped_rate(o, m, kind, "h2d")
                        bars[m].append(v / o["link_GBps"] if v else 0)
            fig, ax = plt.subplots(figsize=(max(6, len(labels) * 1.2), 4.5))
            x = range(len(labels))
            for i, m in enumerate(SHAPED_MODES):
                ax.bar([j + (i - 1) * 0.27 for j in x], bars[m], 0.27, label="CUDAREM_COMPRESS=%s" % m)
            ax.axhline(1.0, color="k", linewidth=1, label="link rate")
            ax.axhline(GOAL_COMPRESS_X, color="k", linestyle=":", linewidth=1, label="goal for compressible data (1 Gbit/s)")
            ax.set_xticks(list(x))
            ax.set_xticklabels(labels, fontsize=7)
            ax.set_yscale("log")
            ax.set_ylabel("host-to-device throughput / link rate")
            ax.legend(fontsize=8)
            ax.set_title("shaped links: %s copies, compression auto, on and off" % fmt_size(sh["size"]))
            fig.tight_layout()
            made.append(self.save(fig, plt, "shaped.png"))
        return made

    def save(self, fig, plt, name):
        path = os.path.join(self.out, name)
        fig.savefig(path, dpi=100)
        plt.close(fig)
        return name

    def markdown(self, plots):
        m, r = self.machine, self.res
        lines = ["## Benchmarks", "",
                 "`make bench` (%s profile) on %s, %d cores, %s; %s. Local = %s. Ratios are taken within one run." % (
                     self.profile_name, m["cpu"], m["cores"], "GPU: " + "; ".join(m["gpus"]) if m["gpus"] else "no GPU",
                     "remote device: %s" % (r.get("remote_device") or {}).get("device", "?"), r.get("local_mode")), ""]
        lat = r.get("latency", {})
        rows = [[t, o["placement"], f2(o["raw_p50_us"]), f2(o["sync_call_p50_us"]), f2(o["sync_call_p99_us"]),
                 f2(o["ratio_p50"]) + "x"] for t in ("tcp", "unix") for o in lat.get(t + "_placements", [])]
        if rows:
            lines += ["**Synchronous call latency** (cudaMemGetInfo, us; servers pinned to CPU 0, the client on the "
                      "same core or another)", "",
                      md_table(["transport", "client", "raw round trip p50", "remote p50", "remote p99", "remote/raw"],
                               rows), ""]
        a = r.get("async", {})
        if a.get("remote"):
            k = a.get("kernels", {})
            lines += ["**Asynchronous calls**: cudaMemsetAsync %.2f us/call, cudaEventRecord %.2f us/call on the client; "
                      "%s round trips for %d queued calls besides the synchronises. Kernel launches: %s." % (
                          a["remote"]["memset_us_per_call"], a["remote"]["event_us_per_call"],
                          a.get("queued_round_trips"), 2 * a["n"],
                          "%.2f us/launch" % k["remote"]["launch_us_per_call"] if k.get("available") else "n/a (" + k.get("reason", "") + ")"), ""]
        c = r.get("copy", {})
        if c:
            rows = []
            loc = c.get("local")
            for i, s in enumerate(c["sizes"]):
                row = [fmt_size(s)]
                for t in ("tcp", "unix"):
                    raw, rem = c[t]["raw"], c[t]["remote"]
                    row += [f2(rem["h2d_pinned_GBps"][i]) if rem else "n/a",
                            f2(ratio(rem["h2d_pinned_GBps"][i], raw["write_GBps"][i]) * 100, "%.0f%%") if rem and raw else "n/a",
                            f2(rem["d2h_pinned_GBps"][i]) if rem else "n/a",
                            f2(ratio(rem["d2h_pinned_GBps"][i], raw["read_GBps"][i]) * 100, "%.0f%%") if rem and raw else "n/a"]
                for path in ("shm", "ring"):
                    shm = c.get(path, {}).get("remote")
                    for key in ("h2d_pinned_GBps", "d2h_pinned_GBps"):
                        row += [f2(shm[key][i]) if shm else "n/a",
                                f2(ratio(shm[key][i], loc[key][i]) * 100, "%.0f%%") if shm and loc else "n/a"]
                row += [f2(loc["h2d_pinned_GBps"][i]) if loc else "n/a"]
                rows.append(row)
            lines += ["**Copy bandwidth** (GB/s; TCP and Unix: the data channel's socket, % of a raw socket stream on "
                      "the same transport; shm: pinned memory shared with the server; ring: pinned memory private, copies "
                      "through the shared-memory ring; both % of the same copy in process)", "",
                      md_table(["size", "TCP H2D", "% raw", "TCP D2H", "% raw", "Unix H2D", "% raw", "Unix D2H", "% raw",
                                "shm H2D", "% local", "shm D2H", "% local", "ring H2D", "% local", "ring D2H", "% local",
                                "local H2D"], rows), ""]
        sg = r.get("sgemm", {})
        if sg.get("available"):
            rows = [[n, f2(sg["local"]["resident_GFLOPs"][i], "%.1f"), f2(sg["remote"]["resident_GFLOPs"][i], "%.1f"),
                     f2(sg["local"]["with_copies_GFLOPs"][i], "%.1f"), f2(sg["remote"]["with_copies_GFLOPs"][i], "%.1f")]
                    for i, n in enumerate(sg["n"])]
            lines += ["**cuBLAS SGEMM** (GFLOP/s)", "",
                      md_table(["N", "local resident", "remote resident", "local with copies", "remote with copies"], rows), ""]
        else:
            lines += ["**cuBLAS SGEMM**: n/a (%s)" % sg.get("reason", "not run"), ""]
        po = r.get("pool", {})
        if po.get("available"):
            rows = [[fmt_size(s)] + [f2(x) for x in self.pool_row(po["copy"], i)] for i, s in enumerate(po["sizes"])]
            lines += ["**Copies between two pooled servers** (CUDAREM_SERVER=A,B, Unix sockets, GB/s: cudaMemcpyPeer "
                      "from A's device to B's goes through the client; beside it the two halves on the same servers)", "",
                      md_table(["size", "peer A->B", "D2H from A", "H2D to B", "halves in turn", "peer / halves"], rows), ""]
        gr = r.get("graph", {}).get("rows", [])
        if gr:
            rows = [[x["n"]] + [f2(x[m][k], spec) if m in x else "n/a" for m in ("eager", "graph")
                                for k, spec in (("round_trips_per_step", "%.2f"), ("queued_bytes_per_step", "%.0f"),
                                                ("client_us_per_step", "%.1f"), ("ms_per_step", "%.2f"))] for x in gr]
            lines += ["**A step of N kernels, eager vs one CUDA graph** (remote over TCP; round trips and queued bytes "
                      "per step beyond the set-up; the client's time per step; the whole step with the device's work)", "",
                      md_table(["N", "eager RT", "eager B", "eager client us", "eager ms", "graph RT", "graph B",
                                "graph client us", "graph ms"], rows), ""]
        t = r.get("train", {})
        lines += ["**examples/train.py**: %s" % ("%.2f round trips per step" % t["round_trips_per_step"] if t.get("available")
                                                else "n/a (%s)" % t.get("reason", "not run")), ""]
        sh = r.get("shaped", {})
        if sh.get("rates"):
            rows = []
            for rate, o in sh["rates"].items():
                for kind in sh.get("data", []):
                    rows.append([rate, kind] + [f2(self.shaped_rate(o, m, kind, d)) for d in ("h2d", "d2h")
                                                for m in SHAPED_MODES])
            lines += ["**Shaped links** (%s copies over a tbf-shaped veth, GB/s, best of %d rounds, each the median of "
                      "%d copies or more over at least %.1f s; link 1 Gbit/s = 0.125 GB/s; weights, "
                      "activations and gradients are float32 tensors of a small network trained with PyTorch, "
                      "benchmarks/make_tensors.py)" % (fmt_size(sh["size"]), sh.get("rounds", 1), sh.get("batches", 1),
                                                       sh.get("min_seconds", 0)), "",
                      md_table(["link", "data"] + ["%s %s" % (d, m) for d in ("H2D", "D2H") for m in SHAPED_MODES], rows), ""]
        elif sh.get("skipped"):
            lines += ["**Shaped links**: skipped (%s)" % sh.get("reason"), ""]
        lines += ["**Goals**" if self.judged() else "**Figures the goals are judged on** (%s profile: too short to "
                  "judge them)" % self.profile_name, ""]
        lines += ["- %s %s: %s" % (g["status"], g["goal"], g["detail"]) for g in self.goals] + [""]
        lines += ["![%s](%s)" % (p, p) for p in plots]
        with open(os.path.join(self.out, "bench.md"), "w") as f:
            f.write("\n".join(lines) + "\n")

    def run(self):
        os.makedirs(self.out, exist_ok=True)
        t0 = time.monotonic()
        m = self.machine
        log("cudarem bench (%s profile): %s, %d cores, %.1f GiB; GPU: %s" % (
            self.profile_name, m["cpu"], m["cores"], m["memory_GiB"], "; ".join(m["gpus"]) or "none (emulated device)"))
        self.start_servers()
        log("remote device: %s; local: %s" % ((self.res.get("remote_device") or {}).get("device"), self.res["local_mode"]))
        only = set(self.args.only.split(",")) if self.args.only else set(SECTIONS)
        sections = [(name, getattr(self, "sec_" + name)) for name in SECTIONS if name != "shaped" and name in only]
        times = {}
        for name, fn in sections:
            s = time.monotonic()
            try:
                fn()
            except BenchError as e:
                self.failures.append("%s: %s" % (name, e))
                log("  ! section %s failed: %s" % (name, e))
            times[name] = round(time.monotonic() - s, 1)
        self.procs.stop_all()
        s = time.monotonic()
        if self.args.no_shaped or "shaped" not in only:
            self.res["shaped"] = {"skipped": True, "reason": "--no-shaped" if self.args.no_shaped else "--only"}
        else:
            try:
                self.sec_shaped()
            except BenchError as e:
                self.failures.append("shaped: %s" % e)
                log("  ! section shaped failed: %s" % e)
        times["shaped"] = round(time.monotonic() - s, 1)
        self.print_goals()
        self.res["goals"] = self.goals
        self.res["section_seconds"] = times
        self.res["duration_s"] = round(time.monotonic() - t0, 1)
        self.res["failures"] = self.failures
        plots = self.plots()
        with open(os.path.join(self.out, "bench.json"), "w") as f:
            json.dump(self.res, f, indent=1)
        self.markdown(plots)
        log("\nwrote %s/bench.json, bench.md%s (%.0f s; sections: %s)" % (
            self.out, "".join(", " + p for p in plots), self.res["duration_s"],
            ", ".join("%s %.0f s" % kv for kv in times.items())))
        if self.failures:
            log("benchmark programs failed:\n  " + "\n  ".join(self.failures))
            return 1
        return 0

    def cleanup(self):
        self.procs.stop_all()
        self.ns_cleanup()
        shutil.rmtree(self.tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build", help="build directory holding the shim, server and bench/bin")
    ap.add_argument("--out", default=None, help="output directory (default BUILD/bench)")
    ap.add_argument("--quick", action="store_true", help="about one minute (BENCH_QUICK=1)")
    ap.add_argument("--smoke", action="store_true", help="seconds: check that every program runs")
    ap.add_argument("--full", action="store_true", help="SGEMM up to N = 8192 without a GPU too")
    ap.add_argument("--no-shaped", action="store_true", help="skip the shaped-link section")
    ap.add_argument("--only", default=None, help="run only these sections, comma-separated: " + ", ".join(SECTIONS))
    args = ap.parse_args()
    args.out = args.out or os.path.join(args.build, "bench")
    bench = Bench(args)
    atexit.register(bench.cleanup)

    def on_signal(sig, _frame):
        raise SystemExit(128 + sig)   # unwinds through cleanup

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    try:
        return bench.run()
    except BenchError as e:
        log("bench: %s" % e)
        return 1
    finally:
        bench.cleanup()


if __name__ == "__main__":
    sys.exit(main())
