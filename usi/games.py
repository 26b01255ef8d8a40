"""The USI adapter layer for the games played as an :class:`engine.game.GameState` (fantasista, turncoat,
mawarikudoi, enokian): their rule options, how a state is built from ``position``, and one *thinker* per game that
wraps the game's own engine in ``search/`` behind one interface (limits, ``stop``, ``info`` lines).

:mod:`usi.engine` (the USI loop) and :mod:`usi.game_referee` (the match referee) use this module; the shogi path
(``engine.Position`` + ``search.Searcher``) does not go through it. Nothing heavy is imported at module level: the
option list is printed before numba is loaded.

A thinker's ``think(state, limits, send)`` returns the action token for the side to move of ``state`` (a decision
node), printing ``info`` lines through ``send``. The :class:`ThinkLimits` of one ``go`` exist before its search
thread starts, and the USI loop's ``stop`` and ``ponderhit`` change them (``limits.stop``, the deadlines,
``unbounded``): a thinker reads them as it starts and while it searches, so that neither is lost however early it
comes. ``stop()`` may be called from another thread to interrupt a running search promptly (a kernel that polls a
flag of its own); ``think`` then returns soon with the best answer found so far (each thinker finishes at least its
first, cheap iteration).
"""
from __future__ import annotations

import importlib
import math
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # nothing heavy at module level (see above)
    from engine.game import GameState

#: The GameState games and the module holding each one's ``new_game``.
GAME_MODULES = {
    "fantasista": "engine.variants.fantasista",
    "turncoat": "engine.variants.turncoat",
    "mawarikudoi": "engine.variants.mawarikudoi",
    "enokian": "engine.variants.enokian",
}
GAME_VARIANTS = tuple(GAME_MODULES)

FANTASISTA_FAIRIES = ("hiko", "ayumi", "yokaku", "ginsara")
FANTASISTA_RESERVED = ("4-8", "1", "2", "3", "nothing")
#: A fairy option's values: a fairy, or ``choose`` (the side's fairy is a pre-game decision: ``go`` at the pre-game
#: node is answered ``bestmove fairy:<name>[,reserved:<result>]``).
FANTASISTA_FAIRY_CHOICES = FANTASISTA_FAIRIES + ("choose",)
#: A per-side reserved option's values: ``default`` (what ``FantasistaReserved`` says), ``choose`` (a pre-game
#: decision), or a result: ``4-8``, ``nothing``, ``<fairy>:<1|2|3|4-8>`` (any row of any fairy's table).
FANTASISTA_RESERVED_SIDE = ("default", "choose", "4-8", "nothing") + tuple(
    f"{f}:{r}" for f in FANTASISTA_FAIRIES for r in ("1", "2", "3", "4-8"))
FANTASISTA_CHANCE_SIDES = ("both", "own", "opponent")
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
    # false: the searcher ignores coming d20 rolls (the roll-blind baseline of search/fantasista.py)
    ("FantasistaChanceAware", "check", True, None, None, (), "fantasista"),
    # true: late-move reduction in the fantasista search (FantasistaSearcher.late_move_reduction)
    ("FantasistaLateMoveReduction", "check", False, None, None, (), "fantasista"),
    # true: checks at the first quiescence ply, every evasion searched in check (FantasistaSearcher.quiescence_checks)
    ("FantasistaQuiescenceChecks", "check", False, None, None, (), "fantasista"),
    # false: ordinary drops searched beside their token twins too (FantasistaSearcher.prune_twin_drops)
    ("FantasistaPruneTwinDrops", "check", True, None, None, (), "fantasista"),
    # true: the shogi engine's piece-square terms in the fantasista evaluation (FantasistaSearcher.positional)
    ("FantasistaPositional", "check", True, None, None, (), "fantasista"),
    # whose rolls the chance-aware search expands (FantasistaSearcher.chance_sides)
    ("FantasistaChanceSides", "combo", "both", None, None, FANTASISTA_CHANCE_SIDES, "fantasista"),
    ("EnokianMichizane", "combo", "1a", None, None, ("1a", "9i"), "enokian"),
) + tuple((name, "spin", default, 0, 1000, (), "mawarikudoi") for name, _, default in MAWARIKUDOI_FACES)


def is_game_variant(variant_id: str) -> bool:
    return variant_id in GAME_MODULES


