#!/usr/bin/env bash
# gpu-tune.sh: times tuning variants of the kernels in one call on the GPU machine,
# after scripts/gpu-check.sh has built the bench. Each variant is a GPUPRIMS_TUNE
# value (see src/backend/cuda/tuning.rs); rows are the bench's, ratio = CUB / ours.
#
#   bash scripts/gpu-tune.sh "reduce sum i32" "2^20,2^28" "reduce.vecs=2" "reduce.vecs=8"
set -u
bench="${BENCH:-build-gpu/bench/gpuprims_bench}"
only="$1"; sizes="$2"; shift 2
for variant in default "$@"; do
  tune="$variant"; [ "$variant" = default ] && tune=""
  GPUPRIMS_TUNE="$tune" "$bench" --only "$only" --sizes "$sizes" --reps 15 2>&1 |
    awk -v v="$variant" '/^== gpuprims_bench summary/ {s=1; next} s && /^(reduce|incl|excl|sort)/ {printf "%-22s %s\n", v, $0}'
done
