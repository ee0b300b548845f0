#!/bin/sh
# list_cudart_syms.sh -- regenerates interpose/cudart13.syms, the functions that
# libcudart.so.13 exports and so libcudarem.so must export too (run after a toolkit
# upgrade; the list is committed so builds do not depend on the library's presence).
# Given another library it lists that one's: interpose/cublas13.syms and
# interpose/cublasLt13.syms come from libcublas.so.13 and libcublasLt.so.13.
lib=${1:-/usr/local/cuda/lib64/libcudart.so.13}
nm -D --defined-only "$lib" | awk '$2=="T"{sub(/@.*/,"",$3); print $3}' | sort -u
