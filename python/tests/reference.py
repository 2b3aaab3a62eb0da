"""NumPy references in the library's order: -inf < ... < -0.0 < +0.0 < ... < +inf < NaN,
every NaN one value; ties in input order (ascending and descending alike)."""
import numpy as np


def order_key(x):
    """Unsigned integers that sort as x does in the library's total order."""
    x = np.asarray(x)
    if x.dtype.kind == "u":
        return x.astype(np.uint64)
    if x.dtype.kind == "i":
        return (x.astype(np.int64).view(np.uint64)) ^ np.uint64(1 << 63)
    bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize]
    nbits = x.dtype.itemsize * 8
    u = x.view(bits).astype(np.uint64)
    sign = u >> np.uint64(nbits - 1)
    flip = np.where(sign == 1, np.uint64((1 << nbits) - 1), np.uint64(1 << (nbits - 1)))
    key = u ^ flip
    return np.where(np.isnan(x), np.uint64(2**64 - 1), key)  # above +inf


def stable_order(x, descending=False):
    key = order_key(x)
    if descending:
        key = ~key
    return np.argsort(key, kind="stable")


def same(a, b):
    """Equal arrays, NaN equal to NaN, -0.0 told from +0.0."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "f":
        return a.shape == b.shape and np.array_equal(order_key(a), order_key(b))
    return np.array_equal(a, b)


def running(x, op):
    """Inclusive min/max scan in the library's order (NaN-free input)."""
    key = order_key(x)
    out, best = np.empty_like(x), 0
    for i in range(len(x)):
        if i == 0 or (key[i] < key[best] if op == "min" else key[i] > key[best]):
            best = i
        out[i] = x[best]
    return out
