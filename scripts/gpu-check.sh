#!/usr/bin/env bash
# gpu-check.sh: build, test and benchmark gpuprims on the GPU machine, in one call.
#
# Run from anywhere (it works from the repository root), on a machine with an
# NVIDIA GPU, nvcc and CMake, given a library built elsewhere (no Rust there):
#
#   bash scripts/gpu-check.sh [PREBUILT_DIR]
#
# PREBUILT_DIR (default: $GPUPRIMS_PREBUILT_DIR, else target/release) holds
# libgpuprims.so and libgpuprims.a. Steps:
#   1. configure + build in build-gpu (Release, CUDA architecture 90, the
#      prebuilt library through -DGPUPRIMS_PREBUILT_DIR), quietly (build.log);
#   2. one line each: nvidia-smi -L, nvcc --version, cmake --version;
#   3. GPUPRIMS_BACKEND=cuda ctest --output-on-failure -j1     (ctest.log);
#      then test_sequences long, with tags near the wrap, and under memcheck at
#      small sizes (sequences-*.log); then the ABI fuzzer, fuzz_abi, on the CUDA
#      backend for FUZZ_SECONDS (fuzz.log; CTest's own fuzz_abi runs on the host
#      backend: TEST_ARGS="-LE fuzz" leaves it out);
#   4. kernel compile timing: gpuprims_bench --sizes 1024 twice on a fresh
#      GPUPRIMS_CACHE_DIR, cold (NVRTC compiles) then warm (disk cache); the
#      bench prints each row's first call ("first-call ms <row>: X"), shown
#      here cold and warm side by side   (compile-cold.log, compile-warm.log);
#   5. kernel warm-up: gpuprims_context_precompile, cold (fresh
#      GPUPRIMS_CACHE_DIR each), once one module at a time
#      (GPUPRIMS_TUNE=precompile.threads=1: the sequential sum) and once on its
#      default thread pool   (precompile-sequential.log, precompile-parallel.log);
#   6. the full bench (bench.log);
#   7. a summary, printed last (summary.txt).
# Logs go to $OUT when it is set (the device tool brings them back), else to
# build-gpu/gpu-check-logs.
#
# Environment:
#   QUICK=1         bench with --quick (2^20 and 2^24 only)
#   SKIP_TESTS=1    no ctest
#   SKIP_BENCH=1    no compile timing, no precompile timing, no bench
#   SKIP_PRECOMPILE=1  no precompile timing
#   SKIP_SEQUENCES=1   no long call-sequence runs (test_sequences; SEQ_CALLS=n calls,
#                      default 3000, and a memcheck run of SEQ_MEMCHECK_CALLS=150)
#   SKIP_FUZZ=1     no fuzz_abi run on CUDA; FUZZ_SECONDS=s its length (default 60),
#                   FUZZ_SEED=seed replays a run it printed
#   BENCH_ARGS=...  more arguments for the full bench (e.g. "--reps 31")
#   BUILD_DIR=dir   build directory (default build-gpu)
#   CUDA_ARCH=N     CUDA architectures (default 90)
#   TEST_TIMEOUT=s  per-test ctest timeout (default 300)
#   TEST_ARGS=...   more ctest arguments, to run part of the tests in one call
#                   (e.g. "-E _cxx" or "-R sort"): the whole set no longer fits one
#                   10-minute call on the lent GPU
#   BENCH_TIMEOUT=s limit of the full bench run (default 420)
#
# Exit status: 0 when everything ran and passed; 1 when the build, a test or
# the bench failed (the summary is printed all the same); 2 on a usage error.

set -u -o pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 2

prebuilt="${1:-${GPUPRIMS_PREBUILT_DIR:-target/release}}"
build="${BUILD_DIR:-build-gpu}"
arch="${CUDA_ARCH:-90}"
logdir="${OUT:-$build/gpu-check-logs}"
mkdir -p "$logdir" || exit 2

section() { printf '\n=== %s ===\n' "$*"; }
ms_now() { date +%s%N | awk '{ printf "%.0f", $1 / 1e6 }'; }

# --- the prebuilt library ------------------------------------------------------
if [ ! -d "$prebuilt" ]; then
  echo "gpu-check: no prebuilt library directory '$prebuilt' (carry target/release, or pass the directory)" >&2
  exit 2
