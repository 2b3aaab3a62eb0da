#!/usr/bin/env python3
"""gpuprims against PyTorch and CuPy on the same CUDA tensors, and the Python layer's
overhead against the same library calls made through ctypes directly.

    python3 examples/python/compare.py                 # 2^20, 2^24, 2^28 float32
    python3 examples/python/compare.py 20 24 --reps 5  # log2 sizes

Each row times one operation on the same data (CuPy arrays share the torch tensor's
memory): gpuprims, torch and CuPy, the median of --reps runs, wall time of the call
followed by a device synchronisation, after a warm-up run; a run over 1 s is timed once.
A ratio above 1 means gpuprims is faster. cuda.compute (cuda-cccl) is timed when it
imports; else its column says n/a. It has no selection, so its top-k, k-th value and
per-row median are what its user would write: a radix sort (pairs with an index for
top-k) or a segmented sort of the rows, then a slice. Its objects are built once and
its temporary storage allocated once, outside the timing; outputs are allocated by
torch on each call, as gpuprims allocates its own.

Overhead: gp.sum and gp.topk on a CUDA tensor against gpuprims_reduce and gpuprims_topk
called through ctypes with the buffers wrapped once beforehand (what a C program does),
per call in a loop of back-to-back calls; and the cost of one ctypes call itself.
"""
import argparse
import ctypes
import statistics
import sys
import time

import numpy as np
import torch

import gpuprims as gp
from gpuprims import _abi
from gpuprims._lib import lib

try:
    import cupy
except ImportError:
    cupy = None
try:
    import cuda.compute as cc
except Exception as e:  # not installed, or no CUDA libraries it can load
    print(f"cuda.compute: not used ({type(e).__name__}: {e})", file=sys.stderr)
    cc = None

ROW_LEN = 1024  # segmented_select: rows of this many elements, each row's lower median


def timed(fn, reps):
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    first = time.perf_counter() - t0
    if first > 2.0:  # slow (torch.kthvalue at 2^28): the warm-up run is the measurement
        return first
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        if times[-1] > 1.0:
            break
    return statistics.median(times)


def cases(x):
    n = x.numel()
    k = 100
    kth = n // 2
    offsets = torch.arange(0, n + 1, ROW_LEN, device="cuda", dtype=torch.int64)
    rows = x.view(-1, ROW_LEN)
    mid = (ROW_LEN - 1) // 2
    c = cupy.asarray(x) if cupy is not None else None
    crow = c.reshape(-1, ROW_LEN) if c is not None else None
    yield ("sort", lambda: gp.sort(x), lambda: torch.sort(x),
           (lambda: cupy.sort(c)) if c is not None else None)
    yield (f"topk k={k}", lambda: gp.topk(x, k), lambda: torch.topk(x, k),
           (lambda: cupy.sort(cupy.partition(c, n - k)[n - k:])) if c is not None else None)
    yield ("kthvalue n/2", lambda: gp.kthvalue(x, kth + 1), lambda: torch.kthvalue(x, kth + 1).values.item(),
           (lambda: float(cupy.partition(c, kth)[kth])) if c is not None else None)
    yield ("cumsum", lambda: gp.cumsum(x), lambda: torch.cumsum(x, 0),
           (lambda: cupy.cumsum(c)) if c is not None else None)
    yield (f"segmented_select rows of {ROW_LEN}", lambda: gp.segmented_select(x, offsets),
           lambda: torch.kthvalue(rows, mid + 1, dim=1).values,
           (lambda: cupy.partition(crow, mid, axis=1)[:, mid]) if c is not None else None)