def game_module(variant_id: str):
    """The rules module of a GameState game (``ValueError`` when it is missing or broken)."""
    try:
        mod = importlib.import_module(GAME_MODULES[variant_id])
    except KeyError:
        raise ValueError(f"{variant_id!r} is not a GameState game") from None
    except Exception as exc:  # a module being written, or broken: not playable
        raise ValueError(f"variant {variant_id} not implemented yet ({type(exc).__name__}: {exc})") from None
    if not hasattr(mod, "new_game"):
        raise ValueError(f"variant {variant_id} not implemented yet (no new_game)")
    return mod


def available_variants() -> tuple[str, ...]:
    """Every playable id: ``engine.variants.available_variants()`` plus the GameState games whose rules module
    imports (mawarikudoi may not be registered in ``engine.variants._GAMES`` yet)."""
    from engine.variants import VARIANT_IDS, available_variants as registered

    out = set(registered())
    for v in GAME_VARIANTS:
        if v not in out:
            try:
                game_module(v)
                out.add(v)
            except ValueError:
                pass
    return tuple(v for v in VARIANT_IDS if v in out)


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


#: The fantasista search options, the ``FantasistaSearcher`` settings they set and how their values are read.
FANTASISTA_SEARCH_SETTINGS: dict[str, tuple[str, Callable[[str, Any], Any]]] = {
    "FantasistaChanceAware": ("chance_aware", check_value),
    "FantasistaLateMoveReduction": ("late_move_reduction", check_value),
    "FantasistaQuiescenceChecks": ("quiescence_checks", check_value),
    "FantasistaPruneTwinDrops": ("prune_twin_drops", check_value),
    "FantasistaPositional": ("positional", check_value),
    "FantasistaChanceSides": ("chance_sides", lambda name, v: combo_value(name, v, FANTASISTA_CHANCE_SIDES)),
}

#: Options of :data:`RULE_OPTIONS` that do not change the game (lower case): setting one keeps the position and
#: the thinker, which reads it again before each search.
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


# ------------------------------------------------------------------------------------------ limits
@dataclass
class ThinkLimits:
    """What one ``go`` allows: depth / nodes, and soft / hard deadlines as ``time.perf_counter()`` instants (the
    thinker starts no new iteration after the soft one; the hard one aborts). ``unbounded``: ``go infinite`` or
    ``go ponder`` — search until ``stop`` (the deadlines may be set later by ``ponderhit``)."""

    depth: int | None = None
    nodes: int | None = None
    soft_at: float | None = None
    hard_at: float | None = None
    unbounded: bool = False
    stop: threading.Event = field(default_factory=threading.Event)
    t0: float = field(default_factory=time.perf_counter)
    #: called after :meth:`set_budget` (a ``ponderhit``), for a thinker whose search must be told the new deadlines
    on_budget: Callable[[], None] | None = None

    def set_budget(self, soft_ms: int, hard_ms: int, now: float | None = None) -> None:
        """Deadlines ``soft_ms`` / ``hard_ms`` after ``now`` (default: now). ``ponderhit`` calls it while a thinker
        may be reading: the hard deadline is stored first, as a thinker takes ``soft_at`` as the sign of a clock."""
        now = time.perf_counter() if now is None else now
        self.hard_at = now + hard_ms / 1000
        self.soft_at = now + soft_ms / 1000
        hook = self.on_budget
        if hook is not None:
            hook()

    @property
    def timed(self) -> bool:
        return self.soft_at is not None

    def soft_passed(self) -> bool:
        return self.stop.is_set() or (self.soft_at is not None and time.perf_counter() >= self.soft_at)

    def hard_passed(self) -> bool:
        return self.stop.is_set() or (self.hard_at is not None and time.perf_counter() >= self.hard_at)

    def soft_left_s(self) -> float | None:
        return None if self.soft_at is None else max(0.0, self.soft_at - time.perf_counter())

    def elapsed_ms(self) -> int:
        return int((time.perf_counter() - self.t0) * 1000)

    def open_ended(self) -> bool:
        """Nothing but ``stop`` ends the search (no depth, nodes or clock; infinite or ponder)."""
        return self.unbounded and self.depth is None and self.nodes is None and self.soft_at is None


def _winprob_cp(p: float) -> int:
    """A win probability as a symmetric centipawn-like score for two-player games (±1000 at certainty)."""
    return int(round(2000 * (min(1.0, max(0.0, p)) - 0.5)))


