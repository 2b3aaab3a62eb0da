"""gpuprims.DeviceArray: a 1-D array in a gpuprims context's device memory, the result
type for CUDA inputs whose framework gpuprims cannot allocate with (a bare
__cuda_array_interface__ or DLPack producer). It exposes __cuda_array_interface__ (v3,
with the stream its last write was issued on), so torch.as_tensor(a), cupy.asarray(a)
and numba take it without a copy, and numpy.asarray(a) copies it to the host.
"""
import ctypes

import numpy as np

from . import _dtypes
from ._errors import raise_for
from ._lib import lib


class DeviceArray:
    """A 1-D array in device memory owned by gpuprims (freed with the object)."""

    _gpuprims_device_array = True

    def __init__(self, ctx, n, code):
        h = ctypes.c_void_p()
        with ctx.lock:
            s = lib.gpuprims_buffer_create(ctx.handle, code, n, ctypes.byref(h))
        if s:
            raise_for(s)
        self.ctx, self.n, self.code, self.handle = ctx, n, code, h.value
        self.stream = ctx.stream  # the buffer is allocated in this stream's order
        p = ctypes.c_void_p()
        s = lib.gpuprims_buffer_device_ptr(self.handle, ctypes.byref(p))
        if s:
            raise_for(s)
        self.ptr = p.value or 0

    @property
    def dtype(self):
        return _dtypes.to_numpy(self.code)

    @property
    def shape(self):
        return (self.n,)

    def __len__(self):
        return self.n

    @property
    def __cuda_array_interface__(self):
        return {
            "shape": (self.n,), "typestr": self.dtype.str, "data": (self.ptr, False),
            "version": 3, "strides": None, "stream": self.stream,
        }

    def numpy(self):
        """A NumPy copy (waits for the work that writes it)."""
        out = np.empty(self.n, self.dtype)
        if self.n:
            s = lib.gpuprims_buffer_read(self.handle, 0, out.ctypes.data, self.n)
            if s:
                raise_for(s)
        return out

    def __array__(self, dtype=None, copy=None):
        out = self.numpy()
        return out if dtype is None else out.astype(dtype)

    def __del__(self):
        h, self.handle = getattr(self, "handle", None), None
        if h is not None:
            lib.gpuprims_buffer_destroy(h)

    def __repr__(self):
        return f"gpuprims.DeviceArray({self.numpy()!r}, device={self.ctx.device})"
