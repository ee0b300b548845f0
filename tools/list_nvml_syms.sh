#!/bin/sh
# list_nvml_syms.sh -- regenerates interpose/nvml.syms, the functions libnvidia-ml.so.1
# exports and so libcudarem.so must export too (run after a toolkit upgrade; the list
# is committed). From the toolkit's stub library when it has one, else from the
# functions nvml.h declares (toolkits assembled from PyPI wheels ship the header
# alone), which include the unversioned legacy names the real library keeps.
cuda=${CUDA_HOME:-/usr/local/cuda}
stub=${1:-$cuda/lib64/stubs/libnvidia-ml.so}
if [ -f "$stub" ]; then
    nm -D --defined-only "$stub" | awk '$2=="T"{sub(/@.*/,"",$3); print $3}' | sort -u
else
    grep -oE 'DECLDIR[^(;]*[^A-Za-z0-9_]nvml[A-Za-z0-9_]+ *\(' "$cuda/include/nvml.h" |
        sed -E 's/.*[^A-Za-z0-9_](nvml[A-Za-z0-9_]+) *\(/\1/' | sort -u
fi