fi
prebuilt_abs="$(cd "$prebuilt" && pwd)"
if [ ! -f "$prebuilt_abs/libgpuprims.so" ] && [ ! -f "$prebuilt_abs/libgpuprims.a" ]; then
  echo "gpu-check: neither libgpuprims.so nor libgpuprims.a in $prebuilt_abs" >&2
  exit 2
fi

# --- the machine -------------------------------------------------------------
section "machine"
gpu_line="$(nvidia-smi -L 2>/dev/null | head -n 1)" || true
[ -n "$gpu_line" ] || gpu_line="nvidia-smi: not available"
ngpu="$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')" || true
[ "${ngpu:-0}" -gt 1 ] && gpu_line="$gpu_line (+$((ngpu - 1)) more)"
nvcc_line="$(nvcc --version 2>/dev/null | grep -i 'release' | head -n 1)" || true
[ -n "$nvcc_line" ] || nvcc_line="nvcc: not found"
cmake_line="$(cmake --version 2>/dev/null | head -n 1)" || true
echo "gpu:    $gpu_line"
echo "nvcc:   $nvcc_line"
echo "cmake:  ${cmake_line:-cmake: not found}"
echo "lib:    $prebuilt_abs: $(cd "$prebuilt_abs" && ls -l libgpuprims.so libgpuprims.a 2>/dev/null |
  awk '{ printf "%s %.1f MiB  ", $NF, $5 / 1048576 }')"

# --- configure and build ---------------------------------------------------------
section "build ($build)"
build_rc=0
gen=()
if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then gen=(-G Ninja); fi
t0=$(ms_now)
cmake -S . -B "$build" ${gen[@]+"${gen[@]}"} \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES="$arch" \
  -DGPUPRIMS_PREBUILT_DIR="$prebuilt_abs" >"$logdir/build.log" 2>&1 || build_rc=$?
if [ "$build_rc" -eq 0 ]; then
  grep -E 'bench/|CUDA|gpuprims' "$logdir/build.log" | grep -v '^--.*Looking for' | head -n 12
  cmake --build "$build" -j "$(nproc 2>/dev/null || echo 8)" >>"$logdir/build.log" 2>&1 || build_rc=$?
fi
t1=$(ms_now)
if [ "$build_rc" -ne 0 ]; then
  echo "build FAILED (rc $build_rc); the end of $logdir/build.log:"
  tail -n 60 "$logdir/build.log"
else
  echo "build ok in $(( (t1 - t0) / 1000 )) s"
fi

bench_bin="$build/bench/gpuprims_bench"
if [ "$build_rc" -eq 0 ] && [ ! -x "$bench_bin" ]; then
  bench_bin="$(find "$build" -name gpuprims_bench -type f -perm -u+x 2>/dev/null | head -n 1)"
fi

# --- tests -------------------------------------------------------------------------
ctest_rc=skipped
ctest_line="skipped"
if [ "${SKIP_TESTS:-0}" != 1 ] && [ "$build_rc" -eq 0 ]; then
  section "ctest (GPUPRIMS_BACKEND=cuda)"
  # shellcheck disable=SC2086 # TEST_ARGS is a list of arguments
  GPUPRIMS_BACKEND=cuda ctest --test-dir "$build" --output-on-failure -j1 \
    --timeout "${TEST_TIMEOUT:-300}" ${TEST_ARGS:-} 2>&1 | tee "$logdir/ctest.log"
  ctest_rc=$?
  ctest_line="$(grep -E 'tests passed|No tests were found' "$logdir/ctest.log" | tail -n 1)"
  [ -n "$ctest_line" ] || ctest_line="no ctest summary line (see ctest.log)"
fi

