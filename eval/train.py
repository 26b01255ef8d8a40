"""Training pipeline of the king-relative (KP) evaluation (:mod:`eval.kp`): ``python -m eval.train gen|fit|check``.

* ``gen``: self-play of our own engine (the hand-set evaluation) at a small node budget from the balanced openings
  (``bench/openings/shogi-balanced.txt``) plus two random plies; it keeps quiet positions (not in check, the
  searched best move neither captures nor promotes, no mate score, past the opening line) with the search score of
  the position (side to move's view) and, when the game ends, its result. One process; stops after ``--minutes``.
* ``fit``: Texel-style logistic fit with numpy: first the scale ``K`` of ``sigmoid(eval / K)`` that best fits the
  hand-set evaluation, then Adam on the sparse KP features toward the target ``lam * sigmoid(score / K) +
  (1 - lam) * result``, with L2 toward the hand-set evaluation's values (the table starts as the hand-set evaluation
  written in KP form, see :func:`eval.kp.prior_tables`), so little data still gives a sane table. A king-free
  factor (piece x square, shared by every king square) is trained beside the KP table and folded into it on
  export. Games are split 90/10 into training and validation by game; both losses are printed and stored in the
  weights file.
* ``check``: loads a weights file and prints its score on the fixed position of the tests.

Commands, data size and timings: ``docs/eval.md``.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

from engine import Position
from engine.kernels.movegen import DROP, PROMOTE

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT / "eval" / "data" / "kp_shogi_data.npz"  # committed (200 KB): the run of docs/eval.md
OPENINGS = ROOT / "bench" / "openings" / "shogi-balanced.txt"
MATE_CLAMP = 3000     # a search score beyond this (or a mate) is not a training label: the game is decided
RESIGN_CP = 2500      # adjudication: both sides' scores agree the game is lost by this much
MAX_PLIES = 320       # adjudicated a draw after this many plies


def _openings() -> list[list[str]]:
    lines = []
    for raw in OPENINGS.read_text().splitlines():
        text = raw.split("#", 1)[0].strip()
        if text:
            lines.append(text.split())
    return lines


def generate(out: Path, minutes: float, nodes: int, seed: int, random_plies: int = 2) -> dict:
    """Self-play data (see the module docstring); writes ``out`` (npz) after every game, returns a summary."""
    from search import Limits, Searcher
    rng = random.Random(seed)
    openings = _openings()
    searcher = Searcher(hash_mb=16, seed=seed)
    boards, hands, stms, scores, results, game_ids, plies = [], [], [], [], [], [], []
    t0 = time.perf_counter()
    games = moves_played = 0
    outcome_counts = {"sente": 0, "gote": 0, "draw": 0}
    while time.perf_counter() - t0 < minutes * 60:
        pos = Position.startpos()
        for mv in rng.choice(openings):
            pos.push(mv)
        for _ in range(random_plies):
            codes = pos.legal_codes("search")
            if len(codes) == 0:
                break
            pos.push_unchecked(int(rng.choice(list(codes))))
        first = len(stms)
        searcher.clear()
        result = None  # sente's score
        lost_streak = [0, 0]
        while result is None:
            r = pos.result()
            if r is not None:
                result = r[0]
                break
            if pos.ply >= MAX_PLIES:
                result = 0.5
                break
            res = searcher.search(pos, Limits(nodes=nodes))
            moves_played += 1
            stm = pos.turn
            if res.mate is not None:
                result = (1.0 if res.mate > 0 else 0.0) if stm == 0 else (0.0 if res.mate > 0 else 1.0)
                break
            sc = int(res.score_cp)
            lost_streak[stm] = lost_streak[stm] + 1 if sc <= -RESIGN_CP else 0
            if lost_streak[stm] >= 2:
                result = 0.0 if stm == 0 else 1.0
                break
            mv = int(res.best)
            quiet = not (mv & PROMOTE) and (mv & DROP or pos.state.board[mv & 0xFF] == 0)
            if quiet and abs(sc) < MATE_CLAMP and not pos.is_check():
                boards.append(pos.state.board.copy())
                hands.append(pos.state.hands.copy())
                stms.append(stm)
                scores.append(sc)
                game_ids.append(games)
                plies.append(pos.ply)
            pos.push_unchecked(mv)
        n_new = len(stms) - first
        for i in range(first, first + n_new):
            results.append(result if stms[i] == 0 else 1.0 - result)
        outcome_counts["draw" if result == 0.5 else ("sente" if result == 1.0 else "gote")] += 1
        games += 1
        elapsed = time.perf_counter() - t0
        print(f"game {games}: {pos.ply} plies, result {result}, {len(stms)} positions, {elapsed:.0f} s "
              f"({moves_played / elapsed:.1f} moves/s)", flush=True)
        _save_data(out, boards, hands, stms, scores, results, game_ids, plies, nodes, seed)
    return {"games": games, "positions": len(stms), "seconds": time.perf_counter() - t0, **outcome_counts}


def _save_data(out, boards, hands, stms, scores, results, game_ids, plies, nodes, seed) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, board=np.array(boards, np.int8), hands=np.array(hands, np.int8),
                        stm=np.array(stms, np.int8), score=np.array(scores, np.int32),
                        result=np.array(results, np.float32), game=np.array(game_ids, np.int32),
                        ply=np.array(plies, np.int32), nodes=np.int64(nodes), seed=np.int64(seed))
    tmp.replace(out)


_DATA_KEYS = ("board", "hands", "stm", "score", "result", "game", "ply")


def _load_data(paths: list[Path]) -> dict:
    """The positions of one or more ``gen`` files, concatenated (game ids offset so games stay apart)."""
    parts = []
    for path in paths:
        if not Path(path).is_file():
            raise ValueError(f"no training data file {path} (make one with: python -m eval.train gen)")
        try:
            with np.load(path, allow_pickle=False) as z:
                d = {k: z[k] for k in _DATA_KEYS}
        except (OSError, KeyError, ValueError) as exc:
            raise ValueError(f"training data file {path} is not readable: {exc}") from None
        if len(d["stm"]) == 0:
            raise ValueError(f"training data file {path} holds no positions")
        parts.append(d)
    offset = 0
    for d in parts:
        d["game"] = d["game"] + offset
        offset = int(d["game"].max()) + 1
    return {k: np.concatenate([d[k] for d in parts]) for k in _DATA_KEYS}


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x, -60, 60)))


def _bce(p: np.ndarray, t: np.ndarray) -> float:
    p = np.clip(p, 1e-9, 1 - 1e-9)
    return float(-(t * np.log(p) + (1 - t) * np.log(1 - p)).mean())


def fit_scale(ev: np.ndarray, result: np.ndarray) -> float:
    """Texel's first step: the ``K`` of ``sigmoid(eval / K)`` that best predicts the game results."""
    grid = np.arange(100, 2001, 10, dtype=np.float64)
    losses = [_bce(_sigmoid(ev / k), result) for k in grid]
    return float(grid[int(np.argmin(losses))])


