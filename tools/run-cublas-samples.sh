#!/usr/bin/env bash
# run-cublas-samples.sh -- builds NVIDIA's CUDALibrarySamples cuBLAS examples from a
# checkout of that repository, runs each through the shim against a local server
# on the emulated device (or the server at CUDAREM_SERVER), and compares what it
# prints with the sample output its README.md shows. Nothing of theirs is copied
# here; the checkout is read where it lies.
#
#   tools/run-cublas-samples.sh SAMPLES_DIR [DIR...]
#
# DIR: example folders under SAMPLES_DIR/cuBLAS, or patterns of them, quoted
# (default: 'Level-1/*' 'Level-2/*' 'Level-3/*' 'Extensions/*'). Builds into
# build/samples/; prints one line per
# example (match, differs, fails, not built) and a count; exit status 0 when every
# built example matched.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
samples=${1:?usage: run-cublas-samples.sh SAMPLES_DIR [DIR...]}
shift
cd "$samples/cuBLAS" || exit 2
dirs=("$@")
[ ${#dirs[@]} -gt 0 ] || dirs=(Level-1/* Level-2/* Level-3/* Extensions/*)
out=$here/build/samples
mkdir -p "$out"
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}

server_pid=
if [ -z "${CUDAREM_SERVER:-}" ]; then
    sock=$out/server.sock
    rm -f "$sock"
    "$here/build/cudarem-server" --device emu --listen "unix:$sock" --insecure --log-level warn \
        2> "$out/server.log" &
    server_pid=$!
    for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
    export CUDAREM_SERVER=unix:$sock
fi

# The README's first fenced block after "Sample example output", without blank lines.
expected() {
    awk '/Sample example output/ {seen = 1} seen && /^```/ {if (inside) exit; inside = 1; next}
         inside && NF' "$1"
}

matched=0 total=0
for d in "${dirs[@]}"; do
    for src in $d/*.cu; do # unquoted: d may be a pattern (Level-1/*)
        [ -f "$src" ] || continue
        name=$(basename "$src" .cu)
        total=$((total + 1))
        if ! "$nvcc" -O2 -std=c++17 -I"$samples/cuBLAS/utils" -o "$out/$name" "$src" -lcublas > "$out/$name.build" 2>&1; then
            printf '%-40s not built (%s)\n' "$name" "$(grep -m1 error "$out/$name.build" | cut -c1-80)"
            continue
        fi
        if ! LD_PRELOAD=$here/build/libcudarem.so timeout 120 "$out/$name" > "$out/$name.out" 2> "$out/$name.err"; then
            printf '%-40s fails (%s)\n' "$name" "$(tail -c 200 "$out/$name.err" | tr '\n' ' ' | cut -c1-100)"
            continue
        fi
        expected "$(dirname "$src")/README.md" > "$out/$name.want"
        if [ -s "$out/$name.want" ] && diff -qw <(grep -v "^\s*$" "$out/$name.out") "$out/$name.want" > /dev/null; then
            printf '%-40s match\n' "$name"
            matched=$((matched + 1))
        else
            printf '%-40s differs (diff %s.out %s.want)\n' "$name" "$out/$name" "$out/$name"
        fi
    done
done
[ -n "$server_pid" ] && kill "$server_pid" && wait "$server_pid" 2> /dev/null
echo "$matched of $total examples match their README's output"
[ "$matched" -eq "$total" ]
