"""One call into the library: which context and stream, a gpuprims_buffer for each
array, results allocated like the inputs, and the copies of the copy path.

- A CUDA array on a CUDA context, or host memory on the host backend, is wrapped in
  place (gpuprims_buffer_wrap_device / _wrap_host): no copy.
- Host memory on a CUDA context is copied in (gpuprims_buffer_from_host) and results
  are copied back into host arrays when the call is done.
- Wrapping is cached per thread by (context, address, length, dtype): a wrapped buffer
  is only that description of memory, valid for whatever array lies there now, and the
  cache saves two library calls per array (tensors from PyTorch's caching allocator come
  back at the same addresses). Per thread, so no other thread can evict a handle in use;
  a full cache is emptied when a call ends, never while one holds its handles.
"""
import ctypes
import threading

from . import _abi, _context, _streams
from ._errors import raise_for
from ._lib import lib

U64 = _abi.GPUPRIMS_DTYPE_U64
_CACHE_LIMIT = 256


class _Handles(dict):
    def __del__(self):
        for h in self.values():
            lib.gpuprims_buffer_destroy(h)


class _Local(threading.local):
    def __init__(self):
        self.wrapped = _Handles()
        self.out = ctypes.c_void_p()


_local = _Local()


def forget(ctx):
    """Drops this thread's cached wrappers of a context being closed."""
    for key in [k for k in _local.wrapped if k[0] == ctx.handle]:
        lib.gpuprims_buffer_destroy(_local.wrapped.pop(key))


def _wrap(key, on_device):
    """Wraps memory for the cache (key: context handle, address, length, dtype)."""
    h, ptr, n, code = key
    fn = lib.gpuprims_buffer_wrap_device if on_device else lib.gpuprims_buffer_wrap_host
    out = _local.out
    s = fn(h, code, ptr, n, ctypes.byref(out))
    if s:
        raise_for(s)
    _local.wrapped[key] = out.value
    return out.value


def wrapped_device(h, ptr, n, code):
    """The cached buffer of device memory (context handle h), wrapped on first use."""
    key = (h, ptr, n, code)
    return _local.wrapped.get(key) or _wrap(key, True)  # (handles are never 0)


def end_of_call():
    """Empties this thread's cache when full: at the end of a call, never during one,
    whose earlier buffers it would destroy under it."""
    cache = _local.wrapped
    if len(cache) >= _CACHE_LIMIT:
        for old in cache.values():
            lib.gpuprims_buffer_destroy(old)
        cache.clear()


def _check_devices(ops, ctx):
    """Every CUDA array must be on the context's device (a context given or entered)."""
    for op in ops:
        if op is None or op.device is None:
            continue
        if not ctx.is_cuda:
            raise ValueError("a CUDA array was given to a host-backend context (copy it to the host first)")
        if op.device != ctx.device:
            raise ValueError(f"an array on CUDA device {op.device} was given to a context of device {ctx.device}")


