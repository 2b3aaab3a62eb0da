"""The primitives, named and shaped like NumPy and PyTorch.

Every function takes 1-D contiguous arrays (NumPy, PyTorch, CuPy, or anything with
__cuda_array_interface__ or __dlpack__; topk also takes 2-D NumPy, PyTorch and CuPy
arrays, row by row), returns results of the input's kind on its device, and accepts
two keywords: ctx= (a gpuprims.Context; default: the one entered
with `with`, else a default context for the array's device) and stream= (CUDA: a
torch.cuda.Stream, a CuPy stream, anything with __cuda_stream__, or a raw handle;
default: the framework's current stream). Work on CUDA is issued on that stream and not
waited for, except where a value is handed to Python (reduce, select_kth, kthvalue).
"""
import ctypes
import operator
import struct

import numpy as np

from . import _abi, _dtypes, _lean
from ._arrays import TorchKind, adapt, dtype_error
from ._call import U64, Call, check, end_of_call
from ._lib import lib

_OPS = {name.lower(): code for name, code in _abi.OP.items()}
_ORDER = _abi.ORDER
I64 = _abi.DTYPE["I64"]
_OFFSET_CODES = {_abi.DTYPE[n]: _abi.DTYPE["U" + n[1:]] for n in ("I32", "U32", "I64", "U64")}


def _op(op):
    code = _OPS.get(op.lower()) if isinstance(op, str) else None
    if code is None:
        raise ValueError(f"op: expected one of {sorted(_OPS)}, not {op!r}")
    return code


def _count(k, name):
    try:
        k = operator.index(k)
    except TypeError:
        raise TypeError(f"{name}: expected an integer, not {type(k).__name__}") from None
    return k


# Scalars the library writes to host memory, read back as Python numbers.
_SCALAR = {}
for _name, _ct in (("I8", ctypes.c_int8), ("U8", ctypes.c_uint8), ("I16", ctypes.c_int16),
                   ("U16", ctypes.c_uint16), ("I32", ctypes.c_int32), ("U32", ctypes.c_uint32),
                   ("I64", ctypes.c_int64), ("U64", ctypes.c_uint64), ("F32", ctypes.c_float),
                   ("F64", ctypes.c_double), ("F16", ctypes.c_uint16), ("BF16", ctypes.c_uint16)):
    if _name in _abi.DTYPE:
        _SCALAR[_abi.DTYPE[_name]] = _ct
_F16 = _abi.DTYPE.get("F16")
_BF16 = _abi.DTYPE.get("BF16")
_HALVES = frozenset((_F16, _BF16)) - {None}


def _half(code, bits):
    """The Python float of a 16-bit float's bits (the cell of F16 and BF16 is a uint16)."""
    if code == _F16:
        return float(np.uint16(bits).view(np.float16))
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


def reduce(x, op="sum", *, out=None, ctx=None, stream=None):
    """Reduces `x` with `op` ("sum", "min" or "max") and returns a Python number.

    Integer sums wrap modulo 2**bits; float sums accumulate in the input type in a fixed
    order (bitwise the same run to run on one device and size); min/max return NaN once
    a NaN is among the inputs, and min(-0.0, +0.0) is -0.0. An empty `x`: sum is 0,
    min/max raise gpuprims.InvalidArgumentError (a ValueError).

    With out= (a 1-element array of x's dtype, same kind) the result is written there
    in stream order, without waiting, and `out` is returned.
    """
    r = out is None and ctx is None and stream is None and _lean.route(x)
    if r:
        return _lean_value(r, _op(op), lib.gpuprims_reduce)
    return _one_value(adapt(x, "x"), _op(op), out, ctx, stream, lib.gpuprims_reduce_to_buffer, lib.gpuprims_reduce)


def _lean_value(r, arg, fn):
    """_one_value's host-value call on _lean.route's answer r."""
    c, s, h, hx, n, code = r
    cell = _SCALAR[code]()
    _lean.call(c, s, fn, h, hx, arg, ctypes.byref(cell))
    return _half(code, cell.value) if code in _HALVES else cell.value


