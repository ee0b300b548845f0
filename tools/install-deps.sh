#!/usr/bin/env bash
# install-deps.sh -- installs what cudarem needs to build and test on Debian or
# Ubuntu (apt-get; uses sudo when not root), and checks for the CUDA 13 toolkit,
# which comes from NVIDIA rather than the distribution. Python packages the
# examples need come from PyPI (pip) for the python3 on PATH; the frameworks the
# framework tests run (CuPy, numba-cuda, pynvml, torch: 6 GB, ~3 min the first
# time) go into the virtual environment of tools/python-env.sh, unless
# CUDAREM_PYENV=off.
set -euo pipefail

packages=(build-essential pkg-config python3 libtirpc-dev rpcsvc-proto libzstd-dev liblz4-dev libssl-dev
          check libsubunit-dev libopenblas-dev iproute2 util-linux procps clang openssl chromium fonts-dejavu-core systemd
          man-db)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    as_root=()
    [ "$(id -u)" -eq 0 ] || as_root=(sudo)
    echo "install-deps: installing ${missing[*]}"
    "${as_root[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# examples/train.py needs numpy and scikit-learn (its digits data set ships inside
# the package), `make bench` matplotlib for its plots, for the python3 on PATH,
# which need not be Debian's.
python=${PYTHON:-python3}
if ! "$python" -c "import numpy, sklearn, matplotlib" 2>/dev/null; then
    echo "install-deps: installing numpy, scikit-learn and matplotlib for $(command -v "$python")"
    PIP_ROOT_USER_ACTION=ignore "$python" -m pip install --quiet --disable-pip-version-check numpy scikit-learn matplotlib
fi

cuda=${CUDA_HOME:-/usr/local/cuda}
if [ ! -x "$cuda/bin/nvcc" ] || ! grep -Eq "define CUDART_VERSION +13[0-9]{3}" "$cuda/include/cuda_runtime_api.h" 2>/dev/null; then
    echo "install-deps: the CUDA 13 toolkit was not found at $cuda (set CUDA_HOME)." >&2
    echo "install-deps: cudarem compiles against its headers and tests with nvcc-built programs;" >&2
    echo "install-deps: install it from NVIDIA's repository (package cuda-toolkit-13-0)." >&2
    exit 1
fi
# nvml.h (the NVML API the shim exports as libnvidia-ml.so.1) is NVIDIA's
# cuda-nvml-dev component; toolkits assembled from PyPI wheels lack it. The
# nvidia-nvml-dev wheel carries the header alone: put it beside the toolkit's.
if [ ! -f "$cuda/include/nvml.h" ]; then
    echo "install-deps: installing nvml.h (PyPI nvidia-nvml-dev) into $cuda/include"
    tmp=$(mktemp -d)
    PIP_ROOT_USER_ACTION=ignore "$python" -m pip install --quiet --disable-pip-version-check --no-deps \
        --target "$tmp" "nvidia-nvml-dev>=13,<14"
    as_root=()
    [ -w "$cuda/include" ] || as_root=(sudo)
    "${as_root[@]}" install -m 0644 "$tmp"/nvidia/cu13/include/nvml.h "$cuda/include/nvml.h"
    rm -rf "$tmp"
fi

if [ "${CUDAREM_PYENV:-}" = off ]; then
    pyenv="none (CUDAREM_PYENV=off: the framework tests cannot run; make test FRAMEWORK_TESTS=0)"
else
    pyenv=$("$(dirname "$0")/python-env.sh")
    pyenv="$pyenv ($(du -sh "$pyenv" 2>/dev/null | cut -f1); CuPy, numba-cuda, pynvml, torch for the framework tests)"
fi
cuda_version=$(sed -n 's/^#define CUDART_VERSION *\([0-9]*\).*/\1/p' "$cuda/include/cuda_runtime_api.h")
echo "install-deps: done. What cudarem builds and tests with:"
echo "  Debian packages: ${#packages[@]}, of which ${#missing[@]} installed now${missing:+ (${missing[*]})}"
echo "  CUDA toolkit: $cuda (CUDA $((cuda_version / 1000)).$((cuda_version % 1000 / 10)))"
echo "  python for examples/train.py and make bench: $(command -v "$python") (numpy, scikit-learn, matplotlib)"
echo "  framework environment: $pyenv"
