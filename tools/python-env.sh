#!/usr/bin/env bash
# python-env.sh -- creates, or reuses when complete, the virtual environment the
# framework tests (tests/python/*_basic.py) run in: CuPy, numba-cuda, NVML's
# Python binding, NumPy and the PyPI PyTorch wheel (CUDA 13 build); and
# prometheus_client, whose parser reads the server's metrics in check_e2e_smi, and
# kubernetes-validate, which checks docs/k8s against Kubernetes' schemas offline.
#
#   usage: tools/python-env.sh [--print-dir|--check]
#     (none)       make sure the environment is complete; prints its directory last
#     --print-dir  print the directory and exit (creates nothing)
#     --check      exit 0 if the environment is complete, 1 if not (creates nothing)
#
# Where: $CUDAREM_PYENV (`off`: none; tools/install-deps.sh then skips it),
# default ${XDG_CACHE_HOME:-~/.cache}/cudarem/pyenv. It lives
# outside the source tree, so `make clean` and a fresh clone keep it, and it needs
# no root. The base interpreter is $PYTHON (default python3 on PATH).
#
# Wheels: every wheel is first downloaded into $CUDAREM_PYENV_WHEELS (default
# ${XDG_CACHE_HOME:-~/.cache}/cudarem/wheels; `off`: install straight from the
# index), then installed from there without the index, so rebuilding the
# environment costs the unpacking, not the 3.5 GB download. pip's own HTTP cache
# is not enough: on the project machine it stays empty (the responses that reach
# pip through its network are not cacheable), so every install downloaded again.
#
# Complete means: the stamp file $CUDAREM_PYENV/cudarem-stamp exists, names the same
# package list and base interpreter as this script, and every distribution it lists
# is installed at the version it lists (checked through importlib.metadata without
# importing anything: well under a second). The stamp is written last, after
# `pip check` and an import of each package passed; anything else (an interrupted
# or failed install, a changed package list, a moved interpreter) is not trusted:
# the directory is removed and built again from scratch. A lock file beside it
# (flock) serialises concurrent runs.
#
# Measured on the project machine (2 cores, Debian 12, Python 3.11.7, 2026-12-03;
# shared and noisy: the same step varied 1.5x between runs). One line per
# requirement in the order of PACKAGES; a dependency shared by several counts
# with the first that pulls it (numba-cuda[cu13] brings cuda-toolkit, nvvm,
# nvjitlink; torch the nvidia-* CUDA 13.2 wheels, cuDNN 9.26, NCCL and triton):
#
#   requirement                cold (download)   from the wheel cache   site-packages
#   numpy==2.4.6               4-5 s (1 s)       4-6 s                  +72 MiB
#   nvidia-ml-py==13.615.71    1-2 s (1 s)       1 s                    +1 MiB
#   cupy-cuda13x==14.2.0       5 s (2 s)         6 s                    +200 MiB
#   numba-cuda[cu13]==0.30.4   17-26 s (6 s)     23-27 s                +731 MiB
#   torch==2.15.0              110-112 s (38 s)  112-135 s              +5,070 MiB
#   (2026-12-04, from the wheel cache: scikit-learn 7 s +202 MiB; prometheus-client
#   2 s +1 MiB; kubernetes-validate, first download, 6 s (1 s) +117 MiB; the whole
#   environment then took 81 s, 6.4 GB)
#   whole environment          143-153 s         182-185 s (loaded)     6.1 GB; wheel cache 3.1 GB
#
# Unpacking, not the download, is the cost here (PyPI arrives at ~100 MB/s); the
# wheel cache matters on slower links. When complete, a run takes ~0.3 s. Imports
# in the finished environment, without the shim, on a quiet machine: numpy 0.2 s,
# pynvml 0.1 s, cupy 0.3-0.5 s, numba.cuda 0.6-1.1 s, torch 2.0-2.2 s; up to three
# times that while the other cores' users build (torch 4.2-6.5 s).
set -euo pipefail

# One requirement per line, installed in this order; pinned so that CI does not
# change under the tests when PyPI moves (the PyPI torch wheel is the CUDA 13
# build). Changing the list rebuilds every existing environment (its stamp names
# the list): bump deliberately.
PACKAGES=(
    "numpy==2.4.6"
    "nvidia-ml-py==13.615.71"
    "cupy-cuda13x==14.2.0"
    "numba-cuda[cu13]==0.30.4"
    "torch==2.15.0"
    "scikit-learn==1.9.1"
    "prometheus-client==0.26.0"
    "kubernetes-validate==1.37.0"
)
# Imported once after installing, to prove the packages load (no GPU needed).
IMPORTS="numpy pynvml cupy numba.cuda torch sklearn prometheus_client kubernetes_validate"