def _one_value(a, arg, out, ctx, stream, to_buffer, to_host):
    """A call `fn(ctx, a's buffer, arg, destination)` that gives one element of a's
    dtype: into `out` (a 1-element array) in stream order with fn = to_buffer; else as a
    Python number, waited for, with fn = to_host writing it to host memory."""
    if out is not None:
        o = adapt(out, "out")
        _same_dtype(o, a, "out", "x")
        if o.n != 1:
            raise ValueError(f"out: expected 1 element, got {o.n}")
        with Call((a, o), ctx, stream) as c:
            check(to_buffer(c.h, c.buf(a), arg, c.out_buf(o)))
        return out
    cell = _SCALAR[a.code]()
    with Call((a,), ctx, stream) as c:
        check(to_host(c.h, c.buf(a), arg, ctypes.byref(cell)))
    return _half(a.code, cell.value) if a.code in _HALVES else cell.value


def sum(x, *, ctx=None, stream=None):
    """The sum of `x` as a Python number, computed in x's dtype: integers wrap modulo
    2**bits; floats accumulate in a fixed order, bitwise reproducible. See reduce."""
    r = ctx is None and stream is None and _lean.route(x)
    if r:
        return _lean_value(r, _OPS["sum"], lib.gpuprims_reduce)
    return _one_value(adapt(x, "x"), _OPS["sum"], None, ctx, stream, None, lib.gpuprims_reduce)


def min(x, *, ctx=None, stream=None):
    """The smallest element of `x` (NaN when any is NaN; -0.0 below +0.0). See reduce."""
    r = ctx is None and stream is None and _lean.route(x)
    if r:
        return _lean_value(r, _OPS["min"], lib.gpuprims_reduce)
    return _one_value(adapt(x, "x"), _OPS["min"], None, ctx, stream, None, lib.gpuprims_reduce)


def max(x, *, ctx=None, stream=None):
    """The largest element of `x` (NaN when any is NaN). See reduce."""
    r = ctx is None and stream is None and _lean.route(x)
    if r:
        return _lean_value(r, _OPS["max"], lib.gpuprims_reduce)
    return _one_value(adapt(x, "x"), _OPS["max"], None, ctx, stream, None, lib.gpuprims_reduce)


def _same_dtype(o, a, oname, aname):
    if o.code != a.code:
        raise TypeError(f"{oname}: dtype differs from {aname}'s")


def scan(x, op="sum", *, exclusive=False, out=None, ctx=None, stream=None):
    """Prefix scan of `x` with `op` ("sum", "min", "max"); returns a new array, or `out`.

    Inclusive: out[i] = x[0] op ... op x[i]. exclusive=True: out[0] is the identity (0
    for sum, the largest value or +inf for min, the lowest or -inf for max) and out[i]
    = x[0] op ... op x[i-1]. The result has x's dtype (integer sums wrap, unlike
    numpy.cumsum, which widens). `out` (x's dtype and length) may be `x` itself.
    """
    opc = _op(op)
    mode = _abi.SCAN["EXCLUSIVE" if exclusive else "INCLUSIVE"]
    r = out is None and ctx is None and stream is None and _lean.route(x)
    if r:
        c, s, h, hx, n, code = r
        res, hout = _lean.output(x.device, n, x.dtype, h, code)
        _lean.call(c, s, lib.gpuprims_scan, h, hx, hout, opc, mode)
        return res
    a = adapt(x, "x")
    o = None
    if out is not None:
        o = adapt(out, "out")
        _same_dtype(o, a, "out", "x")
        if o.n != a.n:
            raise ValueError(f"out: {o.n} elements, x has {a.n}")
    with Call((a, o), ctx, stream) as c:
        if o is None:
            res, hout = c.output(a, a.n, a.code)
        else:
            res, hout = out, c.out_buf(o)
        check(lib.gpuprims_scan(c.h, c.buf(a), hout, opc, mode))
    return res


def cumsum(x, *, exclusive=False, out=None, ctx=None, stream=None):
    """Cumulative sum of `x` in x's dtype (integers wrap, where numpy.cumsum widens
    small integers); exclusive=True starts from 0. Returns a new array, or `out` (x's
    dtype and length; may be `x` itself). See scan."""
    return scan(x, "sum", exclusive=exclusive, out=out, ctx=ctx, stream=stream)


