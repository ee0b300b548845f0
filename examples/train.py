#!/usr/bin/env python3
"""train.py -- trains a small CNN on the scikit-learn digits with the CUDA runtime,
cuBLAS and cuDNN driven from Python through ctypes: the end-to-end proof of cudarem.

The libraries are loaded by their names (libcudart.so.13, libcublas.so.13,
libcudnn.so.9), so the same script runs on a GPU machine against the real
libraries, through the cudarem shim (LD_PRELOAD=libcudarem.so with
CUDAREM_SERVER set), or in-process against the emulated device (--lib
build/libcudarem-emu.so, which exports all three APIs).

Network (NCHW, float32): 1x8x8 image -> 3x3 convolution (16 filters, pad 1)
-> bias -> ReLU -> 2x2 max-pool -> dense 256->10 -> softmax, cross-entropy.

Everything that scales with the data runs on the device: the training set is
uploaded once per epoch (shuffled on the host, images and one-hot labels in one
copy), every step takes its batch as a slice of that array, and the forward
pass, backward pass and SGD update are cuDNN and cuBLAS calls on the default
stream. The mean loss is accumulated on the device (log-softmax . one-hot, a
cublasSgemv reduction) and read once per epoch; accuracy comes from one forward
pass over each split whose logits are read back. A step therefore moves no data
between host and device.

A pure-numpy reference of the same network (NumpyNet) checks the device's
gradients (--check) and can train without any device (--reference).

Prints one line per epoch (loss, train and test accuracy, seconds, and the
shim's round trips and calls per training step when the runtime exports
cudaremGetStats, else "n/a"), then a final line. Exit status: 0 when the last
epoch's test accuracy reached --min-accuracy (or --check agreed), 1 when not,
2 when a library could not be loaded or a call failed.
"""
import argparse
import ctypes
import sys
import time

try:
    import numpy as np
except ImportError:
    sys.exit("train.py needs numpy and scikit-learn (tools/install-deps.sh installs them)")

# --------------------------------------------------------------------------
# Library constants (values from the CUDA 13 / cuDNN 9 headers).

CUDA_MEMCPY_H2D = 1
CUDA_MEMCPY_D2H = 2

CUBLAS_OP_N = 0
CUBLAS_OP_T = 1

CUDNN_TENSOR_NCHW = 0
CUDNN_DATA_FLOAT = 0
CUDNN_CROSS_CORRELATION = 1
CUDNN_ACTIVATION_RELU = 1
CUDNN_NOT_PROPAGATE_NAN = 0
CUDNN_POOLING_MAX = 0
CUDNN_SOFTMAX_ACCURATE = 1
CUDNN_SOFTMAX_LOG = 2
CUDNN_SOFTMAX_MODE_CHANNEL = 1
CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM = 0
CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1 = 1

CUBLAS_STATUS = {
    0: "CUBLAS_STATUS_SUCCESS", 1: "CUBLAS_STATUS_NOT_INITIALIZED",
    3: "CUBLAS_STATUS_ALLOC_FAILED", 7: "CUBLAS_STATUS_INVALID_VALUE",
    8: "CUBLAS_STATUS_ARCH_MISMATCH", 11: "CUBLAS_STATUS_MAPPING_ERROR",
    13: "CUBLAS_STATUS_EXECUTION_FAILED", 14: "CUBLAS_STATUS_INTERNAL_ERROR",
    15: "CUBLAS_STATUS_NOT_SUPPORTED", 16: "CUBLAS_STATUS_LICENSE_ERROR",
}

CUDNN_STATUS = {
    0: "CUDNN_STATUS_SUCCESS", 1001: "CUDNN_STATUS_NOT_INITIALIZED",
    2000: "CUDNN_STATUS_BAD_PARAM", 2002: "CUDNN_STATUS_BAD_PARAM_NULL_POINTER",
    3000: "CUDNN_STATUS_NOT_SUPPORTED", 4000: "CUDNN_STATUS_INTERNAL_ERROR",
    4001: "CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED",
    4002: "CUDNN_STATUS_INTERNAL_ERROR_UNEXPECTED_VALUE",
    4003: "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED",
    4004: "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED",
    4005: "CUDNN_STATUS_INTERNAL_ERROR_BAD_LAUNCH_PARAM",
    5000: "CUDNN_STATUS_EXECUTION_FAILED",
}

# --------------------------------------------------------------------------
# Binding layer: typed ctypes functions whose non-zero status raises ApiError.

P = ctypes.POINTER
c_int, c_size_t, c_void_p, c_float = ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_float
c_double = ctypes.c_double
HANDLE = c_void_p  # every handle and descriptor is an opaque pointer
FLOATP = P(c_float)

CUDART_SIGNATURES = {
    "cudaMalloc": (P(c_void_p), c_size_t),
    "cudaFree": (c_void_p,),
    "cudaMemcpy": (c_void_p, c_void_p, c_size_t, c_int),
    "cudaMemset": (c_void_p, c_int, c_size_t),
    "cudaDeviceSynchronize": (),
}

