"""``fantasista-gui``: a local web GUI for every variant, served by the standard library.

::

    fantasista-gui --port 8765            # then open http://127.0.0.1:8765/
    fantasista-gui --engine yane=/opt/yaneuraou/YaneuraOu   # offer another USI engine, by name

Each page (browser tab) has its own game, a :class:`gui.session.Session` (``POST /api/session``); the page
(``gui/static/``) draws it and sends clicks. The page chooses engines by name among those the server was started
with (:mod:`gui.engines`): no request ever carries a command.

Security (see ``docs/gui.md``): every request must name this server in its ``Host`` header
(``127.0.0.1:<port>`` or ``localhost:<port>``; DNS rebinding); every ``POST`` must be ``Content-Type:
application/json`` and carry the per-server token of the served page in ``X-Fantasista-Token`` (a page of another
origin can neither read the token nor send these headers without a CORS preflight, which is refused). Anything
else is HTTP 403 ``{"error": ...}``. A malformed request is 400, a body over :data:`MAX_BODY` 413 (and the connection
is closed), and nothing a request sends reaches the log as a traceback.

JSON API (every answer is JSON; a refused request is ``{"error": "..."}`` and changes nothing):

=========================  ==========================================================================================
``GET  /api/variants``     the variants, their options and whether they are playable
``GET  /api/engines``      the engines on offer: ``[{"name", "builtin"}]``
``POST /api/session``      ``{"id"?}``: this tab's game: ``{"id", "resumed"}`` (a new one unless ``id`` is known)
``GET  /api/state``        the game as the page may see it; ``?since=<version>&wait=<s>`` waits for a change
``POST /api/new``          ``{"variant", "options", "players": [sente, gote], "seed", "sfen", "replace"?}``; a player
                           is ``"human"``, ``"engine"`` or ``{"kind": "engine", "engine": <name>, "depth",
                           "movetime", "nodes"}``, either with ``"clock": {"main", "byoyomi" | "inc"}`` (ms);
                           an unfinished game is replaced only with ``"replace": true`` (else 409 ``{"error",
                           "confirm": true}``)
``POST /api/move``         ``{"move": "<token>", "line"?, "ply"?}``: a legal action token of the person to move; with
                           ``line`` and ``ply`` played in that earlier position: a branch (answer: the state and
                           ``at``: ``{"line", "ply"}`` where the move led)
``POST /api/undo``         back to before the last move made by a person (``/api/redo`` replays it)
``POST /api/resign``       the person (or, with two, the side to move) resigns
``POST /api/draw``         ``{"action": "offer" | "accept" | "decline"}``: a person's draw offer and its answer (an
                           engine answers an offer at once)
``POST /api/declare``      入玉宣言: the person to move declares a win by entering king (standard shogi; refused
                           with what is missing when the position does not meet the rule)
``GET  /api/view``         ``?line=<line>&ply=<plies>``: the position after that many plies of that line (review),
                           as this page may see it, with the legal moves when a person may play there (a branch)
``GET  /api/record``       ``?format=json|kif|ki2|csa``: ``{"text", "name", "mime"}`` (KIF/KI2/CSA for shogi only)
``POST /api/load``         ``{"text": "<JSON record, KIF, KI2, CSA, SFEN or position line>", "players"?,
                           "default_players"?, "replace"?, "variant"?}``: the players are ``players``, else the
                           record's (persons, engines the server offers by name), else ``default_players``;
                           ``variant`` is the one of a pasted SFEN or position line
``POST /api/turnstep``     ``{"actions": [...]}``: mawarikudoi, a turn being built action by action: the runner
                           after those actions (a preview board and panel), the actions left, the possible next ones;
                           with ``"ends": true`` also every place the rest of the turn can end
``POST /api/turnend``      ``{"end": <end state>, "actions"?: [...]}``: mawarikudoi, play the turn made of those
                           actions and then the canonical path to that end
``POST /api/wavestep``     ``{"moves": [...]}``: fantasista, a silver wave chosen silver by silver in any order: the
                           moves a wave can add, and the canonical ``token`` when the chosen set is a whole wave
``POST /api/analysis``     ``{"on", "engine"?, "multipv"?, "line"?, "ply"?}``: analyse the live position (followed
                           as the game goes on) or a reviewed one without end (``go infinite``); ``"on": false``
                           stops; the lines stream into the state's ``analysis``
``GET  /api/chance``       ``?line=&ply=``: the coming chance event (roll, throw, card) and its probabilities
``GET  /api/rules``        each variant's rules in Japanese and English, and the labels of raw tokens
=========================  ==========================================================================================

Every ``/api/`` request but ``variants``, ``engines`` and ``session`` names its game in ``X-Fantasista-Game``.
"""
from __future__ import annotations

