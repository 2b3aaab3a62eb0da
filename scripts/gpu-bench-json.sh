#!/usr/bin/env bash
# gpu-bench-json.sh: the benchmark tour on the GPU against two CUBs, as JSON for
# BENCHMARKS.md's table and plots.
#
#   bash scripts/gpu-bench-json.sh PREBUILT_DIR
#
# On the GPU machine (CMake, nvcc and the toolkit's CCCL, no Rust, no internet), with
# libgpuprims.so and libgpuprims.a in PREBUILT_DIR and the CCCL 3.5.0 wheel in
# .gpu/wheels/ (fetched beforehand with
# `pip download nvidia-cuda-cccl==13.3.5.0.6 --no-deps -d .gpu/wheels`):
#
#   1. configures two builds of the tour only (no tests, no examples): build-cub301
#      against the toolkit's CCCL, build-cub350 with the wheel's headers
#      (nvidia/cu13/include/cccl, unpacked with python3 -m zipfile) first on nvcc's -I
#      path; builds both at once;
#   2. runs the tour of each at 2^20, 2^24 and 2^28 with --json: the first with every
#      section (Life included), the second without Life (it has no CUB row), both with
#      --ref-max 2^24 (the 2^28 sort rows are checked for order and content and bitwise
#      against CUB, not against the host backend's sort, which takes ~8 s a row);
#   3. writes the logs and JSON to build-gpu-json/ and copies to $OUT (when set) three
#      files: h100-cccl-<version>.json for each tour and gpu-bench-json.tar.gz holding
#      every log and both JSON files.
#
# Then, where the JSON lands: copy the two files to docs/benchmarks/data/ and run
# scripts/bench-docs.sh (the table in BENCHMARKS.md and the SVGs in docs/plots/).
#
# Environment: TOURS (default "cub301 cub350"; one alone for a call too short for both: the
# full tour takes about 4 minutes on an H200, 4.2-5 on an H100), REPS (timed calls a row, default 15), REF_MAX (default 2^24), JOBS
# (build jobs, default nproc), TOUR_TIMEOUT (seconds a tour may run, default 420),
# WHEEL (the .whl, default .gpu/wheels/nvidia_cuda_cccl-*.whl), CUDA_ARCH (default 90),
# NAME (file prefix, default h100); for a dry run elsewhere: BACKEND (default cuda) and
# SIZES (both tours at these sizes, without Life).
# Exit status: 0 when both tours ran and passed their checks, 1 otherwise, 2 on a usage
# error.
set -u -o pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 2
prebuilt="${1:-}"
if [ -z "$prebuilt" ] || [ ! -f "$prebuilt/libgpuprims.so" ] || [ ! -f "$prebuilt/libgpuprims.a" ]; then
  echo "usage: bash scripts/gpu-bench-json.sh PREBUILT_DIR (a folder holding libgpuprims.so and libgpuprims.a)" >&2
  exit 2
fi
prebuilt="$(cd "$prebuilt" && pwd)"
out="$root/build-gpu-json"
rm -rf "$out" && mkdir -p "$out" || exit 2
jobs="${JOBS:-$(nproc 2>/dev/null || echo 8)}"
name="${NAME:-h100}"
wheel="${WHEEL:-$(ls .gpu/wheels/nvidia_cuda_cccl-*.whl 2>/dev/null | head -n 1)}"
t_start=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - t_start )) s] $*"; }

command -v nvcc >/dev/null 2>&1 || { echo "gpu-bench-json: nvcc not found (the CUB builds need it)" >&2; exit 2; }
if [ -z "$wheel" ] || [ ! -f "$wheel" ]; then
  echo "gpu-bench-json: no CCCL wheel (.gpu/wheels/nvidia_cuda_cccl-*.whl; set WHEEL=...)" >&2
  exit 2
fi
nvidia-smi -L 2>/dev/null | head -n 1
nvcc --version | tail -n 1

# --- CCCL 3.5.0's headers from the wheel ------------------------------------------------
cccl_dir="$root/build-cub350-cccl"
if [ ! -d "$cccl_dir/nvidia/cu13/include/cccl" ]; then
  rm -rf "$cccl_dir"
  python3 -m zipfile -e "$wheel" "$cccl_dir" || { echo "gpu-bench-json: cannot unpack $wheel" >&2; exit 2; }
fi
cccl_inc="$cccl_dir/nvidia/cu13/include/cccl"
[ -f "$cccl_inc/cub/version.cuh" ] || { echo "gpu-bench-json: no cub/version.cuh in $cccl_inc" >&2; exit 2; }

