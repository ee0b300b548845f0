#!/usr/bin/env bash
# run-demo.sh -- the main job: starts cudarem-server on a private Unix socket (the
# GPU if this host has one, else the CPU-emulated device), runs the unmodified CUDA
# program examples/remote_copy through the shim, stops the server. The socket admits
# this user only (--allow-uid: the kernel tells the server who connects). Ends with
# what the shim counted (CUDAREM_STATS) and what the counts mean.
#   usage: examples/run-demo.sh [BUILD_DIR] [MIB]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
mib=${2:-256}
sock=$(mktemp -u /tmp/cudarem-demo.XXXXXX.sock)

"$build/cudarem-server" --listen "unix:$sock" --allow-uid "$(id -u)" --log-level info &
server=$!
trap 'kill -TERM $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done

stats=$(mktemp /tmp/cudarem-demo.XXXXXX.json)
trap 'kill -TERM $server 2>/dev/null; wait $server 2>/dev/null || true; rm -f "$stats"' EXIT
echo "+ LD_PRELOAD=$build/libcudarem.so CUDAREM_SERVER=unix:$sock CUDAREM_STATS=$stats $build/examples/remote_copy $mib"
LD_PRELOAD="$build/libcudarem.so" CUDAREM_SERVER="unix:$sock" CUDAREM_STATS="$stats" "$build/examples/remote_copy" "$mib"

# What the shim counted, and what it means: the first question a reader asks.
python3 - "$stats" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print()
print("What the shim counted (CUDAREM_STATS=%s; =1 prints it on stderr):" % sys.argv[1])
print("  %d CUDA calls, %d round trips to the server; %d MiB to the device, %d bytes back%s" % (
    s["calls"], s["round_trips"], s["bytes_h2d"] >> 20, s["bytes_d2h"],
    ", %d MiB of them through pinned memory shared with the server" % (s["pinned_bytes"] >> 20)
    if s.get("pinned_bytes") else ""))
print("  round trips by the call that waited: %s" % s.get("round_trips_by_call", "?"))
print("  A call costs a round trip when the program needs its answer before going on: an")
print("  allocation, a synchronisation, a copy into host memory, an event's time. Launches,")
print("  asynchronous copies, memsets, device-to-device copies, frees and the destruction of")
print("  streams and events travel inside those round trips (%d calls in %d here)." % (
    s["calls"], s["round_trips"]))
PY
