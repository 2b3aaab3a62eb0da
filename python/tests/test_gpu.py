"""The package on a GPU with PyTorch tensors and CuPy arrays: zero-copy (pointers
compared), the caller's stream (inputs produced on a non-default stream, no
synchronisation before the call), results against torch's and CuPy's own functions,
float specials included. Skipped without a CUDA device and torch or CuPy."""
import ctypes

import numpy as np
import pytest

import gpuprims as gp
from gpuprims import _abi
from gpuprims._arrays import adapt
from reference import same, stable_order

try:
    import torch

    if not torch.cuda.is_available():
        torch = None
except ImportError:
    torch = None
try:
    import cupy

    cupy.cuda.runtime.getDeviceCount()
except Exception:
    cupy = None

if torch is None and cupy is None:
    pytest.skip("no CUDA device with PyTorch or CuPy", allow_module_level=True)

FRAMEWORKS = [pytest.param("torch", marks=pytest.mark.skipif(torch is None, reason="no torch")),
              pytest.param("cupy", marks=pytest.mark.skipif(cupy is None, reason="no CuPy"))]
NP_TYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64, np.float32,
            np.float64] + ([np.float16] if "F16" in _abi.DTYPE else [])


@pytest.fixture(scope="module", autouse=True)
def compiled():
    ctx = gp._context.default("cuda", 0)
    ctx.precompile()  # every kernel once, on all cores, before the timed-out tests
    return ctx


def to_device(fw, a):
    if fw == "torch":
        if a.dtype in (np.uint16, np.uint32, np.uint64) and not hasattr(torch, "uint16"):
            pytest.skip("this torch has no unsigned 16-64 bit types")
        return torch.from_numpy(np.ascontiguousarray(a)).cuda()
    return cupy.asarray(a)


def to_host(a):
    if torch is not None and isinstance(a, torch.Tensor):
        return a.cpu().numpy()
    if cupy is not None and isinstance(a, cupy.ndarray):
        return a.get()
    return np.asarray(a)


def sample(dtype, n, seed=3):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        x = rng.standard_normal(n).astype(dtype)
        x[:8] = [np.nan, -np.inf, np.inf, -0.0, 0.0, np.nan, 1.5, 0.0]
        x[100:200] = x[0:100]
        return x
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    x[100:200] = x[0:100]
    return x


def device_ptr(x):
    """The address of the gpuprims buffer that wraps x for a call."""
    op = adapt(x, "x")
    with gp._call.Call((op,)) as c:
        h = c.buf(op)
    p = ctypes.c_void_p()
    gp._call.check(gp._lib.lib.gpuprims_buffer_device_ptr(h, ctypes.byref(p)))
    return p.value


@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_zero_copy(fw):
    x = to_device(fw, np.arange(1 << 16, dtype=np.int64))
    ptr = x.data_ptr() if fw == "torch" else x.data.ptr
    assert device_ptr(x) == ptr
    assert gp.cumsum(x, out=x) is x  # written in place: the tensor's own memory
    assert np.array_equal(to_host(x), np.cumsum(np.arange(1 << 16)))
    values, indices = gp.topk(x, 5)
    assert type(values) is type(x) and type(indices) is type(x)
    if fw == "torch":
        assert values.device == x.device and indices.dtype == torch.int64
    else:
        assert values.device == x.device and indices.dtype == np.int64


