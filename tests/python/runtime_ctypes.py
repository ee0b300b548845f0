#!/usr/bin/env python3
"""runtime_ctypes.py -- a Python program that loads the CUDA runtime by name with
ctypes (as frameworks do) and must reach the cudarem shim: device query, memory,
copies both ways, memset, errors. Prints FAIL lines and a final PASS; exit 0 only
when every check held."""
import ctypes
import sys

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL", what)


def main():
    names = sys.argv[1:] or ["libcudart.so", "libcudart.so.13"]
    for name in names:
        rt = ctypes.CDLL(name)
        rt.cudaGetErrorString.restype = ctypes.c_char_p
        rt.cudaGetErrorName.restype = ctypes.c_char_p
        count = ctypes.c_int(-1)
        check(rt.cudaGetDeviceCount(ctypes.byref(count)) == 0 and count.value >= 1, name + " device count")
        size = 1 << 20
        dev = ctypes.c_void_p()
        check(rt.cudaMalloc(ctypes.byref(dev), ctypes.c_size_t(size)) == 0 and dev.value, name + " cudaMalloc")
        src = (ctypes.c_ubyte * size)(*[(i * 7) & 0xFF for i in range(size)])
        dst = (ctypes.c_ubyte * size)()
        check(rt.cudaMemcpy(dev, src, ctypes.c_size_t(size), 1) == 0, name + " H2D")
        check(rt.cudaMemcpy(dst, dev, ctypes.c_size_t(size), 2) == 0, name + " D2H")
        check(bytes(dst) == bytes(src), name + " round trip bytes")
        check(rt.cudaMemset(dev, 0xAB, ctypes.c_size_t(4096)) == 0, name + " memset")
        check(rt.cudaMemcpy(dst, dev, ctypes.c_size_t(4096), 4) == 0, name + " D2H default kind")
        check(bytes(dst[:4096]) == b"\xab" * 4096, name + " memset bytes")
        check(rt.cudaFree(dev) == 0, name + " cudaFree")
        check(rt.cudaFree(dev) == 1, name + " double free is cudaErrorInvalidValue")
        check(rt.cudaGetLastError() == 1 and rt.cudaGetLastError() == 0, name + " last error read and reset")
        check(rt.cudaGetErrorName(1) == b"cudaErrorInvalidValue", name + " error name")
        check(rt.cudaGetErrorString(1) == b"invalid argument", name + " error string")
    if failures == 0:
        print("PASS runtime_ctypes")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
