#!/bin/sh
# list_cuda_syms.sh -- regenerates interpose/cuda13.syms, the functions that the CUDA
# driver library (libcuda.so.1) exports and so libcudarem.so must export too. Read
# from the toolkit's link stub, which exports the same names as the driver (run after
# a toolkit upgrade; the list is committed so builds do not depend on the stub).
lib=${1:-/usr/local/cuda/lib64/stubs/libcuda.so}
nm -D --defined-only "$lib" | awk '$2=="T"{sub(/@.*/,"",$3); print $3}' | sort -u
