"""gpuprims.Life: a Game of Life grid (any Life-like rule) stepped on the GPU or host."""
import ctypes
import re

import numpy as np

from . import _abi, _context
from ._call import check
from ._lib import lib

_BOUNDARIES = {name.lower(): code for name, code in _abi.LIFE.items()}
_RLE_SIZE = re.compile(r"^\s*x\s*=\s*(\d+)\s*,\s*y\s*=\s*(\d+)", re.M)


def _cells(pattern):
    """A C-contiguous 2-D uint8 view of a bool/uint8 array (torch and CuPy arrays are
    brought to the host: cells go in through host memory)."""
    module = type(pattern).__module__.split(".")[0]
    if module == "torch":
        pattern = pattern.detach().cpu().numpy()
    elif module == "cupy":
        pattern = pattern.get()
    a = np.asarray(pattern)
    if a.ndim != 2:
        raise ValueError(f"pattern: expected a 2-D array, got shape {a.shape}")
    if a.dtype not in (np.bool_, np.uint8):
        raise TypeError(f"pattern: expected bool or uint8 cells, not {a.dtype}")
    if not a.flags.c_contiguous:
        raise ValueError("pattern: the array is not C-contiguous")
    return a.view(np.uint8)


class Life:
    """A width x height grid of cells, alive or dead.

    Life(pattern, width=None, height=None, *, boundary="torus", rule=None, ctx=None)
      pattern: a 2-D bool/uint8 array (height rows of width cells; nonzero is alive),
      an RLE string (the grid is the pattern's x by y box unless width/height are
      given; the pattern goes at the top left), or None for a dead grid of
      width x height.
      boundary: "torus" (edges wrap) or "dead" (cells outside are dead).
      rule: B/S notation ("B3/S23", the default, "B36/S23", ...); an RLE header's rule
      applies unless rule= is given.
    """

    def __init__(self, pattern=None, width=None, height=None, *, boundary="torus", rule=None, ctx=None):
        cells = None
        if isinstance(pattern, str):
            m = _RLE_SIZE.search("\n".join(l for l in pattern.splitlines() if not l.lstrip().startswith("#")))
            if m is None and (width is None or height is None):
                raise ValueError("pattern: the RLE text has no 'x = W, y = H' header; give width and height")
            width = width if width is not None else int(m.group(1))
            height = height if height is not None else int(m.group(2))
        elif pattern is not None:
            cells = _cells(pattern)
            if (width, height) not in ((None, None), (cells.shape[1], cells.shape[0])):
                raise ValueError(f"width, height: {width} x {height}, but the array is {cells.shape[1]} x {cells.shape[0]}")
            height, width = cells.shape
        elif width is None or height is None:
            raise ValueError("give a pattern (array or RLE text) or width and height")
        if boundary not in _BOUNDARIES:
            raise ValueError(f"boundary: expected one of {sorted(_BOUNDARIES)}, not {boundary!r}")
        self.ctx = ctx or _context.current() or _context.default("auto")
        g = ctypes.c_void_p()
        check(lib.gpuprims_life_create(self.ctx.handle, width, height, _BOUNDARIES[boundary], ctypes.byref(g)))
        self._g = g.value
        self.width, self.height, self.boundary = width, height, boundary
        if isinstance(pattern, str):
            self.load_rle(pattern)
        elif cells is not None:
            check(lib.gpuprims_life_write_cells(self._g, cells.ctypes.data))
        if rule is not None:
            self.rule = rule

    @property
    def shape(self):
        """(height, width), as the arrays."""
        return (self.height, self.width)

    @property
    def rule(self):
        """The rule in canonical B/S form; assign B/S text to change it."""
        return self._text(lib.gpuprims_life_get_rule)

    @rule.setter
    def rule(self, text):
        check(lib.gpuprims_life_set_rule(self._g, text.encode()))

    def load_rle(self, text, x=0, y=0):
        """Stamps an RLE pattern with its top-left cell at (x, y): its live cells are set,
        the others keep their state. A rule in its header becomes the grid's."""
        check(lib.gpuprims_life_load_rle(self._g, text.encode(), x, y))
        return self

    def step(self, n=1):
        """Advances n generations (issued without waiting on CUDA); returns self."""
        if n < 0:
            raise ValueError(f"n: {n} generations")
        check(lib.gpuprims_life_step(self._g, n))
        return self

    @property
    def population(self):
        """The number of live cells (waits for the steps issued before)."""
        out = ctypes.c_uint64()
        check(lib.gpuprims_life_population(self._g, ctypes.byref(out)))
        return out.value

    @property
    def generation(self):
        """Generations stepped since the grid was made."""
        out = ctypes.c_uint64()
        check(lib.gpuprims_life_generation(self._g, ctypes.byref(out)))
        return out.value

    def to_array(self):
        """The cells as a (height, width) uint8 NumPy array, 1 alive, 0 dead."""
        out = np.empty((self.height, self.width), np.uint8)
        check(lib.gpuprims_life_read_cells(self._g, out.ctypes.data))
        return out

    def rle(self):
        """The whole grid as RLE text (with its rule); Life(text) reproduces it."""
        return self._text(lib.gpuprims_life_save_rle)

    def _text(self, fn):
        needed = ctypes.c_size_t()
        check(fn(self._g, None, 0, ctypes.byref(needed)))
        buf = ctypes.create_string_buffer(needed.value + 1)
        check(fn(self._g, buf, needed.value + 1, None))
        return buf.value.decode()

    def __del__(self):
        g, self._g = getattr(self, "_g", None), None
        if g is not None:
            lib.gpuprims_life_destroy(g)

    def __repr__(self):
        return f"<gpuprims.Life {self.width}x{self.height} {self.rule} generation {self.generation}>"
