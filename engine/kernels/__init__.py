"""numba kernels: functions of numpy arrays and scalars only, cached on disk.

All kernels use :data:`kernel`, i.e. ``njit(cache=True, nogil=True, _nrt=False)``. Turning off numba's reference
counting (NRT) is deliberate: kernels receive namedtuples of many arrays, and with NRT every call between kernels
increments and decrements the count of every array in them, which measured 50-100x slower than the move generation
itself. The price is that kernels may not allocate: every scratch buffer is passed in (see ``PosState.scratch``).
"""
import numpy as np
from numba import njit

from .cache import ensure_fresh_cache

ensure_fresh_cache()  # before any kernel is loaded from the disk cache (see cache.py)

kernel = njit(cache=True, nogil=True, _nrt=False)

#: A small hot helper that numba inlines into every caller (``inline="always"``, at numba's IR level). A call
#: between kernels passes each array argument as a dozen scalars and LLVM does not inline across kernels: a
#: per-piece helper called 20 times a position measured 3x slower as a call than inlined. Every inline site is
#: compiled again with its caller, so this is for a few short helpers with one or two call sites.
inline_kernel = njit(cache=True, nogil=True, _nrt=False, inline="always")


class DirectCall:
    """A kernel called from Python without numba's per-call type dispatch.

    The dispatcher types every argument on every call; for the search's kernels, whose arguments are namedtuples of
    a few dozen arrays, that measured ~13 us a call, against ~9 us for the call itself on a node that the
    transposition table settles at once. The first call goes through the dispatcher (which loads or compiles the
    overload for its types); later calls go straight to that overload's compiled entry point.

    The entry point does not check types, so every call must pass arguments of the first call's types (the same
    dtypes, dimensions and contiguity, the same namedtuple classes): use it only where the caller owns the
    arguments, like a searcher calling a kernel with its own buffers."""

    __slots__ = ("dispatcher", "_call")

    def __init__(self, dispatcher) -> None:
        self.dispatcher = dispatcher
        self._call = self._first

    def _first(self, *args):
        result = self.dispatcher(*args)
        types = tuple(self.dispatcher.typeof_pyval(a) for a in args)
        self._call = self.dispatcher.overloads[types].entry_point
        return result

    def __call__(self, *args):
        return self._call(*args)


@inline_kernel
def hash_slot(key, n_entries):
    """The slot of a 64-bit position ``key`` in a hash table of ``n_entries`` (a power of two): the key's low bits.
    One definition for the transposition tables, the mate search's table and the evaluation hash."""
    return np.int64(key & np.uint64(n_entries - 1))
