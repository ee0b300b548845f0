#!/bin/sh
# linkage.sh -- what the PyPI torch wheel's CUDA libraries link: DT_NEEDED, SONAME
# and RPATH/RUNPATH of each (readelf -d), and the library names each carries as
# strings (candidates for dlopen). Static: nothing runs.
# Usage: tools/torch_probe/linkage.sh [PYTHON]   (default ~/.cache/cudarem/pyenv/bin/python)
PY=${1:-$HOME/.cache/cudarem/pyenv/bin/python}
SP=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
for f in "$SP"/torch/lib/libc10_cuda.so "$SP"/torch/lib/libtorch_cuda.so "$SP"/torch/lib/libtorch_cuda_linalg.so \
         "$SP"/torch/lib/libcaffe2_nvrtc.so "$SP"/torch/lib/libtorch_python.so "$SP"/torch/lib/libtorch_global_deps.so \
         "$SP"/torch/lib/libtorch_nvshmem.so "$SP"/nvidia/cu13/lib/libcublas.so.13 "$SP"/nvidia/cu13/lib/libcublasLt.so.13 \
         "$SP"/nvidia/cudnn/lib/libcudnn.so.9 "$SP"/nvidia/cudnn/lib/libcudnn_graph.so.9; do
    [ -f "$f" ] || continue
    echo "== ${f#$SP/} ($(du -m "$f" | cut -f1) MB)"
    readelf -d "$f" | awk '/NEEDED|RPATH|RUNPATH|SONAME/ { $1=""; print " " $0 }'
    # names of shared libraries in .rodata: what it may dlopen
    names=$(strings -n 8 "$f" | grep -oE '^lib(cuda|nvidia-ml|nvrtc|cudnn[a-z_]*|cublas[A-Za-z]*|nvJitLink|cupti|nccl|cufile|cusparse[A-Za-z]*|cufft|cusolver|caffe2_nvrtc|torch_cuda_linalg|nvshmem[a-z_]*)\.so[.0-9]*$' | sort -u | tr '\n' ' ')
    [ -n "$names" ] && echo "  library names in its strings: $names"
done
