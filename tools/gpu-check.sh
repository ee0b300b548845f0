#!/usr/bin/env bash
# gpu-check.sh -- the checks that need a real GPU, as one script for a lent GPU
# machine: build, run every nvcc test program directly against the local CUDA
# runtime (proving the tests' expectations on real hardware), run the test suites
# against a real-GPU server on loopback, and run the demo locally and remotely
# side by side. Logs go to $OUT (default ./gpu-check-out).
#   usage: tools/gpu-check.sh        (or: make gpu-check)
set -uo pipefail
out=${OUT:-$PWD/gpu-check-out}
mkdir -p "$out"
exec > >(tee "$out/gpu-check.log") 2>&1
jobs=$(nproc)
status=0
step() { echo; echo "=== $*"; }

step "machine"
nvidia-smi -L || true
nvcc --version | tail -2

step "build"
make -j"$jobs" all >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }

step "test programs directly on the local GPU (no shim)"
for p in build/cuda/{device,memory,copy,stream,event,errors,threads,ptds}; do
    if "$p" >"$out/local-$(basename "$p").log" 2>&1; then echo "local PASS $(basename "$p")";
    else echo "local FAIL $(basename "$p")"; grep FAIL "$out/local-$(basename "$p").log" | head -5; status=1; fi
done

step "unit and end-to-end suites against a real-GPU server"
CUDAREM_TEST_DEVICE=cuda tests/run-tests.sh build/tests/check_* >"$out/suites.log" 2>&1 || status=1
grep -E "^== |Checks:|passed, " "$out/suites.log"

step "demo: local GPU vs remote through the shim (same program, same run)"
build/examples/remote_copy 1024 | tee "$out/demo-local.log"
sock=/tmp/cudarem-gpu-check.sock
build/cudarem-server --device cuda --listen "unix:$sock" --log-level info 2>"$out/server.log" &
srv=$!
for _ in $(seq 200); do [ -S "$sock" ] && break; sleep 0.05; done
LD_PRELOAD=$PWD/build/libcudarem.so CUDAREM_SERVER=unix:$sock CUDAREM_STATS=1 \
    build/examples/remote_copy 1024 2>&1 | tee "$out/demo-remote-unix.log" || status=1
kill -TERM $srv; wait $srv

exit $status