def compute_cases(x):
    """cuda.compute's counterparts of cases(x), by name (None without cuda.compute)."""
    if cc is None:
        return {}
    n, k, kth = x.numel(), 100, x.numel() // 2
    mid = (ROW_LEN - 1) // 2
    offsets = torch.arange(0, n + 1, ROW_LEN, device="cuda", dtype=torch.int64)
    out, out2 = torch.empty_like(x), torch.empty_like(x)
    iota, iota_out = torch.arange(n, device="cuda", dtype=torch.int64), torch.empty(n, device="cuda", dtype=torch.int64)
    up, down = cc.SortOrder.ASCENDING, cc.SortOrder.DESCENDING

    def prepared(build, **args):
        """The algorithm object and its temporary storage, sized once for these arrays."""
        algo = build()
        temp = torch.empty(max(1, algo(temp_storage=None, **args)), device="cuda", dtype=torch.uint8)
        return lambda **call: algo(temp_storage=temp, **{**args, **call})

    sort = prepared(lambda: cc.make_radix_sort(d_in_keys=x, d_out_keys=out, d_in_values=None,
                                               d_out_values=None, order=up),
                    d_in_keys=x, d_out_keys=out, d_in_values=None, d_out_values=None, num_items=n)
    pairs = prepared(lambda: cc.make_radix_sort(d_in_keys=x, d_out_keys=out, d_in_values=iota,
                                                d_out_values=iota_out, order=down),
                     d_in_keys=x, d_out_keys=out, d_in_values=iota, d_out_values=iota_out, num_items=n)
    scan = prepared(lambda: cc.make_inclusive_scan(d_in=x, d_out=out, op=cc.OpKind.PLUS),
                    d_in=x, d_out=out, op=cc.OpKind.PLUS, init_value=None, num_items=n)
    rows = prepared(lambda: cc.make_segmented_sort(d_in_keys=x, d_out_keys=out2, start_offsets_in=offsets[:-1],
                                                   end_offsets_in=offsets[1:], order=up),
                    d_in_keys=x, d_out_keys=out2, d_in_values=None, d_out_values=None, num_items=n,
                    num_segments=n // ROW_LEN, start_offsets_in=offsets[:-1], end_offsets_in=offsets[1:])

    def sorted_keys():
        keys = torch.empty_like(x)
        sort(d_out_keys=keys)
        return keys

    def top_k():
        keys, idx = torch.empty_like(x), torch.empty(n, device="cuda", dtype=torch.int64)
        pairs(d_out_keys=keys, d_out_values=idx)
        return keys[:k], idx[:k]

    def cumsum():
        res = torch.empty_like(x)
        scan(d_out=res)
        return res

    def row_medians():
        res = torch.empty_like(x)
        rows(d_out_keys=res)
        return res.view(-1, ROW_LEN)[:, mid]

    return {"sort": sorted_keys, f"topk k={k}": top_k, "kthvalue n/2": lambda: sorted_keys()[kth].item(),
            "cumsum": cumsum, f"segmented_select rows of {ROW_LEN}": row_medians}


def cc_version():
    from importlib.metadata import version
    return f"(cuda-cccl {version('cuda-cccl')})"


def fmt(t):
    return "n/a" if t is None else f"{t * 1e3:.3f}"


def ratio(other, ours):
    return "n/a" if other is None else f"{other / ours:.2f}x"


def compare(log2s, reps):
    print(f"device: {torch.cuda.get_device_name()}; torch {torch.__version__}; "
          f"cupy {cupy.__version__ if cupy else 'not installed'}; "
          f"cuda.compute {cc_version() if cc else 'not installed'}; float32, times in ms\n")
    print("| op | n | gpuprims | torch | CuPy | cuda.compute | vs torch | vs CuPy | vs cuda.compute |")
    print("|---|---|---|---|---|---|---|---|---|")
    for e in log2s:
        torch.manual_seed(e)
        x = torch.randn(1 << e, device="cuda")
        nv = compute_cases(x)
        for name, ours, theirs, cp in cases(x):
            t_gp = timed(ours, reps)
            t_torch = timed(theirs, reps)
            t_cp = timed(cp, reps) if cp is not None else None
            t_nv = timed(nv[name], reps) if name in nv else None
            print(f"| {name} | 2^{e} | {fmt(t_gp)} | {fmt(t_torch)} | {fmt(t_cp)} | {fmt(t_nv)} | "
                  f"{ratio(t_torch, t_gp)} | {ratio(t_cp, t_gp)} | {ratio(t_nv, t_gp)} |", flush=True)
        del x, nv
        torch.cuda.empty_cache()


def per_call(fn, calls):
    fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best


def overhead():
    ctx = gp._context.default("cuda", 0)
    stream = torch.cuda.current_stream().cuda_stream or 1
    with ctx.lock:
        ctx.use_stream(stream)

    def wrap(t, code):
        h = ctypes.c_void_p()
        assert lib.gpuprims_buffer_wrap_device(ctx.handle, code, t.data_ptr(), t.numel(), ctypes.byref(h)) == 0
        return h.value

    f32, u64 = _abi.DTYPE["F32"], _abi.DTYPE["U64"]
    print("\nPython layer overhead, per call (µs; best of 5 loops of back-to-back calls):\n")
    print("| call | n | gpuprims (Python) | C API through ctypes | difference |")
    print("|---|---|---|---|---|")
    for e in (10, 20, 24):
        x = torch.randn(1 << e, device="cuda")
        k = 100
        vals = torch.empty(k, device="cuda")
        idx = torch.empty(k, device="cuda", dtype=torch.int64)
        hx, hv, hi = wrap(x, f32), wrap(vals, f32), wrap(idx, u64)
        cell = ctypes.c_float()
        calls = 2000 if e <= 20 else 200
        rows = [
            ("sum", lambda: gp.sum(x), lambda: lib.gpuprims_reduce(ctx.handle, hx, 0, ctypes.byref(cell))),
            ("topk k=100", lambda: gp.topk(x, k), lambda: lib.gpuprims_topk(ctx.handle, hx, k, 1, hv, hi)),
            ("topk k=100, out=", lambda: gp.topk(x, k, out=(vals, idx)),
             lambda: lib.gpuprims_topk(ctx.handle, hx, k, 1, hv, hi)),
        ]
        for name, py, c in rows:
            t_py, t_c = per_call(py, calls), per_call(c, calls)
            print(f"| {name} | 2^{e} | {t_py * 1e6:.2f} | {t_c * 1e6:.2f} | {(t_py - t_c) * 1e6:+.2f} |", flush=True)
        for h in (hx, hv, hi):
            lib.gpuprims_buffer_destroy(h)
    t_ct = per_call(lambda: lib.gpuprims_version(), 100000)
    print(f"\nOne ctypes call (gpuprims_version): {t_ct * 1e6:.3f} µs, the floor of any call from Python.")
    t_empty = per_call(lambda: (torch.empty(100, device="cuda"), torch.empty(100, device="cuda", dtype=torch.int64)), 20000)
    print(f"Two torch.empty of 100 elements (what gp.topk and torch.topk allocate): {t_empty * 1e6:.2f} µs.")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log2", nargs="*", type=int, default=[20, 24, 28], help="log2 of the sizes")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--no-overhead", action="store_true")
    ap.add_argument("--overhead-only", action="store_true")
    args = ap.parse_args()
    ctx = gp._context.default("cuda", 0)
    t0 = time.perf_counter()
    ctx.precompile()
    print(f"precompile: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    if not args.no_overhead:
        overhead()
        print()
    if not args.overhead_only:
        compare(args.log2, args.reps)


if __name__ == "__main__":
    main()
