"""Fantasista on the shared position and generator (issue 50), held to the frozen answers of its own rules engine
(``tests/fantasista_fixture.py``).

A turn *is* its outcome, so the shared generator is compared by outcomes: the set of positions its moves lead to
against the set the fixture's actions lead to (played by today's game layer), restricted to the turns the shared
generator makes so far.
"""
from __future__ import annotations

import random

import numpy as np
import pytest

from engine.kernels import callable_from_python
from engine.kernels.movegen import ST_PLY, ST_STM, do_move, undo_move
from engine.variants.fantasista import magic
from engine.variants.fantasista import pieces as PC
from engine.variants.fantasista.magic import FAIRIES, RESERVED_RESULTS
from engine.variants.fantasista.movers import do_roll, legal_moves, tt_key, undo_roll
from engine.variants.fantasista.state import FantasistaState, new_game
from engine.variants.fantasista.position import to_board, to_pos
from engine.variants.fantasista.variant import (FANTASISTA, MARK_CARRIER, MARK_INVINCIBLE, MAX_ROWS, N_RIGHTS,
                                                PENDING_NONE, PENDING_ROLL, SP_MASK, SP_TURN, ST_MOVENO, ST_PENDING,
                                                ST_RIGHTS, ST_SEEN, ST_TRUNCATED, fx_tables, table_ids)
from tests.fantasista_fixture import load
from tests.test_fantasista import board

MOVE_BUFFER = 1 << 16
FEW_TURNS = 400  # a node with more turns has a sample of them played through the game layer


@pytest.fixture(scope="module")
def decision_nodes() -> list[tuple[FantasistaState, list[str]]]:
    """The fixture's turn nodes (pre-game and target decisions left out) as states with their legal actions."""
    out = []
    fixture = load()
    for node in fixture["positions"] + fixture["features"]:
        g = FantasistaState.from_sfen(node["sfen"])
        if g.phase == "move" and g.pregame_side() is None:
            out.append((g, node["actions"]))
    return out


def position_key(P, T) -> np.uint64:
    """The Zobrist key of a shared position written out square by square (the test's own account of what the key
    covers: board, marks, riders, hands, rights, side), against the kernels' incremental keys and
    ``movers.load_board``'s."""
    key = np.uint64(0)
    for sq in np.flatnonzero(P.board):
        key ^= T.zob_board[P.board[sq], sq]
        if P.marks[sq] & MARK_INVINCIBLE:
            key ^= T.zob_mark[0, sq]
        if P.marks[sq] & MARK_CARRIER:
            key ^= T.zob_mark[1, sq]
        if P.riders[sq]:
            key ^= T.zob_rider[P.riders[sq], sq]
        if P.rider_marks[sq] & MARK_INVINCIBLE:
            key ^= T.zob_mark[2, sq]
    for c in (0, 1):
        for pt in range(32):
            key ^= T.zob_hand[c, pt, P.hands[c, pt]]
        for i in range(N_RIGHTS):
            key ^= T.zob_right[c, i, P.st[ST_RIGHTS + N_RIGHTS * c + i]]
    if P.st[ST_STM]:
        key ^= T.zob_side[0]
    return key


def _has_carrier(g: FantasistaState) -> bool:
    return any(m & PC.CARRIER for m in g.bd.m)


def test_kinds_and_tables():
    T = fx_tables()
    lt = FANTASISTA.ptype_of_letter
    assert [lt[x] for x in ("D", "O", "Y", "T", "H", "W")] == list(range(15, 21))
    assert lt["P'"] == 21 and lt["+R'"] == 29
    for letter in ("P'", "+R'", "D", "Y", "W"):  # captured tokens leave the game
        assert T.hand_type[lt[letter]] == 0 and T.hand_type[lt[letter] + 32] == 0
    assert T.hand_type[lt["+P"]] == lt["P"]
    assert T.promote_code[lt["Y"]] == lt["+P'"] == T.promote_code[lt["P'"]]
    assert T.prefer_promote[lt["P'"]] and T.prefer_promote[lt["R'"]] and not T.prefer_promote[lt["Y"]]
    # immunities: the king-god dragon not to a pawn (token or not), the thunder horse only to K R L N
    assert not T.capture_ok[lt["P'"], lt["O"] + 32] and T.capture_ok[lt["+P"], lt["O"] + 32]
    assert T.capture_ok[lt["R'"], lt["T"] + 32] and not T.capture_ok[lt["+R"], lt["T"] + 32]
    assert not T.capture_ok[lt["R"], lt["K"] + 32]


