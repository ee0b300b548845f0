#!/bin/sh
# import_time.sh -- wall time of `import torch` with and without the shim, N runs
# each, alternating (default 5), and the shim's counters at exit of the last
# shim run (CUDAREM_STATS=path: round trips, calls, bulk bytes). Prints every run
# and the medians. Needs a server for the shim runs.
# Usage: CUDAREM_SERVER=unix:/tmp/x.sock tools/torch_probe/import_time.sh [N]
N=${1:-5}
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
PY=${PY:-$HOME/.cache/cudarem/pyenv/bin/python}
stats=$(mktemp)
code='import time; t=time.perf_counter(); import torch; print("%.3f" % (time.perf_counter()-t))'
plain=""; shim=""
i=0
while [ $i -lt $N ]; do
    a=$("$PY" -c "$code")
    b=$(LD_PRELOAD=$root/build/libcudarem.so CUDAREM_STATS=$stats "$PY" -c "$code")
    echo "run $i: without $a s, with the shim $b s"
    plain="$plain $a"; shim="$shim $b"; i=$((i + 1))
done
med() { echo $* | tr ' ' '\n' | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
echo "median without: $(med $plain) s   with the shim: $(med $shim) s"
echo "shim counters at exit of the last run: $(cat $stats 2>/dev/null)"; [ -s "$stats" ] || echo "(no counters written: import opened no session)"
rm -f "$stats"
