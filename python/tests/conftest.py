"""Shared by the host and GPU tests: the library under test comes from GPUPRIMS_LIBRARY
(CTest points it at build/lib), else the installed package's own copy."""
import os
import sys

import pytest

# Tests of a source checkout import python/gpuprims, not an installed copy.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import gpuprims  # noqa: E402


@pytest.fixture
def host():
    ctx = gpuprims.Context("host")
    yield ctx
    ctx.close()
