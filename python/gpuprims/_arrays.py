"""Arrays in: what an argument is (where its memory lies, its length and dtype), and
how to allocate a result of the same kind on the same device.

Kinds, tried in this order (the kind of a type is found once and remembered):
NumPy ndarray; torch.Tensor and cupy.ndarray (read through their own attributes, the
fastest way); gpuprims.DeviceArray; anything with __cuda_array_interface__ (v2 or v3);
anything with __dlpack__; else whatever numpy.asarray makes of it (lists, scalars).
Every array must be 1-D and contiguous (C order); Life takes 2-D.

A kind adapts an argument (adapt), allocates a result like it (empty) and, for CUDA
arrays, names the framework's current stream on the array's device (stream: the handle,
never 0, and the Python object to keep alive while the library uses it, or None).

Results are allocated by the argument's own framework on its device (a torch tensor for
a torch tensor, a CuPy array for a CuPy array, NumPy for host memory). For a CUDA array
of another framework (__cuda_array_interface__ or DLPack), results are
gpuprims.DeviceArray, which exposes __cuda_array_interface__ so that torch.as_tensor,
cupy.asarray or numba take it without a copy.
"""
import ctypes
import math

import numpy as np

from . import _dtypes, _streams


class Operand:
    """One array argument: the object (kept alive while the call uses its memory), the
    address, the length and dtype code, the CUDA device (None for host memory) and kind.
    `stream` is a __cuda_array_interface__ v3 producer stream (None: nothing to wait)."""

    __slots__ = ("obj", "ptr", "n", "code", "device", "kind", "stream", "keep")

    def __init__(self, obj, ptr, n, code, device, kind, stream=None, keep=None):
        # (one store a line: a tuple assignment of eight costs a fifth more, every call)
        self.obj = obj
        self.ptr = ptr
        self.n = n
        self.code = code
        self.device = device
        self.kind = kind
        self.stream = stream
        self.keep = keep


def _shape_error(what, shape, ndim=1):
    want = "1-D" if ndim == 1 else f"{ndim}-D"
    return ValueError(f"{what}: expected a {want} array, got shape {tuple(shape)} (flatten it first)")


def dtype_error(what, dtype):
    return TypeError(f"{what}: dtype {dtype} is not supported (integers of 8 to 64 bits and floats)")


def _contig_error(what):
    return ValueError(f"{what}: the array is not contiguous (make a contiguous copy first)")


class NumpyKind:
    name = "numpy"

    @staticmethod
    def adapt(x, what, ndim=1):
        if x.ndim != ndim:
            raise _shape_error(what, x.shape, ndim)
        if not x.flags.c_contiguous:
            raise _contig_error(what)
        code = _dtypes.from_numpy(x.dtype) if ndim == 1 else None
        return Operand(x, x.__array_interface__["data"][0], x.size, code, None, NumpyKind)

    @staticmethod
    def empty(like, n, code, ctx, shape=None):
        out = np.empty(shape or n, _dtypes.to_numpy(code))
        return Operand(out, out.__array_interface__["data"][0], n, code, None, NumpyKind)


class TorchKind:
    name = "torch"
    torch = None
    _raw_stream = None

    @classmethod
    def setup(cls, torch):
        cls.torch = torch
        cls._fwd, cls._rev = _dtypes.torch_map(torch)
        # torch's own fast accessor (Triton uses it); the public one as a fallback.
        cls._raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or (
            lambda device: torch.cuda.current_stream(device).cuda_stream)

    @classmethod
    def adapt(cls, x, what, ndim=1):
        if x.dim() != ndim:
            raise _shape_error(what, x.shape, ndim)
        if not x.is_contiguous():
            raise _contig_error(what)
        code = cls._fwd.get(x.dtype)
        if code is None and ndim == 1:
            raise dtype_error(what, x.dtype)
        dev = x.get_device()
        if dev < 0:
            if x.device.type != "cpu":
                raise TypeError(f"{what}: tensors on {x.device} are not supported (CUDA or CPU)")
            dev = None
        return Operand(x, x.data_ptr(), x.numel(), code, dev, cls)

    @classmethod
    def empty(cls, like, n, code, ctx, shape=None):
        out = cls.torch.empty(shape or n, dtype=cls._rev[code], device=like.obj.device)
        return Operand(out, out.data_ptr(), n, code, like.device, cls)

    @classmethod
    def stream(cls, op):
        return cls._raw_stream(op.device) or _streams.LEGACY, None


class CupyKind:
    name = "cupy"
    cupy = None

    @classmethod
    def setup(cls, cupy):
        cls.cupy = cupy

    @classmethod
    def adapt(cls, x, what, ndim=1):
        if x.ndim != ndim:
            raise _shape_error(what, x.shape, ndim)
        if not x.flags.c_contiguous:
            raise _contig_error(what)
        code = _dtypes.from_numpy(x.dtype) if ndim == 1 else None
        return Operand(x, x.data.ptr, x.size, code, x.device.id, cls)

    @classmethod
    def empty(cls, like, n, code, ctx, shape=None):
        cp = cls.cupy
        if cp.cuda.runtime.getDevice() == like.device:
            out = cp.empty(shape or n, _dtypes.to_numpy(code))
        else:
            with cp.cuda.Device(like.device):
                out = cp.empty(shape or n, _dtypes.to_numpy(code))
        return Operand(out, out.data.ptr, n, code, like.device, cls)

    @classmethod
    def stream(cls, op):
        s = cls.cupy.cuda.get_current_stream(op.device)  # the object is kept: see Call.owner
        return s.ptr or _streams.LEGACY, s