# --- call sequences: long seeded runs, tags near the wrap, memcheck at small sizes ----------
seq_line="skipped"
seq_rc=0
seq_bin="$(find "$build" -name test_sequences -type f -perm -u+x 2>/dev/null | head -n 1)"
if [ "${SKIP_SEQUENCES:-0}" != 1 ] && [ "$build_rc" -eq 0 ] && [ -n "$seq_bin" ]; then
  section "call sequences (test_sequences; replay a failure with its printed GPUPRIMS_TEST_SEED)"
  seq_calls="${SEQ_CALLS:-3000}"
  seq_runs=(
    "long:GPUPRIMS_SEQ_CALLS=$seq_calls GPUPRIMS_SEQ_MAX_LOG2=22"
    "tags-near-wrap:GPUPRIMS_SEQ_CALLS=$((seq_calls / 3)) GPUPRIMS_SEQ_MAX_LOG2=22 GPUPRIMS_TUNE=sync.first_tag=4294967000"
  )
  for run in "${seq_runs[@]}"; do
    name="${run%%:*}"
    t0=$(ms_now)
    # shellcheck disable=SC2086 # the run's variables are split on purpose
    env GPUPRIMS_BACKEND=cuda ${run#*:} timeout 400 "$seq_bin" >"$logdir/sequences-$name.log" 2>&1
    rc=$?
    t1=$(ms_now)
    [ "$rc" -ne 0 ] && seq_rc=$rc
    printf '%s: rc %s in %s s; %s\n' "$name" "$rc" "$(( (t1 - t0) / 1000 ))" "$(grep -m1 -i 'seed' "$logdir/sequences-$name.log")"
    [ "$rc" -ne 0 ] && tail -n 30 "$logdir/sequences-$name.log"
  done
  if command -v compute-sanitizer >/dev/null 2>&1; then
    GPUPRIMS_BACKEND=cuda GPUPRIMS_SEQ_CALLS="${SEQ_MEMCHECK_CALLS:-150}" GPUPRIMS_SEQ_MAX_LOG2=14 timeout 400 \
      compute-sanitizer --tool memcheck --error-exitcode 1 "$seq_bin" >"$logdir/sequences-memcheck.log" 2>&1
    rc=$?
    [ "$rc" -ne 0 ] && seq_rc=$rc
    echo "memcheck (sizes up to 2^14): rc $rc; $(grep -m1 'ERROR SUMMARY' "$logdir/sequences-memcheck.log")"
    [ "$rc" -ne 0 ] && tail -n 30 "$logdir/sequences-memcheck.log"
  fi
  seq_line="rc $seq_rc (logs: sequences-*.log)"
fi

# --- the ABI fuzzer on CUDA: seeded random calls, hostile arguments, results vs references --
fuzz_line="skipped"
fuzz_rc=0
fuzz_bin="$(find "$build" -name fuzz_abi -type f -perm -u+x 2>/dev/null | head -n 1)"
if [ "${SKIP_FUZZ:-0}" != 1 ] && [ "$build_rc" -eq 0 ] && [ -n "$fuzz_bin" ]; then
  fuzz_s="${FUZZ_SECONDS:-60}"
  section "ABI fuzzer (fuzz_abi on CUDA for $fuzz_s s; replay a failure with its printed GPUPRIMS_FUZZ_SEED)"
  t0=$(ms_now)
  # ASan (when the build has it) needs protect_shadow_gap=0 beside the CUDA driver (also
  # in the program's defaults); the suppressions are the driver's and NVRTC's own
  # allocations, kept for the process (ctests/fuzz/lsan-cuda.supp says why).
  env GPUPRIMS_BACKEND=cuda GPUPRIMS_FUZZ_SECONDS="$fuzz_s" ${FUZZ_SEED:+"GPUPRIMS_FUZZ_SEED=$FUZZ_SEED"} \
    ASAN_OPTIONS="protect_shadow_gap=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
    LSAN_OPTIONS="suppressions=$root/ctests/fuzz/lsan-cuda.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}" \
    timeout $((fuzz_s + 240)) "$fuzz_bin" >"$logdir/fuzz.log" 2>&1
  fuzz_rc=$?
  t1=$(ms_now)
  fuzz_done="$(grep -a -m1 '^fuzz_abi: done:' "$logdir/fuzz.log" | sed 's/^fuzz_abi: done: //')"
  fuzz_line="rc $fuzz_rc in $(( (t1 - t0) / 1000 )) s; $(grep -a -m1 'seed 0x' "$logdir/fuzz.log" | sed 's/^fuzz_abi: //'); ${fuzz_done:-no summary line (see fuzz.log)}"
  if [ "$fuzz_rc" -eq 77 ]; then
    fuzz_line="skipped: no CUDA device (rc 77)"
    fuzz_rc=0
  fi
  echo "$fuzz_line"
  [ "$fuzz_rc" -ne 0 ] && grep -a -v '^  #' "$logdir/fuzz.log" | tail -n 40 && grep -a '^  #' "$logdir/fuzz.log" | tail -n 30
fi

# --- kernel compile timing: cold then warm disk cache ------------------------------
compile_line="skipped"
compile_rc=0
cache_dir=""
if [ "${SKIP_BENCH:-0}" != 1 ] && [ "$build_rc" -eq 0 ] && [ -n "$bench_bin" ]; then
  section "kernel compile: cold vs warm disk cache (gpuprims_bench --sizes 1024)"
  cache_dir="$(mktemp -d "${TMPDIR:-/tmp}/gpuprims-cache.XXXXXX")"
  declare -A first total wall nrows
  for pass in cold warm; do
    t0=$(ms_now)
    GPUPRIMS_BACKEND=cuda GPUPRIMS_CACHE_DIR="$cache_dir" timeout 300 \
      "$bench_bin" --sizes 1024 --reps 3 --no-cub >"$logdir/compile-$pass.log" 2>&1
    rc=$?
    t1=$(ms_now)
    [ "$rc" -ne 0 ] && compile_rc=$rc
    first[$pass]="$(awk '/^first-call compile\+run ms:/ { print $NF; exit }' "$logdir/compile-$pass.log")"
    total[$pass]="$(awk '/^first-calls total ms:/ { print $4; exit }' "$logdir/compile-$pass.log")"
    nrows[$pass]="$(grep -c '^first-call ms ' "$logdir/compile-$pass.log")"
    wall[$pass]=$((t1 - t0))
    printf '%s: first call %s ms, first calls of all %s rows %s ms, process %s ms, rc %s, cache files %s\n' \
      "$pass" "${first[$pass]:-?}" "${nrows[$pass]}" "${total[$pass]:-?}" "${wall[$pass]}" "$rc" \
      "$(find "$cache_dir" -type f 2>/dev/null | wc -l)"
    if [ "$rc" -ne 0 ]; then tail -n 20 "$logdir/compile-$pass.log"; fi
  done
  # Each row's first call, cold and warm side by side (rows in the bench's order).
  echo "first call per row, ms (cold / warm):"
  awk '/^first-call ms / {
         sub(/^first-call ms /, ""); i = index($0, ": "); label = substr($0, 1, i - 1); v = substr($0, i + 2)
         if (FILENAME == ARGV[1]) { order[++n] = label; cold[label] = v } else warm[label] = v
       }
       END { for (k = 1; k <= n; ++k) printf "  %-26s %10s / %s\n", order[k], cold[order[k]], \
               (order[k] in warm) ? warm[order[k]] : "?" }' \
    "$logdir/compile-cold.log" "$logdir/compile-warm.log"
  compile_line="first call: cold ${first[cold]:-?} ms, warm ${first[warm]:-?} ms; first calls of all ${nrows[cold]:-?} rows: cold ${total[cold]:-?} ms, warm ${total[warm]:-?} ms; process: cold ${wall[cold]} ms, warm ${wall[warm]} ms"
  [ "$compile_rc" -ne 0 ] && compile_line="$compile_line; FAILED (rc $compile_rc)"