CUBLAS_SIGNATURES = {
    "cublasCreate_v2": (P(HANDLE),),
    "cublasDestroy_v2": (HANDLE,),
    # handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc
    "cublasSgemm_v2": (HANDLE, c_int, c_int, c_int, c_int, c_int, FLOATP, c_void_p, c_int,
                       c_void_p, c_int, FLOATP, c_void_p, c_int),
    # handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy
    "cublasSgemv_v2": (HANDLE, c_int, c_int, c_int, FLOATP, c_void_p, c_int, c_void_p, c_int,
                       FLOATP, c_void_p, c_int),
    # handle, n, alpha, x, incx, y, incy
    "cublasSaxpy_v2": (HANDLE, c_int, FLOATP, c_void_p, c_int, c_void_p, c_int),
}

CUDNN_SIGNATURES = {
    "cudnnCreate": (P(HANDLE),),
    "cudnnDestroy": (HANDLE,),
    "cudnnCreateTensorDescriptor": (P(HANDLE),),
    "cudnnSetTensor4dDescriptor": (HANDLE, c_int, c_int, c_int, c_int, c_int, c_int),
    "cudnnDestroyTensorDescriptor": (HANDLE,),
    "cudnnCreateFilterDescriptor": (P(HANDLE),),
    "cudnnSetFilter4dDescriptor": (HANDLE, c_int, c_int, c_int, c_int, c_int, c_int),
    "cudnnDestroyFilterDescriptor": (HANDLE,),
    "cudnnCreateConvolutionDescriptor": (P(HANDLE),),
    "cudnnSetConvolution2dDescriptor": (HANDLE, c_int, c_int, c_int, c_int, c_int, c_int,
                                        c_int, c_int),
    "cudnnDestroyConvolutionDescriptor": (HANDLE,),
    "cudnnGetConvolution2dForwardOutputDim": (HANDLE, HANDLE, HANDLE, P(c_int), P(c_int),
                                              P(c_int), P(c_int)),
    "cudnnCreateActivationDescriptor": (P(HANDLE),),
    "cudnnSetActivationDescriptor": (HANDLE, c_int, c_int, c_double),
    "cudnnDestroyActivationDescriptor": (HANDLE,),
    "cudnnCreatePoolingDescriptor": (P(HANDLE),),
    "cudnnSetPooling2dDescriptor": (HANDLE, c_int, c_int, c_int, c_int, c_int, c_int, c_int,
                                    c_int),
    "cudnnDestroyPoolingDescriptor": (HANDLE,),
    # handle, xDesc, wDesc, convDesc, yDesc, algo, size
    "cudnnGetConvolutionForwardWorkspaceSize": (HANDLE, HANDLE, HANDLE, HANDLE, HANDLE, c_int,
                                                P(c_size_t)),
    # handle, xDesc, dyDesc, convDesc, dwDesc, algo, size
    "cudnnGetConvolutionBackwardFilterWorkspaceSize": (HANDLE, HANDLE, HANDLE, HANDLE, HANDLE,
                                                       c_int, P(c_size_t)),
    # handle, alpha, xDesc, x, wDesc, w, convDesc, algo, ws, wsSize, beta, yDesc, y
    "cudnnConvolutionForward": (HANDLE, FLOATP, HANDLE, c_void_p, HANDLE, c_void_p, HANDLE,
                                c_int, c_void_p, c_size_t, FLOATP, HANDLE, c_void_p),
    # handle, alpha, xDesc, x, dyDesc, dy, convDesc, algo, ws, wsSize, beta, dwDesc, dw
    "cudnnConvolutionBackwardFilter": (HANDLE, FLOATP, HANDLE, c_void_p, HANDLE, c_void_p,
                                       HANDLE, c_int, c_void_p, c_size_t, FLOATP, HANDLE,
                                       c_void_p),
    # handle, alpha, dyDesc, dy, beta, dbDesc, db
    "cudnnConvolutionBackwardBias": (HANDLE, FLOATP, HANDLE, c_void_p, FLOATP, HANDLE, c_void_p),
    # handle, alpha, aDesc, A, beta, cDesc, C
    "cudnnAddTensor": (HANDLE, FLOATP, HANDLE, c_void_p, FLOATP, HANDLE, c_void_p),
    # handle, actDesc, alpha, xDesc, x, beta, yDesc, y
    "cudnnActivationForward": (HANDLE, HANDLE, FLOATP, HANDLE, c_void_p, FLOATP, HANDLE, c_void_p),
    # handle, actDesc, alpha, yDesc, y, dyDesc, dy, xDesc, x, beta, dxDesc, dx
    "cudnnActivationBackward": (HANDLE, HANDLE, FLOATP, HANDLE, c_void_p, HANDLE, c_void_p,
                                HANDLE, c_void_p, FLOATP, HANDLE, c_void_p),
    # handle, poolDesc, alpha, xDesc, x, beta, yDesc, y
    "cudnnPoolingForward": (HANDLE, HANDLE, FLOATP, HANDLE, c_void_p, FLOATP, HANDLE, c_void_p),
    # handle, poolDesc, alpha, yDesc, y, dyDesc, dy, xDesc, x, beta, dxDesc, dx
    "cudnnPoolingBackward": (HANDLE, HANDLE, FLOATP, HANDLE, c_void_p, HANDLE, c_void_p,
                             HANDLE, c_void_p, FLOATP, HANDLE, c_void_p),
    # handle, algo, mode, alpha, xDesc, x, beta, yDesc, y
    "cudnnSoftmaxForward": (HANDLE, c_int, c_int, FLOATP, HANDLE, c_void_p, FLOATP, HANDLE,
                            c_void_p),
}