class DeviceArrayKind:
    """gpuprims.DeviceArray: memory of a gpuprims context."""

    name = "gpuprims"

    @staticmethod
    def adapt(x, what, ndim=1):
        if ndim != 1:
            raise _shape_error(what, (x.n,), ndim)
        return Operand(x, x.ptr, x.n, x.code, x.ctx.device, DeviceArrayKind)

    @staticmethod
    def empty(like, n, code, ctx):
        from ._devarray import DeviceArray

        out = DeviceArray(ctx, n, code)
        return Operand(out, out.ptr, n, code, ctx.device, DeviceArrayKind)

    @staticmethod
    def stream(op):
        return op.obj.stream or _streams.LEGACY, None


class CudaInterfaceKind:
    """__cuda_array_interface__ (v2, v3): the data pointer, shape, typestr, strides and,
    from v3, the stream the producer wrote it on (the call's stream waits for it)."""

    name = "cuda_array_interface"

    @staticmethod
    def adapt(x, what, ndim=1):
        cai = x.__cuda_array_interface__
        shape, typestr = tuple(cai["shape"]), cai["typestr"]
        if len(shape) != ndim:
            raise _shape_error(what, shape, ndim)
        code = _dtypes.from_typestr(typestr) if ndim == 1 else None
        itemsize = int(typestr[2:])
        strides = cai.get("strides")
        if strides is not None and tuple(strides) != _c_strides(shape, itemsize):
            raise _contig_error(what)
        if cai.get("mask") is not None:
            raise ValueError(f"{what}: masked arrays are not supported")
        ptr = cai["data"][0]
        n = int(math.prod(shape))
        device = _streams.driver().device_of(ptr) if n else 0
        stream = cai.get("stream") if cai.get("version", 0) >= 3 else None
        return Operand(x, ptr, n, code, device, CudaInterfaceKind, stream=stream)

    empty = DeviceArrayKind.empty

    @staticmethod
    def stream(op):
        return _streams.handle(op.stream or _streams.LEGACY), None  # (a producer's value, checked)


def _c_strides(shape, itemsize):
    strides, acc = [], itemsize
    for dim in reversed(shape):
        strides.append(acc)
        acc *= dim
    return tuple(reversed(strides))


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64),
    ]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 13


class DlpackKind:
    """__dlpack__ / __dlpack_device__. The capsule is asked for once the call's stream is
    known (the producer then orders its work before that stream) and kept, unconsumed,
    for the call: the producer's capsule destructor releases the tensor afterwards."""

    name = "dlpack"

    @staticmethod
    def adapt(x, what, ndim=1):
        dev_type, dev_id = x.__dlpack_device__()
        if dev_type in (_DL_CPU, _DL_CUDA_HOST):
            device = None
        elif dev_type in (_DL_CUDA, _DL_CUDA_MANAGED):
            device = int(dev_id)
        else:
            raise TypeError(f"{what}: DLPack device type {dev_type} is not supported (CPU or CUDA)")
        op = Operand(x, None, 0, None, device, DlpackKind)
        if device is None:
            DlpackKind.materialize(op, None, what, ndim)
        return op

    @staticmethod
    def materialize(op, stream, what="array", ndim=1):
        capsule = op.obj.__dlpack__() if op.device is None else op.obj.__dlpack__(stream=stream)
        t = _DLTensor.from_address(_capsule_pointer(capsule, b"dltensor"))  # DLManagedTensor starts with it
        shape = [t.shape[i] for i in range(t.ndim)]
        if t.ndim != ndim:
            raise _shape_error(what, shape, ndim)
        if t.strides and t.ndim and tuple(t.strides[i] for i in range(t.ndim)) != _c_strides(shape, 1):
            raise _contig_error(what)
        op.code = _dtypes.from_dlpack(t.dtype.code, t.dtype.bits, t.dtype.lanes) if ndim == 1 else None
        op.ptr = (t.data or 0) + t.byte_offset
        op.n = int(math.prod(shape))
        op.keep = capsule

    @staticmethod
    def empty(like, n, code, ctx):
        return (NumpyKind if like.device is None else DeviceArrayKind).empty(like, n, code, ctx)

    @staticmethod
    def stream(op):
        return _streams.LEGACY, None


_KINDS = {np.ndarray: NumpyKind}


def _kind_of(t):
    """The kind of a type not met before (None: no array), remembered in _KINDS."""
    module = t.__module__.split(".")[0]
    if module == "torch" and hasattr(t, "data_ptr"):
        import torch

        TorchKind.setup(torch)
        if t is torch.Tensor:
            from . import _lean

            _lean.seen_torch(t)
        kind = TorchKind
    elif module == "cupy" and t.__name__ == "ndarray":
        import cupy

        CupyKind.setup(cupy)
        kind = CupyKind
    elif getattr(t, "_gpuprims_device_array", False):
        kind = DeviceArrayKind
    elif issubclass(t, np.ndarray):
        kind = NumpyKind
    elif hasattr(t, "__cuda_array_interface__"):
        kind = CudaInterfaceKind
    elif hasattr(t, "__dlpack__") and hasattr(t, "__dlpack_device__"):
        kind = DlpackKind
    else:
        return None
    _KINDS[t] = kind
    return kind


def adapt(x, what, ndim=1):
    """The Operand for argument `x` (named `what` in errors)."""
    kind = _KINDS.get(type(x)) or _kind_of(type(x))
    if kind is None:
        if x is None:
            raise TypeError(f"{what}: expected an array, not None")
        try:
            x = np.ascontiguousarray(x)
        except Exception as e:
            raise TypeError(f"{what}: {type(x).__name__} is no array: {e}") from None
        if x.dtype == object:
            raise TypeError(f"{what}: {type(x).__name__} holds no numbers")
        kind = NumpyKind
    return kind.adapt(x, what, ndim)
