"""Stand-ins for the CUDA path on a machine without a GPU (and without torch or CuPy):
torch-like tensors, CuPy-like arrays and bare __cuda_array_interface__ objects that
expose what the package reads, as the real ones do, at made-up device addresses; a host
context marked as a CUDA context; and a library whose functions are recorded no-ops.

Used by test_host.py (the CUDA path's checks and the calls it makes) and by
python/tools/overhead.py (the Python layer's own time). Nothing here touches memory.
"""
import itertools
import math
import sys
import types

import numpy as np

import gpuprims as gp
from gpuprims import _abi, _streams


class _Pool:
    """Made-up device addresses, reused once freed (as PyTorch's caching allocator and
    CuPy's memory pool reuse theirs: the package's wrapper cache depends on it)."""

    def __init__(self):
        self._fresh = itertools.count(0x7F0000000000, 1 << 20)
        self._free = {}

    def alloc(self, nbytes):
        free = self._free.get(nbytes)
        return free.pop() if free else next(self._fresh)

    def release(self, ptr, nbytes):
        self._free.setdefault(nbytes, []).append(ptr)


_pool = _Pool()

# --- torch ----------------------------------------------------------------------------------

torch = types.ModuleType("torch")


class _TorchDtype:
    def __init__(self, name):
        self.name = name
        self.itemsize = 1 if name == "bool" else np.dtype(name.replace("bfloat", "float")).itemsize

    def __repr__(self):
        return f"torch.{self.name}"


for _name in ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16",
              "bfloat16", "float32", "float64"):
    setattr(torch, _name, _TorchDtype(_name))


class _TorchDevice:
    def __init__(self, spec, index=None):
        if isinstance(spec, _TorchDevice):
            spec, index = spec.type, spec.index
        elif ":" in spec:
            spec, index = spec.split(":")[0], int(spec.split(":")[1])
        self.type = spec
        self.index = (index or 0) if spec == "cuda" else None

    def __eq__(self, other):
        return (self.type, self.index) == (other.type, other.index)

    def __repr__(self):
        return f"device(type='{self.type}', index={self.index})"


class Tensor:
    """A 1-D (or 2-D) tensor: torch's accessors, made-up memory."""

    def __init__(self, shape, dtype=torch.float32, device="cuda", contiguous=True):
        self.shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        self.dtype, self.device, self._contiguous = dtype, _TorchDevice(device), contiguous
        self._nbytes = self.numel() * dtype.itemsize
        self._ptr = _pool.alloc(self._nbytes)
        self.recorded = []

    def __del__(self):
        _pool.release(self._ptr, self._nbytes)

    def dim(self):
        return len(self.shape)

    @property
    def ndim(self):
        return len(self.shape)

    def numel(self):
        return math.prod(self.shape)

    def is_contiguous(self):
        return self._contiguous

    def get_device(self):
        return -1 if self.device.type == "cpu" else self.device.index

    def data_ptr(self):
        return self._ptr

    def record_stream(self, stream):
        self.recorded.append(stream)

    def __len__(self):
        return self.shape[0]


Tensor.__module__ = torch.__name__
torch.Tensor = Tensor
torch.device = _TorchDevice


def _empty(n, dtype=torch.float32, device="cpu"):
    if isinstance(device, int):
        device = _TorchDevice("cuda", device)
    return Tensor(n, dtype, device)


torch.empty = _empty
torch._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda device: 0)  # the default stream


class _TorchStream:
    def __init__(self, handle=0x5000, device=None):
        self.cuda_stream = handle


torch.cuda = types.SimpleNamespace(Stream=_TorchStream, ExternalStream=_TorchStream)

# --- CuPy -----------------------------------------------------------------------------------

cupy = types.ModuleType("cupy")


class ndarray:
    def __init__(self, shape, dtype="float32", device=0, contiguous=True):
        self.shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        self.dtype = np.dtype(dtype)
        self.flags = types.SimpleNamespace(c_contiguous=contiguous)
        self._nbytes = self.size * self.dtype.itemsize
        self.data = types.SimpleNamespace(ptr=_pool.alloc(self._nbytes))
        self.device = types.SimpleNamespace(id=device)

    def __del__(self):
        _pool.release(self.data.ptr, self._nbytes)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    def __len__(self):
        return self.shape[0]


ndarray.__module__ = cupy.__name__
cupy.ndarray = ndarray
cupy.empty = lambda n, dtype: ndarray(n, dtype)
_cupy_stream = types.SimpleNamespace(ptr=0)  # the default stream, as CuPy's object
cupy.cuda = types.SimpleNamespace(get_current_stream=lambda device: _cupy_stream,
                                  runtime=types.SimpleNamespace(getDevice=lambda: 0))


# --- __cuda_array_interface__ ---------------------------------------------------------------

class CudaInterfaceArray:
    """Only __cuda_array_interface__ (v3), rebuilt on every access as numba's and torch's is."""

    def __init__(self, n, dtype="float32", strides=None, stream=None):
        self.n, self.typestr, self.strides, self.stream = n, np.dtype(dtype).str, strides, stream
        self.ptr = _pool.alloc(n * np.dtype(dtype).itemsize)

    @property
    def __cuda_array_interface__(self):
        return {"shape": (self.n,), "typestr": self.typestr, "data": (self.ptr, False), "version": 3,
                "strides": self.strides, "stream": self.stream}


class _Driver:
    """The CUDA driver calls of gpuprims._streams: every pointer on device 0, waits recorded."""

    def __init__(self):
        self.waits = []

    def device_of(self, ptr):
        return 0

    def wait(self, consumer, producer):
        self.waits.append((consumer, producer))


# --- installing them ------------------------------------------------------------------------

def install(setitem=None):
    """Makes `import torch` and `import cupy` give the stand-ins and the CUDA driver calls
    the stand-in driver. `setitem(mapping_or_object, key, value)` makes the change (pytest's
    monkeypatch.setitem / setattr undo it); by default it is permanent."""
    setitem = setitem or (lambda m, k, v: m.__setitem__(k, v))
    setitem(sys.modules, "torch", torch)
    setitem(sys.modules, "cupy", cupy)
    driver = _Driver()
    _streams._driver = driver
    return driver


def fake_cuda_context():
    """A host context that says it is a CUDA context of device 0 (every library call on it
    must be stubbed: the host backend refuses streams and device memory)."""
    ctx = gp.Context("host")
    ctx.is_cuda, ctx.device = True, 0
    return ctx


class Recorder:
    """Library functions replaced by no-ops returning 0 that record their calls by name;
    out-parameters of new handles get 1, 2, 3, ..."""

    def __init__(self):
        self.calls = []
        self._handles = itertools.count(1)

    def stub(self, name, args):
        outs = [i for i, (_, t) in enumerate(args) if t is _abi._c.POINTER(_abi._c.c_void_p)]

        def fn(*a):
            self.calls.append((name, a))
            for i in outs:
                a[i]._obj.value = next(self._handles)  # ctypes.byref(c_void_p)
            return 0

        return fn


def stub_library(lib, setattr_=setattr):
    """Replaces every function of the ABI on `lib` by a recorded no-op; returns the Recorder."""
    rec = Recorder()
    for name, (_, args) in _abi.FUNCTIONS.items():
        setattr_(lib, name, rec.stub(name, args))
    return rec
