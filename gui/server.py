"""``fantasista-gui``: a local web GUI for every variant, served by the standard library.

::

    fantasista-gui --port 8765            # then open http://127.0.0.1:8765/

One game lives on the server (:class:`gui.session.Session`); the page (``gui/static/``) draws it and sends clicks.
JSON API (every answer is JSON; a refused request is HTTP 400 ``{"error": "..."}`` and changes nothing):

=========================  ==========================================================================================
``GET  /api/variants``     the variants, their options and whether they are playable
``GET  /api/state``        the game as the page may see it; ``?since=<version>&wait=<s>`` waits for a change
``POST /api/new``          ``{"variant", "options", "players": [sente, gote], "seed", "sfen"}``; a player is
                           ``"human"`` or ``{"kind": "engine", "command", "depth", "movetime", "nodes"}``
``POST /api/move``         ``{"move": "<token>"}``: a legal action token of the person to move
``POST /api/undo``         back to before the last move made by a person (``/api/redo`` replays it)
``POST /api/resign``       the person (or, with two, the side to move) resigns
``GET  /api/record``       ``?format=json|kif|csa``: ``{"text", "name", "mime"}`` (KIF/CSA for shogi only)
``POST /api/load``         ``{"text": "<JSON record, KIF or CSA>", "players"?, "default_players"?}``: the players are
                           ``players``, else the record's (persons, our engine), else ``default_players``
``POST /api/turnstep``     ``{"actions": [...]}``: mawarikudoi, a turn being built action by action: the runner
                           after those actions (a preview board and panel), the actions left, the possible next ones;
                           with ``"ends": true`` also every place the rest of the turn can end
``POST /api/turnend``      ``{"end": <end state>, "actions"?: [...]}``: mawarikudoi, play the turn made of those
                           actions and then the canonical path to that end
``POST /api/wavestep``     ``{"moves": [...]}``: fantasista, a silver wave chosen silver by silver in any order: the
                           moves a wave can add, and the canonical ``token`` when the chosen set is a whole wave
=========================  ==========================================================================================
"""
from __future__ import annotations

import argparse
import json
import mimetypes
import sys
import threading
import webbrowser
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Optional
from urllib.parse import parse_qs, urlparse

from .session import RequestError, Session

STATIC = Path(__file__).resolve().parent / "static"
MAX_BODY = 4 * 1024 * 1024


class GuiServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], session: Session, quiet: bool = True) -> None:
        super().__init__(address, Handler)
        self.session = session
        self.quiet = quiet

    def handle_error(self, request, client_address) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):  # the page went away mid-answer (reload, long poll)
            return
        super().handle_error(request, client_address)

    def shutdown_all(self) -> None:
        self.shutdown()
        self.server_close()
        self.session.close()