def test_position_round_trip(decision_nodes):
    T = fx_tables()
    for g, _ in decision_nodes:
        P = to_pos(g.bd, g.move_number)
        assert to_board(P).key() == g.bd.key(), g.sfen()
        assert P.keys[0] == position_key(P, T)


def test_key_tells_marks_riders_and_rights_apart(decision_nodes):
    T = fx_tables()
    g = next(g for g, _ in decision_nodes if _has_carrier(g) and any(g.bd.r))
    base = to_pos(g.bd).keys[0]
    sq = next(s for s in range(81) if g.bd.r[s])
    for change in ("rider", "rider mark", "carrier", "right", "emblem"):
        bd = g.bd.copy()
        if change == "rider":
            bd.r[sq] = 0
        elif change == "rider mark":
            bd.rm[sq] ^= PC.INVINCIBLE
        elif change == "carrier":
            bd.m[sq] &= ~PC.CARRIER
        elif change == "right":
            bd.rights[0][1] += 1
        else:
            bd.emblem[1] = not bd.emblem[1]
        assert to_pos(bd).keys[0] != base, change
        assert to_pos(bd).keys[0] == position_key(to_pos(bd), T)


def test_turns_are_the_fixtures(decision_nodes):
    # as many moves as the fixture has turns, each to a different place (keys kept move by move), and back; where
    # the turns are few enough to play them all through the game layer, the same places
    T = fx_tables()
    out = np.zeros(MOVE_BUFFER, np.int32)
    rng = random.Random(50)
    for g, actions in decision_nodes:
        P = to_pos(g.bd, g.move_number)
        board = P.board.copy()
        n = legal_moves(P, T, out)
        assert not P.st[ST_TRUNCATED]
        assert n == len(actions), g.sfen()
        keys = set()
        for mv in out[:n]:
            do_move(P, T, mv)
            keys.add(int(P.keys[1]))
            undo_move(P, T)
        assert len(keys) == n and (P.board == board).all() and P.st[ST_PLY] == 0, g.sfen()
        few = len(actions) <= FEW_TURNS
        shared = {}
        for mv in (out[:n] if few else rng.sample(list(out[:n]), FEW_TURNS)):
            do_move(P, T, mv)
            assert P.keys[1] == position_key(P, T), (g.sfen(), hex(mv))
            shared[to_board(P).key()] = int(mv)
            undo_move(P, T)
        expected = {}
        for a in (actions if few else []):
            h = g.copy()
            h.apply(a)
            expected[h.bd.key()] = a
        if few:
            assert set(shared) == set(expected), (
                g.sfen(), sorted(expected[k] for k in set(expected) - set(shared)),
                sorted(hex(shared[k]) for k in set(shared) - set(expected)))
        else:  # a big silver wave: the game layer finds each sampled outcome among its turns
            _, _, by_key = g.turns()
            assert all(by_key.get(k) is not None for k in shared), g.sfen()


def _perft(P, T, depth: int, buffers: list[np.ndarray]) -> int:
    """Turns ``depth`` plies deep (rolls not played), counted at the last ply."""
    out = buffers[depth]
    n = legal_moves(P, T, out)
    if depth == 1:
        return n
    total = 0
    for mv in out[:n].copy():
        do_move(P, T, mv)
        total += _perft(P, T, depth - 1, buffers)
        undo_move(P, T)
    return total


def test_perft_is_the_fixtures():
    T = fx_tables()
    for name, entry in load()["perft"].items():
        g = FantasistaState.from_sfen(entry["sfen"])
        P = to_pos(g.bd, g.move_number)
        buffers = [np.zeros(MOVE_BUFFER, np.int32) for _ in range(len(entry["counts"]) + 1)]
        assert [_perft(P, T, d, buffers) for d in range(1, len(entry["counts"]) + 1)] == entry["counts"], name