@pytest.mark.parametrize("fw", FRAMEWORKS)
@pytest.mark.parametrize("dtype", NP_TYPES)
def test_every_function_against_the_reference(fw, dtype):
    h = sample(dtype, 3000)
    x = to_device(fw, h)
    perm = stable_order(h)
    assert same(to_host(gp.sort(x)), h[perm])
    assert np.array_equal(to_host(gp.argsort(x)), perm)
    down = stable_order(h, descending=True)
    keys, vals = gp.sort(x, to_device(fw, np.arange(3000, dtype=np.int32)), descending=True)
    assert same(to_host(keys), h[down]) and np.array_equal(to_host(vals), down)
    assert same(to_host(gp.sort(x, stable=False)), h[perm])
    v, i = gp.topk(x, 50)
    assert same(to_host(v), h[down[:50]]) and np.array_equal(to_host(i), down[:50])
    v, i = gp.topk(x, 50, largest=False)
    assert same(to_host(v), h[perm[:50]]) and np.array_equal(to_host(i), perm[:50])
    for k in (0, 1499, 2999):
        assert same(np.array([gp.select_kth(x, k)], dtype), h[perm[k:k + 1]])
    assert same(np.array([gp.kthvalue(x, 1)], dtype), h[perm[:1]])
    offsets = np.array([0, 10, 1000, 2999], np.int64)
    rows = [h[offsets[r]:offsets[r + 1]] for r in range(3)]
    want = np.array([r[stable_order(r)][(len(r) - 1) // 2] for r in rows], dtype)
    assert same(to_host(gp.segmented_select(x, to_device(fw, offsets))), want)
    if np.dtype(dtype).kind != "f":
        with np.errstate(over="ignore"):
            assert np.array_equal(to_host(gp.cumsum(x)), np.cumsum(h, dtype=dtype))
        assert gp.sum(x) == np.sum(h, dtype=dtype)
        assert gp.max(x) == h.max() and gp.min(x) == h.min()


@pytest.mark.skipif(torch is None, reason="no torch")
def test_against_torch_with_float_specials():
    x = torch.randn(1 << 20, device="cuda")
    x[:6] = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 0.0, float("nan")])
    s, _ = torch.sort(x)
    g = gp.sort(x)
    assert torch.equal(torch.isnan(g), torch.isnan(s)) and torch.equal(g[:-2], s[:-2])
    assert torch.equal(gp.sort(x, descending=True)[2:], torch.sort(x, descending=True)[0][2:])
    tv, _ = torch.topk(x, 1000)
    gv, gi = gp.topk(x, 1000)
    assert torch.isnan(gv[:2]).all() and torch.equal(gv[2:], tv[2:]) and torch.equal(x[gi][2:], gv[2:])
    y = x[~torch.isnan(x) & ~torch.isinf(x)].contiguous()
    for k in (1, 1000, y.numel()):
        assert gp.kthvalue(y, k) == torch.kthvalue(y, k).values.item()
    torch.testing.assert_close(gp.cumsum(y), torch.cumsum(y, 0), rtol=1e-3, atol=1e-1)
    assert gp.sum(y) == pytest.approx(y.double().sum().item(), rel=1e-4, abs=1e-1)
    assert torch.equal(gp.argsort(y), torch.argsort(y, stable=True))


@pytest.mark.parametrize("fw", FRAMEWORKS)
def test_topk_of_rows_and_segmented_topk(fw):
    h = sample(np.float32, 64 * 500).reshape(64, 500)
    x = to_device(fw, h)
    v, i = gp.topk(x, 20)
    down = np.stack([stable_order(r, descending=True)[:20] for r in h])
    assert to_host(v).shape == (64, 20) and np.array_equal(to_host(i), down)
    assert same(to_host(v), np.take_along_axis(h, down, 1))
    if fw == "torch":
        assert torch.equal(v[1:], torch.topk(x, 20).values[1:])  # row 0 holds NaNs
    flat = h.reshape(-1)
    offsets = np.array([0, 0, 7, 4000, 4000, 32000], np.int64)
    ks = np.array([3, 5, 1000, 0, 17], np.int64)
    gv, gi = gp.segmented_topk(to_device(fw, flat), to_device(fw, offsets), ks=to_device(fw, ks), largest=False)
    pos = 0
    for r, k in enumerate(ks):
        row = flat[offsets[r]:offsets[r + 1]]
        perm = stable_order(row)[:k]
        assert np.array_equal(to_host(gi)[pos:pos + len(perm)], perm)
        assert (to_host(gi)[pos + len(perm):pos + k] == -1).all()
        pos += k


@pytest.mark.skipif(cupy is None, reason="no CuPy")
def test_against_cupy():
    x = cupy.random.standard_normal(1 << 20, dtype=cupy.float32)
    assert cupy.array_equal(gp.sort(x), cupy.sort(x))
    k = 12345
    assert gp.select_kth(x, k) == float(cupy.partition(x, k)[k])
    cupy.testing.assert_allclose(gp.cumsum(x), cupy.cumsum(x), rtol=1e-3, atol=1e-1)
    v, i = gp.topk(x, 10)
    assert cupy.array_equal(v, cupy.sort(x)[::-1][:10]) and cupy.array_equal(x[i], v)


@pytest.mark.skipif(torch is None, reason="no torch")
def test_lean_path_on_the_current_stream():
    """Second calls on a tensor take the lean route (its buffer is cached): on a new
    current stream, with a long kernel ahead of the data, they must wait for it too."""
    n = 1 << 22
    src = torch.randn(n, device="cuda")
    want = (torch.sort(src)[0], src.sum().item(), torch.topk(src, 100)[0], torch.kthvalue(src, n // 2).values.item())
    x = torch.zeros(n, device="cuda")
    for _ in range(2):
        gp.sort(x), gp.sum(x), gp.topk(x, 100), gp.kthvalue(x, n // 2), gp.cumsum(x)
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(20_000_000)
        x.copy_(src)  # the data written on s, after the sleep (zeros before)
        got = (gp.sort(x), gp.sum(x), gp.topk(x, 100)[0], gp.kthvalue(x, n // 2))
        c = gp.cumsum(x)
    s.synchronize()
    assert torch.equal(got[0], want[0]) and torch.equal(got[2], want[2]) and got[3] == want[3]
    assert got[1] == pytest.approx(want[1], rel=1e-4, abs=1e-1)
    torch.testing.assert_close(c, torch.cumsum(src, 0), rtol=1e-3, atol=1e-1)


@pytest.mark.skipif(torch is None, reason="no torch")
def test_torch_stream_ordering():
    n = 1 << 24
    for explicit in (False, True):
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):  # produced on s, nothing synchronised
            torch.cuda._sleep(20_000_000)  # a long kernel before the data is written
            x = torch.arange(n, 0, -1, device="cuda", dtype=torch.float32)
            if not explicit:
                y = gp.sort(x)  # the current stream is s
                m = gp.max(x)
        if explicit:
            y = gp.sort(x, stream=s)
            m = gp.max(x, stream=s)
        assert m == n
        s.synchronize()
        assert torch.equal(y, torch.arange(1, n + 1, device="cuda", dtype=torch.float32))


@pytest.mark.skipif(cupy is None, reason="no CuPy")
def test_cupy_stream_ordering():
    n = 1 << 24
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        x = cupy.arange(n, 0, -1, dtype=cupy.float32)
        x = x * 1  # more work queued on s
        y = gp.sort(x)
    s.synchronize()
    assert cupy.array_equal(y, cupy.arange(1, n + 1, dtype=cupy.float32))


@pytest.mark.skipif(torch is None, reason="no torch")
def test_foreign_arrays_give_device_arrays():
    t = torch.arange(10, 0, -1, device="cuda", dtype=torch.int32)

    class Cai:  # __cuda_array_interface__ alone
        __cuda_array_interface__ = t.__cuda_array_interface__

    class Dl:  # DLPack alone
        def __dlpack__(self, stream=None):
            return t.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return t.__dlpack_device__()

    for foreign in (Cai(), Dl()):
        out = gp.sort(foreign)
        assert isinstance(out, gp.DeviceArray) and out.ptr != t.data_ptr()
        back = torch.as_tensor(out, device="cuda")  # through __cuda_array_interface__
        assert back.data_ptr() == out.ptr and torch.equal(back, torch.arange(1, 11, device="cuda",
                                                                             dtype=torch.int32))
        assert np.array_equal(np.asarray(out), np.arange(1, 11))


@pytest.mark.skipif(torch is None, reason="no torch")
def test_numpy_on_cuda_is_copied_in_and_out():
    h = np.random.default_rng(1).standard_normal(10000).astype(np.float32)
    with gp.Context("cuda") as c:
        assert c.backend == "cuda" and c.device_name
        out = gp.sort(h)
        assert type(out) is np.ndarray and np.array_equal(out, np.sort(h))
        assert np.array_equal(gp.argsort(h), np.argsort(h, kind="stable"))
        assert gp.topk(h, 3)[0].tolist() == sorted(h)[-1:-4:-1]


@pytest.mark.skipif(torch is None, reason="no torch")
def test_gpu_errors():
    x = torch.arange(10, device="cuda", dtype=torch.float32)
    with pytest.raises(ValueError, match="host-backend"):
        gp.sort(x, ctx=gp.Context("host"))
    with pytest.raises(ValueError, match="contiguous"):
        gp.sort(x[::2])
    with pytest.raises(TypeError, match="bool"):
        gp.sum(x > 3)
    with pytest.raises(ValueError, match="1-D"):
        gp.sum(x.reshape(2, 5))
    with pytest.raises(TypeError, match="dtype differs"):
        gp.cumsum(x, out=torch.empty(10, device="cuda", dtype=torch.float64))
    if torch.cuda.device_count() > 1:
        with pytest.raises(ValueError, match="CUDA device 1 was given to a context of device 0"):
            gp.sum(x.to("cuda:1"), ctx=gp._context.default("cuda", 0))
    closed = gp.Context("cuda")
    closed.close()
    with pytest.raises(ValueError, match="closed"):
        gp.sum(x, ctx=closed)
    with pytest.raises(gp.UnsupportedError):
        h = np.zeros(4, np.float32)
        out = ctypes.c_void_p()
        gp._call.check(gp._lib.lib.gpuprims_buffer_wrap_host(gp._context.default("cuda", 0).handle,
                                                             _abi.GPUPRIMS_DTYPE_F32, h.ctypes.data, 4,
                                                             ctypes.byref(out)))
