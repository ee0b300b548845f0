#!/usr/bin/env bash
# gpu-check.sh -- the GPU run: on a lent GPU machine (a short lease, no package
# registry, nothing built there) from the bundle tools/gpu-bundle.sh packed on the
# CPU machine, or on an operator's own GPU host from a build tree. Six phases in
# order of value, each capped in time, every result written as soon as it is known:
#   1 env        the GPU, driver and glibc; the carried Debian libraries unpacked into
#                a private prefix (used for what the machine lacks); NVIDIA's own
#                libraries found (toolkit, torch's wheels); what the server resolves
#   2 programs   a cudarem-server on the GPU; local runs beside runs through the shim:
#                device queries, copies 4 KiB-256 MiB both ways, SGEMM N = 1024-8192,
#                kernels, CUDA graphs (also through a --graph-capture server), cuBLAS, cuDNN,
#                a driver-API program, static-runtime builds
#   3 torch      examples/train_torch.py local and through the shim (accuracy, step
#                time ratio, round trips per warm step); tests/python/torch_basic.py
#                (a convolution forward and backward through NVIDIA's cuDNN on our driver);
#                train_torch.py --graph (the step in a CUDA graph) and --compile
#                (torch.compile mode="reduce-overhead"), local and through the shim
#   4 frameworks tests/python/cupy_basic.py and numba_basic.py through the shim
#   5 suites     Check suites against GPU servers (CUDAREM_TEST_DEVICE=cuda), at once
#   6 bench      run-bench.py's latency, async, copy and sgemm sections
# --dry-run is the same script on a machine without a GPU (make test runs it): the
# emulated device stands in, local runs are skipped with the reason, workloads are
# small, and every carried library is used (proving the bundle complete).
#
# Results, at most 8 files in $OUT (default ./gpu-check-out): summary.txt (a line
# per check: PASS, FAIL, CAPPED (cut by its time cap), SKIP with why), env.txt,
# programs.log, torch.log, frameworks.log, suites.log, bench.log, server.log.
# Exit status 1 when a check failed; a CAPPED or SKIP line is no failure.
#
#   usage: tools/gpu-check.sh [--dry-run] [--bundle FILE] [--budget SECONDS] [--unlimited]
#     --bundle FILE   extract FILE (make gpu-bundle's) at the repository root first;
#                     default: build/gpu-bundle.tar.xz when build/cudarem-server is absent
#     --budget S      end within S seconds (default 420: a 15-minute lease, less the
#                     machine's start (1-2 min), the transfers, and a short rerun)
#     --unlimited     an operator's own GPU host: no budget, phases capped at an hour,
#                     the benchmarks' default profile
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
root=$PWD
dry=0 bundle="" budget=420 unlimited=0
while [ $# -gt 0 ]; do
    case $1 in
        --dry-run) dry=1 ;;
        --bundle) bundle=$2; shift ;;
        --budget) budget=$2; shift ;;
        --unlimited) unlimited=1; budget=86400 ;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "gpu-check: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
out=${OUT:-$root/gpu-check-out}
mkdir -p "$out"
tmp=$(mktemp -d /tmp/cudarem-gpu-check.XXXXXX)
summary=$out/summary.txt
: >"$summary"
status=0
start=$(date +%s)
deadline=$((start + budget))
pids=()
cleanup() { for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

now() { date +%s; }
# A summary line: on stdout and appended to summary.txt at once.
say() { printf '%s\n' "$*" | tee -a "$summary"; }
skip() { say "SKIP  $1: $2"; }

# phase NAME SECONDS: starts a phase whose checks end by now + SECONDS (or the budget's end).
phase() {
    local want=$2
    [ $unlimited = 1 ] && want=3600
    phase_end=$(( $(now) + want ))
    [ $phase_end -le $((deadline - 5)) ] || phase_end=$((deadline - 5))
    say ""
    say "=== phase $1 (cap $((phase_end - $(now))) s, $(( $(now) - start )) s into the run)"
}
left() { local l=$((phase_end - $(now))); [ $l -gt 0 ] && echo $l || echo 0; }

# check LABEL LOG CMD...: runs CMD, bounded by what is left of the phase, output
# appended to LOG; one summary line. Returns CMD's status (124 when capped).
check() {
    local label=$1 log=$2 t0 rc cap
    shift 2
    cap=$(left)
    if [ "$cap" -lt 2 ]; then say "CAPPED $label: no time left in the phase"; return 124; fi
    printf '\n--- %s: %s\n' "$label" "$*" >>"$log"
    t0=$(date +%s.%N)
    timeout -k 5 "$cap" "$@" >>"$log" 2>&1
    rc=$?
    local secs
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
    case $rc in
        0) say "PASS  $label (${secs} s)" ;;
        124|137) say "CAPPED $label: cut after ${secs} s (phase cap)"; rc=124 ;;
        *) say "FAIL  $label (exit $rc after ${secs} s; $(basename "$log"))"; status=1
           tail -5 "$log" | sed 's/^/      | /' ;;
    esac
    return $rc
}