# ------------------------------------------------------------------ magic: rolls, targets, the schedule
def _roll_nodes() -> list[FantasistaState]:
    """States where a roll is due, one per pair of fairies and a few reserved results (random games to ply 15+),
    the target-asking results among them."""
    out = []
    rng = random.Random(8)
    reserved = ("4-8", "ayumi:3", "yokaku:3", "hiko:3", "nothing", "ginsara:1")
    for i, (f0, f1) in enumerate((a, b) for a in FAIRIES for b in FAIRIES):
        g = new_game((f0, f1), reserved=(reserved[i % 6], reserved[(i + 1) % 6]))
        while g.phase != "roll" or g.move_number < 16 + i % 2:
            if g.phase == "roll":
                g.apply(f"roll={rng.randint(1, 20)}")
            elif g.phase == "target":
                g.apply(rng.choice(g.legal_actions()))
            else:
                g.apply(rng.choice(g.legal_actions()))
        out.append(g)
    return out


def _shared(g: FantasistaState):
    return to_pos(g.bd, g.move_number, g.phase, g.pending, table_ids([FAIRIES[f] for f in g.fairy], g.reserved))


def _same_place(P, Q) -> None:
    """P (after kernel moves) stands where Q (made from the game layer) stands."""
    ply = P.st[ST_PLY]
    for name in ("board", "hands", "marks", "riders", "rider_marks"):
        assert (getattr(P, name) == getattr(Q, name)).all(), name
    assert P.st[ST_STM] == Q.st[ST_STM]
    assert (P.st[ST_RIGHTS:ST_RIGHTS + 8] == Q.st[ST_RIGHTS:ST_RIGHTS + 8]).all()
    assert P.st[ST_MOVENO] == Q.st[ST_MOVENO] and P.st[ST_PENDING] == Q.st[ST_PENDING]
    assert P.keys[ply] == Q.keys[0]


def test_chance_rows_are_the_magic_tables():
    T = fx_tables()
    for fairy in FAIRIES:
        for reserved in RESERVED_RESULTS:
            t = magic.table_id(fairy, reserved)
            rows = magic.roll_rows(fairy, reserved)
            assert T.ch_n[t] == len(rows) <= MAX_ROWS
            assert list(T.ch_w[t, :len(rows)]) == [w for w, _ in rows] and T.ch_w[t].sum() == magic.DIE_FACES
            assert list(T.ch_w[t, :len(rows)]) == sorted(T.ch_w[t, :len(rows)], reverse=True)


def test_rolls_and_targets_are_the_game_layers():
    # every face of the d20 at every roll node: the kernel's result row gives the game layer's position (key
    # included); a target it asks for lists the game layer's squares, and each gives its position; all undone
    T = fx_tables()
    roll, unroll = callable_from_python(do_roll), callable_from_python(undo_roll)
    out = np.zeros(MOVE_BUFFER, np.int32)
    targets_seen = 0
    for g in _roll_nodes():
        P = _shared(g)
        assert P.st[ST_PENDING] == PENDING_ROLL
        start = {name: getattr(P, name).copy() for name in ("board", "hands", "marks", "riders", "rider_marks", "st")}
        c = 1 - g.bd.stm
        rows = magic.roll_rows(FAIRIES[g.fairy[c]], g.reserved[c])
        for face in range(1, 21):
            r = [e for _, e in rows].index(magic.effect_of(face, FAIRIES[g.fairy[c]], g.reserved[c]))
            h = g.copy()
            h.apply(f"roll={face}")
            roll(P, T, r)
            _same_place(P, _shared(h))
            if h.phase == "target":
                targets_seen += 1
                n = legal_moves(P, T, out)
                assert sorted(int(mv) & 0xFF for mv in out[:n]) == sorted(h.target_squares())
                for mv in out[:n]:
                    k = h.copy()
                    k.apply(f"target:{PC.square_name(int(mv) & 0xFF)}")
                    do_move(P, T, mv)
                    _same_place(P, _shared(k))
                    undo_move(P, T)
            unroll(P, T)
            assert P.st[ST_PLY] == 0
            for name, arr in start.items():
                assert (getattr(P, name) == arr).all(), (g.sfen(), face, name)
    assert targets_seen > 0


