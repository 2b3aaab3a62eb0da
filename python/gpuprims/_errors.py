"""gpuprims.Error and one subclass per gpuprims_status, carrying the library's message.

The classes come from the header's GPUPRIMS_STATUS_* constants (via _abi), so a status
added to the C API gets its class here without an edit. Several also derive from the
built-in exception a Python user would catch for that fault (ValueError for an invalid
argument, MemoryError for out-of-memory, ...).
"""
import ctypes

from . import _abi
from ._lib import lib


class Error(RuntimeError):
    """A gpuprims call failed. `status` is the gpuprims_status value, `status_name` its
    name, `message` the library's text (gpuprims_last_error)."""

    status = None
    __module__ = "gpuprims"

    def __init__(self, message, status=None):
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status

    @property
    def status_name(self):
        return lib.gpuprims_status_name(self.status).decode()


# Built-in exceptions that also name the fault (except ValueError catches these).
_ALSO = {
    "INVALID_ARGUMENT": ValueError,
    "NULL_ARGUMENT": ValueError,
    "TYPE_MISMATCH": TypeError,
    "SIZE_MISMATCH": ValueError,
    "CONTEXT_MISMATCH": ValueError,
    "OUT_OF_MEMORY": MemoryError,
    "UNSUPPORTED": NotImplementedError,
    "PARSE_ERROR": ValueError,
}


def _class_name(status_name):
    words = status_name.lower().split("_")
    if words[-1] == "error":
        words = words[:-1]
    return "".join(w.capitalize() for w in words) + "Error"


BY_STATUS = {}
for _name, _value in _abi.STATUS.items():
    if _value == _abi.GPUPRIMS_STATUS_OK:
        continue
    _bases = (Error, _ALSO[_name]) if _name in _ALSO else (Error,)
    _cls = type(_class_name(_name), _bases, {
        "status": _value,
        "__doc__": f"GPUPRIMS_STATUS_{_name}.",
        "__module__": "gpuprims",
    })
    BY_STATUS[_value] = _cls
    globals()[_cls.__name__] = _cls

__all__ = ["Error"] + [c.__name__ for c in BY_STATUS.values()]


def last_error():
    """This thread's last error message from the library."""
    n = lib.gpuprims_last_error(None, 0)
    buf = ctypes.create_string_buffer(n + 1)
    lib.gpuprims_last_error(buf, n + 1)
    return buf.value.decode("utf-8", "replace")


def raise_for(status):
    """Raises the class of a failed status with the library's message."""
    cls = BY_STATUS.get(status, Error)
    raise cls(last_error(), status)
