#!/usr/bin/env python3
"""unusable.py -- what the frameworks tell a program when the cudarem server cannot
be used (tests/e2e/check_e2e_unusable.c runs it against each way a server fails):
a machine with a current driver and no usable device, never a driver problem.

  unusable.py CODE     CODE: cudaErrorNoDevice, or cudaErrorDevicesUnavailable
                       (the server, or the user's quota, is full)

NVML (pynvml): nvmlInit fails with Driver Not Loaded, as on a machine whose driver
finds no GPU, and succeeds with no devices under NVML_INIT_FLAG_NO_GPUS. CuPy (its
runtime is NVIDIA's static one, on our driver): CUDARuntimeError named CODE, with
CUDA's own description. numba-cuda (the driver API): cuda.is_available() is False,
and its first transfer raises CudaSupportError naming the driver's code for CODE.
torch (the shared runtime): is_available() is False, device_count() is 0, and
creating a tensor raises a RuntimeError with CODE's description. No message may
say the driver is insufficient or too old. Prints one line per check and
"PASS unusable"; exits 0 only when every check held."""
import sys

from fwcheck import Checker

DESCRIPTIONS = {
    "cudaErrorNoDevice": ("no CUDA-capable device is detected", "CUDA_ERROR_NO_DEVICE", "No CUDA GPUs are available"),
    "cudaErrorDevicesUnavailable": ("CUDA-capable device(s) is/are busy or unavailable", "CUDA_ERROR_DEVICE_UNAVAILABLE",
                                    "busy or unavailable"),
}
DRIVER_PROBLEM = ("insufficient", "too old", "driver version")


def raised(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 -- the exception is the subject
        return e
    return None


def honest(c, what, text):
    c.check(not any(w in text for w in DRIVER_PROBLEM), "%s blames no driver: %r" % (what, text[:200]))


def nvml(c):
    import pynvml
    e = raised(pynvml.nvmlInit)
    c.check(isinstance(e, pynvml.NVMLError_DriverNotLoaded), "nvmlInit: Driver Not Loaded (got %r)" % (e,))
    c.check(raised(lambda: pynvml.nvmlInitWithFlags(pynvml.NVML_INIT_FLAG_NO_GPUS)) is None,
            "nvmlInitWithFlags(NO_GPUS) succeeds")
    c.check(pynvml.nvmlDeviceGetCount() == 0, "and finds no device")
    pynvml.nvmlShutdown()


def cupy_checks(c, code, text):
    import cupy
    e = raised(cupy.cuda.runtime.getDeviceCount)
    c.check(isinstance(e, cupy.cuda.runtime.CUDARuntimeError), "CuPy getDeviceCount raises CUDARuntimeError (got %r)" % (e,))
    c.check(str(e) == "%s: %s" % (code, text), "CuPy says %r" % str(e))
    e = raised(lambda: cupy.zeros(4))
    c.check(e is not None and str(e).startswith(code), "CuPy's first array fails with %s: %r" % (code, str(e)))
    honest(c, "CuPy", str(e))


def numba_checks(c, driver_code):
    from numba import cuda
    c.check(cuda.is_available() is False, "numba: cuda.is_available() is False")
    e = raised(lambda: cuda.to_device([1.0]))
    c.check(type(e).__name__ == "CudaSupportError" and driver_code in str(e),
            "numba's first transfer raises CudaSupportError naming %s: %r" % (driver_code, str(e)))
    honest(c, "numba", str(e))


def torch_checks(c, torch_text):
    import torch
    c.check(torch.cuda.is_available() is False, "torch.cuda.is_available() is False")
    c.check(torch.cuda.device_count() == 0, "torch.cuda.device_count() is 0")
    e = raised(lambda: torch.zeros(1, device="cuda"))
    c.check(isinstance(e, RuntimeError) and torch_text in str(e),
            "torch's first tensor raises RuntimeError saying %r: %r" % (torch_text, str(e)))
    honest(c, "torch", str(e))


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in DESCRIPTIONS:
        print(__doc__, file=sys.stderr)
        return 2
    code = sys.argv[1]
    text, driver_code, torch_text = DESCRIPTIONS[code]

    def body(c):
        nvml(c)
        cupy_checks(c, code, text)
        numba_checks(c, driver_code)
        torch_checks(c, torch_text)
    return Checker("unusable").run(body)


if __name__ == "__main__":
    sys.exit(main())
