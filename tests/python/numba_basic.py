#!/usr/bin/env python3
"""numba_basic.py -- numba-cuda (numba-cuda[cu13]) through the cudarem shim: driver
initialisation, cuda.detect(), list_devices(), the current device's name and
compute capability, memory info, exact device_array copies up to 32 MiB, a
@cuda.jit kernel, and the same kernel on managed and mapped arrays the host writes
and reads directly (Python's faulthandler enabled after the first managed
allocation: cudarem's fault handler stays in front of it).

numba compiles kernels to PTX on the client (NVVM) and links them with nvJitLink
(cuda.core's linker), which it loads by name: the shim's nvJitLink keeps a
one-PTX link as PTX (interpose/crm_nvjitlink.c), so the module numba loads
through the driver carries PTX, which the emulated device's PTX engine runs and a
GPU server compiles: the kernel must compute right on either. Prints one line per
check and "PASS numba_basic"; exits 0 only when every check held. See fwcheck.py."""
import sys

from fwcheck import COPY_SIZES, Checker, random_bytes


cuda = None  # numba.cuda once imported: kernels must see it as a global


def add_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1.0


def body(c):
    global cuda
    import numpy
    cuda = c.step("import numba.cuda", lambda: __import__("numba.cuda", fromlist=["cuda"]), fatal=True)
    import numba_cuda
    c.note("numba-cuda %s" % getattr(numba_cuda, "__version__", "?"))

    # is_available() swallows the reason; initialise the driver directly first.
    from numba.cuda.cudadrv import driver as drv
    c.step("driver initialisation (driver.driver.get_device_count())",
           lambda: drv.driver.get_device_count(), fatal=True)
    c.check(cuda.is_available(), "cuda.is_available()")
    c.check(c.step("cuda.detect()", cuda.detect) is True, "cuda.detect() found a supported device")
    devs = c.step("cuda.list_devices()", cuda.list_devices, fatal=True)
    c.check(len(devs) >= 1, "at least one device", "%d" % len(devs))
    dev = c.step("cuda.get_current_device()", cuda.get_current_device, fatal=True)
    name = dev.name.decode(errors="replace") if isinstance(dev.name, bytes) else str(dev.name)
    c.note("device: %s, compute capability %s" % (name, dev.compute_capability))
    c.check(name.strip() != "", "device name is not empty")
    cc = dev.compute_capability
    c.check(isinstance(cc, tuple) and len(cc) == 2 and cc[0] >= 3, "compute capability (major, minor)", repr(cc))

    mem = c.step("current_context().get_memory_info()", lambda: cuda.current_context().get_memory_info())
    if mem is not None:
        c.note("memory: free %d, total %d" % (mem.free, mem.total))
        c.check(0 < mem.free <= mem.total, "0 < free <= total")

    for i, size in enumerate(COPY_SIZES):
        host = random_bytes(size, 100 + i)
        dev_arr = c.step("cuda.to_device of %d bytes" % size, cuda.to_device, host)
        if dev_arr is None:
            continue
        back = c.step("copy_to_host of %d bytes" % size, dev_arr.copy_to_host)
        if back is not None:
            c.check(numpy.array_equal(back, host), "%d bytes came back exactly" % size)
        empty = c.step("cuda.device_array(%d) + copy_to_device" % size,
                       lambda: _fill(cuda.device_array(size, dtype=numpy.uint8), host))
        if empty is not None:
            back = c.step("copy_to_host of the device_array", empty.copy_to_host)
            c.check(back is not None and numpy.array_equal(back, host), "device_array holds the same bytes")
        del dev_arr, empty

    def run_kernel():
        kernel = cuda.jit(add_one)
        x = cuda.to_device(numpy.arange(1000, dtype=numpy.float32))
        kernel[4, 256](x)
        cuda.synchronize()
        return x.copy_to_host()

    want = numpy.arange(1000, dtype=numpy.float32) + 1
    got = c.step("@cuda.jit kernel add_one", run_kernel)
    c.check(got is not None and numpy.array_equal(got, want), "kernel add_one computed right")
    c.step("get_memory_info() after the kernel", lambda: cuda.current_context().get_memory_info())

    def run_on(make):
        import faulthandler
        kernel = cuda.jit(add_one)
        x = make(1000, dtype=numpy.float32)
        faulthandler.enable()  # its SIGSEGV handler goes in after cudarem's
        x[:] = numpy.arange(1000, dtype=numpy.float32)  # the host writes it directly
        kernel[4, 256](x)
        cuda.synchronize()
        return numpy.array(x)  # and reads it directly

    for what in ("managed_array", "mapped_array"):
        got = c.step("@cuda.jit kernel on a %s" % what, run_on, getattr(cuda, what))
        c.check(got is not None and numpy.array_equal(got, want), "kernel add_one on a %s computed right" % what)


def _fill(arr, host):
    arr.copy_to_device(host)
    return arr


if __name__ == "__main__":
    sys.exit(Checker("numba_basic").run(body))
