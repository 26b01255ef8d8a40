"""Training positions scored by a teacher engine over USI: ``python -m eval.train teach``.

The teacher (by default Debian's fairy-stockfish, ``/usr/games/fairy-stockfish``) is only ever *run*: we read the
scores it prints (its output), never its code. Games start from a random line of the balanced opening set plus a few
random plies. In a share of the games (``our_share``) one side is played by our own engine (the hand-set evaluation,
the search of the day at ``our_nodes``) so that the data also holds the positions our engine steers into; every other
move is the teacher's. Every position of every game, whoever is to move, is searched by the teacher at about
``teacher_nodes`` (jittered per move, +-50 %, so that the teacher's self-play games do not repeat); its score (side to
move's view) is the label. The data format is :mod:`eval.train`'s (``board, hands, stm, score, result, game, ply``)
plus ``ours`` (per position, the side our engine played in that game, -1 when the teacher played both), ``teacher``
(the command) and ``nodes`` (the teacher's mean nodes).

A position is kept when the side to move is not in check, the teacher's best move neither captures nor promotes
(quiet: a static evaluation cannot see a pending exchange), its score is no mate and ``|score| < MATE_CLAMP``, and the
position lies past the opening line. A game ends on the rules (``Position.result``), on a teacher mate score, when
the teacher scores the side to move at ``<= -RESIGN_CP`` on two positions in a row (adjudicated a loss), or at
``MAX_PLIES`` (a draw).

``relabel`` (:func:`relabel_games`) scores the positions of games already played and recorded by the match runner
(``usi.match``'s ``games.jsonl``) instead: the positions our engine steers into at a real time control, which the
teacher's own games do not reach. The same teacher, the same filter; the label's game result is the recorded one.
"""
from __future__ import annotations

import json
import random
import time
from pathlib import Path

from .train import MATE_CLAMP, _openings, _save_data, close_game, is_quiet, start_position

DEFAULT_TEACHER = ("/usr/games/fairy-stockfish",)
RESIGN_CP = 2000  # the teacher's own centipawns (eval.train's self-play RESIGN_CP is ours)
MAX_PLIES = 256
#: ``ours`` of a position from a recorded game our engine played against itself (relabel): no teacher move in it
OURS_BOTH = -2
#: engine names in match records that are not ours (relabel: the other side of such a game is our engine)
PEER_NAMES = ("fairy-stockfish", "gpsusi")


def generate_teacher(out: Path, minutes: float, teacher_cmd: list[str], teacher_nodes: int, our_nodes: int,
                     our_share: float, seed: int, random_plies: int = 2, max_games: int | None = None) -> dict:
    """Teacher-scored data (see the module docstring); writes ``out`` (npz) after every game, returns a summary."""
    from search import Limits, Searcher
    from usi.client import EngineError, UsiEngine, UsiLimit, score_to_cp
    rng = random.Random(seed)
    openings = _openings()
    ours = Searcher(hash_mb=16, seed=seed)
    teacher = UsiEngine.popen_usi(list(teacher_cmd), timeout=60)
    try:
        options = {"USI_Hash": 16}
        if "Threads" in teacher.options:
            options["Threads"] = 1
        teacher.configure(options)
        boards, hands, stms, scores, results, game_ids, plies, ours_sides = [], [], [], [], [], [], [], []
        t0 = time.perf_counter()
        games = searches = 0
        outcome = {"sente": 0, "gote": 0, "draw": 0}
        while time.perf_counter() - t0 < minutes * 60 and (max_games is None or games < max_games):
            pos, moves = start_position(rng, openings, random_plies)
            our_side = rng.randrange(2) if rng.random() < our_share else -1
            ours.clear()
            teacher.new_game()
            result = None  # sente's score
            losing = [0, 0]
            while result is None:
                r = pos.result()
                if r is not None:
                    result = r[0]
                    break
                if pos.ply >= MAX_PLIES:
                    result = 0.5
                    break
                stm = pos.turn
                nodes = max(1, int(teacher_nodes * rng.uniform(0.5, 1.5)))
                try:
                    label = teacher.play(("startpos", moves), UsiLimit(nodes=nodes), timeout=60)
                except EngineError as exc:
                    raise RuntimeError(f"the teacher failed: {exc}") from None
                searches += 1
                score = label.info.get("score")
                cp = score_to_cp(score)
                if label.move is None or cp is None:
                    result = 0.0 if stm == 0 else 1.0  # the teacher resigned (or gave no score): a lost position
                    break
                if score.is_mate() or abs(cp) >= MATE_CLAMP:
                    wins = cp > 0
                    result = float(wins) if stm == 0 else float(not wins)
                    break
                losing[stm] = losing[stm] + 1 if cp <= -RESIGN_CP else 0
                if losing[stm] >= 2:
                    result = 0.0 if stm == 0 else 1.0
                    break
                if not pos.is_legal(label.move):
                    raise RuntimeError(f"the teacher played {label.move}, illegal in {pos.sfen()}")
                teacher_code = pos.parse_move(label.move).code
                if is_quiet(pos, teacher_code) and not pos.is_check():
                    boards.append(pos.state.board.copy())
                    hands.append(pos.state.hands.copy())
                    stms.append(stm)
                    scores.append(cp)
                    game_ids.append(games)
                    plies.append(pos.ply)
                    ours_sides.append(our_side)
                if stm == our_side:
                    code = int(ours.search(pos, Limits(nodes=our_nodes)).best)
                else:
                    code = teacher_code
                moves.append(pos.move_usi(code))
                pos.push_unchecked(code)
            close_game(stms, results, result, outcome)
            games += 1
            elapsed = time.perf_counter() - t0
            print(f"game {games}: {pos.ply} plies, ours {('-', 'sente', 'gote')[our_side + 1]}, result {result}, "
                  f"{len(stms)} positions, {elapsed:.0f} s ({searches / elapsed:.1f} teacher searches/s)", flush=True)
            _save_data(out, boards, hands, stms, scores, results, game_ids, plies, teacher_nodes, seed,
                       ours=ours_sides, teacher=" ".join(teacher_cmd))
    finally:
        teacher.quit()
    return {"games": games, "positions": len(stms), "seconds": time.perf_counter() - t0, **outcome}


