"""The engine side of USI: a reader loop (the caller's thread) and one search thread.

Run it with ``fantasista`` or ``python -m usi``. The loop answers ``usi`` at once: nothing numba-heavy is imported
before ``usiok`` (the rules layer and the search are imported lazily, and compiled on ``isready``, with an empty line
every two seconds while that takes long). ``stop``, ``ponderhit`` and ``isready`` are answered while the search
thread runs; every ``go`` ends in exactly one ``bestmove`` (or one ``checkmate`` for ``go mate``), and after
``go infinite`` or ``go ponder`` only once ``stop`` or ``ponderhit`` has arrived.

See ``docs/usi.md`` for the commands, the options and the debug commands.

>>> import io
>>> out = io.StringIO()
>>> eng = UsiEngine(out=out)
>>> eng.handle("usi")
True
>>> out.getvalue().splitlines()[-1]
'usiok'
"""
from __future__ import annotations

import errno
import os
import stat
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, TextIO

from search.interface import Limits
from search.timeman import Clock, allocate

from . import games, sfen_check
from .info import format_info
from .kernel_cache import purge_stale_kernels

if TYPE_CHECKING:  # engine loads the numba kernels: imported where it is used
    from engine import Position

ENGINE_AUTHOR = "the Fantasista developers"
#: The distribution whose metadata holds the version (pyproject.toml's ``version``, its one definition).
DISTRIBUTION = "fantasista"


def package_version() -> str:
    """The installed package's version, from its metadata (pyproject.toml's ``version``; ``unknown`` when the
    package is run from a source tree that was never installed). The console scripts' ``--version`` and the USI
    ``id name`` print it."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "unknown"


def engine_name() -> str:
    """``id name`` of the ``usi`` answer."""
    return f"Fantasista {package_version()}"

#: Copies of ``engine.VARIANT_IDS`` and the ``engine.EnteringKingRule`` values, so that the option list can be
#: printed before the rules layer (numba) is imported. A test keeps them equal to the originals.
VARIANT_IDS = ("shogi", "fantasista", "turncoat", "mawarikudoi", "daishogi2017", "enokian")
ENTERING_KING_RULES = ("NoEnteringKing", "CSARule24", "CSARule27")

#: Commands that load no kernel: the stale-kernel check waits for the first other one (usi must answer at once)
KERNEL_FREE_COMMANDS = frozenset({"usi", "quit", "setoption", "usinewgame", "gameover", "stop", "ponderhit"})
HEARTBEAT_S = 2.0  # empty line this often while isready compiles
INFO_INTERVAL_S = 1.0  # a search prints an info line at least this often (a progress line during a long iteration)
PERFT_CHUNK = 3  # go perft: plies counted by one kernel call between two looks at stop


# --------------------------------------------------------------------------------------------- options
@dataclass
class Option:
    """One USI option: ``kind`` is check, spin, combo, button, string or filename."""

    name: str
    kind: str
    default: Any = None
    min: int | None = None
    max: int | None = None
    vars: tuple[str, ...] = ()
    value: Any = None

    def __post_init__(self) -> None:
        if self.value is None:
            self.value = self.default

    def usi(self) -> str:
        line = f"option name {self.name} type {self.kind}"
        if self.kind == "check":
            line += f" default {'true' if self.default else 'false'}"
        elif self.kind == "spin":
            line += f" default {self.default} min {self.min} max {self.max}"
        elif self.kind == "combo":
            line += f" default {self.default}" + "".join(f" var {v}" for v in self.vars)
        elif self.kind in ("string", "filename"):
            line += f" default {self.default if self.default not in (None, '') else '<empty>'}"
        return line

    def parse(self, text: str | None) -> Any:
        """The value for ``text``; raises ``ValueError`` with a message for a bad one."""
        if self.kind == "button":
            return True
        if text is None:
            raise ValueError(f"option {self.name} needs a value")
        if self.kind == "check":
            return games.check_value(self.name, text)
        if self.kind == "spin":
            try:
                v = int(text)
            except ValueError:
                raise ValueError(f"option {self.name} takes an integer, not {text!r}") from None
            if not self.min <= v <= self.max:
                raise ValueError(f"option {self.name} must be in {self.min}..{self.max}, not {v}")
            return v
        if self.kind == "combo":
            return games.combo_value(self.name, text, self.vars)
        return "" if text == "<empty>" else text


def default_options() -> dict[str, Option]:
    opts = [
        Option("USI_Hash", "spin", 16, 1, 4096),
        Option("USI_Ponder", "check", False),
        Option("MultiPV", "spin", 1, 1, 600),
        Option("USI_Variant", "combo", "shogi", vars=VARIANT_IDS),
        Option("NetworkDelay", "spin", 120, 0, 60_000),
        Option("NodesLimit", "spin", 0, 0, 2**31 - 1),
        Option("DepthLimit", "spin", 0, 0, MAX_GO_DEPTH),
        Option("Seed", "spin", 0, 0, 2**31 - 1),
        Option("EnteringKingRule", "combo", "CSARule27", vars=ENTERING_KING_RULES),
        # hand: eval/params.py; learned: the KP tables of eval/weights/ (docs/eval.md), the default since its SPRT
        # (eval.DEFAULT_EVAL_MODE, not imported here: usi stays free of numba); a variant without a weights file
        # keeps the hand-set evaluation.
        Option("EvalMode", "combo", "learned", vars=("hand", "learned")),
        # a KP weights file (python -m train fit's output) used instead of the shipped one of the variant it names, in
        # learned mode; empty: the shipped weights (docs/eval.md)
        Option("EvalFile", "string", ""),
        # shogi / dai shogi search selectivity (search.FEATURES): default, none, or names such as see,staged or
        # -see; for SPRTs of a feature against the same build (docs/search.md)
        Option("SearchFeatures", "string", "default"),
        # shogi / dai shogi search parameters (search/params.py): default, or Name=value pairs such as
        # RFPMargin=120,LMPBase=4 (the others keep their defaults); for tuning (bench.spsa) and SPRTs
        Option("SearchParams", "string", "default"),
        # search threads of the shared alpha-beta (shogi, dai shogi, fantasista): Lazy SMP helpers (search/smp.py)
        Option("Threads", "spin", 1, 1, MAX_THREADS),
    ]
    # each variant's rule options (usi/games.py); they only matter once USI_Variant selects that variant
    opts += [Option(name, kind, default, lo, hi, vars=tuple(vs)) for name, kind, default, lo, hi, vs, _
             in games.RULE_OPTIONS]
    return {o.name.lower(): o for o in opts}


def _check_search_features(text: str) -> None:
    from search import parse_features  # the search package (numba) loads here, not at usi

    parse_features(text)


def _check_search_params(text: str) -> None:
    from search.params import parse_params  # the search package (numba) loads here, not at usi

    parse_params(text)


#: Longest piece of input (a file name, an opening line, an HTTP request line) quoted back in an error message; a
#: longer one is cut (a file name in the middle).
SHOWN_INPUT_CHARS = 80
#: Longest single token (a move, a go parameter, an HTTP version) quoted back in an error message.
SHOWN_TOKEN_CHARS = 20
#: Longest message of another module (eval.kp's checks, zipfile's) quoted in an error of ours, besides the file name
#: as :func:`_shown_name` gives it: such a message may quote what the module read from the file.
QUOTED_ERROR_CHARS = 200


def _shown_name(name: str) -> str:
    """``name`` for an error line: cut in the middle when long (the line stays short whatever the GUI sent)."""
    if len(name) <= SHOWN_INPUT_CHARS:
        return name
    half = SHOWN_INPUT_CHARS // 2 - 2
    return f"{name[:half]}...{name[-half:]} ({len(name)} characters)"


def _os_error_words(name: str, exc: OSError) -> str:
    """What an ``OSError`` about the file ``name`` means, in words."""
    shown = _shown_name(name)
    if exc.errno == errno.ENAMETOOLONG:
        return f"the file name is too long ({len(name)} characters)"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"{shown} cannot be read: permission denied"
    if exc.errno == errno.EISDIR:
        return f"{shown} is a directory, not a weights file"
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return f"no KP weights file {shown}"
    return f"{shown} cannot be read: {exc.strerror or type(exc).__name__}"


def read_eval_file(name: str) -> tuple[str, Any]:
    """The variant id and KP weights of the ``EvalFile`` file ``name`` (``eval.kp.load_weights_file``);
    ``ValueError`` saying in words what is wrong: no such file, a directory, not readable, a name too long for the
    file system, not a weights file, weights of the wrong shapes or of an unknown variant. The message quotes at most
    :data:`SHOWN_INPUT_CHARS` characters of the name and :data:`QUOTED_ERROR_CHARS` of another module's words."""
    import zipfile

    from eval.kp import load_weights_file  # numpy and the variant records load here, not at usi

    shown = _shown_name(name)
    try:
        try:
            mode = os.stat(name).st_mode
        except ValueError:  # a NUL byte: no file has that name
            raise ValueError(f"no KP weights file {shown}") from None
        if stat.S_ISDIR(mode):
            raise ValueError(f"{shown} is a directory, not a weights file")
        if not stat.S_ISREG(mode):
            raise ValueError(f"{shown} is not a regular file")
        if not os.access(name, os.R_OK):
            raise ValueError(f"{shown} cannot be read: permission denied")
        if not zipfile.is_zipfile(name):
            raise ValueError(f"{shown} is not a weights file (python -m train writes an .npz archive)")
        try:
            return load_weights_file(name)
        except ValueError as exc:  # eval.kp's words (a missing table, wrong shapes), with the name as shown here
            raise ValueError(str(exc).replace(name, shown)[:len(shown) + QUOTED_ERROR_CHARS]) from None
        except (zipfile.BadZipFile, EOFError) as exc:
            raise ValueError(f"{shown} is not a weights file (a damaged .npz archive: "
                             f"{str(exc)[:QUOTED_ERROR_CHARS] or type(exc).__name__})") from None
    except OSError as exc:
        raise ValueError(_os_error_words(name, exc)) from None


