#!/usr/bin/env python3
"""gpuprims' segmented top-k against torch.topk on the same CUDA tensors: issue 39's
top-k rows (the k largest of each row, sorted, values and indices).

    python3 examples/python/segmented_topk_compare.py
    python3 examples/python/segmented_topk_compare.py --reps 30 --only ragged

Cases (as the tour's segtopk rows, bench/segmented_topk_bench.c):
    bf16, 128 rows x 128,256, k = 50          target >= 3x torch
    f32, 4,096 rows x 32,768, k = 100         target >= 3x torch
    f32, 100,000 rows x 256, k = 8            target >= 2x the best anchor (here: torch;
                                              the tour has CUB's DeviceBatchedTopK)
    f32, 10,000 ragged rows of 1..5,000, k = 10 each
                                              target >= 5x torch on the rows padded with
                                              -inf to 5,000 (the padding is done once,
                                              outside torch's timing)
    bf16, one row of 2^28, k = 100            target <= 0.3 ms (torch.topk beside it)
bf16 normal (torch.randn), f32 uniform in [-1, 1).

gpuprims: gpuprims.topk(x, k, dim=-1) on the 2-D tensor and gpuprims.segmented_topk(values,
offsets, k) for the ragged rows when the package has them; else gpuprims_segmented_topk
through ctypes with the package's own buffer handling (the same C call). Timing as
compare.py: wall time of the call and a device synchronisation, median of --reps after a
warm-up. ratio = torch ms / gpuprims ms.

Checks: gpuprims' values equal torch's exactly, row by row (torch sorts them too); the
indices where a row's values are distinct equal torch's (torch is not tie-deterministic),
every index points at an element equal to its value, and equal values come lowest index
first. Ragged rows shorter than k: their first len entries are compared (gpuprims pads
with zero bits and index -1, torch with -inf).
"""
import argparse
import ctypes
import inspect
import statistics
import sys
import time

import torch

import gpuprims as gp
from gpuprims._lib import lib

LARGEST = True


def timed(fn, reps):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


# --- gpuprims: the package's functions, or the C function through ctypes -------------

_HAS_2D_TOPK = "dim" in inspect.signature(gp.topk).parameters
_HAS_SEGMENTED = hasattr(gp, "segmented_topk")


def _c_segmented_topk(values, offsets, row_len, k, nrows):
    """gpuprims_segmented_topk on flat `values` (uniform rows of row_len, or offsets),
    through the package's Call (context, stream, wrapped buffers); returns
    (values, indices) of nrows x k."""
    from gpuprims import _abi
    from gpuprims._arrays import adapt
    from gpuprims._call import U64, Call, check
    from gpuprims._ops import _index_code

    fn = lib.gpuprims_segmented_topk
    fn.restype = ctypes.c_uint32
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64,
                   ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_void_p]
    order = _abi.ORDER["DESCENDING" if LARGEST else "ASCENDING"]
    a = adapt(values, "values")
    off = adapt(offsets, "offsets") if offsets is not None else None
    out_v = torch.empty(nrows * k, dtype=values.dtype, device=values.device)
    out_i = torch.empty(nrows * k, dtype=torch.int64, device=values.device)
    ov, oi = adapt(out_v, "out_values"), adapt(out_i, "out_indices")
    with Call((a, off, ov, oi), None, None) as c:
        h_off = c.buf(off, _index_code(off, "offsets")) if off is not None else None
        check(fn(c.ctx.handle, c.buf(a), h_off, row_len, k, None, order, c.out_buf(ov), c.out_buf(oi, U64)))
    return out_v.view(nrows, k), out_i.view(nrows, k)


def gp_uniform(x, k):
    """The k largest of each row of the 2-D tensor x."""
    if _HAS_2D_TOPK:
        v, i = gp.topk(x, k, dim=-1)
        return v.reshape(x.shape[0], k), i.reshape(x.shape[0], k)
    return _c_segmented_topk(x.reshape(-1), None, x.shape[1], k, x.shape[0])


