"""The package on the host backend with NumPy arrays: every function and dtype against
NumPy, every error, zero-copy wrapping of host memory, Life, contexts, threads."""
import ctypes
import threading

import numpy as np
import pytest

import gpuprims as gp
from gpuprims import _abi
from reference import running, same, stable_order

INT_TYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
FLOAT_TYPES = [np.float32, np.float64] + ([np.float16] if "F16" in _abi.DTYPE else [])
TYPES = INT_TYPES + FLOAT_TYPES
SIZES = [0, 1, 7, 1000, 5000]


@pytest.fixture(autouse=True)
def _host_context(host):
    with host:  # every call in these tests on the host backend
        yield


def sample(dtype, n, seed=1):
    rng = np.random.default_rng(seed + n)
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        x = rng.standard_normal(n).astype(dtype)
        if n >= 8:  # specials, and repeated values for the ties
            x[:8] = [np.nan, -np.inf, np.inf, -0.0, 0.0, -np.nan, x[8 % n], 0.0]
        return x
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("n", SIZES)
def test_reduce(dtype, n):
    x = sample(dtype, n)
    if np.dtype(dtype).kind == "f":
        finite = np.nan_to_num(x, nan=0, posinf=0, neginf=0)
        assert gp.sum(finite) == pytest.approx(float(np.sum(finite, dtype=np.float64)), rel=1e-2, abs=1e-2)
    else:
        assert gp.sum(x) == np.sum(x, dtype=dtype)  # wraps as NumPy's sum in the same type
    if n == 0:
        with pytest.raises(gp.InvalidArgumentError):
            gp.min(x)
        return
    for got, want in ((gp.min(x), np.min(x)), (gp.max(x), np.max(x))):
        assert same(np.array([got], dtype), np.array([want], dtype))
    assert gp.reduce(x, "MAX") == gp.max(x) or np.isnan(gp.max(x))


def test_min_of_signed_zeros_is_negative_zero():
    assert np.signbit(gp.min(np.array([0.0, -0.0, 0.0])))


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("exclusive", [False, True])
def test_scan(dtype, exclusive):
    x = sample(dtype, 1000)
    if np.dtype(dtype).kind == "f":
        x = np.nan_to_num(x, nan=0, posinf=0, neginf=0).astype(dtype)
    got = gp.cumsum(x, exclusive=exclusive)
    assert type(got) is np.ndarray and got.dtype == x.dtype
    with np.errstate(over="ignore"):
        want = np.cumsum(x, dtype=dtype)
    if exclusive:
        want = np.concatenate([np.zeros(1, dtype), want[:-1]])
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=0.05, atol=0.5)
    else:
        assert np.array_equal(got, want)
    mins = gp.scan(x, "min", exclusive=exclusive)
    want = running(x, "min")
    if exclusive:
        top = np.inf if np.dtype(dtype).kind == "f" else np.iinfo(dtype).max
        want = np.concatenate([np.array([top], dtype), want[:-1]])
    assert same(mins, want)


