"""The common call, found without the general machinery: one 1-D CUDA torch tensor in,
no ctx= and no stream=.

Most calls from PyTorch look like that, and on them the general path (an Operand per
array, a Call with its `with` protocol, the kind's dispatch) cost more than the library
call itself (~2.5 of 4.5 µs a call). `route(x)` reads the tensor's facts directly and
answers only when nothing is unusual; the general path takes every other call, and
reports whatever is wrong, so no check or message lives here twice. The work then
runs exactly as the general path runs it: the same context (the one entered with
`with`, else the device's default), torch's current stream set under the context's
lock, the same wrapped buffers from the same per-thread cache.
"""
from . import _arrays, _call, _context, _streams
from ._errors import raise_for

_TENSOR = None  # torch.Tensor, once the first torch tensor has been adapted
_DEFAULTS = _context.DEFAULTS
_current = _context.current


def route(x):
    """(context, stream, context handle, x's buffer, length, dtype code) when x is a
    contiguous 1-D CUDA torch tensor of a supported dtype already wrapped in this
    thread's cache, and the context to use is open and on x's device; else None."""
    if type(x) is not _TENSOR or x.dim() != 1 or not x.is_contiguous():
        return None
    code = _arrays.TorchKind._fwd.get(x.dtype)
    dev = x.get_device()
    if code is None or dev < 0:
        return None
    ctx = _current() or _DEFAULTS["cuda", dev]
    h = ctx._handle
    if h is None or ctx.device != dev:  # closed, host backend or another device
        return None
    n = x.numel()
    hx = _call._local.wrapped.get((h, x.data_ptr(), n, code))
    if hx is None:  # the general path wraps it
        return None
    return ctx, _arrays.TorchKind._raw_stream(dev) or _streams.LEGACY, h, hx, n, code


def given(t, h, dev, n, codes, key_code):
    """The cached buffer (dtype key_code) of out= tensor t when t is a contiguous 1-D
    torch tensor of n elements on device dev whose dtype is one of `codes`; else None."""
    if type(t) is not _TENSOR or t.dim() != 1 or not t.is_contiguous() or t.get_device() != dev:
        return None
    if t.numel() != n or _arrays.TorchKind._fwd.get(t.dtype) not in codes:
        return None
    return _call._local.wrapped.get((h, t.data_ptr(), n, key_code))


def output(device, n, dtype, h, code):
    """A new torch tensor of n elements of `dtype` on `device` and its buffer (`code`)."""
    t = _arrays.TorchKind.torch.empty(n, dtype=dtype, device=device)
    return t, _call.wrapped_device(h, t.data_ptr(), n, code)


def call(ctx, stream, fn, *args):
    """fn(*args) (a library call returning a status) on `stream`, under the context's
    lock; then the wrapper cache's end of a call, and the status raised."""
    with ctx.lock:
        if stream != ctx.stream:
            ctx.use_stream(stream)
        status = fn(*args)
    _call.end_of_call()
    if status:
        raise_for(status)


def seen_torch(t):
    """Called by the torch kind's setup: the type route() answers for."""
    global _TENSOR
    _TENSOR = t
