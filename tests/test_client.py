"""The USI client: scripted dialogs against python-chess's mock transport, then real engine processes."""
import asyncio
import os
import shutil
import signal
import sys
import time
from pathlib import Path

import chess.engine
import pytest

from usi.client import (Cp, EngineError, EngineTerminatedError, Mate, UsiEngine, UsiLimit, UsiProtocol, parse_info,
                        parse_option)

from .proc_helpers import gone, running, stubborn_cmd, wait_not_running, wrapped_stubborn_cmd

FAKES = Path(__file__).parent / "fake_engines"
FSF = shutil.which("fairy-stockfish") or "/usr/games/fairy-stockfish"  # a real peer: .ci/run installs it


def run(coro_fn):
    return asyncio.run(coro_fn())


def handshake(mock, extra=()):
    mock.expect("usi", ["id name Mock", "id author Tester", "option name USI_Hash type spin default 256 min 1 max 4096",
                        "option name Book type check default true", "option name Style type combo default a var a var b",
                        "option name BookFile type filename default <empty>", "option name Clear type button", *extra,
                        "usiok"])


def test_handshake_options_and_setoption():
    async def main():
        protocol = UsiProtocol()
        mock = chess.engine.MockTransport(protocol)
        handshake(mock)
        await protocol.initialize()
        assert protocol.id == {"name": "Mock", "author": "Tester"}
        assert protocol.options["USI_Hash"].max == 4096 and protocol.options["Book"].default is True
        assert protocol.options["BookFile"].type == "file" and protocol.options["BookFile"].default == ""
        mock.expect("setoption name USI_Hash value 16")
        mock.expect("setoption name Book value false")
        mock.expect("setoption name Style value b")
        mock.expect("setoption name Clear")
        mock.expect("setoption name USI_Ponder value true")  # always accepted, listed or not
        await protocol.configure({"USI_Hash": 16, "Book": "false", "Style": "b", "Clear": None, "USI_Ponder": True})
        with pytest.raises(EngineError):
            await protocol.configure({"Nope": 1})
        with pytest.raises(EngineError):
            await protocol.configure({"USI_Hash": 0})  # below min
        with pytest.raises(EngineError, match="Book takes true or false"):
            await protocol.configure({"Book": "ture"})  # a typo is refused, not sent as false
        mock.expect("isready", ["", "info string warming up", "readyok"])
        await protocol.ping()
        mock.expect("usinewgame")
        await protocol.new_game()
        mock.assert_done()

    run(main)


def test_play_every_limit_and_info():
    async def main():
        protocol = UsiProtocol()
        mock = chess.engine.MockTransport(protocol)
        handshake(mock)
        await protocol.initialize()
        mock.expect("position startpos moves 7g7f")
        mock.expect("go btime 1000 wtime 2000 byoyomi 300", [
            "info depth 1 seldepth 2 time 5 nodes 40 nps 8000 hashfull 1 score cp 12 multipv 1 pv 3c3d 2g2f",
            "info depth 2 score mate -3 upperbound currmove 3c3d",
            "info string hello there",
            "bestmove 3c3d ponder 2g2f"])
        res = await protocol.play(("startpos", ["7g7f"]), UsiLimit(btime=1000, wtime=2000, byoyomi=300))
        assert res.move == "3c3d" and res.ponder == "2g2f" and not res.resign
        assert res.info["depth"] == 2 and res.info["seldepth"] == 2 and res.info["nodes"] == 40
        assert res.info["score"] == Mate(-3) and res.info["upperbound"] and res.info["pv"] == ["3c3d", "2g2f"]
        assert res.info["string"] == "hello there" and res.info["time"] == 0.005 and res.info["currmove"] == "3c3d"
        sfen = "4k4/9/9/9/9/9/9/9/4K4 b G 1"
        mock.expect(f"position sfen {sfen}")
        mock.expect("go btime 0 wtime 0 binc 100 winc 100", ["bestmove resign"])
        assert (await protocol.play(sfen, UsiLimit(btime=0, wtime=0, binc=100, winc=100))).resign
        mock.expect("position startpos")
        mock.expect("go movetime 50 depth 3 nodes 1000", ["bestmove win"])
        assert (await protocol.play("startpos", UsiLimit(movetime=50, depth=3, nodes=1000))).win
        mock.expect("position startpos")
        mock.expect("go mate 1000", ["bestmove resign"])
        await protocol.play("startpos", UsiLimit(mate=1000))
        mock.expect("gameover win")
        await protocol.gameover("win")
        mock.assert_done()

    run(main)


