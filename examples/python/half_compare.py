#!/usr/bin/env python3
"""gpuprims on 16-bit floats (float16, bfloat16) against PyTorch on the same tensors:
the rows of issue 39 that have a torch anchor.

    python3 examples/python/half_compare.py            # 2^20, 2^24, 2^28
    python3 examples/python/half_compare.py 28 --reps 20

Timing as compare.py: wall time of the call and a device synchronisation, median of
--reps after a warm-up. sum hands its value to Python on both sides (torch: .item()).
GB/s for sum counts the bytes read once (2 a value), against the device's copy ceiling.
"""
import argparse

import torch

import gpuprims as gp
from compare import fmt, ratio, timed


def cases(x):
    k = 100
    yield "sum (to host)", lambda: gp.sum(x), lambda: torch.sum(x).item()
    yield "sort", lambda: gp.sort(x), lambda: torch.sort(x)
    yield f"topk k={k} (+indices)", lambda: gp.topk(x, k), lambda: torch.topk(x, k)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log2", nargs="*", type=int, default=[20, 24, 28], help="log2 of the sizes")
    ap.add_argument("--reps", type=int, default=10)
    args = ap.parse_args()
    print(f"device: {torch.cuda.get_device_name()}; torch {torch.__version__}; times in ms\n")
    print("| op | dtype | n | gpuprims | torch | vs torch | gpuprims GB/s |")
    print("|---|---|---|---|---|---|---|")
    for dtype in (torch.bfloat16, torch.float16):
        for e in args.log2:
            torch.manual_seed(e)
            x = torch.randn(1 << e, device="cuda").to(dtype)
            for name, ours, theirs in cases(x):
                t_gp, t_torch = timed(ours, args.reps), timed(theirs, args.reps)
                gbs = f"{x.numel() * 2 / t_gp / 1e9:.0f}" if name.startswith("sum") else ""
                print(f"| {name} | {str(dtype).replace('torch.', '')} | 2^{e} | {fmt(t_gp)} | {fmt(t_torch)} | "
                      f"{ratio(t_torch, t_gp)} | {gbs} |", flush=True)
            del x
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
