#!/usr/bin/env bash
# Static SASS of the library's kernel modules, for studying a kernel on a machine
# without a GPU: NVRTC compiles each module for sm_90 (with the options GPUPRIMS_TUNE
# gives), cuobjdump disassembles it, and each module's resources are listed.
#
#   scripts/sass.sh <filter> [out-dir]
#
# <filter>: a part of "<source> <label>", e.g. "radix_sort.cu keys 4B values 0B" or
# "select.cu". Writes <out-dir>/<module>.cubin, .sass and .res (default /tmp/gpuprims-sass).
# Needs NVRTC (nvidia-cuda-nvrtc) in the loader path; cuobjdump and nvdisasm come from
# PyPI's nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm wheels, unpacked into a cache on
# first use when they are not on PATH.
set -euo pipefail
filter=${1:?usage: scripts/sass.sh <filter> [out-dir]}
out=${2:-/tmp/gpuprims-sass}
here=$(cd "$(dirname "$0")/.." && pwd)

if ! command -v cuobjdump >/dev/null || ! command -v nvdisasm >/dev/null; then
    tools=${XDG_CACHE_HOME:-$HOME/.cache}/gpuprims-sass-tools
    if [ ! -x "$tools/nvidia/cu13/bin/nvdisasm" ]; then
        mkdir -p "$tools/wheels"
        python3 -m pip download --quiet --no-deps -d "$tools/wheels" nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm
        for w in "$tools"/wheels/*.whl; do python3 -m zipfile -e "$w" "$tools"; done
        chmod +x "$tools"/nvidia/cu13/bin/*
    fi
    export PATH="$tools/nvidia/cu13/bin:$PATH"
fi

# NVRTC from PyPI's nvidia-cuda-nvrtc, where it is installed there.
pylib=$(python3 -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13", "lib"))' 2>/dev/null || true)
[ -n "$pylib" ] && [ -d "$pylib" ] && export LD_LIBRARY_PATH="$pylib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

rm -rf "$out" && mkdir -p "$out"
(cd "$here" && GPUPRIMS_DUMP_CUBINS="$out" GPUPRIMS_DUMP_FILTER="$filter" \
    cargo test --quiet --release --lib dump_cubins -- --ignored >/dev/null)
for c in "$out"/*.cubin; do
    cuobjdump -sass "$c" >"${c%.cubin}.sass"
    cuobjdump -res-usage "$c" 2>/dev/null | grep -E "Function|REG" >"${c%.cubin}.res" || true
done
ls "$out"