def test_ponder_ponderhit_and_stop_on_timeout():
    async def main():
        protocol = UsiProtocol()
        mock = chess.engine.MockTransport(protocol)
        handshake(mock)
        await protocol.initialize()
        mock.expect("position startpos moves 7g7f 3c3d")
        mock.expect("go ponder btime 1000 wtime 1000 byoyomi 100")
        task = asyncio.ensure_future(protocol.play(("startpos", ["7g7f", "3c3d"]),
                                                   UsiLimit(btime=1000, wtime=1000, byoyomi=100), ponder=True))
        await asyncio.sleep(0.01)
        assert not task.done()  # pondering: no bestmove until ponderhit
        mock.expect("ponderhit", ["info depth 5 score cp 30", "bestmove 2g2f"])
        protocol.ponderhit()
        res = await task
        assert res.move == "2g2f" and res.info["score"] == Cp(30)
        # a time-out cancels the command, which sends stop; the late bestmove is swallowed
        mock.expect("position startpos")
        mock.expect("go infinite")
        mock.expect("stop", ["bestmove 7g7f"])
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(protocol.play("startpos", UsiLimit(infinite=True)), 0.05)
        await asyncio.sleep(0.01)
        mock.expect("isready", ["readyok"])
        await protocol.ping()
        mock.assert_done()

    run(main)


def test_analysis_streams_info_until_stop():
    async def main():
        protocol = UsiProtocol()
        mock = chess.engine.MockTransport(protocol)
        handshake(mock)
        await protocol.initialize()
        mock.expect("position startpos")
        mock.expect("go infinite", ["info depth 1 score cp 5 pv 7g7f", "info depth 2 score cp 7 pv 2g2f"])
        analysis = await protocol.analysis("startpos")
        first = await analysis.get()
        assert first["depth"] == 1
        mock.expect("stop", ["bestmove 2g2f"])
        analysis.stop()
        best = await analysis.wait()
        assert best.move == "2g2f" and analysis.info["depth"] == 2
        mock.assert_done()

    run(main)


def test_parsers():
    assert parse_info("score mate + pv 1a1b")["score"] == Mate(1)
    assert parse_info("depth x") == {}
    o = parse_option("name Threads type spin default 1 min 1 max 512")
    assert (o.name, o.default) == ("Threads", 1)


# ------------------------------------------------------------- real engines
def test_random_engine_process():
    with UsiEngine.popen_usi([sys.executable, str(FAKES / "random_engine.py")], timeout=20) as engine:
        assert engine.id["name"] == "RandomMover"
        engine.configure({"Seed": 5})
        engine.isready(timeout=600)  # a cold numba cache compiles the move generator here
        engine.new_game()
        res = engine.play("position startpos moves 7g7f", UsiLimit(depth=1), timeout=10)
        assert res.move and isinstance(res.info["score"], Cp) and res.elapsed >= 0
        engine.gameover("draw")
        engine.quit()
    assert engine.returncode.result(timeout=5) == 0


def test_faulty_engine_processes():
    with pytest.raises((asyncio.TimeoutError, TimeoutError)):
        UsiEngine.popen_usi([sys.executable, str(FAKES / "no_usiok.py")], timeout=1)
    engine = UsiEngine.popen_usi([sys.executable, str(FAKES / "crash.py")], timeout=10)
    with pytest.raises(EngineTerminatedError):
        engine.play("startpos", UsiLimit(depth=1), timeout=10)
    engine.close()
    engine = UsiEngine.popen_usi([sys.executable, str(FAKES / "hang.py")], timeout=10)
    with pytest.raises((asyncio.TimeoutError, TimeoutError)):
        engine.play("startpos", UsiLimit(depth=1), timeout=0.5)
    engine.close()