class ApiError(RuntimeError):
    """A CUDA, cuBLAS or cuDNN call returned a failure status."""

    def __init__(self, name, status, meaning):
        super().__init__("%s failed: status %d (%s)" % (name, status, meaning))
        self.name, self.status = name, status


class Library:
    """One loaded library whose functions (attributes) check their status."""

    def __init__(self, path, signatures, describe):
        self.path = path
        self.cdll = ctypes.CDLL(path)
        self._describe = describe
        for name, argtypes in signatures.items():
            setattr(self, name, self._bind(name, argtypes))

    def _bind(self, name, argtypes):
        try:
            fn = getattr(self.cdll, name)
        except AttributeError:
            raise OSError("%s does not export %s" % (self.path, name)) from None
        fn.argtypes = list(argtypes)
        fn.restype = c_int
        describe = self._describe

        def checked(*args):
            status = fn(*args)
            if status != 0:
                raise ApiError(name, status, describe(status))
        checked.__name__ = name
        return checked


def stats_function(cdll):
    """The cudarem shim's `int cudaremGetStats(unsigned long long out[4])` (round
    trips, calls, bytes to and from the device so far) if CDLL exports it, else
    None (real libraries, the emulated device in-process, an older shim)."""
    try:
        fn = cdll.cudaremGetStats
    except AttributeError:
        return None
    fn.argtypes, fn.restype = [P(ctypes.c_ulonglong)], c_int
    return fn


class Apis:
    """The three libraries. PATH None loads each by its library name."""

    NAMES = ("libcudart.so.13", "libcublas.so.13", "libcudnn.so.9")

    def __init__(self, path=None):
        rt_path, blas_path, dnn_path = (path,) * 3 if path else self.NAMES
        self.rt = Library(rt_path, CUDART_SIGNATURES, self._cuda_error_name)
        self.blas = Library(blas_path, CUBLAS_SIGNATURES,
                            lambda s: CUBLAS_STATUS.get(s, "unknown cuBLAS status"))
        self.dnn = Library(dnn_path, CUDNN_SIGNATURES,
                           lambda s: CUDNN_STATUS.get(s, "unknown cuDNN status"))
        self._stats = stats_function(self.rt.cdll)

    def _cuda_error_name(self, status):
        name = self.rt.cdll.cudaGetErrorName
        name.restype, name.argtypes = ctypes.c_char_p, [c_int]
        return (name(status) or b"unknown CUDA error").decode()

    def stats(self):
        """The shim's counters (round_trips, calls, bytes_h2d, bytes_d2h), or
        None where the loaded runtime does not export cudaremGetStats."""
        if self._stats is None:
            return None
        out = (ctypes.c_ulonglong * 4)()
        if self._stats(out) != 0:
            return None
        return tuple(out)


# --------------------------------------------------------------------------
# Device memory.

class Device:
    """Device allocations by address (Python ints); frees them all on close."""

    def __init__(self, apis):
        self.rt = apis.rt
        self._allocs = []

    def alloc(self, nbytes):
        """Returns the address of NBYTES of zeroed device memory."""
        ptr = c_void_p()
        self.rt.cudaMalloc(ctypes.byref(ptr), nbytes)
        self._allocs.append(ptr.value)
        self.rt.cudaMemset(ptr.value, 0, nbytes)
        return ptr.value

    def alloc_floats(self, count):
        return self.alloc(4 * count)

    def upload(self, dst, array):
        """Copies the float32 ARRAY to device address DST."""
        host = np.ascontiguousarray(array, dtype=np.float32)
        self.rt.cudaMemcpy(dst, host.ctypes.data, host.nbytes, CUDA_MEMCPY_H2D)

    def download(self, src, shape):
        """Returns a float32 array of SHAPE read from device address SRC."""
        host = np.empty(shape, dtype=np.float32)
        self.rt.cudaMemcpy(host.ctypes.data, src, host.nbytes, CUDA_MEMCPY_D2H)
        return host

    def close(self):
        while self._allocs:
            self.rt.cudaFree(self._allocs.pop())


def floats(*values):
    """Host scalars for alpha/beta arguments, as ctypes float pointers."""
    return [ctypes.pointer(c_float(v)) for v in values]


# --------------------------------------------------------------------------
# The network's shapes and parameter layout, shared by device and reference.