def _check_eval_file(text: str) -> None:
    if text:
        read_eval_file(text)


#: string options the search reads, checked by its own parser at setoption (ValueError: refused, value kept)
SEARCH_TEXT_OPTIONS: dict[str, Callable[[str], None]] = {"SearchFeatures": _check_search_features,
                                                         "SearchParams": _check_search_params,
                                                         "EvalFile": _check_eval_file}


# ------------------------------------------------------------------------------------------------ go
GO_INT_PARAMS = ("btime", "wtime", "byoyomi", "binc", "winc", "movetime", "depth", "nodes", "perft")
GO_KEYWORDS = set(GO_INT_PARAMS) | {"ponder", "infinite", "mate", "searchmoves"}

#: Bounds of the numbers of a ``go`` line: a larger value is clamped to these (never an ``OverflowError`` in a
#: timer or a kernel). Times in ms (about 24.8 days; ``threading.Timer`` and the clocks take that), nodes below the
#: searchers' "no limit" marker (1 << 62), depths as the ``DepthLimit`` option.
MAX_GO_MS = 2**31 - 1
MAX_GO_NODES = (1 << 62) - 1
MAX_GO_DEPTH = 127
#: Largest ``Threads`` value (the main search thread and its Lazy SMP helpers, search/smp.py).
MAX_THREADS = 64


def _bound(tok: str) -> int:
    return {"depth": MAX_GO_DEPTH, "perft": MAX_GO_DEPTH, "nodes": MAX_GO_NODES}.get(tok, MAX_GO_MS)


def parse_int(text: str) -> int | None:
    """An ASCII integer (optionally signed), or ``None``. Any number of digits (Python refuses to convert more
    than 4,300): a value too long for any bound comes back as ±10**19, which the caller clamps."""
    body = text[1:] if text[:1] in "+-" else text
    if not body or not body.isascii() or not body.isdigit():
        return None
    value = int(body) if len(body) <= 19 else 10**19
    return -value if text.startswith("-") else value


@dataclass
class GoCommand:
    """A parsed ``go`` line (parameters in any order)."""

    clock: Clock = field(default_factory=Clock)
    ponder: bool = False
    infinite: bool = False
    depth: int | None = None
    nodes: int | None = None
    perft: int | None = None
    mate: bool = False
    mate_ms: int | None = None  # None with mate=True: infinite
    searchmoves: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def has_limit(self) -> bool:
        """Whether anything but ``stop`` ends the search (a clock, depth, nodes; ``infinite`` and ``ponder`` wait)."""
        return self.clock.has_clock() or self.depth is not None or self.nodes is not None


