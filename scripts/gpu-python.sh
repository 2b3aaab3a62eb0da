#!/usr/bin/env bash
# The Python package on the GPU machine (no Rust, no internet): against a prebuilt
# libgpuprims.so, the pytest suite (host and GPU tests), then examples/python/compare.py
# and half_compare.py at 2^20, 2^24 and 2^28, and segmented_topk_compare.py. Outputs go
# to $OUT (or ./gpu-python-out).
#
#   scripts/gpu-python.sh <folder holding libgpuprims.so>
#
# Wheels the machine lacks may be put in .gpu/wheels/ (ignored by git): they are installed
# with pip --no-index --target into a folder put on PYTHONPATH. scripts/fetch-cuda-compute.sh
# puts cuda.compute's there (cuda-cccl and its CUDA Python packages, ~22 MB), for the
# comparison's cuda.compute column.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
prebuilt=${1:?usage: scripts/gpu-python.sh <folder holding libgpuprims.so>}
out=${OUT:-gpu-python-out}
mkdir -p "${out}"
lib=$(ls "${prebuilt}"/libgpuprims.so* 2>/dev/null | head -n 1)
[ -n "${lib}" ] || { echo "no libgpuprims.so in ${prebuilt}" >&2; exit 1; }
export GPUPRIMS_LIBRARY=$(realpath "${lib}")
export PYTHONDONTWRITEBYTECODE=1
export PYTHONPATH=$(pwd)/python${PYTHONPATH:+:${PYTHONPATH}}  # the package from this tree
export GPUPRIMS_CACHE_DIR=${GPUPRIMS_CACHE_DIR:-/tmp/gpuprims-cache}

py=python3
# Wheels go to a folder on PYTHONPATH rather than into a venv: the machine's torch and
# CuPy may live in a venv themselves (/opt/torch/.venv), which a new venv does not see.
if ls .gpu/wheels/*.whl >/dev/null 2>&1; then
  if ls .gpu/wheels/pytest-*.whl >/dev/null 2>&1; then
    "${py}" -m pip install --quiet --no-index --find-links .gpu/wheels --target /tmp/gp-site pytest 2>&1 | tee "${out}/pip.txt"
  fi
  if ls .gpu/wheels/cuda_cccl-*.whl >/dev/null 2>&1; then  # without numba: cuda.compute's own ops need none
    "${py}" -m pip install --quiet --no-deps --no-index --target /tmp/gp-site .gpu/wheels/cuda_*.whl \
      .gpu/wheels/typing_extensions-*.whl 2>&1 | tee -a "${out}/pip.txt"
  fi
  export PYTHONPATH=/tmp/gp-site${PYTHONPATH:+:${PYTHONPATH}}
fi
"${py}" - <<'PYEOF' 2>&1 | tee "${out}/versions.txt"
import importlib, sys
print("python", sys.version.split()[0])
for m in ("numpy", "pytest", "torch", "cupy", "cuda.compute"):
    try:
        print(m, getattr(importlib.import_module(m), "__version__", "present"))
    except Exception as e:
        print(m, "missing:", e)
PYEOF
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "${out}/versions.txt"

rc=0
echo "== pytest (host and GPU tests)"
time "${py}" -m pytest -q -p no:cacheprovider -rs python/tests 2>&1 | tee "${out}/pytest.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
echo "== compare.py 20 24 28"
time "${py}" examples/python/compare.py 20 24 28 2>&1 | tee "${out}/compare.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
echo "== half_compare.py 20 24 28 (float16, bfloat16)"
time "${py}" examples/python/half_compare.py 20 24 28 2>&1 | tee "${out}/half.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
echo "== segmented_topk_compare.py (issue 39's segmented top-k rows against torch.topk)"
time "${py}" examples/python/segmented_topk_compare.py 2>&1 | tee "${out}/segmented_topk.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
exit "${rc}"