def gp_ragged(values, offsets, k):
    nrows = offsets.numel() - 1
    if _HAS_SEGMENTED:
        v, i = gp.segmented_topk(values, offsets, k)
        return v.reshape(nrows, k), i.reshape(nrows, k)
    return _c_segmented_topk(values, offsets, 0, k, nrows)


def how():
    return ("gpuprims.topk(dim=-1)" if _HAS_2D_TOPK else "ctypes gpuprims_segmented_topk") + ", " + (
        "gpuprims.segmented_topk" if _HAS_SEGMENTED else "ctypes gpuprims_segmented_topk (ragged)")


# --- checks ---------------------------------------------------------------------------

def check_rows(x_rows, lens, gv, gi, tv, ti):
    """x_rows: the rows (2-D, padded for ragged); lens: each row's length (None: all
    full). Returns '' when OK, else what is wrong."""
    k = gv.shape[1]
    if lens is None:
        valid = torch.ones_like(gi, dtype=torch.bool)
    else:
        valid = torch.arange(k, device=gi.device)[None, :] < lens.clamp(max=k)[:, None]
    if not torch.equal(torch.where(valid, gv, torch.zeros_like(gv)), torch.where(valid, tv, torch.zeros_like(tv))):
        bad = (~((gv == tv) | ~valid)).nonzero()[0].tolist()
        return f"values differ from torch's (row {bad[0]}, place {bad[1]})"
    if lens is not None:  # pads: zero bits, index -1
        pad = ~valid
        if pad.any() and not (bool((gi[pad] == -1).all()) and bool((gv[pad] == 0).all())):
            return "pads are not (0, -1)"
    gi_safe = torch.where(valid, gi, torch.zeros_like(gi))
    if bool(((gi_safe < 0) | (gi_safe >= x_rows.shape[1]))[valid].any()):
        return "an index out of its row"
    if not bool((x_rows.gather(1, gi_safe) == gv)[valid].all()):
        return "an index does not point at its value"
    same_next = (gv[:, 1:] == gv[:, :-1]) & valid[:, 1:]
    if bool((gi[:, 1:] <= gi[:, :-1])[same_next].any()):
        return "equal values not lowest index first"
    # Where a value is unique within the row's top k (no neighbour equal to it; sorted, so
    # neighbours suffice) and is not the k-th value (which may tie with elements past the
    # k-th place, of which torch may have picked another), the index must be torch's.
    distinct = valid.clone()
    distinct[:, 1:] &= gv[:, 1:] != gv[:, :-1]
    distinct[:, :-1] &= gv[:, :-1] != gv[:, 1:]
    distinct &= gv != gv[:, -1:]
    if not bool((gi == ti)[distinct].all()):
        return "indices of distinct values differ from torch's"
    return ""


# --- the cases --------------------------------------------------------------------------

def case_uniform(name, dtype, nrows, row_len, k, target, reps, do_check):
    torch.manual_seed(nrows + row_len + k)
    if dtype == torch.bfloat16:
        x = torch.randn(nrows, row_len, device="cuda", dtype=torch.bfloat16)
    else:
        x = torch.rand(nrows, row_len, device="cuda", dtype=torch.float32) * 2 - 1
    t_gp = timed(lambda: gp_uniform(x, k), reps)
    t_torch = timed(lambda: torch.topk(x, k, dim=1), reps)
    msg = "-"
    if do_check:
        gv, gi = gp_uniform(x, k)
        tv, ti = torch.topk(x, k, dim=1)
        msg = check_rows(x, None, gv, gi, tv, ti) or "OK"
    shape = f"{nrows:,} x {row_len:,}"
    row(name, shape, k, t_gp, t_torch, target, msg)
    del x
    torch.cuda.empty_cache()
    return msg in ("OK", "-")