def fit(data_paths: list[Path], out: Path | None, steps: int, lr: float, lam: float, l2_kp: float, l2_factor: float,
        seed: int = 0) -> dict:
    """Fit the KP tables to the data (see the module docstring); writes ``out`` (npz) unless ``None``; returns the
    figures (scale, losses of the hand-set and the learned tables on training and validation positions)."""
    from engine import get_variant
    from . import kp as KP
    from .params import TEMPO
    t0 = time.perf_counter()
    v = get_variant("shogi")
    d = _load_data(data_paths)
    sign = np.where(d["stm"] == 0, 1.0, -1.0)
    idx, coef = KP.features(d["board"], d["hands"], v)
    coef = coef.astype(np.float64)
    kp0, kh0 = KP.prior_tables(v)
    prior = np.concatenate([kp0.ravel(), kh0.ravel(), [0]]).astype(np.float64)
    fmap = KP.factor_map(v)
    n_w, n_f = prior.size, int(fmap.max()) + 1
    dummy = n_w - 1

    def value(w: np.ndarray, rows: np.ndarray) -> np.ndarray:  # side to move's view, as the kernel
        return sign[rows] * (w[idx[rows]] * coef[rows]).sum(axis=1) + TEMPO

    games = np.unique(d["game"])
    rng = np.random.default_rng(seed)
    val_games = rng.choice(games, size=max(1, len(games) // 10), replace=False)
    is_val = np.isin(d["game"], val_games)
    tr, va = np.flatnonzero(~is_val), np.flatnonzero(is_val)
    if len(tr) == 0 or len(va) == 0:
        raise ValueError("too little data: need positions from at least two games")
    hand_ev = value(prior, np.arange(len(sign)))
    K = fit_scale(hand_ev[tr], d["result"][tr].astype(np.float64))
    target = lam * _sigmoid(d["score"] / K) + (1 - lam) * d["result"].astype(np.float64)
    loss_hand = (_bce(_sigmoid(hand_ev[tr] / K), target[tr]), _bce(_sigmoid(hand_ev[va] / K), target[va]))
    # trained parameters: a per-slot delta and the king-free factor; w = prior + delta + factor[fmap]
    delta, factor = np.zeros(n_w), np.zeros(n_f)
    m_d, v_d, m_f, v_f = np.zeros(n_w), np.zeros(n_w), np.zeros(n_f), np.zeros(n_f)
    b1, b2, eps = 0.9, 0.999, 1e-8
    n_tr = len(tr)
    flat_idx = idx[tr].ravel()
    history = []
    for step in range(1, steps + 1):
        w = prior + delta + factor[fmap]
        w[dummy] = 0.0
        e = value(w, tr)
        g_e = (_sigmoid(e / K) - target[tr]) / K * sign[tr] / n_tr  # d loss / d (sente-view sum)
        g_w = np.bincount(flat_idx, weights=(coef[tr] * g_e[:, None]).ravel(), minlength=n_w)
        g_w[dummy] = 0.0
        g_d = g_w + 2 * l2_kp * delta
        g_f = np.bincount(fmap, weights=g_w, minlength=n_f) + 2 * l2_factor * factor
        for g, m, vv, p in ((g_d, m_d, v_d, delta), (g_f, m_f, v_f, factor)):
            m *= b1
            m += (1 - b1) * g
            vv *= b2
            vv += (1 - b2) * g * g
            p -= lr * (m / (1 - b1 ** step)) / (np.sqrt(vv / (1 - b2 ** step)) + eps)
        if step % 50 == 0 or step == steps:
            w = prior + delta + factor[fmap]
            w[dummy] = 0.0
            lt, lv = _bce(_sigmoid(value(w, tr) / K), target[tr]), _bce(_sigmoid(value(w, va) / K), target[va])
            history.append((step, lt, lv))
            print(f"step {step}: train {lt:.5f} validation {lv:.5f}", flush=True)
    w = np.rint(prior + delta + factor[fmap])
    w[dummy] = 0.0
    kp = w[:kp0.size].reshape(kp0.shape).astype(np.int32)
    kh = w[kp0.size:kp0.size + kh0.size].reshape(kh0.shape).astype(np.int32)
    lt, lv = _bce(_sigmoid(value(w, tr) / K), target[tr]), _bce(_sigmoid(value(w, va) / K), target[va])
    figures = {"positions": int(len(sign)), "train": int(len(tr)), "validation": int(len(va)),
               "games": int(len(games)), "scale": K, "loss_hand_train": loss_hand[0],
               "loss_hand_validation": loss_hand[1], "loss_train": lt, "loss_validation": lv,
               "max_change_cp": int(np.abs(w - np.rint(prior)).max()), "seconds": time.perf_counter() - t0}
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        small = np.int16 if np.abs(kp).max() < 2 ** 15 else np.int32
        np.savez_compressed(out, variant=np.str_(v.id), kp=kp.astype(small), kp_hand=kh,
                            **{k: np.float64(x) for k, x in figures.items()},
                            settings=np.array([steps, lr, lam, l2_kp, l2_factor], np.float64))
        figures["bytes"] = out.stat().st_size
    return figures


#: The fixed position of ``check`` and of the test of the shipped weights (the bench middlegame, search.bench_positions)
CHECK_SFEN = "ln5nl/1r1sk1g2/p1pgpsbp1/3p1pp1p/1p5P1/P1P1PPP1P/1PSPS1N2/2GK1G1R1/LN6L b Bp 1"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.train", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen", help="self-play data")
    g.add_argument("--out", type=Path, default=DEFAULT_DATA)
    g.add_argument("--minutes", type=float, default=20.0)
    g.add_argument("--nodes", type=int, default=3000)
    g.add_argument("--seed", type=int, default=1)
    f = sub.add_parser("fit", help="Texel-style logistic fit of the KP tables")
    f.add_argument("--data", type=Path, nargs="+", default=[DEFAULT_DATA], help="one or more gen files")
    f.add_argument("--out", type=Path, default=None, help="weights file (default eval/weights/kp_shogi.npz)")
    f.add_argument("--steps", type=int, default=300)
    f.add_argument("--lr", type=float, default=1.0, help="Adam step, centipawns")
    f.add_argument("--lam", type=float, default=0.5, help="weight of the search score in the target (rest: result)")
    f.add_argument("--l2-kp", type=float, default=1e-6, help="L2 toward the hand-set values, per KP slot")
    f.add_argument("--l2-factor", type=float, default=1e-5, help="L2 of the king-free factor")
    c = sub.add_parser("check", help="load a weights file and print its score on a fixed position")
    c.add_argument("--weights", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.cmd == "fit":
        from .kp import weights_path
        if args.steps <= 0 or args.lr <= 0 or not 0 <= args.lam <= 1 or args.l2_kp < 0 or args.l2_factor < 0:
            ap.error("--steps and --lr must be positive, --lam in [0, 1], the L2 weights non-negative")
        try:
            figures = fit(args.data, args.out or weights_path("shogi"), args.steps, args.lr, args.lam, args.l2_kp,
                          args.l2_factor)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(figures)
        return 0
    if args.cmd == "check":
        from engine import get_variant
        from . import evaluate, kp_eval_tables
        from .kernels import evaluate_k
        from .kp import load_weights, weights_path
        v = get_variant("shogi")
        try:
            E = kp_eval_tables(v, *load_weights(args.weights or weights_path("shogi"), v))
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        pos = Position.from_sfen(CHECK_SFEN)
        print(f"{CHECK_SFEN}: learned {int(evaluate_k(pos.state, pos.tables, E))}, hand {evaluate(pos)}")
        return 0
    if args.cmd == "gen":
        if args.minutes <= 0 or args.nodes <= 0:
            ap.error("--minutes and --nodes must be positive")
        summary = generate(args.out, args.minutes, args.nodes, args.seed)
        print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
