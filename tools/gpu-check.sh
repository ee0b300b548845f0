#!/usr/bin/env bash
# gpu-check.sh -- the checks that need a real GPU, as one script for a lent GPU
# machine: build; run every nvcc test program directly against the local CUDA
# libraries (proving the tests' expectations on real hardware); run the test
# suites against a real-GPU server on loopback; run the demo, train.py and stock
# torch (tests/python/torch_basic.py, examples/train_torch.py; the latter also over
# a 30 ms link, tools/shaped-train.sh) locally and through the shim side by side;
# run the benchmark harness. Logs go to $OUT (default ./gpu-check-out). Without
# scikit-learn on the GPU host, train_torch.py reads build/digits.npz: write it on
# the CPU machine first (examples/train_torch.py --save-data build/digits.npz).
#   usage: tools/gpu-check.sh        (or: make gpu-check)
set -uo pipefail
out=${OUT:-$PWD/gpu-check-out}
mkdir -p "$out"
exec > >(tee "$out/gpu-check.log") 2>&1
status=0
step() { echo; echo "=== $*"; }

step "machine"
nvidia-smi -L || true
nvcc --version | tail -2

step "build"
make -j"$(nproc)" all >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }

step "test programs directly on the local GPU (no shim)"
local_progs=()
for rt in "" -static; do # each program built with the shared and with the static runtime
    local_progs+=(build/cuda$rt/{device,memory,copy,stream,event,errors,threads,ptds,roundtrips,blas} build/dnn$rt/dnn_net
                  build/kernels$rt/{vadd,vadd_compressed,vadd_ptx,saxpy,scalars,symbols,multi_tu,dlopen,badlaunch,loop})
done
local_progs+=(build/driver/rt_fallback build/driver/drv_vmm)
for p in "${local_progs[@]}"; do
    [ -x "$p" ] || { echo "missing $p"; status=1; continue; }
    log="$out/local-$(basename "$(dirname "$p")")-$(basename "$p").log"
    if timeout 300 "$p" >"$log" 2>&1; then echo "local PASS $p";
    else echo "local FAIL $p"; grep -m5 FAIL "$log"; status=1; fi
done

step "driver-API program directly on the local driver (cubin and PTX both run on a GPU)"
if timeout 300 build/driver/drv_api build/driver/vadd.cubin build/driver/vadd.ptx >"$out/local-drv_api.log" 2>&1; then
    echo "local PASS drv_api"
else
    echo "local FAIL drv_api"; grep -m5 FAIL "$out/local-drv_api.log"; status=1
fi

step "unit and end-to-end suites against a real-GPU server (CUDAREM_TEST_DEVICE=cuda)"
# The framework suite needs the CPU machine's venv (CuPy, numba); the GPU host
# has no package registry, so its stock torch is exercised further down instead.
# The pool suite sizes emulated devices to tell its servers apart: a GPU pool has
# its own step below.
suites=$(ls build/tests/check_* | grep -v -e check_e2e_frameworks -e check_e2e_pool)
CUDAREM_TEST_DEVICE=cuda timeout 1200 tests/run-tests.sh $suites >"$out/suites.log" 2>&1 || status=1
grep -E "^== |Checks:|passed, " "$out/suites.log"

sock=/tmp/cudarem-gpu-check.sock
build/cudarem-server --device cuda --listen "unix:$sock" --listen tcp:127.0.0.1:17470 --insecure --log-level info \
    --metrics tcp:127.0.0.1:17480 --http tcp:127.0.0.1:17481 2>"$out/server.log" &
srv=$!
for _ in $(seq 200); do [ -S "$sock" ] && break; sleep 0.05; done
remote() { LD_PRELOAD=$PWD/build/libcudarem.so CUDAREM_SERVER=unix:$sock CUDAREM_STATS=1 "$@"; }

step "demo: local GPU vs remote through the shim"
build/examples/remote_copy 1024 | tee "$out/demo-local.log"
remote build/examples/remote_copy 1024 2>&1 | tee "$out/demo-remote.log" || status=1

step "the operator's view of a GPU server: cudarem-smi, metrics, the dashboard's status, while a copy loop runs"
remote build/cuda/copyloop 3000 >"$out/copyloop.log" 2>&1 &
loop=$!
sleep 2
build/cudarem-smi -s "unix:$sock" | tee "$out/smi.txt" || status=1
build/cudarem-smi -s "unix:$sock" --json >"$out/smi.json" || status=1
python3 -c "import urllib.request as u; print(u.urlopen('http://127.0.0.1:17480/metrics').read().decode())" \
    >"$out/metrics.txt" || status=1
grep -E "^DCGM_FI_DEV_FB_(TOTAL|USED)|^cudarem_sessions |_count " "$out/metrics.txt"
python3 -c "import urllib.request as u; print(u.urlopen('http://127.0.0.1:17481/api/status').read().decode())" \
    >"$out/dashboard-status.json" || status=1
wait $loop || status=1

step "driver-API program through the shim (LD_LIBRARY_PATH for its DT_NEEDED libcuda.so.1)"
LD_LIBRARY_PATH=$PWD/build/lib remote build/driver/drv_api build/driver/vadd.cubin build/driver/vadd.ptx \
    2>&1 | tee "$out/drv_api-remote.log" | tail -3 || status=1