def parse_go(tokens: list[str]) -> GoCommand:
    """Parse the tokens after ``go``. Bad values are reported in ``errors`` and otherwise ignored; numbers out of
    range are clamped (a time or node count to :data:`MAX_GO_MS` / :data:`MAX_GO_NODES`, a negative time to 0), and
    ``depth``/``nodes`` below 1 are reported and read as 1 (the smallest search that still answers).

    >>> g = parse_go("byoyomi 1000 wtime 5000 ponder btime 6000".split())
    >>> (g.clock.btime, g.clock.wtime, g.clock.byoyomi, g.ponder)
    (6000, 5000, 1000, True)
    >>> parse_go("mate infinite".split()).mate_ms is None
    True
    >>> parse_go("searchmoves 7g7f 2g2f depth 3".split()).searchmoves
    ['7g7f', '2g2f']
    >>> g = parse_go("nodes 99999999999999999999 depth 0".split())
    >>> (g.nodes == MAX_GO_NODES, g.depth, g.errors)
    (True, 1, ['go depth must be at least 1, not 0: searching depth 1'])
    """
    g = GoCommand()
    unknown: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i].lower()
        i += 1
        if tok == "ponder":
            g.ponder = True
        elif tok == "infinite":
            g.infinite = True
        elif tok == "mate":
            g.mate = True
            if i < len(tokens) and tokens[i].lower() == "infinite":
                i += 1
            elif i < len(tokens) and parse_int(tokens[i]) is not None:
                g.mate_ms = min(max(0, parse_int(tokens[i])), MAX_GO_MS)
                i += 1
        elif tok == "searchmoves":
            while i < len(tokens) and tokens[i].lower() not in GO_KEYWORDS:
                g.searchmoves.append(tokens[i])
                i += 1
            if not g.searchmoves:
                g.errors.append("go searchmoves needs at least one move: searching every move")
        elif tok in GO_INT_PARAMS:
            value = parse_int(tokens[i]) if i < len(tokens) else None
            if value is None:
                g.errors.append(f"go {tok} needs an integer" +
                                (f", not {tokens[i][:40]!r}" if i < len(tokens) else ""))
                continue
            i += 1
            if value > _bound(tok):
                value = _bound(tok)
            if tok in ("depth", "nodes") and value < 1:
                g.errors.append(f"go {tok} must be at least 1, not {value}: searching {tok} 1")
                value = 1
            if tok in Clock.__dataclass_fields__:
                setattr(g.clock, tok, max(0, value))
            else:
                setattr(g, tok, max(0, value))
        else:
            unknown.append(tokens[i - 1])
    if len(unknown) == 1:
        g.errors.append(f"unknown go parameter {unknown[0][:40]!r}")
    elif unknown:
        g.errors.append(f"{len(unknown)} unknown go parameters: {quote_some(list(dict.fromkeys(unknown)))}")
    return g


#: How many bad tokens (and problems) one error line quotes; the rest are counted.
MAX_QUOTED = 3
#: An ``info string error`` line is cut to this many characters (a GUI may have sent megabytes).
MAX_ERROR_CHARS = 400


def quote_some(tokens: list[str], width: int = SHOWN_TOKEN_CHARS) -> str:
    """The first :data:`MAX_QUOTED` of ``tokens``, each cut to ``width`` characters, and how many more.

    >>> quote_some(["a", "b", "c", "d", "e"])
    "'a', 'b', 'c' and 2 more"
    """
    shown = ", ".join(repr(t[:width] + ("..." if len(t) > width else "")) for t in tokens[:MAX_QUOTED])
    return shown + (f" and {len(tokens) - MAX_QUOTED} more" if len(tokens) > MAX_QUOTED else "")


def one_problem_line(problems: list[str]) -> str:
    """The problems of one command as one message: how many, and the first :data:`MAX_QUOTED` different ones.

    >>> one_problem_line(["go depth needs an integer"])
    'go depth needs an integer'
    >>> one_problem_line(["p1", "p2", "p1", "p3", "p4", "p5"])
    '6 problems in this line: p1; p2; p3; and 2 others'
    """
    if len(problems) == 1:
        return problems[0]
    distinct = list(dict.fromkeys(problems))
    more = len(distinct) - MAX_QUOTED
    return (f"{len(problems)} problems in this line: " + "; ".join(distinct[:MAX_QUOTED]) +
            (f"; and {more} others" if more > 0 else ""))


# ------------------------------------------------------------------------------------------- the job
class _Job:
    """One ``go`` in flight: its flags, shared between the reader and the search thread."""

    def __init__(self, go: GoCommand, t0: float) -> None:
        self.go = go
        self.t0 = t0  # perf_counter when the go line arrived
        self.pondering = go.ponder
        self.stop_requested = threading.Event()
        self.release = threading.Event()  # bestmove may be printed (set at once unless ponder / infinite)
        if not (go.ponder or go.infinite):
            self.release.set()
        self.searching = threading.Event()  # Searcher.search is running
        self.timer: threading.Timer | None = None
        self.search_t0: float | None = None
        self.side, self.game_ply = 0, 0  # side to move and game ply at the root (for the clock)
        self.thread: threading.Thread | None = None
        # the search.Limits the searcher reads while it runs: stop (stop_requested) and a ponderhit's clock reach
        # it however early they come (the searcher applies them as it starts)
        self.limits: Limits | None = None
        self.last_info = t0  # perf_counter of the last info line about this search (see UsiEngine._monitor)

    def elapsed_ms(self) -> int:
        """ms since the go line arrived."""
        return int((time.perf_counter() - self.t0) * 1000)

    def search_elapsed_ms(self) -> int:
        """ms since Searcher.search was called (the searcher's own time base)."""
        return int((time.perf_counter() - (self.search_t0 or self.t0)) * 1000)


