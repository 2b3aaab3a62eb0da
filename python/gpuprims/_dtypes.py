"""Element types: NumPy, PyTorch, CuPy and DLPack types to gpuprims dtype codes and back.

The codes come from the header (_abi.DTYPE), so a type the library gains (F16, BF16)
is accepted here once the header has it; until then such an array is a TypeError.
"""
import numpy as np

from . import _abi

# NumPy type string (kind + bytes) -> the header's dtype name.
_NAMES = {
    "i1": "I8", "u1": "U8", "i2": "I16", "u2": "U16", "i4": "I32", "u4": "U32",
    "i8": "I64", "u8": "U64", "f2": "F16", "f4": "F32", "f8": "F64",
}
# Extension types NumPy lacks, by their dtype name (ml_dtypes.bfloat16, when present).
_EXTENSION_NAMES = {"bfloat16": "BF16"}
# DLPack (type code, bits) -> name: codes 0 int, 1 uint, 2 float, 4 bfloat.
_DLPACK_NAMES = {
    (0, 8): "I8", (1, 8): "U8", (0, 16): "I16", (1, 16): "U16", (0, 32): "I32", (1, 32): "U32",
    (0, 64): "I64", (1, 64): "U64", (2, 16): "F16", (2, 32): "F32", (2, 64): "F64", (4, 16): "BF16",
}
# Indices (top-k, argsort) and offsets are int64 in Python, as in NumPy and PyTorch.
INDEX_NUMPY = np.dtype(np.int64)


def _code(name, what):
    code = _abi.DTYPE.get(name)
    if code is None:
        raise TypeError(f"{what}: this gpuprims library has no {name} type")
    return code


_FROM_NUMPY = {}  # dtype -> code: NumPy's dtype.name is slow, and every call asks


def from_numpy(dtype):
    """gpuprims code of a NumPy dtype (or of a CuPy array's, which is one)."""
    code = _FROM_NUMPY.get(dtype)
    if code is None:
        code = _FROM_NUMPY[dtype] = _from_numpy(np.dtype(dtype))
    return code


def _from_numpy(dtype):
    name = _EXTENSION_NAMES.get(dtype.name) or _NAMES.get(f"{dtype.kind}{dtype.itemsize}")
    if name is None or dtype.kind not in "iuf" and dtype.name not in _EXTENSION_NAMES:
        raise TypeError(f"dtype {dtype} is not supported (integers of 8 to 64 bits and floats)")
    if not dtype.isnative:
        raise ValueError(f"dtype {dtype} is not in the machine's byte order")
    return _code(name, f"dtype {dtype}")


def from_typestr(typestr):
    """gpuprims code of an array-interface type string ('<f4')."""
    if typestr[0] == ">" and typestr[2:] != "1":
        raise ValueError(f"typestr {typestr!r} is big-endian")
    name = _NAMES.get(typestr[1:])
    if name is None:
        raise TypeError(f"typestr {typestr!r} is not supported (integers of 8 to 64 bits and floats)")
    return _code(name, f"typestr {typestr!r}")


def from_dlpack(code, bits, lanes):
    name = _DLPACK_NAMES.get((code, bits))
    if name is None or lanes != 1:
        raise TypeError(f"DLPack type (code {code}, {bits} bits, {lanes} lanes) is not supported")
    return _code(name, f"DLPack type (code {code}, {bits} bits)")


_CODE_TO_NUMPY = {}
for _typestr, _name in _NAMES.items():
    if _name in _abi.DTYPE:
        _CODE_TO_NUMPY[_abi.DTYPE[_name]] = np.dtype(_typestr)
if "BF16" in _abi.DTYPE:
    try:
        import ml_dtypes

        _CODE_TO_NUMPY[_abi.DTYPE["BF16"]] = np.dtype(ml_dtypes.bfloat16)
    except ImportError:
        pass


def to_numpy(code):
    try:
        return _CODE_TO_NUMPY[code]
    except KeyError:
        raise TypeError(f"gpuprims dtype {code} has no NumPy type (install ml_dtypes for bfloat16)") from None


def size(code):
    """Bytes of one element (gpuprims_dtype_size)."""
    from ._lib import lib

    return lib.gpuprims_dtype_size(code)


_TORCH = None


def torch_map(torch):
    """(torch dtype -> code, code -> torch dtype) of this torch module, built once.

    Keyed by the module: the tests' stand-in torch (tests/standins.py) and the real one
    may both be used in one process, and one's map must not answer for the other's."""
    global _TORCH
    if _TORCH is None or _TORCH[0] is not torch:
        names = {
            "int8": "I8", "uint8": "U8", "int16": "I16", "uint16": "U16", "int32": "I32",
            "uint32": "U32", "int64": "I64", "uint64": "U64", "float16": "F16",
            "bfloat16": "BF16", "float32": "F32", "float64": "F64",
        }
        fwd = {}
        for tname, name in names.items():
            tdtype = getattr(torch, tname, None)
            if tdtype is not None and name in _abi.DTYPE:
                fwd[tdtype] = _abi.DTYPE[name]
        _TORCH = (torch, fwd, {code: t for t, code in fwd.items()})
    return _TORCH[1], _TORCH[2]