import argparse
import hmac
import json
import math
import mimetypes
import re
import secrets
import socket
import sys
import threading
import time
import traceback
import webbrowser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterable, Optional
from urllib.parse import parse_qs, urlparse

from usi.client import QUIT_GRACE, REAP_TIMEOUT
from usi.engine import SHOWN_INPUT_CHARS, SHOWN_TOKEN_CHARS, package_version

from . import games as G
from .engines import describe, engine_table, parse_engine_arg
from .session import RequestError, Session

STATIC = Path(__file__).resolve().parent / "static"
#: The largest request body read (a long JSON record is well under a megabyte); a larger one is 413.
MAX_BODY = 4 * 1024 * 1024
#: At most this much of a refused request's unread body is received (and thrown away) before the connection closes.
MAX_DISCARD = 1024 * 1024
#: How deeply a request's JSON may nest (the deepest the API uses is 3).
MAX_JSON_DEPTH = 32
#: Games (tabs) one server keeps; past it a new tab takes the place of the game idle longest, if idle long enough.
MAX_SESSIONS = 32
#: Seconds a game must have been idle (no request from its page) before a new tab may take its place.
SESSION_IDLE = 600.0
#: Seconds the server waits at its shutdown for the engines to be gone: their grace after ``quit``, then the kill
SHUTDOWN_WAIT_S = QUIT_GRACE + REAP_TIMEOUT + 1.0
TOKEN_HEADER = "X-Fantasista-Token"
GAME_HEADER = "X-Fantasista-Game"
#: The host names a page may use for a server bound to 127.0.0.1 (the Host header, checked on every request).
LOCAL_NAMES = ("127.0.0.1", "localhost")
#: Where the served page receives the token (``index.html``; the page reads it from its ``<meta>`` tag).
TOKEN_SLOT = "{{FANTASISTA_TOKEN}}"
_LENGTH = re.compile(r"^[0-9]{1,12}$")
#: A request method (an RFC 9110 token) and the HTTP versions answered: 1.x (1.0, 1.1 and later minor versions).
_METHOD = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_VERSION = re.compile(r"HTTP/([0-9])\.([0-9])")
#: Empty lines skipped before a request line (RFC 9112 2.2: a client may send one after a body).
MAX_EMPTY_LINES = 8
#: The longest request line read (the standard library's limit too); a longer one is 414.
MAX_REQUEST_LINE = 65536