# ------------------------------------------------------------------------------------------ thinkers
class Thinker:
    """Base: ``think`` must be overridden; ``stop`` sets the flag the thinker polls."""

    variant = ""

    def __init__(self, opt: Callable[[str], Any], seed: int = 0) -> None:
        self.opt, self.seed = opt, seed
        self._limits: ThinkLimits | None = None

    def warmup(self) -> None:
        """Compile / build tables (called on ``isready``)."""

    def clear(self) -> None:
        """A new game (``usinewgame``)."""

    def stop(self) -> None:
        if self._limits is not None:
            self._limits.stop.set()

    def progress(self) -> int | None:
        """Nodes searched so far by the running ``think``, read from another thread (the USI engine's progress
        line during a long iteration), or ``None`` when the engine does not count them as it goes."""
        return None

    def think(self, state, limits: ThinkLimits, send: Callable[[str], None]) -> str:
        raise NotImplementedError


class FantasistaThinker(Thinker):
    """``search.fantasista.FantasistaSearcher`` with the USI limits: its own iterative deepening and node budget,
    plus a hard-limit / ``stop`` abort through its ``should_stop`` hook. The search options
    (:data:`FANTASISTA_SEARCH_SETTINGS`: ``FantasistaChanceAware``, false = the roll-blind baseline;
    ``FantasistaLateMoveReduction``, ``FantasistaQuiescenceChecks``, ``FantasistaPruneTwinDrops``,
    ``FantasistaPositional``, ``FantasistaChanceSides``) are read again
    before every search; a change rebuilds the searcher."""

    variant = "fantasista"
    DEFAULT_DEPTH = 2  # plain ``go`` without limits
    MAX_DEPTH = 32
    # A magic target: each eligible piece's position searched this deep unless ``go depth`` says (a node budget is
    # shared out). Depth 2-3 tied every pawn of the case; depth 4 told them apart (docs/fantasista.md).
    TARGET_DEPTH = 4

    def __init__(self, opt, seed=0):
        super().__init__(opt, seed)
        from search.fantasista import FantasistaSearcher

        self._cls = FantasistaSearcher
        self._abortable = False
        self._soft_aborts = False  # the soft deadline aborts too (the main search; not the target phase)
        self.searcher = self._new_searcher()

    def _settings(self) -> dict[str, Any]:
        """The searcher's settings from the search options."""
        return {setting: read(name, self.opt(name)) for name, (setting, read) in FANTASISTA_SEARCH_SETTINGS.items()}

    def _new_searcher(self):
        searcher = self._cls(**self._settings())  # the reserved results come with each game (state.reserved)
        searcher.should_stop = self._should_stop
        return searcher

    def _should_stop(self) -> bool:
        """The searcher's abort hook, polled at every node: ``stop``, or the deadline passed (it then answers from
        its deepest completed iteration). The limits are read afresh each time, so a ``ponderhit`` that brings a
        clock reaches a search that began without one; the soft deadline aborts as the searcher's own time limit
        does."""
        limits = self._limits
        if not self._abortable or limits is None:
            return False
        return limits.soft_passed() if self._soft_aborts else limits.hard_passed()

    def clear(self) -> None:
        self.searcher = self._new_searcher()

    def progress(self) -> int | None:
        return int(self.searcher.nodes)

    def warmup(self) -> None:
        from engine.variants.fantasista import new_game

        # depth 4 runs every search kernel (frontier_k at depth 1, node2_k at depth 2, node3_k at depth 3, the
        # Python loop above), so none is compiled during the first go
        self.searcher.search(new_game(), depth=4)

    def think(self, state, limits, send):
        from search import MATE

        self._limits = limits
        s = self.searcher
        if any(getattr(s, k) != v for k, v in self._settings().items()):
            s = self.searcher = self._new_searcher()
        if state.pregame_side() is not None:  # fairy (and reserved result): the magic worth most (magic_worth)
            token, worth, _ = s.choose_pregame(state)
            send(f"info depth 0 time {limits.elapsed_ms()} score cp {int(round(worth))} pv {token}")
            return token
        if state.phase == "target":  # each target searched as a decision (FantasistaSearcher.best_target)
            self._abortable = True
            try:
                r = s.best_target(state, depth=limits.depth or self.TARGET_DEPTH, node_limit=limits.nodes or 0)
            finally:
                self._abortable = False
            send(f"info depth {max(r.depth, 1)} time {limits.elapsed_ms()} nodes {r.nodes} "
                 f"score cp {int(round(r.score))} pv {r.best}")
            return r.best
        # a node budget deepens until it is spent (like a clock); only a plain ``go`` stops at DEFAULT_DEPTH
        deepen = limits.unbounded or limits.timed or limits.nodes is not None
        max_depth = limits.depth or (self.MAX_DEPTH if deepen else self.DEFAULT_DEPTH)
        soft = None if limits.unbounded else limits.soft_left_s()
        # stop (or a ponderhit without a clock) before the search began: depth 1, not a greedy reply
        self._abortable = not limits.stop.is_set()
        if not self._abortable:
            max_depth, soft = 1, None
        self._soft_aborts = True
        try:
            r = s.search(state, depth=max_depth, time_limit=soft, node_limit=limits.nodes or 0)
        finally:
            self._abortable = self._soft_aborts = False
        if r.best is None:
            acts = state.legal_actions()
            return acts[0] if acts else None
        v = r.score
        score = f"mate {1 if v > 0 else -1}" if abs(v) >= MATE else f"cp {int(round(v))}"
        ms = limits.elapsed_ms()
        send(f"info depth {max(r.depth, 1)} time {ms} nodes {r.nodes} nps {r.nodes * 1000 // max(ms, 1)} "
             f"score {score} pv {r.best}")
        return r.best


