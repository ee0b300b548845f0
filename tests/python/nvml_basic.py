#!/usr/bin/env python3
"""nvml_basic.py -- NVML through the cudarem shim with pynvml (nvidia-ml-py): init,
driver version, device count, name, memory info, shutdown; and the same count and
total memory as the CUDA runtime reports (loaded by name with ctypes, as
runtime_ctypes.py does), because every layer must tell one story about a device.
Prints one line per check and "PASS nvml_basic"; exits 0 only when every check
held. See fwcheck.py."""
import ctypes
import sys

from fwcheck import Checker


def text(v):
    return v.decode(errors="replace") if isinstance(v, bytes) else str(v)


def runtime_view(c):
    """(device count, total memory of device 0) from the CUDA runtime, or None."""
    try:
        rt = ctypes.CDLL("libcudart.so.13")
    except OSError as e:
        c.check(False, "load libcudart.so.13 with ctypes", str(e))
        return None
    count, free, total = ctypes.c_int(-1), ctypes.c_size_t(), ctypes.c_size_t()
    rc = rt.cudaGetDeviceCount(ctypes.byref(count))
    c.check(rc == 0, "cudaGetDeviceCount", "error %d" % rc)
    rc2 = rt.cudaMemGetInfo(ctypes.byref(free), ctypes.byref(total))
    c.check(rc2 == 0, "cudaMemGetInfo", "error %d" % rc2)
    return (count.value, total.value) if rc == 0 and rc2 == 0 else None


def body(c):
    pynvml = c.step("import pynvml", __import__, "pynvml", fatal=True)
    c.step("nvmlInit()", pynvml.nvmlInit, fatal=True)
    ver = c.step("nvmlSystemGetDriverVersion()", pynvml.nvmlSystemGetDriverVersion)
    c.check(ver is not None and text(ver).strip() != "", "driver version is not empty", repr(ver))
    cuda_ver = c.step("nvmlSystemGetCudaDriverVersion()", pynvml.nvmlSystemGetCudaDriverVersion)
    c.check(cuda_ver is not None and cuda_ver >= 13000, "CUDA driver version >= 13.0", repr(cuda_ver))
    n = c.step("nvmlDeviceGetCount()", pynvml.nvmlDeviceGetCount, fatal=True)
    c.check(n >= 1, "at least one device", "%d" % n)
    h = c.step("nvmlDeviceGetHandleByIndex(0)", pynvml.nvmlDeviceGetHandleByIndex, 0, fatal=True)
    name = c.step("nvmlDeviceGetName()", pynvml.nvmlDeviceGetName, h)
    c.check(name is not None and text(name).strip() != "", "device name is not empty", repr(name))
    mem = c.step("nvmlDeviceGetMemoryInfo()", pynvml.nvmlDeviceGetMemoryInfo, h)
    if mem is not None:
        c.note("device 0: %s, memory total %d, free %d, used %d" % (text(name), mem.total, mem.free, mem.used))
        c.check(mem.total > 0 and mem.free <= mem.total and mem.used <= mem.total,
                "memory: total > 0, free and used <= total")
    rt = runtime_view(c)
    if rt is not None:
        c.check(rt[0] == n, "NVML and the CUDA runtime count the same devices", "%d vs %d" % (n, rt[0]))
        if mem is not None:
            # A real GPU's runtime may hold back a little of what NVML reports.
            c.check(abs(mem.total - rt[1]) <= mem.total // 20, "NVML total memory within 5% of cudaMemGetInfo's",
                    "%d vs %d" % (mem.total, rt[1]))
    c.step("nvmlShutdown()", pynvml.nvmlShutdown)


if __name__ == "__main__":
    sys.exit(Checker("nvml_basic").run(body))
