"""Drop stale numba cache files when a kernel that other kernels call has changed.

numba checks only the source file of a cached function itself. A cached kernel of ``search/`` or of a variant that
calls ``engine.kernels.movegen.do_move`` keeps the old, inlined ``do_move`` after movegen.py changes, which crashes
(segfaults) once the state layout moved. We hash every source file whose kernels are called from other files and,
when the hash differs from the stamp left by the last check, delete the project's cache files (numba then
recompiles). A fresh checkout has no cache, so CI never meets this; developers do, between edits.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from . import safecache

_ROOT = Path(__file__).resolve().parents[2]
#: Files whose kernels are called from kernels in other files.
SHARED_KERNEL_SOURCES = ("engine/kernels/__init__.py", "engine/kernels/movegen.py", "engine/variant.py",
                         "eval/kernels.py", "search/kernels.py", "engine/variants/fantasista/kernels.py")
_PACKAGES = ("engine", "search", "eval")
_STAMP = _ROOT / "engine/kernels/__pycache__/shared-kernels.sha1"


def ensure_fresh_cache() -> bool:
    """Delete the project's numba cache files if a shared kernel source changed; return whether it did.

    Also routes numba's cache writes through :mod:`engine.kernels.safecache` (locked, data before index), before
    any kernel is loaded or saved."""
    safecache.install()
    h = hashlib.sha1()
    for rel in SHARED_KERNEL_SOURCES:
        path = _ROOT / rel
        if path.exists():
            h.update(rel.encode())
            h.update(path.read_bytes())
    digest = h.hexdigest()
    if _stamp_matches(digest):
        return False
    # Check again under the stamp directory's lock: of two processes started together after an edit, one wipes
    # and stamps, the other then finds the stamp fresh and keeps what the first has begun to compile.
    with safecache.locked(_STAMP.parent):
        if _stamp_matches(digest):
            return False
        for package in _PACKAGES:
            for f in (_ROOT / package).glob("**/__pycache__/*.nb[ic]"):
                try:
                    f.unlink()
                except OSError:
                    pass
        try:
            # whole or not at all: a stamp read half-written by another process would wipe a warm cache
            safecache.atomic_write_bytes(_STAMP, digest.encode())
        except OSError:
            pass
    return True


def _stamp_matches(digest: str) -> bool:
    try:
        return _STAMP.read_text() == digest
    except OSError:
        return False
