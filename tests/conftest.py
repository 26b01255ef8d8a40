"""Shared pytest configuration."""
from usi.kernel_cache import purge_stale_kernels

# Scripts run as subprocesses by the match tests, not test modules (importing them would read stdin).
collect_ignore = ["fake_engines"]


def pytest_configure(config):
    """Before any test module is imported (and so before any kernel loads): drop the numba cache files a change of a
    shared kernel made stale (engine.kernels.cache; an explicit call, not a side effect of importing engine)."""
    purge_stale_kernels()