# ---------------------------------------------------------------------------------------- the engine
class UsiEngine:
    """The USI protocol state machine. Feed it lines with :meth:`handle` (or run :meth:`loop` on a stream).

    ``searcher_factory(hash_mb, seed)`` builds the searcher (default: :class:`search.Searcher`); tests pass fakes
    to check the protocol without compiling a search.
    """

    def __init__(self, out: TextIO | None = None,
                 searcher_factory: Callable[[int, int], Any] | None = None) -> None:
        self._out = out if out is not None else sys.stdout
        self._out_lock = threading.Lock()
        self._searcher_factory = searcher_factory
        self.options = default_options()
        self._searcher = None
        self._searcher_key: tuple[int, int] | None = None  # (hash_mb, seed) the searcher was built with
        self._kernels_checked = False  # purge_stale_kernels ran (at the first command that may load a kernel)
        self._need_clear = False
        self._eval_file: tuple[str, dict] = ("", {})  # the EvalFile name last read and its Searcher.eval_weights
        self._pos = None  # engine.Position, created lazily
        self._job: _Job | None = None
        # GameState variants (usi/games.py): the state and its decision-token count
        self._game = None
        self._game_ply = 0
        self._game_searcher = None  # the variant's search.GameSearcher (for every variant)
        self._game_searcher_key: tuple | None = None
        self._staged_faces: dict[str, int] = {}  # mawarikudoi faces set but not applied yet (see _set_face)
        self._staged_rules: dict[str, Any] = {}  # rule options set but not applied yet (see _set_rule)

    # ------------------------------------------------------------------ output
    def send(self, line: str) -> None:
        """Write one line and flush (thread-safe)."""
        with self._out_lock:
            try:
                self._out.write(line + "\n")
                self._out.flush()
            except (BrokenPipeError, ValueError, OSError):
                pass  # the GUI went away; the reader will see EOF

    def error(self, message: str) -> None:
        """One ``info string error`` line, cut to :data:`MAX_ERROR_CHARS` (one line however long the input was)."""
        message = " ".join(message.split())  # no line breaks from an exception's text
        if len(message) > MAX_ERROR_CHARS:
            message = message[:MAX_ERROR_CHARS - 30] + f"... ({len(message)} characters)"
        self.send(f"info string error {message}")

    # ------------------------------------------------------------------ lazy layers
    def opt(self, name: str) -> Any:
        return self.options[name.lower()].value

    @property
    def pos(self):
        if self._pos is None:
            import engine
            self._pos = engine.Position.startpos(self.opt("USI_Variant"))
        return self._pos

    def _make_searcher(self):
        if self._searcher_factory is not None:
            return self._searcher_factory(self.opt("USI_Hash"), self.opt("Seed"))
        from search import Searcher
        return Searcher(hash_mb=self.opt("USI_Hash"), seed=self.opt("Seed"))

    def _ensure_searcher(self):
        """The searcher, built or resized to the current options (only called while no search runs)."""
        key = (self.opt("USI_Hash"), self.opt("Seed"))
        if self._searcher is None or self._searcher_key[1] != key[1]:
            self._searcher = self._make_searcher()
            self._need_clear = False
        elif self._searcher_key[0] != key[0]:
            self._searcher.set_hash(key[0])
        self._searcher_key = key
        if hasattr(self._searcher, "eval_mode"):  # test doubles made by a searcher factory may not have it
            self._searcher.eval_mode = self.opt("EvalMode")
            self._searcher.eval_weights = self._eval_file_weights()
            from search import parse_features

            self._searcher.features = parse_features(self.opt("SearchFeatures"), self.opt("USI_Variant"))
        if hasattr(self._searcher, "set_params"):
            from search.params import parse_params

            self._searcher.set_params(parse_params(self.opt("SearchParams")))
        if hasattr(self._searcher, "threads"):
            self._searcher.threads = self.opt("Threads")
        if self._need_clear:
            self._searcher.clear()
            self._need_clear = False
        return self._searcher

    def _eval_file_weights(self) -> dict:
        """``Searcher.eval_weights`` for the option EvalFile, read once per file name; a file that no longer loads
        (changed or removed since its setoption) is reported and the shipped weights are used."""
        name = self.opt("EvalFile")
        if self._eval_file[0] != name:
            weights: dict = {}
            if name:
                try:
                    vid, w = read_eval_file(name)
                    weights = {vid: w}
                except ValueError as exc:
                    self.error(f"option EvalFile: {exc}; using the shipped weights")
            self._eval_file = (name, weights)
        return self._eval_file[1]

    # GameState variants ------------------------------------------------
    @property
    def is_game(self) -> bool:
        """Whether the current variant is played as a GameState (usi/games.py) rather than an engine.Position."""
        return games.is_game_variant(self.opt("USI_Variant"))

    @property
    def game(self):
        if self._game is None:
            self._game = games.new_state(self.opt("USI_Variant"), self.opt)
            self._game_ply = 0
        return self._game

    def _ensure_game_searcher(self):
        """The variant's searcher (``search.registry``): for shogi and dai shogi the shared searcher of
        :meth:`_ensure_searcher` behind the same interface; rebuilt when the variant, its settings, the seed or the
        hash size change."""
        from search.registry import make_searcher

        variant = self.opt("USI_Variant")
        if self.is_game:
            settings = games.searcher_settings(variant, self.opt)
            key = (variant, tuple(sorted(settings.items())), self.opt("Seed"), self.opt("USI_Hash"))
        else:
            settings = {"searcher": self._ensure_searcher()}
            key = (variant, id(settings["searcher"]))
        if self._game_searcher is None or self._game_searcher_key != key:
            if self.is_game:
                games.game_module(variant)  # a clear error for a variant whose rules do not load
            self._game_searcher = make_searcher(variant, seed=self.opt("Seed"), hash_mb=self.opt("USI_Hash"),
                                                **settings)
            self._game_searcher_key = key
        if not self.is_game:
            self._game_searcher.entering_king = self.opt("EnteringKingRule")
        return self._game_searcher

    def _stop_searchers(self) -> None:
        if self._game_searcher is not None:
            self._game_searcher.stop()
        if self._searcher is not None:
            self._searcher.stop()

    def _warmup(self) -> None:
        """Import and compile everything a search needs (numba kernels are cached on disk after the first run)."""
        _ = self.game if self.is_game else self.pos
        searcher = self._ensure_game_searcher()
        if not getattr(searcher, "warm", False):
            searcher.warmup()
            searcher.warm = True

    def loop(self, stream: TextIO) -> None:
        """Read commands until ``quit`` or end of input."""
        try:
            for raw in stream:
                if not self.handle(raw):
                    return
        finally:
            self._finish_search()

    def handle(self, raw: str) -> bool:
        """Handle one line; ``False`` after ``quit``."""
        line = raw.strip()
        if not line:
            return True
        tokens = line.split()
        cmd, args = tokens[0], tokens[1:]
        handler = getattr(self, f"cmd_{cmd}", None) if cmd.isidentifier() and cmd.islower() else None
        if handler is None:
            self.error(f"unknown command {line[:200]}")
            return True
        if not self._kernels_checked and cmd not in KERNEL_FREE_COMMANDS:
            # before any kernel loads (isready, go, bench, position, ...): a kernel cached against an edited shared
            # kernel would crash (engine.kernels.cache); not at usi, which must answer at once without numba
            self._kernels_checked = True
            try:
                purge_stale_kernels()
            except Exception as exc:  # a cache we cannot clean is still usable: say so and go on
                self.error(f"checking the kernel cache failed: {_describe(exc)}")
        try:
            return handler(args, line) is not False
        except Exception as exc:  # never crash on a command: report and carry on
            self.error(f"{cmd} failed: {_describe(exc)}")
            return True

    @property
    def searching(self) -> bool:
        job = self._job
        return job is not None and job.thread is not None and job.thread.is_alive()

    # ------------------------------------------------------------------ commands
    def cmd_usi(self, args, line):
        self.send(f"id name {engine_name()}")
        self.send(f"id author {ENGINE_AUTHOR}")
        for opt in self.options.values():
            self.send(opt.usi())
        self.send("usiok")

    def cmd_isready(self, args, line):
        if self.searching:  # the searcher is warm already
            self.send("readyok")
            return
        done = threading.Event()

        def heartbeat():
            while not done.wait(HEARTBEAT_S):
                self.send("")

        beat = threading.Thread(target=heartbeat, name="usi-heartbeat", daemon=True)
        beat.start()
        try:
            self._warmup()
        except Exception as exc:  # still answer readyok: a GUI waiting for it would give up on us
            self.error(f"warm-up failed (the first search will compile what it needs): {_describe(exc)}")
        finally:
            done.set()
            beat.join()
        self.send("readyok")

    def cmd_setoption(self, args, line):
        if not args or args[0].lower() != "name" or len(args) < 2:
            self.error(f"malformed setoption (expected: setoption name <id> [value <x>]): {line}")
            return
        lowered = [a.lower() for a in args]
        vi = lowered.index("value") if "value" in lowered[2:] else len(args)
        name = " ".join(args[1:vi])
        value = " ".join(args[vi + 1:]) if vi < len(args) else None
        opt = self.options.get(name.lower())
        if opt is None:
            self.error(f"unknown option {name}")
            return
        try:
            v = opt.parse(value)
        except ValueError as exc:
            self.error(str(exc))
            return
        if opt.name == "USI_Variant":
            try:
                if games.is_game_variant(v):
                    games.game_module(v)
                else:
                    import engine
                    engine.get_variant(v)
            except ValueError:
                self.error(f"variant {v} not implemented yet; playing {self.opt('USI_Variant')}")
                return
            if v != opt.value:
                self._finish_search()
                opt.value = v
                self._pos = None  # the new variant's start position
                self._game = None
            return
        check = SEARCH_TEXT_OPTIONS.get(opt.name)
        if check is not None:
            try:
                check(v)
            except ValueError as exc:
                self.error(f"option {opt.name} not changed: {exc}")
                return
        if opt.name in games.MAWARIKUDOI_FACE_NAMES:
            self._set_face(opt, v)
            return
        if opt.name.lower() in games.RULE_OPTION_NAMES:
            self._set_rule(opt, v)
            return
        opt.value = v

    def _set_rule(self, opt: Option, value: Any) -> None:
        """``setoption`` of a rule option. Some values only make sense together (fantasista's FantasistaReserved 1
        names a row of the own fairy, so a side whose fairy is ``choose`` needs its own FantasistaReservedSente/Gote),
        and a GUI sends options one at a time in its own order. So, as for the mawarikudoi faces, a value that the
        rules refuse with the others is remembered but not applied, with an error saying why; the options (and the
        game) keep their old, consistent values until the values set so far agree, and then all apply at once."""
        variant = games.RULE_OPTION_NAMES[opt.name.lower()]
        current = self.opt

        def disagreement(values: dict[str, Any]) -> str:
            """Why the rules refuse the options with ``values`` set; empty when they agree."""
            try:
                games.rule_kwargs(variant, lambda name: values.get(name, current(name)))
            except ValueError as exc:
                return str(exc)
            return ""

        staged = {**self._staged_rules, opt.name: value}
        why = disagreement(staged)
        if not why:
            apply, self._staged_rules = staged, {}
        elif not disagreement({opt.name: value}):  # fine with the applied values: it applies, what waits keeps waiting
            apply = {opt.name: value}
            self._staged_rules.pop(opt.name, None)
        else:
            self._staged_rules = staged
            self.error(f"option {opt.name} value {value} not applied yet: {why} (the rule options "
                       "keep their last consistent values until the ones set agree)")
            return
        changed = False
        for name, v in apply.items():
            target = self.options[name.lower()]
            changed |= target.value != v
            target.value = v
        if changed and variant == self.opt("USI_Variant"):
            self._game = None  # the start position follows the rule options

    def _set_face(self, opt: Option, value: int) -> None:
        """``setoption`` of one of the five mawarikudoi face probabilities (per mille). The five must sum to 1000,
        and a GUI sets them one at a time, so a value that breaks the sum is remembered but not applied: the options
        (and the game) keep their old, consistent values, with an error naming the sum, until the values set so far
        sum to 1000 again; then all of them apply at once."""
        staged = self._staged_faces or {name: self.opt(name) for name in games.MAWARIKUDOI_FACE_NAMES}
        staged[opt.name] = value
        total = sum(staged.values())
        if total != 1000:
            self._staged_faces = staged
            kept = "/".join(str(self.opt(name)) for name in games.MAWARIKUDOI_FACE_NAMES)
            self.error(f"option {opt.name} value {value} not applied yet: the five Mawarikudoi_* faces would sum to "
                       f"{total} per mille, not 1000; the game keeps {kept} until the values set sum to 1000")
            return
        self._staged_faces = {}
        changed = any(self.opt(name) != v for name, v in staged.items())
        for name, v in staged.items():
            self.options[name.lower()].value = v
        if changed and self.opt("USI_Variant") == "mawarikudoi":
            self._game = None  # the start position follows the rule options

    def cmd_usinewgame(self, args, line):
        self._finish_search()
        if self.is_game:
            if self._game_searcher is not None:
                self._game_searcher.clear()
            return
        self._need_clear = True
        if self._searcher is not None:
            self._searcher.clear()
            self._need_clear = False

    def cmd_position(self, args, line):
        import engine
        if not args:
            self.error("position needs startpos or sfen")
            return
        try:
            mi = [a.lower() for a in args].index("moves")
        except ValueError:
            mi = len(args)
        head, moves = args[:mi], args[mi + 1:]
        if not head:
            self.error("position not changed: startpos or sfen <sfen> must come before moves")
            return
        variant = self.opt("USI_Variant")
        if self.is_game:
            try:
                state = games.build_state(variant, head, moves, self.opt)
            except ValueError as exc:
                self.error(f"position not changed: {_describe(exc)}")
                return
            except Exception as exc:  # a parser that fails on input it did not expect: still say what was sent
                self.error(f"position not changed: not a {variant} position the engine can read ({_describe(exc)})")
                return
            self._game = state
            self._game_ply = sum(1 for t in moves if "=" not in t.split(",", 1)[0])
            return
        try:
            if head[0].lower() == "startpos" and len(head) == 1:
                pos = engine.Position.startpos(variant)
            elif head[0].lower() == "sfen" and len(head) > 1:
                sfen = " ".join(head[1:])
                sfen_check.check_before(variant, sfen)
                pos = engine.Position.from_sfen(sfen, variant)
                sfen_check.check_after(variant, sfen, pos)
            else:
                raise engine.SfenError(f"expected 'startpos' or 'sfen <sfen>', got {' '.join(head)[:80]!r}")
        except (engine.SfenError, ValueError) as exc:
            self.error(f"position not changed: {_describe(exc)}")
            return
        except Exception as exc:
            self.error(f"position not changed: not a {variant} SFEN the engine can read ({_describe(exc)})")
            return
        for i, text in enumerate(moves):
            try:
                pos.push(text)
            except (engine.IllegalMoveError, engine.MoveParseError, ValueError) as exc:
                self.error(f"position not changed: move {i + 1} ({text[:40]}): {_describe(exc)}")
                return
            except Exception as exc:
                self.error(f"position not changed: move {i + 1} ({text[:40]}) cannot be read ({_describe(exc)})")
                return
        self._pos = pos

    def cmd_go(self, args, line):
        t0 = time.perf_counter()
        go = parse_go(args)
        self._finish_search()  # a go while searching: finish the old one first (it prints its bestmove)
        if go.perft is not None:
            unsupported = [f"not supported for {self.opt('USI_Variant')}"] if self.is_game else []
            self._report(go.errors + unsupported)
            if not unsupported:
                self._go_perft(go, t0)
            return
        try:
            self._go(go, t0)
        except Exception as exc:
            # Whatever went wrong before the search thread started, this go still gets its one answer.
            self.error(f"go could not start a search: {_describe(exc)}")
            self.send("checkmate timeout" if go.mate else "bestmove resign")

    def _report(self, problems: list[str]) -> None:
        """The problems of one command, as one error line (:func:`one_problem_line`)."""
        if problems:
            self.error(one_problem_line(problems))

    def _searchmoves(self, pos: Position, texts: list[str]) -> tuple[list[int] | None, str | None]:
        """The codes of ``go searchmoves`` that are legal in ``pos`` (``None``: none, search every move) and one
        problem naming the bad ones, if any (at most :data:`MAX_QUOTED` quoted, the rest counted)."""
        legal = {int(c) for c in pos.legal_codes()}
        verdicts: dict[str, int | str] = {}  # text -> legal code, or why not (each text judged once)
        codes, n_bad = [], 0
        for text in texts:
            verdict = verdicts.get(text)
            if verdict is None:
                try:
                    code = int(pos.parse_move(text).code)
                    verdict = code if code in legal else "not legal"
                except Exception:  # any parser failure: not a move
                    verdict = "not a move"
                verdicts[text] = verdict
            if isinstance(verdict, int):
                codes.append(verdict)
            else:
                n_bad += 1
        if not n_bad:
            return codes, None
        bad = [f"{t[:SHOWN_TOKEN_CHARS]!r} ({v})" for t, v in verdicts.items() if isinstance(v, str)]
        named = ", ".join(bad[:MAX_QUOTED]) + (f" and {len(bad) - MAX_QUOTED} more" if len(bad) > MAX_QUOTED else "")
        if not codes:
            return None, (f"searchmoves: none of the {len(texts)} moves given is legal here ({named}): "
                          "searching every move")
        return codes, f"searchmoves: {n_bad} of the {len(texts)} moves given are not legal here ({named})"

    def _go(self, go: GoCommand, t0: float) -> None:
        """``go`` for every variant: the variant's searcher (``search.registry``) thinks on a copy of the position in
        the search thread, within one :class:`search.Limits` made here."""
        state = self.game.copy() if self.is_game else self.pos.copy()
        problems = list(go.errors)
        searchmoves = None
        if go.searchmoves and self.is_game:
            problems.append(f"searchmoves not supported for {self.opt('USI_Variant')}: ignored")
        elif go.searchmoves:
            codes, problem = self._searchmoves(state, go.searchmoves)
            searchmoves = None if codes is None else [state.move_usi(c) for c in codes]
            if problem:
                problems.append(problem)
        self._report(problems)
        job = _Job(go, t0)
        job.side = state.side_to_move()
        job.game_ply = self._game_ply if self.is_game else state.move_number - 1
        job.limits = Limits(depth=_min_set(go.depth, self.opt("DepthLimit") or None),
                            nodes=_min_set(go.nodes, self.opt("NodesLimit") or None), multipv=self.opt("MultiPV"),
                            searchmoves=searchmoves, infinite=go.infinite, ponder=go.ponder,
                            stop=job.stop_requested, t0=t0)
        if go.mate:
            job.limits.hard_ms = go.mate_ms
        elif not go.ponder and not go.infinite:
            budget = self._budget(go, job.side, job.game_ply)
            if budget is not None:
                job.limits.soft_ms, job.limits.hard_ms = max(1, budget.soft_ms), max(1, budget.hard_ms)
        try:
            searcher = self._ensure_game_searcher()
        except Exception as exc:
            # No searcher at all: still honour "every go ends in one bestmove" with any legal move.
            self.error(f"search unavailable: {_describe(exc)}")
            searcher = None
        if searcher is not None and job.limits.hard_ms is not None and not go.mate:
            self._arm_timer(job, job.limits.ms_left(job.limits.hard_ms))
        target = self._mate_worker if go.mate else self._search_worker
        self._start(job, target, (job, state, searcher))

    def _start(self, job: _Job, target: Callable, args: tuple) -> None:
        job.thread = threading.Thread(target=target, args=args, name="usi-search", daemon=True)
        self._job = job
        job.thread.start()

    def cmd_stop(self, args, line):
        job = self._job
        if job is None:
            return
        self._request_stop(job)
        job.release.set()
        # A safety net only (the stop above reaches the search however early it came): should a searcher still
        # miss it, stopping again keeps the reader from waiting for ever.
        while job.thread is not None and job.thread.is_alive():
            job.thread.join(0.5)
            if job.thread.is_alive():
                self._stop_searchers()

    def cmd_ponderhit(self, args, line):
        job = self._job
        if job is None or not job.pondering:
            return
        job.pondering = False
        at = time.perf_counter()
        budget = self._budget(job.go, job.side, job.game_ply)
        # ponder without any clock, depth or nodes: nothing says when to stop, so answer now
        answer_now = budget is None and not job.go.infinite and job.go.depth is None and job.go.nodes is None
        # the searcher reads job.limits as it starts and is told of a change while it runs (Limits.on_budget)
        job.limits.ponder = False
        if answer_now:
            self._request_stop(job)  # as a stop: a search that has not started yet answers from depth 1
        elif budget is not None:
            job.limits.set_budget(budget.soft_ms, budget.hard_ms, now=at)
            self._arm_timer(job, budget.hard_ms)
        if not job.go.infinite:
            job.release.set()

    def _request_stop(self, job: _Job) -> None:
        """Set the job's stop flag (read by a search not started yet as it starts) and stop the running search."""
        job.stop_requested.set()
        job.pondering = False
        self._stop_searchers()

    def cmd_gameover(self, args, line):
        if args and args[0].lower() not in ("win", "lose", "draw"):
            self.error(f"gameover takes win, lose or draw, not {args[0]}")
        self._finish_search()

    def cmd_quit(self, args, line):
        self._finish_search()
        return False

    # debug commands
    def cmd_d(self, args, line):
        """``d``: the position, short (a GameState variant's legal actions only counted); ``d actions``: and the
        legal actions (moves) themselves, :data:`games.ACTIONS_PER_LINE` a line."""
        listing = bool(args) and args[0].lower() in ("actions", "moves")
        if args and (not listing or len(args) > 1):
            self.error(f"d takes no argument or 'actions', not {' '.join(args)[:40]!r}")
            return
        if self.is_game:
            for text in games.describe(self.game, actions=listing):
                self.send(text)
            return
        for text in str(self.pos).splitlines():
            self.send(text)
        if listing:
            moves = [self.pos.move_usi(int(c)) for c in self.pos.legal_codes()]
            self.send(f"moves {len(moves)}")
            for i in range(0, len(moves), games.ACTIONS_PER_LINE):
                self.send("actions " + " ".join(moves[i:i + games.ACTIONS_PER_LINE]))

    def cmd_bench(self, args, line):
        self._finish_search()
        if self.is_game:
            self.error(f"bench not supported for {self.opt('USI_Variant')}")
            return
        depth = parse_int(args[0]) if args else None
        if args and (depth is None or depth < 1):
            self.error(f"bench takes a depth of at least 1, not {args[0][:40]!r}: the default depths")
            depth = None
        job = _Job(GoCommand(), time.perf_counter())
        self._start(job, self._bench_worker, (job, min(depth, MAX_GO_DEPTH) if depth else None))

    # ------------------------------------------------------------------ helpers
    def _budget(self, go: GoCommand, side: int, ply: int):
        return allocate(go.clock, side, ply, network_delay=self.opt("NetworkDelay"))

    def _arm_timer(self, job: _Job, hard_ms: int) -> None:
        """Safety net: stop the search at the hard limit even if the searcher overruns it (ms from now)."""
        if job.timer is not None:
            job.timer.cancel()
        job.timer = threading.Timer(hard_ms / 1000 + 0.02, self._stop_searchers)
        job.timer.daemon = True
        job.timer.start()

    @staticmethod
    def _cancel_timer(job: _Job) -> None:
        if job.timer is not None:
            job.timer.cancel()

    def _finish_search(self) -> None:
        """Stop any search in flight and wait for its bestmove."""
        if self._job is not None and self._job.thread is not None and self._job.thread.is_alive():
            self.cmd_stop([], "stop")

    def _go_perft(self, go: GoCommand, t0: float) -> None:
        """``go perft <n>`` on the search thread, so that ``stop``, ``quit`` and ``isready`` are read meanwhile."""
        job = _Job(go, t0)
        self._start(job, self._perft_worker, (job, self.pos.copy(), go.perft))

    def _perft_worker(self, job: _Job, pos, depth: int) -> None:
        try:
            total, done = 0, 0
            codes = [int(c) for c in pos.legal_codes()] if depth > 0 else []
            for code in codes:
                pos.push_unchecked(code)
                count = _perft(pos, depth - 1, job.stop_requested)
                pos.pop()
                if count is None:
                    break
                self.send(f"{pos.move_usi(code)}: {count}")
                total += count
                done += 1
            if depth == 0:
                total = 1
            ms = int((time.perf_counter() - job.t0) * 1000)
            if done < len(codes):
                self.send(f"info string perft {depth} stopped after {done} of {len(codes)} moves "
                          f"({total} nodes, {ms} ms)")
                return
            self.send(f"Nodes searched: {total}")
            self.send(f"info string perft {depth} time {ms} nps {total * 1000 // max(ms, 1)}")
        except Exception as exc:
            self.error(f"perft failed: {_describe(exc)}")

    # ------------------------------------------------------------------ search thread
    def _monitor(self, job: _Job, progress: Callable[[], str | None]) -> Callable[[], None]:
        """Start a thread that prints ``progress()`` (an ``info`` line) whenever :data:`INFO_INTERVAL_S` has passed
        without an ``info`` line about this search while it runs; call the returned function to end it (it waits
        for the thread, so no info line can follow the bestmove). A GUI sees life during a long iteration (depth,
        nodes, nps, time, currmove), as from YaneuraOu and Stockfish."""
        done = threading.Event()

        def run() -> None:
            while not done.wait(0.05):
                if not job.searching.is_set() or time.perf_counter() - job.last_info < INFO_INTERVAL_S:
                    continue
                try:
                    line = progress()
                except Exception:  # a searcher between states: try again next time
                    line = None
                if line and not done.is_set():
                    self.send(line)
                job.last_info = time.perf_counter()

        thread = threading.Thread(target=run, name="usi-monitor", daemon=True)
        thread.start()

        def stop() -> None:
            done.set()
            thread.join()

        return stop

    def _search_worker(self, job: _Job, state, searcher) -> None:
        best, ponder = None, None
        try:
            best, ponder = self._think(job, state, searcher)
        except Exception as exc:
            self.error(f"search failed: {_describe(exc)}")
            try:
                actions = state.legal_actions()
            except Exception:
                actions = []
            best, ponder = (actions[0] if actions else "resign"), None
        finally:
            self._cancel_timer(job)
            job.release.wait()
            self._cancel_timer(job)  # a ponderhit after the search ended armed a new one: it must not stop the next
            self.send(f"bestmove {best or 'resign'}" + (f" ponder {ponder}" if ponder else ""))

    def _think(self, job: _Job, state, searcher) -> tuple[str, str | None]:
        """The searcher's move and expected reply for ``state``, checked: a game that is over, a chance node, no
        searcher or an illegal answer get an error line and a legal fallback (or ``resign``)."""
        from engine.game import NodeKind

        # A shogi or dai shogi position is searched whenever it has a legal move (its searcher answers resign
        # without one): sennichite, a try or the move cap are the referee's to judge, not a reason not to move.
        kind = state.node_kind() if self.is_game else NodeKind.DECISION
        if kind is NodeKind.TERMINAL:
            score, reason = state.result()
            self.error(f"the game is over ({reason}, score {score} for sente)")
            return "resign", None
        if kind is NodeKind.CHANCE:
            self.error("go at a chance node: the referee sends the event (" +
                       " ".join(t for t, _ in state.chance_events()[:3]) + " ...)")
            return "resign", None
        # (legal_actions() is only listed when needed: a long mawarikudoi throw has thousands of turns)
        if searcher is None:
            actions = state.legal_actions()
            return (actions[0] if actions else "resign"), None

        def on_info(info) -> None:
            job.last_info = time.perf_counter()
            self.send(format_info(info))

        def progress() -> str | None:
            info = searcher.progress()
            ms = job.search_elapsed_ms()
            if info is None:
                return f"info time {ms}"
            ms = info.time_ms or ms
            line = "info" + (f" depth {info.depth} seldepth {info.seldepth}" if info.depth else "")
            line += f" time {ms} nodes {info.nodes} nps {info.nodes * 1000 // max(ms, 1)}"
            return line + (f" currmove {info.pv[0]}" if info.pv else "")

        job.searching.set()
        job.search_t0 = job.last_info = time.perf_counter()
        stop_monitor = self._monitor(job, progress)
        try:
            result = searcher.think(state, job.limits, on_info)
        finally:
            stop_monitor()
            job.searching.clear()
        token = result.best
        if token in ("resign", "win") and not self.is_game:  # the shogi family's answers that are not moves
            return token, None
        if not token or not games.is_legal(state, token):
            actions = state.legal_actions()
            if not actions:
                return "resign", None
            self.error(f"search returned an illegal {'action' if self.is_game else 'move'} {token!r}")
            return actions[0], None
        return token, result.ponder

    def _mate_worker(self, job: _Job, state, searcher) -> None:
        """``go mate``: the searcher's mate search where it has one (``checkmate notimplemented`` elsewhere)."""
        answer = "timeout"
        try:
            if searcher is None or not hasattr(searcher, "mate"):
                answer = "notimplemented"
            else:
                job.searching.set()
                kind, line = searcher.mate(state, job.limits)
                job.searching.clear()
                answer = " ".join(line) if kind == "mate" else "nomate" if kind == "nomate" else "timeout"
        except Exception as exc:
            self.error(f"mate search failed: {_describe(exc)}")
        finally:
            job.release.wait()
            self.send(f"checkmate {answer}")

    # ------------------------------------------------------------------ bench
    def _bench_worker(self, job: _Job, depth: int | None) -> None:
        """``bench`` on the search thread: ``stop`` (or ``quit``) ends the running position's search and the bench."""
        try:
            self._bench(job, depth)
        except Exception as exc:
            self.error(f"bench failed: {_describe(exc)}")

    def _bench(self, job: _Job, depth: int | None) -> None:
        import engine
        try:
            from search import bench_positions as positions
        except ImportError:
            positions = BENCH_SFENS
        self._warmup()
        searcher = self._searcher
        total_nodes, t0 = 0, time.perf_counter()
        for i, item in enumerate(positions):
            if job.stop_requested.is_set():
                self.send(f"info string bench stopped after {i} of {len(positions)} positions")
                break
            sfen, d = (item, None) if isinstance(item, str) else (item[0], item[1])
            d = depth or d or BENCH_DEPTH
            pos = engine.Position.from_sfen(sfen)
            searcher.clear()
            job.searching.set()
            result = searcher.search(pos, Limits(depth=d),
                                     on_start=lambda: searcher.stop() if job.stop_requested.is_set() else None)
            job.searching.clear()
            total_nodes += result.nodes
            self.send(f"info string bench depth {d} nodes {result.nodes} bestmove "
                      f"{pos.move_usi(result.best) if result.best is not None else 'resign'} sfen {sfen}")
        ms = max(1, int((time.perf_counter() - t0) * 1000))
        self.send(f"Total time (ms) : {ms}")
        self.send(f"Nodes searched  : {total_nodes}")
        self.send(f"Nodes/second    : {total_nodes * 1000 // ms}")


