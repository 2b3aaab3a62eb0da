"""The ctypes declarations cannot drift from include/gpuprims.h: _abi.py is what the
generator makes of the header today, and the library loaded exports exactly those
functions."""
import os
import shutil
import subprocess
import sys

import pytest

import gpuprims
from gpuprims import _abi, _dtypes

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
HEADER = os.path.join(ROOT, "include", "gpuprims.h")
sys.path.insert(0, os.path.join(ROOT, "python", "tools"))
import gen_abi  # noqa: E402


def test_abi_module_is_generated_from_the_header():
    if not os.path.exists(HEADER):
        pytest.skip("no include/gpuprims.h next to this package (an installed copy)")
    with open(HEADER, encoding="utf-8") as f:
        want = gen_abi.render(f.read())
    with open(_abi.__file__, encoding="utf-8") as f:
        have = f.read()
    assert have == want, "python/gpuprims/_abi.py is stale: run python3 python/tools/gen_abi.py"


def test_generator_picks_up_new_constants_and_functions():
    with open(HEADER, encoding="utf-8") as f:
        text = f.read()
    extra = text.replace(
        "#define GPUPRIMS_DTYPE_F64 10",
        "#define GPUPRIMS_DTYPE_F64 10\n\n#define GPUPRIMS_DTYPE_F16 11\n\n#define GPUPRIMS_DTYPE_BF16 12",
    ).replace(
        "#ifdef __cplusplus\n}",
        "gpuprims_status gpuprims_future_call(gpuprims_context *ctx,\n"
        "                                     const gpuprims_buffer *values,\n"
        "                                     uint64_t k,\n"
        "                                     gpuprims_buffer *out);\n\n#ifdef __cplusplus\n}",
    )
    ns = {}
    exec(compile(gen_abi.render(extra), "_abi", "exec"), ns)
    assert ns["DTYPE"]["F16"] == 11 and ns["DTYPE"]["BF16"] == 12
    restype, args = ns["FUNCTIONS"]["gpuprims_future_call"]
    assert [a for a, _ in args] == ["ctx", "values", "k", "out"]


def test_every_header_function_is_in_the_library():
    for name in _abi.FUNCTIONS:
        assert hasattr(gpuprims._lib.lib, name), name


def test_the_library_exports_nothing_the_header_lacks():
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("nm not found")
    out = subprocess.run([nm, "-D", "--defined-only", gpuprims.library_path], capture_output=True, text=True,
                         check=True).stdout
    exported = {line.split()[-1] for line in out.splitlines() if line.split()[-1].startswith("gpuprims_")}
    assert exported == set(_abi.FUNCTIONS)


def test_every_dtype_of_the_header_has_a_python_type():
    known = set(_dtypes._NAMES.values()) | set(_dtypes._EXTENSION_NAMES.values())
    assert set(_abi.DTYPE) <= known, set(_abi.DTYPE) - known


def test_one_error_class_per_status():
    for name, value in _abi.STATUS.items():
        if value == _abi.GPUPRIMS_STATUS_OK:
            continue
        cls = gpuprims._errors.BY_STATUS[value]
        assert issubclass(cls, gpuprims.Error) and cls.status == value
        assert getattr(gpuprims, cls.__name__) is cls
        assert gpuprims._lib.lib.gpuprims_status_name(value).decode() == "GPUPRIMS_STATUS_" + name


def test_version_matches_the_header():
    v = gpuprims._lib.lib.gpuprims_version()
    assert v >> 16 == _abi.GPUPRIMS_VERSION_MAJOR and (v >> 8) & 0xFF == _abi.GPUPRIMS_VERSION_MINOR
