"""What the training tools share about playing and saving training games: the openings, a game's start, which
moves are quiet, a finished game's results, the data file, and the ``ours`` marks (:mod:`train.fit`,
:mod:`train.teacher`)."""
from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from engine import Position
from engine.kernels.movegen import DROP, PROMOTE

ROOT = Path(__file__).resolve().parent.parent
OPENINGS = ROOT / "bench" / "openings" / "shogi-balanced.txt"
MATE_CLAMP = 3000     # a search score beyond this (or a mate) is not a training label: the game is decided


def _openings() -> list[list[str]]:
    lines = []
    for raw in OPENINGS.read_text().splitlines():
        text = raw.split("#", 1)[0].strip()
        if text:
            lines.append(text.split())
    return lines


def start_position(rng: random.Random, openings: list[list[str]], random_plies: int) -> tuple[Position, list[str]]:
    """A game's start for data generation: a random opening line, then ``random_plies`` random legal plies (fewer when
    a position has none); the position and its USI moves from the start position."""
    pos = Position.startpos()
    moves = list(rng.choice(openings))
    for mv in moves:
        pos.push(mv)
    for _ in range(random_plies):
        codes = pos.legal_codes("search")
        if len(codes) == 0:
            break
        code = int(rng.choice(list(codes)))
        moves.append(pos.move_usi(code))
        pos.push_unchecked(code)
    return pos, moves


def is_quiet(pos: Position, code: int) -> bool:
    """The move neither captures nor promotes (a static evaluation cannot see a pending exchange)."""
    return not (code & PROMOTE) and bool(code & DROP or pos.state.board[code & 0xFF] == 0)


def close_game(stms: list[int], results: list[float], result: float, outcome: dict[str, int]) -> None:
    """Give the kept positions of the game that just ended its ``result`` (sente's score), each in its side to
    move's view, and count the outcome."""
    for stm in stms[len(results):]:
        results.append(result if stm == 0 else 1.0 - result)
    outcome["draw" if result == 0.5 else ("sente" if result == 1.0 else "gote")] += 1


def _save_data(out, boards, hands, stms, scores, results, game_ids, plies, nodes, seed, ours=None, **meta: str
               ) -> None:
    """Write the positions so far (``ours``: per position, the side our engine played in its game, -1 for none;
    ``meta``: extra text fields, e.g. the teacher's command)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, board=np.array(boards, np.int8), hands=np.array(hands, np.int8),
                        stm=np.array(stms, np.int8), score=np.array(scores, np.int32),
                        result=np.array(results, np.float32), game=np.array(game_ids, np.int32),
                        ply=np.array(plies, np.int32), nodes=np.int64(nodes), seed=np.int64(seed),
                        **({} if ours is None else {"ours": np.array(ours, np.int8)}),
                        **{k: np.str_(v) for k, v in meta.items()})
    tmp.replace(out)


#: ``ours`` of a position: the side our engine played in its game (0, 1), -1 when the teacher played both sides (or
#: no teacher: gen data), OURS_BOTH when our engine played both (a recorded game relabelled, train.teacher)
OURS_BOTH = -2