def test_the_schedule_marks_rolls_and_tells_tt_keys_apart():
    T = fx_tables()
    key = callable_from_python(tt_key)
    out = np.zeros(MOVE_BUFFER, np.int32)
    g = new_game(("hiko", "ginsara"))
    P = _shared(g)
    rng = random.Random(3)
    pending = []
    for ply in range(1, 33):
        n = legal_moves(P, T, out)
        do_move(P, T, out[rng.randrange(n)])
        assert P.st[ST_MOVENO] == ply + 1
        pending.append(int(P.st[ST_PENDING]))
        P.st[ST_PENDING] = PENDING_NONE  # the roll's result: nothing
    assert [i + 1 for i, p in enumerate(pending) if p == PENDING_ROLL] == [15, 16, 30, 31]
    # the same position at move 1 and 31 (31 is right before a roll is due after it), and before a roll and after
    # a "nothing" roll, are different TT nodes; the position key (repetition) is the same
    Q = to_pos(new_game().bd)
    k1 = key(Q, T, 0)
    Q.st[ST_MOVENO] = 31
    assert key(Q, T, 0) != k1
    Q.st[ST_PENDING] = PENDING_ROLL
    before = key(Q, T, 0)
    Q.st[ST_PENDING] = PENDING_NONE
    assert key(Q, T, 0) != before and Q.keys[0] == position_key(Q, T)


def test_one_part_moves_are_spelt_from_their_codes(decision_nodes):
    # the shared search names a one-part move without the game layer's list of turns: its spelling is a legal
    # spelling of the turn with the same outcome
    from search.fantasista_shared import spell

    T = fx_tables()
    out = np.zeros(MOVE_BUFFER, np.int32)
    spelt = 0
    for g, _ in decision_nodes:
        P = to_pos(g.bd, g.move_number)
        by_key = g.turns()[2]
        for mv in out[:legal_moves(P, T, out)].copy():
            token = spell(int(mv))
            if token is None:
                continue
            do_move(P, T, mv)
            key = to_board(P).key()
            undo_move(P, T)
            assert g.canonical(token) == by_key[key], (g.sfen(), token)
            spelt += 1
    assert spelt > 10_000


def test_roll_counts_and_previews_follow_the_game():
    # along a random game (rolls and targets included): the kernel's count of rolls done is the game's; the rolls
    # a search anticipates are the coming pair (or its second); previewing one makes its real roller's table the
    # chance node's, and the preview leaves the position as it was
    from engine.variants.fantasista.movers import end_preview, preview_roll, rolls_done, rolls_horizon
    done, horizon = callable_from_python(rolls_done), callable_from_python(rolls_horizon)
    preview, end = callable_from_python(preview_roll), callable_from_python(end_preview)
    rng = random.Random(11)
    g = new_game(("ayumi", "hiko"))
    states, rollers = [], []
    while g.move_number < 63:
        states.append((g.copy(), len(rollers)))
        if g.phase == "roll":
            rollers.append(1 - g.bd.stm)
            g.apply(f"roll={rng.randint(1, 20)}")
        else:
            g.apply(rng.choice(g.legal_actions()))
    assert len(rollers) == 8
    for h, n in states[:-20]:  # the last ones' coming rolls are after the game's end
        P = _shared(h)
        assert done(P) == n
        assert horizon(P) == (n + 2 if n % 2 == 0 else n + 1)
        st = P.st.copy()
        for j in range(n, horizon(P)):
            saved = preview(P, j)
            assert P.st[ST_PENDING] == PENDING_ROLL and 1 - P.st[ST_STM] == rollers[j]
            end(P, saved)
            assert (P.st == st).all()


def _outcomes(P, T, codes) -> set[int]:
    """The position keys the moves ``codes`` lead to."""
    out = set()
    for code in codes:
        do_move(P, T, np.int64(code))
        out.add(int(P.keys[P.st[ST_PLY]]))
        undo_move(P, T)
    return out


