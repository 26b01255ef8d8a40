"""The compile helper of a cold first start (search/prefetch.py): its jobs are the warm-up's own signatures."""
import subprocess
import sys

import pytest

from search import Searcher, prefetch
from usi.compile import engine_step

VARIANTS = prefetch.PREFETCH_VARIANTS


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_job_is_a_signature_the_warm_up_compiles(variant):
    # the suite runs without the helper (conftest), so the cache index holds a job's signature only if a warm-up
    # (or a search) compiled it: a job with other argument types would be compiled by the helper for nothing
    engine_step(variant)  # what the first isready compiles
    jobs = prefetch.jobs(Searcher(hash_mb=1), prefetch.position(variant))
    assert len(jobs) >= 4
    assert [job.kernel.py_func.__qualname__ for job in jobs if not prefetch.in_disk_cache(job)] == []


def test_the_helper_compiles_its_jobs_and_is_not_started_on_a_warm_cache(monkeypatch):
    searcher = Searcher(hash_mb=1)
    searcher.warmup("shogi")
    assert prefetch.prefetch("shogi") == len(prefetch.jobs(searcher, prefetch.position("shogi")))
    monkeypatch.setenv("FANTASISTA_PREFETCH", "1")
    assert prefetch._cached("shogi", searcher)
    assert prefetch.start("shogi", searcher) is None  # warm: no process
    assert prefetch.start("mawarikudoi", searcher) is None  # not a variant the helper knows
    prefetch.finish(None)


def test_the_helper_process_refuses_bad_arguments_quietly():
    for args in ([], ["no-such-variant"]):
        r = subprocess.run([sys.executable, "-m", "search.prefetch", *args], capture_output=True, text=True,
                           timeout=120)
        assert r.returncode != 0
        assert r.stdout == "" and "Traceback" not in r.stderr and r.stderr.count("\n") == 1