class TurncoatThinker(Thinker):
    """``search.turncoat.TurncoatEngine`` over the shared shogi searcher (``USI_Hash`` sizes its table), with the
    USI limits as one :class:`search.Limits`: the clock's soft and hard limits, depth, nodes, ``go infinite`` /
    ``go ponder`` (a ``ponderhit`` brings the clock to the running search). Its belief over the enemy's plan is kept
    between ``go`` commands of one game. Its secret choices (the plan, the enemy plans sampled) come from ``Seed``:
    0, the default, means unset and draws them from OS entropy afresh for every game (a fixed default would name the
    same plan every game); any other value makes them reproducible."""

    variant = "turncoat"

    def __init__(self, opt, seed=0):
        super().__init__(opt, seed)
        from search import Searcher

        self.searcher = Searcher(hash_mb=int(opt("USI_Hash") or 16))
        self.clear()

    def clear(self) -> None:
        from search.turncoat import TurncoatEngine

        self.searcher.clear()
        self.engine = TurncoatEngine(seed=self.seed or None, searcher=self.searcher)  # None: OS entropy

    def warmup(self) -> None:
        self.searcher.warmup("shogi")

    def stop(self) -> None:
        super().stop()
        self.engine.stop()

    def progress(self) -> int | None:
        return self.engine.progress()

    def think(self, state, limits, send):
        from search import MATE_BOUND, Limits
        from usi.info import format_info
        from usi.timeman import PLAIN_GO_MS

        self._limits = limits
        start = time.perf_counter()

        def ms_left(at: float | None) -> int | None:
            return None if at is None else max(1, int((at - start) * 1000))

        if limits.stop.is_set():  # stop (or a ponderhit without a clock) before the search began
            search_limits = Limits(depth=1)
        else:
            search_limits = Limits(depth=limits.depth, nodes=limits.nodes, soft_ms=ms_left(limits.soft_at),
                                   hard_ms=ms_left(limits.hard_at), infinite=limits.unbounded and not limits.timed)
            if not (search_limits.infinite or limits.timed or limits.depth or limits.nodes):
                search_limits.soft_ms = search_limits.hard_ms = PLAIN_GO_MS  # a plain go: nothing else would end it
        # a ponderhit gives the running decision its clock
        limits.on_budget = lambda: self.engine.update_limits(ms_left(limits.soft_at), ms_left(limits.hard_at))
        shown: list = [None]

        def on_info(info) -> None:
            shown[0] = info
            send(format_info(info, state.pos))

        try:
            # a stop that came after the check above, before the decision reset its flag, is applied as it starts
            token = self.engine.choose(state, search_limits, on_info,
                                       on_start=lambda: limits.stop.is_set() and self.engine.stop())
        finally:
            limits.on_budget = None
        d = self.engine.last
        main = shown[0]
        if main is None or not main.pv or state.pos.move_usi(int(main.pv[0])) != token:
            # the token is not the main search's last line (a plan, a declaration, a move the plan terms chose)
            if token.startswith("plan"):
                line = f"info depth 0 time {limits.elapsed_ms()}"
            else:
                score = f"mate {1 if d.score > 0 else -1}" if abs(d.score) > MATE_BOUND else f"cp {d.score}"
                line = f"info depth {max(d.depth, 1)} time {limits.elapsed_ms()} nodes {d.nodes} score {score}"
            send(line + f" pv {token}")
        return token


