"""The staged move picker (search/movepick.py) yields every legal search move exactly once, TT move first, in
band order, over many random positions of shogi and dai shogi."""
from __future__ import annotations

import random

import numpy as np
import pytest

from engine import Position
from engine.kernels import callable_from_python
from eval import build_eval_tables
from search import FEATURES, Searcher, movepick
from search.kernels import CTL_FEATURES
from search.movepick import (CONT_KINDS, MP_SCORE, ORD_BAD_CAPTURE, ORD_CAPTURE, ORD_COUNTER, ORD_KILLER, ORD_TT,
                             mp_next)
from search.see import static_exchange

mp_init = callable_from_python(movepick.mp_init)  # an inner kernel: kernels call it, and this test

PLY = 3  # the picker's slot used here (any ply of the tables works)


def _garbage_moves(pos: Position) -> list[int]:
    """Move codes that fail the TT move's pseudo-legality test: from an empty square, onto an own piece, a drop of
    a piece not in hand."""
    board = pos.state.board
    us = pos.turn
    empty = [sq for sq in range(len(board)) if board[sq] == 0]
    own = [sq for sq in range(len(board)) if board[sq] != 0 and (board[sq] >> 5) == us]
    out = [(empty[0] << 8) | empty[1], (own[0] << 8) | own[1]]
    hands = pos.state.hands[us]
    missing = [pt for pt in range(1, 8) if hands[pt] == 0]
    if missing and pos.variant.drops:
        out.append((1 << 17) | (missing[0] << 8) | empty[0])
    return out


def _run_picker(searcher, p, tt, counter, killers, gen_now, use_see=True, cont_row=-1):
    P, T, E = p.state, p.tables, build_eval_tables(p.variant)
    S = searcher._tables(p)
    S.killers[PLY, :] = killers
    n = mp_init(P, T, E, S, PLY, tt, counter, cont_row, gen_now, use_see)
    out, scores = [], []
    while True:
        mv = int(mp_next(P, T, E, S, PLY))
        if mv == 0:
            break
        out.append(mv)
        scores.append(int(S.mp[PLY, MP_SCORE]))
        assert len(out) < 2000
    return n, out, scores


@pytest.mark.parametrize("variant,games,plies", [("shogi", 8, 70), ("daishogi2017", 2, 50)])
def test_picker_yields_every_legal_move_once(variant, games, plies):
    rng = random.Random(2024)
    searcher = Searcher(hash_mb=1)
    searcher._ctl[CTL_FEATURES] = FEATURES["conthist"]  # _tables sizes the continuation history for it
    searcher._history[:] = np.array([rng.randrange(-9000, 9000) for _ in range(searcher._history.size)],
                                    np.int32).reshape(searcher._history.shape)
    positions = 0
    for _ in range(games):
        pos = Position.startpos(variant)
        if searcher._history.shape[1] != len(pos.state.board):
            searcher._tables(Searcher._prepare(pos))  # resizes history / counter tables for this board
        n_sq = len(pos.state.board)
        searcher._tables(Searcher._prepare(pos))
        assert searcher._cont.shape == (CONT_KINDS * n_sq, CONT_KINDS * n_sq)
        searcher._cont[:] = np.asarray(np.random.default_rng(7).integers(-9000, 9000, searcher._cont.shape),
                                       np.int16)
        for _ in range(plies):
            legal_all = pos.legal_codes().tolist()
            if not legal_all:
                break
            p = Searcher._prepare(pos)
            board_before = p.state.board.copy()
            search_moves = p.legal_codes("search").tolist()
            others = [m for m in legal_all if m not in set(search_moves)]
            r = rng.random()
            if r < 0.45:
                tt = rng.choice(search_moves)
            elif r < 0.55 and others:
                tt = rng.choice(others)  # a legal move the search generation leaves out (a root searchmove)
            elif r < 0.75:
                tt = rng.choice(_garbage_moves(p))
            else:
                tt = 0
            killers = [rng.choice(search_moves), rng.choice(legal_all + [12345, 0])]
            counter = rng.choice(search_moves + [0])
            cont_row = rng.choice([-1, rng.randrange(searcher._cont.shape[0])])
            for gen_now in (False, True):
                if gen_now and tt not in search_moves and tt != 0:
                    continue  # with gen_now the TT move is only ordered inside the generated list
                n, out, scores = _run_picker(searcher, p, tt, counter, killers, gen_now, cont_row=cont_row)
                want = set(search_moves) | ({tt} if tt in legal_all else set())
                assert len(out) == len(set(out)), "a move was yielded twice"
                assert set(out) == want
                if gen_now:
                    assert n == len(search_moves)
                if tt in legal_all:
                    assert out[0] == tt and scores[0] == ORD_TT
                assert all(a >= b for a, b in zip(scores[1:], scores[2:])), "not in band / score order"
                for mv, sc in zip(out, scores):
                    if mv == tt:
                        continue
                    is_capture = not (mv >> 17) & 1 and p.state.board[mv & 0xFF] != 0
                    if is_capture or (mv >> 16) & 1:
                        good = static_exchange(p, mv) >= 0
                        assert (sc >= ORD_CAPTURE) == good and (sc < ORD_BAD_CAPTURE // 2) == (not good)
                    elif mv == killers[0]:
                        assert sc == ORD_KILLER + 1
                    else:
                        assert sc < ORD_KILLER + 2 and sc > ORD_BAD_CAPTURE // 2
                        if mv == counter and mv != killers[1]:
                            assert sc == ORD_COUNTER
                        elif mv != killers[1]:  # a quiet move: its history (plus the continuation history)
                            code = ((mv >> 8) & 0xFF) + (p.turn << 5) if (mv >> 17) & 1 else int(p.state.board[
                                (mv >> 8) & 0xFF])
                            want_sc = int(searcher._history[code, mv & 0xFF])
                            if cont_row >= 0:
                                want_sc += int(searcher._cont[cont_row, (code & (CONT_KINDS - 1)) * n_sq
                                                              + (mv & 0xFF)])
                            assert sc == want_sc
                assert np.array_equal(p.state.board, board_before)
            positions += 1
            caps = [m for m in legal_all if not (m >> 17) & 1 and pos.state.board[m & 0xFF] != 0]
            pos.push_unchecked(rng.choice(caps) if caps and rng.random() < 0.4 else rng.choice(legal_all))
    assert positions >= games * 20


def test_picker_without_see_keeps_captures_in_their_band():
    """Without FEAT_SEE a losing capture is ordered with the other captures (the order of the engine before SEE)."""
    pos = Position.from_sfen("4k4/9/4s4/4p4/9/9/9/4R4/4K4 b - 1")  # RxP loses the rook to the silver
    p = Searcher._prepare(pos)
    rxp = pos.parse_move("5h5d").code
    for use_see, band_ok in ((True, lambda sc: sc < ORD_BAD_CAPTURE // 2), (False, lambda sc: sc >= ORD_CAPTURE)):
        _, out, scores = _run_picker(Searcher(hash_mb=1), p, 0, 0, [0, 0], False, use_see)
        assert band_ok(scores[out.index(rxp)])
