"""Shared pytest configuration."""
import os

from usi.kernel_cache import purge_stale_kernels

# No compile helper beside a cold warm-up (search/prefetch.py): the suite already runs a worker per core, and
# tests/test_prefetch.py checks that the warm-up itself compiles the helper's signatures. Child processes inherit it.
os.environ.setdefault("FANTASISTA_PREFETCH", "0")

# Scripts run as subprocesses by the match tests, not test modules (importing them would read stdin).
collect_ignore = ["fake_engines"]


def pytest_configure(config):
    """Before any test module is imported (and so before any kernel loads): drop the numba cache files a change of a
    shared kernel made stale (engine.kernels.cache; an explicit call, not a side effect of importing engine)."""
    purge_stale_kernels()
