#!/bin/sh
# nvml-venv.sh -- makes the virtual environment the NVML tests run pynvml from:
# nvml-venv.sh DIR creates DIR with PyPI's nvidia-ml-py (NVIDIA's pynvml.py, pure
# Python) for the python3 on PATH (or $PYTHON), and marks it with DIR/.installed.
set -eu
dir=$1
python=${PYTHON:-python3}
rm -rf "$dir"
"$python" -m venv "$dir"
PIP_ROOT_USER_ACTION=ignore "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "nvidia-ml-py>=12"
"$dir/bin/python" -c "import pynvml" 
touch "$dir/.installed"
