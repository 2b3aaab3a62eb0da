#!/usr/bin/env bash
# Downloads cuda.compute (NVIDIA's Python layer over CUB, the cuda-cccl package) for the
# GPU machine, which has no internet, into .gpu/wheels/ (ignored by git; carried along):
# cuda-cccl with the CUDA Python packages it needs on a machine that has the CUDA 13
# toolkit (its "sysctk13" extra), for that machine's Python (3.12 by default). Left out:
# numba-cuda-mlir (71 MB, over what a call can carry), which cuda.compute needs only to
# compile Python functions as operators; examples/python/compare.py uses its built-in
# ones (OpKind.PLUS, radix and segmented sorts), and NumPy, which the machine has.
#
#   scripts/fetch-cuda-compute.sh [python version, e.g. 3.12]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
pyver=${1:-3.12}
mkdir -p .gpu/wheels
tmp=$(mktemp -d)
python3 -m pip download --quiet "cuda-cccl[sysctk13]==1.2.1" --python-version "${pyver}" --only-binary=:all: \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_26_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d "${tmp}"
cp "${tmp}"/cuda_*.whl "${tmp}"/typing_extensions-*.whl .gpu/wheels/
rm -rf "${tmp}"
ls -l .gpu/wheels/
