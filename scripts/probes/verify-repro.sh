#!/usr/bin/env bash
# verify-repro.sh: the call-sequence and reproducer checks in one GPU call (about 8
# minutes on an H200): CTest's sort/select/sequence/repro tests on CUDA through
# scripts/gpu-check.sh, test_sequences at sizes up to 2^25 (past the counting sort's
# 2^23), and the two reproducers of ../shared/repro (copied into .gpu/repro, which the
# device tool carries) against the prebuilt library in .gpu/prebuilt. Logs in $OUT.
set -u
cd .gpu/prebuilt && ln -sf libgpuprims.so libgpuprims.so.0 && cd ../..
SKIP_BENCH=1 SKIP_FUZZ=1 SEQ_CALLS=600 TEST_TIMEOUT=200 TEST_ARGS="-R repro|radix_sort|quicksort|select|sequences" timeout 420 bash scripts/gpu-check.sh .gpu/prebuilt > $OUT/check.txt 2>&1; echo "gpu-check rc $?"
tail -25 $OUT/check.txt
seq=$(find build-gpu -name test_sequences -type f | head -1)
GPUPRIMS_BACKEND=cuda GPUPRIMS_SEQ_CALLS=250 GPUPRIMS_SEQ_MAX_LOG2=25 timeout 120 $seq > $OUT/seq25.txt 2>&1; echo "seq 2^25 rc $?"; tail -4 $OUT/seq25.txt
L=$PWD/.gpu/prebuilt
nvcc -O2 -std=c++17 -arch=sm_90 -Iinclude .gpu/repro/quicksort_after_adaptive_radix.cu -o /tmp/qa -L$L -Xlinker -rpath -Xlinker $L -lgpuprims && GPUPRIMS_BACKEND=cuda timeout 60 /tmp/qa > $OUT/qa.txt 2>&1; echo "qa rc $?"; tail -3 $OUT/qa.txt
gcc -std=gnu11 -O2 -Iinclude .gpu/repro/wrong_results_after_radix_sort.c -o /tmp/wr -L$L -Wl,-rpath,$L -lgpuprims && GPUPRIMS_BACKEND=cuda timeout 60 /tmp/wr > $OUT/wr.txt 2>&1; echo "wr rc $?"; tail -4 $OUT/wr.txt
