"""A bounded, seeded fuzz of the USI engine loop (issue 22): a few thousand lines over all six variants, in-process
with the real searchers.

The lines mix well-formed commands (positions reached by random legal play, events included; ``go`` with small
limits; options) with odd ones: corrupted moves and SFENs, ``go`` numbers out of range or below 1, ``searchmoves``
that are not moves, commands sent while a search runs, unknown commands, bad option values. Asserted: no traceback
and no exception class in any line, nothing on stderr (file descriptor 2, so threads are covered too), exactly one
``bestmove`` per ``go`` (one ``checkmate`` per ``go mate``; ``go perft`` answers neither), and ``readyok`` for the
final ``isready``.
"""
from __future__ import annotations

import random
import re

import engine
from usi import games
from usi.engine import UsiEngine, parse_go

from .usi_helpers import Sink

SEED = 2022
LINES_PER_VARIANT = 400
VARIANTS = ("shogi", "daishogi2017", "fantasista", "turncoat", "mawarikudoi", "enokian")
BAD_LINE = re.compile(r"Traceback|\b\w+Error\b|\bException\b| failed: |could not start|returned an illegal")


def _games(variant: str, rng: random.Random, n: int = 6, plies: int = 24) -> list[list[str]]:
    """``n`` token sequences of random legal play (events drawn at chance nodes) from the start."""
    out = []
    for _ in range(n):
        tokens: list[str] = []
        if games.is_game_variant(variant):
            state = games.new_state(variant, games.option_getter({}))
            for _ in range(rng.randrange(plies)):
                kind = state.node_kind().value
                if kind == "terminal":
                    break
                if kind == "chance":
                    tok = games.sample_event(state.chance_events(), rng)
                else:
                    acts = state.legal_actions()
                    if not acts:
                        break
                    tok = rng.choice(acts)
                state.apply(tok)
                tokens.append(tok)
        else:
            pos = engine.Position.startpos(variant)
            for _ in range(rng.randrange(plies)):
                codes = pos.legal_codes()
                if not len(codes):
                    break
                code = int(codes[rng.randrange(len(codes))])
                tokens.append(pos.move_usi(code))
                pos.push_unchecked(code)
        out.append(tokens)
    return out


def _sfens(variant: str, lines: list[list[str]]) -> list[str]:
    """The SFENs the lines reach."""
    out = []
    for tokens in lines:
        if games.is_game_variant(variant):
            out.append(games.build_state(variant, ["startpos"], tokens, games.option_getter({})).sfen())
        else:
            pos = engine.Position.startpos(variant)
            for t in tokens:
                pos.push(t)
            out.append(pos.sfen())
    return out


def _mangle(text: str, rng: random.Random) -> str:
    """A small corruption: a character dropped, doubled or replaced, two tokens swapped, a number made huge."""
    if not text:
        return rng.choice(["x", "99999999999999999999", "-1"])
    words = text.split(" ")
    r = rng.random()
    if r < 0.25:
        i = rng.randrange(len(text))
        return text[:i] + text[i + 1:]
    if r < 0.45:
        i = rng.randrange(len(text))
        return text[:i] + rng.choice("0123456789/+*-=,:abcKkPp'@!;é１ ") + text[i:]
    if r < 0.6 and len(words) > 1:
        i, j = rng.randrange(len(words)), rng.randrange(len(words))
        words[i], words[j] = words[j], words[i]
        return " ".join(words)
    if r < 0.8:
        i = rng.randrange(len(words))
        words[i] = rng.choice(["99999999999999999999", "0", "-5", "40P", "", "K", "+", "9" * 30])
        return " ".join(words)
    return " ".join(words[:rng.randrange(len(words))])


GO_LINES = ("go depth 1", "go nodes 300", "go movetime 30", "go btime 200 wtime 200 byoyomi 30", "go depth 2",
            "go btime 100 wtime 100 binc 10 winc 10", "go depth 0", "go depth -1", "go nodes 0", "go",
            "go infinite", "go ponder btime 100 wtime 100 byoyomi 20", "go searchmoves 7g7f zz depth 1",
            "go searchmoves", "go nodes 99999999999999999999", "go movetime 99999999999999999999",
            "go btime 99999999999999999999 wtime 99999999999999999999", "go depth 99999999999999999999",
            "go mate 50", "go mate infinite", "go perft 2", "go perft 0", "go perft -3", "go perft x",
            "go byoyomi -100", "go wtime", "go bogus 5 depth 1", "go depth 1 nodes " + "9" * 400)
