"""Teacher-scored training data (train.teacher, ``python -m train teach``) with Debian's fairy-stockfish as the
teacher (``.ci/run`` installs it): the positions kept are quiet, scored and consistent with their games."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from engine import Position
import json

from train.teacher import DEFAULT_TEACHER, MATE_CLAMP, OURS_BOTH, generate_teacher, relabel_games

TEACHER = Path(DEFAULT_TEACHER[0])


def test_teacher_games_give_quiet_scored_positions(tmp_path):
    assert TEACHER.is_file(), "fairy-stockfish is installed by .ci/run (apt-get install fairy-stockfish)"
    out = tmp_path / "t.npz"
    summary = generate_teacher(out, minutes=5, teacher_cmd=list(DEFAULT_TEACHER), teacher_nodes=300, our_nodes=300,
                               our_share=1.0, seed=3, max_games=2)
    assert summary["games"] == 2 and summary["positions"] > 10
    with np.load(out) as z:
        d = {k: z[k] for k in z.files}
    assert str(d["teacher"]) == " ".join(DEFAULT_TEACHER) and int(d["nodes"]) == 300
    n = len(d["stm"])
    assert n == summary["positions"] and all(len(d[k]) == n for k in ("board", "hands", "score", "result", "ply"))
    assert np.all(np.abs(d["score"]) < MATE_CLAMP) and np.abs(d["score"]).max() > 0
    assert set(np.unique(d["result"]).tolist()) <= {0.0, 0.5, 1.0}
    assert set(np.unique(d["ours"]).tolist()) <= {0, 1}  # our_share 1: our engine played one side of every game
    for g in np.unique(d["game"]):
        rows = d["game"] == g
        sente_result = np.where(d["stm"][rows] == 0, d["result"][rows], 1 - d["result"][rows])
        assert len(np.unique(sente_result)) == 1  # one result per game, each row in its side to move's view
    for i in range(0, n, max(1, n // 15)):  # kept positions are not in check
        pos = Position.from_sfen(_sfen_of(d["board"][i], d["hands"][i], "b" if d["stm"][i] == 0 else "w"))
        assert not pos.is_check()


def test_relabel_scores_recorded_games_past_their_opening(tmp_path):
    """``relabel`` replays recorded games (usi.match's games.jsonl lines), keeps quiet positions past the opening
    line with the teacher's score and the recorded result, and tags whose games they were."""
    assert TEACHER.is_file(), "fairy-stockfish is installed by .ci/run (apt-get install fairy-stockfish)"
    moves = "7g7f 3c3d 2g2f 8c8d 2f2e 8d8e 6i7h 4a3b 2e2d 2c2d 2h2d P*2c 2d2f 7a7b".split()
    start = Position.startpos().sfen()
    games = tmp_path / "games.jsonl"
    base = {"variant": "shogi", "start_sfen": start, "moves": moves, "opening": {"plies": 4}}
    games.write_text("\n".join(json.dumps(g) for g in (
        {**base, "sente": "a", "gote": "b", "result": "gote"},
        {**base, "sente": "fairy-stockfish", "gote": "ours", "result": "sente"},
        {**base, "variant": "daishogi2017", "sente": "a", "gote": "b", "result": "sente"},  # not shogi: skipped
        {**base, "sente": "a", "gote": "b", "result": "aborted"})) + "\n")  # no result: skipped
    out = tmp_path / "r.npz"
    summary = relabel_games([games], out, list(DEFAULT_TEACHER), teacher_nodes=300, seed=1)
    assert summary["games"] == 2 and summary["gote"] == 1 and summary["sente"] == 1
    with np.load(out) as z:
        d = {k: z[k] for k in z.files}
    n = len(d["stm"])
    assert 0 < n <= 2 * (len(moves) - 4) and np.all(d["ply"] >= 4)  # past the opening's 4 plies
    assert np.all(np.abs(d["score"]) < MATE_CLAMP)
    first = d["game"] == 0
    assert set(d["ours"][first].tolist()) == {OURS_BOTH} and set(d["ours"][~first].tolist()) == {1}
    sente_result = np.where(d["stm"] == 0, d["result"], 1 - d["result"])
    assert np.all(sente_result[first] == 0.0) and np.all(sente_result[~first] == 1.0)
    for i in range(n):  # each row is the position of its ply in the game
        pos = Position.startpos()
        for mv in moves[:int(d["ply"][i])]:
            pos.push(mv)
        assert np.array_equal(pos.state.board, d["board"][i]) and not pos.is_check()


def _sfen_of(board: np.ndarray, hands: np.ndarray, colour: str) -> str:
    """An SFEN of a stored row (through a position whose arrays are overwritten; the SFEN writer reads them)."""
    pos = Position.startpos()
    pos.state.board[:] = board
    pos.state.hands[:] = hands
    board_part, _, hand_part = pos.sfen().split()[:3]
    return f"{board_part} {colour} {hand_part} 1"