class Call:
    """`with Call(ops, ctx, stream) as c:` holds the context's lock, with the call's
    stream set; on a clean exit it copies results back to host arrays (copy path);
    always it frees the temporary buffers. `c.h` is the context's handle.

    The context: ctx=, else the one entered with `with`, else the default one for the
    arrays' device. The stream: stream=, else the current stream of the first CUDA
    array's framework on its device.
    """

    __slots__ = ("ctx", "h", "stream", "owner", "temps", "readback", "record")

    def __init__(self, ops, ctx=None, stream=None):
        lead = None  # the first CUDA array: its device picks the default context, its framework the stream
        for op in ops:
            if op is not None and op.device is not None:
                lead = op
                break
        if ctx is None:
            ctx = _context.current()
        if ctx is None:  # on the arrays' device by its choice
            ctx = _context.DEFAULTS["cuda", lead.device] if lead is not None else _context.DEFAULTS["auto", 0]
        elif lead is not None:
            _check_devices(ops, ctx)
        self.ctx = ctx
        self.h = ctx._handle or ctx.handle  # the property raises: the context is closed
        # owner: the Python object of the stream, kept alive by the context
        self.temps = self.readback = self.record = self.owner = None
        if not ctx.is_cuda:
            if stream is not None:
                raise ValueError("stream= was given, but the context runs on the host backend")
            self.stream = None
            return
        if stream is not None:
            self.stream = _streams.handle(stream)
            self.owner = None if isinstance(stream, int) else stream
            if lead is not None and lead.kind.name == "torch":
                self.record = stream  # results' memory is also used on that stream
        elif lead is not None:
            self.stream, self.owner = lead.kind.stream(lead)
        else:
            self.stream = None  # host arrays on a GPU: the context's own stream
            return
        for op in ops:
            if op is None or op.device is None:
                continue
            if op.ptr is None:  # DLPack: the producer orders its work before our stream
                op.kind.materialize(op, self.stream)
            elif op.stream is not None:  # __cuda_array_interface__ v3
                _streams.order_after(self.stream, op.stream)

    def __enter__(self):
        ctx = self.ctx
        ctx.lock.acquire()
        if self.stream != ctx.stream:  # (usually it is set already: no call)
            try:
                ctx.use_stream(self.stream, self.owner)
            except BaseException:
                ctx.lock.release()
                raise
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None and self.readback:
                for h, op in self.readback:
                    if op.n:
                        check(lib.gpuprims_buffer_read(h, 0, op.ptr, op.n))
        finally:
            if self.temps:
                for h in self.temps:
                    lib.gpuprims_buffer_destroy(h)
            self.ctx.lock.release()
            end_of_call()

    def _temp(self, h):
        if self.temps is None:
            self.temps = []
        self.temps.append(h)
        return h

    def buf(self, op, code=None):
        """A buffer holding the array's data (wrapped, or a copy on the copy path)."""
        code = code or op.code
        if op.device is not None or not self.ctx.is_cuda:
            key = (self.h, op.ptr, op.n, code)
            return _local.wrapped.get(key) or _wrap(key, op.device is not None)  # (handles are never 0)
        out = _local.out
        check(lib.gpuprims_buffer_from_host(self.h, code, op.ptr, op.n, ctypes.byref(out)))
        return self._temp(out.value)

    def out_buf(self, op, code=None):
        """A buffer whose contents become the array's once the call is done."""
        if op.device is not None or not self.ctx.is_cuda:
            return self.buf(op, code)
        code = code or op.code
        out = _local.out
        check(lib.gpuprims_buffer_create(self.h, code, op.n, ctypes.byref(out)))
        return self._readback(self._temp(out.value), op)

    def _readback(self, h, op):
        if self.readback is None:
            self.readback = []
        self.readback.append((h, op))
        return h

    def output(self, like, n, code, buf_code=None, shape=None):
        """A new array of `like`'s kind and device, and its buffer; `shape` (n elements
        in all) only for NumPy, PyTorch and CuPy kinds."""
        op = like.kind.empty(like, n, code, self.ctx, shape) if shape else like.kind.empty(like, n, code, self.ctx)
        if self.record is not None:
            op.obj.record_stream(_torch_stream(self.record, op.device))
        return op.obj, self.out_buf(op, buf_code)

    def copy_of(self, op):
        """A new array holding a copy of `op` (to sort in place), and its buffer."""
        if op.device is None and self.ctx.is_cuda:  # copy path: the upload is the copy
            new = op.kind.empty(op, op.n, op.code, self.ctx)
            return new.obj, self._readback(self.buf(op), new)
        obj, h = self.output(op, op.n, op.code)
        if op.n:
            check(lib.gpuprims_buffer_copy(h, self.buf(op)))
        return obj, h


def _torch_stream(stream, device):
    import torch

    if isinstance(stream, torch.cuda.Stream):
        return stream
    return torch.cuda.ExternalStream(_streams.handle(stream), device=device)


def check(status):
    if status:
        raise_for(status)