grep -q "PASS drv_api" "$out/drv_api-remote.log" || status=1
LD_LIBRARY_PATH=$PWD/build/lib remote build/driver/drv_vmm 2>&1 | tee "$out/drv_vmm-remote.log" | tail -3 || status=1
grep -q "PASS drv_vmm" "$out/drv_vmm-remote.log" || status=1

step "torch through the shim: tests/python/torch_basic.py, kernels on the GPU server"
if python3 -c "import torch, numpy" 2>/dev/null; then
    LD_LIBRARY_PATH=$PWD/build/lib CUDAREM_EXPECT_CUBIN=1 remote timeout 600 python3 tests/python/torch_basic.py \
        2>&1 | tee "$out/torch_basic-remote.log" | grep -E "^(FAIL|PASS|FAILED|STOP)|per step|by call" || true
    grep -q "^PASS torch_basic" "$out/torch_basic-remote.log" || status=1

    step "train_torch.py: local GPU vs remote through the shim (goal: remote/local step time <= 1.10)"
    data=()
    python3 -c "import sklearn" 2>/dev/null || data=(--data build/digits.npz) # written on the CPU machine
    timeout 600 python3 examples/train_torch.py "${data[@]}" --json "$out/train_torch-local.json" 2>&1 |
        tee "$out/train_torch-local.log" || status=1
    remote timeout 900 python3 examples/train_torch.py "${data[@]}" --json "$out/train_torch-remote.json" 2>&1 |
        tee "$out/train_torch-remote.log" || status=1
    python3 - "$out/train_torch-local.json" "$out/train_torch-remote.json" <<'PY' || status=1
import json, statistics, sys
local, remote = (json.load(open(p)) for p in sys.argv[1:])
ratio = remote["median_step_s"] / local["median_step_s"]
trips = remote.get("round_trips_per_step") or [0]
print("step: local %.2f ms, remote %.2f ms, ratio %.3f (goal <= 1.10): %s" % (
    local["median_step_s"] * 1e3, remote["median_step_s"] * 1e3, ratio, "PASS" if ratio <= 1.10 else "MISS"))
print("round trips per warm step: median %d, max %d (goal 1): %s" % (
    statistics.median(trips), max(trips), "PASS" if max(trips) <= 1 else "MISS"))
print("round trips by call: %s" % remote.get("round_trips_by_call"))
PY

    step "train_torch.py over a 30 ms link (goal: local step + one round trip + 10 %)"
    tools/shaped-train.sh "$out/train_torch-local.json" "$out" "${data[@]}" --epochs 3 || status=1
else
    echo "NOT RUN: no torch (with numpy) on this machine"
fi

step "a pool of two GPU servers on this GPU: tests/cuda/pool and torch_pool.py (memory mapped in address slots)"
build/cudarem-server --device cuda --listen unix:/tmp/cudarem-pool-b.sock --insecure --log-level info \
    2>"$out/server-pool-b.log" &
srv_b=$!
for _ in $(seq 200); do [ -S /tmp/cudarem-pool-b.sock ] && break; sleep 0.05; done
# the GPU's memory as CUDA counts it (cudaMemGetInfo's total), in MiB
total=$(( $(build/cuda/meminfo | awk '{print $2}') >> 20 ))
pool="unix:$sock,unix:/tmp/cudarem-pool-b.sock"
for prog in build/cuda/pool build/cuda-static/pool; do
    POOL_MEM_MIB="$total,$total" CUDAREM_SERVER=$pool LD_PRELOAD=$PWD/build/libcudarem.so \
        CUDAREM_STATS=1 timeout 300 "$prog" 2>&1 | tee "$out/pool-$(basename "$(dirname "$prog")").log" | tail -3
    grep -q "^PASS pool" "$out/pool-$(basename "$(dirname "$prog")").log" || status=1
done
if python3 -c "import torch" 2>/dev/null; then
    POOL_MEM_MIB="$total,$total" CUDAREM_SERVER=$pool LD_PRELOAD=$PWD/build/libcudarem.so \
        LD_LIBRARY_PATH=$PWD/build/lib timeout 600 python3 tests/python/torch_pool.py 2>&1 |
        tee "$out/torch_pool.log" | grep -E "^(FAIL|PASS|FAILED|STOP)" || true
    grep -q "^PASS torch_pool" "$out/torch_pool.log" || status=1
fi
grep -h "address slot" "$out/server.log" "$out/server-pool-b.log" | head -4
build/cudarem-smi -s "$pool" >"$out/smi-pool.txt" 2>&1 || true
kill -TERM $srv_b; wait $srv_b

step "train.py: local GPU vs remote through the shim"
timeout 600 python3 examples/train.py 2>&1 | tee "$out/train-local.log" || status=1
remote timeout 600 python3 examples/train.py 2>&1 | tee "$out/train-remote.log" || status=1
kill -TERM $srv; wait $srv

step "benchmarks (local GPU vs remote)"
timeout 900 make bench >"$out/bench.log" 2>&1 || status=1
tail -60 "$out/bench.log"
cp -r build/bench "$out/" 2>/dev/null

exit $status
