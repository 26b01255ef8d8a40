"""Which packages hold numba kernels, and the purge of their stale cache files (:func:`purge_stale_kernels`), called
explicitly before any kernel loads: by the USI engine at its first command that may load one (:mod:`usi.engine`),
at ``--compile`` (:mod:`usi.compile`), at the start of fantasista-match, fantasista-gui and the bench and training
tools, and at test set-up (``tests/conftest.py``). ``engine/`` does the work
(:func:`engine.kernels.cache.ensure_fresh_cache`); this layer, above every package with kernels, names them. Imports
nothing heavy until called."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the packages whose ``__pycache__`` hold numba kernels, lowest first
KERNEL_PACKAGES = ("engine", "eval", "search")
#: files above ``engine/`` whose kernels are called from kernels in other files (engine's own: engine.kernels.cache)
SHARED_KERNEL_SOURCES = ("eval/kernels.py", "eval/fantasista.py", "search/kernels.py", "search/movepick.py",
                         "search/see.py")


def purge_stale_kernels() -> bool:
    """Delete the kernel packages' numba cache files if a shared kernel source changed since the last check; return
    whether it did (:func:`engine.kernels.cache.ensure_fresh_cache`)."""
    from engine.kernels.cache import ensure_fresh_cache  # numba loads here, not at usi

    return ensure_fresh_cache([ROOT / p for p in KERNEL_PACKAGES if p != "engine"],
                              [ROOT / f for f in SHARED_KERNEL_SOURCES])