def test_a_search_looks_at_a_bounded_number_of_waves():
    """In check with six silvers and a wave right, the waves that answer the check (the silver of 4h blocking on 5g)
    are found among tens of thousands of outcomes, two seconds a node with two dozen silvers: a search's position
    looks at WAVE_OUTCOMES of them at most, and what it finds is legal (a subset of the full generation)."""
    from search.fantasista_shared import WAVE_OUTCOMES, FxPosition

    silvers = {sq: "S" for sq in ("1e", "2e", "8e", "9e", "2h", "4h")}
    g = FantasistaState.from_sfen(f"{board({'5a': 'r', '1a': 'k', '5i': 'K', **silvers})} b - 2 f=gh;r=W")
    T = fx_tables()
    P = to_pos(g.bd, g.move_number)
    buf = np.zeros(MOVE_BUFFER, np.int32)
    full = _outcomes(P, T, buf[:legal_moves(P, T, buf)])
    assert P.st[ST_SEEN] > WAVE_OUTCOMES and not P.st[ST_TRUNCATED]
    pos = FxPosition.from_game(g)
    codes = pos.legal_codes()
    bounded = _outcomes(pos.state, T, codes)
    assert pos.state.st[ST_SEEN] <= WAVE_OUTCOMES and pos.state.st[ST_TRUNCATED]
    assert bounded < full
    assert sum(int(c) & SP_MASK == SP_TURN for c in codes) > 100  # blocking waves found within the budget


@pytest.mark.parametrize("side", ["b", "w"])
def test_a_position_with_more_moves_than_any_shogi_position(side):
    """Both sides hold every kind (ordinary, tokens, the six specials) and the emblem: over 1,024 legal moves, the
    width of shogi's move lists. The generator does not check a list's width (the search's lists were 1,024 wide and
    the process aborted, "malloc(): corrupted top size"); they are ``Variant.max_moves`` wide, and the search
    answers a legal move."""
    from search import Limits
    from search.games import FantasistaGameSearcher

    g = FantasistaState.from_sfen(f"4k4/9/9/9/9/9/9/9/4K4 {side} RBGSNLPrbgsnlp 1 f=ha;r=Ee;h=RBGSPDOYTHWrbgspdoythw")
    actions = g.legal_actions()
    assert 1024 < len(actions) < FANTASISTA.max_moves
    r = FantasistaGameSearcher(hash_mb=1).think(g, Limits(depth=3), lambda info: None)
    assert r.best in actions


def test_a_copy_made_inside_a_line_unplays_its_multi_part_turns():
    """FxPosition.copy copies the turn arena's rows only up to the plies played: a copy made after two multi-part
    turns still unplays them to the root, and its own generations leave the original alone."""
    from search.fantasista_shared import FxPosition

    silvers = {sq: "S" for sq in ("2e", "5e", "8e")}
    g = FantasistaState.from_sfen(f"{board({'5i': 'K', '5a': 'k', '2c': 's', '8c': 's', **silvers})} b - 2 "
                                  "f=gg;r=Ww")
    pos = FxPosition.from_game(g)
    root = to_board(pos.state).key()
    line = []
    for _ in range(2):
        waves = [int(c) for c in pos.legal_codes() if int(c) & SP_MASK == SP_TURN]
        line.append(waves[len(waves) // 2])
        pos.push_unchecked(line[-1])
    deep = [a.copy() for a in pos.state]
    other = pos.copy()
    other.legal_codes()  # writes the copy's arena and outcome set
    for _ in line:
        other.pop()
    assert to_board(other.state).key() == root
    assert all(np.array_equal(a, b) for a, b in zip(pos.state, deep))  # the original untouched


def test_threads_search_fantasista_with_helpers_across_a_roll():
    """Threads 2 on fantasista (Lazy SMP over the shared kernel; a helper has chance-node rows of its own): from a
    position a few plies before a roll pair the helper's nodes come on top of the main thread's node limit, the
    answer is a legal turn, and no helper thread outlives the search."""
    import threading

    from search import Limits
    from search.games import FantasistaGameSearcher

    g = new_game(("hiko", "ayumi"))
    for token in "7g7f 3c3d 2g2f 8c8d 2f2e 8d8e 6i7h 4a3b 2e2d 2c2d 2h2d 8e8f".split():
        g.apply(token)
    searcher = FantasistaGameSearcher(hash_mb=4, threads=2)
    r = searcher.think(g, Limits(nodes=20_000), lambda info: None)
    assert r.best in g.legal_actions()
    assert r.nodes > 20_000 + 1000  # the main thread stops near 20,000; the helper's nodes come on top
    assert not [t for t in threading.enumerate() if t.name.startswith("search-helper")]
    one = FantasistaGameSearcher(hash_mb=4).think(g, Limits(nodes=20_000), lambda info: None)
    assert one.nodes < 20_000 + 1000
