#!/bin/sh
# probe.sh -- runs a Python script through the cudarem shim under gdb with
# gdbprobe.py watching; it writes JSON to OUT.json (read it with summarise.py).
# Needs a server: build/cudarem-server --device emu --listen unix:/tmp/x.sock --allow-uid $(id -u)
# Usage: tools/torch_probe/probe.sh OUT.json SCRIPT.py [ARGS...]
#   env: CUDAREM_SERVER (default unix:/tmp/x.sock), PY (the venv's python),
#        extra variables for the program go through PROBE_ENV="A=1 B=2".
set -e
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
out=$1; shift
PY=${PY:-$HOME/.cache/cudarem/pyenv/bin/python}
envs="-ex 'set environment LD_PRELOAD=$root/build/libcudarem.so' -ex 'set environment CUDAREM_SERVER=${CUDAREM_SERVER:-unix:/tmp/x.sock}'"
for kv in $PROBE_ENV; do envs="$envs -ex 'set environment $kv'"; done
eval PROBE_SHIM=$root/build/libcudarem.so PROBE_OUT=$out gdb -q -batch -nx $envs -x "$here/gdbprobe.py" --args "$PY" "$@"