def test_fairy_stockfish_speaks_usi():
    with UsiEngine.popen_usi([FSF], timeout=10) as engine:
        assert "Fairy-Stockfish" in engine.id["name"]
        engine.configure({"USI_Hash": 16, "Threads": 1})
        engine.isready()
        engine.new_game()
        res = engine.play(("startpos", ["7g7f"]), UsiLimit(nodes=2000), timeout=10)
        assert res.move and "score" in res.info and res.info["pv"][0] == res.move
        res = engine.play("startpos", UsiLimit(btime=100, wtime=100, byoyomi=100), timeout=10)
        assert res.move
        engine.quit()


def test_error_reports_are_kept_from_the_first_and_capped():
    """The client keeps an engine's ``info string error`` lines (a refused option shows there before any game),
    only those, in order and at most MAX_REPORTED_ERRORS of them: an engine that reports an error on every move
    cannot grow the list for its whole life."""
    from usi.client import MAX_REPORTED_ERRORS, UsiProtocol

    async def feed() -> UsiProtocol:
        proto = UsiProtocol()  # python-chess protocols are made inside a running event loop
        proto.line_received("info string hello")
        proto.line_received("info depth 3 score cp 10 pv 7g7f")
        proto.line_received("info string Error! option Foo not found")
        for i in range(MAX_REPORTED_ERRORS + 50):
            proto.line_received(f"info string error move {i}")
        return proto

    proto = asyncio.run(feed())
    assert proto.reported_errors[0] == "Error! option Foo not found"
    assert proto.reported_errors[1] == "error move 0"
    assert len(proto.reported_errors) == MAX_REPORTED_ERRORS


# ------------------------------------------------------- engines that misbehave
@pytest.mark.parametrize("mode", ["linger", "ignore"])
def test_quit_kills_and_reaps_an_engine_that_does_not_leave(tmp_path, mode):
    """An engine that lingers on ``quit`` (``linger``), or ignores it, SIGTERM and the end of its input (``ignore``),
    is killed once the grace period has passed and reaped before ``quit`` returns: python-chess only scheduled the
    kill on the engine's event-loop thread, and a runner that exited meanwhile left the engine running."""
    pidfile = tmp_path / "pids"
    engine = UsiEngine.popen_usi(stubborn_cmd(pidfile, "--on-quit", mode), timeout=20)
    pid = int(pidfile.read_text().split()[0])
    assert engine.transport.get_pid() == pid and not gone(pid)
    t0 = time.monotonic()
    engine.quit(timeout=0.5)
    assert gone(pid), f"engine {pid} is still there after quit returned"
    # -SIGKILL, or 255 when the loop was slow and the backup path reaped the engine itself (asyncio then reports an
    # unknown child's status as 255): killed and reaped either way, not its own exit after the 30 s linger
    assert engine.returncode.result(timeout=0) in (-signal.SIGKILL, 255)
    assert time.monotonic() - t0 < 15  # a hang guard: the grace is 0.5 s
    engine.close()  # closing again is harmless


@pytest.mark.parametrize("ending", ["quit", "close"])
def test_closing_kills_the_engine_process_group(tmp_path, ending):
    """An engine started through a wrapper (``sh -c '... stubborn.py ...'``) whose child ignores ``quit``, SIGTERM and
    the end of its input: the client starts it in its own process group, and ``quit`` (after its grace) or ``close``
    SIGKILLs the whole group and reaps the wrapper. Before, only the wrapper's pid was killed and the child ran on."""
    pidfile = tmp_path / "pids"
    engine = UsiEngine.popen_usi(wrapped_stubborn_cmd(pidfile, "--on-quit", "ignore"), timeout=20)
    shell, child = [int(x) for x in pidfile.read_text().split()]  # the child wrote its pid before its usiok
    try:
        assert engine.transport.get_pid() == shell != child and running(child)
        assert os.getpgid(shell) == shell and os.getpgid(child) == shell != os.getpgrp()  # a group of their own
        if ending == "quit":
            engine.quit(timeout=0.5)
        else:
            engine.close()
        assert gone(shell), f"the wrapper {shell} is not reaped"
        assert not wait_not_running([child]), f"the engine's child {child} outlived close()"
    finally:
        wait_not_running([child], timeout=0)  # a failed run leaves nothing behind