def test_scan_in_place_and_out():
    x = np.arange(10, dtype=np.int32)
    assert gp.cumsum(x, out=x) is x
    assert np.array_equal(x, np.cumsum(np.arange(10)))
    out = np.empty(10, np.int32)
    gp.scan(np.ones(10, np.int32), "sum", exclusive=True, out=out)
    assert np.array_equal(out, np.arange(10))


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_and_argsort(dtype, n, descending):
    x = sample(dtype, n)
    if n > 20:
        x[10:20] = x[0:10]  # equal keys: stability shows
    before = x.copy()
    perm = stable_order(x, descending)
    assert same(gp.sort(x, descending=descending), x[perm])
    assert np.array_equal(gp.argsort(x, descending=descending), perm)
    vals = np.arange(n, dtype=np.float32)
    k, v = gp.sort(x, vals, descending=descending)
    assert same(k, x[perm]) and np.array_equal(v, vals[perm])
    k2, v2 = gp.sort(x, vals, descending=descending, stable=False)  # quicksort: same keys
    assert same(k2, x[perm]) and sorted(v2) == sorted(vals)
    assert same(x, before)  # inputs unchanged


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("largest", [True, False])
def test_topk(dtype, largest):
    x = sample(dtype, 1000)
    x[500:510] = x[0:10]
    perm = stable_order(x, descending=largest)
    for k in (0, 1, 10, 1000):
        values, indices = gp.topk(x, k, largest=largest)
        assert indices.dtype == np.int64
        assert same(values, x[perm[:k]]) and np.array_equal(indices, perm[:k])
    out = (np.empty(10, dtype), np.empty(10, np.int64))
    assert gp.topk(x, 10, largest=largest, out=out) is out
    assert same(out[0], x[perm[:10]]) and np.array_equal(out[1], perm[:10])
    with pytest.raises(ValueError, match="k = 9"):
        gp.topk(x, 9, out=out)


def bits(a):
    """The raw bits of an array, to compare floats bit for bit (NaN payloads, -0.0)."""
    a = np.ascontiguousarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def rows_reference(x, bounds, ks, largest):
    """Each row's first ks[r] in the order (ties by index), padded with 0 / -1."""
    vals, idx = [], []
    for r, k in enumerate(ks):
        row = x[bounds[r]:bounds[r + 1]]
        perm = stable_order(row, descending=largest)[:k]
        pad = int(k) - len(perm)
        vals.append(np.concatenate([row[perm], np.zeros(pad, x.dtype)]))
        idx.append(np.concatenate([perm, np.full(pad, -1)]).astype(np.int64))
    return np.concatenate(vals or [np.zeros(0, x.dtype)]), np.concatenate(idx or [np.zeros(0, np.int64)])


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("largest", [True, False])
def test_topk_of_rows(dtype, largest):
    x = sample(dtype, 7 * 300).reshape(7, 300)
    x[3] = x[3, 0]  # a row of ties
    for k in (0, 1, 33, 300):
        values, indices = gp.topk(x, k, largest=largest)
        assert values.shape == (7, k) and indices.shape == (7, k) and indices.dtype == np.int64
        want_v, want_i = rows_reference(x.reshape(-1), range(0, 2101, 300), [k] * 7, largest)
        assert np.array_equal(bits(values).reshape(-1), bits(want_v)) and np.array_equal(indices.reshape(-1), want_i)
    values, indices = gp.topk(x, 5, -1, largest, False)  # torch's positional order; sorted=False sorts too
    assert np.array_equal(bits(values), bits(gp.topk(x, 5, dim=1, largest=largest)[0]))
    assert gp.topk(np.zeros((0, 4), dtype), 2)[0].shape == (0, 2)
    assert gp.topk(np.zeros((3, 0), dtype), 0)[1].shape == (3, 0)
    with pytest.raises(ValueError, match="k: 301"):
        gp.topk(x, 301)  # as torch.topk: k past the row
    with pytest.raises(ValueError, match="last dim"):
        gp.topk(x, 2, dim=0)
    with pytest.raises(ValueError, match="contiguous"):
        gp.topk(x[:, ::2], 2)
    with pytest.raises(ValueError, match="1-D"):
        gp.topk(x, 2, out=(np.empty(14, dtype), np.empty(14, np.int64)))
    with pytest.raises(ValueError, match="dim"):
        gp.topk(x[0], 2, dim=1)
    # A 2-D buffer-protocol object is taken as the NumPy array it converts to.
    assert np.array_equal(bits(gp.topk(memoryview(x), 3, largest=largest)[0]), bits(gp.topk(x, 3, largest=largest)[0]))
    with pytest.raises(TypeError, match="x: dtype bool"):
        gp.topk(np.zeros((2, 3), bool), 1)


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("index_type", [np.int32, np.uint32, np.int64, np.uint64])
def test_segmented_topk(dtype, index_type):
    x = sample(dtype, 3000)
    if x.dtype.kind == "f":  # NaNs of both signs and other payloads (ties: by index), -0.0
        nans = {2: [0x7E00, 0xFE00, 0x7E5A, 0x7C01], 4: [0x7FC00000, 0xFFC00000, 0x7FC12345, 0x7F800001],
                8: [0x7FF8000000000000, 0xFFF8000000000000, 0x7FF800000000BEEF, 0x7FF0000000000001]}
        bits(x)[10:30] = np.array(nans[x.dtype.itemsize] * 5, bits(x).dtype)
        x[30:33] = (-0.0, 0.0, -0.0)
    bounds = np.array([2, 2, 40, 41, 300, 1200, 1200, 2999], index_type)
    rng = np.random.default_rng(5)
    for largest in (True, False):
        for k in (0, 1, 7, 1000):
            v, i = gp.segmented_topk(x, bounds, k, largest=largest)
            want_v, want_i = rows_reference(x, bounds.astype(np.int64), [k] * 7, largest)
            assert np.array_equal(bits(v), bits(want_v)) and np.array_equal(i, want_i) and i.dtype == np.int64
        ks = rng.integers(0, 50, 7).astype(index_type)
        ks[1] = 3  # an empty row: three pads
        v, i = gp.segmented_topk(x, bounds, ks=ks, largest=largest)
        want_v, want_i = rows_reference(x, bounds.astype(np.int64), ks.astype(np.int64), largest)
        assert np.array_equal(bits(v), bits(want_v)) and np.array_equal(i, want_i)
    v, i = gp.segmented_topk(x, np.array([5], index_type), 3)  # no rows
    assert v.size == 0 and i.size == 0


