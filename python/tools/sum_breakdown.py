"""Where gp.sum's time goes with a real torch tensor on a GPU: the per-call time of each
piece (torch's accessors, adapt, Call, the library call alone through ctypes) and a
cProfile of 20,000 calls (skipped with --no-profile).

    GPUPRIMS_LIBRARY=.../libgpuprims.so PYTHONPATH=python python3 python/tools/sum_breakdown.py
"""
import cProfile
import ctypes
import pstats
import sys
import time

import torch
import gpuprims as gp
from gpuprims import _abi
from gpuprims._arrays import adapt
from gpuprims._call import Call
from gpuprims._lib import lib

x = torch.arange(1024, device="cuda", dtype=torch.float32)
gp.sum(x); torch.cuda.synchronize()

def per_call(f, n=20000):
    best = 1e9
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(n):
            f()
        best = min(best, (time.perf_counter() - t) / n)
    return best * 1e6

raw = torch._C._cuda_getCurrentRawStream
rows = [
    ("x.dim()", lambda: x.dim()),
    ("x.is_contiguous()", lambda: x.is_contiguous()),
    ("x.dtype", lambda: x.dtype),
    ("x.get_device()", lambda: x.get_device()),
    ("x.data_ptr()", lambda: x.data_ptr()),
    ("x.numel()", lambda: x.numel()),
    ("raw stream", lambda: raw(0)),
    ("adapt(x)", lambda: adapt(x, "x")),
]
op = adapt(x, "x")
cell = ctypes.c_float()
def call_only():
    with Call((op,)) as c:
        pass
rows.append(("Call((op,)) enter/exit", call_only))
def lib_call():
    with Call((op,)) as c:
        lib.gpuprims_reduce(c.h, c.buf(op), 0, ctypes.byref(cell))
rows.append(("Call + buf + gpuprims_reduce", lib_call))
rows.append(("gp.sum(x)", lambda: gp.sum(x)))
# compare.py's C column, in this harness: the same call on a buffer wrapped beforehand,
# the context's stream already torch's current one.
ctx = gp._context.default("cuda", 0)
hx = ctypes.c_void_p()
assert lib.gpuprims_buffer_wrap_device(ctx.handle, _abi.DTYPE["F32"], x.data_ptr(), x.numel(), ctypes.byref(hx)) == 0
hxv = hx.value
rows.append(("C: gpuprims_reduce via ctypes", lambda: lib.gpuprims_reduce(ctx.handle, hxv, 0, ctypes.byref(cell))))
side = torch.cuda.Stream()
rows.append(("gp.sum(x, stream=side stream)", lambda: gp.sum(x, stream=side)))
rows.append(("gp.sum(x) again", lambda: gp.sum(x)))
rows.append(("C again", lambda: lib.gpuprims_reduce(ctx.handle, hxv, 0, ctypes.byref(cell))))
rows.append(("lambda: None", lambda: None))
for name, f in rows:
    print(f"{name:32s} {per_call(f):7.3f} us")
if "--no-profile" in sys.argv:
    raise SystemExit(0)
pr = cProfile.Profile()
pr.enable()
for _ in range(20000):
    gp.sum(x)
pr.disable()
pstats.Stats(pr, stream=sys.stdout).sort_stats("tottime").print_stats(18)