class HttpError(Exception):
    """A request answered with ``status`` and ``{"error": message}`` before it reached a game."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status, self.extra = status, extra


class GuiServer(ThreadingHTTPServer):
    """The HTTP server: the token of its page, the engines it offers, and one game per page (tab)."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], engines: Optional[dict[str, list[str]]] = None,
                 quiet: bool = True, allowed_hosts: Iterable[str] = ()) -> None:
        super().__init__(address, Handler)
        self.engines = engine_table() if engines is None else dict(engines)
        self.quiet = quiet
        self.token = secrets.token_urlsafe(32)  # only the page this server serves knows it
        port = self.server_address[1]
        names = {n.lower() for n in (*LOCAL_NAMES, *allowed_hosts)}
        self.allowed_hosts = {f"{n}:{port}" for n in names} | (names if port == 80 else set())
        self.sessions: dict[str, Session] = {}
        self.sessions_lock = threading.Lock()
        G.variant_infos()  # imports the rules layer (numba) now, not inside the first page's request

    def handle_error(self, request, client_address) -> None:
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):  # the page went away (reload, poll)
            return
        super().handle_error(request, client_address)

    def open_session(self, wanted: Any = None) -> tuple[str, Session, bool]:
        """(id, session, resumed): the game ``wanted`` names if it exists, else a new one for a new tab."""
        with self.sessions_lock:
            if isinstance(wanted, str) and wanted in self.sessions:
                session = self.sessions[wanted]
                session.last_seen = time.monotonic()
                return wanted, session, True
            if len(self.sessions) >= MAX_SESSIONS:
                oldest = min(self.sessions, key=lambda k: self.sessions[k].last_seen)
                if time.monotonic() - self.sessions[oldest].last_seen < SESSION_IDLE:
                    raise HttpError(503, f"{MAX_SESSIONS} games are open in other tabs: close one or wait "
                                         f"{SESSION_IDLE:.0f} s")
                self.sessions.pop(oldest).close()
            sid = secrets.token_urlsafe(12)
            session = Session(engines=self.engines)
            self.sessions[sid] = session
            return sid, session, False

    def session(self, sid: Optional[str]) -> Session:
        """The game of a request's ``X-Fantasista-Game`` header; 404 with ``no_game`` when unknown."""
        with self.sessions_lock:
            session = self.sessions.get(sid or "")
        if session is None:
            raise HttpError(404, "no such game on this server (it was restarted?): reload the page", no_game=True)
        session.last_seen = time.monotonic()
        return session

    def shutdown_all(self) -> None:
        self.shutdown()
        self.server_close()
        self.close_sessions()

    def close_sessions(self, wait_s: float = 0.0) -> None:
        """End every session's engines; with ``wait_s``, wait up to that long (all at once) until they are gone."""
        with self.sessions_lock:
            sessions, self.sessions = list(self.sessions.values()), {}
        closers = [threading.Thread(target=s.close, args=(wait_s,), daemon=True) for s in sessions]
        for t in closers:
            t.start()
        for t in closers:
            t.join()


