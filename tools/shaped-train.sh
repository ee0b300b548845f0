#!/usr/bin/env bash
# shaped-train.sh -- examples/train_torch.py through the shim over a link with a
# 30 ms round trip: a network namespace whose loopback delays each packet by
# 15 ms (netem), with cudarem-server (on the GPU) and the client both inside it.
# Compares the median step with LOCAL_JSON's (train_torch.py --json run on the
# local GPU): the goal is local step + one round trip + 10 %. Needs root, iproute2
# and the kernel's netem qdisc; without them it prints "NOT RUN: why" and exits 0.
#   usage: tools/shaped-train.sh LOCAL_JSON OUT_DIR [train_torch.py options]
set -uo pipefail
local_json=$1 out=$2
shift 2
ns=crmshape-$$
delay_ms=15 # each way: a 30 ms round trip
build=$PWD/build
py=${PYTHON:-python3}

not_run() { echo "NOT RUN: $*"; ip netns del "$ns" 2>/dev/null; exit 0; }
in_ns() { ip netns exec "$ns" "$@"; }

[ "$(id -u)" = 0 ] || not_run "needs root for network namespaces"
ip netns add "$ns" 2>/dev/null || not_run "ip netns add failed"
trap 'kill $srv 2>/dev/null; wait 2>/dev/null; ip netns del "$ns" 2>/dev/null' EXIT
in_ns ip link set lo up || not_run "cannot bring up lo in $ns"
in_ns tc qdisc add dev lo root netem delay ${delay_ms}ms 2>/dev/null ||
    not_run "the netem qdisc is missing (modprobe sch_netem)"
rtt=$(in_ns ping -c 3 -q 127.0.0.1 | awk -F/ '/^rtt/ {print $5}')
echo "round trip inside $ns: ${rtt} ms (ping average)"

in_ns "$build/cudarem-server" --device cuda --listen tcp:127.0.0.1:17471 --insecure --log-level info \
    2>"$out/shaped-server.log" &
srv=$!
for _ in $(seq 100); do grep -q "serving" "$out/shaped-server.log" 2>/dev/null && break; sleep 0.1; done
in_ns env LD_PRELOAD="$build/libcudarem.so" CUDAREM_SERVER=tcp:127.0.0.1:17471 CUDAREM_STATS=1 \
    timeout 900 "$py" examples/train_torch.py --json "$out/train_torch-shaped.json" "$@" 2>&1 |
    tee "$out/train_torch-shaped.log"

"$py" - "$local_json" "$out/train_torch-shaped.json" "$rtt" <<'PY'
import json, sys
local, shaped = (json.load(open(p)) for p in sys.argv[1:3])
rtt = float(sys.argv[3]) / 1e3
goal = (local["median_step_s"] + rtt) * 1.10
got = shaped["median_step_s"]
print("30 ms link: median step %.2f ms; local step %.2f ms + round trip %.2f ms + 10%% = %.2f ms: %s"
      % (got * 1e3, local["median_step_s"] * 1e3, rtt * 1e3, goal * 1e3, "PASS" if got <= goal else "MISS"))
PY
