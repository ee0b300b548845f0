#!/usr/bin/env bash
# run-mnist-cudnn.sh -- builds NVIDIA's mnistCUDNN sample (cuDNN's legacy API:
# convolutions with algorithm searches and FFT, pooling, LRN, activation, softmax,
# tensor transforms to half; cuBLAS gemv and SgemmEx; a CUDA kernel) from a checkout
# of the cuDNN samples, runs it through the shim against a local server on the
# emulated device (or the server at CUDAREM_SERVER) with NVIDIA's libraries hidden,
# and checks that both precisions classify the three images as the sample expects
# ("Result of classification: 1 3 5", "Test passed!"). Nothing of theirs is copied
# into this tree: the sample is copied into build/samples/mnistCUDNN and built there,
# with its two reads of cudaDeviceProp fields CUDA 13 removed (clock rates, printed
# only) replaced by 0. Needs libfreeimage-dev.
#
#   tools/run-mnist-cudnn.sh SAMPLES_DIR     (SAMPLES_DIR holds mnistCUDNN/)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
samples=${1:?usage: run-mnist-cudnn.sh SAMPLES_DIR}
out=$here/build/samples/mnistCUDNN
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
rm -rf "$out"
mkdir -p "$out"
cp -r "$samples/mnistCUDNN/." "$out/" || exit 2
cd "$out" || exit 2
sed -i 's/(float)prop\.clockRate \* 1e-3/0.0f/; s/(float)prop\.memoryClockRate \* 1e-3/0.0f/' error_util.h
if ! "$nvcc" -O2 -o mnistCUDNN mnistCUDNN.cpp fp16_dev.cu fp16_emu.cpp -lcudnn -lcublas -lfreeimage \
        > build.log 2>&1; then
    echo "mnistCUDNN not built:"; grep -m3 error build.log; exit 2
fi

server_pid=
if [ -z "${CUDAREM_SERVER:-}" ]; then
    sock=$out/server.sock
    "$here/build/cudarem-server" --device emu --listen "unix:$sock" --insecure --log-level warn \
        2> server.log &
    server_pid=$!
    for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
    export CUDAREM_SERVER=unix:$sock
fi
LD_LIBRARY_PATH=$here/build/lib LD_PRELOAD=$here/build/libcudarem.so timeout 300 ./mnistCUDNN > run.out 2> run.err
rc=$?
[ -n "$server_pid" ] && kill "$server_pid" && wait "$server_pid" 2> /dev/null
classified=$(grep -c "^Result of classification: 1 3 5" run.out)
passed=$(grep -c "^Test passed!" run.out)
echo "mnistCUDNN: exit $rc, $classified of 2 precisions classify 1 3 5, $passed of 2 passed (output: $out/run.out)"
[ "$rc" -eq 0 ] && [ "$classified" -eq 2 ] && [ "$passed" -eq 2 ]
