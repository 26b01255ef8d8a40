"""Training positions scored by a teacher engine over USI: ``python -m train teach``.

The teacher (by default Debian's fairy-stockfish, ``/usr/games/fairy-stockfish``) is only ever *run*: we read the
scores it prints (its output), never its code. Games start from a random line of the balanced opening set plus a few
random plies. In a share of the games (``our_share``) one side is played by our own engine (the hand-set evaluation,
the search of the day at ``our_nodes``) so that the data also holds the positions our engine steers into; every other
move is the teacher's. Every position of every game, whoever is to move, is searched by the teacher at about
``teacher_nodes`` (jittered per move, +-50 %, so that the teacher's self-play games do not repeat); its score (side to
move's view) is the label. The data format is :mod:`train.fit`'s (``board, hands, stm, score, result, game, ply``)
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

from .games import MATE_CLAMP, OURS_BOTH, _openings, _save_data, close_game, is_quiet, start_position

DEFAULT_TEACHER = ("/usr/games/fairy-stockfish",)
RESIGN_CP = 2000  # the teacher's own centipawns (train.fit's self-play RESIGN_CP is ours)
MAX_PLIES = 256
#: engine names in match records that are not ours (relabel: the other side of such a game is our engine)
PEER_NAMES = ("fairy-stockfish", "gpsusi")


class _Run:
    """The teacher process and the positions kept so far (``train.fit``'s data format plus ``ours``), written to
    ``out`` after every game, with the run's counters. ``rng`` jitters the teacher's nodes."""

    def __init__(self, out: Path, teacher_cmd: list[str], teacher_nodes: int, seed: int, rng: random.Random) -> None:
        from usi.client import UsiEngine
        self.out, self.teacher_cmd, self.teacher_nodes, self.seed = out, teacher_cmd, teacher_nodes, seed
        self.rng = rng
        self.rows: dict[str, list] = {k: [] for k in ("board", "hands", "stm", "score", "result", "game", "ply",
                                                      "ours")}
        self.games = self.searches = 0
        self.outcome = {"sente": 0, "gote": 0, "draw": 0}
        self.t0 = time.perf_counter()
        self.teacher = UsiEngine.popen_usi(list(teacher_cmd), timeout=60)
        try:
            options = {"USI_Hash": 16}
            if "Threads" in self.teacher.options:
                options["Threads"] = 1
            self.teacher.configure(options)
        except BaseException:
            self.teacher.quit()
            raise

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def label(self, position: tuple[str, list[str]]):
        """The teacher's search of ``position`` (start, moves) at about ``teacher_nodes`` (+-50 %, so that games do
        not repeat): its USI result (best move, info), the score and the score in centipawns (None without one)."""
        from usi.client import EngineError, UsiLimit, score_to_cp
        nodes = max(1, int(self.teacher_nodes * self.rng.uniform(0.5, 1.5)))
        try:
            label = self.teacher.play(position, UsiLimit(nodes=nodes), timeout=60)
        except EngineError as exc:
            raise RuntimeError(f"the teacher failed: {exc}") from None
        self.searches += 1
        score = label.info.get("score")
        return label, score, score_to_cp(score)

    def keep(self, pos, cp: int, our_side: int) -> None:
        """Keep ``pos`` with the teacher's score ``cp`` (side to move's view) in the current game."""
        for key, value in (("board", pos.state.board.copy()), ("hands", pos.state.hands.copy()), ("stm", pos.turn),
                           ("score", cp), ("game", self.games), ("ply", pos.ply), ("ours", our_side)):
            self.rows[key].append(value)

    def end_game(self, result: float, note: str) -> None:
        """Close the current game with ``result`` (sente's score), report it and write the file."""
        r = self.rows
        close_game(r["stm"], r["result"], result, self.outcome)
        self.games += 1
        elapsed = self.elapsed()
        print(f"game {self.games}: {note}, {len(r['stm'])} positions, {elapsed:.0f} s "
              f"({self.searches / elapsed:.1f} teacher searches/s)", flush=True)
        _save_data(self.out, r["board"], r["hands"], r["stm"], r["score"], r["result"], r["game"], r["ply"],
                   self.teacher_nodes, self.seed, ours=r["ours"], teacher=" ".join(self.teacher_cmd))

    def summary(self) -> dict:
        return {"games": self.games, "positions": len(self.rows["stm"]), "seconds": self.elapsed(), **self.outcome}


def generate_teacher(out: Path, minutes: float, teacher_cmd: list[str], teacher_nodes: int, our_nodes: int,
                     our_share: float, seed: int, random_plies: int = 2, max_games: int | None = None) -> dict:
    """Teacher-scored data (see the module docstring); writes ``out`` (npz) after every game, returns a summary."""
    from search import Limits, Searcher
    rng = random.Random(seed)
    openings = _openings()
    ours = Searcher(hash_mb=16, seed=seed)
    run = _Run(out, teacher_cmd, teacher_nodes, seed, rng)
    try:
        while run.elapsed() < minutes * 60 and (max_games is None or run.games < max_games):
            pos, moves = start_position(rng, openings, random_plies)
            our_side = rng.randrange(2) if rng.random() < our_share else -1
            ours.clear()
            run.teacher.new_game()
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
                label, score, cp = run.label(("startpos", moves))
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
                    run.keep(pos, cp, our_side)
                if stm == our_side:
                    code = int(ours.search(pos, Limits(nodes=our_nodes)).best)
                else:
                    code = teacher_code
                moves.append(pos.move_usi(code))
                pos.push_unchecked(code)
            run.end_game(result, f"{pos.ply} plies, ours {('-', 'sente', 'gote')[our_side + 1]}, result {result}")
    finally:
        run.teacher.quit()
    return run.summary()


def relabel_games(records: list[Path], out: Path, teacher_cmd: list[str], teacher_nodes: int, seed: int,
                  max_games: int | None = None) -> dict:
    """Teacher scores for the positions of recorded shogi games (``usi.match``'s ``games.jsonl`` lines) past their
    opening line, kept by the filter of :func:`generate_teacher`; ``ours`` is :data:`OURS_BOTH` for a game between our
    own engines, the side of our engine in a game against a peer (:data:`PEER_NAMES`). The result is the recorded
    one. Writes ``out`` after every game, returns a summary."""
    from engine import Position
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
    run = _Run(out, teacher_cmd, teacher_nodes, seed, rng)
    try:
        for g in games_in:
            if g["sente"] in PEER_NAMES:
                our_side = 1
            elif g["gote"] in PEER_NAMES:
                our_side = 0
            else:
                our_side = OURS_BOTH
            pos = Position.from_sfen(g["start_sfen"])
            skip = int((g.get("opening") or {}).get("plies", 0))
            run.teacher.new_game()
            for i, mv in enumerate(g["moves"]):
                if i >= skip and not pos.is_check():
                    label, score, cp = run.label((g["start_sfen"], g["moves"][:i]))
                    if (label.move is not None and cp is not None and not score.is_mate() and abs(cp) < MATE_CLAMP
                            and pos.is_legal(label.move) and is_quiet(pos, pos.parse_move(label.move).code)):
                        run.keep(pos, cp, our_side)
                pos.push(mv)
            run.end_game({"sente": 1.0, "gote": 0.0, "draw": 0.5}[g["result"]],
                         f"{len(g['moves'])} plies, result {g['result']} ({len(games_in) - run.games - 1} to go)")
    finally:
        run.teacher.quit()
    return run.summary()
