"""The frontier kernel (``search/fantasista_kernels.py``) searches a depth-1 node, its rolls and the quiescence below
exactly as the Python node loop does: with it on or off a search gives the same turn, value, depth, node count and
chance-node count, for every fairy, the roll-blind and chance-aware engines, every way of counting, and when a
generation buffer overflows (the node is then searched in Python)."""
from __future__ import annotations

import random

import pytest

from engine.game import NodeKind
from engine.variants.fantasista import FAIRIES, new_game
from engine.variants.fantasista.kernels import I_CAP, make_genbuf
from search.fantasista import BUFFER_PLIES, FantasistaSearcher


def _positions(reserved: str = "4-8") -> list:
    """Positions of seeded games (every fairy on both sides), at and near the plies where rolls come."""
    rng = random.Random(2026)
    out = []
    for k, fairies in enumerate(((FAIRIES[0], FAIRIES[1]), (FAIRIES[2], FAIRIES[3]), (FAIRIES[1], FAIRIES[2]),
                                 (FAIRIES[3], FAIRIES[0]))):
        g = new_game(fairies, reserved=reserved)
        player = FantasistaSearcher(False, reserved=reserved)
        while g.move_number <= 47 and g.node_kind() is not NodeKind.TERMINAL:
            if g.node_kind() is NodeKind.CHANCE:
                g.apply(f"roll={rng.randint(1, 20)}")
                continue
            if g.phase != "target" and g.move_number % 15 in (13, 14, 0, 1):
                out.append(g.copy())
            g.apply(player.search(g, depth=2, node_limit=300).best if g.phase != "target"
                    else g.legal_actions()[0])
    return out


def _result(searcher: FantasistaSearcher, g, nodes: int):
    r = searcher.search(g, depth=6, node_limit=nodes)
    return r.best, r.score, r.depth, r.nodes, searcher.chance_nodes


@pytest.mark.parametrize("kwargs", [
    {"chance_aware": True},
    {"chance_aware": False},
    {"chance_aware": True, "count_chance_nodes": True},
    {"chance_aware": True, "quiescence": False},
    {"chance_aware": True, "reserved": "3"},  # the most probable row is a target choice (ayumi / yokaku)
    {"chance_aware": True, "reserved": "nothing"},
    {"chance_aware": True, "late_move_reduction": True},  # depth-0 null-window searches inside node2_k
    {"chance_aware": False, "late_move_reduction": True},
    {"chance_aware": True, "late_move_reduction": True, "quiescence": False},
    {"chance_aware": True, "late_move_reduction": True, "count_chance_nodes": True},
    {"chance_aware": True, "chance_sides": "own"},  # the opponent's rolls treated as nothing
    {"chance_aware": True, "chance_sides": "opponent", "late_move_reduction": True},
    {"chance_aware": True, "quiescence_checks": True},  # checks at the quiescence's first ply, no stand pat in check
    {"chance_aware": False, "quiescence_checks": True},
    {"chance_aware": True, "quiescence_checks": True, "late_move_reduction": True},
    {"chance_aware": True, "prune_twin_drops": False},  # ordinary drops beside token twins searched too
    {"chance_aware": True, "prune_twin_drops": False, "quiescence_checks": True},
    {"chance_aware": True, "positional": True},  # piece-square terms in the evaluation (incremental in ordering)
    {"chance_aware": False, "positional": True},
], ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_frontier_kernel_searches_as_the_python_loop(kwargs):
    reserved = kwargs.get("reserved", "4-8")
    positions = _positions(reserved)
    assert len(positions) >= 12
    seen_chance = 0
    for g in positions:
        fast = _result(FantasistaSearcher(**kwargs), g, 2500)
        slow = _result(FantasistaSearcher(**kwargs, frontier_kernel=False), g, 2500)
        assert fast == slow, (g.sfen(), fast, slow)
        seen_chance += fast[4]
    assert (seen_chance > 0) == kwargs["chance_aware"]


@pytest.mark.parametrize("kwargs", [
    {"chance_aware": True},
    {"chance_aware": False},
    {"chance_aware": True, "count_chance_nodes": True},
    {"chance_aware": True, "reserved": "3"},
    {"chance_aware": True, "quiescence_checks": True},
    {"chance_aware": True, "chance_sides": "own"},
], ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_depth3_kernel_searches_as_the_python_loop(kwargs):
    """Budgets large enough for depth-4 iterations, whose depth-3 nodes are one ``node3_k`` call each: the same
    searches as the Python loop, with node3_k called (counted through a wrapper) and chance nodes below it."""
    reserved = kwargs.get("reserved", "4-8")
    calls = 0
    for g in _positions(reserved)[::4]:
        fast = FantasistaSearcher(**kwargs)
        node3 = fast._node3_k

        def counted(*args, node3=node3):
            nonlocal calls
            calls += 1
            return node3(*args)

        fast._node3_k = counted
        assert _result(fast, g, 12000) == _result(FantasistaSearcher(**kwargs, frontier_kernel=False), g, 12000), \
            g.sfen()
    assert calls >= 10


def test_frontier_kernel_overflow_falls_back_to_python():
    """Buffers too small for any position: the kernels overflow and hand their nodes to the Python loop (which
    grows the buffers). The TT entries a kernel stored before it overflowed stay, so the tree may differ from the
    all-Python search's, but a full-depth search gives the same value, and the nodes the kernel dropped are not
    counted (a budget still ends the search where it says)."""
    for g in _positions()[3:6]:
        small = FantasistaSearcher(True)
        small.bufs = [make_genbuf(4) for _ in range(BUFFER_PLIES + 2)]
        fast, slow = small.search(g, depth=2), FantasistaSearcher(True, frontier_kernel=False).search(g, depth=2)
        assert (fast.score, fast.depth) == (slow.score, slow.depth), g.sfen()
        # grown by the Python loop (ply 2 is the quiescence's: its captures may fit in 4)
        assert all(int(b.info[I_CAP]) > 4 for b in small.bufs[:2])
        small.bufs = [make_genbuf(4) for _ in range(BUFFER_PLIES + 2)]
        assert small.search(g, depth=6, node_limit=1500).nodes == 1501


def test_direct_kernel_calls_search_as_numbas_dispatcher_does():
    """The searcher calls its hot kernels through ``engine.kernels.DirectCall`` (the compiled entry point, no
    per-call type dispatch): a searcher whose calls go through numba's dispatchers gives the same searches."""
    from engine.kernels import DirectCall
    direct, dispatched = FantasistaSearcher(), FantasistaSearcher()
    names = ("_frontier_k", "_node2_k", "_node3_k", "_legal_turns_k", "_capture_turns_k", "_evaluate_many",
             "_prune_twin_drops")
    for name in names:
        setattr(dispatched, name, getattr(dispatched, name).dispatcher)
    for g in _positions()[::6]:
        assert _result(direct, g.copy(), 3000) == _result(dispatched, g.copy(), 3000)
    for name in names:
        call = getattr(direct, name)
        assert isinstance(call, DirectCall)  # and past its first call, on the overload that call loaded:
        assert call._call == call.dispatcher.overloads[call.dispatcher.signatures[0]].entry_point