def sort(x, values=None, *, descending=False, stable=True, ctx=None, stream=None):
    """Sorted copy of `x`; with `values` (same length, any dtype), (sorted keys, values
    moved with their keys).

    Order: -inf < ... < -0.0 < +0.0 < ... < +inf < NaN (NaN last ascending, first
    descending). stable=True (the radix sort) keeps equal keys in input order, in both
    directions; stable=False may use the quicksort (same keys, values of equal keys in
    any order). The inputs are not changed.
    """
    fn = lib.gpuprims_radix_sort if stable else lib.gpuprims_quicksort
    order = _ORDER["DESCENDING" if descending else "ASCENDING"]
    r = values is None and ctx is None and stream is None and _lean.route(x)
    if r:
        c, s, h, hx, n, code = r
        keys, hk = _lean.output(x.device, n, x.dtype, h, code)
        _lean.call(c, s, _copy_sorted, h, hk, hx, n, fn, order)
        return keys
    a = adapt(x, "x")
    v = adapt(values, "values") if values is not None else None
    if v is not None and v.n != a.n:
        raise ValueError(f"values: {v.n} elements, x has {a.n}")
    with Call((a, v), ctx, stream) as c:
        keys, hk = c.copy_of(a)
        vals, hv = c.copy_of(v) if v is not None else (None, None)
        if a.n > 1:
            check(fn(c.h, hk, hv, order))
    return keys if v is None else (keys, vals)


def _copy_sorted(h, hk, hx, n, sort_fn, order):
    """x's copy in hk, sorted (sort's lean call); the first failing status."""
    status = lib.gpuprims_buffer_copy(hk, hx) if n else 0
    return status or (sort_fn(h, hk, None, order) if n > 1 else 0)


def argsort(x, *, descending=False, stable=True, ctx=None, stream=None):
    """Indices (int64) that sort `x`: x[argsort(x)] == sort(x). Equal keys keep input
    order when stable (the default)."""
    a = adapt(x, "x")
    with Call((a,), ctx, stream) as c:
        idx = adapt(_arange(a, c), "indices")
        hidx = c.buf(idx, U64) if idx.device is not None or not c.ctx.is_cuda else None
        keys, hk = c.copy_of(a)
        if hidx is None:  # copy path: upload the indices, read them back into idx
            hidx = c.out_buf(idx, U64)
            check(lib.gpuprims_buffer_write(hidx, 0, idx.ptr, idx.n))
        fn = lib.gpuprims_radix_sort if stable else lib.gpuprims_quicksort
        if a.n > 1:
            check(fn(c.h, hk, hidx, _ORDER["DESCENDING" if descending else "ASCENDING"]))
    return idx.obj


def _arange(a, c):
    """0 .. n-1 as int64, made by the input's framework (on its current stream, which the
    call's stream then waits for)."""
    name = a.kind.name
    if name == "torch":
        t = a.kind.torch.arange(a.n, dtype=a.kind.torch.int64, device=a.obj.device)
    elif name == "cupy":
        with a.kind.cupy.cuda.Device(a.device):
            t = a.kind.cupy.arange(a.n, dtype=np.int64)
    else:
        t = np.arange(a.n, dtype=np.int64)
        if a.device is not None:  # another framework's CUDA array: a gpuprims array
            from ._devarray import DeviceArray

            d = DeviceArray(c.ctx, a.n, I64)
            if a.n:
                check(lib.gpuprims_buffer_write(d.handle, 0, t.ctypes.data, a.n))
            return d
        return t
    if c.stream is not None:
        from ._streams import order_after

        order_after(c.stream, a.kind.stream(a)[0])
    return t


