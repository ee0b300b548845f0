#!/usr/bin/env python3
"""pynvml_query.py -- NVIDIA's Python NVML bindings (PyPI nvidia-ml-py) through the
shim: pynvml loads libnvidia-ml.so.1 by name, which the preloaded shim answers.
Prints each device's name, UUID, compute capability and memory, and the processes
using it; "PASS pynvml_query" when everything agrees."""
import sys

import pynvml


def main():
    pynvml.nvmlInit()
    print("pynvml: driver %s, CUDA driver %d" % (pynvml.nvmlSystemGetDriverVersion(),
                                                 pynvml.nvmlSystemGetCudaDriverVersion()))
    count = pynvml.nvmlDeviceGetCount()
    ok = count >= 1
    for i in range(count):
        h = pynvml.nvmlDeviceGetHandleByIndex(i)
        mem = pynvml.nvmlDeviceGetMemoryInfo(h)
        major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(h)
        print("pynvml: device %d: %s %s compute capability %d.%d" % (
            i, pynvml.nvmlDeviceGetName(h), pynvml.nvmlDeviceGetUUID(h), major, minor))
        print("pynvml: device %d: memory total %d used %d free %d" % (i, mem.total, mem.used, mem.free))
        procs = pynvml.nvmlDeviceGetComputeRunningProcesses(h)
        print("pynvml: device %d: %d process(es)" % (i, len(procs)))
        ok = ok and mem.total > 0 and mem.used + mem.free == mem.total
        ok = ok and pynvml.nvmlDeviceGetIndex(pynvml.nvmlDeviceGetHandleByUUID(pynvml.nvmlDeviceGetUUID(h))) == i
    try:
        pynvml.nvmlDeviceGetPowerUsage(pynvml.nvmlDeviceGetHandleByIndex(0))
        ok = False
    except pynvml.NVMLError_NotSupported:
        pass
    pynvml.nvmlShutdown()
    print("PASS pynvml_query" if ok else "FAIL pynvml_query")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