def test_segmented_topk_errors():
    x = np.arange(10, dtype=np.float32)
    with pytest.raises(gp.InvalidArgumentError, match="row 1"):
        gp.segmented_topk(x, np.array([0, 5, 3, 10]), 2)  # offsets decrease at row 1
    with pytest.raises(gp.InvalidArgumentError, match="row 2"):
        gp.segmented_topk(x, np.array([0, 5, 6, 11]), ks=np.array([1, 1, 0]))  # past the end, even with k 0 there
    with pytest.raises(TypeError, match="not both"):
        gp.segmented_topk(x, np.array([0, 10]), 2, ks=np.array([2]))
    with pytest.raises(TypeError, match="not both"):
        gp.segmented_topk(x, np.array([0, 10]))
    with pytest.raises(ValueError, match="ks: 2 entries"):
        gp.segmented_topk(x, np.array([0, 10]), ks=np.array([2, 2]))
    with pytest.raises(ValueError, match="negative"):
        gp.segmented_topk(x, np.array([0, 10]), ks=np.array([-1]))
    with pytest.raises(ValueError, match="negative"):
        gp.segmented_topk(x, np.array([0, 10]), -1)
    with pytest.raises(TypeError, match="32 or 64"):
        gp.segmented_topk(x, np.array([0, 10], np.float32), 1)
    with pytest.raises(ValueError, match="at least one"):
        gp.segmented_topk(x, np.zeros(0, np.int64), 1)


@pytest.mark.parametrize("dtype", TYPES)
def test_select_kth_and_kthvalue(dtype):
    x = sample(dtype, 1001)
    s = x[stable_order(x)]
    for k in (0, 1, 500, 1000):
        assert same(np.array([gp.select_kth(x, k)], dtype), s[k:k + 1])
        assert same(np.array([gp.kthvalue(x, k + 1)], dtype), s[k:k + 1])


