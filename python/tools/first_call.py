#!/usr/bin/env python3
"""The first call of each primitive, cold: every case in a new process with an empty
kernel disk cache and CUDA_CACHE_DISABLE=1, so the call compiles what it needs with NVRTC
(the one-second rule): NVRTC 13 also keeps its compiles in the driver's compute cache,
where a second process finds them whatever our cache holds. Then the same again in
another new process on the now-filled disk cache (warm).

    GPUPRIMS_LIBRARY=.../libgpuprims.so python3 python/tools/first_call.py [--only NAME]

Times the call alone (ms, wall clock to the device's synchronisation): the context is
created and the input made on the device before the clock starts. Needs a GPU and torch.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# name: (the input, the call); x is a CUDA tensor made by the input expression.
CASES = {
    "sum f32 2^20": ("torch.randn(1 << 20, device='cuda')", "gp.sum(x)"),
    "cumsum i32 2^20": ("torch.randint(0, 100, (1 << 20,), device='cuda', dtype=torch.int32)", "gp.cumsum(x)"),
    "sort u32 keys 2^20 (radix)": ("torch.randint(0, 1 << 31, (1 << 20,), device='cuda', dtype=torch.int64).to(torch.uint32)", "gp.sort(x)"),
    "sort f32 2^20 stable=False (quicksort)": ("torch.randn(1 << 20, device='cuda')", "gp.sort(x, stable=False)"),
    "sort f32/i32 pairs 2^20": ("torch.randn(1 << 20, device='cuda')", "gp.sort(x, torch.arange(1 << 20, device='cuda', dtype=torch.int32))"),
    "topk f32 2^20 k=100": ("torch.randn(1 << 20, device='cuda')", "gp.topk(x, 100)"),
    "topk f32 2^24 k=100": ("torch.randn(1 << 24, device='cuda')", "gp.topk(x, 100)"),
    # (a short input with a large k: sorted whole, with its indices)
    "topk f32 2^20 k=65536": ("torch.randn(1 << 20, device='cuda')", "gp.topk(x, 65536)"),
    "kthvalue f32 2^20": ("torch.randn(1 << 20, device='cuda')", "gp.kthvalue(x, 1 << 19)"),
    "kthvalue f32 2^24": ("torch.randn(1 << 24, device='cuda')", "gp.kthvalue(x, 1 << 23)"),
    "segmented_select f32 rows of 1024": ("torch.randn(1 << 20, device='cuda')",
                                          "gp.segmented_select(x, torch.arange(0, (1 << 20) + 1, 1024, device='cuda'))"),
    "topk of rows f32 1024 x 1024 k=10": ("torch.randn(1024, 1024, device='cuda')", "gp.topk(x, 10)"),
    "Life 4096^2 step": ("(torch.rand(4096, 4096, device='cuda') < 0.3).to(torch.uint8)", "gp.Life(x).step(1)"),
}

CHILD = r"""
import json, sys, time
import torch, gpuprims as gp
ctx = gp._context.default("cuda", 0)
x = {make}
torch.cuda.synchronize()
t0 = time.perf_counter()
r = {call}
torch.cuda.synchronize()
print(json.dumps((time.perf_counter() - t0) * 1e3))
"""


def run(case, cache, cold):
    make, call = CASES[case]
    env = dict(os.environ, GPUPRIMS_CACHE_DIR=cache)
    if cold:
        env["CUDA_CACHE_DISABLE"] = "1"
    out = subprocess.run([sys.executable, "-c", CHILD.format(make=make, call=call)], env=env,
                         capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        return f"failed: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode}"
    return f"{json.loads(out.stdout.strip().splitlines()[-1]):.0f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="the cases whose name holds this")
    args = ap.parse_args()
    print("| first call | cold (ms) | warm (ms) |")
    print("|---|---|---|")
    for case in CASES:
        if args.only and args.only not in case:
            continue
        with tempfile.TemporaryDirectory() as cache:
            cold = run(case, cache, True)
            warm = run(case, cache, False)
        print(f"| {case} | {cold} | {warm} |", flush=True)


if __name__ == "__main__":
    main()
