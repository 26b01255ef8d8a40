"""A USI engine driver built on python-chess's engine protocol machinery.

:class:`UsiProtocol` subclasses :class:`chess.engine.Protocol`: every exchange with the engine (handshake,
``isready``, a search) is a small :class:`chess.engine.BaseCommand` state machine fed one line at a time over an
asyncio subprocess transport, exactly as python-chess drives UCI engines. Positions and moves stay USI strings: the
client does not know the rules, the referee (:mod:`usi.match`) does.

:class:`UsiEngine` is the blocking wrapper, a :class:`chess.engine.SimpleEngine` subclass (a background event
loop thread per engine), which is what the referee uses::

    engine = UsiEngine.popen_usi(["fairy-stockfish"], timeout=10)
    engine.configure({"USI_Hash": 16})
    engine.new_game()
    result = engine.play("position startpos moves 7g7f", UsiLimit(nodes=1000))
    result.move, result.info.get("score")
    engine.gameover("win"); engine.quit()

Times in :class:`UsiLimit` are milliseconds (USI's unit); ``btime``/``binc`` are sente's (black's).
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import logging
import os
import shlex
import signal
import subprocess
import time
from typing import Any, Callable, Iterable, Mapping, Optional, Union

import chess.engine
from chess.engine import (AnalysisResult, BaseCommand, BestMove, Cp, EngineError, EngineTerminatedError, Mate,
                          Option, Score, UciOptionMap)

__all__ = ["UsiLimit", "UsiPlayResult", "UsiProtocol", "UsiEngine", "parse_info", "parse_bestmove",
           "parse_option", "EngineError", "EngineTerminatedError", "EngineOutputError", "score_to_cp",
           "MAX_LINE_BYTES", "REAP_TIMEOUT", "QUIT_GRACE", "KILL_SIGNAL", "own_process_group", "kill_process_group",
           "kill_pid"]

LOGGER = logging.getLogger("usi.client")
# Seconds to wait for the first readyok of an engine that may start cold: ours compiles its numba kernels then
# (measured up to ~10 minutes of wall time on a loaded 2-core machine; `fantasista --compile` does it ahead).
COLD_START_TIMEOUT = 900.0
#: The USI peers Debian packages (``apt-get install fairy-stockfish gpsshogi``): name -> program.
DEBIAN_ENGINES = {"fairy-stockfish": "/usr/games/fairy-stockfish", "gpsusi": "/usr/games/gpsusi"}
MATE_CP = 32000  # centipawn stand-in for "mate in 0" when a mate score is flattened to a number
#: The longest line (bytes, without its newline) taken from an engine, on stdout or stderr. USI lines are short (a long
#: ``info ... pv`` is a few KiB); an engine writing more without a newline is broken, and buffering all of it would grow
#: the runner's (or the GUI's) memory without bound, so it is killed instead (:class:`EngineOutputError`).
MAX_LINE_BYTES = 1 << 20
#: Seconds :meth:`UsiEngine.close` waits for a killed engine process to be reaped. SIGKILL acts at once: this only
#: bounds a wedged event loop, after which the process is killed and reaped from the closing thread.
REAP_TIMEOUT = 5.0
#: Seconds an engine has to exit after ``quit`` (the runner at the end of a game, the GUI when a game ends); then it
#: is killed (SIGKILL) and reaped
QUIT_GRACE = 2.0
KILL_SIGNAL = getattr(signal, "SIGKILL", signal.SIGTERM)  # Windows has no SIGKILL; os.kill(SIGTERM) terminates there

#: Options a USI GUI may always send, whether or not the engine lists them.
_IMPLICIT_OPTIONS = {"USI_Hash": Option("USI_Hash", "spin", 256, 1, None, []),
                     "USI_Ponder": Option("USI_Ponder", "check", False, None, None, [])}

#: ``info`` keys whose value is one integer.
_INT_INFO = ("depth", "seldepth", "nodes", "nps", "hashfull", "multipv", "tbhits", "cpuload")


class EngineOutputError(EngineTerminatedError):
    """The engine broke the protocol beyond reading (a line over :data:`MAX_LINE_BYTES`): it was killed. A kind of
    :class:`EngineTerminatedError`, so whoever handles a dead engine (a crash) handles this one."""


@dataclasses.dataclass
class UsiLimit:
    """The limits of one ``go``. Times are integer milliseconds; ``b*`` is sente (black), ``w*`` gote."""

    btime: Optional[int] = None
    wtime: Optional[int] = None
    byoyomi: Optional[int] = None
    binc: Optional[int] = None
    winc: Optional[int] = None
    movetime: Optional[int] = None
    depth: Optional[int] = None
    nodes: Optional[int] = None
    mate: Optional[Union[int, str]] = None  # ``go mate <ms>|infinite``
    infinite: bool = False

    def go_command(self, *, ponder: bool = False, searchmoves: Iterable[str] = ()) -> str:
        """The ``go`` line for these limits.

        >>> UsiLimit(btime=1000, wtime=2000, byoyomi=500).go_command()
        'go btime 1000 wtime 2000 byoyomi 500'
        >>> UsiLimit(nodes=100, depth=3).go_command(ponder=True)
        'go ponder depth 3 nodes 100'
        """
        parts = ["go"]
        if ponder:
            parts.append("ponder")
        if self.mate is not None:
            parts += ["mate", str(self.mate)]
            return " ".join(parts)
        for key in ("btime", "wtime", "byoyomi", "binc", "winc", "movetime", "depth", "nodes"):
            value = getattr(self, key)
            if value is not None:
                parts += [key, str(int(value))]
        if self.infinite:
            parts.append("infinite")
        searchmoves = list(searchmoves)
        if searchmoves:
            parts += ["searchmoves", *searchmoves]
        return " ".join(parts)

    def budget(self, turn: int) -> Optional[float]:
        """Seconds the side ``turn`` (0 sente, 1 gote) may think at most, or ``None`` when not time-limited."""
        if self.infinite or self.mate is not None:
            return None
        if self.movetime is not None:
            return self.movetime / 1000
        clock = self.btime if turn == 0 else self.wtime
        inc = self.binc if turn == 0 else self.winc
        if clock is None and self.byoyomi is None and inc is None:
            return None
        return ((clock or 0) + (self.byoyomi or 0) + (inc or 0)) / 1000


@dataclasses.dataclass
class UsiPlayResult:
    """The answer to one ``go``: ``move`` is a USI move, or ``None`` for ``resign``/``win``."""

    move: Optional[str]
    ponder: Optional[str] = None
    info: dict = dataclasses.field(default_factory=dict)
    resign: bool = False
    win: bool = False  # ``bestmove win``: an entering-king declaration
    elapsed: float = 0.0  # seconds from ``go`` (or ``ponderhit``) to ``bestmove``
    raw: str = ""  # the ``bestmove`` line's arguments as sent

    @property
    def token(self) -> str:
        """What the engine answered, as one word: the move, ``resign`` or ``win``."""
        return "resign" if self.resign else "win" if self.win else (self.move or "")


def score_to_cp(score: Optional[Score]) -> Optional[int]:
    """Flatten a relative score to centipawns, mates as ``±(MATE_CP - distance)``.

    >>> score_to_cp(Cp(31)), score_to_cp(Mate(3)), score_to_cp(Mate(-2)), score_to_cp(None)
    (31, 31997, -31998, None)
    """
    if score is None:
        return None
    return score.score(mate_score=MATE_CP)


def parse_info(arg: str) -> dict[str, Any]:
    """Parse the arguments of an ``info`` line into a dict.

    Keys: ``depth seldepth nodes nps hashfull multipv`` (int), ``time`` (seconds, float), ``score`` (a relative
    :class:`chess.engine.Score`: ``Cp`` or ``Mate``; ``mate +``/``mate -`` without a distance become ``Mate(+1)``
    / ``Mate(-1)``), ``lowerbound``/``upperbound`` (True when given), ``currmove`` (str), ``pv`` (list of USI
    strings, always the rest of the line) and ``string`` (the rest of the line).

    >>> d = parse_info("depth 3 seldepth 5 time 12 nodes 300 score cp -42 lowerbound pv 7g7f 3c3d")
    >>> d["depth"], d["time"], d["score"], d["lowerbound"], d["pv"]
    (3, 0.012, Cp(-42), True, ['7g7f', '3c3d'])
    >>> parse_info("score mate -4 string hello world")["string"]
    'hello world'
    """
    info: dict[str, Any] = {}
    tokens = arg.split()
    i = 0
    while i < len(tokens):
        key = tokens[i]
        i += 1
        try:
            if key in _INT_INFO:
                info[key] = int(tokens[i])
                i += 1
            elif key == "time":
                info["time"] = int(tokens[i]) / 1000
                i += 1
            elif key == "score":
                kind, value = tokens[i], tokens[i + 1]
                i += 2
                if kind == "cp":
                    info["score"] = Cp(int(value))
                elif kind == "mate":
                    if value in ("+", "-"):
                        info["score"] = Mate(1 if value == "+" else -1)
                    else:
                        n = int(value)
                        info["score"] = Mate(n) if n != 0 else Mate(-0)
                else:
                    raise ValueError(kind)
            elif key in ("lowerbound", "upperbound"):
                info[key] = True
            elif key == "currmove":
                info["currmove"] = tokens[i]
                i += 1
            elif key == "currmovenumber":
                info["currmovenumber"] = int(tokens[i])
                i += 1
            elif key == "pv":
                info["pv"] = tokens[i:]
                break
            elif key == "string":
                info["string"] = " ".join(tokens[i:])
                break
            else:
                LOGGER.debug("unknown info token %r in %r", key, arg)
        except (IndexError, ValueError):
            LOGGER.warning("malformed info line: %r", arg)
            break
    return info


def parse_bestmove(arg: str) -> UsiPlayResult:
    """Parse the arguments of a ``bestmove`` line.

    >>> parse_bestmove("7g7f ponder 3c3d").ponder
    '3c3d'
    >>> parse_bestmove("resign").resign, parse_bestmove("win").win
    (True, True)
    """
    tokens = arg.split()
    if not tokens:
        raise EngineError("empty bestmove")
    first = tokens[0]
    ponder = tokens[2] if len(tokens) >= 3 and tokens[1] == "ponder" else None
    if first == "resign":
        return UsiPlayResult(None, resign=True, raw=arg)
    if first == "win":
        return UsiPlayResult(None, win=True, raw=arg)
    return UsiPlayResult(first, ponder, raw=arg)


def parse_option(arg: str) -> Option:
    """Parse the arguments of an ``option`` line (USI types check/spin/combo/button/string/filename).

    >>> o = parse_option("name USI_Hash type spin default 256 min 1 max 1024")
    >>> o.name, o.type, o.default, o.min, o.max
    ('USI_Hash', 'spin', 256, 1, 1024)
    >>> parse_option("name BookFile type filename default <empty>").default
    ''
    >>> parse_option("name V type combo default a var a var b c").var
    ['a', 'b c']
    """
    fields: dict[str, str] = {}
    var: list[str] = []
    current = None
    keywords = ("name", "type", "default", "min", "max", "var")
    for token in arg.split():
        if token in keywords and not (current == "name" and token != "type"):
            current = token
            if token == "var":
                var.append("")
            else:
                fields.setdefault(token, "")
        elif current == "var":
            var[-1] = f"{var[-1]} {token}".strip()
        elif current is not None:
            fields[current] = f"{fields[current]} {token}".strip()
    otype = fields.get("type", "string")
    otype = {"filename": "file"}.get(otype, otype)
    name = fields.get("name", "")
    default: Any = fields.get("default")
    if default == "<empty>":
        default = ""

    def as_int(key: str) -> Optional[int]:
        try:
            return int(fields[key]) if fields.get(key) else None
        except ValueError:
            return None

    lo, hi = as_int("min"), as_int("max")
    bare = Option(name, otype, None, lo, hi, var)
    try:
        if otype == "check" and default is not None:
            default = default == "true"
        elif default is not None:
            default = bare.parse(default)
    except EngineError:
        pass
    return Option(name, otype, default, lo, hi, var)


def _format_value(value: Any) -> str:
    if value is True or value is False:
        return "true" if value else "false"
    return str(value)


#: how a USI engine reports an error without a reply of its own (ours, YaneuraOu's "Error!"); matched in any case
ERROR_REPORT_PREFIX = "info string error"
#: how many of an engine's error reports are kept (the first ones: a refused setoption comes before any game); an
#: engine that reports an error on every move must not grow the list for its whole life
MAX_REPORTED_ERRORS = 32


class UsiProtocol(chess.engine.Protocol):
    """The USI protocol (Shogidokoro's specification) as a python-chess engine protocol.

    Coroutines: :meth:`initialize` (``usi`` → ``usiok``), :meth:`ping` (``isready`` → ``readyok``),
    :meth:`configure` (``setoption``), :meth:`new_game` (``usinewgame``), :meth:`play` (``position`` + ``go`` →
    ``bestmove``), :meth:`analysis` (``go infinite`` streamed), :meth:`gameover`, :meth:`quit`. :meth:`stop` and
    :meth:`ponderhit` are plain lines sent while a ``play`` command runs.
    """

    def __init__(self) -> None:
        super().__init__()
        self.options: UciOptionMap[Option] = UciOptionMap()
        self.config: UciOptionMap[Any] = UciOptionMap()
        self.id: dict[str, str] = {}
        self.ponderhit_time: Optional[float] = None
        #: the engine's ``info string error ...`` lines so far (text after ``info string``): a refused ``setoption``
        #: shows here, so a match runner can stop before games of an engine that is not set up as asked; the first
        #: MAX_REPORTED_ERRORS only
        self.reported_errors: list[str] = []
        #: why the client killed the engine (its output broke the protocol), or ``None``; every later command
        #: raises :class:`EngineOutputError` with it
        self.fault: Optional[str] = None
        #: the engine's own process group (POSIX; :meth:`UsiEngine.popen_usi` starts it in one), killed whole with the
        #: engine so that children of a wrapper (``sh -c 'python engine.py'``) do not outlive it; ``None`` when
        #: there is none of its own (Windows, a mock transport) or once it has been killed
        self.pgid: Optional[int] = None

    def kill(self) -> None:
        """SIGKILL the engine from any thread without waiting: its whole process group (POSIX, once), else its
        process.

        A signal, never the transport's ``kill()``: that calls ``Popen.poll()`` first, which can reap the engine
        the group kill just ended, before asyncio's child watcher does; the watcher then reports the exit status
        as 255 ("Unknown child process pid") instead of -SIGKILL. The pid cannot name another process meanwhile:
        only the watcher reaps it."""
        if self.pgid is not None:
            kill_process_group(self)
            return
        try:
            pid = self.transport.get_pid()  # type: ignore[union-attr]
        except AttributeError:  # not started
            return
        if not self.returncode.done():
            kill_pid(pid)

    def pipe_data_received(self, fd: int, data: Union[bytes, str]) -> None:
        """Split the engine's output into lines, as python-chess does, but at most :data:`MAX_LINE_BYTES` a line:
        a longer one (or that much without a newline) is a fault of the engine, which is then killed."""
        if self.fault is not None:  # killed: the rest of its output is not read
            return
        if isinstance(data, str):
            data = data.encode("utf-8")
        buffer = self.buffer[fd]
        buffer.extend(data)
        if b"\n" not in data:  # only the new data can hold a newline: no rescan of a long partial line
            if len(buffer) > MAX_LINE_BYTES:
                self._output_fault(fd)
            return
        *lines, rest = buffer.split(b"\n")
        self.buffer[fd] = rest
        for line_bytes in lines:
            if len(line_bytes) > MAX_LINE_BYTES:
                self._output_fault(fd)
                return
            if line_bytes.endswith(b"\r"):
                line_bytes = line_bytes[:-1]
            try:
                line = line_bytes.decode("utf-8")
            except UnicodeDecodeError as err:
                LOGGER.warning("%s: >> %r (%s)", self, bytes(line_bytes[:200]), err)
                continue
            if fd == 1:
                self._line_received(line)
            else:
                self.error_line_received(line)
            if self.fault is not None:
                return
        if len(rest) > MAX_LINE_BYTES:
            self._output_fault(fd)

    def _output_fault(self, fd: int) -> None:
        """A line over :data:`MAX_LINE_BYTES`: fail the running command with the reason and kill the engine."""
        stream = "stdout" if fd == 1 else "stderr"
        self.fault = (f"sent a line of more than {MAX_LINE_BYTES} bytes ({MAX_LINE_BYTES / 2**20:g} MiB) without a "
                      f"newline on {stream}: the engine was killed")
        self.buffer[fd] = bytearray()
        LOGGER.info("%s: %s", self, self.fault)  # the command's error carries it to the caller
        command = self.command  # a queued command meets the exit (connection_lost), a later one the fault
        if command is not None and command.state == chess.engine.CommandState.ACTIVE and not command.result.done():
            command.engine_terminated(EngineOutputError(self.fault))
        self.kill()

    async def communicate(self, command_factory: Callable[[Any], BaseCommand[Any]]) -> Any:
        if self.fault is not None:
            raise EngineOutputError(self.fault)
        return await super().communicate(command_factory)

    def line_received(self, line: str) -> None:
        """Every line, before the running command sees it: keep the engine's error reports."""
        text = line.strip()
        if text.lower().startswith(ERROR_REPORT_PREFIX) and len(self.reported_errors) < MAX_REPORTED_ERRORS:
            self.reported_errors.append(text[len("info string "):])

    # ------------------------------------------------------------ handshake
    async def initialize(self) -> None:
        class UsiInitializeCommand(BaseCommand[None]):
            def __init__(self, engine: UsiProtocol) -> None:
                super().__init__(engine)
                self.engine = engine

            def check_initialized(self) -> None:
                if self.engine.initialized:
                    raise EngineError("engine already initialized")

            def start(self) -> None:
                self.engine.send_line("usi")

            def line_received(self, line: str) -> None:
                token, _, rest = line.strip().partition(" ")
                if token == "usiok" and not self.result.done():
                    self.engine.initialized = True
                    self.result.set_result(None)
                    self.set_finished()
                elif token == "id":
                    key, _, value = rest.partition(" ")
                    self.engine.id[key] = value.strip()
                elif token == "option":
                    option = parse_option(rest)
                    self.engine.options[option.name] = option
                    if option.default is not None:
                        self.engine.config[option.name] = option.default

        return await self.communicate(UsiInitializeCommand)

    async def ping(self) -> None:
        """``isready`` → ``readyok`` (blank lines and ``info`` lines while the engine warms up are ignored)."""

        class UsiPingCommand(BaseCommand[None]):
            def __init__(self, engine: UsiProtocol) -> None:
                super().__init__(engine)
                self.engine = engine

            def start(self) -> None:
                self.engine.send_line("isready")

            def line_received(self, line: str) -> None:
                if line.strip() == "readyok":
                    self.result.set_result(None)
                    self.set_finished()
                elif line.strip() and not line.startswith("info"):
                    LOGGER.warning("%s: unexpected engine output: %r", self.engine, line)

        return await self.communicate(UsiPingCommand)

    # -------------------------------------------------------------- options
    def _setoption(self, name: str, value: Any) -> None:
        option = self.options.get(name)
        if option is None and name in _IMPLICIT_OPTIONS:  # every USI engine accepts these without listing them
            option = _IMPLICIT_OPTIONS[name]
        if option is None:
            raise EngineError(f"engine does not support option {name} (available: {', '.join(self.options)})")
        if option.type != "button":
            if option.type == "check" and isinstance(value, str):
                # a typo ("ture") must not silently become false
                if value.lower() not in ("true", "false"):
                    raise EngineError(f"option {option.name} takes true or false, not {value!r}")
                value = value.lower() == "true"
            value = option.parse(value)
        line = f"setoption name {option.name}"
        if option.type != "button":
            line += f" value {_format_value(value)}"
        self.send_line(line)
        self.config[option.name] = value

    async def configure(self, options: Mapping[str, Any]) -> None:
        """Send ``setoption`` for each entry (raises :class:`EngineError` for an option the engine lacks)."""

        class UsiConfigureCommand(BaseCommand[None]):
            def __init__(self, engine: UsiProtocol) -> None:
                super().__init__(engine)
                self.engine = engine

            def start(self) -> None:
                for name, value in options.items():
                    self.engine._setoption(name, value)
                self.result.set_result(None)
                self.set_finished()

        return await self.communicate(UsiConfigureCommand)

    async def send_opponent_information(self, *, opponent: Any = None, engine_rating: Optional[int] = None) -> None:
        """USI has no opponent information: nothing is sent."""

    # ---------------------------------------------------------------- games
    def _send_now(self, line: str) -> Callable[[], None]:
        class UsiLineCommand(BaseCommand[None]):
            def __init__(self, engine: UsiProtocol) -> None:
                super().__init__(engine)
                self.engine = engine

            def start(self) -> None:
                self.engine.send_line(line)
                self.result.set_result(None)
                self.set_finished()

        return UsiLineCommand

    async def new_game(self) -> None:
        """``usinewgame``."""
        return await self.communicate(self._send_now("usinewgame"))

    async def gameover(self, result: str) -> None:
        """``gameover win|lose|draw`` (from this engine's point of view)."""
        if result not in ("win", "lose", "draw"):
            raise ValueError(f"gameover takes win, lose or draw, not {result!r}")
        return await self.communicate(self._send_now(f"gameover {result}"))

    async def send_game_result(self, board: Any, winner: Any = None, game_ending: Optional[str] = None,
                               game_complete: bool = True) -> None:
        """python-chess's hook; for USI pass ``winner`` as ``"win"``/``"lose"``/``"draw"`` (default draw)."""
        await self.gameover(winner if winner in ("win", "lose", "draw") else "draw")

    @staticmethod
    def position_command(position: Union[str, tuple]) -> str:
        """A ``position`` line from a ready line, ``"startpos"``/an SFEN, or ``(sfen_or_startpos, moves)``.

        >>> UsiProtocol.position_command(("startpos", ["7g7f"]))
        'position startpos moves 7g7f'
        >>> UsiProtocol.position_command("9/9/9/9/9/9/9/9/9 b - 1")
        'position sfen 9/9/9/9/9/9/9/9/9 b - 1'
        """
        if isinstance(position, tuple):
            base, moves = position
            line = UsiProtocol.position_command(base)
            return f"{line} moves {' '.join(moves)}" if moves else line
        text = position.strip()
        if text.startswith("position "):
            return text
        if text == "startpos" or text.startswith("startpos ") or text.startswith("sfen "):
            return f"position {text}"
        return f"position sfen {text}"

    async def play(self, position: Union[str, tuple], limit: UsiLimit, *, ponder: bool = False,
                   searchmoves: Iterable[str] = (), on_info: Optional[Callable[[dict], None]] = None
                   ) -> UsiPlayResult:
        """Send the position and ``go``; return at ``bestmove``. ``info`` lines are merged into
        ``result.info`` (the last value of each key wins) and each is passed to ``on_info``.

        With ``ponder=True`` the ``go ponder`` search runs until :meth:`ponderhit` or :meth:`stop` is sent.
        Cancelling (e.g. by a time-out around this coroutine) sends ``stop``; the late ``bestmove`` is swallowed.
        """
        position_line = self.position_command(position)
        go_line = limit.go_command(ponder=ponder, searchmoves=searchmoves)
        engine = self

        class UsiPlayCommand(BaseCommand[UsiPlayResult]):
            def __init__(self, engine_: UsiProtocol) -> None:
                super().__init__(engine_)
                self.engine = engine_

            def start(self) -> None:
                self.info: dict[str, Any] = {}
                engine.ponderhit_time = None
                self.engine.send_line(position_line)
                self.engine.send_line(go_line)
                self.start_time = time.perf_counter()

            def line_received(self, line: str) -> None:
                token, _, rest = line.strip().partition(" ")
                if token == "info":
                    parsed = parse_info(rest)
                    self.info.update(parsed)
                    if on_info is not None:
                        on_info(parsed)
                elif token == "bestmove":
                    if self.state == chess.engine.CommandState.ACTIVE and not self.result.done():
                        started = engine.ponderhit_time or self.start_time
                        result = parse_bestmove(rest)
                        result.info = self.info
                        result.elapsed = time.perf_counter() - started
                        self.result.set_result(result)
                    self.set_finished()
                elif token:
                    LOGGER.debug("%s: unexpected engine output: %r", self.engine, line)

            def cancel(self) -> None:
                self.engine.send_line("stop")

        return await self.communicate(UsiPlayCommand)

    def stop(self) -> None:
        """``stop`` the running search (its ``bestmove`` still ends the ``play`` command)."""
        self.send_line("stop")

    def ponderhit(self) -> None:
        """``ponderhit``: the pondered move was played; the search's clock starts now."""
        self.ponderhit_time = time.perf_counter()
        self.send_line("ponderhit")

    async def analysis(self, board: Any, limit: Optional[UsiLimit] = None, *, multipv: Optional[int] = None,
                       game: object = None, info: Any = None, root_moves: Any = None,
                       options: Mapping[str, Any] = {}) -> AnalysisResult:
        """Start an analysis of ``board`` (a position as for :meth:`play`); iterate the returned
        :class:`chess.engine.AnalysisResult` for info dicts and call its ``stop()`` to end it."""
        position_line = self.position_command(board)
        go_line = (limit or UsiLimit(infinite=True)).go_command(searchmoves=root_moves or ())

        class UsiAnalysisCommand(BaseCommand[AnalysisResult]):
            def __init__(self, engine: UsiProtocol) -> None:
                super().__init__(engine)
                self.engine = engine

            def start(self) -> None:
                self.analysis = AnalysisResult(stop=lambda: self.cancel())
                if multipv is not None and "MultiPV" in self.engine.options:
                    self.engine._setoption("MultiPV", multipv)
                for name, value in options.items():
                    self.engine._setoption(name, value)
                self.engine.send_line(position_line)
                self.engine.send_line(go_line)
                self.result.set_result(self.analysis)

            def line_received(self, line: str) -> None:
                token, _, rest = line.strip().partition(" ")
                if token == "info":
                    self.analysis.post(parse_info(rest))  # type: ignore[arg-type]
                elif token == "bestmove":
                    best = parse_bestmove(rest)
                    self.set_finished()
                    self.analysis.set_finished(BestMove(best.move, best.ponder))  # type: ignore[arg-type]

            def cancel(self) -> None:
                self.engine.send_line("stop")

            def engine_terminated(self, exc: Exception) -> None:
                self.analysis.set_exception(exc)

        return await self.communicate(UsiAnalysisCommand)

    async def quit(self) -> None:
        """``quit`` and wait for the process to exit."""
        self.send_line("quit")
        await asyncio.shield(self.returncode)


def own_process_group(pid: int) -> Optional[int]:
    """The process group ``pid`` leads, if it leads one that is not this process's own (POSIX), else ``None``.

    Only such a group may be killed whole: killing this process's group would kill the runner and its terminal
    job."""
    if os.name != "posix":
        return None
    try:
        pgid = os.getpgid(pid)
    except (OSError, OverflowError):  # gone (already reaped), or not a pid (a mock transport's id)
        return None
    return pgid if pgid == pid and pgid != os.getpgrp() else None


def kill_pid(pid: Any) -> None:
    """SIGKILL one process by its pid, if ``pid`` names one (a positive number: 0 or -1 would signal whole groups);
    nothing if it is already gone."""
    if not isinstance(pid, int) or pid <= 0:
        return
    try:
        os.kill(pid, KILL_SIGNAL)
    except OSError:
        pass


def kill_process_group(protocol: "UsiProtocol") -> None:
    """SIGKILL ``protocol``'s engine's own process group, once (then forget it: after every member is gone its number
    may name someone else's group). Nothing without one (Windows: untouched)."""
    pgid, protocol.pgid = protocol.pgid, None
    if pgid is None:
        return
    try:
        os.killpg(pgid, KILL_SIGNAL)
    except (ProcessLookupError, PermissionError):  # no member left (or none this process may signal)
        pass


class UsiEngine(chess.engine.SimpleEngine):
    """Blocking wrapper over :class:`UsiProtocol` (python-chess's :class:`~chess.engine.SimpleEngine` pattern:
    the protocol runs on a background event loop; each method waits for its command, with a time-out).

    ``timeout`` (seconds) bounds the handshake and the short commands; :meth:`play` takes its own ``timeout``
    (``None`` waits forever) and raises :class:`TimeoutError` when it passes (``stop`` has then been sent).
    """

    def __init__(self, transport: asyncio.SubprocessTransport, protocol: chess.engine.Protocol, *,
                 timeout: Optional[float] = 10.0) -> None:
        super().__init__(transport, protocol, timeout=timeout)
        # made by python-chess right after the start, before the handshake: a failed handshake's close kills the
        # group too (the process is not reaped yet unless it died at once, and then it has no group to look up)
        protocol.pgid = own_process_group(transport.get_pid())  # type: ignore[attr-defined]

    @classmethod
    def popen_usi(cls, command: Union[str, list[str]], *, timeout: Optional[float] = 10.0,
                  debug: Optional[bool] = None, setpgrp: Optional[bool] = None, **popen_args: Any) -> "UsiEngine":
        """Start ``command`` (a list, or a string split like a shell would) and run the ``usi`` handshake.

        ``setpgrp`` (default: on POSIX) starts the engine in a process group of its own: a terminal's Ctrl-C does not
        reach it (its owner ends it), and :meth:`close` kills the whole group, so that the children of a wrapper
        (``sh -c 'python engine.py'``) go with it. On Windows the default stays python-chess's (no new group)."""
        if isinstance(command, str):
            command = shlex.split(command)
        if setpgrp is None:
            setpgrp = os.name == "posix"
        return cls.popen(UsiProtocol, command, timeout=timeout, debug=debug, setpgrp=setpgrp,
                         **popen_args)  # type: ignore[return-value]

    def _submit(self, coro: Any, timeout: Optional[float]) -> "concurrent.futures.Future[Any]":
        """Run ``coro`` on the engine's loop, bounded by ``timeout``. An engine the client killed for its output
        raises :class:`EngineOutputError` with the reason, also once its loop has ended."""
        try:
            if self.usi.fault is not None:
                raise EngineOutputError(self.usi.fault)
            with self._not_shut_down():
                return asyncio.run_coroutine_threadsafe(asyncio.wait_for(coro, timeout), self.protocol.loop)
        except BaseException:
            coro.close()  # never scheduled: no "never awaited" warning
            raise

    def _run(self, coro: Any, timeout: Optional[float]) -> Any:
        return self._submit(coro, timeout).result()

    def _call_soon(self, fn: Callable[[], None]) -> None:
        with self._not_shut_down():
            self.protocol.loop.call_soon_threadsafe(fn)

    @property
    def usi(self) -> UsiProtocol:
        return self.protocol  # type: ignore[return-value]

    @property
    def config(self) -> dict[str, Any]:
        return dict(self.usi.config)

    def configure(self, options: Mapping[str, Any]) -> None:
        return self._run(self.usi.configure(options), self.timeout)

    @property
    def reported_errors(self) -> list[str]:
        """The engine's ``info string error`` reports so far (after ``configure`` and ``isready``: a refused
        option's)."""
        return list(self.usi.reported_errors)

    def isready(self, timeout: Optional[float] = None,
                progress: Optional[Callable[[float], None]] = None) -> None:
        """``isready`` → ``readyok`` within ``timeout`` (default: the engine's); ``progress(seconds waited)`` is
        called about once a second meanwhile (a first start may compile for minutes: show that it is alive)."""
        if progress is None:
            return self._run(self.usi.ping(), timeout or self.timeout)
        future = self._submit(self.usi.ping(), timeout or self.timeout)
        t0 = time.monotonic()
        while not concurrent.futures.wait([future], timeout=1.0).done:
            progress(time.monotonic() - t0)
        return future.result()

    def new_game(self) -> None:
        return self._run(self.usi.new_game(), self.timeout)

    def play(self, position: Union[str, tuple], limit: UsiLimit, *, ponder: bool = False,  # type: ignore[override]
             searchmoves: Iterable[str] = (), timeout: Optional[float] = None) -> UsiPlayResult:
        return self._run(self.usi.play(position, limit, ponder=ponder, searchmoves=searchmoves), timeout)

    def play_async(self, position: Union[str, tuple], limit: UsiLimit, *, ponder: bool = False,
                   timeout: Optional[float] = None) -> "concurrent.futures.Future[UsiPlayResult]":
        """Like :meth:`play` but return at once with a future (use with ``ponder=True``, then
        :meth:`ponderhit` or :meth:`stop`)."""
        return self._submit(self.usi.play(position, limit, ponder=ponder), timeout)

    def stop(self) -> None:
        self._call_soon(self.usi.stop)

    def ponderhit(self) -> None:
        self._call_soon(self.usi.ponderhit)

    def gameover(self, result: str) -> None:
        return self._run(self.usi.gameover(result), self.timeout)

    def kill(self) -> None:
        """SIGKILL the engine (with its process group on POSIX) from this thread and return at once (an abort:
        nothing is waited for; :meth:`close` reaps): :meth:`UsiProtocol.kill`, which signals rather than calling the
        transport's kill."""
        self.usi.kill()

    def quit(self, timeout: Optional[float] = None) -> None:
        """``quit``, then, if the process has not exited within ``timeout`` (the grace period; default: the engine's),
        kill it and its process group (SIGKILL) and wait until it is reaped (:meth:`close`)."""
        try:
            self._run(self.usi.quit(), timeout or self.timeout)
        except (asyncio.TimeoutError, TimeoutError, EngineError, concurrent.futures.CancelledError):
            pass
        finally:
            self.close()

    def close(self) -> None:
        """Kill the engine process unless it has exited (SIGKILL, by python-chess's transport close) and wait until
        it is reaped, so that when this returns the process is gone: python-chess only schedules the kill on the
        engine's event-loop thread, and a runner that exits meanwhile (that thread is a daemon when the engine was
        started from one) left the engine running. Called on that loop thread itself (python-chess does when the
        process ends on its own), it kills the group and only schedules the rest.

        An engine in a process group of its own (:meth:`popen_usi`) has the whole group SIGKILLed first, from this
        thread: the transport kills only the engine's pid, and the children of a wrapper (``sh -c 'python
        engine.py'``) ignoring ``quit`` and SIGTERM ran on. Those children are not ours to reap (their parent
        was the wrapper)."""
        kill_process_group(self.usi)
        super().close()
        try:
            if asyncio.get_running_loop() is self.protocol.loop:
                return
        except RuntimeError:  # no loop in this thread
            pass
        try:
            self.returncode.result(timeout=REAP_TIMEOUT)
        except concurrent.futures.TimeoutError:
            self._kill_and_reap()
        except Exception:  # noqa: BLE001 - the background task failed: make sure of the process ourselves
            self._kill_and_reap()

    def _kill_and_reap(self) -> None:
        """The fallback when the event loop did not report the exit: SIGKILL and reap from this thread."""
        kill_process_group(self.usi)
        proc = getattr(self.transport, "_proc", None)  # asyncio keeps the subprocess.Popen here
        if proc is None:
            return
        try:
            if proc.poll() is None:
                proc.kill()
                proc.wait(REAP_TIMEOUT)
        except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
            LOGGER.warning("%s: could not reap pid %s: %s", self, getattr(proc, "pid", "?"), exc)

    def __enter__(self) -> "UsiEngine":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
