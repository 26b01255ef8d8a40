"""Teacher-scored training data (eval.teacher, ``python -m eval.train teach``) with Debian's fairy-stockfish as the
teacher (``.ci/run`` installs it): the positions kept are quiet, scored and consistent with their games."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from engine import Position
from eval.teacher import DEFAULT_TEACHER, MATE_CLAMP, generate_teacher

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


def _sfen_of(board: np.ndarray, hands: np.ndarray, colour: str) -> str:
    """An SFEN of a stored row (through a position whose arrays are overwritten; the SFEN writer reads them)."""
    pos = Position.startpos()
    pos.state.board[:] = board
    pos.state.hands[:] = hands
    board_part, _, hand_part = pos.sfen().split()[:3]
    return f"{board_part} {colour} {hand_part} 1"
