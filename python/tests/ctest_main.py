"""CTest's entry to the pytest suite (test python_tests): exits 77, which CTest counts
as skipped, where NumPy or pytest is missing; otherwise runs the suite quietly."""
import os
import sys

try:
    import numpy  # noqa: F401
    import pytest
except ImportError as e:
    print(f"skipped: the Python tests need numpy and pytest ({e}); pip install numpy pytest")
    sys.exit(77)

here = os.path.dirname(os.path.abspath(__file__))
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "-rs", here] + sys.argv[1:]))
