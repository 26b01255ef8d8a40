"""Public and shared Python-layer helpers carry type hints on every parameter and their result (the project's
standard), checked on the functions added lately that had none."""
from __future__ import annotations

import inspect

import pytest

import engine.kernels as kernels
from gui import games as gui_games
from gui.session import Session
from search import games as search_games
from search import interface, registry
from search.position import PositionSearcher
from usi import games as usi_games
from usi import info as usi_info
from usi.engine import UsiEngine

FUNCTIONS = [
    kernels._call_type,
    kernels._one_signature_per_type,
    kernels.kernel,
    kernels.inner_kernel,
    kernels.callable_from_python,
    usi_games.action_count,
    usi_games.describe,
    gui_games._hides_a_plan,
    gui_games._turncoat_sfen,
    UsiEngine._searchmoves,
    Session._game_viewer,
    usi_games.searcher_settings,
    usi_info.format_info,
    registry.make_searcher,
    registry.searcher_class,
    interface.pv_tokens,
    interface.Limits.set_budget,
    PositionSearcher.think,
    PositionSearcher.mate,
    search_games.FantasistaGameSearcher.think,
    search_games.TurncoatGameSearcher.think,
    search_games.MawarikudoiGameSearcher.think,
    search_games.EnokianGameSearcher.think,
]


@pytest.mark.parametrize("func", FUNCTIONS, ids=lambda f: f.__qualname__)
def test_every_parameter_and_the_result_are_annotated(func):
    sig = inspect.signature(func)
    missing = [name for name, p in sig.parameters.items()
               if name != "self" and p.annotation is inspect.Parameter.empty]
    assert not missing and sig.return_annotation is not inspect.Signature.empty, (func.__qualname__, missing)
    assert func.__doc__ and func.__doc__.strip(), func.__qualname__


def test_the_session_viewer_maps_to_the_game_viewer():
    """-1 (everything) draws the game's true view (``None``), ``None`` (engines playing each other) nobody's secrets,
    a side its own view."""
    assert Session._game_viewer(-1) is None
    assert Session._game_viewer(None) == gui_games.NOBODY
    assert [Session._game_viewer(side) for side in (0, 1)] == [0, 1]
