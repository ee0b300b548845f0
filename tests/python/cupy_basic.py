#!/usr/bin/env python3
"""cupy_basic.py -- CuPy (cupy-cuda13x wheel) through the cudarem shim: device count
and properties, exact host<->device copies up to 32 MiB, memGetInfo, float32 and
float64 matmul through cuBLAS against NumPy, kernels, and a CUDA graph of kernels
captured on a stream (Stream.begin_capture, end_capture, Graph.launch) replayed
with new inputs.

Kernels (CuPy compiles them with NVRTC on the client; CUPY_COMPILE_WITH_PTX=1 makes
that PTX) must compute right on the emulated device (its PTX engine runs them) and
when CUDAREM_EXPECT_PTX=1 (a GPU server), and otherwise must fail cleanly with a
CUDA error (CUDADriverError or CUDARuntimeError). Prints one line per check and
"PASS cupy_basic"; exits 0 only when every check held. See fwcheck.py."""
import os
import sys

os.environ["CUPY_COMPILE_WITH_PTX"] = "1"

from fwcheck import COPY_SIZES, Checker, expect_kernels, random_bytes  # noqa: E402


def cuda_error_classes():
    """The exception types CuPy raises for a failing CUDA call."""
    from cupy_backends.cuda.api import driver, runtime
    return (driver.CUDADriverError, runtime.CUDARuntimeError)


def _memcpy_d2d(cupy, src):
    dst = cupy.empty_like(src)
    dst.data.copy_from_device(src.data, src.nbytes)
    return dst


def body(c):
    import numpy
    cupy = c.step("import cupy", __import__, "cupy", fatal=True)
    c.note("cupy %s" % cupy.__version__)
    rt = cupy.cuda.runtime

    n = c.step("runtime.getDeviceCount()", rt.getDeviceCount, fatal=True)
    c.check(n >= 1, "at least one device", "count %d" % n)
    props = c.step("runtime.getDeviceProperties(0)", rt.getDeviceProperties, 0, fatal=True)
    name = props["name"].decode(errors="replace") if isinstance(props["name"], bytes) else str(props["name"])
    c.note("device 0: %s, compute capability %d.%d, %d bytes" % (
        name, props["major"], props["minor"], props["totalGlobalMem"]))
    c.check(name.strip() != "", "device name is not empty")
    c.check(props["major"] >= 3, "compute capability major >= 3", "%d.%d" % (props["major"], props["minor"]))
    c.check(props["totalGlobalMem"] > 0, "totalGlobalMem > 0")
    cc = c.step("Device(0).compute_capability", lambda: cupy.cuda.Device(0).compute_capability)
    c.check(cc == "%d%d" % (props["major"], props["minor"]), "compute_capability matches the properties",
            "%r" % (cc,))

    info = c.step("runtime.memGetInfo()", rt.memGetInfo)
    if info is not None:
        free, total = info
        c.note("memGetInfo: free %d, total %d" % (free, total))
        c.check(0 < free <= total, "0 < free <= total")
        c.check(total == props["totalGlobalMem"], "memGetInfo total == totalGlobalMem",
                "%d vs %d" % (total, props["totalGlobalMem"]))

    for i, size in enumerate(COPY_SIZES):
        host = random_bytes(size, i)
        dev = c.step("cupy.asarray (H2D) of %d bytes" % size, cupy.asarray, host)
        if dev is None:
            continue
        back = c.step("cupy.asnumpy (D2H) of %d bytes" % size, cupy.asnumpy, dev)
        if back is not None:
            c.check(back.dtype == numpy.uint8 and numpy.array_equal(back, host),
                    "%d bytes came back exactly" % size)
        # ndarray.copy() runs a copy kernel; a memory copy is the driver's D2D copy
        dup = c.step("device-to-device copy of %d bytes" % size, lambda: _memcpy_d2d(cupy, dev))
        if dup is not None:
            back = c.step("D2H of the copy", cupy.asnumpy, dup)
            c.check(back is not None and numpy.array_equal(back, host), "the copy holds the same bytes")
        del dev, dup

    rng = numpy.random.default_rng(7)
    for dtype, rtol in ((numpy.float32, 1e-4), (numpy.float64, 1e-12)):
        a = rng.standard_normal((67, 45)).astype(dtype)
        b = rng.standard_normal((45, 33)).astype(dtype)
        got = c.step("cupy.matmul %s (cuBLAS)" % dtype.__name__,
                     lambda: cupy.asnumpy(cupy.matmul(cupy.asarray(a), cupy.asarray(b))))
        if got is not None:
            want = a @ b
            c.check(got.dtype == dtype and numpy.allclose(got, want, rtol=rtol, atol=rtol),
                    "matmul %s matches NumPy" % dtype.__name__,
                    "max abs diff %g" % float(numpy.max(numpy.abs(got - want))))

    kernels = [
        ("cupy.arange(10) * 2", lambda: cupy.asnumpy(cupy.arange(10, dtype=cupy.float32) * 2),
         numpy.arange(10, dtype=numpy.float32) * 2),
        ("ElementwiseKernel squared_diff", lambda: cupy.asnumpy(cupy.ElementwiseKernel(
            "float64 x, float64 y", "float64 z", "z = (x - y) * (x - y)", "crm_squared_diff")(
            cupy.asarray(numpy.arange(8.0)), cupy.asarray(numpy.full(8, 3.0)))),
         (numpy.arange(8.0) - 3.0) ** 2),
    ]
    runs_ptx = expect_kernels("PTX") or "emulated" in name
    for what, run, want in kernels:
        if runs_ptx:
            got = c.step("kernel %s" % what, run)
            c.check(got is not None and numpy.array_equal(got, want), "kernel %s computed right" % what)
        else:
            c.expect_error("kernel %s fails with a CUDA error (a server that runs no PTX)" % what, run,
                           lambda e: isinstance(e, cuda_error_classes()))
    if runs_ptx:
        check_graph(c, cupy, numpy)
    # The process must still be usable after a failed kernel: a plain query works.
    c.step("getDeviceCount() after the kernels", rt.getDeviceCount)


def check_graph(c, cupy, numpy):
    """Two kernels captured on a stream, the second reading what the first wrote;
    each replay must see the input of its moment."""
    twice_plus = cupy.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x * 2 + y", "crm_twice_plus")
    s = cupy.cuda.Stream(non_blocking=True)
    x, y = cupy.zeros(1000, dtype=cupy.float32), cupy.arange(1000, dtype=cupy.float32)
    z = cupy.empty_like(x)

    def capture():
        with s:
            twice_plus(x, y, z)  # compiled before the capture
            s.synchronize()
            s.begin_capture()
            twice_plus(x, y, z)
            twice_plus(z, y, x)
            return s.end_capture()

    graph = c.step("Stream.begin_capture / end_capture of two kernels", capture)
    if graph is None:
        return
    ramp = numpy.arange(1000, dtype=numpy.float32)
    for i in range(3):
        x.set(numpy.full(1000, i, dtype=numpy.float32))
        c.step("Graph.launch %d" % i, lambda: (graph.launch(s), s.synchronize()))
        want_z = i * 2 + ramp
        c.check(numpy.array_equal(z.get(), want_z) and numpy.array_equal(x.get(), want_z * 2 + ramp),
                "replay %d of the captured kernels computed right" % i)


if __name__ == "__main__":
    sys.exit(Checker("cupy_basic").run(body))