def _json_depth(data: Any) -> int:
    """How deeply ``data`` nests (without recursion)."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return deepest


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _typed(data: dict, key: str, kinds: tuple, what: str, default: Any = None) -> Any:
    """``data[key]`` when it is of one of ``kinds`` (absent or null: ``default``), else a 400 naming the field."""
    value = data.get(key)
    if value is None:
        return default
    if isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds):
        return value
    raise RequestError(f"'{key}' must be {what}, not {json.dumps(value)[:SHOWN_INPUT_CHARS]}")


def _strings(data: dict, key: str, default: Any = None) -> Any:
    value = _typed(data, key, (list,), "a list of strings", default)
    if isinstance(value, list) and not all(isinstance(v, str) for v in value):
        raise RequestError(f"'{key}' must be a list of strings")
    return value


class Handler(BaseHTTPRequestHandler):
    server: GuiServer
    protocol_version = "HTTP/1.1"
    timeout = 120  # seconds a silent connection may hold a thread

    # ------------------------------------------------------------------ plumbing
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        if not self.server.quiet:
            super().log_message(format, *args)

    def _send(self, status: int, body: bytes, mime: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", mime)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("X-Frame-Options", "DENY")  # no other site may frame the page (clicks under its control)
        self.send_header("Content-Security-Policy", "frame-ancestors 'none'")
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, data: Any, status: int = 200) -> None:
        self._send(status, json.dumps(data, ensure_ascii=False).encode("utf-8"), "application/json; charset=utf-8")

    def _error(self, message: str, status: int = 400, **extra: Any) -> None:
        self._json({"error": message, **extra}, status)

    def parse_request(self) -> bool:
        """The request line checked before the standard library reads it: a malformed line is 400 and an HTTP
        version other than 1.x is 505, each a full HTTP/1.1 answer (the library would take a line it cannot
        read for HTTP/0.9 and answer a bare body with no status line)."""
        self.command, self.request_version, self.close_connection = None, "HTTP/1.0", True  # answers get a status line
        for _ in range(MAX_EMPTY_LINES):
            if self.raw_requestline not in (b"\r\n", b"\n"):
                break
            self.raw_requestline = self.rfile.readline(MAX_REQUEST_LINE + 1)
        if not self.raw_requestline:
            return False  # the client went away
        if len(self.raw_requestline) > MAX_REQUEST_LINE:
            self.requestline = ""
            self.send_error(414, f"request line longer than {MAX_REQUEST_LINE} bytes")
            return False
        line = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
        self.requestline = line
        words = line.split(" ")
        if len(words) != 3 or not _METHOD.fullmatch(words[0]) or not words[1] or any(
                ch.isspace() or ord(ch) < 33 or ord(ch) == 127 for ch in words[1]):
            self.send_error(400, f"malformed request line {line[:SHOWN_INPUT_CHARS]!r} "
                                 "(expected: METHOD /path HTTP/1.1)")
            return False
        version = _VERSION.fullmatch(words[2])
        if version is None:
            self.send_error(400, f"malformed HTTP version {words[2][:SHOWN_TOKEN_CHARS]!r} (expected HTTP/1.1)")
            return False
        if version.group(1) != "1":
            self.send_error(505, f"HTTP version {words[2]} is not supported: this server speaks HTTP/1.1")
            return False
        return super().parse_request()

    def send_error(self, code: int, message: Optional[str] = None, explain: Optional[str] = None) -> None:
        """The base class's errors (a malformed request line or header, an unknown method) as JSON too."""
        self.close_connection = True
        try:
            self._error(message or explain or f"HTTP {code}", code)
        except (ConnectionError, TimeoutError):
            pass

    def _check_host(self) -> None:
        hosts = self.headers.get_all("Host") or []
        if len(hosts) != 1 or hosts[0].strip().lower() not in self.server.allowed_hosts:
            raise HttpError(403, "this server answers only to http://127.0.0.1:<port>/ or http://localhost:<port>/ "
                                 f"(Host {', '.join(hosts) or 'missing'!s} refused)")

    def _check_post(self) -> None:
        """A state-changing request: JSON, and the token of the page this server served."""
        mime = (self.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
        if mime != "application/json":
            raise HttpError(403, f"a request must be Content-Type: application/json, not {mime or 'none'!r}")
        token = self.headers.get(TOKEN_HEADER) or ""
        if not hmac.compare_digest(token.encode("utf-8", "replace"), self.server.token.encode()):
            raise HttpError(403, "missing or wrong page token: reload the page (a request from another site, "
                                 "or the server was restarted)")

    def _body_length(self) -> int:
        if self.headers.get("Transfer-Encoding"):
            raise HttpError(400, "a body must come with Content-Length (no Transfer-Encoding)")
        lengths = {v.strip() for v in self.headers.get_all("Content-Length") or []}
        if not lengths:
            return 0
        if len(lengths) > 1:
            raise HttpError(400, f"conflicting Content-Length headers {sorted(lengths)}")
        text = lengths.pop()
        if not _LENGTH.match(text):
            raise HttpError(400, f"Content-Length must be a non-negative integer, not {text[:40]!r}")
        length = int(text)
        if length > MAX_BODY:
            raise HttpError(413, f"request too large ({length} bytes; at most {MAX_BODY})")
        return length

    def _body(self, length: int) -> dict:
        raw = self.rfile.read(length) if length else b""
        if len(raw) != length:
            self.close_connection = True
            raise HttpError(400, f"the body ended after {len(raw)} of {length} bytes")
        if not raw.strip():
            return {}
        try:
            data = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
        except RecursionError:
            raise RequestError(f"the request body nests deeper than {MAX_JSON_DEPTH} levels") from None
        except UnicodeDecodeError as exc:
            raise RequestError(f"the request body is not UTF-8: {exc}") from None
        except ValueError as exc:
            raise RequestError(f"the request body is not JSON: {exc}") from None
        if not isinstance(data, dict):
            raise RequestError("the request body must be a JSON object")
        if _json_depth(data) > MAX_JSON_DEPTH:
            raise RequestError(f"the request body nests deeper than {MAX_JSON_DEPTH} levels")
        return data

    def _guarded(self, route) -> None:
        """Run ``route``; every failure becomes a JSON answer (a bug: 500, its traceback in the log)."""
        try:
            route()
        except HttpError as exc:
            self._error(str(exc), exc.status, **exc.extra)
        except RequestError as exc:
            self._error(str(exc), exc.status, **({"confirm": True} if exc.status == 409 else {}))
        except (ConnectionError, TimeoutError):
            self.close_connection = True
        except Exception as exc:  # noqa: BLE001 - a bug of ours: answer, and log it for the report
            self.close_connection = True
            sys.stderr.write(f"fantasista-gui: internal error on {self.command} {self.path[:200]}\n"
                             + traceback.format_exc())
            self._error(f"internal error: {type(exc).__name__}: {exc}", 500)

    # ------------------------------------------------------------------ routes
    def do_HEAD(self) -> None:  # noqa: N802
        self.do_GET()

    def do_OPTIONS(self) -> None:  # noqa: N802 - a CORS preflight: no other origin may call the API
        self.close_connection = True
        self._guarded(self._options)

    def _options(self) -> None:
        self._check_host()
        raise HttpError(403, "requests from other origins are not allowed")

    def do_GET(self) -> None:  # noqa: N802
        if (self.headers.get("Content-Length") or "0").strip() != "0" or self.headers.get("Transfer-Encoding"):
            self.close_connection = True  # a body nobody reads must not be taken for the next request
        self._guarded(self._get)

    def _get(self) -> None:
        self._check_host()
        url = urlparse(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        if url.path in ("/", "/index.html"):
            return self._static("index.html")
        if url.path == "/favicon.ico":
            return self._send(204, b"", "image/x-icon")
        if url.path.startswith("/static/"):
            return self._static(url.path[len("/static/"):])
        if url.path == "/api/variants":
            return self._json([info.to_json() for info in G.variant_infos().values()])
        if url.path == "/api/engines":
            return self._json(describe(self.server.engines))
        if url.path == "/api/rules":
            from .rules import RULES, labels

            return self._json({"rules": RULES, "labels": labels()})
        if url.path not in ("/api/state", "/api/record", "/api/view", "/api/chance"):
            raise HttpError(404, f"no such page {url.path[:SHOWN_INPUT_CHARS]!r}")
        session = self.server.session(self.headers.get(GAME_HEADER))
        if url.path == "/api/state":
            since, wait = query.get("since"), query.get("wait")
            if since is not None:
                try:
                    since_v, wait_v = int(since), float(wait or 20)
                except ValueError:
                    raise RequestError("since and wait must be numbers") from None
                if not math.isfinite(wait_v) or wait_v < 0:
                    raise RequestError("wait must be a number of seconds from 0 to 60")
                session.wait(since_v, min(wait_v, 60))
            return self._json(session.state())
        if url.path == "/api/chance":
            try:
                line = int(query["line"]) if "line" in query else None
                ply = int(query["ply"]) if "ply" in query else None
            except ValueError:
                raise RequestError("line and ply must be integers") from None
            return self._json(session.chance(line, ply))
        if url.path == "/api/view":
            try:
                line, ply = int(query.get("line", "")), int(query.get("ply", ""))
            except ValueError:
                raise RequestError("line and ply must be integers") from None
            return self._json(session.view(line, ply))
        text, mime, name = session.export(query.get("format", "json"))
        return self._json({"text": text, "mime": mime, "name": name})

    def do_POST(self) -> None:  # noqa: N802
        self._unread = False
        self._guarded(self._post)
        if self._unread:
            self._discard_unread()

    def _discard_unread(self) -> None:
        """After refusing a request whose body was not read: end the answer and throw away what the client still
        sends (a bounded amount, briefly), so that closing does not reset the connection under the answer."""
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_WR)
            self.connection.settimeout(1.0)
            for _ in range(MAX_DISCARD // 65536):
                if not self.connection.recv(65536):
                    break
        except OSError:
            pass

    def _post(self) -> None:
        try:
            self._check_host()
            self._check_post()
            length = self._body_length()
        except HttpError:
            self.close_connection = True  # the body is not read: it must not be taken for the next request
            self._unread = True
            raise
        data = self._body(length)
        path = urlparse(self.path).path
        if path == "/api/session":
            sid, _, resumed = self.server.open_session(data.get("id"))
            return self._json({"id": sid, "resumed": resumed})
        if path not in POST_ROUTES:
            raise HttpError(404, f"no such action {path}")
        session = self.server.session(self.headers.get(GAME_HEADER))
        answer = POST_ROUTES[path](session, data)
        return self._json(session.state() if answer is None else answer)

    def _static(self, name: str) -> None:
        """A file of ``gui/static/``, found by its exact name among the files there: a requested name never
        reaches the file system (no ``..``, NUL, over-long or encoded names, no directories), and a refusal never
        names where the server is installed."""
        try:
            files = {p.name: p for p in STATIC.iterdir() if p.is_file()}
            path = files.get(name)
            body = path.read_bytes() if path is not None else None
        except OSError:  # the installation itself is unreadable: the page is missing, no traceback
            body = None
        if body is None:
            raise HttpError(404, "no such file in /static/")
        mime = mimetypes.guess_type(name)[0] or "application/octet-stream"
        if mime.startswith("text/") or mime in ("application/javascript",):
            mime += "; charset=utf-8"
        if name == "index.html":
            body = body.replace(TOKEN_SLOT.encode(), self.server.token.encode())
        self._send(200, body, mime)


# ------------------------------------------------------------------------------------------ POST actions
def _is_ascii_integer(text: str) -> bool:
    """``"12"`` yes; ``"²"`` or ``"１２"`` no (str.isdigit accepts them, int() does not)."""
    return text.isascii() and text.isdigit()


def _new(session: Session, data: dict) -> None:
    seed = data.get("seed")
    if isinstance(seed, str) and _is_ascii_integer(seed.strip().lstrip("-")):
        seed = int(seed)
    _typed(data, "seed", (int, str), "an integer")
    session.new_game(_typed(data, "variant", (str,), "a variant name", "shogi"),
                     _typed(data, "options", (dict,), "an object (option: value)"),
                     _typed(data, "players", (list,), "a list of two players (sente, gote)"),
                     seed, _typed(data, "sfen", (str,), "an SFEN string") or None,
                     replace=_typed(data, "replace", (bool,), "true or false", False))


def _move(session: Session, data: dict) -> Any:
    if "move" not in data:
        raise RequestError("missing 'move'")
    if data.get("line") is None and data.get("ply") is None:
        session.play(data["move"])
        return None
    at = session.play_at(data["move"], _typed(data, "line", (int,), "a line number", 0),
                         _typed(data, "ply", (int,), "a number of plies"))
    return dict(session.state(), at=at)


def _load(session: Session, data: dict) -> None:
    session.load(_typed(data, "text", (str,), "the text of a record", ""),
                 _typed(data, "players", (list,), "a list of two players (sente, gote)"),
                 _typed(data, "default_players", (list,), "a list of two players (sente, gote)"),
                 replace=_typed(data, "replace", (bool,), "true or false", False),
                 variant=_typed(data, "variant", (str,), "a variant name"))


def _analysis(session: Session, data: dict) -> None:
    if not _typed(data, "on", (bool,), "true or false", True):
        return session.analysis_stop()
    session.analysis_start(_typed(data, "engine", (str,), "an engine's name"),
                           _typed(data, "multipv", (int,), "an integer from 1 to 5"),
                           _typed(data, "line", (int,), "a line number"),
                           _typed(data, "ply", (int,), "a number of plies"))


def _turnend(session: Session, data: dict) -> None:
    if "end" not in data:
        raise RequestError("missing 'end'")
    session.turn_end(data["end"], _strings(data, "actions"))


POST_ROUTES = {
    "/api/new": _new,
    "/api/move": _move,
    "/api/undo": lambda session, data: session.undo(),
    "/api/redo": lambda session, data: session.redo_move(),
    "/api/resign": lambda session, data: session.resign(),
    "/api/draw": lambda session, data: session.offer_draw(_typed(data, "action", (str,), "offer, accept or decline")),
    "/api/declare": lambda session, data: session.declare(),
    "/api/load": _load,
    "/api/turnstep": lambda session, data: session.turn_step(
        _strings(data, "actions", []), _typed(data, "ends", (bool,), "true or false", False)),
    "/api/turnend": _turnend,
    "/api/analysis": _analysis,
    "/api/wavestep": lambda session, data: session.wave_step(_strings(data, "moves", [])),
}


def make_server(port: int = 0, host: str = "127.0.0.1", engines: Optional[dict[str, list[str]]] = None,
                quiet: bool = True, allowed_hosts: Iterable[str] = ()) -> GuiServer:
    """A server bound to ``host:port`` (port 0 picks a free one: ``server.server_address[1]``), not yet serving.
    ``engines`` (name -> argv) defaults to :func:`gui.engines.engine_table`; ``allowed_hosts`` are host names the
    ``Host`` header may carry besides 127.0.0.1 and localhost."""
    return GuiServer((host, port), engines, quiet=quiet, allowed_hosts=allowed_hosts)


def serve_in_thread(port: int = 0, engines: Optional[dict[str, list[str]]] = None
                    ) -> tuple[GuiServer, threading.Thread]:
    """Start a server in a daemon thread (for tests and embedding); stop it with ``server.shutdown_all()``."""
    server = make_server(port, engines=engines)
    thread = threading.Thread(target=server.serve_forever, name="gui-server", daemon=True)
    thread.start()
    return server, thread


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fantasista-gui", description="Play the Fantasista variants in a browser.",
        epilog="Engines are offered by name: fantasista (ours, always), fairy-stockfish and gpsusi (Debian's, when "
               "installed in /usr/games) and every --engine NAME=COMMAND. A web page never sends a command.")
    parser.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 = any free one)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default 127.0.0.1: this machine only; anything else opens the games "
                             "and the engines to whoever can reach it, with a warning)")
    parser.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                        help="another host name pages may use in the Host header (with --host; repeatable)")
    parser.add_argument("--engine", action="append", default=[], metavar="NAME=COMMAND",
                        help="offer a USI engine under NAME (repeatable), e.g. --engine yane=/opt/yane/YaneuraOu")
    parser.add_argument("--open", action="store_true", help="open the page in the default browser")
    parser.add_argument("--verbose", action="store_true", help="log every request to stderr")
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    return parser