def test_the_group_kill_sends_kill_signal_once(monkeypatch):
    """``kill_process_group`` sends ``KILL_SIGNAL`` (the one definition, SIGKILL where there is one) to the engine's
    group, once: the group's number is forgotten, since after its members are gone it may name another group."""
    from types import SimpleNamespace

    import usi.client as client

    sent = []
    monkeypatch.setattr(client, "KILL_SIGNAL", signal.SIGUSR1)  # any marker: the function must use the constant
    monkeypatch.setattr(client.os, "killpg", lambda pgid, sig: sent.append((pgid, sig)))
    protocol = SimpleNamespace(pgid=4242)
    client.kill_process_group(protocol)
    client.kill_process_group(protocol)
    assert sent == [(4242, signal.SIGUSR1)] and protocol.pgid is None


def test_a_line_over_the_cap_kills_the_engine_with_a_clear_error():
    """An engine that writes a line longer than MAX_LINE_BYTES without a newline (here 3 MiB more) is killed and the
    command fails with EngineOutputError (an EngineTerminatedError: a crash to the referee), instead of the client
    buffering the line whole (a 64 MiB line doubled the runner's memory); before the handshake too."""
    from usi.client import MAX_LINE_BYTES, EngineOutputError

    size = str(MAX_LINE_BYTES + (3 << 20))
    engine = UsiEngine.popen_usi([sys.executable, str(FAKES / "huge_line.py"), size], timeout=20)
    pid = engine.transport.get_pid()
    with pytest.raises(EngineOutputError, match=r"more than 1048576 bytes \(1 MiB\) without a newline on stdout"):
        engine.play("startpos", UsiLimit(depth=1), timeout=30)  # the old client waited here for the newline
    assert len(engine.protocol.buffer[1]) == 0
    assert engine.returncode.result(timeout=10) == -signal.SIGKILL  # killed, and its event loop ending
    with pytest.raises(EngineTerminatedError, match="without a newline"):  # every later command says why
        engine.isready(timeout=5)
    engine.close()
    assert gone(pid)
    with pytest.raises(EngineTerminatedError, match="without a newline"):
        UsiEngine.popen_usi([sys.executable, str(FAKES / "huge_line.py"), size, "--at", "usi"], timeout=20)


def test_lines_are_split_as_before_across_chunks():
    """The capped line splitter delivers the same lines as python-chess's: chunks cut anywhere, CRLF, several lines in
    one chunk, a line of exactly MAX_LINE_BYTES, an undecodable line skipped; over the cap is a fault."""
    from usi.client import MAX_LINE_BYTES

    class Recorder(UsiProtocol):
        """Records the lines, and a kill instead of signalling anyone."""

        def __init__(self) -> None:
            super().__init__()
            self.got: list[str] = []
            self.killed = False

        def kill(self) -> None:
            self.killed = True

        def line_received(self, line: str) -> None:
            self.got.append(line)

    async def feed(*chunks: bytes) -> Recorder:
        proto = Recorder()  # python-chess protocols are made inside a running event loop
        for chunk in chunks:
            proto.pipe_data_received(1, chunk)
        return proto

    stream = b"info depth 1\r\nbestmove 7g7f\n\xff\xfe bad\n" + b"y" * MAX_LINE_BYTES + b"\nreadyok\nusi"
    p = asyncio.run(feed(*(stream[i:i + 7919] for i in range(0, len(stream), 7919))))
    assert p.got == ["info depth 1", "bestmove 7g7f", "y" * MAX_LINE_BYTES, "readyok"] and not p.killed
    assert bytes(p.buffer[1]) == b"usi" and p.fault is None
    # over the cap within one chunk, newline and all: the lines before it count, nothing after it is read
    p = asyncio.run(feed(b"ok\n" + b"z" * (MAX_LINE_BYTES + 1) + b"\nlost\n", b"later\n"))
    assert p.got == ["ok"] and p.killed and "without a newline on stdout" in p.fault