fi

# --- kernel warm-up: precompile cold, one thread vs the pool -----------------------------
precompile_line="skipped"
precompile_rc=0
if [ "${SKIP_BENCH:-0}" != 1 ] && [ "${SKIP_PRECOMPILE:-0}" != 1 ] && [ "$build_rc" -eq 0 ] && [ -n "$bench_bin" ]; then
  section "kernel warm-up: gpuprims_context_precompile, cold, sequential vs thread pool"
  declare -A pre
  for mode in sequential parallel; do
    pre_dir="$(mktemp -d "${TMPDIR:-/tmp}/gpuprims-precompile.XXXXXX")"
    tune="${GPUPRIMS_TUNE:-}"
    [ "$mode" = sequential ] && tune="${tune:+$tune,}precompile.threads=1"
    GPUPRIMS_BACKEND=cuda GPUPRIMS_CACHE_DIR="$pre_dir" GPUPRIMS_TUNE="$tune" timeout 600 \
      "$bench_bin" --precompile --sizes 1024 --reps 1 --warmup 1 --no-cub --only "reduce sum i32" \
      >"$logdir/precompile-$mode.log" 2>&1
    rc=$?
    [ "$rc" -ne 0 ] && precompile_rc=$rc
    pre[$mode]="$(awk '/^precompile ms:/ { print $3; exit }' "$logdir/precompile-$mode.log")"
    printf '%s: precompile %s ms, %s modules cached, rc %s\n' "$mode" "${pre[$mode]:-?}" \
      "$(find "$pre_dir" -name '*.cubin' 2>/dev/null | wc -l)" "$rc"
    if [ "$rc" -ne 0 ]; then tail -n 20 "$logdir/precompile-$mode.log"; fi
    rm -rf "$pre_dir"
  done
  speedup="$(awk -v s="${pre[sequential]:-0}" -v p="${pre[parallel]:-0}" 'BEGIN { if (p > 0) printf "%.1f", s / p; else print "?" }')"
  precompile_line="cold, every module: sequential ${pre[sequential]:-?} ms, thread pool ${pre[parallel]:-?} ms (${speedup}x; $(nproc 2>/dev/null || echo '?') cores)"
  [ "$precompile_rc" -ne 0 ] && precompile_line="$precompile_line; FAILED (rc $precompile_rc)"