def select_kth(x, k, *, out=None, ctx=None, stream=None):
    """The element of rank `k` (0-based) of `x` in ascending order, as a Python number:
    the value x would hold at index k once sorted (NaN counts above +inf). A selection,
    not a sort; `x` is unchanged. With out= (a 1-element array of x's dtype) the value
    is written there in stream order without waiting, and `out` is returned.
    """
    r = out is None and ctx is None and stream is None and type(k) is int and _lean.route(x)
    if r and 0 <= k < r[4]:
        return _lean_value(r, k, lib.gpuprims_select_kth)
    a = adapt(x, "x")
    k = _count(k, "k")
    if not 0 <= k < a.n:
        raise ValueError(f"k: {k} is not a rank of {a.n} elements (0 <= k < {a.n})")
    return _one_value(a, k, out, ctx, stream, lib.gpuprims_select_kth_to_buffer, lib.gpuprims_select_kth)


def kthvalue(x, k, *, ctx=None, stream=None):
    """The k-th smallest element of `x`, k counted from 1 as in torch.kthvalue (k=1 is
    the minimum), as a Python number. select_kth(x, k - 1) is the 0-based form."""
    r = ctx is None and stream is None and type(k) is int and _lean.route(x)
    if r and 1 <= k <= r[4]:
        return _lean_value(r, k - 1, lib.gpuprims_select_kth)
    a_n = adapt(x, "x").n
    k = _count(k, "k")
    if not 1 <= k <= a_n:
        raise ValueError(f"k: {k} is out of range for {a_n} elements (1 <= k <= {a_n})")
    return select_kth(x, k - 1, ctx=ctx, stream=stream)


def topk(x, k, dim=-1, largest=True, sorted=True, *, out=None, ctx=None, stream=None):
    """The `k` largest (largest=True) or smallest elements of `x`, sorted, and their
    indices: returns (values, indices), indices int64, as torch.topk.

    Equal values come lowest index first, so the result is the same on every run and
    device; NaN counts as the largest value. 0 <= k <= len(x). out=(values, indices)
    writes into arrays of k elements (x's dtype, int64) instead of new ones (1-D x only).

    A 2-D contiguous `x` (NumPy, PyTorch or CuPy) is taken row by row along its last
    dim (dim=-1 or 1; another dim raises ValueError: transpose and copy first): values
    and indices have shape (rows, k), the indices within each row, from one call of
    gpuprims_segmented_topk. k larger than a row raises ValueError, as torch.topk does
    (gpuprims.segmented_topk pads instead). sorted=False is accepted; the results come
    sorted anyway.
    """
    r = ctx is None and stream is None and type(k) is int and dim in (0, -1) and _lean.route(x)
    if r and 0 <= k <= r[4]:
        if out is None:
            return _lean_topk(r, x, k, largest, None, None)
        if type(out) is tuple and len(out) == 2:  # hv, hi: None unless the lean route takes them too
            dev = x.get_device()
            hv = _lean.given(out[0], r[2], dev, k, (r[5],), r[5])
            hi = hv and _lean.given(out[1], r[2], dev, k, (I64, U64), U64)
            if hi:
                _lean_topk(r, x, k, largest, hv, hi)
                return out
    if _ndim(x) == 2:
        return _topk_rows(x, k, dim, largest, out, ctx, stream)
    if dim not in (0, -1):
        raise ValueError(f"dim: {dim!r} is not a dim of a 1-D array")
    a = adapt(x, "x")
    k = _count(k, "k")
    if not 0 <= k <= a.n:
        raise ValueError(f"k: {k} is out of range for {a.n} elements (0 <= k <= {a.n})")
    order = _ORDER["DESCENDING" if largest else "ASCENDING"]
    ov = oi = None
    if out is not None:
        ov, oi = adapt(out[0], "out[0]"), adapt(out[1], "out[1]")
        _same_dtype(ov, a, "out[0]", "x")
        if oi.code not in (I64, U64):
            raise TypeError("out[1]: expected int64 indices")
        if ov.n != k or oi.n != k:
            raise ValueError(f"out: {ov.n} values and {oi.n} indices for k = {k}")
    with Call((a, ov, oi), ctx, stream) as c:
        if out is None:
            vals, hv = c.output(a, k, a.code)
            idx, hi = c.output(a, k, I64, U64)
        else:
            (vals, idx), hv, hi = out, c.out_buf(ov), c.out_buf(oi, U64)
        if k:
            check(lib.gpuprims_topk(c.h, c.buf(a), k, order, hv, hi))
    return out if out is not None else (vals, idx)


