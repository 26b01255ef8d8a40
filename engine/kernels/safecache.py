"""Disk-cache writes that an interrupted or concurrent process cannot leave broken.

Two kinds of files are cached on disk: numba's compiled kernels (``<name>-<line>.py311.nbi``, the index of a
kernel's compiled signatures, and ``<name>-<line>.py311.<n>.nbc``, one data file per signature, in the
``__pycache__`` next to the source or under ``NUMBA_CACHE_DIR``) and the project's own (the shared-kernel stamp of
:mod:`engine.kernels.cache`, the mawarikudoi tables of :func:`array_cache`).

numba writes each file through a temporary file and ``os.replace`` (numba 0.59-0.68), so no reader ever sees half
a file, but three things can still break the next start:

- **Two processes adding signatures of one kernel at once** (two engines, or ``pytest -n 2``, compiling the same
  kernel for different argument types): both read the index, both pick the first free data name (``1.nbc``), and
  each writes its own index. The index that stays can name the *other* process's data file, whose machine code
  is for other argument types.
- **A kill between the index and the data file**: numba writes the index first. Killed before the data file is
  replaced, the index names a data file that is missing, or, when the kernel's source changed since, an older file
  of the same name compiled from the old source.
- **Temporary files** (``*.nbi.tmp.<hex>``): numba removes its temporary file on an ``Exception`` but not on
  ``KeyboardInterrupt`` (Ctrl-C during a compile), nor can anyone on a ``SIGKILL``.

:func:`install` replaces numba's ``IndexDataCacheFile.save`` with one that holds an inter-process lock on the cache
directory (``fcntl.flock`` on ``fantasista-cache.lock`` in it) while it reads the index, writes the data file and
only then the index; and its temporary-file writer removes the temporary file on any interruption.
:func:`sweep_temporary_files` removes the temporaries a killed process left (under the same lock, so never one a
live writer is still filling). Loading takes no lock: every file is replaced whole, and an index only names data
files written before it.
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import itertools
import os
import threading
import uuid
import zipfile
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np

try:
    import fcntl
except ImportError:  # Windows: no flock; numba's own (unlocked) order of writes is kept there
    fcntl = None

LOCK_NAME = "fantasista-cache.lock"
#: A temporary file is ``<final name>.tmp.<16 hex digits>`` (numba's pattern, kept for ours).
TMP_INFIX = ".tmp."

_held: dict[str, int] = {}  # directory -> depth of this process's hold on its lock (the lock is reentrant)
_guard = threading.RLock()


@contextlib.contextmanager
def locked(directory: str | os.PathLike) -> Iterator[None]:
    """Hold the inter-process lock of ``directory`` (created if missing); reentrant within a process."""
    key = os.path.abspath(directory)
    with _guard:
        if _held.get(key):
            _held[key] += 1
            try:
                yield
            finally:
                _held[key] -= 1
            return
        os.makedirs(key, exist_ok=True)
        fd = os.open(os.path.join(key, LOCK_NAME), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if fcntl is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                except OSError:  # a file system without flock (some network mounts): write unlocked, as numba does
                    pass
            _held[key] = 1
            try:
                yield
            finally:
                del _held[key]
        finally:
            os.close(fd)  # closing the descriptor releases the flock


@contextlib.contextmanager
def open_for_write(path: str | os.PathLike) -> Iterator[io.BufferedWriter]:
    """A binary file that appears at ``path`` whole or not at all: written to ``<path>.tmp.<hex>``, renamed over
    ``path`` on success, removed on any failure or interruption (also ``KeyboardInterrupt``)."""
    tmp = f"{os.fspath(path)}{TMP_INFIX}{uuid.uuid4().hex[:16]}"
    try:
        with open(tmp, "wb") as f:
            yield f
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` through :func:`open_for_write`."""
    with open_for_write(path) as f:
        f.write(data)


def sweep_temporary_files(directory: str | os.PathLike) -> list[Path]:
    """Remove the temporary files a killed writer left in ``directory``; return them. Runs under the directory's
    lock, so a file some live writer (which holds the lock while writing) is filling is never removed."""
    d = Path(directory)
    if not d.is_dir():
        return []
    removed = []
    try:
        with locked(d):
            for f in d.iterdir():
                if TMP_INFIX in f.name and f.is_file():
                    with contextlib.suppress(OSError):
                        f.unlink()
                        removed.append(f)
    except OSError:  # a read-only directory: nothing of ours can be in it
        pass
    return removed


# ------------------------------------------------------------------------------------------ numba
def _save(self, key, data) -> None:
    """``IndexDataCacheFile.save`` under the directory lock, the data file before the index."""
    with locked(self._cache_path):
        overloads = self._load_index()
        data_name = overloads.get(key)
        if data_name is None:
            taken = set(overloads.values())
            data_name = next(n for n in map(self._data_name, itertools.count(1)) if n not in taken)
        self._save_data(data_name, data)
        if overloads.get(key) != data_name:
            overloads[key] = data_name
            self._save_index(overloads)


def _open_for_write_method(self, filepath):
    return open_for_write(filepath)


_installed = False


def install() -> bool:
    """Route numba's cache writes through :func:`_save` and :func:`open_for_write` (idempotent). Returns whether
    they are routed so (False if this numba lacks the ``IndexDataCacheFile`` methods it replaces)."""
    global _installed
    if _installed:
        return True
    try:
        from numba.core.caching import IndexDataCacheFile
    except ImportError:
        return False
    needed = ("save", "_load_index", "_save_index", "_save_data", "_data_name", "_open_for_write")
    if not all(hasattr(IndexDataCacheFile, name) for name in needed):
        return False
    IndexDataCacheFile.save = _save
    IndexDataCacheFile._open_for_write = _open_for_write_method
    _installed = True
    return True


# ------------------------------------------------------------------------------------------ tables
def cache_file(module_file: str | os.PathLike, stem: str, sources: Iterable[str | os.PathLike]) -> Path:
    """Where a table built by the code in ``sources`` is kept: ``<stem>-<hash of the sources>.npz`` in the
    ``__pycache__`` next to ``module_file`` (or in ``NUMBA_CACHE_DIR`` when that is set, as numba does)."""
    h = hashlib.sha1()
    for src in sources:
        h.update(Path(src).read_bytes())
    base = os.environ.get("NUMBA_CACHE_DIR")
    directory = Path(base) if base else Path(module_file).resolve().parent / "__pycache__"
    return directory / f"{stem}-{h.hexdigest()[:16]}.npz"


def array_cache(path: str | os.PathLike, build: Callable[[], dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Arrays built once and kept in ``path`` (an ``.npz``, named by :func:`cache_file`): read if the file reads
    whole, else built with ``build()`` and written atomically under the directory's lock, and the older versions
    (the same stem, another hash) removed. A directory that cannot be written just means building every time."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile):
        pass  # missing or unreadable: build it again
    arrays = build()
    stem = path.name.rsplit("-", 1)[0]
    try:
        with locked(path.parent):
            with open_for_write(path) as f:
                np.savez(f, **arrays)
            for old in path.parent.glob(f"{stem}-*.npz"):
                if old.name != path.name and old.name.rsplit("-", 1)[0] == stem:
                    old.unlink()
    except OSError:
        pass
    return arrays