def test_select_kth_out_and_reduce_out():
    x = np.array([5, 3, 9, 1], np.int64)
    out = np.zeros(1, np.int64)
    assert gp.select_kth(x, 1, out=out) is out and out[0] == 3
    assert gp.reduce(x, "max", out=out) is out and out[0] == 9


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.uint64] + FLOAT_TYPES[2:])
@pytest.mark.parametrize("index_type", [np.int32, np.uint32, np.int64, np.uint64])
def test_segmented_select(dtype, index_type):
    x = sample(dtype, 300)
    offsets = np.array([5, 6, 50, 50 + 101, 290], index_type)
    ranks = np.array([0, 43, 100, 138], index_type)
    rows = [x[offsets[r]:offsets[r + 1]] for r in range(4)]
    got = gp.segmented_select(x, offsets, ranks)
    want = np.array([row[stable_order(row)][k] for row, k in zip(rows, ranks)], dtype)
    assert same(got, want)
    medians = gp.segmented_select(x, offsets)
    want = np.array([row[stable_order(row)][(len(row) - 1) // 2] for row in rows], dtype)
    assert same(medians, want)
    assert gp.segmented_select(x, np.array([7], index_type)).shape == (0,)


def test_host_arrays_are_used_in_place():
    x = np.arange(1 << 16, dtype=np.float32)
    assert gp._lib.lib.gpuprims_fault_inject(b"") == 0  # count allocations from now
    try:
        gp.sum(x), gp.cumsum(x, out=x)  # (selection would allocate scratch of its own)
        counts = _abi.gpuprims_fault_counts()
        gp._lib.lib.gpuprims_fault_get_counts(ctypes.byref(counts))
        assert counts.allocs == 0  # no copy of x was made
    finally:
        gp._lib.lib.gpuprims_fault_inject(b"")


def test_dlpack_and_lists():
    class OnlyDlpack:  # a foreign host array: __dlpack__ alone
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, stream=None):
            return self.a.__dlpack__()

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    x = np.array([3.0, 1.0, 2.0])
    assert np.array_equal(gp.sort(OnlyDlpack(x)), [1.0, 2.0, 3.0])
    assert gp.sum([1, 2, 3]) == 6
    assert gp.topk(OnlyDlpack(x), 1)[1][0] == 0


def test_argument_errors_come_before_any_work():
    x = np.arange(10, dtype=np.float32)
    with pytest.raises(ValueError, match="not contiguous"):
        gp.sort(x[::2])
    with pytest.raises(ValueError, match="1-D"):
        gp.sum(x.reshape(2, 5))
    with pytest.raises(TypeError, match="bool"):
        gp.sum(np.ones(3, bool))
    with pytest.raises(TypeError, match="complex"):
        gp.sum(np.ones(3, np.complex64))
    with pytest.raises(TypeError):
        gp.sum(["a", None])
    with pytest.raises(ValueError, match="byte order"):
        gp.sum(x.astype(">f4"))
    with pytest.raises(ValueError, match="values"):
        gp.sort(x, np.arange(9))
    with pytest.raises(ValueError, match="k:"):
        gp.topk(x, 11)
    with pytest.raises(ValueError, match="k:"):
        gp.kthvalue(x, 0)
    with pytest.raises(TypeError, match="k:"):
        gp.select_kth(x, 1.5)
    with pytest.raises(ValueError, match="op"):
        gp.reduce(x, "prod")
    with pytest.raises(ValueError, match="stream"):
        gp.sum(x, stream=0)
    with pytest.raises(TypeError, match="dtype"):
        gp.cumsum(x, out=np.empty(10, np.float64))
    with pytest.raises(ValueError, match="ranks"):
        gp.segmented_select(x, np.array([0, 5, 10]), np.array([1]))
    with pytest.raises(TypeError, match="offsets"):
        gp.segmented_select(x, np.array([0.0, 5.0]))
    with pytest.raises(ValueError, match="backend"):
        gp.Context("tpu")


def test_library_errors_carry_status_and_message():
    x = np.arange(10, dtype=np.float32)
    with pytest.raises(gp.InvalidArgumentError, match="row 1") as e:
        gp.segmented_select(x, np.array([0, 5, 5, 10]))  # row 1 is empty
    assert e.value.status == _abi.GPUPRIMS_STATUS_INVALID_ARGUMENT
    assert e.value.status_name == "GPUPRIMS_STATUS_INVALID_ARGUMENT"
    assert isinstance(e.value, ValueError) and isinstance(e.value, gp.Error)
    with pytest.raises(gp.InvalidArgumentError, match="row 0"):
        gp.segmented_select(x, np.array([0, 3]), np.array([3]))  # rank past its row
    with pytest.raises(gp.UnsupportedError):
        with gp._context.current().lock:
            gp._context.current().use_stream(1234)
    gp._lib.lib.gpuprims_fault_inject(b"alloc:1")
    try:
        with pytest.raises(gp.OutOfMemoryError, match="fault injected") as e:
            gp.sort(x)
        assert isinstance(e.value, MemoryError)
    finally:
        gp._lib.lib.gpuprims_fault_inject(b"")
    with pytest.raises(gp.ParseError):
        gp.Life(width=4, height=4).rule = "B3/Q"
    with pytest.raises(gp.NullArgumentError):
        gp._call.check(gp._lib.lib.gpuprims_buffer_len(None, None))
    with pytest.raises(gp.TypeMismatchError):
        with gp._call.Call((), None) as c:
            a, b = np.zeros(2, np.int32), np.zeros(2, np.int64)
            from gpuprims._arrays import adapt
            gp._call.check(gp._lib.lib.gpuprims_buffer_copy(c.buf(adapt(a, "a")), c.buf(adapt(b, "b"))))


def test_no_device_error_without_a_gpu():
    try:
        gp.Context("cuda").close()
    except gp.NoDeviceError as e:
        assert "CUDA" in str(e) or "driver" in str(e)
    else:
        pytest.skip("a CUDA device is present")


def test_context():
    with gp.Context("host") as c:
        assert gp._context.current() is c and c.backend == "host"
        assert c.device_name.startswith("host (")
        c.synchronize()
        c.precompile()
        assert gp.sum(np.ones(3, np.int8), ctx=c) == 3
    c.close()
    c.close()
    with pytest.raises(ValueError, match="closed"):
        gp.sum(np.ones(3), ctx=c)


def test_threads_share_a_context():
    errors = []

    def work(seed):
        try:
            for i in range(20):
                x = sample(np.float32, 2000, seed * 100 + i)
                assert same(gp.sort(x), x[stable_order(x)])
        except Exception as e:  # reported in the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


GLIDER = "#C a glider\nx = 3, y = 3, rule = B3/S23\nbob$2bo$3o!\n"


def test_life():
    blinker = np.zeros((5, 5), bool)
    blinker[2, 1:4] = True
    g = gp.Life(blinker, boundary="dead")
    assert g.shape == (5, 5) and g.population == 3
    assert np.array_equal(g.step().to_array(), blinker.T.astype(np.uint8))
    assert np.array_equal(g.step(1).to_array(), blinker.astype(np.uint8)) and g.generation == 2
    text = g.rle()
    assert np.array_equal(gp.Life(text).to_array(), g.to_array())

    glider = gp.Life(GLIDER, 16, 16)
    assert glider.population == 5 and glider.rule == "B3/S23"
    start = glider.to_array()
    glider.step(4)  # a glider moves one cell down and right in 4 generations
    assert np.array_equal(glider.to_array(), np.roll(start, (1, 1), axis=(0, 1)))
    hl = gp.Life(width=8, height=8, rule="B36/S23")
    assert hl.rule == "B36/S23" and hl.population == 0
    hl.load_rle(GLIDER, 2, 2)
    assert hl.population == 5 and hl.rule == "B3/S23"


def test_life_errors():
    with pytest.raises(gp.ParseError):
        gp.Life("x = 3, y = 3\nbo$2bo$3q!")
    with pytest.raises(gp.InvalidArgumentError):
        gp.Life(GLIDER, 2, 2)  # does not fit
    with pytest.raises(ValueError, match="2-D"):
        gp.Life(np.zeros(4, bool))
    with pytest.raises(TypeError, match="bool or uint8"):
        gp.Life(np.zeros((4, 4), np.float32))
    with pytest.raises(ValueError, match="boundary"):
        gp.Life(width=3, height=3, boundary="klein")
    with pytest.raises(gp.InvalidArgumentError):
        gp.Life(width=0, height=3)


def test_help_is_enough():
    for fn in (gp.topk, gp.sort, gp.argsort, gp.kthvalue, gp.select_kth, gp.segmented_select, gp.segmented_topk, gp.cumsum,
               gp.scan, gp.reduce, gp.sum, gp.Life, gp.Context):
        assert fn.__doc__ and len(fn.__doc__) > 80, fn


def test_wrapper_cache_is_trimmed_between_calls_only():
    """A call that wraps two new buffers when the cache is one short of full kept the
    first (destroyed by the second's eviction): InvalidArgumentError 'already destroyed'."""
    keep = [np.ones(1, np.float32)]
    gp.sum(keep[0])  # an odd number of entries, so that a sort's pair straddles the limit
    for i in range(300):
        x = np.arange(i + 2, dtype=np.float32)[::-1].copy()
        keep.append(x)
        assert np.array_equal(gp.sort(x), x[::-1])
    assert len(gp._call._local.wrapped) <= gp._call._CACHE_LIMIT + 2


def test_torch_map_is_per_module():
    """Two torch modules in one process (the real one and the tests' stand-in, as on a
    GPU machine where test_gpu.py runs first): each gets the map of its own dtypes."""
    import types
    from gpuprims import _dtypes

    a = types.SimpleNamespace(float32=object(), int8=object())
    b = types.SimpleNamespace(float32=object(), int8=object())
    fwd_a, rev_a = _dtypes.torch_map(a)
    fwd_b, rev_b = _dtypes.torch_map(b)
    assert set(fwd_a) == {a.float32, a.int8} and set(fwd_b) == {b.float32, b.int8}
    assert rev_b[fwd_b[b.float32]] is b.float32


@pytest.fixture
def cuda_standins(monkeypatch):
    """The CUDA path without a GPU: stand-in torch/CuPy arrays on a host context marked as
    CUDA device 0 (the default context), the library recorded instead of called."""
    import standins
    from gpuprims import _arrays, _call

    for kind in (_arrays.TorchKind, _arrays.CupyKind):  # set up with the stand-in modules
        for attr in ("torch", "cupy", "_fwd", "_rev", "_raw_stream"):
            if attr in vars(kind):
                monkeypatch.setattr(kind, attr, getattr(kind, attr))
    monkeypatch.setattr(_arrays, "_KINDS", dict(_arrays._KINDS))
    monkeypatch.setattr(gp._streams, "_driver", gp._streams._driver)
    standins.install(monkeypatch.setitem)
    ctx = standins.fake_cuda_context()
    monkeypatch.setitem(gp._context.DEFAULTS, ("cuda", 0), ctx)
    monkeypatch.setattr(_call, "_local", _call._Local())  # no handles of the real library
    monkeypatch.setattr(gp._lean, "_TENSOR", gp._lean._TENSOR)  # (set to the stand-in's type below)
    rec = standins.stub_library(gp._lib.lib, monkeypatch.setattr)
    outer = gp._context._current.set(None)  # not the host context of every test here: the default
    yield standins, ctx, rec
    gp._context._current.reset(outer)
    _call._local.wrapped.clear()  # the recorded handles are no library's


def test_cuda_path_on_standins(cuda_standins):
    standins, ctx, rec = cuda_standins
    torch, cupy = standins.torch, standins.cupy
    x = torch.Tensor(1000, torch.float32)
    with gp.Context("host"):  # an entered host context does not take CUDA arrays
        with pytest.raises(ValueError, match="host-backend"):
            gp.sum(x)
    rec.calls.clear()
    gp.sum(x)
    names = [name for name, _ in rec.calls]
    assert names == ["gpuprims_context_set_stream", "gpuprims_buffer_wrap_device", "gpuprims_reduce"]
    assert rec.calls[0][1][1] == gp._streams.LEGACY  # torch's current stream 0: the legacy stream
    wrap = rec.calls[1][1]
    assert wrap[1:4] == (_abi.DTYPE["F32"], x.data_ptr(), 1000)
    rec.calls.clear()
    gp.max(x)  # the same stream and buffer: only the call itself
    assert [name for name, _ in rec.calls] == ["gpuprims_reduce"]
    values, indices = gp.topk(x, 10)
    assert type(values) is torch.Tensor and values.dtype is torch.float32 and indices.dtype is torch.int64
    assert values.device == x.device and values.numel() == 10
    c = cupy.ndarray(500, "int32")
    rec.calls.clear()
    assert type(gp.sort(c)) is cupy.ndarray
    assert [name for name, _ in rec.calls][-2:] == ["gpuprims_buffer_copy", "gpuprims_radix_sort"]
    cai = standins.CudaInterfaceArray(1000, "float32", stream=0x77)
    rec.calls.clear()
    assert isinstance(gp.cumsum(cai), gp.DeviceArray)  # on the producer's stream
    assert ("gpuprims_context_set_stream", (ctx.handle, 0x77)) in rec.calls
    assert gp._streams._driver.waits == []
    assert gp.cumsum(x, out=cai) is cai  # on torch's stream, after the producer's
    assert gp._streams._driver.waits == [(gp._streams.LEGACY, 0x77)]


def test_lean_path_makes_the_general_paths_calls(cuda_standins, monkeypatch):
    """A 1-D torch tensor without ctx= or stream= takes _lean's route once its buffer is
    cached: the same library calls, with the same arguments and results, as the general
    path (forced here with ctx= the same default context); and anything unusual still
    goes the general way and gets its error."""
    standins, ctx, rec = cuda_standins
    torch = standins.torch
    routed = []
    route = gp._lean.route
    monkeypatch.setattr(gp._lean, "route", lambda x: routed.append(route(x)) or routed[-1])
    x = torch.Tensor(1000, torch.float32)
    vals, idx = torch.Tensor(10, torch.float32), torch.Tensor(10, torch.int64)

    def comparable(calls):  # (a result cell's byref differs call to call: its type does not)
        return [(name, tuple(type(a).__name__ if type(a).__name__ == "CArgObject" else a for a in args))
                for name, args in calls]

    def facts(result):
        return [(type(t), t.dtype, t.numel(), t.device) if isinstance(t, torch.Tensor) else type(t)
                for t in (result if isinstance(result, tuple) else (result,))]

    calls = [
        lambda **kw: gp.sum(x, **kw), lambda **kw: gp.min(x, **kw), lambda **kw: gp.max(x, **kw),
        lambda **kw: gp.reduce(x, "max", **kw), lambda **kw: gp.select_kth(x, 999, **kw),
        lambda **kw: gp.kthvalue(x, 1, **kw), lambda **kw: gp.topk(x, 10, largest=False, **kw),
        lambda **kw: gp.topk(x, 10, out=(vals, idx), **kw),
        lambda **kw: gp.topk(x, 0, **kw), lambda **kw: gp.cumsum(x, **kw),
        lambda **kw: gp.scan(x, "min", exclusive=True, **kw), lambda **kw: gp.sort(x, **kw),
        lambda **kw: gp.sort(x, descending=True, stable=False, **kw),
    ]
    for call in calls:
        call()  # the general path wraps x and sets the stream
        rec.calls.clear()
        routed.clear()
        lean = facts(call())
        lean_calls = comparable(rec.calls)
        assert routed and routed[-1], "the lean route was not taken"
        rec.calls.clear()  # (the lean call's results are gone: the general call's reuse their memory)
        assert facts(call(ctx=ctx)) == lean
        assert lean_calls == comparable(rec.calls)  # (none for k = 0)
    with gp.Context("host"):  # cached, but an entered host context still refuses it
        with pytest.raises(ValueError, match="host-backend"):
            gp.sum(x)
    with pytest.raises(ValueError, match="out of range"):
        gp.topk(x, 1001)
    with pytest.raises(ValueError, match="not a rank"):
        gp.select_kth(x, 1000)
    with pytest.raises(TypeError, match="int64"):  # out= the lean route does not take
        gp.topk(x, 10, out=(vals, vals))
    with pytest.raises(ValueError, match="10 values and 10 indices for k = 9"):
        gp.topk(x, 9, out=(vals, idx))
    rec.calls.clear()
    other = torch.Tensor(1001, torch.float32)  # not wrapped yet: the general path wraps it
    gp.sum(other)
    assert "gpuprims_buffer_wrap_device" in [name for name, _ in rec.calls]


def test_topk_of_rows_on_standins(cuda_standins):
    """2-D torch and CuPy arrays: x read in place, results allocated (rows, k), one
    library call with the row length and no offsets; a dtype the library lacks is a
    TypeError before any call."""
    standins, ctx, rec = cuda_standins
    torch, cupy = standins.torch, standins.cupy
    for x in (torch.Tensor((6, 300), torch.bfloat16), cupy.ndarray((6, 300), "float32")):
        rec.calls.clear()
        values, indices = gp.topk(x, 7, dim=-1)
        assert type(values) is type(x) and tuple(values.shape) == (6, 7) and tuple(indices.shape) == (6, 7)
        call = [args for name, args in rec.calls if name == "gpuprims_segmented_topk"]
        assert len(call) == 1 and call[0][2:5] == (None, 300, 7)
        wraps = [args for name, args in rec.calls if name == "gpuprims_buffer_wrap_device"]
        assert any(w[2:4] == (x.data_ptr() if hasattr(x, "data_ptr") else x.data.ptr, 1800) for w in wraps)
    rec.calls.clear()
    with pytest.raises(TypeError, match="torch.bool is not supported"):
        gp.topk(torch.Tensor((2, 5), torch.bool), 1)
    assert rec.calls == []


def test_cuda_path_checks_on_standins(cuda_standins):
    standins, ctx, rec = cuda_standins
    torch, cupy = standins.torch, standins.cupy
    with pytest.raises(ValueError, match="not contiguous"):
        gp.sum(torch.Tensor(10, contiguous=False))
    with pytest.raises(ValueError, match="not contiguous"):
        gp.sort(cupy.ndarray(10, contiguous=False))
    with pytest.raises(ValueError, match="1-D"):
        gp.sum(torch.Tensor((2, 5)))
    with pytest.raises(TypeError, match="dtype torch.bool is not supported"):
        gp.sum(torch.Tensor(10, torch.bool))
    with pytest.raises(ValueError, match="CUDA device 1 was given to a context of device 0"):
        gp.sum(torch.Tensor(10, device="cuda:1"), ctx=ctx)
    with pytest.raises(TypeError, match="dtype differs"):
        gp.cumsum(torch.Tensor(10), out=torch.Tensor(10, torch.float64))
    with pytest.raises(ValueError, match="contiguous"):
        gp.sort(standins.CudaInterfaceArray(10, strides=(8,)))
    with pytest.raises(ValueError, match="stream"):
        gp.sum(torch.Tensor(10), stream=-1)
    assert rec.calls == []  # every mistake is found before the library is called