def _ndim(x):
    """x's number of dims where it says so (NumPy, PyTorch, CuPy, sequences), else 1."""
    nd = getattr(x, "ndim", None)
    if isinstance(nd, int):
        return nd
    if isinstance(x, (list, tuple)):
        return np.ndim(x)
    return 1


def _lean_topk(r, x, k, largest, hv, hi):
    """topk's call on _lean.route's answer r (1-D x): into the buffers hv, hi of out=,
    or (None, None) into new tensors, returned."""
    c, s, h, hx, n, code = r
    vals = idx = None
    if hv is None:
        device = x.device
        vals, hv = _lean.output(device, k, x.dtype, h, code)
        idx, hi = _lean.output(device, k, TorchKind.torch.int64, h, U64)
    if k:
        _lean.call(c, s, lib.gpuprims_topk, h, hx, k, _ORDER["DESCENDING" if largest else "ASCENDING"], hv, hi)
    else:
        end_of_call()  # (the results' wrappers may have filled the cache)
    return vals, idx


def _topk_rows(x, k, dim, largest, out, ctx, stream):
    """topk along the last dim of a 2-D array: its rows, row_len at a time. The results
    are allocated (rows, k) and x is read in place (no reshape: each costs a few µs a
    call in torch, as much as the layer's whole work)."""
    if dim not in (-1, 1):
        raise ValueError(f"dim: only the last dim (-1 or 1) of a 2-D array, not {dim!r} (transpose and copy first)")
    if out is not None:
        raise ValueError("out: only for a 1-D x")
    if isinstance(x, (list, tuple)):
        x = np.ascontiguousarray(x)
    a = adapt(x, "x", ndim=2)  # 2-D and contiguous, or the usual errors
    x = a.obj  # (what adapt made of it: a NumPy array for a memoryview, say)
    if a.kind.name not in _ROW_KINDS:
        raise TypeError("x: a 2-D x must be a NumPy, PyTorch or CuPy array")
    if a.code is None:  # NumPy and CuPy name the dtype in 1-D only; torch's: not one of ours
        if a.kind is TorchKind:
            raise dtype_error("x", x.dtype)
        try:
            a.code = _dtypes.from_numpy(x.dtype)
        except (TypeError, ValueError) as e:
            raise type(e)(f"x: {e}") from None
    rows, row_len = (int(n) for n in x.shape)
    k = _count(k, "k")
    if not 0 <= k <= row_len:
        raise ValueError(f"k: {k} is out of range for rows of {row_len} elements (0 <= k <= {row_len})")
    order = _ORDER["DESCENDING" if largest else "ASCENDING"]
    with Call((a,), ctx, stream) as c:
        vals, hv = c.output(a, rows * k, a.code, shape=(rows, k))
        idx, hi = c.output(a, rows * k, I64, U64, shape=(rows, k))
        if rows * k:
            check(lib.gpuprims_segmented_topk(c.h, c.buf(a), None, row_len, k, None, order, hv, hi))
    return vals, idx


_ROW_KINDS = frozenset(("numpy", "torch", "cupy"))


