"""A small referee loop for turncoat shogi (true state + two views) and the strength test's pairs of games:
:class:`search.turncoat.TurncoatEngine` with its plan reasoning against one without (``docs/turncoat.md``)."""
from __future__ import annotations

import numpy as np

from search.turncoat import Settings, TurncoatEngine


def plain_engine(seed: int = 0, depth: int = 2) -> TurncoatEngine:
    """The baseline of the strength test: never declares, ignores the enemy's plan."""
    return TurncoatEngine(Settings(depth=depth, use_plan=False, reason_enemy=False), seed)


def _view_token(tok: str, owner_of_plan: int | None, viewer: int) -> str:
    if tok.startswith("plan"):
        return "plan=" + tok[5:] if owner_of_plan == viewer else "plan=?"
    return tok


def play_game(engines, seed: int = 0, random_plies: int = 6, max_moves: int = 240,
              adjudicate_cp: int = 1000) -> tuple[float, str, list[str]]:
    """One game between ``engines[0]`` (sente) and ``engines[1]`` (gote), each seeing only its own view.

    The true state is kept here; each engine gets its side's view (own plan ``plan=<squares>``, the enemy's
    ``plan=?`` until ``defect=<squares>``). The first ``random_plies`` moves after the plans are random (seeded) for
    variety. At ``max_moves`` the game is adjudicated by the static evaluation (``adjudicate_cp``) or drawn.
    Returns (score for sente, reason, record).
    """
    from eval import evaluate
    from engine.variants.turncoat import new_game
    rng = np.random.default_rng(seed)
    true = new_game()
    views = [new_game(), new_game()]
    plies = 0
    while True:
        r = true.result()
        if r is not None:
            return r[0], r[1], true.record
        if true.move_number > max_moves:
            v = evaluate(true.pos) * (1 if true.turn == 0 else -1)
            if abs(v) >= adjudicate_cp:
                return (1.0 if v > 0 else 0.0), "adjudicated", true.record
            return 0.5, "move limit", true.record
        side = true.side_to_move()
        if true.plan_node_side() is None and plies < random_plies:
            codes = true.pos.legal_codes("search")
            tok = true.pos.move_usi(int(rng.choice(codes)))
            plies += 1
        else:
            tok = engines[side].choose(views[side])
        n0 = len(true.record)
        true.apply(tok)
        for tok2 in true.record[n0:]:
            owner = sum(1 for t in true.record[:true.record.index(tok2)] if t.startswith("plan")) \
                if tok2.startswith("plan") else None
            for viewer in (0, 1):
                views[viewer].apply(_view_token(tok2, owner, viewer))


def match_pair(seed: int, depth: int = 2, max_moves: int = 240,
               opponent: str = "plain") -> list[tuple[int, float, str]]:
    """Two games from the same seed with colours swapped: the full engine (own plan + belief over the enemy's) against
    ``opponent``: ``"plain"`` (never declares, ignores the enemy's plan) or ``"declarer"`` (declares with the same
    rule but ignores the enemy's plan). Returns [(smart side, smart score, reason), ...]."""
    out = []
    for smart_side in (0, 1):
        smart = TurncoatEngine(Settings(depth=depth), seed=seed * 2 + smart_side)
        if opponent == "plain":
            plain = plain_engine(seed * 2 + 1 - smart_side, depth)
        else:
            plain = TurncoatEngine(Settings(depth=depth, reason_enemy=False), seed * 2 + 1 - smart_side)
        engines = [smart, plain] if smart_side == 0 else [plain, smart]
        score, reason, _ = play_game(engines, seed=seed, max_moves=max_moves)
        out.append((smart_side, score if smart_side == 0 else 1.0 - score, reason))
    return out
