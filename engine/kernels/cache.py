"""Drop stale numba cache files when a kernel that other kernels call has changed.

numba checks only the source file of a cached function itself. A cached kernel of a package above or of a variant
that calls ``engine.kernels.movegen.do_move`` keeps the old, inlined ``do_move`` after movegen.py changes, which
crashes (segfaults) once the state layout moved. We hash every source file whose kernels are called from other files
and, when the hash differs from the stamp left by the last check, delete the cache files of the packages that hold
kernels (numba then recompiles). A fresh checkout has no cache, so CI never meets this; developers do, between edits.

This is an explicit call, not a side effect of importing the engine, made before any kernel is loaded: by the USI
engine at its first command that may load a kernel, at ``--compile``, by the tools at their start and by the tests at
set-up (:mod:`usi.kernel_cache` gives the packages above ``engine/`` and their shared kernel files). Importing
:mod:`engine.kernels` deletes nothing (it installs the safe cache writer and the recursion memo, and sets the default
``NUMBA_OPT``).
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Iterable

from . import safecache

_ENGINE = Path(__file__).resolve().parents[1]
#: Files of engine/ whose kernels are called from kernels in other files (relative to engine/).
ENGINE_SHARED_SOURCES = ("kernels/__init__.py", "kernels/recursion.py", "kernels/movegen.py", "kernels/hooks.py",
                         "variant.py", "variants/fantasista/hooks.py",
                         "variants/fantasista/movers.py", "variants/fantasista/variant.py")
_STAMP = _ENGINE / "kernels/__pycache__/shared-kernels.sha1"


def ensure_fresh_cache(packages: Iterable[Path] = (), shared_sources: Iterable[Path] = ()) -> bool:
    """Delete the numba cache files of ``engine/`` and of ``packages`` (directories of the packages above that hold
    kernels) if a shared kernel source changed: engine's own (:data:`ENGINE_SHARED_SOURCES`) or one of
    ``shared_sources`` (files of those packages whose kernels other files call); or if ``NUMBA_OPT`` did. Return
    whether it deleted. Call it before any kernel is loaded, with the same arguments from every process of a checkout
    (the stamp is one)."""
    safecache.install()
    sources = [_ENGINE / rel for rel in ENGINE_SHARED_SOURCES] + [Path(p) for p in shared_sources]
    h = hashlib.sha1()
    for path in sources:
        if path.exists():
            try:
                name = path.resolve().relative_to(_ENGINE.parent).as_posix()
            except ValueError:
                name = str(path.resolve())
            h.update(name.encode())
            h.update(path.read_bytes())
    # numba's cache does not tell kernels compiled at another optimisation level apart (engine/kernels/__init__.py)
    h.update(f"NUMBA_OPT={os.environ.get('NUMBA_OPT', '')}".encode())
    digest = h.hexdigest()
    if _stamp_matches(digest):
        return False
    # Check again under the stamp directory's lock: of two processes started together after an edit, one wipes
    # and stamps, the other then finds the stamp fresh and keeps what the first has begun to compile.
    with safecache.locked(_STAMP.parent):
        if _stamp_matches(digest):
            return False
        for package in [_ENGINE, *packages]:
            for f in Path(package).glob("**/__pycache__/*.nb[ic]"):
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
