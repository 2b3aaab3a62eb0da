"""gpuprims: GPU data-parallel primitives for NumPy, PyTorch and CuPy arrays.

Sort, top-k, k-th selection, per-row selection and top-k, reduce, scan and Game of
Life, on the GPU (CUDA kernels compiled at run time by NVRTC) or on the CPU (the host
backend), through the C library libgpuprims. CUDA arrays (PyTorch, CuPy, anything with
__cuda_array_interface__ or __dlpack__) are used in place on the caller's stream, and
results come back as arrays of the input's kind on its device.

    import torch, gpuprims as gp
    x = torch.randn(1 << 24, device="cuda")
    values, indices = gp.topk(x, 10)
    median = gp.kthvalue(x, (len(x) + 1) // 2)
    s = gp.sort(x)

help(gpuprims.topk) and the other functions give the details.
"""
from . import _abi
from ._context import Context
from ._devarray import DeviceArray
from ._errors import *  # noqa: F401,F403  (Error and one subclass per status)
from ._errors import BY_STATUS as _BY_STATUS
from ._errors import Error
from ._lib import lib as _clib
from ._lib import path as library_path
from ._ops import (argsort, cumsum, kthvalue, max, min, reduce, scan, segmented_select, segmented_topk, select_kth,
                   sort, sum, topk)
from .life import Life

__version__ = "{}.{}.{}".format(*(((_clib.gpuprims_version() >> s) & 0xFF) for s in (16, 8, 0)))

__all__ = [
    "Context", "DeviceArray", "Error", "Life", "argsort", "cumsum", "kthvalue", "max", "min", "reduce",
    "scan", "segmented_select", "segmented_topk", "select_kth", "sort", "sum", "topk", "library_path",
] + [c.__name__ for c in _BY_STATUS.values()]