def case_ragged(name, nrows, max_len, k, target, reps, do_check):
    torch.manual_seed(nrows + max_len + k)
    lens = torch.randint(1, max_len + 1, (nrows,), device="cuda", dtype=torch.int64)
    offsets64 = torch.zeros(nrows + 1, device="cuda", dtype=torch.int64)
    offsets64[1:] = torch.cumsum(lens, 0)
    offsets = offsets64.to(torch.int32)
    n = int(offsets64[-1])
    values = torch.rand(n, device="cuda", dtype=torch.float32) * 2 - 1
    # The rows padded with -inf to max_len (once, outside torch's timing).
    row_of = torch.repeat_interleave(torch.arange(nrows, device="cuda"), lens)
    col_of = torch.arange(n, device="cuda") - offsets64[:-1][row_of]
    padded = torch.full((nrows, max_len), float("-inf"), device="cuda", dtype=torch.float32)
    padded[row_of, col_of] = values
    t_gp = timed(lambda: gp_ragged(values, offsets, k), reps)
    t_torch = timed(lambda: torch.topk(padded, k, dim=1), reps)

    def pad_and_topk():
        p = torch.full((nrows, max_len), float("-inf"), device="cuda", dtype=torch.float32)
        p[row_of, col_of] = values
        return torch.topk(p, k, dim=1)

    t_torch_pad = timed(pad_and_topk, reps)
    msg = "-"
    if do_check:
        gv, gi = gp_ragged(values, offsets, k)
        tv, ti = torch.topk(padded, k, dim=1)
        msg = check_rows(padded, lens, gv, gi, tv, ti) or "OK"
    row(name, f"{nrows:,} x 1..{max_len:,}", k, t_gp, t_torch, target, msg)
    print(f"|   (torch with the padding inside its time: {t_torch_pad * 1e3:.3f} ms, "
          f"{t_torch_pad / t_gp:.2f}x) | | | | | | | | |")
    return msg in ("OK", "-")


def row(name, shape, k, t_gp, t_torch, target, msg):
    kind, want = target
    r = t_torch / t_gp
    met = (r >= want) if kind == "x" else (t_gp * 1e3 <= want)
    tgt = f">= {want:g}x torch" if kind == "x" else f"<= {want:g} ms"
    print(f"| {name} | {shape} | {k} | {t_gp * 1e3:.3f} | {t_torch * 1e3:.3f} | {r:.2f}x | {tgt} | "
          f"{'yes' if met else 'no'} | {msg} |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=15, help="timed runs a case (median)")
    ap.add_argument("--only", default="", help="run only cases whose name contains this")
    ap.add_argument("--no-check", action="store_true", help="skip the comparison with torch's results")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("segmented_topk_compare: needs a CUDA device (torch.cuda.is_available() is False)")
        return 2
    print(f"device: {torch.cuda.get_device_name()}; torch {torch.__version__}; gpuprims {gp.__version__} "
          f"({gp.library_path}); gpuprims through: {how()}; times in ms, median of {args.reps}; "
          f"ratio = torch / gpuprims\n")
    print("| case | rows | k | gpuprims | torch | ratio | target | met | check |")
    print("|---|---|---|---|---|---|---|---|---|")
    ok = True
    chk = not args.no_check
    cases = [
        ("bf16 k=50", lambda: case_uniform("bf16 k=50", torch.bfloat16, 128, 128256, 50, ("x", 3), args.reps, chk)),
        ("f32 k=100", lambda: case_uniform("f32 k=100", torch.float32, 4096, 32768, 100, ("x", 3), args.reps, chk)),
        ("f32 k=8", lambda: case_uniform("f32 k=8", torch.float32, 100000, 256, 8, ("x", 2), args.reps, chk)),
        ("f32 ragged k=10", lambda: case_ragged("f32 ragged k=10", 10000, 5000, 10, ("x", 5), args.reps, chk)),
        ("bf16 one row k=100",
         lambda: case_uniform("bf16 one row k=100", torch.bfloat16, 1, 1 << 28, 100, ("ms", 0.3), args.reps, chk)),
    ]
    for name, run in cases:
        if args.only and args.only not in name:
            continue
        ok = run() and ok
    print("\nf32 k=8's target is 2x the best anchor: the tour's CUB DeviceBatchedTopK row (CCCL 3.5.0) is the other.")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