# ---- the build: from the bundle, or in place ----------------------------------------
if [ -z "$bundle" ] && [ ! -x build/cudarem-server ] && [ -f build/gpu-bundle.tar.xz ]; then
    bundle=build/gpu-bundle.tar.xz
fi
if [ -n "$bundle" ]; then # Python's tarfile where tar has no xz
    tar -xJf "$bundle" -C "$root" 2>/dev/null ||
        python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$bundle" "$root" ||
        { echo "gpu-check: cannot extract $bundle" >&2; exit 1; }
fi
[ -x build/cudarem-server ] || { echo "gpu-check: no build/cudarem-server: make gpu-bundle (or make) first" >&2; exit 1; }

gpu=0
if [ $dry = 0 ] && nvidia-smi -L >/dev/null 2>&1; then gpu=1; fi
if [ $dry = 0 ] && [ $gpu = 0 ]; then
    echo "gpu-check: nvidia-smi finds no GPU here: run with --dry-run to check the run without one" >&2
    exit 1
fi
device=$([ $gpu = 1 ] && echo cuda || echo emu)
no_local="dry run: no GPU, the emulated device stands in for it"
PY=${GPU_CHECK_PYTHON:-python3}

# ---- phase 1: environment ------------------------------------------------------------
phase env 20
env_txt=$out/env.txt
{
    echo "date: $(date -u +%FT%TZ)  host: $(hostname)  cores: $(nproc)  kernel: $(uname -r)"
    echo "os: $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")  glibc: $(ldd --version | head -1 | awk '{print $NF}')"
    [ -f build/gpu-bundle.txt ] && { echo; cat build/gpu-bundle.txt; }
    echo
    if [ $gpu = 1 ]; then
        nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv
        nvidia-smi -L
    else
        echo "GPU: none ($no_local)"
    fi
    command -v nvcc >/dev/null && nvcc --version | tail -2
    echo "python: $PY = $($PY -c 'import sys; print(sys.executable, sys.version.split()[0])' 2>&1)"
    for m in torch cupy numba numba.cuda sklearn; do
        echo "  $m: $($PY -c "import $m as x; print(getattr(x, '__version__', 'present'))" 2>&1 | tail -1)"
    done
} >"$env_txt" 2>&1
glibc_here=$(ldd --version | head -1 | awk '{print $NF}')
glibc_needed=$(sed -n 's/^glibc needed: //p' build/gpu-bundle.txt 2>/dev/null)
if [ -n "$glibc_needed" ] && [ "$(printf '%s\n%s\n' "$glibc_needed" "$glibc_here" | sort -V | head -1)" != "$glibc_needed" ]; then
    say "FAIL  glibc: the bundle needs $glibc_needed, this machine has $glibc_here"; status=1
fi