class MawarikudoiThinker(Thinker):
    """``search.mawarikudoi.Engine``: candidates from an expectimax step with race-table leaves, decided by 1,500
    simulated games each (a few hundredths of a second a decision; no iterations). Reports ``score cp`` (2000 × (winprob − ½))
    and ``string winprob`` (the simulated win rate)."""

    variant = "mawarikudoi"

    def __init__(self, opt, seed=0):
        super().__init__(opt, seed)
        from engine.variants.mawarikudoi import ThrowProbabilities
        from search.mawarikudoi import Engine

        self.probs = ThrowProbabilities(**rule_kwargs("mawarikudoi", opt))
        self.engine = Engine(self.probs, seed=seed)

    def warmup(self) -> None:
        from engine.variants.mawarikudoi import new_game

        g = new_game(probs=self.probs)
        # the likeliest throw: a short turn loads the same kernels as any (the first listed, 0 up, is a turn of
        # hundreds of actions whose search took 1.4 s of a 5 s warm isready)
        g.apply(max(g.chance_events(), key=lambda e: e[1])[0])
        self.engine.search(g)

    def think(self, state, limits, send):
        self._limits = limits
        if state.probs != self.probs:
            from search.mawarikudoi import Engine

            self.probs, self.engine = state.probs, Engine(state.probs, seed=self.seed)
        r = self.engine.search(state)
        send(f"info depth 1 time {limits.elapsed_ms()} score cp {_winprob_cp(r.winprob)} "
             f"string winprob {r.winprob:.3f}")
        return r.action


class EnokianThinker(Thinker):
    """``search.enokian.EnokianSearch``: iterative-deepening expectimax over the deck; ``stop`` aborts the kernel.
    Plain ``go`` without limits searches 1 s. Reports ``score cp`` (1000 × winprob) and ``string winprob``."""

    variant = "enokian"
    DEFAULT_TIME_S = 1.0

    def __init__(self, opt, seed=0):
        super().__init__(opt, seed)
        from search.enokian import EnokianSearch

        self.searcher = EnokianSearch(seed=seed)

    def clear(self) -> None:
        self.searcher.clear()

    def warmup(self) -> None:
        from engine.variants.enokian import new_game

        g = new_game(michizane=str(self.opt("EnokianMichizane")))
        g.apply(g.chance_events()[0][0])
        while g.node_kind().value == "chance":
            g.apply(g.chance_events()[0][0])
        self.searcher.search(g, depth=1)
        self.searcher.clear()

    def stop(self) -> None:
        super().stop()
        self.searcher.stop()

    def think(self, state, limits, send):
        self._limits = limits
        t_start = time.perf_counter()

        def on_iteration(r):
            send(f"info depth {r.depth} time {limits.elapsed_ms()} nodes {r.nodes} "
                 f"nps {int(r.nodes / max(r.seconds, 1e-3))} score cp {int(round(1000 * r.winprob))} "
                 f"pv {r.best} string winprob {r.winprob:.3f}")

        def max_time() -> float | None:
            """Seconds the search may take, read before each iteration (a ponderhit may bring a clock)."""
            if limits.soft_at is not None:
                return limits.soft_at - t_start
            if limits.unbounded or limits.depth is not None or limits.nodes is not None:
                return None
            return self.DEFAULT_TIME_S

        # stop (or a ponderhit without a clock) before the search began: the one iteration that always completes
        depth = 1 if limits.stop.is_set() else limits.depth
        r = self.searcher.search(state, depth=depth, max_time=max_time, max_nodes=limits.nodes,
                                 on_iteration=on_iteration, should_stop=limits.soft_passed)
        return r.best


THINKERS = {"fantasista": FantasistaThinker, "turncoat": TurncoatThinker, "mawarikudoi": MawarikudoiThinker,
            "enokian": EnokianThinker}


def make_thinker(variant_id: str, opt: Callable[[str], Any], seed: int = 0) -> Thinker:
    game_module(variant_id)
    return THINKERS[variant_id](opt, seed)


def thinker_key(variant_id: str, opt: Callable[[str], Any], seed: int) -> tuple:
    """When this changes the thinker is rebuilt (variant, the rule options its engine depends on, seed)."""
    return (variant_id, tuple(sorted(rule_kwargs(variant_id, opt).items())), seed)


def sample_event(events: list[tuple[str, float]], rng) -> str:
    """One event drawn from ``(token, probability)`` pairs with ``rng`` (a ``random.Random``), reproducibly."""
    tokens = [t for t, _ in events]
    weights = [max(0.0, p) for _, p in events]
    if not math.isfinite(sum(weights)) or sum(weights) <= 0:
        raise ValueError("chance node without probabilities")
    return rng.choices(tokens, weights=weights, k=1)[0]
