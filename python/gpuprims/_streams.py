"""CUDA streams: what `stream=` accepts, the framework's current stream, and ordering one
stream after another (for a __cuda_array_interface__ producer's stream).

Handles here are CUstream values as integers. The library's gpuprims_context_set_stream
takes NULL to mean "the context's own stream", so the CUDA default (legacy) stream,
handle 0 in PyTorch and CuPy, is passed as CU_STREAM_LEGACY (1) instead, which the
driver accepts wherever a stream goes.
"""
import ctypes

LEGACY = 1  # CU_STREAM_LEGACY
PER_THREAD = 2  # CU_STREAM_PER_THREAD


def handle(stream):
    """The CUstream of `stream=`: a torch.cuda.Stream, a CuPy stream, anything with
    __cuda_stream__, or an integer handle (0 is the legacy default stream)."""
    if isinstance(stream, int):
        h = stream
    elif hasattr(stream, "__cuda_stream__"):
        s = stream.__cuda_stream__
        s = s() if callable(s) else s
        h = s[1]  # (version, handle)
    elif hasattr(stream, "cuda_stream"):  # torch.cuda.Stream
        h = stream.cuda_stream
    elif hasattr(stream, "ptr"):  # cupy.cuda.Stream
        h = stream.ptr
    else:
        raise TypeError(
            f"stream: expected a torch.cuda.Stream, a CuPy stream, an object with "
            f"__cuda_stream__ or an integer handle, not {type(stream).__name__}"
        )
    if h < 0:
        raise ValueError(f"stream: handle {h} is negative")
    return h or LEGACY


class _Driver:
    """The few CUDA driver calls the Python layer itself needs, loaded on first use."""

    def __init__(self):
        self.cuda = ctypes.CDLL("libcuda.so.1")
        for name, args in {
            "cuEventCreate": [ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint],
            "cuEventRecord": [ctypes.c_void_p, ctypes.c_void_p],
            "cuStreamWaitEvent": [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint],
            "cuEventDestroy_v2": [ctypes.c_void_p],
            "cuPointerGetAttribute": [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64],
        }.items():
            getattr(self.cuda, name).argtypes = args

    def check(self, r, what):
        if r != 0:
            raise RuntimeError(f"{what} failed: CUresult {r}")

    def wait(self, consumer, producer):
        """Orders later work of `consumer` after the work issued so far on `producer`."""
        ev = ctypes.c_void_p()
        self.check(self.cuda.cuEventCreate(ctypes.byref(ev), 2), "cuEventCreate")  # DISABLE_TIMING
        try:
            self.check(self.cuda.cuEventRecord(ev, producer), "cuEventRecord")
            self.check(self.cuda.cuStreamWaitEvent(consumer, ev, 0), "cuStreamWaitEvent")
        finally:
            self.cuda.cuEventDestroy_v2(ev)

    def device_of(self, ptr):
        """The device ordinal of device memory at `ptr`."""
        ordinal = ctypes.c_int(-1)
        r = self.cuda.cuPointerGetAttribute(ctypes.byref(ordinal), 9, ptr)  # DEVICE_ORDINAL
        if r != 0:
            raise ValueError(f"pointer {ptr:#x} is no device memory the CUDA driver knows (CUresult {r})")
        return ordinal.value


_driver = None


def driver():
    global _driver
    if _driver is None:
        _driver = _Driver()
    return _driver


def order_after(consumer, producer):
    """Makes `consumer` wait for `producer` (both handles) unless they are one stream.
    A __cuda_array_interface__ v3 producer stream of None means nothing to wait for."""
    if producer is None or producer == consumer:
        return
    driver().wait(consumer, producer)
