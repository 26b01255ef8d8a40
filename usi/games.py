"""The USI adapter layer for the games played as an :class:`engine.game.GameState` (fantasista, turncoat,
mawarikudoi, enokian): their options, how a state is built from ``position``, and the settings each game's searcher
(:mod:`search.games`, built by :func:`search.registry.make_searcher`) takes from the options.

:mod:`usi.engine` (the USI loop) and :mod:`usi.game_referee` (the match referee) use this module; the shogi path
(``engine.Position`` + ``search.Searcher``) does not go through it. Nothing heavy is imported at module level: the
option list is printed before numba is loaded.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable

from search.games import FantasistaGameSearcher  # light: no numba until a searcher is built

if TYPE_CHECKING:  # nothing heavy at module level (see above)
    from engine.game import GameState

FANTASISTA_FAIRIES = ("hiko", "ayumi", "yokaku", "ginsara")
FANTASISTA_RESERVED = ("4-8", "1", "2", "3", "nothing")
#: A fairy option's values: a fairy, or ``choose`` (the side's fairy is a pre-game decision: ``go`` at the pre-game
#: node is answered ``bestmove fairy:<name>[,reserved:<result>]``).
FANTASISTA_FAIRY_CHOICES = FANTASISTA_FAIRIES + ("choose",)
#: A per-side reserved option's values: ``default`` (what ``FantasistaReserved`` says), ``choose`` (a pre-game
#: decision), or a result: ``4-8``, ``nothing``, ``<fairy>:<1|2|3|4-8>`` (any row of any fairy's table).
FANTASISTA_RESERVED_SIDE = ("default", "choose", "4-8", "nothing") + tuple(
    f"{f}:{r}" for f in FANTASISTA_FAIRIES for r in ("1", "2", "3", "4-8"))
#: Mawarikudoi face probabilities as USI spin options in per mille: (option, new_game keyword, default).
MAWARIKUDOI_FACES = (("Mawarikudoi_FaceUp", "face_up", 450), ("Mawarikudoi_FaceDown", "face_down", 450),
                     ("Mawarikudoi_Side", "side", 80), ("Mawarikudoi_Upright", "upright", 18),
                     ("Mawarikudoi_UpsideDown", "upside_down", 2))
MAWARIKUDOI_FACE_NAMES = tuple(name for name, _, _ in MAWARIKUDOI_FACES)

#: The variants' options as (name, kind, default, min, max, vars, variant); :mod:`usi.engine` turns them into
#: ``Option`` records. Names match ``docs/fantasista.md``, ``docs/enokian.md``, ``docs/mawarikudoi.md`` and
#: ``docs/usi.md``. Most are rules; the ones in :data:`SEARCH_OPTION_NAMES` only configure the variant's engine.
RULE_OPTIONS: tuple = (
    ("FantasistaFairySente", "combo", "hiko", None, None, FANTASISTA_FAIRY_CHOICES, "fantasista"),
    ("FantasistaFairyGote", "combo", "hiko", None, None, FANTASISTA_FAIRY_CHOICES, "fantasista"),
    ("FantasistaReserved", "combo", "4-8", None, None, FANTASISTA_RESERVED, "fantasista"),
    ("FantasistaReservedSente", "combo", "default", None, None, FANTASISTA_RESERVED_SIDE, "fantasista"),
    ("FantasistaReservedGote", "combo", "default", None, None, FANTASISTA_RESERVED_SIDE, "fantasista"),
    # how the search values a roll (FantasistaGameSearcher.CHANCE_SEARCHES)
    ("FantasistaChanceSearch", "combo", "main", None, None, FantasistaGameSearcher.CHANCE_SEARCHES, "fantasista"),
    # false: the searcher ignores coming d20 rolls (the roll-blind baseline)
    ("FantasistaChanceAware", "check", True, None, None, (), "fantasista"),
    ("EnokianMichizane", "combo", "1a", None, None, ("1a", "9i"), "enokian"),
) + tuple((name, "spin", default, 0, 1000, (), "mawarikudoi") for name, _, default in MAWARIKUDOI_FACES)


def is_game_variant(variant_id: str) -> bool:
    """Whether ``variant_id`` is played as a GameState (the search registry's games)."""
    from search.registry import is_game_state_variant

    return is_game_state_variant(variant_id)


def game_module(variant_id: str):
    """The rules module of a GameState game (``ValueError`` when it is missing or broken)."""
    from engine.variants import game_module as rules_module

    try:
        mod = rules_module(variant_id)
    except ValueError:
        raise
    except Exception as exc:  # a module being written, or broken: not playable
        raise ValueError(f"variant {variant_id} not implemented yet ({type(exc).__name__}: {exc})") from None
    if not hasattr(mod, "new_game"):
        raise ValueError(f"variant {variant_id} not implemented yet (no new_game)")
    return mod


def searcher_settings(variant_id: str, opt: Callable[[str], Any]) -> dict[str, Any]:
    """The settings a GameState game's searcher is built with (``search.registry.make_searcher``), from the options:
    fantasista's search options, mawarikudoi's throw probabilities, enokian's Michizane square."""
    if variant_id == "fantasista":
        settings = {setting: read(name, opt(name)) for name, (setting, read) in FANTASISTA_SEARCH_SETTINGS.items()}
        # the shared search's own options, as text (checked at setoption; parsed by the searcher)
        settings.update(search_features=str(opt("SearchFeatures")), search_params=str(opt("SearchParams")),
                        eval_mode=str(opt("EvalMode")), threads=int(opt("Threads")))
        return settings
    if variant_id in ("mawarikudoi", "enokian"):
        return rule_kwargs(variant_id, opt)
    return {}


# ------------------------------------------------------------------------------------------ states
def check_value(name: str, value: Any) -> bool:
    """A check option's value: a bool as is, or ``true`` / ``false`` in any case (the referee passes strings);
    anything else raises ``ValueError`` with the same message as a bad ``setoption``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ValueError(f"option {name} takes true or false, not {value!r}")


def combo_value(name: str, value: Any, choices: tuple[str, ...]) -> str:
    """A combo option's value (any case), or ``ValueError`` with the same message as a bad ``setoption``."""
    for choice in choices:
        if str(value).lower() == choice.lower():
            return choice
    raise ValueError(f"option {name} takes one of {', '.join(choices)}, not {value!r}")


#: The fantasista search options, the ``FantasistaGameSearcher`` settings they set and how their values are read.
FANTASISTA_SEARCH_SETTINGS: dict[str, tuple[str, Callable[[str, Any], Any]]] = {
    "FantasistaChanceSearch": ("chance",
                               lambda name, v: combo_value(name, v, FantasistaGameSearcher.CHANCE_SEARCHES)),
    "FantasistaChanceAware": ("chance_aware", check_value),
}

#: Options of :data:`RULE_OPTIONS` that do not change the game (lower case): setting one keeps the position; the
#: searcher is built again with the new settings before the next search.
SEARCH_OPTION_NAMES = frozenset(name.lower() for name in FANTASISTA_SEARCH_SETTINGS)

#: The rule options (lower-case name → variant): changing one resets that variant's position.
RULE_OPTION_NAMES = {o[0].lower(): o[6] for o in RULE_OPTIONS if o[0].lower() not in SEARCH_OPTION_NAMES}


def rule_kwargs(variant_id: str, opt: Callable[[str], Any]) -> dict:
    """``new_game`` keyword arguments from the rule options (``opt(name)`` gives an option's value; values may be
    strings, as the referee passes them)."""
    if variant_id == "fantasista":
        fairies = (str(opt("FantasistaFairySente")).lower(), str(opt("FantasistaFairyGote")).lower())
        reserved = str(opt("FantasistaReserved"))
        for f in fairies:
            if f not in FANTASISTA_FAIRY_CHOICES:
                raise ValueError(f"unknown fantasista fairy {f!r} (one of {', '.join(FANTASISTA_FAIRY_CHOICES)})")
        if reserved not in FANTASISTA_RESERVED:
            raise ValueError(f"FantasistaReserved takes one of {', '.join(FANTASISTA_RESERVED)}, not {reserved!r}")
        sides = []
        for name, f in (("FantasistaReservedSente", fairies[0]), ("FantasistaReservedGote", fairies[1])):
            v = combo_value(name, opt(name), FANTASISTA_RESERVED_SIDE)
            v = reserved if v == "default" else None if v == "choose" else v
            if v in ("1", "2", "3") and f == "choose":
                raise ValueError(f"FantasistaReserved {v} names a row of the own fairy's table, which is not chosen "
                                 f"yet: set {name} (e.g. hiko:{v})")
            sides.append(v)
        for name, (_, read) in FANTASISTA_SEARCH_SETTINGS.items():  # search options: checked, not rules
            read(name, opt(name))
        return {"fairies": tuple(None if f == "choose" else f for f in fairies), "reserved": tuple(sides)}
    if variant_id == "enokian" and str(opt("EnokianMichizane")) not in ("1a", "9i"):
        raise ValueError(f"EnokianMichizane takes 1a or 9i, not {opt('EnokianMichizane')!r}")
    if variant_id == "enokian":
        return {"michizane": str(opt("EnokianMichizane"))}
    if variant_id == "mawarikudoi":
        per_mille = {kw: int(opt(name)) for name, kw, _ in MAWARIKUDOI_FACES}
        if sum(per_mille.values()) != 1000:
            raise ValueError("the Mawarikudoi_* face probabilities (per mille) must sum to 1000, not "
                             f"{sum(per_mille.values())}")
        return {kw: v / 1000 for kw, v in per_mille.items()}
    return {}


def default_rule_options() -> dict[str, Any]:
    return {o[0]: o[2] for o in RULE_OPTIONS}


def option_getter(values: dict[str, Any]) -> Callable[[str], Any]:
    """``opt(name)`` over a dict of option values (case-insensitive), falling back to the defaults."""
    low = {k.lower(): v for k, v in values.items()}
    defaults = {k.lower(): v for k, v in default_rule_options().items()}
    return lambda name: low.get(name.lower(), defaults.get(name.lower()))


def new_state(variant_id: str, opt: Callable[[str], Any]):
    """The start state with the rule options."""
    return game_module(variant_id).new_game(**rule_kwargs(variant_id, opt))


def state_from_sfen(variant_id: str, sfen: str, opt: Callable[[str], Any]):
    """A state from an (extended) SFEN; the options SFEN does not carry (fantasista ``reserved``, mawarikudoi
    probabilities) come from ``opt``."""
    from engine.game import GameError

    from . import sfen_check

    mod = game_module(variant_id)
    kw = rule_kwargs(variant_id, opt)
    sfen_check.check_before(variant_id, sfen)  # the checks shared by every variant (usi/sfen_check.py)
    if variant_id == "fantasista":
        # the SFEN's s= item wins; a result left to the pre-game decision is 4-8 in a position sent as an SFEN
        reserved = tuple("4-8" if r is None else r for r in kw["reserved"])
        state = mod.FantasistaState.from_sfen(sfen, reserved=reserved)
    elif variant_id == "turncoat":
        state = mod.TurncoatGame.from_sfen(sfen)
    elif variant_id == "enokian":
        state = mod.EnokianState.from_sfen(sfen)
    elif variant_id == "mawarikudoi":
        state = mod.MawarikudoiState.from_sfen(sfen, mod.ThrowProbabilities(**kw))
    else:
        raise GameError(f"no SFEN parser for {variant_id}")
    sfen_check.check_after(variant_id, sfen, state)
    return state


def build_state(variant_id: str, head: list[str], tokens: list[str], opt: Callable[[str], Any]):
    """``position`` arguments → a state: ``head`` is ``["startpos"]`` or ``["sfen", ...]``; every token (moves and
    events alike) is applied in order. Raises ``ValueError`` (``GameError`` is one) naming the bad part."""
    if head and head[0].lower() == "startpos" and len(head) == 1:
        state = new_state(variant_id, opt)
    elif head and head[0].lower() == "sfen" and len(head) > 1:
        state = state_from_sfen(variant_id, " ".join(head[1:]), opt)
    else:
        raise ValueError(f"expected 'startpos' or 'sfen <sfen>', got {' '.join(head)!r}")
    for i, tok in enumerate(tokens):
        try:
            state.apply(tok)
        except ValueError as exc:
            raise ValueError(f"token {i + 1} ({tok}): {exc}") from None
    return state


#: ``d actions``: this many action tokens per line.
ACTIONS_PER_LINE = 10


def action_count(state: GameState) -> int:
    """How many legal actions the side to move has, without listing them where the game counts them faster: a long
    mawarikudoi throw's turn has about 10,000 distinct ends, and writing out their tokens took seconds (its
    ``end_states`` are those ends, one action each)."""
    if getattr(state, "phase", None) == "turn" and hasattr(state, "end_states"):
        return len(state.end_states())
    return len(state.legal_actions())


def describe(state: GameState, actions: bool = False) -> list[str]:
    """Lines for the ``d`` debug command: the diagram (if the game draws one), the SFEN, and the node kind with the
    number of actions or events; ``actions``: then the legal actions themselves (``d actions``),
    :data:`ACTIONS_PER_LINE` a line."""
    lines = []
    if hasattr(state, "diagram"):
        lines += state.diagram().splitlines()
    kind = state.node_kind().value
    lines.append(f"sfen {state.sfen()}")
    lines.append(f"node {kind} side {state.side_to_move()}"
                 + (f" actions {action_count(state)}" if kind == "decision" else "")
                 + (f" events {len(state.chance_events())}" if kind == "chance" else "")
                 + (f" result {state.result()[0]} ({state.result()[1]})" if state.result() is not None else ""))
    if actions:
        listed = state.legal_actions() if kind == "decision" else [t for t, _ in state.chance_events()]
        lines += [("actions " if kind == "decision" else "events ") + " ".join(listed[i:i + ACTIONS_PER_LINE])
                  for i in range(0, len(listed), ACTIONS_PER_LINE)]
    return lines


def is_legal(state, token: str) -> bool:
    """Whether ``state.apply(token)`` would be accepted (tried on a copy)."""
    try:
        state.copy().apply(token)
        return True
    except ValueError:
        return False


def sample_event(events: list[tuple[str, float]], rng) -> str:
    """One event drawn from ``(token, probability)`` pairs with ``rng`` (a ``random.Random``), reproducibly."""
    tokens = [t for t, _ in events]
    weights = [max(0.0, p) for _, p in events]
    if not math.isfinite(sum(weights)) or sum(weights) <= 0:
        raise ValueError("chance node without probabilities")
    return rng.choices(tokens, weights=weights, k=1)[0]