fi

# --- the full bench ------------------------------------------------------------------
bench_rc=skipped
if [ "${SKIP_BENCH:-0}" != 1 ] && [ "$build_rc" -eq 0 ]; then
  if [ -z "$bench_bin" ]; then
    section "bench"
    echo "gpuprims_bench was not built"
    bench_rc=127
  else
    bench_args=()
    [ "${QUICK:-0}" = 1 ] && bench_args+=(--quick)
    # shellcheck disable=SC2206  # BENCH_ARGS is split on purpose
    [ -n "${BENCH_ARGS:-}" ] && bench_args+=(${BENCH_ARGS})
    section "bench: gpuprims_bench ${bench_args[*]:-}"
    env GPUPRIMS_BACKEND=cuda ${cache_dir:+"GPUPRIMS_CACHE_DIR=$cache_dir"} timeout "${BENCH_TIMEOUT:-420}" \
      "$bench_bin" ${bench_args[@]+"${bench_args[@]}"} 2>&1 | tee "$logdir/bench.log"
    bench_rc=$?
    [ "$bench_rc" -eq 124 ] && echo "bench: stopped after ${BENCH_TIMEOUT:-420} s"
  fi
fi
[ -n "$cache_dir" ] && rm -rf "$cache_dir"

# --- summary (last) -------------------------------------------------------------------
overall=0
[ "$build_rc" -ne 0 ] && overall=1
[ "$ctest_rc" != skipped ] && [ "$ctest_rc" -ne 0 ] && overall=1
[ "$bench_rc" != skipped ] && [ "$bench_rc" -ne 0 ] && overall=1
[ "$compile_rc" -ne 0 ] && overall=1
[ "$precompile_rc" -ne 0 ] && overall=1
[ "$seq_rc" -ne 0 ] && overall=1
[ "$fuzz_rc" -ne 0 ] && overall=1

{
  section "gpu-check summary"
  echo "gpu:     $gpu_line"
  echo "nvcc:    $nvcc_line"
  if [ "$build_rc" -eq 0 ]; then echo "build:   ok"; else echo "build:   FAILED (rc $build_rc, see build.log)"; fi
  if [ "$ctest_rc" = skipped ]; then
    echo "ctest:   skipped"
  else
    echo "ctest:   $ctest_line (rc $ctest_rc)"
    if [ "$ctest_rc" -ne 0 ]; then
      sed -n '/The following tests FAILED/,$p' "$logdir/ctest.log" | grep -E '^\s+[0-9]+ - ' | head -n 20
    fi
  fi
  echo "sequences: $seq_line"
  echo "fuzz:    $fuzz_line"
  echo "compile: $compile_line"
  echo "precompile: $precompile_line"
  if [ "$bench_rc" = skipped ]; then
    echo "bench:   skipped"
  else
    echo "bench:   rc $bench_rc$([ "$bench_rc" -eq 0 ] && echo ' (all checks OK)')"
    if grep -q '^== gpuprims_bench summary' "$logdir/bench.log" 2>/dev/null; then
      sed -n '/^== gpuprims_bench summary/,$p' "$logdir/bench.log"
    else
      echo "(no bench table; the end of bench.log:)"
      tail -n 15 "$logdir/bench.log" 2>/dev/null
    fi
  fi
  if [ "$overall" -eq 0 ]; then echo "gpu-check: OK"; else echo "gpu-check: FAILED"; fi
} | tee "$logdir/summary.txt"

exit "$overall"
