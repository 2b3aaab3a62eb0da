#!/usr/bin/env python3
"""The Python layer's own time per call, measured on a machine without a GPU.

    GPUPRIMS_LIBRARY=target/release/libgpuprims.so python3 python/tools/overhead.py
    python3 python/tools/overhead.py --profile torch-sum   # cProfile of one case

Host CPU timings of Python code (µs per call, best of --loops loops of --calls
back-to-back calls), not GPU figures; examples/python/compare.py measures the same on a
GPU with real tensors.

host: gp.sum, gp.topk and gp.sort of a NumPy array of 2^10 float32 on the host backend,
against the same library calls made through ctypes on buffers wrapped beforehand (what a
C program does). The library's work is the same on both sides, so the difference is the
layer's cost.

stand-in CUDA: the CUDA-array path without a GPU. Stand-ins for a torch tensor, a CuPy
array and a bare __cuda_array_interface__ object (python/tests/standins.py: the
attributes the package reads, as the real ones expose them), a host context marked as
the default CUDA context of device 0, and every library function replaced by a no-op
that returns 0 (so nothing reaches the host backend); the C column calls the same no-op
with the same arguments. What differs is the Python side alone. The stand-ins' own
methods are Python functions, which torch's and CuPy's are not, so their cost is in the
figures too.
"""
import argparse
import cProfile
import ctypes
import os
import pstats
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))  # python/gpuprims of this checkout
sys.path.insert(0, os.path.join(HERE, "..", "tests"))  # the stand-ins

import numpy as np  # noqa: E402

import gpuprims as gp  # noqa: E402
from gpuprims import _abi, _context  # noqa: E402
from gpuprims._lib import lib  # noqa: E402

import standins  # noqa: E402

N, K = 1 << 10, 100
F32, U64, SUM, DESCENDING = _abi.DTYPE["F32"], _abi.DTYPE["U64"], _abi.OP["SUM"], _abi.ORDER["DESCENDING"]


def per_call(fns, calls, loops):
    """Best per-call time (µs) of each of `fns` over `loops` loops of `calls` calls, the
    functions taking turns loop by loop (the machine's load then falls on all alike)."""
    best = [float("inf")] * len(fns)
    for fn in fns:
        fn()
    for _ in range(loops):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter_ns()
            for _ in range(calls):
                fn()
            best[i] = min(best[i], (time.perf_counter_ns() - t0) / calls / 1000)
    return best


def wrapped(ctx, ptr, n, code, fn):
    h = ctypes.c_void_p()
    assert fn(ctx.handle, code, ptr, n, ctypes.byref(h)) == 0
    return h.value


def cases(x, vals, idx, ctx, hx, hv, hi, hk):
    """(name, the gpuprims call, the same library calls made directly)."""
    cell = ctypes.c_float()
    h = ctx.handle
    return [
        ("sum", lambda: gp.sum(x), lambda: lib.gpuprims_reduce(h, hx, SUM, ctypes.byref(cell))),
        (f"topk k={K}", lambda: gp.topk(x, K), lambda: lib.gpuprims_topk(h, hx, K, DESCENDING, hv, hi)),
        (f"topk k={K}, out=", lambda: gp.topk(x, K, out=(vals, idx)),
         lambda: lib.gpuprims_topk(h, hx, K, DESCENDING, hv, hi)),
        ("sort", lambda: gp.sort(x),
         lambda: lib.gpuprims_buffer_copy(hk, hx) or lib.gpuprims_radix_sort(h, hk, None, 0)),
    ]


def table(title, rows, args):
    print(f"\n{title}\n")
    print("| array | call | gpuprims (Python) | C API through ctypes | difference |")
    print("|---|---|---|---|---|")
    for kind, name, py, c in rows:
        t_py, t_c = per_call((py, c), args.calls, args.loops)
        print(f"| {kind} | {name} | {t_py:.2f} | {t_c:.2f} | {t_py - t_c:+.2f} |", flush=True)


_alive = []


def host_rows():
    ctx = gp.Context("host")
    x = np.random.default_rng(1).standard_normal(N).astype(np.float32)
    vals, idx, keys = np.empty(K, np.float32), np.empty(K, np.int64), np.empty(N, np.float32)
    w = lib.gpuprims_buffer_wrap_host
    hx, hv, hi, hk = (wrapped(ctx, a.ctypes.data, a.size, code, w)
                      for a, code in ((x, F32), (vals, F32), (idx, U64), (keys, F32)))
    _alive.append(keys)  # the raw sort's buffer wraps its memory
    _context.DEFAULTS["auto", 0] = ctx  # host arrays' default context: this one
    return [("numpy", *case) for case in cases(x, vals, idx, ctx, hx, hv, hi, hk)]


def standin_rows():
    """The CUDA path on stand-ins, the library stubbed out (see the module's doc)."""
    standins.install()
    ctx = standins.fake_cuda_context()
    _context.DEFAULTS["cuda", 0] = ctx
    standins.stub_library(lib)
    torch, cupy = sys.modules["torch"], sys.modules["cupy"]
    made = {
        "torch": lambda n, dt: torch.empty(n, dtype=getattr(torch, dt), device="cuda"),
        "cupy": lambda n, dt: cupy.empty(n, dt),
        "__cuda_array_interface__": lambda n, dt: standins.CudaInterfaceArray(n, dt),
    }
    rows = []
    for kind, make in made.items():
        x, vals, idx = make(N, "float32"), make(K, "float32"), make(K, "int64")
        rows += [(kind, *case) for case in cases(x, vals, idx, ctx, 1, 2, 3, 4)]
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--loops", type=int, default=300)
    ap.add_argument("--only", metavar="KIND", help="only the rows of one kind: numpy, torch, cupy, ...")
    ap.add_argument("--profile", metavar="KIND-CALL",
                    help="cProfile one stand-in case instead, e.g. torch-sum, cupy-topk, numpy-sort")
    args = ap.parse_args()
    print(f"Python {sys.version.split()[0]}, NumPy {np.__version__}, {lib._name}; host CPU timings, "
          f"µs per call (best of {args.loops} loops of {args.calls} calls), not GPU figures")
    host = host_rows()
    if args.profile:
        kind, call = args.profile.split("-", 1)
        rows = host if kind == "numpy" else standin_rows()
        fn = next(py for k, name, py, _ in rows if k.startswith(kind) and name.startswith(call))
        prof = cProfile.Profile()
        prof.runcall(lambda: all(fn() or True for _ in range(args.calls)))  # each result freed at once
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        return
    floor, = per_call((lib.gpuprims_version,), args.calls, args.loops)
    if args.only in (None, "numpy"):
        table("host backend, NumPy float32, n = 2^10 (real library calls)", host, args)
    rows = [r for r in standin_rows() if args.only in (None, r[0])]
    if rows:
        table("stand-in CUDA arrays, library calls stubbed (the Python side alone)", rows, args)
    print(f"\nOne ctypes call (gpuprims_version, before the stubs): {floor:.3f} µs")


if __name__ == "__main__":
    main()