# --- two builds of the tour, side by side ----------------------------------------------
common=(-DGPUPRIMS_PREBUILT_DIR="$prebuilt" -DGPUPRIMS_BUILD_TESTS=OFF -DGPUPRIMS_BUILD_EXAMPLES=OFF
        -DGPUPRIMS_INSTALL=OFF -DGPUPRIMS_BENCH_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" -DCMAKE_BUILD_TYPE=Release)
stamp "configure build-cub301 (toolkit CCCL) and build-cub350 (CCCL from $(basename "$wheel"))"
cmake -S . -B build-cub301 "${common[@]}" >"$out/configure-cub301.log" 2>&1 || { tail -n 20 "$out/configure-cub301.log"; exit 1; }
cmake -S . -B build-cub350 "${common[@]}" -DCMAKE_CUDA_FLAGS="-I$cccl_inc" >"$out/configure-cub350.log" 2>&1 ||
  { tail -n 20 "$out/configure-cub350.log"; exit 1; }
tours="${TOURS:-cub301 cub350}"  # one of them alone when a call cannot hold both tours
builds() { # the build of each tour asked for, at once
  local v
  for v in 301 350; do
    case " $tours " in *" cub$v "*) cmake --build build-cub$v -j "$jobs" --target gpuprims_bench >"$out/build-cub$v.log" 2>&1 & ;; esac
  done
}
stamp "build $tours (-j$jobs each, at once)"
rc301=0
rc350=0
builds
wait
for v in 301 350; do
  rc_var="rc$v"
  if [ "${!rc_var}" -ne 0 ]; then echo "gpu-bench-json: build-cub$v failed:"; tail -n 30 "$out/build-cub$v.log"; fi
done
stamp "builds done (rc $rc301, $rc350)"

# --- the tours -----------------------------------------------------------------------------
overall=0
run_tour() { # run_tour <build dir> <tag> <extra args...>
  local dir="$1" tag="$2" json="$out/tour-$2.json"
  shift 2
  if [ ! -x "$dir/bench/gpuprims_bench" ]; then
    echo "gpu-bench-json: $dir/bench/gpuprims_bench was not built"
    overall=1
    return
  fi
  stamp "tour $tag: gpuprims_bench --ref-max ${REF_MAX:-2^24} --reps ${REPS:-15} $* --json $json"
  GPUPRIMS_BACKEND="${BACKEND:-cuda}" timeout "${TOUR_TIMEOUT:-420}" "$dir/bench/gpuprims_bench" --ref-max "${REF_MAX:-2^24}" \
    --reps "${REPS:-15}" "$@" --json "$json" >"$out/tour-$tag.log" 2>"$out/tour-$tag.progress.log"
  local rc=$?
  [ "$rc" -eq 124 ] && echo "gpu-bench-json: tour $tag stopped after ${TOUR_TIMEOUT:-420} s (its JSON is cut off mid-row and does not parse: rerun it with a longer TOUR_TIMEOUT)"
  [ "$rc" -ne 0 ] && overall=1
  tail -n 1 "$out/tour-$tag.log"
  # Name the file by the CCCL version the tour reports.
  local v
  v="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("cccl") or "none")' "$json" 2>/dev/null ||
       sed -n 's/.*"cccl": "\([0-9.]*\)".*/\1/p' "$json" | head -n 1)"
  [ -n "$v" ] && cp "$json" "$out/$name-cccl-$v.json" && echo "   -> $name-cccl-$v.json"
}
want() { case " $tours " in *" $1 "*) return 0 ;; esac; return 1; }
if [ -n "${SIZES:-}" ]; then
  want cub301 && run_tour build-cub301 cub301 --sizes "$SIZES"
  want cub350 && run_tour build-cub350 cub350 --sizes "$SIZES"
else
  want cub301 && run_tour build-cub301 cub301                        # default sizes 2^20, 2^24, 2^28, with Life
  want cub350 && run_tour build-cub350 cub350 --sizes 2^20,2^24,2^28 # the same sizes; --sizes leaves Life out
fi
if want cub350 && ! ls "$out"/"$name"-cccl-3.5.*.json >/dev/null 2>&1; then
  echo "gpu-bench-json: the second tour did not report CCCL 3.5 (were the wheel's headers used?)"
  overall=1
fi
stamp "done (rc $overall)"
tar -czf "$root/build-gpu-json.tar.gz" -C "$root" build-gpu-json && mv "$root/build-gpu-json.tar.gz" "$out/gpu-bench-json.tar.gz"
if [ -n "${OUT:-}" ]; then
  cp "$out"/"$name"-cccl-*.json "$out/gpu-bench-json.tar.gz" "$OUT"/ 2>/dev/null
  ls -la "$OUT"
fi
exit "$overall"
