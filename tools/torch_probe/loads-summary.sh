#!/bin/sh
# loads-summary.sh -- condenses the stderr of loads.py run with LD_DEBUG=files:
# keeps the phase markers, the new mappings ("+ path", CUDA/NVIDIA/torch ones only)
# and the loader's "file=... dynamically loaded by ..." lines (dlopen calls), so
# each phase shows what it dlopened and what came with it. Reads stdin.
grep -E '^=== |^phase raised|^\+ .*(nvidia|cuda|cudnn|cublas|nvrtc|torch|triton|nccl|nvshmem|cufile|cusparse|cufft|libcudarem)|dynamically loaded by' |
    grep -vE 'dynamically loaded by .*python3?[.0-9]*$|lib-dynload|/numpy/' |
    sed -E 's/^ *[0-9]+: *//; s/file=([^ ]*) \[0\]; *dynamically loaded by ([^ ]*).*/dlopen \1  (by \2)/' |
    sed -E "s#$HOME/.cache/cudarem/pyenv/lib/python3.11/site-packages/##g"
