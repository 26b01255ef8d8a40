"""A second process compiles part of the search's kernels while the first start's warm-up compiles the rest.

numba compiles on one core, and a cold first ``isready`` of shogi spends a minute in one process: the generator
first (about 10 s), then the search kernel, whose typing compiles each kernel it calls as it meets them (the
evaluation, move ordering, SEE, the one-ply mate test: about 20 s), and its own 25 s. On a machine with a second
core, a searcher's warm-up (``isready``) runs within :func:`helping`, which starts ``python -m search.prefetch
VARIANT`` beside it: the helper compiles the kernels of :func:`jobs` into the disk cache in the order the search
kernel's typing meets them, so that the typing finds them there and loads them (the same signatures: they are
derived from the very tables a search passes). A kernel the warm-up reaches while the helper still compiles it is
compiled by both (the cache writes are locked, ``engine/kernels/safecache.py``). The helper prints nothing and
changes nothing but the cache; if it fails, the warm-up compiles everything itself, as without it.
``tests/test_prefetch.py`` checks that every job is a signature the warm-up compiles.
"""
from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from typing import Any, Iterator

from engine import Position
from engine.kernels import CompileJob

from .alphabeta import Searcher
from .kernels import (_chance_statics, _mate_in_one, anticipate_chance, chance_game, search as search_kernel,
                      static_value)
from .mate import mate_node
from .movepick import _generate_stage, mp_init, score_moves

#: Variants whose warm-up may use a helper (those whose first start compiles the search kernel for tables of
#: their own; turncoat's loads shogi's).
PREFETCH_VARIANTS = ("shogi", "daishogi2017", "fantasista")


def position(variant: str) -> Any:
    """A position of ``variant`` as its searcher passes it to :class:`Searcher` (fantasista's: a turn position)."""
    if variant == "fantasista":
        from engine.variants.fantasista import new_game

        from .fantasista_shared import FxPosition
        return FxPosition.from_game(new_game())
    return Position.startpos(variant)


def _kernel_args(searcher: Searcher, pos: Any) -> tuple[Any, tuple]:
    """The searched copy of ``pos`` and the tables (P, T, E, S) ``searcher`` would pass the search kernel for it."""
    p = searcher._prepare(pos)
    return p, (p.state, p.tables, searcher.eval_tables(p.variant), searcher._tables(p))


def in_disk_cache(job: CompileJob) -> bool:
    """Whether numba's disk cache index holds ``job``'s signature (read through numba's internals)."""
    cache = job.kernel._cache
    return cache._index_key(job.signature(), job.kernel.targetctx.codegen()) in cache._cache_file._load_index()


def jobs(searcher: Searcher, pos: Any) -> list[CompileJob]:
    """The kernels the helper compiles, with arguments of the types a search of ``pos`` passes them, in the order
    the search kernel's typing meets them (the warm-up compiles the move generator before it: its callers come
    after the others), then the mate search's node (shogi's warm-up runs a mate search)."""
    p, (P, T, E, S) = _kernel_args(searcher, pos)
    M = searcher._mate_tables(p.variant.max_moves)
    ply = move = 0
    yes = True
    first = [CompileJob(static_value, (P, T, E, S, ply)), CompileJob(score_moves, (P, T, E, S, ply, 0, move, yes))]
    if chance_game(T):
        # fantasista: its chance-node helpers, and none of the move generator's callers (the helper would compile
        # the whole fantasista generator again while the warm-up compiles it, the first minute of its compile)
        return first + [CompileJob(_chance_statics, (P, T, E, S, ply, 0, 0)),
                        CompileJob(anticipate_chance, (P, T, E, S))]
    return first + [
        CompileJob(_mate_in_one, (P, T, S, ply)),
        CompileJob(mp_init, (P, T, E, S, ply, move, move, -1, yes, yes)),
        CompileJob(_generate_stage, (P, T, E, S, ply, yes)),
        CompileJob(mate_node, (P, T, M, 1, ply, yes)),
    ]


def prefetch(variant: str) -> int:
    """Compile :func:`jobs` for ``variant`` (into the disk cache); return how many compiled."""
    searcher = Searcher(hash_mb=1)
    done = 0
    for job in jobs(searcher, position(variant)):
        job.compile()
        done += 1
    return done


def _cached(variant: str, searcher: Searcher) -> bool:
    """Whether the disk cache already holds the search kernel for ``variant`` as ``searcher`` would call it (then
    no helper is worth a process). On any surprise from numba's internals, answers True."""
    try:
        _, (P, T, E, S) = _kernel_args(searcher, position(variant))
        return in_disk_cache(CompileJob(search_kernel, (P, T, E, S, 0, 0, 0, 0, False, False, chance_game(T))))
    except Exception:  # numba's internals moved: no helper
        return True


def _spare_core() -> bool:
    try:
        return len(os.sched_getaffinity(0)) >= 2
    except AttributeError:  # not Linux
        return (os.cpu_count() or 1) >= 2


def start(variant: str, searcher: Searcher) -> subprocess.Popen | None:
    """Start the helper for the first warm-up of ``searcher`` for ``variant`` when it can help: a variant of
    :data:`PREFETCH_VARIANTS`, a second core, a cold cache, and ``FANTASISTA_PREFETCH`` not ``0``. Returns the
    process (to :func:`finish`)."""
    if (variant not in PREFETCH_VARIANTS or os.environ.get("FANTASISTA_PREFETCH") == "0" or not _spare_core()
            or _cached(variant, searcher)):
        return None
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    try:
        return subprocess.Popen([sys.executable, "-m", "search.prefetch", variant], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    except OSError:
        return None


def finish(helper: subprocess.Popen | None) -> None:
    """End the helper once the warm-up is done: whatever it still compiles, the warm-up has compiled already (a
    cache write it leaves unfinished is swept, ``engine/kernels/safecache.py``)."""
    if helper is None:
        return
    if helper.poll() is None:
        helper.kill()
    helper.wait()


@contextmanager
def helping(variant: str, searcher: Searcher) -> Iterator[None]:
    """Run the block (the warm-up of ``searcher`` for ``variant``) with the helper beside it when it can help."""
    helper = start(variant, searcher)
    try:
        yield
    finally:
        finish(helper)


def main(argv: list[str]) -> int:
    """``python -m search.prefetch VARIANT``: 0 when every job compiled, else 1 or 2 (a line on stderr)."""
    if len(argv) != 1:
        print("usage: python -m search.prefetch VARIANT", file=sys.stderr)
        return 2
    try:
        prefetch(argv[0])
    except Exception as exc:  # the warm-up compiles whatever is missing: a line is enough
        print(f"search.prefetch: {argv[0]}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
