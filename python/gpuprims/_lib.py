"""Finding and opening libgpuprims.so, NVRTC first.

Order: $GPUPRIMS_LIBRARY (a path to libgpuprims.so), the copy inside this package (a
wheel carries it in gpuprims/lib/), then the loader's search path.

NVRTC: the library dlopens libnvrtc.so.13 by soname when it first compiles a kernel.
glibc's dlopen returns an object already loaded whose DT_SONAME equals the name asked
for, so loading the nvidia-cuda-nvrtc wheel's file by its full path here (and its
builtins, which NVRTC opens by soname too) makes the library find it without
LD_LIBRARY_PATH. GPUPRIMS_NVRTC_PRELOAD=0 turns this off (use the system's NVRTC).
"""
import ctypes
import ctypes.util
import glob
import os
import sys

from . import _abi

_HERE = os.path.dirname(os.path.abspath(__file__))
# Files of the nvidia-cuda-nvrtc wheel (CUDA 13 layout), builtins first.
_NVRTC_FILES = ("libnvrtc-builtins.so.13.0", "libnvrtc.so.13")


def nvrtc_wheel_dir():
    """The nvidia-cuda-nvrtc wheel's lib folder on sys.path, or None."""
    roots = []
    try:
        import nvidia  # namespace package of the NVIDIA wheels

        roots += list(nvidia.__path__)
    except ImportError:
        pass
    roots += [os.path.join(p, "nvidia") for p in sys.path if p]
    for root in roots:
        d = os.path.join(root, "cu13", "lib")
        if os.path.isfile(os.path.join(d, _NVRTC_FILES[-1])):
            return d
    return None


def _preload_nvrtc():
    if os.environ.get("GPUPRIMS_NVRTC_PRELOAD", "1") == "0":
        return None
    d = nvrtc_wheel_dir()
    if d is None:
        return None
    for name in _NVRTC_FILES:
        path = os.path.join(d, name)
        if os.path.isfile(path):
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    return d


def library_path():
    """The libgpuprims.so this package opens."""
    env = os.environ.get("GPUPRIMS_LIBRARY")
    if env:
        if not os.path.isfile(env):
            raise ImportError(f"GPUPRIMS_LIBRARY={env} is not a file")
        return env
    bundled = sorted(glob.glob(os.path.join(_HERE, "lib", "libgpuprims.so*")))
    if bundled:
        return bundled[0]
    found = ctypes.util.find_library("gpuprims")
    if found:
        return found
    raise ImportError(
        "libgpuprims.so not found: install the gpuprims wheel (pip install ./python), "
        "or set GPUPRIMS_LIBRARY=/path/to/libgpuprims.so"
    )


def _open():
    nvrtc = _preload_nvrtc()
    path = library_path()
    lib = ctypes.CDLL(path)
    missing = []
    for name, (restype, args) in _abi.FUNCTIONS.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            missing.append(name)
            continue
        fn.restype = restype
        fn.argtypes = [t for _, t in args]
    if missing:
        raise ImportError(f"{path} lacks {', '.join(missing)}: it is older than include/gpuprims.h")
    return lib, path, nvrtc


lib, path, nvrtc_dir = _open()
