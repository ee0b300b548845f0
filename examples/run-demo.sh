#!/usr/bin/env bash
# run-demo.sh -- the main job: starts cudarem-server on a private Unix socket (the
# GPU if this host has one, else the CPU-emulated device), runs the unmodified CUDA
# program examples/remote_copy through the shim, stops the server. The socket admits
# this user only (--allow-uid: the kernel tells the server who connects).
#   usage: examples/run-demo.sh [BUILD_DIR] [MIB]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
mib=${2:-256}
sock=$(mktemp -u /tmp/cudarem-demo.XXXXXX.sock)

"$build/cudarem-server" --listen "unix:$sock" --allow-uid "$(id -u)" --log-level info &
server=$!
trap 'kill -TERM $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done

echo "+ LD_PRELOAD=$build/libcudarem.so CUDAREM_SERVER=unix:$sock CUDAREM_STATS=1 $build/examples/remote_copy $mib"
LD_PRELOAD="$build/libcudarem.so" CUDAREM_SERVER="unix:$sock" CUDAREM_STATS=1 "$build/examples/remote_copy" "$mib"