def server_from_args(argv: Optional[list[str]] = None) -> GuiServer:
    """The server ``fantasista-gui`` arguments describe, bound but not serving (warns on stderr when ``--host``
    opens it beyond this machine); :class:`OSError` when the address cannot be bound."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        extra = [parse_engine_arg(text) for text in args.engine]
    except ValueError as exc:
        parser.error(str(exc))
    allowed = list(args.allow_host)
    wildcard = args.host in ("0.0.0.0", "::", "")
    if args.host != "127.0.0.1" and not wildcard:
        allowed.append(args.host)
    if args.host != "127.0.0.1":
        table = engine_table(extra)
        names = ", ".join(dict.fromkeys([*LOCAL_NAMES, *allowed]))
        print(f"fantasista-gui: WARNING: listening on {args.host or 'every address'}, not only on this machine: "
              f"anyone who can reach it can play here and start the engines offered ({', '.join(table)}). Pages "
              f"must name this server by one of: {names}"
              + (" (an address of all interfaces is no host name: add the names people use with --allow-host)."
                 if wildcard else "."), file=sys.stderr)
    return make_server(args.port, args.host, engines=engine_table(extra), quiet=not args.verbose,
                       allowed_hosts=allowed)


def main(argv: Optional[list[str]] = None) -> int:
    args = _parser().parse_args(argv)
    from usi.kernel_cache import purge_stale_kernels

    purge_stale_kernels()  # before a game loads a kernel: a kernel compiled against an edited shared one would crash
    try:
        server = server_from_args(argv)
    except OSError as exc:
        print(f"fantasista-gui: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 2
    url = f"http://{'127.0.0.1' if args.host in ('0.0.0.0', '::', '') else args.host}:{server.server_address[1]}/"
    print(f"fantasista-gui: serving on {url} (engines: {', '.join(server.engines)}; Ctrl-C to stop)", flush=True)
    if args.open:
        webbrowser.open(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        server.close_sessions(wait_s=SHUTDOWN_WAIT_S)
    return 0


if __name__ == "__main__":
    sys.exit(main())