OPTION_LINES = ("setoption name MultiPV value 2", "setoption name MultiPV value 0", "setoption name USI_Hash value 8",
                "setoption name USI_Hash value 99999", "setoption name Seed value 5", "setoption name Seed value -1",
                "setoption name DepthLimit value 3", "setoption name DepthLimit value 0",
                "setoption name NodesLimit value 20000", "setoption name NodesLimit value x",
                "setoption name Mawarikudoi_FaceUp value 0", "setoption name Mawarikudoi_FaceUp value 450",
                "setoption name Mawarikudoi_Side value 70", "setoption name Mawarikudoi_FaceDown value 460",
                "setoption name FantasistaChanceAware value maybe", "setoption name FantasistaReserved value 2",
                "setoption name EnokianMichizane value 9i", "setoption name EnokianMichizane value 5e",
                "setoption name NoSuchOption value 1", "setoption name", "setoption value 3",
                "setoption name USI_Variant value chess", "setoption name EnteringKingRule value CSARule24")
OTHER_LINES = ("stop", "stop", "ponderhit", "isready", "d", "usinewgame", "gameover win", "gameover maybe",
               "hello", "GO", "go!", "position", "position sfen", "position startpos moves", "bench 0", "usi")


def _script(variant: str, rng: random.Random) -> list[str]:
    lines = _games(variant, rng)
    sfens = _sfens(variant, lines)
    script = [f"setoption name USI_Variant value {variant}", "isready", "usinewgame"]
    for _ in range(LINES_PER_VARIANT):
        r = rng.random()
        if r < 0.30:
            tokens = rng.choice(lines)
            line = "position startpos moves " + " ".join(tokens[:rng.randrange(len(tokens) + 1)])
            script.append(_mangle(line, rng) if rng.random() < 0.3 else line)
        elif r < 0.42:
            sfen = rng.choice(sfens)
            script.append("position sfen " + (_mangle(sfen, rng) if rng.random() < 0.6 else sfen))
        elif r < 0.56:
            script.append(rng.choice(GO_LINES))
            if rng.random() < 0.6:
                script.append("stop")
        elif r < 0.66:
            script.append(rng.choice(OPTION_LINES))
        elif r < 0.92:
            script.append(rng.choice(OTHER_LINES))
        else:
            script.append(_mangle(rng.choice(GO_LINES + OTHER_LINES), rng))
    return script + ["stop"]


def test_fuzz_every_variant(capfd):
    rng = random.Random(SEED)
    out = Sink()
    eng = UsiEngine(out=out)
    sent: list[str] = []
    searches = 0  # go lines that must end in one bestmove or checkmate (not perft)

    def answers() -> int:
        return sum(1 for line in list(out.lines) if line.split()[:1] in (["bestmove"], ["checkmate"]))

    for variant in VARIANTS:
        for line in _script(variant, rng):
            sent.append(line)
            # A go ends the search before it (its answer printed first): so after the k-th go, k-1 or k answers,
            # never fewer (a lost bestmove) nor more (a second one).
            before = answers()
            assert before <= searches, (line, sent[-12:])
            assert eng.handle(line) is True, line
            if line.split()[:1] == ["go"] and parse_go(line.split()[1:]).perft is None:
                searches += 1
                assert searches - 1 <= answers() <= searches, (line, sent[-12:])
    assert eng.handle("isready") is True
    assert out.lines[-1] == "readyok"
    gos = [parse_go(line.split()[1:]) for line in sent if line.split()[:1] == ["go"]]
    bad = [line for line in out.lines if BAD_LINE.search(line)]
    assert not bad, bad[:10]
    assert sum(1 for line in out.lines if line.startswith("bestmove")) == sum(
        1 for g in gos if g.perft is None and not g.mate)
    assert sum(1 for line in out.lines if line.startswith("checkmate")) == sum(
        1 for g in gos if g.perft is None and g.mate)
    assert eng.handle("quit") is False
    captured = capfd.readouterr()
    assert captured.err == "", captured.err[:2000]
    assert len(sent) >= 6 * LINES_PER_VARIANT