class Handler(BaseHTTPRequestHandler):
    server: GuiServer
    protocol_version = "HTTP/1.1"

    # ------------------------------------------------------------------ plumbing
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        if not self.server.quiet:
            super().log_message(format, *args)

    def _send(self, status: int, body: bytes, mime: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", mime)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, data: Any, status: int = 200) -> None:
        self._send(status, json.dumps(data, ensure_ascii=False).encode("utf-8"), "application/json; charset=utf-8")

    def _error(self, message: str, status: int = 400) -> None:
        self._json({"error": message}, status)

    def _body(self) -> dict:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            raise RequestError(f"request too large ({length} bytes)")
        raw = self.rfile.read(length) if length else b""
        if not raw.strip():
            return {}
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise RequestError(f"the request body is not JSON: {exc}") from None
        if not isinstance(data, dict):
            raise RequestError("the request body must be a JSON object")
        return data

    # ------------------------------------------------------------------ routes
    def do_HEAD(self) -> None:  # noqa: N802
        self.do_GET()

    def do_GET(self) -> None:  # noqa: N802
        url = urlparse(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        session = self.server.session
        try:
            if url.path in ("/", "/index.html"):
                return self._static("index.html")
            if url.path == "/favicon.ico":
                return self._send(204, b"", "image/x-icon")
            if url.path.startswith("/static/"):
                return self._static(url.path[len("/static/"):])
            if url.path == "/api/variants":
                return self._json([info.to_json() for info in session.infos.values()])
            if url.path == "/api/state":
                since, wait = query.get("since"), query.get("wait")
                if since is not None:
                    try:
                        session.wait(int(since), min(float(wait or 20), 60))
                    except ValueError:
                        raise RequestError("since and wait must be numbers") from None
                return self._json(session.state())
            if url.path == "/api/record":
                text, mime, name = session.export(query.get("format", "json"))
                return self._json({"text": text, "mime": mime, "name": name})
            return self._error(f"no such page {url.path}", 404)
        except RequestError as exc:
            return self._error(str(exc))

    def do_POST(self) -> None:  # noqa: N802
        url = urlparse(self.path)
        session = self.server.session
        try:
            data = self._body()
            if url.path == "/api/new":
                seed = data.get("seed")
                if isinstance(seed, str) and seed.strip().lstrip("-").isdigit():
                    seed = int(seed)
                session.new_game(data.get("variant", "shogi"), data.get("options"), data.get("players"),
                                 seed, data.get("sfen") or None)
            elif url.path == "/api/move":
                if "move" not in data:
                    raise RequestError("missing 'move'")
                session.play(data["move"])
            elif url.path == "/api/undo":
                session.undo()
            elif url.path == "/api/redo":
                session.redo_move()
            elif url.path == "/api/resign":
                session.resign()
            elif url.path == "/api/load":
                session.load(data.get("text"), data.get("players"), data.get("default_players"))
            elif url.path == "/api/turnstep":
                return self._json(session.turn_step(data.get("actions", []), bool(data.get("ends"))))
            elif url.path == "/api/turnend":
                if "end" not in data:
                    raise RequestError("missing 'end'")
                session.turn_end(data["end"], data.get("actions"))
            elif url.path == "/api/wavestep":
                return self._json(session.wave_step(data.get("moves", [])))
            else:
                return self._error(f"no such action {url.path}", 404)
            return self._json(session.state())
        except RequestError as exc:
            return self._error(str(exc))

    def _static(self, name: str) -> None:
        path = (STATIC / name).resolve()
        if STATIC not in path.parents or not path.is_file():
            return self._error(f"no such file {name}", 404)
        mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        if mime.startswith("text/") or mime in ("application/javascript",):
            mime += "; charset=utf-8"
        self._send(200, path.read_bytes(), mime)


def make_server(port: int = 0, host: str = "127.0.0.1", session: Optional[Session] = None,
                quiet: bool = True) -> GuiServer:
    """A server bound to ``host:port`` (port 0 picks a free one: ``server.server_address[1]``), not yet serving."""
    return GuiServer((host, port), session or Session(), quiet=quiet)


def serve_in_thread(port: int = 0, session: Optional[Session] = None) -> tuple[GuiServer, threading.Thread]:
    """Start a server in a daemon thread (for tests and embedding); stop it with ``server.shutdown_all()``."""
    server = make_server(port, session=session)
    thread = threading.Thread(target=server.serve_forever, name="gui-server", daemon=True)
    thread.start()
    return server, thread


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="fantasista-gui", description="Play the Fantasista variants in a browser.")
    parser.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (default 8765; 0 = any free one)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    parser.add_argument("--open", action="store_true", help="open the page in the default browser")
    parser.add_argument("--verbose", action="store_true", help="log every request to stderr")
    args = parser.parse_args(argv)
    try:
        server = make_server(args.port, args.host, quiet=not args.verbose)
    except OSError as exc:
        print(f"fantasista-gui: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 2
    url = f"http://{args.host}:{server.server_address[1]}/"
    print(f"fantasista-gui: serving on {url} (Ctrl-C to stop)", flush=True)
    if args.open:
        webbrowser.open(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        server.session.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