dir=${CUDAREM_PYENV:-${XDG_CACHE_HOME:-$HOME/.cache}/cudarem/pyenv}
wheels=${CUDAREM_PYENV_WHEELS:-${XDG_CACHE_HOME:-$HOME/.cache}/cudarem/wheels}
python=${PYTHON:-python3}
stamp=$dir/cudarem-stamp

log() { echo "python-env: $*" >&2; }

# The line the stamp must start with: the package list and the base interpreter.
base=$("$python" -c 'import sys; print(sys.executable, "%d.%d.%d" % sys.version_info[:3])')
spec="packages: ${PACKAGES[*]} | python: $base"

# Exit status 0 when the environment at $dir is complete (see the header).
is_complete() {
    [ -f "$stamp" ] && [ -x "$dir/bin/python" ] || return 1
    [ "$(head -n1 "$stamp")" = "$spec" ] || return 1
    tail -n +2 "$stamp" | "$dir/bin/python" -c '
import sys
from importlib import metadata
for line in sys.stdin:
    name, _, version = line.strip().partition("==")
    try:
        if metadata.version(name) != version:
            sys.exit(1)
    except metadata.PackageNotFoundError:
        sys.exit(1)
' 2>/dev/null
}

if [ "${CUDAREM_PYENV:-}" = off ]; then
    echo "python-env: CUDAREM_PYENV=off: no framework environment" >&2
    exit 1
fi

case "${1:-}" in
--print-dir) echo "$dir"; exit 0 ;;
--check) is_complete; exit $? ;;
"") ;;
*) echo "usage: $0 [--print-dir|--check]" >&2; exit 2 ;;
esac
# Standard output carries the directory alone (callers read it); what pip says goes to stderr.
exec 3>&1 1>&2

mkdir -p "$(dirname "$dir")"
exec 9>"$dir.lock"
flock 9

if is_complete; then
    echo "$dir" >&3
    exit 0
fi

if [ -e "$dir" ]; then
    log "$dir is incomplete or out of date: building it again"
    rm -rf "$dir"
fi
log "creating $dir with $base"
"$python" -m venv "$dir"
pip=("$dir/bin/python" -m pip --disable-pip-version-check --no-input)
export PIP_ROOT_USER_ACTION=ignore

# Installs REQ from the wheel cache without the index; when something is missing
# there, downloads REQ and its dependencies into it first. Sets download_s.
# Returns non-zero if the install fails.
install_via_cache() {
    local t0
    download_s=0
    if [ -d "$wheels" ] && "${pip[@]}" install --quiet --no-index --find-links "$wheels" "$1" 2>/dev/null; then
        return 0
    fi
    t0=$(date +%s)
    log "downloading $1 (and its dependencies) into $wheels"
    "${pip[@]}" download --quiet --dest "$wheels" "$1" || return 1
    download_s=$(( $(date +%s) - t0 ))
    "${pip[@]}" install --quiet --no-index --find-links "$wheels" "$1" || return 1
}

site=$("$dir/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
total_start=$(date +%s)
for req in "${PACKAGES[@]}"; do
    before=$(du -sm "$site" | cut -f1)
    start=$(date +%s)
    if [ "$wheels" = off ]; then
        log "installing $req"
        "${pip[@]}" install --quiet "$req"
        got=""
    else
        # A wheel cut short by an earlier interrupted run fails the install from
        # the cache: the cache is then dropped and the download done again, once.
        if ! install_via_cache "$req"; then
            log "installing $req from $wheels failed: emptying it and downloading again"
            rm -rf "$wheels"
            install_via_cache "$req"
        fi
        got=", $download_s s of it downloading"
    fi
    after=$(du -sm "$site" | cut -f1)
    log "installed $req in $(( $(date +%s) - start )) s$got, +$(( after - before )) MiB"
done
"${pip[@]}" check
for mod in $IMPORTS; do
    start=$(date +%s%N)
    "$dir/bin/python" -c "import $mod"
    log "import $mod: $(( ($(date +%s%N) - start) / 1000000 )) ms"
done

# Every distribution installed, name==version, after the spec line.
{
    echo "$spec"
    "$dir/bin/python" -c '
from importlib import metadata
for d in sorted({d.metadata["Name"]: d.version for d in metadata.distributions()}.items()):
    print("%s==%s" % d)
'
} >"$stamp.tmp"
mv "$stamp.tmp" "$stamp"
log "complete in $(( $(date +%s) - total_start )) s, $(du -sm "$dir" | cut -f1) MiB"
echo "$dir" >&3
