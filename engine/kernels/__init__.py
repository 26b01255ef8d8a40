"""numba kernels: functions of numpy arrays and scalars only, cached on disk.

All kernels use :data:`kernel`, i.e. ``njit(cache=True, nogil=True, _nrt=False)``. Turning off numba's reference
counting (NRT) is deliberate: kernels receive namedtuples of many arrays, and with NRT every call between kernels
increments and decrements the count of every array in them, which measured 50-100x slower than the move generation
itself. The price is that kernels may not allocate: every scratch buffer is passed in (see ``PosState.scratch``).
"""
from numba import njit

from .cache import ensure_fresh_cache

ensure_fresh_cache()  # before any kernel is loaded from the disk cache (see cache.py)

kernel = njit(cache=True, nogil=True, _nrt=False)

#: A small hot helper that numba inlines into every caller (``inline="always"``, at numba's IR level). A call
#: between kernels passes each array argument as a dozen scalars and LLVM does not inline across kernels: a
#: per-piece helper called 20 times a position measured 3x slower as a call than inlined. Every inline site is
#: compiled again with its caller, so this is for a few short helpers with one or two call sites.
inline_kernel = njit(cache=True, nogil=True, _nrt=False, inline="always")