# The carried Debian packages, unpacked into a private prefix (never into /); a
# directory of links to the libraries used from it: those this machine lacks (all
# of them in a dry run, which proves the bundle complete).
deps=$root/build/gpu-deps
carried=
if ls build/gpu-debs/*.deb >/dev/null 2>&1; then
    rm -rf "$deps" && mkdir -p "$deps/root" "$deps/lib"
    for d in build/gpu-debs/*.deb; do dpkg -x "$d" "$deps/root" || { say "FAIL  unpack $d"; status=1; }; done
    used=() have=()
    while read -r so; do
        name=$(basename "$so")
        if [ $dry = 0 ] && ldconfig -p | grep -q "^[[:space:]]*$name "; then have+=("$name"); continue; fi
        ln -sf "$so" "$deps/lib/$name"
        used+=("$name")
    done < <(find "$deps/root" -name 'lib*.so.*' \( -type f -o -type l \) | grep -E '\.so\.[0-9]+$' |
             grep -Ev '/lib(blas|lapack)\.so') # openblas's alternatives for the reference BLAS: not ours
    carried=$deps/lib
    say "PASS  carried libraries: used ${#used[@]} (${used[*]:-none}); the machine's own: ${#have[@]} (${have[*]:-none})"
fi

# NVIDIA's libraries the GPU server loads: the machine's loader path, the toolkit,
# the Python wheels' nvidia/*/lib folders (cuDNN comes with torch).
nvdirs=()
site=$($PY -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null)
nvfound=()
for so in libcuda.so.1 libnvidia-ml.so.1 libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libcudnn.so.9; do
    path="" where=LD_LIBRARY_PATH
    IFS=: read -ra lddirs <<<"${LD_LIBRARY_PATH:-}"
    for d in "${lddirs[@]}"; do [ -n "$d" ] && [ -e "$d/$so" ] && { path=$d/$so; break; }; done
    [ -n "$path" ] || { path=$(ldconfig -p | awk -v n="$so" '$1 == n {print $NF; exit}'); where="the loader's cache"; }
    if [ -z "$path" ]; then
        path=$(ls /usr/local/nvidia/lib64/$so /usr/local/cuda/lib64/$so /usr/local/cuda/targets/x86_64-linux/lib/$so \
                  $(for s in $site; do echo "$s"/nvidia/*/lib/$so "$s"/nvidia/cu13/lib/$so; done) 2>/dev/null | head -1)
        where=$(dirname "$path" 2>/dev/null)
        [ -n "$path" ] && nvdirs+=("$where")
    fi
    echo "NVIDIA $so: ${path:-not found}${path:+ (from $where)}" >>"$env_txt"
    nvfound+=("$so: ${path:-not found}")
    if [ -z "$path" ] && [ $gpu = 1 ]; then say "FAIL  NVIDIA's $so not found"; status=1; fi
done
say "      NVIDIA's libraries$([ $gpu = 1 ] || echo ' (found, not used in a dry run)'): $(printf '%s; ' "${nvfound[@]}")"
nvpath=$(printf '%s\n' "${nvdirs[@]}" | sort -u | paste -sd:)
# The dry run leaves NVIDIA's libraries out: the emulated device needs none.
[ $gpu = 1 ] || nvpath=
LD_LIBRARY_PATH=$(printf '%s' "$carried${carried:+:}$nvpath${nvpath:+:}${LD_LIBRARY_PATH:-}" | sed 's/:$//')
export LD_LIBRARY_PATH
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH" >>"$env_txt"
unresolved=$(for f in build/cudarem-server build/libcudarem.so build/libcudarem-emu.so build/cudarem-smi \
                      build/bench/bin/bench_cuda build/tests/check_e2e_programs; do
                 ldd "$f" | sed "s|^|$f: |"; done | tee -a "$env_txt" | grep "not found")
if [ -n "$unresolved" ]; then say "FAIL  libraries not found: $unresolved"; status=1
else say "PASS  every library of the server, shim, emulated device and suites resolves"; fi
if [ $dry = 1 ]; then
    outside=$(ldd build/cudarem-server build/libcudarem.so | grep -E 'lib(tirpc|zstd|ssl|crypto|lz4)\.so' | grep -vc "$deps")
    [ "$outside" = 0 ] || { say "FAIL  dry run: $outside of the carried libraries resolve outside the prefix"; status=1; }
fi
if [ $gpu = 1 ]; then say "      GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1)"; fi

# ---- phase 2: the server on the GPU, programs local and through the shim -----------
phase programs 90
plog=$out/programs.log
sock=$tmp/server.sock
# The emulated device runs a cubin's kernels from their CPU twins (tests/kernels).
emu_kernels=()
[ $gpu = 1 ] || emu_kernels=(--emu-kernels build/kernels/libktest_cpu_kernels.so)
build/cudarem-server --device "$device" "${emu_kernels[@]}" --listen "unix:$sock" --insecure --log-level info \
    2>>"$out/server.log" &
pids+=($!)
for _ in $(seq 200); do [ -S "$sock" ] && break; sleep 0.05; done
if [ ! -S "$sock" ]; then
    say "FAIL  cudarem-server --device $device did not start (server.log)"; status=1
    tail -5 "$out/server.log" | sed 's/^/      | /'
fi
# A command's prefix running it through the shim against this server (round trips
# counted on its stderr); with build/lib first on the loader's path, for what links
# libcuda.so.1 or NVIDIA's libraries by name (a driver-API program, the frameworks).
remote=(env LD_PRELOAD="$root/build/libcudarem.so" CUDAREM_SERVER="unix:$sock" CUDAREM_STATS=1)
remote_lib=("${remote[@]}" LD_LIBRARY_PATH="$root/build/lib:$LD_LIBRARY_PATH" PYTHONUNBUFFERED=1)

# pair LABEL CMD...: CMD on the local GPU, then through the shim.
pair() {
    local label=$1; shift
    if [ $gpu = 1 ]; then check "local  $label" "$plog" "$@"; else skip "local  $label" "$no_local"; fi
    check "remote $label" "$plog" "${remote[@]}" "$@"
}
# figures KIND LABEL ARGS...: bench_cuda ARGS local and remote, then the two side by side.
figures() {
    local kind=$1 label=$2; shift 2
    local l=- r=$tmp/$kind-remote.json
    if [ $gpu = 1 ]; then
        check "local  $label" "$plog" sh -c 'exec "$@" >"$0"' "$tmp/$kind-local.json" build/bench/bin/bench_cuda "$@" &&
            l=$tmp/$kind-local.json
    elif [ "$kind" = copy ]; then # the report's two-column path, checked before a GPU needs it
        check "local  $label (dry run: the emulated device in process stands in)" "$plog" sh -c 'exec "$@" >"$0"' \
            "$tmp/$kind-local.json" env LD_PRELOAD="$root/build/libcudarem-emu.so" build/bench/bin/bench_cuda "$@" &&
            l=$tmp/$kind-local.json
    else skip "local  $label" "$no_local"; fi
    check "remote $label" "$plog" sh -c 'exec "$@" >"$0"' "$r" "${remote[@]}" build/bench/bin/bench_cuda "$@" || return
    $PY tools/gpu-check-report.py "$kind" "$l" "$r" 2>&1 | tee -a "$plog" | sed 's/^/      /' | tee -a "$summary"
}
if [ $gpu = 1 ]; then copy_sizes=(4096 65536 1048576 16777216 268435456); sgemm_n=(1024 2048 4096 8192)
else copy_sizes=(4096 1048576 16777216); sgemm_n=(128 256); fi
pair "device queries (shared runtime)" build/cuda/device
pair "device queries (static runtime)" build/cuda-static/device
figures copy "copies 4 KiB-$((copy_sizes[-1] >> 20)) MiB both ways" copy random 1 all "${copy_sizes[@]}"
figures sgemm "SGEMM N = ${sgemm_n[*]}" sgemm libcublas.so.13 2 "${sgemm_n[@]}"
pair "kernel vadd (shared runtime)" build/kernels/vadd
pair "kernel vadd (static runtime)" build/kernels-static/vadd
pair "kernel from PTX (vadd_ptx)" build/kernels/vadd_ptx
pair "kernel saxpy" build/kernels/saxpy
pair "CUDA graphs: capture, nodes, update, memory nodes (shared runtime)" build/kernels/graphs
pair "CUDA graphs (static runtime: the driver's graph API)" build/kernels-static/graphs
pair "a graphed training step, graphs of 10-1,000 kernels" build/kernels/graphstep
pair "managed and mapped memory (shared runtime; the server maps it in the session's address slot)" \
    build/kernels/managed
pair "managed memory and __managed__ variables (static runtime)" build/kernels-static/managed
pair "kernels compiled by NVRTC to a cubin" build/kernels/nvrtc
# The same graphs through a server that makes each program one CUDA graph on the GPU
# (--graph-capture; the emulated device replays them all the same): what it captured
# and what it replayed, from its log.
csock=$tmp/capture.sock
build/cudarem-server --device "$device" "${emu_kernels[@]}" --listen "unix:$csock" --insecure --log-level info \
    --graph-capture 2>"$tmp/capture.log" &
pids+=($!)
for _ in $(seq 200); do [ -S "$csock" ] && break; sleep 0.05; done
for prog in kernels/graphs kernels-static/graphs kernels/graphstep; do
    check "remote $prog through a --graph-capture server" "$plog" \
        env LD_PRELOAD="$root/build/libcudarem.so" CUDAREM_SERVER="unix:$csock" CUDAREM_STATS=1 "build/$prog"
done
say "      --graph-capture: $(grep -c 'captured into a CUDA graph' "$tmp/capture.log") programs captured, \
$(grep -c 'replayed call by call' "$tmp/capture.log") replayed"
cat "$tmp/capture.log" >>"$out/server.log"
pair "cuBLAS program (shared runtime)" build/cuda/blas
pair "cuBLAS program (static runtime)" build/cuda-static/blas
pair "cuDNN program (shared runtime)" build/dnn/dnn_net
pair "cuDNN program (static runtime)" build/dnn-static/dnn_net
if [ $gpu = 1 ]; then check "local  driver-API program (cubin, PTX)" "$plog" build/driver/drv_api build/driver/vadd.cubin build/driver/vadd.ptx
else skip "local  driver-API program" "$no_local"; fi
check "remote driver-API program (cubin, PTX)" "$plog" "${remote_lib[@]}" build/driver/drv_api build/driver/vadd.cubin build/driver/vadd.ptx
check "remote cudarem-smi sees the session's server" "$plog" build/cudarem-smi -s "unix:$sock"

# ---- phase 3: torch -------------------------------------------------------------------
phase torch 140
tlog=$out/torch.log
if ! $PY -c "import torch, numpy" >/dev/null 2>&1; then
    skip "torch" "$PY has no torch (with numpy)"
else
    if [ $gpu = 1 ]; then
        epochs=(--epochs 5)
        check "local  train_torch.py" "$tlog" $PY examples/train_torch.py "${epochs[@]}" --json "$tmp/train-local.json"
        check "remote train_torch.py" "$tlog" "${remote_lib[@]}" $PY examples/train_torch.py "${epochs[@]}" \
            --json "$tmp/train-remote.json" &&
            $PY tools/gpu-check-report.py train "$tmp/train-local.json" "$tmp/train-remote.json" 2>&1 |
            tee -a "$tlog" | sed 's/^/      /' | tee -a "$summary"
        check "remote torch_basic.py (kernels, cuBLAS, cuDNN conv forward and backward)" "$tlog" \
            "${remote_lib[@]}" CUDAREM_EXPECT_CUBIN=1 $PY tests/python/torch_basic.py
        # the training step captured once and replayed (torch.cuda.CUDAGraph), then
        # torch.compile's reduce-overhead mode (Triton's kernels, replayed as graphs)
        short=(--epochs 3 --target 0.9)
        for mode in graph compile; do
            if [ $mode = compile ] && ! $PY -c "import triton" >/dev/null 2>&1; then
                skip "train_torch.py --compile" "$PY has no triton"; continue
            fi
            check "local  train_torch.py --$mode" "$tlog" $PY examples/train_torch.py --$mode "${short[@]}" \
                --json "$tmp/train-$mode-local.json"
            check "remote train_torch.py --$mode" "$tlog" "${remote_lib[@]}" $PY examples/train_torch.py --$mode \
                "${short[@]}" --json "$tmp/train-$mode-remote.json" &&
                $PY tools/gpu-check-report.py train "$tmp/train-$mode-local.json" "$tmp/train-$mode-remote.json" 2>&1 |
                tee -a "$tlog" | sed 's/^/      /' | tee -a "$summary"
        done
    else
        skip "remote train_torch.py" "dry run: torch's wheel carries machine code only, which the emulated device cannot run (torch_basic.py checks that it fails cleanly)"
        # the report's path, checked before a GPU needs it: a CPU run stands in for both
        check "local  train_torch.py --device cpu (dry run: stands in for both runs, to check the report)" "$tlog" \
            $PY examples/train_torch.py --device cpu --epochs 2 --target 0 --json "$tmp/train-cpu.json" &&
            $PY tools/gpu-check-report.py train "$tmp/train-cpu.json" "$tmp/train-cpu.json" 2>&1 |
            tee -a "$tlog" | sed 's/^/      /' | tee -a "$summary"
        check "remote torch_basic.py (emulated device: torch's kernels fail cleanly)" "$tlog" \
            "${remote_lib[@]}" $PY tests/python/torch_basic.py
        skip "train_torch.py --graph" "dry run: a captured step runs torch's kernels, which the emulated device cannot run"
        check "local  train_torch.py --compile --device cpu (dry run: the mode's path, on the CPU)" "$tlog" \
            $PY examples/train_torch.py --compile --device cpu --epochs 1 --target 0
    fi
fi

# ---- phase 4: CuPy and numba-cuda ---------------------------------------------------
phase frameworks 45
flog=$out/frameworks.log
for fw in cupy numba; do
    if ! $PY -c "import $fw" >/dev/null 2>&1; then skip "$fw" "$PY has no $fw"; continue; fi
    check "remote ${fw}_basic.py" "$flog" "${remote_lib[@]}" CUDAREM_EXPECT_PTX=$gpu $PY "tests/python/${fw}_basic.py"
done

# ---- phase 5: the suites against GPU servers, at once -------------------------------
phase suites 90
slog=$out/suites.log
if [ $gpu = 1 ]; then suites=(check_e2e_programs check_e2e_roundtrips check_e2e_faults check_e2e_stress)
else suites=(check_e2e_programs check_e2e_roundtrips); fi
cap=$(left)
suite_pids=()
for s in "${suites[@]}"; do
    ( t0=$(date +%s)
      CK_FORK=yes CK_TAP_LOG_FILE_NAME=$tmp/$s.tap CUDAREM_TEST_DEVICE=$device CUDAREM_TEST_ROOT=$root CUDAREM_TEST_PYTHON=$(command -v $PY) \
          timeout -k 5 "$cap" "build/tests/$s" >"$tmp/$s.log" 2>&1
      echo "rc=$? seconds=$(( $(date +%s) - t0 ))" >>"$tmp/$s.log" ) &
    suite_pids+=($!)
done
wait "${suite_pids[@]}"
for s in "${suites[@]}"; do
    { echo "== $s"; cat "$tmp/$s.log"; } >>"$slog"
    rc=$(sed -n 's/^rc=\([0-9]*\).*/\1/p' "$tmp/$s.log"); secs=$(sed -n 's/.*seconds=//p' "$tmp/$s.log")
    # the TAP log is written test by test: a suite cut by its cap still counts
    ok=$(grep -c '^ok' "$tmp/$s.tap" 2>/dev/null); bad=$(grep -c '^not ok' "$tmp/$s.tap" 2>/dev/null)
    checks="${ok:-0} checks passed, ${bad:-0} failed"
    if [ "${bad:-0}" -gt 0 ] || { [ "$rc" != 0 ] && [ "$rc" != 124 ] && [ "$rc" != 137 ]; }; then
        say "FAIL  $s: $checks, exit $rc (${secs} s; suites.log)"; status=1
        grep '^not ok' "$tmp/$s.tap" | head -5 | sed 's/^/      | /'
    elif [ "$rc" = 0 ]; then say "PASS  $s: $checks (${secs} s)"
    else say "CAPPED $s: cut after ${secs} s (phase cap); $checks by then"; fi
done

# ---- phase 6: the benchmarks -----------------------------------------------------------
phase bench 65
blog=$out/bench.log
if [ $unlimited = 1 ]; then profile=(); elif [ $gpu = 1 ]; then profile=(--quick); else profile=(--smoke); fi
sections=latency,async,copy,sgemm
[ $gpu = 1 ] || sections=latency,copy
check "bench ${profile[*]:-default} ($sections; local vs remote vs raw socket)" "$blog" \
    $PY benchmarks/run-bench.py --build build --out "$tmp/bench" "${profile[@]}" --only "$sections" --no-shaped
[ -f "$tmp/bench/bench.md" ] && { echo; cat "$tmp/bench/bench.md"; } >>"$blog"
grep -E "^(PASS|MISS|n/a) " "$blog" | head -20 | sed 's/^/      /' | tee -a "$summary"

say ""
say "=== done in $(( $(now) - start )) s of $budget; $(grep -c '^PASS' "$summary") passed, $(grep -c '^FAIL' "$summary") failed, $(grep -c '^CAPPED' "$summary") capped, $(grep -c '^SKIP' "$summary") skipped"
exit $status
