"""gpuprims.Context (a gpuprims_context), the default contexts and the current one.

A call without ctx= runs on the context entered with `with Context(...)` in this thread
(or task), else on a default context, one per (backend, device), opened on first use:
CUDA device d for arrays on GPU d, AUTO for host arrays (the GPU when there is one,
with a copy in and out; else the host backend, without a copy).

The library lets one context serve several threads; the Python layer adds one lock per
context around "set the caller's stream, then call", so that another thread cannot
switch the stream in between. The stream is set only when it differs from the last.
"""
import contextvars
import ctypes
import threading

from . import _abi
from ._errors import raise_for
from ._lib import lib

_BACKENDS = {"auto": _abi.GPUPRIMS_BACKEND_AUTO, "cuda": _abi.GPUPRIMS_BACKEND_CUDA,
             "host": _abi.GPUPRIMS_BACKEND_HOST}
_NAMES = {v: k for k, v in _BACKENDS.items()}


class Context:
    """A gpuprims context: one backend ("cuda" on a device, or "host"), its kernels and
    temporary memory.

    Context(backend="auto", device=0): "auto" takes the GPU when a driver and device are
    usable, else the host (GPUPRIMS_BACKEND=cuda|host overrides it). As a context
    manager it becomes the context of the calls in the block (it is not closed on exit;
    close() releases it, and so does garbage collection).
    """

    def __init__(self, backend="auto", device=0):
        if backend not in _BACKENDS:
            raise ValueError(f"backend: expected one of {sorted(_BACKENDS)}, not {backend!r}")
        if not isinstance(device, int) or device < 0:
            raise ValueError(f"device: expected an ordinal >= 0, not {device!r}")
        h = ctypes.c_void_p()
        s = lib.gpuprims_context_create(_BACKENDS[backend], device, ctypes.byref(h))
        if s:
            raise_for(s)
        self._handle = h.value
        # Reentrant: a call holding it may allocate its results (DeviceArray) on the context.
        self.lock = threading.RLock()
        self.stream = None  # the stream last set (None: the context's own)
        # The Python object behind that stream (a CuPy stream, a torch.cuda.Stream), kept
        # alive while the library holds its handle: the next switch orders the new stream
        # after it, so it must not be destroyed before then.
        self.stream_owner = None
        b = ctypes.c_uint32()
        lib.gpuprims_context_backend(self._handle, ctypes.byref(b))
        self.backend = _NAMES[b.value]
        self.is_cuda = b.value == _abi.GPUPRIMS_BACKEND_CUDA
        self.device = device if self.is_cuda else None
        self._tokens = []

    @property
    def handle(self):
        if self._handle is None:
            raise ValueError("this Context is closed")
        return self._handle

    @property
    def device_name(self):
        """The GPU's name, or "host (N threads...)" with the reason AUTO chose it."""
        needed = ctypes.c_size_t()
        _check(lib.gpuprims_context_device_name(self.handle, None, 0, ctypes.byref(needed)))
        buf = ctypes.create_string_buffer(needed.value + 1)
        _check(lib.gpuprims_context_device_name(self.handle, buf, needed.value + 1, None))
        return buf.value.decode()

    def use_stream(self, stream, owner=None):
        """Issues later work on CUstream `stream` (None: the context's own), `owner` the
        Python object it belongs to, if any. Call with self.lock held."""
        if stream != self.stream:
            _check(lib.gpuprims_context_set_stream(self.handle, stream))
            self.stream = stream
            self.stream_owner = owner

    def synchronize(self):
        """Waits for all work this context issued (on whatever stream it was issued)."""
        _check(lib.gpuprims_context_synchronize(self.handle))

    def precompile(self):
        """Compiles every kernel for this device now (NVRTC; kept on disk for later
        processes), so that no later call pays for a compile."""
        _check(lib.gpuprims_context_precompile(self.handle))

    def close(self):
        """Releases the context (arrays and Life grids made with it stay usable)."""
        if self._handle is None:
            return
        from ._call import forget  # this thread's cached wrappers of it go first

        forget(self)
        h, self._handle = self._handle, None
        lib.gpuprims_context_destroy(h)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self):
        self._tokens.append(_current.set(self))
        return self

    def __exit__(self, *exc):
        _current.reset(self._tokens.pop())

    def __repr__(self):
        state = "closed" if self._handle is None else self.device_name
        return f"<gpuprims.Context {self.backend}: {state}>"


def _check(status):
    if status:
        raise_for(status)


_current = contextvars.ContextVar("gpuprims_context", default=None)


class _Defaults(dict):
    """(backend, device) -> the process's default context, opened on first use: a plain
    dict lookup on every call after that."""

    def __init__(self):
        super().__init__()
        self._lock = threading.Lock()

    def __missing__(self, key):
        with self._lock:
            ctx = self.get(key)
            if ctx is None:
                ctx = self[key] = Context(*key)
            return ctx


DEFAULTS = _Defaults()


def default(backend, device=0):
    """The process's default context for (backend, device), opened on first use."""
    return DEFAULTS[backend, device]


current = _current.get  # current(): the context entered with `with`, or None