def segmented_topk(values, offsets, k=None, *, ks=None, largest=True, ctx=None, stream=None):
    """Per row, its `k` largest (largest=True) or smallest elements, sorted, and their
    indices within the row: row r is values[offsets[r]:offsets[r+1]]. Returns
    (values, indices), both flat: row r's results at [r * k, (r + 1) * k), or with
    ks= (one k per row) at [ks[:r].sum(), ks[:r + 1].sum()).

    Equal values come lowest index first; NaN counts as the largest value; values are
    the elements bit for bit. A row shorter than its k gives all its elements, then pads:
    value 0 and index -1. Empty rows are allowed.

    offsets: nondecreasing integers (int32/uint32/int64/uint64), nrows + 1 of them; the
    rows need not cover `values`. ks: integers of the same widths, one per row (give k
    or ks, not both); on a GPU, ks must be a PyTorch or CuPy array (their sum sizes the
    result). Offsets that decrease or end past `values` raise
    gpuprims.InvalidArgumentError naming the first bad row.
    """
    v = adapt(values, "values")
    off = adapt(offsets, "offsets")
    off_code = _index_code(off, "offsets")
    if off.n == 0:
        raise ValueError("offsets: needs at least one entry (nrows + 1)")
    nrows = off.n - 1
    if (k is None) == (ks is None):
        raise TypeError("give k (one for every row) or ks= (one per row), not both or neither")
    kop = None
    if ks is not None:
        kop = adapt(ks, "ks")
        ks_code = _index_code(kop, "ks")
        if kop.n != nrows:
            raise ValueError(f"ks: {kop.n} entries for {nrows} rows")
        k, total = 0, _ks_total(ks, kop)
    else:
        k = _count(k, "k")
        if k < 0:
            raise ValueError(f"k: {k} is negative")
        total = nrows * k
    order = _ORDER["DESCENDING" if largest else "ASCENDING"]
    with Call((v, off, kop), ctx, stream) as c:
        vals, hv = c.output(v, total, v.code)
        idx, hi = c.output(v, total, I64, U64)
        hk = c.buf(kop, ks_code) if kop is not None else None
        check(lib.gpuprims_segmented_topk(c.h, c.buf(v), c.buf(off, off_code), 0, k, hk, order, hv, hi))
    return vals, idx


def _ks_total(ks, kop):
    """The sum of the per-row ks, which sizes the results (negative ks are refused)."""
    if kop.device is None:  # host memory: read in place
        dt = np.dtype(_dtypes.to_numpy(kop.code))
        raw = (ctypes.c_uint8 * (kop.n * dt.itemsize)).from_address(kop.ptr) if kop.n else bytearray()
        arr = np.frombuffer(raw, dt)
        if arr.size and arr.min() < 0:
            raise ValueError("ks: negative entries")
        return int(arr.sum(dtype=np.uint64))
    name = kop.kind.name
    if name == "torch":
        t = kop.kind.torch
        if kop.n and bool((ks < 0).any()):
            raise ValueError("ks: negative entries")
        return int(ks.sum(dtype=t.int64)) if kop.n else 0
    if name == "cupy":
        if kop.n and bool((ks < 0).any()):
            raise ValueError("ks: negative entries")
        return int(ks.sum(dtype=np.int64)) if kop.n else 0
    raise TypeError("ks: on a GPU, a PyTorch or CuPy array (its sum sizes the result)")


def segmented_select(values, offsets, ranks=None, *, out=None, ctx=None, stream=None):
    """Per row, the element of a given rank: row r is values[offsets[r]:offsets[r+1]],
    its element of rank ranks[r] (0-based, ascending), or its lower median
    (len - 1) // 2 when ranks is None. Returns len(offsets) - 1 elements of values'
    dtype (or `out`).

    offsets: nondecreasing integers (int32/uint32/int64/uint64), at least one entry; the
    rows need not cover `values`. ranks: integers of the same widths, one per row. An
    empty row or a rank past its row raises gpuprims.InvalidArgumentError naming it.
    """
    v = adapt(values, "values")
    off = adapt(offsets, "offsets")
    rk = adapt(ranks, "ranks") if ranks is not None else None
    off_code = _index_code(off, "offsets")
    rk_code = _index_code(rk, "ranks") if rk is not None else None
    if off.n == 0:
        raise ValueError("offsets: needs at least one entry (nrows + 1)")
    nrows = off.n - 1
    if rk is not None and rk.n != nrows:
        raise ValueError(f"ranks: {rk.n} entries for {nrows} rows")
    o = adapt(out, "out") if out is not None else None
    if o is not None:
        _same_dtype(o, v, "out", "values")
        if o.n != nrows:
            raise ValueError(f"out: {o.n} elements for {nrows} rows")
    with Call((v, off, rk, o), ctx, stream) as c:
        res, hout = (out, c.out_buf(o)) if o is not None else c.output(v, nrows, v.code)
        hk = c.buf(rk, rk_code) if rk is not None else None
        check(lib.gpuprims_segmented_select(c.h, c.buf(v), c.buf(off, off_code), hk, hout))
    return res


def _index_code(op, name):
    code = _OFFSET_CODES.get(op.code)
    if code is None:
        raise TypeError(f"{name}: expected integers of 32 or 64 bits")
    return code