def relabel_games(records: list[Path], out: Path, teacher_cmd: list[str], teacher_nodes: int, seed: int,
                  max_games: int | None = None) -> dict:
    """Teacher scores for the positions of recorded shogi games (``usi.match``'s ``games.jsonl`` lines) past their
    opening line, kept by the filter of :func:`generate_teacher`; ``ours`` is :data:`OURS_BOTH` for a game between our
    own engines, the side of our engine in a game against a peer (:data:`PEER_NAMES`). The result is the recorded
    one. Writes ``out`` after every game, returns a summary."""
    from engine import Position
    from usi.client import EngineError, UsiEngine, UsiLimit, score_to_cp
    rng = random.Random(seed)
    games_in = []
    for path in records:
        for line in Path(path).read_text().splitlines():
            if line.strip():
                g = json.loads(line)
                if g.get("variant") == "shogi" and g.get("result") in ("sente", "gote", "draw"):
                    games_in.append(g)
    if max_games is not None:
        games_in = games_in[:max_games]
    teacher = UsiEngine.popen_usi(list(teacher_cmd), timeout=60)
    boards, hands, stms, scores, results, game_ids, plies, ours_sides = [], [], [], [], [], [], [], []
    t0 = time.perf_counter()
    games = searches = 0
    outcome = {"sente": 0, "gote": 0, "draw": 0}
    try:
        options = {"USI_Hash": 16}
        if "Threads" in teacher.options:
            options["Threads"] = 1
        teacher.configure(options)
        for g in games_in:
            if g["sente"] in PEER_NAMES:
                our_side = 1
            elif g["gote"] in PEER_NAMES:
                our_side = 0
            else:
                our_side = OURS_BOTH
            pos = Position.from_sfen(g["start_sfen"])
            skip = int((g.get("opening") or {}).get("plies", 0))
            teacher.new_game()
            for i, mv in enumerate(g["moves"]):
                if i >= skip and not pos.is_check():
                    nodes = max(1, int(teacher_nodes * rng.uniform(0.5, 1.5)))
                    try:
                        label = teacher.play((g["start_sfen"], g["moves"][:i]), UsiLimit(nodes=nodes), timeout=60)
                    except EngineError as exc:
                        raise RuntimeError(f"the teacher failed: {exc}") from None
                    searches += 1
                    score = label.info.get("score")
                    cp = score_to_cp(score)
                    if (label.move is not None and cp is not None and not score.is_mate() and abs(cp) < MATE_CLAMP
                            and pos.is_legal(label.move) and is_quiet(pos, pos.parse_move(label.move).code)):
                        boards.append(pos.state.board.copy())
                        hands.append(pos.state.hands.copy())
                        stms.append(pos.turn)
                        scores.append(cp)
                        game_ids.append(games)
                        plies.append(pos.ply)
                        ours_sides.append(our_side)
                pos.push(mv)
            close_game(stms, results, {"sente": 1.0, "gote": 0.0, "draw": 0.5}[g["result"]], outcome)
            games += 1
            elapsed = time.perf_counter() - t0
            print(f"game {games} of {len(games_in)}: {len(g['moves'])} plies, result {g['result']}, "
                  f"{len(stms)} positions, {elapsed:.0f} s ({searches / elapsed:.1f} teacher searches/s)", flush=True)
            _save_data(out, boards, hands, stms, scores, results, game_ids, plies, teacher_nodes, seed,
                       ours=ours_sides, teacher=" ".join(teacher_cmd))
    finally:
        teacher.quit()
    return {"games": games, "positions": len(stms), "seconds": time.perf_counter() - t0, **outcome}