IMAGE = 8          # digits are 8x8, one channel
FILTERS = 16       # convolution output channels
KERNEL = 3         # 3x3 convolution, padding 1, stride 1: output 8x8
POOL = 2           # 2x2 max-pool, stride 2: output 4x4
CLASSES = 10
FEATURES = FILTERS * (IMAGE // POOL) ** 2   # 256 inputs to the dense layer
ALIGN = 64         # parameter blocks start on 256-byte boundaries

PARAM_SHAPES = (("w1", (FILTERS, 1, KERNEL, KERNEL)), ("b1", (FILTERS,)),
                ("w2", (CLASSES, FEATURES)), ("b2", (CLASSES,)))


def param_layout():
    """Offsets (in floats) of each parameter in one flat vector, and its length.
    Parameters and gradients share the layout, so one axpy updates them all."""
    offsets, at = {}, 0
    for name, shape in PARAM_SHAPES:
        offsets[name] = at
        at += -(-int(np.prod(shape)) // ALIGN) * ALIGN
    return offsets, at


def init_params(rng):
    """He-initialised weights and zero biases, as a flat float32 vector."""
    offsets, total = param_layout()
    flat = np.zeros(total, dtype=np.float32)
    fan_in = {"w1": KERNEL * KERNEL, "w2": FEATURES}
    for name, shape in PARAM_SHAPES:
        if name in fan_in:
            size = int(np.prod(shape))
            w = rng.standard_normal(size) * np.sqrt(2.0 / fan_in[name])
            flat[offsets[name]:offsets[name] + size] = w
    return flat


def unpack(flat):
    """Views of each parameter in a flat vector, by name."""
    offsets, _ = param_layout()
    return {name: flat[offsets[name]:offsets[name] + int(np.prod(shape))].reshape(shape)
            for name, shape in PARAM_SHAPES}


# --------------------------------------------------------------------------
# Pure-numpy reference of the same network.

class NumpyNet:
    """The network on the host: forward, loss and gradients in float64."""

    @staticmethod
    def forward(params, x):
        """Returns (logits, cache) for images X of shape (N, 64)."""
        p = unpack(params)
        n = x.shape[0]
        img = x.reshape(n, 1, IMAGE, IMAGE).astype(np.float64)
        pad = KERNEL // 2
        padded = np.pad(img, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
        windows = np.lib.stride_tricks.sliding_window_view(padded, (KERNEL, KERNEL), axis=(2, 3))
        h = np.einsum("nchwij,kcij->nkhw", windows, p["w1"]) + p["b1"][None, :, None, None]
        a = np.maximum(h, 0.0)
        side = IMAGE // POOL
        tiles = a.reshape(n, FILTERS, side, POOL, side, POOL).transpose(0, 1, 2, 4, 3, 5)
        tiles = tiles.reshape(n, FILTERS, side, side, POOL * POOL)
        arg = tiles.argmax(axis=-1)
        pooled = tiles.max(axis=-1).reshape(n, FEATURES)
        logits = pooled @ p["w2"].T.astype(np.float64) + p["b2"]
        return logits, (windows, h, arg, pooled)

    @staticmethod
    def loss_and_grads(params, x, onehot):
        """Mean cross-entropy over the batch and its gradient (flat, float64)."""
        p = unpack(params)
        logits, (windows, h, arg, pooled) = NumpyNet.forward(params, x)
        n = x.shape[0]
        shifted = logits - logits.max(axis=1, keepdims=True)
        logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        loss = -(onehot * logp).sum() / n
        dz = (np.exp(logp) - onehot) / n
        dpooled = dz @ p["w2"].astype(np.float64)
        side = IMAGE // POOL
        dtiles = np.zeros((n, FILTERS, side, side, POOL * POOL))
        np.put_along_axis(dtiles, arg[..., None], dpooled.reshape(n, FILTERS, side, side, 1),
                          axis=-1)
        da = dtiles.reshape(n, FILTERS, side, side, POOL, POOL).transpose(0, 1, 2, 4, 3, 5)
        dh = da.reshape(n, FILTERS, IMAGE, IMAGE) * (h > 0)
        grads = {"w1": np.einsum("nchwij,nkhw->kcij", windows, dh), "b1": dh.sum(axis=(0, 2, 3)),
                 "w2": dz.T @ pooled, "b2": dz.sum(axis=0)}
        flat = np.zeros(params.shape, dtype=np.float64)
        for name, view in unpack(flat).items():
            view[...] = grads[name]
        return loss, flat


# --------------------------------------------------------------------------
# The network on the device.

class Descriptors:
    """cuDNN tensor descriptors for one batch size N."""

    def __init__(self, dnn, n):
        self.dnn, self.n, self._made = dnn, n, []
        side = IMAGE // POOL
        self.x = self._tensor(n, 1, IMAGE, IMAGE)
        self.h = self._tensor(n, FILTERS, IMAGE, IMAGE)
        self.pooled = self._tensor(n, FILTERS, side, side)
        self.logits = self._tensor(n, CLASSES, 1, 1)

    def _tensor(self, n, c, h, w):
        desc = HANDLE()
        self.dnn.cudnnCreateTensorDescriptor(ctypes.byref(desc))
        self._made.append(desc)
        self.dnn.cudnnSetTensor4dDescriptor(desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, w)
        return desc

    def close(self):
        while self._made:
            self.dnn.cudnnDestroyTensorDescriptor(self._made.pop())


class DeviceNet:
    """The network's parameters, gradients and activations in device memory, and
    the cuDNN/cuBLAS calls of a forward pass, a training step and an update.

    SIZES are the batch sizes forward() will be given (the training batch,
    then whole splits for evaluation): buffers, descriptors and the workspace
    are made for them. train_step() takes batches of SIZES[0].
    """

    def __init__(self, apis, device, params, sizes):
        self.dev, self.dnn, self.blas = device, apis.dnn, apis.blas
        self.sizes, self.train_n = tuple(sizes), sizes[0]
        self._handles()
        self._layer_descriptors()
        self.desc = {}
        self.offsets, self.nparams = param_layout()
        self.params = device.alloc_floats(self.nparams)
        self.grads = device.alloc_floats(self.nparams)  # padding stays zero
        device.upload(self.params, params)
        self._activations(max(self.sizes))
        self.ones = device.alloc_floats(self.train_n)
        device.upload(self.ones, np.ones(self.train_n, dtype=np.float32))
        self.loss_sum = device.alloc_floats(1)
        self._workspace()

    # -- setup ---------------------------------------------------------------

    def _handles(self):
        self.dnn_handle, self.blas_handle = HANDLE(), HANDLE()
        self.dnn.cudnnCreate(ctypes.byref(self.dnn_handle))
        self.blas.cublasCreate_v2(ctypes.byref(self.blas_handle))

    def _layer_descriptors(self):
        d = self.dnn
        self.filt, self.conv = HANDLE(), HANDLE()
        self.act, self.pool = HANDLE(), HANDLE()
        self.b1_desc, self.b2_desc = HANDLE(), HANDLE()
        d.cudnnCreateFilterDescriptor(ctypes.byref(self.filt))
        d.cudnnSetFilter4dDescriptor(self.filt, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW,
                                     FILTERS, 1, KERNEL, KERNEL)
        d.cudnnCreateConvolutionDescriptor(ctypes.byref(self.conv))
        pad = KERNEL // 2
        d.cudnnSetConvolution2dDescriptor(self.conv, pad, pad, 1, 1, 1, 1,
                                          CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT)
        d.cudnnCreateActivationDescriptor(ctypes.byref(self.act))
        d.cudnnSetActivationDescriptor(self.act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN,
                                       0.0)
        d.cudnnCreatePoolingDescriptor(ctypes.byref(self.pool))
        d.cudnnSetPooling2dDescriptor(self.pool, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN,
                                      POOL, POOL, 0, 0, POOL, POOL)
        for desc, channels in ((self.b1_desc, FILTERS), (self.b2_desc, CLASSES)):
            d.cudnnCreateTensorDescriptor(ctypes.byref(desc))
            d.cudnnSetTensor4dDescriptor(desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
                                         1, channels, 1, 1)

    def _activations(self, n):
        side = IMAGE // POOL
        conv_out = n * FILTERS * IMAGE * IMAGE
        self.h = self.dev.alloc_floats(conv_out)        # conv + bias
        self.a = self.dev.alloc_floats(conv_out)        # ReLU
        self.pooled = self.dev.alloc_floats(n * FILTERS * side * side)
        self.logits = self.dev.alloc_floats(n * CLASSES)
        self.logp = self.dev.alloc_floats(n * CLASSES)  # log-softmax
        self.dz = self.dev.alloc_floats(n * CLASSES)    # softmax, then softmax - onehot
        self.dpooled = self.dev.alloc_floats(n * FILTERS * side * side)
        self.da = self.dev.alloc_floats(conv_out)
        self.dh = self.dev.alloc_floats(conv_out)

    def _workspace(self):
        """Allocates one workspace large enough for every convolution call."""
        need = 0
        for n in self.sizes:
            t = self.descriptors(n)
            size = c_size_t(0)
            self._check_conv_output(t)
            self.dnn.cudnnGetConvolutionForwardWorkspaceSize(
                self.dnn_handle, t.x, self.filt, self.conv, t.h,
                CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, ctypes.byref(size))
            need = max(need, size.value)
        t = self.descriptors(self.train_n)
        size = c_size_t(0)
        self.dnn.cudnnGetConvolutionBackwardFilterWorkspaceSize(
            self.dnn_handle, t.x, t.h, self.conv, self.filt,
            CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, ctypes.byref(size))
        self.ws_size = max(need, size.value)
        self.ws = self.dev.alloc(self.ws_size) if self.ws_size else None

    def _check_conv_output(self, t):
        dims = [c_int() for _ in range(4)]
        self.dnn.cudnnGetConvolution2dForwardOutputDim(self.conv, t.x, self.filt,
                                                       *[ctypes.byref(v) for v in dims])
        got = tuple(v.value for v in dims)
        if got != (t.n, FILTERS, IMAGE, IMAGE):
            raise RuntimeError("cudnnGetConvolution2dForwardOutputDim gave %s" % (got,))

    def descriptors(self, n):
        """The tensor descriptors for batch size N (made on first use)."""
        if n not in self.desc:
            if n not in self.sizes:
                raise ValueError("batch of %d was not planned for (%s)" % (n, self.sizes))
            self.desc[n] = Descriptors(self.dnn, n)
        return self.desc[n]

    def param(self, name):
        return self.params + 4 * self.offsets[name]

    def grad(self, name):
        return self.grads + 4 * self.offsets[name]

    # -- computation ---------------------------------------------------------

    def forward(self, x, n):
        """Logits of the N images at device address X into self.logits."""
        d, h, t = self.dnn, self.dnn_handle, self.descriptors(n)
        one, zero = floats(1.0, 0.0)
        d.cudnnConvolutionForward(h, one, t.x, x, self.filt, self.param("w1"), self.conv,
                                  CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, self.ws,
                                  self.ws_size, zero, t.h, self.h)
        d.cudnnAddTensor(h, one, self.b1_desc, self.param("b1"), one, t.h, self.h)
        d.cudnnActivationForward(h, self.act, one, t.h, self.h, zero, t.h, self.a)
        d.cudnnPoolingForward(h, self.pool, one, t.h, self.a, zero, t.pooled, self.pooled)
        # Row-major (N x 256) pooled times W2^T (256 x 10): in cuBLAS's column-major
        # view, logits^T (10 x N) = W2 (stored as 256 x 10, transposed) . pooled^T.
        self.blas.cublasSgemm_v2(self.blas_handle, CUBLAS_OP_T, CUBLAS_OP_N, CLASSES, n, FEATURES,
                                 one, self.param("w2"), FEATURES, self.pooled, FEATURES,
                                 zero, self.logits, CLASSES)
        d.cudnnAddTensor(h, one, self.b2_desc, self.param("b2"), one, t.logits, self.logits)

    def loss_and_grads(self, x, onehot, first):
        """Forward and backward pass over the batch (train_n images at X, their
        one-hot labels at ONEHOT): gradients into self.grads, and the batch's mean
        loss added to self.loss_sum (which FIRST resets)."""
        n, d, h = self.train_n, self.dnn, self.dnn_handle
        t, blas, bh = self.descriptors(n), self.blas, self.blas_handle
        one, zero, minus_one, inv_n = floats(1.0, 0.0, -1.0, 1.0 / n)
        self.forward(x, n)
        d.cudnnSoftmaxForward(h, CUDNN_SOFTMAX_LOG, CUDNN_SOFTMAX_MODE_CHANNEL, one,
                              t.logits, self.logits, zero, t.logits, self.logp)
        # loss_sum (+)= -(1/n) onehot . logp, as a 1-row gemv that stays on the device.
        neg_inv_n, keep = floats(-1.0 / n, 0.0 if first else 1.0)
        blas.cublasSgemv_v2(bh, CUBLAS_OP_T, n * CLASSES, 1, neg_inv_n, onehot, n * CLASSES,
                            self.logp, 1, keep, self.loss_sum, 1)
        # dL/dlogits = (softmax - onehot) / n; the 1/n goes into the gemm alphas.
        d.cudnnSoftmaxForward(h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, one,
                              t.logits, self.logits, zero, t.logits, self.dz)
        blas.cublasSaxpy_v2(bh, n * CLASSES, minus_one, onehot, 1, self.dz, 1)
        self._dense_backward(n, inv_n, zero)
        self._conv_backward(t, x, one, zero)

    def _dense_backward(self, n, inv_n, zero):
        blas, bh = self.blas, self.blas_handle
        # dW2 (10 x 256 row-major = 256 x 10 column-major) = pooled^T . dz
        blas.cublasSgemm_v2(bh, CUBLAS_OP_N, CUBLAS_OP_T, FEATURES, CLASSES, n, inv_n,
                            self.pooled, FEATURES, self.dz, CLASSES, zero, self.grad("w2"),
                            FEATURES)
        # db2 = dz^T . ones: the batch sum of each class column
        blas.cublasSgemv_v2(bh, CUBLAS_OP_N, CLASSES, n, inv_n, self.dz, CLASSES, self.ones, 1,
                            zero, self.grad("b2"), 1)
        # dpooled (N x 256 row-major) = dz . W2
        blas.cublasSgemm_v2(bh, CUBLAS_OP_N, CUBLAS_OP_N, FEATURES, n, CLASSES, inv_n,
                            self.param("w2"), FEATURES, self.dz, CLASSES, zero, self.dpooled,
                            FEATURES)

    def _conv_backward(self, t, x, one, zero):
        d, h = self.dnn, self.dnn_handle
        d.cudnnPoolingBackward(h, self.pool, one, t.pooled, self.pooled, t.pooled, self.dpooled,
                               t.h, self.a, zero, t.h, self.da)
        d.cudnnActivationBackward(h, self.act, one, t.h, self.a, t.h, self.da, t.h, self.h,
                                  zero, t.h, self.dh)
        d.cudnnConvolutionBackwardBias(h, one, t.h, self.dh, zero, self.b1_desc, self.grad("b1"))
        d.cudnnConvolutionBackwardFilter(h, one, t.x, x, t.h, self.dh, self.conv,
                                         CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, self.ws,
                                         self.ws_size, zero, self.filt, self.grad("w1"))

    def train_step(self, x, onehot, lr, first):
        """One SGD step on the batch at X / ONEHOT (see loss_and_grads)."""
        self.loss_and_grads(x, onehot, first)
        (neg_lr,) = floats(-lr)
        self.blas.cublasSaxpy_v2(self.blas_handle, self.nparams, neg_lr, self.grads, 1,
                                 self.params, 1)

    def close(self):
        for t in self.desc.values():
            t.close()
        d = self.dnn
        d.cudnnDestroyTensorDescriptor(self.b2_desc)
        d.cudnnDestroyTensorDescriptor(self.b1_desc)
        d.cudnnDestroyPoolingDescriptor(self.pool)
        d.cudnnDestroyActivationDescriptor(self.act)
        d.cudnnDestroyConvolutionDescriptor(self.conv)
        d.cudnnDestroyFilterDescriptor(self.filt)
        self.blas.cublasDestroy_v2(self.blas_handle)
        d.cudnnDestroy(self.dnn_handle)


# --------------------------------------------------------------------------
# Data.

def load_data(seed, test_fraction=0.2):
    """The digits split into train and test by a permutation fixed by SEED:
    (x_train, y_train, x_test, y_test), images as float32 rows of 64 pixels
    standardised with the training split's mean and deviation."""
    from sklearn.datasets import load_digits
    digits = load_digits()
    x, y = digits.data.astype(np.float64), digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(y))
    n_test = int(round(len(y) * test_fraction))
    test, train = order[:n_test], order[n_test:]
    mean, std = x[train].mean(), x[train].std()
    x = ((x - mean) / std).astype(np.float32)
    return x[train], y[train], x[test], y[test]


def one_hot(labels):
    out = np.zeros((len(labels), CLASSES), dtype=np.float32)
    out[np.arange(len(labels)), labels] = 1.0
    return out


# --------------------------------------------------------------------------
# Trainers: the same interface on the device and on the numpy reference.

class DeviceTrainer:
    """Training on the device. The training split lives in one device array,
    [images | one-hot labels], rewritten in a new order each epoch; batch i is
    a slice of it. The test images are uploaded once."""

    def __init__(self, apis, data, params, batch):
        self.apis = apis
        self.x_train, self.y_train, self.x_test, self.y_test = data
        self.batch = batch
        self.steps = len(self.y_train) // batch   # the remainder sits out an epoch
        self.dev = Device(apis)
        self.net = None
        try:
            n_train, n_test = len(self.y_train), len(self.y_test)
            self.train_x = self.dev.alloc_floats(n_train * (IMAGE * IMAGE + CLASSES))
            self.train_onehot = self.train_x + 4 * n_train * IMAGE * IMAGE
            self.test_x = self.dev.alloc_floats(n_test * IMAGE * IMAGE)
            self.dev.upload(self.test_x, self.x_test)
            self.net = DeviceNet(apis, self.dev, params, (batch, n_train, n_test))
        except BaseException:
            close_after_error(self)
            raise

    def start_epoch(self, order):
        """Uploads the training split in ORDER (one copy)."""
        self.y_order = self.y_train[order]
        block = np.concatenate([self.x_train[order].ravel(), one_hot(self.y_order).ravel()])
        self.dev.upload(self.train_x, block)

    def _batch(self, step):
        return (self.train_x + 4 * step * self.batch * IMAGE * IMAGE,
                self.train_onehot + 4 * step * self.batch * CLASSES)

    def step(self, step, lr):
        x, onehot = self._batch(step)
        self.net.train_step(x, onehot, lr, first=step == 0)

    def epoch_loss(self):
        """Mean training loss of this epoch's steps (one device-to-host copy)."""
        return float(self.dev.download(self.net.loss_sum, (1,))[0]) / self.steps

    def _predict(self, x, n):
        self.net.forward(x, n)
        return self.dev.download(self.net.logits, (n, CLASSES)).argmax(axis=1)

    def accuracy(self):
        """(train, test) accuracy: one forward pass and one copy back per split."""
        train = np.mean(self._predict(self.train_x, len(self.y_order)) == self.y_order)
        test = np.mean(self._predict(self.test_x, len(self.y_test)) == self.y_test)
        return float(train), float(test)

    def gradients(self, step):
        """(loss, flat gradient) of batch STEP at the current parameters, read back."""
        x, onehot = self._batch(step)
        self.net.loss_and_grads(x, onehot, first=True)
        loss = float(self.dev.download(self.net.loss_sum, (1,))[0])
        return loss, self.dev.download(self.net.grads, (self.net.nparams,))

    def stats(self):
        return self.apis.stats()

    def close(self):
        if self.net is not None:
            self.net.close()
        self.dev.close()


class ReferenceTrainer:
    """The same training on the host with NumpyNet (no device at all)."""

    def __init__(self, data, params, batch):
        self.x_train, self.y_train, self.x_test, self.y_test = data
        self.params = params.astype(np.float64)
        self.batch = batch
        self.steps = len(self.y_train) // batch

    def start_epoch(self, order):
        self.x_order, self.y_order = self.x_train[order], self.y_train[order]
        self.onehot = one_hot(self.y_order)
        self.loss_sum = 0.0

    def step(self, step, lr):
        rows = slice(step * self.batch, (step + 1) * self.batch)
        loss, grads = NumpyNet.loss_and_grads(self.params, self.x_order[rows], self.onehot[rows])
        self.loss_sum += loss
        self.params -= lr * grads

    def epoch_loss(self):
        return self.loss_sum / self.steps

    def accuracy(self):
        def acc(x, y):
            return float(np.mean(NumpyNet.forward(self.params, x)[0].argmax(axis=1) == y))
        return acc(self.x_order, self.y_order), acc(self.x_test, self.y_test)

    def stats(self):
        return None

    def close(self):
        pass


# --------------------------------------------------------------------------
# Training loop and reports.

def per_step(before, after, steps):
    """'round trips/step' text from two stats snapshots, or n/a."""
    if before is None or after is None:
        return "round trips/step n/a"
    return "round trips/step %.2f (calls/step %.1f)" % ((after[0] - before[0]) / steps,
                                                         (after[1] - before[1]) / steps)


def train(trainer, args, log):
    """Runs ARGS.epochs epochs; returns the last (train, test) accuracy."""
    rng = np.random.default_rng(args.seed + 1)
    accuracy = (0.0, 0.0)
    for epoch in range(1, args.epochs + 1):
        start = time.perf_counter()
        trainer.start_epoch(rng.permutation(len(trainer.y_train)))
        before = trainer.stats()
        lr = args.lr * args.lr_decay ** (epoch - 1)
        for step in range(trainer.steps):
            trainer.step(step, lr)
        loss = trainer.epoch_loss()   # also drains anything the steps queued
        after = trainer.stats()
        accuracy = trainer.accuracy()
        log("epoch %d/%d  loss %.4f  train %.2f%%  test %.2f%%  %.2f s  %s"
            % (epoch, args.epochs, loss, 100 * accuracy[0], 100 * accuracy[1],
               time.perf_counter() - start, per_step(before, after, trainer.steps)))
    return accuracy


def check_gradients(trainer, data, params, batch):
    """Compares the device's loss and gradients on the first batch with the
    numpy reference's. Returns True when they agree."""
    x_train, y_train = data[0], data[1]
    order = np.arange(len(y_train))
    trainer.start_epoch(order)
    loss, grads = trainer.gradients(0)
    ref_loss, ref = NumpyNet.loss_and_grads(params.astype(np.float64), x_train[:batch],
                                            one_hot(y_train[:batch]))
    ok = abs(loss - ref_loss) <= 1e-4 * max(1.0, abs(ref_loss))
    print("check loss: device %.6f reference %.6f %s" % (loss, ref_loss, "ok" if ok else "FAIL"))
    dev_views, ref_views = unpack(grads), unpack(ref)
    for name, _ in PARAM_SHAPES:
        err = np.abs(dev_views[name] - ref_views[name]).max()
        scale = max(np.abs(ref_views[name]).max(), 1e-6)
        good = err <= 1e-3 * scale
        ok = ok and good
        print("check d%s: max abs error %.3g (largest %.3g) %s"
              % (name, err, scale, "ok" if good else "FAIL"))
    return ok


def parse_args(argv):
    ap = argparse.ArgumentParser(
        description="Train a small CNN on the digits with cuDNN and cuBLAS through ctypes.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--epochs", type=int, default=4, help="passes over the training split")
    ap.add_argument("--batch", type=int, default=32, help="images per SGD step")
    ap.add_argument("--lr", type=float, default=0.2, help="SGD learning rate of the first epoch")
    ap.add_argument("--lr-decay", type=float, default=0.7,
                    help="factor applied to the learning rate after each epoch")
    ap.add_argument("--seed", type=int, default=0,
                    help="seeds the train/test split, the initial weights and the shuffles")
    ap.add_argument("--lib", metavar="PATH",
                    help="load the runtime, cuBLAS and cuDNN all from PATH "
                         "(e.g. build/libcudarem-emu.so) instead of by library name")
    ap.add_argument("--min-accuracy", type=float, default=0.95,
                    help="test accuracy the last epoch must reach for exit status 0")
    ap.add_argument("--check", action="store_true",
                    help="compare one batch's device gradients with the numpy reference, then exit")
    ap.add_argument("--reference", action="store_true",
                    help="train with the numpy reference only (no device)")
    ap.add_argument("--quiet", action="store_true", help="print only the final line")
    args = ap.parse_args(argv)
    if args.epochs < 1 or args.batch < 1 or args.lr <= 0:
        ap.error("--epochs and --batch must be positive, --lr above 0")
    return args


def make_trainer(args, data, params):
    """The device trainer (or the numpy one for --reference) and where it runs."""
    if args.reference:
        return ReferenceTrainer(data, params, args.batch), "numpy reference"
    apis = Apis(args.lib)
    return DeviceTrainer(apis, data, params, args.batch), apis.rt.path


def close_after_error(trainer):
    """Releases TRAINER while an earlier error propagates: a failing release
    (a sticky device error fails them all) must not hide that error."""
    try:
        trainer.close()
    except ApiError:
        pass


def run(args):
    """Trains (or checks); returns the exit status."""
    log = (lambda line: None) if args.quiet else (lambda line: print(line, flush=True))
    data = load_data(args.seed)
    if args.batch > len(data[1]):
        raise ValueError("--batch %d exceeds the %d training images" % (args.batch, len(data[1])))
    params = init_params(np.random.default_rng(args.seed))
    trainer, where = make_trainer(args, data, params)
    try:
        if args.check:
            ok = check_gradients(trainer, data, params, args.batch)
        else:
            log("digits: %d train / %d test images; conv 3x3x%d + ReLU + maxpool 2x2 + dense "
                "%d->%d; batch %d, lr %g, %d steps/epoch; libraries: %s"
                % (len(data[1]), len(data[3]), FILTERS, FEATURES, CLASSES, args.batch, args.lr,
                   trainer.steps, where))
            start = time.perf_counter()
            _, test = train(trainer, args, log)
    except BaseException:
        close_after_error(trainer)
        raise
    trainer.close()
    if args.check:
        print("PASS gradients" if ok else "FAIL gradients")
        return 0 if ok else 1
    passed = test >= args.min_accuracy
    print("final test accuracy %.2f%% (floor %.2f%%) in %.1f s: %s"
          % (100 * test, 100 * args.min_accuracy, time.perf_counter() - start,
             "PASS" if passed else "FAIL"))
    return 0 if passed else 1


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return run(args)
    except ImportError as err:
        print("train.py: %s (tools/install-deps.sh installs numpy and scikit-learn)" % err,
              file=sys.stderr)
        return 2
    except (ApiError, OSError, ValueError) as err:
        print("train.py: %s" % err, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