BENCH_DEPTH = 4
BENCH_SFENS = (
    "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1",
    "ln1g1gsnl/1r1s1k3/p1pppp1pp/6p2/1p7/2P3P2/PPSPPP2P/7R1/LN1GKGSNL b Bb 15",
    "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w RGgsn5p 1",
    "8l/1l+R2P3/p2pBG1pp/kps1p4/Nn1P2G2/P1P1P2PP/1PS6/1KSG3+r1/LN2+p3L w Sbgn3p 124",
)


def _perft(pos, depth: int, stop: threading.Event) -> int | None:
    """Leaf count ``depth`` plies below ``pos``, or ``None`` once ``stop`` is set: the last
    :data:`PERFT_CHUNK` plies are one bulk-counting kernel call, the plies above a Python loop that checks ``stop``."""
    if depth <= PERFT_CHUNK:
        return pos.perft(depth)
    total = 0
    for code in pos.legal_codes():
        if stop.is_set():
            return None
        pos.push_unchecked(int(code))
        count = _perft(pos, depth - 1, stop)
        pos.pop()
        if count is None:
            return None
        total += count
    return total


def _describe(exc: BaseException) -> str:
    """An exception in words for an ``info string error`` line: its message, or what it means when it has none."""
    text = str(exc).strip()
    if isinstance(exc, KeyError) and text:
        return text.strip("'\"")  # str(KeyError("x")) is "'x'"
    if isinstance(exc, ValueError) and text:
        return text
    kind = {IndexError: "an index out of range", KeyError: "an unknown key", TypeError: "a value of the wrong type",
            OverflowError: "a number too large", ZeroDivisionError: "a division by zero",
            RecursionError: "nesting too deep", MemoryError: "out of memory"}.get(type(exc))
    if kind is None:
        return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return f"{kind} ({type(exc).__name__}{': ' + text if text else ''})"


def _min_set(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


class _StderrToInfo:
    """``sys.stderr`` of the engine process. GUIs pipe stderr and never read it (a full pipe would block us), and
    the protocol says nothing goes there: whatever Python code still writes to it (a library's message) becomes
    ``info string stderr: ...`` lines on stdout."""

    def __init__(self, eng: UsiEngine) -> None:
        self._eng, self._buf, self._lock = eng, "", threading.Lock()

    def write(self, text: str) -> int:
        with self._lock:
            self._buf += text
            *lines, self._buf = self._buf.split("\n")
        for line in lines:
            if line.strip():
                self._eng.send(f"info string stderr: {line.rstrip()[:500]}")
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def _route_errors(eng: UsiEngine) -> None:
    """No traceback on stderr from any thread (a timer's or the search's): an uncaught exception in a thread is
    reported as ``info string error``, and Python's stderr goes to ``info string`` lines."""
    def hook(args: threading.ExceptHookArgs) -> None:
        if args.exc_type is not SystemExit:
            name = args.thread.name if args.thread is not None else "a thread"
            eng.error(f"{name} failed: {_describe(args.exc_value)}")

    threading.excepthook = hook
    sys.stderr = _StderrToInfo(eng)
