#!/usr/bin/env bash
# gpu-check-dry.sh -- the GPU run rehearsed on a machine without a GPU, as `make test`
# runs it, so that a change which would break it breaks here first: copies the
# working tree as a device call sends it (tracked and untracked-not-ignored files)
# into a scratch directory, puts the bundle beside it as the call carries it, and
# runs tools/gpu-check.sh --dry-run there (the emulated device standing in). Fails
# when the run fails, leaves a phase CAPPED (it must fit its budget) or writes
# more than the 8 files a device call brings back.
#   usage: tools/gpu-check-dry.sh BUNDLE [PYTHON]
set -uo pipefail
bundle=$(realpath "$1")
python=${2:-python3}
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/cudarem-gpu-dry.XXXXXX)
[ -n "${GPU_CHECK_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT # GPU_CHECK_KEEP=1 keeps it to read
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
    (cd "$src" && git ls-files -co --exclude-standard -z | xargs -0 tar -cf - 2>/dev/null) | tar -C "$work" -xf -
else
    tar -C "$src" --exclude=./build --exclude='./build-*' --exclude=./.git -cf - . | tar -C "$work" -xf -
fi
mkdir -p "$work/build"
cp "$bundle" "$work/build/gpu-bundle.tar.xz"
echo "gpu-check-dry: the working tree ($(du -sh "$work" | cut -f1) with the bundle) in $work"
OUT=$work/out GPU_CHECK_PYTHON=$python "$work/tools/gpu-check.sh" --dry-run --budget "${GPU_CHECK_BUDGET:-420}"
rc=$?
files=$(find "$work/out" -type f | wc -l)
bad=0
[ $rc = 0 ] || { echo "gpu-check-dry: FAIL: gpu-check.sh --dry-run exited $rc"; bad=1; }
[ "$files" -le 8 ] || { echo "gpu-check-dry: FAIL: $files files in \$OUT, a device call brings back 8"; bad=1; }
if grep -q '^CAPPED' "$work/out/summary.txt"; then
    echo "gpu-check-dry: FAIL: a check was cut by its time cap"; bad=1
fi
passed=$(grep -c '^PASS' "$work/out/summary.txt")
[ "$passed" -ge 20 ] || { echo "gpu-check-dry: FAIL: only $passed checks passed"; bad=1; }
echo "gpu-check-dry: $passed checks passed; $files result files: $(cd "$work/out" && ls | paste -sd' ')"
[ $bad = 0 ] && echo "PASS gpu-check-dry"
exit $bad
